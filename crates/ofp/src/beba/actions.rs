//! The BEBA actions: OFPAT_EXPERIMENTER actions under BEBA's id whose
//! data starts with `act_type u32 | pad 4`.
//!
//! ```text
//! SET_STATE (0), 48 bytes:  header 16 | state u32 | state_mask u32 |
//!     table_id u8 | pad 3 | hard_rollback u32 | idle_rollback u32 |
//!     hard_timeout u32 | idle_timeout u32 | bit u8 | pad 3
//! SET_GLOBAL_STATE (1), 24: header 16 | global_state u32 | mask u32
//! INC_STATE (2), 24:        header 16 | table_id u8 | pad 7
//! ```
//! (header 16 = type 0xffff, len, experimenter, act_type, pad 4.)

use super::error::{BebaDecodeError, BebaErrorCode};
use super::BEBA_EXPERIMENTER;
use crate::action::Action;
use crate::wire::{Reader, Writer};

/// `ofp_exp_actions`.
pub mod act_type {
    pub const SET_STATE: u32 = 0;
    pub const SET_GLOBAL_STATE: u32 = 1;
    pub const INC_STATE: u32 = 2;
}

/// SET_STATE: write `state` under `state_mask` for the packet's flow in
/// stage `table_id` (its key taken by the table's update extractor, or
/// by the lookup extractor with sources and destinations swapped when
/// `bit` is set). Timeouts are microseconds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetState {
    pub state: u32,
    pub state_mask: u32,
    pub table_id: u8,
    pub hard_rollback: u32,
    pub idle_rollback: u32,
    pub hard_timeout: u32,
    pub idle_timeout: u32,
    pub bit: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BebaAction {
    SetState(SetState),
    /// `global = (global & !mask) | (value & mask)`.
    SetGlobalState {
        value: u32,
        mask: u32,
    },
    /// Add one to the packet's flow state in stage `table_id`.
    IncState {
        table_id: u8,
    },
}

impl BebaAction {
    /// The BEBA action in a generic action; `None` if it is not a BEBA
    /// experimenter action.
    pub fn from_action(a: &Action) -> Option<Result<BebaAction, BebaDecodeError>> {
        match a {
            Action::Experimenter {
                experimenter: BEBA_EXPERIMENTER,
                data,
            } => Some(Self::decode(data)),
            _ => None,
        }
    }

    /// Decode the data after the action's experimenter id.
    pub fn decode(data: &[u8]) -> Result<BebaAction, BebaDecodeError> {
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let ty = r.u32("beba action: act_type").map_err(short)?;
        r.pad(4).map_err(short)?;
        let a = match ty {
            act_type::SET_STATE => {
                let state = r.u32("set_state: state").map_err(short)?;
                let state_mask = r.u32("set_state: state_mask").map_err(short)?;
                let table_id = r.u8("set_state: table_id").map_err(short)?;
                r.pad(3).map_err(short)?;
                let s = SetState {
                    state,
                    state_mask,
                    table_id,
                    hard_rollback: r.u32("set_state: hard_rollback").map_err(short)?,
                    idle_rollback: r.u32("set_state: idle_rollback").map_err(short)?,
                    hard_timeout: r.u32("set_state: hard_timeout").map_err(short)?,
                    idle_timeout: r.u32("set_state: idle_timeout").map_err(short)?,
                    bit: r.u8("set_state: bit").map_err(short)? != 0,
                };
                r.pad(3).map_err(short)?;
                BebaAction::SetState(s)
            }
            act_type::SET_GLOBAL_STATE => BebaAction::SetGlobalState {
                value: r.u32("set_global_state: value").map_err(short)?,
                mask: r.u32("set_global_state: mask").map_err(short)?,
            },
            act_type::INC_STATE => {
                let table_id = r.u8("inc_state: table_id").map_err(short)?;
                r.pad(7).map_err(short)?;
                BebaAction::IncState { table_id }
            }
            _ => {
                return Err(BebaDecodeError::beba(
                    BebaErrorCode::BadExpAction,
                    "beba action: act_type",
                ))
            }
        };
        r.finish("beba action: trailing bytes").map_err(short)?;
        Ok(a)
    }

    /// The data after the experimenter id.
    pub fn encode(&self, w: &mut Vec<u8>) {
        match self {
            BebaAction::SetState(s) => {
                w.put_u32(act_type::SET_STATE);
                w.put_zeros(4);
                w.put_u32(s.state);
                w.put_u32(s.state_mask);
                w.put_u8(s.table_id);
                w.put_zeros(3);
                w.put_u32(s.hard_rollback);
                w.put_u32(s.idle_rollback);
                w.put_u32(s.hard_timeout);
                w.put_u32(s.idle_timeout);
                w.put_u8(u8::from(s.bit));
                w.put_zeros(3);
            }
            BebaAction::SetGlobalState { value, mask } => {
                w.put_u32(act_type::SET_GLOBAL_STATE);
                w.put_zeros(4);
                w.put_u32(*value);
                w.put_u32(*mask);
            }
            BebaAction::IncState { table_id } => {
                w.put_u32(act_type::INC_STATE);
                w.put_zeros(4);
                w.put_u8(*table_id);
                w.put_zeros(7);
            }
        }
    }

    /// The generic action carrying this one.
    pub fn to_action(&self) -> Action {
        let mut data = Vec::with_capacity(40);
        self.encode(&mut data);
        Action::Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            data,
        }
    }
}
