//! Bundles in OpenFlow 1.3: the ONF extension EXT-230, as Open vSwitch
//! implements it for 1.3 (OpenFlow 1.4 made the same messages standard as
//! OFPT_BUNDLE_CONTROL / OFPT_BUNDLE_ADD_MESSAGE).
//!
//! A controller opens a bundle, adds modification messages to it, and
//! commits it: the switch applies all of them or none. In 1.3 both
//! messages are OFPT_EXPERIMENTER messages under the ONF experimenter id
//! [`ONF_EXPERIMENTER`]:
//!
//! ```text
//! bundle control (exp_type 2300), after the 16-byte experimenter header:
//!   | bundle_id u32 | type u16 | flags u16 | properties ...
//! bundle add (exp_type 2301):
//!   | bundle_id u32 | pad u16  | flags u16 | message (ofp_header + body) | properties ...
//! ```
//!
//! The embedded message carries the same xid as the add message around it.
//! Properties (none are defined for 1.3) are kept raw and ignored.
//!
//! Bundle errors go out as OFPET_EXPERIMENTER errors with the ONF
//! experimenter id and `exp_type` 2300 + the OpenFlow 1.4
//! OFPET_BUNDLE_FAILED code ([`BundleFailedCode`]).

use crate::error::{BadRequestCode, DecodeError, ErrorMsg};
use crate::header::{Header, HEADER_LEN, OFP_VERSION};
use crate::message::Experimenter;
use crate::wire::{Reader, Writer};

/// The ONF experimenter id (`ONF_EXPERIMENTER_ID`, "ONF" in ASCII).
pub const ONF_EXPERIMENTER: u32 = 0x4F4E_4600;

/// ONF `exp_type`s of the bundle messages.
pub mod exp_type {
    /// ONFT_BUNDLE_CONTROL.
    pub const CONTROL: u32 = 2300;
    /// ONFT_BUNDLE_ADD_MESSAGE.
    pub const ADD_MESSAGE: u32 = 2301;
}

/// `ofp_bundle_ctrl_type`.
pub mod ctrl_type {
    pub const OPEN_REQUEST: u16 = 0;
    pub const OPEN_REPLY: u16 = 1;
    pub const CLOSE_REQUEST: u16 = 2;
    pub const CLOSE_REPLY: u16 = 3;
    pub const COMMIT_REQUEST: u16 = 4;
    pub const COMMIT_REPLY: u16 = 5;
    pub const DISCARD_REQUEST: u16 = 6;
    pub const DISCARD_REPLY: u16 = 7;
}

/// `ofp_bundle_flags`.
pub mod flags {
    /// Apply all messages or none.
    pub const ATOMIC: u16 = 1 << 0;
    /// Apply the messages in the order they were added.
    pub const ORDERED: u16 = 1 << 1;
    /// Every defined bit.
    pub const ALL: u16 = ATOMIC | ORDERED;
}

/// OFPET_BUNDLE_FAILED codes; in 1.3 the error's `exp_type` is
/// [`BundleFailedCode::exp_type`] (2300 + code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum BundleFailedCode {
    Unknown = 0,
    Eperm = 1,
    /// Bundle id does not exist (or already exists, on open).
    BadId = 2,
    BundleExist = 3,
    /// Bundle is closed: no more messages, no second close.
    BundleClosed = 4,
    OutOfBundles = 5,
    /// Unknown control type.
    BadType = 6,
    /// Unknown flags, or flags that differ from the bundle's.
    BadFlags = 7,
    /// The embedded message's length is wrong.
    MsgBadLen = 8,
    /// The embedded message's xid differs from the add message's.
    MsgBadXid = 9,
    /// The embedded message may not be bundled.
    MsgUnsup = 10,
    MsgConflict = 11,
    /// The bundle holds as many messages as the switch accepts.
    MsgTooMany = 12,
    /// One message failed at commit (its own error was sent before).
    MsgFailed = 13,
    Timeout = 14,
    BundleInProgress = 15,
}

impl BundleFailedCode {
    pub const ALL: &'static [BundleFailedCode] = &[
        Self::Unknown,
        Self::Eperm,
        Self::BadId,
        Self::BundleExist,
        Self::BundleClosed,
        Self::OutOfBundles,
        Self::BadType,
        Self::BadFlags,
        Self::MsgBadLen,
        Self::MsgBadXid,
        Self::MsgUnsup,
        Self::MsgConflict,
        Self::MsgTooMany,
        Self::MsgFailed,
        Self::Timeout,
        Self::BundleInProgress,
    ];

    /// The 1.3 experimenter error's `exp_type`.
    pub fn exp_type(self) -> u16 {
        2300 + self as u16
    }

    /// The code of an ONF experimenter error's `exp_type`, if it is one.
    pub fn from_exp_type(exp_type: u16) -> Option<Self> {
        let code = exp_type.checked_sub(2300)?;
        Self::ALL.iter().copied().find(|c| *c as u16 == code)
    }

    /// The OFPT_ERROR body for this code, with the start of the offending
    /// request as data (as for every switch error).
    pub fn error_msg(self, request: &[u8]) -> ErrorMsg {
        ErrorMsg::Experimenter {
            exp_type: self.exp_type(),
            experimenter: ONF_EXPERIMENTER,
            data: request
                .get(..request.len().min(64))
                .unwrap_or_default()
                .to_vec(),
        }
    }

    /// The typed code of a received error, if it is an ONF bundle error.
    pub fn of_error(e: &ErrorMsg) -> Option<Self> {
        match e {
            ErrorMsg::Experimenter {
                exp_type,
                experimenter: ONF_EXPERIMENTER,
                ..
            } => Self::from_exp_type(*exp_type),
            _ => None,
        }
    }
}

/// Fixed part of the bundle control body (after the experimenter header).
pub const CTRL_LEN: usize = 8;
/// Fixed part of the bundle add body, before the embedded message.
pub const ADD_LEN: usize = 8;

/// A bundle control message (`onf_bundle_ctrl_msg`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleCtrl {
    pub bundle_id: u32,
    pub ctrl_type: u16,
    pub flags: u16,
    /// Raw properties (ignored).
    pub properties: Vec<u8>,
}

impl BundleCtrl {
    pub fn new(bundle_id: u32, ctrl_type: u16, flags: u16) -> Self {
        BundleCtrl {
            bundle_id,
            ctrl_type,
            flags,
            properties: Vec::new(),
        }
    }

    /// Decode from the experimenter data. Short is BAD_REQUEST/BAD_LEN;
    /// the control type and flags are the switch's to judge.
    pub fn decode(data: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::message(data);
        Ok(BundleCtrl {
            bundle_id: r.u32("bundle ctrl: bundle_id")?,
            ctrl_type: r.u16("bundle ctrl: type")?,
            flags: r.u16("bundle ctrl: flags")?,
            properties: r.rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.bundle_id);
        w.put_u16(self.ctrl_type);
        w.put_u16(self.flags);
        w.put_bytes(&self.properties);
    }

    /// As an OFPT_EXPERIMENTER body.
    pub fn to_experimenter(&self) -> Experimenter {
        let mut data = Vec::with_capacity(CTRL_LEN + self.properties.len());
        self.encode(&mut data);
        Experimenter {
            experimenter: ONF_EXPERIMENTER,
            exp_type: exp_type::CONTROL,
            data,
        }
    }
}

/// A bundle add message (`onf_bundle_add_msg`). `message` is the embedded
/// OpenFlow message exactly as sent (header included), decoded by the
/// receiver with [`crate::OfpMessage::decode`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleAdd {
    pub bundle_id: u32,
    pub flags: u16,
    pub message: Vec<u8>,
    /// Raw properties after the embedded message (ignored).
    pub properties: Vec<u8>,
}

impl BundleAdd {
    /// Decode from the experimenter data. The embedded message must be at
    /// least a header with a version of 4 and a length that fits
    /// (BUNDLE_FAILED/MSG_BAD_LEN otherwise, BAD_REQUEST/BAD_VERSION for
    /// another version); its xid must equal `outer_xid`
    /// (BUNDLE_FAILED/MSG_BAD_XID).
    pub fn decode(data: &[u8], outer_xid: u32) -> Result<Self, AddError> {
        let mut r = Reader::message(data);
        let fixed = |e: DecodeError| AddError::Decode(e);
        let bundle_id = r.u32("bundle add: bundle_id").map_err(fixed)?;
        r.pad(2).map_err(fixed)?;
        let flags = r.u16("bundle add: flags").map_err(fixed)?;
        if r.remaining() < HEADER_LEN {
            return Err(AddError::Bundle(BundleFailedCode::MsgBadLen));
        }
        let version = r.peek_u16_at(0, "bundle add: version").map_err(fixed)? >> 8;
        let length = usize::from(r.peek_u16_at(2, "bundle add: length").map_err(fixed)?);
        if version != u16::from(OFP_VERSION) {
            return Err(AddError::Decode(DecodeError::bad_request(
                BadRequestCode::BadVersion,
                "bundle add: inner version",
            )));
        }
        if length < HEADER_LEN || length > r.remaining() {
            return Err(AddError::Bundle(BundleFailedCode::MsgBadLen));
        }
        let message = r.bytes(length, "bundle add: message").map_err(fixed)?;
        let inner = Header::decode(&mut Reader::message(message)).map_err(fixed)?;
        if inner.xid != outer_xid {
            return Err(AddError::Bundle(BundleFailedCode::MsgBadXid));
        }
        Ok(BundleAdd {
            bundle_id,
            flags,
            message: message.to_vec(),
            properties: r.rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.bundle_id);
        w.put_zeros(2);
        w.put_u16(self.flags);
        w.put_bytes(&self.message);
        w.put_bytes(&self.properties);
    }

    /// As an OFPT_EXPERIMENTER body.
    pub fn to_experimenter(&self) -> Experimenter {
        let mut data = Vec::with_capacity(ADD_LEN + self.message.len());
        self.encode(&mut data);
        Experimenter {
            experimenter: ONF_EXPERIMENTER,
            exp_type: exp_type::ADD_MESSAGE,
            data,
        }
    }
}

/// Why a bundle add message was refused while decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddError {
    /// A standard error (BAD_REQUEST/BAD_LEN of the add message itself,
    /// BAD_VERSION of the embedded one).
    Decode(DecodeError),
    /// A bundle error.
    Bundle(BundleFailedCode),
}

/// A bundle message recognised in an OFPT_EXPERIMENTER body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BundleMsg {
    Ctrl(BundleCtrl),
    Add(BundleAdd),
}

/// Whether an experimenter body is one of the bundle messages.
pub fn is_bundle(e: &Experimenter) -> bool {
    e.experimenter == ONF_EXPERIMENTER
        && matches!(e.exp_type, exp_type::CONTROL | exp_type::ADD_MESSAGE)
}

/// Decodes a bundle message from an experimenter body with header xid
/// `xid`; `None` if it is not one ([`is_bundle`]).
pub fn decode(e: &Experimenter, xid: u32) -> Option<Result<BundleMsg, AddError>> {
    if !is_bundle(e) {
        return None;
    }
    Some(match e.exp_type {
        exp_type::CONTROL => BundleCtrl::decode(&e.data)
            .map(BundleMsg::Ctrl)
            .map_err(AddError::Decode),
        _ => BundleAdd::decode(&e.data, xid).map(BundleMsg::Add),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, OfpMessage};

    fn barrier(xid: u32) -> Vec<u8> {
        OfpMessage::new(xid, Message::BarrierRequest).encode()
    }

    #[test]
    fn ctrl_bytes() {
        let m = OfpMessage::new(
            7,
            Message::Experimenter(
                BundleCtrl::new(0x0102_0304, ctrl_type::COMMIT_REQUEST, flags::ALL)
                    .to_experimenter(),
            ),
        );
        let b = m.encode();
        assert_eq!(
            b,
            [
                4, 4, 0, 24, 0, 0, 0, 7, // header
                0x4f, 0x4e, 0x46, 0, 0, 0, 0x08, 0xfc, // ONF, 2300
                1, 2, 3, 4, 0, 4, 0, 3, // id, COMMIT_REQUEST, ATOMIC|ORDERED
            ]
        );
        let Message::Experimenter(e) = OfpMessage::decode(&b).unwrap().body else {
            panic!("not experimenter")
        };
        assert_eq!(
            decode(&e, 7).unwrap().unwrap(),
            BundleMsg::Ctrl(BundleCtrl::new(0x0102_0304, 4, 3))
        );
    }

    #[test]
    fn add_round_trip_and_checks() {
        let add = BundleAdd {
            bundle_id: 9,
            flags: flags::ATOMIC,
            message: barrier(5),
            properties: Vec::new(),
        };
        let e = add.to_experimenter();
        assert_eq!(e.exp_type, 2301);
        assert_eq!(&e.data[..8], &[0, 0, 0, 9, 0, 0, 0, 1]);
        assert_eq!(decode(&e, 5).unwrap().unwrap(), BundleMsg::Add(add.clone()));
        // xid differs from the embedded message's
        assert_eq!(
            decode(&e, 6).unwrap().unwrap_err(),
            AddError::Bundle(BundleFailedCode::MsgBadXid)
        );
        // embedded length past the end
        let mut bad = e.clone();
        bad.data[8 + 3] = 200;
        assert_eq!(
            decode(&bad, 5).unwrap().unwrap_err(),
            AddError::Bundle(BundleFailedCode::MsgBadLen)
        );
        // embedded length below a header
        bad.data[8 + 3] = 4;
        assert_eq!(
            decode(&bad, 5).unwrap().unwrap_err(),
            AddError::Bundle(BundleFailedCode::MsgBadLen)
        );
        // no embedded message at all
        let mut short = e.clone();
        short.data.truncate(8);
        assert_eq!(
            decode(&short, 5).unwrap().unwrap_err(),
            AddError::Bundle(BundleFailedCode::MsgBadLen)
        );
        // another version inside
        let mut v = e.clone();
        v.data[8] = 5;
        assert!(matches!(
            decode(&v, 5).unwrap().unwrap_err(),
            AddError::Decode(d) if d.code == crate::ErrorCode::BadRequest(BadRequestCode::BadVersion)
        ));
        // properties after the message are kept
        let mut p = e.clone();
        p.data.extend_from_slice(&[0xff, 0xff, 0, 8, 1, 2, 3, 4]);
        let Some(Ok(BundleMsg::Add(a))) = decode(&p, 5) else {
            panic!("decodes")
        };
        assert_eq!(a.properties.len(), 8);
        assert_eq!(a.message, barrier(5));
    }

    #[test]
    fn short_bodies_are_bad_len_and_others_are_not_bundles() {
        let e = Experimenter {
            experimenter: ONF_EXPERIMENTER,
            exp_type: exp_type::CONTROL,
            data: vec![0; 7],
        };
        assert!(matches!(
            decode(&e, 0).unwrap().unwrap_err(),
            AddError::Decode(d) if d.code == crate::ErrorCode::BadRequest(BadRequestCode::BadLen)
        ));
        let other = Experimenter {
            experimenter: ONF_EXPERIMENTER,
            exp_type: 7,
            data: vec![],
        };
        assert!(decode(&other, 0).is_none());
        let other = Experimenter {
            experimenter: 0x2320,
            exp_type: exp_type::CONTROL,
            data: vec![0; 8],
        };
        assert!(decode(&other, 0).is_none());
    }

    #[test]
    fn error_codes() {
        assert_eq!(BundleFailedCode::BadId.exp_type(), 2302);
        assert_eq!(BundleFailedCode::MsgFailed.exp_type(), 2313);
        for &c in BundleFailedCode::ALL {
            assert_eq!(BundleFailedCode::from_exp_type(c.exp_type()), Some(c));
            let m = c.error_msg(&[1; 100]);
            assert_eq!(BundleFailedCode::of_error(&m), Some(c));
            let mut w = Vec::new();
            m.encode(&mut w);
            assert_eq!(&w[..2], &[0xff, 0xff]);
            assert_eq!(&w[2..4], &(2300 + c as u16).to_be_bytes());
            assert_eq!(&w[4..8], &[0x4f, 0x4e, 0x46, 0]);
            assert_eq!(w.len(), 8 + 64);
        }
        assert_eq!(BundleFailedCode::from_exp_type(2316), None);
        assert_eq!(BundleFailedCode::from_exp_type(5), None);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
                        ty in 2299u32..2303, xid in 0u32..3) {
            let e = Experimenter { experimenter: ONF_EXPERIMENTER, exp_type: ty, data };
            let _ = decode(&e, xid);
        }
    }
}
