//! The BEBA / OpenState experimenter extension (experimenter id
//! [`BEBA_EXPERIMENTER`] = `0xBEBABEBA`), byte for byte as the BEBA
//! software switch and its Ryu-based controller speak it.
//!
//! BEBA adds *stateful* forwarding to OpenFlow 1.3: a flow table can be
//! made stateful; a lookup extractor turns a packet's header fields into a
//! key, the key selects a per-flow state in the table's state table, and
//! the state is matched as the OXM field `state`. Actions write states
//! back (SET_STATE through an update extractor, INC_STATE), a switch-wide
//! `global_state` is matched and written the same way, and the
//! IN_SWITCH_PKT_GEN instruction builds packets from templates installed
//! by PKTTMP_MOD.
//!
//! This module is the wire codec only. The generic codec already keeps
//! every experimenter message, action, instruction, OXM field, multipart
//! body and error as opaque bytes under its experimenter id; each BEBA
//! type here converts from and to those generic forms, so no decoder of
//! the standard codec changes:
//!
//! | BEBA concept | generic form | module |
//! |---|---|---|
//! | STATE_MOD, PKTTMP_MOD, STATE_CHANGED, FLOW_NOTIFICATION | [`Experimenter`] | [`state_mod`], [`pkttmp`], [`async_msgs`], [`BebaMessage`] |
//! | SET_STATE, SET_GLOBAL_STATE, INC_STATE | [`Action::Experimenter`](crate::action::Action) | [`actions`] |
//! | IN_SWITCH_PKT_GEN | [`Instruction::Experimenter`](crate::instruction::Instruction) | [`instruction`] |
//! | `state`, `global_state` | [`OxmField::Experimenter`](crate::oxm::OxmField) | [`oxm`] |
//! | state / global-state statistics | [`ExperimenterMultipart`](crate::multipart::ExperimenterMultipart) | [`multipart`] |
//! | BEBA error codes | [`ErrorMsg::Experimenter`](crate::error::ErrorMsg) | [`error`] |
//!
//! Each `from_*` function returns `None` when the generic value is not
//! BEBA's (another experimenter id), and otherwise the typed value or the
//! error the BEBA switch answers with ([`BebaDecodeError`]). `docs/beba.md`
//! has the byte layouts and the points where oxflow differs from the BEBA
//! switch.

pub mod actions;
pub mod async_msgs;
pub mod error;
pub mod instruction;
pub mod multipart;
pub mod oxm;
pub mod pkttmp;
pub mod state_mod;

pub use actions::{BebaAction, SetState};
pub use async_msgs::{FlowNotification, StateChanged};
pub use error::{BebaDecodeError, BebaErrorCode, Refusal};
pub use instruction::InSwitchPktGen;
pub use multipart::{
    BebaMultipartReply, BebaMultipartRequest, StateEntryStats, StateStatsKind, StateStatsRequest,
};
pub use oxm::BebaField;
pub use pkttmp::PktTmpMod;
pub use state_mod::{Extractor, SetFlowState, StateMod};

use crate::message::Experimenter;

/// BEBA's experimenter id (`BEBA_VENDOR_ID`); the field registry's.
pub const BEBA_EXPERIMENTER: u32 = packet::registry::BEBA_EXPERIMENTER;

/// Most bytes in a flow key (`OFPSC_MAX_KEY_LEN`).
pub const MAX_KEY_LEN: usize = 48;

/// Most header fields in an extractor (`OFPSC_MAX_FIELD_COUNT`).
pub const MAX_FIELD_COUNT: usize = 6;

/// `exp_type` of the BEBA experimenter messages (`ofp_exp_messages`).
pub mod exp_type {
    /// Controller to switch: state tables, extractors, states.
    pub const STATE_MOD: u32 = 0;
    /// Controller to switch: packet templates.
    pub const PKTTMP_MOD: u32 = 1;
    /// Switch to controller: a flow's state changed.
    pub const STATE_CHANGED: u32 = 2;
    /// Switch to controller: a flow entry was installed.
    pub const FLOW_NOTIFICATION: u32 = 3;
}

/// A BEBA experimenter message, either direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BebaMessage {
    StateMod(StateMod),
    PktTmpMod(PktTmpMod),
    StateChanged(StateChanged),
    FlowNotification(FlowNotification),
}

impl BebaMessage {
    /// The BEBA message in an OFPT_EXPERIMENTER body; `None` if the
    /// experimenter id is not BEBA's. An unknown `exp_type` is BEBA's
    /// `BAD_EXP_MESSAGE`.
    pub fn from_experimenter(e: &Experimenter) -> Option<Result<BebaMessage, BebaDecodeError>> {
        if e.experimenter != BEBA_EXPERIMENTER {
            return None;
        }
        Some(match e.exp_type {
            exp_type::STATE_MOD => StateMod::decode(&e.data).map(BebaMessage::StateMod),
            exp_type::PKTTMP_MOD => PktTmpMod::decode(&e.data).map(BebaMessage::PktTmpMod),
            exp_type::STATE_CHANGED => StateChanged::decode(&e.data).map(BebaMessage::StateChanged),
            exp_type::FLOW_NOTIFICATION => {
                FlowNotification::decode(&e.data).map(BebaMessage::FlowNotification)
            }
            _ => Err(BebaDecodeError::beba(
                BebaErrorCode::BadExpMessage,
                "beba: unknown exp_type",
            )),
        })
    }

    /// The OFPT_EXPERIMENTER body carrying this message.
    pub fn to_experimenter(&self) -> Experimenter {
        let mut data = Vec::new();
        let exp_type = match self {
            BebaMessage::StateMod(m) => {
                m.encode(&mut data);
                exp_type::STATE_MOD
            }
            BebaMessage::PktTmpMod(m) => {
                m.encode(&mut data);
                exp_type::PKTTMP_MOD
            }
            BebaMessage::StateChanged(m) => {
                m.encode(&mut data);
                exp_type::STATE_CHANGED
            }
            BebaMessage::FlowNotification(m) => {
                m.encode(&mut data);
                exp_type::FLOW_NOTIFICATION
            }
        };
        Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            exp_type,
            data,
        }
    }
}
