//! The BEBA match fields: experimenter OXMs (class `0xffff`) under BEBA's
//! id, each a 32-bit value with an optional mask.
//!
//! ```text
//! class 0xffff u16 | field u7, hasmask u1 | length u8 (8, or 12 masked) |
//! experimenter u32 | value u32 | [mask u32]
//! ```
//! Field 0 is `global_state`, field 1 is `state` (`oxm_exp_match_fields`).

use super::error::{BebaDecodeError, BebaErrorCode};
use super::BEBA_EXPERIMENTER;
use crate::error::{BadMatchCode, DecodeError};
use crate::oxm::OxmField;
use crate::wire::{Reader, Writer};

/// `oxm_exp_match_fields`.
pub mod field {
    pub const GLOBAL_STATE: u8 = 0;
    pub const STATE: u8 = 1;
}

/// A BEBA match field: value and mask (`None` = exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BebaField {
    /// The packet's flow state in this table.
    State(u32, Option<u32>),
    /// The switch's global state.
    GlobalState(u32, Option<u32>),
}

impl BebaField {
    /// The BEBA field in a generic OXM field; `None` if it is not a BEBA
    /// experimenter field. A payload of the wrong size is
    /// BAD_MATCH/BAD_LEN, an unknown field BAD_MATCH/BAD_FIELD, and value
    /// bits outside the mask BEBA's `BAD_MATCH_WILDCARD`.
    pub fn from_oxm(f: &OxmField) -> Option<Result<BebaField, BebaDecodeError>> {
        let OxmField::Experimenter {
            field,
            has_mask,
            experimenter: BEBA_EXPERIMENTER,
            payload,
        } = f
        else {
            return None;
        };
        Some((|| {
            let bad_len = || DecodeError::bad_match(BadMatchCode::BadLen, "beba oxm: length");
            let want = if *has_mask { 8 } else { 4 };
            if payload.len() != want {
                return Err(bad_len().into());
            }
            let mut r = Reader::message(payload);
            let value = r.u32("beba oxm: value").map_err(|_| bad_len())?;
            let mask = if *has_mask {
                Some(r.u32("beba oxm: mask").map_err(|_| bad_len())?)
            } else {
                None
            };
            if mask.is_some_and(|m| value & !m != 0) {
                return Err(BebaDecodeError::beba(
                    BebaErrorCode::BadMatchWildcard,
                    "beba oxm: value bits outside mask",
                ));
            }
            match *field {
                field::STATE => Ok(BebaField::State(value, mask)),
                field::GLOBAL_STATE => Ok(BebaField::GlobalState(value, mask)),
                _ => Err(DecodeError::bad_match(BadMatchCode::BadField, "beba oxm: field").into()),
            }
        })())
    }

    /// The generic OXM field carrying this one.
    pub fn to_oxm(&self) -> OxmField {
        let (field, value, mask) = match *self {
            BebaField::State(v, m) => (field::STATE, v, m),
            BebaField::GlobalState(v, m) => (field::GLOBAL_STATE, v, m),
        };
        let mut payload = Vec::with_capacity(8);
        payload.put_u32(value);
        if let Some(m) = mask {
            payload.put_u32(m);
        }
        OxmField::Experimenter {
            field,
            has_mask: mask.is_some(),
            experimenter: BEBA_EXPERIMENTER,
            payload,
        }
    }
}
