//! Packet generator on a named interface: one frame, a burst, or a paced
//! stream, through the `ports` AF_PACKET backend (opened inside the
//! interface's namespace).
//!
//! Pacing is a busy-wait on a monotonic clock (sleeping is far coarser than
//! the inter-frame gaps at interesting rates). The achieved rate is reported
//! so that a generator that cannot keep up is seen as the generator's limit,
//! not the switch's.

use std::time::{Duration, Instant};

use ports::afpacket::{AfPacket, AfPacketOpts};
use ports::Port;

use crate::bail;
use crate::capture::in_ns;
use crate::error::{BenchError, Result};
use crate::experiment::now_ns;
use crate::topology::Iface;

pub struct Generator {
    port: AfPacket,
    name: String,
}

/// What a paced send achieved.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RateReport {
    /// Frames handed to the kernel.
    pub sent: u64,
    /// Frames the device queue refused (after retries).
    pub dropped: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    /// Frames per second actually achieved.
    pub achieved_pps: f64,
    /// Requested rate (0 = as fast as possible).
    pub requested_pps: f64,
    /// True when the achieved rate fell more than 5 % short of the request:
    /// the generator, not the switch, was the limit.
    pub generator_limited: bool,
}

impl Generator {
    pub fn open(ifc: &Iface) -> Result<Generator> {
        let name = ifc.name.clone();
        let n2 = name.clone();
        let port = in_ns(ifc.netns.as_deref(), move || {
            let opts = AfPacketOpts {
                block_size: 1 << 16,
                block_nr: 2,
                promisc: false,
                ..AfPacketOpts::default()
            };
            AfPacket::open(&n2, &opts).map_err(|e| BenchError(format!("generator on {n2}: {e}")))
        })?;
        Ok(Generator { port, name })
    }

    /// Send one frame; returns the time just before the send.
    pub fn send(&mut self, frame: &[u8]) -> Result<u64> {
        let t = now_ns();
        for _ in 0..1000 {
            if self.port.tx_batch(&[frame])? == 1 {
                return Ok(t);
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        bail!("generator on {}: the device queue stays full", self.name)
    }

    /// Send all frames back to back (retrying what the queue refuses).
    pub fn burst(&mut self, frames: &[Vec<u8>]) -> Result<(u64, u64)> {
        let t0 = now_ns();
        let mut i = 0;
        let mut stalls = 0;
        while i < frames.len() {
            let end = (i + 32).min(frames.len());
            let refs: Vec<&[u8]> = frames[i..end].iter().map(|f| f.as_slice()).collect();
            let n = self.port.tx_batch(&refs)?;
            if n == 0 {
                stalls += 1;
                if stalls > 100_000 {
                    bail!("generator on {}: the device queue stays full", self.name);
                }
                std::hint::spin_loop();
            }
            i += n;
        }
        Ok((t0, now_ns()))
    }

    /// `count` frames at `pps` (0: flat out).
    pub fn at_rate(
        &mut self,
        pps: f64,
        count: u64,
        make: &mut dyn FnMut(u64) -> Vec<u8>,
    ) -> Result<RateReport> {
        let start = Instant::now();
        let first_ns = now_ns();
        let gap = if pps > 0.0 { 1.0 / pps } else { 0.0 };
        let (mut sent, mut dropped) = (0u64, 0u64);
        for i in 0..count {
            if i.is_multiple_of(256) && crate::interrupt::interrupted() {
                bail!("interrupted");
            }
            if gap > 0.0 {
                let due = Duration::from_secs_f64(gap * i as f64);
                while start.elapsed() < due {
                    std::hint::spin_loop();
                }
            }
            let f = make(i);
            let mut ok = false;
            for _ in 0..64 {
                if self.port.tx_batch(&[&f])? == 1 {
                    ok = true;
                    break;
                }
            }
            if ok {
                sent += 1;
            } else {
                dropped += 1;
            }
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        let achieved = sent as f64 / secs;
        Ok(RateReport {
            sent,
            dropped,
            first_ns,
            last_ns: now_ns(),
            achieved_pps: achieved,
            requested_pps: pps,
            generator_limited: pps > 0.0 && achieved < 0.95 * pps,
        })
    }
}
