//! I/O ceiling for the AF_PACKET backend: forwards every frame received on
//! IN out of OUT, with no parsing and no pipeline (the backend's default
//! TPACKET_V2 frame ring, copied into reused buffers, `sendmmsg` transmit:
//! the same I/O path the switch uses). `FWD_AFPACKET_RX=blocks` receives
//! through the TPACKET_V3 block ring, `=recvmmsg` with `recvmmsg`.
//! `make bench` compares the switch against it.
//!
//! ```text
//! fwd_afpacket IN_IFACE OUT_IFACE [--seconds S] [--json]
//! ```
//!
//! Runs in the current network namespace (`ip netns exec NS ...`).

#[path = "fwd_common/mod.rs"]
mod fwd_common;

use fwd_common::{parse_args, wait_readable, Meter, SPIN_ROUNDS};
use ports::{AfPacket, AfPacketOpts, PacketBuf, Port, RxMode, BATCH};

fn main() -> std::io::Result<()> {
    let a = parse_args("fwd_afpacket");
    // FWD_AFPACKET_RX: the backend's receive mode (module comment).
    let opts = AfPacketOpts {
        rx: match std::env::var("FWD_AFPACKET_RX").as_deref() {
            Ok("recvmmsg") => RxMode::Recvmmsg,
            Ok("blocks") => RxMode::BlockRing,
            _ => RxMode::FrameRing,
        },
        ..AfPacketOpts::default()
    };
    let mut rx = AfPacket::open(&a.input, &opts)?;
    let mut tx = AfPacket::open(&a.output, &opts)?;
    let fd = rx.fd().unwrap_or(-1);
    let mut bufs: Vec<PacketBuf> = (0..BATCH).map(|_| PacketBuf::new()).collect();
    let mut m = Meter::new(a.seconds);
    let mut idle = 0u32;
    while !m.done() {
        let n = rx.rx_batch(&mut bufs)?;
        if n == 0 {
            idle += 1;
            if idle >= SPIN_ROUNDS {
                wait_readable(fd);
                idle = 0;
            }
            continue;
        }
        idle = 0;
        // Slices on the stack: no allocation per batch.
        let pkts: [&[u8]; BATCH] =
            std::array::from_fn(|i| bufs.get(i).map_or(&[][..], |b| b.data()));
        let pkts = &pkts[..n];
        let sent = tx.tx_batch(pkts)?;
        let bytes = pkts[..sent].iter().map(|p| p.len() as u64).sum();
        m.add(sent, bytes);
    }
    let (rs, ts) = (rx.stats(), tx.stats());
    m.report(
        "fwd_afpacket",
        &a,
        &[
            ("rx_packets", rs.rx_packets.to_string()),
            ("rx_dropped", rs.rx_dropped.to_string()),
            ("tx_dropped", (ts.tx_dropped + ts.tx_errors).to_string()),
        ],
    );
    Ok(())
}
