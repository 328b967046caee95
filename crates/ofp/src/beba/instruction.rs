//! IN_SWITCH_PKT_GEN: an OFPIT_EXPERIMENTER instruction under BEBA's id
//! that builds a packet from template `pkttmp_id` and runs `actions` on
//! it.
//!
//! ```text
//! type 0xffff u16 | len u16 | experimenter u32 | instr_type u32 (0) |
//! pad 4 | pkttmp_id u32 | pad 4 | actions ...        (24 + actions)
//! ```

use super::error::{BebaDecodeError, BebaErrorCode};
use super::BEBA_EXPERIMENTER;
use crate::action::{decode_actions, encode_actions, Action};
use crate::instruction::Instruction;
use crate::wire::{Reader, Writer};

/// `ofp_exp_instructions`.
pub mod instr_type {
    pub const IN_SWITCH_PKT_GEN: u32 = 0;
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InSwitchPktGen {
    pub pkttmp_id: u32,
    /// Actions as in APPLY_ACTIONS.
    pub actions: Vec<Action>,
}

impl InSwitchPktGen {
    /// The BEBA instruction in a generic instruction; `None` if it is not
    /// a BEBA experimenter instruction.
    pub fn from_instruction(i: &Instruction) -> Option<Result<InSwitchPktGen, BebaDecodeError>> {
        match i {
            Instruction::Experimenter {
                experimenter: BEBA_EXPERIMENTER,
                data,
            } => Some(Self::decode(data)),
            _ => None,
        }
    }

    /// Decode the data after the instruction's experimenter id.
    pub fn decode(data: &[u8]) -> Result<InSwitchPktGen, BebaDecodeError> {
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let ty = r.u32("beba instruction: instr_type").map_err(short)?;
        if ty != instr_type::IN_SWITCH_PKT_GEN {
            return Err(BebaDecodeError::beba(
                BebaErrorCode::BadExpInstruction,
                "beba instruction: instr_type",
            ));
        }
        r.pad(4).map_err(short)?;
        let pkttmp_id = r.u32("in_switch_pkt_gen: pkttmp_id").map_err(short)?;
        r.pad(4).map_err(short)?;
        let n = r.remaining();
        let actions = decode_actions(&mut r, n)?;
        Ok(InSwitchPktGen { pkttmp_id, actions })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(instr_type::IN_SWITCH_PKT_GEN);
        w.put_zeros(4);
        w.put_u32(self.pkttmp_id);
        w.put_zeros(4);
        encode_actions(&self.actions, w);
    }

    /// The generic instruction carrying this one.
    pub fn to_instruction(&self) -> Instruction {
        let mut data = Vec::new();
        self.encode(&mut data);
        Instruction::Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            data,
        }
    }
}
