//! Test ports: in-memory cables for the graph's port modules, and a
//! replaying port that allocates nothing (for the counting-allocator test).
#![allow(dead_code)]

use graph::{Env, Shared};
use packet::PacketBuf;
use ports::{MemPort, Port, PortRx, PortTx};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// An environment with ports `names[i]` numbered i+1 (the graph's ends of
/// in-memory cables) and the test's ends of those cables.
pub fn mem_env(names: &[&str]) -> (Env, Vec<MemPort>) {
    let mut env = Env::new(Shared::default());
    let mut ours = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let (a, b) = MemPort::pair_named(&format!("{n}-peer"), n, 4096).expect("mem port");
        env.add_whole_port(n, i as u32 + 1, Box::new(b));
        ours.push(a);
    }
    (env, ours)
}

/// Sends `n` frames tagged with `seq..seq+n` from `p`.
pub fn send(p: &mut MemPort, seq: u32, n: u32) {
    let frames: Vec<Vec<u8>> = (seq..seq + n).map(frame).collect();
    let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
    assert_eq!(p.tx_batch(&refs).expect("tx") as u32, n);
}

/// A 60-byte frame carrying `seq` after the Ethernet header.
pub fn frame(seq: u32) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    f.extend_from_slice(&seq.to_be_bytes());
    f.resize(60, 0);
    f
}

/// Receives everything waiting on `p`: the sequence numbers.
pub fn recv(p: &mut MemPort) -> Vec<u32> {
    let mut bufs = vec![PacketBuf::new(); 32];
    let mut got = Vec::new();
    loop {
        let n = p.rx_batch(&mut bufs).expect("rx");
        if n == 0 {
            return got;
        }
        for b in &bufs[..n] {
            let s = b.data().get(14..18).expect("seq");
            got.push(u32::from_be_bytes(s.try_into().expect("4 bytes")));
        }
    }
}

/// Receives by copying frames of a fixed list in turn (a full batch per
/// call); allocates nothing.
pub struct ReplayRx {
    pub frames: Vec<Vec<u8>>,
    pub next: usize,
}

impl PortRx for ReplayRx {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        for b in bufs.iter_mut() {
            let f = &self.frames[self.next % self.frames.len()];
            self.next += 1;
            b.set(f).map_err(|e| io::Error::other(e.to_string()))?;
        }
        Ok(bufs.len())
    }
    fn fd(&self) -> Option<RawFd> {
        None
    }
}

/// Transmits by counting frames (shared counter); allocates nothing.
pub struct CountTx(pub Arc<AtomicU64>);

impl PortTx for CountTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        self.0.fetch_add(pkts.len() as u64, Ordering::Relaxed);
        Ok(pkts.len())
    }
}
