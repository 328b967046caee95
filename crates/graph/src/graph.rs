//! A worker's module graph: the modules, their connections, running a
//! task or a batch through them, and changing them at run time.
//!
//! Modules live in slots (a removed module leaves an empty slot, so slot
//! numbers, which the scheduler's leaves use as task ids, stay stable).
//! Each slot holds the module, the input gate its output gates lead to,
//! and its pending output batches ([`crate::module`]: emission). Running is
//! depth first: [`Graph::run_task`] lets a task fill its pending batches,
//! then each non-empty one is processed by the next module, recursively;
//! cycles are only allowed through queues, which end the recursion.
//!
//! # Changes at run time
//!
//! [`Graph::apply`] takes a list of [`Change`]s as one transaction: it
//! builds the new modules, applies everything to a copy of the graph's
//! [`Shape`], checks the copy ([`crate::check`]) and only then installs it
//! — a refused transaction leaves the running graph exactly as it was. The
//! graph is owned by its worker and changed between two runs, when no batch
//! is in flight, so packets on paths a change does not touch are never
//! dropped (packets waiting in a queue stay there; removing a queue drops
//! what it holds, which is on the path being changed).

use crate::batch::{Batch, Pool};
use crate::check::{Decl, Edge, Refusal, Shape};
use crate::metadata::Layout;
use crate::module::{Ctx, Emit, Module, Usage};
use crate::registry::{Args, Env, Registry};
use std::collections::HashMap;

/// One change of a run-time transaction (see the module comment).
#[derive(Debug, Clone)]
pub enum Change {
    /// A new module of a registered kind with its arguments.
    AddModule {
        name: String,
        kind: String,
        args: toml::Table,
    },
    RemoveModule {
        name: String,
    },
    /// Connects `from` ("module" or "module:ogate") to `to` ("module" or
    /// "module:igate"); gates default to 0.
    Connect {
        from: String,
        to: String,
    },
    /// Disconnects output gate `from` ("module" or "module:ogate").
    Disconnect {
        from: String,
    },
}

/// Why a graph or change is refused; `origin` is the index of the change
/// (configuration entry) that caused it, when one did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct GraphError {
    pub origin: Option<usize>,
    pub reason: String,
}

impl From<Refusal> for GraphError {
    fn from(r: Refusal) -> Self {
        GraphError {
            origin: r.origin,
            reason: r.reason,
        }
    }
}

/// One module as [`Graph::describe`] reports it.
#[derive(Debug, Clone)]
pub struct ModuleView {
    pub name: String,
    pub kind: String,
    pub stats: NodeStats,
    /// The module's own counters ([`Module::counters`]).
    pub counters: Vec<(&'static str, u64)>,
    /// (output gate, next module, its input gate, packets handed on).
    pub outs: Vec<(usize, String, usize, u64)>,
}

/// Per-module counters kept by the graph.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Batches and packets processed (for a task: runs and packets made).
    pub batches: u64,
    pub packets: u64,
    /// Packets dropped by the module or by the graph on its behalf.
    pub dropped: u64,
}

struct Node {
    module: Box<dyn Module>,
    decl: Decl,
    /// Per output gate: (module slot, input gate).
    outs: Vec<(usize, usize)>,
    pending: Vec<Batch>,
    /// Per output gate, what did not fit `pending` (module comment of
    /// [`crate::module`]); empty, without capacity, until a module
    /// replicates more than a batch.
    spill: Vec<Vec<(packet::PacketBuf, crate::batch::Meta)>>,
    /// Packets handed on through each output gate.
    gate_packets: Vec<u64>,
    stats: NodeStats,
}

/// A worker's graph; see the module comment.
#[derive(Default)]
pub struct Graph {
    nodes: Vec<Option<Node>>,
    layout: Layout,
    /// The worker's spare packet buffers.
    pub pool: Pool,
}

/// Splits "name:gate" (gate defaults to 0).
pub fn endpoint(s: &str) -> Result<(&str, usize), String> {
    match s.rsplit_once(':') {
        None => Ok((s, 0)),
        Some((n, g)) => g
            .parse()
            .map(|g| (n, g))
            .map_err(|_| format!("`{s}`: gate must be a number after `:`")),
    }
}

fn err(origin: Option<usize>, reason: String) -> GraphError {
    GraphError { origin, reason }
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph::default()
    }

    fn shape(&self) -> Shape {
        let decls = self
            .nodes
            .iter()
            .map(|n| {
                n.as_ref().map(|n| Decl {
                    origin: None,
                    ..n.decl.clone()
                })
            })
            .collect();
        let mut edges = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if let Some(n) = n {
                for (g, to) in n.outs.iter().enumerate() {
                    edges.push(Edge {
                        from: (i, g),
                        to: *to,
                        origin: None,
                    });
                }
            }
        }
        Shape { decls, edges }
    }

    /// Applies `changes` as one transaction; see the module comment.
    pub fn apply(
        &mut self,
        changes: &[Change],
        reg: &Registry,
        env: &mut Env,
    ) -> Result<(), GraphError> {
        let mut shape = self.shape();
        let mut new_modules: HashMap<usize, Box<dyn Module>> = HashMap::new();
        if let Err(e) = Self::stage(&mut shape, &mut new_modules, changes, reg, env) {
            for m in new_modules.values_mut() {
                m.release(env);
            }
            return Err(e);
        }
        let layout = match shape.check(&self.layout) {
            Ok(l) => l,
            Err(e) => {
                for m in new_modules.values_mut() {
                    m.release(env);
                }
                return Err(e.into());
            }
        };
        self.install(shape, new_modules, layout, env);
        Ok(())
    }

    /// Builds the new modules of `changes` and applies them to `shape`.
    fn stage(
        shape: &mut Shape,
        new_modules: &mut HashMap<usize, Box<dyn Module>>,
        changes: &[Change],
        reg: &Registry,
        env: &mut Env,
    ) -> Result<(), GraphError> {
        for (ci, c) in changes.iter().enumerate() {
            let o = Some(ci);
            let find = |shape: &Shape, s: &str| -> Result<(usize, usize), GraphError> {
                let (name, gate) = endpoint(s).map_err(|e| err(o, e))?;
                let slot = shape
                    .slot(name)
                    .ok_or_else(|| err(o, format!("dangling gate: no module `{name}`")))?;
                Ok((slot, gate))
            };
            match c {
                Change::AddModule { name, kind, args } => {
                    if name.is_empty() || name.contains(':') {
                        return Err(err(
                            o,
                            format!("bad module name `{name}` (empty or with `:`)"),
                        ));
                    }
                    if shape.slot(name).is_some() {
                        return Err(err(o, format!("duplicate module name `{name}`")));
                    }
                    let m = reg
                        .build(kind, &Args::new(args.clone()), env)
                        .map_err(|e| err(o, format!("module `{name}`: {e}")))?;
                    let slot = shape.decls.len();
                    shape.decls.push(Some(Decl {
                        name: name.clone(),
                        kind: kind.clone(),
                        igates: m.igates(),
                        ogates: m.ogates(),
                        attrs: m.attrs(),
                        breaks_cycles: m.breaks_cycles(),
                        is_task: false,
                        origin: o,
                    }));
                    let mut m = m;
                    if let Some(Some(d)) = shape.decls.get_mut(slot) {
                        d.is_task = m.task().is_some();
                    }
                    new_modules.insert(slot, m);
                }
                Change::RemoveModule { name } => {
                    let slot = shape
                        .slot(name)
                        .ok_or_else(|| err(o, format!("no module `{name}` to remove")))?;
                    shape.decls[slot] = None;
                    if let Some(mut m) = new_modules.remove(&slot) {
                        m.release(env);
                    }
                    shape.edges.retain(|e| e.from.0 != slot && e.to.0 != slot);
                }
                Change::Connect { from, to } => {
                    let from = find(shape, from)?;
                    let to = find(shape, to)?;
                    shape.edges.push(Edge {
                        from,
                        to,
                        origin: o,
                    });
                }
                Change::Disconnect { from } => {
                    let from = find(shape, from)?;
                    let before = shape.edges.len();
                    shape.edges.retain(|e| e.from != from);
                    if shape.edges.len() == before {
                        return Err(err(
                            o,
                            format!("`{}` gate {} is not connected", c_name(c), from.1),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Installs a checked shape: new modules in, removed ones out, every
    /// connection rewired, the layout bound.
    fn install(
        &mut self,
        shape: Shape,
        mut new_modules: HashMap<usize, Box<dyn Module>>,
        layout: Layout,
        env: &mut Env,
    ) {
        self.nodes.resize_with(shape.decls.len(), || None);
        for (i, d) in shape.decls.into_iter().enumerate() {
            match d {
                None => {
                    if let Some(mut n) = self.nodes[i].take() {
                        n.module.release(env);
                        for b in n.pending.iter_mut() {
                            for (buf, _) in b.drain() {
                                self.pool.put(buf);
                            }
                        }
                        for (buf, _) in n.spill.drain(..).flatten() {
                            self.pool.put(buf);
                        }
                    }
                }
                Some(d) => {
                    if let Some(m) = new_modules.remove(&i) {
                        let pending = (0..d.ogates).map(|_| Batch::new()).collect();
                        self.nodes[i] = Some(Node {
                            module: m,
                            outs: Vec::new(),
                            pending,
                            spill: (0..d.ogates).map(|_| Vec::new()).collect(),
                            gate_packets: vec![0; d.ogates],
                            decl: Decl { origin: None, ..d },
                            stats: NodeStats::default(),
                        });
                    }
                }
            }
        }
        for n in self.nodes.iter_mut().flatten() {
            n.outs = vec![(usize::MAX, 0); n.decl.ogates];
        }
        for e in &shape.edges {
            if let Some(Some(n)) = self.nodes.get_mut(e.from.0) {
                if let Some(o) = n.outs.get_mut(e.from.1) {
                    *o = e.to;
                }
            }
        }
        for n in self.nodes.iter_mut().flatten() {
            n.module.bind(&layout);
        }
        self.layout = layout;
    }

    /// The slot of module `name`.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.as_ref().is_some_and(|n| n.decl.name == name))
    }

    /// Slots and names of the modules that are tasks.
    pub fn tasks(&self) -> Vec<(usize, String)> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| {
                n.as_ref()
                    .filter(|n| n.decl.is_task)
                    .map(|n| (i, n.decl.name.clone()))
            })
            .collect()
    }

    /// Whether slot `slot` holds a task.
    pub fn is_task(&self, slot: usize) -> bool {
        matches!(self.nodes.get(slot), Some(Some(n)) if n.decl.is_task)
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The module in slot of `name`, e.g. to read its counters.
    pub fn module(&self, name: &str) -> Option<&dyn Module> {
        self.slot(name)
            .and_then(|s| self.nodes[s].as_ref())
            .map(|n| &*n.module)
    }

    /// Every module by name, mutable (a host reaching into its own module
    /// kinds between runs, see [`Module::as_any_mut`]).
    pub fn modules_mut(&mut self) -> impl Iterator<Item = (&str, &mut dyn Module)> {
        self.nodes
            .iter_mut()
            .flatten()
            .map(|n| (n.decl.name.as_str(), &mut *n.module as &mut dyn Module))
    }

    /// Every module with its kind, counters and outgoing connections
    /// (output gate, next module's name, input gate), in slot order.
    pub fn describe(&self) -> Vec<ModuleView> {
        let name = |slot: usize| {
            self.nodes
                .get(slot)
                .and_then(Option::as_ref)
                .map(|n| n.decl.name.clone())
        };
        self.nodes
            .iter()
            .flatten()
            .map(|n| ModuleView {
                name: n.decl.name.clone(),
                kind: n.decl.kind.clone(),
                stats: n.stats,
                counters: n.module.counters(),
                outs: n
                    .outs
                    .iter()
                    .enumerate()
                    .filter_map(|(g, (to, ig))| {
                        let n = n.gate_packets.get(g).copied().unwrap_or(0);
                        name(*to).map(|t| (g, t, *ig, n))
                    })
                    .collect(),
            })
            .collect()
    }

    pub fn stats(&self, name: &str) -> Option<NodeStats> {
        self.slot(name)
            .and_then(|s| self.nodes[s].as_ref())
            .map(|n| n.stats)
    }

    /// Names of the modules, in slot order.
    pub fn names(&self) -> Vec<String> {
        self.nodes
            .iter()
            .flatten()
            .map(|n| n.decl.name.clone())
            .collect()
    }

    /// Runs the task in `slot` once and everything downstream of what it
    /// made; returns its usage (`cycles` left 0 for the caller to fill).
    pub fn run_task(&mut self, slot: usize, ctx: &Ctx) -> Usage {
        let Some(Some(n)) = self.nodes.get_mut(slot) else {
            return Usage::default();
        };
        let Some(task) = n.module.task() else {
            return Usage::default();
        };
        let mut out = Emit::with_spill(
            &mut n.pending,
            &mut n.spill,
            &mut self.pool,
            &mut n.stats.dropped,
        );
        let u = task.run(ctx, &mut out);
        n.stats.batches += 1;
        n.stats.packets += u.packets;
        flush(&mut self.nodes, &mut self.pool, ctx, slot);
        u
    }

    /// Processes `batch` in module `slot` from input gate `igate` (tests,
    /// and callers that make packets outside a task).
    pub fn push(&mut self, slot: usize, igate: usize, batch: &mut Batch, ctx: &Ctx) {
        deliver(&mut self.nodes, &mut self.pool, ctx, slot, igate, batch);
    }
}

fn c_name(c: &Change) -> &str {
    match c {
        Change::Disconnect { from } => endpoint(from).map(|e| e.0).unwrap_or(from),
        _ => "",
    }
}

/// Processes `batch` in `slot`, then what it emitted, depth first.
fn deliver(
    nodes: &mut [Option<Node>],
    pool: &mut Pool,
    ctx: &Ctx,
    slot: usize,
    igate: usize,
    batch: &mut Batch,
) {
    let Some(Some(n)) = nodes.get_mut(slot) else {
        for (b, _) in batch.drain() {
            pool.put(b);
        }
        return;
    };
    n.stats.batches += 1;
    n.stats.packets += batch.len() as u64;
    {
        let mut out = Emit::with_spill(&mut n.pending, &mut n.spill, pool, &mut n.stats.dropped);
        n.module.process(ctx, igate, batch, &mut out);
    }
    for (b, _) in batch.drain() {
        n.stats.dropped += 1;
        pool.put(b);
    }
    flush(nodes, pool, ctx, slot);
}

/// Hands the pending output batches of `slot` to their next modules,
/// then what overflowed a gate, a batch at a time, in emission order.
fn flush(nodes: &mut [Option<Node>], pool: &mut Pool, ctx: &Ctx, slot: usize) {
    let gates = match nodes.get(slot) {
        Some(Some(n)) => n.pending.len(),
        _ => return,
    };
    for g in 0..gates {
        loop {
            let (mut b, to) = match nodes.get_mut(slot) {
                Some(Some(n)) if !n.pending[g].is_empty() => {
                    if let Some(c) = n.gate_packets.get_mut(g) {
                        *c += n.pending[g].len() as u64;
                    }
                    (std::mem::take(&mut n.pending[g]), n.outs[g])
                }
                _ => break,
            };
            deliver(nodes, pool, ctx, to.0, to.1, &mut b);
            let Some(Some(n)) = nodes.get_mut(slot) else {
                break;
            };
            // Refill from the overflow (oldest first), keeping its capacity.
            let spill = &mut n.spill[g];
            let k = spill.len().min(crate::batch::BATCH);
            for (buf, meta) in spill.drain(..k) {
                let _ = b.push(buf, meta);
            }
            n.pending[g] = b;
        }
    }
}

#[cfg(test)]
mod spill_tests {
    use super::*;
    use crate::batch::{Meta, BATCH};
    use packet::PacketBuf;

    /// Emits three copies of every packet on gate 0.
    struct Triple;

    impl Module for Triple {
        fn kind(&self) -> &'static str {
            "triple"
        }
        fn ogates(&self) -> usize {
            1
        }
        fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
            for (b, m) in batch.drain() {
                for _ in 0..2 {
                    if let Some(c) = out.pool.copy_of(b.data()) {
                        out.emit(0, c, m);
                    }
                }
                out.emit(0, b, m);
            }
        }
    }

    fn triple(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
        Ok(Box::new(Triple))
    }

    #[test]
    fn replication_beyond_a_batch_overflows_in_order_and_is_counted() {
        let mut reg = Registry::builtin();
        reg.register("triple", triple);
        let mut env = Env::default();
        let mut g = Graph::new();
        let add = |name: &str, kind: &str| Change::AddModule {
            name: name.into(),
            kind: kind.into(),
            args: toml::Table::new(),
        };
        g.apply(
            &[
                add("t", "triple"),
                add("m", "measure"),
                add("s", "sink"),
                Change::Connect {
                    from: "t".into(),
                    to: "m".into(),
                },
                Change::Connect {
                    from: "m".into(),
                    to: "s".into(),
                },
            ],
            &reg,
            &mut env,
        )
        .unwrap();
        let mut b = Batch::new();
        for i in 0..BATCH {
            let _ = b.push(PacketBuf::from_slice(&[i as u8]), Meta::received(1));
        }
        let slot = g.slot("t").unwrap();
        g.push(slot, 0, &mut b, &Ctx::default());
        let m = g.stats("m").unwrap();
        assert_eq!((m.packets, m.batches, m.dropped), (96, 3, 0));
        let t = g.describe().into_iter().find(|v| v.name == "t").unwrap();
        assert_eq!(t.outs, [(0, "m".to_string(), 0, 96)]);
        assert_eq!(g.stats("t").unwrap().dropped, 0);
    }
}
