//! OXM fields and `ofp_match` (spec §7.2.3). STUB: owned by the oxm helper.

use crate::error::DecodeError;
use crate::wire::Reader;

/// One OXM TLV (value and optional mask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OxmField {
    InPort(u32),
}

impl OxmField {
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("oxm: stub"))
    }
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}

/// `ofp_match` of type OFPMT_OXM: an ordered list of OXM fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Match {
    pub fields: Vec<OxmField>,
}

impl Match {
    /// Decode an `ofp_match` including its trailing padding to 8 bytes.
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("match: stub"))
    }
    /// Encode an `ofp_match` including its trailing padding to 8 bytes.
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}
