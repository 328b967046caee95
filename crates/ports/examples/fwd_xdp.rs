//! I/O ceiling for AF_XDP: forwards every frame received on IN out of OUT
//! with no parsing and no copy, the classic AF_XDP "l2fwd": both sockets
//! share one UMEM (`XDP_SHARED_UMEM`), so a frame the kernel wrote into the
//! UMEM for IN is put as is on OUT's tx ring, and comes back to IN's fill
//! ring once OUT's completion ring reports it sent. Native XDP is tried
//! first, then generic (skb) mode; copy mode either way on veth.
//!
//! ```text
//! fwd_xdp IN_IFACE OUT_IFACE [--seconds S] [--json]
//! ```
//!
//! `FWD_XDP_MODE=native` or `=generic` in the environment forces a mode.
//!
//! Runs in the current network namespace (`ip netns exec NS ...`).

#[path = "fwd_common/mod.rs"]
mod fwd_common;

use std::ffi::CString;
use std::io;
use std::num::NonZeroU32;
use std::os::fd::AsRawFd;

use fwd_common::{parse_args, wait_readable, Meter, SPIN_ROUNDS};
use xsk_rs::config::{
    BindFlags, FrameSize, Interface, QueueSize, SocketConfig, UmemConfig, XdpFlags,
};
use xsk_rs::{CompQueue, FillQueue, FrameDesc, RxQueue, Socket, TxQueue, Umem};

const BATCH: usize = 64;
/// Frames in the UMEM; also the size of every ring.
const FRAMES: u32 = 4096;

struct Fwd {
    rx: RxQueue,
    in_fill: FillQueue,
    tx: TxQueue,
    out_comp: CompQueue,
    /// Keeps IN's completion ring (and so its socket) alive.
    _in_comp: CompQueue,
    /// Keeps OUT's fill ring alive (no frames: what OUT receives is dropped).
    _out_fill: FillQueue,
    /// Keeps IN's tx ring alive.
    _in_tx: TxQueue,
    /// Keeps OUT's rx ring alive.
    _out_rx: RxQueue,
    mode: &'static str,
}

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn open(a: &fwd_common::Args) -> io::Result<(Fwd, Vec<FrameDesc>)> {
    let ring = QueueSize::new(FRAMES).map_err(err)?;
    let mut last = String::new();
    // FWD_XDP_MODE=native|generic forces one mode.
    let only = std::env::var("FWD_XDP_MODE").ok();
    for (mode, xdp) in [
        ("native", XdpFlags::XDP_FLAGS_DRV_MODE),
        ("generic", XdpFlags::XDP_FLAGS_SKB_MODE),
    ] {
        if only.as_deref().is_some_and(|m| m != mode) {
            continue;
        }
        let ucfg = UmemConfig::builder()
            .frame_size(FrameSize::new(2048).map_err(err)?)
            .fill_queue_size(ring)
            .comp_queue_size(ring)
            .build()
            .map_err(err)?;
        let count = NonZeroU32::new(FRAMES).ok_or_else(|| err("zero frames"))?;
        let (umem, frames) = Umem::new(ucfg, count, false).map_err(err)?;
        let scfg = SocketConfig::builder()
            .rx_queue_size(ring)
            .tx_queue_size(ring)
            .xdp_flags(xdp)
            .bind_flags(BindFlags::XDP_COPY | BindFlags::XDP_USE_NEED_WAKEUP)
            .build();
        let ifin = Interface::new(CString::new(a.input.clone()).map_err(err)?);
        let ifout = Interface::new(CString::new(a.output.clone()).map_err(err)?);
        // SAFETY: each (interface, queue) pair is bound once on this UMEM,
        // so the program-load flag requirement of Socket::new does not
        // apply.
        let sin = unsafe { Socket::new(scfg, &umem, &ifin, 0) };
        let sout = match &sin {
            // SAFETY: as above (a different interface).
            Ok(_) => unsafe { Socket::new(scfg, &umem, &ifout, 0) },
            Err(e) => {
                last = format!("{mode}: {}: {e}", a.input);
                continue;
            }
        };
        match (sin, sout) {
            (
                Ok((in_tx, rx, Some((in_fill, in_comp)))),
                Ok((tx, out_rx, Some((out_fill, out_comp)))),
            ) => {
                return Ok((
                    Fwd {
                        rx,
                        in_fill,
                        tx,
                        out_comp,
                        _in_comp: in_comp,
                        _out_fill: out_fill,
                        _in_tx: in_tx,
                        _out_rx: out_rx,
                        mode,
                    },
                    frames,
                ))
            }
            (_, Err(e)) => last = format!("{mode}: {}: {e}", a.output),
            _ => last = format!("{mode}: no fill/completion ring"),
        }
    }
    Err(io::Error::other(format!("cannot open AF_XDP: {last}")))
}

fn main() -> io::Result<()> {
    let a = parse_args("fwd_xdp");
    ports::xdp::quiet_libxdp();
    let (mut f, frames) = open(&a)?;
    // SAFETY: fresh frames of the shared UMEM, owned by nobody yet.
    let put = unsafe { f.in_fill.produce(&frames) };
    if put != frames.len() {
        return Err(io::Error::other("fill ring smaller than the UMEM"));
    }
    let mut descs = vec![FrameDesc::default(); BATCH];
    let mut done = vec![FrameDesc::default(); BATCH];
    let mut m = Meter::new(a.seconds);
    let mut idle = 0u32;
    let mut tx_dropped = 0u64;
    // Frames on OUT's tx ring not yet completed.
    let mut in_flight = 0usize;
    let rx_fd = f.rx.fd().as_raw_fd();
    while !m.done() {
        // Frames OUT has sent go back to IN's fill ring.
        // SAFETY: completion entries name frames of the shared UMEM, which
        // the kernel no longer uses; they go straight to the fill ring.
        let c = unsafe { f.out_comp.consume(&mut done) };
        if c > 0 {
            in_flight -= c;
            // SAFETY: as above.
            while unsafe { f.in_fill.produce(&done[..c]) } == 0 {}
        }
        // SAFETY: the rx ring hands us frames of the shared UMEM.
        let n = unsafe { f.rx.consume(&mut descs) };
        if n == 0 {
            // Only frames still on the tx ring need a kick.
            if in_flight > 0 && f.tx.needs_wakeup() {
                let _ = f.tx.wakeup();
            }
            idle += 1;
            if idle >= SPIN_ROUNDS {
                wait_readable(rx_fd);
                idle = 0;
            }
            continue;
        }
        idle = 0;
        // Received frames go out as they are (same UMEM); while the tx
        // ring is full, kick the kernel and reclaim completions, a bounded
        // number of times (a down link never completes anything).
        let mut tries = 0;
        // SAFETY: these frames are ours until OUT completes them.
        while unsafe { f.tx.produce(&descs[..n]) } == 0 {
            tries += 1;
            if tries > 1000 {
                break;
            }
            let _ = f.tx.wakeup();
            // SAFETY: as for the completions above.
            let c = unsafe { f.out_comp.consume(&mut done) };
            if c > 0 {
                in_flight -= c;
                // SAFETY: as above.
                while unsafe { f.in_fill.produce(&done[..c]) } == 0 {}
            }
        }
        if tries > 1000 {
            // Not sent: the frames go back to the fill ring.
            // SAFETY: never handed to OUT, so still ours.
            while unsafe { f.in_fill.produce(&descs[..n]) } == 0 {}
            tx_dropped += n as u64;
            continue;
        }
        in_flight += n;
        if f.tx.needs_wakeup() {
            let _ = f.tx.wakeup();
        }
        let bytes = descs[..n].iter().map(|d| d.lengths().data() as u64).sum();
        m.add(n, bytes);
    }
    let stats = |q: &RxQueue| {
        q.fd()
            .xdp_statistics()
            .map(|s| s.rx_dropped() + s.rx_ring_full())
    };
    m.report(
        "fwd_xdp",
        &a,
        &[
            ("mode", format!("\"{} copy\"", f.mode)),
            ("rx_dropped", stats(&f.rx).unwrap_or(0).to_string()),
            ("tx_dropped", tx_dropped.to_string()),
        ],
    );
    Ok(())
}
