//! Controller roles (spec §6.3.6): equal, master, slave, and the master
//! election generation id.

use ofp::error::{BadRequestCode, ErrorCode, RoleRequestFailedCode};
use ofp::message::{role, Message};
use ofp::multipart::MultipartRequestBody;

/// The role of one controller (main connection and its auxiliaries).
/// Every new connection starts as `Equal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControllerRole {
    #[default]
    Equal,
    Master,
    Slave,
}

impl ControllerRole {
    /// The `ofp_controller_role` number.
    pub fn to_wire(self) -> u32 {
        match self {
            ControllerRole::Equal => role::EQUAL,
            ControllerRole::Master => role::MASTER,
            ControllerRole::Slave => role::SLAVE,
        }
    }

    /// From the wire; `None` for NOCHANGE (and values the decoder refuses).
    pub fn from_wire(v: u32) -> Option<Self> {
        match v {
            role::EQUAL => Some(ControllerRole::Equal),
            role::MASTER => Some(ControllerRole::Master),
            role::SLAVE => Some(ControllerRole::Slave),
            _ => None,
        }
    }
}

/// The switch-wide master election state: the largest generation id seen in
/// a MASTER or SLAVE role request, undefined until the first one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Election {
    generation_id: Option<u64>,
}

impl Election {
    /// Check `generation_id` of a MASTER/SLAVE request and remember it.
    /// Spec: stale when `(int64)(generation_id - cached) < 0`, a comparison
    /// that survives the 64-bit wrap-around.
    pub fn check(&mut self, generation_id: u64) -> Result<(), ErrorCode> {
        if let Some(cached) = self.generation_id {
            if (generation_id.wrapping_sub(cached) as i64) < 0 {
                return Err(ErrorCode::RoleRequestFailed(RoleRequestFailedCode::Stale));
            }
        }
        self.generation_id = Some(generation_id);
        Ok(())
    }

    /// The generation id for ROLE_REPLY: the cached one, or (as Open vSwitch
    /// does) `u64::MAX` while no MASTER/SLAVE request has defined it.
    pub fn reply_generation_id(&self) -> u64 {
        self.generation_id.unwrap_or(u64::MAX)
    }
}

/// Whether a slave may not send `msg` (spec §6.3.6: commands that send
/// packets or modify switch state; a TABLE_FEATURES request with a body
/// configures tables). Answered with BAD_REQUEST/IS_SLAVE.
pub fn forbidden_to_slave(msg: &Message) -> bool {
    match msg {
        Message::PacketOut(_)
        | Message::FlowMod(_)
        | Message::GroupMod(_)
        | Message::PortMod(_)
        | Message::TableMod(_)
        | Message::MeterMod(_) => true,
        Message::MultipartRequest(m) => match &m.body {
            MultipartRequestBody::TableFeatures(t) => !t.is_empty(),
            MultipartRequestBody::Experimenter(e) => {
                crate::datapath::extensions::writes(e.experimenter, e.exp_type, true)
            }
            _ => false,
        },
        // An extension's messages that change state (its row's `writes`
        // in the switch's table of extensions: FlexForward's changes of
        // forwarding mode, BEBA's STATE_MOD and PKTTMP_MOD).
        Message::Experimenter(e) => {
            crate::datapath::extensions::writes(e.experimenter, e.exp_type, false)
        }
        _ => false,
    }
}

/// The error a slave gets for a forbidden message.
pub const IS_SLAVE: ErrorCode = ErrorCode::BadRequest(BadRequestCode::IsSlave);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_ids_compare_with_wraparound() {
        let mut e = Election::default();
        assert_eq!(e.reply_generation_id(), u64::MAX);
        e.check(10).unwrap();
        e.check(10).unwrap(); // equal is not stale
        assert_eq!(
            e.check(9),
            Err(ErrorCode::RoleRequestFailed(RoleRequestFailedCode::Stale))
        );
        e.check(11).unwrap();
        assert_eq!(e.reply_generation_id(), 11);
        // Near the top of the range, a small number is "newer".
        let mut e = Election::default();
        e.check(u64::MAX - 1).unwrap();
        e.check(2).unwrap();
        assert!(e.check(u64::MAX).is_err());
    }

    #[test]
    fn slave_write_list() {
        assert!(forbidden_to_slave(&Message::TableMod(
            ofp::message::TableMod {
                table_id: 0,
                config: 0
            }
        )));
        assert!(!forbidden_to_slave(&Message::BarrierRequest));
        use ofp::flexforward::FlexMessage;
        let set = FlexMessage::SetKeyFlow { key: 7 }.to_experimenter();
        assert!(forbidden_to_slave(&Message::Experimenter(set)));
        let get = FlexMessage::GetFwMode.to_experimenter();
        assert!(!forbidden_to_slave(&Message::Experimenter(get)));
        assert!(!forbidden_to_slave(&Message::SetAsync(Default::default())));
    }
}
