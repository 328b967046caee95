//! Pieces shared by the latency experiments: send numbered probes from the
//! generator and pair each with its arrival at the capture interface.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::experiment::{Ctx, Dir, Event};
use crate::frames::{find_probe, Probe};
use crate::generator::RateReport;

/// One probe run: latencies of the frames that arrived, loss, and what the
/// generator achieved.
#[derive(Debug, Clone)]
pub struct ProbeRun {
    /// (seq, one-way latency in ns) of arrived probes after the warm-up.
    pub lat_ns: Vec<(u64, f64)>,
    /// Probes sent after the warm-up.
    pub sent: u64,
    pub received: u64,
    pub rate: RateReport,
    /// The first few frames as they arrived on the capture side (to check
    /// what the switch did to them).
    pub samples: Vec<Vec<u8>>,
}

impl ProbeRun {
    pub fn loss(&self) -> f64 {
        if self.sent == 0 {
            return 0.0;
        }
        1.0 - self.received as f64 / self.sent as f64
    }

    pub fn latencies_us(&self) -> Vec<f64> {
        self.lat_ns.iter().map(|(_, l)| l / 1000.0).collect()
    }
}

/// Send `warmup + count` probes at `pps` from "gen", capture on both sides
/// (transmit stamp from the generator side, receive stamp on "cap"), wait
/// `linger` for stragglers. Sequence numbers start at `seq0`.
pub fn probe_run(
    ctx: &mut Ctx,
    probe: &Probe,
    seq0: u64,
    warmup: u64,
    count: u64,
    pps: f64,
    linger: Duration,
) -> Result<ProbeRun> {
    ctx.capture("gen")?;
    ctx.capture("cap")?;
    ctx.clear_events();
    let p = probe.clone();
    let rate = ctx.send_at_rate("gen", pps, warmup + count, &mut |i| p.build(seq0 + i))?;
    let first_counted = seq0 + warmup;
    let last = seq0 + warmup + count;
    let mut tx: HashMap<u64, u64> = HashMap::new();
    let mut rx: HashMap<u64, u64> = HashMap::new();
    let mut samples = Vec::new();
    let deadline = Instant::now() + linger;
    while let Some(ev) = ctx.wait_event(deadline) {
        let Event::Packet(pkt) = ev else { continue };
        let Some(seq) = find_probe(&pkt.data) else {
            continue;
        };
        if !(first_counted..last).contains(&seq) {
            continue;
        }
        match (pkt.role, pkt.dir) {
            ("gen", Dir::Tx) => {
                tx.entry(seq).or_insert(pkt.ts_ns);
            }
            ("cap", Dir::Rx) => {
                rx.entry(seq).or_insert(pkt.ts_ns);
                if samples.len() < 16 {
                    samples.push(pkt.data.clone());
                }
            }
            _ => {}
        }
        if rx.len() as u64 == count && tx.len() as u64 == count {
            break;
        }
    }
    let mut lat: Vec<(u64, f64)> = rx
        .iter()
        .filter_map(|(s, r)| tx.get(s).map(|t| (*s, r.saturating_sub(*t) as f64)))
        .collect();
    lat.sort_by_key(|x| x.0);
    Ok(ProbeRun {
        lat_ns: lat,
        sent: count,
        received: rx.len() as u64,
        rate,
        samples,
    })
}

/// Empirical CDF points (x = value, y = fraction <= x).
pub fn cdf(xs: &[f64]) -> Vec<[f64; 2]> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, x)| [*x, (i + 1) as f64 / n])
        .collect()
}
