//! A packet a template took, run in its place in the batch, with the
//! counters the general path would have kept.

use super::ethernet::*;
use super::ways::*;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::table::{FlowTable, Nanos};
use packet::PacketBuf;
impl Pipeline {
    /// Runs packet `i` of a chunk, which a template took (`f`; `ways`:
    /// what the route template (the batch's plan and the chunk's next
    /// hops) or the chain template (the chunk's ways) kept for it).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_fast(
        &mut self,
        tables: &mut [FlowTable],
        ways: Ways<'_>,
        i: usize,
        pkt: &mut PacketBuf,
        f: Fast,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        match (f, ways) {
            (Fast::Ethernet(f), _) => {
                if let Some(t0) = tables.first_mut() {
                    self.forward(t0, pkt, f, in_port, now, out);
                }
            }
            (Fast::Route, Ways::Route(plan, hops)) => {
                if let Some(hop) = hops.hops.get(i) {
                    self.route_template(tables, plan, pkt, hop, in_port, now, out);
                }
            }
            (Fast::Chain, Ways::Chain(chains)) => {
                if let Some(c) = chains.ways.get(i) {
                    self.chain_template(tables, pkt, c, in_port, now, out);
                }
            }
            // (A `Fast` comes with its template's ways.)
            (Fast::Route | Fast::Chain, _) => {}
        }
    }
}

/// Counts a lookup of `table` that found the entry at `pos`, and the
/// entry's hit, as `FlowTable::lookup` and `HotEntry::hit` do.
#[inline(always)]
pub(super) fn count(table: &mut FlowTable, pos: u32, len: usize, now: Nanos) {
    table.lookup_known(Some(pos as usize));
    if let Some(e) = table.hot_mut(pos as usize) {
        e.hit(len, now);
    }
}

/// `count` of table `t` of `tables` (if there is one).
#[inline(always)]
pub(super) fn count_in(tables: &mut [FlowTable], t: u8, pos: u32, len: usize, now: Nanos) {
    if let Some(table) = tables.get_mut(usize::from(t)) {
        count(table, pos, len, now);
    }
}

impl Pipeline {
    /// Forwards a packet the template classified (`f`, from table 0 =
    /// `table`) with the effect of the general path: the lookup and the
    /// match counted, the entry's counters, then the output as to any
    /// standard port, as the packet's last use (`send_standard_final`).
    #[inline(always)]
    pub(crate) fn forward(
        &self,
        table: &mut FlowTable,
        pkt: &mut PacketBuf,
        f: Forward,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        count(table, f.pos, pkt.len(), now);
        self.send_standard_final(pkt, f.port, in_port, None, out);
    }
}
