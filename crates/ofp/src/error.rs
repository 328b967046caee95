//! OpenFlow 1.3.5 errors (spec §7.4.4): every error type and code, the
//! OFPT_ERROR message body, and `DecodeError`, the typed error every decoder
//! returns.
//!
//! `ErrorCode` pairs an error type with its code, one Rust enum per type, so a
//! decoder can only produce a (type, code) pair that the spec defines. The
//! switch answers a bad request with exactly `DecodeError::code.type_code()`.

use crate::wire::{Reader, Writer};

/// Declares a `#[repr(u16)]` code enum with its wire values and a fallible
/// conversion from the raw value.
macro_rules! codes {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:expr),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum $name { $($(#[$vm])* $var = $val),+ }
        impl $name {
            /// All codes of this type, in wire order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            pub fn from_u16(v: u16) -> Option<Self> {
                match v { $($val => Some($name::$var),)+ _ => None }
            }
        }
    };
}

codes!(
    /// OFPET_HELLO_FAILED codes.
    HelloFailedCode { Incompatible = 0, Eperm = 1 }
);
codes!(
    /// OFPET_BAD_REQUEST codes.
    BadRequestCode {
        BadVersion = 0, BadType = 1, BadMultipart = 2, BadExperimenter = 3, BadExpType = 4,
        Eperm = 5, BadLen = 6, BufferEmpty = 7, BufferUnknown = 8, BadTableId = 9,
        IsSlave = 10, BadPort = 11, BadPacket = 12, MultipartBufferOverflow = 13,
    }
);
codes!(
    /// OFPET_BAD_ACTION codes.
    BadActionCode {
        BadType = 0, BadLen = 1, BadExperimenter = 2, BadExpType = 3, BadOutPort = 4,
        BadArgument = 5, Eperm = 6, TooMany = 7, BadQueue = 8, BadOutGroup = 9,
        MatchInconsistent = 10, UnsupportedOrder = 11, BadTag = 12, BadSetType = 13,
        BadSetLen = 14, BadSetArgument = 15,
    }
);
codes!(
    /// OFPET_BAD_INSTRUCTION codes.
    BadInstructionCode {
        UnknownInst = 0, UnsupInst = 1, BadTableId = 2, UnsupMetadata = 3,
        UnsupMetadataMask = 4, BadExperimenter = 5, BadExpType = 6, BadLen = 7, Eperm = 8,
    }
);
codes!(
    /// OFPET_BAD_MATCH codes.
    BadMatchCode {
        BadType = 0, BadLen = 1, BadTag = 2, BadDlAddrMask = 3, BadNwAddrMask = 4,
        BadWildcards = 5, BadField = 6, BadValue = 7, BadMask = 8, BadPrereq = 9,
        DupField = 10, Eperm = 11,
    }
);
codes!(
    /// OFPET_FLOW_MOD_FAILED codes.
    FlowModFailedCode {
        Unknown = 0, TableFull = 1, BadTableId = 2, Overlap = 3, Eperm = 4, BadTimeout = 5,
        BadCommand = 6, BadFlags = 7,
    }
);
codes!(
    /// OFPET_GROUP_MOD_FAILED codes.
    GroupModFailedCode {
        GroupExists = 0, InvalidGroup = 1, WeightUnsupported = 2, OutOfGroups = 3,
        OutOfBuckets = 4, ChainingUnsupported = 5, WatchUnsupported = 6, Loop = 7,
        UnknownGroup = 8, ChainedGroup = 9, BadType = 10, BadCommand = 11, BadBucket = 12,
        BadWatch = 13, Eperm = 14,
    }
);
codes!(
    /// OFPET_PORT_MOD_FAILED codes.
    PortModFailedCode { BadPort = 0, BadHwAddr = 1, BadConfig = 2, BadAdvertise = 3, Eperm = 4 }
);
codes!(
    /// OFPET_TABLE_MOD_FAILED codes.
    TableModFailedCode { BadTable = 0, BadConfig = 1, Eperm = 2 }
);
codes!(
    /// OFPET_QUEUE_OP_FAILED codes.
    QueueOpFailedCode { BadPort = 0, BadQueue = 1, Eperm = 2 }
);
codes!(
    /// OFPET_SWITCH_CONFIG_FAILED codes.
    SwitchConfigFailedCode { BadFlags = 0, BadLen = 1, Eperm = 2 }
);
codes!(
    /// OFPET_ROLE_REQUEST_FAILED codes.
    RoleRequestFailedCode { Stale = 0, Unsup = 1, BadRole = 2 }
);
codes!(
    /// OFPET_METER_MOD_FAILED codes.
    MeterModFailedCode {
        Unknown = 0, MeterExists = 1, InvalidMeter = 2, UnknownMeter = 3, BadCommand = 4,
        BadFlags = 5, BadRate = 6, BadBurst = 7, BadBand = 8, BadBandValue = 9,
        OutOfMeters = 10, OutOfBands = 11,
    }
);
codes!(
    /// OFPET_TABLE_FEATURES_FAILED codes.
    TableFeaturesFailedCode {
        BadTable = 0, BadMetadata = 1, BadType = 2, BadLen = 3, BadArgument = 4, Eperm = 5,
    }
);

/// OFPET_* error type values.
pub mod error_type {
    pub const HELLO_FAILED: u16 = 0;
    pub const BAD_REQUEST: u16 = 1;
    pub const BAD_ACTION: u16 = 2;
    pub const BAD_INSTRUCTION: u16 = 3;
    pub const BAD_MATCH: u16 = 4;
    pub const FLOW_MOD_FAILED: u16 = 5;
    pub const GROUP_MOD_FAILED: u16 = 6;
    pub const PORT_MOD_FAILED: u16 = 7;
    pub const TABLE_MOD_FAILED: u16 = 8;
    pub const QUEUE_OP_FAILED: u16 = 9;
    pub const SWITCH_CONFIG_FAILED: u16 = 10;
    pub const ROLE_REQUEST_FAILED: u16 = 11;
    pub const METER_MOD_FAILED: u16 = 12;
    pub const TABLE_FEATURES_FAILED: u16 = 13;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// A spec-defined (error type, error code) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    HelloFailed(HelloFailedCode),
    BadRequest(BadRequestCode),
    BadAction(BadActionCode),
    BadInstruction(BadInstructionCode),
    BadMatch(BadMatchCode),
    FlowModFailed(FlowModFailedCode),
    GroupModFailed(GroupModFailedCode),
    PortModFailed(PortModFailedCode),
    TableModFailed(TableModFailedCode),
    QueueOpFailed(QueueOpFailedCode),
    SwitchConfigFailed(SwitchConfigFailedCode),
    RoleRequestFailed(RoleRequestFailedCode),
    MeterModFailed(MeterModFailedCode),
    TableFeaturesFailed(TableFeaturesFailedCode),
    /// OFPET_EXPERIMENTER: a code `exp_type` an experimenter defines
    /// (`ofp_error_experimenter_msg`).
    Experimenter {
        experimenter: u32,
        exp_type: u16,
    },
}

impl ErrorCode {
    /// The (OFPET_*, code) pair as sent on the wire.
    pub fn type_code(self) -> (u16, u16) {
        use error_type as t;
        match self {
            ErrorCode::HelloFailed(c) => (t::HELLO_FAILED, c as u16),
            ErrorCode::BadRequest(c) => (t::BAD_REQUEST, c as u16),
            ErrorCode::BadAction(c) => (t::BAD_ACTION, c as u16),
            ErrorCode::BadInstruction(c) => (t::BAD_INSTRUCTION, c as u16),
            ErrorCode::BadMatch(c) => (t::BAD_MATCH, c as u16),
            ErrorCode::FlowModFailed(c) => (t::FLOW_MOD_FAILED, c as u16),
            ErrorCode::GroupModFailed(c) => (t::GROUP_MOD_FAILED, c as u16),
            ErrorCode::PortModFailed(c) => (t::PORT_MOD_FAILED, c as u16),
            ErrorCode::TableModFailed(c) => (t::TABLE_MOD_FAILED, c as u16),
            ErrorCode::QueueOpFailed(c) => (t::QUEUE_OP_FAILED, c as u16),
            ErrorCode::SwitchConfigFailed(c) => (t::SWITCH_CONFIG_FAILED, c as u16),
            ErrorCode::RoleRequestFailed(c) => (t::ROLE_REQUEST_FAILED, c as u16),
            ErrorCode::MeterModFailed(c) => (t::METER_MOD_FAILED, c as u16),
            ErrorCode::TableFeaturesFailed(c) => (t::TABLE_FEATURES_FAILED, c as u16),
            ErrorCode::Experimenter { exp_type, .. } => (t::EXPERIMENTER, exp_type),
        }
    }

    /// The typed pair for a wire (type, code), if the spec defines it.
    pub fn from_type_code(ty: u16, code: u16) -> Option<Self> {
        use error_type as t;
        Some(match ty {
            t::HELLO_FAILED => ErrorCode::HelloFailed(HelloFailedCode::from_u16(code)?),
            t::BAD_REQUEST => ErrorCode::BadRequest(BadRequestCode::from_u16(code)?),
            t::BAD_ACTION => ErrorCode::BadAction(BadActionCode::from_u16(code)?),
            t::BAD_INSTRUCTION => ErrorCode::BadInstruction(BadInstructionCode::from_u16(code)?),
            t::BAD_MATCH => ErrorCode::BadMatch(BadMatchCode::from_u16(code)?),
            t::FLOW_MOD_FAILED => ErrorCode::FlowModFailed(FlowModFailedCode::from_u16(code)?),
            t::GROUP_MOD_FAILED => ErrorCode::GroupModFailed(GroupModFailedCode::from_u16(code)?),
            t::PORT_MOD_FAILED => ErrorCode::PortModFailed(PortModFailedCode::from_u16(code)?),
            t::TABLE_MOD_FAILED => ErrorCode::TableModFailed(TableModFailedCode::from_u16(code)?),
            t::QUEUE_OP_FAILED => ErrorCode::QueueOpFailed(QueueOpFailedCode::from_u16(code)?),
            t::SWITCH_CONFIG_FAILED => {
                ErrorCode::SwitchConfigFailed(SwitchConfigFailedCode::from_u16(code)?)
            }
            t::ROLE_REQUEST_FAILED => {
                ErrorCode::RoleRequestFailed(RoleRequestFailedCode::from_u16(code)?)
            }
            t::METER_MOD_FAILED => ErrorCode::MeterModFailed(MeterModFailedCode::from_u16(code)?),
            t::TABLE_FEATURES_FAILED => {
                ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::from_u16(code)?)
            }
            _ => return None,
        })
    }

    /// Every (type, code) pair the spec defines, for exhaustive tests.
    pub fn all() -> Vec<ErrorCode> {
        let mut v = Vec::new();
        v.extend(
            HelloFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::HelloFailed(c)),
        );
        v.extend(
            BadRequestCode::ALL
                .iter()
                .map(|&c| ErrorCode::BadRequest(c)),
        );
        v.extend(BadActionCode::ALL.iter().map(|&c| ErrorCode::BadAction(c)));
        v.extend(
            BadInstructionCode::ALL
                .iter()
                .map(|&c| ErrorCode::BadInstruction(c)),
        );
        v.extend(BadMatchCode::ALL.iter().map(|&c| ErrorCode::BadMatch(c)));
        v.extend(
            FlowModFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::FlowModFailed(c)),
        );
        v.extend(
            GroupModFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::GroupModFailed(c)),
        );
        v.extend(
            PortModFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::PortModFailed(c)),
        );
        v.extend(
            TableModFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::TableModFailed(c)),
        );
        v.extend(
            QueueOpFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::QueueOpFailed(c)),
        );
        v.extend(
            SwitchConfigFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::SwitchConfigFailed(c)),
        );
        v.extend(
            RoleRequestFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::RoleRequestFailed(c)),
        );
        v.extend(
            MeterModFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::MeterModFailed(c)),
        );
        v.extend(
            TableFeaturesFailedCode::ALL
                .iter()
                .map(|&c| ErrorCode::TableFeaturesFailed(c)),
        );
        v
    }
}

/// Why a decoder refused its input: the spec error the switch answers with,
/// and a short human context ("flow_mod: match", "action output: len").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code:?}: {what}")]
pub struct DecodeError {
    pub code: ErrorCode,
    pub what: &'static str,
}

impl DecodeError {
    pub fn new(code: ErrorCode, what: &'static str) -> Self {
        DecodeError { code, what }
    }
    pub fn bad_request(c: BadRequestCode, what: &'static str) -> Self {
        Self::new(ErrorCode::BadRequest(c), what)
    }
    pub fn bad_action(c: BadActionCode, what: &'static str) -> Self {
        Self::new(ErrorCode::BadAction(c), what)
    }
    pub fn bad_instruction(c: BadInstructionCode, what: &'static str) -> Self {
        Self::new(ErrorCode::BadInstruction(c), what)
    }
    pub fn bad_match(c: BadMatchCode, what: &'static str) -> Self {
        Self::new(ErrorCode::BadMatch(c), what)
    }
    /// BAD_REQUEST/BAD_LEN, the most common refusal.
    pub fn bad_len(what: &'static str) -> Self {
        Self::bad_request(BadRequestCode::BadLen, what)
    }
}

/// Body of OFPT_ERROR (`ofp_error_msg`, and `ofp_error_experimenter_msg` when
/// the type is OFPET_EXPERIMENTER).
///
/// `err_type`/`code` are kept raw so that errors from other switches with
/// codes we do not know still decode; `ErrorMsg::typed()` gives the typed pair.
/// `data` holds at least 64 bytes of the offending request (or the whole of it)
/// for switch-generated errors, or ASCII text for HELLO_FAILED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorMsg {
    Standard {
        err_type: u16,
        code: u16,
        data: Vec<u8>,
    },
    Experimenter {
        exp_type: u16,
        experimenter: u32,
        data: Vec<u8>,
    },
}

impl ErrorMsg {
    /// The error for `code`, carrying the first 64 bytes of the offending
    /// message as the spec requires; an experimenter error carries the
    /// whole message (what the BEBA switch, the one experimenter whose
    /// errors the switch sends, puts there).
    pub fn from_request(code: ErrorCode, request: &[u8]) -> Self {
        if let ErrorCode::Experimenter {
            experimenter,
            exp_type,
        } = code
        {
            return ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data: request.to_vec(),
            };
        }
        let (err_type, code) = code.type_code();
        ErrorMsg::Standard {
            err_type,
            code,
            data: request[..request.len().min(64)].to_vec(),
        }
    }

    /// The typed code: a standard pair the spec defines, or any
    /// experimenter's code.
    pub fn typed(&self) -> Option<ErrorCode> {
        match self {
            ErrorMsg::Standard { err_type, code, .. } => {
                ErrorCode::from_type_code(*err_type, *code)
            }
            ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                ..
            } => Some(ErrorCode::Experimenter {
                experimenter: *experimenter,
                exp_type: *exp_type,
            }),
        }
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let err_type = r.u16("error: type")?;
        if err_type == error_type::EXPERIMENTER {
            let exp_type = r.u16("error: exp_type")?;
            let experimenter = r.u32("error: experimenter")?;
            Ok(ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data: r.rest().to_vec(),
            })
        } else {
            let code = r.u16("error: code")?;
            Ok(ErrorMsg::Standard {
                err_type,
                code,
                data: r.rest().to_vec(),
            })
        }
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        match self {
            ErrorMsg::Standard {
                err_type,
                code,
                data,
            } => {
                w.put_u16(*err_type);
                w.put_u16(*code);
                w.put_bytes(data);
            }
            ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                data,
            } => {
                w.put_u16(error_type::EXPERIMENTER);
                w.put_u16(*exp_type);
                w.put_u32(*experimenter);
                w.put_bytes(data);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_round_trips() {
        let all = ErrorCode::all();
        // 2+14+16+9+12+8+15+5+3+3+3+3+12+6 codes in OpenFlow 1.3.5
        assert_eq!(all.len(), 111);
        for c in all {
            let (t, k) = c.type_code();
            assert_eq!(ErrorCode::from_type_code(t, k), Some(c));
        }
        assert_eq!(ErrorCode::from_type_code(1, 14), None);
        assert_eq!(ErrorCode::from_type_code(14, 0), None);
    }

    #[test]
    fn known_values() {
        assert_eq!(
            ErrorCode::BadMatch(BadMatchCode::BadPrereq).type_code(),
            (4, 9)
        );
        assert_eq!(
            ErrorCode::BadAction(BadActionCode::BadOutPort).type_code(),
            (2, 4)
        );
        assert_eq!(
            ErrorCode::BadRequest(BadRequestCode::BadLen).type_code(),
            (1, 6)
        );
        assert_eq!(
            ErrorCode::MeterModFailed(MeterModFailedCode::OutOfBands).type_code(),
            (12, 11)
        );
    }

    #[test]
    fn error_msg_codec() {
        let m = ErrorMsg::from_request(ErrorCode::BadRequest(BadRequestCode::BadType), &[4; 100]);
        let mut w = Vec::new();
        m.encode(&mut w);
        assert_eq!(&w[..4], &[0, 1, 0, 1]);
        assert_eq!(w.len(), 4 + 64);
        let d = ErrorMsg::decode(&mut Reader::message(&w)).unwrap();
        assert_eq!(d, m);
        let e = ErrorMsg::Experimenter {
            exp_type: 7,
            experimenter: 0x00d0f0,
            data: b"x".to_vec(),
        };
        let mut w = Vec::new();
        e.encode(&mut w);
        assert_eq!(w, [0xff, 0xff, 0, 7, 0, 0, 0xd0, 0xf0, b'x']);
        assert_eq!(ErrorMsg::decode(&mut Reader::message(&w)).unwrap(), e);
    }
}
