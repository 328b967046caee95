//! Multipart requests and replies (spec §7.3.5). STUB: owned by the multipart helper.

use crate::error::DecodeError;
use crate::wire::Reader;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartRequest {
    pub flags: u16,
}

impl MultipartRequest {
    /// Decode from the bytes after `ofp_header`.
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("multipart: stub"))
    }
    /// Encode the bytes after `ofp_header`.
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultipartReply {
    pub flags: u16,
}

impl MultipartReply {
    pub fn decode(_r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("multipart: stub"))
    }
    pub fn encode(&self, _w: &mut Vec<u8>) {}
}
