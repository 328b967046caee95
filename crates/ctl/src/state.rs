//! `save TARGET FILE` and `restore TARGET FILE`: a switch's flows, groups,
//! meters and configuration to a file and back, in the `ofp::snapshot`
//! format (the same file oxflow's `--state-dir` keeps).
//!
//! `save` reads the switch config, the port config bits, every meter,
//! group and flow entry, and writes the messages that re-create them
//! (written to FILE.tmp, then renamed). `restore` sends them: the switch
//! config and port config first, then meters, groups and flows, with a
//! barrier; with `--bundle`, meters, groups and flows go as one atomic
//! bundle. Restore adds to what the switch holds (like `add-flows`);
//! counters start at zero and timeouts start again.

use std::io::Write;

use ofp::error::ErrorMsg;
use ofp::group::{command as group_command, GroupMod};
use ofp::message::{Message, PortMod};
use ofp::meter::{command as meter_command, meter_id, MeterMod};
use ofp::multipart::{FlowStatsRequest, MultipartReplyBody as R, MultipartRequestBody as Q};
use ofp::oxm::Match;
use ofp::port::{config, port_no};
use ofp::snapshot::{self, flow_mod_of, order_groups};
use ofp::OfpMessage;

use crate::client::{ClientError, Connection};

/// Port config bits a snapshot keeps.
const PORT_CONFIG_BITS: u32 =
    config::PORT_DOWN | config::NO_RECV | config::NO_FWD | config::NO_PACKET_IN;

fn unexpected(what: &str) -> ClientError {
    ClientError::Negotiation(format!("unexpected reply to the {what} request"))
}

/// The messages that re-create the switch's state.
pub fn read_state(c: &mut Connection) -> Result<Vec<OfpMessage>, ClientError> {
    let mut out = Vec::new();
    match c.transact(Message::GetConfigRequest)?.body {
        Message::GetConfigReply(cfg) => out.push(Message::SetConfig(cfg)),
        _ => return Err(unexpected("get-config")),
    }
    let R::PortDesc(ports) = c.multipart(Q::PortDesc)?.1 else {
        return Err(unexpected("port-desc"));
    };
    for p in ports.iter().filter(|p| p.config & PORT_CONFIG_BITS != 0) {
        out.push(Message::PortMod(PortMod {
            port_no: p.port_no,
            hw_addr: p.hw_addr,
            config: p.config & PORT_CONFIG_BITS,
            mask: PORT_CONFIG_BITS,
            advertise: 0,
        }));
    }
    let R::MeterConfig(meters) = c
        .multipart(Q::MeterConfig {
            meter_id: meter_id::ALL,
        })?
        .1
    else {
        return Err(unexpected("meter-config"));
    };
    out.extend(meters.into_iter().map(|m| {
        Message::MeterMod(MeterMod {
            command: meter_command::ADD,
            flags: m.flags,
            meter_id: m.meter_id,
            bands: m.bands,
        })
    }));
    let R::GroupDesc(groups) = c.multipart(Q::GroupDesc)?.1 else {
        return Err(unexpected("group-desc"));
    };
    let groups = groups
        .into_iter()
        .map(|g| GroupMod {
            command: group_command::ADD,
            group_type: g.group_type,
            group_id: g.group_id,
            buckets: g.buckets,
        })
        .collect();
    out.extend(order_groups(groups).into_iter().map(Message::GroupMod));
    let R::Flow(flows) = c
        .multipart(Q::Flow(FlowStatsRequest {
            table_id: ofp::instruction::TABLE_ALL,
            out_port: port_no::ANY,
            out_group: ofp::group::group_id::ANY,
            cookie: 0,
            cookie_mask: 0,
            match_: Match::new(vec![]),
        }))?
        .1
    else {
        return Err(unexpected("flow stats"));
    };
    out.extend(flows.iter().map(|f| Message::FlowMod(flow_mod_of(f))));
    Ok(out.into_iter().map(|m| OfpMessage::new(0, m)).collect())
}

/// What a state holds, for the user.
pub fn summary(msgs: &[OfpMessage]) -> String {
    let count = |f: fn(&Message) -> bool| msgs.iter().filter(|m| f(&m.body)).count();
    format!(
        "{} flows, {} groups, {} meters, {} port configs",
        count(|m| matches!(m, Message::FlowMod(_))),
        count(|m| matches!(m, Message::GroupMod(_))),
        count(|m| matches!(m, Message::MeterMod(_))),
        count(|m| matches!(m, Message::PortMod(_))),
    )
}

/// `save`: writes the switch's state to `path`.
pub fn save(c: &mut Connection, path: &str, out: &mut dyn Write) -> Result<(), String> {
    let msgs = read_state(c).map_err(|e| e.to_string())?;
    let bytes = snapshot::encode(&msgs);
    let tmp = format!("{path}.tmp");
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{path}: {e}"))?;
    writeln!(out, "saved {} to {path}", summary(&msgs)).map_err(|e| e.to_string())
}

/// `restore`: sends the state in `path` to the switch; returns the errors
/// it answered with.
pub fn restore(
    c: &mut Connection,
    path: &str,
    bundle: bool,
    out: &mut dyn Write,
) -> Result<Vec<(u32, ErrorMsg)>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let msgs = snapshot::decode(&bytes).map_err(|e| format!("{path}: {e}"))?;
    let what = summary(&msgs);
    let (first, rest): (Vec<Message>, Vec<Message>) = msgs
        .into_iter()
        .map(|m| m.body)
        .partition(|m| matches!(m, Message::SetConfig(_) | Message::PortMod(_)));
    let mut errors = c.send_mods(first).map_err(|e| e.to_string())?;
    let more = if bundle {
        crate::bundle::send_bundle(c, 1, rest)
    } else {
        c.send_mods(rest)
    };
    errors.extend(more.map_err(|e| e.to_string())?);
    if errors.is_empty() {
        writeln!(out, "restored {what} from {path}").map_err(|e| e.to_string())?;
    }
    Ok(errors)
}
