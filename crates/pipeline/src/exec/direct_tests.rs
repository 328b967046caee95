//! The one-action lists `execute_ops` runs straight (a group, a pop-VLAN,
//! a NAT's rewrite) against the same action run by the op loop (the list
//! with an [`Op::Nop`] in front, which the straight dispatch does not
//! take): same events, frames, results and counters, with a table, an
//! action set or nothing after the list.

use super::*;
use crate::port::PortInfo;
use ofp::group::{command as gcmd, group_type, Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command, FlowMod};
use proptest::prelude::*;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// Everything emitted, in order.
#[derive(Default, Debug, PartialEq, Eq)]
struct Rec(Vec<(u8, u32, Vec<u8>, Option<u32>)>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
        self.0.push((0, port, data.to_vec(), queue));
    }
    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.0
            .push((ev.reason, ev.max_len.into(), ev.data.to_vec(), None));
    }
}

fn flow(table_id: u8, m: Vec<OxmField>, instructions: Vec<Instruction>) -> FlowMod {
    crate::tests::fm(flow_mod_command::ADD, table_id, 1, m, instructions)
}

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

/// Ethernet, maybe one VLAN tag, IPv4 with `ttl`, UDP or TCP.
fn frame(tag: bool, tcp: bool, ttl: u8) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if tag {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64]);
    }
    f.extend_from_slice(&[0x08, 0x00]);
    let l4_len: u16 = if tcp { 20 } else { 8 };
    let ip = f.len();
    f.extend_from_slice(&[
        0x45,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        ttl,
        if tcp { 6 } else { 17 },
        0,
        0,
    ]);
    f[ip + 2..ip + 4].copy_from_slice(&(20 + l4_len).to_be_bytes());
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x03, 0xe8, 0x00, 0x35]);
    if tcp {
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0x12, 0x34, 0, 0]);
    } else {
        f.extend_from_slice(&[0, 8, 0x12, 0x34]);
    }
    let ck = packet::checksum::checksum(0, &f[ip..ip + 20]);
    f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
    f
}

/// A pipeline whose table 0 entry applies one action of `kind`
/// (0: group, 1: pop-VLAN, 2: NAT rewrite), followed by `then` (0:
/// nothing, 1: goto table 1, 2: write-actions output), and the op the
/// list compiles to.
fn pipeline(kind: u8, then: u8, all: bool) -> (Pipeline, Op) {
    let mut p = Pipeline::default();
    for i in 1..=3 {
        p.ports.insert(i, PortInfo::up());
    }
    let route = vec![
        Action::DecNwTtl,
        Action::SetField(OxmField::EthSrc([2, 0, 0, 0, 0, 0xa], None)),
        Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 0xb], None)),
        out(2),
    ];
    let bucket = |actions| Bucket {
        weight: 0,
        watch_port: port_no::ANY,
        watch_group: ofp::group::group_id::ANY,
        actions,
    };
    let (ty, buckets) = if all {
        (group_type::ALL, vec![bucket(route), bucket(vec![out(3)])])
    } else {
        (group_type::INDIRECT, vec![bucket(route)])
    };
    let gm = GroupMod {
        command: gcmd::ADD,
        group_type: ty,
        group_id: 1,
        buckets,
    };
    p.group_mod(&gm, 0).expect("valid group");
    let (m, actions) = match kind {
        0 => (vec![], vec![Action::Group(1)]),
        1 => (vec![], vec![Action::PopVlan]),
        _ => (
            vec![OxmField::EthType(0x0800), OxmField::IpProto(17)],
            vec![
                Action::SetField(OxmField::Ipv4Src(Ipv4Addr::new(198, 18, 0, 7), None)),
                Action::SetField(OxmField::UdpSrc(4321)),
            ],
        ),
    };
    let mut insts = vec![Instruction::ApplyActions(actions)];
    match then {
        1 => insts.push(Instruction::GotoTable(1)),
        2 => insts.push(Instruction::WriteActions(vec![out(3)])),
        _ => {}
    }
    p.flow_mod(&flow(0, m, insts), 0).expect("valid flow");
    p.flow_mod(
        &flow(1, vec![], vec![Instruction::ApplyActions(vec![out(3)])]),
        0,
    )
    .expect("valid flow");
    let op = match p.tables[0]
        .hot(0)
        .and_then(|e| e.program().apply.as_deref())
    {
        Some(&[op]) => op,
        other => panic!("one op expected, got {other:?}"),
    };
    (p, op)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn direct_lists_equal_execute_ops(
        kind in 0u8..3,
        then in 0u8..3,
        all in any::<bool>(),
        frames in proptest::collection::vec((any::<bool>(), any::<bool>(), 0u8..3), 1..6),
    ) {
        let (mut direct, op) = pipeline(kind, then, all);
        match (kind, op) {
            (0, Op::Group(1)) | (1, Op::PopVlan) | (2, Op::SetIpv4Port { .. }) => {}
            _ => prop_assert!(false, "kind {} compiled to {:?}", kind, op),
        }
        // The reference: the same entry with [Nop, op], run by the
        // op loop (the op stays the last: a group is the tail).
        let mut general = direct.clone();
        let Some(entry) = general.tables[0].hot_mut(0) else {
            return Err(TestCaseError::fail("no entry"));
        };
        let mut prog = Program::clone(entry.program());
        prog.apply = Some(Box::new([Op::Nop, op]));
        entry.set_program(Arc::new(prog));
        for &(tag, tcp, ttl) in &frames {
            let f = frame(tag, tcp, [1u8, 2, 64][usize::from(ttl)]);
            let (mut a, mut b) = (PacketBuf::from_slice(&f), PacketBuf::from_slice(&f));
            let (mut ra, mut rb) = (Rec::default(), Rec::default());
            let x = direct.process(&mut a, 1, 5, &mut ra).is_ok();
            let y = general.process(&mut b, 1, 5, &mut rb).is_ok();
            prop_assert_eq!(x, y);
            prop_assert_eq!(&ra, &rb);
            prop_assert_eq!(a.data(), b.data());
        }
        let counts = |p: &Pipeline| -> Vec<(u64, u64)> {
            let flows = p.tables().iter().flat_map(|t| {
                t.entries().map(|e| (e.packet_count(), e.byte_count()))
            });
            let groups = p.groups.iter().flat_map(|g| {
                std::iter::once(g.counters)
                    .chain(g.bucket_counters.iter().copied())
                    .map(|c| (c.packet_count, c.byte_count))
            });
            flows.chain(groups).collect()
        };
        prop_assert_eq!(counts(&direct), counts(&general));
    }
}
