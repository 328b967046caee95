//! The `openflow` module: the worker's pipeline replica as one module of a
//! configured graph (`super::graph_run`).
//!
//! It owns the replica while the graph holds it: the worker applies
//! flow-, group-, meter- and port-mods to it between runs by swapping it
//! out ([`OpenFlow::pipeline_mut`], reached through
//! `graph::Module::as_any_mut`), so processing takes no lock. The replica
//! and the worker's other parts come from the graph's environment
//! ([`OpenFlowParts`], taken by the first `openflow` module: a worker
//! has one replica, so a graph has at most one `openflow` module) and go
//! back there when the module is removed.
//!
//! A batch is processed in runs of packets with the same logical ingress
//! port (`Meta::in_logical`, the OpenFlow `in_port`). Every packet output
//! leaves on gate 0 with its port and queue in the `out_port` and
//! `out_queue` attributes (4 bytes each): a packet's last output
//! (`Output::port_final`) as the received buffer itself, which a spare
//! buffer of the worker's pool replaces in the batch, any other as a copy
//! in a pool buffer; for a transmit module (`tx`, `super::graph_tx`); flooding
//! and groups may emit more than a batch, which the graph hands on in
//! further batches. Packet-ins go to the control thread, the time spent is
//! the worker's `pipeline_ns`, malformed frames are counted on their port, and in standalone
//! mode (`Op::Mode`) the module runs the learning switch instead of the
//! tables. FlexForward's forwarding modes (`Op::Flex`,
//! `super::flexforward`) hook in here: a tableless mode
//! forwards what it can, the rest goes to the tables in order. The
//! received buffers go back to the pool.

use super::flexforward::FlexState;
use super::ops::{Mode, WorkerCounters};
use super::worker::PacketInSender;
use super::{LearningTable, SwitchPorts};
use graph::{Access, Attr, AttrDecl, Batch, Ctx, Emit, Env, Layout, Meta, Module, BATCH};
use packet::PacketBuf;
use pipeline::{Nanos, Output, PacketInEvent, Pipeline, PortTable};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What an `openflow` module takes from its worker (module comment).
pub struct OpenFlowParts {
    pub pipeline: Pipeline,
    pub side: Side,
}

/// The worker's parts the pipeline's outputs need.
pub struct Side {
    pub mode: Mode,
    pub events: PacketInSender,
    pub counters: Arc<WorkerCounters>,
    pub learning: LearningTable,
    pub ports: SwitchPorts,
    /// FlexForward's modes; `None`: the tables only.
    pub flex: Option<Arc<FlexState>>,
    /// The datapath's clock: the pipeline's time. A real one is the
    /// scheduler's too (`Ctx::now`); a fake one (tests) is read here,
    /// the scheduler keeping real time (`super::graph_run::DpClock`).
    pub clock: super::Clock,
}

/// The module; see the module comment.
pub struct OpenFlow {
    /// `None` only once given back to the environment.
    parts: Option<OpenFlowParts>,
    out_port: Option<Attr>,
    out_queue: Option<Attr>,
    outputs: u64,
    packet_ins: u64,
}

/// Registered as `openflow`; takes no arguments.
pub fn new(_: &graph::Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let parts = env.take::<OpenFlowParts>().ok_or(
        "the worker's pipeline is already used by another `openflow` module (one per graph)",
    )?;
    Ok(Box::new(OpenFlow {
        parts: Some(parts),
        out_port: None,
        out_queue: None,
        outputs: 0,
        packet_ins: 0,
    }))
}

impl OpenFlow {
    /// The pipeline replica (the worker applies operations to it).
    pub fn pipeline_mut(&mut self) -> Option<&mut Pipeline> {
        self.parts.as_mut().map(|p| &mut p.pipeline)
    }

    pub fn set_mode(&mut self, mode: Mode) {
        if let Some(p) = self.parts.as_mut() {
            p.side.mode = mode;
        }
    }

    pub fn set_flex(&mut self, flex: Option<Arc<FlexState>>) {
        if let Some(p) = self.parts.as_mut() {
            p.side.flex = flex;
        }
    }

    pub fn set_ports(&mut self, ports: &SwitchPorts) {
        if let Some(p) = self.parts.as_mut() {
            p.side.ports = ports.clone();
        }
    }
}

/// The pipeline's outputs as emissions on gate 0 (module comment).
struct GraphOut<'a, 'e> {
    emit: &'a mut Emit<'e>,
    out_port: Option<Attr>,
    out_queue: Option<Attr>,
    in_port: u32,
    side: &'a Side,
    now: Nanos,
    outputs: u64,
    packet_ins: u64,
}

impl GraphOut<'_, '_> {
    #[inline]
    fn send(&mut self, port: u32, data: &[u8], queue: u32) {
        let Some(buf) = self.emit.pool.copy_of(data) else {
            return;
        };
        self.emit_out(port, buf, queue);
    }

    /// Emits `buf` on gate 0 for `port` and `queue`.
    #[inline(always)]
    fn emit_out(&mut self, port: u32, buf: PacketBuf, queue: u32) {
        let (in_port, out_port, out_queue) = (self.in_port, self.out_port, self.out_queue);
        self.outputs += 1;
        self.emit.emit_with(0, buf, |m| {
            *m = Meta::received(in_port);
            if let Some(a) = out_port {
                a.set_u32(m, port);
            }
            if let Some(a) = out_queue {
                a.set_u32(m, queue);
            }
        });
    }

    /// The learning switch (standalone mode, OFPP_NORMAL).
    fn learning_switch(&mut self, in_port: u32, data: &[u8], ports: &PortTable) {
        let side = self.side;
        side.learning
            .forward(in_port, data, ports, self.now, |p| self.send(p, data, 0));
    }
}

impl Output for GraphOut<'_, '_> {
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
        self.send(port, data, queue.unwrap_or(0));
    }

    /// The packet's last output: the received buffer itself leaves, a
    /// spare one from the pool takes its place in the batch.
    #[inline(always)]
    fn port_final(&mut self, port: u32, pkt: &mut PacketBuf, queue: Option<u32>) {
        let buf = std::mem::replace(pkt, self.emit.pool.get());
        self.emit_out(port, buf, queue.unwrap_or(0));
    }

    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.packet_ins += 1;
        self.side.events.packet_in(ev, &self.side.counters);
    }

    fn normal(&mut self, in_port: u32, data: &[u8], ports: &PortTable) {
        self.learning_switch(in_port, data, ports);
    }
}

impl Module for OpenFlow {
    fn kind(&self) -> &'static str {
        "openflow"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        vec![
            AttrDecl::new("out_port", 4, Access::Write),
            AttrDecl::new("out_queue", 4, Access::Write),
        ]
    }
    fn bind(&mut self, layout: &Layout) {
        self.out_port = layout.get("out_port");
        self.out_queue = layout.get("out_queue");
    }

    fn process(&mut self, ctx: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let Some(parts) = self.parts.as_mut() else {
            return;
        };
        // Runs of one ingress port: (port, start, end).
        let mut runs = [(0u32, 0usize, 0usize); BATCH];
        let mut r = 0;
        for (i, m) in batch.meta().iter().enumerate() {
            match runs.get_mut(r.max(1) - 1) {
                Some(last) if r > 0 && last.0 == m.in_logical => last.2 = i + 1,
                _ => {
                    if let Some(slot) = runs.get_mut(r) {
                        *slot = (m.in_logical, i, i + 1);
                        r += 1;
                    }
                }
            }
        }
        let OpenFlowParts { pipeline, side } = parts;
        let side: &Side = side;
        // The pipeline's share of the worker's busy time (`pipeline_ns`).
        let start = std::time::Instant::now();
        let now = match &side.clock {
            super::Clock::Fake(v) => v.load(Ordering::Acquire),
            super::Clock::Real(_) => ctx.now,
        };
        let mut o = GraphOut {
            emit: out,
            out_port: self.out_port,
            out_queue: self.out_queue,
            in_port: 0,
            side,
            now,
            outputs: 0,
            packet_ins: 0,
        };
        let bufs = batch.bufs_mut();
        for &(no, s, e) in &runs[..r] {
            let Some(run) = bufs.get_mut(s..e) else {
                continue;
            };
            o.in_port = no;
            match side.mode {
                Mode::Pipeline => {
                    let ports = &side.ports;
                    let table = |p: &mut Pipeline, bufs: &mut [PacketBuf], o: &mut GraphOut| {
                        p.process_batch(bufs, no, now, o, |_, _, _, r| {
                            if r.is_err() {
                                if let Some(port) = ports.get(&no) {
                                    port.rx_malformed.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        })
                    };
                    match side.flex.as_deref() {
                        Some(f) => f.forward_batch(pipeline, run, no, &mut o, table),
                        None => table(pipeline, run, &mut o),
                    }
                }
                Mode::Standalone => {
                    for buf in run.iter() {
                        o.learning_switch(no, buf.data(), &pipeline.ports);
                    }
                }
            }
        }
        self.outputs += o.outputs;
        self.packet_ins += o.packet_ins;
        side.counters
            .pipeline_ns
            .fetch_add(super::nanos(start.elapsed()), Ordering::Relaxed);
        out.recycle_all(batch);
    }

    fn release(&mut self, env: &mut Env) {
        if let Some(p) = self.parts.take() {
            env.put(p);
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("outputs", self.outputs), ("packet_ins", self.packet_ins)]
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
