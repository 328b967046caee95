//! Worker scaling measured in interleaved windows: how many times one
//! worker's packet rate n workers make, with the host's drift taken out.
//!
//! On this kind of machine (two vCPUs of a busy host) a configuration's
//! rate moves by tens of percent from one second to the next, so one
//! worker measured for a second and then two workers for the next second
//! give a ratio that is mostly that drift (the `pipeline` experiment's
//! rounds gave 1.1 and 2.0 for the same build within minutes). Here both
//! configurations stay installed side by side and run in turn in short
//! windows (tens of milliseconds), so every pair of windows sees the
//! same host:
//!
//! ```text
//!  threads   solo (all the frames, one replica)   worker 0 .. worker n-1 (their share)
//!  pair 0    [solo window on core 0]              then [all n at once, core i each]
//!  pair 1    [all n at once]                      then [solo window on core 1]
//!  pair 2    [solo on core 0] then [all n] ...    (ABBA order; the solo core alternates)
//! ```
//!
//! Every thread holds its own replica, cloned in its own thread as the
//! switch's workers build theirs, and its own copy of its frames
//! (`Trace`); a thread that is not running waits on its channel, so it
//! takes no CPU from the others. A window first runs untimed, a quarter
//! of its batches and at least one pass over its thread's frames (the
//! caches of that core, and the shared one, have just served other
//! replicas: `warmup_batches`), then times `batches` batches of
//! [`BATCH`] frames through `process_batch` (`pipeline_only::run_batch`).
//!
//! A pair's ratio is the n workers' rate (all their timed packets over
//! the time from the first start to the last end, so a late start counts
//! against them) over the solo window's rate. Reported: the median of
//! the pairs' ratios with their range, and both rates' medians.

use crate::bail;
use crate::error::Result;
use crate::pipeline_only::{run_batch, Sink, Split, Trace, BATCH};
use crate::workloads::Workload;
use pipeline::Pipeline;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the coordinator waits for a window's answer before it gives
/// up (a window lasts tens of milliseconds; a thread that panicked never
/// answers).
const ANSWER_WITHIN: Duration = Duration::from_secs(120);

/// Most batches one window may time.
pub const MAX_BATCHES: usize = 1_000_000;

/// What the windows of one workload gave (module comment).
#[derive(Debug, Clone, PartialEq)]
pub struct Windows {
    /// Per pair: the n workers' rate over the solo rate, in pair order.
    pub ratios: Vec<f64>,
    /// Per pair: the solo window's Mpps.
    pub solo_mpps: Vec<f64>,
    /// Per pair: the n workers' Mpps (all of them together).
    pub together_mpps: Vec<f64>,
    /// Timed packets that did not come out exactly once (a correct
    /// workload forwards every packet).
    pub not_forwarded: u64,
}

impl Windows {
    /// The median pair ratio.
    pub fn ratio(&self) -> f64 {
        median(&self.ratios)
    }

    pub fn min(&self) -> f64 {
        self.ratios.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.ratios.iter().copied().fold(0.0, f64::max)
    }
}

/// The median of `v` (of an even number, the mean of the middle two;
/// NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// How many batches a window should time so that it lasts about
/// `seconds` at `mpps` (the one-worker rate measured before), within
/// 100 and `MAX_BATCHES`.
pub fn window_batches(mpps: f64, seconds: f64) -> usize {
    let b = mpps * 1e6 * seconds / BATCH as f64;
    if b.is_finite() {
        (b as usize).clamp(100, MAX_BATCHES)
    } else {
        100
    }
}

/// How many batches a window runs untimed before its timed `batches`:
/// a quarter of them, and at least one pass over the thread's `frames`,
/// so that every entry its frames hit was touched since another replica
/// ran on that core or through the shared cache (the steady state of
/// that configuration, as a long run has it).
pub fn warmup_batches(batches: usize, frames: usize) -> usize {
    batches.div_ceil(4).max(frames.div_ceil(BATCH))
}

/// A request to a thread: run one window, on `core` if given (the solo
/// thread moves between cores; the workers stay on theirs).
struct Run {
    batches: usize,
    core: Option<usize>,
}

/// A thread's answer: when its timed part started and ended, and what it
/// timed.
struct Done {
    start: Instant,
    end: Instant,
    packets: u64,
    forwarded: u64,
}

/// Measures `w`, installed in `p`, in `pairs` pairs of windows of
/// `batches` batches: one worker with all the frames against `workers`
/// workers with their shares under `split` (module comment).
pub fn measure(
    p: &Pipeline,
    w: &Workload,
    workers: usize,
    split: Split,
    pairs: usize,
    batches: usize,
) -> Result<Windows> {
    if workers < 2 {
        bail!("workers={workers}: scaling needs at least 2");
    }
    if pairs == 0 || batches == 0 || batches > MAX_BATCHES {
        bail!("pairs={pairs}, batches={batches}: want at least one pair of 1 to {MAX_BATCHES} batches");
    }
    let cores = crate::switch::cores();
    let pinned = workers <= cores;
    let in_port = w.ports.input;
    std::thread::scope(|s| {
        // Thread `workers` is the solo one; 0..workers are the workers.
        let (done_tx, done_rx) = mpsc::channel::<(usize, Done)>();
        let mut run_tx = Vec::new();
        for id in 0..=workers {
            let (tx, rx) = mpsc::channel::<Run>();
            run_tx.push(tx);
            let done_tx = done_tx.clone();
            let frames = &w.frames;
            s.spawn(move || {
                if pinned && id < workers {
                    crate::switch::pin_self(id);
                }
                // As in `pipeline_only::measure_installed`: the replica's
                // memory comes from this thread's heap.
                let mut replica = p.clone();
                let trace = if id < workers {
                    Trace::new(frames, split, id, workers)
                } else {
                    Trace::new(frames, split, 0, 1)
                };
                let mut bufs: Vec<packet::PacketBuf> =
                    (0..BATCH).map(|_| packet::PacketBuf::new()).collect();
                let mut sink = Sink::default();
                let mut next = 0usize;
                let now_ns = 1_000_000_000u64;
                while let Ok(run) = rx.recv() {
                    if let Some(c) = run.core.filter(|_| pinned) {
                        crate::switch::pin_self(c);
                    }
                    for _ in 0..warmup_batches(run.batches, trace.len()) {
                        run_batch(
                            &mut replica,
                            &mut bufs,
                            &trace,
                            &mut next,
                            in_port,
                            now_ns,
                            &mut sink,
                        );
                    }
                    let before = sink.forwarded;
                    let start = Instant::now();
                    for _ in 0..run.batches {
                        run_batch(
                            &mut replica,
                            &mut bufs,
                            &trace,
                            &mut next,
                            in_port,
                            now_ns,
                            &mut sink,
                        );
                    }
                    let end = Instant::now();
                    let done = Done {
                        start,
                        end,
                        packets: (run.batches * BATCH) as u64,
                        forwarded: sink.forwarded - before,
                    };
                    if done_tx.send((id, done)).is_err() {
                        break;
                    }
                }
                std::hint::black_box(sink.check);
            });
        }
        drop(done_tx);
        let result = run_pairs(&run_tx, &done_rx, workers, pairs, batches, cores);
        // Closing the request channels ends the threads.
        drop(run_tx);
        result
    })
}

/// The coordinator's side of `measure`: the pairs, in ABBA order.
fn run_pairs(
    run_tx: &[mpsc::Sender<Run>],
    done_rx: &mpsc::Receiver<(usize, Done)>,
    workers: usize,
    pairs: usize,
    batches: usize,
    cores: usize,
) -> Result<Windows> {
    let (mut ratios, mut solo_mpps, mut together_mpps) = (Vec::new(), Vec::new(), Vec::new());
    let mut not_forwarded = 0u64;
    // Sends `run` to the threads `ids` and waits for all of them: their
    // packets over the span from the first start to the last end.
    let mut window = |ids: std::ops::Range<usize>, core: Option<usize>| -> Result<f64> {
        let n = ids.len();
        for id in ids {
            if run_tx[id].send(Run { batches, core }).is_err() {
                bail!("a measuring thread ended early");
            }
        }
        let mut span: Option<(Instant, Instant)> = None;
        let mut packets = 0u64;
        for _ in 0..n {
            let Ok((_, d)) = done_rx.recv_timeout(ANSWER_WITHIN) else {
                bail!(
                    "a measuring thread did not answer within {} s (panicked?)",
                    ANSWER_WITHIN.as_secs()
                );
            };
            packets += d.packets;
            not_forwarded += d.packets.abs_diff(d.forwarded);
            span = Some(match span {
                None => (d.start, d.end),
                Some((s, e)) => (s.min(d.start), e.max(d.end)),
            });
        }
        let secs = span.map_or(0.0, |(s, e)| (e - s).as_secs_f64());
        Ok(packets as f64 / secs.max(1e-9) / 1e6)
    };
    let solo_cores = workers.min(cores).max(1);
    for k in 0..pairs {
        let core = Some((k / 2) % solo_cores);
        let (solo, together) = if k % 2 == 0 {
            let s = window(workers..workers + 1, core)?;
            (s, window(0..workers, None)?)
        } else {
            let t = window(0..workers, None)?;
            (window(workers..workers + 1, core)?, t)
        };
        solo_mpps.push(solo);
        together_mpps.push(together);
        ratios.push(together / solo.max(1e-9));
    }
    Ok(Windows {
        ratios,
        solo_mpps,
        together_mpps,
        not_forwarded,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline_only::install;
    use crate::workloads::{Kind, Traffic};

    #[test]
    fn two_workers_run_against_one_in_pairs() {
        let w = Workload::new(Kind::L2, 1_000, Traffic::Spread);
        let p = install(&w).expect("installs");
        let r = measure(&p, &w, 2, Split::Flows, 4, 100).expect("measures");
        assert_eq!(r.ratios.len(), 4);
        assert_eq!(r.solo_mpps.len(), 4);
        assert_eq!(r.together_mpps.len(), 4);
        // Every timed packet came out once.
        assert_eq!(r.not_forwarded, 0);
        for (i, ratio) in r.ratios.iter().enumerate() {
            assert!(r.solo_mpps[i] > 0.0 && r.together_mpps[i] > 0.0);
            assert!(
                (ratio - r.together_mpps[i] / r.solo_mpps[i]).abs() < 1e-9,
                "pair {i}"
            );
        }
        assert!(r.min() <= r.ratio() && r.ratio() <= r.max());
    }

    #[test]
    fn a_workload_that_drops_is_counted() {
        let mut w = Workload::new(Kind::L2, 100, Traffic::Spread);
        let p = install(&w).expect("installs");
        w.frames = Workload::new(Kind::L3, 100, Traffic::Spread).frames;
        let r = measure(&p, &w, 2, Split::None, 2, 100).expect("measures");
        // 2 pairs: 2 solo windows and 2 of two workers, 100 batches each.
        assert_eq!(r.not_forwarded, 6 * 100 * BATCH as u64);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let w = Workload::new(Kind::Single, 1, Traffic::Spread);
        let p = install(&w).expect("installs");
        for (workers, pairs, batches) in
            [(1, 4, 100), (2, 0, 100), (2, 4, 0), (2, 4, MAX_BATCHES + 1)]
        {
            assert!(
                measure(&p, &w, workers, Split::None, pairs, batches).is_err(),
                "{workers} {pairs} {batches}"
            );
        }
    }

    #[test]
    fn medians_and_window_sizes() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        // 10 Mpps for 20 ms: 200,000 packets, 6,250 batches.
        assert_eq!(window_batches(10.0, 0.02), 6_250);
        assert_eq!(window_batches(0.0, 0.02), 100);
        assert_eq!(window_batches(f64::NAN, 0.02), 100);
        assert_eq!(window_batches(1e9, 1.0), MAX_BATCHES);
        // A quarter of the window, or one pass over the frames.
        assert_eq!(warmup_batches(1_000, 100), 250);
        assert_eq!(warmup_batches(1_000, 100_000), 3_125);
        assert_eq!(warmup_batches(1, 1), 1);
    }
}
