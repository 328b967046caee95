//! Workers that run a configured module graph (`oxflow run --graph FILE`,
//! docs/graph.md) instead of the fixed receive -> pipeline -> transmit
//! sequence of `super::worker`.
//!
//! Each worker builds its own [`graph::Runtime`] from the same
//! configuration text, with an environment ([`graph::Env`]) holding:
//!
//! - every switch port by interface name, with one receive handle for
//!   this worker (queue 0 of the port for `port_inc`): its own share of
//!   the port when the backend splits reception over the workers
//!   (PACKET_FANOUT, XDP queues), else the whole port read through its
//!   mutex — with `--workers N` every worker then reads it, one at a time
//!   ([`LockedPortRx`]); and transmit handles for `port_out`;
//! - every trunk's receive handle for this worker, likewise its own share
//!   or the whole trunk ([`TrunkSources`], for `trunk_inc`,
//!   `super::graph_trunk`);
//! - the worker's pipeline replica and what its outputs need
//!   ([`OpenFlowParts`], for the `openflow` module) and the port set
//!   ([`TxParts`], for the `tx` module);
//! - the queues and data-plane tables shared by the workers' graphs.
//!
//! The switch's registry ([`registry`]) is the graph crate's built-in
//! kinds plus `openflow`, `tx` and `trunk_inc`. The scheduler's clock is the
//! datapath's ([`DpClock`]), so a module's `Ctx::now` is the pipeline's
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

/// The graph crate's module kinds plus the switch's own (module comment).
pub fn registry() -> Registry {
    let mut r = Registry::builtin();
    r.register("openflow", super::graph_openflow::new);
    r.register("tx", super::graph_tx::new);
    r.register("trunk_inc", super::graph_trunk::new);
    r
}

/// The datapath's clock as the scheduler's.
pub struct DpClock(pub super::Clock);

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
    /// blocking, as on the fixed path).
    pub fds: Vec<RxFd>,
    /// Scheduling rounds per worker loop: the number of tasks (each may
    /// run once between two looks at the operations).
    rounds: usize,
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
    /// (module comment: a port it has no share of is read whole).
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
                let h = LockedPortRx(sp.clone());
                fds.push((Some(*no), h.fd()));
                add_port_to(&mut env, sp, Box::new(h));
            }
        }
        for t in trunks {
            if !own_trunks.0.iter().any(|o| Arc::ptr_eq(&o.trunk, t)) {
                let whole = TrunkRx {
                    trunk: t.clone(),
                    rx: None,
                };
                fds.push((None, whole.fd()));
                own_trunks.0.push(whole);
            }
        }
        env.put(own_trunks);
        env.put(TxParts(ports.clone()));
        env.put(parts);
        (env, fds)
    }

    /// Builds worker `worker`'s graph from `spec`; the error is
    /// `FILE:LINE: reason`.
    pub fn build(
        spec: &GraphSpec,
        worker: usize,
        mut env: Env,
        fds: Vec<RxFd>,
        clock: super::Clock,
    ) -> Result<GraphRun, String> {
        let reg = registry();
        let mut rt = Runtime::from_config(&spec.text, &spec.file, &reg, &mut env, DpClock(clock))
            .map_err(|e| e.to_string())?;
        rt.worker = worker;
        let mut g = GraphRun {
            rt,
            env,
            reg,
            fds,
            rounds: 1,
        };
        g.shape_changed();
        Ok(g)
    }

    /// Call after the graph's tasks changed.
    pub fn shape_changed(&mut self) {
        self.rounds = self.rt.graph.tasks().len().max(1);
    }

    /// One worker loop's worth of scheduling rounds (busy time and
    /// received packets counted as on the fixed path); returns the
    /// packets the tasks produced.
    pub fn round(&mut self, c: &super::ops::WorkerCounters) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        let start = std::time::Instant::now();
        let got = self.run(self.rounds);
        if got > 0 {
            c.rx_packets.fetch_add(got, Relaxed);
            c.busy_rounds.fetch_add(1, Relaxed);
            c.busy_ns.fetch_add(super::nanos(start.elapsed()), Relaxed);
        }
        got as usize
    }

    /// Runs up to `rounds` scheduling rounds; returns the packets the
    /// tasks produced.
    #[inline]
    pub fn run(&mut self, rounds: usize) -> u64 {
        let mut got = 0;
        for _ in 0..rounds {
            match self.rt.step() {
                Some(u) => got += u.packets,
                None => break,
            }
        }
        got
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
    /// environment read whole ([`LockedPortRx`]; `Op::AddRx` may then give
    /// this worker its own share), a removed one leaves it (no module uses
    /// it: `del-port` is refused while one does, `super::graph_control`).
    pub fn set_ports(&mut self, ports: &SwitchPorts) {
        let old = self.env.get::<TxParts>().map(|t| t.0.clone());
        for (no, sp) in old.iter().flat_map(|o| o.iter()) {
            if !ports.contains_key(no) {
                self.env.remove_port(&sp.name);
                self.fds.retain(|(n, _)| *n != Some(*no));
            }
        }
        for (no, sp) in ports.iter() {
            if !old.as_ref().is_some_and(|o| o.contains_key(no)) {
                let h = LockedPortRx(sp.clone());
                self.fds.push((Some(*no), h.fd()));
                add_port_to(&mut self.env, sp, Box::new(h));
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

    /// This worker's share of a port added at run time (`Op::AddRx`,
    /// after the `Op::Ports` that put it in the environment read whole):
    /// it replaces the whole port, for a `port_inc` a graph change adds.
    pub fn add_rx(&mut self, src: RxSource, ports: &SwitchPorts) {
        let own = matches!(src, RxSource::Own { .. });
        if let Some((sp, h)) = rx_of(src, ports) {
            if own || !self.env.has_port(&sp.name) {
                self.fds.retain(|(n, _)| *n != Some(sp.no));
                self.fds.push((Some(sp.no), h.fd()));
                add_port_to(&mut self.env, &sp, h);
            }
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
