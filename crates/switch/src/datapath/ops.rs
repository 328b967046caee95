//! Operations broadcast from the authoritative pipeline to the worker
//! replicas, and the acknowledgement counters the barrier waits on.
//!
//! Every modification is first validated and applied on the control side;
//! only then is the *same* operation, with the *same* timestamp, sent to
//! every worker. `Pipeline` is deterministic (entry order is priority then
//! installation order, no clocks inside), so each replica ends up with the
//! same entries at the same positions as the authoritative copy. That is
//! what lets [`Op::Collect`] report counters by position.

use pipeline::group::Counters;
use pipeline::{CompiledMatch, Nanos, PortInfo, TableCounters};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};

/// Identifies one flow entry across replicas: table, priority and match
/// (unique per table by flow-mod semantics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowId {
    pub table_id: u8,
    pub priority: u16,
    pub compiled: CompiledMatch,
}

/// What the datapath does with received packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The OpenFlow pipeline (connected, or fail-secure: misses go to a
    /// controller that is not there and are dropped).
    Pipeline,
    /// Fail-standalone without a controller: an L2 learning switch.
    Standalone,
}

/// One deterministic operation on a replica.
#[derive(Debug, Clone)]
pub enum Op {
    /// A flow-mod with what the authoritative copy built for it (an add or
    /// modify's match, instructions and program, which the replica's
    /// entries share: `pipeline::Prepared`). An add or modify comes
    /// without its own match and instructions (the authoritative copy took
    /// them: `Pipeline::flow_mod_taking`); read them from the `Prepared`.
    FlowMod(
        Arc<ofp::message::FlowMod>,
        Option<pipeline::Prepared>,
        Nanos,
    ),
    GroupMod(Arc<ofp::group::GroupMod>, Nanos),
    MeterMod(Arc<ofp::meter::MeterMod>, Nanos),
    /// A meter-mod already applied to the authoritative table, with that
    /// table: the replica removes the flows of deleted meters and adopts
    /// the table, so all replicas share the meters' buckets and counters
    /// (`pipeline::meter` module comment).
    Meters(Arc<ofp::meter::MeterMod>, Nanos, pipeline::MeterTable),
    /// New config/state of a port (port-mod, link change).
    Port(u32, PortInfo),
    /// Entries the control side expired (idle/hard timeouts).
    RemoveFlows(Arc<[FlowId]>),
    Config(pipeline::Config),
    Mode(Mode),
    /// Report counter deltas since the last collect and zero them.
    Collect(SyncSender<Deltas>),
    /// A committed bundle's operations, applied together between two
    /// batches (`super::bundle`).
    Bundle(Arc<Vec<Op>>),
    /// A port left the port table (deleted at run time).
    RemovePort(u32),
    /// The port set changed at run time (`super::ports_runtime`): adopt
    /// it; transmit handles follow and the receive sources of ports that
    /// are gone are dropped.
    Ports(super::SwitchPorts),
    /// Receive sources of a port added at run time (see [`RxHandoff`]).
    AddRx(Arc<RxHandoff>),
    /// Port `no`'s queues changed (`super::queues`): open one transmit
    /// handle per queue.
    Queues(u32, Arc<super::queues::PortQueues>),
    /// The FlexForward forwarding modes changed (`super::flexforward`):
    /// `None` when every frame goes to the tables.
    Flex(Option<Arc<super::flexforward::FlexState>>),
    /// A change of the module graph and its classes, validated on the
    /// control thread's copy (`super::graph_control`).
    Graph(Arc<graph::ChangeSet>),
    /// Asks a worker running a graph for its live view
    /// (`super::graph_view`); a worker without one does not answer.
    Describe(SyncSender<super::graph_run::WorkerView>),
}

/// The receive sources of a port added at run time, handed to the
/// workers through one broadcast [`Op::AddRx`]: each worker takes at most
/// one. A port whose reception is split has one source per worker; a
/// whole port has one, which the first worker to apply the operation
/// takes.
pub struct RxHandoff(Mutex<Vec<super::worker::RxSource>>);

impl RxHandoff {
    pub(crate) fn new(sources: Vec<super::worker::RxSource>) -> RxHandoff {
        RxHandoff(Mutex::new(sources))
    }

    pub(crate) fn take(&self) -> Option<super::worker::RxSource> {
        self.0.lock().ok().and_then(|mut v| v.pop())
    }
}

impl std::fmt::Debug for RxHandoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RxHandoff")
    }
}

/// An operation with its sequence number (1, 2, ...).
#[derive(Debug, Clone)]
pub struct Sequenced {
    pub seq: u64,
    pub op: Op,
}

/// Per-entry counter deltas of one table, by position in the store.
#[derive(Debug, Clone, Default)]
pub struct TableDeltas {
    pub counters: TableCounters,
    /// `(packets, bytes, last_hit)` per entry, store order.
    pub entries: Vec<(u64, u64, Nanos)>,
}

/// What one worker reports for [`Op::Collect`].
#[derive(Debug, Clone, Default)]
pub struct Deltas {
    pub tables: Vec<TableDeltas>,
    /// Group id, group counters, bucket counters.
    pub groups: Vec<(u32, Counters, Vec<Counters>)>,
}

/// Counters of one worker (read by the control side at any time).
#[derive(Debug, Default)]
pub struct WorkerCounters {
    /// Last operation sequence number applied.
    pub acked: AtomicU64,
    pub rx_packets: AtomicU64,
    pub packet_ins: AtomicU64,
    /// Packet-ins dropped because the control side queue was full.
    pub packet_in_drops: AtomicU64,
    /// Rounds of the worker loop (tests check that an idle worker stops
    /// looping).
    pub loops: AtomicU64,
    /// Times the worker blocked waiting for work.
    pub sleeps: AtomicU64,
    /// Rounds that received at least one frame, and the monotonic time
    /// they took from the first receive to the end of their transmit: the
    /// time spent forwarding, apart from idle polling (reported by the
    /// worker statistics experimenter multipart, `ofp::experimenter`).
    pub busy_rounds: AtomicU64,
    pub busy_ns: AtomicU64,
    /// The part of `busy_ns` spent in the pipeline (the rest is the ports'
    /// receive and transmit).
    pub pipeline_ns: AtomicU64,
    /// Sequence number of the last operation sent to the worker (set by
    /// the control side before it checks `asleep`).
    pub sent: AtomicU64,
    /// The worker is about to block or blocked: an operation sent now must
    /// wake it. The control side wakes only such a worker, so a burst of
    /// flow-mods to a busy worker costs no system call per operation. Both
    /// sides write their flag before reading the other's (sequentially
    /// consistent), so one of them always sees the other: no lost wake-up.
    pub asleep: std::sync::atomic::AtomicBool,
}

impl WorkerCounters {
    pub fn get(v: &AtomicU64) -> u64 {
        v.load(Ordering::Acquire)
    }
}
