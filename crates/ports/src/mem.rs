//! In-memory port pair for tests of higher layers (pipeline, switch).
//!
//! `MemPort::pair()` returns two ends of a virtual cable. Each direction is a
//! bounded FIFO (`VecDeque` of frames behind a mutex, `capacity` frames):
//! a frame transmitted on one end is received on the other, and a full FIFO
//! drops (counted in the sender's `tx_dropped`), like a device queue. The
//! link state is shared by both ends (it is one cable): `set_link(false)`
//! makes both ends report `link_up() == false`, drop what they transmit and
//! receive nothing, which lets tests exercise fast-failover groups.
//!
//! Each end owns an `eventfd` that is readable while its receive FIFO is not
//! empty, so a worker can poll a `MemPort` exactly like a real port. The
//! counter is only changed with the FIFO's lock held (set on push, drained
//! when the FIFO becomes empty), so a wake-up cannot be lost.
//!
//! Frames are copied into a `Vec` per packet: this backend is for tests,
//! not speed.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use packet::PacketBuf;

use crate::sys::cvt;
use crate::{Port, PortStats, PortTx, TxCounters};

/// Default FIFO depth of each direction.
pub const DEFAULT_CAPACITY: usize = 1024;

/// One direction of the cable: frames waiting for the receiving end, and
/// that end's eventfd.
struct Fifo {
    frames: Mutex<VecDeque<Vec<u8>>>,
    capacity: usize,
    wake: OwnedFd,
}

impl Fifo {
    fn new(capacity: usize) -> io::Result<Fifo> {
        // SAFETY: eventfd takes no pointers; the returned descriptor is
        // checked and then owned by the OwnedFd.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        Ok(Fifo {
            frames: Mutex::new(VecDeque::with_capacity(capacity)),
            capacity,
            // SAFETY: `fd` is a fresh descriptor nobody else owns.
            wake: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd. A
        // failure (counter overflow) leaves it readable, which is all we need.
        unsafe { libc::write(self.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn drain_signal(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from our own non-blocking
        // eventfd; EAGAIN (already zero) is fine.
        unsafe { libc::read(self.wake.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
    }
}

/// One end of an in-memory cable; see the module comment.
pub struct MemPort {
    name: String,
    hw_addr: [u8; 6],
    mtu: u32,
    link: Arc<AtomicBool>,
    rx: Arc<Fifo>,
    tx: Arc<Fifo>,
    /// Receive counters (the `tx_*` fields come from `tx_counters`).
    stats: PortStats,
    /// Shared with the [`MemTx`] clones of this end.
    tx_counters: Arc<TxCounters>,
}

/// A transmit clone of a [`MemPort`] end ([`Port::tx_clone`]): pushes into
/// the same FIFO (whose own mutex is the only lock, as in the port).
pub struct MemTx {
    link: Arc<AtomicBool>,
    tx: Arc<Fifo>,
    counters: Arc<TxCounters>,
}

impl PortTx for MemTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(transmit(&self.link, &self.tx, &self.counters, pkts))
    }
}

/// Pushes `pkts` into `fifo`, counting in `c`; see [`Port::tx_batch`].
fn transmit(link: &AtomicBool, fifo: &Fifo, c: &TxCounters, pkts: &[&[u8]]) -> usize {
    if !link.load(Ordering::SeqCst) {
        c.dropped(pkts.len() as u64);
        return 0;
    }
    let mut q = lock(fifo);
    let mut sent = 0;
    for p in pkts {
        if q.len() >= fifo.capacity {
            c.dropped(1);
            continue;
        }
        q.push_back(p.to_vec());
        c.sent(p.len());
        sent += 1;
    }
    if sent > 0 {
        fifo.signal();
    }
    sent
}

impl MemPort {
    /// Two connected ends named "mem0"/"mem1", link up, default depth.
    pub fn pair() -> io::Result<(MemPort, MemPort)> {
        MemPort::pair_named("mem0", "mem1", DEFAULT_CAPACITY)
    }

    /// Two connected ends with the given names and FIFO depth (frames).
    pub fn pair_named(a: &str, b: &str, capacity: usize) -> io::Result<(MemPort, MemPort)> {
        let ab = Arc::new(Fifo::new(capacity)?);
        let ba = Arc::new(Fifo::new(capacity)?);
        let link = Arc::new(AtomicBool::new(true));
        let end = |name: &str, n: u8, rx: &Arc<Fifo>, tx: &Arc<Fifo>| MemPort {
            name: name.to_string(),
            // Locally administered unicast addresses.
            hw_addr: [0x02, 0, 0, 0, 0, n],
            mtu: 1500,
            link: Arc::clone(&link),
            rx: Arc::clone(rx),
            tx: Arc::clone(tx),
            stats: PortStats::default(),
            tx_counters: Arc::default(),
        };
        Ok((end(a, 1, &ba, &ab), end(b, 2, &ab, &ba)))
    }

    /// Sets the link state of the cable (both ends). Bringing the link
    /// down discards frames in flight.
    pub fn set_link(&self, up: bool) {
        self.link.store(up, Ordering::SeqCst);
        if !up {
            for fifo in [&self.rx, &self.tx] {
                let mut q = lock(fifo);
                q.clear();
                fifo.drain_signal();
            }
        }
    }

    /// Sets the Ethernet address this end reports.
    pub fn set_hw_addr(&mut self, mac: [u8; 6]) {
        self.hw_addr = mac;
    }

    /// Number of frames waiting to be received on this end.
    pub fn pending(&self) -> usize {
        lock(&self.rx).len()
    }
}

/// Locks a FIFO, tolerating poisoning (a panicked test thread must not
/// cascade: the queue of byte vectors is always consistent).
fn lock(fifo: &Fifo) -> std::sync::MutexGuard<'_, VecDeque<Vec<u8>>> {
    fifo.frames.lock().unwrap_or_else(|e| e.into_inner())
}

impl Port for MemPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        if !self.link.load(Ordering::SeqCst) {
            return Ok(0);
        }
        let mut q = lock(&self.rx);
        let mut n = 0;
        while n < bufs.len() {
            let Some(frame) = q.pop_front() else { break };
            if bufs[n].set(&frame).is_err() {
                self.stats.rx_dropped += 1;
                continue;
            }
            self.stats.rx_packets += 1;
            self.stats.rx_bytes += frame.len() as u64;
            n += 1;
        }
        if q.is_empty() {
            self.rx.drain_signal();
        }
        Ok(n)
    }

    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(transmit(&self.link, &self.tx, &self.tx_counters, pkts))
    }

    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        Ok(Box::new(MemTx {
            link: Arc::clone(&self.link),
            tx: Arc::clone(&self.tx),
            counters: Arc::clone(&self.tx_counters),
        }))
    }

    fn fd(&self) -> Option<RawFd> {
        Some(self.rx.wake.as_raw_fd())
    }

    fn hw_addr(&self) -> [u8; 6] {
        self.hw_addr
    }

    fn link_up(&self) -> bool {
        self.link.load(Ordering::SeqCst)
    }

    fn mtu(&self) -> io::Result<u32> {
        Ok(self.mtu)
    }

    fn stats(&self) -> PortStats {
        let mut s = self.stats;
        self.tx_counters.fill(&mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(fd: RawFd) -> bool {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let r = unsafe { libc::poll(&mut pfd, 1, 0) };
        r == 1 && pfd.revents & libc::POLLIN != 0
    }

    fn frame(i: u16) -> Vec<u8> {
        let mut f = vec![0xff; 12];
        f.extend_from_slice(&[0x88, 0xb5]);
        f.extend_from_slice(&i.to_be_bytes());
        f.resize(60, 0xab);
        f
    }

    #[test]
    fn both_directions_in_order_in_batches() {
        let (mut a, mut b) = MemPort::pair().unwrap();
        let frames: Vec<Vec<u8>> = (0..70).map(frame).collect();
        let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
        assert!(!readable(b.fd().unwrap()));
        assert_eq!(a.tx_batch(&refs).unwrap(), 70);
        assert!(readable(b.fd().unwrap()));
        assert!(!readable(a.fd().unwrap()));
        let mut bufs: Vec<PacketBuf> = (0..crate::BATCH).map(|_| PacketBuf::new()).collect();
        let mut got = Vec::new();
        loop {
            let n = b.rx_batch(&mut bufs).unwrap();
            assert!(n <= crate::BATCH);
            if n == 0 {
                break;
            }
            got.extend(bufs[..n].iter().map(|p| p.data().to_vec()));
        }
        assert_eq!(got, frames);
        assert!(!readable(b.fd().unwrap()));
        assert_eq!(b.stats().rx_packets, 70);
        assert_eq!(a.stats().tx_bytes, 70 * 60);
        // And back.
        assert_eq!(b.tx_batch(&[&frames[3]]).unwrap(), 1);
        assert_eq!(a.rx_batch(&mut bufs).unwrap(), 1);
        assert_eq!(bufs[0].data(), &frames[3][..]);
    }

    #[test]
    fn bounded_queue_drops_and_counts() {
        let (mut a, b) = MemPort::pair_named("x", "y", 4).unwrap();
        let f = frame(1);
        let refs = vec![f.as_slice(); 6];
        assert_eq!(a.tx_batch(&refs).unwrap(), 4);
        assert_eq!(a.stats().tx_dropped, 2);
        assert_eq!(b.pending(), 4);
    }

    #[test]
    fn link_down_is_seen_by_both_ends_and_drops() {
        let (mut a, mut b) = MemPort::pair().unwrap();
        let f = frame(1);
        a.tx_batch(&[&f]).unwrap();
        b.set_link(false);
        assert!(!a.link_up() && !b.link_up());
        assert_eq!(a.tx_batch(&[&f]).unwrap(), 0);
        assert_eq!(a.stats().tx_dropped, 1);
        let mut bufs = vec![PacketBuf::new()];
        assert_eq!(b.rx_batch(&mut bufs).unwrap(), 0);
        assert!(!readable(b.fd().unwrap()));
        a.set_link(true);
        assert!(b.link_up());
        assert_eq!(a.tx_batch(&[&f]).unwrap(), 1);
        assert_eq!(b.rx_batch(&mut bufs).unwrap(), 1);
    }

    #[test]
    fn tx_clones_share_the_cable_and_the_counters() {
        let (a, mut b) = MemPort::pair().unwrap();
        let mut c1 = a.tx_clone().unwrap();
        let mut c2 = a.tx_clone().unwrap();
        let t = std::thread::spawn(move || c1.tx_batch(&[&frame(1)]).unwrap());
        assert_eq!(c2.tx_batch(&[&frame(2)]).unwrap(), 1);
        assert_eq!(t.join().unwrap(), 1);
        let mut bufs = vec![PacketBuf::new(); 4];
        assert_eq!(b.rx_batch(&mut bufs).unwrap(), 2);
        assert_eq!(a.stats().tx_packets, 2);
        a.set_link(false);
        assert_eq!(c2.tx_batch(&[&frame(3)]).unwrap(), 0);
        assert_eq!(a.stats().tx_dropped, 1);
    }

    #[test]
    fn oversized_frame_is_dropped_on_receive() {
        let (mut a, mut b) = MemPort::pair().unwrap();
        let big = vec![0u8; 64];
        a.tx_batch(&[&big, &frame(2)]).unwrap();
        let mut bufs = vec![PacketBuf::with_capacity(0, 60), PacketBuf::new()];
        assert_eq!(b.rx_batch(&mut bufs).unwrap(), 1);
        assert_eq!(bufs[0].data(), &frame(2)[..]);
        assert_eq!(b.stats().rx_dropped, 1);
    }
}
