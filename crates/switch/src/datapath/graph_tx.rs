//! The `tx` module: transmits each packet on the switch port (and queue)
//! its `out_port` / `out_queue` attributes name (written by `openflow`,
//! `super::graph_openflow`), through a [`TxPorts`] of its own (the
//! worker's transmit handles: lock-free clones, one per port and queue).
//! Packets of a batch going to the same port and queue leave in one
//! `tx_batch` call; a port the switch does not have drops the packet
//! (counted in `no_port`). Takes no arguments.
//!
//! The worker keeps the module's handles in step with the port set and
//! the ports' queues (`Op::Ports`, `Op::Queues`) between runs.

use super::tx_ports::TxPorts;
use super::SwitchPorts;
use graph::{Access, Attr, AttrDecl, Batch, Ctx, Emit, Env, Layout, Module, BATCH};

/// The switch's ports, put in a worker's graph environment for `tx`.
#[derive(Clone)]
pub struct TxParts(pub SwitchPorts);

/// The module; see the module comment.
pub struct Tx {
    pub(crate) ports: TxPorts,
    out_port: Option<Attr>,
    out_queue: Option<Attr>,
    sent: u64,
    no_port: u64,
}

/// Registered as `tx`.
pub fn new(_: &graph::Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let parts = env
        .get::<TxParts>()
        .ok_or("`tx` needs the switch's ports (a switch worker's graph)")?;
    Ok(Box::new(Tx {
        ports: TxPorts::new(&parts.0),
        out_port: None,
        out_queue: None,
        sent: 0,
        no_port: 0,
    }))
}

impl Module for Tx {
    fn kind(&self) -> &'static str {
        "tx"
    }
    fn ogates(&self) -> usize {
        0
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        vec![
            AttrDecl::new("out_port", 4, Access::Read),
            AttrDecl::new("out_queue", 4, Access::Read),
        ]
    }
    fn bind(&mut self, layout: &Layout) {
        self.out_port = layout.get("out_port");
        self.out_queue = layout.get("out_queue");
    }

    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let n = batch.len().min(BATCH);
        // Each packet's (port, queue), read once.
        let mut keys = [(0u32, 0u32); BATCH];
        for (k, m) in keys.iter_mut().zip(batch.meta()) {
            *k = (
                self.out_port.map_or(0, |a| a.get_u32(m)),
                self.out_queue.map_or(0, |a| a.get_u32(m)),
            );
        }
        let keys = &keys[..n];
        let bufs = batch.bufs();
        let mut slices: [&[u8]; BATCH] = [&[]; BATCH];
        // Each (port, queue) once, with every packet for it, in order.
        let mut done = [false; BATCH];
        for i in 0..n {
            if done[i] {
                continue;
            }
            let key = keys[i];
            let mut k = 0;
            for (j, (d, kj)) in done.iter_mut().zip(keys).enumerate().skip(i) {
                if !*d && *kj == key {
                    *d = true;
                    if let (Some(s), Some(b)) = (slices.get_mut(k), bufs.get(j)) {
                        *s = b.data();
                        k += 1;
                    }
                }
            }
            let (port, queue) = key;
            if self.ports.has(port) {
                self.ports.send(port, queue, &slices[..k]);
                self.sent += k as u64;
            } else {
                self.no_port += k as u64;
            }
        }
        out.recycle_all(batch);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("sent", self.sent), ("no_port", self.no_port)]
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
}
