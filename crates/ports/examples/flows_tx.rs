//! Traffic source for the BEBA comparison (`scripts/beba_bench.sh`):
//! sends Ethernet / IPv4 / UDP frames of `FLOWS` flows round-robin, flat
//! out, in batches, on one interface for `SECONDS`. Flow i has source MAC
//! 02:00:i, destination MAC 00:00:i, IPv4 source 10.i (the low 24 bits of
//! i), UDP destination port 22: a port-knocking table keyed by the IPv4
//! source and a MAC-learning table keyed by the MACs both have a state per
//! flow. The receiving side is counted by the caller (interface counters).
//!
//! ```text
//! cargo run --release -p ports --example flows_tx -- IFACE FLOWS SECONDS
//! ```

use std::time::{Duration, Instant};

use ports::{AfPacket, AfPacketOpts, Port, BATCH};

/// Flow `i`'s frame (see the module comment).
fn frame(i: u32) -> Vec<u8> {
    let b = i.to_be_bytes();
    let mut f = vec![0, 0, b[0], b[1], b[2], b[3], 2, 0, b[0], b[1], b[2], b[3]];
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, b[1], b[2], b[3], 10, 255, 255, 254]);
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&22u16.to_be_bytes());
    f.extend_from_slice(&[0, 26, 0, 0]);
    f.resize(64, 0);
    let mut sum = 0u32;
    for w in f[14..34].chunks(2) {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    f[24..26].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(iface), Some(flows), Some(secs)) = (
        args.get(1),
        args.get(2).and_then(|s| s.parse::<u32>().ok()),
        args.get(3).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        eprintln!("usage: flows_tx IFACE FLOWS SECONDS");
        std::process::exit(2);
    };
    let mut tx = AfPacket::open(iface, &AfPacketOpts::default())?;
    let frames: Vec<Vec<u8>> = (0..flows.max(1)).map(frame).collect();
    let mut at = 0;
    let mut sent = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let refs: Vec<&[u8]> = (0..BATCH)
            .map(|j| frames[(at + j) % frames.len()].as_slice())
            .collect();
        at = (at + BATCH) % frames.len();
        sent += tx.tx_batch(&refs)? as u64;
    }
    let dt = start.elapsed().as_secs_f64();
    println!("sent {sent} frames, {:.0} pkt/s", sent as f64 / dt);
    Ok(())
}
