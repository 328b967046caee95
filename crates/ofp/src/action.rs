//! Actions (spec §7.2.5). STUB: owned by the actions helper.

use crate::error::DecodeError;
use crate::wire::Reader;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Output { port: u32, max_len: u16 },
}

impl Action {
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("action: stub"))
    }
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}

/// Decode a list of actions filling exactly `len` bytes of `r`.
pub fn decode_actions(_r: &mut Reader<'_>, _len: usize) -> Result<Vec<Action>, DecodeError> {
    Ok(Vec::new())
}

pub fn encode_actions(actions: &[Action], w: &mut Vec<u8>) {
    for a in actions {
        a.encode(w);
    }
}
