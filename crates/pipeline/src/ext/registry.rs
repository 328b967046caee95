//! The registry of extensions (`crate::ext`): by experimenter id.

use crate::ext::api::{ExtMatch, ExtOp, Extension, PktGen};
use crate::ext::beba;
use ofp::action::Action;
use ofp::error::{BadInstructionCode, BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;

/// The registry (module comment).
pub static EXTENSIONS: &[Extension] = &[beba::EXTENSION];

pub(crate) fn by_id(experimenter: u32) -> Option<&'static Extension> {
    EXTENSIONS.iter().find(|e| e.experimenter == experimenter)
}

/// An experimenter OXM field of a flow-mod match into `m`; a field no
/// extension knows is BAD_MATCH/BAD_FIELD, as before there were any.
pub fn match_field(f: &OxmField, m: &mut ExtMatch) -> Result<(), ErrorCode> {
    let OxmField::Experimenter { experimenter, .. } = f else {
        return Err(ErrorCode::BadMatch(BadMatchCode::BadField));
    };
    let ext = by_id(*experimenter).ok_or(ErrorCode::BadMatch(BadMatchCode::BadField))?;
    (ext.match_field)(f, m)
}

/// An experimenter action compiled, `None` for one no extension knows.
pub fn compile_action(a: &Action) -> Option<ExtOp> {
    let Action::Experimenter { experimenter, .. } = a else {
        return None;
    };
    (by_id(*experimenter)?.compile_action)(a)
}

/// An experimenter instruction's packet generation (template id and
/// actions); one no extension knows is BAD_INSTRUCTION/UNSUP_INST.
pub fn pkt_gen(i: &Instruction) -> Result<PktGen, ErrorCode> {
    let unsup = ErrorCode::BadInstruction(BadInstructionCode::UnsupInst);
    let Instruction::Experimenter { experimenter, .. } = i else {
        return Err(unsup);
    };
    (by_id(*experimenter).ok_or(unsup)?.pkt_gen)(i)
}

/// The OXM fields of an extension match, every extension's.
pub fn to_oxm(m: &ExtMatch) -> Vec<OxmField> {
    EXTENSIONS.iter().flat_map(|e| (e.to_oxm)(m)).collect()
}
