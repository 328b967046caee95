//! The `Message` enum and every non-multipart message body. STUB: owned by
//! the messages helper.

use crate::error::DecodeError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    EchoRequest(Vec<u8>),
}

/// One OpenFlow 1.3 message: header fields plus typed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfpMessage {
    pub xid: u32,
    pub body: Message,
}

impl OfpMessage {
    /// Decode exactly one message from `buf` (which must hold exactly the
    /// message: framing is done by the caller, see `header::frame_len`).
    pub fn decode(_buf: &[u8]) -> Result<Self, DecodeError> {
        Err(DecodeError::bad_len("message: stub"))
    }
    /// Encode with a correct header (version 4, computed length).
    pub fn encode(&self) -> Vec<u8> {
        Vec::new()
    }
}
