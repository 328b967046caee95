//! One worker thread: the module graph it runs and the operations it
//! applies between the graph's runs.
//!
//! Loop: apply pending operations (and publish the last applied sequence
//! number for the barrier); then one worker round of the graph
//! (`super::graph_run`): each task the graph's scheduler picks runs once
//! (a port's or trunk's input receives a batch, which goes through the
//! `openflow` module holding the worker's pipeline replica, or the
//! learning switch in standalone mode, to the `tx` module that transmits
//! it). Without a configured graph the worker runs the default graph,
//! `port_inc` / `trunk_inc` per source it receives from -> `openflow` ->
//! `tx` (docs/graph.md). Operations reach the pipeline replica in the
//! graph's `openflow` module, swapped out for them.
//!
//! # Idle behaviour ([`PollMode`])
//!
//! In the default [`PollMode::Adaptive`] mode, once nothing was received
//! for `spin` (busy polling with `yield_now` meanwhile, which keeps the
//! latency of a burst's next packet low), the worker blocks in
//! [`ports::Poller::wait`] (`poll(2)`) on its receive ports' descriptors plus its
//! [`ports::Waker`]. The control side wakes it after sending an operation
//! if it is asleep (`WorkerCounters::asleep`; a busy worker is not woken
//! per operation) and on shutdown, so operations and barriers never wait
//! for a timeout,
//! and a frame wakes it through its port's descriptor: an idle switch uses
//! no CPU and the first packet after an idle period is not delayed by a
//! sleep quantum. The wait has a long safety timeout ([`IDLE_WAIT`]) only
//! as a guard against a backend whose descriptor misbehaves.
//! [`PollMode::Busy`] never blocks (lowest latency, one core per worker).
//! If the poller cannot be created (descriptor limits) the worker falls
//! back to `park_timeout` sleeps of at most [`MAX_IDLE_SLEEP`].
//!
//! What a sleep costs in latency is the wake-up of a blocked thread on
//! another CPU, which the switch cannot make cheaper: measured on the
//! 2-vCPU KVM (Firecracker) guest the benches run on, a thread blocked in
//! `epoll_wait`/`poll` on core 1, woken by an `eventfd` write from core 0
//! every 10 ms, runs 34 µs later (median; 24 µs p10, 54 µs p90), 17 µs at
//! a 1 ms interval, 12 µs at 100 µs, against 2 µs for a spinning thread
//! (`scripts/wake_latency.c`).
//! The guest has no cpuidle driver (no `cpuidle-haltpoll`), so an idle
//! vCPU executes `HLT` and is woken by an IPI through the host. A ping
//! every 10 ms therefore finds the worker asleep and pays one such
//! wake-up per request (the reply arrives while the worker still spins),
//! plus the ping process's own wake-up on the other core: ~0.12 ms RTT
//! against ~0.02-0.07 ms with [`PollMode::Busy`]. Spinning through a
//! 10 ms gap would cost a whole core at 100 packets/s, so the default
//! keeps the short spin.
//!
//! # Receive
//!
//! With several workers, each port whose backend can split reception
//! ([`ports::Port::rx_queues`]: a PACKET_FANOUT hash group, XDP queues)
//! gives every worker its own [`ports::PortRx`] handle, so the workers
//! share each port's traffic by flow hash (RSS-like; a flow stays on one
//! worker and keeps its order) without a lock. A port that cannot split is
//! dealt whole to one worker and read through its mutex ([`RxSource`]);
//! the default graph has an input module for each source the worker was
//! dealt.
//!
//! # Transmit
//!
//! The graph's `tx` module owns a [`super::tx_ports::TxPorts`]: one
//! transmit handle per port from [`ports::Port::tx_clone`], used without
//! any lock (every backend of the `ports` crate has clones; one without
//! would be reached through the port's mutex). A port with queues adds one
//! handle per queue (`super::queues`): a frame's queue id picks the handle.
//!
//! # Busy time
//!
//! A round that receives at least one frame counts as busy: its time from
//! before the first task to the end of the last goes into
//! `WorkerCounters::busy_ns` (and the pipeline's part of it, timed around
//! each batch the `openflow` module processes, into `pipeline_ns`); a
//! round that finds nothing is idle polling and is not counted. The
//! worker statistics experimenter multipart (`ofp::experimenter`, `oxflow
//! ctl dump-worker-stats`) reports them, so a benchmark can tell a switch
//! whose core was saturated (busy near 100 % of the time) from one the
//! traffic generator held back, and what a frame cost.
//!
//! # No allocation per packet
//!
//! The forwarding loop allocates nothing once warm: packet buffers come
//! from the graph's per-worker pool and go back to it (`graph::Pool`); a
//! packet's last output leaves in its received buffer, other outputs are
//! copied into pool buffers; `tx` hands each port its frames in slices of
//! at most [`ports::BATCH`] gathered in an array on the stack; and the
//! pipeline's action sets and group buckets are allocation-free too. A
//! test with a counting global allocator runs [`Worker::round`] on real
//! veth ports and checks it. The standalone learning switch (and NORMAL,
//! which the pipeline hands over with its port table while it runs the
//! action: no copy of the frame is kept) learns and looks up in a
//! lock-free table shared by the workers ([`super::learning`]) and emits
//! its ports through a callback for the same reason. (Packet-ins, which
//! copy the frame for the control thread, are outside this promise.)
//!
//! A port descriptor that polls an error (an AF_PACKET socket after its
//! link went down) has the error read ([`ports::Port::take_error`]) so the
//! worker can block again.

use super::graph_run::GraphRun;
use super::ops::{Deltas, Op, Sequenced, TableDeltas, WorkerCounters};
pub(crate) use super::tx_ports::TxPorts;
use super::SwitchPorts;
use pipeline::{PacketInEvent, Pipeline};
use ports::{Poller, PortRx};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::Arc;
use std::time::Duration;

/// Longest sleep of an idle worker in the fallback without a poller.
pub const MAX_IDLE_SLEEP: Duration = Duration::from_millis(1);

/// Safety timeout of a blocked idle worker (module comment); wake-ups
/// normally come from port descriptors and the waker long before.
pub const IDLE_WAIT: Duration = Duration::from_secs(1);

/// How an idle worker waits for work (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollMode {
    /// Keep polling for `spin` after the last frame, then block in `poll`.
    Adaptive { spin: Duration },
    /// Never block (spin with `yield_now`).
    Busy,
}

/// How long an adaptive worker keeps polling after its last frame: a
/// burst's next frame usually follows within microseconds and is taken
/// without a wake-up, while at a low packet rate the worker sleeps between
/// frames instead of spinning. (200 µs was tried: it did not lower the ping
/// RTT, whose cost is the wake-up for the request, but kept a core busy at
/// 100 Mbit/s of 1500-byte frames, against 60 % for Open vSwitch.)
pub const ADAPTIVE_SPIN: Duration = Duration::from_micros(25);

impl Default for PollMode {
    fn default() -> Self {
        PollMode::Adaptive {
            spin: ADAPTIVE_SPIN,
        }
    }
}

/// A packet-in from a worker, with the whole frame; the control side
/// truncates and buffers.
#[derive(Debug, Clone)]
pub struct WorkerPacketIn {
    pub reason: u8,
    pub table_id: u8,
    pub cookie: u64,
    pub match_: ofp::oxm::Match,
    pub data: Vec<u8>,
    pub max_len: u16,
}

pub(crate) struct Worker {
    /// What operations are applied to: swapped with the replica in the
    /// graph's `openflow` module for them (`GraphRun::swap_pipeline`).
    pub pipeline: Pipeline,
    pub ports: SwitchPorts,
    pub ops: Receiver<Sequenced>,
    pub counters: Arc<WorkerCounters>,
    pub stop: Arc<AtomicBool>,
    pub poll_mode: PollMode,
    /// `None` if it could not be created (module comment: fallback).
    pub poller: Option<Poller>,
    /// The module graph this worker runs (`super::graph_run`).
    pub graph: Box<GraphRun>,
}

/// The workers' end of the packet-in queue to the control side. Sending
/// wakes the thread that drains the queue (the daemon's pump, once it has
/// registered in `waker`), so a packet-in does not wait for the pump's
/// periodic round; waking a thread that is already awake costs one atomic
/// operation.
#[derive(Clone)]
pub struct PacketInSender {
    pub tx: SyncSender<WorkerPacketIn>,
    pub waker: Arc<std::sync::OnceLock<std::thread::Thread>>,
}

impl PacketInSender {
    /// Queues `pi` without blocking; false if the queue is full or closed.
    pub fn send(&self, pi: WorkerPacketIn) -> bool {
        let ok = self.tx.try_send(pi).is_ok();
        if let Some(t) = self.waker.get() {
            t.unpark();
        }
        ok
    }

    /// Hands a packet-in to the control side (counted in `counters`: sent,
    /// or dropped when the queue is full).
    pub fn packet_in(&self, ev: PacketInEvent<'_>, counters: &WorkerCounters) {
        counters.packet_ins.fetch_add(1, Ordering::Relaxed);
        let pi = WorkerPacketIn {
            reason: ev.reason,
            table_id: ev.table_id,
            cookie: ev.cookie,
            match_: ev.match_,
            data: ev.data.to_vec(),
            max_len: ev.max_len,
        };
        if !self.send(pi) {
            counters.packet_in_drops.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Where a worker receives a port's frames from (module comment).
pub(crate) enum RxSource {
    /// This worker's own share of a split port.
    Own { no: u32, rx: Box<dyn PortRx> },
    /// The whole port, read through its mutex.
    Shared { no: u32 },
    /// A trunk whose frames go to its logical ports (`super::trunk`).
    Trunk(super::trunk::TrunkRx),
}

impl RxSource {
    /// The port it receives for (a trunk: its first logical port).
    pub fn port_no(&self) -> u32 {
        match self {
            RxSource::Own { no, .. } | RxSource::Shared { no } => *no,
            RxSource::Trunk(t) => t.trunk.first_no,
        }
    }
}

impl Worker {
    /// Applies `first` and every other pending operation to the graph's
    /// pipeline replica (`super::graph_run`).
    fn apply_pending(&mut self, first: Sequenced) {
        self.graph.swap_pipeline(&mut self.pipeline);
        self.apply(first);
        while let Ok(s) = self.ops.try_recv() {
            self.apply(s);
        }
        self.graph.swap_pipeline(&mut self.pipeline);
    }

    fn apply(&mut self, s: Sequenced) {
        let p = &mut self.pipeline;
        // Operations were validated on the authoritative copy; a replica
        // cannot fail differently, so results are ignored here.
        match s.op {
            Op::FlowMod(fm, prepared, now) => drop(p.replay_flow_mod(&fm, prepared.as_ref(), now)),
            Op::GroupMod(gm, now) => drop(p.group_mod(&gm, now)),
            Op::MeterMod(mm, now) => drop(p.meter_mod(&mm, now)),
            Op::Meters(mm, now, table) => {
                drop(p.meter_mod(&mm, now));
                p.meters = table;
            }
            Op::Port(no, info) => p.ports.insert(no, info),
            Op::RemoveFlows(ids) => {
                for id in ids.iter() {
                    // Same order of removals as the authoritative copy's
                    // `remove_where`, so store positions stay in step.
                    if let Some(t) = p.table_mut(id.table_id) {
                        t.remove_strict(&id.compiled, id.priority);
                    }
                }
            }
            Op::Config(c) => p.config = c,
            Op::Mode(m) => self.graph.set_mode(m),
            Op::Collect(reply) => {
                let _ = reply.send(self.take_deltas());
            }
            Op::Bundle(ops) => {
                for op in ops.iter() {
                    self.apply(Sequenced {
                        seq: s.seq,
                        op: op.clone(),
                    });
                }
            }
            Op::RemovePort(no) => drop(p.ports.remove(no)),
            Op::Ports(ports) => self.set_ports(ports),
            Op::AddRx(handoff) => {
                if let Some(src) = handoff.take() {
                    self.unregister();
                    self.graph.add_rx(src, &self.ports);
                    self.register();
                }
            }
            Op::Flex(state) => self.graph.set_flex(state),
            Op::Graph(set) => {
                self.unregister();
                self.graph.apply_set(&set);
                self.register();
            }
            Op::Describe(reply) => {
                let _ = reply.send(self.graph.view());
            }
            Op::Queues(no, queues) => self.graph.set_queues(no, &queues),
        }
        self.counters.acked.store(s.seq, Ordering::Release);
    }

    /// Adopts a new port set (ops: `Op::Ports`): the graph's transmit
    /// handles follow, and the receive handles of ports that are gone are
    /// dropped.
    fn set_ports(&mut self, ports: SwitchPorts) {
        self.unregister();
        self.graph.set_ports(&ports);
        self.ports = ports;
        self.register();
    }

    /// The receive descriptors of the graph's environment (token: index
    /// into `GraphRun::fds`).
    fn rx_fds(&self) -> Vec<Option<std::os::fd::RawFd>> {
        self.graph.fds.iter().map(|f| f.1).collect()
    }

    /// Unregisters every receive descriptor (before the sources change).
    fn unregister(&mut self) {
        let fds = self.rx_fds();
        if let Some(poller) = &mut self.poller {
            for fd in fds.into_iter().flatten() {
                let _ = poller.remove(fd);
            }
        }
    }

    /// Counter deltas since the last collect; zeroes the replica's counters.
    fn take_deltas(&mut self) -> Deltas {
        let n = self.pipeline.n_tables();
        let mut d = Deltas::default();
        for id in 0..n {
            let Some(t) = self.pipeline.table_mut(id as u8) else {
                continue;
            };
            let mut td = TableDeltas {
                counters: std::mem::take(&mut t.counters),
                entries: Vec::with_capacity(t.len()),
            };
            let len = t.len();
            for i in 0..len {
                if let Some(e) = t.hot_mut(i) {
                    td.entries.push((
                        std::mem::take(&mut e.packet_count),
                        std::mem::take(&mut e.byte_count),
                        e.last_hit,
                    ));
                }
            }
            d.tables.push(td);
        }
        let ids: Vec<u32> = self.pipeline.groups.iter().map(|g| g.id).collect();
        for id in ids {
            if let Some(g) = self.pipeline.groups.get_mut(id) {
                let c = std::mem::take(&mut g.counters);
                let b = g.bucket_counters.iter_mut().map(std::mem::take).collect();
                d.groups.push((id, c, b));
            }
        }
        d
    }

    /// Registers the receive descriptors (token: index into
    /// `GraphRun::fds`).
    fn register(&mut self) {
        if self.poller.is_none() {
            return;
        }
        let fds = self.rx_fds();
        let Some(poller) = &mut self.poller else {
            return;
        };
        for (i, fd) in fds.into_iter().enumerate() {
            match fd {
                Some(fd) if poller.add(fd, i as u64).is_ok() => {}
                // A port we cannot wait on: never block (busy polling
                // still serves it).
                _ => self.poll_mode = PollMode::Busy,
            }
        }
    }

    /// Waits for work after an empty round, `idle_for` after the last
    /// frame (module comment); true if it blocked (or slept).
    fn idle(&mut self, idle_for: Duration) -> bool {
        match (self.poll_mode, &mut self.poller) {
            (PollMode::Busy, _) => {
                std::thread::yield_now();
                false
            }
            (PollMode::Adaptive { spin }, _) if idle_for < spin => {
                std::thread::yield_now();
                false
            }
            (PollMode::Adaptive { .. }, Some(p)) => {
                // Announce the sleep, then look for operations sent before
                // the announcement (see `WorkerCounters::asleep`).
                let c = &self.counters;
                c.asleep.store(true, Ordering::SeqCst);
                if c.sent.load(Ordering::SeqCst) > c.acked.load(Ordering::SeqCst) {
                    c.asleep.store(false, Ordering::SeqCst);
                    return true;
                }
                c.sleeps.fetch_add(1, Ordering::Relaxed);
                let r = p.wait(Some(IDLE_WAIT));
                c.asleep.store(false, Ordering::SeqCst);
                match r {
                    Ok(events) => {
                        // A pending socket error (link went down) keeps the
                        // descriptor ready until it is read: read it (the
                        // input modules' handles; errors are rare).
                        if events.iter().any(|e| e.error) {
                            self.graph.take_errors();
                        }
                    }
                    Err(_) => std::thread::park_timeout(MAX_IDLE_SLEEP),
                }
                true
            }
            (PollMode::Adaptive { .. }, None) => {
                let c = &self.counters;
                c.asleep.store(true, Ordering::SeqCst);
                if c.sent.load(Ordering::SeqCst) <= c.acked.load(Ordering::SeqCst) {
                    c.sleeps.fetch_add(1, Ordering::Relaxed);
                    std::thread::park_timeout(MAX_IDLE_SLEEP);
                }
                c.asleep.store(false, Ordering::SeqCst);
                true
            }
        }
    }

    /// One round of the loop: pending operations, then one worker
    /// round of the graph (module comment). Returns the number of frames
    /// received.
    pub fn round(&mut self) -> usize {
        self.counters.loops.fetch_add(1, Ordering::Relaxed);
        if let Ok(s) = self.ops.try_recv() {
            self.apply_pending(s);
        }
        self.graph.round(&self.counters)
    }

    pub fn run(mut self) {
        self.register();
        // When the current run of empty rounds began.
        let mut idle_since: Option<std::time::Instant> = None;
        while !self.stop.load(Ordering::Acquire) {
            if self.round() > 0 {
                idle_since = None;
            } else {
                let since = *idle_since.get_or_insert_with(std::time::Instant::now);
                if self.idle(since.elapsed()) {
                    idle_since = None;
                }
            }
        }
    }
}
