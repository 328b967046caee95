//! Per-message translation between the controller's view (N logical
//! access ports) and the switch's (one trunk).
//!
//! Messages that name no port pass through as the original bytes (so the
//! xid and everything else is preserved); the types below are decoded with
//! the `ofp` codec, rewritten and encoded again with the same xid:
//!
//! | direction | message | translation |
//! |---|---|---|
//! | to switch | FLOW_MOD | match `in_port=L` -> `in_port=trunk, vlan_vid=VID(L)`; instructions via [`super::actions`]; a flow without `in_port` whose actions need the ingress is installed once per VLAN |
//! | to switch | PACKET_OUT | `in_port=L`: the data gets L's tag and enters as from the trunk; CONTROLLER: each copy is pushed a tag |
//! | to switch | GROUP_MOD | bucket actions; `watch_port=L` -> the trunk |
//! | to switch | PORT_MOD | refused for logical ports (EPERM): one VLAN of a trunk cannot be taken down |
//! | to switch | MULTIPART flow/aggregate/port-stats | match and port as above |
//! | to controller | PACKET_IN | `in_port` from the tag, tag stripped from the data |
//! | to controller | FLOW_REMOVED, flow stats | the match mapped back |
//! | to controller | PORT_STATUS, port desc | the trunk becomes the N logical ports (other ports are hidden) |
//! | to controller | port stats | one record per logical port with the trunk's duration; the counters are all ones, "not supported" in the spec, as the switch counts per port, not per VLAN |

use std::collections::HashMap;

use ofp::error::{
    BadMatchCode, BadRequestCode, DecodeError, ErrorCode, ErrorMsg, FlowModFailedCode,
    PortModFailedCode,
};
use ofp::group::{command as group_command, GroupMod};
use ofp::header::{msg_type, OFP_VERSION};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod, PacketIn, PacketOut, NO_BUFFER};
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody, PortStats};
use ofp::oxm::{vid, Match, OxmField};
use ofp::port::{port_no, Port};
use ofp::{Message, OfpMessage};

use super::actions::{translate_list, translate_set, Ctx, Refusal, State};
use super::portmap::{vid_value, PortMap};

/// What one incoming message turns into.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Encoded messages for the switch.
    pub to_switch: Vec<Vec<u8>>,
    /// Encoded messages for the controller.
    pub to_controller: Vec<Vec<u8>>,
}

/// State kept between a request and its reply: for each outstanding
/// port-stats request (by xid), the logical port asked for (`None`: all).
/// Bounded: cleared when it grows past [`PENDING_MAX`] (a switch that never
/// answers must not grow it forever).
#[derive(Debug, Default)]
pub struct Pending {
    port_stats: HashMap<u32, Option<u32>>,
}

const PENDING_MAX: usize = 4096;

/// The translator of one controller <-> switch connection pair.
pub struct Proxy {
    pub map: PortMap,
}

fn refused(code: ErrorCode, what: &'static str) -> Refusal {
    Refusal::Error(code, what)
}

fn encode(xid: u32, body: Message) -> Vec<u8> {
    OfpMessage::new(xid, body).encode()
}

/// The OFPT_ERROR answering `raw` with `code`.
fn error_reply(raw: &[u8], xid: u32, code: ErrorCode) -> Vec<u8> {
    encode(xid, Message::Error(ErrorMsg::from_request(code, raw)))
}

fn xid_of(raw: &[u8]) -> u32 {
    raw.get(4..8)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .unwrap_or(0)
}

/// Types decoded and rewritten in each direction; everything else passes.
fn translated_to_switch(ty: u8) -> bool {
    matches!(
        ty,
        msg_type::FLOW_MOD
            | msg_type::PACKET_OUT
            | msg_type::GROUP_MOD
            | msg_type::PORT_MOD
            | msg_type::MULTIPART_REQUEST
    )
}

fn translated_to_controller(ty: u8) -> bool {
    matches!(
        ty,
        msg_type::PACKET_IN
            | msg_type::FLOW_REMOVED
            | msg_type::PORT_STATUS
            | msg_type::MULTIPART_REPLY
    )
}

/// A match split into the logical ingress (its VLAN) and the other fields.
/// `vlan_vid=OFPVID_NONE` is dropped (access ports carry untagged frames;
/// a frame that arrives tagged on an access port is not told apart); any
/// other VLAN_VID / VLAN_PCP match is refused, since the switch sees only
/// the outer (location) tag.
fn split_match(map: &PortMap, m: &Match) -> Result<(Option<u16>, Vec<OxmField>), Refusal> {
    let bad = |c, what| refused(ErrorCode::BadMatch(c), what);
    let mut ingress = None;
    let mut rest = Vec::with_capacity(m.fields.len());
    for f in &m.fields {
        match f {
            OxmField::InPort(p) => {
                ingress =
                    Some(map.vid_of(*p).ok_or_else(|| {
                        bad(BadMatchCode::BadValue, "in_port is not a logical port")
                    })?);
            }
            OxmField::InPhyPort(p) => {
                if map.vid_of(*p).is_none() {
                    return Err(bad(
                        BadMatchCode::BadValue,
                        "in_phy_port is not a logical port",
                    ));
                }
            }
            OxmField::VlanVid(vid::NONE, None) => {}
            OxmField::VlanVid(..) | OxmField::VlanPcp(_) => {
                return Err(bad(
                    BadMatchCode::BadField,
                    "VLAN matches other than OFPVID_NONE (the proxy uses the outer tag)",
                ))
            }
            f => rest.push(f.clone()),
        }
    }
    Ok((ingress, rest))
}

/// The switch's match: pinned to VLAN `ingress` on the trunk; without an
/// ingress, `flow` entries still require the trunk and a tag (so that
/// set-field of VLAN_VID passes the switch's consistency check), while
/// non-strict patterns (delete, stats) stay as general as the controller's.
fn switch_match(map: &PortMap, ingress: Option<u16>, rest: &[OxmField], flow: bool) -> Match {
    let mut fields = Vec::with_capacity(rest.len() + 2);
    match ingress {
        Some(v) => {
            fields.push(OxmField::InPort(map.trunk));
            fields.push(OxmField::VlanVid(vid_value(v), None));
        }
        None if flow => {
            fields.push(OxmField::InPort(map.trunk));
            fields.push(OxmField::VlanVid(vid::PRESENT, Some(vid::PRESENT)));
        }
        None => {}
    }
    fields.extend_from_slice(rest);
    Match::new(fields)
}

/// The controller's view of a switch match (flow-removed, flow stats).
fn controller_match(map: &PortMap, m: &Match) -> Match {
    let pinned = m.fields.iter().find_map(|f| match f {
        OxmField::VlanVid(v, None) if v & vid::PRESENT != 0 => map.port_of(v & 0x0fff),
        _ => None,
    });
    let on_trunk = m.fields.contains(&OxmField::InPort(map.trunk));
    let mut fields = Vec::with_capacity(m.fields.len());
    for f in &m.fields {
        match f {
            OxmField::InPort(p) if *p == map.trunk => {
                if let Some(l) = pinned {
                    fields.push(OxmField::InPort(l));
                }
            }
            OxmField::VlanVid(..) if pinned.is_some() && on_trunk => {}
            OxmField::VlanVid(vid::PRESENT, Some(vid::PRESENT)) if on_trunk => {}
            f => fields.push(f.clone()),
        }
    }
    Match::new(fields)
}

/// Inserts an 802.1Q tag of VLAN `v` after the MAC addresses.
fn push_tag(data: &[u8], v: u16) -> Vec<u8> {
    if data.len() < 12 {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len() + 4);
    out.extend_from_slice(&data[..12]);
    out.extend_from_slice(&[0x81, 0x00]);
    out.extend_from_slice(&v.to_be_bytes());
    out.extend_from_slice(&data[12..]);
    out
}

/// The outer 802.1Q tag's VLAN id and the frame without it.
fn pop_tag(data: &[u8]) -> Option<(u16, Vec<u8>)> {
    if data.len() < 16 || data[12..14] != [0x81, 0x00] {
        return None;
    }
    let v = u16::from_be_bytes([data[14], data[15]]) & 0x0fff;
    let mut out = Vec::with_capacity(data.len() - 4);
    out.extend_from_slice(&data[..12]);
    out.extend_from_slice(&data[16..]);
    Some((v, out))
}

impl Proxy {
    pub fn new(map: PortMap) -> Self {
        Proxy { map }
    }

    fn flow_ctx(&self, ingress: Option<u16>) -> Ctx<'_> {
        Ctx {
            map: &self.map,
            ingress,
            trunk_out: port_no::IN_PORT,
            from_controller: false,
        }
    }

    /// A flow entry's instructions for the switch.
    fn instructions(
        &self,
        table_id: u8,
        insts: &[Instruction],
        ingress: Option<u16>,
    ) -> Result<Vec<Instruction>, Refusal> {
        let ctx = self.flow_ctx(ingress);
        // Later tables or the action set read the location tag.
        let continues = table_id != 0
            || insts
                .iter()
                .any(|i| matches!(i, Instruction::GotoTable(_) | Instruction::WriteActions(_)));
        insts
            .iter()
            .map(|i| {
                Ok(match i {
                    Instruction::ApplyActions(a) => Instruction::ApplyActions(translate_list(
                        ctx,
                        State::Tagged(None),
                        a,
                        continues,
                    )?),
                    Instruction::WriteActions(a) => {
                        Instruction::WriteActions(translate_set(ctx, a)?)
                    }
                    other => other.clone(),
                })
            })
            .collect()
    }

    /// FLOW_MOD -> one or more flow mods for the switch.
    pub fn flow_mod(&self, fm: &FlowMod) -> Result<Vec<FlowMod>, Refusal> {
        let (ingress, rest) = split_match(&self.map, &fm.match_)?;
        let with = |m: Match, instructions: Vec<Instruction>| FlowMod {
            match_: m,
            instructions,
            ..fm.clone()
        };
        let per_vlan =
            |f: &dyn Fn(u16) -> Result<FlowMod, Refusal>| -> Result<Vec<FlowMod>, Refusal> {
                self.map.ports().map(|(_, v)| f(v)).collect()
            };
        match fm.command {
            cmd::ADD | cmd::MODIFY | cmd::MODIFY_STRICT => {
                match self.instructions(fm.table_id, &fm.instructions, ingress) {
                    Ok(insts) => Ok(vec![with(
                        switch_match(&self.map, ingress, &rest, true),
                        insts,
                    )]),
                    // One entry per VLAN; a buffered packet (from one
                    // unknown VLAN) is not applied to any of them.
                    Err(Refusal::NeedIngress) if ingress.is_none() => per_vlan(&|v| {
                        Ok(FlowMod {
                            buffer_id: NO_BUFFER,
                            ..with(
                                switch_match(&self.map, Some(v), &rest, true),
                                self.instructions(fm.table_id, &fm.instructions, Some(v))?,
                            )
                        })
                    }),
                    Err(e) => Err(e),
                }
            }
            _ => {
                if self.map.vid_of(fm.out_port).is_some() {
                    return Err(refused(
                        ErrorCode::FlowModFailed(FlowModFailedCode::Unknown),
                        "out_port filter on a logical port (the switch outputs to the trunk)",
                    ));
                }
                if fm.command == cmd::DELETE_STRICT && ingress.is_none() {
                    // The entry may have been installed once, or once per VLAN.
                    let mut out =
                        vec![with(switch_match(&self.map, None, &rest, true), Vec::new())];
                    out.extend(per_vlan(&|v| {
                        Ok(with(
                            switch_match(&self.map, Some(v), &rest, true),
                            Vec::new(),
                        ))
                    })?);
                    return Ok(out);
                }
                let strict = fm.command == cmd::DELETE_STRICT;
                Ok(vec![with(
                    switch_match(&self.map, ingress, &rest, strict),
                    Vec::new(),
                )])
            }
        }
    }

    /// PACKET_OUT for the switch.
    pub fn packet_out(&self, po: &PacketOut) -> Result<PacketOut, Refusal> {
        if let Some(v) = self.map.vid_of(po.in_port) {
            let actions = translate_list(
                self.flow_ctx(Some(v)),
                State::Tagged(None),
                &po.actions,
                false,
            )?;
            let data = if po.buffer_id == NO_BUFFER {
                push_tag(&po.data, vid_value(v) & 0x0fff)
            } else {
                po.data.clone()
            };
            return Ok(PacketOut {
                buffer_id: po.buffer_id,
                in_port: self.map.trunk,
                actions,
                data,
            });
        }
        if po.in_port != port_no::CONTROLLER && po.in_port != port_no::LOCAL {
            return Err(refused(
                ErrorCode::BadRequest(BadRequestCode::BadPort),
                "packet-out in_port is not a logical port, CONTROLLER or LOCAL",
            ));
        }
        let ctx = Ctx {
            map: &self.map,
            ingress: None,
            trunk_out: self.map.trunk,
            from_controller: true,
        };
        let actions = translate_list(ctx, State::Popped, &po.actions, false)?;
        Ok(PacketOut {
            actions,
            ..po.clone()
        })
    }

    /// GROUP_MOD for the switch: each bucket is translated on its own
    /// (a bucket works on a copy, and the group may be reached from any
    /// ingress, so actions that need it are refused).
    pub fn group_mod(&self, gm: &GroupMod) -> Result<GroupMod, Refusal> {
        if gm.command == group_command::DELETE {
            return Ok(gm.clone());
        }
        let mut out = gm.clone();
        for b in &mut out.buckets {
            b.actions = match translate_list(self.flow_ctx(None), State::Tagged(None), &b.actions, false) {
                Err(Refusal::NeedIngress) => {
                    return Err(refused(
                        ErrorCode::BadAction(ofp::error::BadActionCode::BadOutPort),
                        "group bucket needs the ingress port (FLOOD, IN_PORT or CONTROLLER after another output)",
                    ))
                }
                r => r?,
            };
            if self.map.vid_of(b.watch_port).is_some() {
                b.watch_port = self.map.trunk;
            }
        }
        Ok(out)
    }

    /// One message from the controller.
    pub fn on_controller_msg(&self, raw: &[u8], pending: &mut Pending) -> Outcome {
        let mut out = Outcome::default();
        let pass = raw.len() < 8 || raw[0] != OFP_VERSION || !translated_to_switch(raw[1]);
        if pass {
            out.to_switch.push(raw.to_vec());
            return out;
        }
        let xid = xid_of(raw);
        let msg = match OfpMessage::decode(raw) {
            Ok(m) => m,
            Err(DecodeError { code, .. }) => {
                out.to_controller.push(error_reply(raw, xid, code));
                return out;
            }
        };
        let result: Result<Vec<Message>, Refusal> = match &msg.body {
            Message::FlowMod(fm) => self
                .flow_mod(fm)
                .map(|v| v.into_iter().map(Message::FlowMod).collect()),
            Message::PacketOut(po) => self.packet_out(po).map(|p| vec![Message::PacketOut(p)]),
            Message::GroupMod(gm) => self.group_mod(gm).map(|g| vec![Message::GroupMod(g)]),
            Message::PortMod(pm) => {
                if self.map.vid_of(pm.port_no).is_some() {
                    Err(refused(
                        ErrorCode::PortModFailed(PortModFailedCode::Eperm),
                        "port-mod of a logical port (one VLAN of the trunk)",
                    ))
                } else if pm.port_no == port_no::LOCAL {
                    Ok(vec![msg.body.clone()])
                } else {
                    Err(refused(
                        ErrorCode::PortModFailed(PortModFailedCode::BadPort),
                        "port-mod of a port that is not a logical port",
                    ))
                }
            }
            Message::MultipartRequest(mp) => self.multipart_request(mp, xid, pending),
            _ => Ok(vec![msg.body.clone()]),
        };
        match result {
            Ok(msgs) => {
                let encoded: Vec<Vec<u8>> = msgs.into_iter().map(|m| encode(xid, m)).collect();
                // A FLOOD over thousands of VLANs can outgrow the 16-bit
                // length field.
                if encoded.iter().any(|m| m.len() > usize::from(u16::MAX)) {
                    out.to_controller.push(error_reply(
                        raw,
                        xid,
                        ErrorCode::BadAction(ofp::error::BadActionCode::TooMany),
                    ));
                } else {
                    out.to_switch.extend(encoded);
                }
            }
            Err(Refusal::Error(code, what)) => {
                tracing::info!("harmless proxy: refused xid {xid}: {what}");
                out.to_controller.push(error_reply(raw, xid, code));
            }
            Err(Refusal::NeedIngress) => out.to_controller.push(error_reply(
                raw,
                xid,
                ErrorCode::BadAction(ofp::error::BadActionCode::BadOutPort),
            )),
        }
        out
    }

    fn multipart_request(
        &self,
        mp: &ofp::multipart::MultipartRequest,
        xid: u32,
        pending: &mut Pending,
    ) -> Result<Vec<Message>, Refusal> {
        let mut mp = mp.clone();
        match &mut mp.body {
            MultipartRequestBody::Flow(r) | MultipartRequestBody::Aggregate(r) => {
                let (ingress, rest) = split_match(&self.map, &r.match_)?;
                r.match_ = switch_match(&self.map, ingress, &rest, false);
                if self.map.vid_of(r.out_port).is_some() {
                    r.out_port = port_no::ANY;
                }
            }
            MultipartRequestBody::PortStats { port_no: p } => {
                let asked = if *p == port_no::ANY {
                    None
                } else if self.map.vid_of(*p).is_some() {
                    Some(*p)
                } else {
                    return Err(refused(
                        ErrorCode::BadRequest(BadRequestCode::BadPort),
                        "port stats of a port that is not a logical port",
                    ));
                };
                *p = self.map.trunk;
                if pending.port_stats.len() >= PENDING_MAX {
                    pending.port_stats.clear();
                }
                pending.port_stats.insert(xid, asked);
            }
            _ => {}
        }
        Ok(vec![Message::MultipartRequest(mp)])
    }

    /// The logical ports' descriptions from the switch's port list.
    fn logical_ports(&self, ports: &[Port]) -> Vec<Port> {
        match ports.iter().find(|p| p.port_no == self.map.trunk) {
            Some(trunk) => self
                .map
                .ports()
                .map(|(l, v)| self.map.logical_desc(trunk, l, v))
                .collect(),
            None => Vec::new(),
        }
    }

    /// PACKET_IN for the controller, or `None` to drop it (not from the
    /// trunk, untagged, or a VLAN that is not ours).
    pub fn packet_in(&self, pi: &PacketIn) -> Option<PacketIn> {
        if pi.match_.get(ofp::oxm::field::IN_PORT) != Some(&OxmField::InPort(self.map.trunk)) {
            return None;
        }
        let (v, data) = pop_tag(&pi.data)?;
        let l = self.map.port_of(v)?;
        let mut fields = Vec::with_capacity(pi.match_.fields.len());
        for f in &pi.match_.fields {
            match f {
                OxmField::InPort(_) => fields.push(OxmField::InPort(l)),
                OxmField::InPhyPort(_) => fields.push(OxmField::InPhyPort(l)),
                OxmField::VlanVid(..) | OxmField::VlanPcp(_) => {}
                f => fields.push(f.clone()),
            }
        }
        Some(PacketIn {
            total_len: pi.total_len.saturating_sub(4),
            match_: Match::new(fields),
            data,
            ..pi.clone()
        })
    }

    /// One message from the switch.
    pub fn on_switch_msg(&self, raw: &[u8], pending: &mut Pending) -> Outcome {
        let mut out = Outcome::default();
        if raw.len() < 8 || raw[0] != OFP_VERSION || !translated_to_controller(raw[1]) {
            out.to_controller.push(raw.to_vec());
            return out;
        }
        let msg = match OfpMessage::decode(raw) {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!("harmless proxy: dropped a message from the switch: {e}");
                return out;
            }
        };
        let xid = msg.xid;
        let msgs: Vec<Message> = match msg.body {
            Message::PacketIn(pi) => self
                .packet_in(&pi)
                .map(Message::PacketIn)
                .into_iter()
                .collect(),
            Message::FlowRemoved(mut fr) => {
                fr.match_ = controller_match(&self.map, &fr.match_);
                vec![Message::FlowRemoved(fr)]
            }
            Message::PortStatus(ps) => {
                if ps.desc.port_no != self.map.trunk {
                    Vec::new()
                } else {
                    self.logical_ports(std::slice::from_ref(&ps.desc))
                        .into_iter()
                        .map(|desc| {
                            Message::PortStatus(ofp::message::PortStatus {
                                reason: ps.reason,
                                desc,
                            })
                        })
                        .collect()
                }
            }
            Message::MultipartReply(mut mp) => {
                match &mut mp.body {
                    MultipartReplyBody::PortDesc(ports) => *ports = self.logical_ports(ports),
                    MultipartReplyBody::PortStats(stats) => {
                        let asked = pending.port_stats.get(&xid).copied().flatten();
                        if !mp_more(mp.flags) {
                            pending.port_stats.remove(&xid);
                        }
                        *stats = self.logical_stats(stats, asked);
                    }
                    MultipartReplyBody::Flow(flows) => {
                        for f in flows.iter_mut() {
                            f.match_ = controller_match(&self.map, &f.match_);
                        }
                    }
                    _ => {}
                }
                vec![Message::MultipartReply(mp)]
            }
            other => vec![other],
        };
        out.to_controller
            .extend(msgs.into_iter().map(|m| encode(xid, m)));
        out
    }

    /// Port stats records for the controller: the trunk's record becomes
    /// one per logical port (or the one asked for).
    fn logical_stats(&self, stats: &[PortStats], asked: Option<u32>) -> Vec<PortStats> {
        let Some(trunk) = stats.iter().find(|s| s.port_no == self.map.trunk) else {
            return Vec::new();
        };
        self.map
            .ports()
            .filter(|(l, _)| asked.is_none_or(|a| a == *l))
            .map(|(l, _)| PortStats {
                port_no: l,
                rx_packets: u64::MAX,
                tx_packets: u64::MAX,
                rx_bytes: u64::MAX,
                tx_bytes: u64::MAX,
                rx_dropped: u64::MAX,
                tx_dropped: u64::MAX,
                rx_errors: u64::MAX,
                tx_errors: u64::MAX,
                rx_frame_err: u64::MAX,
                rx_over_err: u64::MAX,
                rx_crc_err: u64::MAX,
                collisions: u64::MAX,
                duration_sec: trunk.duration_sec,
                duration_nsec: trunk.duration_nsec,
            })
            .collect()
    }
}

fn mp_more(flags: u16) -> bool {
    flags & ofp::multipart::OFPMPF_REPLY_MORE != 0
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
