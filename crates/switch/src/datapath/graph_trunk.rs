//! The `trunk_inc` module: a trunk's receive side in a configured graph
//! (docs/trunk.md, docs/graph.md). A task that receives a batch from the
//! worker's receive handle on the trunk (`super::trunk::TrunkRx`: its own
//! share of a split trunk, else the whole trunk through its mutex) and
//! demultiplexes it with [`demux`]: each frame's access
//! tag is removed (QinQ: an inner tag stays), `in_port` and `in_logical`
//! are set to the VLAN's logical port, the logical ports' receive counters
//! and the trunk's foreign frames are counted, and
//! frames without one of the trunk's VLANs are dropped. Everything leaves
//! on gate 0, in runs of one logical port.
//!
//! Argument: `trunk` (the trunk's interface name).
//!
//! Transmission needs no module of its own: a logical port is a port of
//! the switch's port set whose transmit handle pushes the access tag and
//! sends on the trunk, so `tx` (and flooding in `openflow`) reach it like
//! any port.

use super::trunk::{demux, TrunkRx};
use graph::{Batch, Ctx, Emit, Env, Meta, Module, Task, Usage, BATCH};
use packet::PacketBuf;

/// The trunks' receive handles of one worker, put in its graph
/// environment; a `trunk_inc` takes its trunk's and gives it back when
/// removed.
#[derive(Default)]
pub struct TrunkSources(pub Vec<TrunkRx>);

/// The module; see the module comment.
pub struct TrunkInc {
    /// `None` once given back to the environment.
    src: Option<TrunkRx>,
    /// Receive buffers, from the pool on the first run (as `port_inc`'s);
    /// those handed on are replaced from the pool.
    bufs: Vec<PacketBuf>,
    keys: [u32; ports::BATCH],
    runs: [(u32, usize, usize); ports::BATCH],
}

/// Registered as `trunk_inc`.
pub fn new(args: &graph::Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let name = graph::Args::need(args.str("trunk"), "trunk")?;
    let list = env
        .get_mut::<TrunkSources>()
        .ok_or("`trunk_inc` needs the switch's trunks (--trunk)")?;
    let i = list
        .0
        .iter()
        .position(|t| t.trunk.interface == name)
        .ok_or_else(|| format!("no trunk `{name}` (or already read by another `trunk_inc`)"))?;
    let src = list.0.swap_remove(i);
    Ok(Box::new(TrunkInc {
        src: Some(src),
        bufs: Vec::with_capacity(BATCH.min(ports::BATCH)),
        keys: [0; ports::BATCH],
        runs: [(0, 0, 0); ports::BATCH],
    }))
}

impl Module for TrunkInc {
    fn kind(&self) -> &'static str {
        "trunk_inc"
    }
    fn igates(&self) -> usize {
        0
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, _: &mut Batch, _: &mut Emit) {}
    fn task(&mut self) -> Option<&mut dyn Task> {
        Some(self)
    }
    fn take_error(&mut self) {
        if let Some(src) = &self.src {
            src.take_error();
        }
    }
    fn release(&mut self, env: &mut Env) {
        if let Some(src) = self.src.take() {
            if env.get::<TrunkSources>().is_none() {
                env.put(TrunkSources::default());
            }
            if let Some(list) = env.get_mut::<TrunkSources>() {
                list.0.push(src);
            }
        }
    }
}

impl Task for TrunkInc {
    fn run(&mut self, _: &Ctx, out: &mut Emit) -> Usage {
        let Some(src) = self.src.as_mut() else {
            return Usage::default();
        };
        while self.bufs.len() < BATCH.min(ports::BATCH) {
            self.bufs.push(out.pool.get());
        }
        let n = src.rx_batch(&mut self.bufs).min(self.bufs.len());
        let Some(got) = self.bufs.get_mut(..n) else {
            return Usage::default();
        };
        let r = demux(&src.trunk, got, &mut self.keys, &mut self.runs);
        let mut u = Usage::default();
        for &(no, s, e) in self.runs.iter().take(r) {
            for b in self.bufs.iter_mut().take(e).skip(s) {
                let buf = std::mem::replace(b, out.pool.get());
                u.packets += 1;
                u.bits += buf.len() as u64 * 8;
                out.emit(0, buf, Meta::received(no));
            }
        }
        u
    }
}
