//! Unit tests of the per-message translation (byte-level round trips
//! through the `ofp` codec).

use super::*;
use ofp::action::Action;
use ofp::message::{FlowRemoved, PortStatus};
use ofp::multipart::{FlowStats, FlowStatsRequest, Multipart};

const T: u32 = 9;

fn proxy() -> Proxy {
    Proxy::new(PortMap::new(T, 101, 103, 1).unwrap())
}

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn set_vid(v: u16) -> Action {
    Action::SetField(OxmField::VlanVid(v | vid::PRESENT, None))
}

fn flow_mod(command: u8, fields: Vec<OxmField>, actions: Vec<Action>) -> FlowMod {
    FlowMod {
        cookie: 0x55,
        cookie_mask: 0,
        table_id: 0,
        command,
        idle_timeout: 60,
        hard_timeout: 0,
        priority: 1,
        buffer_id: NO_BUFFER,
        out_port: port_no::ANY,
        out_group: 0xffff_ffff,
        flags: 0,
        match_: Match::new(fields),
        instructions: vec![Instruction::ApplyActions(actions)],
    }
}

fn decode(raw: &[u8]) -> OfpMessage {
    OfpMessage::decode(raw).unwrap()
}

#[test]
fn in_port_match_becomes_trunk_and_vlan() {
    let eth_dst = OxmField::EthDst([2, 0, 0, 0, 0, 2], None);
    let fm = flow_mod(
        cmd::ADD,
        vec![OxmField::InPort(1), eth_dst.clone()],
        vec![out(2)],
    );
    let got = proxy().flow_mod(&fm).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].match_.fields,
        [
            OxmField::InPort(T),
            OxmField::VlanVid(101 | vid::PRESENT, None),
            eth_dst
        ]
    );
    assert_eq!(
        got[0].instructions,
        [Instruction::ApplyActions(vec![
            set_vid(102),
            out(port_no::IN_PORT)
        ])]
    );
    assert_eq!((got[0].cookie, got[0].idle_timeout), (0x55, 60));
}

#[test]
fn flows_without_in_port_are_split_only_when_needed() {
    let p = proxy();
    // L3-style: output to one port, no in_port needed
    let dst = OxmField::Ipv4Dst("10.0.0.2".parse().unwrap(), None);
    let fm = flow_mod(
        cmd::ADD,
        vec![OxmField::EthType(0x0800), dst.clone()],
        vec![out(3)],
    );
    let got = p.flow_mod(&fm).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].match_.fields[..2],
        [
            OxmField::InPort(T),
            OxmField::VlanVid(vid::PRESENT, Some(vid::PRESENT))
        ]
    );
    // hub: FLOOD needs the ingress, one entry per VLAN
    let fm = flow_mod(cmd::ADD, vec![], vec![out(port_no::FLOOD)]);
    let got = p.flow_mod(&fm).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(
        got[1].match_.fields,
        [
            OxmField::InPort(T),
            OxmField::VlanVid(102 | vid::PRESENT, None)
        ]
    );
    assert_eq!(
        got[1].instructions,
        [Instruction::ApplyActions(vec![
            set_vid(101),
            out(port_no::IN_PORT),
            set_vid(103),
            out(port_no::IN_PORT)
        ])]
    );
    // strict delete without in_port removes both forms
    let del = flow_mod(cmd::DELETE_STRICT, vec![], vec![]);
    assert_eq!(p.flow_mod(&del).unwrap().len(), 4);
    // non-strict delete stays as general as asked
    let del = flow_mod(cmd::DELETE, vec![], vec![]);
    let got = p.flow_mod(&del).unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].match_.fields.is_empty());
}

#[test]
fn bad_matches_get_errors_and_pass_nothing() {
    let p = proxy();
    let mut pending = Pending::default();
    for fields in [
        vec![OxmField::InPort(4)],
        vec![OxmField::VlanVid(5 | vid::PRESENT, None)],
    ] {
        let fm = flow_mod(cmd::ADD, fields, vec![out(2)]);
        let raw = OfpMessage::new(77, Message::FlowMod(fm)).encode();
        let o = p.on_controller_msg(&raw, &mut pending);
        assert!(o.to_switch.is_empty());
        let err = decode(&o.to_controller[0]);
        assert_eq!(err.xid, 77);
        let Message::Error(e) = err.body else {
            panic!("not an error")
        };
        assert!(matches!(e.typed(), Some(ErrorCode::BadMatch(_))));
    }
    // vlan_vid=NONE (untagged) is accepted and dropped
    let fm = flow_mod(
        cmd::ADD,
        vec![OxmField::InPort(3), OxmField::VlanVid(vid::NONE, None)],
        vec![out(1)],
    );
    let got = p.flow_mod(&fm).unwrap();
    assert_eq!(
        got[0].match_.fields,
        [
            OxmField::InPort(T),
            OxmField::VlanVid(103 | vid::PRESENT, None)
        ]
    );
}

#[test]
fn packet_out_from_a_logical_port_is_tagged() {
    let p = proxy();
    let frame: Vec<u8> = (0u8..60).collect();
    let po = PacketOut {
        buffer_id: NO_BUFFER,
        in_port: 2,
        actions: vec![out(port_no::FLOOD)],
        data: frame.clone(),
    };
    let got = p.packet_out(&po).unwrap();
    assert_eq!(got.in_port, T);
    assert_eq!(&got.data[..12], &frame[..12]);
    assert_eq!(&got.data[12..16], &[0x81, 0x00, 0, 102]);
    assert_eq!(&got.data[16..], &frame[12..]);
    assert_eq!(
        got.actions,
        [
            set_vid(101),
            out(port_no::IN_PORT),
            set_vid(103),
            out(port_no::IN_PORT)
        ]
    );
    // from the controller: a tag is pushed per copy, output to the trunk
    let po = PacketOut {
        in_port: port_no::CONTROLLER,
        actions: vec![out(1)],
        ..po
    };
    let got = p.packet_out(&po).unwrap();
    assert_eq!(got.data, frame);
    assert_eq!(
        got.actions,
        [
            Action::PushVlan(0x8100),
            set_vid(101),
            out(T),
            Action::PopVlan
        ]
    );
    let bad = PacketOut { in_port: 7, ..po };
    assert!(p.packet_out(&bad).is_err());
}

#[test]
fn packet_in_maps_the_tag_to_in_port_and_strips_it() {
    let p = proxy();
    let mut frame: Vec<u8> = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0x20, 103];
    frame.extend_from_slice(&[0x08, 0x00, 1, 2, 3]);
    let pi = PacketIn {
        buffer_id: NO_BUFFER,
        total_len: frame.len() as u16,
        reason: 0,
        table_id: 0,
        cookie: 0,
        match_: Match::new(vec![OxmField::InPort(T)]),
        data: frame.clone(),
    };
    let raw = OfpMessage::new(5, Message::PacketIn(pi.clone())).encode();
    let o = p.on_switch_msg(&raw, &mut Pending::default());
    let got = decode(&o.to_controller[0]);
    assert_eq!(got.xid, 5);
    let Message::PacketIn(got) = got.body else {
        panic!("not a packet-in")
    };
    assert_eq!(got.match_.fields, [OxmField::InPort(3)]);
    assert_eq!(got.total_len as usize, frame.len() - 4);
    assert_eq!(&got.data[..12], &frame[..12]);
    assert_eq!(&got.data[12..], &frame[16..]);
    // untagged, other VLAN, other port: dropped
    let mut untagged = pi.clone();
    untagged.data = got.data.clone();
    assert!(p.packet_in(&untagged).is_none());
    let mut other = pi.clone();
    other.data[15] = 99;
    assert!(p.packet_in(&other).is_none());
    let mut local = pi;
    local.match_ = Match::new(vec![OxmField::InPort(port_no::LOCAL)]);
    assert!(p.packet_in(&local).is_none());
}

fn trunk_desc() -> Port {
    Port {
        port_no: T,
        hw_addr: [2, 1, 2, 3, 4, 5],
        name: "trunk0".into(),
        state: ofp::port::state::LIVE,
        ..Port::default()
    }
}

#[test]
fn port_desc_and_status_show_the_logical_ports() {
    let p = proxy();
    let local = Port {
        port_no: port_no::LOCAL,
        name: "br0".into(),
        ..Port::default()
    };
    let reply = Multipart::new(MultipartReplyBody::PortDesc(vec![local, trunk_desc()]));
    let raw = OfpMessage::new(9, Message::MultipartReply(reply)).encode();
    let o = p.on_switch_msg(&raw, &mut Pending::default());
    let Message::MultipartReply(got) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    let MultipartReplyBody::PortDesc(ports) = got.body else {
        panic!()
    };
    let names: Vec<(u32, String)> = ports.iter().map(|p| (p.port_no, p.name.clone())).collect();
    assert_eq!(
        names,
        [
            (1, "trunk0.101".to_string()),
            (2, "trunk0.102".to_string()),
            (3, "trunk0.103".to_string())
        ]
    );
    // the trunk going down: one port-status per logical port
    let mut down = trunk_desc();
    down.state = ofp::port::state::LINK_DOWN;
    let ps = Message::PortStatus(PortStatus {
        reason: ofp::message::port_reason::MODIFY,
        desc: down,
    });
    let o = p.on_switch_msg(&OfpMessage::new(0, ps).encode(), &mut Pending::default());
    assert_eq!(o.to_controller.len(), 3);
    for m in &o.to_controller {
        let Message::PortStatus(ps) = decode(m).body else {
            panic!()
        };
        assert_eq!(ps.desc.state, ofp::port::state::LINK_DOWN);
    }
}

#[test]
fn port_stats_ask_the_trunk_and_answer_per_logical_port() {
    let p = proxy();
    let mut pending = Pending::default();
    let req = Multipart::new(MultipartRequestBody::PortStats { port_no: 2 });
    let raw = OfpMessage::new(31, Message::MultipartRequest(req)).encode();
    let o = p.on_controller_msg(&raw, &mut pending);
    let Message::MultipartRequest(sent) = decode(&o.to_switch[0]).body else {
        panic!()
    };
    assert_eq!(sent.body, MultipartRequestBody::PortStats { port_no: T });
    let trunk = PortStats {
        port_no: T,
        rx_packets: 10,
        duration_sec: 42,
        ..PortStats::default()
    };
    let reply = Multipart::new(MultipartReplyBody::PortStats(vec![trunk]));
    let o = p.on_switch_msg(
        &OfpMessage::new(31, Message::MultipartReply(reply.clone())).encode(),
        &mut pending,
    );
    let Message::MultipartReply(got) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    let MultipartReplyBody::PortStats(stats) = got.body else {
        panic!()
    };
    assert_eq!(stats.len(), 1);
    assert_eq!((stats[0].port_no, stats[0].duration_sec), (2, 42));
    assert_eq!(stats[0].rx_packets, u64::MAX);
    // OFPP_ANY: every logical port
    let req = Multipart::new(MultipartRequestBody::PortStats {
        port_no: port_no::ANY,
    });
    p.on_controller_msg(
        &OfpMessage::new(32, Message::MultipartRequest(req)).encode(),
        &mut pending,
    );
    let o = p.on_switch_msg(
        &OfpMessage::new(32, Message::MultipartReply(reply)).encode(),
        &mut pending,
    );
    let Message::MultipartReply(got) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    let MultipartReplyBody::PortStats(stats) = got.body else {
        panic!()
    };
    assert_eq!(
        stats.iter().map(|s| s.port_no).collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

#[test]
fn flow_removed_and_flow_stats_map_the_match_back() {
    let p = proxy();
    let fm = flow_mod(
        cmd::ADD,
        vec![OxmField::InPort(2), OxmField::EthType(0x0806)],
        vec![out(1)],
    );
    let sw = p.flow_mod(&fm).unwrap().remove(0);
    let fr = FlowRemoved {
        cookie: 1,
        priority: 1,
        reason: 0,
        table_id: 0,
        duration_sec: 1,
        duration_nsec: 0,
        idle_timeout: 60,
        hard_timeout: 0,
        packet_count: 3,
        byte_count: 180,
        match_: sw.match_.clone(),
    };
    let o = p.on_switch_msg(
        &OfpMessage::new(0, Message::FlowRemoved(fr)).encode(),
        &mut Pending::default(),
    );
    let Message::FlowRemoved(got) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    assert_eq!(got.match_, fm.match_);
    // stats request with in_port, reply mapped back
    let req = Multipart::new(MultipartRequestBody::Flow(FlowStatsRequest {
        table_id: 0xff,
        out_port: 1,
        out_group: 0xffff_ffff,
        match_: Match::new(vec![OxmField::InPort(2)]),
        ..FlowStatsRequest::default()
    }));
    let o = p.on_controller_msg(
        &OfpMessage::new(3, Message::MultipartRequest(req)).encode(),
        &mut Pending::default(),
    );
    let Message::MultipartRequest(sent) = decode(&o.to_switch[0]).body else {
        panic!()
    };
    let MultipartRequestBody::Flow(r) = sent.body else {
        panic!()
    };
    assert_eq!(r.out_port, port_no::ANY);
    assert_eq!(
        r.match_.fields,
        [
            OxmField::InPort(T),
            OxmField::VlanVid(102 | vid::PRESENT, None)
        ]
    );
    let unsplit = p
        .flow_mod(&flow_mod(
            cmd::ADD,
            vec![OxmField::EthType(0x0800)],
            vec![out(1)],
        ))
        .unwrap()
        .remove(0);
    let stats = FlowStats {
        match_: unsplit.match_,
        ..FlowStats::default()
    };
    let reply = Multipart::new(MultipartReplyBody::Flow(vec![stats]));
    let o = p.on_switch_msg(
        &OfpMessage::new(3, Message::MultipartReply(reply)).encode(),
        &mut Pending::default(),
    );
    let Message::MultipartReply(got) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    let MultipartReplyBody::Flow(flows) = got.body else {
        panic!()
    };
    assert_eq!(flows[0].match_.fields, [OxmField::EthType(0x0800)]);
}

#[test]
fn everything_else_passes_with_its_bytes_and_xid() {
    let p = proxy();
    let mut pending = Pending::default();
    for body in [
        Message::BarrierRequest,
        Message::EchoRequest(ofp::message::Echo { data: vec![1, 2] }),
        Message::FeaturesRequest,
    ] {
        let raw = OfpMessage::new(0xabcd, body).encode();
        let o = p.on_controller_msg(&raw, &mut pending);
        assert_eq!(o.to_switch, std::slice::from_ref(&raw));
        assert!(o.to_controller.is_empty());
        let o = p.on_switch_msg(&raw, &mut pending);
        assert_eq!(o.to_controller, [raw]);
    }
    // a malformed flow-mod gets the codec's error, nothing reaches the switch
    let mut raw = OfpMessage::new(
        4,
        Message::FlowMod(flow_mod(cmd::ADD, vec![], vec![out(1)])),
    )
    .encode();
    raw[25] = 9; // command
    let o = p.on_controller_msg(&raw, &mut pending);
    assert!(o.to_switch.is_empty());
    let Message::Error(e) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    assert_eq!(
        e.typed(),
        Some(ErrorCode::FlowModFailed(FlowModFailedCode::BadCommand))
    );
}

#[test]
fn groups_and_port_mods() {
    let p = proxy();
    let gm = GroupMod {
        command: group_command::ADD,
        group_type: ofp::group::group_type::ALL,
        group_id: 1,
        buckets: vec![ofp::group::Bucket {
            weight: 0,
            watch_port: 2,
            watch_group: 0xffff_ffff,
            actions: vec![out(2)],
        }],
    };
    let got = p.group_mod(&gm).unwrap();
    assert_eq!(
        got.buckets[0].actions,
        [set_vid(102), out(port_no::IN_PORT)]
    );
    assert_eq!(got.buckets[0].watch_port, T);
    let mut flood = gm;
    flood.buckets[0].actions = vec![out(port_no::FLOOD)];
    assert!(p.group_mod(&flood).is_err());
    let pm = Message::PortMod(ofp::message::PortMod {
        port_no: 1,
        hw_addr: [0; 6],
        config: 1,
        mask: 1,
        advertise: 0,
    });
    let o = p.on_controller_msg(&OfpMessage::new(8, pm).encode(), &mut Pending::default());
    assert!(o.to_switch.is_empty());
    let Message::Error(e) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    assert_eq!(
        e.typed(),
        Some(ErrorCode::PortModFailed(PortModFailedCode::Eperm))
    );
}

#[test]
fn a_flood_too_big_for_one_message_is_refused() {
    let p = Proxy::new(PortMap::new(T, 1, 4094, 1).unwrap());
    let fm = flow_mod(
        cmd::ADD,
        vec![OxmField::InPort(1)],
        vec![out(port_no::FLOOD)],
    );
    let raw = OfpMessage::new(6, Message::FlowMod(fm)).encode();
    let o = p.on_controller_msg(&raw, &mut Pending::default());
    assert!(o.to_switch.is_empty());
    let Message::Error(e) = decode(&o.to_controller[0]).body else {
        panic!()
    };
    assert_eq!(
        e.typed(),
        Some(ErrorCode::BadAction(ofp::error::BadActionCode::TooMany))
    );
}
