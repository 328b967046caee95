//! Unit tests of the header rewrites, on hand-built frames and frames
//! from scapy.

use super::*;
use crate::buf::PacketBuf;
use crate::field::Field;
use crate::key::{FlowKey, Layer, VID_PRESENT};
use crate::parse::{parse, parse_to};
use crate::proto::{ethertype, ipproto};

/// Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 TTL 64 / UDP 1234 -> 80 / "hi".
const UDP4: [u8; 44] = [
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45, 0x00,
    0x00, 0x1e, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xcc, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00,
    0x00, 0x02, 0x04, 0xd2, 0x00, 0x50, 0x00, 0x0a, 0x7e, 0x4c, 0x68, 0x69,
];

fn setup(b: &[u8]) -> (PacketBuf, FlowKey) {
    let buf = PacketBuf::from_slice(b);
    let mut key = FlowKey::new(1);
    let _ = parse(buf.data(), &mut key);
    (buf, key)
}

#[test]
fn set_ipv4_src_updates_both_checksums() {
    let (mut buf, mut key) = setup(&UDP4);
    set_field(&mut buf, &mut key, SetField::Ipv4Src(0xc0a8_0101)).unwrap();
    let d = buf.data();
    assert_eq!(&d[26..30], &[192, 168, 1, 1]);
    assert_eq!(&d[24..26], &[0xaf, 0x23]); // IPv4 header checksum (scapy)
    assert_eq!(&d[40..42], &[0xc6, 0xa3]); // UDP checksum (scapy)
    assert_eq!(key.ipv4_src, 0xc0a8_0101);
}

#[test]
fn dec_ttl() {
    let (mut buf, mut key) = setup(&UDP4);
    dec_nw_ttl(&mut buf, &mut key).unwrap();
    assert_eq!(&buf.data()[22..26], &[0x3f, 0x11, 0x67, 0xcc]);
    assert_eq!(key.ip_ttl, 63);
    set_nw_ttl(&mut buf, &mut key, 1).unwrap();
    let before = buf.clone();
    assert_eq!(
        dec_nw_ttl(&mut buf, &mut key),
        Err(RewriteError::TtlExpired(1))
    );
    assert_eq!(buf, before);
}

#[test]
fn push_pop_vlan_moves_only_header() {
    let (mut buf, mut key) = setup(&UDP4);
    let payload_addr = buf.data()[14..].as_ptr() as usize;
    push_vlan(&mut buf, &mut key, ethertype::VLAN).unwrap();
    assert_eq!(&buf.data()[12..18], &[0x81, 0x00, 0x00, 0x00, 0x08, 0x00]);
    assert_eq!(buf.data()[18..].as_ptr() as usize, payload_addr);
    assert_eq!((key.vlan_vid, key.offsets.l3), (VID_PRESENT, 18));
    set_field(&mut buf, &mut key, SetField::VlanVid(0x1000 | 0xabc)).unwrap();
    set_field(&mut buf, &mut key, SetField::VlanPcp(5)).unwrap();
    assert_eq!(&buf.data()[14..16], &[0xaa, 0xbc]);
    assert_eq!(
        set_field(&mut buf, &mut key, SetField::VlanPcp(8)),
        Err(RewriteError::BadValue(Field::VlanPcp))
    );
    push_vlan(&mut buf, &mut key, ethertype::QINQ).unwrap();
    assert_eq!(
        &buf.data()[12..20],
        &[0x88, 0xa8, 0xaa, 0xbc, 0x81, 0x00, 0xaa, 0xbc]
    );
    pop_vlan(&mut buf, &mut key).unwrap();
    pop_vlan(&mut buf, &mut key).unwrap();
    assert_eq!(buf.data(), &UDP4[..]);
    assert_eq!(pop_vlan(&mut buf, &mut key), Err(RewriteError::NoVlan));
    let (_, fresh) = setup(&UDP4);
    assert_eq!(key, fresh);
}

#[test]
fn mpls_push_pop_ttl() {
    let (mut buf, mut key) = setup(&UDP4);
    push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
    assert_eq!(&buf.data()[12..18], &[0x88, 0x47, 0x00, 0x00, 0x01, 0x40]);
    assert_eq!((key.mpls_ttl, key.mpls_bos), (64, 1));
    dec_mpls_ttl(&mut buf, &mut key).unwrap();
    copy_ttl_in(&mut buf, &mut key).unwrap();
    assert_eq!(buf.data()[18 + 8], 63);
    set_mpls_ttl(&mut buf, &mut key, 9).unwrap();
    copy_ttl_out(&mut buf, &mut key).unwrap();
    assert_eq!(key.mpls_ttl, 63);
    set_mpls_ttl(&mut buf, &mut key, 0).unwrap();
    assert_eq!(
        dec_mpls_ttl(&mut buf, &mut key),
        Err(RewriteError::TtlExpired(0))
    );
    pop_mpls(&mut buf, &mut key, ethertype::IPV4).unwrap();
    let mut want = UDP4;
    // TTL 63 with the IPv4 checksum adjusted.
    want[22] = 0x3f;
    want[24..26].copy_from_slice(&[0x67, 0xcc]);
    assert_eq!(buf.data(), &want[..]);
    assert_eq!(key.ip_ttl, 63);
}

#[test]
fn pbb_push_pop() {
    let (mut buf, mut key) = setup(&UDP4);
    push_pbb(&mut buf, &mut key, ethertype::PBB).unwrap();
    assert_eq!(&buf.data()[..12], &UDP4[..12]);
    assert_eq!(&buf.data()[12..18], &[0x88, 0xe7, 0, 0, 0, 0]);
    assert_eq!(&buf.data()[18..], &UDP4[..]);
    set_field(&mut buf, &mut key, SetField::PbbIsid(0x10203)).unwrap();
    assert_eq!(key.pbb_isid, 0x10203);
    pop_pbb(&mut buf, &mut key).unwrap();
    assert_eq!(buf.data(), &UDP4[..]);
    assert_eq!(
        push_pbb(&mut buf, &mut key, 0x8100),
        Err(RewriteError::BadEthertype(0x8100))
    );
}

#[test]
fn missing_fields_and_bad_values() {
    let (mut buf, mut key) = setup(&UDP4);
    assert_eq!(
        set_field(&mut buf, &mut key, SetField::TcpSrc(1)),
        Err(RewriteError::MissingField(Field::TcpSrc))
    );
    assert_eq!(
        set_field(&mut buf, &mut key, SetField::Ipv6Src(1)),
        Err(RewriteError::MissingField(Field::Ipv6Src))
    );
    assert_eq!(
        set_field(&mut buf, &mut key, SetField::IpDscp(64)),
        Err(RewriteError::BadValue(Field::IpDscp))
    );
    assert_eq!(
        pop_mpls(&mut buf, &mut key, 0x800),
        Err(RewriteError::NoMpls)
    );
    assert_eq!(copy_ttl_out(&mut buf, &mut key), Err(RewriteError::NoMpls));
    assert_eq!(buf.data(), &UDP4[..]);
    set_field(&mut buf, &mut key, SetField::TunnelId(77)).unwrap();
    assert!(key.has(Field::TunnelId));
}

#[test]
fn lazy_key_is_completed_by_rewrite() {
    let buf0 = PacketBuf::from_slice(&UDP4);
    let mut buf = buf0.clone();
    let mut key = FlowKey::new(1);
    parse_to(buf.data(), &mut key, Layer::L2).unwrap();
    set_field(&mut buf, &mut key, SetField::UdpDst(53)).unwrap();
    assert_eq!(key.tp_dst, 53);
    assert_eq!(&buf.data()[36..38], &[0, 53]);
    let mut d = buf.data().to_vec();
    recompute_checksums(&mut d, &key);
    assert_eq!(d, buf.data());
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn set_sctp_port_recomputes_crc32c() {
    // scapy: Ether/IP/SCTP(sport=1234, then 4321, dport=80)/DATA "hello".
    let a = hex("020000000002020000000001080045000038000100004084663f0a0000010a00000204d2005000000000edace60a0000001500000000000000000000000068656c6c6f000000");
    let b = hex("020000000002020000000001080045000038000100004084663f0a0000010a00000210e1005000000000dd48b2ad0000001500000000000000000000000068656c6c6f000000");
    let (mut buf, mut key) = setup(&a);
    set_field(&mut buf, &mut key, SetField::SctpSrc(4321)).unwrap();
    assert_eq!(buf.data(), &b[..]);
    assert_eq!(key.tp_src, 4321);
    set_field(&mut buf, &mut key, SetField::SctpDst(80)).unwrap();
    assert_eq!(buf.data(), &b[..]);
    set_field(&mut buf, &mut key, SetField::SctpSrc(1234)).unwrap();
    assert_eq!(buf.data(), &a[..]);
}

#[test]
fn set_eth_type_rewrites_the_ethertype_after_the_tags() {
    let (mut buf, mut key) = setup(&UDP4);
    push_vlan(&mut buf, &mut key, ethertype::VLAN).unwrap();
    set_field(&mut buf, &mut key, SetField::EthType(0x86dd)).unwrap();
    assert_eq!(&buf.data()[12..18], &[0x81, 0x00, 0x00, 0x00, 0x86, 0xdd]);
    assert_eq!(key.eth_type, 0x86dd);
    // No longer parsed as IPv4.
    assert!(!key.has(Field::Ipv4Src));
    let before = buf.clone();
    assert_eq!(
        set_field(&mut buf, &mut key, SetField::EthType(0x05ff)),
        Err(RewriteError::BadValue(Field::EthType))
    );
    assert_eq!(buf, before);
    set_field(&mut buf, &mut key, SetField::EthType(0x0800)).unwrap();
    pop_vlan(&mut buf, &mut key).unwrap();
    assert_eq!(buf.data(), &UDP4[..]);
    let (_, fresh) = setup(&UDP4);
    assert_eq!(key, fresh);
}

#[test]
fn set_ip_proto_v4_updates_the_header_checksum() {
    // scapy: IP(proto=6)/TCP bytes, and the same with proto=17.
    let a = hex("02000000000202000000000108004500002800010000400666cd0a0000010a0000020001000200000000000000005002200000000000");
    let b = hex("02000000000202000000000108004500002800010000401166c20a0000010a0000020001000200000000000000005002200000000000");
    let (mut buf, mut key) = setup(&a);
    assert_eq!(key.ip_proto, ipproto::TCP);
    set_field(&mut buf, &mut key, SetField::IpProto(ipproto::UDP)).unwrap();
    assert_eq!(buf.data(), &b[..]);
    let (_, fresh) = setup(&b);
    assert_eq!(key, fresh);
    assert_eq!(key.ip_proto, ipproto::UDP);
}

#[test]
fn set_ip_proto_v6_rewrites_the_last_next_header() {
    // scapy: IPv6(nh=0)/HopByHop(nh=44)/Fragment(nh=17)/UDP 1 -> 2 "xy".
    let a = hex("02000000000202000000000186dd60000000001a004000000000000000000000000000000001000000000000000000000000000000022c00010400000000110000000000000700010002000a00007879");
    let (mut buf, mut key) = setup(&a);
    assert_eq!((key.ip_proto, key.tp_dst), (ipproto::UDP, 2));
    set_field(&mut buf, &mut key, SetField::IpProto(ipproto::TCP)).unwrap();
    let mut want = a.clone();
    want[14 + 40 + 8] = ipproto::TCP;
    assert_eq!(buf.data(), &want[..]);
    assert_eq!(key.ip_proto, ipproto::TCP);
    // Without extension headers: the fixed header's next header.
    let (mut buf, mut key) = setup(&a);
    set_field(&mut buf, &mut key, SetField::IpProto(ipproto::HOPOPTS)).unwrap();
    assert_eq!(buf.data()[20], ipproto::HOPOPTS);
}

#[test]
fn push_mpls_ttl_is_zero_without_ip_or_mpls() {
    // An ARP request: neither an IP nor an MPLS TTL to copy.
    let arp = hex(
        "ffffffffffff0200000000010806000108000604000102000000000100000000000000000000000a000002",
    );
    let (mut buf, mut key) = setup(&arp);
    push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
    assert_eq!(&buf.data()[12..18], &[0x88, 0x47, 0x00, 0x00, 0x01, 0x00]);
    assert_eq!((key.mpls_ttl, key.mpls_bos), (0, 1));
    // A second push copies the outer entry's TTL (BoS 0).
    set_mpls_ttl(&mut buf, &mut key, 9).unwrap();
    push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
    assert_eq!(&buf.data()[14..18], &[0x00, 0x00, 0x00, 0x09]);
}

#[test]
fn set_field_from_value() {
    assert_eq!(
        SetField::from_value(Field::Ipv4Src, &[1, 2, 3, 4]),
        Some(SetField::Ipv4Src(0x0102_0304))
    );
    assert_eq!(SetField::from_value(Field::Ipv4Src, &[1, 2, 3]), None);
    assert_eq!(
        SetField::from_value(Field::EthType, &[8, 0]),
        Some(SetField::EthType(0x0800))
    );
    assert_eq!(SetField::from_value(Field::InPort, &[0, 0, 0, 1]), None);
    assert_eq!(
        SetField::from_value(Field::PbbIsid, &[1, 2, 3]),
        Some(SetField::PbbIsid(0x010203))
    );
    for f in crate::field::Field::ALL {
        let v = vec![0u8; f.width()];
        if let Some(sf) = SetField::from_value(f, &v) {
            assert_eq!(sf.field(), f);
        }
    }
}

/// `l4_port_at` writes the bytes `set_field`'s port fast path writes:
/// the port and its checksum, a UDP checksum 0 ("none") kept 0.
#[test]
fn l4_port_at_is_set_fields_frame_half() {
    for (src, zero) in [(true, false), (false, false), (true, true), (false, true)] {
        let mut frame = UDP4;
        if zero {
            frame[40..42].copy_from_slice(&[0, 0]);
        }
        let (mut buf, mut key) = setup(&frame);
        let sf = if src {
            SetField::UdpSrc(0xfffe)
        } else {
            SetField::UdpDst(53)
        };
        set_field(&mut buf, &mut key, sf).unwrap();
        let mut raw = frame;
        let (off, p) = if src { (0, 0xfffe) } else { (2, 53) };
        assert!(l4_port_at(&mut raw, 34, true, off, p));
        assert_eq!(buf.data(), &raw[..]);
        assert_eq!(zero, raw[40..42] == [0, 0]);
    }
    // Cut before the checksum: nothing written.
    let mut short = UDP4;
    assert!(!l4_port_at(&mut short[..40], 34, true, 0, 7));
    assert_eq!(short, UDP4);
}
