//! Tests of the parser (`crate::parse`): IPv4/IPv6 with extension
//! headers, VLAN and QinQ, MPLS, PBB, ARP, lying lengths and every prefix
//! of a frame.

use super::*;
use crate::key::Offsets;

/// Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 TTL 64 / UDP 1234 -> 80 / "hi".
pub(crate) const UDP4: [u8; 44] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45, 0x00,
    0x00, 0x1e, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xcc, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00,
    0x00, 0x02, 0x04, 0xd2, 0x00, 0x50, 0x00, 0x0a, 0x7e, 0x4c, 0x68, 0x69,
];

/// Ethernet / IPv6 ::1 -> ::2 hlim 5 / hop-by-hop / TCP 1 -> 2 SYN.
const V6_HOP_TCP: [u8; 82] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x86, 0xdd, 0x60, 0x00,
    0x00, 0x00, 0x00, 0x1c, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x06, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x02, 0x20, 0x00, 0x8f, 0xdd,
    0x00, 0x00,
];

/// Ethernet / MPLS label 0x12345 TC 5 BoS TTL 7 / IPv4.
const MPLS_IP: [u8; 38] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0x47, 0x12, 0x34,
    0x5b, 0x07, 0x45, 0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x40, 0x00, 0x74, 0xe4, 0x01, 0x01,
    0x01, 0x01, 0x02, 0x02, 0x02, 0x02,
];

fn key_of(b: &[u8]) -> (FlowKey, ParseResult) {
    let mut k = FlowKey::new(1);
    let r = parse(b, &mut k);
    (k, r)
}

#[test]
fn ipv4_udp() {
    let (k, r) = key_of(&UDP4);
    assert_eq!(r, Ok(()));
    assert_eq!(k.eth_dst, [2, 0, 0, 0, 0, 2]);
    assert_eq!(k.eth_src, [2, 0, 0, 0, 0, 1]);
    assert_eq!(k.eth_type, 0x0800);
    assert_eq!(k.vlan_vid, 0);
    assert!(k.has(Field::VlanVid) && !k.has(Field::VlanPcp));
    assert_eq!((k.ipv4_src, k.ipv4_dst), (0x0a00_0001, 0x0a00_0002));
    assert_eq!((k.ip_proto, k.ip_ttl, k.ip_dscp, k.ip_ecn), (17, 64, 0, 0));
    assert_eq!((k.tp_src, k.tp_dst), (1234, 80));
    assert!(k.has(Field::UdpSrc) && !k.has(Field::TcpSrc));
    assert_eq!(
        k.offsets,
        Offsets {
            eth_type: 12,
            l3: 14,
            l3_end: 44,
            l4: 34,
            payload: 42,
            ..Offsets::default()
        }
    );
    assert_eq!(k.depth, Layer::L4);
}

#[test]
fn lazy_layers() {
    let mut k = FlowKey::new(1);
    assert_eq!(parse_to(&UDP4, &mut k, Layer::L2), Ok(()));
    assert!(k.has(Field::EthType) && !k.has(Field::Ipv4Src));
    assert_eq!(k.depth, Layer::L2);
    assert_eq!(continue_to(&UDP4, &mut k, Layer::L3), Ok(()));
    assert!(k.has(Field::Ipv4Src) && !k.has(Field::UdpSrc));
    assert_eq!(continue_to(&UDP4, &mut k, Layer::L4), Ok(()));
    let (full, _) = key_of(&UDP4);
    assert_eq!(k, full);
}

#[test]
fn vlan_and_qinq() {
    let mut f = UDP4.to_vec();
    // Insert 802.1ad VID 300 PCP 2, then 802.1Q VID 42 PCP 7.
    f.splice(12..12, [0x88, 0xa8, 0x41, 0x2c, 0x81, 0x00, 0xe0, 0x2a]);
    let (k, r) = key_of(&f);
    assert_eq!(r, Ok(()));
    assert_eq!((k.vlan_vid, k.vlan_pcp), (0x1000 | 300, 2));
    assert_eq!((k.inner_vlan_vid, k.inner_vlan_pcp), (0x1000 | 42, 7));
    assert_eq!(k.eth_type, 0x0800);
    assert_eq!(
        (k.offsets.vlan_tags, k.offsets.eth_type, k.offsets.l3),
        (2, 20, 22)
    );
    assert_eq!(k.tp_dst, 80);
}

#[test]
fn too_many_tags() {
    let mut f = UDP4.to_vec();
    for _ in 0..9 {
        f.splice(12..12, [0x81, 0x00, 0x00, 0x01]);
    }
    let (k, r) = key_of(&f);
    assert_eq!(r, Err(err(Layer::L2, Reason::TooManyTags)));
    assert_eq!(k.vlan_vid, 0x1001);
    assert_eq!(k.depth, Layer::L4);
}

#[test]
fn mpls() {
    let (k, r) = key_of(&MPLS_IP);
    assert_eq!(r, Ok(()));
    assert_eq!(k.eth_type, 0x8847);
    assert_eq!(
        (k.mpls_label, k.mpls_tc, k.mpls_bos, k.mpls_ttl),
        (0x12345, 5, 1, 7)
    );
    assert_eq!(k.offsets.mpls, 14);
    // No IP fields under MPLS.
    assert!(!k.has(Field::Ipv4Src));
}

#[test]
fn pbb() {
    let mut f = UDP4.to_vec();
    f.splice(
        12..12,
        [
            0x88, 0xe7, 0x60, 0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        ],
    );
    let (k, r) = key_of(&f);
    assert_eq!(r, Ok(()));
    assert_eq!(
        (k.eth_type, k.pbb_isid, k.offsets.pbb),
        (0x88e7, 0xabcdef, 14)
    );
}

#[test]
fn arp() {
    let f = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06, // eth
        0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01, // ether/ipv4 request
        2, 0, 0, 0, 0, 1, 10, 0, 0, 1, // sha spa
        0, 0, 0, 0, 0, 0, 10, 0, 0, 2, // tha tpa
    ];
    let (k, r) = key_of(&f);
    assert_eq!(r, Ok(()));
    assert_eq!(k.arp_op, 1);
    assert_eq!((k.arp_spa, k.arp_tpa), (0x0a00_0001, 0x0a00_0002));
    assert_eq!(k.arp_sha, [2, 0, 0, 0, 0, 1]);
    assert_eq!(k.arp_tha, [0; 6]);
    let (k, r) = key_of(&f[..40]);
    assert_eq!(r, Err(err(Layer::L3, Reason::Truncated)));
    assert!(!k.has(Field::ArpOp));
}

#[test]
fn ipv6_hop_tcp() {
    let (k, r) = key_of(&V6_HOP_TCP);
    assert_eq!(r, Ok(()));
    assert_eq!((k.ipv6_src, k.ipv6_dst), (1, 2));
    assert_eq!((k.ip_proto, k.ip_ttl), (6, 5));
    assert_eq!(k.ipv6_exthdr, exthdr::HOP);
    assert_eq!((k.tp_src, k.tp_dst), (1, 2));
    assert_eq!((k.offsets.l3, k.offsets.l4, k.offsets.l3_end), (14, 62, 82));
}

#[test]
fn ipv6_ext_len_lies() {
    let mut f = V6_HOP_TCP;
    f[55] = 200; // hop-by-hop length far past the end
    let (k, r) = key_of(&f);
    assert_eq!(r, Err(err(Layer::L3, Reason::BadExtHeader)));
    assert_eq!(k.ipv6_exthdr, exthdr::HOP);
    assert!(k.has(Field::Ipv6Src) && !k.has(Field::IpProto) && !k.has(Field::TcpSrc));
}

#[test]
fn ipv6_ext_order_flags() {
    let mut o = ExtHdrOrder::default();
    o.see(exthdr::ROUTER, RANK_ROUTER);
    o.see(exthdr::HOP, RANK_HOP);
    assert_eq!(o.flags, exthdr::ROUTER | exthdr::HOP | exthdr::UNSEQ);
    let mut o = ExtHdrOrder::default();
    o.see_dest();
    o.see(exthdr::ROUTER, RANK_ROUTER);
    o.see_dest();
    assert_eq!(o.flags, exthdr::DEST | exthdr::ROUTER);
    o.see_dest();
    assert_eq!(o.flags, exthdr::DEST | exthdr::ROUTER | exthdr::UNREP);
}

#[test]
fn ipv4_lies() {
    let mut f = UDP4;
    f[14] = 0x44; // IHL 4
    assert_eq!(key_of(&f).1, Err(err(Layer::L3, Reason::BadHeaderLength)));
    let mut f = UDP4;
    f[17] = 0xff; // total length 255 > frame
    let (k, r) = key_of(&f);
    assert_eq!(r, Err(err(Layer::L3, Reason::BadTotalLength)));
    assert!(k.has(Field::Ipv4Src) && !k.has(Field::UdpSrc));
    assert_eq!(
        key_of(&UDP4[..37]).1,
        Err(err(Layer::L3, Reason::BadTotalLength))
    );
    let mut f = UDP4;
    f[17] = 23; // datagram ends 3 bytes into the UDP header
    let (k, r) = key_of(&f);
    assert_eq!(r, Err(err(Layer::L4, Reason::Truncated)));
    assert!(k.has(Field::IpProto) && !k.has(Field::UdpSrc));
    let mut f = UDP4;
    f[21] = 0x10; // fragment offset != 0: no L4
    let (k, r) = key_of(&f);
    assert_eq!(r, Ok(()));
    assert_eq!(k.ip_frag, frag::FRAGMENT | frag::LATER);
    assert!(!k.has(Field::UdpSrc));
}

#[test]
fn every_prefix_parses_without_panic() {
    for frame in [&UDP4[..], &V6_HOP_TCP[..], &MPLS_IP[..]] {
        for n in 0..=frame.len() {
            let mut k = FlowKey::new(1);
            let _ = parse(&frame[..n], &mut k);
        }
    }
    let (k, r) = key_of(&UDP4[..8]);
    assert_eq!(r, Err(err(Layer::L2, Reason::Truncated)));
    assert!(k.has(Field::EthDst) && !k.has(Field::EthSrc));
}
