//! The module graph every worker runs (`super::worker`, docs/graph.md):
//! a configured one (`oxflow run --graph FILE`), else the default graph
//! ([`default_spec`]): an input module per receive source the worker was
//! dealt (`port_inc` per port, `trunk_inc` per trunk, named
//! [`input_name`]) -> `openflow` -> `tx`, scheduled round robin. A port
//! added at run time gets its `port_inc` in the default graph, a deleted
//! one loses it ([`GraphRun::add_rx`], [`GraphRun::set_ports`]).
//!
//! Each worker builds its own [`graph::Runtime`] from the configuration
//! text (the default graph's differs by worker only in its inputs), with
//! an environment ([`graph::Env`]) holding:
//!
//! - every switch port by interface name, with one receive handle for
//!   this worker (queue 0 of the port for `port_inc`): its own share of
//!   the port when the backend splits reception over the workers
//!   (PACKET_FANOUT, XDP queues), else, for the one worker the port was
//!   dealt to, the whole port read through its mutex ([`LockedPortRx`]),
//!   and for the others a handle that receives nothing ([`NoRx`]):
//!   a port that cannot split is read by one worker only, so its frames
//!   leave in the order they came whatever graph the workers run; and
//!   transmit handles for `port_out`;
//! - every trunk's receive handle for this worker, likewise its own share,
//!   the whole trunk, or nothing ([`TrunkSources`], for `trunk_inc`,
//!   `super::graph_trunk`);
//! - the worker's pipeline replica and what its outputs need
//!   ([`OpenFlowParts`], for the `openflow` module) and the port set
//!   ([`TxParts`], for the `tx` module);
//! - the queues and data-plane tables shared by the workers' graphs.
//!
//! The switch's registry ([`registry`]) is the graph crate's built-in
//! kinds plus `openflow`, `tx` and `trunk_inc`. The scheduler's clock is the
//! datapath's when real ([`DpClock`]), so a module's `Ctx::now` is the pipeline's
//! time. The worker, between runs, swaps its operations' target pipeline
//! with the one in the graph ([`GraphRun::swap_pipeline`]) and keeps the
//! `tx` modules' handles and the `openflow` module's mode and ports in
//! step with its operations.

use super::graph_openflow::{OpenFlow, OpenFlowParts};
use super::graph_trunk::TrunkSources;
use super::graph_tx::{Tx, TxParts};
use super::ops::Mode;
use super::trunk::{Trunk, TrunkRx};
use super::worker::RxSource;
use super::{SwitchPort, SwitchPorts};
use graph::{Env, Registry, Runtime};
use packet::PacketBuf;
use pipeline::Pipeline;
use ports::PortRx;
use std::os::fd::RawFd;
use std::sync::Arc;

/// A graph configuration: its text and the file it came from (named in
/// errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphSpec {
    pub text: String,
    pub file: String,
}

impl GraphSpec {
    /// Reads `path`.
    pub fn load(path: &std::path::Path) -> Result<GraphSpec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(GraphSpec {
            text,
            file: path.display().to_string(),
        })
    }
}

/// The name of the default graph's input module for the port or trunk
/// interface `name` (`:` would read as a gate).
pub fn input_name(name: &str) -> String {
    format!("in_{}", name.replace(':', "_"))
}

/// The `[[module]]` and `[[connect]]` tables of the default graph's input
/// for port (`kind = "port_inc"`, `arg = "port"`) or trunk (`trunk_inc`,
/// `trunk`) interface `iface`, feeding `openflow`.
pub fn input_toml(kind: &str, arg: &str, iface: &str) -> String {
    let name = input_name(iface);
    format!(
        "[[module]]\nname = {name:?}\nkind = {kind:?}\n{arg} = {iface:?}\n\
         [[connect]]\nfrom = {name:?}\nto = \"openflow\"\n"
    )
}

/// The default graph (docs/graph.md) of a worker receiving from `ports`
/// (interface names) and `trunks`: each one's input (`port_inc`,
/// `trunk_inc`; [`input_name`]) -> `openflow` -> `tx`, scheduled round
/// robin.
pub fn default_spec<'a>(
    ports: impl IntoIterator<Item = &'a str>,
    trunks: impl IntoIterator<Item = &'a str>,
) -> GraphSpec {
    let mut text = String::from(
        "[[module]]\nname = \"openflow\"\nkind = \"openflow\"\n\
         [[module]]\nname = \"tx\"\nkind = \"tx\"\n\
         [[connect]]\nfrom = \"openflow\"\nto = \"tx\"\n",
    );
    for p in ports {
        text.push_str(&input_toml("port_inc", "port", p));
    }
    for t in trunks {
        text.push_str(&input_toml("trunk_inc", "trunk", t));
    }
    GraphSpec {
        text,
        file: "(default graph)".into(),
    }
}

/// The change set adding the default graph's input module of port
/// `name` (a port added at run time), in the root's round robin.
pub fn add_input_set(name: &str) -> String {
    let module = input_name(name);
    format!(
        "{}[[attach]]\nclass = {module:?}\nparent = \"root\"\ntask = {module:?}\n",
        input_toml("port_inc", "port", name)
    )
}

/// The graph crate's module kinds plus the switch's own (module comment).
pub fn registry() -> Registry {
    let mut r = Registry::builtin();
    r.register("openflow", super::graph_openflow::new);
    r.register("tx", super::graph_tx::new);
    r.register("trunk_inc", super::graph_trunk::new);
    r
}

/// The scheduler's clock: the datapath's when it is real, so a module's
/// `Ctx::now` is the pipeline's time; a real one of its own when the
/// datapath's is fake (tests), since a frozen clock would leave a resting
/// task resting (`graph::scheduler`).
pub struct DpClock(pub super::Clock);

impl DpClock {
    pub fn of(clock: super::Clock) -> DpClock {
        match clock {
            super::Clock::Real(_) => DpClock(clock),
            super::Clock::Fake(_) => DpClock(super::Clock::real()),
        }
    }
}

impl graph::Clock for DpClock {
    fn now(&self) -> u64 {
        self.0.now()
    }
}

/// A whole port read through its mutex (module comment).
pub struct LockedPortRx(pub Arc<SwitchPort>);

impl PortRx for LockedPortRx {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> std::io::Result<usize> {
        match self.0.io.lock() {
            Ok(mut io) => io.rx_batch(bufs),
            Err(_) => Ok(0),
        }
    }

    fn fd(&self) -> Option<RawFd> {
        self.0.io.lock().ok().and_then(|io| io.fd())
    }

    fn take_error(&self) -> Option<std::io::Error> {
        self.0.io.lock().ok().and_then(|io| io.take_error())
    }
}

/// A receive handle that never receives and has no descriptor to wait
/// on: a port's or trunk's receive side in a worker it was not dealt to
/// (module comment), and in the control thread's validation copy.
pub(crate) struct NoRx;

impl PortRx for NoRx {
    fn rx_batch(&mut self, _: &mut [PacketBuf]) -> std::io::Result<usize> {
        Ok(0)
    }

    fn fd(&self) -> Option<RawFd> {
        None
    }
}

/// What one worker's graph looks like now (`super::graph_view`).
#[derive(Debug, Clone)]
pub struct WorkerView {
    pub worker: usize,
    pub modules: Vec<graph::graph::ModuleView>,
    /// The class tree (`worker` of each left 0 for the caller to set).
    pub classes: Vec<ofp::graph_desc::GraphClass>,
    pub idle_rounds: u64,
}

/// A receive descriptor of the environment: (port number, `None` for a
/// trunk; the descriptor, `None` for a handle without one).
pub(crate) type RxFd = (Option<u32>, Option<RawFd>);

/// One worker's graph, its environment and what the worker polls.
pub(crate) struct GraphRun {
    pub rt: Runtime<DpClock>,
    pub env: Env,
    pub reg: Registry,
    /// The receive descriptors of the ports and trunks in `env`, for the
    /// worker's poller (a handle without one keeps the worker from
    /// blocking).
    pub fds: Vec<RxFd>,
    /// Scheduling rounds per worker loop: the number of tasks (each may
    /// run once between two looks at the operations).
    rounds: usize,
    /// The default graph (no graph configured): a port added at run time
    /// gets its input module, a deleted one loses it ([`Self::add_rx`],
    /// [`Self::set_ports`]).
    pub default: bool,
}

/// Puts port `sp` with receive handle `rx` into `env`.
pub(crate) fn add_port_to(env: &mut Env, sp: &Arc<SwitchPort>, rx: Box<dyn PortRx>) {
    let p = sp.clone();
    let tx: graph::registry::TxFactory = Box::new(move || match p.io.lock() {
        Ok(io) => io.tx_clone(),
        Err(_) => Err(std::io::Error::other("port poisoned")),
    });
    env.add_port(&sp.name, sp.no, vec![rx], tx);
}

/// A worker's receive handle on `src`'s port.
fn rx_of(src: RxSource, ports: &SwitchPorts) -> Option<(Arc<SwitchPort>, Box<dyn PortRx>)> {
    match src {
        RxSource::Own { no, rx } => ports.get(&no).map(|sp| (sp.clone(), rx)),
        RxSource::Shared { no } => ports.get(&no).map(|sp| {
            (
                sp.clone(),
                Box::new(LockedPortRx(sp.clone())) as Box<dyn PortRx>,
            )
        }),
        RxSource::Trunk(_) => None,
    }
}

impl GraphRun {
    /// The environment of a worker whose own receive sources are `rx`
    /// (module comment: a port or trunk dealt to another worker receives
    /// nothing here). Returns it with the descriptors the worker waits on.
    pub fn env(
        rx: Vec<RxSource>,
        ports: &SwitchPorts,
        trunks: &[Arc<Trunk>],
        shared: &graph::Shared,
        parts: OpenFlowParts,
    ) -> (Env, Vec<RxFd>) {
        let mut env = Env::new(shared.clone());
        let mut fds = Vec::new();
        let mut own: Vec<u32> = Vec::new();
        let mut own_trunks = TrunkSources::default();
        for src in rx {
            if let RxSource::Trunk(t) = src {
                fds.push((None, t.fd()));
                own_trunks.0.push(t);
            } else if let Some((sp, h)) = rx_of(src, ports) {
                fds.push((Some(sp.no), h.fd()));
                own.push(sp.no);
                add_port_to(&mut env, &sp, h);
            }
        }
        for (no, sp) in ports.iter() {
            if !own.contains(no) {
                add_port_to(&mut env, sp, Box::new(NoRx));
            }
        }
        for t in trunks {
            if !own_trunks.0.iter().any(|o| Arc::ptr_eq(&o.trunk, t)) {
                own_trunks.0.push(TrunkRx {
                    trunk: t.clone(),
                    rx: Some(Box::new(NoRx)),
                });
            }
        }
        env.put(own_trunks);
        env.put(TxParts(ports.clone()));
        env.put(parts);
        (env, fds)
    }

    /// Builds worker `worker`'s graph from `spec` (`default`: the default
    /// graph); the error is `FILE:LINE: reason`. The pool's buffers hold
    /// the longest frame any port delivers (`frame_len`).
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        spec: &GraphSpec,
        default: bool,
        worker: usize,
        mut env: Env,
        fds: Vec<RxFd>,
        clock: super::Clock,
        frame_len: usize,
    ) -> Result<GraphRun, String> {
        let reg = registry();
        let mut rt =
            Runtime::from_config(&spec.text, &spec.file, &reg, &mut env, DpClock::of(clock))
                .map_err(|e| e.to_string())?;
        rt.worker = worker;
        rt.graph.pool.set_frame_len(frame_len);
        let mut g = GraphRun {
            rt,
            env,
            reg,
            fds,
            rounds: 1,
            default,
        };
        g.shape_changed();
        Ok(g)
    }

    /// Call after the graph's tasks changed.
    pub fn shape_changed(&mut self) {
        self.rounds = self.rt.graph.tasks().len().max(1);
    }

    /// One worker loop's worth of scheduling rounds, back to back (each
    /// starts at the clock reading that ended the one before); busy time
    /// (from the first round's start to the last one's end) and received
    /// packets counted, `super::worker`; returns the packets the tasks
    /// produced.
    pub fn round(&mut self, c: &super::ops::WorkerCounters) -> usize {
        use graph::Clock as _;
        use std::sync::atomic::Ordering::Relaxed;
        let start = self.rt.clock.now();
        let mut now = start;
        let mut got = 0;
        for _ in 0..self.rounds {
            match self.rt.step_at(now) {
                Some((u, end)) => {
                    got += u.packets;
                    now = end;
                }
                None => break,
            }
        }
        if got > 0 {
            c.rx_packets.fetch_add(got, Relaxed);
            c.busy_rounds.fetch_add(1, Relaxed);
            c.busy_ns.fetch_add(now.saturating_sub(start), Relaxed);
        }
        got as usize
    }

    /// Reads the pending errors of the graph's receive handles
    /// (`graph::Module::take_error`).
    pub fn take_errors(&mut self) {
        for (_, m) in self.rt.graph.modules_mut() {
            m.take_error();
        }
    }

    fn openflow(&mut self) -> Option<&mut OpenFlow> {
        self.rt
            .graph
            .modules_mut()
            .find_map(|(_, m)| m.as_any_mut().and_then(|a| a.downcast_mut::<OpenFlow>()))
    }

    /// Exchanges `p` with the graph's pipeline replica (in its `openflow`
    /// module, or parked in the environment when the graph has none).
    pub fn swap_pipeline(&mut self, p: &mut Pipeline) {
        if let Some(of) = self.openflow().and_then(OpenFlow::pipeline_mut) {
            std::mem::swap(of, p);
        } else if let Some(parts) = self.env.get_mut::<OpenFlowParts>() {
            std::mem::swap(&mut parts.pipeline, p);
        }
    }

    pub fn set_mode(&mut self, mode: Mode) {
        if let Some(of) = self.openflow() {
            of.set_mode(mode);
        }
        if let Some(parts) = self.env.get_mut::<OpenFlowParts>() {
            parts.side.mode = mode;
        }
    }

    /// FlexForward's modes changed (`Op::Flex`).
    pub fn set_flex(&mut self, flex: Option<Arc<super::flexforward::FlexState>>) {
        if let Some(of) = self.openflow() {
            of.set_flex(flex.clone());
        }
        if let Some(parts) = self.env.get_mut::<OpenFlowParts>() {
            parts.side.flex = flex;
        }
    }

    /// Adopts a new port set (`Op::Ports`): a new port joins the
    /// environment receiving nothing ([`NoRx`]; the `Op::AddRx` that
    /// follows gives its receive side to one worker, or a share to each),
    /// a removed one leaves it (no module uses
    /// it: `del-port` is refused while one does, `super::graph_control`).
    pub fn set_ports(&mut self, ports: &SwitchPorts) {
        let old = self.env.get::<TxParts>().map(|t| t.0.clone());
        for (no, sp) in old.iter().flat_map(|o| o.iter()) {
            if !ports.contains_key(no) {
                if self.default {
                    self.remove_input(&sp.name);
                }
                self.env.remove_port(&sp.name);
                self.fds.retain(|(n, _)| *n != Some(*no));
            }
        }
        for (no, sp) in ports.iter() {
            if !old.as_ref().is_some_and(|o| o.contains_key(no)) {
                add_port_to(&mut self.env, sp, Box::new(NoRx));
            }
        }
        for (_, m) in self.rt.graph.modules_mut() {
            if let Some(a) = m.as_any_mut() {
                if let Some(tx) = a.downcast_mut::<Tx>() {
                    tx.ports.sync(ports);
                } else if let Some(of) = a.downcast_mut::<OpenFlow>() {
                    of.set_ports(ports);
                }
            }
        }
        if let Some(parts) = self.env.get_mut::<OpenFlowParts>() {
            parts.side.ports = ports.clone();
        }
        self.env.put(TxParts(ports.clone()));
    }

    /// A port's queues changed (`Op::Queues`).
    pub fn set_queues(&mut self, no: u32, queues: &super::queues::PortQueues) {
        for (name, m) in self.rt.graph.modules_mut() {
            if let Some(tx) = m.as_any_mut().and_then(|a| a.downcast_mut::<Tx>()) {
                if let Err(e) = tx.ports.set_queues(no, queues) {
                    tracing::warn!(port = no, module = name, "queues not served: {e}");
                }
            }
        }
    }

    /// This worker's receive side of a port added at run time
    /// (`Op::AddRx`, after the `Op::Ports` that put it in the environment
    /// receiving nothing): its share, or the whole port if it cannot
    /// split, for the `port_inc` a graph change adds. In the default graph
    /// the port's input module is added at once.
    pub fn add_rx(&mut self, src: RxSource, ports: &SwitchPorts) {
        if let Some((sp, h)) = rx_of(src, ports) {
            self.fds.retain(|(n, _)| *n != Some(sp.no));
            self.fds.push((Some(sp.no), h.fd()));
            add_port_to(&mut self.env, &sp, h);
            if self.default {
                self.add_input(&sp.name);
            }
        }
    }

    /// The default graph's input module for port `name` ([`add_input_set`]),
    /// unless the graph has one.
    fn add_input(&mut self, name: &str) {
        let module = input_name(name);
        if self.rt.graph.modules_mut().any(|(n, _)| n == module) {
            return;
        }
        match graph::ChangeSet::parse(&add_input_set(name)) {
            Ok(set) => self.apply_set(&set),
            Err(e) => tracing::warn!(port = name, "input module not added: {e}"),
        }
    }

    /// Removes the default graph's input module of port `name`, if any.
    fn remove_input(&mut self, name: &str) {
        let module = input_name(name);
        if !self.rt.graph.modules_mut().any(|(n, _)| n == module) {
            return;
        }
        match graph::ChangeSet::parse(&format!("[[remove]]\nname = {module:?}\n")) {
            Ok(set) => self.apply_set(&set),
            Err(e) => tracing::warn!(port = name, "input module not removed: {e}"),
        }
    }

    /// The live view of this worker's graph and classes.
    pub fn view(&self) -> WorkerView {
        let s = &self.rt.sched;
        let names: Vec<(Option<usize>, &str)> = s
            .classes()
            .map(|c| (s.find(&c.name), c.name.as_str()))
            .collect();
        let classes = s
            .classes()
            .map(|c| ofp::graph_desc::GraphClass {
                worker: self.rt.worker as u32,
                name: c.name.clone(),
                kind: c.kind.name().to_string(),
                parent: c.parent.and_then(|p| {
                    names
                        .iter()
                        .find(|(slot, _)| *slot == Some(p))
                        .map(|(_, n)| n.to_string())
                }),
                share: c.share,
                priority: c.priority,
                runs: c.usage.runs,
                packets: c.usage.packets,
                bits: c.usage.bits,
                throttled: c.usage.throttled,
            })
            .collect();
        WorkerView {
            worker: self.rt.worker,
            modules: self.rt.graph.describe(),
            classes,
            idle_rounds: s.idle_rounds,
        }
    }

    /// Applies a change set the control thread validated (`Op::Graph`,
    /// `super::graph_control`).
    pub fn apply_set(&mut self, set: &graph::ChangeSet) {
        if let Err(e) = self.rt.apply_set(set, &self.reg, &mut self.env) {
            tracing::warn!(worker = self.rt.worker, "graph change not applied: {e}");
        }
        self.shape_changed();
    }
}
