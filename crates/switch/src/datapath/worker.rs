//! One worker thread: a pipeline replica and the ports it receives from.
//!
//! Loop: apply pending operations (and publish the last applied sequence
//! number for the barrier); receive a batch from each owned port; run each
//! packet through the replica (or the learning switch in standalone mode),
//! collecting outputs in per-port transmit queues; transmit each queue as
//! one batch.
//!
//! With a configured module graph (`super::graph_run`, docs/graph.md) the
//! round's receive-forward-transmit part is instead one run of each task
//! the graph's scheduler picks; operations, barriers, counters and the idle
//! behaviour below stay the same (operations reach the pipeline replica in
//! the graph's `openflow` module, swapped out for them).
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
//! dealt whole to one worker and read through its mutex ([`RxSource`]).
//!
//! # Transmit
//!
//! Each worker owns a [`TxPorts`]: one transmit handle per port from
//! [`ports::Port::tx_clone`], used without any lock (every backend of the
//! `ports` crate has clones; one without would be reached through the
//! port's mutex). A port with queues adds one handle per queue
//! (`super::queues`): a frame's queue id picks the handle.
//!
//! # Busy time
//!
//! A round that receives at least one frame counts as busy: its time from
//! before the first receive to the end of its transmit goes into
//! `WorkerCounters::busy_ns` (and the pipeline's part of it, timed around
//! each batch's processing, into `pipeline_ns`); a round that finds
//! nothing is idle polling and is not counted. One extra clock read per
//! busy round and two per received batch. The worker statistics
//! experimenter multipart (`ofp::experimenter`, `oxflow ctl
//! dump-worker-stats`) reports them, so a benchmark can tell a switch
//! whose core was saturated (busy near 100 % of the time) from one the
//! traffic generator held back, and what a frame cost.
//!
//! # No allocation per packet
//!
//! The forwarding loop allocates nothing once warm: receive buffers are
//! allocated once per worker; outputs are copied into per-port
//! [`TxQueue`]s whose frame buffers keep their capacity from batch to batch;
//! a queue is handed to the port in slices of at most [`ports::BATCH`]
//! frames gathered in an array on the stack; and the pipeline's action sets
//! and group buckets are allocation-free too. A test with a counting global
//! allocator runs [`Worker::round`] on real veth ports and checks it.
//! The standalone learning switch (and NORMAL, which the pipeline hands
//! over with its port table while it runs the action: no copy of the frame
//! is kept) learns and looks up in a lock-free table shared by the workers
//! ([`super::learning`]) and emits its ports through a callback for the
//! same reason. (Packet-ins, which copy the frame for the control thread,
//! are outside this promise.)
//!
//! A port descriptor that polls an error (an AF_PACKET socket after its
//! link went down) has the error read ([`ports::Port::take_error`]) so the
//! worker can block again.

use super::ops::{Deltas, Mode, Op, Sequenced, TableDeltas, WorkerCounters};
pub(crate) use super::tx_ports::TxPorts;
pub(crate) use super::tx_queue::TxQueues;
use super::{Clock, LearningTable, SwitchPorts};
use packet::PacketBuf;
use pipeline::{Nanos, Output, PacketInEvent, Pipeline, PortTable};
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
    pub pipeline: Pipeline,
    /// What this worker receives from (module comment).
    pub rx: Vec<RxSource>,
    pub ports: SwitchPorts,
    pub ops: Receiver<Sequenced>,
    pub events: PacketInSender,
    pub counters: Arc<WorkerCounters>,
    pub stop: Arc<AtomicBool>,
    pub clock: Clock,
    pub mode: Mode,
    pub learning: LearningTable,
    pub tx: TxPorts,
    pub poll_mode: PollMode,
    /// `None` if it could not be created (module comment: fallback).
    pub poller: Option<Poller>,
    /// FlexForward's modes (`super::flexforward`); `None`: the tables only.
    pub flex: Option<Arc<super::flexforward::FlexState>>,
    /// What each receive source received, index = index into `rx`
    /// (`super::tc_view`); rebuilt with the sources.
    pub usage: Vec<Arc<super::tc_view::SourceUsage>>,
    /// A configured module graph this worker runs instead of the fixed
    /// sequence (`super::graph_run`); `None`: the fixed sequence.
    pub graph: Option<Box<super::graph_run::GraphRun>>,
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

/// Output of one batch: frames queued per port, packet-ins sent on.
pub(crate) struct BatchOut<'a> {
    pub queues: &'a mut TxQueues,
    pub events: &'a PacketInSender,
    pub counters: &'a WorkerCounters,
    pub learning: &'a LearningTable,
    /// The clock's time for this batch (the learning switch's stamps).
    pub now: Nanos,
}

impl Output for BatchOut<'_> {
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
        self.queues.queue(port, queue.unwrap_or(0)).push(data);
    }

    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.counters.packet_ins.fetch_add(1, Ordering::Relaxed);
        let pi = WorkerPacketIn {
            reason: ev.reason,
            table_id: ev.table_id,
            cookie: ev.cookie,
            match_: ev.match_,
            data: ev.data.to_vec(),
            max_len: ev.max_len,
        };
        if !self.events.send(pi) {
            self.counters
                .packet_in_drops
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// OFPP_NORMAL: the learning switch.
    fn normal(&mut self, in_port: u32, data: &[u8], ports: &PortTable) {
        self.learning_switch(in_port, data, ports);
    }
}

impl BatchOut<'_> {
    /// OFPP_NORMAL and standalone forwarding: the learning switch at
    /// `self.now`, honouring the ingress port's NO_RECV / PORT_DOWN.
    #[inline]
    pub fn learning_switch(&mut self, in_port: u32, data: &[u8], ports: &PortTable) {
        use ofp::port::config;
        if ports
            .get(in_port)
            .is_some_and(|p| p.config & (config::NO_RECV | config::PORT_DOWN) != 0)
        {
            return;
        }
        let queues = &mut *self.queues;
        self.learning.forward(in_port, data, ports, self.now, |p| {
            queues.queue(p, 0).push(data)
        });
    }
}

impl Worker {
    /// Applies `first` and every other pending operation; with a graph,
    /// to the graph's pipeline replica (`super::graph_run`).
    fn apply_pending(&mut self, first: Sequenced) {
        if let Some(g) = self.graph.as_mut() {
            g.swap_pipeline(&mut self.pipeline);
        }
        self.apply(first);
        while let Ok(s) = self.ops.try_recv() {
            self.apply(s);
        }
        if let Some(g) = self.graph.as_mut() {
            g.swap_pipeline(&mut self.pipeline);
        }
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
            Op::Mode(m) => {
                self.mode = m;
                if let Some(g) = self.graph.as_mut() {
                    g.set_mode(m);
                }
            }
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
                    match self.graph.as_mut() {
                        Some(g) => g.add_rx(src, &self.ports),
                        None => self.rx.push(src),
                    }
                    self.register();
                }
            }
            Op::Flex(state) => {
                if let Some(g) = self.graph.as_mut() {
                    g.set_flex(state.clone());
                }
                self.flex = state;
            }
            Op::Graph(set) => {
                if let Some(g) = self.graph.as_mut() {
                    g.apply_set(&set);
                }
            }
            Op::Describe(reply) => {
                if let Some(g) = self.graph.as_ref() {
                    let _ = reply.send(g.view());
                }
            }
            Op::Queues(no, queues) => {
                if let Err(e) = self.tx.set_queues(no, &queues) {
                    tracing::warn!(port = no, "queues not served by this worker: {e}");
                }
                if let Some(g) = self.graph.as_mut() {
                    g.set_queues(no, &queues);
                }
            }
        }
        self.counters.acked.store(s.seq, Ordering::Release);
    }

    /// Adopts a new port set (ops: `Op::Ports`): transmit handles follow,
    /// and the receive sources of ports that are gone are dropped.
    fn set_ports(&mut self, ports: SwitchPorts) {
        self.unregister();
        // Trunks are not in the port set; they stay for the switch's life.
        self.rx
            .retain(|src| matches!(src, RxSource::Trunk(_)) || ports.contains_key(&src.port_no()));
        self.tx.sync(&ports);
        if let Some(g) = self.graph.as_mut() {
            g.set_ports(&ports);
        }
        self.ports = ports;
        self.register();
    }

    /// The receive descriptors, by source (token: index into `rx`), then
    /// the graph's ports' (tokens after them).
    fn rx_fds(&self) -> Vec<Option<std::os::fd::RawFd>> {
        let graph = self.graph.iter().flat_map(|g| g.fds.iter().map(|f| f.1));
        self.rx
            .iter()
            .map(|src| match src {
                RxSource::Own { rx, .. } => rx.fd(),
                RxSource::Trunk(t) => t.fd(),
                RxSource::Shared { no } => self
                    .ports
                    .get(no)
                    .and_then(|p| p.io.lock().ok().and_then(|io| io.fd())),
            })
            .chain(graph)
            .collect()
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

    /// Registers the receive descriptors (token: index into `rx`), and
    /// publishes the sources with fresh usage counters.
    fn register(&mut self) {
        self.usage = super::tc_view::publish(&self.rx, &self.ports, &self.counters);
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

    /// Reads the pending error of receive source `i` (module comment).
    fn take_error(&self, i: usize) {
        match self.rx.get(i) {
            Some(RxSource::Own { rx, .. }) => drop(rx.take_error()),
            Some(RxSource::Trunk(t)) => t.take_error(),
            Some(RxSource::Shared { no }) => {
                if let Some(io) = self.ports.get(no).and_then(|p| p.io.lock().ok()) {
                    let _ = io.take_error();
                }
            }
            None => {}
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
                        // descriptor ready until it is read: read it.
                        let errs: smallvec::SmallVec<[usize; 8]> = events
                            .iter()
                            .filter(|e| e.error)
                            .filter_map(|e| usize::try_from(e.token).ok())
                            .collect();
                        for i in errs {
                            self.take_error(i);
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

    /// Receive buffers for this worker: `BATCH` of them, each big enough
    /// for the largest frame any of its ports delivers.
    pub fn rx_buffers(&self) -> Vec<PacketBuf> {
        let max = self
            .ports
            .values()
            .filter_map(|p| p.io.lock().ok().map(|io| io.max_frame_len()))
            .max()
            .unwrap_or(packet::buf::DEFAULT_CAPACITY);
        let buf = PacketBuf::with_capacity(packet::buf::DEFAULT_HEADROOM, max);
        vec![buf; ports::BATCH]
    }

    /// One round of the loop: pending operations, then one batch from each
    /// receive source through the pipeline into `queues`, then transmit.
    /// Returns the number of frames received.
    pub fn round(&mut self, bufs: &mut [PacketBuf], queues: &mut TxQueues) -> usize {
        self.counters.loops.fetch_add(1, Ordering::Relaxed);
        if let Ok(s) = self.ops.try_recv() {
            self.apply_pending(s);
        }
        if let Some(g) = self.graph.as_mut() {
            return g.round(&self.counters);
        }
        let mut got = 0;
        // The round's start: its `now`, and the start of its busy time
        // (`WorkerCounters::busy_ns`) if it receives anything.
        let start = std::time::Instant::now();
        let now = self.clock.at(start);
        for (i, src) in self.rx.iter_mut().enumerate() {
            let no = src.port_no();
            let n = match src {
                RxSource::Own { rx, .. } => rx.rx_batch(bufs).unwrap_or(0),
                RxSource::Shared { no } => match self.ports.get(no).map(|p| p.io.lock()) {
                    Some(Ok(mut io)) => io.rx_batch(bufs).unwrap_or(0),
                    _ => 0,
                },
                RxSource::Trunk(t) => t.rx_batch(bufs),
            };
            if n == 0 {
                continue;
            }
            got += n;
            if let Some(u) = self.usage.get(i) {
                u.add(n);
            }
            self.counters
                .rx_packets
                .fetch_add(n as u64, Ordering::Relaxed);
            let mut out = BatchOut {
                queues,
                events: &self.events,
                counters: &self.counters,
                learning: &self.learning,
                now,
            };
            let bufs = bufs.get_mut(..n).unwrap_or_default();
            // The pipeline's share of the busy time (`pipeline_ns`).
            let pipe = std::time::Instant::now();
            let (pipeline, ports, mode) = (&mut self.pipeline, &self.ports, self.mode);
            let flex = self.flex.as_deref();
            if let RxSource::Trunk(t) = src {
                // One batch per logical ingress port (`super::trunk`).
                let mut keys = [0u32; ports::BATCH];
                let mut runs = [(0u32, 0usize, 0usize); ports::BATCH];
                let r = super::trunk::demux(&t.trunk, bufs, &mut keys, &mut runs);
                for &(no, s, e) in runs.iter().take(r) {
                    if let Some(run) = bufs.get_mut(s..e) {
                        Self::forward(pipeline, ports, mode, flex, &mut out, run, no, now);
                    }
                }
            } else {
                Self::forward(pipeline, ports, mode, flex, &mut out, bufs, no, now);
            }
            self.counters
                .pipeline_ns
                .fetch_add(super::nanos(pipe.elapsed()), Ordering::Relaxed);
        }
        self.tx.flush(queues);
        if got > 0 {
            let c = &self.counters;
            c.busy_rounds.fetch_add(1, Ordering::Relaxed);
            c.busy_ns
                .fetch_add(super::nanos(start.elapsed()), Ordering::Relaxed);
        }
        got
    }

    /// Runs frames received on port `no` through the pipeline (or the
    /// learning switch in standalone mode).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn forward(
        pipeline: &mut Pipeline,
        ports: &SwitchPorts,
        mode: Mode,
        flex: Option<&super::flexforward::FlexState>,
        out: &mut BatchOut<'_>,
        bufs: &mut [PacketBuf],
        no: u32,
        now: Nanos,
    ) {
        match mode {
            Mode::Pipeline => {
                // The whole batch at once (the pipeline overlaps the
                // packets' table lookups); a malformed frame counted.
                let table = |p: &mut Pipeline, bufs: &mut [PacketBuf], out: &mut BatchOut| {
                    p.process_batch(bufs, no, now, out, |_, _, _, r| {
                        if r.is_err() {
                            if let Some(port) = ports.get(&no) {
                                port.rx_malformed.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    })
                };
                // FlexForward hook: a tableless mode forwards what it
                // can, the rest goes to the tables in order.
                match flex {
                    Some(f) => f.forward_batch(pipeline, bufs, no, out, table),
                    None => table(pipeline, bufs, out),
                }
            }
            Mode::Standalone => {
                for buf in bufs.iter() {
                    out.learning_switch(no, buf.data(), &pipeline.ports);
                }
            }
        }
    }

    pub fn run(mut self) {
        self.register();
        let mut bufs = self.rx_buffers();
        let mut queues = TxQueues::new();
        // When the current run of empty rounds began.
        let mut idle_since: Option<std::time::Instant> = None;
        while !self.stop.load(Ordering::Acquire) {
            if self.round(&mut bufs, &mut queues) > 0 {
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
