//! BEBA's error codes and the errors its decoders answer with.
//!
//! The BEBA switch reports its own refusals as OFPET_EXPERIMENTER errors
//! (`ofp_error_experimenter_msg`): type `0xffff`, `exp_type` one of
//! [`BebaErrorCode`], experimenter id [`BEBA_EXPERIMENTER`], and the whole
//! offending message as data. Some refusals (a bad match inside a
//! statistics request, a bad action inside IN_SWITCH_PKT_GEN) are standard
//! OpenFlow errors; [`Refusal`] carries either.

use super::BEBA_EXPERIMENTER;
use crate::error::{DecodeError, ErrorCode, ErrorMsg};

/// `ofp_exp_beba_errors`, the `exp_type` of a BEBA experimenter error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum BebaErrorCode {
    StateModFailed = 0,
    StateModBadCommand = 1,
    SetExtractor = 2,
    SetFlowState = 3,
    DelFlowState = 4,
    BadExpMessage = 5,
    BadExpAction = 6,
    BadExpLen = 7,
    BadTableId = 8,
    BadMatchWildcard = 9,
    BadExpInstruction = 10,
    PktTmpModFailed = 11,
    PktTmpModBadCommand = 12,
}

impl BebaErrorCode {
    /// Every code, in wire order.
    pub const ALL: [BebaErrorCode; 13] = [
        BebaErrorCode::StateModFailed,
        BebaErrorCode::StateModBadCommand,
        BebaErrorCode::SetExtractor,
        BebaErrorCode::SetFlowState,
        BebaErrorCode::DelFlowState,
        BebaErrorCode::BadExpMessage,
        BebaErrorCode::BadExpAction,
        BebaErrorCode::BadExpLen,
        BebaErrorCode::BadTableId,
        BebaErrorCode::BadMatchWildcard,
        BebaErrorCode::BadExpInstruction,
        BebaErrorCode::PktTmpModFailed,
        BebaErrorCode::PktTmpModBadCommand,
    ];

    pub fn from_u16(v: u16) -> Option<Self> {
        Self::ALL.get(usize::from(v)).copied()
    }

    /// The experimenter error code (type 0xffff, BEBA's id, this code).
    pub fn code(self) -> ErrorCode {
        ErrorCode::Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            exp_type: self as u16,
        }
    }

    /// The OFPT_ERROR body reporting this code for `request` (the whole
    /// offending message, as the BEBA switch sends it).
    pub fn error_msg(self, request: &[u8]) -> ErrorMsg {
        ErrorMsg::from_request(self.code(), request)
    }

    /// The BEBA code of an OFPT_ERROR body; `None` if it is not a BEBA
    /// experimenter error with a known code.
    pub fn from_error_msg(e: &ErrorMsg) -> Option<Self> {
        match e {
            ErrorMsg::Experimenter {
                exp_type,
                experimenter: BEBA_EXPERIMENTER,
                ..
            } => Self::from_u16(*exp_type),
            _ => None,
        }
    }
}

/// The error a refusal is reported with: a standard OpenFlow (type, code)
/// or a BEBA experimenter code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Standard(ErrorCode),
    Beba(BebaErrorCode),
}

/// Why a BEBA decoder refused its input, and a short context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{refusal:?}: {what}")]
pub struct BebaDecodeError {
    pub refusal: Refusal,
    pub what: &'static str,
}

impl BebaDecodeError {
    pub fn beba(code: BebaErrorCode, what: &'static str) -> Self {
        BebaDecodeError {
            refusal: Refusal::Beba(code),
            what,
        }
    }

    /// `BAD_EXP_LEN`, what the BEBA switch answers for any body whose
    /// length does not fit its layout.
    pub fn bad_len(what: &'static str) -> Self {
        Self::beba(BebaErrorCode::BadExpLen, what)
    }

    /// A short read turned into `BAD_EXP_LEN` (the reader's own context
    /// kept).
    pub fn short(e: DecodeError) -> Self {
        Self::bad_len(e.what)
    }

    /// The OFPT_ERROR body answering `request` with this refusal.
    pub fn error_msg(&self, request: &[u8]) -> ErrorMsg {
        match self.refusal {
            Refusal::Standard(code) => ErrorMsg::from_request(code, request),
            Refusal::Beba(code) => code.error_msg(request),
        }
    }
}

impl From<DecodeError> for BebaDecodeError {
    fn from(e: DecodeError) -> Self {
        BebaDecodeError {
            refusal: Refusal::Standard(e.code),
            what: e.what,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_error_body() {
        for (i, c) in BebaErrorCode::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert_eq!(BebaErrorCode::from_u16(i as u16), Some(*c));
        }
        assert_eq!(BebaErrorCode::from_u16(13), None);
        let m = BebaErrorCode::BadExpLen.error_msg(&[4, 4, 0, 8]);
        let mut w = Vec::new();
        m.encode(&mut w);
        assert_eq!(
            w,
            [0xff, 0xff, 0, 7, 0xbe, 0xba, 0xbe, 0xba, 4, 4, 0, 8],
            "type 0xffff, exp_type 7, experimenter, data"
        );
        assert_eq!(
            BebaErrorCode::from_error_msg(&m),
            Some(BebaErrorCode::BadExpLen)
        );
    }
}
