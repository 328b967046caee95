//! The experiment API: what a researcher implements ([`Experiment`]) and
//! what the framework hands it ([`Ctx`]).
//!
//! # How a run goes
//!
//! The runner builds the topology (a generator namespace and a capture
//! namespace joined by veth pairs to the switch under test, or to each other
//! when [`Experiment::needs_switch`] is false), starts the switch recipe
//! (`oxflow`, `ovs` or `external`), accepts the switch's OpenFlow connection
//! (HELLO, FEATURES, all flows deleted), then:
//!
//! 1. calls [`Experiment::start`] once;
//! 2. runs an event loop that calls [`Experiment::on_control`] for every
//!    OpenFlow message from the switch, [`Experiment::on_packet`] for every
//!    frame captured on an interface the experiment asked to capture
//!    ([`Ctx::capture`]), and [`Experiment::on_timer`] when a timer set with
//!    [`Ctx::timer_after`] / [`Ctx::timer_at`] fires; the loop ends when the
//!    experiment calls [`Ctx::done`] (or after the `max_seconds` guard);
//! 3. calls [`Experiment::finish`], which returns the [`Results`]; the
//!    runner writes `results.json`, one CSV per series/table, SVG plots and
//!    `index.html` into the output folder.
//!
//! Experiments that prefer straight-line code may do all their work inside
//! `start` with the blocking helpers ([`Ctx::barrier`], [`Ctx::request`],
//! [`Ctx::wait_event`], [`Ctx::send_at_rate`]) and call [`Ctx::done`] at the
//! end; events that arrive while a blocking helper waits are kept and
//! delivered to the callbacks afterwards (or dropped by
//! [`Ctx::clear_events`]). A high-rate phase that needs its own tools
//! (trafgen, iperf3, interface counters) uses [`Ctx::topology`] (namespace
//! and interface names, OpenFlow port numbers), [`Ctx::switch_pid`] and
//! [`crate::sampler`] directly.
//!
//! # Time
//!
//! Every timestamp is nanoseconds since the Unix epoch on CLOCK_REALTIME
//! ([`now_ns`]): kernel receive timestamps (SO_TIMESTAMPNS) of captured
//! frames, the read time of control messages and timer deadlines are all on
//! that one clock, so they can be subtracted from one another. A frame the
//! generator sends is also seen by the generator-side capture as a
//! [`Dir::Tx`] packet with the kernel's transmit-time stamp: the best
//! transmit timestamp a veth offers (see the `timestamp_floor` experiment
//! for the precision this gives). Each captured interface has its own
//! reader thread, so events of *different* interfaces are not delivered in
//! timestamp order (a probe's arrival may come before its transmit stamp):
//! pair them by content (e.g. [`crate::frames::find_probe`]) and by
//! `ts_ns`, never by delivery order.
//!
//! # Adding an experiment
//!
//! Write one module under `src/experiments/` with a type implementing
//! [`Experiment`], and add one line to the registry in
//! [`crate::experiments::all`]. Parameters are declared in
//! [`Experiment::params`] (name, default, help) and read with
//! [`Ctx::param`]; the command line (`--set KEY=VALUE`) and the TOML file
//! (`[params]`) can only set declared names, so a typo is an error.

use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ofp::message::Message;
use ofp::multipart::{MultipartAssembler, MultipartReply};
use ofp::OfpMessage;

use crate::bail;
use crate::capture::Capture;
use crate::control::ControlConn;
use crate::error::{BenchError, Result};
use crate::generator::{Generator, RateReport};
use crate::progress::Progress;
use crate::results::Results;
use crate::topology::{Iface, Topology};

/// One experiment. See the module documentation for the life cycle.
pub trait Experiment {
    /// Short name used on the command line (`oxflow bench run NAME`).
    fn name(&self) -> &'static str;
    /// One line shown by `oxflow bench list`.
    fn description(&self) -> &'static str;
    /// Declared parameters with defaults and help.
    fn params(&self) -> Vec<ParamSpec> {
        Vec::new()
    }
    /// False for experiments that measure the measuring setup itself
    /// (generator wired straight to capture, no switch, no control channel).
    fn needs_switch(&self) -> bool {
        true
    }
    /// Called once, after the switch connected and its flows were deleted.
    fn start(&mut self, ctx: &mut Ctx) -> Result<()>;
    /// An OpenFlow message from the switch, read at `ts_ns`. Echo requests
    /// are answered by the framework and not passed on.
    fn on_control(&mut self, _ctx: &mut Ctx, _msg: &OfpMessage, _ts_ns: u64) -> Result<()> {
        Ok(())
    }
    /// A frame captured on an interface given to [`Ctx::capture`].
    fn on_packet(&mut self, _ctx: &mut Ctx, _pkt: &Captured) -> Result<()> {
        Ok(())
    }
    /// Timer `id` (set with [`Ctx::timer_after`] / [`Ctx::timer_at`]) fired.
    fn on_timer(&mut self, _ctx: &mut Ctx, _id: u64) -> Result<()> {
        Ok(())
    }
    /// After the event loop: compute and return the results.
    fn finish(&mut self, ctx: &mut Ctx) -> Result<Results>;
}

/// A declared parameter: `name`, its `default` (as it would be written after
/// `--set name=`), and a one-line `help`.
#[derive(Debug, Clone)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

impl ParamSpec {
    pub const fn new(name: &'static str, default: &'static str, help: &'static str) -> Self {
        ParamSpec {
            name,
            default,
            help,
        }
    }
}

/// Direction of a captured frame relative to the capturing interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Dir {
    /// Received by the interface (sent to it by the switch or the peer).
    Rx,
    /// Sent out of the interface (our generator's own frames).
    Tx,
}

/// A captured data-plane frame.
#[derive(Debug, Clone)]
pub struct Captured {
    /// Interface name as in the [`Topology`] (e.g. `obh123g0`).
    pub iface: String,
    /// Role of that interface ("gen" or "cap").
    pub role: &'static str,
    pub dir: Dir,
    /// The frame as the kernel delivered it (an 802.1Q tag is stripped by
    /// the receive path; see `frames::find_probe` to locate the payload).
    pub data: Vec<u8>,
    /// Kernel timestamp (SO_TIMESTAMPNS), ns since the epoch.
    pub ts_ns: u64,
}

/// What the event loop delivers.
#[derive(Debug)]
pub enum Event {
    Control(OfpMessage, u64),
    /// The control connection closed or sent undecodable bytes.
    ControlLost(String),
    Packet(Captured),
}

/// Nanoseconds since the Unix epoch (CLOCK_REALTIME, as kernel packet
/// timestamps).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Parameter values of one run: every declared parameter has a value
/// (given or default), so [`Params::get`] only fails on a bad value. Its
/// errors do not name the experiment: the runner adds that to every error
/// of a run.
#[derive(Debug, Clone, Default)]
pub struct Params {
    /// name -> (value, where it came from: "default", "--set", "FILE").
    pub values: std::collections::BTreeMap<String, (String, String)>,
}

impl Params {
    /// The value of `name` parsed as `T`. Errors say which parameter, which
    /// value and where it was given.
    pub fn get<T: std::str::FromStr>(&self, name: &str) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        let (v, from) = self.values.get(name).ok_or_else(|| {
            BenchError(format!(
                "parameter {name} is not declared (a bug in the experiment)"
            ))
        })?;
        v.trim()
            .parse::<T>()
            .map_err(|e| BenchError(format!("parameter {name}={v} (from {from}): {e}")))
    }

    /// A comma-separated list parameter (`1,10,100`).
    pub fn list<T: std::str::FromStr>(&self, name: &str) -> Result<Vec<T>>
    where
        T::Err: std::fmt::Display,
    {
        let raw: String = self.get(name)?;
        raw.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                s.trim()
                    .parse::<T>()
                    .map_err(|e| BenchError(format!("parameter {name}: element {s:?}: {e}")))
            })
            .collect()
    }
}

/// A pending timer: fires at `at_ns` with `id`. Ordered earliest first in
/// the [`BinaryHeap`] by reversing the comparison.
#[derive(Debug, PartialEq, Eq)]
struct Timer {
    at_ns: u64,
    seq: u64,
    id: u64,
}

impl Ord for Timer {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at_ns, o.seq).cmp(&(self.at_ns, self.seq))
    }
}

impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// Timestamps of one barrier round trip.
#[derive(Debug, Clone, Copy)]
pub struct BarrierRtt {
    /// When the request was written to the socket.
    pub sent_ns: u64,
    /// When the reply was read.
    pub reply_ns: u64,
}

impl BarrierRtt {
    pub fn rtt_ns(&self) -> u64 {
        self.reply_ns.saturating_sub(self.sent_ns)
    }
}

/// Timing of a bulk send of OpenFlow messages.
#[derive(Debug, Clone)]
pub struct BulkSend {
    pub xids: Vec<u32>,
    /// Before the first byte was written.
    pub start_ns: u64,
    /// After the last byte was written.
    pub end_ns: u64,
}

/// What the framework gives an experiment. One per run.
pub struct Ctx {
    pub params: Params,
    pub(crate) topo: Topology,
    pub(crate) ctl: Option<ControlConn>,
    pub(crate) switch_pid: Option<u32>,
    /// "oxflow", "ovs" or "external".
    pub(crate) switch_kind: String,
    pub(crate) events_tx: Sender<Event>,
    pub(crate) events_rx: Receiver<Event>,
    /// Events read by a blocking helper, delivered before new ones.
    pub(crate) pending: VecDeque<Event>,
    timers: BinaryHeap<Timer>,
    timer_seq: u64,
    pub(crate) captures: HashMap<String, Capture>,
    pub(crate) gens: HashMap<String, Generator>,
    pub(crate) finished: bool,
    pub progress: Progress,
    /// Notes and warnings gathered during the run (shown in the report).
    pub(crate) notes: Vec<String>,
}

impl Ctx {
    pub(crate) fn new(
        params: Params,
        topo: Topology,
        ctl: Option<ControlConn>,
        switch_pid: Option<u32>,
        switch_kind: &str,
        events: (Sender<Event>, Receiver<Event>),
        progress: Progress,
    ) -> Ctx {
        Ctx {
            params,
            topo,
            ctl,
            switch_pid,
            switch_kind: switch_kind.to_string(),
            events_tx: events.0,
            events_rx: events.1,
            pending: VecDeque::new(),
            timers: BinaryHeap::new(),
            timer_seq: 0,
            captures: HashMap::new(),
            gens: HashMap::new(),
            finished: false,
            progress,
            notes: Vec::new(),
        }
    }

    // ----- parameters, topology, switch ---------------------------------

    /// Parameter `name` as `T` (see [`Params::get`]).
    pub fn param<T: std::str::FromStr>(&self, name: &str) -> Result<T>
    where
        T::Err: std::fmt::Display,
    {
        self.params.get(name)
    }

    /// The data-plane topology (interfaces, namespaces, OpenFlow ports).
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The interface with `role` ("gen" or "cap").
    pub fn iface(&self, role: &str) -> Result<&Iface> {
        self.topo.iface(role)
    }

    /// Pid of the switch process (None for an external switch without
    /// `switch_pid=`).
    pub fn switch_pid(&self) -> Option<u32> {
        self.switch_pid
    }

    /// A CPU-time mark of the switch process: `mark.percent_since(pid)`
    /// later gives its CPU use in between (None without a switch pid).
    pub fn cpu_mark(&self) -> Option<crate::sampler::CpuMark> {
        self.switch_pid.and_then(crate::sampler::CpuMark::now)
    }

    /// Sample the switch's CPU and memory every `interval` on a thread
    /// until `.stop()` (None without a switch pid).
    pub fn sample_switch(&self, interval: Duration) -> Option<crate::sampler::Sampler> {
        self.switch_pid
            .map(|p| crate::sampler::Sampler::start(p, interval))
    }

    /// Resident memory of the switch process in KiB.
    pub fn switch_rss_kib(&self) -> Option<u64> {
        self.switch_pid.and_then(crate::sampler::rss_kib)
    }

    /// "oxflow", "ovs" or "external".
    pub fn switch_kind(&self) -> &str {
        &self.switch_kind
    }

    /// Record a note for the report (e.g. "generator limit reached").
    pub fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        self.progress.println(&format!("note: {s}"));
        self.notes.push(s);
    }

    /// End the event loop; [`Experiment::finish`] follows.
    pub fn done(&mut self) {
        self.finished = true;
    }

    // ----- control channel ----------------------------------------------

    fn conn(&mut self) -> Result<&mut ControlConn> {
        self.ctl.as_mut().ok_or_else(|| {
            BenchError::new("this experiment runs without a switch: no control channel")
        })
    }

    /// Send one message; returns its xid.
    pub fn send(&mut self, body: Message) -> Result<u32> {
        self.conn()?.send(body)
    }

    /// Send many messages in as few writes as possible (flow-mods in bulk),
    /// with the times before the first and after the last byte.
    pub fn send_bulk(&mut self, bodies: Vec<Message>) -> Result<BulkSend> {
        self.conn()?.send_bulk(bodies)
    }

    /// Send `body` and wait (up to `timeout`) for the reply with its xid;
    /// multipart replies are reassembled into one message. OFPT_ERROR for
    /// that xid is an error. Other messages are kept for the callbacks.
    pub fn request(&mut self, body: Message, timeout: Duration) -> Result<(OfpMessage, u64)> {
        let xid = self.send(body)?;
        self.wait_xid(xid, timeout)
    }

    /// Wait for the reply to `xid` (see [`Ctx::request`]).
    pub fn wait_xid(&mut self, xid: u32, timeout: Duration) -> Result<(OfpMessage, u64)> {
        let deadline = Instant::now() + timeout;
        let mut asm: MultipartAssembler<MultipartReply> = MultipartAssembler::new(64 << 20);
        loop {
            if crate::interrupt::interrupted() {
                bail!("interrupted");
            }
            let Some(ev) = self.take_matching(deadline, |e| {
                matches!(e, Event::Control(m, _) if m.xid == xid)
                    || matches!(e, Event::ControlLost(_))
            }) else {
                bail!("no reply to xid {xid:#x} within {timeout:?}");
            };
            match ev {
                Event::Control(m, ts) => {
                    if let Message::Error(e) = &m.body {
                        bail!("switch answered xid {xid:#x} with OFPT_ERROR {e:?}");
                    }
                    if let Message::MultipartReply(r) = m.body {
                        match asm.push(xid, r) {
                            Ok(Some(done)) => {
                                return Ok((
                                    OfpMessage::new(xid, Message::MultipartReply(done)),
                                    ts,
                                ))
                            }
                            Ok(None) => continue,
                            Err(e) => bail!("multipart reply to xid {xid:#x}: {e}"),
                        }
                    }
                    return Ok((m, ts));
                }
                Event::ControlLost(why) => bail!("control connection lost: {why}"),
                Event::Packet(_) => unreachable!("filtered"),
            }
        }
    }

    /// A barrier round trip: request written at `sent_ns`, reply read at
    /// `reply_ns`.
    pub fn barrier(&mut self, timeout: Duration) -> Result<BarrierRtt> {
        let sent_ns = now_ns();
        let (_, reply_ns) = self.request(Message::BarrierRequest, timeout)?;
        Ok(BarrierRtt { sent_ns, reply_ns })
    }

    /// Echo round trip time in ns.
    pub fn echo(&mut self, timeout: Duration) -> Result<u64> {
        let sent = now_ns();
        let (_, ts) = self.request(
            Message::EchoRequest(ofp::message::Echo { data: vec![0; 8] }),
            timeout,
        )?;
        Ok(ts.saturating_sub(sent))
    }

    /// Delete every flow in every table and wait for the barrier.
    pub fn delete_all_flows(&mut self) -> Result<()> {
        let fm = crate::flows::delete_all();
        self.send(Message::FlowMod(fm))?;
        self.barrier(Duration::from_secs(10))?;
        Ok(())
    }

    // ----- data plane -----------------------------------------------------

    /// Start capturing on the interface with `role` ("gen" or "cap"):
    /// frames arrive as [`Experiment::on_packet`] / [`Ctx::wait_event`].
    pub fn capture(&mut self, role: &str) -> Result<()> {
        let ifc = self.topo.iface(role)?.clone();
        if self.captures.contains_key(&ifc.name) {
            return Ok(());
        }
        let c = Capture::start(&ifc, self.events_tx.clone())?;
        self.captures.insert(ifc.name.clone(), c);
        Ok(())
    }

    /// Stop capturing on the interface with `role`.
    pub fn stop_capture(&mut self, role: &str) -> Result<()> {
        let name = self.topo.iface(role)?.name.clone();
        self.captures.remove(&name);
        Ok(())
    }

    fn gen(&mut self, role: &str) -> Result<&mut Generator> {
        let ifc = self.topo.iface(role)?.clone();
        if !self.gens.contains_key(&ifc.name) {
            let g = Generator::open(&ifc)?;
            self.gens.insert(ifc.name.clone(), g);
        }
        Ok(self.gens.get_mut(&ifc.name).expect("inserted above"))
    }

    /// Send one frame out of the interface with `role`; returns the
    /// user-space time just before the send (the kernel's transmit stamp
    /// comes as a [`Dir::Tx`] capture when that interface is captured).
    pub fn send_frame(&mut self, role: &str, frame: &[u8]) -> Result<u64> {
        self.gen(role)?.send(frame)
    }

    /// Send frames back to back; returns (before first, after last).
    pub fn send_burst(&mut self, role: &str, frames: &[Vec<u8>]) -> Result<(u64, u64)> {
        self.gen(role)?.burst(frames)
    }

    /// Send `count` frames at `pps` frames per second (0 = as fast as
    /// possible), `make(i)` building frame `i`. Blocks until done; reports
    /// the rate achieved, so a generator that cannot keep up is visible.
    pub fn send_at_rate(
        &mut self,
        role: &str,
        pps: f64,
        count: u64,
        make: &mut dyn FnMut(u64) -> Vec<u8>,
    ) -> Result<RateReport> {
        self.gen(role)?.at_rate(pps, count, make)
    }

    // ----- time -------------------------------------------------------------

    /// Fire [`Experiment::on_timer`] with `id` after `d`.
    pub fn timer_after(&mut self, d: Duration, id: u64) {
        self.timer_at(now_ns() + d.as_nanos() as u64, id);
    }

    /// Fire [`Experiment::on_timer`] with `id` at `at_ns` (epoch ns).
    pub fn timer_at(&mut self, at_ns: u64, id: u64) {
        self.timer_seq += 1;
        self.timers.push(Timer {
            at_ns,
            seq: self.timer_seq,
            id,
        });
    }

    /// The next due timer id, if one is due now.
    pub(crate) fn due_timer(&mut self) -> Option<u64> {
        if self.timers.peek().is_some_and(|t| t.at_ns <= now_ns()) {
            return self.timers.pop().map(|t| t.id);
        }
        None
    }

    pub(crate) fn next_timer_ns(&self) -> Option<u64> {
        self.timers.peek().map(|t| t.at_ns)
    }

    // ----- events -------------------------------------------------------------

    /// The next event (kept ones first), waiting until `deadline`.
    pub fn wait_event(&mut self, deadline: Instant) -> Option<Event> {
        if let Some(e) = self.pending.pop_front() {
            return Some(e);
        }
        self.recv_until(deadline)
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        if crate::interrupt::interrupted() {
            self.finished = true;
            return None;
        }
        // Wake at least every 100 ms to notice an interrupt.
        let wait = deadline
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(100));
        match self.events_rx.recv_timeout(wait) {
            Ok(e) => Some(e),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The first event satisfying `want` before `deadline`; others are kept
    /// (in order) for the callbacks.
    pub fn take_matching(
        &mut self,
        deadline: Instant,
        want: impl Fn(&Event) -> bool,
    ) -> Option<Event> {
        if let Some(i) = self.pending.iter().position(&want) {
            return self.pending.remove(i);
        }
        loop {
            if Instant::now() >= deadline || crate::interrupt::interrupted() {
                return None;
            }
            let Some(e) = self.recv_until(deadline) else {
                continue;
            };
            if want(&e) {
                return Some(e);
            }
            self.pending.push_back(e);
        }
    }

    /// Drop all kept and queued events (e.g. captures of a warm-up phase).
    pub fn clear_events(&mut self) {
        self.pending.clear();
        while self.events_rx.try_recv().is_ok() {}
    }
}
