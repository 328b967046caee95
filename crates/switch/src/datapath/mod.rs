//! The datapath side of the switch: worker threads with pipeline replicas,
//! and the control-side [`Datapath`] that owns the authoritative pipeline
//! (DESIGN.md "Threads").
//!
//! # Data structures
//!
//! - **Authoritative pipeline** ([`Datapath::pipeline`]): every flow-, group-,
//!   meter- and port-mod is validated and applied here first; errors go back
//!   to the controller from here.
//! - **Operations** ([`ops::Op`], wrapped in [`ops::Sequenced`] with a
//!   sequence number 1, 2, ...): the same deterministic change, with the same
//!   timestamp, sent to every worker on its own bounded `sync_channel`
//!   (single producer: the control thread; single consumer: the worker).
//!   Workers apply pending operations between batches and publish the last
//!   applied sequence number in an `AtomicU64` ([`ops::WorkerCounters`]).
//!   An add or modify carries what the authoritative copy built for it
//!   (`pipeline::Prepared`: compiled match, match, instructions, program):
//!   the worker replays it without validating or compiling again, and its
//!   entries share those parts with the authoritative ones.
//! - **Barrier** ([`Datapath::barrier`]): waits until every live worker's
//!   acknowledged sequence number reaches the last one sent, so a barrier
//!   reply means the data plane already uses the new rules.
//! - **Counters**: the pipeline counts per flow entry, group and table in
//!   whichever replica handled the packet. We keep the totals in the
//!   authoritative copy and fold worker *deltas* in: [`ops::Op::Collect`]
//!   asks every worker for its counters (by entry position: replicas are
//!   identical stores) and zeroes them. Collect runs before flow / aggregate /
//!   table / group stats, before deletes (so flow-removed messages carry the
//!   totals) and before expiry, where it also merges the workers' `last_hit`
//!   stamps (max) for idle timeouts. Expiry is decided here and broadcast as
//!   [`ops::Op::RemoveFlows`]. Port counters come from the ports themselves.
//! - **Ports** ([`SwitchPort`]): a set given at start (changed at run time
//!   by [`ports_runtime`]), each behind a
//!   `Mutex` for its receive side (which belongs to exactly one worker;
//!   ports are dealt round robin) and for the control thread's occasional
//!   reads (stats, link). Transmission does not take it: every worker and
//!   the control thread own a [`worker::TxPorts`] with one lock-free
//!   transmit clone per port ([`ports::Port::tx_clone`]).
//! - **Wake-ups**: each worker blocks in `poll(2)` when idle
//!   ([`worker::PollMode`]); the control side holds its [`ports::Waker`]
//!   and wakes it after every operation.
//! - **Packet-ins**: workers send the whole frame on one bounded channel to
//!   the control side (drop and count when full); the control side applies
//!   `max_len` and the [`buffers::BufferPool`].
//! - **Switch config** (OFPT_SET_CONFIG): `miss_send_len` is, per OpenFlow
//!   1.3.5 §7.3.2, the length of packet-ins the pipeline sends "when not
//!   using an output action to the OFPP_CONTROLLER logical port": here the
//!   INVALID_TTL packet-ins (0 sends no bytes, OFPCML_NO_BUFFER the whole
//!   frame unbuffered). A table-miss *entry* sends its packet-ins (reason
//!   NO_MATCH) with its output action, so that action's `max_len` applies,
//!   as in Open vSwitch (which uses miss_send_len only for the implicit
//!   OpenFlow 1.0-1.2 miss behaviour, not for table-miss flows); this keeps
//!   a controller that asks for OFPCML_NO_BUFFER in its table-miss entry
//!   (os-ken's learning switch does, after setting miss_send_len 128)
//!   receiving whole frames. Fragment handling: FRAG_NORMAL and FRAG_DROP
//!   (`pipeline::Config::frag_drop`, applied in the workers' replicas);
//!   FRAG_REASM is refused with SWITCH_CONFIG_FAILED/BAD_FLAGS.
//! - **Meters** are not replicated: the authoritative pipeline's meter
//!   table is handed to every worker ([`ops::Op::Meters`]) and its token
//!   buckets and counters are shared atomics, so a meter's rate limits the
//!   switch as a whole and meter stats are read directly.
//! - **Standalone** ([`ops::Mode::Standalone`]): workers bypass the pipeline
//!   and run the learning switch ([`learning`], also OFPP_NORMAL's): one
//!   [`LearningTable`] made here and handed to every worker, a lock-free
//!   data-plane state table (graph's `StateTable`) that packets write, so an
//!   address learned on one worker serves the next frame on any other, with
//!   no lock and no allocation per frame. NORMAL is forwarded while the
//!   pipeline runs the action (`pipeline::Output::normal` hands over the port
//!   table), without a copy of the frame. The control thread forgets a
//!   port's addresses when its link goes down or it is removed.
//!   Fail-secure is simply [`ops::Mode::Pipeline`] without a controller:
//!   flows stay, misses are dropped by the channel.
//! - **Bundles** ([`bundle`]): per-connection bundles; a commit applies
//!   its messages with the datapath *staging* (operations for the workers
//!   held back in `staging`), rolls back to a clone of the pipeline on a
//!   failure, and sends the held operations as one [`ops::Op::Bundle`].
//! - **Persistence** (`crate::persist`, `snapshot`): with a state
//!   directory, the state is written before barrier and commit replies
//!   when it changed, and at the latest a second after a change.
//! - **Run-time ports** ([`ports_runtime`]): ports are added, removed and
//!   re-attached by handing the workers a new port map and receive sources
//!   as operations; the packet path takes no new lock.
//! - **Queues** ([`queues`]): a port's queues are htb classes on its
//!   interface; each thread transmits a queue's frames on a socket whose
//!   priority selects the class, and counts them per queue.
//!
//! The daemon (`crate::daemon`) drains [`Datapath::take_events`] and calls
//! [`Datapath::tick`] / [`Datapath::set_mode`].

mod admin;
pub mod beba;
pub mod buffers;
pub mod bundle;
pub(crate) mod extensions;
pub mod features;
pub mod flexforward;
mod graph_control;
pub mod graph_openflow;
pub mod graph_run;
pub mod graph_trunk;
pub mod graph_tx;
mod graph_view;
pub mod learning;
pub mod ops;
pub mod ports_runtime;
pub mod queues;
mod requests;
mod snapshot;
mod start;
pub mod trunk;
pub mod trunk_start;
mod tx_ports;
mod tx_queue;
pub mod worker;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_graph;
#[cfg(test)]
mod tests_runtime;
#[cfg(test)]
mod tests_trunk;

use ops::{Deltas, FlowId, Mode, Op, Sequenced, WorkerCounters};
use pipeline::{Nanos, Pipeline, PortInfo};
use ports::Port;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use worker::{RxSource, TxPorts, Worker, WorkerPacketIn};

pub use worker::PollMode;

pub use buffers::BufferPool;
pub use learning::LearningTable;

/// Depth of each worker's operation queue.
pub const OP_QUEUE: usize = 4096;
/// Depth of the packet-in queue from the workers.
pub const PACKET_IN_QUEUE: usize = 1024;

/// The datapath's clock: real (monotonic) or a fake one tests advance.
#[derive(Debug, Clone)]
pub enum Clock {
    Real(Instant),
    Fake(Arc<AtomicU64>),
}

impl Clock {
    pub fn real() -> Clock {
        Clock::Real(Instant::now())
    }

    pub fn now(&self) -> Nanos {
        self.at(Instant::now())
    }

    /// `now` at the instant `i` a caller already read (the fake clock's
    /// own time for a fake one): saves a second read of the system clock.
    pub fn at(&self, i: Instant) -> Nanos {
        match self {
            Clock::Real(t) => nanos(i.saturating_duration_since(*t)),
            Clock::Fake(v) => v.load(Ordering::Acquire),
        }
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX` (584 years).
pub(crate) fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

/// One switch port.
pub struct SwitchPort {
    pub no: u32,
    pub name: String,
    pub hw_addr: [u8; 6],
    pub io: Mutex<Box<dyn Port>>,
    /// When the port was added (port stats duration).
    pub added_at: Nanos,
    /// Frames received here that the parser found malformed (truncated or
    /// lying headers) and the pipeline dropped; reported in rx_errors.
    pub rx_malformed: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for SwitchPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchPort")
            .field("no", &self.no)
            .field("name", &self.name)
            .finish()
    }
}

/// The port set, by number.
pub type SwitchPorts = Arc<BTreeMap<u32, Arc<SwitchPort>>>;

/// Settings of the datapath.
#[derive(Debug, Clone)]
pub struct DpConfig {
    pub datapath_id: u64,
    /// Worker threads (at least 1).
    pub n_workers: usize,
    pub desc: ofp::multipart::Desc,
    /// How idle workers wait (adaptive by default).
    pub poll: PollMode,
    /// How SELECT groups choose a bucket (`select_method`).
    pub select_method: pipeline::group::SelectMethod,
    /// A module graph the workers run ([`graph_run`]); `None`: the
    /// default graph, built from the ports and trunks.
    pub graph: Option<Arc<graph_run::GraphSpec>>,
    /// Flows each BEBA state table holds.
    pub state_capacity: usize,
    /// Tables whose lookup structure is a registered one
    /// (`crate::table_config`), plugged in before the replicas are made.
    pub table_lookups: Vec<crate::table_config::TableLookup>,
}

impl Default for DpConfig {
    fn default() -> Self {
        DpConfig {
            datapath_id: 1,
            n_workers: 1,
            poll: PollMode::default(),
            select_method: pipeline::group::SelectMethod::default(),
            graph: None,
            state_capacity: stateful::DEFAULT_CAPACITY,
            table_lookups: Vec::new(),
            desc: ofp::multipart::Desc {
                mfr_desc: "oxflow".into(),
                hw_desc: "user-space software switch".into(),
                sw_desc: env!("CARGO_PKG_VERSION").into(),
                serial_num: "none".into(),
                dp_desc: "oxflow".into(),
            },
        }
    }
}

/// Asynchronous messages the datapath produces for the controllers (the
/// channel applies roles and async filters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DpEvent {
    PacketIn(ofp::message::PacketIn),
    FlowRemoved(ofp::message::FlowRemoved),
    PortStatus(ofp::message::PortStatus),
    /// An asynchronous experimenter message (BEBA's STATE_CHANGED).
    Experimenter(ofp::message::Experimenter),
}

struct WorkerHandle {
    ops: SyncSender<Sequenced>,
    counters: Arc<WorkerCounters>,
    /// `None` if the worker has no poller (it then sleeps in park_timeout).
    waker: Option<Arc<ports::Waker>>,
    join: JoinHandle<()>,
}

impl WorkerHandle {
    fn wake(&self) {
        if let Some(w) = &self.waker {
            w.wake();
        }
        self.join.thread().unpark();
    }
}

/// The control side of the datapath (module comment).
pub struct Datapath {
    /// The authoritative pipeline.
    pub pipeline: Pipeline,
    pub ports: SwitchPorts,
    pub config: DpConfig,
    workers: Vec<WorkerHandle>,
    seq: u64,
    stop: Arc<AtomicBool>,
    clock: Clock,
    mode: Mode,
    learning: LearningTable,
    packet_ins: Receiver<WorkerPacketIn>,
    /// For packet-ins of packet-outs run on the control side.
    packet_in_tx: worker::PacketInSender,
    control_counters: WorkerCounters,
    pub buffers: BufferPool,
    /// OFPT_SET_CONFIG state.
    pub switch_config: ofp::message::SwitchConfig,
    /// Events produced on the control side, waiting for [`Datapath::take_events`].
    pending: Vec<DpEvent>,
    /// The control thread's transmit handles (packet-out).
    tx: TxPorts,
    /// Every connection's open bundles (`bundle` module).
    bundles: bundle::Bundles,
    /// While a bundle commits: the operations held back from the workers
    /// (`bundle` module comment); `None` otherwise.
    staging: Option<Vec<Op>>,
    /// Writes the state file (`crate::persist`); `None` without a state
    /// directory.
    persist: Option<crate::persist::Persister>,
    /// Run-time port and queue changes (`ports_runtime`).
    rt: ports_runtime::Runtime,
    /// FlexForward's forwarding modes (`flexforward`).
    flex: flexforward::FlexControl,
    /// Trunks whose VLANs are logical ports ([`trunk`]).
    trunks: Vec<Arc<trunk::Trunk>>,
    /// The connections that sent a BEBA message: their flow-mods are
    /// acknowledged with FLOW_NOTIFICATION (`beba` module).
    beba_conns: std::collections::HashSet<crate::channel::hub::ConnId>,
    /// The validation copy of the workers' graph ([`graph_control`]).
    graph_ctl: graph_control::GraphControl,
}

impl Datapath {
    pub fn now(&self) -> Nanos {
        self.clock.now()
    }

    /// Registers the thread that drains packet-ins and other events
    /// ([`Self::take_events`]): workers wake it on each packet-in. Only the
    /// first registration counts.
    pub fn set_event_thread(&self, t: std::thread::Thread) {
        let _ = self.packet_in_tx.waker.set(t);
    }

    pub fn n_workers(&self) -> usize {
        self.workers.len()
    }

    /// Every worker's counters as the worker statistics reply reports
    /// them (`ofp::experimenter::WorkerStats`), in worker order.
    pub fn worker_stats(&self) -> Vec<ofp::experimenter::WorkerStats> {
        self.workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let c = &w.counters;
                ofp::experimenter::WorkerStats {
                    worker: i as u32,
                    rx_packets: WorkerCounters::get(&c.rx_packets),
                    rounds: WorkerCounters::get(&c.loops),
                    busy_rounds: WorkerCounters::get(&c.busy_rounds),
                    busy_ns: WorkerCounters::get(&c.busy_ns),
                    pipeline_ns: WorkerCounters::get(&c.pipeline_ns),
                    sleeps: WorkerCounters::get(&c.sleeps),
                }
            })
            .collect()
    }

    /// Sends `op` to every worker (blocking while a queue is full) and wakes
    /// them.
    pub fn broadcast(&mut self, op: Op) {
        if let Some(held) = self.staging.as_mut() {
            held.push(op);
            return;
        }
        self.seq += 1;
        for w in &self.workers {
            // A worker that died has dropped its receiver; the barrier
            // skips it.
            let _ = w.ops.send(Sequenced {
                seq: self.seq,
                op: op.clone(),
            });
            w.counters.sent.store(self.seq, Ordering::SeqCst);
            if w.counters.asleep.load(Ordering::SeqCst) {
                w.wake();
            }
        }
    }

    /// Waits until every live worker applied every operation sent so far.
    pub fn barrier(&self) {
        let target = self.seq;
        for w in &self.workers {
            let mut spins = 0u32;
            while w.counters.acked.load(Ordering::Acquire) < target && !w.join.is_finished() {
                // `broadcast` woke it already; repeat now and then only as
                // a guard (each extra wake-up costs the worker a round).
                if spins % 256 == 255 {
                    w.wake();
                }
                spins += 1;
                if spins < 64 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }
    }

    /// Folds the workers' counter deltas into the authoritative pipeline.
    pub fn collect(&mut self) {
        // While a bundle commits, the workers' replicas lag behind the
        // authoritative copy, so their counters cannot be matched by
        // position; the commit collected before it started.
        if self.staging.is_some() {
            return;
        }
        let (tx, rx) = mpsc::sync_channel(self.workers.len().max(1));
        self.broadcast(Op::Collect(tx));
        let live = self
            .workers
            .iter()
            .filter(|w| !w.join.is_finished())
            .count();
        for _ in 0..live {
            // A worker that exits drops its sender; recv then fails once
            // all senders are gone.
            match rx.recv_timeout(Duration::from_secs(5)) {
                Ok(d) => self.fold(&d),
                Err(_) => break,
            }
        }
    }

    fn fold(&mut self, d: &Deltas) {
        for (id, td) in d.tables.iter().enumerate() {
            let Some(t) = self.pipeline.table_mut(id as u8) else {
                continue;
            };
            t.counters.lookup_count += td.counters.lookup_count;
            t.counters.matched_count += td.counters.matched_count;
            if t.len() != td.entries.len() {
                continue;
            }
            for (i, (pk, by, hit)) in td.entries.iter().enumerate() {
                if let Some(e) = t.hot_mut(i) {
                    e.packet_count += pk;
                    e.byte_count += by;
                    e.last_hit = e.last_hit.max(*hit);
                }
            }
        }
        for (id, c, b) in &d.groups {
            if let Some(g) = self.pipeline.groups.get_mut(*id) {
                g.counters.packet_count += c.packet_count;
                g.counters.byte_count += c.byte_count;
                for (gb, wb) in g.bucket_counters.iter_mut().zip(b) {
                    gb.packet_count += wb.packet_count;
                    gb.byte_count += wb.byte_count;
                }
            }
        }
    }

    /// Idle/hard timeouts: merges the workers' stamps, expires on the
    /// authoritative copy, broadcasts the removals and queues flow-removed
    /// messages.
    pub fn expire(&mut self) {
        // Without timed entries there is nothing to expire, and collecting
        // every entry's counters from the workers (O(entries)) would be
        // wasted, every tick, on a big table.
        if !self.pipeline.has_timeouts() {
            return;
        }
        let now = self.now();
        self.collect();
        let removed = self.pipeline.expire(now);
        if removed.is_empty() {
            return;
        }
        let ids: Vec<FlowId> = removed
            .iter()
            .map(|r| FlowId {
                table_id: r.table_id,
                priority: r.entry.cold.priority,
                compiled: r.entry.cold.compiled.clone(),
            })
            .collect();
        self.broadcast(Op::RemoveFlows(ids.into()));
        self.flow_removed(&removed, now);
        self.mark_dirty();
    }

    fn flow_removed(&mut self, removed: &[pipeline::RemovedFlow], now: Nanos) {
        for r in removed.iter().filter(|r| r.wants_flow_removed()) {
            self.pending.push(DpEvent::FlowRemoved(r.to_message(now)));
        }
    }

    /// Compares every port's link with the port table; changes are
    /// broadcast (fast-failover follows) and reported as port-status.
    /// Call it on [`ports::LinkMonitor`] events and periodically.
    pub fn poll_links(&mut self) {
        use ofp::port::state;
        self.reattach_ports();
        let ports = self.ports.clone();
        for (no, sp) in ports.iter() {
            let up = match sp.io.lock() {
                Ok(io) => io.link_up(),
                Err(_) => continue,
            };
            let Some(info) = self.pipeline.ports.get(*no).copied() else {
                continue;
            };
            let was_up = info.state & state::LINK_DOWN == 0;
            if up == was_up {
                continue;
            }
            let mut new = info;
            new.state &= !(state::LINK_DOWN | state::LIVE);
            new.state |= if up { state::LIVE } else { state::LINK_DOWN };
            self.pipeline.ports.insert(*no, new);
            self.broadcast(Op::Port(*no, new));
            if !up {
                self.learning.flush_port(*no);
            }
            if let Some(desc) = self.port_desc(*no) {
                self.pending
                    .push(DpEvent::PortStatus(ofp::message::PortStatus {
                        reason: ofp::message::port_reason::MODIFY,
                        desc,
                    }));
            }
        }
    }

    /// Periodic work: link changes and timeouts.
    pub fn tick(&mut self) {
        self.poll_links();
        self.expire();
        self.expire_bundles();
        self.sweep_states();
        self.save_if_due();
    }

    /// Switches between the pipeline and the standalone learning switch.
    pub fn set_mode(&mut self, mode: Mode) {
        if mode != self.mode {
            self.mode = mode;
            self.broadcast(Op::Mode(mode));
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Packet-ins (truncated and buffered), flow-removed, port-status and
    /// BEBA STATE_CHANGED messages produced since the last call.
    pub fn take_events(&mut self) -> Vec<DpEvent> {
        let now = self.now();
        while let Ok(pi) = self.packet_ins.try_recv() {
            let msg = self.make_packet_in(pi, now);
            self.pending.push(DpEvent::PacketIn(msg));
        }
        self.take_state_changes();
        std::mem::take(&mut self.pending)
    }

    /// Applies max_len and buffering to a packet-in.
    fn make_packet_in(&mut self, pi: WorkerPacketIn, now: Nanos) -> ofp::message::PacketIn {
        use ofp::message::{cml, NO_BUFFER};
        let total_len = pi.data.len().min(usize::from(u16::MAX)) as u16;
        let max_len = pi.max_len;
        let mut data = pi.data;
        let mut buffer_id = NO_BUFFER;
        if max_len != cml::NO_BUFFER && usize::from(max_len) < data.len() {
            let in_port = pi
                .match_
                .fields
                .iter()
                .find_map(|f| match f {
                    ofp::oxm::OxmField::InPort(p) => Some(*p),
                    _ => None,
                })
                .unwrap_or(ofp::port::port_no::CONTROLLER);
            if let Some(id) = self.buffers.store(
                buffers::Buffered {
                    in_port,
                    data: data.clone(),
                },
                now,
            ) {
                buffer_id = id;
                data.truncate(usize::from(max_len));
            }
        }
        ofp::message::PacketIn {
            buffer_id,
            total_len,
            reason: pi.reason,
            table_id: pi.table_id,
            cookie: pi.cookie,
            match_: pi.match_,
            data,
        }
    }

    /// Packet-ins dropped because the queue to the control side was full.
    pub fn packet_in_drops(&self) -> u64 {
        self.workers
            .iter()
            .map(|w| w.counters.packet_in_drops.load(Ordering::Relaxed))
            .sum::<u64>()
            + self
                .control_counters
                .packet_in_drops
                .load(Ordering::Relaxed)
    }

    /// Runs a frame through the authoritative pipeline on the control side
    /// (packet-out, buffered packet of a flow-mod), transmitting at once.
    fn run_on_control(
        &mut self,
        data: &[u8],
        in_port: u32,
        actions: Option<&[ofp::action::Action]>,
    ) {
        let now = self.now();
        let mut buf = packet::PacketBuf::from_slice(data);
        let mut queues = tx_queue::TxQueues::new();
        {
            let mut out = tx_queue::ControlOut {
                queues: &mut queues,
                events: &self.packet_in_tx,
                counters: &self.control_counters,
                learning: &self.learning,
                now,
            };
            match actions {
                Some(acts) => self
                    .pipeline
                    .packet_out(&mut buf, in_port, acts, now, &mut out),
                None => {
                    // A packet-out of a malformed frame is dropped like a
                    // received one; there is no ingress port to count it on.
                    let _ = self.pipeline.process(&mut buf, in_port, now, &mut out);
                }
            }
        }
        self.tx.flush(&mut queues);
    }

    /// `ofp_port` description of one port.
    pub fn port_desc(&self, no: u32) -> Option<ofp::port::Port> {
        let sp = self.ports.get(&no)?;
        let info = self.pipeline.ports.get(no)?;
        // A port with queues reports the speed their rates are relative to
        // (kbit/s); others report none.
        let mtu_speed = self
            .port_queues(no)
            .map_or(0, |q| u32::try_from(q.speed / 1000).unwrap_or(u32::MAX));
        Some(ofp::port::Port {
            port_no: no,
            hw_addr: sp.hw_addr,
            name: sp
                .name
                .chars()
                .take(ofp::port::MAX_PORT_NAME_LEN - 1)
                .collect(),
            config: info.config,
            state: info.state,
            curr: 0,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: mtu_speed,
            max_speed: mtu_speed,
        })
    }

    /// Stops the workers and waits for them.
    pub fn shutdown(&mut self) {
        self.save_if_dirty();
        self.stop.store(true, Ordering::Release);
        for w in self.workers.drain(..) {
            w.wake();
            let _ = w.join.join();
        }
        // Removes the queues' qdiscs from the interfaces.
        self.rt = ports_runtime::Runtime::default();
    }
}

impl Drop for Datapath {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for w in &self.workers {
            w.wake();
        }
    }
}

/// The controller channel's view of the datapath.
impl crate::channel::datapath::Datapath for Datapath {
    fn handle(
        &mut self,
        conn: &crate::channel::hub::ConnInfo,
        msg: ofp::OfpMessage,
        raw: &[u8],
    ) -> Vec<ofp::OfpMessage> {
        use ofp::Message as M;
        if let M::Experimenter(e) = &msg.body {
            if let Some(answer) = extensions::message_handler(e) {
                return answer(self, conn, msg.xid, e, raw);
            }
        }
        let modifies = matches!(
            msg.body,
            M::FlowMod(_) | M::GroupMod(_) | M::MeterMod(_) | M::PortMod(_) | M::SetConfig(_)
        );
        if matches!(msg.body, M::BarrierRequest) {
            // A barrier reply acknowledges a written state.
            self.save_if_dirty();
        }
        let notification = self.flow_notification(conn.id, msg.xid, &msg.body);
        let mut out = self.handle_message(msg, raw);
        if let Some(n) = notification {
            if !out.iter().any(|m| matches!(m.body, M::Error(_))) {
                out.push(n);
            }
        }
        if modifies {
            self.mark_dirty();
        }
        out
    }

    fn connection_closed(&mut self, conn: crate::channel::hub::ConnId) {
        self.bundles.connection_closed(conn);
        self.beba_conns.remove(&conn);
    }
}
