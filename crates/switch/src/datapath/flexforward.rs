//! FlexForward (issue 32): the forwarding modes OpenFlow, HyperCube and
//! KeyFlow, chosen at run time per switch, per ingress port or per VLAN by
//! the experimenter messages of `ofp::flexforward`.
//!
//! # Data structures
//!
//! - **Control side** ([`FlexControl`], in the [`Datapath`]): the accepted
//!   configuration as the messages set it ([`FlexConfig`]: the switch's
//!   rule, the port and VLAN overrides, the HyperCube node and neighbours,
//!   the KeyFlow key) and the switch-wide counters. A message is decoded
//!   and validated against the configuration and the port set *before*
//!   anything changes; a refusal is an OFPET_EXPERIMENTER error
//!   (`ofp::flexforward::FlexErrorCode`) and changes nothing.
//! - **Worker side** ([`FlexState`]): the configuration compiled for the
//!   packet path (HyperCube's neighbours indexed by bit, the overrides in
//!   small maps) and immutable; every accepted change builds a new one
//!   and broadcasts it to the workers as [`Op::Flex`] (`None` when every
//!   frame goes to the tables, so the OpenFlow-only switch pays one branch
//!   per batch).
//!
//! # Switchover without loss
//!
//! Workers apply operations between two batches, in sequence order, so
//! each frame is handled entirely by the old state or entirely by the new
//! one: none is dropped by the change itself. A barrier after the message
//! returns once every worker applied it (`Datapath::barrier`), i.e. every
//! frame received after that point uses the new mode. A network-wide
//! switchover is lossless when every frame is forwardable in both modes
//! during the change: the controller gives hosts a destination MAC that
//! is at once a HyperCube address (its first 32 bits) and a KeyFlow path
//! id (`docs/flexforward.md`, "One MAC for both modes").
//!
//! # Which rule applies to a frame
//!
//! A frame whose outer 802.1Q tag carries a VLAN with an override uses that
//! override; else its ingress port's override; else the switch's rule. A
//! rule is a mode and a fallback: the fate of a frame the tableless mode
//! cannot forward (HyperCube: no neighbour across any differing bit, or
//! its own node without a local port; KeyFlow: a remainder that is not a
//! port) — the OpenFlow tables or a drop, both counted. A frame the mode
//! forwards to a port that is down or configured NO_FWD takes the fallback
//! too; a frame arriving on a port configured NO_RECV goes to the tables,
//! which drop it as usual. Fail-standalone mode ignores FlexForward.

use super::ops::Op;
use super::Datapath;
use graph::modules::hypercube::{Hop, HyperCube, TableError};
use graph::modules::keyflow;
use ofp::flexforward::{
    Fallback, FlexCounters, FlexError, FlexErrorCode, FlexMessage, FwMode, FwModeReply, Override,
    Scope, SetHyperCube,
};
use packet::PacketBuf;
use pipeline::{Output, Pipeline, PortTable};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A mode and the fate of what it cannot forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rule {
    pub mode: FwMode,
    pub fallback: Fallback,
}

/// The configuration as the accepted messages set it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlexConfig {
    pub switch: Rule,
    pub ports: BTreeMap<u32, Rule>,
    pub vlans: BTreeMap<u16, Rule>,
    pub hypercube: Option<SetHyperCube>,
    pub keyflow_key: Option<u32>,
}

/// Switch-wide counters, added to once per batch by the workers.
#[derive(Debug, Default)]
pub struct SharedCounters {
    pub hypercube_fwd: AtomicU64,
    pub keyflow_fwd: AtomicU64,
    pub fallback_table: AtomicU64,
    pub fallback_drop: AtomicU64,
}

impl SharedCounters {
    fn read(&self) -> FlexCounters {
        FlexCounters {
            hypercube_fwd: self.hypercube_fwd.load(Ordering::Relaxed),
            keyflow_fwd: self.keyflow_fwd.load(Ordering::Relaxed),
            fallback_table: self.fallback_table.load(Ordering::Relaxed),
            fallback_drop: self.fallback_drop.load(Ordering::Relaxed),
        }
    }
}

/// The control side's state (module comment).
#[derive(Debug, Default)]
pub struct FlexControl {
    pub config: FlexConfig,
    pub counters: Arc<SharedCounters>,
}

/// The configuration compiled for the workers (module comment).
#[derive(Debug)]
pub struct FlexState {
    switch: Rule,
    ports: BTreeMap<u32, Rule>,
    vlans: BTreeMap<u16, Rule>,
    /// The node and the port of its own node's frames (0: fallback).
    hypercube: Option<(HyperCube, u32)>,
    keyflow_key: Option<u32>,
    counters: Arc<SharedCounters>,
}

/// What happens to one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The OpenFlow tables.
    Table,
    /// Out of this port, forwarded by a tableless mode.
    Port(u32),
    Drop,
}

/// Per-batch tallies, added to the shared counters once per batch.
#[derive(Default)]
struct Tally {
    hypercube: u64,
    keyflow: u64,
    table: u64,
    drop: u64,
}

impl FlexState {
    /// The state for `config`; `None` if every frame goes to the tables.
    pub fn compile(config: &FlexConfig, counters: &Arc<SharedCounters>) -> Option<FlexState> {
        let tableless = |r: &Rule| r.mode != FwMode::OpenFlow;
        if !tableless(&config.switch)
            && !config.ports.values().any(tableless)
            && !config.vlans.values().any(tableless)
        {
            return None;
        }
        let hypercube = config.hypercube.as_ref().and_then(|h| {
            HyperCube::new(h.address, &h.neighbours)
                .ok()
                .map(|c| (c, h.local_port))
        });
        Some(FlexState {
            switch: config.switch,
            ports: config.ports.clone(),
            vlans: config.vlans.clone(),
            hypercube,
            keyflow_key: config.keyflow_key,
            counters: counters.clone(),
        })
    }

    #[inline]
    fn rule(&self, in_port: u32, frame: &[u8]) -> Rule {
        if !self.vlans.is_empty() {
            if let Some(r) = graph::modules::vlan::outer_vid(frame).and_then(|v| self.vlans.get(&v))
            {
                return *r;
            }
        }
        if !self.ports.is_empty() {
            if let Some(r) = self.ports.get(&in_port) {
                return *r;
            }
        }
        self.switch
    }

    /// The decision for one frame received on `in_port` (module comment).
    #[inline]
    fn decide(&self, in_port: u32, frame: &[u8], ports: &PortTable, t: &mut Tally) -> Decision {
        use ofp::port::{config, state};
        let rule = self.rule(in_port, frame);
        let usable = |p: u32| {
            p != in_port
                && ports.get(p).is_some_and(|i| {
                    i.config & (config::NO_FWD | config::PORT_DOWN) == 0
                        && i.state & state::LINK_DOWN == 0
                })
        };
        let hop = match rule.mode {
            FwMode::OpenFlow => return Decision::Table,
            _ if ports
                .get(in_port)
                .is_some_and(|i| i.config & (config::NO_RECV | config::PORT_DOWN) != 0) =>
            {
                return Decision::Table
            }
            FwMode::HyperCube => {
                self.hypercube
                    .as_ref()
                    .and_then(|(c, local)| match c.forward(frame) {
                        Hop::Port(p) => Some(p),
                        Hop::Local if *local != 0 => Some(*local),
                        _ => None,
                    })
            }
            FwMode::KeyFlow => self
                .keyflow_key
                .and_then(|k| keyflow::output_port(frame, k))
                .filter(|p| *p != 0),
        };
        match hop.filter(|p| usable(*p)) {
            Some(p) => {
                if rule.mode == FwMode::HyperCube {
                    t.hypercube += 1;
                } else {
                    t.keyflow += 1;
                }
                Decision::Port(p)
            }
            None if rule.fallback == Fallback::Drop => {
                t.drop += 1;
                Decision::Drop
            }
            None => {
                t.table += 1;
                Decision::Table
            }
        }
    }

    /// The worker's hook: forwards the frames of `bufs` (received on
    /// `in_port`) that a tableless mode forwards, and hands every run of
    /// consecutive frames for the tables to `table`, in order.
    /// `out` is the graph's `openflow`
    /// module's (`super::graph_openflow`).
    pub(crate) fn forward_batch<O: Output>(
        &self,
        pipeline: &mut Pipeline,
        bufs: &mut [PacketBuf],
        in_port: u32,
        out: &mut O,
        mut table: impl FnMut(&mut Pipeline, &mut [PacketBuf], &mut O),
    ) {
        let mut t = Tally::default();
        // Start of the current run of frames for the tables.
        let mut run = 0;
        for i in 0..bufs.len() {
            let d = match bufs.get(i) {
                Some(b) => self.decide(in_port, b.data(), &pipeline.ports, &mut t),
                None => break,
            };
            if d == Decision::Table {
                continue;
            }
            if run < i {
                if let Some(r) = bufs.get_mut(run..i) {
                    table(pipeline, r, out);
                }
            }
            run = i + 1;
            if let (Decision::Port(p), Some(b)) = (d, bufs.get(i)) {
                out.port(p, b.data(), None);
            }
        }
        if run < bufs.len() {
            if let Some(r) = bufs.get_mut(run..) {
                table(pipeline, r, out);
            }
        }
        let c = &self.counters;
        for (n, counter) in [
            (t.hypercube, &c.hypercube_fwd),
            (t.keyflow, &c.keyflow_fwd),
            (t.table, &c.fallback_table),
            (t.drop, &c.fallback_drop),
        ] {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

fn refuse(code: FlexErrorCode, what: &'static str) -> FlexError {
    FlexError::new(code, what)
}

/// The overrides of a map, in key order.
fn overrides<K: Copy>(m: &BTreeMap<K, Rule>) -> Vec<Override<K>> {
    m.iter()
        .map(|(k, r)| Override {
            key: *k,
            mode: r.mode,
            fallback: r.fallback,
        })
        .collect()
}

impl FlexControl {
    /// The configuration after `m`, validated against the switch's port
    /// numbers (`ports`, ascending); the current one is not touched.
    pub fn apply(&self, m: &FlexMessage, ports: &[u32]) -> Result<FlexConfig, FlexError> {
        use FlexErrorCode as C;
        let has_port = |p: u32| ports.binary_search(&p).is_ok();
        let mut c = self.config.clone();
        match m {
            FlexMessage::SetFwMode(s) => {
                match s.mode {
                    Some(FwMode::HyperCube) if c.hypercube.is_none() => {
                        return Err(refuse(
                            C::ModeUnconfigured,
                            "hypercube: no SET_HYPERCUBE yet",
                        ))
                    }
                    Some(FwMode::KeyFlow) if c.keyflow_key.is_none() => {
                        return Err(refuse(C::ModeUnconfigured, "keyflow: no SET_KEYFLOW yet"))
                    }
                    _ => {}
                }
                let rule = s.mode.map(|mode| Rule {
                    mode,
                    fallback: s.fallback,
                });
                match (&s.scope, rule) {
                    (Scope::Switch, Some(r)) => c.switch = r,
                    (Scope::Switch, None) => {
                        return Err(refuse(C::BadScope, "the switch scope cannot be cleared"))
                    }
                    (Scope::Ports(ports), r) => {
                        if ports.iter().any(|p| !has_port(*p)) {
                            return Err(refuse(C::BadScope, "a port the switch lacks"));
                        }
                        for p in ports {
                            match r {
                                Some(r) => c.ports.insert(*p, r),
                                None => c.ports.remove(p),
                            };
                        }
                    }
                    (Scope::Vlan(v), Some(r)) => {
                        c.vlans.insert(*v, r);
                    }
                    (Scope::Vlan(v), None) => {
                        c.vlans.remove(v);
                    }
                }
            }
            FlexMessage::SetHyperCube(h) => {
                HyperCube::new(h.address, &h.neighbours).map_err(|e| match e {
                    TableError::Duplicate(_) => {
                        refuse(C::HcDupAddress, "a neighbour address twice, or the own")
                    }
                    TableError::NotNeighbour(_) => refuse(
                        C::HcNotNeighbour,
                        "a neighbour address not one bit from the own",
                    ),
                })?;
                if h.neighbours.iter().any(|(_, p)| !has_port(*p))
                    || (h.local_port != 0 && !has_port(h.local_port))
                {
                    return Err(refuse(C::HcBadPort, "a port the switch lacks"));
                }
                c.hypercube = Some(h.clone());
            }
            FlexMessage::SetKeyFlow { key } => {
                if *key < 2 {
                    return Err(refuse(C::KfBadKey, "keyflow key must be at least 2"));
                }
                if !ports.iter().any(|p| (1..*key).contains(p)) {
                    return Err(refuse(C::KfNoPort, "no remainder of the key is a port"));
                }
                c.keyflow_key = Some(*key);
            }
            FlexMessage::GetFwMode | FlexMessage::FwModeReply(_) => {
                return Err(refuse(C::BadMessage, "not a configuration message"))
            }
        }
        Ok(c)
    }

    /// The FWMODE_REPLY describing the current state.
    pub fn reply(&self) -> FwModeReply {
        let c = &self.config;
        FwModeReply {
            mode: c.switch.mode,
            fallback: c.switch.fallback,
            hypercube: c.hypercube.clone(),
            keyflow_key: c.keyflow_key,
            ports: overrides(&c.ports),
            vlans: overrides(&c.vlans),
            counters: self.counters.read(),
        }
    }
}

impl Datapath {
    /// An OFPT_EXPERIMENTER under `ofp::flexforward::FLEX_EXPERIMENTER`:
    /// a change validated, applied and sent to the workers, or refused
    /// with an experimenter error; GET_FWMODE answered.
    pub(crate) fn flex_message(
        &mut self,
        xid: u32,
        e: &ofp::message::Experimenter,
        raw: &[u8],
    ) -> Vec<ofp::OfpMessage> {
        let error = |err: FlexError| {
            tracing::info!("flexforward message refused: {err}");
            vec![ofp::OfpMessage::new(
                xid,
                ofp::Message::Error(err.code.error_msg(raw)),
            )]
        };
        let m = match FlexMessage::decode(e.exp_type, &e.data) {
            Ok(m) => m,
            Err(err) => return error(err),
        };
        if m == FlexMessage::GetFwMode {
            let reply = FlexMessage::FwModeReply(self.flex.reply()).to_experimenter();
            return vec![ofp::OfpMessage::new(xid, ofp::Message::Experimenter(reply))];
        }
        let ports: Vec<u32> = self.ports.keys().copied().collect();
        match self.flex.apply(&m, &ports) {
            Ok(config) => {
                if config != self.flex.config {
                    self.flex.config = config;
                    let state = FlexState::compile(&self.flex.config, &self.flex.counters);
                    self.broadcast(Op::Flex(state.map(Arc::new)));
                }
                Vec::new()
            }
            Err(err) => error(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::flexforward::SetFwMode;

    fn frame(dst: [u8; 6]) -> Vec<u8> {
        let mut f = dst.to_vec();
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        f.extend_from_slice(&[0; 46]);
        f
    }

    fn ports(n: u32) -> PortTable {
        let mut t = PortTable::default();
        for p in 1..=n {
            t.insert(p, pipeline::PortInfo::default());
        }
        t
    }

    fn control() -> FlexControl {
        let mut c = FlexControl::default();
        let has = &[1, 2, 3, 4];
        for m in [
            FlexMessage::SetHyperCube(SetHyperCube {
                address: 5,
                local_port: 4,
                neighbours: vec![(4, 1), (7, 2), (1, 3)],
            }),
            FlexMessage::SetKeyFlow { key: 7 },
        ] {
            c.config = c.apply(&m, has).unwrap();
        }
        c
    }

    fn set(c: &mut FlexControl, mode: FwMode, fallback: Fallback, scope: Scope) {
        let m = FlexMessage::SetFwMode(SetFwMode {
            mode: Some(mode),
            fallback,
            scope,
        });
        c.config = c.apply(&m, &[1, 2, 3, 4]).unwrap();
    }

    #[test]
    fn decisions_per_mode_and_scope() {
        let mut c = control();
        assert!(FlexState::compile(&c.config, &c.counters).is_none());
        set(&mut c, FwMode::HyperCube, Fallback::OpenFlow, Scope::Switch);
        set(
            &mut c,
            FwMode::KeyFlow,
            Fallback::Drop,
            Scope::Ports(vec![2]),
        );
        set(
            &mut c,
            FwMode::OpenFlow,
            Fallback::OpenFlow,
            Scope::Vlan(10),
        );
        let s = FlexState::compile(&c.config, &c.counters).unwrap();
        let pt = ports(4);
        let mut t = Tally::default();
        // Node 3 from node 5 (bit 1): port 2.
        let to3 = frame([0, 0, 0, 3, 0, 0]);
        assert_eq!(s.decide(1, &to3, &pt, &mut t), Decision::Port(2));
        // Own node: the local port.
        assert_eq!(
            s.decide(1, &frame([0, 0, 0, 5, 0, 0]), &pt, &mut t),
            Decision::Port(4)
        );
        // Bit 5 only: no neighbour, to the tables.
        assert_eq!(
            s.decide(1, &frame([0, 0, 0, 0x25, 0, 0]), &pt, &mut t),
            Decision::Table
        );
        // Port 2 uses KeyFlow: (3 << 16) + x mod 7 is 6 + x mod 7.
        let kf = |x: u8| frame([0, 0, 0, 3, 0, x]);
        assert_eq!(
            s.decide(2, &kf(0), &pt, &mut t),
            Decision::Drop,
            "6: no port"
        );
        assert_eq!(s.decide(2, &kf(4), &pt, &mut t), Decision::Port(3));
        assert_eq!(
            s.decide(2, &kf(3), &pt, &mut t),
            Decision::Drop,
            "2: the ingress"
        );
        assert_eq!(
            s.decide(2, &kf(1), &pt, &mut t),
            Decision::Drop,
            "0: no port"
        );
        // VLAN 10 uses the tables, whatever the port.
        let mut tagged = to3.clone();
        tagged.splice(12..12, [0x81, 0, 0, 10]);
        assert_eq!(s.decide(2, &tagged, &pt, &mut t), Decision::Table);
        assert_eq!((t.hypercube, t.keyflow, t.table, t.drop), (2, 1, 1, 3));
    }

    #[test]
    fn refusals_change_nothing() {
        use FlexErrorCode as C;
        let c = control();
        let has = &[1, 2, 3, 4];
        let code = |m: FlexMessage| c.apply(&m, has).unwrap_err().code;
        let hc = |address, neighbours: Vec<(u32, u32)>, local_port| {
            FlexMessage::SetHyperCube(SetHyperCube {
                address,
                local_port,
                neighbours,
            })
        };
        assert_eq!(code(hc(5, vec![(4, 1), (4, 2)], 0)), C::HcDupAddress);
        assert_eq!(code(hc(5, vec![(2, 1)], 0)), C::HcNotNeighbour);
        assert_eq!(code(hc(5, vec![(4, 9)], 0)), C::HcBadPort);
        assert_eq!(code(hc(5, vec![(4, 1)], 9)), C::HcBadPort);
        assert_eq!(code(FlexMessage::SetKeyFlow { key: 0 }), C::KfBadKey);
        assert_eq!(code(FlexMessage::SetKeyFlow { key: 1 }), C::KfBadKey);
        let none = FlexControl::default();
        assert_eq!(
            none.apply(&FlexMessage::SetKeyFlow { key: 5 }, &[5, 6])
                .unwrap_err()
                .code,
            C::KfNoPort
        );
        let fw = |mode, scope| {
            FlexMessage::SetFwMode(SetFwMode {
                mode,
                fallback: Fallback::OpenFlow,
                scope,
            })
        };
        assert_eq!(
            code(fw(Some(FwMode::KeyFlow), Scope::Ports(vec![9]))),
            C::BadScope
        );
        assert_eq!(code(fw(None, Scope::Switch)), C::BadScope);
        assert_eq!(
            none.apply(&fw(Some(FwMode::HyperCube), Scope::Switch), has)
                .unwrap_err()
                .code,
            C::ModeUnconfigured
        );
        assert_eq!(code(FlexMessage::GetFwMode), C::BadMessage);
    }

    #[test]
    fn batch_keeps_order_and_hands_runs_to_the_tables() {
        use super::super::tx_queue::{ControlOut, TxQueues};
        use super::super::worker::PacketInSender;
        let mut c = control();
        set(&mut c, FwMode::HyperCube, Fallback::OpenFlow, Scope::Switch);
        let s = FlexState::compile(&c.config, &c.counters).unwrap();
        let mut pipeline = Pipeline::new(1);
        for p in 1..=4 {
            pipeline.ports.insert(p, pipeline::PortInfo::default());
        }
        // Node addresses with a marker in byte 5: to node 3 (port 2), to
        // node 0x25 (unreachable: the tables), to node 5 (the local port).
        let f = |node: u8, mark: u8| PacketBuf::from_slice(&frame([0, 0, 0, node, 0, mark]));
        let mut bufs = vec![f(3, 1), f(0x25, 2), f(0x25, 3), f(5, 4), f(0x25, 5)];
        let (tx, _rx) = std::sync::mpsc::sync_channel(1);
        let events = PacketInSender {
            tx,
            waker: Arc::default(),
        };
        let counters = super::super::ops::WorkerCounters::default();
        let learning = super::super::LearningTable::default();
        let mut queues = TxQueues::new();
        let mut out = ControlOut {
            queues: &mut queues,
            events: &events,
            counters: &counters,
            learning: &learning,
            now: 0,
        };
        let mut runs: Vec<Vec<u8>> = Vec::new();
        s.forward_batch(&mut pipeline, &mut bufs, 1, &mut out, |_, run, _| {
            runs.push(run.iter().map(|b| b.data()[5]).collect());
        });
        assert_eq!(runs, [vec![2, 3], vec![5]], "runs in order, nothing else");
        let marks = |q: &mut TxQueues, p| -> Vec<u8> {
            q.queue(p, 0).frames().iter().map(|f| f[5]).collect()
        };
        assert_eq!(marks(&mut queues, 2), [1]);
        assert_eq!(marks(&mut queues, 4), [4]);
        let got = c.counters.read();
        assert_eq!((got.hypercube_fwd, got.fallback_table), (2, 3));
    }
}
