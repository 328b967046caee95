//! Reverse cross-check vectors: messages built from typed `ofp` values,
//! encoded by oxflow, for os-ken (and tshark) to parse.
//!
//! Usage: `cargo run -p ofp --example emit_vectors -- OUT.json`
//!
//! Writes a JSON list of `{name, hex, expect}`. `expect` maps a path on the
//! os-ken message object to the value os-ken must find there (checked by
//! tests/python/test_ofp_crosscheck.py):
//! - `"class"`: the os-ken class name of the parsed message;
//! - dotted attribute paths with list indices, e.g.
//!   `"instructions[0].actions[0].port"`;
//! - a path ending in a match with an object value: the match must hold
//!   exactly those OXM fields (`[value, mask]` for masked ones);
//! - strings compare to os-ken's text forms (MAC, IPv4, IPv6); against a
//!   byte string, `"hex:..."` compares the bytes in hex and any other string
//!   the NUL-stripped UTF-8 text.
//!
//! The values here are written by hand, independently of the os-ken forward
//! vectors (tests/vectors/ofp), so a layout error shared by the codec and its
//! own unit tests still shows up as a mismatch.

use std::net::{Ipv4Addr, Ipv6Addr};

use ofp::action::Action;
use ofp::error::ErrorMsg;
use ofp::group::{Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{
    AsyncConfig, Echo, Experimenter, FeaturesReply, FlowMod, FlowRemoved, Hello, PacketIn,
    PacketOut, PortMod, PortStatus, Role, SwitchConfig, TableMod,
};
use ofp::meter::{MeterBand, MeterMod};
use ofp::multipart::{
    AggregateStats, BucketCounter, Desc, ExperimenterMultipart, FlowStats, FlowStatsRequest,
    GroupDesc, GroupFeatures, GroupStats, MeterBandStats, MeterConfig, MeterFeatures, MeterStats,
    MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody, PortStats,
    QueueStats, TableStats,
};
use ofp::oxm::{Match, OxmField};
use ofp::port::Port;
use ofp::queue::{PacketQueue, QueueGetConfigReply, QueueGetConfigRequest, QueueProp};
use ofp::table_features::{ActionId, InstructionId, OxmId, TableFeatureProp, TableFeatures};
use ofp::{Message, OfpMessage};
use serde_json::{json, Map, Value};

const ANY: u32 = 0xffff_ffff;
const NO_BUFFER: u32 = 0xffff_ffff;
const CONTROLLER: u32 = 0xffff_fffd;
const EXP: u32 = 0x00c0_ffee;
const MAC_A: [u8; 6] = [0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f];
const MAC_B: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x07];

/// The list of vectors being built; xids count up from 0x100.
struct Emitter {
    items: Vec<Value>,
}

impl Emitter {
    fn add(&mut self, name: &str, body: Message, expect: Value) {
        let xid = 0x100 + self.items.len() as u32;
        let bytes = OfpMessage { xid, body }.encode();
        self.items.push(json!({
            "name": format!("rev_{name}"),
            "hex": hex::encode(bytes),
            "expect": expect,
        }));
    }
}

/// A small Ethernet/IPv4/ICMP echo frame (valid checksums are not needed by
/// either parser, but the lengths are consistent).
fn frame() -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&MAC_A);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&[
        0x45, 0x00, 0x00, 0x1c, 0x00, 0x07, 0x00, 0x00, 0x40, 0x01, 0x66, 0xd8, 10, 0, 0, 1, 10, 0,
        0, 2,
    ]);
    f.extend_from_slice(&[0x08, 0x00, 0xf7, 0xfd, 0x00, 0x01, 0x00, 0x01]);
    f
}

fn m(fields: Vec<OxmField>) -> Match {
    Match { fields }
}

fn out(port: u32) -> Action {
    Action::Output {
        port,
        max_len: 0xffff,
    }
}

fn flow_mod(match_: Match, instructions: Vec<Instruction>) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: 0,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: NO_BUFFER,
        out_port: ANY,
        out_group: ANY,
        flags: 0,
        match_,
        instructions,
    }
}

fn port(no: u32, name: &str) -> Port {
    Port {
        port_no: no,
        hw_addr: MAC_B,
        name: name.to_owned(),
        config: 1 << 6,
        state: 1 << 2,
        curr: (1 << 5) | (1 << 11),
        advertised: 1 << 5,
        supported: (1 << 3) | (1 << 5),
        peer: 0,
        curr_speed: 1_000_000,
        max_speed: 10_000_000,
    }
}

fn port_expect(prefix: &str, no: u32, name: &str) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert(format!("{prefix}port_no"), json!(no));
    e.insert(format!("{prefix}hw_addr"), json!("02:00:00:00:00:07"));
    e.insert(format!("{prefix}name"), json!(name));
    e.insert(format!("{prefix}config"), json!(64));
    e.insert(format!("{prefix}state"), json!(4));
    e.insert(format!("{prefix}curr"), json!(2080));
    e.insert(format!("{prefix}advertised"), json!(32));
    e.insert(format!("{prefix}supported"), json!(40));
    e.insert(format!("{prefix}peer"), json!(0));
    e.insert(format!("{prefix}curr_speed"), json!(1_000_000));
    e.insert(format!("{prefix}max_speed"), json!(10_000_000));
    e
}

fn with(mut base: Map<String, Value>, extra: Value) -> Value {
    if let Value::Object(x) = extra {
        base.extend(x);
    }
    Value::Object(base)
}

fn messages(e: &mut Emitter) {
    e.add(
        "hello",
        Message::Hello(Hello::ofp13()),
        json!({"class": "OFPHello", "elements[0].versions": [4]}),
    );
    e.add(
        "hello_no_elements",
        Message::Hello(Hello {
            version: 4,
            elements: vec![],
        }),
        json!({"class": "OFPHello", "elements": []}),
    );
    let request = OfpMessage {
        xid: 77,
        body: Message::FeaturesRequest,
    }
    .encode();
    e.add(
        "error_bad_request",
        Message::Error(ErrorMsg::Standard {
            err_type: 1,
            code: 1,
            data: request.clone(),
        }),
        json!({"class": "OFPErrorMsg", "type": 1, "code": 1,
               "data": format!("hex:{}", hex::encode(&request))}),
    );
    let long = OfpMessage {
        xid: 78,
        body: Message::FlowMod(flow_mod(
            m(vec![
                OxmField::InPort(1),
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1), None),
            ]),
            vec![Instruction::ApplyActions(vec![out(1), out(2), out(3)])],
        )),
    }
    .encode();
    e.add(
        "error_truncated_request",
        Message::Error(ErrorMsg::Standard {
            err_type: 5,
            code: 2,
            data: long[..64].to_vec(),
        }),
        json!({"class": "OFPErrorMsg", "type": 5, "code": 2,
               "data": format!("hex:{}", hex::encode(&long[..64]))}),
    );
    e.add(
        "error_experimenter",
        Message::Error(ErrorMsg::Experimenter {
            exp_type: 9,
            experimenter: EXP,
            data: b"why".to_vec(),
        }),
        json!({"class": "OFPErrorMsg", "type": 0xffff, "exp_type": 9,
               "experimenter": EXP, "data": "hex:776879"}),
    );
    e.add(
        "echo_request",
        Message::EchoRequest(Echo {
            data: b"hello".to_vec(),
        }),
        json!({"class": "OFPEchoRequest", "data": "hex:68656c6c6f"}),
    );
    e.add(
        "echo_reply",
        Message::EchoReply(Echo { data: vec![] }),
        json!({"class": "OFPEchoReply", "data": "hex:"}),
    );
    e.add(
        "experimenter",
        Message::Experimenter(Experimenter {
            experimenter: EXP,
            exp_type: 42,
            data: vec![1, 2, 3, 4, 5],
        }),
        json!({"class": "OFPExperimenter", "experimenter": EXP, "exp_type": 42,
               "data": "hex:0102030405"}),
    );
    e.add(
        "features_request",
        Message::FeaturesRequest,
        json!({"class": "OFPFeaturesRequest"}),
    );
    e.add(
        "features_reply",
        Message::FeaturesReply(FeaturesReply {
            datapath_id: 0x0011_2233_4455_6677,
            n_buffers: 0,
            n_tables: 64,
            auxiliary_id: 1,
            capabilities: 0x4f,
            reserved: 0,
        }),
        json!({"class": "OFPSwitchFeatures", "datapath_id": 0x0011_2233_4455_6677_u64,
               "n_buffers": 0, "n_tables": 64, "auxiliary_id": 1, "capabilities": 0x4f}),
    );
    e.add(
        "get_config_request",
        Message::GetConfigRequest,
        json!({"class": "OFPGetConfigRequest"}),
    );
    e.add(
        "get_config_reply",
        Message::GetConfigReply(SwitchConfig {
            flags: 1,
            miss_send_len: 0xffe5,
        }),
        json!({"class": "OFPGetConfigReply", "flags": 1, "miss_send_len": 0xffe5}),
    );
    e.add(
        "set_config",
        Message::SetConfig(SwitchConfig {
            flags: 0,
            miss_send_len: 256,
        }),
        json!({"class": "OFPSetConfig", "flags": 0, "miss_send_len": 256}),
    );
    let f = frame();
    e.add(
        "packet_in",
        Message::PacketIn(PacketIn {
            buffer_id: NO_BUFFER,
            total_len: f.len() as u16,
            reason: 1,
            table_id: 7,
            cookie: 0xfeed_f00d,
            match_: m(vec![
                OxmField::InPort(9),
                OxmField::Metadata(0x77, None),
                OxmField::TunnelId(0x1234, None),
            ]),
            data: f.clone(),
        }),
        json!({"class": "OFPPacketIn", "buffer_id": NO_BUFFER, "total_len": f.len(),
               "reason": 1, "table_id": 7, "cookie": 0xfeed_f00d_u64,
               "match": {"in_port": 9, "metadata": 0x77, "tunnel_id": 0x1234},
               "data": format!("hex:{}", hex::encode(&f))}),
    );
    e.add(
        "flow_removed",
        Message::FlowRemoved(FlowRemoved {
            cookie: 99,
            priority: 7,
            reason: 1,
            table_id: 4,
            duration_sec: 100,
            duration_nsec: 999,
            idle_timeout: 5,
            hard_timeout: 100,
            packet_count: 1 << 40,
            byte_count: 1 << 50,
            match_: m(vec![
                OxmField::EthType(0x86dd),
                OxmField::Ipv6Src("2001:db8::5".parse::<Ipv6Addr>().unwrap(), None),
            ]),
        }),
        json!({"class": "OFPFlowRemoved", "cookie": 99, "priority": 7, "reason": 1,
               "table_id": 4, "duration_sec": 100, "duration_nsec": 999,
               "idle_timeout": 5, "hard_timeout": 100, "packet_count": 1_u64 << 40,
               "byte_count": 1_u64 << 50,
               "match": {"eth_type": 0x86dd, "ipv6_src": "2001:db8::5"}}),
    );
    e.add(
        "port_status",
        Message::PortStatus(PortStatus {
            reason: 2,
            desc: port(3, "veth3"),
        }),
        with(
            port_expect("desc.", 3, "veth3"),
            json!({"class": "OFPPortStatus", "reason": 2}),
        ),
    );
    e.add(
        "packet_out_data",
        Message::PacketOut(PacketOut {
            buffer_id: NO_BUFFER,
            in_port: CONTROLLER,
            actions: vec![Action::PushVlan(0x8100), out(4)],
            data: f.clone(),
        }),
        json!({"class": "OFPPacketOut", "buffer_id": NO_BUFFER, "in_port": CONTROLLER,
               "actions_len": 24, "actions[0].ethertype": 0x8100, "actions[1].port": 4,
               "data": format!("hex:{}", hex::encode(&f))}),
    );
    e.add(
        "packet_out_buffer",
        Message::PacketOut(PacketOut {
            buffer_id: 12,
            in_port: 1,
            actions: vec![out(0xffff_fffb)],
            data: vec![],
        }),
        json!({"class": "OFPPacketOut", "buffer_id": 12, "in_port": 1,
               "actions[0].port": 0xffff_fffb_u32, "data": null}),
    );
    e.add(
        "flow_mod_add",
        Message::FlowMod(FlowMod {
            cookie: 4660,
            idle_timeout: 10,
            hard_timeout: 20,
            priority: 100,
            flags: 1,
            ..flow_mod(
                m(vec![
                    OxmField::InPort(7),
                    OxmField::EthType(0x0800),
                    OxmField::Ipv4Dst(
                        Ipv4Addr::new(10, 0, 0, 0),
                        Some(Ipv4Addr::new(255, 0, 0, 0)),
                    ),
                ]),
                vec![Instruction::ApplyActions(vec![out(2)])],
            )
        }),
        json!({"class": "OFPFlowMod", "cookie": 4660, "priority": 100, "idle_timeout": 10,
               "hard_timeout": 20, "flags": 1, "command": 0, "buffer_id": NO_BUFFER,
               "out_port": ANY, "out_group": ANY,
               "match": {"in_port": 7, "eth_type": 2048,
                         "ipv4_dst": ["10.0.0.0", "255.0.0.0"]},
               "instructions[0].type": 4, "instructions[0].actions[0].port": 2}),
    );
    e.add(
        "flow_mod_delete",
        Message::FlowMod(FlowMod {
            cookie: 0x10,
            cookie_mask: 0xf0,
            table_id: 0xff,
            command: 3,
            out_port: 5,
            out_group: 6,
            ..flow_mod(m(vec![]), vec![])
        }),
        json!({"class": "OFPFlowMod", "command": 3, "table_id": 255, "cookie": 16,
               "cookie_mask": 240, "out_port": 5, "out_group": 6, "match": {},
               "instructions": []}),
    );
    for (name, gtype, buckets) in [
        (
            "all",
            0u8,
            vec![
                Bucket {
                    weight: 0,
                    watch_port: ANY,
                    watch_group: ANY,
                    actions: vec![out(1)],
                },
                Bucket {
                    weight: 0,
                    watch_port: ANY,
                    watch_group: ANY,
                    actions: vec![out(2)],
                },
            ],
        ),
        (
            "select",
            1,
            vec![Bucket {
                weight: 50,
                watch_port: ANY,
                watch_group: ANY,
                actions: vec![Action::SetQueue(1), out(3)],
            }],
        ),
        (
            "indirect",
            2,
            vec![Bucket {
                weight: 0,
                watch_port: ANY,
                watch_group: ANY,
                actions: vec![Action::DecNwTtl, out(3)],
            }],
        ),
        (
            "ff",
            3,
            vec![Bucket {
                weight: 0,
                watch_port: 3,
                watch_group: 8,
                actions: vec![out(3)],
            }],
        ),
    ] {
        let expect = json!({
            "class": "OFPGroupMod", "command": 0, "type": gtype, "group_id": 10 + gtype as u32,
            "buckets[0].weight": buckets[0].weight, "buckets[0].watch_port": buckets[0].watch_port,
            "buckets[0].watch_group": buckets[0].watch_group,
            "buckets[0].actions[-1].port": 3 - u32::from(gtype == 0) * 2,
        });
        e.add(
            &format!("group_mod_{name}"),
            Message::GroupMod(GroupMod {
                command: 0,
                group_type: gtype,
                group_id: 10 + gtype as u32,
                buckets,
            }),
            expect,
        );
    }
    e.add(
        "group_mod_delete",
        Message::GroupMod(GroupMod {
            command: 2,
            group_type: 0,
            group_id: 0xffff_fffc,
            buckets: vec![],
        }),
        json!({"class": "OFPGroupMod", "command": 2, "group_id": 0xffff_fffc_u32, "buckets": []}),
    );
    e.add(
        "port_mod",
        Message::PortMod(PortMod {
            port_no: 3,
            hw_addr: MAC_B,
            config: 1,
            mask: 0x65,
            advertise: 0x20,
        }),
        json!({"class": "OFPPortMod", "port_no": 3, "hw_addr": "02:00:00:00:00:07",
               "config": 1, "mask": 0x65, "advertise": 0x20}),
    );
    e.add(
        "table_mod",
        Message::TableMod(TableMod {
            table_id: 2,
            config: 0,
        }),
        json!({"class": "OFPTableMod", "table_id": 2, "config": 0}),
    );
    e.add(
        "meter_mod_drop",
        Message::MeterMod(MeterMod {
            command: 0,
            flags: 0b101,
            meter_id: 1,
            bands: vec![MeterBand::Drop {
                rate: 10_000,
                burst_size: 1000,
            }],
        }),
        json!({"class": "OFPMeterMod", "command": 0, "flags": 5, "meter_id": 1,
               "bands[0].type": 1, "bands[0].rate": 10_000, "bands[0].burst_size": 1000}),
    );
    e.add(
        "meter_mod_dscp_remark",
        Message::MeterMod(MeterMod {
            command: 1,
            flags: 2,
            meter_id: 2,
            bands: vec![MeterBand::DscpRemark {
                rate: 300,
                burst_size: 0,
                prec_level: 2,
            }],
        }),
        json!({"class": "OFPMeterMod", "command": 1, "flags": 2, "meter_id": 2,
               "bands[0].type": 2, "bands[0].rate": 300, "bands[0].prec_level": 2}),
    );
    e.add(
        "meter_mod_experimenter_band",
        Message::MeterMod(MeterMod {
            command: 0,
            flags: 1,
            meter_id: 3,
            bands: vec![MeterBand::Experimenter {
                rate: 5,
                burst_size: 6,
                experimenter: EXP,
                data: vec![],
            }],
        }),
        json!({"class": "OFPMeterMod", "meter_id": 3, "bands[0].type": 0xffff,
               "bands[0].rate": 5, "bands[0].burst_size": 6, "bands[0].experimenter": EXP}),
    );
    e.add(
        "barrier_request",
        Message::BarrierRequest,
        json!({"class": "OFPBarrierRequest"}),
    );
    e.add(
        "barrier_reply",
        Message::BarrierReply,
        json!({"class": "OFPBarrierReply"}),
    );
    e.add(
        "queue_get_config_request",
        Message::QueueGetConfigRequest(QueueGetConfigRequest { port: ANY }),
        json!({"class": "OFPQueueGetConfigRequest", "port": ANY}),
    );
    e.add(
        "queue_get_config_reply",
        Message::QueueGetConfigReply(QueueGetConfigReply {
            port: 4,
            queues: vec![
                PacketQueue {
                    queue_id: 0,
                    port: 4,
                    properties: vec![QueueProp::MinRate(200), QueueProp::MaxRate(800)],
                },
                PacketQueue {
                    queue_id: 1,
                    port: 4,
                    properties: vec![QueueProp::Experimenter {
                        experimenter: EXP,
                        data: vec![9; 8],
                    }],
                },
            ],
        }),
        json!({"class": "OFPQueueGetConfigReply", "port": 4,
               "queues[0].queue_id": 0, "queues[0].port": 4,
               "queues[0].properties[0].property": 1, "queues[0].properties[0].rate": 200,
               "queues[0].properties[1].property": 2, "queues[0].properties[1].rate": 800,
               "queues[1].queue_id": 1, "queues[1].properties[0].property": 0xffff,
               "queues[1].properties[0].experimenter": EXP,
               "queues[1].properties[0].data": [9, 9, 9, 9, 9, 9, 9, 9]}),
    );
    e.add(
        "role_request",
        Message::RoleRequest(Role {
            role: 2,
            generation_id: 17,
        }),
        json!({"class": "OFPRoleRequest", "role": 2, "generation_id": 17}),
    );
    e.add(
        "role_reply",
        Message::RoleReply(Role {
            role: 1,
            generation_id: u64::MAX,
        }),
        json!({"class": "OFPRoleReply", "role": 1, "generation_id": u64::MAX}),
    );
    e.add(
        "get_async_request",
        Message::GetAsyncRequest,
        json!({"class": "OFPGetAsyncRequest"}),
    );
    let cfg = AsyncConfig {
        packet_in_mask: [3, 1],
        port_status_mask: [7, 0],
        flow_removed_mask: [15, 4],
    };
    e.add(
        "get_async_reply",
        Message::GetAsyncReply(cfg),
        json!({"class": "OFPGetAsyncReply", "packet_in_mask": [3, 1],
               "port_status_mask": [7, 0], "flow_removed_mask": [15, 4]}),
    );
    e.add(
        "set_async",
        Message::SetAsync(cfg),
        json!({"class": "OFPSetAsync", "packet_in_mask": [3, 1],
               "port_status_mask": [7, 0], "flow_removed_mask": [15, 4]}),
    );
}

fn mp_req(e: &mut Emitter, name: &str, flags: u16, body: MultipartRequestBody, expect: Value) {
    e.add(
        &format!("mp_{name}"),
        Message::MultipartRequest(MultipartRequest { flags, body }),
        expect,
    );
}

fn mp_rep(e: &mut Emitter, name: &str, flags: u16, body: MultipartReplyBody, expect: Value) {
    e.add(
        &format!("mp_{name}"),
        Message::MultipartReply(MultipartReply { flags, body }),
        expect,
    );
}

fn table_props() -> Vec<TableFeatureProp> {
    // OXM headers: class 0x8000, field << 1 | hasmask, payload length.
    let in_port = OxmId::Standard(0x8000_0004);
    let eth_dst_w = OxmId::Standard(0x8000_070c);
    let ipv4_src = OxmId::Standard(0x8000_1604);
    vec![
        TableFeatureProp::Instructions {
            miss: false,
            ids: vec![InstructionId::Standard(1), InstructionId::Standard(4)],
        },
        TableFeatureProp::Instructions {
            miss: true,
            ids: vec![InstructionId::Standard(4)],
        },
        TableFeatureProp::NextTables {
            miss: false,
            tables: vec![1, 2],
        },
        TableFeatureProp::NextTables {
            miss: true,
            tables: vec![],
        },
        TableFeatureProp::WriteActions {
            miss: false,
            ids: vec![ActionId::Standard(0), ActionId::Standard(22)],
        },
        TableFeatureProp::WriteActions {
            miss: true,
            ids: vec![ActionId::Standard(0)],
        },
        TableFeatureProp::ApplyActions {
            miss: false,
            ids: vec![ActionId::Standard(0), ActionId::Standard(17)],
        },
        TableFeatureProp::ApplyActions {
            miss: true,
            ids: vec![],
        },
        TableFeatureProp::Match(vec![in_port, eth_dst_w, ipv4_src]),
        TableFeatureProp::Wildcards(vec![eth_dst_w]),
        TableFeatureProp::WriteSetfield {
            miss: false,
            ids: vec![ipv4_src],
        },
        TableFeatureProp::WriteSetfield {
            miss: true,
            ids: vec![],
        },
        TableFeatureProp::ApplySetfield {
            miss: false,
            ids: vec![ipv4_src],
        },
        TableFeatureProp::ApplySetfield {
            miss: true,
            ids: vec![in_port],
        },
        TableFeatureProp::Experimenter {
            miss: false,
            experimenter: EXP,
            exp_type: 3,
            data: vec![0x0102_0304],
        },
        TableFeatureProp::Experimenter {
            miss: true,
            experimenter: EXP,
            exp_type: 4,
            data: vec![],
        },
    ]
}

fn multipart(e: &mut Emitter) {
    use MultipartReplyBody as P;
    use MultipartRequestBody as Q;
    let fsr = FlowStatsRequest {
        table_id: 1,
        out_port: 2,
        out_group: ANY,
        cookie: 5,
        cookie_mask: 7,
        match_: m(vec![OxmField::EthDst(
            [0x0a, 0x0b, 0x0c, 0, 0, 0],
            Some([0xff, 0xff, 0xff, 0, 0, 0]),
        )]),
    };
    let fsr_expect = json!({"table_id": 1, "out_port": 2, "out_group": ANY, "cookie": 5,
        "cookie_mask": 7, "match": {"eth_dst": ["0a:0b:0c:00:00:00", "ff:ff:ff:00:00:00"]}});
    let c = |cls: &str, x: Value| with(Map::from_iter([("class".into(), json!(cls))]), x);

    mp_req(
        e,
        "desc_request",
        0,
        Q::Desc,
        c("OFPDescStatsRequest", json!({"flags": 0})),
    );
    mp_rep(
        e,
        "desc_reply",
        0,
        P::Desc(Desc {
            mfr_desc: "oxflow".into(),
            hw_desc: "none".into(),
            sw_desc: "0.1".into(),
            serial_num: "42".into(),
            dp_desc: "reverse".into(),
        }),
        c(
            "OFPDescStatsReply",
            json!({"body.mfr_desc": "oxflow", "body.hw_desc": "none", "body.sw_desc": "0.1",
                   "body.serial_num": "42", "body.dp_desc": "reverse"}),
        ),
    );
    mp_req(
        e,
        "flow_request_req_more",
        1,
        Q::Flow(fsr.clone()),
        c(
            "OFPFlowStatsRequest",
            with(
                Map::from_iter([("flags".into(), json!(1))]),
                fsr_expect.clone(),
            ),
        ),
    );
    mp_rep(
        e,
        "flow_reply_reply_more",
        1,
        P::Flow(vec![FlowStats {
            table_id: 3,
            duration_sec: 1,
            duration_nsec: 2,
            priority: 3,
            idle_timeout: 4,
            hard_timeout: 5,
            flags: 1,
            cookie: 6,
            packet_count: 7,
            byte_count: 8,
            match_: m(vec![OxmField::InPort(1)]),
            instructions: vec![Instruction::GotoTable(4)],
        }]),
        c(
            "OFPFlowStatsReply",
            json!({"flags": 1, "body[0].table_id": 3, "body[0].duration_sec": 1,
                   "body[0].duration_nsec": 2, "body[0].priority": 3, "body[0].idle_timeout": 4,
                   "body[0].hard_timeout": 5, "body[0].flags": 1, "body[0].cookie": 6,
                   "body[0].packet_count": 7, "body[0].byte_count": 8,
                   "body[0].match": {"in_port": 1}, "body[0].instructions[0].table_id": 4}),
        ),
    );
    mp_req(
        e,
        "aggregate_request",
        0,
        Q::Aggregate(fsr),
        c("OFPAggregateStatsRequest", fsr_expect),
    );
    mp_rep(
        e,
        "aggregate_reply",
        0,
        P::Aggregate(AggregateStats {
            packet_count: 10,
            byte_count: 20,
            flow_count: 30,
        }),
        c(
            "OFPAggregateStatsReply",
            json!({"body.packet_count": 10, "body.byte_count": 20, "body.flow_count": 30}),
        ),
    );
    mp_req(
        e,
        "table_request",
        0,
        Q::Table,
        c("OFPTableStatsRequest", json!({})),
    );
    mp_rep(
        e,
        "table_reply",
        0,
        P::Table(vec![TableStats {
            table_id: 0,
            active_count: 5,
            lookup_count: 6,
            matched_count: 7,
        }]),
        c(
            "OFPTableStatsReply",
            json!({"body[0].table_id": 0, "body[0].active_count": 5,
                   "body[0].lookup_count": 6, "body[0].matched_count": 7}),
        ),
    );
    mp_req(
        e,
        "port_stats_request",
        0,
        Q::PortStats { port_no: 6 },
        c("OFPPortStatsRequest", json!({"port_no": 6})),
    );
    mp_rep(
        e,
        "port_stats_reply",
        0,
        P::PortStats(vec![PortStats {
            port_no: 6,
            rx_packets: 1,
            tx_packets: 2,
            rx_bytes: 3,
            tx_bytes: 4,
            rx_dropped: 5,
            tx_dropped: 6,
            rx_errors: 7,
            tx_errors: 8,
            rx_frame_err: 9,
            rx_over_err: 10,
            rx_crc_err: 11,
            collisions: 12,
            duration_sec: 13,
            duration_nsec: 14,
        }]),
        c(
            "OFPPortStatsReply",
            json!({"body[0].port_no": 6, "body[0].rx_packets": 1, "body[0].tx_packets": 2,
                   "body[0].rx_bytes": 3, "body[0].tx_bytes": 4, "body[0].rx_dropped": 5,
                   "body[0].tx_dropped": 6, "body[0].rx_errors": 7, "body[0].tx_errors": 8,
                   "body[0].rx_frame_err": 9, "body[0].rx_over_err": 10,
                   "body[0].rx_crc_err": 11, "body[0].collisions": 12,
                   "body[0].duration_sec": 13, "body[0].duration_nsec": 14}),
        ),
    );
    mp_req(
        e,
        "queue_request",
        0,
        Q::Queue {
            port_no: ANY,
            queue_id: 3,
        },
        c(
            "OFPQueueStatsRequest",
            json!({"port_no": ANY, "queue_id": 3}),
        ),
    );
    mp_rep(
        e,
        "queue_reply",
        0,
        P::Queue(vec![QueueStats {
            port_no: 1,
            queue_id: 3,
            tx_bytes: 100,
            tx_packets: 10,
            tx_errors: 1,
            duration_sec: 2,
            duration_nsec: 3,
        }]),
        c(
            "OFPQueueStatsReply",
            json!({"body[0].port_no": 1, "body[0].queue_id": 3, "body[0].tx_bytes": 100,
                   "body[0].tx_packets": 10, "body[0].tx_errors": 1,
                   "body[0].duration_sec": 2, "body[0].duration_nsec": 3}),
        ),
    );
    mp_req(
        e,
        "group_request",
        0,
        Q::Group { group_id: 5 },
        c("OFPGroupStatsRequest", json!({"group_id": 5})),
    );
    mp_rep(
        e,
        "group_reply",
        0,
        P::Group(vec![GroupStats {
            group_id: 5,
            ref_count: 1,
            packet_count: 2,
            byte_count: 3,
            duration_sec: 4,
            duration_nsec: 5,
            bucket_stats: vec![BucketCounter {
                packet_count: 6,
                byte_count: 7,
            }],
        }]),
        c(
            "OFPGroupStatsReply",
            json!({"body[0].group_id": 5, "body[0].ref_count": 1, "body[0].packet_count": 2,
                   "body[0].byte_count": 3, "body[0].duration_sec": 4,
                   "body[0].duration_nsec": 5, "body[0].bucket_stats[0].packet_count": 6,
                   "body[0].bucket_stats[0].byte_count": 7}),
        ),
    );
    mp_req(
        e,
        "group_desc_request",
        0,
        Q::GroupDesc,
        c("OFPGroupDescStatsRequest", json!({})),
    );
    mp_rep(
        e,
        "group_desc_reply",
        0,
        P::GroupDesc(vec![GroupDesc {
            group_type: 1,
            group_id: 9,
            buckets: vec![Bucket {
                weight: 2,
                watch_port: ANY,
                watch_group: ANY,
                actions: vec![out(5)],
            }],
        }]),
        c(
            "OFPGroupDescStatsReply",
            json!({"body[0].type": 1, "body[0].group_id": 9, "body[0].buckets[0].weight": 2,
                   "body[0].buckets[0].actions[0].port": 5}),
        ),
    );
    mp_req(
        e,
        "group_features_request",
        0,
        Q::GroupFeatures,
        c("OFPGroupFeaturesStatsRequest", json!({})),
    );
    mp_rep(
        e,
        "group_features_reply",
        0,
        P::GroupFeatures(GroupFeatures {
            types: 0xf,
            capabilities: 0x5,
            max_groups: [1, 2, 3, 4],
            actions: [0x1, 0x3, 0x7, 0xf],
        }),
        c(
            "OFPGroupFeaturesStatsReply",
            json!({"body.types": 15, "body.capabilities": 5, "body.max_groups": [1, 2, 3, 4],
                   "body.actions": [1, 3, 7, 15]}),
        ),
    );
    mp_req(
        e,
        "meter_request",
        0,
        Q::Meter { meter_id: 1 },
        c("OFPMeterStatsRequest", json!({"meter_id": 1})),
    );
    mp_rep(
        e,
        "meter_reply",
        0,
        P::Meter(vec![MeterStats {
            meter_id: 1,
            flow_count: 2,
            packet_in_count: 3,
            byte_in_count: 4,
            duration_sec: 5,
            duration_nsec: 6,
            band_stats: vec![MeterBandStats {
                packet_band_count: 7,
                byte_band_count: 8,
            }],
        }]),
        c(
            "OFPMeterStatsReply",
            json!({"body[0].meter_id": 1, "body[0].flow_count": 2,
                   "body[0].packet_in_count": 3, "body[0].byte_in_count": 4,
                   "body[0].duration_sec": 5, "body[0].duration_nsec": 6,
                   "body[0].len": 56, "body[0].band_stats[0].packet_band_count": 7,
                   "body[0].band_stats[0].byte_band_count": 8}),
        ),
    );
    mp_req(
        e,
        "meter_config_request",
        0,
        Q::MeterConfig {
            meter_id: 0xffff_ffff,
        },
        c("OFPMeterConfigStatsRequest", json!({"meter_id": ANY})),
    );
    mp_rep(
        e,
        "meter_config_reply",
        0,
        P::MeterConfig(vec![MeterConfig {
            flags: 1,
            meter_id: 2,
            bands: vec![
                MeterBand::Drop {
                    rate: 3,
                    burst_size: 4,
                },
                MeterBand::DscpRemark {
                    rate: 5,
                    burst_size: 6,
                    prec_level: 1,
                },
            ],
        }]),
        c(
            "OFPMeterConfigStatsReply",
            json!({"body[0].flags": 1, "body[0].meter_id": 2, "body[0].length": 40,
                   "body[0].bands[0].type": 1, "body[0].bands[0].rate": 3,
                   "body[0].bands[1].type": 2, "body[0].bands[1].prec_level": 1}),
        ),
    );
    mp_req(
        e,
        "meter_features_request",
        0,
        Q::MeterFeatures,
        c("OFPMeterFeaturesStatsRequest", json!({})),
    );
    mp_rep(
        e,
        "meter_features_reply",
        0,
        P::MeterFeatures(MeterFeatures {
            max_meter: 100,
            band_types: 6,
            capabilities: 15,
            max_bands: 3,
            max_color: 0,
        }),
        c(
            "OFPMeterFeaturesStatsReply",
            json!({"body[0].max_meter": 100, "body[0].band_types": 6,
                   "body[0].capabilities": 15, "body[0].max_bands": 3, "body[0].max_color": 0}),
        ),
    );
    mp_req(
        e,
        "table_features_request_empty",
        0,
        Q::TableFeatures(vec![]),
        c("OFPTableFeaturesStatsRequest", json!({"body": []})),
    );
    let tf = |id: u8, name: &str, props| TableFeatures {
        table_id: id,
        name: name.into(),
        metadata_match: 0xff,
        metadata_write: 0xf0,
        config: 0,
        max_entries: 1000,
        properties: props,
    };
    mp_rep(
        e,
        "table_features_reply",
        0,
        P::TableFeatures(vec![tf(0, "first", table_props()), tf(1, "second", vec![])]),
        c(
            "OFPTableFeaturesStatsReply",
            json!({"body[0].table_id": 0, "body[0].name": "first",
                   "body[0].metadata_match": 255, "body[0].metadata_write": 240,
                   "body[0].max_entries": 1000,
                   "body[0].properties[0].type": 0,
                   "body[0].properties[0].instruction_ids[1].type": 4,
                   "body[0].properties[1].type": 1,
                   "body[0].properties[2].table_ids": [1, 2],
                   "body[0].properties[3].type": 3,
                   "body[0].properties[4].action_ids[1].type": 22,
                   "body[0].properties[5].type": 5,
                   "body[0].properties[6].action_ids[1].type": 17,
                   "body[0].properties[7].type": 7,
                   "body[0].properties[8].type": 8,
                   "body[0].properties[8].oxm_ids[0].type": "in_port",
                   "body[0].properties[8].oxm_ids[1].type": "eth_dst",
                   "body[0].properties[8].oxm_ids[1].hasmask": 1,
                   "body[0].properties[8].oxm_ids[1].length": 12,
                   "body[0].properties[8].oxm_ids[2].type": "ipv4_src",
                   "body[0].properties[9].type": 10,
                   "body[0].properties[10].type": 12,
                   "body[0].properties[11].type": 13,
                   "body[0].properties[12].type": 14,
                   "body[0].properties[13].type": 15,
                   "body[0].properties[14].type": 0xfffe,
                   "body[0].properties[14].experimenter": EXP,
                   "body[0].properties[14].exp_type": 3,
                   "body[0].properties[14].data": [0x0102_0304],
                   "body[0].properties[15].type": 0xffff,
                   "body[1].table_id": 1, "body[1].name": "second", "body[1].properties": []}),
        ),
    );
    mp_req(
        e,
        "table_features_request_set",
        0,
        Q::TableFeatures(vec![tf(2, "set", table_props()[2..4].to_vec())]),
        c(
            "OFPTableFeaturesStatsRequest",
            json!({"body[0].table_id": 2, "body[0].name": "set",
                   "body[0].properties[0].table_ids": [1, 2],
                   "body[0].properties[1].table_ids": []}),
        ),
    );
    mp_req(
        e,
        "port_desc_request",
        0,
        Q::PortDesc,
        c("OFPPortDescStatsRequest", json!({})),
    );
    mp_rep(
        e,
        "port_desc_reply",
        0,
        P::PortDesc(vec![port(1, "p1"), port(0xffff_fffe, "local")]),
        with(
            port_expect("body[1].", 0xffff_fffe, "local"),
            json!({"class": "OFPPortDescStatsReply", "body[0].port_no": 1, "body[0].name": "p1"}),
        ),
    );
    mp_req(
        e,
        "experimenter_request",
        0,
        Q::Experimenter(ExperimenterMultipart {
            experimenter: EXP,
            exp_type: 1,
            data: b"abc".to_vec(),
        }),
        c(
            "OFPExperimenterStatsRequest",
            json!({"experimenter": EXP, "exp_type": 1, "data": "hex:616263"}),
        ),
    );
    // os-ken's experimenter reply parser steps 16 bytes per body entry, so
    // keep the body (8-byte header + data) at exactly 16 bytes.
    mp_rep(
        e,
        "experimenter_reply",
        0,
        P::Experimenter(ExperimenterMultipart {
            experimenter: EXP,
            exp_type: 2,
            data: b"12345678".to_vec(),
        }),
        c(
            "OFPExperimenterStatsReply",
            json!({"body.experimenter": EXP, "body.exp_type": 2,
                   "body.data": "hex:3132333435363738"}),
        ),
    );
}

/// One row per OXM vector: name, prerequisite fields, the field, and the
/// os-ken (name, value) it must parse to.
fn oxm_cases() -> Vec<(&'static str, Vec<OxmField>, OxmField, Value)> {
    use OxmField as F;
    let ip4 = || vec![F::EthType(0x0800)];
    let ip6 = || vec![F::EthType(0x86dd)];
    let arp = || vec![F::EthType(0x0806)];
    let l4 = |proto: u8| vec![F::EthType(0x0800), F::IpProto(proto)];
    let icmp6 = |t: Option<u8>| {
        let mut v = vec![F::EthType(0x86dd), F::IpProto(58)];
        v.extend(t.map(F::Icmpv6Type));
        v
    };
    let mpls = || vec![F::EthType(0x8847)];
    let v4 = |s: &str| s.parse::<Ipv4Addr>().unwrap();
    let v6 = |s: &str| s.parse::<Ipv6Addr>().unwrap();
    vec![
        ("in_port", vec![], F::InPort(11), json!(11)),
        (
            "in_phy_port",
            vec![F::InPort(11)],
            F::InPhyPort(12),
            json!(12),
        ),
        (
            "metadata",
            vec![],
            F::Metadata(u64::MAX - 1, None),
            json!(u64::MAX - 1),
        ),
        (
            "metadata_masked",
            vec![],
            F::Metadata(0x100, Some(0xff00)),
            json!([256, 65280]),
        ),
        (
            "eth_dst",
            vec![],
            F::EthDst(MAC_A, None),
            json!("0a:0b:0c:0d:0e:0f"),
        ),
        (
            "eth_dst_masked",
            vec![],
            F::EthDst([0x0a, 0, 0, 0, 0, 0], Some([0xff, 0, 0, 0, 0, 0])),
            json!(["0a:00:00:00:00:00", "ff:00:00:00:00:00"]),
        ),
        (
            "eth_src",
            vec![],
            F::EthSrc(MAC_B, None),
            json!("02:00:00:00:00:07"),
        ),
        (
            "eth_src_masked",
            vec![],
            F::EthSrc([2, 0, 0, 0, 0, 0], Some([0xfe, 0, 0, 0, 0, 0])),
            json!(["02:00:00:00:00:00", "fe:00:00:00:00:00"]),
        ),
        ("eth_type", vec![], F::EthType(0x0806), json!(0x0806)),
        (
            "vlan_vid",
            vec![],
            F::VlanVid(0x1000 | 7, None),
            json!(0x1007),
        ),
        ("vlan_vid_none", vec![], F::VlanVid(0, None), json!(0)),
        (
            "vlan_vid_masked",
            vec![],
            F::VlanVid(0x1000, Some(0x1000)),
            json!([4096, 4096]),
        ),
        (
            "vlan_pcp",
            vec![F::VlanVid(0x1007, None)],
            F::VlanPcp(7),
            json!(7),
        ),
        ("ip_dscp", ip4(), F::IpDscp(63), json!(63)),
        ("ip_ecn", ip6(), F::IpEcn(3), json!(3)),
        ("ip_proto", ip4(), F::IpProto(17), json!(17)),
        (
            "ipv4_src",
            ip4(),
            F::Ipv4Src(v4("172.16.0.1"), None),
            json!("172.16.0.1"),
        ),
        (
            "ipv4_src_masked",
            ip4(),
            F::Ipv4Src(v4("172.16.0.0"), Some(v4("255.240.0.0"))),
            json!(["172.16.0.0", "255.240.0.0"]),
        ),
        (
            "ipv4_dst",
            ip4(),
            F::Ipv4Dst(v4("8.8.8.8"), None),
            json!("8.8.8.8"),
        ),
        (
            "ipv4_dst_masked",
            ip4(),
            F::Ipv4Dst(v4("8.8.0.0"), Some(v4("255.255.0.0"))),
            json!(["8.8.0.0", "255.255.0.0"]),
        ),
        ("tcp_src", l4(6), F::TcpSrc(65535), json!(65535)),
        ("tcp_dst", l4(6), F::TcpDst(443), json!(443)),
        ("udp_src", l4(17), F::UdpSrc(68), json!(68)),
        ("udp_dst", l4(17), F::UdpDst(67), json!(67)),
        ("sctp_src", l4(132), F::SctpSrc(36412), json!(36412)),
        ("sctp_dst", l4(132), F::SctpDst(38412), json!(38412)),
        ("icmpv4_type", l4(1), F::Icmpv4Type(0), json!(0)),
        ("icmpv4_code", l4(1), F::Icmpv4Code(13), json!(13)),
        ("arp_op", arp(), F::ArpOp(2), json!(2)),
        (
            "arp_spa",
            arp(),
            F::ArpSpa(v4("192.168.7.1"), None),
            json!("192.168.7.1"),
        ),
        (
            "arp_spa_masked",
            arp(),
            F::ArpSpa(v4("192.168.7.0"), Some(v4("255.255.255.0"))),
            json!(["192.168.7.0", "255.255.255.0"]),
        ),
        (
            "arp_tpa",
            arp(),
            F::ArpTpa(v4("192.168.7.2"), None),
            json!("192.168.7.2"),
        ),
        (
            "arp_tpa_masked",
            arp(),
            F::ArpTpa(v4("192.168.0.0"), Some(v4("255.255.0.0"))),
            json!(["192.168.0.0", "255.255.0.0"]),
        ),
        (
            "arp_sha",
            arp(),
            F::ArpSha(MAC_A, None),
            json!("0a:0b:0c:0d:0e:0f"),
        ),
        (
            "arp_sha_masked",
            arp(),
            F::ArpSha(MAC_A, Some([0xff; 6])),
            json!(["0a:0b:0c:0d:0e:0f", "ff:ff:ff:ff:ff:ff"]),
        ),
        (
            "arp_tha",
            arp(),
            F::ArpTha(MAC_B, None),
            json!("02:00:00:00:00:07"),
        ),
        (
            "arp_tha_masked",
            arp(),
            F::ArpTha([0, 0, 0, 0, 0, 7], Some([0, 0, 0, 0, 0, 0xff])),
            json!(["00:00:00:00:00:07", "00:00:00:00:00:ff"]),
        ),
        (
            "ipv6_src",
            ip6(),
            F::Ipv6Src(v6("2001:db8::1:2"), None),
            json!("2001:db8::1:2"),
        ),
        (
            "ipv6_src_masked",
            ip6(),
            F::Ipv6Src(v6("2001:db8::"), Some(v6("ffff:ffff:ffff::"))),
            json!(["2001:db8::", "ffff:ffff:ffff::"]),
        ),
        (
            "ipv6_dst",
            ip6(),
            F::Ipv6Dst(v6("ff02::1"), None),
            json!("ff02::1"),
        ),
        (
            "ipv6_dst_masked",
            ip6(),
            F::Ipv6Dst(v6("ff00::"), Some(v6("ff00::"))),
            json!(["ff00::", "ff00::"]),
        ),
        (
            "ipv6_flabel",
            ip6(),
            F::Ipv6Flabel(0xf_ffff, None),
            json!(0xf_ffff),
        ),
        (
            "ipv6_flabel_masked",
            ip6(),
            F::Ipv6Flabel(0x1, Some(0xf)),
            json!([1, 15]),
        ),
        ("icmpv6_type", icmp6(None), F::Icmpv6Type(135), json!(135)),
        ("icmpv6_code", icmp6(None), F::Icmpv6Code(0), json!(0)),
        (
            "ipv6_nd_target",
            icmp6(Some(136)),
            F::Ipv6NdTarget(v6("fe80::abcd")),
            json!("fe80::abcd"),
        ),
        (
            "ipv6_nd_sll",
            icmp6(Some(135)),
            F::Ipv6NdSll(MAC_A),
            json!("0a:0b:0c:0d:0e:0f"),
        ),
        (
            "ipv6_nd_tll",
            icmp6(Some(136)),
            F::Ipv6NdTll(MAC_B),
            json!("02:00:00:00:00:07"),
        ),
        (
            "mpls_label",
            mpls(),
            F::MplsLabel(0xf_ffff),
            json!(0xf_ffff),
        ),
        ("mpls_tc", mpls(), F::MplsTc(7), json!(7)),
        ("mpls_bos", mpls(), F::MplsBos(0), json!(0)),
        (
            "pbb_isid",
            vec![F::EthType(0x88e7)],
            F::PbbIsid(0x12_3456, None),
            json!(0x12_3456),
        ),
        (
            "pbb_isid_masked",
            vec![F::EthType(0x88e7)],
            F::PbbIsid(0x12_0000, Some(0xff_0000)),
            json!([0x12_0000, 0xff_0000]),
        ),
        (
            "tunnel_id",
            vec![],
            F::TunnelId(u64::MAX, None),
            json!(u64::MAX),
        ),
        (
            "tunnel_id_masked",
            vec![],
            F::TunnelId(0xabcd, Some(0xffff)),
            json!([0xabcd, 0xffff]),
        ),
        (
            "ipv6_exthdr",
            ip6(),
            F::Ipv6Exthdr(0x1ff, None),
            json!(0x1ff),
        ),
        (
            "ipv6_exthdr_masked",
            ip6(),
            F::Ipv6Exthdr(0x8, Some(0x18)),
            json!([8, 24]),
        ),
        // Experimenter OXM as os-ken expresses ONF EXT-256 pbb_uca: class
        // 0xffff, experimenter ONF, then a 16-bit ONF field type (2560) and
        // the 1-byte value.
        (
            "experimenter_onf_pbb_uca",
            vec![F::EthType(0x88e7)],
            F::Experimenter {
                field: 0,
                has_mask: false,
                experimenter: 0x4f4e_4600,
                payload: vec![0x0a, 0x00, 0x01],
            },
            json!(1),
        ),
    ]
}

fn oxm(e: &mut Emitter) {
    for (name, mut fields, field, value) in oxm_cases() {
        let mut expect_match = Map::new();
        for f in &fields {
            let (k, v) = prereq_json(f);
            expect_match.insert(k.into(), v);
        }
        let key = name
            .trim_end_matches("_masked")
            .trim_end_matches("_none")
            .trim_start_matches("experimenter_onf_");
        expect_match.insert(key.into(), value);
        fields.push(field);
        e.add(
            &format!("oxm_{name}"),
            Message::FlowMod(flow_mod(
                m(fields),
                vec![Instruction::ApplyActions(vec![out(1)])],
            )),
            json!({"class": "OFPFlowMod", "match": Value::Object(expect_match)}),
        );
    }
}

/// os-ken name and value of a prerequisite field used in [`oxm_cases`].
fn prereq_json(f: &OxmField) -> (&'static str, Value) {
    match f {
        OxmField::InPort(v) => ("in_port", json!(v)),
        OxmField::EthType(v) => ("eth_type", json!(v)),
        OxmField::IpProto(v) => ("ip_proto", json!(v)),
        OxmField::Icmpv6Type(v) => ("icmpv6_type", json!(v)),
        OxmField::VlanVid(v, None) => ("vlan_vid", json!(v)),
        other => panic!("no prerequisite mapping for {other:?}"),
    }
}

fn actions(e: &mut Emitter) {
    let cases: Vec<(&str, Action, Value)> = vec![
        (
            "output",
            Action::Output {
                port: CONTROLLER,
                max_len: 128,
            },
            json!({"type": 0, "port": CONTROLLER, "max_len": 128, "len": 16}),
        ),
        (
            "copy_ttl_out",
            Action::CopyTtlOut,
            json!({"type": 11, "len": 8}),
        ),
        (
            "copy_ttl_in",
            Action::CopyTtlIn,
            json!({"type": 12, "len": 8}),
        ),
        (
            "set_mpls_ttl",
            Action::SetMplsTtl(9),
            json!({"type": 15, "mpls_ttl": 9}),
        ),
        ("dec_mpls_ttl", Action::DecMplsTtl, json!({"type": 16})),
        (
            "push_vlan",
            Action::PushVlan(0x88a8),
            json!({"type": 17, "ethertype": 0x88a8}),
        ),
        ("pop_vlan", Action::PopVlan, json!({"type": 18})),
        (
            "push_mpls",
            Action::PushMpls(0x8848),
            json!({"type": 19, "ethertype": 0x8848}),
        ),
        (
            "pop_mpls",
            Action::PopMpls(0x86dd),
            json!({"type": 20, "ethertype": 0x86dd}),
        ),
        (
            "set_queue",
            Action::SetQueue(77),
            json!({"type": 21, "queue_id": 77}),
        ),
        (
            "group",
            Action::Group(0xffff_ff00),
            json!({"type": 22, "group_id": 0xffff_ff00_u32}),
        ),
        (
            "set_nw_ttl",
            Action::SetNwTtl(1),
            json!({"type": 23, "nw_ttl": 1}),
        ),
        ("dec_nw_ttl", Action::DecNwTtl, json!({"type": 24})),
        (
            "set_field_ipv6_src",
            Action::SetField(OxmField::Ipv6Src("::1".parse().unwrap(), None)),
            json!({"type": 25, "key": "ipv6_src", "value": "::1"}),
        ),
        (
            "set_field_vlan_vid",
            Action::SetField(OxmField::VlanVid(0x1000 | 99, None)),
            json!({"type": 25, "key": "vlan_vid", "value": 0x1063}),
        ),
        (
            "set_field_eth_src",
            Action::SetField(OxmField::EthSrc(MAC_A, None)),
            json!({"type": 25, "key": "eth_src", "value": "0a:0b:0c:0d:0e:0f", "len": 16}),
        ),
        (
            "set_field_mpls_tc",
            Action::SetField(OxmField::MplsTc(5)),
            json!({"type": 25, "key": "mpls_tc", "value": 5}),
        ),
        (
            "push_pbb",
            Action::PushPbb(0x88e7),
            json!({"type": 26, "ethertype": 0x88e7}),
        ),
        ("pop_pbb", Action::PopPbb, json!({"type": 27})),
        (
            "experimenter",
            Action::Experimenter {
                experimenter: EXP,
                data: vec![0xaa; 8],
            },
            json!({"type": 0xffff, "experimenter": EXP, "len": 16,
                   "data": "hex:aaaaaaaaaaaaaaaa"}),
        ),
    ];
    for (name, action, fields) in cases {
        let mut expect = Map::new();
        expect.insert("class".into(), json!("OFPFlowMod"));
        if let Value::Object(f) = fields {
            for (k, v) in f {
                expect.insert(format!("instructions[0].actions[0].{k}"), v);
            }
        }
        expect.insert("instructions[0].actions[1].port".into(), json!(3));
        e.add(
            &format!("action_{name}"),
            Message::FlowMod(flow_mod(
                m(vec![OxmField::InPort(1)]),
                vec![Instruction::ApplyActions(vec![action, out(3)])],
            )),
            Value::Object(expect),
        );
    }
}

fn instructions(e: &mut Emitter) {
    let cases: Vec<(&str, Vec<Instruction>, Value)> = vec![
        (
            "goto_table",
            vec![Instruction::GotoTable(9)],
            json!({"instructions[0].type": 1, "instructions[0].table_id": 9}),
        ),
        (
            "write_metadata",
            vec![Instruction::WriteMetadata {
                metadata: 0x1234,
                mask: 0xffff,
            }],
            json!({"instructions[0].type": 2, "instructions[0].metadata": 0x1234,
                   "instructions[0].metadata_mask": 0xffff}),
        ),
        (
            "write_actions",
            vec![Instruction::WriteActions(vec![Action::Group(1)])],
            json!({"instructions[0].type": 3, "instructions[0].actions[0].group_id": 1}),
        ),
        (
            "apply_actions",
            vec![Instruction::ApplyActions(vec![Action::PopVlan, out(2)])],
            json!({"instructions[0].type": 4, "instructions[0].actions[0].type": 18,
                   "instructions[0].actions[1].port": 2, "instructions[0].len": 32}),
        ),
        (
            "clear_actions",
            vec![Instruction::ClearActions],
            json!({"instructions[0].type": 5, "instructions[0].actions": [],
                   "instructions[0].len": 8}),
        ),
        (
            "meter",
            vec![Instruction::Meter(33)],
            json!({"instructions[0].type": 6, "instructions[0].meter_id": 33}),
        ),
        (
            "all_six",
            vec![
                Instruction::Meter(1),
                Instruction::ApplyActions(vec![out(1)]),
                Instruction::ClearActions,
                Instruction::WriteActions(vec![out(2)]),
                Instruction::WriteMetadata {
                    metadata: 1,
                    mask: 1,
                },
                Instruction::GotoTable(5),
            ],
            json!({"instructions[0].meter_id": 1, "instructions[1].actions[0].port": 1,
                   "instructions[2].type": 5, "instructions[3].actions[0].port": 2,
                   "instructions[4].metadata": 1, "instructions[5].table_id": 5}),
        ),
        (
            // os-ken cannot parse experimenter instructions: the Python side
            // checks this one by bytes only (see NO_OSKEN_PARSE there).
            "experimenter",
            vec![Instruction::Experimenter {
                experimenter: EXP,
                data: vec![1, 2, 3, 4, 5, 6, 7, 8],
            }],
            json!({}),
        ),
    ];
    for (name, insts, fields) in cases {
        let expect = with(
            Map::from_iter([("class".into(), json!("OFPFlowMod"))]),
            fields,
        );
        e.add(
            &format!("instruction_{name}"),
            Message::FlowMod(flow_mod(m(vec![OxmField::InPort(1)]), insts)),
            expect,
        );
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "reverse_vectors.json".to_owned());
    let mut e = Emitter { items: Vec::new() };
    messages(&mut e);
    multipart(&mut e);
    oxm(&mut e);
    actions(&mut e);
    instructions(&mut e);
    let text = serde_json::to_string_pretty(&Value::Array(e.items.clone())).expect("json");
    std::fs::write(&path, text + "\n").unwrap_or_else(|err| panic!("writing {path}: {err}"));
    eprintln!("wrote {} vectors to {path}", e.items.len());
}
