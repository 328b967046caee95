//! The ops run on the frame with the key kept lazy (`frame_ops`) against
//! `process` (the key made on arrival): same frames out, events, flow,
//! table and group counters; the key never made when every step could
//! run on the frame, and right when a later op needs it.

use super::*;
use crate::classifier::fields::read_frame;
use crate::classifier::fields::FrameFields;
use crate::port::PortInfo;
use ofp::group::{command as gcmd, group_type, Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::flow_mod_command;
use ofp::oxm::vid;
use packet::Layer;
use std::net::Ipv4Addr;

use super::fuse_tests::Rec;

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn set(f: OxmField) -> Action {
    Action::SetField(f)
}

/// Ethernet (maybe one VLAN tag `tag`), IPv4 `src` -> `dst` with TTL 64,
/// TCP or UDP `sport` -> 80, with correct checksums.
fn frame(tag: Option<u16>, tcp: bool, src: [u8; 4], dst: [u8; 4], sport: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if let Some(v) = tag {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&v.to_be_bytes());
    }
    f.extend_from_slice(&[0x08, 0x00]);
    let l4_len: u16 = if tcp { 20 } else { 8 };
    f.extend_from_slice(&[
        0x45,
        0,
        0,
        0,
        0,
        1,
        0,
        0,
        64,
        if tcp { 6 } else { 17 },
        0,
        0,
    ]);
    let ip = f.len() - 12;
    f[ip + 2..ip + 4].copy_from_slice(&(20 + l4_len).to_be_bytes());
    f.extend_from_slice(&src);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&80u16.to_be_bytes());
    if tcp {
        f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0, 0, 0, 0]);
    } else {
        f.extend_from_slice(&[0, 8, 0, 0]);
    }
    let mut k = FlowKey::new(1);
    let _ = packet::parse_to(&f, &mut k, Layer::L4);
    packet::recompute_checksums(&mut f, &k);
    f
}

/// A pipeline of ports 1-4 with `groups` and `flows` (table, match,
/// instructions).
fn pipeline(groups: Vec<GroupMod>, flows: Vec<(u8, Vec<OxmField>, Vec<Instruction>)>) -> Pipeline {
    let mut p = Pipeline::default();
    for i in 1..=4 {
        p.ports.insert(i, PortInfo::up());
    }
    for g in &groups {
        p.group_mod(g, 0).expect("valid group");
    }
    for (t, m, insts) in flows {
        let f = crate::tests::fm(flow_mod_command::ADD, t, 10, m, insts);
        p.flow_mod(&f, 0).expect("valid flow");
    }
    p
}

fn group(id: u32, ty: u8, buckets: Vec<Vec<Action>>) -> GroupMod {
    GroupMod {
        command: gcmd::ADD,
        group_type: ty,
        group_id: id,
        buckets: buckets
            .into_iter()
            .map(|actions| Bucket {
                weight: u16::from(ty == group_type::SELECT),
                watch_port: port_no::ANY,
                watch_group: ofp::group::group_id::ANY,
                actions,
            })
            .collect(),
    }
}

/// Every flow entry's and group bucket's (packets, bytes), and every
/// table's (lookups, matches).
fn counts(p: &Pipeline) -> Vec<(u64, u64)> {
    let tables = p
        .tables()
        .iter()
        .map(|t| (t.counters.lookup_count, t.counters.matched_count));
    let flows = p
        .tables()
        .iter()
        .flat_map(|t| t.entries().map(|e| (e.packet_count(), e.byte_count())));
    let groups = p.groups.iter().flat_map(|g| {
        std::iter::once(g.counters)
            .chain(g.bucket_counters.iter().copied())
            .map(|c| (c.packet_count, c.byte_count))
    });
    tables.chain(flows).chain(groups).collect()
}

/// `f` through `p` on the per-table way (read into `FrameFields`, the key
/// lazy): what it emitted and the executor's key afterwards.
fn run_lazy(p: &mut Pipeline, f: &[u8]) -> (Rec, FlowKey) {
    let mut fr = FrameFields::EMPTY;
    assert!(
        read_frame(f, 1, Layer::L4, &mut fr).is_some(),
        "a frame the per-table way reads"
    );
    let layer = p.parse_layer();
    let mut key = FlowKey::new(1);
    let mut buf = PacketBuf::from_slice(f);
    let mut rec = Rec::default();
    let mut tables = std::mem::take(&mut p.tables);
    let ctx = Ctx::received(1, 5);
    p.run_tables_in(
        &mut tables,
        &mut buf,
        &mut key,
        ctx,
        None,
        Some((layer, &fr)),
        &mut rec,
    );
    p.put_tables_back(tables);
    (rec, key)
}

/// Every frame of `frames` through a copy of `p` by `process` and
/// through `p` by `run_lazy`: the same frames and events out, the same
/// counters. Returns the lazy run's keys.
fn same_as_process(p: &mut Pipeline, frames: &[Vec<u8>]) -> Vec<FlowKey> {
    let mut general = p.clone();
    let mut keys = Vec::new();
    for f in frames {
        let mut want = Rec::default();
        let mut buf = PacketBuf::from_slice(f);
        general
            .process(&mut buf, 1, 5, &mut want)
            .expect("well formed");
        let (got, key) = run_lazy(p, f);
        assert_eq!(got, want, "frame {f:02x?}");
        keys.push(key);
    }
    assert_eq!(counts(p), counts(&general));
    keys
}

/// Checksums of an output frame are right (recomputing changes nothing).
fn checksums_hold(f: &[u8]) {
    let mut k = FlowKey::new(1);
    let _ = packet::parse_to(f, &mut k, Layer::L4);
    let mut g = f.to_vec();
    packet::recompute_checksums(&mut g, &k);
    assert_eq!(g, f);
}

const VIP: [u8; 4] = [172, 16, 0, 1];
const MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xb];

/// A load balancer: table 0 sends the VIP's TCP to SELECT group 1, whose
/// four backends each rewrite the destination address and MAC.
#[test]
fn select_and_backend_rewrite_run_on_the_frame() {
    let backends = (1..=4)
        .map(|b| {
            vec![
                set(OxmField::Ipv4Dst(Ipv4Addr::new(10, 200, 0, b), None)),
                set(OxmField::EthDst([2, 0, 0, 0, 0, b], None)),
                out(u32::from(b)),
            ]
        })
        .collect();
    let m = vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(6),
        OxmField::Ipv4Dst(Ipv4Addr::from(VIP), None),
        OxmField::TcpDst(80),
    ];
    let mut p = pipeline(
        vec![group(1, group_type::SELECT, backends)],
        vec![(
            0,
            m,
            vec![Instruction::ApplyActions(vec![Action::Group(1)])],
        )],
    );
    let frames: Vec<_> = (0..64)
        .map(|i| frame(None, true, [10, 1, 2, i as u8], VIP, 1024 + i))
        .collect();
    let keys = same_as_process(&mut p, &frames);
    assert!(
        keys.iter().all(|k| k.depth == Layer::None),
        "the key is never made"
    );
    // The connections spread over the backends.
    let g = p.groups.iter().next().expect("group 1");
    assert!(g.bucket_counters.iter().all(|c| c.packet_count > 0));
    let (rec, _) = run_lazy(&mut p, &frames[0]);
    let (_, _, data) = &rec.0[0];
    checksums_hold(data);
    assert_eq!(data[30..34], [10, 200, 0, data[5]]);
}

/// A gateway's VLAN: table 0 pops the tag, table 1 matches the untagged
/// frame (`vlan_vid` NONE) and outputs it; the lookup of table 1 is made
/// from the frame's fields as the pop left them.
#[test]
fn pop_vlan_then_a_lookup_from_the_frame() {
    let m0 = vec![
        OxmField::InPort(1),
        OxmField::VlanVid(vid::PRESENT | 100, None),
    ];
    let m1 = vec![
        OxmField::VlanVid(vid::NONE, None),
        OxmField::EthType(0x0800),
        OxmField::Ipv4Src(Ipv4Addr::new(10, 0, 0, 1), None),
    ];
    let insts0 = vec![
        Instruction::ApplyActions(vec![Action::PopVlan]),
        Instruction::GotoTable(1),
    ];
    let mut p = pipeline(
        vec![],
        vec![
            (0, m0, insts0),
            (1, m1, vec![Instruction::ApplyActions(vec![out(2)])]),
        ],
    );
    let frames = [
        frame(Some(100), false, [10, 0, 0, 1], [192, 0, 2, 1], 5000),
        frame(Some(100), true, [10, 0, 0, 1], [192, 0, 2, 1], 5000),
        // Table 1 misses this one (dropped).
        frame(Some(100), false, [10, 0, 0, 2], [192, 0, 2, 1], 5000),
    ];
    let keys = same_as_process(&mut p, &frames);
    assert!(
        keys.iter().all(|k| k.depth == Layer::None),
        "the key is never made"
    );
    let (rec, _) = run_lazy(&mut p, &frames[0]);
    let untagged = frame(None, false, [10, 0, 0, 1], [192, 0, 2, 1], 5000);
    assert_eq!(rec.0, vec![(0, 2, untagged)]);
}

/// A gateway's NAT then its route: table 0 rewrites the source address
/// and UDP port, table 1 matches the new source (looked up from the
/// frame's fields as the NAT left them) and sends to an INDIRECT next
/// hop.
#[test]
fn nat_then_route_run_on_the_frame() {
    let public = Ipv4Addr::new(198, 18, 0, 7);
    let m0 = vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(17),
        OxmField::Ipv4Src(Ipv4Addr::new(10, 0, 0, 1), None),
    ];
    let insts0 = vec![
        Instruction::ApplyActions(vec![
            set(OxmField::Ipv4Src(public, None)),
            set(OxmField::UdpSrc(4321)),
        ]),
        Instruction::GotoTable(1),
    ];
    let m1 = vec![
        OxmField::EthType(0x0800),
        OxmField::Ipv4Src(public, None),
        OxmField::Ipv4Dst(
            Ipv4Addr::new(192, 0, 2, 0),
            Some(Ipv4Addr::new(255, 255, 255, 0)),
        ),
    ];
    let hop = vec![
        Action::DecNwTtl,
        set(OxmField::EthSrc([2, 0, 0, 0, 0, 0xa], None)),
        set(OxmField::EthDst(MAC, None)),
        out(3),
    ];
    let mut p = pipeline(
        vec![group(1, group_type::INDIRECT, vec![hop])],
        vec![
            (0, m0, insts0),
            (
                1,
                m1,
                vec![Instruction::ApplyActions(vec![Action::Group(1)])],
            ),
        ],
    );
    let frames: Vec<_> = (1..8)
        .map(|i| {
            frame(
                None,
                false,
                [10, 0, 0, 1],
                [192, 0, 2, i],
                5000 + u16::from(i),
            )
        })
        .collect();
    let keys = same_as_process(&mut p, &frames);
    assert!(
        keys.iter().all(|k| k.depth == Layer::None),
        "the key is never made"
    );
    let (rec, _) = run_lazy(&mut p, &frames[0]);
    let (_, port, data) = &rec.0[0];
    assert_eq!(*port, 3);
    checksums_hold(data);
    assert_eq!(data[26..30], public.octets());
    assert_eq!(data[34..36], 4321u16.to_be_bytes());
    assert_eq!(data[22], 63);
}

/// A list whose first ops run on the frame (pop-VLAN, a source address)
/// and whose next one cannot (set-field of the IP DSCP): the key is made
/// from the frame as those ops left it, and is the key of the frame sent
/// out (the general path's key after the same ops).
#[test]
fn an_op_the_frame_path_cannot_do_makes_the_right_key() {
    let m0 = vec![
        OxmField::InPort(1),
        OxmField::VlanVid(vid::PRESENT | 100, None),
        OxmField::EthType(0x0800),
    ];
    let insts0 = vec![
        Instruction::ApplyActions(vec![
            Action::PopVlan,
            set(OxmField::Ipv4Src(Ipv4Addr::new(198, 18, 0, 9), None)),
            set(OxmField::IpDscp(46)),
            out(2),
        ]),
        Instruction::GotoTable(1),
    ];
    let m1 = vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(6),
        OxmField::TcpSrc(1234),
    ];
    let mut p = pipeline(
        vec![],
        vec![
            (0, m0, insts0),
            (1, m1, vec![Instruction::ApplyActions(vec![out(3)])]),
        ],
    );
    let frames = [
        frame(Some(100), true, [10, 0, 0, 1], [192, 0, 2, 1], 1234),
        frame(Some(100), true, [10, 0, 0, 1], [192, 0, 2, 1], 999),
    ];
    let keys = same_as_process(&mut p, &frames);
    let (rec, key) = run_lazy(&mut p, &frames[0]);
    assert_eq!(keys[0], key);
    assert_ne!(key.depth, Layer::None, "the key was made");
    let (_, port, data) = &rec.0[1];
    assert_eq!(*port, 3);
    checksums_hold(data);
    // The key the executor made is the one the frame sent out parses to.
    let mut want = FlowKey::new(1);
    let _ = packet::continue_to(data, &mut want, key.depth);
    assert_eq!(key, want);
    assert!(!key.has(packet::Field::VlanVid) || key.vlan_vid == 0);
    assert_eq!(key.ipv4_src, u32::from(Ipv4Addr::new(198, 18, 0, 9)));
}
