//! Property tests: the parser and the rewrites never panic on any bytes,
//! the key after a rewrite equals a fresh parse of the new packet, and
//! incremental checksum updates equal a full recomputation.

use packet::{
    copy_ttl_in, copy_ttl_out, dec_mpls_ttl, dec_nw_ttl, dec_nw_ttl_general, parse, parse_to,
    pop_mpls, pop_pbb, pop_vlan, push_mpls, push_pbb, push_vlan, recompute_checksums, set_field,
    set_field_general, set_ipv4_port, set_macs, set_mpls_ttl, set_nw_ttl, Field, FlowKey, Layer,
    PacketBuf, RewriteError, SetField,
};
use proptest::prelude::*;
use serde_json::Value;
use std::sync::OnceLock;

/// Well-formed frames from the scapy vectors: the seeds we mutate.
fn seeds() -> &'static Vec<Vec<u8>> {
    static SEEDS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/packets/");
        let mut out = Vec::new();
        for (file, key) in [("parse.json", "hex"), ("rewrite.json", "input")] {
            let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            for item in v.as_array().unwrap() {
                out.push(hex::decode(item[key].as_str().unwrap()).unwrap());
            }
        }
        out
    })
}

/// The seed `seed` picks, parsed whole, with every checksum made correct:
/// `None` for a seed that does not parse or is an IP fragment (whose L4
/// checksum cannot be recomputed from the fragment).
fn whole_seed(seed: prop::sample::Index) -> Option<(PacketBuf, FlowKey)> {
    let s = seeds();
    let mut buf = PacketBuf::from_slice(&s[seed.index(s.len())]);
    let mut key = FlowKey::new(1);
    if parse(buf.data(), &mut key).is_err() || key.ip_frag != 0 {
        return None;
    }
    recompute_checksums(buf.data_mut(), &key);
    Some((buf, key))
}

#[derive(Debug, Clone)]
enum Op {
    Set(u8, [u8; 16]),
    PushVlan(bool),
    PopVlan,
    PushMpls(bool),
    PopMpls(u16),
    PushPbb,
    PopPbb,
    DecNwTtl,
    SetNwTtl(u8),
    DecMplsTtl,
    SetMplsTtl(u8),
    CopyTtlOut,
    CopyTtlIn,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..45, any::<[u8; 16]>()).prop_map(|(f, v)| Op::Set(f, v)),
        1 => any::<bool>().prop_map(Op::PushVlan),
        1 => Just(Op::PopVlan),
        1 => any::<bool>().prop_map(Op::PushMpls),
        1 => prop_oneof![Just(0x0800u16), Just(0x86dd), Just(0x8847), any::<u16>()].prop_map(Op::PopMpls),
        1 => Just(Op::PushPbb),
        1 => Just(Op::PopPbb),
        1 => Just(Op::DecNwTtl),
        1 => any::<u8>().prop_map(Op::SetNwTtl),
        1 => Just(Op::DecMplsTtl),
        1 => any::<u8>().prop_map(Op::SetMplsTtl),
        1 => Just(Op::CopyTtlOut),
        1 => Just(Op::CopyTtlIn),
    ]
}

/// A set-field value of the right width for `f`, masked into range.
fn set_of(f: Field, raw: &[u8; 16]) -> Option<SetField> {
    let w = f.width();
    let mut v = raw[..w].to_vec();
    // Keep values mostly in range; out-of-range ones must be refused anyway.
    if raw[15] & 1 == 0 {
        let max_bits: Option<u32> = match f {
            Field::VlanVid => Some(13),
            Field::VlanPcp | Field::MplsTc => Some(3),
            Field::IpDscp => Some(6),
            Field::IpEcn => Some(2),
            Field::Ipv6Flabel | Field::MplsLabel => Some(20),
            Field::MplsBos => Some(1),
            _ => None,
        };
        if let Some(bits) = max_bits {
            let n = v.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b)) & ((1 << bits) - 1);
            let bytes = n.to_be_bytes();
            v = bytes[8 - w..].to_vec();
        }
    }
    SetField::from_value(f, &v)
}

fn apply(buf: &mut PacketBuf, key: &mut FlowKey, op: &Op) -> Result<(), RewriteError> {
    match *op {
        Op::Set(f, ref v) => match Field::from_u8(f).and_then(|f| set_of(f, v)) {
            Some(sf) => set_field(buf, key, sf),
            None => Ok(()),
        },
        Op::PushVlan(q) => push_vlan(buf, key, if q { 0x88a8 } else { 0x8100 }),
        Op::PopVlan => pop_vlan(buf, key),
        Op::PushMpls(m) => push_mpls(buf, key, if m { 0x8848 } else { 0x8847 }),
        Op::PopMpls(e) => pop_mpls(buf, key, e),
        Op::PushPbb => push_pbb(buf, key, 0x88e7),
        Op::PopPbb => pop_pbb(buf, key),
        Op::DecNwTtl => dec_nw_ttl(buf, key),
        Op::SetNwTtl(t) => set_nw_ttl(buf, key, t),
        Op::DecMplsTtl => dec_mpls_ttl(buf, key),
        Op::SetMplsTtl(t) => set_mpls_ttl(buf, key, t),
        Op::CopyTtlOut => copy_ttl_out(buf, key),
        Op::CopyTtlIn => copy_ttl_in(buf, key),
    }
}

/// A seed frame with a few bytes overwritten and maybe truncated.
fn mutated() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(seed, muts, cut, do_cut)| {
            let s = seeds();
            let mut f = s[seed.index(s.len())].clone();
            if !f.is_empty() {
                for (at, b) in muts {
                    let i = at.index(f.len());
                    f[i] = b;
                }
            }
            if do_cut {
                let n = cut.index(f.len() + 1);
                f.truncate(n);
            }
            f
        })
}

fn fresh_key(data: &[u8], like: &FlowKey) -> FlowKey {
    let mut k = FlowKey::new(like.in_port);
    k.present = like.present;
    k.metadata = like.metadata;
    k.tunnel_id = like.tunnel_id;
    let _ = parse(data, &mut k);
    k
}

/// Offsets never point outside the frame.
fn check_offsets(k: &FlowKey, len: usize) {
    let o = k.offsets;
    for off in [
        o.eth_type, o.mpls, o.pbb, o.l3, o.l3_end, o.l4, o.payload, o.nd_sll, o.nd_tll,
    ] {
        assert!(usize::from(off) <= len, "{o:?} len {len}");
    }
}

/// The packet's checksums equal ones computed from scratch (after `what`).
fn checksums_whole(
    buf: &PacketBuf,
    key: &FlowKey,
    what: &dyn std::fmt::Debug,
) -> Result<(), TestCaseError> {
    let mut full = buf.data().to_vec();
    recompute_checksums(&mut full, key);
    prop_assert_eq!(
        hex::encode(&full),
        hex::encode(buf.data()),
        "after {:?}",
        what
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..160)) {
        let mut k = FlowKey::new(1);
        let _ = parse(&bytes, &mut k);
        check_offsets(&k, bytes.len());
    }

    #[test]
    fn parse_mutated_and_lazy_equals_full(frame in mutated()) {
        let mut full = FlowKey::new(1);
        let r = parse(&frame, &mut full);
        check_offsets(&full, frame.len());
        // Layer by layer gives the same key and the same result.
        let mut lazy = FlowKey::new(1);
        let mut r2 = parse_to(&frame, &mut lazy, Layer::L2);
        if r2.is_ok() {
            r2 = packet::continue_to(&frame, &mut lazy, Layer::L3);
        }
        if r2.is_ok() {
            r2 = packet::continue_to(&frame, &mut lazy, Layer::L4);
        }
        prop_assert_eq!(r, r2);
        prop_assert_eq!(full, lazy);
    }

    #[test]
    fn rewrites_never_panic_and_keep_key_true(
        frame in mutated(),
        ops in prop::collection::vec(op(), 1..6),
    ) {
        let mut buf = PacketBuf::from_slice(&frame);
        let mut key = FlowKey::new(2);
        let _ = parse(buf.data(), &mut key);
        for op in &ops {
            let before = buf.clone();
            let before_key = key;
            match apply(&mut buf, &mut key, op) {
                Ok(()) => {
                    let fresh = fresh_key(buf.data(), &key);
                    prop_assert_eq!(key, fresh, "after {:?}", op);
                }
                Err(_) => {
                    prop_assert_eq!(&buf, &before, "failed {:?} changed the packet", op);
                    prop_assert_eq!(key, before_key);
                }
            }
        }
    }

    #[test]
    fn incremental_checksums_equal_full(
        seed in any::<prop::sample::Index>(),
        ops in prop::collection::vec((0u8..40, any::<[u8; 16]>()), 1..5),
    ) {
        // Start from correct checksums.
        let Some((mut buf, mut key)) = whole_seed(seed) else {
            return Ok(());
        };
        for (f, v) in &ops {
            let Some(sf) = Field::from_u8(*f).and_then(|f| set_of(f, v)) else {
                continue;
            };
            // ETH_TYPE and IP_PROTO change what the bytes after them are
            // read as and leave those bytes (and their checksums) as they
            // were (docs/conformance.md): a checksum computed from scratch
            // under the new type is not what the packet carries, by design.
            if matches!(sf, SetField::EthType(_) | SetField::IpProto(_)) {
                continue;
            }
            if set_field(&mut buf, &mut key, sf).is_err() {
                continue;
            }
            checksums_whole(&buf, &key, &sf)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Pop VLAN on a key parsed to any depth (the pipeline parses only as
    /// deep as its rules need) leaves the key a new parse to that depth
    /// would give.
    #[test]
    fn pop_vlan_keeps_a_partial_key_true(
        frame in mutated(),
        tags in 0usize..3,
        depth in 0usize..4,
    ) {
        let mut buf = PacketBuf::from_slice(&frame);
        let mut key = FlowKey::new(2);
        let _ = parse(buf.data(), &mut key);
        for _ in 0..tags {
            let _ = push_vlan(&mut buf, &mut key, 0x8100);
        }
        let layer = [Layer::None, Layer::L2, Layer::L3, Layer::L4][depth];
        let mut key = FlowKey::new(2);
        let _ = parse_to(buf.data(), &mut key, layer);
        if pop_vlan(&mut buf, &mut key).is_ok() {
            let mut again = key;
            packet::reparse(&buf, &mut again);
            prop_assert_eq!(key, again);
        }
    }
}

/// The rewrites `set_field` and `dec_nw_ttl` have fast paths for, as
/// (field, value) for set-field or `None` for dec_nw_ttl.
fn fast_op() -> impl Strategy<Value = Option<SetField>> {
    prop_oneof![
        1 => Just(None),
        1 => any::<[u8; 6]>().prop_map(|m| Some(SetField::EthDst(m))),
        1 => any::<[u8; 6]>().prop_map(|m| Some(SetField::EthSrc(m))),
        2 => any::<u32>().prop_map(|a| Some(SetField::Ipv4Src(a))),
        2 => any::<u32>().prop_map(|a| Some(SetField::Ipv4Dst(a))),
        1 => any::<u16>().prop_map(|p| Some(SetField::TcpSrc(p))),
        1 => any::<u16>().prop_map(|p| Some(SetField::TcpDst(p))),
        1 => any::<u16>().prop_map(|p| Some(SetField::UdpSrc(p))),
        1 => any::<u16>().prop_map(|p| Some(SetField::UdpDst(p))),
    ]
}

fn layer_of(i: u8) -> Layer {
    match i % 4 {
        0 => Layer::None,
        1 => Layer::L2,
        2 => Layer::L3,
        _ => Layer::L4,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The fast paths of `set_field` and `dec_nw_ttl` do exactly what the
    /// general code does (packet, key, result), on mutated and truncated
    /// frames with keys parsed to any depth.
    #[test]
    fn fast_paths_equal_general(
        frame in mutated(),
        depth in 0u8..4,
        ops in prop::collection::vec(fast_op(), 1..6),
    ) {
        let mut fast = PacketBuf::from_slice(&frame);
        let mut fast_key = FlowKey::new(2);
        let _ = parse_to(fast.data(), &mut fast_key, layer_of(depth));
        let (mut gen, mut gen_key) = (fast.clone(), fast_key);
        for op in &ops {
            let (a, b) = match *op {
                Some(sf) => (
                    set_field(&mut fast, &mut fast_key, sf),
                    set_field_general(&mut gen, &mut gen_key, sf),
                ),
                None => (
                    dec_nw_ttl(&mut fast, &mut fast_key),
                    dec_nw_ttl_general(&mut gen, &mut gen_key),
                ),
            };
            prop_assert_eq!(a, b, "{:?}", op);
            prop_assert_eq!(fast.data(), gen.data(), "{:?}", op);
            prop_assert_eq!(fast_key, gen_key, "{:?}", op);
        }
    }

    /// After the fast rewrites (and dec_nw_ttl) every checksum equals one
    /// computed from scratch (UDP checksums of 0 included).
    #[test]
    fn fast_rewrites_keep_checksums_whole(
        seed in any::<prop::sample::Index>(),
        udp_none in any::<bool>(),
        ops in prop::collection::vec(fast_op(), 1..8),
    ) {
        let Some((mut buf, mut key)) = whole_seed(seed) else {
            return Ok(());
        };
        if udp_none && key.ip_proto == 17 && key.offsets.l4 != 0 {
            let at = usize::from(key.offsets.l4) + 6;
            if let Some(c) = buf.data_mut().get_mut(at..at + 2) {
                c.fill(0);
            }
        }
        for op in &ops {
            let r = match *op {
                Some(sf) => set_field(&mut buf, &mut key, sf),
                None => dec_nw_ttl(&mut buf, &mut key),
            };
            if r.is_err() {
                continue;
            }
            checksums_whole(&buf, &key, op)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `set_macs` does what set-field `eth_dst` then `eth_src` do
    /// (packet, key, first error), on mutated and truncated frames with
    /// keys parsed to any depth.
    #[test]
    fn set_macs_equals_two_set_fields(
        frame in mutated(),
        depth in 0u8..4,
        dst in any::<[u8; 6]>(),
        src in any::<[u8; 6]>(),
    ) {
        let mut fused = PacketBuf::from_slice(&frame);
        let mut fused_key = FlowKey::new(2);
        let _ = parse_to(fused.data(), &mut fused_key, layer_of(depth));
        let (mut two, mut two_key) = (fused.clone(), fused_key);
        let a = set_macs(&mut fused, &mut fused_key, &dst, &src);
        let b1 = set_field(&mut two, &mut two_key, SetField::EthDst(dst));
        let b2 = set_field(&mut two, &mut two_key, SetField::EthSrc(src));
        prop_assert_eq!(a, b1.and(b2));
        prop_assert_eq!(fused.data(), two.data());
        prop_assert_eq!(fused_key, two_key);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `set_ipv4_port` does what the address set-field then the port
    /// set-field do (packet, key, first error), on mutated and truncated
    /// frames with keys parsed to any depth.
    #[test]
    fn set_ipv4_port_equals_two_set_fields(
        frame in mutated(),
        depth in 0u8..4,
        a in any::<u32>(),
        a_dst in any::<bool>(),
        p in any::<u16>(),
        k in 0usize..4,
    ) {
        let mut fused = PacketBuf::from_slice(&frame);
        let mut fused_key = FlowKey::new(2);
        let _ = parse_to(fused.data(), &mut fused_key, layer_of(depth));
        let (mut two, mut two_key) = (fused.clone(), fused_key);
        let af = if a_dst { Field::Ipv4Dst } else { Field::Ipv4Src };
        let pf = [Field::TcpSrc, Field::TcpDst, Field::UdpSrc, Field::UdpDst][k];
        let r = set_ipv4_port(&mut fused, &mut fused_key, af, a, pf, p);
        let sa = SetField::from_value(af, &a.to_be_bytes()).unwrap();
        let sp = SetField::from_value(pf, &p.to_be_bytes()).unwrap();
        let x = set_field(&mut two, &mut two_key, sa);
        let y = set_field(&mut two, &mut two_key, sp);
        prop_assert_eq!(r, x.and(y));
        prop_assert_eq!(fused.data(), two.data());
        prop_assert_eq!(fused_key, two_key);
    }
}

/// A 16-bit value near the edges of one's complement arithmetic (0 and
/// 0xffff, the two zeros; 1 and 0xfffe) or any value.
fn ck_edge() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(0u16),
        Just(0xffff),
        Just(1),
        Just(0xfffe),
        any::<u16>()
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// `set_ipv4_port` equals the two set-fields, and the general
    /// rewrites, where their checksum arithmetic could part: stored IP and
    /// L4 checksums of 0, 0xffff and around, and new values that make a
    /// delta 0 or 0xffff (the address or port unchanged, the address's
    /// halves swapped, the all-zero and all-one words), on TCP and UDP
    /// frames with and without VLAN tags and IP options.
    #[test]
    fn fast_ipv4_port_checksum_edges(
        seed in any::<prop::sample::Index>(),
        ip_ck in ck_edge(),
        l4_ck in ck_edge(),
        a_dst in any::<bool>(),
        dst_port in any::<bool>(),
        a_kind in 0u8..7,
        any_a in any::<u32>(),
        p_kind in 0u8..4,
        any_p in any::<u16>(),
    ) {
        let Some((mut buf, key)) = whole_seed(seed) else {
            return Ok(());
        };
        if key.eth_type != 0x0800 || !(key.ip_proto == 6 || key.ip_proto == 17) {
            return Ok(());
        }
        let (l3, l4) = (usize::from(key.offsets.l3), usize::from(key.offsets.l4));
        let l4_at = l4 + if key.ip_proto == 6 { 16 } else { 6 };
        for (at, v) in [(l3 + 10, ip_ck), (l4_at, l4_ck)] {
            if let Some(c) = buf.data_mut().get_mut(at..at + 2) {
                c.copy_from_slice(&v.to_be_bytes());
            }
        }
        let af = if a_dst { Field::Ipv4Dst } else { Field::Ipv4Src };
        let old_a = if a_dst { key.ipv4_dst } else { key.ipv4_src };
        let a = [any_a, old_a, old_a.rotate_left(16), 0, 0xffff_0000, 0xffff, u32::MAX]
            [usize::from(a_kind)];
        let tcp = key.ip_proto == 6;
        let pf = match (tcp, dst_port) {
            (true, false) => Field::TcpSrc,
            (true, true) => Field::TcpDst,
            (false, false) => Field::UdpSrc,
            (false, true) => Field::UdpDst,
        };
        let old_p = if dst_port { key.tp_dst } else { key.tp_src };
        let p = [any_p, old_p, 0, 0xffff][usize::from(p_kind)];
        let sa = SetField::from_value(af, &a.to_be_bytes()).unwrap();
        let sp = SetField::from_value(pf, &p.to_be_bytes()).unwrap();
        let (mut fused, mut fused_key) = (buf.clone(), key);
        let r = set_ipv4_port(&mut fused, &mut fused_key, af, a, pf, p);
        let (mut two, mut two_key) = (buf.clone(), key);
        let x = set_field(&mut two, &mut two_key, sa);
        let y = set_field(&mut two, &mut two_key, sp);
        let (mut gen, mut gen_key) = (buf, key);
        let gx = set_field_general(&mut gen, &mut gen_key, sa);
        let gy = set_field_general(&mut gen, &mut gen_key, sp);
        prop_assert_eq!(r, Ok(()));
        prop_assert_eq!(r, x.and(y));
        prop_assert_eq!(r, gx.and(gy));
        prop_assert_eq!(hex::encode(fused.data()), hex::encode(two.data()));
        prop_assert_eq!(hex::encode(fused.data()), hex::encode(gen.data()));
        prop_assert_eq!(fused_key, two_key);
        prop_assert_eq!(fused_key, gen_key);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// `rewrite::set_ipv4_addr` does what the set-field of the address
    /// does (packet, key, result), on mutated and truncated frames with
    /// keys parsed to any depth.
    #[test]
    fn set_ipv4_addr_equals_set_field(
        frame in mutated(),
        depth in 0u8..4,
        a in any::<u32>(),
        a_dst in any::<bool>(),
    ) {
        let mut one = PacketBuf::from_slice(&frame);
        let mut one_key = FlowKey::new(2);
        let _ = parse_to(one.data(), &mut one_key, layer_of(depth));
        let (mut sf, mut sf_key) = (one.clone(), one_key);
        let af = if a_dst { Field::Ipv4Dst } else { Field::Ipv4Src };
        let r = packet::rewrite::set_ipv4_addr(&mut one, &mut one_key, af, a);
        let s = SetField::from_value(af, &a.to_be_bytes()).unwrap();
        prop_assert_eq!(r, set_field(&mut sf, &mut sf_key, s));
        prop_assert_eq!(one.data(), sf.data());
        prop_assert_eq!(one_key, sf_key);
    }
}
