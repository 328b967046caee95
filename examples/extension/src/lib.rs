//! An experimenter extension built outside the pipeline crate, in one
//! module: its action is decoded, checked, compiled and run by the
//! entry points of its row ([`EXTENSION`]) and its executor hook
//! ([`Counters`]); the pipeline names nothing of it.
//!
//! The extension counts packets: the experimenter action COUNT (id
//! [`EXPERIMENTER`], type 0) adds one to one of [`N_COUNTERS`] counters
//! each time a packet runs it, from an apply-actions list, an action set
//! or a group's bucket, on any replica of the pipeline (the counters are
//! the hook's state, which every replica shares).
//!
//! Wire form of COUNT (the bytes after the experimenter id of an
//! OFPAT_EXPERIMENTER action): `type: u16 = 0`, `counter: u16`, 4 bytes
//! of padding. A counter beyond the last is BAD_ACTION/BAD_ARGUMENT, a
//! short body or another type BAD_ACTION/BAD_EXP_TYPE; an extension a
//! pipeline was not given gets BAD_ACTION/BAD_EXPERIMENTER from the
//! pipeline itself.
//!
//! To give it to a switch, its row would go in the switch's table of
//! extensions (`switch::datapath::extensions`, `flow: Some(&EXTENSION)`);
//! the tests build pipelines with it directly.

use ofp::action::Action;
use ofp::error::{BadActionCode, BadInstructionCode, BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use packet::FlowKey;
use pipeline::ext::api::{ExtMatch, ExtOp, Extension, Hook, HookEnv, PktGen};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The example's experimenter id (no vendor's: 0x00ffff is not an
/// assigned OUI).
pub const EXPERIMENTER: u32 = 0x00ff_ff01;

/// How many counters there are.
pub const N_COUNTERS: usize = 8;

/// The action type of COUNT.
const COUNT: u16 = 0;

/// The example's row entries (`pipeline::ext::api::Extension`).
pub static EXTENSION: Extension = Extension {
    experimenter: EXPERIMENTER,
    match_field,
    compile_action,
    to_oxm,
    pkt_gen,
    hook,
};

/// The COUNT action on counter `counter`, as a controller sends it.
pub fn count_action(counter: u16) -> Action {
    let mut data = COUNT.to_be_bytes().to_vec();
    data.extend_from_slice(&counter.to_be_bytes());
    data.extend_from_slice(&[0; 4]);
    Action::Experimenter {
        experimenter: EXPERIMENTER,
        data,
    }
}

/// The counter a COUNT action names, or why the action is refused.
fn decode(a: &Action) -> Result<u16, ErrorCode> {
    let bad_type = ErrorCode::BadAction(BadActionCode::BadExpType);
    let Action::Experimenter { data, .. } = a else {
        return Err(bad_type);
    };
    match data.as_slice() {
        [t0, t1, c0, c1, ..] if u16::from_be_bytes([*t0, *t1]) == COUNT => {
            Ok(u16::from_be_bytes([*c0, *c1]))
        }
        _ => Err(bad_type),
    }
}

/// The example has no match field.
fn match_field(_: &OxmField, _: &mut ExtMatch) -> Result<(), ErrorCode> {
    Err(ErrorCode::BadMatch(BadMatchCode::BadField))
}

fn to_oxm(_: &ExtMatch) -> Vec<OxmField> {
    Vec::new()
}

/// The example has no instruction.
fn pkt_gen(_: &Instruction) -> Result<PktGen, ErrorCode> {
    Err(ErrorCode::BadInstruction(BadInstructionCode::UnsupInst))
}

/// COUNT compiled: the counter in the op's first word (the registry
/// fills in which extension the op is).
fn compile_action(a: &Action) -> Option<ExtOp> {
    let counter = decode(a).ok()?;
    Some(ExtOp {
        code: COUNT as u8,
        words: [u32::from(counter), 0, 0, 0, 0, 0],
        ..ExtOp::default()
    })
}

/// The example's executor hook: its counters, shared by every replica of
/// the pipeline that made it. It has no per-table work, so it never
/// raises the pipeline's live flag: packets of tables without COUNT pay
/// nothing for it.
#[derive(Debug, Default)]
pub struct Counters {
    counts: [AtomicU64; N_COUNTERS],
}

impl Counters {
    /// How many packets ran COUNT on counter `i`.
    pub fn get(&self, i: usize) -> u64 {
        self.counts.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

fn hook(_: &HookEnv) -> Arc<dyn Hook> {
    Arc::new(Counters::default())
}

impl Hook for Counters {
    fn execute(&self, op: &ExtOp, _key: &FlowKey, _now: u64) {
        let counter = usize::try_from(op.words[0]).unwrap_or(usize::MAX);
        if let Some(c) = self.counts.get(counter) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn check_action(&self, a: &Action) -> Result<(), ErrorCode> {
        if usize::from(decode(a)?) < N_COUNTERS {
            Ok(())
        } else {
            Err(ErrorCode::BadAction(BadActionCode::BadArgument))
        }
    }
}
