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
//! something else, which costs time, never correctness). The lookups go
//! through the tables' [`TableKind::find_many`]. The run stage is the one
//! executor `process` uses (`crate::exec`), packet after packet in batch
//! order, so outputs, counters, meters and packet-ins are exactly those
//! of per-packet processing.
//!
//! Pipelines of few entries skip the warm stages (everything is in cache
//! already and the extra passes would only cost); they run exactly as
//! `process`.
//!
//! A pipeline whose table 0 can answer from frames goes the per-table
//! way instead (`crate::per_table`), whatever the size of its tables: its
//! IPv4 TCP/UDP frames are looked up from their bytes table by table (in
//! the warm stages' `walk` for big pipelines, by the executor otherwise)
//! and their keys are made only when a step needs one; its other frames
//! are parsed and run as above.

use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::port::PortTable;
use crate::program::Program;
use crate::table::{FlowTable, Nanos};
use crate::table_kind::TableKind;
use packet::{FlowKey, PacketBuf, ParseError};

/// Packets per stage; longer batches are cut into chunks of this many
/// (the keys of a chunk live on the stack).
pub use crate::chunk::CHUNK;

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
pub(crate) const WARM_DEPTH: usize = 4;

/// "No table" / "no entry" in the warm stages' per-packet arrays.
pub(crate) const NONE: u32 = u32::MAX;

/// Per packet of a chunk, the lookups made in advance: (table id,
/// position or `NONE`) per table along its gotos (`crate::exec::Hint`).
pub(crate) type Seen = [[(u32, u32); WARM_DEPTH]; CHUNK];

/// `IDENTITY[i] == i`: the warm stages' `place` when the list needs no
/// grouping.
const IDENTITY: [u8; CHUNK] = {
    let mut a = [0u8; CHUNK];
    let mut i = 0;
    while i < CHUNK {
        a[i] = i as u8;
        i += 1;
    }
    a
};

/// What the parse stage decided about a packet.
#[derive(Debug, Clone, Copy)]
enum Admit {
    /// Goes to table 0.
    Run,
    /// Dropped silently (port config, fragment with `frag_drop`).
    Drop,
    /// Malformed (dropped; the caller counts it).
    Bad(ParseError),
}

impl Pipeline {
    /// Runs `bufs` (all received on `in_port`) through the tables at
    /// `now`, in order, with the same effect as calling
    /// [`Pipeline::process`] on each in turn (module comment). After each
    /// packet `done(ports, out, index, result)` is called with the port
    /// table and what `process` would have returned.
    ///
    /// Never inlined: one call per batch costs nothing, and
    /// `scripts/instructions_per_packet.sh` counts this function's work.
    #[inline(never)]
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
        let refuses = self.refuses(in_port);
        // The per-table way (`crate::per_table`) when table 0 can answer
        // from the frames (`refuses`: the general path drops the packets).
        let per_table = !refuses && self.per_table_serves();
        if !warm && !per_table {
            self.run_small(bufs, in_port, now, out, refuses, &mut done);
        } else {
            self.run_chunks(bufs, in_port, now, out, per_table, warm, &mut done);
        }
    }

    /// `process_batch` for a pipeline that needs no warming and does not
    /// go the per-table way: packet by packet, as `process`, with the
    /// tables moved out once for the whole batch (see `run_tables`;
    /// moving them per packet made every packet reload the `Vec` just
    /// stored back, a store-forwarding stall of ~4 ns). `refuses`: the
    /// port drops every packet unseen.
    #[inline(always)]
    fn run_small<O: Output>(
        &mut self,
        bufs: &mut [PacketBuf],
        in_port: u32,
        now: Nanos,
        out: &mut O,
        refuses: bool,
        done: &mut impl FnMut(&PortTable, &mut O, usize, Result<(), ParseError>),
    ) {
        let mut tables = std::mem::take(&mut self.tables);
        for (i, buf) in bufs.iter_mut().enumerate() {
            let r = match refuses {
                true => Ok(()),
                false => self.process_in(&mut tables, buf, in_port, now, out),
            };
            done(&self.ports, out, i, r);
        }
        self.put_tables_back(tables);
    }

    /// `process_batch` chunk by chunk: the per-table way's chunks
    /// (`per_table`, warmed or not), or the parse and the warm stages,
    /// then every packet in order (module comment).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn run_chunks<O: Output>(
        &mut self,
        bufs: &mut [PacketBuf],
        in_port: u32,
        now: Nanos,
        out: &mut O,
        per_table: bool,
        warm: bool,
        done: &mut impl FnMut(&PortTable, &mut O, usize, Result<(), ParseError>),
    ) {
        let refuses = self.refuses(in_port);
        for (c, chunk) in bufs.chunks_mut(CHUNK).enumerate() {
            let base = c * CHUNK;
            if per_table {
                self.run_per_table(chunk, base, in_port, now, out, warm, done);
                continue;
            }
            let mut keys = [FlowKey::new(in_port); CHUNK];
            let mut admit = [Admit::Drop; CHUNK];
            // `run[..r]`: the indices of the packets admitted to table 0
            // (the ones to warm).
            let mut run = [0u8; CHUNK];
            let mut r = 0;
            if !refuses {
                for (i, ((buf, key), a)) in chunk
                    .iter()
                    .zip(keys.iter_mut())
                    .zip(admit.iter_mut())
                    .enumerate()
                {
                    *a = match self.admit(buf, key) {
                        Ok(true) => {
                            run[r] = i as u8;
                            r += 1;
                            Admit::Run
                        }
                        Ok(false) => Admit::Drop,
                        Err(e) => Admit::Bad(e),
                    };
                }
            }
            let n = chunk.len();
            let mut seen = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
            self.ext_read_ahead(&keys[..n], &run[..r]);
            self.warm(&keys[..n], &run[..r], &mut seen);
            let mut tables = std::mem::take(&mut self.tables);
            for (i, ((buf, key), a)) in chunk.iter_mut().zip(keys.iter_mut()).zip(admit).enumerate()
            {
                let r = match a {
                    Admit::Run => {
                        let hint = Some(&seen[i][..]);
                        self.run_from_table_0(&mut tables, buf, key, now, hint, out);
                        Ok(())
                    }
                    Admit::Drop => Ok(()),
                    Admit::Bad(e) => Err(e),
                };
                done(&self.ports, out, base + i, r);
            }
            self.put_tables_back(tables);
        }
    }

    /// Whether the tables (or table 0's state table, whose lines the
    /// extensions read ahead: `ext_read_ahead`) are big enough for
    /// warming to pay.
    fn worth_warming(&self) -> bool {
        cfg!(test)
            || self.tables.iter().map(|t| t.len()).sum::<usize>() >= WARM_MIN_ENTRIES
            || self.ext_worth_warming()
    }

    /// The warm stages (module comment) for the packets `run` (indices in
    /// the chunk of `keys`, at most `CHUNK`). `seen[i]` receives packet
    /// i's lookups: (table id, position or NONE) per table visited, for
    /// the run stage to reuse.
    fn warm(&self, keys: &[FlowKey], run: &[u8], seen: &mut Seen) {
        self.walk(run, (0, 0), seen, |t, order, found| {
            TableKind::find_many(t, keys, order, found);
            true
        });
    }

    /// The warm stages for the packets `run`, whose lookups `look(table,
    /// packets, found)` makes (with their keys: `warm`; from their
    /// frames: `crate::per_table`). A table `look` cannot answer
    /// (`false`) ends its packets' walk there, nothing recorded.
    /// `(start, first)`: the table the packets start at and the step of
    /// `seen` its lookups go to (`(0, 0)`; the per-table way starts
    /// after a table 0 it answered once for the whole chunk).
    pub(crate) fn walk(
        &self,
        run: &[u8],
        (start, first): (u8, usize),
        seen: &mut Seen,
        look: impl Fn(&FlowTable, &[u8], &mut [u32]) -> bool,
    ) {
        // The packets still followed: `live[..m]` are their indices in
        // the chunk, `at[k]` the table `live[k]` is at. A packet leaves
        // the list when it misses or its entry has no goto onwards, so
        // the loops below visit only packets with work left, and the
        // steps stop when none has. `same`: every packet of the list is
        // at one table (then the list needs no grouping: l3's and
        // lb_acl's packets are all at table 0, then all at table 1).
        let mut live = [0u8; CHUNK];
        let mut at = [start; CHUNK];
        let mut m = run.len().min(CHUNK);
        live[..m].copy_from_slice(&run[..m]);
        let mut same = true;
        // Everything read is folded in here and handed to `black_box`, so
        // the reads cannot be optimised away.
        let mut sink = 0u64;
        for step in first..WARM_DEPTH {
            if m == 0 {
                break;
            }
            // Stage 1: look every key up, table by table (the packets of a
            // chunk may be at different tables after different gotos).
            // Each table is handed the packets at it, a group, so that its
            // loops visit those only (with packets spread over many
            // tables, gateway's ten per-CE tables, loops over the whole
            // list per table cost more than the lookups). The groups are
            // laid out one after the other in `order` (packet indices);
            // `place[w]` is where `order[w]` is in the list, `ends[..g]`
            // where each group ends and `tabs[..g]` its table. The list
            // itself keeps batch order (packets of neighbouring indices
            // often have neighbouring entries, which the hardware
            // prefetches better in order).
            let mut ends = [0u8; CHUNK];
            let mut tabs = [0u8; CHUNK];
            let mut grouped = [0u8; CHUNK];
            let mut perm = [0u8; CHUNK];
            let g;
            let (order, place) = if same {
                ends[0] = m as u8;
                tabs[0] = at[0];
                g = 1;
                (&live, &IDENTITY)
            } else {
                // The packets by table, as chains through the list:
                // `last[t]` is the last place in the list at table t,
                // `before[k]` the place before k at the same table (NIL:
                // none).
                const NIL: u8 = u8::MAX;
                let mut last = [NIL; 256];
                let mut before = [NIL; CHUNK];
                let mut n_tabs = 0;
                for (k, (&t, b)) in at[..m].iter().zip(&mut before).enumerate() {
                    let l = &mut last[usize::from(t)];
                    if *l == NIL {
                        tabs[n_tabs] = t;
                        n_tabs += 1;
                    }
                    *b = *l;
                    *l = k as u8;
                }
                // Lay the groups out (a group in reverse list order,
                // which does not matter).
                let mut w = 0;
                for (&t, end) in tabs[..n_tabs].iter().zip(&mut ends) {
                    let mut k = last[usize::from(t)];
                    while let (Some(&j), Some(&b)) =
                        (live.get(usize::from(k)), before.get(usize::from(k)))
                    {
                        grouped[w] = j;
                        perm[w] = k;
                        w += 1;
                        k = b;
                    }
                    *end = w as u8;
                }
                g = n_tabs;
                (&grouped, &perm)
            };
            // `found[w]`: the position `order[w]` matched, or NONE.
            // `answered[x]`: group x was looked up.
            let mut found = [NONE; CHUNK];
            let mut answered = [false; CHUNK];
            let mut s = 0;
            for ((&e, &t_id), a) in ends[..g].iter().zip(&tabs).zip(&mut answered) {
                let e = usize::from(e);
                if let Some(t) = self.tables.get(usize::from(t_id)) {
                    *a = look(t, &order[s..e], &mut found[s..e]);
                }
                s = e;
            }
            // Stage 2: record every lookup in `seen`, and read every
            // matched entry (its cache line: the counters and the program
            // pointer the run stage reads, see `HotEntry`). `progs[k]`:
            // the program `live[k]` matched (None: a miss).
            let mut progs: [Option<&Program>; CHUNK] = [None; CHUNK];
            let mut s = 0;
            for ((&e, &t_id), &a) in ends[..g].iter().zip(&tabs).zip(&answered) {
                let e = usize::from(e);
                if !a {
                    s = e;
                    continue;
                }
                if let (Some(t), Some(os), Some(fs), Some(ps)) = (
                    self.tables.get(usize::from(t_id)),
                    order.get(s..e),
                    found.get(s..e),
                    place.get(s..e),
                ) {
                    for ((&j, &f), &k) in os.iter().zip(fs).zip(ps) {
                        if let Some(slot) = seen.get_mut(usize::from(j)) {
                            slot[step] = (u32::from(t_id), f);
                        }
                        // (`hot` of NONE is `None`.)
                        if let Some(p) = progs.get_mut(usize::from(k)) {
                            *p = t.program_at(f as usize);
                        }
                    }
                }
                s = e;
            }
            // Stage 3: read every program (both ends of it) and its first
            // op; move on to the goto table. The packets that go on are
            // packed to the front of the list (in place: a packet's new
            // place is never after its old one).
            let mut next_m = 0;
            for (k, p) in progs[..m].iter().enumerate() {
                let Some(p) = p else {
                    continue;
                };
                sink ^= p.metadata.map_or(0, |(v, _)| v);
                for ops in [&p.apply, &p.write].into_iter().flatten() {
                    sink ^= ops.first().map_or(0, op_tag);
                }
                match p.goto {
                    Some(next) if next > at[k] => {
                        live[next_m] = live[k];
                        at[next_m] = next;
                        next_m += 1;
                    }
                    _ => {}
                }
            }
            m = next_m;
            same = at[..m].iter().all(|&t| t == at[0]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::action::Action;
    use ofp::instruction::Instruction;
    use ofp::message::{flow_mod_command, FlowMod};
    use ofp::oxm::OxmField;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    /// (table, priority, match kind, value, goto: how many tables on, 0
    /// for none)
    type RuleSpec = (u8, u16, u8, u8, u8);

    /// A rule of `spec` for a pipeline of 6 tables: gotos to any later
    /// table, so the packets of a chunk end up at different tables (the
    /// grouping of stage 1), which `process_batch_equals_process` (gotos
    /// to the next table only) does not exercise.
    fn rule(&(table, priority, kind, v, on): &RuleSpec) -> FlowMod {
        let udp = vec![
            OxmField::EthType(0x0800),
            OxmField::IpProto(17),
            OxmField::UdpDst(u16::from(v % 4)),
        ];
        let match_ = match kind {
            0 => vec![],
            1 => vec![OxmField::InPort(u32::from(v % 3) + 1)],
            2 => vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(Ipv4Addr::new(10, 0, 0, v % 16), None),
            ],
            _ => udp,
        };
        let mut instructions = vec![Instruction::ApplyActions(vec![Action::Output {
            port: 2,
            max_len: 0,
        }])];
        if on > 0 && table + on < 6 {
            instructions.push(Instruction::GotoTable(table + on));
        }
        crate::tests::fm(flow_mod_command::ADD, table, priority, match_, instructions)
    }

    /// The key of a UDP frame to 10.0.0.`a` port `dport` from `in_port`.
    fn key(in_port: u32, a: u8, dport: u16) -> FlowKey {
        let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1]);
        f.extend_from_slice(&[10, 0, 0, a]);
        f.extend_from_slice(&1000u16.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&[0, 8, 0, 0]);
        let mut k = FlowKey::new(in_port);
        let _ = packet::parse(&f, &mut k);
        k
    }

    proptest! {
        /// `warm` records, for every packet it is given, the lookups
        /// along the gotos of its unmodified key, table by table, as a
        /// plain walk with `FlowTable::find` does; nothing for the others.
        #[test]
        fn warm_follows_the_gotos(
            rules in proptest::collection::vec(
                (0u8..6, 0u16..4, 0u8..4, any::<u8>(), 0u8..4),
                0..60,
            ),
            packets in proptest::collection::vec(
                (1u32..4, 0u8..16, 0u16..4, proptest::bool::weighted(0.8)),
                1..=CHUNK,
            ),
        ) {
            let mut p = Pipeline::new(6);
            for i in 1..=3 {
                p.ports.insert(i, crate::port::PortInfo::up());
            }
            for r in &rules {
                let _ = p.flow_mod(&rule(r), 0);
            }
            let keys: Vec<FlowKey> = packets.iter().map(|&(i, a, d, _)| key(i, a, d)).collect();
            let run: Vec<u8> = (0..packets.len())
                .filter(|&i| packets[i].3)
                .map(|i| i as u8)
                .collect();
            let mut seen = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
            p.warm(&keys, &run, &mut seen);
            let mut want = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
            for &i in &run {
                let i = usize::from(i);
                let mut t = 0u8;
                for at in want[i].iter_mut() {
                    let Some(table) = p.tables.get(usize::from(t)) else {
                        break;
                    };
                    let Some(pos) = table.find(&keys[i]) else {
                        *at = (u32::from(t), NONE);
                        break;
                    };
                    *at = (u32::from(t), pos as u32);
                    match table.hot(pos).and_then(|e| e.program().goto) {
                        Some(next) if next > t => t = next,
                        _ => break,
                    }
                }
            }
            prop_assert_eq!(seen, want);
        }
    }
}
