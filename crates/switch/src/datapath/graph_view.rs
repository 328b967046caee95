//! The data path as a graph of modules, as the workers run it, with the
//! packets that crossed each gate (`ofp::graph_desc`, `oxflow ctl
//! show-pipeline`).
//!
//! It is the live graph (`super::graph_run`): the configured one, or the
//! default one (`port_inc` / `trunk_inc` per receive source ->
//! `openflow` -> `tx`); a worker that receives from fewer sources has
//! fewer input modules, so the merged view has each source once.

use super::ops::{Op, WorkerCounters};
use super::Datapath;
use ofp::graph_desc::{DatapathGraph, GraphCounter, GraphWorker};

impl Datapath {
    /// The graph description (module comment): every worker's view of
    /// its graph, merged: modules and connections once, their packet
    /// counts and counters summed; each worker's class tree as it is.
    pub fn graph_view(&mut self) -> DatapathGraph {
        // While a bundle commits, operations are held back (`super::bundle`).
        if self.staging.is_some() {
            return DatapathGraph::default();
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(self.workers.len().max(1));
        self.broadcast(Op::Describe(tx));
        let live = self
            .workers
            .iter()
            .filter(|w| !w.join.is_finished())
            .count();
        let mut views = Vec::new();
        for _ in 0..live {
            match rx.recv_timeout(std::time::Duration::from_secs(5)) {
                Ok(v) => views.push(v),
                Err(_) => break,
            }
        }
        views.sort_by_key(|v: &super::graph_run::WorkerView| v.worker);
        let mut g = DatapathGraph::default();
        for v in &views {
            for m in &v.modules {
                if !g.nodes.iter().any(|n| n.name == m.name) {
                    g.node(&m.name, &m.kind);
                }
                let stats = [
                    ("graph.batches", m.stats.batches),
                    ("graph.packets", m.stats.packets),
                    ("graph.dropped", m.stats.dropped),
                ];
                for (name, value) in stats.into_iter().chain(m.counters.iter().copied()) {
                    match g
                        .counters
                        .iter_mut()
                        .find(|c| c.node == m.name && c.name == name)
                    {
                        Some(c) => c.value += value,
                        None => g.counters.push(GraphCounter {
                            node: m.name.clone(),
                            name: name.to_string(),
                            value,
                        }),
                    }
                }
                for (gate, to, _, n) in &m.outs {
                    let gate = gate.to_string();
                    match g
                        .edges
                        .iter_mut()
                        .find(|e| e.from == m.name && e.gate == gate && e.to == *to)
                    {
                        Some(e) => e.packets += n,
                        None => g.edge(&m.name, &gate, to, *n),
                    }
                }
            }
            let c = self.workers.get(v.worker).map(|w| &w.counters);
            g.workers.push(GraphWorker {
                worker: v.worker as u32,
                class: v
                    .classes
                    .iter()
                    .find(|c| c.parent.is_none())
                    .map_or_else(|| "none".to_string(), |c| c.kind.clone()),
                rounds: c.map_or(0, |c| WorkerCounters::get(&c.loops)),
                busy_rounds: c.map_or(0, |c| WorkerCounters::get(&c.busy_rounds)),
            });
            g.classes.extend(v.classes.iter().cloned());
        }
        g
    }
}
