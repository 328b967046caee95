//! Fused ops (`program::fuse`) against the ops they stand for, one by
//! one: same packet bytes, key, flow result and emitted events.

use super::*;
use crate::port::PortInfo;
use crate::program::fuse;
use packet::{Layer, SetField};
use proptest::prelude::*;

/// Everything emitted, in order: (packet-in reason or 0, port or the
/// packet-in's max_len, bytes).
#[derive(Default, Debug, PartialEq, Eq)]
pub(super) struct Rec(pub(super) Vec<(u8, u32, Vec<u8>)>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], _queue: Option<u32>) {
        self.0.push((0, port, data.to_vec()));
    }
    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.0
            .push((ev.reason, ev.max_len.into(), ev.data.to_vec()));
    }
}

/// An Ethernet (maybe VLAN-tagged) / IPv4 / UDP or TCP frame with
/// `ttl`, a few bytes overwritten, maybe truncated.
fn frame() -> impl Strategy<Value = Vec<u8>> {
    (
        0u8..3,
        any::<bool>(),
        0u8..4,
        proptest::collection::vec((0usize..64, any::<u8>()), 0..3),
        proptest::option::weighted(0.2, 0usize..70),
    )
        .prop_map(|(tags, tcp, ttl, muts, cut)| {
            let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
            // None, one VLAN tag, or two (QinQ).
            for t in 0..tags {
                f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07 + t]);
            }
            f.extend_from_slice(&[0x08, 0x00]);
            let l4_len: u16 = if tcp { 20 } else { 8 };
            let total = 20 + l4_len;
            f.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, ttl, if tcp { 6 } else { 17 }]);
            let at = f.len() - 8;
            f[at..at + 2].copy_from_slice(&total.to_be_bytes());
            f.extend_from_slice(&[0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            f.extend_from_slice(&[0x03, 0xe8, 0x00, 0x35]);
            if tcp {
                f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0x12, 0x34, 0, 0]);
            } else {
                f.extend_from_slice(&[0, 8, 0x12, 0x34]);
            }
            for (at, b) in muts {
                if let Some(x) = f.get_mut(at) {
                    *x = b;
                }
            }
            if let Some(n) = cut {
                f.truncate(n);
            }
            f
        })
}

fn mac_pair() -> impl Strategy<Value = Vec<Op>> {
    (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<bool>()).prop_map(|(d, s, dst_first)| {
        let (d, s) = (
            Op::SetField(SetField::EthDst(d)),
            Op::SetField(SetField::EthSrc(s)),
        );
        if dst_first {
            vec![d, s]
        } else {
            vec![s, d]
        }
    })
}

fn output() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u32..5).prop_map(|port| Op::Output { port, max_len: 0 }),
        Just(Op::Output {
            port: port_no::CONTROLLER,
            max_len: 128
        }),
        Just(Op::Output {
            port: port_no::IN_PORT,
            max_len: 0
        }),
    ]
}

/// Op lists made of runs `fuse` may fuse and single ops around them.
fn ops() -> impl Strategy<Value = Vec<Op>> {
    let chunk = prop_oneof![
        3 => (mac_pair(), output()).prop_map(|(m, o)| {
            let mut v = vec![Op::DecNwTtl];
            v.extend(m);
            v.push(o);
            v
        }),
        2 => mac_pair(),
        1 => Just(vec![Op::DecNwTtl]),
        1 => output().prop_map(|o| vec![o]),
        1 => any::<u32>().prop_map(|a| vec![Op::SetField(SetField::Ipv4Dst(a))]),
        1 => any::<u16>().prop_map(|p| vec![Op::SetField(SetField::UdpSrc(p))]),
        1 => any::<u16>().prop_map(|p| vec![Op::SetField(SetField::TcpDst(p))]),
        1 => any::<[u8; 6]>().prop_map(|m| vec![Op::SetField(SetField::EthDst(m))]),
        1 => Just(vec![Op::PopVlan]),
        2 => (any::<[u8; 6]>(), output())
            .prop_map(|(m, o)| vec![Op::SetField(SetField::EthDst(m)), o]),
        3 => (any::<u32>(), any::<bool>(), any::<[u8; 6]>(), output()).prop_map(|(a, dst, m, o)| {
            let a = if dst { SetField::Ipv4Dst(a) } else { SetField::Ipv4Src(a) };
            vec![Op::SetField(a), Op::SetField(SetField::EthDst(m)), o]
        }),
        3 => (any::<u32>(), any::<bool>(), any::<u16>(), 0u8..4).prop_map(|(a, dst, p, k)| {
            let a = if dst { SetField::Ipv4Dst(a) } else { SetField::Ipv4Src(a) };
            let p = [SetField::TcpSrc, SetField::TcpDst, SetField::UdpSrc, SetField::UdpDst]
                [usize::from(k)](p);
            vec![Op::SetField(a), Op::SetField(p)]
        }),
    ];
    proptest::collection::vec(chunk, 1..5).prop_map(|c| c.concat())
}

fn layer_of(i: u8) -> Layer {
    [Layer::None, Layer::L2, Layer::L3, Layer::L4][usize::from(i % 4)]
}

/// Runs `ops` on a copy of the packet: (bytes, key, flow, events).
fn run(
    p: &mut Pipeline,
    pkt: &PacketBuf,
    key: &FlowKey,
    ops: &[Op],
) -> (Vec<u8>, FlowKey, Flow, Rec) {
    let (mut pkt, mut key) = (pkt.clone(), *key);
    let mut ctx = Ctx::received(1, 0);
    let mut rec = Rec::default();
    let flow = p.execute_ops(&mut pkt, &mut key, ops, &mut ctx, false, &mut rec);
    (pkt.data().to_vec(), key, flow, rec)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn fused_ops_equal_ops_one_by_one(f in frame(), depth in 0u8..4, ops in ops()) {
        let mut p = Pipeline::default();
        for i in 1..=3 {
            p.ports.insert(i, PortInfo::up());
        }
        let pkt = PacketBuf::from_slice(&f);
        let mut key = FlowKey::new(1);
        let _ = packet::parse_to(pkt.data(), &mut key, layer_of(depth));
        let fused = fuse(&ops);
        prop_assert!(fused.len() <= ops.len());
        let done = run(&mut p, &pkt, &key, &ops);
        let after = done.1;
        prop_assert_eq!(run(&mut p, &pkt, &key, &fused), done);
        // The ops change no key field outside what they say they
        // write (`Op::writes`, which the batch's lookups rely on),
        // fused or not, on a key parsed as deep as they need (as the
        // pipeline parses: `Pipeline::parse_layer`; on a shallower key
        // an op parses further first, which adds fields).
        let need = ops.iter().map(Op::layer).max().unwrap_or(Layer::None);
        let lists: &[&[Op]] = if key.depth >= need { &[&ops, &fused] } else { &[] };
        for &list in lists {
            let mut writes = packet::FieldSet::EMPTY;
            for op in list {
                writes.insert_all(op.writes());
            }
            for f in packet::Field::ALL {
                if !writes.contains(f) {
                    prop_assert_eq!(after.present.contains(f), key.present.contains(f), "{:?}", f);
                    prop_assert_eq!(
                        crate::matcher::key_bits(&after, f),
                        crate::matcher::key_bits(&key, f),
                        "{:?} changed, not in {:?}", f, writes
                    );
                }
            }
        }
    }
}

#[test]
fn fuses_the_runs() {
    let (d, s) = ([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1]);
    let out = |port| Op::Output { port, max_len: 0 };
    let ops = [
        Op::DecNwTtl,
        Op::SetField(SetField::EthSrc(s)),
        Op::SetField(SetField::EthDst(d)),
        out(3),
        Op::SetField(SetField::EthDst(d)),
        Op::SetField(SetField::EthSrc(s)),
        Op::DecNwTtl,
        Op::SetField(SetField::EthSrc(s)),
        Op::SetField(SetField::EthDst(d)),
        out(port_no::CONTROLLER),
        Op::SetField(SetField::Ipv4Dst(7)),
        Op::SetField(SetField::EthDst(d)),
        out(2),
        Op::SetField(SetField::Ipv4Src(8)),
        Op::SetField(SetField::EthDst(d)),
        out(port_no::IN_PORT),
    ];
    assert_eq!(
        &*fuse(&ops),
        &[
            Op::Route {
                dst: d,
                src: s,
                port: 3
            },
            Op::SetMacs { dst: d, src: s },
            Op::DecNwTtl,
            Op::SetMacs { dst: d, src: s },
            out(port_no::CONTROLLER),
            Op::SetIpv4EthDstOutput {
                addr: 7,
                addr_field: packet::Field::Ipv4Dst,
                dst: d,
                port: 2
            },
            Op::SetField(SetField::Ipv4Src(8)),
            Op::SetField(SetField::EthDst(d)),
            out(port_no::IN_PORT),
        ][..]
    );
}
