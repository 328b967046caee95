//! BEBA / OpenState in the pipeline (issue 31): the `state` and
//! `global_state` match fields, the actions SET_STATE, SET_GLOBAL_STATE
//! and INC_STATE, the instruction IN_SWITCH_PKT_GEN. The semantics are
//! `stateful`'s: its [`Stateful`] is BEBA's executor hook
//! (`crate::ext::api::Hook`, made by [`EXTENSION`]'s `hook`, shared by
//! every replica; the switch's control side reaches it with [`state`]).
//! This module connects them to the executor.
//!
//! - A table that is stateful (with its scopes set) is looked up with the
//!   packet's state from its state table: DEFAULT for an unknown flow,
//!   NULL when the packet lacks a lookup-scope field. The look-up is made
//!   for every packet the table sees, entries matching `state` or not:
//!   it applies due timeouts and refreshes the flow's idle timer.
//! - `global_state` is the switch's global state, in every table.
//! - A table that is not stateful gives its packets no `state`: an entry
//!   matching `state` there matches nothing.
//! - State times are microseconds: the packet's time (ns) / 1000.

use crate::ext::api::{ExtMatch, ExtOp, ExtValues, Extension, Hook, HookEnv, PktGen, Template};
use crate::ext::beba_op::BebaOp;
use crate::table::Nanos;
use ofp::action::Action;
use ofp::beba::{
    BebaAction, BebaDecodeError, BebaErrorCode, BebaField, InSwitchPktGen, Refusal,
    BEBA_EXPERIMENTER,
};
use ofp::error::{BadActionCode, BadInstructionCode, BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use packet::registry::{self, module_field, OxmId};
use packet::FlowKey;
use stateful::{Stateful, Transition};
use std::sync::Arc;

/// BEBA's flow-mod entry points (`crate::ext::api::Extension`): its row
/// in the switch's table of extensions holds them.
pub static EXTENSION: Extension = Extension {
    experimenter: BEBA_EXPERIMENTER,
    match_field,
    compile_action,
    to_oxm,
    pkt_gen,
    hook,
};

/// BEBA's hook for a pipeline: state tables for its tables, raising the
/// pipeline's flag when one is first made stateful.
fn hook(env: &HookEnv) -> Arc<dyn Hook> {
    Arc::new(Stateful::with_activity(
        env.tables,
        env.state_capacity,
        env.live.clone(),
    ))
}

/// The BEBA state of `p` (shared with every replica made after this call),
/// if `p` was built knowing BEBA.
pub fn state(p: &crate::Pipeline) -> Option<Arc<Stateful>> {
    p.hook(BEBA_EXPERIMENTER)
}

/// The key slot (`crate::ext::api::KEY_SLOTS`) of `state`.
pub const STATE_SLOT: usize = 0;
/// The key slot of `global_state`.
pub const GLOBAL_STATE_SLOT: usize = 1;

/// IN_SWITCH_PKT_GEN: template id and actions.
fn pkt_gen(i: &Instruction) -> Result<PktGen, ErrorCode> {
    match InSwitchPktGen::from_instruction(i) {
        Some(Ok(g)) => Ok((g.pkttmp_id, g.actions)),
        Some(Err(e)) => Err(match e.refusal {
            Refusal::Standard(c) => c,
            Refusal::Beba(c) => c.code(),
        }),
        None => Err(ErrorCode::BadInstruction(BadInstructionCode::UnsupInst)),
    }
}

/// A BEBA refusal as the code a flow-mod error carries: what the BEBA
/// switch answers (`docs/beba.md`), its experimenter code for a bad BEBA
/// action (BAD_EXP_ACTION, BAD_EXP_LEN) and for value bits outside a
/// state mask (BAD_MATCH_WILDCARD); BAD_MATCH/BAD_FIELD for another bad
/// BEBA field.
fn flow_mod_error(e: BebaDecodeError, action: bool) -> ErrorCode {
    match e.refusal {
        Refusal::Standard(c) => c,
        Refusal::Beba(c @ BebaErrorCode::BadMatchWildcard) => c.code(),
        Refusal::Beba(c) if action => c.code(),
        Refusal::Beba(_) => ErrorCode::BadMatch(BadMatchCode::BadField),
    }
}

/// A `state` / `global_state` field (the field registry's module rows,
/// `packet::registry::module_field`) into `m`.
fn match_field(f: &OxmField, m: &mut ExtMatch) -> Result<(), ErrorCode> {
    let bad_field = ErrorCode::BadMatch(BadMatchCode::BadField);
    let OxmField::Experimenter {
        experimenter,
        field,
        ..
    } = f
    else {
        return Err(bad_field);
    };
    let row = registry::by_oxm(OxmId::experimenter(*experimenter, *field)).ok_or(bad_field)?;
    let slot = if row.id == module_field::STATE {
        &mut m.slots[STATE_SLOT]
    } else if row.id == module_field::GLOBAL_STATE {
        &mut m.slots[GLOBAL_STATE_SLOT]
    } else {
        return Err(bad_field);
    };
    // The codec checks the payload (length, value bits outside the mask).
    let (value, mask) = match BebaField::from_oxm(f) {
        Some(Ok(BebaField::State(v, k) | BebaField::GlobalState(v, k))) => (v, k),
        Some(Err(e)) => return Err(flow_mod_error(e, false)),
        None => return Err(bad_field),
    };
    let mask = mask.unwrap_or(u32::MAX);
    if slot.is_some() {
        return Err(ErrorCode::BadMatch(BadMatchCode::DupField));
    }
    // A zero mask matches everything: no field (as for standard fields).
    *slot = (mask != 0).then_some((value & mask, mask));
    Ok(())
}

fn decode(a: &Action) -> Result<BebaAction, ErrorCode> {
    match BebaAction::from_action(a) {
        Some(r) => r.map_err(|e| flow_mod_error(e, true)),
        None => Err(ErrorCode::BadAction(BadActionCode::BadExperimenter)),
    }
}

fn compile_action(a: &Action) -> Option<ExtOp> {
    let op = match decode(a).ok()? {
        BebaAction::SetState(s) => BebaOp::SetState {
            table_id: s.table_id,
            bit: s.bit,
            transition: Transition::from(&s),
        },
        BebaAction::SetGlobalState { value, mask } => BebaOp::SetGlobalState { value, mask },
        BebaAction::IncState { table_id } => BebaOp::IncState { table_id },
    };
    Some(op.encode())
}

/// The OXM fields of an extension match.
fn to_oxm(m: &ExtMatch) -> Vec<OxmField> {
    let mask = |k: u32| (k != u32::MAX).then_some(k);
    let global =
        m.slots[GLOBAL_STATE_SLOT].map(|(v, k)| BebaField::GlobalState(v, mask(k)).to_oxm());
    let state = m.slots[STATE_SLOT].map(|(v, k)| BebaField::State(v, mask(k)).to_oxm());
    global.into_iter().chain(state).collect()
}

#[inline(always)]
fn micros(now: u64) -> u64 {
    now / 1000
}

/// States in table 0's store from which the batch path reads a chunk's
/// states ahead (`read_ahead`): below, the store fits in the caches.
const READ_AHEAD_MIN: usize = 16_384;

/// The per-packet side: a stateful table (with its scopes set) is looked
/// up with the packet's state; `global_state` in every table (module
/// comment).
impl Hook for Stateful {
    #[inline(always)]
    fn table_active(&self, id: u8) -> bool {
        self.active() && self.table(id).is_some_and(|t| t.is_enabled())
    }

    #[inline]
    fn values(&self, id: u8, key: &FlowKey, now: Nanos, v: &mut ExtValues) {
        v.slots[STATE_SLOT] = self.table(id).and_then(|t| t.lookup(key, micros(now)));
        v.slots[GLOBAL_STATE_SLOT] = Some(self.global_state());
    }

    fn execute(&self, op: &ExtOp, key: &FlowKey, now: Nanos) {
        let Some(op) = BebaOp::decode(op) else {
            return;
        };
        match op {
            BebaOp::SetState {
                table_id,
                bit,
                transition,
            } => {
                // A change is queued for the controllers (STATE_CHANGED).
                let _ = self.set_state(table_id, key, bit, &transition, micros(now));
            }
            BebaOp::SetGlobalState { value, mask } => self.set_global_state(value, mask),
            BebaOp::IncState { table_id } => {
                if let Some(t) = self.table(table_id) {
                    t.inc_state(key, micros(now));
                }
            }
        }
    }

    /// Table 0 stateful with a store large enough for reading a chunk's
    /// states ahead to pay.
    fn worth_reading_ahead(&self) -> bool {
        self.table_active(0)
            && self
                .table(0)
                .and_then(|t| t.store())
                .is_some_and(|s| s.len() >= READ_AHEAD_MIN)
    }

    /// The state lines of the packets about to enter table 0
    /// (`stateful::StateTable::read_ahead`).
    fn read_ahead(&self, keys: &[FlowKey], run: &[u8]) {
        if !self.table_active(0) {
            return;
        }
        if let Some(t) = self.table(0) {
            let ks = run.iter().filter_map(|&i| keys.get(usize::from(i)));
            std::hint::black_box(t.read_ahead(ks));
        }
    }

    /// An InSP template, run as received on `GENERATED_IN_PORT`.
    fn packet_template(&self, template: u32) -> Option<Template> {
        let frame = self.templates().get(template)?;
        Some((frame, stateful::insp::GENERATED_IN_PORT))
    }

    /// BAD_TABLE_ID for a table beyond the state tables, as the BEBA
    /// switch.
    fn check_action(&self, a: &Action) -> Result<(), ErrorCode> {
        let b = decode(a)?;
        Stateful::check_action(self, &b).map_err(BebaErrorCode::code)
    }
}
