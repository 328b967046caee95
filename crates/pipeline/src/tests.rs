//! Pipeline tests: literal frames, a recording output and a fake clock.

use super::*;
use ofp::action::Action;
use ofp::error::ErrorCode;
use ofp::error::{
    BadActionCode, BadInstructionCode, BadMatchCode, FlowModFailedCode, GroupModFailedCode,
    MeterModFailedCode,
};
use ofp::group::GroupMod;
use ofp::group::{command as gcmd, group_type, Bucket};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, flow_mod_flags as ff, packet_in_reason, FlowMod};
use ofp::meter::{command as mcmd, flags as mflags, MeterBand, MeterMod};
use ofp::oxm::{Match, OxmField};
use ofp::port::{config, port_no, state};
use packet::PacketBuf;
use std::net::Ipv4Addr;

const SEC: u64 = 1_000_000_000;

#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Port(u32, Vec<u8>, Option<u32>),
    PacketIn {
        reason: u8,
        table_id: u8,
        cookie: u64,
        match_: Match,
        max_len: u16,
        data: Vec<u8>,
    },
    Normal,
}

#[derive(Default)]
struct Rec(Vec<Ev>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
        self.0.push(Ev::Port(port, data.to_vec(), queue));
    }
    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.0.push(Ev::PacketIn {
            reason: ev.reason,
            table_id: ev.table_id,
            cookie: ev.cookie,
            match_: ev.match_,
            max_len: ev.max_len,
            data: ev.data.to_vec(),
        });
    }
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {
        self.0.push(Ev::Normal);
    }
}

impl Rec {
    fn ports(&self) -> Vec<u32> {
        self.0
            .iter()
            .filter_map(|e| match e {
                Ev::Port(p, ..) => Some(*p),
                _ => None,
            })
            .collect()
    }
}

/// Ethernet / IPv4 / UDP frame, 10.0.0.1 -> `dst`, ports 1000 -> `dport`.
fn udp_frame(dst: [u8; 4], dport: u16, ttl: u8) -> Vec<u8> {
    let mut f = vec![
        0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // dst mac
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // src mac
        0x08, 0x00, // IPv4
        0x45, 0x00, 0x00, 28, 0x00, 0x00, 0x00, 0x00, ttl, 17, 0x00, 0x00, // ip hdr
        10, 0, 0, 1,
    ];
    f.extend_from_slice(&dst);
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]); // len 8, no checksum
    let ck = packet::checksum::checksum(0, &f[14..34]);
    f[24..26].copy_from_slice(&ck.to_be_bytes());
    f
}

fn pipeline(n_ports: u32) -> Pipeline {
    let mut p = Pipeline::default();
    for i in 1..=n_ports {
        p.ports.insert(i, PortInfo::up());
    }
    p
}

pub(crate) fn fm(
    command: u8,
    table_id: u8,
    priority: u16,
    m: Vec<OxmField>,
    insts: Vec<Instruction>,
) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id,
        command,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: u32::MAX,
        out_port: port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(m),
        instructions: insts,
    }
}

pub(crate) fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn apply(a: Vec<Action>) -> Instruction {
    Instruction::ApplyActions(a)
}

fn udp_to(dst: [u8; 4]) -> Vec<OxmField> {
    vec![
        OxmField::EthType(0x0800),
        OxmField::Ipv4Dst(Ipv4Addr::from(dst), None),
    ]
}

fn run(p: &mut Pipeline, frame: &[u8], in_port: u32, now: u64) -> Rec {
    let mut r = Rec::default();
    let mut buf = PacketBuf::from_slice(frame);
    p.process(&mut buf, in_port, now, &mut r)
        .expect("test frames are well formed");
    r
}

/// Frames are parsed as deep as the installed rules need (matches,
/// actions, meters, SELECT groups; at least L2), and a frame malformed in
/// one of those layers is dropped before table 0 with the parse error.
#[test]
fn malformed_frames_are_dropped_before_table_0() {
    let try_run = |p: &mut Pipeline, frame: &[u8]| {
        let mut r = Rec::default();
        let mut buf = PacketBuf::from_slice(frame);
        let res = p.process(&mut buf, 1, 0, &mut r);
        // The batch path decides the same.
        let mut rb = Rec::default();
        let mut bufs = vec![PacketBuf::from_slice(frame)];
        let mut res_b = None;
        p.process_batch(&mut bufs, 1, 0, &mut rb, |_, _, _, x| res_b = Some(x));
        assert_eq!(res_b, Some(res));
        assert_eq!(rb.ports(), r.ports());
        (res.is_ok(), r.ports())
    };
    // Ethernet + an IPv4 header cut after 6 bytes.
    let mut cut = vec![0u8; 12];
    cut.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 0x3c, 0, 0]);
    // A well-formed IPv4 header, then a TCP header cut short.
    let mut tcp_cut = udp_frame([10, 0, 0, 2], 1, 64);
    tcp_cut[23] = 6;
    tcp_cut.truncate(14 + 20 + 6);
    tcp_cut[16..18].copy_from_slice(&26u16.to_be_bytes());
    let short = [0u8; 10];

    // A match-all rule needs nothing beyond Ethernet: damage further in
    // does not matter, a frame shorter than an Ethernet header does.
    let mut p = pipeline(2);
    p.flow_mod(&fm(cmd::ADD, 0, 0, vec![], vec![apply(vec![out(2)])]), 0)
        .expect("match-all flow");
    assert_eq!(p.parse_layer(), packet::Layer::L2);
    assert_eq!(try_run(&mut p, &cut), (true, vec![2]));
    assert_eq!(try_run(&mut p, &tcp_cut), (true, vec![2]));
    assert_eq!(try_run(&mut p, &short), (false, vec![]));
    // a frame of an ethertype the parser does not look into still matches
    let mut other = vec![0u8; 12];
    other.extend_from_slice(&[0x88, 0xb5, 1, 2, 3]);
    assert_eq!(run(&mut p, &other, 1, 0).ports(), vec![2]);

    // A rule that matches on IPv4 (in another table, never reached) makes
    // L3 needed: the cut IPv4 header is dropped, the cut TCP header is not.
    p.flow_mod(&fm(cmd::ADD, 1, 1, udp_to([10, 0, 0, 2]), vec![]), 0)
        .unwrap();
    assert_eq!(p.parse_layer(), packet::Layer::L3);
    assert_eq!(try_run(&mut p, &cut), (false, vec![]));
    assert_eq!(try_run(&mut p, &tcp_cut), (true, vec![2]));
    // An action that rewrites L4 (checksums) makes L4 needed.
    p.flow_mod(
        &fm(
            cmd::ADD,
            2,
            1,
            vec![OxmField::EthType(0x0800)],
            vec![apply(vec![Action::SetField(OxmField::Ipv4Src(
                Ipv4Addr::new(1, 2, 3, 4),
                None,
            ))])],
        ),
        0,
    )
    .unwrap();
    assert_eq!(p.parse_layer(), packet::Layer::L4);
    assert_eq!(try_run(&mut p, &tcp_cut), (false, vec![]));
    assert_eq!(try_run(&mut p, &other), (true, vec![2]));

    // Actions count as much as matches: dec_nw_ttl needs the IP header.
    let mut q = pipeline(2);
    q.flow_mod(
        &fm(
            cmd::ADD,
            0,
            0,
            vec![],
            vec![apply(vec![Action::DecNwTtl, out(2)])],
        ),
        0,
    )
    .unwrap();
    assert_eq!(q.parse_layer(), packet::Layer::L3);
    assert_eq!(try_run(&mut q, &cut), (false, vec![]));
    // So do the buckets of a group, and a SELECT group's flow hash.
    let mut g = pipeline(2);
    g.group_mod(
        &gmod(
            gcmd::ADD,
            group_type::SELECT,
            1,
            vec![Bucket {
                weight: 1,
                ..bucket(vec![out(2)])
            }],
        ),
        0,
    )
    .unwrap();
    assert_eq!(g.parse_layer(), packet::Layer::L4);
    // IP fragments dropped on receive: L3 at least.
    let mut f = pipeline(2);
    f.config.frag_drop = true;
    assert_eq!(f.parse_layer(), packet::Layer::L3);
}

#[test]
fn add_lookup_counters_and_priority() {
    let mut p = pipeline(3);
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            10,
            udp_to([10, 0, 0, 2]),
            vec![apply(vec![out(2)])],
        ),
        0,
    )
    .unwrap();
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            20,
            udp_to([10, 0, 0, 2]),
            vec![apply(vec![out(3)])],
        ),
        0,
    )
    .unwrap();
    let f = udp_frame([10, 0, 0, 2], 53, 64);
    // A replica forwards the same way.
    let mut replica = p.clone();
    assert_eq!(run(&mut replica, &f, 1, SEC).ports(), vec![3]);
    assert_eq!(run(&mut p, &f, 1, SEC).ports(), vec![3]);
    let t = p.table(0).unwrap();
    assert_eq!(t.counters.lookup_count, 1);
    assert_eq!(t.counters.matched_count, 1);
    assert_eq!(t.entries().next().unwrap().priority, 20);
    assert_eq!(t.entries().next().unwrap().packet_count(), 1);
    assert_eq!(t.entries().next().unwrap().byte_count(), f.len() as u64);
    // No match and no table-miss entry: drop, counted as a lookup.
    assert!(run(&mut p, &udp_frame([10, 0, 0, 9], 53, 64), 1, SEC)
        .0
        .is_empty());
    assert_eq!(p.table(0).unwrap().counters.lookup_count, 2);
    assert_eq!(p.table(0).unwrap().counters.matched_count, 1);
}

#[test]
fn add_replaces_identical_keeping_or_resetting_counts() {
    let mut p = pipeline(3);
    let m = udp_to([10, 0, 0, 2]);
    p.flow_mod(
        &fm(cmd::ADD, 0, 10, m.clone(), vec![apply(vec![out(2)])]),
        0,
    )
    .unwrap();
    let f = udp_frame([10, 0, 0, 2], 53, 64);
    run(&mut p, &f, 1, 0);
    p.flow_mod(
        &fm(cmd::ADD, 0, 10, m.clone(), vec![apply(vec![out(3)])]),
        5 * SEC,
    )
    .unwrap();
    let t = p.table(0).unwrap();
    assert_eq!(t.len(), 1);
    assert_eq!(t.entries().next().unwrap().packet_count(), 1);
    assert_eq!(t.entries().next().unwrap().duration(5 * SEC), (0, 0));
    assert_eq!(run(&mut p, &f, 1, 0).ports(), vec![3]);
    let mut r = fm(cmd::ADD, 0, 10, m, vec![]);
    r.flags = ff::RESET_COUNTS;
    p.flow_mod(&r, 0).unwrap();
    assert_eq!(
        p.table(0).unwrap().entries().next().unwrap().packet_count(),
        0
    );
}

#[test]
fn check_overlap() {
    let mut p = pipeline(2);
    p.flow_mod(
        &fm(cmd::ADD, 0, 10, vec![OxmField::EthType(0x0800)], vec![]),
        0,
    )
    .unwrap();
    let mut o = fm(cmd::ADD, 0, 10, udp_to([10, 0, 0, 2]), vec![]);
    o.flags = ff::CHECK_OVERLAP;
    assert_eq!(
        p.flow_mod(&o, 0).unwrap_err(),
        ErrorCode::FlowModFailed(FlowModFailedCode::Overlap)
    );
    // Different priority, or disjoint match: fine.
    o.priority = 11;
    p.flow_mod(&o, 0).unwrap();
    let mut d = fm(cmd::ADD, 0, 10, vec![OxmField::EthType(0x0806)], vec![]);
    d.flags = ff::CHECK_OVERLAP;
    p.flow_mod(&d, 0).unwrap();
    assert_eq!(p.table(0).unwrap().len(), 3);
}

#[test]
fn modify_and_modify_strict_with_cookie_filter() {
    let mut p = pipeline(3);
    let mut a = fm(
        cmd::ADD,
        0,
        10,
        udp_to([10, 0, 0, 2]),
        vec![apply(vec![out(2)])],
    );
    a.cookie = 0x11;
    p.flow_mod(&a, 0).unwrap();
    let mut b = fm(
        cmd::ADD,
        0,
        20,
        udp_to([10, 0, 0, 3]),
        vec![apply(vec![out(2)])],
    );
    b.cookie = 0x22;
    p.flow_mod(&b, 0).unwrap();
    // Non-strict, match all IPv4, cookie 0x11 only.
    let mut m = fm(
        cmd::MODIFY,
        0,
        0,
        vec![OxmField::EthType(0x0800)],
        vec![apply(vec![out(3)])],
    );
    m.cookie = 0x11;
    m.cookie_mask = 0xff;
    p.flow_mod(&m, 0).unwrap();
    assert_eq!(
        run(&mut p, &udp_frame([10, 0, 0, 2], 1, 64), 1, 0).ports(),
        vec![3]
    );
    assert_eq!(
        run(&mut p, &udp_frame([10, 0, 0, 3], 1, 64), 1, 0).ports(),
        vec![2]
    );
    // Strict needs the exact priority.
    let mut s = fm(
        cmd::MODIFY_STRICT,
        0,
        21,
        udp_to([10, 0, 0, 3]),
        vec![apply(vec![out(3)])],
    );
    p.flow_mod(&s, 0).unwrap();
    assert_eq!(
        run(&mut p, &udp_frame([10, 0, 0, 3], 1, 64), 1, 0).ports(),
        vec![2]
    );
    s.priority = 20;
    p.flow_mod(&s, 0).unwrap();
    assert_eq!(
        run(&mut p, &udp_frame([10, 0, 0, 3], 1, 64), 1, 0).ports(),
        vec![3]
    );
    // Cookie unchanged by modify; no match adds nothing.
    assert_eq!(p.table(0).unwrap().entries().next().unwrap().cookie(), 0x22);
    p.flow_mod(&fm(cmd::MODIFY, 0, 0, udp_to([9, 9, 9, 9]), vec![]), 0)
        .unwrap();
    assert_eq!(p.table(0).unwrap().len(), 2);
}

#[test]
fn delete_filters_and_all_tables() {
    let mut p = pipeline(3);
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            10,
            udp_to([10, 0, 0, 2]),
            vec![apply(vec![out(2)])],
        ),
        0,
    )
    .unwrap();
    let mut e = fm(
        cmd::ADD,
        1,
        10,
        udp_to([10, 0, 0, 3]),
        vec![apply(vec![out(3)])],
    );
    e.flags = ff::SEND_FLOW_REM;
    e.cookie = 7;
    p.flow_mod(&e, 0).unwrap();
    p.flow_mod(&fm(cmd::ADD, 2, 0, vec![], vec![]), 0).unwrap();
    // out_port filter: only the entry outputting to 3.
    let mut d = fm(cmd::DELETE, TABLE_ALL, 0, vec![], vec![]);
    d.out_port = 3;
    let gone = p.flow_mod(&d, 2 * SEC).unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].table_id, 1);
    assert!(gone[0].wants_flow_removed());
    let msg = gone[0].to_message(2 * SEC);
    assert_eq!(
        (msg.reason, msg.cookie, msg.duration_sec),
        (ofp::message::flow_removed_reason::DELETE, 7, 2)
    );
    // Strict delete needs priority and match.
    let ds = fm(cmd::DELETE_STRICT, 0, 11, udp_to([10, 0, 0, 2]), vec![]);
    assert!(p.flow_mod(&ds, 0).unwrap().is_empty());
    let ds = fm(cmd::DELETE_STRICT, 0, 10, udp_to([10, 0, 0, 2]), vec![]);
    assert_eq!(p.flow_mod(&ds, 0).unwrap().len(), 1);
    // Delete everything.
    let all = p
        .flow_mod(&fm(cmd::DELETE, TABLE_ALL, 0, vec![], vec![]), 0)
        .unwrap();
    assert_eq!(all.len(), 1);
    assert!(p.tables().iter().all(|t| t.is_empty()));
}

use ofp::instruction::TABLE_ALL;

#[test]
fn flow_mod_errors() {
    let mut p = Pipeline::new(4);
    p.ports.insert(1, PortInfo::up());
    let e = |p: &mut Pipeline, f: FlowMod| p.flow_mod(&f, 0).unwrap_err();
    assert_eq!(
        e(&mut p, fm(cmd::ADD, 4, 1, vec![], vec![])),
        ErrorCode::FlowModFailed(FlowModFailedCode::BadTableId)
    );
    assert_eq!(
        e(&mut p, fm(cmd::ADD, TABLE_ALL, 1, vec![], vec![])),
        ErrorCode::FlowModFailed(FlowModFailedCode::BadTableId)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 0, 1, vec![OxmField::IpProto(6)], vec![])
        ),
        ErrorCode::BadMatch(BadMatchCode::BadPrereq)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 0, 1, vec![], vec![apply(vec![Action::Group(5)])])
        ),
        ErrorCode::BadAction(BadActionCode::BadOutGroup)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 0, 1, vec![], vec![Instruction::Meter(3)])
        ),
        ErrorCode::MeterModFailed(MeterModFailedCode::UnknownMeter)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 2, 1, vec![], vec![Instruction::GotoTable(2)])
        ),
        ErrorCode::BadInstruction(BadInstructionCode::BadTableId)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 2, 1, vec![], vec![Instruction::GotoTable(4)])
        ),
        ErrorCode::BadInstruction(BadInstructionCode::BadTableId)
    );
    assert_eq!(
        e(
            &mut p,
            fm(cmd::ADD, 0, 1, vec![], vec![apply(vec![out(9)])])
        ),
        ErrorCode::BadAction(BadActionCode::BadOutPort)
    );
    assert_eq!(
        e(
            &mut p,
            fm(
                cmd::ADD,
                0,
                1,
                vec![],
                vec![apply(vec![out(port_no::TABLE)])]
            )
        ),
        ErrorCode::BadAction(BadActionCode::BadOutPort)
    );
    assert!(p.tables().iter().all(|t| t.is_empty()));
    // Valid: goto forward, reserved ports, known meter.
    p.meter_mod(
        &MeterMod {
            command: mcmd::ADD,
            flags: mflags::PKTPS,
            meter_id: 3,
            bands: vec![MeterBand::Drop {
                rate: 1,
                burst_size: 0,
            }],
        },
        0,
    )
    .unwrap();
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![
                Instruction::Meter(3),
                apply(vec![out(port_no::FLOOD), out(1)]),
                Instruction::GotoTable(3),
            ],
        ),
        0,
    )
    .unwrap();
}

#[test]
fn idle_and_hard_timeouts() {
    let mut p = pipeline(2);
    let mut idle = fm(
        cmd::ADD,
        0,
        10,
        udp_to([10, 0, 0, 2]),
        vec![apply(vec![out(2)])],
    );
    idle.idle_timeout = 10;
    idle.flags = ff::SEND_FLOW_REM;
    p.flow_mod(&idle, 0).unwrap();
    let mut hard = fm(cmd::ADD, 0, 10, udp_to([10, 0, 0, 3]), vec![]);
    hard.hard_timeout = 15;
    hard.idle_timeout = 100;
    p.flow_mod(&hard, 0).unwrap();
    // Traffic at 8 s keeps the idle entry alive until 18 s.
    run(&mut p, &udp_frame([10, 0, 0, 2], 1, 64), 1, 8 * SEC);
    run(&mut p, &udp_frame([10, 0, 0, 3], 1, 64), 1, 8 * SEC);
    assert!(p.expire(12 * SEC).is_empty());
    let r = p.expire(15 * SEC);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].reason, ofp::message::flow_removed_reason::HARD_TIMEOUT);
    let r = p.expire(18 * SEC);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].reason, ofp::message::flow_removed_reason::IDLE_TIMEOUT);
    assert_eq!(r[0].to_message(18 * SEC).packet_count, 1);
    assert!(p.table(0).unwrap().is_empty());
}

#[test]
fn goto_write_metadata_and_action_set() {
    let mut p = pipeline(3);
    // Table 0: write metadata, write output 2 into the set, goto 1.
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![
                Instruction::WriteActions(vec![out(2)]),
                Instruction::WriteMetadata {
                    metadata: 0xab00,
                    mask: 0xff00,
                },
                Instruction::GotoTable(1),
            ],
        ),
        0,
    )
    .unwrap();
    // Table 1 matches the metadata, replaces the output with 3 and adds a
    // VLAN push + VID set (executed push first whatever the write order).
    p.flow_mod(
        &fm(
            cmd::ADD,
            1,
            1,
            vec![OxmField::Metadata(0xab00, Some(0xff00))],
            vec![Instruction::WriteActions(vec![
                Action::SetField(OxmField::VlanVid(0x1000 | 42, None)),
                out(3),
                Action::PushVlan(0x8100),
            ])],
        ),
        0,
    )
    .unwrap();
    let f = udp_frame([10, 0, 0, 2], 1, 64);
    let r = run(&mut p, &f, 1, 0);
    assert_eq!(r.ports(), vec![3]);
    let Ev::Port(_, data, _) = &r.0[0] else {
        panic!()
    };
    assert_eq!(data.len(), f.len() + 4);
    assert_eq!(&data[12..16], &[0x81, 0x00, 0x00, 42]);
    assert_eq!(&data[16..], &f[12..]);
    // Clear-actions in table 1 empties the set: nothing is sent.
    p.flow_mod(
        &fm(cmd::ADD, 1, 5, vec![], vec![Instruction::ClearActions]),
        0,
    )
    .unwrap();
    assert!(run(&mut p, &f, 1, 0).0.is_empty());
}

#[test]
fn apply_actions_outputs_clone_at_that_point() {
    let mut p = pipeline(3);
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![apply(vec![
                out(2),
                Action::SetField(OxmField::EthDst([0xaa; 6], None)),
                out(3),
            ])],
        ),
        0,
    )
    .unwrap();
    let f = udp_frame([10, 0, 0, 2], 1, 64);
    let r = run(&mut p, &f, 1, 0);
    let Ev::Port(2, a, None) = &r.0[0] else {
        panic!("{:?}", r.0)
    };
    let Ev::Port(3, b, None) = &r.0[1] else {
        panic!("{:?}", r.0)
    };
    assert_eq!(a, &f);
    assert_eq!(&b[..6], &[0xaa; 6]);
}

#[test]
fn reserved_ports() {
    let mut p = pipeline(4);
    p.ports.get_mut(4).unwrap().config = config::NO_FWD;
    let add = |p: &mut Pipeline, port: u32, a: Vec<Action>| {
        p.flow_mod(
            &fm(cmd::ADD, 0, 1, vec![OxmField::InPort(port)], vec![apply(a)]),
            0,
        )
        .unwrap();
    };
    add(&mut p, 1, vec![out(port_no::ALL)]);
    add(
        &mut p,
        2,
        vec![
            out(port_no::IN_PORT),
            out(2),
            Action::SetQueue(0),
            out(port_no::FLOOD),
        ],
    );
    add(
        &mut p,
        3,
        vec![
            Action::Output {
                port: port_no::CONTROLLER,
                max_len: 64,
            },
            out(port_no::NORMAL),
        ],
    );
    let f = udp_frame([10, 0, 0, 2], 1, 64);
    // ALL: every port but the ingress port and the NO_FWD one.
    assert_eq!(run(&mut p, &f, 1, 0).ports(), vec![2, 3]);
    // IN_PORT sends back; plain output to the ingress port does not.
    let r = run(&mut p, &f, 2, 0);
    assert_eq!(r.ports(), vec![2, 1, 3]);
    assert!(matches!(r.0[2], Ev::Port(3, _, Some(0))));
    let r = run(&mut p, &f, 3, 0);
    assert_eq!(
        r.0[0],
        Ev::PacketIn {
            reason: packet_in_reason::ACTION,
            table_id: 0,
            cookie: 0,
            match_: Match::new(vec![OxmField::InPort(3)]),
            max_len: 64,
            data: f.clone(),
        }
    );
    assert_eq!(r.0[1], Ev::Normal);
    // NO_PACKET_IN on the ingress port suppresses packet-ins.
    p.ports.get_mut(3).unwrap().config = config::NO_PACKET_IN;
    assert_eq!(run(&mut p, &f, 3, 0).0, vec![Ev::Normal]);
    // NO_RECV drops on input.
    p.ports.get_mut(1).unwrap().config = config::NO_RECV;
    assert!(run(&mut p, &f, 1, 0).0.is_empty());
}

#[test]
fn table_miss_entry_sends_no_match() {
    let mut p = pipeline(2);
    let mut miss = fm(
        cmd::ADD,
        0,
        0,
        vec![],
        vec![apply(vec![Action::Output {
            port: port_no::CONTROLLER,
            max_len: 128,
        }])],
    );
    miss.cookie = 9;
    p.flow_mod(&miss, 0).unwrap();
    assert!(p
        .table(0)
        .unwrap()
        .entries()
        .next()
        .unwrap()
        .is_table_miss());
    let r = run(&mut p, &udp_frame([1, 2, 3, 4], 1, 64), 1, 0);
    assert!(matches!(
        r.0[0],
        Ev::PacketIn {
            reason: packet_in_reason::NO_MATCH,
            cookie: 9,
            max_len: 128,
            ..
        }
    ));
}

#[test]
fn invalid_ttl() {
    let mut p = pipeline(2);
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![apply(vec![Action::DecNwTtl, out(2)])],
        ),
        0,
    )
    .unwrap();
    let r = run(&mut p, &udp_frame([1, 2, 3, 4], 1, 64), 1, 0);
    let Ev::Port(2, d, _) = &r.0[0] else { panic!() };
    assert_eq!(d[22], 63);
    let r = run(&mut p, &udp_frame([1, 2, 3, 4], 1, 1), 1, 0);
    assert!(matches!(
        r.0.as_slice(),
        [Ev::PacketIn {
            reason: packet_in_reason::INVALID_TTL,
            ..
        }]
    ));
    p.config.invalid_ttl_to_controller = false;
    assert!(run(&mut p, &udp_frame([1, 2, 3, 4], 1, 1), 1, 0)
        .0
        .is_empty());
}

#[test]
fn packet_out_to_table_and_ports() {
    let mut p = pipeline(3);
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![OxmField::InPort(1)],
            vec![apply(vec![out(3)])],
        ),
        0,
    )
    .unwrap();
    assert!(p.check_action(&out(port_no::TABLE), true).is_ok());
    let mut r = Rec::default();
    let mut buf = PacketBuf::from_slice(&udp_frame([1, 2, 3, 4], 1, 64));
    p.packet_out(&mut buf, 1, &[out(2), out(port_no::TABLE)], 0, &mut r);
    assert_eq!(r.ports(), vec![2, 3]);
}

fn bucket(actions: Vec<Action>) -> Bucket {
    Bucket {
        weight: 0,
        watch_port: port_no::ANY,
        watch_group: ofp::group::group_id::ANY,
        actions,
    }
}

fn gmod(command: u16, ty: u8, id: u32, buckets: Vec<Bucket>) -> GroupMod {
    GroupMod {
        command,
        group_type: ty,
        group_id: id,
        buckets,
    }
}

#[test]
fn groups_all_indirect_ff_select() {
    let mut p = pipeline(4);
    p.group_mod(
        &gmod(
            gcmd::ADD,
            group_type::ALL,
            1,
            vec![bucket(vec![out(2)]), bucket(vec![out(3)])],
        ),
        0,
    )
    .unwrap();
    p.group_mod(
        &gmod(
            gcmd::ADD,
            group_type::INDIRECT,
            2,
            vec![bucket(vec![Action::Group(1)])],
        ),
        0,
    )
    .unwrap();
    let ff_b = |port: u32, out_p: u32| Bucket {
        watch_port: port,
        ..bucket(vec![out(out_p)])
    };
    p.group_mod(
        &gmod(gcmd::ADD, group_type::FF, 3, vec![ff_b(3, 3), ff_b(4, 4)]),
        0,
    )
    .unwrap();
    let sel = |w: u16, o: u32| Bucket {
        weight: w,
        ..bucket(vec![out(o)])
    };
    p.group_mod(
        &gmod(
            gcmd::ADD,
            group_type::SELECT,
            4,
            vec![sel(1, 2), sel(1, 4), sel(0, 1)],
        ),
        0,
    )
    .unwrap();
    for (port, g) in [(1u32, 2u32), (2, 3), (3, 4)] {
        p.flow_mod(
            &fm(
                cmd::ADD,
                0,
                1,
                vec![OxmField::InPort(port)],
                vec![apply(vec![Action::Group(g)])],
            ),
            0,
        )
        .unwrap();
    }
    let f = udp_frame([1, 2, 3, 4], 1, 64);
    assert_eq!(run(&mut p, &f, 1, 0).ports(), vec![2, 3]);
    assert_eq!(p.groups.get(1).unwrap().counters.packet_count, 1);
    assert_eq!(
        p.groups.get(1).unwrap().bucket_counters[1].byte_count,
        f.len() as u64
    );
    // The INDIRECT group and its one bucket count the packet (it is also
    // the tail of its list: the one-bucket path).
    assert_eq!(p.groups.get(2).unwrap().counters.packet_count, 1);
    assert_eq!(
        p.groups.get(2).unwrap().bucket_counters[0].byte_count,
        f.len() as u64
    );
    // Fast failover: port 3 live, then down.
    assert_eq!(run(&mut p, &f, 2, 0).ports(), vec![3]);
    p.ports.get_mut(3).unwrap().state = state::LINK_DOWN;
    assert_eq!(run(&mut p, &f, 2, 0).ports(), vec![4]);
    p.ports.get_mut(3).unwrap().state = state::LIVE;
    // Select: one bucket, never the weight-0 one, same for the same flow;
    // different flows spread over both.
    let mut seen = std::collections::BTreeSet::new();
    for d in 0..64u16 {
        let g = udp_frame([1, 2, 3, 4], d, 64);
        let a = run(&mut p, &g, 3, 0).ports();
        assert_eq!(a.len(), 1);
        assert_eq!(run(&mut p, &g, 3, 0).ports(), a);
        seen.insert(a[0]);
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![2, 4]);
    // 128 packets through the SELECT group, each counted by the group and
    // by the bucket it took (out:2 is bucket 0, out:4 bucket 1).
    let g4 = p.groups.get(4).unwrap();
    assert_eq!(g4.counters.packet_count, 128);
    let per: Vec<u64> = g4.bucket_counters.iter().map(|c| c.packet_count).collect();
    assert_eq!(per.iter().sum::<u64>(), 128);
    assert_eq!(per[2], 0);
    assert!(per[0] > 0 && per[1] > 0);
}

/// A group's bucket acts on a copy: what follows the group (later actions
/// of the list, later tables, the action set) sees the packet unchanged;
/// only when nothing follows may the bucket act on the packet itself, and
/// the output is the same either way.
#[test]
fn group_buckets_do_not_change_what_follows() {
    let mut p = pipeline(4);
    let mac = [0xaa; 6];
    for (id, ty) in [(1u32, group_type::INDIRECT), (2, group_type::ALL)] {
        let buckets = match ty {
            group_type::ALL => vec![
                bucket(vec![Action::SetField(OxmField::EthDst(mac, None)), out(2)]),
                bucket(vec![Action::DecNwTtl, out(4)]),
            ],
            _ => vec![bucket(vec![
                Action::SetField(OxmField::EthDst(mac, None)),
                Action::DecNwTtl,
                out(2),
            ])],
        };
        p.group_mod(&gmod(gcmd::ADD, ty, id, buckets), 0).unwrap();
    }
    let f = udp_frame([10, 0, 0, 2], 1, 64);
    let mut changed = f.clone();
    changed[..6].copy_from_slice(&mac);
    // `frame` after dec_nw_ttl and output to `port` in a pipeline of its
    // own (no group involved): the expected bytes of a bucket's output.
    let dec_ttl = |frame: &[u8], port: u32| -> Vec<u8> {
        let mut r = Rec::default();
        let mut buf = PacketBuf::from_slice(frame);
        let mut q = pipeline(4);
        q.flow_mod(
            &fm(
                cmd::ADD,
                0,
                1,
                vec![],
                vec![apply(vec![Action::DecNwTtl, out(port)])],
            ),
            0,
        )
        .unwrap();
        q.process(&mut buf, 1, 0, &mut r).unwrap();
        let Ev::Port(_, d, _) = &r.0[0] else { panic!() };
        d.clone()
    };
    let after_dec = dec_ttl(&changed, 2);
    type Sent = Vec<(u32, Vec<u8>)>;
    let sent = |r: &Rec| -> Sent {
        r.0.iter()
            .filter_map(|e| match e {
                Ev::Port(p, d, _) => Some((*p, d.clone())),
                _ => None,
            })
            .collect()
    };
    // The cases: the instructions of table 0's entry (table 1 outputs to
    // 3 whatever it gets, if its match holds).
    p.flow_mod(
        &fm(
            cmd::ADD,
            1,
            1,
            vec![OxmField::EthDst(f[..6].try_into().unwrap(), None)],
            vec![apply(vec![out(3)])],
        ),
        0,
    )
    .unwrap();
    let cases: Vec<(Vec<Instruction>, Sent)> = vec![
        // Nothing follows: the bucket's result goes out.
        (
            vec![apply(vec![Action::Group(1)])],
            vec![(2, after_dec.clone())],
        ),
        // A later action of the list sees the original.
        (
            vec![apply(vec![Action::Group(1), out(3)])],
            vec![(2, after_dec.clone()), (3, f.clone())],
        ),
        // A later table matches the original (eth_dst unchanged).
        (
            vec![apply(vec![Action::Group(1)]), Instruction::GotoTable(1)],
            vec![(2, after_dec.clone()), (3, f.clone())],
        ),
        // The action set runs on the original.
        (
            vec![
                apply(vec![Action::Group(1)]),
                Instruction::WriteActions(vec![out(3)]),
            ],
            vec![(2, after_dec.clone()), (3, f.clone())],
        ),
        // The group in the action set comes last: acts on the packet.
        (
            vec![Instruction::WriteActions(vec![Action::Group(1)])],
            vec![(2, after_dec.clone())],
        ),
        // ALL: every bucket starts from the original packet.
        (
            vec![apply(vec![Action::Group(2)])],
            vec![(2, changed.clone()), (4, dec_ttl(&f, 4))],
        ),
        (
            vec![apply(vec![Action::Group(2), out(3)])],
            vec![
                (2, changed.clone()),
                (4, {
                    let mut d = after_dec.clone();
                    d[..6].copy_from_slice(&f[..6]);
                    d
                }),
                (3, f.clone()),
            ],
        ),
    ];
    for (i, (insts, want)) in cases.into_iter().enumerate() {
        p.flow_mod(&fm(cmd::ADD, 0, 1, vec![], insts), 0).unwrap();
        assert_eq!(sent(&run(&mut p, &f, 1, 0)), want, "case {i}");
        // The batch path agrees.
        let mut r = Rec::default();
        let mut bufs = vec![PacketBuf::from_slice(&f)];
        p.process_batch(&mut bufs, 1, 0, &mut r, |_, _, _, res| assert!(res.is_ok()));
        assert_eq!(sent(&r), want, "case {i} (batch)");
    }
}

#[test]
fn group_mod_errors_and_delete() {
    let mut p = pipeline(2);
    let g = |c, ty, id, b| gmod(c, ty, id, b);
    p.group_mod(
        &g(gcmd::ADD, group_type::ALL, 1, vec![bucket(vec![out(2)])]),
        0,
    )
    .unwrap();
    let err = |p: &mut Pipeline, m: GroupMod| p.group_mod(&m, 0).unwrap_err();
    assert_eq!(
        err(&mut p, g(gcmd::ADD, group_type::ALL, 1, vec![])),
        ErrorCode::GroupModFailed(GroupModFailedCode::GroupExists)
    );
    assert_eq!(
        err(&mut p, g(gcmd::MODIFY, group_type::ALL, 9, vec![])),
        ErrorCode::GroupModFailed(GroupModFailedCode::UnknownGroup)
    );
    assert_eq!(
        err(
            &mut p,
            g(
                gcmd::ADD,
                group_type::ALL,
                2,
                vec![bucket(vec![Action::Group(7)])]
            )
        ),
        ErrorCode::BadAction(BadActionCode::BadOutGroup)
    );
    assert_eq!(
        err(
            &mut p,
            g(gcmd::ADD, group_type::FF, 2, vec![bucket(vec![out(2)])])
        ),
        ErrorCode::GroupModFailed(GroupModFailedCode::BadWatch)
    );
    assert_eq!(
        err(&mut p, g(gcmd::ADD, group_type::INDIRECT, 2, vec![])),
        ErrorCode::GroupModFailed(GroupModFailedCode::InvalidGroup)
    );
    // 2 -> 1, then 1 -> 2 would loop.
    p.group_mod(
        &g(
            gcmd::ADD,
            group_type::ALL,
            2,
            vec![bucket(vec![Action::Group(1)])],
        ),
        0,
    )
    .unwrap();
    assert_eq!(
        err(
            &mut p,
            g(
                gcmd::MODIFY,
                group_type::ALL,
                1,
                vec![bucket(vec![Action::Group(2)])]
            )
        ),
        ErrorCode::GroupModFailed(GroupModFailedCode::Loop)
    );
    // 1 is chained from 2: cannot delete it alone.
    assert_eq!(
        err(&mut p, g(gcmd::DELETE, group_type::ALL, 1, vec![])),
        ErrorCode::GroupModFailed(GroupModFailedCode::ChainedGroup)
    );
    // Deleting 2 removes the flows that use it.
    let mut f = fm(cmd::ADD, 0, 1, vec![], vec![apply(vec![Action::Group(2)])]);
    f.flags = ff::SEND_FLOW_REM;
    p.flow_mod(&f, 0).unwrap();
    let gone = p
        .group_mod(&g(gcmd::DELETE, group_type::ALL, 2, vec![]), 0)
        .unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(
        gone[0].reason,
        ofp::message::flow_removed_reason::GROUP_DELETE
    );
    assert!(!p.groups.contains(2) && p.groups.contains(1));
}

#[test]
fn meter_drop_band_pktps_with_burst() {
    let mut p = pipeline(2);
    let mm = MeterMod {
        command: mcmd::ADD,
        flags: mflags::PKTPS | mflags::BURST | mflags::STATS,
        meter_id: 1,
        bands: vec![MeterBand::Drop {
            rate: 10,
            burst_size: 5,
        }],
    };
    p.meter_mod(&mm, 0).unwrap();
    assert_eq!(
        p.meter_mod(&mm, 0).unwrap_err(),
        ErrorCode::MeterModFailed(MeterModFailedCode::MeterExists)
    );
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![Instruction::Meter(1), apply(vec![out(2)])],
        ),
        0,
    )
    .unwrap();
    let f = udp_frame([1, 2, 3, 4], 1, 64);
    // A burst of 8 packets at t=0: 5 pass (the burst), 3 dropped.
    let passed: usize = (0..8).map(|_| run(&mut p, &f, 1, 0).0.len()).sum();
    assert_eq!(passed, 5);
    // 10 pkt/s: after 0.5 s, 5 more tokens.
    let passed: usize = (0..8).map(|_| run(&mut p, &f, 1, SEC / 2).0.len()).sum();
    assert_eq!(passed, 5);
    let m = p.meters.get(1).unwrap();
    assert_eq!(m.packet_in_count(), 16);
    assert_eq!(m.bands[0].packet_count(), 6);
    assert_eq!(m.bands[0].byte_count(), 6 * f.len() as u64);
    // Deleting the meter removes the flow that uses it.
    let gone = p
        .meter_mod(
            &MeterMod {
                command: mcmd::DELETE,
                flags: 0,
                meter_id: 1,
                bands: vec![],
            },
            0,
        )
        .unwrap();
    assert_eq!(gone.len(), 1);
    assert!(p.table(0).unwrap().is_empty());
}

#[test]
fn meter_dscp_remark_kbps() {
    let mut p = pipeline(2);
    // 8 kbps = 1000 bytes/s, bucket one second deep.
    p.meter_mod(
        &MeterMod {
            command: mcmd::ADD,
            flags: mflags::KBPS,
            meter_id: 2,
            bands: vec![MeterBand::DscpRemark {
                rate: 8,
                burst_size: 0,
                prec_level: 1,
            }],
        },
        0,
    )
    .unwrap();
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![Instruction::Meter(2), apply(vec![out(2)])],
        ),
        0,
    )
    .unwrap();
    let mut f = udp_frame([1, 2, 3, 4], 1, 64);
    f[15] = 10 << 2; // AF11
    let ck = packet::checksum::checksum(0, &{
        let mut h = f[14..34].to_vec();
        h[10] = 0;
        h[11] = 0;
        h
    });
    f[24..26].copy_from_slice(&ck.to_be_bytes());
    let mut dscps = Vec::new();
    for _ in 0..40 {
        let r = run(&mut p, &f, 1, 0);
        let Ev::Port(2, d, _) = &r.0[0] else { panic!() };
        dscps.push(d[15] >> 2);
    }
    // 1000 bytes of tokens = 23 packets of 42 bytes, then AF12.
    assert_eq!(dscps.iter().filter(|d| **d == 10).count(), 1000 / f.len());
    assert_eq!(dscps.last(), Some(&12));
    assert_eq!(
        p.meter_mod(
            &MeterMod {
                command: mcmd::MODIFY,
                flags: 0,
                meter_id: 9,
                bands: vec![]
            },
            0
        )
        .unwrap_err(),
        ErrorCode::MeterModFailed(MeterModFailedCode::UnknownMeter)
    );
}

/// Lookup equals the naive reference: scan every rule in installation
/// order, keep the first one with the highest priority that matches, where
/// "matches" is evaluated straight from the OXM fields and `FlowKey::get`.
mod lookup_props {
    use super::*;
    use packet::{Field, FlowKey};
    use proptest::prelude::*;

    fn reference_matches(m: &Match, k: &FlowKey) -> bool {
        m.fields.iter().all(|f| {
            let Some((v, mask)) = f.bits() else {
                return false;
            };
            let Some(field) = Field::from_u8(f.field_id()) else {
                return false;
            };
            match k.get(field) {
                Some(kv) => {
                    let mask = mask.unwrap_or(u128::MAX);
                    kv.to_u128() & mask == v & mask
                }
                None => false,
            }
        })
    }

    fn any_rule() -> impl Strategy<Value = (u16, Vec<OxmField>)> {
        let port = proptest::option::of(1u32..4);
        let ip = proptest::option::of((0u32..4, 0u32..=32));
        let dst = proptest::option::of((
            0u8..3,
            prop_oneof![Just(None), Just(Some([0xff, 0, 0, 0, 0, 0xff]))],
        ));
        let proto = proptest::option::of(prop_oneof![Just(6u8), Just(17u8)]);
        (0u16..4, port, ip, dst, proto).prop_map(|(prio, port, ip, dst, proto)| {
            let mut f = Vec::new();
            if let Some(p) = port {
                f.push(OxmField::InPort(p));
            }
            if let Some((b, m)) = dst {
                f.push(OxmField::EthDst([b, 0, 0, 0, 0, b], m));
            }
            if ip.is_some() || proto.is_some() {
                f.push(OxmField::EthType(0x0800));
            }
            if let Some((a, len)) = ip {
                let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
                let v = (0x0a00_0000 | a << 22) & mask;
                f.push(OxmField::Ipv4Dst(
                    Ipv4Addr::from(v),
                    Some(Ipv4Addr::from(mask)),
                ));
            }
            if let Some(p) = proto {
                f.push(OxmField::IpProto(p));
            }
            (prio, f)
        })
    }

    fn any_key() -> impl Strategy<Value = FlowKey> {
        (
            1u32..4,
            0u8..3,
            any::<bool>(),
            0u32..4,
            any::<u32>(),
            prop_oneof![Just(6u8), Just(17u8), Just(1u8)],
        )
            .prop_map(|(port, d, ipv4, a, low, proto)| {
                let mut k = FlowKey::new(port);
                k.eth_dst = [d, 0, 0, 0, 0, d];
                k.present.insert(Field::EthDst);
                k.present.insert(Field::EthType);
                if ipv4 {
                    k.eth_type = 0x0800;
                    k.ipv4_dst = 0x0a00_0000 | a << 22 | (low & 0x3f_ffff);
                    k.ip_proto = proto;
                    k.present.insert(Field::Ipv4Dst);
                    k.present.insert(Field::IpProto);
                } else {
                    k.eth_type = 0x0806;
                }
                k
            })
    }

    /// Rules that (mostly) share one shape, so the table uses the hash
    /// classifier: the shape is picked per case; values come from tiny
    /// ranges so equal matches at different priorities occur; `odd` rules
    /// (another shape) push the table back to the scan.
    fn same_shape_rules() -> impl Strategy<Value = Vec<(u16, Vec<OxmField>)>> {
        (0u8..3).prop_flat_map(|shape| {
            let rule = (0u16..4, 1u32..4, 0u8..4, 0u32..4, 0u8..12).prop_map(
                move |(prio, port, d, a, kind)| {
                    let mut f = Vec::new();
                    match kind {
                        // Match everything (table-miss or lower/higher).
                        0 => {}
                        // Another shape.
                        1 => f.push(OxmField::InPort(port)),
                        _ => match shape {
                            0 => f.push(OxmField::EthDst([d, 0, 0, 0, 0, d], None)),
                            1 => {
                                f.push(OxmField::InPort(port));
                                f.push(OxmField::EthDst([d, 0, 0, 0, 0, d], None));
                            }
                            _ => {
                                f.push(OxmField::EthType(0x0800));
                                f.push(OxmField::Ipv4Dst(
                                    Ipv4Addr::from(0x0a00_0000 | a << 22),
                                    Some(Ipv4Addr::from(0xffc0_0000u32)),
                                ));
                            }
                        },
                    }
                    (prio, f)
                },
            );
            proptest::collection::vec(rule, 0..32)
        })
    }

    /// The rules installed in order (identical match + priority replaced),
    /// as (priority, match, cookie).
    fn install(p: &mut Pipeline, rules: &[(u16, Vec<OxmField>)]) -> Vec<(u16, Match, u64)> {
        let mut installed: Vec<(u16, Match, u64)> = Vec::new();
        for (i, (prio, m)) in rules.iter().enumerate() {
            let mut f = fm(cmd::ADD, 0, *prio, m.clone(), vec![]);
            f.cookie = i as u64;
            p.flow_mod(&f, 0).unwrap();
            let c = CompiledMatch::compile(&Match::new(m.clone()), &Default::default()).unwrap();
            installed.retain(|(q, mm, _)| {
                !(*q == *prio && CompiledMatch::compile(mm, &Default::default()).unwrap() == c)
            });
            installed.push((*prio, Match::new(m.clone()), i as u64));
        }
        installed
    }

    fn expected(installed: &[(u16, Match, u64)], k: &FlowKey) -> Option<u64> {
        let mut best: Option<&(u16, Match, u64)> = None;
        for r in installed {
            if reference_matches(&r.1, k) && best.is_none_or(|b| r.0 > b.0) {
                best = Some(r);
            }
        }
        best.map(|b| b.2)
    }

    proptest! {
        #[test]
        fn hash_classifier_equals_reference(
            rules in same_shape_rules(),
            keys in proptest::collection::vec(any_key(), 1..16),
            delete in proptest::option::of(0usize..32),
        ) {
            let mut p = Pipeline::new(1);
            let mut installed = install(&mut p, &rules);
            let one_shape = {
                let shapes: std::collections::BTreeSet<Vec<(packet::Field, u128)>> = installed
                    .iter()
                    .map(|r| CompiledMatch::compile(&r.1, &Default::default()).unwrap())
                    .filter(|c| !c.is_empty())
                    .map(|c| c.fields().iter().map(|f| (f.field, f.mask)).collect())
                    .collect();
                shapes.len() <= 1
            };
            let check = |p: &Pipeline, installed: &[(u16, Match, u64)]| -> Result<(), TestCaseError> {
                let t = p.table(0).unwrap();
                prop_assert_eq!(t.len(), installed.len());
                for k in &keys {
                    prop_assert_eq!(t.peek(k).map(|e| e.cookie()), expected(installed, k));
                }
                Ok(())
            };
            // The hash is in use exactly when the form allows it.
            let hash_ok = one_shape
                && installed.iter().any(|r| !r.1.fields.is_empty())
                && installed.len() >= crate::classifier::HASH_MIN_ENTRIES;
            prop_assert_eq!(p.table(0).unwrap().classifier_kind() == "hash", hash_ok);
            check(&p, &installed)?;
            // A strict delete rebuilds the structure.
            if let Some(i) = delete.filter(|i| *i < installed.len()) {
                let (prio, m, _) = installed.remove(i);
                let f = fm(cmd::DELETE_STRICT, 0, prio, m.fields.clone(), vec![]);
                p.flow_mod(&f, 0).unwrap();
                check(&p, &installed)?;
            }
        }
    }

    proptest! {
        #[test]
        fn lookup_equals_reference(
            rules in proptest::collection::vec(any_rule(), 0..24),
            keys in proptest::collection::vec(any_key(), 1..16),
        ) {
            let mut p = Pipeline::new(1);
            // Installed rules, in order, after replacement of identical ones.
            let mut installed: Vec<(u16, Match, u64)> = Vec::new();
            for (i, (prio, m)) in rules.iter().enumerate() {
                let mut f = fm(cmd::ADD, 0, *prio, m.clone(), vec![]);
                f.cookie = i as u64;
                p.flow_mod(&f, 0).unwrap();
                let c = CompiledMatch::compile(&Match::new(m.clone()), &Default::default()).unwrap();
                installed.retain(|(q, mm, _)| !(*q == *prio && CompiledMatch::compile(mm, &Default::default()).unwrap() == c));
                installed.push((*prio, Match::new(m.clone()), i as u64));
            }
            prop_assert_eq!(p.table(0).unwrap().len(), installed.len());
            for k in &keys {
                let mut best: Option<&(u16, Match, u64)> = None;
                for r in &installed {
                    if reference_matches(&r.1, k) && best.is_none_or(|b| r.0 > b.0) {
                        best = Some(r);
                    }
                }
                let got = p.table(0).unwrap().peek(k).map(|e| e.cookie());
                prop_assert_eq!(got, best.map(|b| b.2));
            }
        }
    }
}

#[test]
fn meter_buckets_are_shared_by_replicas() {
    let mut p = pipeline(2);
    let mm = MeterMod {
        command: mcmd::ADD,
        flags: mflags::KBPS | mflags::BURST,
        meter_id: 1,
        // 1 Mbit/s, 8 kbit burst: ten 100-byte frames (800 bits each).
        bands: vec![MeterBand::Drop {
            rate: 1000,
            burst_size: 8,
        }],
    };
    p.meter_mod(&mm, 0).unwrap();
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![Instruction::Meter(1), apply(vec![out(2)])],
        ),
        0,
    )
    .unwrap();
    // Two worker replicas from the same pipeline, metering concurrently.
    let replicas: Vec<Pipeline> = (0..2).map(|_| p.clone()).collect();
    assert!(replicas[0].meters.shares_with(&p.meters));
    // A 100-byte frame (Ethernet padding after the UDP datagram).
    let mut f = udp_frame([1, 2, 3, 4], 1, 64);
    f.resize(100, 0);
    let passed: usize = replicas
        .into_iter()
        .map(|mut r| {
            let f = f.clone();
            std::thread::spawn(move || {
                (0..10)
                    .map(|_| run(&mut r, &f, 1, 0).0.len())
                    .sum::<usize>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .sum::<usize>();
    // The burst is the switch's, not each replica's: 10 of 20 pass.
    assert_eq!(passed, 10);
    let m = p.meters.get(1).unwrap();
    assert_eq!(m.packet_in_count(), 20);
    assert_eq!(m.bands[0].packet_count(), 10);
    // 1 ms later the rate has refilled exactly one more frame (1000 bits).
    let mut r = p.clone();
    let passed: usize = (0..3).map(|_| run(&mut r, &f, 1, 1_000_000).0.len()).sum();
    assert_eq!(passed, 1);
}

#[test]
fn set_queue_to_a_missing_queue_is_bad_queue() {
    let mut p = pipeline(2);
    let f = |q| {
        fm(
            cmd::ADD,
            0,
            1,
            vec![],
            vec![apply(vec![Action::SetQueue(q), out(2)])],
        )
    };
    assert_eq!(
        p.flow_mod(&f(1), 0).unwrap_err(),
        ErrorCode::BadAction(ofp::error::BadActionCode::BadQueue)
    );
    p.flow_mod(&f(0), 0).unwrap();
    // A queue some port has is accepted.
    p.queue_ids.insert(1);
    p.flow_mod(&f(1), 0).unwrap();
    assert_eq!(
        p.flow_mod(&f(2), 0).unwrap_err(),
        ErrorCode::BadAction(ofp::error::BadActionCode::BadQueue)
    );
    // Set-field without its prerequisite in the match.
    let bad = fm(
        cmd::ADD,
        0,
        2,
        vec![],
        vec![apply(vec![
            Action::SetField(OxmField::Ipv4Src([1, 2, 3, 4].into(), None)),
            out(2),
        ])],
    );
    assert_eq!(
        p.flow_mod(&bad, 0).unwrap_err(),
        ErrorCode::BadAction(ofp::error::BadActionCode::MatchInconsistent)
    );
}

/// `process_batch` has exactly the effect of `process` packet by packet:
/// the same outputs and packet-ins per packet in the same order, the same
/// results, frames and counters. Rules span three tables with gotos,
/// metadata writes and set-fields that change the fields later tables
/// match on (so the batch's early lookups must be discarded there), and
/// prefix rules of many lengths (the LPM trie's batched walk). In test
/// builds every pipeline is warmed (`batch::WARM_MIN_ENTRIES` is 0).
mod batch_props {
    use super::*;
    use proptest::prelude::*;

    /// (table, priority, match kind, address, prefix length, port,
    /// metadata, action kind, goto)
    type RuleSpec = (u8, u16, u8, u32, u8, u32, u64, u8, bool);

    fn any_rule() -> impl Strategy<Value = RuleSpec> {
        (
            0u8..3,
            0u16..4,
            0u8..5,
            0u32..8,
            prop_oneof![Just(0u8), Just(4), Just(8), Just(24), Just(29), Just(32)],
            1u32..4,
            0u64..3,
            0u8..6,
            any::<bool>(),
        )
    }

    fn rule(r: &RuleSpec) -> FlowMod {
        let &(table, prio, mk, a, len, port, meta, ak, goto) = r;
        let dst = 0x0a00_0000 | a << 3;
        let ip = mk == 2 || mk == 3;
        let m = match mk {
            0 => vec![],
            1 => vec![OxmField::InPort(port)],
            2 => {
                let mask = if len == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(len))
                };
                vec![
                    OxmField::EthType(0x0800),
                    OxmField::Ipv4Dst(Ipv4Addr::from(dst & mask), Some(Ipv4Addr::from(mask))),
                ]
            }
            3 => vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(17),
                OxmField::UdpDst(port as u16),
            ],
            _ => vec![OxmField::Metadata(meta, None)],
        };
        let mut insts = Vec::new();
        match ak {
            0 => insts.push(apply(vec![out(port)])),
            1 => insts.push(apply(vec![out(port_no::CONTROLLER)])),
            2 => insts.push(Instruction::WriteActions(vec![out(port)])),
            3 => insts.push(Instruction::WriteMetadata {
                metadata: meta,
                mask: u64::MAX,
            }),
            4 if ip => insts.push(apply(vec![
                Action::SetField(OxmField::Ipv4Dst(Ipv4Addr::from(dst ^ 8), None)),
                Action::DecNwTtl,
                out(port),
            ])),
            _ => insts.push(apply(vec![out(port_no::FLOOD)])),
        }
        if goto && table < 2 {
            insts.push(Instruction::GotoTable(table + 1));
        }
        fm(cmd::ADD, table, prio, m, insts)
    }

    /// (in_port, address, udp dst port, ttl, truncated)
    fn any_frame() -> impl Strategy<Value = (u32, u32, u16, u8, bool)> {
        (
            1u32..4,
            0u32..80,
            0u16..4,
            0u8..3,
            proptest::bool::weighted(0.1),
        )
    }

    fn frame(f: &(u32, u32, u16, u8, bool)) -> Vec<u8> {
        let &(_, a, dport, ttl, cut) = f;
        let mut v = udp_frame((0x0a00_0000 | a).to_be_bytes(), dport, ttl);
        if cut {
            v.truncate(20);
        }
        v
    }

    /// A table's lookups, matches and every entry's (cookie, packets,
    /// bytes).
    pub(super) type Counts = (u64, u64, Vec<(u64, u64, u64)>);

    /// Every table's counts.
    pub(super) fn counters(p: &Pipeline) -> Vec<Counts> {
        p.tables()
            .iter()
            .map(|t| {
                (
                    t.counters.lookup_count,
                    t.counters.matched_count,
                    t.entries()
                        .map(|e| (e.cookie(), e.packet_count(), e.byte_count()))
                        .collect(),
                )
            })
            .collect()
    }

    proptest! {
        #[test]
        fn process_batch_equals_process(
            rules in proptest::collection::vec(any_rule(), 0..40),
            frames in proptest::collection::vec(any_frame(), 1..80),
            in_port in 1u32..4,
        ) {
            let mut p = pipeline(3);
            for (i, r) in rules.iter().enumerate() {
                let mut f = rule(r);
                f.cookie = i as u64;
                // Some combinations are refused (e.g. duplicate checks);
                // both sides see the same rule set either way.
                let _ = p.flow_mod(&f, 0);
            }
            let mut one = p.clone();
            let mut batch = p;
            // Packet by packet.
            let mut want_ev = Vec::new();
            let mut want_res = Vec::new();
            let mut want_bufs = Vec::new();
            for f in &frames {
                let mut rec = Rec::default();
                let mut buf = PacketBuf::from_slice(&frame(f));
                want_res.push(one.process(&mut buf, in_port, 7, &mut rec).is_ok());
                want_ev.push(rec.0);
                want_bufs.push(buf.data().to_vec());
            }
            // The batch.
            let mut bufs: Vec<PacketBuf> = frames.iter().map(|f| PacketBuf::from_slice(&frame(f))).collect();
            let mut rec = Rec::default();
            let mut got_ev = Vec::new();
            let mut got_res = Vec::new();
            batch.process_batch(&mut bufs, in_port, 7, &mut rec, |_, out, i, r| {
                assert_eq!(i, got_res.len());
                got_res.push(r.is_ok());
                got_ev.push(std::mem::take(&mut out.0));
            });
            prop_assert_eq!(got_res, want_res);
            prop_assert_eq!(got_ev, want_ev);
            let got_bufs: Vec<Vec<u8>> = bufs.iter().map(|b| b.data().to_vec()).collect();
            prop_assert_eq!(got_bufs, want_bufs);
            prop_assert_eq!(counters(&batch), counters(&one));
        }
    }

    /// Frames from a port that refuses input are dropped by both.
    #[test]
    fn batch_on_a_no_recv_port_does_nothing() {
        let mut p = pipeline(2);
        p.flow_mod(&fm(cmd::ADD, 0, 1, vec![], vec![apply(vec![out(2)])]), 0)
            .unwrap();
        if let Some(port) = p.ports.get_mut(1) {
            port.config |= config::NO_RECV;
        }
        let mut bufs = vec![PacketBuf::from_slice(&udp_frame([1, 2, 3, 4], 1, 64)); 3];
        let mut rec = Rec::default();
        let mut calls = 0;
        p.process_batch(&mut bufs, 1, 0, &mut rec, |_, _, _, r| {
            assert!(r.is_ok());
            calls += 1;
        });
        assert_eq!(calls, 3);
        assert!(rec.0.is_empty());
        assert_eq!(p.table(0).unwrap().counters.lookup_count, 0);
    }
}

/// Entries with the same instructions share one compiled program; others
/// get their own, and modify gives the entry the new one.
#[test]
fn equal_programs_are_shared() {
    let mut p = pipeline(3);
    for (port, o) in [(1u32, 2u32), (2, 2), (3, 3)] {
        p.flow_mod(
            &fm(
                cmd::ADD,
                0,
                1,
                vec![OxmField::InPort(port)],
                vec![apply(vec![out(o)])],
            ),
            0,
        )
        .unwrap();
    }
    let prog = |p: &Pipeline, port: u32| {
        let mut k = packet::FlowKey::new(port);
        k.present.insert(packet::Field::InPort);
        p.table(0).unwrap().peek(&k).unwrap().hot.program().clone()
    };
    assert!(std::sync::Arc::ptr_eq(&prog(&p, 1), &prog(&p, 2)));
    assert!(!std::sync::Arc::ptr_eq(&prog(&p, 1), &prog(&p, 3)));
    // The same list is shared too (no copy).
    let list = |p: &Pipeline, port: u32| {
        let mut k = packet::FlowKey::new(port);
        k.present.insert(packet::Field::InPort);
        p.table(0).unwrap().peek(&k).unwrap().instructions.clone()
    };
    assert!(std::sync::Arc::ptr_eq(&list(&p, 1), &list(&p, 2)));
    p.flow_mod(
        &fm(
            cmd::MODIFY_STRICT,
            0,
            1,
            vec![OxmField::InPort(2)],
            vec![apply(vec![out(3)])],
        ),
        0,
    )
    .unwrap();
    assert!(std::sync::Arc::ptr_eq(&prog(&p, 2), &prog(&p, 3)));
    let f = udp_frame([10, 0, 0, 2], 1, 64);
    assert_eq!(run(&mut p, &f, 1, 0).ports(), vec![2]);
    assert_eq!(run(&mut p, &f, 2, 0).ports(), vec![3]);
}

/// Instruction lists that differ but compile to the same program (the
/// spec runs instructions in a fixed order whatever their order in the
/// list) share the program and keep their own lists; a list that differs
/// from the others in one action's value gets its own program.
#[test]
fn equal_programs_of_different_lists_are_shared() {
    let mut p = pipeline(3);
    let lists = [
        vec![apply(vec![out(2)]), Instruction::WriteActions(vec![out(3)])],
        vec![Instruction::WriteActions(vec![out(3)]), apply(vec![out(2)])],
        vec![Instruction::WriteActions(vec![out(1)]), apply(vec![out(2)])],
    ];
    for (port, insts) in (1u32..).zip(lists) {
        p.flow_mod(&fm(cmd::ADD, 0, 1, vec![OxmField::InPort(port)], insts), 0)
            .unwrap();
    }
    let entry = |p: &Pipeline, port: u32| {
        let mut k = packet::FlowKey::new(port);
        k.present.insert(packet::Field::InPort);
        let e = p.table(0).unwrap().peek(&k).unwrap();
        (e.hot.program().clone(), e.instructions.clone())
    };
    let ((p1, i1), (p2, i2), (p3, _)) = (entry(&p, 1), entry(&p, 2), entry(&p, 3));
    assert!(std::sync::Arc::ptr_eq(&p1, &p2));
    assert!(!std::sync::Arc::ptr_eq(&i1, &i2));
    assert_ne!(i1, i2);
    assert!(!std::sync::Arc::ptr_eq(&p1, &p3));
    assert_ne!(p1, p3);
}

/// An L2 switch's table through the batch path has exactly the effect of
/// `process`: `process_batch` (warmed and not: the per-table way, which
/// reads IPv4 UDP frames and looks table 0 up from them) against
/// `process` packet by packet, on table-0 rules of one Ethernet shape
/// (sometimes two) with every kind of program (output to the ingress
/// port, to reserved ports, several outputs, goto, write-actions, a MAC
/// rewrite), match-everything entries whose priority ties with exact
/// ones, ports that cannot forward, and frames the per-table way must
/// leave to the parse (tagged, MPLS, PBB, truncated anywhere in the
/// header).
mod l2_props {
    use super::*;
    use proptest::prelude::*;

    /// (priority, mac index, port or ethertype index, program kind,
    /// second shape)
    type RuleSpec = (u16, u8, u8, u8, bool);

    const MACS: [[u8; 6]; 4] = [
        [0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 2],
        [2, 0, 0, 0, 0, 1],
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    ];
    const TYPES: [u16; 8] = [
        0x0800, 0x86dd, 0x0806, 0x8100, 0x88a8, 0x8847, 0x88e7, 0x1234,
    ];

    /// The match of shape `shape` (0..6) for a rule's values.
    fn shape_match(shape: u8, mac: u8, v: u8) -> Vec<OxmField> {
        let m = MACS[usize::from(mac) % MACS.len()];
        let port = u32::from(v % 4) + 1;
        match shape {
            0 => vec![OxmField::EthDst(m, None)],
            1 => vec![OxmField::InPort(port)],
            2 => vec![OxmField::InPort(port), OxmField::EthDst(m, None)],
            3 => vec![
                OxmField::EthSrc(m, None),
                OxmField::EthType(TYPES[usize::from(v) % 3]),
            ],
            4 => vec![OxmField::EthDst(m, Some([0xff, 0, 0, 0, 0, 0xff]))],
            _ => vec![
                OxmField::VlanVid(if v.is_multiple_of(2) { 0 } else { 0x1005 }, None),
                OxmField::EthDst(m, None),
            ],
        }
    }

    fn program(kind: u8, v: u8) -> Vec<Instruction> {
        let port = u32::from(v % 4) + 1;
        match kind {
            0..=3 => vec![apply(vec![out(port)])],
            4 => vec![apply(vec![out(port_no::IN_PORT)])],
            5 => vec![apply(vec![out(port_no::CONTROLLER)])],
            6 => vec![apply(vec![out(port_no::FLOOD)])],
            7 => vec![apply(vec![out(port), out(port % 4 + 1)])],
            8 => vec![Instruction::GotoTable(1)],
            9 => vec![Instruction::WriteActions(vec![out(port)])],
            _ => vec![apply(vec![
                Action::SetField(OxmField::EthDst(MACS[0], None)),
                out(port),
            ])],
        }
    }

    /// (dst mac, src mac, ethertype, length cut)
    fn any_frame() -> impl Strategy<Value = (u8, u8, u8, u8)> {
        (0u8..4, 0u8..4, 0u8..8, 0u8..12)
    }

    fn frame(f: &(u8, u8, u8, u8)) -> Vec<u8> {
        let &(d, s, t, cut) = f;
        let et = TYPES[usize::from(t)];
        let mut v = Vec::new();
        v.extend_from_slice(&MACS[usize::from(d)]);
        v.extend_from_slice(&MACS[usize::from(s)]);
        v.extend_from_slice(&et.to_be_bytes());
        if et == 0x8100 || et == 0x88a8 {
            // A tag with VID 5, then IPv4.
            v.extend_from_slice(&[0x00, 0x05, 0x08, 0x00]);
        }
        let body = udp_frame([10, 0, 0, 2], 53, 64);
        v.extend_from_slice(&body[14..]);
        // Cut in the header (5, 12, 13, 14, 16 bytes) now and then.
        match cut {
            0 => v.truncate(5),
            1 => v.truncate(12),
            2 => v.truncate(13),
            3 => v.truncate(14),
            4 => v.truncate(16),
            _ => {}
        }
        v
    }

    use super::batch_props::{counters, Counts};

    /// What a run gives: per packet the result and the events, then the
    /// frames and the counters.
    type Outcome = (Vec<(bool, Vec<Ev>)>, Vec<Vec<u8>>, Vec<Counts>);

    /// Per packet the result and the events, then the frames after.
    pub(super) type Run = (Vec<(bool, Vec<Ev>)>, Vec<Vec<u8>>);

    /// `frames` through `p` packet by packet (`process`), at time 7.
    pub(super) fn run_by_packet(p: &mut Pipeline, frames: &[Vec<u8>], in_port: u32) -> Run {
        let mut per = Vec::new();
        let mut bufs = Vec::new();
        for f in frames {
            let mut rec = Rec::default();
            let mut buf = PacketBuf::from_slice(f);
            let ok = p.process(&mut buf, in_port, 7, &mut rec).is_ok();
            per.push((ok, rec.0));
            bufs.push(buf.data().to_vec());
        }
        (per, bufs)
    }

    /// `frames` through `p` as one batch (`process_batch`), at time 7,
    /// warmed or as a small pipeline's.
    pub(super) fn run_by_batch(
        p: &mut Pipeline,
        frames: &[Vec<u8>],
        in_port: u32,
        warm: bool,
    ) -> Run {
        // Test builds warm every pipeline; this makes the next batches
        // take the path of small pipelines instead.
        if !warm {
            p.warm_check = (u16::MAX, false);
        }
        let mut bufs: Vec<PacketBuf> = frames.iter().map(|f| PacketBuf::from_slice(f)).collect();
        let mut rec = Rec::default();
        let mut per = Vec::new();
        p.process_batch(&mut bufs, in_port, 7, &mut rec, |_, out, i, r| {
            assert_eq!(i, per.len());
            per.push((r.is_ok(), std::mem::take(&mut out.0)));
        });
        (per, bufs.iter().map(|b| b.data().to_vec()).collect())
    }

    fn by_packet(mut p: Pipeline, frames: &[Vec<u8>], in_port: u32) -> Outcome {
        let (per, bufs) = run_by_packet(&mut p, frames, in_port);
        (per, bufs, counters(&p))
    }

    fn by_batch(mut p: Pipeline, frames: &[Vec<u8>], in_port: u32, warm: bool) -> Outcome {
        let (per, bufs) = run_by_batch(&mut p, frames, in_port, warm);
        (per, bufs, counters(&p))
    }

    proptest! {
        #[test]
        fn l2_batch_equals_process(
            shape in 0u8..6,
            rules in proptest::collection::vec(
                (0u16..3, 0u8..4, 0u8..8, 0u8..11, proptest::bool::weighted(0.1)),
                0..12,
            ),
            catch_all in proptest::option::of((0u16..3, 0u8..11, any::<bool>())),
            frames in proptest::collection::vec(any_frame(), 1..70),
            in_port in 1u32..5,
            down in 0u32..6,
        ) {
            let mut p = pipeline(4);
            // Port `down` (if a port) cannot forward: down or NO_FWD.
            if let Some(port) = p.ports.get_mut(down) {
                port.config |= if down.is_multiple_of(2) { config::PORT_DOWN } else { config::NO_FWD };
            }
            p.flow_mod(&fm(cmd::ADD, 1, 0, vec![], vec![apply(vec![out(3)])]), 0).unwrap();
            // A match-everything entry, installed before or after the
            // others (on a tie of priorities the earlier one wins).
            let add_catch_all = |p: &mut Pipeline, first: bool| {
                if let Some((prio, kind, before)) = catch_all {
                    if before == first {
                        let mut f = fm(cmd::ADD, 0, prio, vec![], program(kind, 1));
                        f.cookie = 100;
                        let _ = p.flow_mod(&f, 0);
                    }
                }
            };
            add_catch_all(&mut p, true);
            let specs: &[RuleSpec] = &rules;
            for (i, &(prio, mac, v, kind, other)) in specs.iter().enumerate() {
                let s = if other { (shape + 1) % 6 } else { shape };
                let mut f = fm(cmd::ADD, 0, prio, shape_match(s, mac, v), program(kind, v));
                f.cookie = i as u64;
                let _ = p.flow_mod(&f, 0);
            }
            add_catch_all(&mut p, false);
            let frames: Vec<Vec<u8>> = frames.iter().map(frame).collect();
            let want = by_packet(p.clone(), &frames, in_port);
            prop_assert_eq!(&by_batch(p.clone(), &frames, in_port, false), &want);
            prop_assert_eq!(&by_batch(p, &frames, in_port, true), &want);
        }
    }

    /// The per-table way does serve an L2 table (so the property above
    /// tests it): table 0 answers from frames, and an untagged IPv4 UDP
    /// frame is read from its bytes (a tagged one too; a truncated one is
    /// left to the parse), then forwarded as `process` does.
    #[test]
    fn per_table_serves_an_l2_table() {
        let mut p = pipeline(2);
        for (i, m) in MACS.iter().enumerate() {
            let port = if i % 2 == 0 { 1 } else { 2 };
            p.flow_mod(
                &fm(
                    cmd::ADD,
                    0,
                    5,
                    vec![OxmField::EthDst(*m, None)],
                    vec![apply(vec![out(port)])],
                ),
                0,
            )
            .unwrap();
        }
        assert!(p.per_table_serves());
        let read = |f: &[u8]| {
            let mut fr = crate::classifier::fields::FrameFields::EMPTY;
            crate::classifier::fields::read_frame(f, 1, packet::Layer::L4, &mut fr).is_some()
        };
        let f = frame(&(1, 0, 0, 11));
        assert!(read(&f));
        assert!(read(&frame(&(1, 0, 3, 11))));
        assert!(!read(&frame(&(1, 0, 0, 2))));
        let (per, _, _) = by_batch(p, &[f], 1, false);
        assert_eq!(per.len(), 1);
        assert!(matches!(&per[0].1[..], [Ev::Port(2, _, None)]));
    }

    /// `read_frame` reads the values of the layers down to the depth it
    /// is given and leaves the others as they were, presence bits whole.
    #[test]
    fn read_frame_reads_values_down_to_the_depth() {
        use crate::classifier::exact::at;
        use crate::classifier::fields::{read_frame, FrameFields, FRAME_FIELDS};
        use packet::{Field, Layer};
        let f = udp_frame([10, 0, 0, 9], 53, 64);
        let stale = 0xdead_u64;
        for depth in [Layer::None, Layer::L2, Layer::L3, Layer::L4] {
            let mut fr = FrameFields::EMPTY;
            fr.common = [stale; crate::classifier::exact::COMMON];
            assert!(read_frame(&f, 3, depth, &mut fr).is_some());
            assert_eq!(fr.have.intersection(FRAME_FIELDS), fr.have);
            assert!(fr.have.contains(Field::Ipv4Dst) && fr.have.contains(Field::UdpDst));
            assert_eq!(fr.common[at::IN_PORT], 3);
            assert_eq!(fr.common[at::ETH_TYPE], 0x0800);
            let mac = if depth >= Layer::L2 { 2 } else { stale };
            assert_eq!(fr.common[at::ETH_DST], mac, "{depth:?}");
            let (dst, port) = if depth >= Layer::L3 {
                (0x0a00_0009, 53)
            } else {
                (stale, stale)
            };
            assert_eq!(fr.common[at::IPV4_DST], dst, "{depth:?}");
            assert_eq!(fr.common[at::TP_DST], port, "{depth:?}");
        }
    }

    /// The per-table way reads a frame's values down to the pipeline's
    /// parse depth, batch by batch: a pipeline that needs none (a port
    /// patch), then one whose new tables match MACs and IPv4 addresses
    /// (added after the first batches, so the frames read before hold no
    /// such values), then one whose table 1 also matches a field no
    /// `FrameFields` holds (the key parsed from the frame there): every
    /// batch gives what `process` gives, on the same pipeline throughout.
    #[test]
    fn read_depth_follows_the_tables() {
        let frames: Vec<Vec<u8>> = (0u8..40)
            .map(|i| {
                let mut f = udp_frame([10, 0, 0, i % 5], 53, 64);
                f[5] = i % 3;
                f
            })
            .collect();
        let add =
            |p: &mut Pipeline, table: u8, prio: u16, m: Vec<OxmField>, i: Vec<Instruction>| {
                p.flow_mod(&fm(cmd::ADD, table, prio, m, i), 0).unwrap();
            };
        let steps: [&dyn Fn(&mut Pipeline); 3] = [
            &|p| {
                add(
                    p,
                    0,
                    1,
                    vec![OxmField::InPort(1)],
                    vec![apply(vec![out(2)])],
                )
            },
            &|p| {
                let m = vec![OxmField::EthDst([0, 0, 0, 0, 0, 1], None)];
                add(p, 0, 5, m, vec![Instruction::GotoTable(1)]);
                for d in 0u8..3 {
                    let m = vec![
                        OxmField::EthType(0x0800),
                        OxmField::Ipv4Dst(std::net::Ipv4Addr::new(10, 0, 0, d), None),
                    ];
                    add(p, 1, 5, m, vec![apply(vec![out(u32::from(d) + 1)])]);
                }
            },
            &|p| {
                let m = vec![OxmField::EthType(0x0800), OxmField::IpDscp(0)];
                add(p, 1, 9, m, vec![apply(vec![out(4)])]);
            },
        ];
        for warm in [false, true] {
            let mut per_table = pipeline(4);
            let mut general = pipeline(4);
            for (i, step) in steps.iter().enumerate() {
                step(&mut per_table);
                step(&mut general);
                assert!(per_table.per_table_serves(), "step {i}");
                for _ in 0..2 {
                    let got = run_by_batch(&mut per_table, &frames, 1, warm);
                    let want = run_by_packet(&mut general, &frames, 1);
                    assert_eq!(got, want, "step {i}, warm {warm}");
                    assert_eq!(counters(&per_table), counters(&general), "step {i}");
                }
            }
        }
    }
}

/// Group buckets as the packet path runs them (compiled, fused, with the
/// fast paths of `execute_group` and the fused ops) against the same
/// buckets run as plain action lists, one op per action in action-set
/// order through the general op loop: same events, same frames, same
/// flow, group and bucket counters.
mod group_exec_props {
    use super::*;
    use crate::action_set::ActionSet;
    use crate::program::{compile_actions, Op};
    use proptest::prelude::*;

    const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
    const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

    /// One bucket's actions, by kind (`g`: a group it may chain to; `k`:
    /// an output port).
    pub(super) fn bucket_actions(kind: u8, k: u32, g: Option<u32>) -> Vec<Action> {
        let set = |f: OxmField| Action::SetField(f);
        match kind {
            // A router's next hop (fused into a route).
            0 => vec![
                Action::DecNwTtl,
                set(OxmField::EthSrc(MAC_A, None)),
                set(OxmField::EthDst(MAC_B, None)),
                out(k),
            ],
            // A load balancer's backend.
            1 => vec![
                set(OxmField::Ipv4Dst(Ipv4Addr::new(10, 9, 0, k as u8), None)),
                set(OxmField::EthDst(MAC_B, None)),
                out(k),
            ],
            // A NAT.
            2 => vec![
                set(OxmField::Ipv4Src(Ipv4Addr::new(198, 18, 0, k as u8), None)),
                set(OxmField::UdpSrc(1000 + k as u16)),
                out(k),
            ],
            3 => vec![out(port_no::CONTROLLER)],
            4 => match g {
                Some(g) => vec![Action::DecNwTtl, Action::Group(g)],
                None => vec![out(port_no::IN_PORT)],
            },
            5 => vec![Action::SetQueue(0), out(k)],
            6 => vec![Action::DecNwTtl, out(port_no::IN_PORT)],
            // A route to a reserved port (not fused).
            _ => vec![
                Action::DecNwTtl,
                set(OxmField::EthDst(MAC_A, None)),
                set(OxmField::EthSrc(MAC_B, None)),
                out(port_no::CONTROLLER),
            ],
        }
    }

    /// (group type, buckets as (kind, port, weight))
    pub(super) type GroupSpec = (u8, Vec<(u8, u32, u16)>);

    pub(super) fn any_group() -> impl Strategy<Value = GroupSpec> {
        (
            0u8..4,
            proptest::collection::vec((0u8..8, 1u32..4, 1u16..3), 1..4),
        )
    }

    pub(super) fn group_mod_of(id: u32, spec: &GroupSpec) -> GroupMod {
        // Groups chain only to groups made before them (no loops).
        let chain = (id > 1).then(|| id - 1);
        group_mod_with(id, spec, 3, |kind, k| bucket_actions(kind, k, chain))
    }

    /// The group-mod adding group `id` of `spec` (at most `n` buckets; one
    /// for INDIRECT), each bucket's actions by `actions(kind, port)`.
    pub(super) fn group_mod_with(
        id: u32,
        (ty, buckets): &GroupSpec,
        n: usize,
        actions: impl Fn(u8, u32) -> Vec<Action>,
    ) -> GroupMod {
        let ty = [
            group_type::INDIRECT,
            group_type::ALL,
            group_type::SELECT,
            group_type::FF,
        ][usize::from(*ty)];
        let n = if ty == group_type::INDIRECT { 1 } else { n };
        let buckets = buckets
            .iter()
            .take(n)
            .map(|&(kind, k, w)| Bucket {
                weight: if ty == group_type::SELECT { w } else { 0 },
                watch_port: if ty == group_type::FF {
                    k
                } else {
                    port_no::ANY
                },
                ..bucket(actions(kind, k))
            })
            .collect();
        gmod(gcmd::ADD, ty, id, buckets)
    }

    /// Table 0's one entry, by kind, for group `g`: the group as the tail
    /// of apply-actions, followed by an output, in the action set, or
    /// with a table after it.
    fn entry(kind: u8, g: u32) -> Vec<Instruction> {
        match kind {
            0 => vec![apply(vec![Action::Group(g)])],
            1 => vec![apply(vec![Action::Group(g), out(2)])],
            2 => vec![Instruction::WriteActions(vec![Action::Group(g)])],
            _ => vec![apply(vec![Action::Group(g)]), Instruction::GotoTable(1)],
        }
    }

    /// Every group's buckets as one op per action, in action-set order,
    /// nothing fused.
    fn unfuse_groups(p: &mut Pipeline) {
        let ids: Vec<u32> = p.groups.iter().map(|g| g.id).collect();
        for id in ids {
            let Some(slot) = p.groups.slot(id) else {
                continue;
            };
            let Some(g) = p.groups.at_mut(slot) else {
                continue;
            };
            let plain = g
                .buckets
                .iter()
                .map(|b| {
                    let mut set = ActionSet::new();
                    set.write(&compile_actions(&b.actions, &Default::default()));
                    let mut ops: Vec<Op> = Vec::new();
                    set.for_each(|op| {
                        ops.push(*op);
                        true
                    });
                    ops.into_boxed_slice()
                })
                .collect();
            g.ops = Some(plain);
        }
    }

    /// A group's id, (packets, bytes), and each bucket's.
    type GroupCounts = (u32, u64, u64, Vec<(u64, u64)>);

    /// Every group's counts.
    fn group_counts(p: &Pipeline) -> Vec<GroupCounts> {
        p.groups
            .iter()
            .map(|g| {
                (
                    g.id,
                    g.counters.packet_count,
                    g.counters.byte_count,
                    g.bucket_counters
                        .iter()
                        .map(|c| (c.packet_count, c.byte_count))
                        .collect(),
                )
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        #[test]
        fn fused_buckets_equal_plain_buckets(
            groups in proptest::collection::vec(any_group(), 1..4),
            entry_kind in 0u8..4,
            frames in proptest::collection::vec((1u32..4, 0u8..4, 0u16..64), 1..12),
            down in proptest::option::of(1u32..4),
        ) {
            let mut p = pipeline(3);
            for (i, g) in groups.iter().enumerate() {
                p.group_mod(&group_mod_of(i as u32 + 1, g), 0).expect("valid group");
            }
            let top = groups.len() as u32;
            p.flow_mod(&fm(cmd::ADD, 0, 1, vec![], entry(entry_kind, top)), 0)
                .expect("valid flow");
            p.flow_mod(&fm(cmd::ADD, 1, 1, vec![], vec![apply(vec![out(3)])]), 0)
                .expect("valid flow");
            if let Some(d) = down.and_then(|d| p.ports.get_mut(d)) {
                d.state = state::LINK_DOWN;
            }
            let mut plain = p.clone();
            unfuse_groups(&mut plain);
            for &(in_port, ttl, dport) in &frames {
                let ttl = [0u8, 1, 2, 64][usize::from(ttl)];
                let f = udp_frame([10, 0, 0, 9], dport, ttl);
                let (mut a, mut b) = (PacketBuf::from_slice(&f), PacketBuf::from_slice(&f));
                let (mut ra, mut rb) = (Rec::default(), Rec::default());
                let x = p.process(&mut a, in_port, 5, &mut ra).is_ok();
                let y = plain.process(&mut b, in_port, 5, &mut rb).is_ok();
                prop_assert_eq!(x, y);
                prop_assert_eq!(&ra.0, &rb.0);
                prop_assert_eq!(a.data(), b.data());
            }
            prop_assert_eq!(group_counts(&p), group_counts(&plain));
            let flows = |p: &Pipeline| -> Vec<(u64, u64)> {
                p.tables()
                    .iter()
                    .flat_map(|t| t.entries().map(|e| (e.packet_count(), e.byte_count())))
                    .collect()
            };
            prop_assert_eq!(flows(&p), flows(&plain));
        }
    }
}

/// Routers' pipelines through the batch path (the per-table way) against
/// `process`: with and without a dispatch table, routes of every kind of
/// program, frames the per-table way must leave to the parse.
mod route_props {
    use super::*;
    use group_exec_props::{group_mod_of, GroupSpec};
    use proptest::prelude::*;

    /// Destination addresses the frames use (inside and outside the
    /// prefixes below).
    const DSTS: [[u8; 4]; 6] = [
        [10, 0, 0, 1],
        [10, 0, 1, 7],
        [10, 1, 2, 3],
        [192, 168, 1, 9],
        [10, 0, 0, 255],
        [172, 16, 0, 1],
    ];

    /// (prefix base, length, priority, program kind, group/port index)
    type RouteSpec = (u8, u8, u16, u8, u8);

    /// A route's match: `eth_type=0x0800` and a prefix of one of the
    /// destinations (length 0: no `ipv4_dst`).
    fn route_match(base: u8, len: u8) -> Vec<OxmField> {
        prefix_match(DSTS[usize::from(base) % DSTS.len()], len)
    }

    /// `eth_type=0x0800` and the prefix of `dst` of length `len` modulo
    /// 33 (length 0: no `ipv4_dst`).
    pub(super) fn prefix_match(dst: [u8; 4], len: u8) -> Vec<OxmField> {
        let a = u32::from_be_bytes(dst);
        let len = u32::from(len % 33);
        let mut m = vec![OxmField::EthType(0x0800)];
        if len > 0 {
            let mask = u32::MAX << (32 - len);
            m.push(OxmField::Ipv4Dst(
                Ipv4Addr::from(a & mask),
                (len < 32).then(|| Ipv4Addr::from(mask)),
            ));
        }
        m
    }

    /// A route's program: kinds 0-4 a group (ids 1..=4), 5 the route's
    /// actions in the entry, the others programs of other kinds.
    fn route_program(kind: u8, v: u8) -> Vec<Instruction> {
        let port = u32::from(v % 4) + 1;
        let next_hop = vec![
            Action::DecNwTtl,
            Action::SetField(OxmField::EthSrc([2, 0, 0, 0, 0, 0xa], None)),
            Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 0xb], None)),
            out(port),
        ];
        match kind {
            0..=4 => vec![apply(vec![Action::Group(u32::from(v % 4) + 1)])],
            5 => vec![apply(next_hop)],
            6 => vec![apply(vec![out(port)])],
            7 => vec![Instruction::WriteActions(next_hop)],
            8 => vec![
                apply(vec![Action::Group(u32::from(v % 4) + 1)]),
                Instruction::GotoTable(3),
            ],
            _ => vec![apply(vec![out(port_no::CONTROLLER)])],
        }
    }

    /// (destination index, ttl, vlan tag, header mutation, cut)
    type FrameSpec = (u8, u8, bool, u8, u8);

    fn frame(&(d, ttl, vlan, mutation, cut): &FrameSpec) -> Vec<u8> {
        let ttl = [0, 1, 2, 64][usize::from(ttl % 4)];
        let mut f = udp_frame(DSTS[usize::from(d) % DSTS.len()], 53, ttl);
        match mutation {
            // Version 6 in an IPv4 ethertype.
            0 => f[14] = 0x65,
            // Header lengths 16, 24 (options past the frame's UDP) and 60.
            1 => f[14] = 0x44,
            2 => f[14] = 0x46,
            3 => f[14] = 0x4f,
            // Total lengths: below the header, shorter than the frame,
            // longer than it.
            4 => f[16..18].copy_from_slice(&12u16.to_be_bytes()),
            5 => f[16..18].copy_from_slice(&20u16.to_be_bytes()),
            6 => f[16..18].copy_from_slice(&29u16.to_be_bytes()),
            // Fragments: more-fragments, an offset, don't-fragment.
            7 => f[20] = 0x20,
            8 => f[21] = 0x01,
            9 => f[20] = 0x40,
            // Another ethertype.
            10 => f[12..14].copy_from_slice(&0x86ddu16.to_be_bytes()),
            // Padding after the datagram.
            11 => f.extend_from_slice(&[0; 18]),
            _ => {}
        }
        if vlan {
            f.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        }
        match cut {
            0 => f.truncate(13),
            1 => f.truncate(20),
            2 => f.truncate(33),
            3 => f.truncate(34),
            4 => f.truncate(38),
            _ => {}
        }
        f
    }

    /// Every group's counters and its buckets'.
    type GroupCounts = Vec<(u32, (u64, u64), Vec<(u64, u64)>)>;

    /// What a run gives: per packet the result and the events, then the
    /// frames, the tables' counters with each entry's last hit, and the
    /// groups' counters.
    type Outcome = (
        Vec<(bool, Vec<Ev>)>,
        Vec<Vec<u8>>,
        Vec<super::batch_props::Counts>,
        Vec<Vec<u64>>,
        GroupCounts,
    );

    fn outcome(p: &Pipeline, per: Vec<(bool, Vec<Ev>)>, bufs: Vec<Vec<u8>>) -> Outcome {
        let hits = p
            .tables()
            .iter()
            .map(|t| t.entries().map(|e| e.last_hit()).collect())
            .collect();
        let groups = p
            .groups
            .iter()
            .map(|g| {
                let c = |c: &crate::group::Counters| (c.packet_count, c.byte_count);
                (
                    g.id,
                    c(&g.counters),
                    g.bucket_counters.iter().map(c).collect(),
                )
            })
            .collect();
        (per, bufs, super::batch_props::counters(p), hits, groups)
    }

    fn by_packet(mut p: Pipeline, frames: &[Vec<u8>], in_port: u32) -> Outcome {
        let (per, bufs) = l2_props::run_by_packet(&mut p, frames, in_port);
        outcome(&p, per, bufs)
    }

    fn by_batch(mut p: Pipeline, frames: &[Vec<u8>], in_port: u32, warm: bool) -> Outcome {
        let (per, bufs) = l2_props::run_by_batch(&mut p, frames, in_port, warm);
        outcome(&p, per, bufs)
    }

    /// `frames` through `p` as one batch, warmed and not (the per-table
    /// way when table 0 can answer from frames, `crate::per_table`), give
    /// what they give packet by packet (events, frames, flow and group
    /// counters).
    pub(super) fn batches_equal_process(
        p: Pipeline,
        frames: &[Vec<u8>],
        in_port: u32,
    ) -> Result<(), TestCaseError> {
        let want = by_packet(p.clone(), frames, in_port);
        prop_assert_eq!(&by_batch(p.clone(), frames, in_port, false), &want);
        prop_assert_eq!(&by_batch(p, frames, in_port, true), &want);
        Ok(())
    }

    /// A pipeline of four ports, port `down` (if any) down (even) or
    /// unable to forward (odd), with groups 1, 2, ... of `groups` made by
    /// `group_mod`.
    pub(super) fn with_groups(
        groups: &[GroupSpec],
        down: u32,
        group_mod: impl Fn(u32, &GroupSpec) -> GroupMod,
    ) -> Pipeline {
        let mut p = pipeline(4);
        if let Some(port) = p.ports.get_mut(down) {
            port.config |= if down.is_multiple_of(2) {
                config::PORT_DOWN
            } else {
                config::NO_FWD
            };
        }
        for (i, g) in groups.iter().enumerate() {
            let _ = p.group_mod(&group_mod(i as u32 + 1, g), 0);
        }
        p
    }

    /// A router: groups 1..=4 from `groups`, table 0 dispatching by port
    /// to routing table 1 (`dispatch`; else table 0 routes), the routes,
    /// and now and then other shapes: a table-0 rule on more than the
    /// port (`wide`), a route table rule outside the prefix form
    /// (`odd`), a rule needing L4 (`l4`).
    #[allow(clippy::too_many_arguments)]
    fn router(
        groups: &[GroupSpec],
        dispatch: Option<u8>,
        routes: &[RouteSpec],
        miss: Option<(u16, u8)>,
        wide: bool,
        odd: bool,
        l4: bool,
        down: u32,
        frag_drop: bool,
    ) -> Pipeline {
        let mut p = with_groups(groups, down, group_mod_of);
        p.config.frag_drop = frag_drop;
        let rt = match dispatch {
            None => 0,
            Some(kind) => {
                // Ports 1-2 go to the routing table; port 3 by kind:
                // also, or with an action on the way, or not at all.
                for port in 1..=2 {
                    let f = fm(cmd::ADD, 0, 10, vec![OxmField::InPort(port)], vec![goto(1)]);
                    p.flow_mod(&f, 0).unwrap();
                }
                let third = match kind % 3 {
                    0 => vec![goto(1)],
                    1 => vec![apply(vec![Action::DecNwTtl]), goto(1)],
                    _ => vec![apply(vec![out(2)])],
                };
                p.flow_mod(&fm(cmd::ADD, 0, 10, vec![OxmField::InPort(3)], third), 0)
                    .unwrap();
                if wide {
                    let m = vec![OxmField::EthType(0x0800)];
                    p.flow_mod(&fm(cmd::ADD, 0, 20, m, vec![goto(1)]), 0)
                        .unwrap();
                }
                1
            }
        };
        for (i, &(base, len, prio, kind, v)) in routes.iter().enumerate() {
            let mut f = fm(
                cmd::ADD,
                rt,
                prio,
                route_match(base, len),
                route_program(kind, v),
            );
            f.cookie = i as u64;
            let _ = p.flow_mod(&f, 0);
        }
        if let Some((prio, kind)) = miss {
            let _ = p.flow_mod(&fm(cmd::ADD, rt, prio, vec![], route_program(kind, 1)), 0);
        }
        if odd {
            let m = vec![OxmField::EthType(0x0800), OxmField::IpProto(17)];
            let _ = p.flow_mod(&fm(cmd::ADD, rt, 5, m, route_program(5, 2)), 0);
        }
        if l4 {
            let m = vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(17),
                OxmField::UdpDst(53),
            ];
            p.flow_mod(&fm(cmd::ADD, 3, 1, m, vec![apply(vec![out(4)])]), 0)
                .unwrap();
        }
        p
    }

    fn goto(t: u8) -> Instruction {
        Instruction::GotoTable(t)
    }

    /// Groups of every type, mostly of one or two buckets, mostly a
    /// router's next hop (`group_exec_props::bucket_actions` kind 0).
    pub(super) fn any_group() -> impl Strategy<Value = GroupSpec> {
        let kind = prop_oneof![3 => Just(0u8), 1 => 0u8..8];
        (
            0u8..4,
            proptest::collection::vec((kind, 1u32..5, 1u16..3), 1..3),
        )
    }

    pub(super) fn any_frame() -> impl Strategy<Value = FrameSpec> {
        (
            0u8..6,
            0u8..4,
            proptest::bool::weighted(0.1),
            prop_oneof![4 => Just(255u8), 1 => 0u8..12],
            prop_oneof![6 => Just(255u8), 1 => 0u8..5],
        )
    }

    proptest! {
        #[test]
        fn router_batch_equals_process(
            groups in proptest::collection::vec(any_group(), 4),
            dispatch in proptest::option::weighted(0.7, 0u8..3),
            routes in proptest::collection::vec(
                (0u8..6, prop_oneof![0u8..=32, Just(24u8), Just(16u8)], 1u16..40, 0u8..10, any::<u8>()),
                0..40,
            ),
            miss in proptest::option::of((prop_oneof![Just(0u16), 1u16..40], 0u8..10)),
            (wide, odd, l4, frag_drop) in (
                proptest::bool::weighted(0.1),
                proptest::bool::weighted(0.1),
                proptest::bool::weighted(0.1),
                proptest::bool::weighted(0.3),
            ),
            frames in proptest::collection::vec(any_frame(), 1..70),
            in_port in 1u32..5,
            down in 0u32..8,
        ) {
            let p = router(&groups, dispatch, &routes, miss, wide, odd, l4, down, frag_drop);
            let frames: Vec<Vec<u8>> = frames.iter().map(frame).collect();
            batches_equal_process(p, &frames, in_port)?;
        }
    }

    /// The per-table way does serve a router's tables (so the property
    /// above tests it), with and without a dispatch table.
    #[test]
    fn per_table_serves_a_router() {
        let indirect = (0, vec![(0, 2, 1)]);
        let groups = vec![indirect; 4];
        let routes: Vec<RouteSpec> = (0..12).map(|i| (i % 6, 16 + i, 10, 0, i)).collect();
        for dispatch in [None, Some(0)] {
            let p = router(
                &groups, dispatch, &routes, None, false, false, false, 0, false,
            );
            assert!(p.per_table_serves(), "{dispatch:?}");
        }
    }

    /// A next-hop group runs as its one op (`Group::one_op`) while it is
    /// one: modified to buckets of other kinds (ALL of two next hops, a
    /// bucket of several ops, one op the frame path cannot do, SELECT,
    /// FAST_FAILOVER with its first watched port down) it runs as those,
    /// and made a next hop
    /// again (to a port that is down too) as one op again; the batch
    /// path agrees with `process` throughout, bucket counters included.
    #[test]
    fn a_modified_next_hop_group_runs_as_its_new_buckets() {
        let hop: GroupSpec = (0, vec![(0, 2, 1)]);
        // Routes /32 to every destination, to groups 1-4 (1: DSTS[0], [4]).
        let routes: Vec<RouteSpec> = (0..6).map(|i| (i, 32, 32, 0, i)).collect();
        // Port 4 down.
        let mut p = router(
            &vec![hop; 4],
            Some(0),
            &routes,
            None,
            false,
            false,
            false,
            4,
            false,
        );
        let frames: Vec<Vec<u8>> = (0..24)
            .map(|i| frame(&(i % 6, 3, false, 255, 255)))
            .collect();
        // (group 1 as, whether it is one op)
        let mods: [(GroupSpec, bool); 9] = [
            ((0, vec![(0, 2, 1)]), true),
            ((1, vec![(0, 2, 1), (0, 3, 1)]), false),
            ((1, vec![(0, 3, 1)]), true),
            // A next hop to CONTROLLER (not fused: four ops).
            ((0, vec![(7, 2, 1)]), false),
            // One op the frame path leaves to the key (packet-in).
            ((0, vec![(3, 2, 1)]), true),
            ((0, vec![(5, 3, 1)]), false),
            ((2, vec![(0, 2, 1), (1, 3, 2)]), false),
            ((3, vec![(0, 4, 1), (0, 2, 1)]), false),
            ((0, vec![(0, 4, 1)]), true),
        ];
        for (spec, one) in mods {
            let mut gm = group_mod_of(1, &spec);
            gm.command = gcmd::MODIFY;
            p.group_mod(&gm, 0).expect("a valid modify");
            let g1 = p.groups.iter().find(|g| g.id == 1).expect("group 1");
            assert_eq!(g1.one_op.is_some(), one, "{spec:?}");
            batches_equal_process(p.clone(), &frames, 1).expect("batch as process");
            let (.., groups) = by_batch(p.clone(), &frames, 1, false);
            let (_, (packets, _), buckets) = &groups[0];
            assert_eq!(*packets, 8, "{spec:?}");
            assert!(buckets.iter().any(|b| b.0 > 0), "{spec:?}");
        }
    }
}

/// Access gateways (a VLAN dispatch with pop-VLAN, per-customer NAT
/// tables, a routing table) and exact-match chains that end in an
/// output, through the batch path against `process`: programs of every
/// kind, ties with match-everything entries, shapes a frame cannot
/// answer, and frames the per-table way must leave to the parse (other
/// tags, protocols, broken headers, fragments, TTL 1).
mod chain_props {
    use super::*;
    use group_exec_props::{group_mod_of, GroupSpec};
    use proptest::prelude::*;

    const VIDS: [u16; 3] = [100, 101, 102];
    const SRCS: [[u8; 4]; 3] = [[10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 3]];
    const DSTS: [[u8; 4]; 3] = [[192, 0, 2, 1], [198, 51, 100, 7], [203, 0, 113, 9]];
    const ROUTES: u8 = 9;

    /// Table 0's program for a VLAN (by kind).
    fn dispatch_program(kind: u8, v: u8) -> Vec<Instruction> {
        let next = 1 + v % 3;
        match kind {
            0..=3 => vec![apply(vec![Action::PopVlan]), goto(next)],
            4 => vec![goto(next)],
            5 => vec![apply(vec![out(u32::from(v % 4) + 1)])],
            6 => vec![apply(vec![Action::PopVlan, Action::DecNwTtl]), goto(next)],
            7 => vec![apply(nat(v)), goto(next)],
            8 => vec![Instruction::WriteActions(vec![out(2)]), goto(next)],
            _ => vec![apply(vec![out(port_no::CONTROLLER)])],
        }
    }

    /// A NAT's two set-fields (by `v`: source or destination, UDP or TCP
    /// port).
    fn nat(v: u8) -> Vec<Action> {
        let a = Ipv4Addr::new(198, 18, 0, v);
        let addr = match v % 4 {
            3 => OxmField::Ipv4Dst(Ipv4Addr::from(DSTS[usize::from(v) % 3]), None),
            _ => OxmField::Ipv4Src(a, None),
        };
        let port = match v % 3 {
            0 => OxmField::UdpSrc(1024 + u16::from(v)),
            1 => OxmField::TcpSrc(2048 + u16::from(v)),
            _ => OxmField::UdpDst(53),
        };
        vec![Action::SetField(addr), Action::SetField(port)]
    }

    /// A NAT table entry's program (by kind).
    fn nat_program(kind: u8, v: u8) -> Vec<Instruction> {
        match kind {
            0..=3 => vec![apply(nat(v)), goto(10)],
            4 => vec![goto(10)],
            5 => vec![apply(vec![out(u32::from(v % 4) + 1)])],
            6 => vec![apply(vec![Action::PopVlan]), goto(10)],
            7 => vec![
                apply(vec![Action::SetField(OxmField::Ipv4Src(
                    Ipv4Addr::new(198, 18, 1, v),
                    None,
                ))]),
                goto(10),
            ],
            8 => vec![apply(nat(v)), goto(4)],
            _ => vec![apply(vec![Action::DecNwTtl, out(2)])],
        }
    }

    /// A route's program: kinds 0-5 a next-hop group (ids 1..=4), 6 the
    /// next hop in the entry, the others programs of other kinds.
    fn route_program(kind: u8, v: u8) -> Vec<Instruction> {
        let port = u32::from(v % 4) + 1;
        match kind {
            0..=5 => vec![apply(vec![Action::Group(u32::from(v % 4) + 1)])],
            6 => vec![apply(vec![
                Action::DecNwTtl,
                Action::SetField(OxmField::EthSrc([2, 0, 0, 0, 0, 0xa], None)),
                Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 0xb], None)),
                out(port),
            ])],
            7 => vec![apply(vec![out(port)])],
            _ => vec![apply(vec![out(port_no::CONTROLLER)])],
        }
    }

    fn goto(t: u8) -> Instruction {
        Instruction::GotoTable(t)
    }

    /// (vid index, priority, program kind, v)
    type DispatchSpec = (u8, u16, u8, u8);
    /// (table 1-3, proto (0 UDP, 1 TCP, 2 none), source index, priority,
    /// program kind, v)
    type NatSpec = (u8, u8, u8, u16, u8, u8);
    /// (destination index, prefix length, priority, program kind, v)
    type RouteSpec = (u8, u8, u16, u8, u8);

    /// A gateway: with `base`, a whole one (every VLAN of `VIDS` on
    /// ports 1 and 2 popped and sent to NAT table 1-3, each with a NAT
    /// entry per source address and protocol, and a routing table of
    /// prefixes of several lengths to the groups), then the entries of
    /// the specs on top, and now and then other shapes and answers: match-everything entries (of `misses`: table,
    /// priority, kind) tying with or beating exact ones, a table-0 rule
    /// of another shape (`wide`), an `in_phy_port` shape in NAT table 3
    /// (`phy`), a port that cannot forward (`down`).
    #[allow(clippy::too_many_arguments)]
    fn gateway(
        base: bool,
        groups: &[GroupSpec],
        dispatch: &[DispatchSpec],
        nats: &[NatSpec],
        routes: &[RouteSpec],
        misses: &[(u8, u16, u8)],
        wide: bool,
        phy: bool,
        down: u32,
    ) -> Pipeline {
        let mut p = pipeline(4);
        if let Some(port) = p.ports.get_mut(down) {
            port.config |= config::NO_FWD;
        }
        for (i, g) in groups.iter().enumerate() {
            let _ = p.group_mod(&group_mod_of(i as u32 + 1, g), 0);
        }
        let mut add = |t: u8, prio: u16, m: Vec<OxmField>, insts: Vec<Instruction>, c: u64| {
            let mut f = fm(cmd::ADD, t, prio, m, insts);
            f.cookie = c;
            let _ = p.flow_mod(&f, 0);
        };
        if base {
            for (j, &vid) in VIDS.iter().enumerate() {
                for port in 1..=2 {
                    let m = vec![
                        OxmField::InPort(port),
                        OxmField::VlanVid(packet::VID_PRESENT | vid, None),
                    ];
                    add(0, 10, m, dispatch_program(0, j as u8), 500);
                }
            }
            for t in 1..=3u8 {
                for (k, src) in SRCS.iter().enumerate() {
                    for (proto, v) in [(17u8, 3 * k as u8 + 3), (6, 3 * k as u8 + 1)] {
                        let mut m = vec![
                            OxmField::EthType(0x0800),
                            OxmField::IpProto(proto),
                            OxmField::Ipv4Src(Ipv4Addr::from(*src), None),
                        ];
                        if t == 3 {
                            // Table 3 also matches on the VLAN, which the
                            // pop took away (a packet still tagged would
                            // find the second entry), and on the source's
                            // last byte only (the shape must pack in 64
                            // bits).
                            m[2] = OxmField::Ipv4Src(
                                Ipv4Addr::new(0, 0, 0, src[3]),
                                Some(Ipv4Addr::new(0, 0, 0, 255)),
                            );
                            let mut tagged = m.clone();
                            tagged.push(OxmField::VlanVid(packet::VID_PRESENT | VIDS[2], None));
                            add(t, 10, tagged, vec![apply(vec![out(3)])], 503);
                            m.push(OxmField::VlanVid(0, None));
                        }
                        let mut insts = nat_program(0, v + 12 * t);
                        if t == 2 && proto == 17 {
                            // UDP in table 2 goes on to table 4, which
                            // matches the port the NAT wrote.
                            insts[1] = goto(4);
                            let m = vec![
                                OxmField::EthType(0x0800),
                                OxmField::IpProto(17),
                                OxmField::UdpSrc(1024 + u16::from(v + 24)),
                            ];
                            add(4, 10, m, vec![goto(10)], 504);
                        }
                        add(t, 10, m, insts, 501);
                    }
                }
            }
            // (The port before the NAT.)
            let m = vec![
                OxmField::EthType(0x0800),
                OxmField::IpProto(17),
                OxmField::UdpSrc(1000),
            ];
            add(4, 10, m, vec![apply(vec![out(3)])], 505);
            for i in 0..12u8 {
                let m = route_props::prefix_match(DSTS[usize::from(i % 3)], 16 + i);
                add(10, 10, m, route_program(i % 7, i), 502);
            }
        }
        for (i, &(vid, prio, kind, v)) in dispatch.iter().enumerate() {
            let vid = VIDS[usize::from(vid) % VIDS.len()];
            let m = vec![
                OxmField::InPort(1 + u32::from(v % 2)),
                OxmField::VlanVid(packet::VID_PRESENT | vid, None),
            ];
            add(0, prio, m, dispatch_program(kind, v), i as u64);
        }
        for (i, &(t, proto, src, prio, kind, v)) in nats.iter().enumerate() {
            let mut m = vec![OxmField::EthType(0x0800)];
            match proto % 3 {
                0 => m.push(OxmField::IpProto(17)),
                1 => m.push(OxmField::IpProto(6)),
                _ => {}
            }
            m.push(OxmField::Ipv4Src(
                Ipv4Addr::from(SRCS[usize::from(src) % SRCS.len()]),
                None,
            ));
            add(1 + t % 3, prio, m, nat_program(kind, v), 100 + i as u64);
        }
        for (i, &(d, len, prio, kind, v)) in routes.iter().enumerate() {
            let m = route_props::prefix_match(DSTS[usize::from(d) % DSTS.len()], len);
            add(10, prio, m, route_program(kind % ROUTES, v), 200 + i as u64);
        }
        for &(t, prio, kind) in misses {
            let t = [0, 1, 2, 10][usize::from(t % 4)];
            let insts = match t {
                0 => dispatch_program(kind, 1),
                10 => route_program(kind, 1),
                _ => nat_program(kind, 1),
            };
            add(t, prio, vec![], insts, 300);
        }
        if wide {
            add(0, 5, vec![OxmField::EthType(0x0800)], vec![goto(1)], 400);
        }
        if phy {
            let m = vec![OxmField::InPhyPort(1), OxmField::InPort(1)];
            add(3, 5, m, vec![goto(10)], 401);
        }
        p
    }

    /// (vid index or untagged, TPID kind, proto kind, source index,
    /// destination index, ttl, mutation, cut, UDP checksum)
    pub(super) type FrameSpec = (Option<u8>, u8, u8, u8, u8, u8, u8, u8, bool);

    fn frame(spec: &FrameSpec) -> Vec<u8> {
        let (src, dst) = (spec.3, spec.4);
        let src = SRCS[usize::from(src) % SRCS.len()];
        frame_of(spec, src, DSTS[usize::from(dst) % DSTS.len()], 53)
    }

    /// The frame of `spec` from `src` to `dst` and UDP or TCP port
    /// `dport` (the spec's source and destination indexes unused).
    pub(super) fn frame_of(
        &(vid, tpid, proto, _, _, ttl, mutation, cut, cksum): &FrameSpec,
        src: [u8; 4],
        dst: [u8; 4],
        dport: u16,
    ) -> Vec<u8> {
        let ttl = [1, 2, 64][usize::from(ttl % 3)];
        let mut f = udp_frame(dst, dport, ttl);
        f[26..30].copy_from_slice(&src);
        match proto % 4 {
            // TCP: a 20-byte header (data offset 5) after the ports.
            1 => {
                f[23] = 6;
                f.truncate(38);
                f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0x20, 0, 0, 0, 0, 0]);
                f[16..18].copy_from_slice(&40u16.to_be_bytes());
            }
            // ICMP.
            2 => f[23] = 1,
            _ => {}
        }
        // The IP header checksum, then (with `cksum`) the L4 one.
        f[24..26].copy_from_slice(&[0, 0]);
        let ck = packet::checksum::checksum(0, &f[14..34]);
        f[24..26].copy_from_slice(&ck.to_be_bytes());
        if cksum && proto % 4 < 2 {
            let at = if proto % 4 == 1 { 50 } else { 40 };
            f[at..at + 2].copy_from_slice(&0x1234u16.to_be_bytes());
        }
        match mutation {
            0 => f[14] = 0x46,
            1 => f[16..18].copy_from_slice(&24u16.to_be_bytes()),
            2 => f[20] = 0x20,
            3 => f[20] = 0x40,
            4 if proto % 4 == 1 => f[46] = 0x40,
            5 if proto % 4 == 1 => f[46] = 0xf0,
            6 => f.extend_from_slice(&[0; 10]),
            _ => {}
        }
        if let Some(v) = vid {
            let tpid: u16 = match tpid % 4 {
                0 => 0x88a8,
                _ => 0x8100,
            };
            let tci = 0x2000 | VIDS[usize::from(v) % VIDS.len()];
            let mut tag = tpid.to_be_bytes().to_vec();
            tag.extend_from_slice(&tci.to_be_bytes());
            f.splice(12..12, tag);
        }
        if cut < 8 {
            let n = f.len().saturating_sub(usize::from(cut) * 3 + 1);
            f.truncate(n);
        }
        f
    }

    pub(super) fn any_frame() -> impl Strategy<Value = FrameSpec> {
        (
            proptest::option::weighted(0.8, 0u8..3),
            0u8..8,
            prop_oneof![6 => 0u8..2, 1 => 2u8..4],
            0u8..3,
            0u8..3,
            prop_oneof![1 => Just(0u8), 6 => 1u8..3],
            prop_oneof![8 => Just(255u8), 1 => 0u8..7],
            prop_oneof![8 => Just(255u8), 1 => 0u8..8],
            any::<bool>(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn gateway_batch_equals_process(
            groups in proptest::collection::vec(
                prop_oneof![
                    3 => Just((0u8, vec![(0u8, 2u32, 1u16)])),
                    1 => route_props::any_group(),
                ],
                4,
            ),
            dispatch in proptest::collection::vec(
                (0u8..3, prop_oneof![Just(10u16), 1u16..20], 0u8..12, any::<u8>()),
                0..6,
            ),
            nats in proptest::collection::vec(
                (0u8..3, prop_oneof![3 => 0u8..2, 1 => Just(2u8)], 0u8..3, prop_oneof![Just(10u16), 1u16..20], 0u8..12, any::<u8>()),
                0..6,
            ),
            routes in proptest::collection::vec(
                (0u8..3, prop_oneof![0u8..=32, Just(24u8)], 1u16..40, 0u8..12, any::<u8>()),
                0..10,
            ),
            misses in proptest::option::weighted(
                0.3,
                (0u8..4, prop_oneof![Just(0u16), Just(10u16), 1u16..20], 0u8..12),
            ),
            (base, wide, phy) in (
                proptest::bool::weighted(0.8),
                proptest::bool::weighted(0.1),
                proptest::bool::weighted(0.1),
            ),
            frames in proptest::collection::vec(any_frame(), 1..70),
            in_port in 1u32..3,
            down in 0u32..8,
        ) {
            let misses: Vec<_> = misses.into_iter().collect();
            let p = gateway(base, &groups, &dispatch, &nats, &routes, &misses, wide, phy, down);
            let frames: Vec<Vec<u8>> = frames.iter().map(frame).collect();
            route_props::batches_equal_process(p, &frames, in_port)?;
        }
    }

    /// The per-table way does serve a gateway (so the property above
    /// tests it): table 0 answers from frames, and a UDP frame with an
    /// 802.1Q tag or none is read from its bytes (one with a QinQ TPID is
    /// left to the parse).
    #[test]
    fn per_table_serves_a_gateway() {
        let indirect = (0, vec![(0, 2, 1)]);
        let groups = vec![indirect; 4];
        let dispatch = [(0, 10, 0, 0)];
        let nats = [(0, 0, 0, 10, 0, 0), (0, 1, 1, 10, 5, 1)];
        let routes: Vec<RouteSpec> = (0..12).map(|i| (i % 3, 16 + i, 10, 0, i)).collect();
        let p = gateway(
            false,
            &groups,
            &dispatch,
            &nats,
            &routes,
            &[],
            false,
            false,
            0,
        );
        assert!(p.per_table_serves());
        let read = |f: &[u8]| {
            let mut fr = crate::classifier::fields::FrameFields::EMPTY;
            crate::classifier::fields::read_frame(f, 1, packet::Layer::L4, &mut fr).is_some()
        };
        assert!(read(&frame(&(Some(0), 1, 0, 0, 0, 2, 255, 255, false))));
        assert!(read(&frame(&(None, 1, 0, 0, 0, 2, 255, 255, false))));
        assert!(!read(&frame(&(Some(0), 0, 0, 0, 0, 2, 255, 255, false))));
    }
}

/// The batch path through tables without an exact index, ending in
/// a drop or a group (a load balancer behind an ACL, HARMLESS's
/// `lb_acl`) gives exactly what `Pipeline::process` gives, packet by
/// packet (`route_props::batches_equal_process`).
mod balancer_props {
    use super::*;
    use chain_props::{any_frame, frame_of, FrameSpec};
    use group_exec_props::GroupSpec;
    use proptest::prelude::*;

    const VIPS: [[u8; 4]; 2] = [[172, 16, 0, 1], [172, 16, 0, 2]];
    /// Sources: inside the allow blocks (10.1.2.0/24 and around), the
    /// denied host, and outside every block.
    const SRCS: [[u8; 4]; 5] = [
        [10, 1, 2, 1],
        [10, 1, 2, 13],
        [10, 1, 3, 1],
        [10, 2, 0, 1],
        [11, 0, 0, 1],
    ];
    const DENIED: [u8; 4] = [10, 1, 2, 13];
    const MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

    /// A bucket's actions by kind: 0-1 a backend (destination or source
    /// address), 2 a plain output, then other actions.
    fn bucket_actions(kind: u8, k: u32) -> Vec<Action> {
        let set = Action::SetField;
        let addr = Ipv4Addr::new(10, 200, 0, k as u8);
        match kind {
            0 => vec![
                set(OxmField::Ipv4Dst(addr, None)),
                set(OxmField::EthDst(MAC, None)),
                out(k),
            ],
            1 => vec![
                set(OxmField::Ipv4Src(addr, None)),
                set(OxmField::EthDst(MAC, None)),
                out(k),
            ],
            2 => vec![out(k)],
            3 => vec![set(OxmField::EthDst(MAC, None)), out(k)],
            4 => vec![out(port_no::IN_PORT)],
            5 => vec![Action::DecNwTtl, out(k)],
            _ => vec![out(port_no::CONTROLLER)],
        }
    }

    fn any_group() -> impl Strategy<Value = GroupSpec> {
        (
            prop_oneof![2 => Just(2u8), 1 => Just(3u8), 1 => 0u8..4],
            proptest::collection::vec(
                (prop_oneof![4 => 0u8..3, 1 => 3u8..7], 1u32..6, 0u16..3),
                1..5,
            ),
        )
    }

    fn group_mod_of(id: u32, spec: &GroupSpec) -> GroupMod {
        group_exec_props::group_mod_with(id, spec, 4, bucket_actions)
    }

    /// An ACL entry's program by kind: 0-2 allow (goto the VIP table),
    /// 3 drop, 4 an empty apply-actions (drop too), then other programs (a
    /// controller output, a write-actions, an output with a set-field).
    fn acl_program(kind: u8) -> Vec<Instruction> {
        match kind {
            0..=2 => vec![Instruction::GotoTable(1)],
            3 => vec![],
            4 => vec![apply(vec![])],
            5 => vec![apply(vec![out(port_no::CONTROLLER)])],
            6 => vec![Instruction::WriteActions(vec![out(2)])],
            _ => vec![apply(vec![Action::DecNwTtl, out(2)])],
        }
    }

    /// A VIP entry's program by kind: 0-3 its group, 4 an output, 5 a
    /// drop, 6 a goto to table 2 (which outputs), else the controller.
    fn vip_program(kind: u8, v: u8) -> Vec<Instruction> {
        match kind {
            0..=3 => vec![apply(vec![Action::Group(u32::from(v % 4) + 1)])],
            4 => vec![apply(vec![out(u32::from(v % 4) + 1)])],
            5 => vec![],
            6 => vec![Instruction::GotoTable(2)],
            _ => vec![apply(vec![out(port_no::CONTROLLER)])],
        }
    }

    /// (source index, prefix length, VIP index, TCP or UDP, priority,
    /// program kind)
    type AclSpec = (u8, u8, u8, bool, u16, u8);
    /// (VIP index, extra field (0 none, 1 TCP port 80, 2 UDP port 53),
    /// priority, program kind, v)
    type VipSpec = (u8, u8, u16, u8, u8);

    fn ipv4_prefix(a: [u8; 4], len: u8) -> OxmField {
        let len = u32::from(len.min(32));
        let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
        let v = u32::from_be_bytes(a) & mask;
        let m = (len < 32).then(|| Ipv4Addr::from(mask));
        OxmField::Ipv4Src(Ipv4Addr::from(v), m)
    }

    /// A balancer: with `base`, allow rules for 10.1.0.0/16 and
    /// 10.1.2.0/24 to both VIPs (TCP and UDP), deny rules for the denied
    /// host's TCP and UDP port 22, the VIP table to groups 1 and 2; then
    /// the specs' entries on top, a match-everything entry now and then
    /// (`miss`: table, priority, kind), and a rule on `in_phy_port`
    /// (`phy`: outside what a frame's `FrameFields` hold).
    fn balancer(
        base: bool,
        groups: &[GroupSpec],
        acl: &[AclSpec],
        vips: &[VipSpec],
        miss: Option<(u8, u16, u8)>,
        phy: bool,
        down: u32,
    ) -> Pipeline {
        // (A port down makes a fast-failover group pick another bucket.)
        let mut p = route_props::with_groups(groups, down, group_mod_of);
        let mut add = |t: u8, prio: u16, m: Vec<OxmField>, insts: Vec<Instruction>, c: u64| {
            let mut f = fm(cmd::ADD, t, prio, m, insts);
            f.cookie = c;
            let _ = p.flow_mod(&f, 0);
        };
        let l4 = |tcp: bool, port: Option<u16>| -> Vec<OxmField> {
            let mut m = vec![OxmField::IpProto(if tcp { 6 } else { 17 })];
            match (tcp, port) {
                (true, Some(p)) => m.push(OxmField::TcpDst(p)),
                (false, Some(p)) => m.push(OxmField::UdpDst(p)),
                _ => {}
            }
            m
        };
        if base {
            for vip in VIPS {
                for tcp in [true, false] {
                    for len in [16, 24] {
                        let mut m = vec![OxmField::EthType(0x0800)];
                        m.extend(l4(tcp, None));
                        m.push(ipv4_prefix(SRCS[0], len));
                        m.push(OxmField::Ipv4Dst(Ipv4Addr::from(vip), None));
                        add(0, 100, m, vec![Instruction::GotoTable(1)], 500);
                    }
                    let mut m = vec![OxmField::EthType(0x0800)];
                    m.extend(l4(tcp, Some(22)));
                    m.push(OxmField::Ipv4Src(Ipv4Addr::from(DENIED), None));
                    m.push(OxmField::Ipv4Dst(Ipv4Addr::from(vip), None));
                    add(0, 200, m, vec![], 501);
                }
            }
            for (v, vip) in VIPS.iter().enumerate() {
                let m = vec![
                    OxmField::EthType(0x0800),
                    OxmField::Ipv4Dst(Ipv4Addr::from(*vip), None),
                ];
                add(1, 100, m, vip_program(0, v as u8), 502);
            }
            add(2, 0, vec![], vec![apply(vec![out(3)])], 503);
        }
        for (i, &(src, len, vip, tcp, prio, kind)) in acl.iter().enumerate() {
            let mut m = vec![OxmField::EthType(0x0800)];
            m.extend(l4(tcp, (kind == 3).then_some(22)));
            m.push(ipv4_prefix(SRCS[usize::from(src) % SRCS.len()], len));
            m.push(OxmField::Ipv4Dst(
                Ipv4Addr::from(VIPS[usize::from(vip) % VIPS.len()]),
                None,
            ));
            add(0, prio, m, acl_program(kind), i as u64);
        }
        for (i, &(vip, extra, prio, kind, v)) in vips.iter().enumerate() {
            let mut m = vec![OxmField::EthType(0x0800)];
            match extra % 3 {
                1 => m.extend(l4(true, Some(80))),
                2 => m.extend(l4(false, Some(53))),
                _ => {}
            }
            m.push(OxmField::Ipv4Dst(
                Ipv4Addr::from(VIPS[usize::from(vip) % VIPS.len()]),
                None,
            ));
            add(1, prio, m, vip_program(kind, v), 100 + i as u64);
        }
        if let Some((t, prio, kind)) = miss {
            let insts = match t % 2 {
                0 => acl_program(kind),
                _ => vip_program(kind, 1),
            };
            add(t % 2, prio, vec![], insts, 300);
        }
        if phy {
            let m = vec![OxmField::InPhyPort(1), OxmField::InPort(1)];
            add(0, 5, m, vec![Instruction::GotoTable(1)], 400);
        }
        p
    }

    /// A frame of `spec` from source `src` to VIP `vip` (or elsewhere),
    /// to port 22, 53 or 80.
    fn frame(spec: &FrameSpec, src: u8, vip: u8, dport: u8) -> Vec<u8> {
        let dst = VIPS
            .get(usize::from(vip))
            .copied()
            .unwrap_or([192, 0, 2, 1]);
        let dport = [22, 53, 80][usize::from(dport % 3)];
        frame_of(spec, SRCS[usize::from(src) % SRCS.len()], dst, dport)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn balancer_batch_equals_process(
            groups in proptest::collection::vec(any_group(), 4),
            acl in proptest::collection::vec(
                (0u8..5, prop_oneof![8u8..=32, Just(32u8)], 0u8..2, any::<bool>(),
                 prop_oneof![Just(100u16), Just(200u16), 1u16..300],
                 prop_oneof![8 => 0u8..5, 1 => 5u8..8]),
                0..6,
            ),
            vips in proptest::collection::vec(
                (0u8..2, 0u8..3, prop_oneof![Just(100u16), 1u16..200],
                 prop_oneof![8 => 0u8..7, 1 => Just(7u8)], any::<u8>()),
                0..4,
            ),
            miss in proptest::option::weighted(
                0.2,
                (0u8..2, prop_oneof![Just(0u16), Just(100u16), 1u16..200], 0u8..8),
            ),
            (base, phy) in (proptest::bool::weighted(0.8), proptest::bool::weighted(0.05)),
            frames in proptest::collection::vec(
                (any_frame(), 0u8..5, prop_oneof![6 => 0u8..2, 1 => Just(2u8)], 0u8..3),
                1..70,
            ),
            in_port in 1u32..3,
            down in 0u32..6,
        ) {
            let p = balancer(base, &groups, &acl, &vips, miss, phy, down);
            let frames: Vec<Vec<u8>> = frames
                .iter()
                .map(|(spec, src, vip, dport)| frame(spec, *src, *vip, *dport))
                .collect();
            route_props::batches_equal_process(p, &frames, in_port)?;
        }
    }

    /// The per-table way serves a balancer (so the property above tests
    /// it): its ACL (a trie and a subtable: no exact index) answers from
    /// frames, with a controller output among its entries too.
    #[test]
    fn per_table_serves_a_balancer() {
        let groups: Vec<GroupSpec> = vec![(2, vec![(0, 2, 1), (0, 3, 1), (1, 4, 2)]); 4];
        let mut p = balancer(true, &groups, &[], &[], None, false, 0);
        assert!(p.tables()[0].classifier().exact_index().is_none());
        assert!(p.per_table_serves());
        let m = vec![OxmField::EthType(0x0800), OxmField::IpProto(1)];
        let insts = vec![apply(vec![out(port_no::CONTROLLER)])];
        p.flow_mod(&fm(cmd::ADD, 0, 1, m, insts), 0).unwrap();
        assert!(p.per_table_serves());
    }
}

/// A worker replica that replays the authoritative copy's flow-mods
/// (`Pipeline::replay_flow_mod`, with what `flow_mod_taking` built and
/// left of the flow-mod, as the switch sends them) ends up with the same
/// entries, in the same order, as the authoritative copy, and its entries
/// share their match, instructions and program with the authoritative
/// ones instead of holding copies. A delete or a refused flow-mod is left
/// whole.
mod replay_props {
    use super::*;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// (command, table, priority, match kind, instructions kind, cookie,
    /// cookie mask, flags)
    type Spec = (u8, u8, u16, u8, u8, u64, u64, u16);

    fn spec() -> impl Strategy<Value = Spec> {
        (
            prop_oneof![
                4 => Just(cmd::ADD),
                1 => Just(cmd::MODIFY),
                1 => Just(cmd::MODIFY_STRICT),
                1 => Just(cmd::DELETE),
                1 => Just(cmd::DELETE_STRICT),
            ],
            0u8..3,
            0u16..3,
            0u8..6,
            0u8..5,
            0u64..3,
            prop_oneof![Just(0u64), Just(u64::MAX)],
            prop_oneof![Just(0u16), Just(ff::RESET_COUNTS), Just(ff::CHECK_OVERLAP)],
        )
    }

    fn flow_mod(s: &Spec) -> FlowMod {
        let (command, table, prio, m, i, cookie, cookie_mask, flags) = *s;
        let m = match m {
            0 => vec![],
            1 => vec![OxmField::InPort(1)],
            2 => vec![OxmField::InPort(2)],
            3 => vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1), None),
            ],
            4 => vec![
                OxmField::EthType(0x0800),
                OxmField::Ipv4Dst(
                    Ipv4Addr::new(10, 0, 0, 0),
                    Some(Ipv4Addr::new(255, 255, 255, 0)),
                ),
            ],
            // A TCP port without its prerequisites: refused.
            _ => vec![OxmField::TcpDst(80)],
        };
        let insts = match i {
            0 => vec![],
            1 => vec![apply(vec![out(2)])],
            2 => vec![apply(vec![out(3)])],
            3 => vec![Instruction::GotoTable(2)],
            // Output to a port that does not exist: refused.
            _ => vec![apply(vec![out(9)])],
        };
        let mut f = fm(command, table, prio, m, insts);
        f.cookie = cookie;
        f.cookie_mask = cookie_mask;
        f.flags = flags;
        f
    }

    /// An entry as the control plane sees it: table, priority, match
    /// (compiled and as sent), instructions, cookie, packet count.
    type Seen = (u8, u16, CompiledMatch, Match, Vec<Instruction>, u64, u64);

    /// Every entry of every table.
    fn dump(p: &Pipeline) -> Vec<Seen> {
        p.tables()
            .iter()
            .flat_map(|t| {
                t.entries().map(move |e| {
                    (
                        t.id,
                        e.priority,
                        e.compiled.clone(),
                        Match::clone(&e.match_),
                        e.instructions.to_vec(),
                        e.cookie(),
                        e.hot.packet_count,
                    )
                })
            })
            .collect()
    }

    proptest! {
        #[test]
        fn replicas_replaying_equal_the_authoritative_copy(
            specs in proptest::collection::vec(spec(), 1..40),
            clone_at in 0usize..40,
            hit_at in proptest::collection::vec(0usize..40, 0..4),
        ) {
            let mut auth = pipeline(3);
            let mut replica: Option<Pipeline> = None;
            let frame = udp_frame([10, 0, 0, 1], 53, 64);
            for (i, s) in specs.iter().enumerate() {
                if i == clone_at {
                    replica = Some(auth.clone());
                }
                if hit_at.contains(&i) {
                    // Counters to carry over or reset (the replica counts
                    // the same packet).
                    run(&mut auth, &frame, 1, 0);
                    if let Some(r) = replica.as_mut() {
                        run(r, &frame, 1, 0);
                    }
                }
                let mut f = flow_mod(s);
                let now = i as u64;
                let Ok((removed, prepared)) = auth.flow_mod_taking(&mut f, now) else {
                    prop_assert_eq!(&f, &flow_mod(s));
                    continue;
                };
                if prepared.is_none() {
                    prop_assert_eq!(&f, &flow_mod(s));
                }
                let Some(r) = replica.as_mut() else { continue };
                let replayed = r.replay_flow_mod(&f, prepared.as_ref(), now);
                let ids = |v: &[RemovedFlow]| -> Vec<(u8, u16, CompiledMatch)> {
                    v.iter()
                        .map(|x| (x.table_id, x.entry.cold.priority, x.entry.cold.compiled.clone()))
                        .collect()
                };
                prop_assert_eq!(ids(&removed), ids(&replayed));
                prop_assert_eq!(dump(&auth), dump(r));
            }
            // Entries added after the replica was made share their parts.
            if let Some(r) = &replica {
                for (ta, tr) in auth.tables().iter().zip(r.tables()) {
                    for (a, b) in ta.entries().zip(tr.entries()) {
                        if a.installed_at >= clone_at as u64 {
                            prop_assert!(Arc::ptr_eq(&a.match_, &b.match_));
                            prop_assert!(Arc::ptr_eq(&a.instructions, &b.instructions));
                            prop_assert!(Arc::ptr_eq(a.hot.program(), b.hot.program()));
                            prop_assert!(std::ptr::eq(a.compiled.fields(), b.compiled.fields()));
                        }
                    }
                }
            }
        }
    }
}

/// A DSCP-remark band remarks exactly the packets that exceed its rate,
/// the ones a drop band of the same rate drops, in pktps and kbps; a
/// packet without an IP header (ARP) passes unchanged.
#[test]
fn meter_remark_band_remarks_exactly_the_excess() {
    let arp = {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0x08, 0x06]);
        f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
        f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
        f
    };
    let mut af11 = udp_frame([1, 2, 3, 4], 1, 64);
    af11[15] = 10 << 2;
    af11[24..26].fill(0);
    let ck = packet::checksum::checksum(0, &af11[14..34]);
    af11[24..26].copy_from_slice(&ck.to_be_bytes());
    // (flags, rate): 100 pkt/s, or 100 frames' worth of kbit/s.
    let kbps_rate = (af11.len() * 8 * 100 / 1000) as u32;
    for (flags, rate) in [(mflags::PKTPS, 100), (mflags::KBPS, kbps_rate)] {
        let mut counts = Vec::new();
        for remark in [true, false] {
            let mut p = pipeline(2);
            let band = if remark {
                MeterBand::DscpRemark {
                    rate,
                    burst_size: 10 * rate / 100,
                    prec_level: 1,
                }
            } else {
                MeterBand::Drop {
                    rate,
                    burst_size: 10 * rate / 100,
                }
            };
            let mm = MeterMod {
                command: mcmd::ADD,
                flags: flags | mflags::BURST | mflags::STATS,
                meter_id: 1,
                bands: vec![band],
            };
            p.meter_mod(&mm, 0).unwrap();
            p.meter_mod(&MeterMod { meter_id: 2, ..mm }, 0).unwrap();
            // IPv4 through meter 1, ARP through meter 2 (the same band).
            for (m, t) in [(1, 0x0800), (2, 0x0806)] {
                let flow = vec![Instruction::Meter(m), apply(vec![out(2)])];
                let mat = vec![OxmField::EthType(t)];
                p.flow_mod(&fm(cmd::ADD, 0, 1, mat, flow), 0).unwrap();
            }
            // 400 frames at twice the rate (one every 5 ms), alone and
            // as batches of 4 that share a time.
            let (mut passed, mut remarked, mut arps) = (0, 0, 0);
            for i in 0..400u64 {
                let at = i * SEC / 200;
                let events = if i % 2 == 0 {
                    run(&mut p, &af11, 1, at).0
                } else {
                    let mut bufs: Vec<PacketBuf> = (0..4)
                        .map(|_| PacketBuf::from_slice(&arp))
                        .chain([PacketBuf::from_slice(&af11)])
                        .collect();
                    let mut r = Rec::default();
                    p.process_batch(&mut bufs, 1, at, &mut r, |_, _, _, x| assert!(x.is_ok()));
                    r.0
                };
                for e in events {
                    let Ev::Port(2, d, _) = e else {
                        panic!("{e:?}")
                    };
                    if d == arp {
                        arps += 1;
                        continue;
                    }
                    passed += 1;
                    match d[15] >> 2 {
                        10 => assert_eq!(d, af11),
                        12 => {
                            remarked += 1;
                            let mut x = d.clone();
                            x[24..26].fill(0);
                            let ck = packet::checksum::checksum(0, &x[14..34]);
                            assert_eq!(d[24..26], ck.to_be_bytes());
                        }
                        other => panic!("dscp {other}"),
                    }
                }
            }
            let band = p.meters.get(1).unwrap().bands[0].packet_count();
            counts.push((passed, remarked, band));
            let arp_band = p.meters.get(2).unwrap().bands[0].packet_count();
            // 800 ARP frames at four times the rate: over it, and every
            // one passes the remark band unchanged.
            assert!(arp_band > 400, "{arp_band}");
            assert_eq!(arps, if remark { 800 } else { 800 - arp_band });
        }
        // Remark: everything passes, the band's packets remarked. Drop:
        // the same packets dropped.
        let (r, d) = (counts[0], counts[1]);
        assert_eq!((r.0, r.1), (400, r.2), "{flags}: {counts:?}");
        assert_eq!((d.0, d.1, d.2), (400 - r.2, 0, r.2), "{flags}: {counts:?}");
        assert!(r.2 > 150 && r.2 < 250, "{counts:?}");
    }
}

/// SELECT groups: many ARP flows (one pair of MACs, many addresses) are
/// spread over the buckets; many TCP flows take each bucket in proportion
/// to its weight within a few percent; round robin gives every bucket
/// exactly its weight's share of the packets of a single flow. Through
/// `process` and through `process_batch`.
mod select_groups {
    use super::*;
    use crate::group::SelectMethod;

    const WEIGHTS: [u16; 4] = [1, 2, 3, 4];

    fn arp(spa: u32, tpa: u32) -> Vec<u8> {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
        f.extend_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&spa.to_be_bytes());
        f.extend_from_slice(&[0; 6]);
        f.extend_from_slice(&tpa.to_be_bytes());
        f
    }

    fn tcp(src: u32, sport: u16, dport: u16) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
        f.extend_from_slice(&[0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0]);
        f.extend_from_slice(&src.to_be_bytes());
        f.extend_from_slice(&[10, 0, 0, 2]);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0]);
        let ck = packet::checksum::checksum(0, &f[14..34]);
        f[24..26].copy_from_slice(&ck.to_be_bytes());
        f
    }

    /// A pipeline sending everything to SELECT group 1 of four buckets
    /// (out 1..4) with `WEIGHTS`, by `method`.
    fn balancer(method: SelectMethod) -> Pipeline {
        let mut p = pipeline(5);
        p.groups.select_method = method;
        let buckets = (0..4)
            .map(|i| Bucket {
                weight: WEIGHTS[i],
                ..bucket(vec![out(i as u32 + 1)])
            })
            .collect();
        p.group_mod(&gmod(gcmd::ADD, group_type::SELECT, 1, buckets), 0)
            .unwrap();
        let flow = vec![apply(vec![Action::Group(1)])];
        p.flow_mod(&fm(cmd::ADD, 0, 1, vec![], flow), 0).unwrap();
        p
    }

    /// Packets per bucket after `frames` went through `p`, every other
    /// chunk of 8 as one batch.
    fn shares(p: &mut Pipeline, frames: &[Vec<u8>]) -> Vec<u64> {
        for (i, chunk) in frames.chunks(8).enumerate() {
            if i % 2 == 0 {
                for f in chunk {
                    assert_eq!(run(p, f, 5, 0).ports().len(), 1);
                }
            } else {
                let mut bufs: Vec<PacketBuf> =
                    chunk.iter().map(|f| PacketBuf::from_slice(f)).collect();
                let mut r = Rec::default();
                p.process_batch(&mut bufs, 5, 0, &mut r, |_, _, _, x| assert!(x.is_ok()));
                assert_eq!(r.ports().len(), chunk.len());
            }
        }
        let g = p.groups.get(1).unwrap();
        g.bucket_counters.iter().map(|c| c.packet_count).collect()
    }

    #[test]
    fn arp_flows_are_spread() {
        let mut p = balancer(SelectMethod::Hash);
        let frames: Vec<Vec<u8>> = (0..4000u32)
            .map(|i| arp(0x0a00_0001, 0x0a00_0000 + i))
            .collect();
        let per = shares(&mut p, &frames);
        for (n, w) in per.iter().zip(WEIGHTS) {
            let want = 4000 * u64::from(w) / 10;
            assert!(n.abs_diff(want) * 100 < want * 8, "{per:?}");
        }
        // One ARP flow keeps its bucket.
        let mut p = balancer(SelectMethod::Hash);
        let per = shares(&mut p, &vec![arp(1, 2); 64]);
        assert_eq!(per.iter().filter(|n| **n > 0).count(), 1, "{per:?}");
    }

    #[test]
    fn tcp_flows_follow_the_weights() {
        let mut p = balancer(SelectMethod::Hash);
        // 20000 flows: random sources and ports (a fixed LCG).
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 32) as u32
        };
        let frames: Vec<Vec<u8>> = (0..20000).map(|_| tcp(next(), next() as u16, 80)).collect();
        let per = shares(&mut p, &frames);
        for (n, w) in per.iter().zip(WEIGHTS) {
            let want = 20000 * u64::from(w) / 10;
            assert!(n.abs_diff(want) * 100 < want * 4, "{per:?}");
        }
        // Sequential source ports of one host pair (iperf3 -P).
        let mut p = balancer(SelectMethod::Hash);
        let frames: Vec<Vec<u8>> = (0..20000u16)
            .map(|i| tcp(0x0a00_0001, 30000 + i, 5201))
            .collect();
        let per = shares(&mut p, &frames);
        for (n, w) in per.iter().zip(WEIGHTS) {
            let want = 20000 * u64::from(w) / 10;
            assert!(n.abs_diff(want) * 100 < want * 4, "{per:?}");
        }
    }

    #[test]
    fn round_robin_gives_each_bucket_its_weight() {
        let mut p = balancer(SelectMethod::RoundRobin);
        let per = shares(&mut p, &vec![tcp(1, 2, 3); 1000]);
        assert_eq!(per, [100, 200, 300, 400]);
        // A group keeps the method it was added with.
        p.groups.select_method = SelectMethod::Hash;
        let per = shares(&mut p, &vec![arp(1, 2); 10]);
        assert_eq!(per, [101, 202, 303, 404]);
        assert_eq!("round_robin".parse(), Ok(SelectMethod::RoundRobin));
        assert!("random".parse::<SelectMethod>().is_err());
    }
}

/// Set-field of ETH_TYPE and IP_PROTO (OpenFlow 1.3.5 excludes only
/// IN_PORT, IN_PHY_PORT and METADATA from set-field): accepted with the
/// match prerequisites, applied to the packet with the IPv4 checksum
/// updated, and what follows sees the new header (a later table matches
/// the new values). Through `process` and `process_batch`.
#[test]
fn set_field_eth_type_and_ip_proto() {
    let mut p = pipeline(3);
    let sf = |f| Action::SetField(f);
    // Table 0: TCP becomes protocol 253 and goes to table 1; ARP gets
    // ethertype 0x88b5 and goes to table 1.
    let tcp = vec![OxmField::EthType(0x0800), OxmField::IpProto(6)];
    let insts = vec![
        apply(vec![sf(OxmField::IpProto(253))]),
        Instruction::GotoTable(1),
    ];
    p.flow_mod(&fm(cmd::ADD, 0, 5, tcp, insts), 0).unwrap();
    let arp = vec![OxmField::EthType(0x0806)];
    let insts = vec![
        Instruction::WriteActions(vec![sf(OxmField::EthType(0x88b5))]),
        apply(vec![sf(OxmField::EthType(0x88b5))]),
        Instruction::GotoTable(1),
    ];
    p.flow_mod(&fm(cmd::ADD, 0, 5, arp, insts), 0).unwrap();
    // Table 1 sees the new values.
    let m = vec![OxmField::EthType(0x0800), OxmField::IpProto(253)];
    p.flow_mod(&fm(cmd::ADD, 1, 5, m, vec![apply(vec![out(2)])]), 0)
        .unwrap();
    let m = vec![OxmField::EthType(0x88b5)];
    p.flow_mod(&fm(cmd::ADD, 1, 5, m, vec![apply(vec![out(3)])]), 0)
        .unwrap();
    // Prerequisites still apply: IP_PROTO needs IPv4 or IPv6, and a TCP
    // port after the protocol changed is inconsistent.
    for (m, a) in [
        (vec![], vec![sf(OxmField::IpProto(6))]),
        (
            vec![OxmField::EthType(0x0800), OxmField::IpProto(6)],
            vec![sf(OxmField::IpProto(17)), sf(OxmField::TcpDst(1))],
        ),
    ] {
        assert_eq!(
            p.flow_mod(&fm(cmd::ADD, 0, 9, m, vec![apply(a)]), 0)
                .unwrap_err(),
            ErrorCode::BadAction(BadActionCode::MatchInconsistent)
        );
    }
    let in_port = vec![apply(vec![sf(OxmField::InPort(3))])];
    assert_eq!(
        p.flow_mod(&fm(cmd::ADD, 0, 9, vec![], in_port), 0)
            .unwrap_err(),
        ErrorCode::BadAction(BadActionCode::BadSetType)
    );

    let mut tcp = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    tcp.extend_from_slice(&[
        0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
    ]);
    tcp.extend_from_slice(&[
        0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 2, 0x20, 0, 0, 0, 0, 0,
    ]);
    let ck = packet::checksum::checksum(0, &tcp[14..34]);
    tcp[24..26].copy_from_slice(&ck.to_be_bytes());
    let mut want_tcp = tcp.clone();
    want_tcp[23] = 253;
    want_tcp[24..26].fill(0);
    let ck = packet::checksum::checksum(0, &want_tcp[14..34]);
    want_tcp[24..26].copy_from_slice(&ck.to_be_bytes());
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let mut want_arp = arp.clone();
    want_arp[12..14].copy_from_slice(&[0x88, 0xb5]);

    let want = vec![
        Ev::Port(2, want_tcp.clone(), None),
        Ev::Port(3, want_arp.clone(), None),
    ];
    let mut got = run(&mut p, &tcp, 1, 0).0;
    got.extend(run(&mut p, &arp, 1, 0).0);
    assert_eq!(got, want);
    let mut bufs = vec![PacketBuf::from_slice(&tcp), PacketBuf::from_slice(&arp)];
    let mut r = Rec::default();
    p.process_batch(&mut bufs, 1, 0, &mut r, |_, _, _, x| assert!(x.is_ok()));
    assert_eq!(r.0, want);
}

/// push_mpls on a frame with neither IP nor MPLS (ARP): the new label's
/// TTL is 0 (OpenFlow 1.3.5 §5.12.1); on IPv4 it is the IP TTL.
#[test]
fn push_mpls_ttl_without_ip_is_zero() {
    let mut p = pipeline(2);
    let insts = vec![apply(vec![Action::PushMpls(0x8847), out(2)])];
    p.flow_mod(&fm(cmd::ADD, 0, 5, vec![], insts), 0).unwrap();
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    let r = run(&mut p, &arp, 1, 0);
    let Ev::Port(2, d, _) = &r.0[0] else {
        panic!("{:?}", r.0)
    };
    assert_eq!(&d[12..18], &[0x88, 0x47, 0, 0, 0x01, 0x00]);
    let r = run(&mut p, &udp_frame([1, 2, 3, 4], 1, 33), 1, 0);
    let Ev::Port(2, d, _) = &r.0[0] else {
        panic!("{:?}", r.0)
    };
    assert_eq!(&d[12..18], &[0x88, 0x47, 0, 0, 0x01, 33]);
}
