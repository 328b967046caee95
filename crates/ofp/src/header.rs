//! `ofp_header` (spec §7.1) and the OFPT_* message type numbers.

use crate::error::{BadRequestCode, DecodeError};
use crate::wire::{Reader, Writer};

/// OpenFlow 1.3 wire version.
pub const OFP_VERSION: u8 = 0x04;
/// Size of `ofp_header`.
pub const HEADER_LEN: usize = 8;
/// Default TCP port for the controller channel.
pub const OFP_TCP_PORT: u16 = 6653;

/// OFPT_* message type numbers.
pub mod msg_type {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const EXPERIMENTER: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    pub const GROUP_MOD: u8 = 15;
    pub const PORT_MOD: u8 = 16;
    pub const TABLE_MOD: u8 = 17;
    pub const MULTIPART_REQUEST: u8 = 18;
    pub const MULTIPART_REPLY: u8 = 19;
    pub const BARRIER_REQUEST: u8 = 20;
    pub const BARRIER_REPLY: u8 = 21;
    pub const QUEUE_GET_CONFIG_REQUEST: u8 = 22;
    pub const QUEUE_GET_CONFIG_REPLY: u8 = 23;
    pub const ROLE_REQUEST: u8 = 24;
    pub const ROLE_REPLY: u8 = 25;
    pub const GET_ASYNC_REQUEST: u8 = 26;
    pub const GET_ASYNC_REPLY: u8 = 27;
    pub const SET_ASYNC: u8 = 28;
    pub const METER_MOD: u8 = 29;
}

/// The fixed 8-byte header in front of every OpenFlow message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub msg_type: u8,
    /// Length of the whole message, header included.
    pub length: u16,
    pub xid: u32,
}

impl Header {
    /// Decode a header and check that its length is at least 8. Whether the
    /// buffer holds `length` bytes is the framer's business (see
    /// [`frame_len`]).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let version = r.u8("header: version")?;
        let msg_type = r.u8("header: type")?;
        let length = r.u16("header: length")?;
        let xid = r.u32("header: xid")?;
        if (length as usize) < HEADER_LEN {
            return Err(DecodeError::bad_request(
                BadRequestCode::BadLen,
                "header: length below 8",
            ));
        }
        Ok(Header {
            version,
            msg_type,
            length,
            xid,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.version);
        w.put_u8(self.msg_type);
        w.put_u16(self.length);
        w.put_u32(self.xid);
    }
}

/// For a stream framer: given the bytes received so far, the length of the
/// first complete message, `Ok(None)` if more bytes are needed, or an error if
/// the header's length field is impossible (below 8).
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, DecodeError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = u16::from_be_bytes([buf[2], buf[3]]) as usize;
    if len < HEADER_LEN {
        return Err(DecodeError::bad_len("header: length below 8"));
    }
    Ok(if buf.len() >= len { Some(len) } else { None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let h = Header {
            version: 4,
            msg_type: msg_type::ECHO_REQUEST,
            length: 8,
            xid: 0xdeadbeef,
        };
        let mut w = Vec::new();
        h.encode(&mut w);
        assert_eq!(w, [4, 2, 0, 8, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Header::decode(&mut Reader::message(&w)).unwrap(), h);
    }

    #[test]
    fn framing() {
        assert_eq!(frame_len(&[4, 0, 0]).unwrap(), None);
        assert_eq!(frame_len(&[4, 0, 0, 8, 0, 0, 0, 1]).unwrap(), Some(8));
        assert_eq!(frame_len(&[4, 0, 0, 12, 0, 0, 0, 1]).unwrap(), None);
        assert!(frame_len(&[4, 0, 0, 7, 0, 0, 0, 1]).is_err());
    }
}
