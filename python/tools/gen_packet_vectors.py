#!/usr/bin/env python3
"""Generate packet parser/rewriter test vectors for the Rust `packet` crate.

Builds packets with scapy and writes:
  tests/vectors/packets/parse.json    frame bytes + every field the parser must
                                      find (and nothing else) + expected error
  tests/vectors/packets/rewrite.json  input frame, list of rewrite ops, the
                                      expected output frame (built by scapy
                                      with checksums recomputed) or error

Run: /tmp/tvenv/bin/python python/tools/gen_packet_vectors.py
The JSON is committed; the Rust tests do not need Python.

Field values are hex strings of the OXM big-endian value (field width bytes).
Field names follow `packet::Field::name()`.
"""

import json
import os
import struct
import sys

from scapy.all import (  # noqa: F401
    AH,
    ARP,
    ESP,
    ICMP,
    IP,
    SCTP,
    TCP,
    UDP,
    Dot1AD,
    Dot1AH,
    Dot1Q,
    Ether,
    ICMPv6EchoRequest,
    ICMPv6ND_NA,
    ICMPv6ND_NS,
    ICMPv6NDOptDstLLAddr,
    ICMPv6NDOptSrcLLAddr,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    Raw,
    SCTPChunkData,
    load_contrib,
)

load_contrib("mpls")
from scapy.contrib.mpls import MPLS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "vectors", "packets")

WIDTH = {
    "eth_dst": 6, "eth_src": 6, "eth_type": 2, "vlan_vid": 2, "vlan_pcp": 1,
    "ip_dscp": 1, "ip_ecn": 1, "ip_proto": 1, "ipv4_src": 4, "ipv4_dst": 4,
    "tcp_src": 2, "tcp_dst": 2, "udp_src": 2, "udp_dst": 2, "sctp_src": 2,
    "sctp_dst": 2, "icmpv4_type": 1, "icmpv4_code": 1, "arp_op": 2,
    "arp_spa": 4, "arp_tpa": 4, "arp_sha": 6, "arp_tha": 6, "ipv6_src": 16,
    "ipv6_dst": 16, "ipv6_flabel": 4, "icmpv6_type": 1, "icmpv6_code": 1,
    "ipv6_nd_target": 16, "ipv6_nd_sll": 6, "ipv6_nd_tll": 6, "mpls_label": 4,
    "mpls_tc": 1, "mpls_bos": 1, "pbb_isid": 3, "ipv6_exthdr": 2, "ip_ttl": 1,
    "mpls_ttl": 1, "inner_vlan_vid": 2, "inner_vlan_pcp": 1, "ip_frag": 1,
    "tcp_flags": 2,
}

# IPV6_EXTHDR flags (OpenFlow 1.3.5 ofp_ipv6exthdr_flags).
NONEXT, ESPF, AUTH, DEST, FRAG, ROUTER, HOP, UNREP, UNSEQ = (1 << i for i in range(9))
FRAG_ANY, FRAG_LATER = 1, 2


def mac(s):
    return bytes(int(x, 16) for x in s.split(":"))


def ip4(s):
    return bytes(int(x) for x in s.split("."))


def ip6(s):
    import ipaddress

    return ipaddress.IPv6Address(s).packed


def val(name, v):
    w = WIDTH[name]
    if isinstance(v, (bytes, bytearray)):
        assert len(v) == w, (name, v)
        return v.hex()
    return v.to_bytes(w, "big").hex()


class ExtOrder:
    """Second implementation of the IPV6_EXTHDR rules (see parse.rs):
    preferred order HOP, DEST, ROUTER, FRAG, AUTH, ESP, DEST; each header
    once except DEST (once before ROUTER, once before the upper layer)."""

    def __init__(self):
        self.flags = 0
        self.rank = 0
        self.dests = 0
        self.first_dest = 0

    def order(self, flag, rank):
        if rank < self.rank:
            self.flags |= UNSEQ
        self.rank = max(self.rank, rank)
        self.flags |= flag

    def see(self, flag, rank):
        if self.flags & flag:
            self.flags |= UNREP
        self.order(flag, rank)

    def see_dest(self):
        if self.dests == 0:
            rank = 2 if self.rank <= 2 else 7
            self.first_dest = rank
        elif self.dests == 1 and self.first_dest == 2:
            rank = 7
        else:
            self.flags |= UNREP
            rank = 7
        self.dests += 1
        self.order(DEST, rank)


def derive(p):
    """Expected fields of a well-formed scapy packet."""
    f = {"eth_dst": mac(p.dst), "eth_src": mac(p.src), "vlan_vid": 0}
    l = p.payload
    typ = p.type
    tags = 0
    while isinstance(l, (Dot1Q, Dot1AD)):
        if tags == 0:
            f["vlan_vid"] = l.vlan | 0x1000
            f["vlan_pcp"] = l.prio
        elif tags == 1:
            f["inner_vlan_vid"] = l.vlan | 0x1000
            f["inner_vlan_pcp"] = l.prio
        tags += 1
        typ = l.type
        l = l.payload
    f["eth_type"] = typ
    if typ == 0x8848 and not isinstance(l, MPLS):
        l = MPLS(bytes(l))
    if isinstance(l, MPLS):
        f.update(mpls_label=l.label, mpls_tc=l.cos, mpls_bos=l.s, mpls_ttl=l.ttl)
        return f
    if isinstance(l, Dot1AH):
        f["pbb_isid"] = l.isid
        return f
    if isinstance(l, ARP):
        f.update(arp_op=l.op, arp_spa=ip4(l.psrc), arp_tpa=ip4(l.pdst),
                 arp_sha=mac(l.hwsrc), arp_tha=mac(l.hwdst))
        return f
    if isinstance(l, IP):
        f.update(ip_dscp=l.tos >> 2, ip_ecn=l.tos & 3, ip_proto=l.proto,
                 ip_ttl=l.ttl, ipv4_src=ip4(l.src), ipv4_dst=ip4(l.dst))
        fr = 0
        if l.flags.MF or l.frag:
            fr |= FRAG_ANY
        if l.frag:
            fr |= FRAG_LATER
        f["ip_frag"] = fr
        if fr & FRAG_LATER:
            return f
        derive_l4(f, l.payload, v6=False)
        return f
    if isinstance(l, IPv6):
        f.update(ip_dscp=l.tc >> 2, ip_ecn=l.tc & 3, ip_ttl=l.hlim,
                 ipv6_src=ip6(l.src), ipv6_dst=ip6(l.dst), ipv6_flabel=l.fl)
        # Walk the chain over the raw bytes (scapy does not dissect AH
        # inside an extension chain).
        raw = bytes(l)
        end = 40 + l.plen
        o = ExtOrder()
        fr = 0
        nh = l.nh
        off = 40
        while True:
            if nh in (0, 60, 43, 44, 51):
                if nh == 0:
                    o.see(HOP, 1)
                elif nh == 60:
                    o.see_dest()
                elif nh == 43:
                    o.see(ROUTER, 3)
                elif nh == 44:
                    o.see(FRAG, 4)
                else:
                    o.see(AUTH, 5)
                hlen = 8 if nh == 44 else (raw[off + 1] + 2) * 4 if nh == 51 else (raw[off + 1] + 1) * 8
                if nh == 44:
                    fr |= FRAG_ANY
                    if struct.unpack("!H", raw[off + 2:off + 4])[0] & 0xfff8:
                        fr |= FRAG_LATER
                        f["ip_proto"] = raw[off]
                        break
                nh = raw[off]
                off += hlen
            elif nh == 50:
                o.see(ESPF, 6)
                f["ip_proto"] = 50
                break
            elif nh == 59:
                o.flags |= NONEXT
                f["ip_proto"] = 59
                break
            else:
                f["ip_proto"] = nh
                seg = raw[off:end]
                cls = {6: TCP, 17: UDP, 132: SCTP}.get(nh)
                if nh == 58:
                    from scapy.layers.inet6 import icmp6typescls
                    cls = icmp6typescls.get(seg[0], Raw)
                if cls is not None:
                    derive_l4(f, cls(seg), v6=True)
                break
        f["ipv6_exthdr"] = o.flags
        f["ip_frag"] = fr
        return f
    return f


def derive_l4(f, l, v6):
    if isinstance(l, TCP):
        # The 9 flag bits (NS..FIN) the parser extracts.
        f.update(tcp_src=l.sport, tcp_dst=l.dport, tcp_flags=int(l.flags) & 0x1ff)
    elif isinstance(l, UDP):
        f.update(udp_src=l.sport, udp_dst=l.dport)
    elif isinstance(l, SCTP):
        f.update(sctp_src=l.sport, sctp_dst=l.dport)
    elif isinstance(l, ICMP) and not v6:
        f.update(icmpv4_type=l.type, icmpv4_code=l.code)
    elif v6 and hasattr(l, "type") and l.__class__.__name__.startswith("ICMPv6"):
        f.update(icmpv6_type=l.type, icmpv6_code=l.code)
        if isinstance(l, (ICMPv6ND_NS, ICMPv6ND_NA)) and l.code == 0:
            f["ipv6_nd_target"] = ip6(l.tgt)
            want = ICMPv6NDOptSrcLLAddr if isinstance(l, ICMPv6ND_NS) else ICMPv6NDOptDstLLAddr
            name = "ipv6_nd_sll" if isinstance(l, ICMPv6ND_NS) else "ipv6_nd_tll"
            o = l.payload
            while o and not isinstance(o, Raw):
                if type(o) is want and name not in f:
                    f[name] = mac(o.lladdr)
                o = o.payload


def enc(fields):
    return {k: val(k, v) for k, v in fields.items()}


E = dict(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
A4 = dict(src="10.0.0.1", dst="10.0.0.2")
A6 = dict(src="2001:db8::1", dst="2001:db8::2")
PAY = Raw(b"payload!")

parse_vectors = []


def pv(name, p, fields=None, error=None):
    b = bytes(p)
    if fields is None:
        fields = derive(Ether(b))
    parse_vectors.append({"name": name, "hex": b.hex(), "fields": enc(fields), "error": error})


def gen_parse():
    pv("ipv4_udp", Ether(**E) / IP(tos=0xb9, ttl=17, **A4) / UDP(sport=1234, dport=53) / PAY)
    pv("ipv4_tcp_options", Ether(**E) / IP(options=[b"\x01\x01\x01\x00"], **A4)
       / TCP(sport=80, dport=4000, options=[("MSS", 1460)]) / PAY)
    # Every flag (NS..FIN) and the 3 reserved bits set: tcp_flags is 0x1ff.
    pv("ipv4_tcp_all_flags", Ether(**E) / IP(**A4)
       / TCP(sport=81, dport=82, flags=0x1ff, reserved=7) / PAY)
    pv("ipv4_icmp_echo", Ether(**E) / IP(**A4) / ICMP(type=8, code=0) / PAY)
    pv("ipv4_icmp_unreach", Ether(**E) / IP(**A4) / ICMP(type=3, code=3) / PAY)
    pv("ipv4_sctp", Ether(**E) / IP(**A4) / SCTP(sport=3868, dport=2905) / SCTPChunkData(data=b"abcd"))
    pv("ipv4_first_fragment", Ether(**E) / IP(flags="MF", proto=17, **A4) / UDP(sport=1, dport=2) / PAY)
    pv("ipv4_later_fragment", Ether(**E) / IP(frag=100, proto=6, **A4) / Raw(b"x" * 20))
    pv("ipv4_padded_60", Ether(**E) / IP(**A4) / UDP(sport=7, dport=9) / Raw(b"hi") / Raw(b"\0" * 12))
    pv("vlan_ipv4_tcp", Ether(**E) / Dot1Q(vlan=100, prio=5) / IP(**A4) / TCP(sport=22, dport=2222))
    pv("vlan_vid0_prio", Ether(**E) / Dot1Q(vlan=0, prio=3) / IP(**A4) / UDP())
    pv("qinq_ipv4_udp", Ether(**E) / Dot1AD(vlan=300, prio=2) / Dot1Q(vlan=42, prio=7)
       / IP(**A4) / UDP(sport=5, dport=6))
    pv("three_tags", Ether(**E) / Dot1AD(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP(**A4) / UDP())
    pv("qinq_8100_8100", Ether(**E) / Dot1Q(vlan=7, prio=1) / Dot1Q(vlan=8, prio=6) / ARP(op=1, psrc="1.2.3.4", pdst="1.2.3.5"))
    pv("mpls_one", Ether(**E) / MPLS(label=1000, cos=5, s=1, ttl=63) / IP(**A4) / UDP())
    pv("mpls_stack3", Ether(**E) / MPLS(label=0xfffff, cos=7, s=0, ttl=1) / MPLS(label=17, s=0, ttl=2)
       / MPLS(label=18, s=1, ttl=3) / IP(**A4) / TCP())
    pv("vlan_mpls", Ether(**E) / Dot1Q(vlan=9) / MPLS(label=16, s=1, ttl=9) / IP(**A4))
    pv("mpls_multicast", Ether(type=0x8848, **E) / MPLS(label=99, s=1, ttl=5) / IP(**A4))
    pv("pbb", Ether(**E) / Dot1AH(prio=3, isid=0xabcdef) / Ether(dst="aa:aa:aa:aa:aa:aa", src="bb:bb:bb:bb:bb:bb") / IP(**A4))
    pv("btag_pbb", Ether(**E) / Dot1AD(vlan=5) / Dot1AH(isid=77) / Ether() / IP(**A4))
    pv("arp_request", Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:01") / ARP(
        op=1, hwsrc="02:00:00:00:00:01", psrc="10.0.0.1", hwdst="00:00:00:00:00:00", pdst="10.0.0.2"))
    pv("arp_reply", Ether(**E) / ARP(op=2, hwsrc="02:00:00:00:00:02", psrc="10.0.0.2",
                                     hwdst="02:00:00:00:00:01", pdst="10.0.0.1"))
    pv("ipv6_udp", Ether(**E) / IPv6(tc=0x2e, fl=0xabcde, hlim=9, **A6) / UDP(sport=546, dport=547) / PAY)
    pv("ipv6_tcp", Ether(**E) / IPv6(**A6) / TCP(sport=443, dport=50000) / PAY)
    pv("ipv6_sctp", Ether(**E) / IPv6(**A6) / SCTP(sport=1, dport=2) / SCTPChunkData(data=b"zz"))
    pv("ipv6_icmp_echo", Ether(**E) / IPv6(**A6) / ICMPv6EchoRequest(id=1, seq=2))
    pv("ipv6_nonext", Ether(**E) / IPv6(nh=59, **A6))
    pv("nd_ns_sll", Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NS(tgt="2001:db8::99")
       / ICMPv6NDOptSrcLLAddr(lladdr="02:11:22:33:44:55"))
    pv("nd_ns_no_option", Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NS(tgt="fe80::1"))
    pv("nd_na_tll", Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NA(tgt="2001:db8::2", R=0, S=1, O=1)
       / ICMPv6NDOptDstLLAddr(lladdr="02:66:77:88:99:aa"))
    pv("nd_na_sll_then_tll", Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NA(tgt="2001:db8::2")
       / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:0a") / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:0b"))
    pv("nd_ns_two_sll", Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NS(tgt="2001:db8::3")
       / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:0c") / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:0d"))

    # IPv6 extension header chains (every header of the spec table, in and
    # out of the recommended order, repeated).
    H, D, R = IPv6ExtHdrHopByHop, IPv6ExtHdrDestOpt, IPv6ExtHdrRouting
    F0 = lambda: IPv6ExtHdrFragment(offset=0, m=1, id=7)  # noqa: E731
    Fl = lambda: IPv6ExtHdrFragment(nh=17, offset=50, m=0, id=7)  # noqa: E731
    Ah = lambda nh=17: AH(nh=nh, payloadlen=4, spi=1, seq=1, icv=b"\0" * 12)  # noqa: E731
    up = lambda: UDP(sport=10, dport=20) / PAY  # noqa: E731
    chains = {
        "hop": [H()],
        "dest": [D()],
        "router": [R()],
        "frag_first": [F0()],
        "auth": [Ah()],
        "hop_dest_router_frag_auth_dest": [H(), D(), R(), F0(), Ah(), D()],
        "dest_dest": [D(), D()],
        "dest_router_dest": [D(), R(), D()],
        "dest_x3": [D(), D(), D()],
        "router_dest_dest": [R(), D(), D()],
        "router_hop": [R(), H()],
        "hop_hop": [H(), H()],
        "router_router": [R(), R()],
        "frag_router": [F0(), R()],
        "auth_hop": [Ah(), H()],
        "auth_dest_router": [Ah(), D(), R()],
        "dest_hop": [D(), H()],
    }
    for name, hs in chains.items():
        p = IPv6(**A6)
        nums = {IPv6ExtHdrHopByHop: 0, IPv6ExtHdrDestOpt: 60, IPv6ExtHdrRouting: 43,
                IPv6ExtHdrFragment: 44}
        for i, h in enumerate(hs):
            if isinstance(h, AH):
                h.nh = nums[type(hs[i + 1])] if i + 1 < len(hs) else 17
            p = p / h
        pv("ipv6_ext_" + name, Ether(**E) / p / up())
    pv("ipv6_ext_hop_nonext", Ether(**E) / IPv6(**A6) / IPv6ExtHdrHopByHop(nh=59))
    pv("ipv6_ext_hop_router_nonext", Ether(**E) / IPv6(**A6) / H() / R(nh=59))
    pv("ipv6_ext_frag_later", Ether(**E) / IPv6(**A6) / Fl() / Raw(b"y" * 16), None)
    pv("ipv6_ext_hop_esp", Ether(**E) / IPv6(**A6) / H() / ESP(spi=5, seq=1, data=b"secret!!"))
    pv("ipv6_ext_esp", Ether(**E) / IPv6(**A6) / ESP(spi=5, seq=1, data=b"secret!!"))
    pv("ipv6_ext_dest_auth_tcp", Ether(**E) / IPv6(**A6) / D() / Ah(6) / TCP(sport=1, dport=2))

    # Truncated and lying headers: expectations by hand.
    base = Ether(**E) / IP(**A4) / TCP(sport=80, dport=81)
    b = bytes(base)
    eth = {"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]), "vlan_vid": 0, "eth_type": 0x800}
    l3 = dict(eth, ip_dscp=0, ip_ecn=0, ip_proto=6, ip_ttl=64, ipv4_src=ip4(A4["src"]),
              ipv4_dst=ip4(A4["dst"]), ip_frag=0)
    parse_vectors.append({"name": "short_frame_10", "hex": b[:10].hex(),
                          "fields": enc({"eth_dst": mac(E["dst"])}),
                          "error": {"layer": "L2", "reason": "Truncated"}})
    parse_vectors.append({"name": "empty", "hex": "", "fields": {},
                          "error": {"layer": "L2", "reason": "Truncated"}})
    parse_vectors.append({"name": "ipv4_cut_in_header", "hex": b[:30].hex(), "fields": enc(eth),
                          "error": {"layer": "L3", "reason": "Truncated"}})
    bad = bytearray(b)
    bad[14] = 0x44  # IHL 4
    parse_vectors.append({"name": "ipv4_ihl_4", "hex": bad.hex(), "fields": enc(eth),
                          "error": {"layer": "L3", "reason": "BadHeaderLength"}})
    bad = bytearray(b)
    bad[14] = 0x65  # version 6 under ethertype 0x0800
    parse_vectors.append({"name": "ipv4_bad_version", "hex": bad.hex(), "fields": enc(eth),
                          "error": {"layer": "L3", "reason": "BadVersion"}})
    bad = bytearray(b)
    bad[16:18] = struct.pack("!H", 1000)  # total length beyond the frame
    parse_vectors.append({"name": "ipv4_total_length_too_big", "hex": bad.hex(), "fields": enc(l3),
                          "error": {"layer": "L3", "reason": "BadTotalLength"}})
    bad = bytearray(b)
    bad[16:18] = struct.pack("!H", 10)  # total length smaller than the header
    parse_vectors.append({"name": "ipv4_total_length_too_small", "hex": bad.hex(), "fields": enc(l3),
                          "error": {"layer": "L3", "reason": "BadTotalLength"}})
    # TCP header cut: 10 bytes of TCP, with total length saying so.
    p = Ether(**E) / IP(**A4) / Raw(bytes(TCP(sport=80, dport=81))[:10])
    p[IP].proto = 6
    parse_vectors.append({"name": "tcp_cut", "hex": bytes(p).hex(),
                          "fields": enc(dict(l3, tcp_src=80, tcp_dst=81)),
                          "error": {"layer": "L4", "reason": "Truncated"}})
    bad = bytearray(b)
    bad[14 + 20 + 12] = 0x20  # TCP data offset 2
    parse_vectors.append({"name": "tcp_data_offset_2", "hex": bad.hex(),
                          "fields": enc(dict(l3, tcp_src=80, tcp_dst=81)),
                          "error": {"layer": "L4", "reason": "BadHeaderLength"}})
    p = Ether(**E) / IP(**A4) / Raw(bytes(UDP(sport=5, dport=6))[:3])
    p[IP].proto = 17
    parse_vectors.append({"name": "udp_3_bytes", "hex": bytes(p).hex(),
                          "fields": enc(dict(l3, ip_proto=17)),
                          "error": {"layer": "L4", "reason": "Truncated"}})
    # IPv6 hop-by-hop header claiming 64 bytes in a 8-byte chain.
    p = Ether(**E) / IPv6(**A6) / IPv6ExtHdrHopByHop(nh=17) / UDP()
    bad = bytearray(bytes(p))
    bad[14 + 40 + 1] = 7
    v6 = {"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]), "vlan_vid": 0, "eth_type": 0x86dd,
          "ip_dscp": 0, "ip_ecn": 0, "ip_ttl": 64, "ipv6_src": ip6(A6["src"]),
          "ipv6_dst": ip6(A6["dst"]), "ipv6_flabel": 0, "ip_frag": 0}
    parse_vectors.append({"name": "ipv6_ext_len_past_end", "hex": bad.hex(),
                          "fields": enc(dict(v6, ipv6_exthdr=HOP)),
                          "error": {"layer": "L3", "reason": "BadExtHeader"}})
    bad = bytearray(bytes(p))
    bad[14 + 4:14 + 6] = struct.pack("!H", 400)
    parse_vectors.append({"name": "ipv6_payload_length_too_big", "hex": bad.hex(),
                          "fields": enc(v6),
                          "error": {"layer": "L3", "reason": "BadTotalLength"}})
    p = Ether(**E) / IPv6(**A6) / UDP()
    parse_vectors.append({"name": "ipv6_cut", "hex": bytes(p)[:40].hex(),
                          "fields": enc({"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]),
                                         "vlan_vid": 0, "eth_type": 0x86dd}),
                          "error": {"layer": "L3", "reason": "Truncated"}})
    p = Ether(**E) / Dot1Q(vlan=5, prio=1) / IP(**A4)
    parse_vectors.append({"name": "vlan_cut", "hex": bytes(p)[:16].hex(),
                          "fields": enc({"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]),
                                         "vlan_vid": 0}),
                          "error": {"layer": "L2", "reason": "Truncated"}})
    p = Ether(**E) / MPLS(label=5) / IP(**A4)
    parse_vectors.append({"name": "mpls_cut", "hex": bytes(p)[:16].hex(),
                          "fields": enc({"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]),
                                         "vlan_vid": 0, "eth_type": 0x8847}),
                          "error": {"layer": "L2", "reason": "Truncated"}})
    p = Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NS(tgt="2001:db8::99") / ICMPv6NDOptSrcLLAddr(
        lladdr="02:11:22:33:44:55")
    bad = bytearray(bytes(p))
    bad[14 + 40 + 24 + 1] = 0  # option length 0
    parse_vectors.append({"name": "nd_option_len_0", "hex": bad.hex(),
                          "fields": enc(dict(v6, ip_ttl=255, ip_proto=58, ipv6_exthdr=0,
                                             icmpv6_type=135, icmpv6_code=0,
                                             ipv6_nd_target=ip6("2001:db8::99"))),
                          "error": {"layer": "L4", "reason": "BadNdOption"}})
    arp = bytearray(bytes(Ether(**E) / ARP(psrc="1.1.1.1", pdst="2.2.2.2")))
    arp[15] = 6  # hardware type 6 (IEEE 802): not Ethernet/IPv4 ARP
    parse_vectors.append({"name": "arp_not_ethernet", "hex": arp.hex(),
                          "fields": enc({"eth_dst": mac(E["dst"]), "eth_src": mac(E["src"]),
                                         "vlan_vid": 0, "eth_type": 0x806}), "error": None})


rewrite_vectors = []


def rv(name, inp, ops, out=None, error=None):
    rewrite_vectors.append({
        "name": name,
        "input": bytes(inp).hex(),
        "ops": ops,
        "output": bytes(out).hex() if out is not None else None,
        "error": error,
    })


def sf(field, v):
    return {"op": "set_field", "field": field, "value": val(field, v)}


def gen_rewrite():
    M1, M2 = "02:aa:bb:cc:dd:ee", "02:12:34:56:78:9a"
    u4 = lambda **kw: Ether(**E) / IP(**dict(A4, **kw)) / UDP(sport=1000, dport=2000) / PAY  # noqa
    t4 = lambda **kw: Ether(**E) / IP(**dict(A4, **kw)) / TCP(sport=1000, dport=2000) / PAY  # noqa
    rv("eth_dst", u4(), [sf("eth_dst", mac(M1))], Ether(dst=M1, src=E["src"]) / IP(**A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("eth_src", u4(), [sf("eth_src", mac(M2))], Ether(dst=E["dst"], src=M2) / IP(**A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("ipv4_src_udp", u4(), [sf("ipv4_src", ip4("192.168.7.9"))], u4(src="192.168.7.9"))
    rv("ipv4_dst_tcp", t4(), [sf("ipv4_dst", ip4("172.16.254.3"))], t4(dst="172.16.254.3"))
    rv("ipv4_dscp", t4(tos=0x03), [sf("ip_dscp", 46)], t4(tos=(46 << 2) | 3))
    rv("ipv4_ecn", t4(tos=0xb8), [sf("ip_ecn", 2)], t4(tos=0xba))
    rv("tcp_src", t4(), [sf("tcp_src", 443)], Ether(**E) / IP(**A4) / TCP(sport=443, dport=2000) / PAY)
    rv("tcp_dst", t4(), [sf("tcp_dst", 65535)], Ether(**E) / IP(**A4) / TCP(sport=1000, dport=65535) / PAY)
    rv("udp_src", u4(), [sf("udp_src", 53)], Ether(**E) / IP(**A4) / UDP(sport=53, dport=2000) / PAY)
    rv("udp_dst", u4(), [sf("udp_dst", 1)], Ether(**E) / IP(**A4) / UDP(sport=1000, dport=1) / PAY)
    z = Ether(**E) / IP(**A4) / UDP(sport=1000, dport=2000, chksum=0) / PAY
    rv("udp_zero_checksum_stays_zero", z, [sf("ipv4_src", ip4("1.1.1.1")), sf("udp_dst", 7)],
       Ether(**E) / IP(src="1.1.1.1", dst=A4["dst"]) / UDP(sport=1000, dport=7, chksum=0) / PAY)
    rv("tcp_on_udp_packet", u4(), [sf("tcp_src", 1)], None, "MissingField")
    rv("ipv4_two_fields", t4(), [sf("ipv4_src", ip4("9.9.9.9")), sf("tcp_src", 9), sf("ip_dscp", 9)],
       Ether(**E) / IP(src="9.9.9.9", dst=A4["dst"], tos=36) / TCP(sport=9, dport=2000) / PAY)
    i4 = lambda t, c: Ether(**E) / IP(**A4) / ICMP(type=t, code=c, id=5, seq=6) / PAY  # noqa
    rv("icmpv4_type", i4(8, 0), [sf("icmpv4_type", 0)], i4(0, 0))
    rv("icmpv4_code", i4(3, 1), [sf("icmpv4_code", 13)], i4(3, 13))
    s4 = lambda s, d: Ether(**E) / IP(**A4) / SCTP(sport=s, dport=d, tag=0x1234) / SCTPChunkData(data=b"hello")  # noqa
    rv("sctp_src", s4(1, 2), [sf("sctp_src", 3868)], s4(3868, 2))
    rv("sctp_dst", s4(1, 2), [sf("sctp_dst", 9)], s4(1, 9))
    arp = lambda **kw: Ether(**E) / ARP(**dict(dict(op=1, hwsrc=E["src"], psrc="10.0.0.1", hwdst="00:00:00:00:00:00", pdst="10.0.0.2"), **kw))  # noqa
    rv("arp_op", arp(), [sf("arp_op", 2)], arp(op=2))
    rv("arp_spa", arp(), [sf("arp_spa", ip4("10.9.9.9"))], arp(psrc="10.9.9.9"))
    rv("arp_tpa", arp(), [sf("arp_tpa", ip4("10.8.8.8"))], arp(pdst="10.8.8.8"))
    rv("arp_sha", arp(), [sf("arp_sha", mac(M1))], arp(hwsrc=M1))
    rv("arp_tha", arp(), [sf("arp_tha", mac(M2))], arp(hwdst=M2))
    u6 = lambda **kw: Ether(**E) / IPv6(**dict(A6, **kw)) / UDP(sport=1000, dport=2000) / PAY  # noqa
    t6 = lambda **kw: Ether(**E) / IPv6(**dict(A6, **kw)) / TCP(sport=1000, dport=2000) / PAY  # noqa
    rv("ipv6_src_udp", u6(), [sf("ipv6_src", ip6("fd00::abcd:1"))], u6(src="fd00::abcd:1"))
    rv("ipv6_dst_tcp", t6(), [sf("ipv6_dst", ip6("fe80::1234:5678:9abc:def0"))], t6(dst="fe80::1234:5678:9abc:def0"))
    rv("ipv6_flabel", t6(fl=5), [sf("ipv6_flabel", 0xfedcb)], t6(fl=0xfedcb))
    rv("ipv6_dscp", t6(tc=0x01), [sf("ip_dscp", 63)], t6(tc=0xfd))
    rv("ipv6_ecn", t6(tc=0x80), [sf("ip_ecn", 3)], t6(tc=0x83))
    rv("ipv6_tcp_src", t6(), [sf("tcp_src", 1)], Ether(**E) / IPv6(**A6) / TCP(sport=1, dport=2000) / PAY)
    rv("ipv6_udp_dst", u6(), [sf("udp_dst", 4789)], Ether(**E) / IPv6(**A6) / UDP(sport=1000, dport=4789) / PAY)
    e6 = lambda **kw: Ether(**E) / IPv6(**dict(A6, **kw)) / ICMPv6EchoRequest(id=1, seq=1) / PAY  # noqa
    rv("icmpv6_src_pseudo", e6(), [sf("ipv6_src", ip6("2001:db8::77"))], e6(src="2001:db8::77"))
    rv("icmpv6_type", e6(), [sf("icmpv6_type", 129)],
       Ether(**E) / IPv6(**A6) / ICMPv6EchoRequest(type=129, id=1, seq=1) / PAY)
    rv("icmpv6_code", e6(), [sf("icmpv6_code", 4)],
       Ether(**E) / IPv6(**A6) / ICMPv6EchoRequest(code=4, id=1, seq=1) / PAY)
    ns = lambda t, m: Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NS(tgt=t) / ICMPv6NDOptSrcLLAddr(lladdr=m)  # noqa
    rv("nd_target", ns("2001:db8::5", M1), [sf("ipv6_nd_target", ip6("2001:db8::6"))], ns("2001:db8::6", M1))
    rv("nd_sll", ns("2001:db8::5", M1), [sf("ipv6_nd_sll", mac(M2))], ns("2001:db8::5", M2))
    na = lambda m: Ether(**E) / IPv6(hlim=255, **A6) / ICMPv6ND_NA(tgt="2001:db8::2") / ICMPv6NDOptDstLLAddr(lladdr=m)  # noqa
    rv("nd_tll", na(M1), [sf("ipv6_nd_tll", mac(M2))], na(M2))
    rv("nd_tll_on_ns", ns("2001:db8::5", M1), [sf("ipv6_nd_tll", mac(M2))], None, "MissingField")

    v = lambda vid, prio: Ether(**E) / Dot1Q(vlan=vid, prio=prio) / IP(**A4) / UDP(sport=1, dport=2)  # noqa
    rv("vlan_vid", v(10, 3), [sf("vlan_vid", 0x1000 | 4000)], v(4000, 3))
    rv("vlan_pcp", v(10, 3), [sf("vlan_pcp", 7)], v(10, 7))
    rv("vlan_vid_untagged", u4(), [sf("vlan_vid", 0x1005)], None, "NoVlan")
    rv("push_vlan_untagged", u4(), [{"op": "push_vlan", "ethertype": 0x8100}],
       Ether(**E) / Dot1Q(vlan=0, prio=0) / IP(**A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("push_vlan_then_set", u4(), [{"op": "push_vlan", "ethertype": 0x8100}, sf("vlan_vid", 0x1000 | 77), sf("vlan_pcp", 5)],
       Ether(**E) / Dot1Q(vlan=77, prio=5) / IP(**A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("push_qinq_copies_outer", v(10, 3), [{"op": "push_vlan", "ethertype": 0x88a8}],
       Ether(**E) / Dot1AD(vlan=10, prio=3) / Dot1Q(vlan=10, prio=3) / IP(**A4) / UDP(sport=1, dport=2))
    rv("pop_vlan", v(10, 3), [{"op": "pop_vlan"}], Ether(**E) / IP(**A4) / UDP(sport=1, dport=2))
    rv("pop_vlan_qinq", Ether(**E) / Dot1AD(vlan=1) / Dot1Q(vlan=2, prio=1) / IP(**A4),
       [{"op": "pop_vlan"}], Ether(**E) / Dot1Q(vlan=2, prio=1) / IP(**A4))
    rv("pop_vlan_untagged", u4(), [{"op": "pop_vlan"}], None, "NoVlan")
    rv("push_vlan_bad_ethertype", u4(), [{"op": "push_vlan", "ethertype": 0x0800}], None, "BadEthertype")

    rv("push_mpls_ipv4", u4(ttl=33), [{"op": "push_mpls", "ethertype": 0x8847}],
       Ether(**E) / MPLS(label=0, cos=0, s=1, ttl=33) / IP(ttl=33, **A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("push_mpls_ipv6", u6(hlim=7), [{"op": "push_mpls", "ethertype": 0x8848}],
       Ether(type=0x8848, **E) / MPLS(label=0, cos=0, s=1, ttl=7) / IPv6(hlim=7, **A6) / UDP(sport=1000, dport=2000) / PAY)
    rv("push_mpls_vlan", v(10, 3), [{"op": "push_mpls", "ethertype": 0x8847}],
       Ether(**E) / Dot1Q(vlan=10, prio=3, type=0x8847) / MPLS(label=0, s=1, ttl=64) / IP(**A4) / UDP(sport=1, dport=2))
    mp = Ether(**E) / MPLS(label=100, cos=2, s=1, ttl=20) / IP(**A4) / UDP(sport=1, dport=2)
    rv("push_mpls_on_mpls", mp, [{"op": "push_mpls", "ethertype": 0x8847}],
       Ether(**E) / MPLS(label=100, cos=2, s=0, ttl=20) / MPLS(label=100, cos=2, s=1, ttl=20) / IP(**A4) / UDP(sport=1, dport=2))
    rv("push_mpls_set_label", u4(), [{"op": "push_mpls", "ethertype": 0x8847}, sf("mpls_label", 0xabcde), sf("mpls_tc", 6)],
       Ether(**E) / MPLS(label=0xabcde, cos=6, s=1, ttl=64) / IP(**A4) / UDP(sport=1000, dport=2000) / PAY)
    rv("push_mpls_arp", arp(), [{"op": "push_mpls", "ethertype": 0x8847}],
       Ether(**E, type=0x8847) / MPLS(label=0, s=1, ttl=0) / arp()[ARP])  # OF 1.3.5 §5.12.1: no IP or MPLS TTL -> 0
    rv("pop_mpls", mp, [{"op": "pop_mpls", "ethertype": 0x0800}], Ether(**E) / IP(**A4) / UDP(sport=1, dport=2))
    m2 = Ether(**E) / MPLS(label=1, s=0, ttl=9) / MPLS(label=2, s=1, ttl=8) / IP(**A4)
    rv("pop_mpls_stack", m2, [{"op": "pop_mpls", "ethertype": 0x8847}], Ether(**E) / MPLS(label=2, s=1, ttl=8) / IP(**A4))
    rv("pop_mpls_none", u4(), [{"op": "pop_mpls", "ethertype": 0x0800}], None, "NoMpls")
    rv("mpls_bos", mp, [sf("mpls_bos", 0)], Ether(**E) / MPLS(label=100, cos=2, s=0, ttl=20) / IP(**A4) / UDP(sport=1, dport=2))
    rv("dec_mpls_ttl", mp, [{"op": "dec_mpls_ttl"}], Ether(**E) / MPLS(label=100, cos=2, s=1, ttl=19) / IP(**A4) / UDP(sport=1, dport=2))
    rv("set_mpls_ttl", mp, [{"op": "set_mpls_ttl", "ttl": 200}], Ether(**E) / MPLS(label=100, cos=2, s=1, ttl=200) / IP(**A4) / UDP(sport=1, dport=2))
    rv("dec_mpls_ttl_expired", Ether(**E) / MPLS(label=1, s=1, ttl=1) / IP(**A4), [{"op": "dec_mpls_ttl"}], None, "TtlExpired")
    rv("copy_ttl_out_ip", Ether(**E) / MPLS(label=1, s=1, ttl=1) / IP(ttl=99, **A4), [{"op": "copy_ttl_out"}],
       Ether(**E) / MPLS(label=1, s=1, ttl=99) / IP(ttl=99, **A4))
    rv("copy_ttl_out_mpls", Ether(**E) / MPLS(label=1, s=0, ttl=1) / MPLS(label=2, s=1, ttl=55) / IP(**A4),
       [{"op": "copy_ttl_out"}], Ether(**E) / MPLS(label=1, s=0, ttl=55) / MPLS(label=2, s=1, ttl=55) / IP(**A4))
    rv("copy_ttl_in_ipv4", Ether(**E) / MPLS(label=1, s=1, ttl=12) / IP(ttl=99, **A4) / UDP(), [{"op": "copy_ttl_in"}],
       Ether(**E) / MPLS(label=1, s=1, ttl=12) / IP(ttl=12, **A4) / UDP())
    rv("copy_ttl_in_ipv6", Ether(**E) / MPLS(label=1, s=1, ttl=12) / IPv6(hlim=99, **A6), [{"op": "copy_ttl_in"}],
       Ether(**E) / MPLS(label=1, s=1, ttl=12) / IPv6(hlim=12, **A6))
    rv("copy_ttl_in_no_mpls", u4(), [{"op": "copy_ttl_in"}], None, "NoMpls")

    rv("push_pbb", u4(), [{"op": "push_pbb", "ethertype": 0x88e7}],
       Ether(**E) / Dot1AH(isid=0) / u4())
    rv("push_pbb_vlan_pcp", v(10, 5), [{"op": "push_pbb", "ethertype": 0x88e7}, sf("pbb_isid", 0x123456), sf("eth_dst", mac(M1))],
       Ether(dst=M1, src=E["src"]) / Dot1AH(prio=5, isid=0x123456) / v(10, 5))
    pb = Ether(**E) / Dot1AH(prio=1, isid=99) / Ether(dst=M1, src=M2) / IP(**A4) / UDP()
    rv("pop_pbb", pb, [{"op": "pop_pbb"}], Ether(dst=M1, src=M2) / IP(**A4) / UDP())
    rv("pbb_isid", pb, [sf("pbb_isid", 0xfffffe)], Ether(**E) / Dot1AH(prio=1, isid=0xfffffe) / Ether(dst=M1, src=M2) / IP(**A4) / UDP())
    rv("pop_pbb_none", u4(), [{"op": "pop_pbb"}], None, "NoPbb")

    rv("dec_nw_ttl_v4", t4(ttl=64), [{"op": "dec_nw_ttl"}], t4(ttl=63))
    rv("dec_nw_ttl_v6", t6(hlim=2), [{"op": "dec_nw_ttl"}], t6(hlim=1))
    rv("dec_nw_ttl_1", t4(ttl=1), [{"op": "dec_nw_ttl"}], None, "TtlExpired")
    rv("dec_nw_ttl_0", t6(hlim=0), [{"op": "dec_nw_ttl"}], None, "TtlExpired")
    rv("set_nw_ttl", t4(ttl=64), [{"op": "set_nw_ttl", "ttl": 255}], t4(ttl=255))
    rv("dec_nw_ttl_arp", arp(), [{"op": "dec_nw_ttl"}], None, "NoIp")
    rv("vlan_ipv4_src", v(1, 1), [sf("ipv4_src", ip4("4.3.2.1"))],
       Ether(**E) / Dot1Q(vlan=1, prio=1) / IP(src="4.3.2.1", dst=A4["dst"]) / UDP(sport=1, dport=2))
    rv("ipv4_options_src", Ether(**E) / IP(options=[b"\x01\x01\x01\x00"], **A4) / TCP() / PAY,
       [sf("ipv4_src", ip4("8.8.4.4")), sf("tcp_dst", 8)],
       Ether(**E) / IP(options=[b"\x01\x01\x01\x00"], src="8.8.4.4", dst=A4["dst"]) / TCP(dport=8) / PAY)
    pad = Ether(**E) / IP(**A4) / UDP(sport=7, dport=9) / Raw(b"hi")
    padded = bytes(pad) + b"\0" * (60 - len(bytes(pad)))
    out = Ether(**E) / IP(src="7.7.7.7", dst=A4["dst"]) / UDP(sport=7, dport=9) / Raw(b"hi")
    rewrite_vectors.append({"name": "padded_frame_udp", "input": padded.hex(),
                            "ops": [sf("ipv4_src", ip4("7.7.7.7"))],
                            "output": (bytes(out) + b"\0" * (60 - len(bytes(out)))).hex(), "error": None})
    rv("ipv6_ext_udp_dst", Ether(**E) / IPv6(**A6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / UDP(sport=1, dport=2) / PAY,
       [sf("ipv6_dst", ip6("2001:db8::ffff")), sf("udp_src", 3)],
       Ether(**E) / IPv6(src=A6["src"], dst="2001:db8::ffff") / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / UDP(sport=3, dport=2) / PAY)


def main():
    gen_parse()
    gen_rewrite()
    os.makedirs(OUT, exist_ok=True)
    for name, data in (("parse.json", parse_vectors), ("rewrite.json", rewrite_vectors)):
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    print(f"{len(parse_vectors)} parse vectors, {len(rewrite_vectors)} rewrite vectors -> {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
