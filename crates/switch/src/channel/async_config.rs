//! Asynchronous message filtering per connection (spec §7.3.10, §6.1.1):
//! which PACKET_IN, PORT_STATUS and FLOW_REMOVED reasons a controller gets,
//! depending on its role, and which asynchronous experimenter messages.

use ofp::message::{AsyncConfig, Message};

use super::role::ControllerRole;

/// Default masks of a new connection. Masters and equals get every packet-in
/// reason but INVALID_TTL (off by default, as in Open vSwitch: 1.3 dropped
/// the config flag that used to enable it), every port-status reason and
/// every flow-removed reason; slaves get port-status only.
pub fn default_async_config() -> AsyncConfig {
    AsyncConfig {
        // bit = reason: NO_MATCH (0), ACTION (1); INVALID_TTL (2) off.
        packet_in_mask: [0b011, 0],
        // ADD, DELETE, MODIFY.
        port_status_mask: [0b111, 0b111],
        // IDLE_TIMEOUT, HARD_TIMEOUT, DELETE, GROUP_DELETE.
        flow_removed_mask: [0b1111, 0],
    }
}

/// Whether a connection with `role` and `config` wants `msg`. Messages that
/// are not asynchronous are always wanted.
pub fn wants(config: &AsyncConfig, role: ControllerRole, msg: &Message) -> bool {
    let i = usize::from(role == ControllerRole::Slave);
    let allowed =
        |mask: [u32; 2], reason: u8| u32::from(reason) < 32 && mask[i] & (1u32 << reason) != 0;
    match msg {
        Message::PacketIn(p) => allowed(config.packet_in_mask, p.reason),
        Message::PortStatus(p) => allowed(config.port_status_mask, p.reason),
        Message::FlowRemoved(f) => allowed(config.flow_removed_mask, f.reason),
        // Asynchronous experimenter messages (BEBA's STATE_CHANGED) have
        // no mask in 1.3: masters and equals get them, slaves do not (as
        // every async message but port-status by default).
        Message::Experimenter(_) => role != ControllerRole::Slave,
        _ => true,
    }
}
