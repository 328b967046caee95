//! The data path as a graph of modules, as the workers run it, with the
//! packets that crossed each gate (`ofp::graph_desc`, `oxflow ctl
//! show-pipeline`).
//!
//! The workers' loop is the default graph of the `graph` crate written
//! out by hand (`super::worker`): every port's input (`port_inc`) feeds
//! the OpenFlow pipeline (`openflow`; in fail-standalone mode the learning
//! switch, `l2_learning`), whose output gates are the ports (`port_out`)
//! and the controller (packet-ins). A trunk's input goes through a
//! `vlan_split` (one gate per VLAN, to the centre module, and `other` to
//! a `sink`: frames without one of its VLANs), and each logical port's
//! output through a `vlan_push` to the trunk's `port_out`
//! (`super::trunk`). The counts come from the ports' and trunks'
//! counters, so a gate's count is what its port or VLAN received or sent.

use super::ops::{Mode, Op, WorkerCounters};
use super::Datapath;
use ofp::graph_desc::{DatapathGraph, GraphCounter, GraphWorker};

impl Datapath {
    /// The graph description (module comment). With a configured graph
    /// (`super::graph_run`): the live one, from every worker.
    pub fn graph_view(&mut self) -> DatapathGraph {
        if self.graph_ctl.is_some() {
            return self.live_graph_view();
        }
        self.fixed_graph_view()
    }

    /// Every worker's view of its graph, merged: modules and connections
    /// once (the workers run the same graph), their packet counts and
    /// counters summed; each worker's class tree as it is.
    fn live_graph_view(&mut self) -> DatapathGraph {
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

    /// The fixed path's description (module comment).
    fn fixed_graph_view(&self) -> DatapathGraph {
        let mut g = DatapathGraph::default();
        let centre = match self.mode {
            Mode::Pipeline => ("openflow", "openflow"),
            Mode::Standalone => ("l2_learning", "l2_learning"),
        };
        let stats = |sp: &super::SwitchPort| sp.io.lock().map(|io| io.stats()).unwrap_or_default();
        // Inputs: plain ports, then trunks.
        for (no, sp) in self.ports.iter() {
            if self.trunk_of(*no).is_some() {
                continue;
            }
            let name = format!("in:{}", sp.name);
            g.node(&name, "port_inc");
            g.edge(&name, "0", centre.0, stats(sp).rx_packets);
        }
        for t in &self.trunks {
            let (inp, split) = (
                format!("in:{}", t.interface),
                format!("split:{}", t.interface),
            );
            let rx = t.io.lock().map(|io| io.stats().rx_packets).unwrap_or(0);
            g.node(&inp, "port_inc");
            g.edge(&inp, "0", &split, rx);
            g.node(&split, "vlan_split");
            for (i, c) in t.logical.iter().enumerate() {
                let vid = usize::from(t.first_vid) + i;
                let n = c.rx_packets.load(std::sync::atomic::Ordering::Relaxed);
                g.edge(&split, &vid.to_string(), centre.0, n);
            }
            g.edge(
                &split,
                "other",
                "drop",
                t.foreign.load(std::sync::atomic::Ordering::Relaxed),
            );
        }
        // The centre and its outputs.
        g.node(centre.0, centre.1);
        for (no, sp) in self.ports.iter() {
            let tx = stats(sp).tx_packets;
            match self.trunk_of(*no) {
                None => {
                    let out = format!("out:{}", sp.name);
                    g.edge(centre.0, &no.to_string(), &out, tx);
                    g.node(&out, "port_out");
                }
                Some(t) => {
                    let push = format!("push:{}", sp.name);
                    g.edge(centre.0, &no.to_string(), &push, tx);
                    g.node(&push, "vlan_push");
                    g.edge(&push, "0", &format!("out:{}", t.interface), tx);
                }
            }
        }
        let packet_ins: u64 = self
            .workers
            .iter()
            .map(|w| WorkerCounters::get(&w.counters.packet_ins))
            .sum();
        g.edge(centre.0, "controller", "controller", packet_ins);
        g.node("controller", "controller");
        for t in &self.trunks {
            g.node(&format!("out:{}", t.interface), "port_out");
        }
        if !self.trunks.is_empty() {
            g.node("drop", "sink");
        }
        self.add_tc_view(&mut g);
        g
    }
}
