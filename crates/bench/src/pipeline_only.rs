//! Pipeline-only mode: packets from memory through
//! [`pipeline::Pipeline::process_batch`] (the same effect as
//! [`pipeline::Pipeline::process`] packet by packet), no I/O.
//!
//! For one workload at one size: install it into a pipeline, let every
//! worker thread clone its own replica (as the switch's workers each hold
//! one, built in their own thread), and let each
//! thread run the workload's frames (its own copy, back to back in one
//! buffer: `Trace`) round-robin through its replica for a fixed time, in
//! batches of [`BATCH`] buffers (each frame is copied into a reused
//! [`packet::PacketBuf`] first, as a port's receive does). What the
//! pipeline emits goes to a sink that only counts. Reported: packets per
//! second per worker and in all, nanoseconds per packet, and with two
//! workers the scaling factor against one worker measured the same way.
//!
//! The experiment measures each workload in `rounds` rounds (one worker,
//! then the replicas, back to back) on one installed pipeline and keeps
//! the median run of each; the scaling is the ratio of the two medians,
//! with the lowest and highest ratio within a round beside it, as the
//! paired forwarder runs of `make bench` are reported. With `pairs` > 0
//! it then measures the scaling again in interleaved windows of about
//! 50 ms (`crate::scaling`: one worker and the replicas in turn, ABBA),
//! and reports the median of the pairs' ratios, their range, how many
//! pairs reach 1.8, the host reference's scaling in the same pairs, and
//! the median ratio of the pairs in which the host gave the workers two
//! cores: on a host whose capacity moves between seconds a ratio of two
//! medians taken seconds apart can read 1.1 or 2.4 for the same build.
//!
//! Threads are pinned to cores 0, 1, ... when the machine has that many.
//! The first [`WARMUP`] of every run is not counted (caches, page faults of
//! the replica's first touches).
//!
//! Exposed as the `pipeline` experiment ([`PipelineExperiment`]; it needs no
//! switch) and through [`measure`] for other callers.

use crate::bail;
use crate::error::Result;
use crate::experiment::{Ctx, Experiment, ParamSpec};
use crate::results::Results;
use crate::stats::summarize;
use crate::workloads::{Kind, Traffic, Workload};
use pipeline::{Output, PacketInEvent, Pipeline};
use std::time::{Duration, Instant};

/// Packets per batch, as the switch's receive path.
pub const BATCH: usize = 32;
/// Time excluded at the start of every run.
pub const WARMUP: Duration = Duration::from_millis(200);
/// How many batches run between two looks at the clock.
const BATCHES_PER_CHECK: u64 = 64;

/// An [`Output`] that counts: frames out, packet-ins (which a correct
/// workload never produces).
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub(crate) forwarded: u64,
    packet_ins: u64,
    /// A byte of every forwarded frame, so the compiler cannot drop the
    /// work that produced it.
    pub(crate) check: u8,
}

impl Output for Sink {
    fn port(&mut self, _port: u32, data: &[u8], _queue: Option<u32>) {
        self.forwarded += 1;
        self.check ^= data.first().copied().unwrap_or(0);
    }
    fn packet_in(&mut self, _ev: PacketInEvent<'_>) {
        self.packet_ins += 1;
    }
}

/// One worker's tally.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    packets: u64,
    forwarded: u64,
    packet_ins: u64,
    errors: u64,
    seconds: f64,
    /// CPU time the thread itself used while measuring (less than
    /// `seconds` when other processes took the core for a while).
    cpu_seconds: f64,
}

/// One measurement: a workload through `workers` replicas.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Measurement {
    pub workload: String,
    pub kind: Kind,
    pub size: usize,
    pub traffic: Traffic,
    pub workers: usize,
    /// Packets processed after warm-up, all workers.
    pub packets: u64,
    /// Million packets per second, all workers together.
    pub mpps: f64,
    /// Mpps of one worker (the mean over workers).
    pub mpps_per_core: f64,
    /// Nanoseconds of one worker per packet.
    pub ns_per_packet: f64,
    /// Nanoseconds of the workers' own CPU time per packet: what
    /// `ns_per_packet` would be if nothing else ran on their cores (the
    /// figure to compare two builds with on a busy machine).
    pub cpu_ns_per_packet: f64,
    /// Packets that were not forwarded exactly once (should be 0).
    pub not_forwarded: u64,
    /// The lookup structure of every non-empty table: (table id,
    /// entries, classifier kind as `FlowTable::classifier_kind` names it).
    pub classifiers: Vec<(u8, usize, &'static str)>,
}

/// CPU time of the calling thread so far, in seconds (0 if the clock
/// cannot be read).
fn thread_cpu_seconds() -> f64 {
    use nix::time::{clock_gettime, ClockId};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(|t| t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
        .unwrap_or(0.0)
}

/// How a workload's frames are shared out among the workers of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Every worker runs all of them: each replica sees every flow.
    None,
    /// Frame i goes to worker i mod n: each worker runs its own share of
    /// the flows, as each worker of the switch gets the flows the fanout
    /// hash (or the NIC's RSS) gives its queue, and touches only their
    /// entries in its replica. A workload of fewer frames than workers (a
    /// single flow) cannot be shared out: every worker runs all of it.
    Flows,
}

impl Split {
    pub fn name(self) -> &'static str {
        match self {
            Split::None => "none",
            Split::Flows => "flows",
        }
    }
}

impl std::str::FromStr for Split {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Split, String> {
        match s {
            "none" => Ok(Split::None),
            "flows" => Ok(Split::Flows),
            _ => Err(format!("unknown split \"{s}\" (flows, none)")),
        }
    }
}

/// The order a workload's frames run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// As the workload lists them: entry after entry, so consecutive
    /// packets hit neighbouring entries (whose records and index slots
    /// the hardware prefetches: kind to the caches).
    Entries,
    /// One fixed random permutation of them (the same every run): every
    /// entry still hit once per pass, but in no order a cache or a
    /// prefetcher can use, as flows from many hosts arrive.
    Random,
}

impl Order {
    /// `frames` in this order.
    pub fn apply(self, frames: &mut [Vec<u8>]) {
        if self == Order::Random {
            crate::rng::Rng::new(0x9e37_79b9_7f4a_7c15).shuffle(frames);
        }
    }
}

impl std::str::FromStr for Order {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Order, String> {
        match s {
            "entries" => Ok(Order::Entries),
            "random" => Ok(Order::Random),
            _ => Err(format!("unknown order \"{s}\" (entries, random)")),
        }
    }
}

/// The workload's frames back to back in one buffer, as a port's receive
/// ring holds them, instead of one heap allocation each: reading them in
/// turn is a sequential stream the CPU prefetches, so a workload of 100K
/// frames measures the pipeline and not scattered reads of the frames
/// themselves (~3 ns per packet at l2/100K, measured as CPU time).
///
/// ```text
///  bytes  [frame 0 | frame 1 | ... ]
///  spans  [(start 0, len 0), (start 1, len 1), ...]
/// ```
pub(crate) struct Trace {
    bytes: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

impl Trace {
    /// The frames worker `i` of `n` runs under `split`.
    pub(crate) fn new(frames: &[Vec<u8>], split: Split, i: usize, n: usize) -> Trace {
        let n = n.max(1);
        let share = split == Split::Flows && frames.len() >= n;
        let mine: Vec<&Vec<u8>> = frames
            .iter()
            .enumerate()
            .filter(|(j, _)| !share || j % n == i)
            .map(|(_, f)| f)
            .collect();
        let mut bytes = Vec::with_capacity(mine.iter().map(|f| f.len()).sum());
        let mut spans = Vec::with_capacity(mine.len());
        for f in mine {
            spans.push((bytes.len(), f.len()));
            bytes.extend_from_slice(f);
        }
        Trace { bytes, spans }
    }

    /// Frame `i` (empty if out of range).
    #[inline]
    fn frame(&self, i: usize) -> &[u8] {
        self.spans
            .get(i)
            .and_then(|&(at, len)| self.bytes.get(at..at + len))
            .unwrap_or_default()
    }

    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }
}

/// `count` batches, each: `bufs` filled with the frames of `frames` from
/// `*next` on (round-robin; `*next` moves on), as a port's receive fills
/// them, then through `p` at once (the same effect as packet by packet)
/// into `sink`. Returns how many frames the pipeline found malformed.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_batches(
    count: usize,
    p: &mut Pipeline,
    bufs: &mut [packet::PacketBuf],
    frames: &Trace,
    next: &mut usize,
    in_port: u32,
    now_ns: u64,
    sink: &mut Sink,
) -> u64 {
    let mut errors = 0;
    for _ in 0..count {
        for b in bufs.iter_mut() {
            // Every frame is FRAME_LEN bytes: always fits.
            let _ = b.set(frames.frame(*next));
            *next += 1;
            if *next >= frames.len() {
                *next = 0;
            }
        }
        p.process_batch(bufs, in_port, now_ns, sink, |_, _, _, r| {
            if r.is_err() {
                errors += 1;
            }
        });
    }
    errors
}

/// Runs `frames` through `p` for `warmup + duration` on the calling
/// thread, `batch` frames per `process_batch`.
fn run_worker(
    mut p: Pipeline,
    frames: &Trace,
    in_port: u32,
    duration: Duration,
    batch: usize,
) -> Tally {
    let batch = batch.clamp(1, BATCH);
    let mut bufs: Vec<packet::PacketBuf> = (0..batch).map(|_| packet::PacketBuf::new()).collect();
    let mut sink = Sink::default();
    let mut t = Tally::default();
    let mut next = 0usize;
    let start = Instant::now();
    let mut measuring_since: Option<Instant> = None;
    let mut cpu_since = 0.0;
    let mut batches = 0u64;
    let now_ns = 1_000_000_000u64;
    loop {
        t.errors += run_batches(
            1, &mut p, &mut bufs, frames, &mut next, in_port, now_ns, &mut sink,
        );
        if measuring_since.is_some() {
            t.packets += batch as u64;
        }
        batches += 1;
        if batches.is_multiple_of(BATCHES_PER_CHECK) {
            let now = Instant::now();
            match measuring_since {
                None if now - start >= WARMUP => {
                    measuring_since = Some(now);
                    cpu_since = thread_cpu_seconds();
                    sink.forwarded = 0;
                    sink.packet_ins = 0;
                    t.errors = 0;
                }
                Some(since) if now - since >= duration => {
                    t.seconds = (now - since).as_secs_f64();
                    t.cpu_seconds = thread_cpu_seconds() - cpu_since;
                    break;
                }
                _ => {}
            }
        }
    }
    t.forwarded = sink.forwarded;
    t.packet_ins = sink.packet_ins;
    std::hint::black_box(sink.check);
    t
}

/// Measures `w` through `workers` pipeline replicas (one thread each,
/// pinned to cores 0.. when there are enough) for `duration` after
/// warm-up, the frames shared out as `split` says.
pub fn measure(
    w: &Workload,
    workers: usize,
    duration: Duration,
    split: Split,
) -> Result<Measurement> {
    measure_installed(&install(w)?, w, workers, duration, split, BATCH)
}

/// A pipeline with `w` installed, to measure as many times as wanted
/// (`measure_installed`).
pub fn install(w: &Workload) -> Result<Pipeline> {
    let mut p = Pipeline::default();
    if let Err((i, e)) = w.install(&mut p) {
        bail!("{}: the pipeline refused message {i}: {e:?}", w.name());
    }
    if w.frames.is_empty() {
        bail!("{}: no frames", w.name());
    }
    Ok(p)
}

/// `measure` of a pipeline `install` made from `w` (every worker clones
/// its replica from `p`, which stays as it is), `batch` frames (1 to
/// `BATCH`) per `process_batch`.
pub fn measure_installed(
    p: &Pipeline,
    w: &Workload,
    workers: usize,
    duration: Duration,
    split: Split,
    batch: usize,
) -> Result<Measurement> {
    let classifiers = p
        .tables()
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| (t.id, t.len(), t.classifier_kind()))
        .collect();
    let workers = workers.max(1);
    let cores = crate::switch::cores();
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                let frames = &w.frames;
                let in_port = w.ports.input;
                s.spawn(move || {
                    if workers <= cores {
                        crate::switch::pin_self(i);
                    }
                    // Each worker makes its replica itself, as the
                    // switch's workers build theirs: its memory comes
                    // from this thread's allocator heap, so the replicas'
                    // per-packet writes (counters) never share a cache
                    // line with another worker's.
                    let replica = p.clone();
                    let trace = Trace::new(frames, split, i, workers);
                    run_worker(replica, &trace, in_port, duration, batch)
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    if tallies.len() != workers {
        bail!("{}: a worker thread panicked", w.name());
    }
    let packets: u64 = tallies.iter().map(|t| t.packets).sum();
    let forwarded: u64 = tallies.iter().map(|t| t.forwarded).sum();
    let per_core: Vec<f64> = tallies
        .iter()
        .map(|t| t.packets as f64 / t.seconds.max(1e-9) / 1e6)
        .collect();
    let mpps: f64 = per_core.iter().sum();
    let mpps_per_core = mpps / workers as f64;
    Ok(Measurement {
        workload: w.name(),
        kind: w.kind,
        size: w.size,
        traffic: w.traffic,
        workers,
        packets,
        mpps,
        mpps_per_core,
        ns_per_packet: if mpps_per_core > 0.0 {
            1e3 / mpps_per_core
        } else {
            f64::INFINITY
        },
        cpu_ns_per_packet: {
            let cpu: f64 = tallies.iter().map(|t| t.cpu_seconds).sum();
            if packets > 0 {
                cpu * 1e9 / packets as f64
            } else {
                f64::INFINITY
            }
        },
        not_forwarded: packets.abs_diff(forwarded),
        classifiers,
    })
}

/// The `pipeline` experiment: every workload and size from memory, one
/// worker and (with `replicas=2`, the default) two, no switch and no I/O.
/// (The parameter is not called `workers`: that name is the framework's
/// oxflow worker count.)
#[derive(Debug, Default)]
pub struct PipelineExperiment {
    /// Per workload, size and traffic mode: the median one-worker run
    /// and (with `replicas` above 1) the median n-worker run.
    rows: Vec<Measurement>,
    scaling: Vec<Scaling>,
    workers: usize,
    rounds: usize,
    /// Pairs of interleaved windows per workload (`crate::scaling`).
    pairs: usize,
    /// Frames per `process_batch` in the rounds (`BATCH` unless the
    /// `batch` parameter says fewer).
    batch: usize,
}

/// About how long one interleaved window lasts (`crate::scaling`): long
/// against a thread's wake-up (tens of microseconds here), short against
/// the host's drift.
const WINDOW_SECONDS: f64 = 0.05;

/// The issue's target for two workers against one: the scaling table
/// counts the window pairs that reach it.
const GOOD_SCALING: f64 = 1.8;

/// How n workers scaled against one on one workload, from `rounds`
/// rounds that each ran one worker then n, back to back: the ratio of
/// the two medians, and the lowest and highest ratio within a round.
/// (On a shared 2-vCPU machine one run's rate drifts by tens of percent
/// from minute to minute; a ratio of two single runs was mostly that
/// drift.)
#[derive(Debug, Clone)]
struct Scaling {
    workload: String,
    one: f64,
    many: f64,
    round_min: f64,
    round_max: f64,
    /// The interleaved windows (`crate::scaling`), when `pairs` > 0.
    windows: Option<crate::scaling::Windows>,
}

impl Scaling {
    /// The ratio of the medians.
    fn ratio(&self) -> f64 {
        speedup(self.many, self.one)
    }
}

/// How many times `one` worker's Mpps `many` workers made (a round's
/// ratio, or the medians' in `Scaling::ratio`).
fn speedup(many: f64, one: f64) -> f64 {
    many / one.max(1e-9)
}

/// The run with the median Mpps of `runs` (of an even number, the
/// higher of the two middle ones): a real run, so its other figures
/// (CPU time, packets) belong together.
fn median_run(mut runs: Vec<Measurement>) -> Option<Measurement> {
    runs.sort_by(|a, b| a.mpps.total_cmp(&b.mpps));
    let mid = runs.len() / 2;
    runs.into_iter().nth(mid)
}

impl Experiment for PipelineExperiment {
    fn name(&self) -> &'static str {
        "pipeline"
    }

    fn description(&self) -> &'static str {
        "pipeline only: HARMLESS workloads from memory through Pipeline::process_batch, Mpps per core, ns/packet, worker scaling"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new(
                "workloads",
                "single,l2,l3,lb_acl,gateway",
                "workloads (single, l2, l3, lb_acl, gateway, acl_l3)",
            ),
            ParamSpec::new("sizes", "100,1000,10000,100000", "entries per workload"),
            ParamSpec::new("traffic", "spread,tse", "traffic modes (spread, tse)"),
            ParamSpec::new(
                "replicas",
                "2",
                "also measure this many worker threads, each with its own pipeline replica (1: one worker only)",
            ),
            ParamSpec::new(
                "split",
                "none",
                "how the replicas share the frames: flows (worker i of n runs frames i, i+n, ...: its share of the flows, as the switch's fanout gives each worker) or none (every worker all frames)",
            ),
            ParamSpec::new(
                "order",
                "entries",
                "the frames' order: entries (entry after entry, as the workload lists them: neighbouring entries back to back, kind to the caches) or random (one fixed random permutation: every entry once per pass in no cache-friendly order); rows of a random run are named WORKLOAD/SIZE[/tse]/random",
            ),
            ParamSpec::new("seconds", "1", "measured seconds per run (after warm-up)"),
            ParamSpec::new(
                "batch",
                "32",
                "frames per process_batch in the rounds, 1 to 32 (a switch whose offered rate is below its own sees small batches: this measures what a batch costs beside its frames; the window pairs always use 32)",
            ),
            ParamSpec::new(
                "rounds",
                "3",
                "rounds per workload, each one worker then the replicas back to back; the table keeps the median run of each",
            ),
            ParamSpec::new(
                "pairs",
                "20",
                "pairs of interleaved windows (about 50 ms each) of one worker and of the replicas, in ABBA order, each with a host reference pair: the median of the pairs' scaling ratios, their range, how many reach 1.8, and the median in the pairs where the host gave two cores, beside the ratio of the rounds' medians (0: none)",
            ),
        ]
    }

    fn needs_switch(&self) -> bool {
        false
    }

    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let kinds: Vec<Kind> = ctx.params.list("workloads")?;
        let sizes: Vec<usize> = ctx.params.list("sizes")?;
        let modes: Vec<Traffic> = ctx.params.list("traffic")?;
        self.workers = ctx.param::<usize>("replicas")?.max(1);
        let seconds: f64 = ctx.param("seconds")?;
        let split: Split = ctx.param("split")?;
        let order: Order = ctx.param("order")?;
        self.rounds = ctx.param::<usize>("rounds")?;
        self.pairs = ctx.param::<usize>("pairs")?;
        self.batch = ctx.param::<usize>("batch")?;
        if !(1..=BATCH).contains(&self.batch) {
            bail!("batch={}: want 1 to {BATCH}", self.batch);
        }
        if self.pairs > 10_000 {
            bail!("pairs={}: want 0 to 10000", self.pairs);
        }
        if !(seconds > 0.0 && seconds < 3600.0) {
            bail!("seconds={seconds}: want a positive number of seconds");
        }
        if !(1..=100).contains(&self.rounds) {
            bail!("rounds={}: want 1 to 100", self.rounds);
        }
        let d = Duration::from_secs_f64(seconds);
        for &kind in &kinds {
            let sizes = if kind == Kind::Single {
                &[1][..]
            } else {
                &sizes
            };
            for &size in sizes {
                for &mode in &modes {
                    let mut w = Workload::new(kind, size, mode);
                    order.apply(&mut w.frames);
                    // The rows' name: the workload's, and the order
                    // when it is not the workload's own.
                    let name = match order {
                        Order::Entries => w.name(),
                        Order::Random => format!("{}/random", w.name()),
                    };
                    let p = install(&w)?;
                    let (mut ones, mut manys) = (Vec::new(), Vec::new());
                    for _ in 0..self.rounds {
                        ones.push(measure_installed(&p, &w, 1, d, split, self.batch)?);
                        if self.workers > 1 {
                            manys.push(measure_installed(
                                &p,
                                &w,
                                self.workers,
                                d,
                                split,
                                self.batch,
                            )?);
                        }
                    }
                    let ratios: Vec<f64> = ones
                        .iter()
                        .zip(&manys)
                        .map(|(o, m)| speedup(m.mpps, o.mpps))
                        .collect();
                    let Some(mut one) = median_run(ones) else {
                        bail!("{name}: no run");
                    };
                    one.workload.clone_from(&name);
                    ctx.note(format!(
                        "{}: {:.2} Mpps/core, {:.1} ns/packet ({:.1} ns of its own CPU time; median of {})",
                        one.workload, one.mpps, one.ns_per_packet, one.cpu_ns_per_packet, self.rounds
                    ));
                    let many = median_run(manys);
                    if let Some(n) = &many {
                        let windows = if self.pairs > 0 {
                            let batches = crate::scaling::window_batches(one.mpps, WINDOW_SECONDS);
                            let r = crate::scaling::measure(
                                &p,
                                &w,
                                self.workers,
                                split,
                                self.pairs,
                                batches,
                            )?;
                            ctx.note(format!(
                                "{}: {} workers {:.2}x one in {} interleaved window pairs (pairs {:.2}-{:.2}); host reference {:.2}x; in the {} pairs where the host gave two cores {}",
                                name,
                                self.workers,
                                r.ratio(),
                                self.pairs,
                                r.min(),
                                r.max(),
                                r.host_ratio(),
                                r.two_core_ratios().len(),
                                r.two_core_ratio()
                                    .map_or_else(|| "-".to_string(), |x| format!("{x:.2}x"))
                            ));
                            Some(r)
                        } else {
                            None
                        };
                        self.scaling.push(Scaling {
                            workload: name.clone(),
                            one: one.mpps,
                            many: n.mpps,
                            round_min: ratios.iter().copied().fold(f64::INFINITY, f64::min),
                            round_max: ratios.iter().copied().fold(0.0, f64::max),
                            windows,
                        });
                    }
                    self.rows.push(one);
                    self.rows.extend(many.map(|mut m| {
                        m.workload.clone_from(&name);
                        m
                    }));
                }
            }
        }
        ctx.done();
        Ok(())
    }

    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        let mut r = Results::new();
        let rows = self
            .rows
            .iter()
            .map(|m| {
                vec![
                    m.workload.clone().into(),
                    m.kind.name().into(),
                    m.size.into(),
                    m.traffic.name().into(),
                    m.workers.into(),
                    m.mpps.into(),
                    m.mpps_per_core.into(),
                    m.ns_per_packet.into(),
                    m.cpu_ns_per_packet.into(),
                    m.not_forwarded.into(),
                ]
            })
            .collect();
        r.table(
            "pipeline",
            &[
                "workload",
                "kind",
                "size",
                "traffic",
                "workers",
                "mpps",
                "mpps_per_core",
                "ns_per_packet",
                "cpu_ns_per_packet",
                "not_forwarded",
            ],
            rows,
        );
        let lookup = self
            .rows
            .iter()
            .filter(|m| m.workers == 1 && m.traffic == Traffic::Spread)
            .flat_map(|m| {
                m.classifiers.iter().map(|(t, n, k)| {
                    vec![
                        m.workload.clone().into(),
                        (*t).into(),
                        (*n).into(),
                        (*k).into(),
                    ]
                })
            })
            .collect();
        r.table(
            "classifiers",
            &["workload", "table", "entries", "classifier"],
            lookup,
        );
        for m in self.rows.iter().filter(|m| m.workers == 1) {
            r.scalar(&format!("{}_mpps", m.workload), m.mpps, "Mpps");
            r.scalar(
                &format!("{}_ns_per_packet", m.workload),
                m.ns_per_packet,
                "ns",
            );
        }
        for sc in &self.scaling {
            r.scalar(
                &format!("{}_scaling_{}w", sc.workload, self.workers),
                sc.ratio(),
                "x",
            );
            if let Some(x) = &sc.windows {
                r.scalar(
                    &format!("{}_scaling_{}w_windows", sc.workload, self.workers),
                    x.ratio(),
                    "x",
                );
                if let Some(two) = x.two_core_ratio() {
                    r.scalar(
                        &format!("{}_scaling_{}w_two_cores", sc.workload, self.workers),
                        two,
                        "x",
                    );
                }
            }
        }
        // (Columns of the windows are null, empty in the CSV, for a run
        // without them.)
        let scaling = self
            .scaling
            .iter()
            .map(|sc| {
                let win = |f: &dyn Fn(&crate::scaling::Windows) -> f64| {
                    sc.windows
                        .as_ref()
                        .map_or(serde_json::Value::Null, |x| f(x).into())
                };
                vec![
                    sc.workload.clone().into(),
                    self.workers.into(),
                    self.rounds.into(),
                    sc.one.into(),
                    sc.many.into(),
                    sc.ratio().into(),
                    sc.round_min.into(),
                    sc.round_max.into(),
                    sc.windows.as_ref().map_or(0, |x| x.ratios.len()).into(),
                    win(&crate::scaling::Windows::ratio),
                    win(&crate::scaling::Windows::min),
                    win(&crate::scaling::Windows::max),
                    win(&|x| summarize(&x.solo_mpps).median),
                    win(&|x| summarize(&x.together_mpps).median),
                    win(&|x| x.ratios.iter().filter(|r| **r >= GOOD_SCALING).count() as f64),
                    win(&crate::scaling::Windows::host_ratio),
                    win(&|x| x.two_core_ratios().len() as f64),
                    sc.windows
                        .as_ref()
                        .and_then(crate::scaling::Windows::two_core_ratio)
                        .map_or(serde_json::Value::Null, Into::into),
                ]
            })
            .collect();
        r.table(
            "scaling",
            &[
                "workload",
                "workers",
                "rounds",
                "one_worker_median_mpps",
                "workers_median_mpps",
                "ratio_of_medians",
                "round_ratio_min",
                "round_ratio_max",
                "pairs",
                "windows_ratio",
                "windows_ratio_min",
                "windows_ratio_max",
                "windows_one_mpps",
                "windows_workers_mpps",
                "pairs_at_least_1_8",
                "host_ratio",
                "pairs_host_two_cores",
                "windows_ratio_two_cores",
            ],
            scaling,
        );
        // Mpps against size, one series per workload and traffic mode.
        let mut names = Vec::new();
        for kind in Kind::ALL {
            for mode in [Traffic::Spread, Traffic::Tse] {
                let pts: Vec<[f64; 2]> = self
                    .rows
                    .iter()
                    .filter(|m| m.workers == 1 && m.kind == kind && m.traffic == mode)
                    .map(|m| [m.size as f64, m.mpps])
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let name = format!("{}_{}", kind.name(), mode.name());
                r.series(&name, "entries", "Mpps (1 core)", pts);
                names.push(name);
            }
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        r.plot(
            "pipeline_mpps",
            "Pipeline only: Mpps per core vs table size",
            "entries",
            "Mpps",
            true,
            false,
            &names,
        );
        let bad: u64 = self.rows.iter().map(|m| m.not_forwarded).sum::<u64>()
            + self
                .scaling
                .iter()
                .filter_map(|sc| sc.windows.as_ref())
                .map(|x| x.not_forwarded)
                .sum::<u64>();
        if bad > 0 {
            r.note(format!(
                "{bad} packets were not forwarded exactly once: a workload or pipeline bug"
            ));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_every_workload_and_forwards_everything() {
        for kind in Kind::ALL {
            for traffic in [Traffic::Spread, Traffic::Tse] {
                let w = Workload::new(kind, 100, traffic);
                let m = measure(&w, 1, Duration::from_millis(20), Split::Flows).expect("measures");
                assert!(
                    m.packets >= BATCH as u64,
                    "{}: {} packets",
                    m.workload,
                    m.packets
                );
                assert_eq!(m.not_forwarded, 0, "{}", m.workload);
                assert!(m.mpps > 0.0 && m.ns_per_packet.is_finite());
                // The thread's own CPU time was read: positive, and at
                // most the wall-clock time (plus rounding).
                assert!(
                    m.cpu_ns_per_packet > 0.0 && m.cpu_ns_per_packet <= m.ns_per_packet * 1.05,
                    "{}: {} CPU ns vs {} ns per packet",
                    m.workload,
                    m.cpu_ns_per_packet,
                    m.ns_per_packet
                );
                let entries: usize = m.classifiers.iter().map(|c| c.1).sum();
                assert_eq!(entries, w.n_flows(), "{}", m.workload);
            }
        }
    }

    #[test]
    fn flows_are_shared_out_among_the_workers() {
        let frames: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 3]).collect();
        let of = |t: &Trace| (0..t.len()).map(|j| t.frame(j)[0]).collect::<Vec<u8>>();
        assert_eq!(of(&Trace::new(&frames, Split::Flows, 0, 2)), [0, 2, 4]);
        assert_eq!(of(&Trace::new(&frames, Split::Flows, 1, 2)), [1, 3]);
        assert_eq!(of(&Trace::new(&frames, Split::None, 1, 2)), [0, 1, 2, 3, 4]);
        // One flow cannot be shared out: every worker runs it.
        let one = &frames[..1];
        assert_eq!(of(&Trace::new(one, Split::Flows, 1, 2)), [0]);
        assert_eq!("flows".parse::<Split>(), Ok(Split::Flows));
        assert!("rss".parse::<Split>().is_err());
    }

    #[test]
    fn random_order_is_a_fixed_permutation() {
        let frames: Vec<Vec<u8>> = (0..=255u8).map(|i| vec![i; 2]).collect();
        let mut a = frames.clone();
        Order::Entries.apply(&mut a);
        assert_eq!(a, frames);
        Order::Random.apply(&mut a);
        let mut b = frames.clone();
        Order::Random.apply(&mut b);
        // The same every run, every frame once, and out of order: few
        // frames keep a neighbour that follows them in the workload.
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, frames);
        let kept = a
            .windows(2)
            .filter(|w| w[1][0] == w[0][0].wrapping_add(1))
            .count();
        assert!(kept < 10, "{kept} of 255 neighbours kept");
        // And every frame of a random run still forwarded.
        let mut w = Workload::new(Kind::Gateway, 100, Traffic::Spread);
        Order::Random.apply(&mut w.frames);
        let m = measure(&w, 1, Duration::from_millis(20), Split::Flows).expect("measures");
        assert_eq!(m.not_forwarded, 0);
        assert_eq!("random".parse::<Order>(), Ok(Order::Random));
        let e = "shuffled".parse::<Order>().expect_err("unknown");
        assert!(e.contains("entries, random"), "{e}");
    }

    #[test]
    fn the_median_run_is_a_real_run() {
        let w = Workload::new(Kind::Single, 1, Traffic::Spread);
        let m = measure(&w, 1, Duration::from_millis(5), Split::Flows).expect("measures");
        let runs: Vec<Measurement> = [3.0, 1.0, 2.0]
            .iter()
            .map(|&mpps| Measurement {
                mpps,
                packets: mpps as u64,
                ..m.clone()
            })
            .collect();
        let mid = median_run(runs.clone()).expect("a run");
        assert_eq!((mid.mpps, mid.packets), (2.0, 2));
        // Of two, the higher.
        assert_eq!(median_run(runs[..2].to_vec()).map(|r| r.mpps), Some(3.0));
        assert!(median_run(Vec::new()).is_none());
    }

    #[test]
    fn two_workers_each_run_their_replica() {
        let w = Workload::new(Kind::L2, 1_000, Traffic::Spread);
        let m = measure(&w, 2, Duration::from_millis(20), Split::Flows).expect("measures");
        assert_eq!(m.workers, 2);
        assert_eq!(m.not_forwarded, 0);
        assert!(m.packets >= 2 * BATCH as u64);
    }

    #[test]
    fn small_batches_forward_everything() {
        // A batch of one and of three (below the chunk, not a power of
        // two): every packet through the per-table way's per-chunk arrays,
        // which a smaller batch leaves partly unwritten.
        for batch in [1, 3] {
            for kind in Kind::ALL {
                let w = Workload::new(kind, 100, Traffic::Spread);
                let p = install(&w).expect("installs");
                let m =
                    measure_installed(&p, &w, 1, Duration::from_millis(20), Split::Flows, batch)
                        .expect("measures");
                assert_eq!(m.not_forwarded, 0, "{} batch {batch}", m.workload);
                assert!(m.packets > 0 && m.packets.is_multiple_of(batch as u64));
            }
        }
    }

    #[test]
    fn a_workload_that_drops_is_reported() {
        // Frames of another workload miss every entry: counted, not hidden.
        let mut w = Workload::new(Kind::L2, 100, Traffic::Spread);
        w.frames = Workload::new(Kind::L3, 100, Traffic::Spread).frames;
        let m = measure(&w, 1, Duration::from_millis(20), Split::Flows).expect("measures");
        assert_eq!(m.not_forwarded, m.packets);
    }
}
