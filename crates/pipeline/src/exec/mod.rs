//! The one executor of the instruction and action-set semantics (spec
//! §5.1, §5.9, §5.10, §5.12): the tables from 0 on, the instructions of
//! each matched entry in spec order (meter, apply-actions, clear-actions,
//! write-actions, write-metadata, goto-table), apply-actions executed at
//! once, the action set executed when no goto follows, groups, and the
//! reserved ports.
//!
//! Every path a packet takes through the tables runs this code: a received
//! packet (`Pipeline::process`), every packet of a batch
//! (`Pipeline::process_batch`, with the lookups its warm stages made, and
//! on the per-table way with a key made only when needed: [`lazy`]), a packet-out's actions and its TABLE resubmit. Tables are driven
//! through [`TableKind`] (see `crate::table_kind`): the table looks the
//! packet up and hands over the matched entry's compiled program; the
//! executor runs it. Specialisation lives in the tables (their lookup
//! structures) and in the compiled programs (fused ops), not here.
//!
//! - [`actions`]: op lists (apply-actions, action set, buckets, packet-out).
//! - [`ports`]: the output action, standard and reserved ports.
//! - [`group`]: the group action and its buckets.
//! - [`lazy`]: the key made only when a step needs it, lookups from the
//!   frame meanwhile.
//! - [`frame_ops`]: the ops that run on the frame with the key not made
//!   (pop-VLAN, MAC/IPv4/port set-fields, NAT, outputs, next hops, a
//!   group of one bucket at the tail, a SELECT one hashed from the frame).
//! - [`trip`]: the short way for a packet read from its frame whose trip
//!   is goto-only entries ending in one output or one action list.
//!
//! Everything the datapath emits goes through [`Output`]; the caller (the
//! switch) turns it into I/O and counts port rx/tx.

mod actions;
mod frame_ops;
mod group;
mod lazy;
mod ports;
mod trip;

use lazy::parse_lazy;
pub(crate) use lazy::Lazy;
use lazy::LazyKey;

use crate::action_set::ActionSet;
use crate::flow_hash::flow_hash;
use crate::meter::Verdict;
use crate::output::{Output, PacketInEvent};
use crate::pipeline::Pipeline;
use crate::program::{Op, Program};
use crate::table::Nanos;
use crate::table_kind::{Applied, TableKind};
use ofp::action::Action;
use ofp::message::packet_in_reason;
use ofp::oxm::{Match, OxmField};
use ofp::port::{config, port_no};
use packet::{Field, FlowKey, PacketBuf, RewriteError};

/// Lookups already made for a packet (by `Pipeline::process_batch`) with
/// the key the packet enters table 0 with: per table id, the position
/// found there (`u32::MAX`: no match). Used only while the packet's key
/// still agrees with that key on the fields the table matches on: when
/// none of the entries run so far may have written one of them
/// (`Program::writes`).
pub(crate) type Hint<'a> = Option<&'a [(u32, u32)]>;

/// The lookup `hint` holds for table `table`: `Some` of the position found
/// there (`None`: no match), or `None` when none was made for it.
#[inline(always)]
pub(crate) fn hinted(hint: Hint<'_>, table: u8) -> Option<Option<usize>> {
    let &(_, pos) = hint?.iter().find(|&&(t, _)| t == u32::from(table))?;
    Some((pos != u32::MAX).then_some(pos as usize))
}

/// How deep group chains and TABLE resubmits may nest.
pub(crate) const MAX_DEPTH: u8 = 16;

/// State carried through one packet's trip.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    pub(crate) in_port: u32,
    pub(crate) now: Nanos,
    pub(crate) queue: Option<u32>,
    pub(crate) table_id: u8,
    pub(crate) cookie: u64,
    /// Actions of a table-miss entry: controller output has reason NO_MATCH.
    pub(crate) miss: bool,
    pub(crate) packet_out: bool,
    pub(crate) depth: u8,
}

impl Ctx {
    /// The state of a packet entering table 0 from `in_port` (no entry
    /// matched yet: cookie all ones).
    #[inline(always)]
    pub(crate) fn received(in_port: u32, now: Nanos) -> Ctx {
        Ctx {
            in_port,
            now,
            queue: None,
            table_id: 0,
            cookie: u64::MAX,
            miss: false,
            packet_out: false,
            depth: 0,
        }
    }
}

/// Whether to go on after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// The packet was dropped (invalid TTL).
    Stop,
}

/// The packet-in match: the pipeline fields of the packet.
pub(crate) fn pipeline_match(k: &FlowKey) -> Match {
    let mut f = vec![OxmField::InPort(k.in_port)];
    if k.in_phy_port != k.in_port {
        f.push(OxmField::InPhyPort(k.in_phy_port));
    }
    if k.metadata != 0 {
        f.push(OxmField::Metadata(k.metadata, None));
    }
    if k.has(Field::TunnelId) {
        f.push(OxmField::TunnelId(k.tunnel_id, None));
    }
    Match::new(f)
}

impl Pipeline {
    /// Runs the packet through the tables from table 0 on.
    ///
    /// The tables are moved out of `self` for the duration (a swap of the
    /// `Vec`'s three words, no copy), so the matched entry's program can be
    /// read in place while actions change the rest of the pipeline (meters,
    /// groups, scratch buffers) through `&mut self`: no reference count per
    /// packet. Nothing the actions do reaches the tables: output to TABLE
    /// only resubmits from packet-out, which does not run inside this.
    pub(crate) fn run_tables(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ctx: Ctx,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        let mut tables = std::mem::take(&mut self.tables);
        self.run_tables_in(&mut tables, pkt, key, ctx, hint, None, out);
        self.put_tables_back(tables);
    }

    /// `run_tables` with the tables moved out by the caller. `lazy`:
    /// `key` holds only the pipeline fields yet (see [`Lazy`]).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn run_tables_in<T: TableKind>(
        &mut self,
        tables: &mut [T],
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        mut ctx: Ctx,
        hint: Hint<'_>,
        lazy: Lazy<'_>,
        out: &mut impl Output,
    ) {
        let mut lazy = LazyKey::new(lazy);
        // The action set, made when the first write-actions comes (most
        // packets never have one: no set to initialise for them). `None`
        // stands for the empty set.
        let mut set: Option<ActionSet> = None;
        // The key fields the entries run so far may have changed (since
        // the lookups of `hint` were made).
        let mut written = packet::FieldSet::EMPTY;
        let mut table_id = 0u8;
        loop {
            let len = pkt.len();
            let Some(table) = tables.get_mut(usize::from(table_id)) else {
                return;
            };
            // A table with entries matching an extension field, or one
            // an extension looks every packet up in (a BEBA stateful
            // table), is looked up with the extension's values in the
            // key, never in advance (`crate::ext`).
            let found = if table.has_ext() || self.ext_table_active(table_id) {
                parse_lazy(pkt, key, &mut lazy);
                self.ext_values(table_id, key, ctx.now).write(key);
                table.lookup(key)
            } else {
                // A lookup made beforehand for this table with a key that
                // agrees with this one on every field the table matches on
                // gives the same answer (tables do not change meanwhile).
                // So does a lookup from the frame as it came.
                let fresh = written.is_empty() || !written.intersects(table.match_fields());
                let known = if fresh { hinted(hint, table_id) } else { None };
                let answered = match known {
                    Some(found) => Some(table.lookup_known(found)),
                    None => lazy
                        .for_lookup(written, table.match_fields())
                        .and_then(|frame| table.lookup_frame(frame)),
                };
                match answered {
                    Some(found) => found,
                    None => {
                        parse_lazy(pkt, key, &mut lazy);
                        table.lookup(key)
                    }
                }
            };
            // Table miss without a table-miss entry: drop (1.3 default).
            let Some(idx) = found else {
                return;
            };
            let Some(Applied {
                program,
                cookie,
                miss,
            }) = table.apply(idx, len, ctx.now)
            else {
                return;
            };
            ctx.table_id = table_id;
            ctx.cookie = cookie;
            ctx.miss = miss;

            // Spec order: meter, apply-actions, clear-actions,
            // write-actions, write-metadata, goto-table (the program holds
            // them in that order).
            let Program {
                meter,
                apply,
                clear,
                write,
                metadata,
                goto,
                writes,
                pkt_gen,
                ..
            } = program;
            written.insert_all(*writes);
            if let Some(m) = *meter {
                parse_lazy(pkt, key, &mut lazy);
                if self.meters.apply_to_packet(m, pkt, key, ctx.now) == Verdict::Drop {
                    return;
                }
            }
            // Nothing looks at the packet after this list when no table
            // follows and the action set will be empty: its last action
            // may then change the packet for good (see `execute_group`)
            // or hand the buffer over (`Output::port_final`).
            let tail = goto.is_none() && write.is_none() && (*clear || set.is_none());
            if let Some([Op::Output { port, max_len }]) = apply.as_deref() {
                // The commonest action list of all, one output (an L2
                // table's entries, a port-based patch): straight to the
                // output, as `execute_ops` would, without the op loop. (A
                // standard port reads nothing of the key.)
                if *port >= ofp::port::port_no::IN_PORT {
                    parse_lazy(pkt, key, &mut lazy);
                }
                self.output_as(tail, pkt, key, *port, *max_len, &ctx, out);
            } else if let Some(ops) = apply {
                // Its first ops may run on the frame alone, the key kept
                // lazy (`frame_ops`).
                let done = match pkt_gen {
                    None => self.ops_on_frame(pkt, key, &mut lazy, ops, &ctx, tail, out),
                    Some(_) => 0,
                };
                if let Some(rest) = ops.get(done..).filter(|r| !r.is_empty()) {
                    parse_lazy(pkt, key, &mut lazy);
                    if self.execute_ops(pkt, key, rest, &mut ctx, tail, out) == Flow::Stop {
                        return;
                    }
                }
            }
            if let Some((ext, template, ops)) = pkt_gen {
                self.generate(*ext, *template, ops, ctx.now, out);
            }
            if *clear {
                set = None;
            }
            if let Some(ops) = write {
                set.get_or_insert_with(ActionSet::new).write(ops);
            }
            if let Some((v, mask)) = *metadata {
                key.metadata = (key.metadata & !mask) | (v & mask);
            }
            match *goto {
                Some(next) if next > table_id => table_id = next,
                _ => break,
            }
        }
        let Some(set) = set else {
            return;
        };
        parse_lazy(pkt, key, &mut lazy);
        // The set's group comes last of all (its output is left out then):
        // each op may be treated as the tail.
        set.for_each(|op| {
            self.execute_ops(pkt, key, std::slice::from_ref(op), &mut ctx, true, out)
                == Flow::Continue
        });
    }
}

/// Fused ops (`program::fuse`) against the ops they stand for, one by
/// one: same packet bytes, key, flow result and emitted events.
#[cfg(test)]
mod fuse_tests;

/// The one-action lists `execute_ops` runs straight (a group, a pop-VLAN,
/// a NAT's rewrite) against the same action run by the op loop (the list
/// with an [`Op::Nop`] in front, which the straight dispatch does not
/// take): same events, frames, results and counters, with a table, an
/// action set or nothing after the list.
#[cfg(test)]
mod direct_tests;

/// `Output::port_final` for tail outputs only, with the right bytes.
#[cfg(test)]
mod final_tests;

/// The ops run on the frame with the key lazy (`frame_ops`) against
/// `process`: frames, events, counters, and the key made when needed.
#[cfg(test)]
mod frame_tests;
