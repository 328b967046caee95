//! The module trait, its gates, and tasks.
//!
//! A module has input gates (numbered from 0; packets arriving on any of
//! them call [`Module::process`] with the gate number) and a fixed number
//! of output gates ([`Module::ogates`]). Each output gate is connected to
//! exactly one input gate of another module; an input gate may take any
//! number of connections.
//!
//! # Emission without allocation
//!
//! The graph owns, for every module, one pending [`Batch`] per output gate
//! (allocated when the module is added). [`Module::process`] moves each
//! packet it keeps into the pending batch of the gate it chooses through
//! [`Emit::emit`], so splitting a batch into per-gate batches moves buffers
//! and allocates nothing. When `process` returns, the graph hands each
//! non-empty pending batch to the module connected to that gate, in gate
//! order, depth first (a module runs to completion on its batch before the
//! next one starts), then the emptied batches return to their slots. A
//! module emits at most one packet per gate for each packet it got, so a
//! pending batch never overflows; a module that forwards its whole batch
//! to one gate swaps it in at once ([`Emit::emit_all`]); an emission that would overflow, or to a
//! gate that does not exist, is dropped and counted.
//!
//! # Tasks
//!
//! Packets enter the graph only from tasks: modules that generate work
//! when the scheduler runs them ([`Task`]: port input, the output side of a
//! queue). A task emits through the same [`Emit`] and reports what it did
//! ([`Usage`]), which the scheduler charges to its traffic class.

use crate::batch::{Batch, Meta, Pool};
use crate::metadata::{AttrDecl, Layout};
use crate::registry::Env;
use packet::PacketBuf;

/// What a module learns from the worker running it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ctx {
    /// Now, in nanoseconds of the worker's clock.
    pub now: u64,
    /// The worker's index.
    pub worker: usize,
}

/// Work a task did in one run; charged to its traffic class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Packets it generated.
    pub packets: u64,
    /// Bits of those packets.
    pub bits: u64,
    /// Time it took (clock units: nanoseconds, or cycles with a TSC clock).
    pub cycles: u64,
}

/// The pending output batches of one module while it processes; see the
/// module comment.
pub struct Emit<'a> {
    pub(crate) gates: &'a mut [Batch],
    /// Per gate, what did not fit its pending batch (empty slice: none).
    pub(crate) spill: &'a mut [Vec<(PacketBuf, Meta)>],
    /// Spare buffers of the worker (to copy a packet, or to give one back).
    pub pool: &'a mut Pool,
    pub(crate) dropped: &'a mut u64,
}

impl<'a> Emit<'a> {
    /// An emitter over `gates` (used by the graph, and by tests that drive a
    /// module alone).
    pub fn new(gates: &'a mut [Batch], pool: &'a mut Pool, dropped: &'a mut u64) -> Emit<'a> {
        Emit {
            gates,
            spill: &mut [],
            pool,
            dropped,
        }
    }

    /// An emitter whose full gates overflow into `spill` (one list per
    /// gate) instead of dropping; the graph's own (module comment).
    pub fn with_spill(
        gates: &'a mut [Batch],
        spill: &'a mut [Vec<(PacketBuf, Meta)>],
        pool: &'a mut Pool,
        dropped: &'a mut u64,
    ) -> Emit<'a> {
        Emit {
            gates,
            spill,
            pool,
            dropped,
        }
    }

    /// Sends a packet out of output gate `gate`. A full gate overflows
    /// into its spill list if the emitter has one; a gate that does not
    /// exist, or a full one without, drops it (the buffer goes back to the
    /// pool, counted).
    #[inline(always)]
    pub fn emit(&mut self, gate: usize, buf: PacketBuf, meta: Meta) {
        self.emit_with(gate, buf, |m| *m = meta);
    }

    /// [`Emit::emit`] with the metadata written by `init` in place, into
    /// the packet's slot of the gate's batch ([`Batch::push_with`]: `init`
    /// sets every field, e.g. starting from `*m = Meta::received(p)`).
    /// The common case (a gate with room) is inlined into the caller; the
    /// rest is [`Emit::emit_full`].
    #[inline(always)]
    pub fn emit_with(&mut self, gate: usize, buf: PacketBuf, init: impl FnOnce(&mut Meta)) {
        match self.gates.get_mut(gate) {
            Some(b) if !b.is_full() => {
                if let Err(buf) = b.push_with(buf, init) {
                    self.drop_packet(buf);
                }
            }
            _ => {
                let mut meta = Meta::default();
                init(&mut meta);
                self.emit_full(gate, buf, meta);
            }
        }
    }

    /// [`Emit::emit`] to a full or missing gate.
    #[cold]
    #[inline(never)]
    fn emit_full(&mut self, gate: usize, buf: PacketBuf, meta: Meta) {
        match self.spill.get_mut(gate) {
            Some(s) if gate < self.gates.len() => s.push((buf, meta)),
            _ => self.drop_packet(buf),
        }
    }

    /// Sends the first `n` buffers of `bufs` out of `gate`, each with a
    /// copy of `meta`, leaving the others in `bufs` (a task handing on
    /// what it received): when nothing is pending on that gate the buffer
    /// vectors are exchanged ([`Batch::fill_from`]), else one emission per
    /// packet.
    #[inline]
    pub fn emit_first(&mut self, gate: usize, bufs: &mut Vec<PacketBuf>, n: usize, meta: Meta) {
        let n = n.min(bufs.len());
        if let Some(b) = self.gates.get_mut(gate) {
            if b.fill_from(bufs, n, meta) {
                return;
            }
        }
        for buf in bufs.drain(..n) {
            self.emit(gate, buf, meta);
        }
    }

    /// Sends every packet of `batch` out of `gate`, leaving `batch` empty.
    /// When nothing is pending on that gate yet this swaps the two batches
    /// (constant time, whatever the batch size): the fast path of a module
    /// that changes packets in place and forwards them all.
    #[inline]
    pub fn emit_all(&mut self, gate: usize, batch: &mut Batch) {
        match self.gates.get_mut(gate) {
            Some(p) if p.is_empty() => std::mem::swap(p, batch),
            _ => {
                for (b, m) in batch.drain() {
                    self.emit(gate, b, m);
                }
            }
        }
    }

    /// Drops a packet on purpose (the buffer goes back to the pool).
    #[inline]
    pub fn drop_packet(&mut self, buf: PacketBuf) {
        *self.dropped += 1;
        self.pool.put(buf);
    }

    /// Returns a buffer to the pool without counting a drop (a packet that
    /// left the graph, e.g. transmitted).
    #[inline]
    pub fn recycle(&mut self, buf: PacketBuf) {
        self.pool.put(buf);
    }

    /// Gives every buffer of `batch` back to the pool (not counted as
    /// dropped), leaving it empty: a module that consumed the packets.
    #[inline]
    pub fn recycle_all(&mut self, batch: &mut Batch) {
        self.pool.put_all(batch.drain_bufs());
    }

    /// Number of output gates.
    pub fn ogates(&self) -> usize {
        self.gates.len()
    }
}

/// One module of the graph; see the module comment. Implementations are
/// small: one file under `modules/`, registered by name in
/// [`crate::registry`].
pub trait Module: Send {
    /// The registered kind (e.g. `"l2_learning"`).
    fn kind(&self) -> &'static str;

    /// Number of output gates.
    fn ogates(&self) -> usize;

    /// Number of input gates (0 for a pure task such as port input).
    fn igates(&self) -> usize {
        1
    }

    /// The metadata attributes it reads and writes.
    fn attrs(&self) -> Vec<AttrDecl> {
        Vec::new()
    }

    /// Called with the resolved layout after every (re)build, before any
    /// packet: keep the [`crate::metadata::Attr`] handles you need.
    fn bind(&mut self, layout: &Layout) {
        let _ = layout;
    }

    /// Whether a cycle through this module is allowed: true only for
    /// modules that end processing and restart it from a task (a queue).
    fn breaks_cycles(&self) -> bool {
        false
    }

    /// Processes a batch that arrived on input gate `igate`: every packet
    /// is moved out of `batch` and either emitted or dropped through `out`.
    /// Packets left in `batch` are dropped by the graph.
    fn process(&mut self, ctx: &Ctx, igate: usize, batch: &mut Batch, out: &mut Emit);

    /// The task side of the module, if it generates work.
    fn task(&mut self) -> Option<&mut dyn Task> {
        None
    }

    /// Gives resources taken from the [`Env`] back (a receive handle),
    /// when the module is removed or its transaction is refused.
    fn release(&mut self, env: &mut Env) {
        let _ = env;
    }

    /// Human-readable counters (name, value) for inspection and tests.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    /// The module as [`std::any::Any`], for a host that reaches into a
    /// module of its own kind (the switch's `openflow` module, to apply
    /// flow-mods to its pipeline between runs); `None` by default.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }

    /// Reads (and so clears) a pending error of the receive handle, if the
    /// module has one: a host whose poller reported an error on the
    /// handle's descriptor calls it, so the descriptor stops polling
    /// ready (an AF_PACKET socket after its link went down). Default:
    /// nothing.
    fn take_error(&mut self) {}

    /// The port of the environment this module receives from or transmits
    /// on, by name (`port_inc`, `port_out`), so a host can tell whether a
    /// port is in use; `None` by default.
    fn port(&self) -> Option<&str> {
        None
    }
}

/// A module's work generator, run by the scheduler; see the module comment.
pub trait Task {
    /// Generates up to one batch of packets into `out` and reports them.
    /// `cycles` in the result is filled by the caller.
    fn run(&mut self, ctx: &Ctx, out: &mut Emit) -> Usage;
}

/// Counts a usage of `bufs` packets (helper for tasks).
pub fn usage_of(batch: &Batch) -> Usage {
    let bytes: usize = batch.bufs().iter().map(PacketBuf::len).sum();
    Usage {
        packets: batch.len() as u64,
        bits: bytes as u64 * 8,
        cycles: 0,
    }
}
