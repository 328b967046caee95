//! Instructions (spec §7.2.4). STUB: owned by the actions helper.

use crate::error::DecodeError;
use crate::wire::Reader;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Instruction {
    GotoTable(u8),
}

impl Instruction {
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("instruction: stub"))
    }
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}

/// Decode instructions until `r` is exhausted.
pub fn decode_instructions(_r: &mut Reader<'_>) -> Result<Vec<Instruction>, DecodeError> {
    Ok(Vec::new())
}

pub fn encode_instructions(insts: &[Instruction], w: &mut Vec<u8>) {
    for i in insts {
        i.encode(w);
    }
}
