//! oxflow's data-path graph description (`exp_type`
//! [`crate::experimenter::exp_type::DATAPATH_GRAPH`], `oxflow ctl
//! show-pipeline`): the modules a frame passes through in the switch's
//! workers and the packets that crossed each gate.
//!
//! The request is an experimenter multipart with no data. The reply's
//! data is UTF-8 text, one record per line, fields separated by one space
//! (names never contain spaces):
//!
//! ```text
//! node NAME KIND
//! edge FROM GATE TO PACKETS
//! worker N CLASS ROUNDS BUSY_ROUNDS
//! task N NAME PACKETS BATCHES
//! counter NODE NAME VALUE
//! class N NAME KIND PARENT SHARE PRIORITY RUNS PACKETS BITS THROTTLED
//! ```
//!
//! `KIND` is a module kind of the `graph` crate (`port_inc`, `port_out`,
//! `openflow`, `l2_learning`, `vlan_split`, `vlan_push`, `sink`,
//! `controller`); `GATE` names the output gate of `FROM` (a port number,
//! a VLAN id, `0` for a module's only gate, `other`, `controller`).
//! `worker` lines give each worker's traffic class (the kind that picks
//! its next task, e.g. `round_robin`) with its rounds and busy rounds;
//! `task` lines the tasks under it (`oxflow ctl show-tc`) with the frames
//! and non-empty batches they produced. A switch whose workers run a
//! configured graph (docs/graph.md) describes the live graph instead:
//! its modules and connections (packets summed over the workers),
//! `counter` lines with each module's counters (`graph.batches`,
//! `graph.packets` and `graph.dropped`: what the graph handed it and
//! dropped on its behalf, then the module's own), and per worker its
//! traffic-class tree as `class` lines (`PARENT` is `-` for the root;
//! usage: runs, packets, bits, times throttled). Lines of other shapes are
//! ignored, so the format can grow.

use crate::experimenter::{exp_type, OXFLOW_EXPERIMENTER};
use crate::multipart::ExperimenterMultipart;

/// One module of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphNode {
    pub name: String,
    pub kind: String,
}

/// One connection from an output gate to a module, with its packets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphEdge {
    pub from: String,
    pub gate: String,
    pub to: String,
    pub packets: u64,
}

/// One worker's traffic class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphWorker {
    pub worker: u32,
    pub class: String,
    pub rounds: u64,
    pub busy_rounds: u64,
}

/// One task of a worker, with what it produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphTask {
    pub worker: u32,
    pub name: String,
    pub packets: u64,
    pub batches: u64,
}

/// One counter of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphCounter {
    pub node: String,
    pub name: String,
    pub value: u64,
}

/// One traffic class of a worker with its usage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphClass {
    pub worker: u32,
    pub name: String,
    pub kind: String,
    /// `None` for the root.
    pub parent: Option<String>,
    pub share: u64,
    pub priority: u32,
    pub runs: u64,
    pub packets: u64,
    pub bits: u64,
    pub throttled: u64,
}

/// The whole description (module comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatapathGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    pub workers: Vec<GraphWorker>,
    pub tasks: Vec<GraphTask>,
    pub counters: Vec<GraphCounter>,
    pub classes: Vec<GraphClass>,
}

/// `s` with every whitespace character replaced, so it stays one field.
fn field(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

impl DatapathGraph {
    pub fn node(&mut self, name: &str, kind: &str) {
        self.nodes.push(GraphNode {
            name: field(name),
            kind: field(kind),
        });
    }

    pub fn edge(&mut self, from: &str, gate: &str, to: &str, packets: u64) {
        self.edges.push(GraphEdge {
            from: field(from),
            gate: field(gate),
            to: field(to),
            packets,
        });
    }

    pub fn request() -> ExperimenterMultipart {
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::DATAPATH_GRAPH,
            data: Vec::new(),
        }
    }

    pub fn reply(&self) -> ExperimenterMultipart {
        let mut text = String::new();
        for n in &self.nodes {
            text.push_str(&format!("node {} {}\n", n.name, n.kind));
        }
        for e in &self.edges {
            text.push_str(&format!(
                "edge {} {} {} {}\n",
                e.from, e.gate, e.to, e.packets
            ));
        }
        for w in &self.workers {
            text.push_str(&format!(
                "worker {} {} {} {}\n",
                w.worker,
                field(&w.class),
                w.rounds,
                w.busy_rounds
            ));
        }
        for t in &self.tasks {
            text.push_str(&format!(
                "task {} {} {} {}\n",
                t.worker,
                field(&t.name),
                t.packets,
                t.batches
            ));
        }
        for c in &self.counters {
            text.push_str(&format!(
                "counter {} {} {}\n",
                field(&c.node),
                field(&c.name),
                c.value
            ));
        }
        for c in &self.classes {
            text.push_str(&format!(
                "class {} {} {} {} {} {} {} {} {} {}\n",
                c.worker,
                field(&c.name),
                field(&c.kind),
                c.parent.as_deref().map_or_else(|| "-".to_string(), field),
                c.share,
                c.priority,
                c.runs,
                c.packets,
                c.bits,
                c.throttled
            ));
        }
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::DATAPATH_GRAPH,
            data: text.into_bytes(),
        }
    }

    /// The description in a reply body; `None` if it is not one.
    pub fn parse_reply(body: &ExperimenterMultipart) -> Option<DatapathGraph> {
        if body.experimenter != OXFLOW_EXPERIMENTER || body.exp_type != exp_type::DATAPATH_GRAPH {
            return None;
        }
        let text = String::from_utf8_lossy(&body.data);
        let mut g = DatapathGraph::default();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            match f.as_slice() {
                ["node", name, kind] => g.node(name, kind),
                ["edge", from, gate, to, n] => {
                    if let Ok(n) = n.parse() {
                        g.edge(from, gate, to, n);
                    }
                }
                ["worker", w, class, r, b] => {
                    if let (Ok(worker), Ok(rounds), Ok(busy_rounds)) =
                        (w.parse(), r.parse(), b.parse())
                    {
                        g.workers.push(GraphWorker {
                            worker,
                            class: class.to_string(),
                            rounds,
                            busy_rounds,
                        });
                    }
                }
                ["task", w, name, p, b] => {
                    if let (Ok(worker), Ok(packets), Ok(batches)) =
                        (w.parse(), p.parse(), b.parse())
                    {
                        g.tasks.push(GraphTask {
                            worker,
                            name: name.to_string(),
                            packets,
                            batches,
                        });
                    }
                }
                ["counter", node, name, v] => {
                    if let Ok(value) = v.parse() {
                        g.counters.push(GraphCounter {
                            node: node.to_string(),
                            name: name.to_string(),
                            value,
                        });
                    }
                }
                ["class", w, name, kind, parent, nums @ ..] if nums.len() == 6 => {
                    let n: Vec<u64> = nums.iter().filter_map(|x| x.parse().ok()).collect();
                    if let ([share, priority, runs, packets, bits, throttled], Ok(worker)) =
                        (n.as_slice(), w.parse())
                    {
                        g.classes.push(GraphClass {
                            worker,
                            name: name.to_string(),
                            kind: kind.to_string(),
                            parent: (*parent != "-").then(|| parent.to_string()),
                            share: *share,
                            priority: u32::try_from(*priority).unwrap_or(u32::MAX),
                            runs: *runs,
                            packets: *packets,
                            bits: *bits,
                            throttled: *throttled,
                        });
                    }
                }
                _ => {}
            }
        }
        Some(g)
    }

    /// Human-readable: every module with its kind, then its output gates.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for n in &self.nodes {
            out.push_str(&format!("{} ({})\n", n.name, n.kind));
            let counters: Vec<String> = self
                .counters
                .iter()
                .filter(|c| c.node == n.name)
                .map(|c| format!("{}={}", c.name, c.value))
                .collect();
            if !counters.is_empty() {
                out.push_str(&format!("  {}\n", counters.join(" ")));
            }
            for e in self.edges.iter().filter(|e| e.from == n.name) {
                out.push_str(&format!(
                    "  :{} -> {}  packets={}\n",
                    e.gate, e.to, e.packets
                ));
            }
        }
        out
    }

    /// Depth of class `c` in its worker's tree (the root is 0).
    fn class_depth(&self, c: &GraphClass) -> usize {
        let mut depth = 0;
        let mut parent = c.parent.as_deref();
        while let Some(p) = parent {
            depth += 1;
            if depth > self.classes.len() {
                break;
            }
            parent = self
                .classes
                .iter()
                .find(|x| x.worker == c.worker && x.name == p)
                .and_then(|x| x.parent.as_deref());
        }
        depth
    }

    /// The traffic-class view: per worker its class and usage, then its
    /// tasks with theirs.
    pub fn to_tc_text(&self) -> String {
        let mut out = String::new();
        for w in &self.workers {
            out.push_str(&format!(
                "worker {}: {} rounds={} busy_rounds={}\n",
                w.worker, w.class, w.rounds, w.busy_rounds
            ));
            for t in self.tasks.iter().filter(|t| t.worker == w.worker) {
                out.push_str(&format!(
                    "  {} (port_inc)  packets={} batches={}\n",
                    t.name, t.packets, t.batches
                ));
            }
            for c in self.classes.iter().filter(|c| c.worker == w.worker) {
                out.push_str(&format!(
                    "{}{} ({}) share={} priority={}  runs={} packets={} bits={} throttled={}\n",
                    "  ".repeat(self.class_depth(c) + 1),
                    c.name,
                    c.kind,
                    c.share,
                    c.priority,
                    c.runs,
                    c.packets,
                    c.bits,
                    c.throttled
                ));
            }
        }
        out
    }

    /// Graphviz DOT: one box per module, one labelled arrow per gate.
    pub fn to_dot(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut out = String::from("digraph oxflow {\n  rankdir=LR;\n  node [shape=box];\n");
        for n in &self.nodes {
            out.push_str(&format!(
                "  {} [label={}];\n",
                q(&n.name),
                q(&format!("{}\\n{}", n.name, n.kind))
            ));
        }
        for e in &self.edges {
            out.push_str(&format!(
                "  {} -> {} [label={}];\n",
                q(&e.from),
                q(&e.to),
                q(&format!("{}: {}", e.gate, e.packets))
            ));
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_draws() {
        let mut g = DatapathGraph::default();
        g.node("in:eth0", "port_inc");
        g.node("openflow", "openflow");
        g.edge("in:eth0", "0", "openflow", 7);
        g.edge("open flow", "controller", "controller", 2);
        g.workers.push(GraphWorker {
            worker: 0,
            class: "round_robin".into(),
            rounds: 9,
            busy_rounds: 3,
        });
        g.tasks.push(GraphTask {
            worker: 0,
            name: "in:eth0".into(),
            packets: 7,
            batches: 2,
        });
        let r = g.reply();
        let back = DatapathGraph::parse_reply(&r).unwrap();
        assert_eq!(back.nodes, g.nodes);
        assert_eq!(back.edges[1].from, "open_flow");
        assert_eq!(back, g);
        assert!(g
            .to_text()
            .contains("in:eth0 (port_inc)\n  :0 -> openflow  packets=7\n"));
        assert_eq!(
            back.to_tc_text(),
            "worker 0: round_robin rounds=9 busy_rounds=3\n  in:eth0 (port_inc)  packets=7 batches=2\n"
        );
        let dot = g.to_dot();
        assert!(dot.starts_with("digraph oxflow {"));
        assert!(dot.contains("\"in:eth0\" -> \"openflow\" [label=\"0: 7\"];"));
        let other = ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::WORKER_STATS,
            data: vec![],
        };
        assert!(DatapathGraph::parse_reply(&other).is_none());
    }

    #[test]
    fn live_graph_counters_and_classes_round_trip() {
        let mut g = DatapathGraph::default();
        g.node("m1", "measure");
        g.counters.push(GraphCounter {
            node: "m1".into(),
            name: "packets".into(),
            value: 5,
        });
        g.workers.push(GraphWorker {
            worker: 1,
            class: "weighted".into(),
            rounds: 4,
            busy_rounds: 2,
        });
        let class = |name: &str, kind: &str, parent: Option<&str>, packets| GraphClass {
            worker: 1,
            name: name.into(),
            kind: kind.into(),
            parent: parent.map(str::to_string),
            share: 2,
            priority: 0,
            runs: 3,
            packets,
            bits: 8 * packets,
            throttled: 1,
        };
        g.classes.push(class("root", "weighted", None, 9));
        g.classes.push(class("in1", "leaf", Some("root"), 9));
        let back = DatapathGraph::parse_reply(&g.reply()).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.to_text(), "m1 (measure)\n  packets=5\n");
        assert_eq!(
            back.to_tc_text(),
            "worker 1: weighted rounds=4 busy_rounds=2\n  \
             root (weighted) share=2 priority=0  runs=3 packets=9 bits=72 throttled=1\n    \
             in1 (leaf) share=2 priority=0  runs=3 packets=9 bits=72 throttled=1\n"
        );
    }
}
