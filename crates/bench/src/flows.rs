//! Flow-mods written the way people write them: ovs-ofctl text syntax
//! (`"priority=10,in_port=1,ip,nw_dst=10.0.0.1 actions=output:2"`), parsed
//! by the `ctl` crate into `ofp` messages.

use ctl::flow::{parse_flow, FlowUsage};
use ofp::message::{flow_mod_command, FlowMod, Message};

use crate::error::{BenchError, Result};

/// An OFPFC_ADD from ovs-ofctl syntax.
pub fn add(spec: &str) -> Result<FlowMod> {
    parse(spec, FlowUsage::Add, flow_mod_command::ADD)
}

/// An OFPFC_MODIFY_STRICT from ovs-ofctl syntax (priority and match must
/// equal the existing entry's).
pub fn modify_strict(spec: &str) -> Result<FlowMod> {
    parse(spec, FlowUsage::Modify, flow_mod_command::MODIFY_STRICT)
}

fn parse(spec: &str, usage: FlowUsage, cmd: u8) -> Result<FlowMod> {
    let f = parse_flow(spec, usage).map_err(|e| BenchError(format!("flow {spec:?}: {e}")))?;
    Ok(f.to_flow_mod(cmd))
}

/// `Message::FlowMod` of [`add`].
pub fn add_msg(spec: &str) -> Result<Message> {
    add(spec).map(Message::FlowMod)
}

/// Delete every flow of every table.
pub fn delete_all() -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: ofp::message::table_id::ALL,
        command: flow_mod_command::DELETE,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 0,
        buffer_id: ofp::message::NO_BUFFER,
        out_port: ofp::port::port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: ofp::oxm::Match::new(Vec::new()),
        instructions: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_flows_become_flow_mods() {
        let fm = add("priority=7,in_port=1,ip,nw_dst=10.0.0.9 actions=output:2").expect("parses");
        assert_eq!(fm.priority, 7);
        assert_eq!(fm.command, flow_mod_command::ADD);
        assert!(!fm.instructions.is_empty());
        assert!(add("in_port=1 actions=frobnicate").is_err());
        assert_eq!(delete_all().table_id, 0xff);
    }
}
