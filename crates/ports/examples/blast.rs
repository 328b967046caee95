//! Traffic source and sink for measuring [`fwd`](fwd.rs): sends 64-byte
//! frames in batches on one interface and counts what arrives on another,
//! then prints both rates.
//!
//! ```text
//! cargo run --release -p ports --example blast -- TX_IFACE RX_IFACE [SECONDS]
//! ```

use std::time::{Duration, Instant};

use ports::{AfPacket, AfPacketOpts, PacketBuf, Port, BATCH};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: blast TX_IFACE RX_IFACE [SECONDS]");
        std::process::exit(2);
    }
    let secs: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
    let opts = AfPacketOpts::default();
    let mut tx = AfPacket::open(&args[1], &opts)?;
    let mut rx = AfPacket::open(&args[2], &opts)?;
    // 32 frames with different source MACs (so a fanout hash spreads them).
    let frames: Vec<Vec<u8>> = (0..BATCH as u8)
        .map(|i| {
            let mut f = vec![0x02, 0, 0, 0, 0, 0xee, 0x02, 0, 0, 0, 1, i, 0x88, 0xb5];
            f.resize(64, i);
            f
        })
        .collect();
    let refs: Vec<&[u8]> = frames.iter().map(|f| f.as_slice()).collect();
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let (mut sent, mut got) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(secs) {
        sent += tx.tx_batch(&refs)? as u64;
        loop {
            let n = rx.rx_batch(&mut bufs)?;
            got += n as u64;
            if n < BATCH {
                break;
            }
        }
    }
    let dt = start.elapsed().as_secs_f64();
    println!(
        "sent {:.0} pkt/s, received {:.0} pkt/s ({} of {} frames)",
        sent as f64 / dt,
        got as f64 / dt,
        got,
        sent
    );
    println!("tx {:?}\nrx {:?}", tx.stats(), rx.stats());
    Ok(())
}
