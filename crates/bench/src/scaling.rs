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
//!  pair 0    [solo window on core 0]         then [all n at once, worker i on core i]
//!  pair 1    [all n at once]                 then [solo window on core 0]
//!  pair 2    [solo window on core 1]         then [all n at once]
//!  pair 3    [all n at once]                 then [solo window on core 1]   ... (ABBA)
//! ```
//!
//! Every thread holds its own replica, cloned in its own thread as the
//! switch's workers build theirs, and its own copy of its frames
//! (`Trace`); a thread that is not running waits on its channel, so it
//! takes no CPU from the others. A window first runs untimed, a quarter
//! of its batches and at least one pass over its thread's frames (the
//! caches of that core, and the shared one, have just served other
//! replicas: `warmup_batches`), then times `batches` batches of
//! [`BATCH`] frames through `process_batch` (`pipeline_only::run_batches`).
//!
//! A pair's ratio is the n workers' rate (all their timed packets over
//! the time from the first start to the last end, so a late start counts
//! against them) over the solo window's rate. Reported: the median of
//! the pairs' ratios with their range, and both rates' medians.
//!
//! Pairs that close still see the host change: here the two vCPUs get
//! two cores of their own for some seconds and about one core between
//! them for others (a trivially parallel loop then scales 1.1-1.3), so
//! the pairs' ratios of one row can spread from 1.0 to 2.0. Each pair
//! therefore also runs the host reference (`reference`: integer work
//! with no memory, one thread then n, in the same threads on the same
//! cores, beside the pipeline's windows: ABBA again), and the pairs
//! whose reference scaled at least [`HOST_TWO_CORES`] are the ones that
//! had two cores; the pipeline's ratio in those pairs is what the switch
//! makes of two cores.
//!
//! ```text
//!  pair k even:  ref alone, ref all | pipeline alone, pipeline all
//!  pair k odd:   pipeline all, pipeline alone | ref all, ref alone
//! ```

use crate::bail;
use crate::error::Result;
use crate::pipeline_only::{run_batches, Sink, Split, Trace, BATCH};
use crate::stats::summarize;
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
    /// Per pair: the host reference's two-thread rate over its one-thread
    /// rate in the same pair (`reference`).
    pub host_ratios: Vec<f64>,
    /// Timed packets that did not come out exactly once (a correct
    /// workload forwards every packet).
    pub not_forwarded: u64,
}

/// A pair whose host reference scaled at least this much had two cores
/// of its own (`reference`).
pub const HOST_TWO_CORES: f64 = 1.9;

impl Windows {
    /// The median pair ratio.
    pub fn ratio(&self) -> f64 {
        summarize(&self.ratios).median
    }

    pub fn min(&self) -> f64 {
        summarize(&self.ratios).min
    }

    pub fn max(&self) -> f64 {
        summarize(&self.ratios).max
    }

    /// The median of the host reference's ratios.
    pub fn host_ratio(&self) -> f64 {
        summarize(&self.host_ratios).median
    }

    /// The pairs' ratios where the host gave two cores
    /// (`HOST_TWO_CORES`).
    pub fn two_core_ratios(&self) -> Vec<f64> {
        self.ratios
            .iter()
            .zip(&self.host_ratios)
            .filter(|(_, h)| **h >= HOST_TWO_CORES)
            .map(|(r, _)| *r)
            .collect()
    }

    /// The median of `two_core_ratios`, `None` when no pair had two
    /// cores.
    pub fn two_core_ratio(&self) -> Option<f64> {
        let two = self.two_core_ratios();
        (!two.is_empty()).then(|| summarize(&two).median)
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
    work: Work,
    core: Option<usize>,
}

/// What a window runs.
#[derive(Clone, Copy)]
enum Work {
    /// `batches` batches of the thread's frames through its replica.
    Pipeline { batches: usize },
    /// `rounds` rounds of the host reference (`reference`).
    Reference { rounds: u64 },
}

/// The host reference: `rounds` rounds of eight independent
/// multiply-rotate-xor chains, integer work that touches no memory but
/// the thread's own stack (the lanes go through memory once a round, so
/// the compiler cannot fold the loop). Two threads of it on two cores
/// run at twice one thread's rate when the host runs the two vCPUs at
/// the same time, and at about one thread's rate when it runs them on
/// one core in turn. (Two hyperthreads of one core may still run it at
/// nearly twice the rate while the pipeline, which needs the whole core,
/// gets less: a pair counted as "two cores" then counts against the
/// switch, not for it.)
#[inline(never)]
pub fn reference(rounds: u64) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut lanes: [u64; 8] = std::array::from_fn(|i| i as u64 + 1);
    for r in 0..rounds {
        for (i, x) in lanes.iter_mut().enumerate() {
            *x = (x.wrapping_mul(M) ^ r).rotate_left(7 + i as u32);
        }
        std::hint::black_box(&mut lanes);
    }
    lanes.iter().fold(0, |a, x| a ^ x)
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
                    let batches = match run.work {
                        Work::Pipeline { batches } => batches,
                        Work::Reference { rounds } => {
                            let start = Instant::now();
                            std::hint::black_box(reference(rounds));
                            let end = Instant::now();
                            let done = Done {
                                start,
                                end,
                                packets: rounds,
                                forwarded: rounds,
                            };
                            if done_tx.send((id, done)).is_err() {
                                break;
                            }
                            continue;
                        }
                    };
                    let mut run = |count: usize, sink: &mut Sink| {
                        // (A frame the pipeline finds malformed is not
                        // forwarded: `not_forwarded` counts it.)
                        run_batches(
                            count,
                            &mut replica,
                            &mut bufs,
                            &trace,
                            &mut next,
                            in_port,
                            now_ns,
                            sink,
                        );
                    };
                    run(warmup_batches(batches, trace.len()), &mut sink);
                    let before = sink.forwarded;
                    let start = Instant::now();
                    run(batches, &mut sink);
                    let end = Instant::now();
                    let done = Done {
                        start,
                        end,
                        packets: (batches * BATCH) as u64,
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

/// The coordinator's side of `measure`: the pairs, in ABBA order, each
/// with the host reference's pair beside it (module comment).
fn run_pairs(
    run_tx: &[mpsc::Sender<Run>],
    done_rx: &mpsc::Receiver<(usize, Done)>,
    workers: usize,
    pairs: usize,
    batches: usize,
    cores: usize,
) -> Result<Windows> {
    let (mut ratios, mut solo_mpps, mut together_mpps) = (Vec::new(), Vec::new(), Vec::new());
    let mut host_ratios = Vec::new();
    let mut not_forwarded = 0u64;
    // Sends `work` to the threads `ids` and waits for all of them: their
    // units (packets, reference rounds) per second over the span from the
    // first start to the last end.
    let mut window =
        |ids: std::ops::Range<usize>, work: Work, core: Option<usize>| -> Result<f64> {
            let n = ids.len();
            for id in ids {
                if run_tx[id].send(Run { work, core }).is_err() {
                    bail!("a measuring thread ended early");
                }
            }
            let mut span: Option<(Instant, Instant)> = None;
            let mut units = 0u64;
            for _ in 0..n {
                let Ok((_, d)) = done_rx.recv_timeout(ANSWER_WITHIN) else {
                    bail!(
                        "a measuring thread did not answer within {} s (panicked?)",
                        ANSWER_WITHIN.as_secs()
                    );
                };
                units += d.packets;
                not_forwarded += d.packets.abs_diff(d.forwarded);
                span = Some(match span {
                    None => (d.start, d.end),
                    Some((s, e)) => (s.min(d.start), e.max(d.end)),
                });
            }
            let secs = span.map_or(0.0, |(s, e)| (e - s).as_secs_f64());
            Ok(units as f64 / secs.max(1e-9))
        };
    let solo = workers;
    // The reference's rounds for about `REFERENCE_SECONDS` alone (the
    // faster of two tries).
    let probe = Work::Reference { rounds: 1 << 16 };
    let per_second =
        window(solo..solo + 1, probe, Some(0))?.max(window(solo..solo + 1, probe, Some(0))?);
    let host = Work::Reference {
        rounds: ((per_second * REFERENCE_SECONDS) as u64).max(1 << 12),
    };
    let work = Work::Pipeline { batches };
    let solo_cores = workers.min(cores).max(1);
    for k in 0..pairs {
        let core = Some((k / 2) % solo_cores);
        // (rate alone, rate of all the workers) of `w`, in the order
        // the pair's parity gives.
        let mut pair = |w: Work, alone_first: bool| -> Result<(f64, f64)> {
            if alone_first {
                let a = window(solo..solo + 1, w, core)?;
                Ok((a, window(0..workers, w, None)?))
            } else {
                let t = window(0..workers, w, None)?;
                Ok((window(solo..solo + 1, w, core)?, t))
            }
        };
        let even = k % 2 == 0;
        let ((h1, hn), (p1, pn)) = if even {
            let h = pair(host, true)?;
            (h, pair(work, true)?)
        } else {
            let p = pair(work, false)?;
            (pair(host, false)?, p)
        };
        host_ratios.push(hn / h1.max(1e-9));
        solo_mpps.push(p1 / 1e6);
        together_mpps.push(pn / 1e6);
        ratios.push(pn / p1.max(1e-9));
    }
    Ok(Windows {
        ratios,
        solo_mpps,
        together_mpps,
        host_ratios,
        not_forwarded,
    })
}

/// About how long one window of the host reference lasts.
const REFERENCE_SECONDS: f64 = 0.01;

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
        // The host reference ran in every pair.
        assert_eq!(r.host_ratios.len(), 4);
        assert!(r.host_ratios.iter().all(|h| *h > 0.0));
        assert!(r.two_core_ratios().len() <= 4);
    }

    #[test]
    fn pairs_where_the_host_gave_two_cores() {
        let r = Windows {
            ratios: vec![1.1, 1.95, 2.0, 1.2],
            solo_mpps: vec![1.0; 4],
            together_mpps: vec![2.0; 4],
            host_ratios: vec![1.15, 1.98, 1.9, 1.89],
            not_forwarded: 0,
        };
        assert_eq!(r.two_core_ratios(), [1.95, 2.0]);
        assert_eq!(r.two_core_ratio(), Some((1.95 + 2.0) / 2.0));
        assert_eq!(r.host_ratio(), (1.89 + 1.9) / 2.0);
        let none = Windows {
            host_ratios: vec![1.0; 4],
            ..r
        };
        assert_eq!(none.two_core_ratio(), None);
    }

    #[test]
    fn the_reference_is_deterministic_work() {
        assert_eq!(reference(1000), reference(1000));
        assert_ne!(reference(1000), reference(1001));
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
        // (The medians are `stats::summarize`'s: of an even number of
        // pairs, the mean of the middle two.)
        assert_eq!(summarize(&[3.0, 1.0, 2.0]).median, 2.0);
        assert_eq!(summarize(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert!(summarize(&[]).median.is_nan());
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
