//! The executor's short way for a packet read from its frame: a trip of
//! goto-only entries that ends in one output to a standard port, an
//! apply-actions list and nothing else, or a miss.
//!
//! Most packets of an L2 switch, a port patch or a router take such a
//! trip: `in_port -> goto`, then `eth_dst -> output` or `ipv4_dst ->
//! group`. Their entries write no field (`Program::only_goto`,
//! `only_output`, `apply_only`), so every table on the way answers from
//! the frame as it came, and the action set stays empty. Here such a trip
//! is first followed without counting anything (the lookups from the
//! frame, `TableKind::find_frame`, or those made in advance), then, when
//! it is one, counted table by table as the executor's loop counts it and
//! ended: the output (`send_standard_final`), or the list run on the
//! frame as far as it can (`ops_on_frame`) and the rest on the key made
//! then (`execute_ops`). No key, action set, `written` set or per-table
//! `Applied` bookkeeping is made for it. Any other trip (a program of
//! another form, a table that cannot answer from frames, an extension's
//! table, more than `TRIP_MAX` tables) runs through the executor's loop
//! with the lookups made here as hints, so nothing is looked up twice.

use super::*;
use crate::classifier::fields::FrameFields;

/// The most tables the short way follows.
const TRIP_MAX: usize = 4;

/// How a trip the short way takes ends.
#[derive(Debug, Clone, Copy)]
enum End {
    /// The last table has no entry for the packet: dropped.
    Miss,
    /// One output to this standard port.
    Output(u32),
    /// The entry's apply-actions and nothing else.
    Apply,
}

impl Pipeline {
    /// Runs a packet received on `in_port` at `now`, whose frame was read
    /// into `frame` (a frame the general parse accepts to `layer`: see
    /// [`Lazy`]), through the tables moved out into `tables`, with the
    /// lookups made in advance in `hint` (as `run_tables_in`). Same effect
    /// as `run_tables_in` with a lazy key (module comment). `key`: the
    /// caller's key holding `in_port`'s pipeline fields only
    /// (`FlowKey::new(in_port)`), used for a key made on the way and left
    /// as it came (one key for a chunk's packets, reset only after a trip
    /// that made it).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn run_framed<T: TableKind>(
        &mut self,
        tables: &mut [T],
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        frame: &FrameFields,
        layer: packet::Layer,
        in_port: u32,
        now: Nanos,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        // The tables visited: (table id, position or u32::MAX).
        let mut path = [(u32::MAX, u32::MAX); TRIP_MAX];
        let mut k = 0;
        let mut t = 0u8;
        let end = loop {
            let Some(table) = tables.get(usize::from(t)) else {
                break None;
            };
            if k == TRIP_MAX || table.has_ext() || self.ext_table_active(t) {
                break None;
            }
            let found = match hinted(hint, t) {
                Some(f) => f,
                None => match table.find_frame(frame) {
                    Some(f) => f,
                    None => break None,
                },
            };
            path[k] = (u32::from(t), found.map_or(u32::MAX, |p| p as u32));
            k += 1;
            let Some(pos) = found else {
                break Some(End::Miss);
            };
            let Some(p) = table.program_at(pos) else {
                break None;
            };
            match (p.only_goto, p.only_output) {
                (Some(next), _) if next > t => t = next,
                (_, Some(port)) => break Some(End::Output(port)),
                _ if p.apply_only => break Some(End::Apply),
                _ => break None,
            }
        };
        let Some(end) = end else {
            let ctx = Ctx::received(in_port, now);
            // The longer of the lookups made so far (both are the
            // answers for the frame as it came).
            let known = match hint {
                Some(h) if h.len() > k => hint,
                _ => Some(&path[..k]),
            };
            self.run_tables_in(tables, pkt, key, ctx, known, Some((layer, frame)), out);
            *key = FlowKey::new(in_port);
            return;
        };
        // Count the trip as the executor's loop does: per table the lookup,
        // then the entry's hit (the frame unchanged all the way). The last
        // entry's program, cookie and table-miss flag are the context of
        // an action list run at the end.
        let len = pkt.len();
        let Some((&(id, pos), before)) = path[..k].split_last() else {
            return;
        };
        for &(id, pos) in before {
            if count_hit(tables.get_mut(id as usize), pos, len, now).is_none() {
                return;
            }
        }
        // (A miss ends here: its lookup counted, nothing applied.)
        let Some(last) = count_hit(tables.get_mut(id as usize), pos, len, now) else {
            return;
        };
        match end {
            End::Miss => {}
            End::Output(port) => self.send_standard_final(pkt, port, in_port, None, out),
            End::Apply => {
                let Some(ops) = last.program.apply.as_deref() else {
                    return;
                };
                let mut ctx = Ctx::received(in_port, now);
                (ctx.table_id, ctx.cookie, ctx.miss) = (id as u8, last.cookie, last.miss);
                // Its first ops run on the frame (`frame_ops`); the rest,
                // if any, on the key made then.
                let mut lazy = LazyKey::new(Some((layer, frame)));
                let done = self.ops_on_frame(pkt, key, &mut lazy, ops, &ctx, true, out);
                if let Some(rest) = ops.get(done..).filter(|r| !r.is_empty()) {
                    parse_lazy(pkt, key, &mut lazy);
                    let _ = self.execute_ops(pkt, key, rest, &mut ctx, true, out);
                }
                // (A group's bucket may have made it too.)
                if lazy.fields().is_none() {
                    *key = FlowKey::new(in_port);
                }
            }
        }
    }
}

/// Counts in `table` a lookup that found `pos` (`u32::MAX`: nothing) and,
/// for a match, the entry's hit by a packet of `len` bytes at `now`, as
/// the executor's loop does: the entry's `Applied`, `None` for a miss (or
/// no such table).
#[inline(always)]
fn count_hit<T: TableKind>(
    table: Option<&mut T>,
    pos: u32,
    len: usize,
    now: Nanos,
) -> Option<Applied<'_>> {
    let table = table?;
    let pos = table.lookup_known((pos != u32::MAX).then_some(pos as usize))?;
    table.apply(pos, len, now)
}
