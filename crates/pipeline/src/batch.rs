//! Batched packet processing: the same result as [`Pipeline::process`]
//! packet by packet, with the memory the packets will need fetched for the
//! whole batch first.
//!
//! At large table sizes a packet's trip is a chain of dependent cache
//! misses: hash bucket (or trie nodes), handle -> position, flow entry,
//! compiled program, op list; then the same again in the next table. One
//! packet at a time, the CPU waits for each miss in turn. Here a batch is
//! handled in stages, each a short loop over the packets whose iterations
//! do not depend on one another, so the CPU overlaps the misses of many
//! packets:
//!
//! ```text
//!  parse every packet (keys on the stack, CHUNK at a time)
//!  warm, table by table along the gotos (read only, no counters):
//!     look every key up          (trie nodes level by level; hash
//!                                 subtables: locate every key's bucket,
//!                                 touch them all, then probe)
//!     read every matched entry   (counters, program pointer)
//!     read every program         (op lists, goto -> the next table)
//!  run every packet through the tables as `process` does (now hits),
//!  reusing a table's lookup unless an entry on the way wrote a field
//!  that table matches on (`Program::writes`)
//! ```
//!
//! The warm stages only read: they follow each packet's *unmodified* key
//! along the gotos, which is where it goes unless an action rewrites a
//! field a later table matches on (then that table's warm-up fetched
//! something else, which costs time, never correctness). The run stage is
//! `process` itself, packet after packet in batch order, so outputs,
//! counters, meters and packet-ins are exactly those of per-packet
//! processing.
//!
//! Pipelines of few entries skip the warm stages (everything is in cache
//! already and the extra passes would only cost); they run exactly as
//! `process`.
//!
//! Either way, when the pipeline has the shape of an L2 switch's (see
//! `crate::template`), every packet the Ethernet template fits is
//! forwarded by it, in its place in the batch, and only the others are
//! parsed, warmed and run as above.

use crate::process::Output;
use crate::program::Program;
use crate::table::Nanos;
use crate::template;
use crate::{Pipeline, PortTable};
use packet::{FlowKey, Layer, PacketBuf, ParseError};

/// Packets per stage; longer batches are cut into chunks of this many
/// (the keys of a chunk live on the stack).
pub const CHUNK: usize = 32;

/// Pipelines of fewer entries than this (all tables together) are
/// assumed to be in cache and are not warmed. Measured (pipeline
/// experiment): a 10K-entry LPM table plus small ones ran ~15% slower
/// warmed; 20K entries over two tables ran ~30% faster.
/// (Test builds warm every pipeline, so the tests exercise the warm
/// stages on small ones too.)
pub const WARM_MIN_ENTRIES: usize = 16_384;

/// `process_batch` calls between two looks at the table sizes.
pub(crate) const WARM_RECHECK: u16 = 64;

/// How many tables along the gotos the warm stages follow.
const WARM_DEPTH: usize = 4;

/// "No table" / "no entry" in the warm stages' per-packet arrays.
const NONE: u32 = u32::MAX;

/// What the parse stage decided about a packet.
#[derive(Debug, Clone, Copy)]
enum Admit {
    /// Goes to table 0.
    Run,
    /// Dropped silently (port config, fragment with `frag_drop`).
    Drop,
    /// Malformed (dropped; the caller counts it).
    Bad(ParseError),
    /// Forwarded by the Ethernet template (`crate::template`).
    Fast(template::Forward),
}

impl Pipeline {
    /// Runs `bufs` (all received on `in_port`) through the tables at
    /// `now`, in order, with the same effect as calling
    /// [`Pipeline::process`] on each in turn (module comment). After each
    /// packet `done(ports, out, index, result)` is called with the port
    /// table and what `process` would have returned.
    pub fn process_batch<O: Output>(
        &mut self,
        bufs: &mut [PacketBuf],
        in_port: u32,
        now: Nanos,
        out: &mut O,
        mut done: impl FnMut(&PortTable, &mut O, usize, Result<(), ParseError>),
    ) {
        // Looking at every table's size costs a few ns per packet at
        // small sizes: the answer is kept for `WARM_RECHECK` batches (a
        // stale answer costs speed for a moment, never correctness).
        let warm = match self.warm_check {
            (0, _) => {
                let w = self.worth_warming();
                self.warm_check = (WARM_RECHECK, w);
                w
            }
            (n, w) => {
                self.warm_check = (n - 1, w);
                w
            }
        };
        if !warm {
            // Nothing to fetch ahead: packet by packet, as `process`, with
            // the tables moved out once for the whole batch (see
            // `run_tables`; moving them per packet made every packet
            // reload the `Vec` just stored back, a store-forwarding stall
            // of ~4 ns).
            // A packet the Ethernet template fits is forwarded by it,
            // any other goes the general way (`template`).
            let refuses = self.refuses(in_port);
            let template = !refuses && self.parse_layer() == Layer::L2;
            let mut tables = std::mem::take(&mut self.tables);
            for (i, buf) in bufs.iter_mut().enumerate() {
                let fast = if template {
                    template::ethernet_table(&tables)
                        .and_then(|(t, ex)| template::classify(t, ex, buf.data(), in_port))
                } else {
                    None
                };
                let r = match (refuses, fast, tables.first_mut()) {
                    (true, _, _) => Ok(()),
                    (false, Some(f), Some(t0)) => {
                        self.forward(t0, buf, f, in_port, now, out);
                        Ok(())
                    }
                    _ => self.process_in(&mut tables, buf, in_port, now, out),
                };
                done(&self.ports, out, i, r);
            }
            self.tables = tables;
            return;
        }
        let refuses = self.refuses(in_port);
        let template = !refuses && self.parse_layer() == Layer::L2;
        for (c, chunk) in bufs.chunks_mut(CHUNK).enumerate() {
            let base = c * CHUNK;
            let mut keys = [FlowKey::new(in_port); CHUNK];
            let mut admit = [Admit::Drop; CHUNK];
            let mut fast = [None; CHUNK];
            if template {
                if let Some((t, ex)) = template::ethernet_table(&self.tables) {
                    template::classify_chunk(t, ex, chunk, in_port, &mut fast);
                }
            }
            if !refuses {
                for (((buf, key), a), f) in chunk
                    .iter()
                    .zip(keys.iter_mut())
                    .zip(admit.iter_mut())
                    .zip(fast)
                {
                    *a = match f {
                        Some(f) => Admit::Fast(f),
                        None => match self.admit(buf, key) {
                            Ok(true) => Admit::Run,
                            Ok(false) => Admit::Drop,
                            Err(e) => Admit::Bad(e),
                        },
                    };
                }
            }
            let n = chunk.len();
            let mut seen = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
            let mut live = [false; CHUNK];
            for (l, a) in live.iter_mut().zip(&admit[..n]) {
                *l = matches!(a, Admit::Run);
            }
            self.warm(&keys[..n], &live[..n], &mut seen);
            let mut tables = std::mem::take(&mut self.tables);
            for (i, ((buf, key), a)) in chunk.iter_mut().zip(keys.iter_mut()).zip(admit).enumerate()
            {
                let r = match a {
                    Admit::Run => {
                        let hint = Some(&seen[i][..]);
                        self.run_from_table_0(&mut tables, buf, key, now, hint, out);
                        Ok(())
                    }
                    Admit::Fast(f) => {
                        if let Some(t0) = tables.first_mut() {
                            self.forward(t0, buf, f, in_port, now, out);
                        }
                        Ok(())
                    }
                    Admit::Drop => Ok(()),
                    Admit::Bad(e) => Err(e),
                };
                done(&self.ports, out, base + i, r);
            }
            self.tables = tables;
        }
    }

    /// Whether the tables are big enough for warming to pay.
    fn worth_warming(&self) -> bool {
        cfg!(test) || self.tables.iter().map(|t| t.len()).sum::<usize>() >= WARM_MIN_ENTRIES
    }

    /// The warm stages (module comment) for the packets with `live` set.
    /// `seen[i]` receives packet i's lookups: (table id, position or
    /// NONE) per table visited, for the run stage to reuse.
    fn warm(&self, keys: &[FlowKey], live: &[bool], seen: &mut [[(u32, u32); WARM_DEPTH]; CHUNK]) {
        let n = keys.len().min(CHUNK);
        // Table each packet is at (NONE: finished).
        let mut table = [NONE; CHUNK];
        for (t, l) in table.iter_mut().zip(live) {
            if *l {
                *t = 0;
            }
        }
        // Everything read is folded in here and handed to `black_box`, so
        // the reads cannot be optimised away.
        let mut sink = 0u64;
        for step in 0..WARM_DEPTH {
            // Stage 1: look every key up, table by table (the packets of a
            // chunk may be at different tables after different gotos).
            // Each table is handed the list of the packets at it (their
            // indices), so that its loops visit those packets only: with
            // packets spread over many tables (gateway's ten per-CE
            // tables), loops over the whole chunk per table cost more than
            // the lookups.
            let mut pos = [NONE; CHUNK];
            let mut done = [false; CHUNK];
            let mut any = false;
            for i in 0..n {
                if done[i] || table[i] == NONE {
                    continue;
                }
                let t_id = table[i];
                let Some(t) = self.tables.get(t_id as usize) else {
                    continue;
                };
                let mut here = [0u8; CHUNK];
                let mut m = 0;
                for j in i..n {
                    if table[j] == t_id && !done[j] {
                        here[m] = j as u8;
                        m += 1;
                        done[j] = true;
                    }
                }
                let mut found = [NONE; CHUNK];
                t.find_many(&keys[..n], &here[..m], &mut found[..m]);
                for (&j, &f) in here[..m].iter().zip(&found[..m]) {
                    let j = usize::from(j);
                    pos[j] = f;
                    if let Some(at) = seen[j].get_mut(step) {
                        *at = (t_id, f);
                    }
                    any |= f != NONE;
                }
            }
            if !any {
                break;
            }
            // Stage 2: read every matched entry (its counters' line and
            // the program pointer).
            let mut progs: [Option<&Program>; CHUNK] = [None; CHUNK];
            for i in 0..n {
                let Some(e) = self
                    .tables
                    .get(table[i] as usize)
                    .and_then(|t| t.hot(pos[i] as usize))
                else {
                    continue;
                };
                // The fields the run stage reads (one cache line, see
                // `HotEntry`).
                sink ^= e.packet_count ^ e.last_hit ^ e.cookie;
                sink ^= u64::from(e.flags);
                progs[i] = Some(&e.program);
            }
            // Stage 3: read every program and its first ops; move on to
            // the goto table.
            for i in 0..n {
                let Some(p) = progs[i] else {
                    table[i] = NONE;
                    continue;
                };
                sink ^= p.meter.map_or(0, u64::from) ^ p.metadata.map_or(0, |(v, _)| v);
                for ops in [&p.apply, &p.write].into_iter().flatten() {
                    sink ^= ops.first().map_or(0, op_tag);
                }
                table[i] = match p.goto {
                    Some(next) if u32::from(next) > table[i] => u32::from(next),
                    _ => NONE,
                };
            }
        }
        std::hint::black_box(sink);
    }
}

/// A value read from an op (so reading it cannot be skipped).
fn op_tag(op: &crate::program::Op) -> u64 {
    use crate::program::Op;
    match op {
        Op::Output { port, .. } => u64::from(*port),
        Op::Group(g) => u64::from(*g),
        _ => 1,
    }
}
