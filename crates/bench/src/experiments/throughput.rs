//! Throughput per workload (issue 4 item 6, issue 5 "Throughput per
//! workload"): for each HARMLESS workload and size, the maximum forwarding
//! rate and the highest rate without loss (RFC 2544 style binary search).
//!
//! For each workload (see [`crate::workloads`]):
//! 1. all flows and groups are deleted, then the workload's group-mods and
//!    flow-mods are sent in bulk and a barrier waited for (its time is
//!    reported as `install_s`: for `l2/100000` that is "100,000 flow-mods +
//!    barrier"); an OFPT_ERROR for any of them fails the row; then, given
//!    the switch's pid, a wait of at most `settle` seconds until it uses
//!    under 5 % of a core in two consecutive half-second windows
//!    (`sampler::settle`; reported as `settle_s` and `settled`), so the
//!    rows measure each switch's steady state and not work its barrier
//!    reply left behind (Open vSwitch, pinged right after a delete of 110K
//!    flows, was busy for 4 s; after these installs it has been quiet
//!    within the two windows so far, but nothing promises that of any
//!    switch);
//! 2. *max rate*: the generator sends the workload's frames round-robin
//!    flat out from the generator namespace (pinned to core 0; the switch
//!    runs on core 1) for a warm-up (`warmup` seconds and at least one pass
//!    over all frames, so a flow cache has seen every flow) and then a
//!    window of `seconds`; the rate is what the sink
//!    interface received during the `seconds` window, from the kernel's
//!    interface counters (`/proc/net/dev` of the sink's namespace); the
//!    offered rate is what the generator interface transmitted (a generator
//!    slower than the switch is reported as such, not blamed on the switch);
//! 3. *no-loss rate*: a binary search over paced rates between 0 and the
//!    maximum offered rate, `search_steps` probes; a probe passes when the
//!    frames lost over the whole probe (sent minus received after the
//!    queues drained) are at most `loss_tolerance` of those sent (0: RFC
//!    2544's zero loss).
//!
//! Generators (`generator=`): `afpacket` (default) sends from this process
//! through the `ports` AF_PACKET backend (sendmmsg, batches of 32, paced by
//! a busy-waiting clock); `trafgen` runs netsniff-ng's trafgen with the
//! frames written as its configuration (`-b RATEpps` for pacing). trafgen
//! compiles its configuration in time quadratic in the number of distinct
//! frames (about 0.5 s for 20,000 frames, 20 s for 100,000 here), which is
//! why it is not the default.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ofp::experimenter::WorkerStats;
use ofp::message::Message;
use ports::afpacket::{AfPacket, AfPacketOpts};
use ports::Port;

use crate::bail;
use crate::capture::in_ns;
use crate::error::{BenchError, Result};
use crate::experiment::{Ctx, Event, Experiment, ParamSpec};
use crate::results::Results;
use crate::sampler::{self, CpuMark};
use crate::topology::Iface;
use crate::workloads::{Kind, Ports, Traffic, Workload};

/// Workers busy at least this % of a window: the switch's core was
/// saturated (the `generator_limited` note says so).
const SATURATED_PCT: f64 = 95.0;

/// Frames per generator batch.
const GEN_BATCH: usize = 32;

/// Interface counters we read.
#[derive(Debug, Clone, Copy, Default)]
struct Counters {
    rx_packets: u64,
    tx_packets: u64,
    /// Frames the interface failed to hand on (a veth counts drops at
    /// the peer's backlog here).
    tx_dropped: u64,
}

/// `/proc/net/dev` line of `name` in `netns`.
fn counters(ifc: &Iface) -> Result<Counters> {
    let name = ifc.name.clone();
    let text = in_ns(ifc.netns.as_deref(), move || {
        std::fs::read_to_string("/proc/thread-self/net/dev")
            .map_err(|e| BenchError(format!("/proc/thread-self/net/dev: {e}")))
    })?;
    parse_net_dev(&text, &ifc.name)
        .ok_or_else(|| BenchError(format!("interface {name} not in /proc/net/dev")))
}

/// `/proc/net/dev`: `name: rx_bytes rx_packets errs drop fifo frame
/// compressed multicast tx_bytes tx_packets errs drop ...`.
fn parse_net_dev(text: &str, name: &str) -> Option<Counters> {
    text.lines().find_map(|l| {
        let (n, rest) = l.split_once(':')?;
        if n.trim() != name {
            return None;
        }
        let v: Vec<u64> = rest
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        Some(Counters {
            rx_packets: *v.get(1)?,
            tx_packets: *v.get(9)?,
            tx_dropped: *v.get(11)?,
        })
    })
}

/// Which generator sends the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    AfPacket,
    Trafgen,
}

impl std::str::FromStr for Engine {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Engine, String> {
        match s {
            "afpacket" => Ok(Engine::AfPacket),
            "trafgen" => Ok(Engine::Trafgen),
            _ => Err(format!("unknown generator {s:?} (afpacket, trafgen)")),
        }
    }
}

/// A generator sending in the background until stopped.
enum Running {
    Thread {
        stop: Arc<AtomicBool>,
        handle: std::thread::JoinHandle<()>,
    },
    Trafgen(Child),
}

/// Sends `frames` round-robin on `port` at `pps` (0: flat out) until
/// `stop`. (What was sent is read from the interface counters.)
fn blast(mut port: AfPacket, frames: Arc<Vec<Vec<u8>>>, pps: f64, stop: &AtomicBool) {
    let start = Instant::now();
    let mut next = 0usize;
    let mut total = 0u64;
    // Smaller batches at low rates keep bursts short.
    let batch = if pps > 0.0 && pps < 200_000.0 {
        4
    } else {
        GEN_BATCH
    };
    let mut refs: Vec<&[u8]> = Vec::with_capacity(batch);
    while !stop.load(Ordering::Relaxed) {
        if pps > 0.0 {
            let due = Duration::from_secs_f64(total as f64 / pps);
            loop {
                let el = start.elapsed();
                if el >= due || stop.load(Ordering::Relaxed) {
                    break;
                }
                if due - el > Duration::from_micros(200) {
                    std::thread::sleep(Duration::from_micros(50));
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        refs.clear();
        for _ in 0..batch {
            refs.push(&frames[next]);
            next += 1;
            if next == frames.len() {
                next = 0;
            }
        }
        // What the device refused is counted by the interface as dropped
        // and offered all the same.
        match port.tx_batch(&refs) {
            Ok(_) => total += batch as u64,
            Err(_) => std::thread::sleep(Duration::from_micros(100)),
        }
    }
}

/// The generator side of one run: frames and how to send them.
struct Gen {
    engine: Engine,
    iface: Iface,
    frames: Arc<Vec<Vec<u8>>>,
    /// trafgen configuration file (written once per workload).
    cfg: Option<std::path::PathBuf>,
    pin: bool,
}

impl Gen {
    fn new(engine: Engine, iface: Iface, w: &Workload, pin: bool) -> Result<Gen> {
        let cfg = if engine == Engine::Trafgen {
            let p = std::env::temp_dir().join(format!(
                "oxflow-bench-{}-{}.trafgen",
                std::process::id(),
                w.name().replace('/', "_")
            ));
            w.write_trafgen(&p)
                .map_err(|e| BenchError(format!("writing {}: {e}", p.display())))?;
            Some(p)
        } else {
            None
        };
        Ok(Gen {
            engine,
            iface,
            frames: Arc::new(w.frames.clone()),
            cfg,
            pin,
        })
    }

    fn start(&self, pps: f64) -> Result<Running> {
        match self.engine {
            Engine::AfPacket => {
                let name = self.iface.name.clone();
                let port = in_ns(self.iface.netns.as_deref(), move || {
                    let opts = AfPacketOpts {
                        block_size: 1 << 16,
                        block_nr: 2,
                        promisc: false,
                        ..AfPacketOpts::default()
                    };
                    AfPacket::open(&name, &opts)
                        .map_err(|e| BenchError(format!("generator on {name}: {e}")))
                })?;
                let stop = Arc::new(AtomicBool::new(false));
                let (s2, frames, pin) = (stop.clone(), self.frames.clone(), self.pin);
                let handle = std::thread::Builder::new()
                    .name("throughput-gen".into())
                    .spawn(move || {
                        if pin && crate::switch::cores() >= 2 {
                            crate::switch::pin_self(0);
                        }
                        blast(port, frames, pps, &s2);
                    })?;
                Ok(Running::Thread { stop, handle })
            }
            Engine::Trafgen => {
                let cfg = self
                    .cfg
                    .as_ref()
                    .ok_or_else(|| BenchError::new("no trafgen config"))?;
                let mut cmd = Command::new("ip");
                if let Some(ns) = &self.iface.netns {
                    cmd.args(["netns", "exec", ns]);
                } else {
                    cmd.args(["netns", "exec", "/proc/self/ns/net"]);
                }
                if self.pin && crate::switch::cores() >= 2 {
                    cmd.args(["taskset", "-c", "0"]);
                }
                cmd.arg("trafgen")
                    .args(["-o", &self.iface.name, "-P", "1", "-q", "-C", "-i"])
                    .arg(cfg);
                if pps > 0.0 {
                    cmd.args(["-b", &format!("{}pps", pps.round() as u64)]);
                }
                cmd.stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                // Its own process group: trafgen forks its senders, and
                // stopping must reach them all.
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
                let child = cmd
                    .spawn()
                    .map_err(|e| BenchError(format!("starting trafgen: {e}")))?;
                Ok(Running::Trafgen(child))
            }
        }
    }
}

impl Drop for Gen {
    fn drop(&mut self) {
        if let Some(p) = &self.cfg {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Running {
    fn stop(self) {
        match self {
            Running::Thread { stop, handle } => {
                stop.store(true, Ordering::Relaxed);
                let _ = handle.join();
            }
            Running::Trafgen(mut c) => {
                // The group trafgen leads (see `Gen::start`).
                let group = i32::try_from(c.id())
                    .ok()
                    .map(|pid| nix::unistd::Pid::from_raw(-pid));
                let signal = |sig| {
                    if let Some(g) = group {
                        let _ = nix::sys::signal::kill(g, sig);
                    }
                };
                signal(nix::sys::signal::Signal::SIGINT);
                let deadline = Instant::now() + Duration::from_secs(3);
                while Instant::now() < deadline {
                    if let Ok(Some(_)) = c.try_wait() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                // Whatever is left of the group (forked senders).
                signal(nix::sys::signal::Signal::SIGKILL);
                let _ = c.wait();
            }
        }
    }
}

/// One load run.
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Load {
    /// Requested rate (0: flat out).
    requested_pps: f64,
    /// Rate the generator interface sent during the window.
    offered_pps: f64,
    /// Rate the sink received during the window.
    rx_pps: f64,
    /// Frames lost over the whole run / frames sent.
    loss: f64,
    /// Switch CPU during the window, % of one core.
    switch_cpu: Option<f64>,
    /// The switch's CPU time per frame the sink received in the window
    /// (any switch whose process the bench knows): what a frame cost it,
    /// idle polling included.
    switch_cpu_ns_per_pkt: Option<f64>,
    /// oxflow's own account (worker statistics, `ofp::experimenter`): the
    /// workers' busy time (rounds that received frames, from receive to
    /// transmit) per frame they received in the window, and that busy
    /// time as % of the time between the two reads of the statistics
    /// (their midpoints; summed over workers, so up to 100 % per worker).
    /// `None` for a switch that does not report
    /// it. Where the generator is the limit, this is what says how much
    /// more the switch could have taken.
    switch_busy_ns_per_pkt: Option<f64>,
    switch_busy_pct: Option<f64>,
    /// The pipeline's part of the busy time per frame (the rest is the
    /// ports' receive and transmit).
    switch_pipeline_ns_per_pkt: Option<f64>,
    /// Mean frames per busy round (the batch the switch got to work on).
    switch_batch: Option<f64>,
}

/// Asks the switch for its worker statistics totals (oxflow's
/// experimenter multipart); `None` if it does not answer them (another
/// switch refuses the experimenter id with OFPT_ERROR).
fn worker_totals(ctx: &mut Ctx) -> Option<WorkerStats> {
    use ofp::multipart::{Multipart, MultipartReplyBody as R, MultipartRequestBody as Q};
    let req = Message::MultipartRequest(Multipart::new(Q::Experimenter(WorkerStats::request())));
    let (m, _) = ctx.request(req, Duration::from_secs(2)).ok()?;
    match m.body {
        Message::MultipartReply(Multipart {
            body: R::Experimenter(e),
            ..
        }) => WorkerStats::parse_reply(&e)?
            .ok()
            .map(|v| ofp::experimenter::total(&v)),
        _ => None,
    }
}

/// How a load run reads the switch's worker statistics (`worker_totals`
/// through the control connection), if the switch reports them.
/// (`'f`: what the reading closure borrows, the `Ctx`.)
type Probe<'a, 'f> = Option<&'a mut (dyn FnMut() -> Option<WorkerStats> + 'f)>;

/// Options of the load runs.
#[derive(Debug, Clone, Copy)]
struct LoadOpts {
    /// Longest wait, after a workload's install, for the switch to go
    /// quiet before its traffic starts (`sampler::settle`; zero: none).
    settle: Duration,
    warmup: Duration,
    window: Duration,
    /// Max-rate runs; the median one is reported, with the spread.
    repeats: u32,
}

fn run_load<'f>(
    gen: &Gen,
    cap: &Iface,
    pid: Option<u32>,
    mut probe: Probe<'_, 'f>,
    pps: f64,
    o: LoadOpts,
) -> Result<Load> {
    let g0 = counters(&gen.iface)?;
    let c0 = counters(cap)?;
    let running = gen.start(pps)?;
    // Wait for the first frames (trafgen takes a while to compile its
    // configuration), then the warm-up.
    let started = Instant::now();
    let result = (|| -> Result<Load> {
        loop {
            let g = counters(&gen.iface)?;
            if g.tx_packets + g.tx_dropped > g0.tx_packets + g0.tx_dropped {
                break;
            }
            if started.elapsed() > Duration::from_secs(120) {
                bail!("the generator sent nothing within 120 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Warm-up: at least `o.warmup`, and at least one pass over every
        // frame (so a switch with a flow cache has seen each flow once
        // before the window; bounded at 60 s).
        let warm_from = Instant::now();
        std::thread::sleep(o.warmup);
        let pass = gen.frames.len() as u64;
        while warm_from.elapsed() < Duration::from_secs(60) {
            let g = counters(&gen.iface)?;
            if (g.tx_packets + g.tx_dropped).saturating_sub(g0.tx_packets + g0.tx_dropped) >= pass {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let (g1, c1) = (counters(&gen.iface)?, counters(cap)?);
        // Each read of the worker statistics is a round trip; the switch
        // took its figures at about the middle of it.
        let mut read = || {
            let sent = Instant::now();
            let stats = probe.as_mut().and_then(|p| p())?;
            Some((stats, sent + sent.elapsed() / 2))
        };
        let w1 = read();
        let t1 = Instant::now();
        let cpu = pid.and_then(CpuMark::now);
        std::thread::sleep(o.window);
        let (g2, c2) = (counters(&gen.iface)?, counters(cap)?);
        let secs = t1.elapsed().as_secs_f64();
        let switch_cpu = pid.and_then(|p| cpu.and_then(|m| m.percent_since(p)));
        let w2 = read();
        let rx = c2.rx_packets - c1.rx_packets;
        let per = |ns: f64, n: u64| (n > 0).then(|| ns / n as f64);
        // (busy ns, frames, pipeline ns, busy rounds, ns between the reads)
        let busy = w1.zip(w2).map(|((a, at), (b, bt))| {
            (
                b.busy_ns.saturating_sub(a.busy_ns) as f64,
                b.rx_packets.saturating_sub(a.rx_packets),
                b.pipeline_ns.saturating_sub(a.pipeline_ns) as f64,
                b.busy_rounds.saturating_sub(a.busy_rounds),
                bt.saturating_duration_since(at).as_nanos() as f64,
            )
        });
        Ok(Load {
            requested_pps: pps,
            offered_pps: ((g2.tx_packets + g2.tx_dropped) - (g1.tx_packets + g1.tx_dropped)) as f64
                / secs,
            rx_pps: rx as f64 / secs,
            loss: 0.0,
            switch_cpu,
            switch_cpu_ns_per_pkt: switch_cpu.and_then(|c| per(c / 100.0 * secs * 1e9, rx)),
            switch_busy_ns_per_pkt: busy.and_then(|(ns, n, ..)| per(ns, n)),
            switch_busy_pct: busy
                .and_then(|(ns, .., span)| (span > 0.0).then(|| ns / span * 100.0)),
            switch_pipeline_ns_per_pkt: busy.and_then(|(_, n, ns, ..)| per(ns, n)),
            switch_batch: busy.and_then(|(_, n, _, rounds, _)| per(n as f64, rounds)),
        })
    })();
    running.stop();
    let mut load = result?;
    // Let the queues drain, then count the loss over the whole run.
    std::thread::sleep(Duration::from_millis(300));
    let (g3, c3) = (counters(&gen.iface)?, counters(cap)?);
    let sent = (g3.tx_packets + g3.tx_dropped) - (g0.tx_packets + g0.tx_dropped);
    let rx = c3.rx_packets - c0.rx_packets;
    load.loss = if sent == 0 {
        1.0
    } else {
        sent.saturating_sub(rx) as f64 / sent as f64
    };
    Ok(load)
}

/// The max rate (flat out) and, with `search`, the no-loss rate by binary
/// search (`steps` probes, pass when loss <= `tolerance`).
#[allow(clippy::too_many_arguments)]
fn search_rates<'f>(
    gen: &Gen,
    cap: &Iface,
    pid: Option<u32>,
    mut probe: Probe<'_, 'f>,
    o: LoadOpts,
    steps: u32,
    tolerance: f64,
    search: bool,
) -> Result<Rates> {
    let mut runs = Vec::new();
    for _ in 0..o.repeats.max(1) {
        runs.push(run_load(gen, cap, pid, probe.as_deref_mut(), 0.0, o)?);
    }
    runs.sort_by(|a, b| a.rx_pps.total_cmp(&b.rx_pps));
    let max_runs: Vec<f64> = runs.iter().map(|l| l.rx_pps / 1e6).collect();
    let max = runs[runs.len() / 2];
    let mut probes = Vec::new();
    let mut no_loss = None;
    if search {
        if max.loss <= tolerance {
            no_loss = Some(max);
        } else {
            // Invariant: `lo` passed (or is 0), `hi` failed.
            let (mut lo, mut hi) = (0.0f64, max.offered_pps);
            // First probe just under what came through at full speed.
            let mut rate = (max.rx_pps * 0.98).clamp(hi / 64.0, hi);
            for _ in 0..steps {
                let l = run_load(gen, cap, pid, probe.as_deref_mut(), rate, o)?;
                probes.push(l);
                if l.loss <= tolerance {
                    lo = rate;
                    no_loss = Some(l);
                } else {
                    hi = rate;
                }
                rate = (lo + hi) / 2.0;
            }
        }
    }
    Ok(Rates {
        max,
        no_loss,
        probes,
        max_runs,
    })
}

/// What [`search_rates`] found.
#[derive(Debug, Clone)]
struct Rates {
    /// The median max-rate run.
    max: Load,
    no_loss: Option<Load>,
    probes: Vec<Load>,
    /// Received Mpps of every max-rate run, ascending.
    max_runs: Vec<f64>,
}

/// Max minus min of `xs` (0 for one value).
fn spread(xs: &[f64]) -> f64 {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if xs.is_empty() {
        0.0
    } else {
        hi - lo
    }
}

/// What `settle` calls quiet: under this share of a core (percent).
const SETTLE_PCT: f64 = 5.0;

/// One measured workload.
#[derive(Debug, Clone, serde::Serialize)]
struct Row {
    workload: String,
    kind: Kind,
    size: usize,
    traffic: Traffic,
    flows: usize,
    groups: usize,
    frames: usize,
    install_s: f64,
    /// Seconds the switch took to go quiet after the install, before
    /// the traffic (None: not waited for, no switch pid or `settle=0`).
    settle_s: Option<f64>,
    /// Whether it went quiet within `settle` (None: not waited for).
    settled: Option<bool>,
    max: Load,
    /// Received Mpps of every max-rate run (`repeats`), ascending.
    max_runs: Vec<f64>,
    /// Highest rate that passed, with its load run (None: none passed).
    no_loss: Option<Load>,
    probes: Vec<Load>,
    /// The maximum offered rate is below what the switch could take
    /// (it received everything at full speed).
    generator_limited: bool,
}

/// The `throughput` experiment.
#[derive(Debug, Default)]
pub struct Throughput {
    rows: Vec<Row>,
    failures: Vec<(String, String)>,
}

fn group_delete_all() -> Message {
    Message::GroupMod(ofp::group::GroupMod {
        command: ofp::group::command::DELETE,
        group_type: ofp::group::group_type::ALL,
        group_id: ofp::group::group_id::ALL,
        buckets: vec![],
    })
}

/// Installs `w` through the control connection; returns the seconds from
/// the first flow-mod byte to the barrier reply.
fn install(ctx: &mut Ctx, w: &Workload) -> Result<f64> {
    ctx.delete_all_flows()?;
    ctx.send(group_delete_all())?;
    ctx.barrier(Duration::from_secs(30))?;
    ctx.clear_events();
    let msgs: Vec<Message> = w.messages().collect();
    let n = msgs.len();
    let bulk = ctx.send_bulk(msgs)?;
    let b = ctx.barrier(Duration::from_secs(600))?;
    // Any error to one of the workload's messages fails the row.
    let xids: std::collections::HashSet<u32> = bulk.xids.iter().copied().collect();
    if let Some(Event::Control(m, _)) = ctx.take_matching(Instant::now(), |e| {
        matches!(e, Event::Control(m, _) if xids.contains(&m.xid) && matches!(m.body, Message::Error(_)))
    }) {
        bail!("the switch refused one of the {n} messages: {:?}", m.body);
    }
    ctx.clear_events();
    Ok(b.reply_ns.saturating_sub(bulk.start_ns) as f64 / 1e9)
}

impl Throughput {
    #[allow(clippy::too_many_arguments)]
    fn measure(
        &mut self,
        ctx: &mut Ctx,
        w: &Workload,
        engine: Engine,
        o: LoadOpts,
        steps: u32,
        tolerance: f64,
        search: bool,
    ) -> Result<Row> {
        let install_s = install(ctx, w)?;
        ctx.progress
            .println(&format!("{}: installed in {install_s:.3} s", w.name()));
        let pid = ctx.switch_pid();
        let settle = pid
            .filter(|_| !o.settle.is_zero())
            .map(|pid| sampler::settle(pid, o.settle, SETTLE_PCT));
        if let Some(s) = settle {
            ctx.progress.println(&format!(
                "{}: switch {} after {:.1} s",
                w.name(),
                if s.quiet {
                    "quiet"
                } else {
                    "still busy (measuring anyway)"
                },
                s.waited.as_secs_f64()
            ));
        }
        let gen_if = ctx.iface("gen")?.clone();
        let cap_if = ctx.iface("cap")?.clone();
        let pin: bool = ctx.param("pin")?;
        let gen = Gen::new(engine, gen_if, w, pin)?;
        let Rates {
            max,
            no_loss,
            probes,
            max_runs,
        } = {
            // Worker statistics only from a switch that answers them
            // (asked once: another switch answers OFPT_ERROR).
            let reports = worker_totals(ctx).is_some();
            let mut read = || worker_totals(ctx);
            let probe: Probe<'_, '_> = if reports { Some(&mut read) } else { None };
            search_rates(&gen, &cap_if, pid, probe, o, steps, tolerance, search)?
        };
        let generator_limited = max.loss <= tolerance.max(1e-4);
        ctx.progress.println(&format!(
            "{}: max {:.3} Mpps (offered {:.3}), no-loss {}",
            w.name(),
            max.rx_pps / 1e6,
            max.offered_pps / 1e6,
            no_loss
                .map(|l| format!("{:.3} Mpps", l.rx_pps / 1e6))
                .unwrap_or_else(|| "-".into())
        ));
        Ok(Row {
            workload: w.name(),
            kind: w.kind,
            size: w.size,
            traffic: w.traffic,
            flows: w.flow_mods.len(),
            groups: w.group_mods.len(),
            frames: w.frames.len(),
            install_s,
            settle_s: settle.map(|s| s.waited.as_secs_f64()),
            settled: settle.map(|s| s.quiet),
            max,
            max_runs,
            no_loss,
            probes,
            generator_limited,
        })
    }
}

impl Experiment for Throughput {
    fn name(&self) -> &'static str {
        "throughput"
    }

    fn description(&self) -> &'static str {
        "HARMLESS workloads (l2, l3, lb_acl, gateway) x 100..100K entries: max rate and RFC 2544 no-loss rate, 64-byte frames"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new(
                "workloads",
                "single,l2,l3,lb_acl,gateway",
                "workloads (single, l2, l3, lb_acl, gateway, acl_l3)",
            ),
            ParamSpec::new("sizes", "100,1000,10000,100000", "entries per workload"),
            ParamSpec::new("traffic", "spread", "traffic modes (spread, tse)"),
            ParamSpec::new("seconds", "2", "measurement window per load run"),
            ParamSpec::new("warmup", "1", "seconds of traffic before each window"),
            ParamSpec::new(
                "settle",
                "30",
                "after each install, wait at most this many seconds for the switch (switch_pid) to use under 5 % of a core in two consecutive half-second windows before the traffic starts, so the rate is its steady state's and not the flow replacement's (0: no wait)",
            ),
            ParamSpec::new(
                "repeats",
                "1",
                "max-rate runs (median reported, with the spread)",
            ),
            ParamSpec::new("search", "true", "binary-search the no-loss rate"),
            ParamSpec::new("search_steps", "6", "probes of the no-loss search"),
            ParamSpec::new(
                "loss_tolerance",
                "0",
                "fraction of frames a no-loss probe may lose (RFC 2544: 0)",
            ),
            ParamSpec::new("generator", "afpacket", "afpacket (built in) or trafgen"),
        ]
    }

    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let kinds: Vec<Kind> = ctx.params.list("workloads")?;
        let sizes: Vec<usize> = ctx.params.list("sizes")?;
        let modes: Vec<Traffic> = ctx.params.list("traffic")?;
        let o = LoadOpts {
            settle: Duration::from_secs_f64(ctx.param::<f64>("settle")?.clamp(0.0, 600.0)),
            warmup: Duration::from_secs_f64(ctx.param::<f64>("warmup")?.clamp(0.0, 60.0)),
            window: Duration::from_secs_f64(ctx.param::<f64>("seconds")?.clamp(0.05, 600.0)),
            repeats: ctx.param::<u32>("repeats")?.clamp(1, 100),
        };
        let search: bool = ctx.param("search")?;
        let steps: u32 = ctx.param("search_steps")?;
        let tolerance: f64 = ctx.param("loss_tolerance")?;
        let engine: Engine = ctx.param("generator")?;
        let ports = Ports {
            input: ctx.iface("gen")?.of_port,
            output: ctx.iface("cap")?.of_port,
        };
        for &kind in &kinds {
            let sizes = if kind == Kind::Single {
                &[1][..]
            } else {
                &sizes
            };
            for &size in sizes {
                for &mode in &modes {
                    let w = Workload::with_ports(kind, size, mode, ports);
                    match self.measure(ctx, &w, engine, o, steps, tolerance, search) {
                        Ok(r) => self.rows.push(r),
                        Err(e) => {
                            ctx.note(format!("{}: {e}", w.name()));
                            self.failures.push((w.name(), e.to_string()));
                            if e.to_string().contains("control connection") {
                                ctx.done();
                                return Ok(());
                            }
                        }
                    }
                }
            }
        }
        ctx.done();
        Ok(())
    }

    fn finish(&mut self, ctx: &mut Ctx) -> Result<Results> {
        let mut r = Results::new();
        let opt = |v: Option<f64>| {
            v.map(serde_json::Value::from)
                .unwrap_or(serde_json::Value::Null)
        };
        let rows = self
            .rows
            .iter()
            .map(|x| {
                vec![
                    x.workload.clone().into(),
                    x.kind.name().into(),
                    x.size.into(),
                    x.traffic.name().into(),
                    x.flows.into(),
                    x.install_s.into(),
                    opt(x.settle_s),
                    x.settled
                        .map(serde_json::Value::from)
                        .unwrap_or(serde_json::Value::Null),
                    (x.max.rx_pps / 1e6).into(),
                    spread(&x.max_runs).into(),
                    (x.max.offered_pps / 1e6).into(),
                    x.max.loss.into(),
                    opt(x.no_loss.map(|l| l.rx_pps / 1e6)),
                    opt(x.max.switch_cpu),
                    opt(x.max.switch_cpu_ns_per_pkt),
                    opt(x.max.switch_busy_ns_per_pkt),
                    opt(x.max.switch_busy_pct),
                    opt(x.max.switch_pipeline_ns_per_pkt),
                    opt(x.max.switch_batch),
                    x.generator_limited.into(),
                ]
            })
            .collect();
        r.table(
            "throughput",
            &[
                "workload",
                "kind",
                "size",
                "traffic",
                "flows",
                "install_s",
                "settle_s",
                "settled",
                "max_mpps",
                "max_mpps_spread",
                "offered_mpps",
                "loss_at_max",
                "no_loss_mpps",
                "switch_cpu_pct",
                "switch_cpu_ns_per_pkt",
                "switch_busy_ns_per_pkt",
                "switch_busy_pct",
                "switch_pipeline_ns_per_pkt",
                "switch_batch",
                "generator_limited",
            ],
            rows,
        );
        let probes = self
            .rows
            .iter()
            .flat_map(|x| {
                x.probes.iter().map(|p| {
                    vec![
                        x.workload.clone().into(),
                        (p.requested_pps / 1e6).into(),
                        (p.offered_pps / 1e6).into(),
                        (p.rx_pps / 1e6).into(),
                        p.loss.into(),
                    ]
                })
            })
            .collect();
        r.table(
            "no_loss_search",
            &[
                "workload",
                "requested_mpps",
                "offered_mpps",
                "rx_mpps",
                "loss",
            ],
            probes,
        );
        for x in &self.rows {
            r.scalar(
                &format!("{}_max_mpps", x.workload),
                x.max.rx_pps / 1e6,
                "Mpps",
            );
            if let Some(l) = x.no_loss {
                r.scalar(
                    &format!("{}_no_loss_mpps", x.workload),
                    l.rx_pps / 1e6,
                    "Mpps",
                );
            }
            r.scalar(&format!("{}_install_s", x.workload), x.install_s, "s");
        }
        let mut names = Vec::new();
        for kind in Kind::ALL {
            for mode in [Traffic::Spread, Traffic::Tse] {
                let pts: Vec<[f64; 2]> = self
                    .rows
                    .iter()
                    .filter(|x| x.kind == kind && x.traffic == mode)
                    .map(|x| [x.size as f64, x.max.rx_pps / 1e6])
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                let name = format!("{}_{}_max", kind.name(), mode.name());
                r.series(&name, "entries", "Mpps", pts);
                names.push(name);
            }
        }
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        r.plot(
            "throughput_max",
            &format!(
                "Max forwarding rate, 64-byte frames ({})",
                ctx.switch_kind()
            ),
            "entries",
            "Mpps",
            true,
            false,
            &names,
        );
        let limited = self.rows.iter().filter(|x| x.generator_limited).count();
        if limited > 0 {
            // A switch that reports its workers' busy time may have been
            // at its own limit as well (both cores saturated).
            let busy = self
                .rows
                .iter()
                .filter(|x| x.generator_limited)
                .filter(|x| x.max.switch_busy_pct.is_some_and(|b| b >= SATURATED_PCT))
                .count();
            r.note(if busy == 0 {
                "generator_limited rows: the switch forwarded everything the generator could send; the max rate is the generator's".to_string()
            } else {
                format!(
                    "generator_limited rows: the switch forwarded everything the generator could send; in {busy} of these {limited} rows its workers were also busy at least {SATURATED_PCT} % of the window (worker statistics): the switch was at its own limit too, and the rate is the lower of two about equal limits"
                )
            });
        }
        for (w, e) in &self.failures {
            r.note(format!("{w}: FAILED: {e}"));
        }
        Ok(r)
    }
}

/// The `throughput_raw` experiment: the same load runs with no OpenFlow at
/// all, for the I/O ceiling. Without a switch the generator is wired
/// straight to the sink (raw veth); with `--switch external` it measures
/// whatever forwards from `gen_iface` to `cap_iface` (the plain
/// `fwd_afpacket` / `fwd_xdp` forwarders; give `switch_pid` for its CPU).
#[derive(Debug, Default)]
pub struct ThroughputRaw {
    row: Option<Rates>,
}

impl Experiment for ThroughputRaw {
    fn name(&self) -> &'static str {
        "throughput_raw"
    }

    fn description(&self) -> &'static str {
        "I/O ceiling: max and no-loss rate of 64-byte frames over raw veth or through a plain forwarder (--switch external), no OpenFlow"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new(
                "frames",
                "1000",
                "distinct frames sent round-robin (l2 workload frames)",
            ),
            ParamSpec::new("seconds", "2", "measurement window per load run"),
            ParamSpec::new("warmup", "1", "seconds of traffic before each window"),
            ParamSpec::new(
                "repeats",
                "1",
                "max-rate runs (median reported, with the spread)",
            ),
            ParamSpec::new("search", "true", "binary-search the no-loss rate"),
            ParamSpec::new("search_steps", "6", "probes of the no-loss search"),
            ParamSpec::new("loss_tolerance", "0", "fraction a no-loss probe may lose"),
            ParamSpec::new("generator", "afpacket", "afpacket (built in) or trafgen"),
        ]
    }

    fn needs_switch(&self) -> bool {
        false
    }

    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let o = LoadOpts {
            // (No flows installed: nothing to wait for.)
            settle: Duration::ZERO,
            warmup: Duration::from_secs_f64(ctx.param::<f64>("warmup")?.clamp(0.0, 60.0)),
            window: Duration::from_secs_f64(ctx.param::<f64>("seconds")?.clamp(0.05, 600.0)),
            repeats: ctx.param::<u32>("repeats")?.clamp(1, 100),
        };
        let w = Workload::new(Kind::L2, ctx.param::<usize>("frames")?, Traffic::Spread);
        let gen = Gen::new(
            ctx.param("generator")?,
            ctx.iface("gen")?.clone(),
            &w,
            ctx.param("pin")?,
        )?;
        let cap = ctx.iface("cap")?.clone();
        let r = search_rates(
            &gen,
            &cap,
            ctx.switch_pid(),
            None,
            o,
            ctx.param("search_steps")?,
            ctx.param("loss_tolerance")?,
            ctx.param("search")?,
        )?;
        ctx.progress.println(&format!(
            "raw: max {:.3} Mpps (offered {:.3}), no-loss {}",
            r.max.rx_pps / 1e6,
            r.max.offered_pps / 1e6,
            r.no_loss
                .map(|l| format!("{:.3} Mpps", l.rx_pps / 1e6))
                .unwrap_or_else(|| "-".into())
        ));
        self.row = Some(r);
        ctx.done();
        Ok(())
    }

    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        let mut r = Results::new();
        let Some(Rates {
            max,
            no_loss,
            probes,
            max_runs,
        }) = &self.row
        else {
            bail!("no measurement");
        };
        r.scalar("max_mpps", max.rx_pps / 1e6, "Mpps");
        r.scalar("max_mpps_spread", spread(max_runs), "Mpps");
        r.scalar("offered_mpps", max.offered_pps / 1e6, "Mpps");
        r.scalar("loss_at_max", max.loss, "fraction");
        if let Some(l) = no_loss {
            r.scalar("no_loss_mpps", l.rx_pps / 1e6, "Mpps");
        }
        if let Some(c) = max.switch_cpu {
            r.scalar("switch_cpu_pct", c, "%");
        }
        if let Some(c) = max.switch_cpu_ns_per_pkt {
            r.scalar("switch_cpu_ns_per_pkt", c, "ns");
        }
        let rows = probes
            .iter()
            .map(|p| {
                vec![
                    (p.requested_pps / 1e6).into(),
                    (p.offered_pps / 1e6).into(),
                    (p.rx_pps / 1e6).into(),
                    p.loss.into(),
                ]
            })
            .collect();
        r.table(
            "no_loss_search",
            &["requested_mpps", "offered_mpps", "rx_mpps", "loss"],
            rows,
        );
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_dev() {
        let text = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0\nobh1c0: 6000000  100000    0    7    0     0          0         0      120       2    0    0    0     0       0          0\nobh1g0:     100       1    0    0    0     0          0         0 60000000 1000000    0   33    0     0       0          0\n";
        let c = parse_net_dev(text, "obh1c0").expect("found");
        assert_eq!((c.rx_packets, c.tx_packets, c.tx_dropped), (100_000, 2, 0));
        let g = parse_net_dev(text, "obh1g0").expect("found");
        assert_eq!(
            (g.rx_packets, g.tx_packets, g.tx_dropped),
            (1, 1_000_000, 33)
        );
        assert!(parse_net_dev(text, "obh1").is_none());
    }

    #[test]
    fn engine_names() {
        assert_eq!("trafgen".parse::<Engine>(), Ok(Engine::Trafgen));
        assert_eq!("afpacket".parse::<Engine>(), Ok(Engine::AfPacket));
        assert!("pktgen".parse::<Engine>().is_err());
    }
}
