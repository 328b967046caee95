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

use super::ops::{Mode, WorkerCounters};
use super::Datapath;
use ofp::graph_desc::DatapathGraph;

impl Datapath {
    /// The graph description (module comment).
    pub fn graph_view(&self) -> DatapathGraph {
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
