//! Flow-mod semantics (spec §6.4, §7.3.4.1): validation of a flow-mod
//! against the switch state, then add / modify / modify-strict / delete /
//! delete-strict over the flow tables, and timeouts.

use crate::matcher::CompiledMatch;
use crate::pipeline::Pipeline;
use crate::program;
use crate::program::Program;
use crate::table::{ColdEntry, EntryMut, EntryRef, FlowEntry, FlowTable, HotEntry, Nanos};
use ofp::action::Action;
use ofp::error::{
    BadActionCode, BadInstructionCode, ErrorCode, FlowModFailedCode, MeterModFailedCode,
};
use ofp::group::group_id;
use ofp::group::GroupMod;
use ofp::instruction::{Instruction, TABLE_ALL};
use ofp::message::FlowRemoved;
use ofp::message::{flow_mod_command as cmd, flow_mod_flags, flow_removed_reason, FlowMod};
use ofp::meter::MeterMod;
use ofp::oxm::Match;
use ofp::port::port_no;
use packet::Layer;
use std::sync::Arc;

/// An entry taken out of a table, with why. The caller sends a
/// flow-removed message when [`RemovedFlow::wants_flow_removed`] says so.
#[derive(Debug, Clone)]
pub struct RemovedFlow {
    pub table_id: u8,
    /// One of `flow_removed_reason`.
    pub reason: u8,
    pub entry: FlowEntry,
}

impl RemovedFlow {
    /// Whether the entry was installed with OFPFF_SEND_FLOW_REM.
    pub fn wants_flow_removed(&self) -> bool {
        self.entry.hot.flags & flow_mod_flags::SEND_FLOW_REM != 0
    }

    /// The OFPT_FLOW_REMOVED body for this removal at `now`.
    pub fn to_message(&self, now: Nanos) -> FlowRemoved {
        let FlowEntry { hot, cold } = &self.entry;
        let (duration_sec, duration_nsec) = cold.duration(now);
        FlowRemoved {
            cookie: hot.cookie,
            priority: cold.priority,
            reason: self.reason,
            table_id: self.table_id,
            duration_sec,
            duration_nsec,
            idle_timeout: cold.idle_timeout,
            hard_timeout: cold.hard_timeout,
            packet_count: hot.packet_count,
            byte_count: hot.byte_count,
            match_: Match::clone(&cold.match_),
        }
    }
}

/// What an add or modify builds from its flow-mod before it touches a
/// table: the compiled match, the match as sent, the instructions and
/// their program. The authoritative copy of the pipeline builds it once
/// ([`Pipeline::flow_mod_shared`]); each worker replica replays the
/// flow-mod with it ([`Pipeline::replay_flow_mod`]), so the replicas'
/// entries share these parts with the authoritative entry (a reference
/// count each) instead of holding copies of their own.
#[derive(Debug, Clone)]
pub struct Prepared {
    compiled: CompiledMatch,
    match_: Arc<Match>,
    instructions: Arc<[Instruction]>,
    program: Arc<Program>,
    /// For an add: whether the authoritative copy found no entry with the
    /// same match and priority to replace. A replica in the same state
    /// finds none either, and skips the strict-index probe.
    fresh: bool,
}

fn fm_err(c: FlowModFailedCode) -> ErrorCode {
    ErrorCode::FlowModFailed(c)
}

/// The actions of the apply-actions and write-actions instructions.
fn entry_actions(insts: &[Instruction]) -> impl Iterator<Item = &Action> {
    insts.iter().flat_map(|i| match i {
        Instruction::ApplyActions(a) | Instruction::WriteActions(a) => a.as_slice(),
        _ => &[],
    })
}

/// The out_port / out_group filter of delete (and flow stats): the entry
/// has an output to `out_port` (unless ANY) and a group action to
/// `out_group` (unless ANY).
pub fn outputs_to(insts: &[Instruction], out_port: u32, out_group: u32) -> bool {
    let port_ok = out_port == port_no::ANY
        || entry_actions(insts)
            .any(|a| matches!(a, Action::Output { port, .. } if *port == out_port));
    let group_ok = out_group == group_id::ANY
        || entry_actions(insts).any(|a| matches!(a, Action::Group(g) if *g == out_group));
    port_ok && group_ok
}

impl Pipeline {
    /// Checks one action against the switch state: output ports must exist
    /// (or be reserved; TABLE only in packet-out), groups must exist,
    /// experimenter actions are not supported.
    pub fn check_action(&self, a: &Action, in_packet_out: bool) -> Result<(), ErrorCode> {
        let bad = |c| Err(ErrorCode::BadAction(c));
        match a {
            Action::Output { port, .. } => {
                let p = *port;
                let ok = match p {
                    port_no::TABLE => in_packet_out,
                    port_no::IN_PORT
                    | port_no::NORMAL
                    | port_no::FLOOD
                    | port_no::ALL
                    | port_no::CONTROLLER
                    | port_no::LOCAL => true,
                    _ => p != 0 && p <= port_no::MAX && self.ports.contains(p),
                };
                if ok {
                    Ok(())
                } else {
                    bad(BadActionCode::BadOutPort)
                }
            }
            Action::Group(g) if !self.groups.contains(*g) => bad(BadActionCode::BadOutGroup),
            // Queue 0 is every port's default queue; others must exist on
            // some port (`Pipeline::queue_ids`).
            Action::SetQueue(q) if *q != 0 && !self.queue_ids.contains(q) => {
                bad(BadActionCode::BadQueue)
            }
            Action::Experimenter { .. } => self.check_ext_action(a),
            _ => Ok(()),
        }
    }

    /// Checks the instructions of an add/modify into table `table_id`.
    pub fn check_instructions(&self, table_id: u8, insts: &[Instruction]) -> Result<(), ErrorCode> {
        for i in insts {
            match i {
                Instruction::GotoTable(t) => {
                    if *t <= table_id || usize::from(*t) >= self.tables.len() {
                        return Err(ErrorCode::BadInstruction(BadInstructionCode::BadTableId));
                    }
                }
                Instruction::Meter(m) => {
                    if !self.meters.contains(*m) {
                        return Err(ErrorCode::MeterModFailed(MeterModFailedCode::UnknownMeter));
                    }
                }
                Instruction::ApplyActions(acts) | Instruction::WriteActions(acts) => {
                    for a in acts {
                        self.check_action(a, false)?;
                    }
                }
                Instruction::Experimenter { .. } => {
                    // An extension's packet generation: its actions are
                    // checked as apply-actions'.
                    let (_, (_, actions)) = self.exts.pkt_gen(i)?;
                    for a in &actions {
                        self.check_action(a, false)?;
                    }
                }
                Instruction::WriteMetadata { .. } | Instruction::ClearActions => {}
            }
        }
        Ok(())
    }

    /// Applies a flow-mod at time `now`. Returns the entries removed by a
    /// delete (reason DELETE); add and modify return an empty list.
    ///
    /// A successful add or modify raises the parse depth to what its match
    /// and instructions look at (`Pipeline::parse_layer`).
    pub fn flow_mod(&mut self, fm: &FlowMod, now: Nanos) -> Result<Vec<RemovedFlow>, ErrorCode> {
        self.flow_mod_shared(fm, now).map(|(removed, _)| removed)
    }

    /// [`Pipeline::flow_mod`], also giving what an add or modify built
    /// ([`Prepared`]) for the other copies of this pipeline to replay it
    /// with ([`Pipeline::replay_flow_mod`]).
    pub fn flow_mod_shared(
        &mut self,
        fm: &FlowMod,
        now: Nanos,
    ) -> Result<(Vec<RemovedFlow>, Option<Prepared>), ErrorCode> {
        self.flow_mod_with(fm, &fm.match_, || Arc::new(fm.match_.clone()), now)
    }

    /// [`Pipeline::flow_mod_shared`] that takes what an add or modify's
    /// entry keeps out of `fm` instead of copying it: the match goes into
    /// the entry as it is, and the instructions (which the entry holds as
    /// [`Prepared::instructions`]) are dropped here. What is left of `fm`
    /// is all [`Pipeline::replay_flow_mod`] reads with the `Prepared`; a
    /// delete, or a refused flow-mod, leaves `fm` whole. (A switch's
    /// control side hands `fm` to the workers: they no longer free the
    /// match and the instruction lists the control side decoded, a free
    /// of another thread's memory each, for every flow-mod; and the match
    /// is not copied.)
    pub fn flow_mod_taking(
        &mut self,
        fm: &mut FlowMod,
        now: Nanos,
    ) -> Result<(Vec<RemovedFlow>, Option<Prepared>), ErrorCode> {
        let m = Arc::new(std::mem::take(&mut fm.match_));
        let r = self.flow_mod_with(fm, &m, || m.clone(), now);
        if matches!(r, Ok((_, Some(_)))) {
            fm.instructions = Vec::new();
        } else {
            fm.match_ = Arc::try_unwrap(m).unwrap_or_else(|m| Match::clone(&m));
        }
        r
    }

    /// `flow_mod_shared` of `fm` with its match `m` (`fm.match_` is not
    /// read); `keep` gives the match an added entry keeps.
    fn flow_mod_with(
        &mut self,
        fm: &FlowMod,
        m: &Match,
        keep: impl FnOnce() -> Arc<Match>,
        now: Nanos,
    ) -> Result<(Vec<RemovedFlow>, Option<Prepared>), ErrorCode> {
        let n_tables = self.tables.len();
        let all_tables = fm.table_id == TABLE_ALL;
        if all_tables && !matches!(fm.command, cmd::DELETE | cmd::DELETE_STRICT) {
            return Err(fm_err(FlowModFailedCode::BadTableId));
        }
        if !all_tables && usize::from(fm.table_id) >= n_tables {
            return Err(fm_err(FlowModFailedCode::BadTableId));
        }
        if fm.flags & !flow_mod_flags::ALL != 0 {
            return Err(fm_err(FlowModFailedCode::BadFlags));
        }
        let compiled = CompiledMatch::compile(m, &self.exts).map_err(|e| e.code)?;
        match fm.command {
            cmd::ADD | cmd::MODIFY | cmd::MODIFY_STRICT => {
                self.check_instructions(fm.table_id, &fm.instructions)?;
                crate::consistency::check(m, &fm.instructions)?;
                let (instructions, program) = self.program_for(&fm.instructions);
                let mut prepared = Prepared {
                    compiled,
                    match_: keep(),
                    instructions,
                    program,
                    fresh: false,
                };
                prepared.fresh = self.add_or_modify(fm, &prepared, now)?;
                Ok((Vec::new(), Some(prepared)))
            }
            cmd::DELETE | cmd::DELETE_STRICT => Ok((self.delete(fm, &compiled), None)),
            _ => Err(fm_err(FlowModFailedCode::BadCommand)),
        }
    }

    /// Applies a flow-mod that [`Pipeline::flow_mod_shared`] accepted on
    /// another copy of this pipeline (in the same state), with what it
    /// built there: nothing is validated or compiled again, and the
    /// entry shares its match, instructions and program with that copy's.
    /// Without `prepared` an add or modify is built here.
    pub fn replay_flow_mod(
        &mut self,
        fm: &FlowMod,
        prepared: Option<&Prepared>,
        now: Nanos,
    ) -> Vec<RemovedFlow> {
        match (fm.command, prepared) {
            (cmd::ADD | cmd::MODIFY | cmd::MODIFY_STRICT, Some(p)) => {
                // The other copy accepted it: the same state gives the same
                // (empty) answer here.
                let _ = self.add_or_modify(fm, p, now);
                Vec::new()
            }
            _ => self.flow_mod(fm, now).unwrap_or_default(),
        }
    }

    /// The table part of an add or modify, with its built parts. For an
    /// add, whether it replaced nothing (`Prepared::fresh`; an add of a
    /// `p` that is fresh does not look for an entry to replace).
    fn add_or_modify(&mut self, fm: &FlowMod, p: &Prepared, now: Nanos) -> Result<bool, ErrorCode> {
        // Replicas replay through here too: they agree on `ext_flows`.
        self.ext_flows |= !p.compiled.ext().is_empty() || p.program.uses_ext();
        let layer = p.compiled.layer().max(p.program.layer());
        let cookie_ok = |cookie: u64| cookie & fm.cookie_mask == fm.cookie & fm.cookie_mask;
        let table = self
            .table_mut(fm.table_id)
            .ok_or(fm_err(FlowModFailedCode::BadTableId))?;
        let mut fresh = false;
        if fm.command == cmd::ADD {
            if fm.flags & flow_mod_flags::CHECK_OVERLAP != 0
                && table
                    .entries_with_priority(fm.priority)
                    .any(|e| e.compiled.overlaps(&p.compiled))
            {
                return Err(fm_err(FlowModFailedCode::Overlap));
            }
            let mut entry = FlowEntry {
                hot: HotEntry::new(p.program.clone(), fm.cookie, fm.flags, now),
                cold: ColdEntry {
                    priority: fm.priority,
                    idle_timeout: fm.idle_timeout,
                    hard_timeout: fm.hard_timeout,
                    installed_at: now,
                    seq: 0,
                    match_: p.match_.clone(),
                    compiled: p.compiled.clone(),
                    instructions: p.instructions.clone(),
                },
            };
            // An identical entry (same match and priority) is replaced,
            // duration included; its counters carry over unless
            // RESET_COUNTS. No flow-removed is sent for it.
            let old = if p.fresh {
                None
            } else {
                table.remove_strict(&entry.cold.compiled, entry.cold.priority)
            };
            if let Some(old) = &old {
                if fm.flags & flow_mod_flags::RESET_COUNTS == 0 {
                    entry.hot.packet_count = old.hot.packet_count;
                    entry.hot.byte_count = old.hot.byte_count;
                }
            }
            table.insert(entry);
            fresh = old.is_none();
        } else {
            let reset = fm.flags & flow_mod_flags::RESET_COUNTS != 0;
            let modify = |e: EntryMut<'_>| {
                *e.instructions = p.instructions.clone();
                e.hot.set_program(p.program.clone());
                if reset {
                    e.hot.packet_count = 0;
                    e.hot.byte_count = 0;
                }
            };
            // OpenFlow 1.3: modifying nothing is not an error and adds
            // nothing.
            if fm.command == cmd::MODIFY_STRICT {
                // One probe of the strict index.
                if let Some(i) = table
                    .find_strict(&p.compiled, fm.priority)
                    .filter(|i| table.entry(*i).is_some_and(|e| cookie_ok(e.cookie())))
                {
                    table.modify_at(i, modify);
                }
            } else {
                table.for_each_where(
                    |e| cookie_ok(e.cookie()) && e.compiled.is_subsumed_by(&p.compiled),
                    modify,
                );
            }
        }
        self.need_layer(layer);
        Ok(fresh)
    }

    /// The entries a delete or delete-strict removes (reason DELETE).
    fn delete(&mut self, fm: &FlowMod, compiled: &CompiledMatch) -> Vec<RemovedFlow> {
        let cookie_ok = |cookie: u64| cookie & fm.cookie_mask == fm.cookie & fm.cookie_mask;
        let strict = fm.command == cmd::DELETE_STRICT;
        let ids: Vec<u8> = if fm.table_id == TABLE_ALL {
            (0..self.tables.len()).map(|i| i as u8).collect()
        } else {
            vec![fm.table_id]
        };
        let mut removed = Vec::new();
        for id in ids {
            let Some(table) = self.table_mut(id) else {
                continue;
            };
            let selected = |e: EntryRef<'_>| {
                cookie_ok(e.cookie()) && outputs_to(&e.instructions, fm.out_port, fm.out_group)
            };
            let gone = if strict {
                // One probe of the strict index.
                table
                    .find_strict(compiled, fm.priority)
                    .filter(|i| table.entry(*i).is_some_and(selected))
                    .and_then(|i| table.remove(i))
                    .into_iter()
                    .collect()
            } else {
                table.remove_where(|e| selected(e) && e.compiled.is_subsumed_by(compiled))
            };
            removed.extend(gone.into_iter().map(|entry| RemovedFlow {
                table_id: id,
                reason: flow_removed_reason::DELETE,
                entry,
            }));
        }
        removed
    }

    /// Removes the entries whose idle or hard timeout has passed at `now`
    /// (reason IDLE_TIMEOUT or HARD_TIMEOUT).
    pub fn expire(&mut self, now: Nanos) -> Vec<RemovedFlow> {
        let mut removed = Vec::new();
        for t in self.tables.iter_mut().filter(|t| t.has_timeouts()) {
            let id = t.id;
            let gone = t.remove_where(|e| e.expired(now).is_some());
            removed.extend(gone.into_iter().map(|entry| {
                RemovedFlow {
                    table_id: id,
                    reason: entry
                        .view()
                        .expired(now)
                        .unwrap_or(flow_removed_reason::HARD_TIMEOUT),
                    entry,
                }
            }));
        }
        removed
    }

    /// Whether any flow entry can expire (an idle or hard timeout is set).
    pub fn has_timeouts(&self) -> bool {
        self.tables.iter().any(FlowTable::has_timeouts)
    }

    /// Removes the entries whose meter instruction names one of `meters`
    /// (after a meter delete; reason DELETE).
    pub(crate) fn remove_meter_flows(&mut self, meters: &[u32]) -> Vec<RemovedFlow> {
        let mut removed = Vec::new();
        if meters.is_empty() {
            return removed;
        }
        for t in &mut self.tables {
            let id = t.id;
            let gone = t.remove_where(|e| {
                e.instructions
                    .iter()
                    .any(|i| matches!(i, Instruction::Meter(m) if meters.contains(m)))
            });
            removed.extend(gone.into_iter().map(|entry| RemovedFlow {
                table_id: id,
                reason: flow_removed_reason::DELETE,
                entry,
            }));
        }
        removed
    }

    /// Removes the entries that send to one of `groups` (after a group
    /// delete; reason GROUP_DELETE).
    pub(crate) fn remove_group_flows(&mut self, groups: &[u32]) -> Vec<RemovedFlow> {
        let mut removed = Vec::new();
        if groups.is_empty() {
            return removed;
        }
        for t in &mut self.tables {
            let id = t.id;
            let gone = t.remove_where(|e| {
                entry_actions(&e.instructions)
                    .any(|a| matches!(a, Action::Group(g) if groups.contains(g)))
            });
            removed.extend(gone.into_iter().map(|entry| RemovedFlow {
                table_id: id,
                reason: flow_removed_reason::GROUP_DELETE,
                entry,
            }));
        }
        removed
    }
}

impl Pipeline {
    /// Applies a group-mod at `now`. A delete also removes the flow entries
    /// that forward to the deleted groups; they are returned (reason
    /// GROUP_DELETE) for flow-removed messages.
    pub fn group_mod(&mut self, gm: &GroupMod, now: Nanos) -> Result<Vec<RemovedFlow>, ErrorCode> {
        if gm.command != ofp::group::command::DELETE {
            for a in gm.buckets.iter().flat_map(|b| b.actions.iter()) {
                self.check_action(a, false)?;
            }
        }
        let deleted = self.groups.apply(gm, &self.ports, &self.exts, now)?;
        if gm.command != ofp::group::command::DELETE {
            // A SELECT group hashes the flow's L3 and L4 fields.
            let select = gm.group_type == ofp::group::group_type::SELECT;
            let layer = gm
                .buckets
                .iter()
                .map(|b| program::actions_layer(&b.actions, &self.exts))
                .chain(select.then_some(Layer::L4))
                .max();
            self.need_layer(layer.unwrap_or(Layer::None));
        }
        Ok(self.remove_group_flows(&deleted))
    }

    /// Applies a meter-mod at `now`. A delete also removes the flow entries
    /// that use the deleted meters (returned with reason DELETE; OpenFlow
    /// 1.3 has no METER_DELETE reason).
    pub fn meter_mod(&mut self, mm: &MeterMod, now: Nanos) -> Result<Vec<RemovedFlow>, ErrorCode> {
        let deleted = self.meters.apply(mm, now)?;
        Ok(self.remove_meter_flows(&deleted))
    }
}
