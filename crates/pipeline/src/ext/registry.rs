//! The extensions a pipeline knows (`crate::ext`), by experimenter id.
//!
//! The pipeline keeps no list of its own: it is given an [`Extensions`]
//! value when built ([`Pipeline::with_extensions`]), and a pipeline built
//! without one knows no extension (every experimenter field, action and
//! instruction gets the spec's error). The switch makes that value from
//! its one table of extensions (`switch::datapath::extensions`, the flow
//! part of each row); a unit test passes the entries it needs, e.g.
//! `beba::EXTENSION`.
//!
//! Every look-up here is made when a flow-mod, group-mod or packet-out is
//! compiled, never per packet: a compiled action is an
//! [`ExtOp`](crate::ext::api::ExtOp) the executor runs directly.
//!
//! [`Pipeline::with_extensions`]: crate::Pipeline::with_extensions

use crate::ext::api::{ExtMatch, ExtOp, Extension, PktGen};
use ofp::action::Action;
use ofp::error::{BadActionCode, BadInstructionCode, BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use std::sync::Arc;

/// The flow-mod side of the extensions a pipeline knows (module comment):
/// their entry points, at most one per experimenter id. A clone is a
/// reference count (every replica of a pipeline holds the same list).
#[derive(Clone, Default)]
pub struct Extensions(Arc<[&'static Extension]>);

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|e| format!("{:#x}", e.experimenter)))
            .finish()
    }
}

impl FromIterator<&'static Extension> for Extensions {
    fn from_iter<I: IntoIterator<Item = &'static Extension>>(it: I) -> Self {
        Extensions(it.into_iter().collect())
    }
}

impl Extensions {
    /// The extension of an experimenter id, if the pipeline knows it.
    pub fn by_id(&self, experimenter: u32) -> Option<&'static Extension> {
        self.0
            .iter()
            .copied()
            .find(|e| e.experimenter == experimenter)
    }

    /// Every extension, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = &'static Extension> + '_ {
        self.0.iter().copied()
    }

    /// An experimenter OXM field of a flow-mod match into `m`; a field no
    /// extension knows is BAD_MATCH/BAD_FIELD.
    pub fn match_field(&self, f: &OxmField, m: &mut ExtMatch) -> Result<(), ErrorCode> {
        let bad_field = ErrorCode::BadMatch(BadMatchCode::BadField);
        let OxmField::Experimenter { experimenter, .. } = f else {
            return Err(bad_field);
        };
        let ext = self.by_id(*experimenter).ok_or(bad_field)?;
        (ext.match_field)(f, m)
    }

    /// Checks an experimenter action against its extension's state; one
    /// no extension knows is BAD_ACTION/BAD_EXPERIMENTER.
    pub fn check_action(
        &self,
        st: &crate::ext::api::ExtState,
        a: &Action,
    ) -> Result<(), ErrorCode> {
        let Action::Experimenter { experimenter, .. } = a else {
            return Ok(());
        };
        match self.by_id(*experimenter) {
            Some(ext) => (ext.check_action)(st, a),
            None => Err(ErrorCode::BadAction(BadActionCode::BadExperimenter)),
        }
    }

    /// An experimenter action compiled, `None` for one no extension
    /// knows (validation refused it before).
    pub fn compile_action(&self, a: &Action) -> Option<ExtOp> {
        let Action::Experimenter { experimenter, .. } = a else {
            return None;
        };
        (self.by_id(*experimenter)?.compile_action)(a)
    }

    /// An experimenter instruction's packet generation (template id and
    /// actions); one no extension knows is BAD_INSTRUCTION/UNSUP_INST.
    pub fn pkt_gen(&self, i: &Instruction) -> Result<PktGen, ErrorCode> {
        let unsup = ErrorCode::BadInstruction(BadInstructionCode::UnsupInst);
        let Instruction::Experimenter { experimenter, .. } = i else {
            return Err(unsup);
        };
        (self.by_id(*experimenter).ok_or(unsup)?.pkt_gen)(i)
    }

    /// The OXM fields of an extension match, every extension's.
    pub fn to_oxm(&self, m: &ExtMatch) -> Vec<OxmField> {
        self.iter().flat_map(|e| (e.to_oxm)(m)).collect()
    }
}
