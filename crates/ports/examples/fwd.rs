//! Forwards frames between two interfaces with the AF_PACKET backend, both
//! ways, and prints the rates every second: the I/O ceiling of `ports`
//! without a pipeline.
//!
//! ```text
//! cargo run --release -p ports --example fwd -- IFACE1 IFACE2 [SECONDS]
//! ```
//!
//! Runs in the current network namespace (use `ip netns exec NS ...`).

use std::time::{Duration, Instant};

use ports::{AfPacket, AfPacketOpts, PacketBuf, Port, BATCH};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: fwd IFACE1 IFACE2 [SECONDS]");
        std::process::exit(2);
    }
    let secs: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let opts = AfPacketOpts::default();
    let mut ports = [
        AfPacket::open(&args[1], &opts)?,
        AfPacket::open(&args[2], &opts)?,
    ];
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut pfds = [0, 1].map(|i| libc::pollfd {
        fd: ports[i].fd().unwrap_or(-1),
        events: libc::POLLIN,
        revents: 0,
    });
    let start = Instant::now();
    let mut last = start;
    let mut last_fwd = 0u64;
    let mut fwd = 0u64;
    while start.elapsed() < Duration::from_secs(secs) {
        let mut idle = true;
        for i in 0..2 {
            let n = ports[i].rx_batch(&mut bufs)?;
            if n > 0 {
                idle = false;
                let pkts: Vec<&[u8]> = bufs[..n].iter().map(|b| b.data()).collect();
                fwd += ports[1 - i].tx_batch(&pkts)? as u64;
            }
        }
        if idle {
            // SAFETY: two valid pollfds, 100 ms timeout.
            unsafe { libc::poll(pfds.as_mut_ptr(), 2, 100) };
        }
        if last.elapsed() >= Duration::from_secs(1) {
            let dt = last.elapsed().as_secs_f64();
            println!("{:.0} pkt/s forwarded", (fwd - last_fwd) as f64 / dt);
            last = Instant::now();
            last_fwd = fwd;
        }
    }
    for p in &ports {
        println!("{}: {:?}", p.name(), p.stats());
    }
    Ok(())
}
