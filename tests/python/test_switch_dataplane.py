"""Data-plane integration tests of the oxflow switch (issue 3, item 6).

One `oxflow run` in fail-secure mode (no controller: table misses drop)
with four hosts h1..h4 in network namespaces on OpenFlow ports 1..4. Each
test starts from empty flow, group and meter tables, installs its state
with `oxflow ctl` (a few entries, and read-backs, with `ovs-ofctl -O
OpenFlow13` through the same passive listener, as a cross-check),
sends frames crafted with scapy from h1 and captures them on the egress
hosts (oxflow.traffic.Sniffer). Every assertion is on the exact bytes that
come out, and on nothing coming out where it must not.

Frames carry a payload "OXDP:<case>;" (dp_util.MARK) that names the case,
so one batch of frames can check many flows at once and captures ignore
stray kernel traffic. The tests skip only when the oxflow binary is absent.
"""

import os
import random
import re
import tempfile
import time

import pytest
from scapy.all import (ARP, ICMP, IP, SCTP, TCP, UDP, Dot1AD, Dot1Q, Ether,
                       IPOption,
                       ICMPv6EchoRequest, ICMPv6ND_NA,
                       ICMPv6ND_NS, ICMPv6NDOptDstLLAddr,
                       ICMPv6NDOptSrcLLAddr, IPv6, Raw, SCTPChunkData)
from scapy.contrib.mpls import MPLS

import dp_util
from dp_util import (HostSocket, by_case, capture, case_of, checksum_errors,
                     tag_payload)
from oxflow.netns import Topology
from oxflow.traffic import send_and_capture

HOSTS = ("h1", "h2", "h3", "h4")


def mac(n):
    return "02:00:00:00:00:%02x" % n


def ip4(n):
    return "10.0.0.%d" % n


# --------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """(topology, switch): h1..h4 on ports 1..4 of a fail-secure oxflow."""
    dp_util.require_oxflow()
    from oxflow.switch import Switch

    log = tmp_path_factory.mktemp("dataplane") / "oxflow.log"
    with Topology() as topo:
        for i, name in enumerate(HOSTS, 1):
            h = topo.add_host(name)
            topo.add_switch_link(h, ip4(i) + "/24", mac=mac(i))
        with Switch(topo, dpid=0xd0, fail_mode="secure",
                    log_path=log) as sw:
            yield topo, sw
            assert sw.running(), "oxflow exited:\n" + sw.log()[-4000:]


@pytest.fixture
def dp(net):
    """Per test: empty tables; returns a small facade over the network."""
    topo, sw = net
    assert sw.running(), "oxflow is not running:\n" + sw.log()[-4000:]
    for cmd in ("del-flows", "del-groups", "del-meters"):
        ctl(sw, cmd)
    d = DP(topo, sw)
    yield d
    assert sw.running(), "oxflow died during the test:\n" + sw.log()[-4000:]


def ctl(sw, *args):
    """`oxflow ctl ...` that must succeed; returns stdout."""
    proc = sw.ctl(*args)
    assert proc.returncode == 0, "oxflow ctl %s failed (exit %d):\n%s%s" % (
        " ".join(args), proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


class DP:
    """Hosts by name plus flow/group/meter helpers for one test."""

    def __init__(self, topo, sw):
        self.topo = topo
        self.sw = sw
        self.h = topo.hosts

    def flows(self, *specs):
        """Install flows with one `oxflow ctl add-flows FILE` (one barrier)."""
        with tempfile.NamedTemporaryFile("w", suffix=".flows",
                                         delete=False) as f:
            f.write("\n".join(specs) + "\n")
        try:
            ctl(self.sw, "add-flows", f.name)
        finally:
            os.unlink(f.name)

    def group(self, spec):
        ctl(self.sw, "add-group", spec)

    def meter(self, spec):
        ctl(self.sw, "add-meter", spec)

    def ovs(self, *args):
        """The command through ovs-ofctl -O OpenFlow13 (or oxflow ctl when
        ovs-ofctl is not installed)."""
        if dp_util.have_ovs_ofctl():
            return dp_util.ovs_ofctl(self.sw.target, *args).stdout
        return ctl(self.sw, *args)

    def quick(self, frames, dsts=("h2", "h3"), src="h1", settle=0.3):
        """Like exchange, with the captures started in parallel and the
        frames sent by this process (for tests that send many times)."""
        with HostSocket(self.h[src]) as s, \
                capture([self.h[d] for d in dsts], settle=settle) as got:
            s.send(frames)
        return got

    def exchange(self, frames, dsts=("h2", "h3", "h4"), src="h1",
                 timeout=0.4):
        """send_and_capture from src; {host: [marked frames]}."""
        return send_and_capture(self.h[src], frames,
                                [self.h[d] for d in dsts], timeout=timeout,
                                keep=dp_util.marked_only)


def udp4(tag, src=1, dst=2, sport=1000, dport=2000, ttl=64, tos=0,
         eth_src=None):
    return (Ether(src=eth_src or mac(src), dst=mac(dst))
            / IP(src=ip4(src), dst=ip4(dst), ttl=ttl, tos=tos)
            / UDP(sport=sport, dport=dport) / tag_payload(tag, 24))


def expect(inp, change=None):
    """Bytes of `inp` after change(pkt), with every checksum recomputed."""
    e = Ether(bytes(inp))
    if change:
        change(e)
    layer = e
    while layer:
        for fname in ("chksum", "cksum"):
            if fname in layer.fields:
                setattr(layer, fname, None)
        layer = layer.payload
    return bytes(e)


def show(frames):
    return "\n".join("  %s  %s" % (Ether(f).summary(), f.hex())
                     for f in frames) or "  (nothing)"


def assert_only(got, host, expected, others=()):
    """`host` received exactly the frames `expected` (in any order), and
    every host in `others` received nothing."""
    exp = [bytes(x) for x in expected]
    assert sorted(got[host]) == sorted(exp), (
        "%s: expected\n%s\ngot\n%s" % (host, show(exp), show(got[host])))
    for o in others:
        assert got[o] == [], "%s must receive nothing, got\n%s" % (
            o, show(got[o]))


# --------------------------------------------------------------------------
# 1. Multi-table: write_metadata + goto_table
# --------------------------------------------------------------------------


def test_multi_table_metadata(dp):
    dp.flows(
        "table=0,priority=10,in_port=1,udp,udp_dst=1001,"
        "actions=write_metadata:0xab00cd/0xff00ff,goto_table:1",
        "table=0,priority=10,in_port=1,udp,udp_dst=1002,"
        "actions=write_metadata:0x1234,goto_table:1",
        "table=0,priority=10,in_port=1,udp,udp_dst=1003,"
        "actions=write_metadata:0xab00cd/0xff00ff,goto_table:2",
    )
    # Table 1 through ovs-ofctl (a cross-check of the passive listener and
    # the syntax): only metadata 0xab..cd (under the mask) goes out port 2.
    dp.ovs("add-flow", "table=1,priority=10,metadata=0xab00cd/0xff00ff,"
           "actions=output:2")
    a = udp4("mt-hit", dport=1001)
    b = udp4("mt-wrong-metadata", dport=1002)
    c = udp4("mt-table2-miss", dport=1003)
    d = udp4("mt-table0-miss", dport=1004)
    got = dp.exchange([a, b, c, d])
    assert_only(got, "h2", [a], others=("h3", "h4"))
    # The table-1 flow and its counter, read back by oxflow ctl.
    out = ctl(dp.sw, "dump-flows", "table=1")
    assert "metadata=0xab00cd/0xff00ff" in out, out
    assert re.search(r"n_packets=1\b", out), out


# --------------------------------------------------------------------------
# 2. Every set-field action, verified on the wire with checksums
# --------------------------------------------------------------------------


def _eth(i, dst=2):
    return Ether(src="02:aa:00:00:00:%02x" % i, dst=mac(dst))


def _set_field_cases():
    """[(tag, match, actions, input frame, change(expected pkt))]."""
    cases = []

    def add(tag, match, actions, build, change):
        i = len(cases) + 1
        eth = _eth(i)
        cases.append((tag, "dl_src=%s,%s" % (eth.src, match) if match
                      else "dl_src=%s" % eth.src, actions,
                      build(eth, tag_payload(tag, 24)), change))

    v4 = IP(src=ip4(1), dst=ip4(2), ttl=64)
    v6 = IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=64)

    def udp(e, p, ip=v4, **kw):
        return e / ip.copy() / UDP(sport=1000, dport=2000) / p

    def tcp(e, p, ip=v4):
        return e / ip.copy() / TCP(sport=1000, dport=80, flags="S",
                                   seq=1) / p

    def sctp(e, p, ip=v4):
        return e / ip.copy() / SCTP(sport=1000, dport=3000, tag=7) / \
            SCTPChunkData(data=p)

    def setter(layer, **fields):
        def change(pkt):
            for k, v in fields.items():
                setattr(pkt[layer], k, v)
        return change

    add("eth_src", "", "set_field:02:11:11:11:11:11->eth_src",
        udp, setter(Ether, src="02:11:11:11:11:11"))
    add("eth_dst", "", "set_field:02:22:22:22:22:22->eth_dst",
        udp, setter(Ether, dst="02:22:22:22:22:22"))
    add("vlan_vid", "dl_vlan=10", "set_field:0x1014->vlan_vid",
        lambda e, p: udp(e / Dot1Q(vlan=10, prio=3), p),
        setter(Dot1Q, vlan=20))
    add("vlan_pcp", "dl_vlan=10", "set_field:5->vlan_pcp",
        lambda e, p: udp(e / Dot1Q(vlan=10, prio=3), p),
        setter(Dot1Q, prio=5))
    add("ip_dscp4", "ip", "set_field:46->ip_dscp",
        lambda e, p: udp(e, p, IP(src=ip4(1), dst=ip4(2), tos=0x01)),
        setter(IP, tos=(46 << 2) | 1))
    add("ip_ecn4", "ip", "set_field:2->ip_ecn",
        lambda e, p: udp(e, p, IP(src=ip4(1), dst=ip4(2), tos=0xb8)),
        setter(IP, tos=0xba))
    add("ip_dscp6", "ipv6", "set_field:10->ip_dscp",
        lambda e, p: udp(e, p, IPv6(src="2001:db8::1", dst="2001:db8::2",
                                    tc=0x01)),
        setter(IPv6, tc=(10 << 2) | 1))
    add("ip_ecn6", "ipv6", "set_field:3->ip_ecn",
        lambda e, p: udp(e, p, IPv6(src="2001:db8::1", dst="2001:db8::2",
                                    tc=0x28)),
        setter(IPv6, tc=0x2b))
    add("ipv4_src", "ip", "set_field:192.168.7.7->ipv4_src",
        udp, setter(IP, src="192.168.7.7"))
    add("ipv4_dst", "ip", "set_field:172.16.1.2->ipv4_dst",
        tcp, setter(IP, dst="172.16.1.2"))
    add("ipv6_src", "ipv6", "set_field:2001:db8::77->ipv6_src",
        lambda e, p: udp(e, p, v6), setter(IPv6, src="2001:db8::77"))
    add("ipv6_dst", "ipv6", "set_field:fd00::1:2->ipv6_dst",
        lambda e, p: tcp(e, p, v6), setter(IPv6, dst="fd00::1:2"))
    add("ipv6_flabel", "ipv6", "set_field:0xabcde->ipv6_flabel",
        lambda e, p: udp(e, p, v6), setter(IPv6, fl=0xabcde))
    add("tcp_src", "tcp", "set_field:4444->tcp_src", tcp,
        setter(TCP, sport=4444))
    add("tcp_dst", "tcp", "set_field:8080->tcp_dst", tcp,
        setter(TCP, dport=8080))
    add("tcp6_dst", "tcp6", "set_field:8081->tcp_dst",
        lambda e, p: tcp(e, p, v6), setter(TCP, dport=8081))
    add("udp_src", "udp", "set_field:5353->udp_src", udp,
        setter(UDP, sport=5353))
    add("udp_dst", "udp", "set_field:53->udp_dst", udp,
        setter(UDP, dport=53))
    add("udp6_src", "udp6", "set_field:5354->udp_src",
        lambda e, p: udp(e, p, v6), setter(UDP, sport=5354))
    add("sctp_src", "sctp", "set_field:1111->sctp_src", sctp,
        setter(SCTP, sport=1111))
    add("sctp_dst", "sctp", "set_field:2222->sctp_dst", sctp,
        setter(SCTP, dport=2222))
    add("icmp_type", "icmp", "set_field:0->icmpv4_type",
        lambda e, p: e / v4.copy() / ICMP(type=8, id=1, seq=1) / p,
        setter(ICMP, type=0))
    add("icmp_code", "icmp", "set_field:3->icmpv4_code",
        lambda e, p: e / v4.copy() / ICMP(type=8, code=0, id=2) / p,
        setter(ICMP, code=3))
    add("icmp6_type", "icmp6", "set_field:129->icmpv6_type",
        lambda e, p: e / v6.copy() / ICMPv6EchoRequest(id=1, seq=1,
                                                       data=p),
        setter(ICMPv6EchoRequest, type=129))
    add("icmp6_code", "icmp6", "set_field:4->icmpv6_code",
        lambda e, p: e / v6.copy() / ICMPv6EchoRequest(id=2, data=p),
        setter(ICMPv6EchoRequest, code=4))
    arp = ARP(op=1, hwsrc="02:aa:aa:aa:aa:01", psrc=ip4(1),
              hwdst="00:00:00:00:00:00", pdst=ip4(2))

    def arp_frame(e, p):
        return e / arp.copy() / Raw(p)

    add("arp_op", "arp", "set_field:2->arp_op", arp_frame,
        setter(ARP, op=2))
    add("arp_spa", "arp", "set_field:10.9.9.9->arp_spa", arp_frame,
        setter(ARP, psrc="10.9.9.9"))
    add("arp_tpa", "arp", "set_field:10.8.8.8->arp_tpa", arp_frame,
        setter(ARP, pdst="10.8.8.8"))
    add("arp_sha", "arp", "set_field:02:33:33:33:33:33->arp_sha", arp_frame,
        setter(ARP, hwsrc="02:33:33:33:33:33"))
    add("arp_tha", "arp", "set_field:02:44:44:44:44:44->arp_tha", arp_frame,
        setter(ARP, hwdst="02:44:44:44:44:44"))

    def mpls_frame(e, p):
        e.type = 0x8847
        return e / MPLS(label=100, cos=1, s=1, ttl=64) / v4.copy() / \
            UDP(sport=1, dport=2) / p

    add("mpls_label", "mpls", "set_field:5000->mpls_label", mpls_frame,
        setter(MPLS, label=5000))
    add("mpls_tc", "mpls", "set_field:6->mpls_tc", mpls_frame,
        setter(MPLS, cos=6))

    def mpls2_frame(e, p):
        e.type = 0x8847
        return e / MPLS(label=200, cos=0, s=0, ttl=9) / \
            MPLS(label=100, cos=0, s=1, ttl=64) / v4.copy() / \
            UDP(sport=1, dport=2) / p

    add("mpls_bos", "mpls,mpls_bos=0", "set_field:1->mpls_bos",
        mpls2_frame, lambda pkt: setattr(pkt[MPLS], "s", 1))
    ll = "fe80::1"

    def ns_frame(e, p):
        return e / IPv6(src=ll, dst="ff02::1:ff00:2", hlim=255) / \
            ICMPv6ND_NS(tgt="fe80::2") / \
            ICMPv6NDOptSrcLLAddr(lladdr="02:aa:aa:aa:aa:01") / Raw(p)

    def na_frame(e, p):
        return e / IPv6(src=ll, dst="fe80::2", hlim=255) / \
            ICMPv6ND_NA(tgt="fe80::1", R=0, S=1, O=1) / \
            ICMPv6NDOptDstLLAddr(lladdr="02:aa:aa:aa:aa:01") / Raw(p)

    add("nd_target", "icmp6,icmpv6_type=135",
        "set_field:fe80::99->nd_target", ns_frame,
        setter(ICMPv6ND_NS, tgt="fe80::99"))
    add("nd_sll", "icmp6,icmpv6_type=135",
        "set_field:02:55:55:55:55:55->nd_sll", ns_frame,
        setter(ICMPv6NDOptSrcLLAddr, lladdr="02:55:55:55:55:55"))
    add("nd_tll", "icmp6,icmpv6_type=136",
        "set_field:02:66:66:66:66:66->nd_tll", na_frame,
        setter(ICMPv6NDOptDstLLAddr, lladdr="02:66:66:66:66:66"))
    return cases


def test_every_set_field_on_the_wire(dp):
    cases = _set_field_cases()
    dp.flows(*["priority=100,in_port=1,%s,actions=%s,output:2" % (m, a)
               for _, m, a, _, _ in cases])
    frames = [bytes(inp) for _, _, _, inp, _ in cases]
    for (tag, _, _, inp, _), raw in zip(cases, frames):
        assert checksum_errors(raw) == [], "bad input frame " + tag
    got = dp.exchange(frames, dsts=("h2", "h3"))
    assert got["h3"] == [], show(got["h3"])
    per_case = by_case(got["h2"])
    failures = []
    for tag, match, acts, inp, change in cases:
        want = expect(inp, change)
        out = per_case.get(tag, [])
        if out != [want]:
            failures.append("%s (%s -> %s):\n  expected %s\n  got      %s"
                            % (tag, match, acts, want.hex(),
                               " | ".join(f.hex() for f in out) or "none"))
        elif checksum_errors(out[0]):
            failures.append("%s: %s" % (tag, checksum_errors(out[0])))
    assert not failures, "%d of %d set-field cases wrong:\n%s" % (
        len(failures), len(cases), "\n".join(failures))


# --------------------------------------------------------------------------
# 3. VLAN push / pop, QinQ, vlan_vid matching
# --------------------------------------------------------------------------


def test_vlan_push_pop_qinq_and_match(dp):
    pay = tag_payload
    base = IP(src=ip4(1), dst=ip4(2)) / UDP(sport=7, dport=8)

    def e(i, dst=2):
        return Ether(src="02:bb:00:00:00:%02x" % i, dst=mac(dst))

    push = e(1) / base / pay("push-vlan", 24)
    qinq = e(2) / Dot1Q(vlan=10, prio=3) / base / pay("push-qinq", 24)
    pop_outer = e(3) / Dot1AD(vlan=20, prio=1) / Dot1Q(vlan=10, prio=3) / \
        base / pay("pop-outer", 24)
    pop = e(4) / Dot1Q(vlan=10, prio=3) / base / pay("pop-vlan", 24)
    dp.flows(
        "priority=100,in_port=1,dl_src=02:bb:00:00:00:01,"
        "actions=push_vlan:0x8100,set_field:0x1064->vlan_vid,output:2",
        "priority=100,in_port=1,dl_src=02:bb:00:00:00:02,"
        "actions=push_vlan:0x88a8,set_field:0x1014->vlan_vid,output:2",
        "priority=100,in_port=1,dl_src=02:bb:00:00:00:03,"
        "actions=pop_vlan,output:2",
        "priority=100,in_port=1,dl_src=02:bb:00:00:00:04,"
        "actions=pop_vlan,output:2",
        # vlan_vid matching (OFPVID_PRESENT semantics), source 02:bb:..:10.
        "priority=30,in_port=1,dl_src=02:bb:00:00:00:10,dl_vlan=10,"
        "actions=output:2",
        "priority=20,in_port=1,dl_src=02:bb:00:00:00:10,"
        "vlan_vid=0x1000/0x1000,actions=output:3",
        "priority=20,in_port=1,dl_src=02:bb:00:00:00:10,vlan_vid=0,"
        "actions=output:4",
    )
    m = 0x10
    untagged = e(m) / base / pay("m-untagged", 24)
    vid10 = e(m) / Dot1Q(vlan=10) / base / pay("m-vid10", 24)
    vid11 = e(m) / Dot1Q(vlan=11) / base / pay("m-vid11", 24)
    prio_tag = e(m) / Dot1Q(vlan=0, prio=5) / base / pay("m-vid0", 24)
    got = dp.exchange([push, qinq, pop_outer, pop, untagged, vid10, vid11,
                       prio_tag])
    want_push = e(1) / Dot1Q(vlan=100, prio=0) / base / pay("push-vlan", 24)
    # push_vlan copies the existing outer tag's PCP/VID; set_field then
    # rewrites the new outer VID only.
    want_qinq = e(2) / Dot1AD(vlan=20, prio=3) / Dot1Q(vlan=10, prio=3) / \
        base / pay("push-qinq", 24)
    want_pop_outer = e(3) / Dot1Q(vlan=10, prio=3) / base / \
        pay("pop-outer", 24)
    want_pop = e(4) / base / pay("pop-vlan", 24)
    h2 = by_case(got["h2"])
    for tag, want in (("push-vlan", want_push), ("push-qinq", want_qinq),
                      ("pop-outer", want_pop_outer), ("pop-vlan", want_pop),
                      ("m-vid10", vid10)):
        assert h2.get(tag) == [bytes(want)], "%s: expected\n%s\ngot\n%s" % (
            tag, show([bytes(want)]), show(h2.get(tag, [])))
    assert sorted(h2) == sorted(["push-vlan", "push-qinq", "pop-outer",
                                 "pop-vlan", "m-vid10"]), sorted(h2)
    assert_only(got, "h3", [vid11, prio_tag])
    assert_only(got, "h4", [untagged])


# --------------------------------------------------------------------------
# 4. MPLS push / pop / TTL, IP dec_ttl and TTL expiry
# --------------------------------------------------------------------------


def test_mpls_and_ttl(dp):
    pay = tag_payload

    def e(i):
        return Ether(src="02:cc:00:00:00:%02x" % i, dst=mac(2))

    def ipudp(ttl=64):
        return IP(src=ip4(1), dst=ip4(2), ttl=ttl) / UDP(sport=5, dport=6)

    def mpls(i, tag, ttl=64, label=100):
        f = e(i) / MPLS(label=label, cos=2, s=1, ttl=ttl) / ipudp() / \
            pay(tag, 24)
        f.type = 0x8847
        return f

    def v6(i, tag, hlim):
        return e(i) / IPv6(src="2001:db8::1", dst="2001:db8::2",
                           hlim=hlim) / UDP(sport=5, dport=6) / pay(tag, 24)

    cases = {
        1: ("priority=100,actions=push_mpls:0x8847,"
            "set_field:77->mpls_label,output:2"),
        2: "priority=100,mpls,actions=pop_mpls:0x0800,output:2",
        3: "priority=100,mpls,actions=set_mpls_ttl:10,output:2",
        4: "priority=100,mpls,actions=dec_mpls_ttl,output:2",
        5: "priority=100,mpls,actions=dec_mpls_ttl,output:2",
        6: "priority=100,ip,actions=dec_ttl,output:2",
        7: "priority=100,ip,actions=dec_ttl,output:2",
        8: "priority=100,ipv6,actions=dec_ttl,output:2",
        9: "priority=100,ipv6,actions=dec_ttl,output:2",
        10: ("priority=100,actions=push_mpls:0x8847,"
             "set_field:88->mpls_label,push_mpls:0x8847,"
             "set_field:99->mpls_label,output:2"),
    }
    dp.flows(*["in_port=1,dl_src=02:cc:00:00:00:%02x,%s" % (i, spec)
               for i, spec in cases.items()])
    sent = {
        "push": e(1) / ipudp(ttl=33) / pay("push", 24),
        "pop": mpls(2, "pop"),
        "set-ttl": mpls(3, "set-ttl"),
        "dec-ttl": mpls(4, "dec-ttl"),
        "mpls-ttl-expiry": mpls(5, "mpls-ttl-expiry", ttl=1),
        "dec4": e(6) / ipudp(ttl=64) / pay("dec4", 24),
        "ip-ttl-expiry": e(7) / ipudp(ttl=1) / pay("ip-ttl-expiry", 24),
        "dec6": v6(8, "dec6", 64),
        "hlim-expiry": v6(9, "hlim-expiry", 1),
        "push2": e(10) / ipudp(ttl=20) / pay("push2", 24),
    }

    # push_mpls on IPv4: label 0 then set to 77, TC 0, BOS 1, TTL copied
    # from the IP TTL (spec 1.3.5 table "push" defaults).
    want_push = e(1) / MPLS(label=77, cos=0, s=1, ttl=33) / ipudp(33) / \
        pay("push", 24)
    want_push.type = 0x8847
    # A second push copies the outer label/TC/TTL, BOS 0.
    want_push2 = e(10) / MPLS(label=99, cos=0, s=0, ttl=20) / \
        MPLS(label=88, cos=0, s=1, ttl=20) / ipudp(20) / pay("push2", 24)
    want_push2.type = 0x8847
    want_pop = e(2) / ipudp() / pay("pop", 24)
    want = {
        "push": bytes(want_push),
        "push2": bytes(want_push2),
        "pop": bytes(want_pop),
        "set-ttl": expect(sent["set-ttl"], lambda p: setattr(p[MPLS], "ttl",
                                                             10)),
        "dec-ttl": expect(sent["dec-ttl"], lambda p: setattr(p[MPLS], "ttl",
                                                             63)),
        "dec4": expect(sent["dec4"], lambda p: setattr(p[IP], "ttl", 63)),
        "dec6": expect(sent["dec6"], lambda p: setattr(p[IPv6], "hlim", 63)),
    }
    got = dp.exchange(list(sent.values()))
    h2 = by_case(got["h2"])
    failures = []
    for tag, w in want.items():
        if h2.get(tag) != [w]:
            failures.append("%s: expected\n%s\ngot\n%s" % (
                tag, show([w]), show(h2.get(tag, []))))
        elif checksum_errors(w):
            failures.append("%s: %s" % (tag, checksum_errors(w)))
    for tag in ("mpls-ttl-expiry", "ip-ttl-expiry", "hlim-expiry"):
        if tag in h2:
            failures.append("%s: TTL expired, must not be forwarded, got\n%s"
                            % (tag, show(h2[tag])))
    assert not failures, "\n".join(failures)
    assert got["h3"] == [] and got["h4"] == []


# --------------------------------------------------------------------------
# 5. Groups: ALL, INDIRECT, chaining, SELECT, FAST_FAILOVER
# --------------------------------------------------------------------------


def test_groups_all_indirect_chain(dp):
    # Group 1 through ovs-ofctl, the others through oxflow ctl.
    dp.ovs("add-group", "group_id=1,type=all,bucket=output:2,bucket=output:3")
    dp.group("group_id=2,type=indirect,"
             "bucket=set_field:02:00:00:00:00:44->eth_dst,output:4")
    dp.group("group_id=3,type=indirect,"
             "bucket=set_field:02:00:00:00:00:33->eth_dst,group:1")
    dp.flows("priority=100,in_port=1,udp,udp_dst=1,actions=group:1",
             "priority=100,in_port=1,udp,udp_dst=2,actions=group:2",
             "priority=100,in_port=1,udp,udp_dst=3,actions=group:3")
    a = udp4("g-all", dport=1)
    b = udp4("g-indirect", dport=2)
    c = udp4("g-chain", dport=3)
    got = dp.exchange([a, b, c])
    b_out = expect(b, lambda p: setattr(p[Ether], "dst", "02:00:00:00:00:44"))
    c_out = expect(c, lambda p: setattr(p[Ether], "dst", "02:00:00:00:00:33"))
    assert_only(got, "h2", [a, c_out])
    assert_only(got, "h3", [a, c_out])
    assert_only(got, "h4", [b_out])
    # The groups read back by ovs-ofctl.
    desc = dp.ovs("dump-groups")
    assert re.search(r"group_id=3,type=indirect,bucket=actions="
                     r"set_field:02:00:00:00:00:33->eth_dst,group:1", desc), \
        desc
    stats = ctl(dp.sw, "dump-group-stats")
    assert re.search(r"group_id=1,.*packet_count=2\b", stats), stats
    assert re.search(r"group_id=3,.*packet_count=1\b", stats), stats


def assert_forwarded(got, sent, lost, hosts=("h2", "h3", "h4")):
    """Each frame of `sent` ({case tag: (expected bytes, host)}) arrived
    exactly once, as expected, at its host and at no other, with correct
    checksums; no frame of `lost` (case tags) arrived anywhere."""
    failures = []
    for tag, (want, host) in sent.items():
        have = by_case(got[host]).get(tag)
        if have != [want]:
            failures.append("%s at %s: expected\n%s\ngot\n%s" % (
                tag, host, show([want]), show(have or [])))
        elif checksum_errors(want):
            failures.append("%s: %s" % (tag, checksum_errors(want)))
        for other in hosts:
            if other != host and tag in by_case(got[other]):
                failures.append("%s also at %s" % (tag, other))
    for tag in lost:
        for h in hosts:
            if tag in by_case(got[h]):
                failures.append("%s must not be forwarded (at %s)" % (tag, h))
    assert not failures, "\n".join(failures)


def assert_flow_packets(dp, table, needle, n):
    """The first flow of `table` whose dump-flows line holds `needle`
    counted `n` packets."""
    out = ctl(dp.sw, "dump-flows", "table=%d" % table)
    line = [ln for ln in out.splitlines() if needle in ln]
    assert line and re.search(r"n_packets=%d\b" % n, line[0]), out


def test_ipv4_router_pipeline(dp):
    """An IPv4 router as HARMLESS's L3 pipeline has it (table 0 sends port
    1 to routing table 1; routes of several lengths to next-hop groups
    that decrement the TTL, rewrite both MACs and output): the shape the
    switch's route template serves. Frames it takes (plain IPv4) and
    frames it leaves to the general path (IP options, a VLAN tag, a
    fragment, TTL 1) come out the same way a router would send them, and
    the flow and group counters count them all."""
    router = "02:00:00:00:00:fe"
    hops = {1: 2, 2: 3, 3: 4}  # group -> port (host h2, h3, h4)
    for g, port in hops.items():
        dp.group("group_id=%d,type=indirect,bucket=dec_ttl,"
                 "set_field:%s->eth_src,set_field:%s->eth_dst,output:%d"
                 % (g, router, mac(port), port))
    routes = [("10.20.2.0/24", 1), ("10.20.3.0/24", 2),
              ("10.20.3.128/25", 3), ("10.20.0.0/16", 2)]
    # More routes, so that the table is big enough for its trie.
    routes += [("10.30.%d.0/24" % i, 1) for i in range(10)]
    dp.flows("table=0,priority=10,in_port=1,actions=goto_table:1",
             *["table=1,priority=%s,ip,nw_dst=%s,actions=group:%d"
               % (net.split("/")[1], net, g) for net, g in routes])

    def frame(tag, dst, ttl=64, **ip):
        return (Ether(src=mac(1), dst=router)
                / IP(src=ip4(1), dst=dst, ttl=ttl, **ip)
                / UDP(sport=1000, dport=2000) / tag_payload(tag, 24))

    tagged = (Ether(src=mac(1), dst=router) / Dot1Q(vlan=5)
              / IP(src=ip4(1), dst="10.20.2.9", ttl=9)
              / UDP(sport=1000, dport=2000) / tag_payload("tagged", 24))
    sent = {
        "r24": (frame("r24", "10.20.2.7"), "h2"),
        "r24b": (frame("r24b", "10.20.3.7"), "h3"),
        "r25": (frame("r25", "10.20.3.200"), "h4"),
        "r16": (frame("r16", "10.20.9.9"), "h3"),
        "options": (frame("options", "10.20.2.8",
                          options=[IPOption(b"\x94\x04\x00\x00")]), "h2"),
        "tagged": (tagged, "h2"),
        "fragment": (frame("fragment", "10.20.2.10", flags="MF"), "h2"),
    }
    lost = {
        "no-route": frame("no-route", "10.40.0.1"),
        "ttl1": frame("ttl1", "10.20.2.11", ttl=1),
    }

    def routed(host):
        """The change a route to `host` makes."""
        def change(p):
            p[Ether].src = router
            p[Ether].dst = mac(int(host[1:]))
            p[IP].ttl -= 1
        return change

    got = dp.exchange([f for f, _ in sent.values()] + list(lost.values()))
    assert_forwarded(got, {tag: (expect(f, routed(host)), host)
                           for tag, (f, host) in sent.items()}, lost)
    # Counters: table 0 saw all 9, the /24 to h2 five (TTL 1 included: the
    # group runs, its TTL decrement fails), group 1 five, group 3 one.
    assert_flow_packets(dp, 0, "in_port=1", 9)
    assert_flow_packets(dp, 1, "10.20.2.0/24", 5)
    stats = ctl(dp.sw, "dump-group-stats")
    assert re.search(r"group_id=1,.*packet_count=5\b", stats), stats
    assert re.search(r"group_id=2,.*packet_count=2\b", stats), stats
    assert re.search(r"group_id=3,.*packet_count=1\b", stats), stats


def test_access_gateway_pipeline(dp):
    """An access gateway as HARMLESS's has it (table 0 pops each customer
    VLAN and sends it to the customer's NAT table; the same private
    address is translated differently per customer; the NAT goes on to a
    routing table of next-hop groups): the shape the switch's chain
    template serves. Frames it takes (one 802.1Q tag, UDP or TCP, with or
    without IP options) and frames it leaves to the general path or that
    find no entry come out as the pipeline says, with correct checksums,
    and the flow and group counters count them all."""
    router = "02:00:00:00:00:fe"
    for g, port in {1: 2, 2: 3}.items():
        dp.group("group_id=%d,type=indirect,bucket=dec_ttl,"
                 "set_field:%s->eth_src,set_field:%s->eth_dst,output:%d"
                 % (g, router, mac(port), port))
    routes = [("10.50.1.0/24", 1), ("10.50.2.0/24", 2), ("10.50.0.0/16", 1)]
    # More routes, so that the table is big enough for its trie.
    routes += [("10.60.%d.0/24" % i, 2) for i in range(10)]
    dp.flows(
        "table=0,priority=10,in_port=1,dl_vlan=100,actions=pop_vlan,goto_table:1",
        "table=0,priority=10,in_port=1,dl_vlan=101,actions=pop_vlan,goto_table:2",
        "table=1,priority=10,udp,nw_src=10.0.0.7,actions=set_field:198.18.0.1->ip_src,"
        "set_field:1025->udp_src,goto_table:20",
        "table=1,priority=10,tcp,nw_src=10.0.0.7,actions=set_field:198.18.0.1->ip_src,"
        "set_field:1026->tcp_src,goto_table:20",
        "table=2,priority=10,udp,nw_src=10.0.0.7,actions=set_field:198.18.0.2->ip_src,"
        "set_field:2049->udp_src,goto_table:20",
        "table=2,priority=10,udp,nw_src=10.0.0.8,actions=set_field:198.18.0.3->ip_src,"
        "set_field:2050->udp_src,goto_table:20",
        *["table=20,priority=%s,ip,nw_dst=%s,actions=group:%d"
          % (net.split("/")[1], net, g) for net, g in routes])

    def frame(tag, vlan, src, dst, l4="udp", ttl=64, **ip):
        t = TCP(sport=1000, dport=80, flags="A") if l4 == "tcp" else UDP(sport=1000, dport=53)
        p = Ether(src=mac(1), dst=router)
        if vlan is not None:
            p = p / Dot1Q(vlan=vlan)
        return p / IP(src=src, dst=dst, ttl=ttl, **ip) / t / tag_payload(tag, 24)

    def nat(host, src, sport):
        """What the tag pop, the NAT and a route to `host` make of a frame."""
        def change(p):
            inner = p[IP]
            p[Ether].remove_payload()
            p[Ether].type = 0x0800
            p[Ether].add_payload(inner)
            p[Ether].src = router
            p[Ether].dst = mac(int(host[1:]))
            p[IP].ttl -= 1
            p[IP].src = src
            p[IP].payload.sport = sport
        return change

    sent = {
        "ce100-udp": (frame("ce100-udp", 100, "10.0.0.7", "10.50.1.9"),
                      "h2", "198.18.0.1", 1025),
        "ce100-tcp": (frame("ce100-tcp", 100, "10.0.0.7", "10.50.2.9", l4="tcp"),
                      "h3", "198.18.0.1", 1026),
        "ce101-udp": (frame("ce101-udp", 101, "10.0.0.7", "10.50.2.4"),
                      "h3", "198.18.0.2", 2049),
        "ce101-b": (frame("ce101-b", 101, "10.0.0.8", "10.50.7.7"),
                    "h2", "198.18.0.3", 2050),
        "options": (frame("options", 100, "10.0.0.7", "10.50.1.8",
                          options=[IPOption(b"\x94\x04\x00\x00")]),
                    "h2", "198.18.0.1", 1025),
    }
    lost = {
        "untagged": frame("untagged", None, "10.0.0.7", "10.50.1.9"),
        "other-vlan": frame("other-vlan", 102, "10.0.0.7", "10.50.1.9"),
        "no-nat": frame("no-nat", 100, "10.0.0.9", "10.50.1.9"),
        "no-route": frame("no-route", 100, "10.0.0.7", "10.70.0.1"),
        "ttl1": frame("ttl1", 100, "10.0.0.7", "10.50.1.9", ttl=1),
    }
    got = dp.exchange([f for f, *_ in sent.values()] + list(lost.values()))
    assert_forwarded(got, {tag: (expect(f, nat(host, src, sport)), host)
                           for tag, (f, host, src, sport) in sent.items()}, lost)
    # Counters: the VLAN 100 entry saw six frames (three to the routes,
    # the NAT miss, the route miss, TTL 1), NAT table 1's UDP entry four
    # (its two routed frames, the route miss, TTL 1),
    # group 1 four (TTL 1 included: the group runs, its TTL decrement
    # fails), group 2 two.
    assert_flow_packets(dp, 0, "dl_vlan=100", 6)
    assert_flow_packets(dp, 1, "udp", 4)
    stats = ctl(dp.sw, "dump-group-stats")
    assert re.search(r"group_id=1,.*packet_count=4\b", stats), stats
    assert re.search(r"group_id=2,.*packet_count=2\b", stats), stats


def test_load_balancer_behind_acl_pipeline(dp):
    """A load balancer behind an ACL as HARMLESS's lb_acl has it (table
    0 allows source blocks to a virtual IP and denies one host's SSH;
    table 1 hands the VIP to a SELECT group whose backends rewrite the
    destination address and MAC): the shape the switch's chain template
    serves through a table without an exact index (a trie of sources and
    a subtable of deny rules). Allowed TCP and UDP flows, with or without
    IP options, reach one backend each, the same one for every frame of a
    flow, rewritten with correct checksums; denied frames and frames from
    outside the blocks are lost; the flow and group counters count them."""
    vip = "172.16.0.1"
    backends = {"h2": "10.200.0.2", "h3": "10.200.0.3"}
    dp.group("group_id=7,type=select,%s" % ",".join(
        "bucket=set_field:%s->ip_dst,set_field:%s->eth_dst,output:%d"
        % (addr, mac(int(h[1:])), int(h[1:])) for h, addr in backends.items()))
    blocks = ["10.0.0.0/24", "10.1.0.0/16"] + ["10.%d.%d.0/24" % (10 + i // 4, i)
                                                 for i in range(16)]
    dp.flows(
        *["table=0,priority=100,%s,nw_src=%s,nw_dst=%s,actions=goto_table:1"
          % (proto, b, vip) for b in blocks for proto in ("tcp", "udp")],
        "table=0,priority=200,tcp,nw_src=10.0.0.13,nw_dst=%s,tp_dst=22,actions=drop" % vip,
        "table=1,priority=100,ip,nw_dst=%s,actions=group:7" % vip)

    def frame(tag, src, sport, l4="tcp", dport=80, **ip):
        t = (TCP(sport=sport, dport=dport, flags="A") if l4 == "tcp"
             else UDP(sport=sport, dport=dport))
        return (Ether(src=mac(1), dst="02:00:00:00:00:fe")
                / IP(src=src, dst=vip, **ip) / t / tag_payload(tag, 24))

    flows = {"tcp-%d" % i: frame("tcp-%d" % i, "10.0.0.%d" % (20 + i), 3000 + i)
             for i in range(12)}
    flows.update({"udp-%d" % i: frame("udp-%d" % i, "10.1.7.%d" % i, 4000 + i, l4="udp",
                                      dport=53) for i in range(4)})
    flows["ssh-allowed"] = frame("ssh-allowed", "10.0.0.14", 5000, dport=22)
    flows["options"] = frame("options", "10.0.0.9", 5001,
                             options=[IPOption(b"\x94\x04\x00\x00")])
    lost = {
        "denied": frame("denied", "10.0.0.13", 5002, dport=22),
        "outside": frame("outside", "10.2.0.1", 5003),
    }
    # Every allowed flow twice: the second frame must take the first's
    # backend (the flow hash is the same).
    again = {"%s-again" % t: frame("%s-again" % t, f[IP].src, f.sport,
                                   l4="udp" if t.startswith("udp") else "tcp",
                                   dport=f.dport)
             for t, f in flows.items() if t != "options"}
    sent_frames = list(flows.values()) + list(again.values()) + list(lost.values())
    got = dp.exchange(sent_frames)
    to = {}
    for tag in list(flows) + list(again):
        hosts = [h for h in backends if tag in by_case(got[h])]
        assert len(hosts) == 1, "%s reached %s" % (tag, hosts or "no backend")
        to[tag] = hosts[0]

    def backend(host):
        def change(p):
            p[Ether].dst = mac(int(host[1:]))
            p[IP].dst = backends[host]
        return change

    every = dict(flows, **again)
    assert_forwarded(got, {t: (expect(f, backend(to[t])), to[t]) for t, f in every.items()},
                     lost)
    sticky = {t: (to[t], to["%s-again" % t]) for t in flows if t != "options"
              and to[t] != to["%s-again" % t]}
    assert not sticky, "flows split over backends: %s" % sticky
    assert set(to.values()) == set(backends), "every flow took one backend: %s" % to
    # Counters: the deny entry one frame, the VIP entry and the group
    # every allowed frame (35), the 10.0.0.0/24 TCP entry 27 (12 flows and
    # their second frames, SSH allowed twice, the options frame; the
    # denied frame is the deny entry's).
    n = len(every)
    assert_flow_packets(dp, 0, "tp_dst=22", 1)
    assert_flow_packets(dp, 0, "nw_src=10.0.0.0/24", 2 * 12 + 2 + 1)
    assert_flow_packets(dp, 1, "nw_dst=%s" % vip, n)
    stats = ctl(dp.sw, "dump-group-stats")
    assert re.search(r"group_id=7,.*packet_count=%d\b" % n, stats), stats


def test_group_select_spreads_and_sticks(dp):
    dp.group("group_id=4,type=select,bucket=output:2,bucket=output:3")
    dp.flows("priority=100,in_port=1,udp,actions=group:4")
    nflows, per_flow = 32, 3
    frames = []
    for k in range(per_flow):
        for f in range(nflows):
            frames.append(udp4("sel-%d" % f, sport=3000 + f, dport=4000))
    got = dp.exchange(frames)
    assert got["h4"] == []
    seen = {}
    for host in ("h2", "h3"):
        for tag, fs in by_case(got[host]).items():
            seen.setdefault(tag, {})[host] = len(fs)
    assert len(seen) == nflows, "flows missing: %s" % sorted(
        set("sel-%d" % f for f in range(nflows)) - set(seen))
    split = {t: c for t, c in seen.items() if len(c) != 1}
    assert not split, "flows split over buckets (not sticky): %s" % split
    counts = {t: sum(c.values()) for t, c in seen.items()}
    assert all(n == per_flow for n in counts.values()), counts
    used = {h for c in seen.values() for h in c}
    assert used == {"h2", "h3"}, (
        "all %d flows took one bucket: %s" % (nflows, used))


def _ff_setup(dp):
    dp.group("group_id=5,type=ff,bucket=watch_port:2,output:2,"
             "bucket=watch_port:3,output:3")
    dp.flows("priority=100,in_port=1,udp,actions=group:5")
    topo, sw, h2 = dp.topo, dp.sw, dp.h["h2"]
    p2 = topo.switch_ports[1]

    def link(down, host_end):
        """Take port 2's link down/up at the switch side (ip link set
        <root iface>) or at the host end (eth0 in h2, the switch side then
        loses carrier); wait until the switch reports it."""
        if host_end:
            topo.set_link("eth0", not down, host=h2)
        else:
            topo.set_link(p2, not down)
        dp_util.wait_until(lambda: dp_util.port_link_down(sw, 2) == down,
                           what="port 2 %s" % ("LINK_DOWN" if down
                                               else "up"))

    def restore():
        topo.set_link(p2, True)
        topo.set_link("eth0", True, host=h2)

    return link, restore


def test_group_select_spreads_correlated_ports(dp):
    dp.group("group_id=4,type=select,bucket=output:2,bucket=output:3")
    dp.flows("priority=100,in_port=1,udp,actions=group:4")
    frames = [udp4("selc-%d" % f, sport=3000 + f, dport=4000 + f)
              for f in range(16)]
    got = dp.exchange(frames, dsts=("h2", "h3"))
    assert len(got["h2"]) + len(got["h3"]) == 16
    assert got["h2"] and got["h3"], (
        "16 flows (udp %d->%d ... ) took one bucket: h2 %d, h3 %d" % (
            3000, 4000, len(got["h2"]), len(got["h3"])))


def test_group_fast_failover(dp):
    link, restore = _ff_setup(dp)
    # Two captures over the sequence; each frame's tag says which phase sent
    # it, so where it landed tells which bucket was live. h2 is not captured
    # while its own eth0 is down (a capture socket fails with ENETDOWN).
    expect_at = {}  # tag -> the host that must receive it
    frames = {}
    got = {}
    try:
        with HostSocket(dp.h["h1"]) as s:

            def send(tag, host=None):
                frames[tag] = bytes(udp4(tag))
                expect_at[tag] = host
                s.send(frames[tag])
                time.sleep(0.05)

            with capture([dp.h["h3"], dp.h["h4"]]) as got1:
                send("ff-primary", "h2")
                link(True, host_end=True)
                send("ff-backup-host-end", "h3")
                link(False, host_end=True)
            with capture([dp.h[n] for n in ("h2", "h3", "h4")]) as got2:
                send("ff-back-host-end", "h2")
                link(True, host_end=False)
                send("ff-backup-switch-side", "h3")
                link(False, host_end=False)
                # The first frame after a switch-side down/up is lost:
                # test_fast_failover_first_frame_after_switch_side_up.
                send("ff-lost-switch-side")
                send("ff-back-switch-side", "h2")
    finally:
        restore()
    for h in ("h2", "h3", "h4"):
        got[h] = got1.get(h, []) + got2.get(h, [])
    for tag, host in expect_at.items():
        where = [h for h in got if frames[tag] in got[h]]
        if host is None:
            assert where in ([], ["h2"]), "%s: seen on %s" % (tag, where)
        elif tag == "ff-primary":
            # Sent before h2 was captured: it must not reach h3/h4.
            assert where == [], "%s: seen on %s" % (tag, where)
        else:
            assert where == [host], "%s: expected on %s only, seen on %s" % (
                tag, host, where or "no host")
    for h, fs in got.items():
        extra = [case_of(f) for f in fs if case_of(f) not in expect_at]
        assert not extra, "%s received unexpected frames %s" % (h, extra)


def test_fast_failover_first_frame_after_switch_side_up(dp):
    link, restore = _ff_setup(dp)
    try:
        link(True, False)
        link(False, False)
        f = udp4("ff-first-after-up")
        got = dp.exchange([f], dsts=("h2", "h3"), timeout=0.3)
        assert_only(got, "h2", [f], others=("h3",))
    finally:
        restore()


# --------------------------------------------------------------------------
# 6. A meter limiting the rate
# --------------------------------------------------------------------------


def test_meter_drops_above_rate(dp):
    dp.meter("meter=1,pktps,burst,stats,band=type=drop,rate=100,"
             "burst_size=10")
    dp.flows("priority=100,in_port=1,udp,udp_dst=9,"
             "actions=meter:1,output:2")
    n = 1000
    frames = [bytes(udp4("meter-%d" % i, dport=9)) for i in range(n)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        s.send(frames)
    arrived = len(got["h2"])
    assert 0 < arrived < n // 2, (
        "meter at 100 pktps (burst 10): %d of %d frames arrived" % (
            arrived, n))
    # Every packet that entered the meter was either dropped by its band
    # or forwarded.
    stats = ctl(dp.sw, "meter-stats", "meter=1")
    m = re.search(r"packet_in_count:(\d+).*?\n0: packet_count:(\d+)", stats,
                  re.S)
    assert m, stats
    entered, dropped = int(m.group(1)), int(m.group(2))
    assert dropped > 0 and entered - dropped == arrived, (
        "meter stats: %d in, %d dropped by the band, but %d arrived\n%s" % (
            entered, dropped, arrived, stats))


# --------------------------------------------------------------------------
# 7. Barrier: after the reply, the very next packet hits the new rule
# --------------------------------------------------------------------------


def test_barrier_next_packet_hits_new_rule(dp):
    # Default: everything from h1 goes to h3. Each round adds a more
    # specific rule to h2 and sends its packet right after ctl returns
    # (ctl sends the flow-mod, then a barrier, and waits for the reply).
    dp.flows("priority=1,in_port=1,actions=output:3")
    rounds = 20
    with HostSocket(dp.h["h1"]) as s, \
            capture([dp.h["h2"], dp.h["h3"]]) as got:
        for r in range(rounds):
            ctl(dp.sw, "add-flow",
                "priority=%d,in_port=1,udp,udp_dst=%d,actions=output:2"
                % (100 + r, 5000 + r))
            s.send(udp4("barrier-%d" % r, dport=5000 + r))
    late = sorted(case_of(f) for f in got["h3"])
    assert late == [], "packets sent right after the barrier reply took "\
        "the old rule: %s" % late
    assert sorted(case_of(f) for f in got["h2"]) == sorted(
        "barrier-%d" % r for r in range(rounds))


# --------------------------------------------------------------------------
# 8. Garbage and truncated frames
# --------------------------------------------------------------------------


def _garbage_frames():
    eth = bytes(Ether(src=mac(1), dst=mac(2), type=0x0800))[:12]
    ip_ok = bytes(IP(src=ip4(1), dst=ip4(2)) / TCP(dport=80) /
                  tag_payload("x", 8))
    ihl3 = bytearray(ip_ok)
    ihl3[0] = 0x43
    big_len = bytearray(ip_ok)
    big_len[2:4] = (4000).to_bytes(2, "big")
    rnd = random.Random(7)
    return {
        "10-byte": bytes(Ether(src=mac(1), dst=mac(2)))[:10],
        "eth-only-ipv4": eth + b"\x08\x00",
        "ipv4-ihl3": eth + b"\x08\x00" + bytes(ihl3),
        "ipv4-ihl15-short": eth + b"\x08\x00" + b"\x4f" + ip_ok[1:20],
        "ipv4-len-4000": eth + b"\x08\x00" + bytes(big_len),
        "ipv4-tcp-cut": eth + b"\x08\x00" + ip_ok[:24],
        "ipv6-cut": eth + b"\x86\xdd" + bytes(IPv6())[:20],
        "ipv6-ext-loop": eth + b"\x86\xdd" + bytes(
            IPv6(nh=0, plen=8)) + b"\x00\x00" + b"\x00" * 6,
        # VLAN tags cut short: the kernel itself drops a tag shorter than
        # TCI + inner type (skb_vlan_untag) before any AF_PACKET socket
        # sees it, so these keep the tags whole and cut what follows.
        "vlan-ip-cut": eth + b"\x81\x00\x00\x0a\x08\x00\x45\x00",
        "qinq-ip-cut": eth + b"\x88\xa8\x00\x14\x81\x00\x00\x0a\x08\x00"
        b"\x45",
        "mpls-no-bos": eth + b"\x88\x47" + b"\x00\x00\x00\x40" * 6,
        "arp-cut": eth + b"\x08\x06\x00\x01\x08\x00",
        "icmp6-nd-cut": eth + b"\x86\xdd" + bytes(
            IPv6(nh=58, plen=4, src="fe80::1", dst="ff02::1")) +
        b"\x87\x00\x00\x00",
        "random-60": bytes(rnd.getrandbits(8) for _ in range(60)),
        "random-1514": bytes(rnd.getrandbits(8) for _ in range(1514)),
    }


def test_garbage_frames_survive_and_are_counted(dp):
    # Rules that make the switch parse deep and rewrite: TCP match with a
    # port rewrite, dec_ttl on IP, ND target match, catch-all to h2.
    dp.flows(
        "priority=50,in_port=1,tcp,tcp_dst=80,"
        "actions=set_field:81->tcp_dst,dec_ttl,output:2",
        "priority=40,in_port=1,ip,actions=dec_ttl,set_field:1->ip_dscp,"
        "output:2",
        "priority=40,in_port=1,icmp6,icmpv6_type=135,nd_target=fe80::1,"
        "actions=output:2",
        "priority=40,in_port=1,mpls,actions=dec_mpls_ttl,pop_mpls:0x0800,"
        "output:2",
        "priority=40,in_port=1,dl_vlan=10,actions=pop_vlan,output:2",
        "priority=1,in_port=1,actions=output:2",
    )
    before = dp_util.port_stats(dp.sw)
    garbage = _garbage_frames()
    sent = 0
    with HostSocket(dp.h["h1"]) as s:
        for name, frame in garbage.items():
            try:
                s.send(frame)
                sent += 1
            except OSError as exc:  # the kernel refused the frame itself
                if len(frame) >= 14:
                    raise AssertionError("could not send %s: %s" % (name,
                                                                    exc))
    assert dp.sw.running(), "oxflow died on garbage:\n" + dp.sw.log()[-4000:]
    # Valid traffic still forwarded, byte-exact, with the rewrites.
    ok = udp4("after-garbage", dport=77, ttl=9)
    got = dp.exchange([ok], dsts=("h2",))
    assert got["h2"] == [expect(ok, lambda p: (setattr(p[IP], "ttl", 8),
                                               setattr(p[IP], "tos", 4)))], \
        show(got["h2"])
    after = dp_util.port_stats(dp.sw)
    rx = after[1]["rx_pkts"] - before[1]["rx_pkts"]
    assert rx == sent + 1, (
        "port 1 rx counter grew by %d, sent %d garbage + 1 valid frames" % (
            rx, sent))
    assert dp.sw.running()


# --------------------------------------------------------------------------
# Worker statistics (oxflow's experimenter multipart)
# --------------------------------------------------------------------------


def worker_stats(sw):
    """`oxflow ctl dump-worker-stats` parsed: {worker: {counter: int}}."""
    out = ctl(sw, "dump-worker-stats")
    lines = out.splitlines()
    assert lines[0].startswith("OXFLOW_WORKER_STATS reply"), out
    stats = {}
    for line in lines[1:]:
        line = line.strip()
        if line.startswith("worker "):
            head, rest = line.split(":", 1)
            stats[int(head.split()[1])] = {
                k: int(v) for k, v in (kv.split("=") for kv in rest.split())}
    assert len(stats) == int(lines[0].split()[-2]), out
    return stats


def test_dump_worker_stats_counts_forwarded_frames(dp):
    dp.flows("priority=10,in_port=1,actions=output:2")
    before = worker_stats(dp.sw)
    frames = [udp4("ws-%d" % i) for i in range(40)]
    got = dp.quick(frames, dsts=("h2",))
    assert len([f for f in got["h2"] if b"ws-" in f]) == 40, show(got["h2"])
    after = worker_stats(dp.sw)
    assert sorted(after) == sorted(before) and after, (before, after)

    def total(s, k):
        return sum(w[k] for w in s.values())
    # Other traffic (IPv6 neighbour discovery, say) may add frames; the
    # 40 sent are counted in any case, and forwarding them took busy time
    # in rounds that received something.
    assert total(after, "rx_pkts") - total(before, "rx_pkts") >= 40
    busy = total(after, "busy_rounds") - total(before, "busy_rounds")
    assert 1 <= busy <= total(after, "rx_pkts") - total(before, "rx_pkts")
    busy_ns = total(after, "busy_ns") - total(before, "busy_ns")
    pipeline_ns = total(after, "pipeline_ns") - total(before, "pipeline_ns")
    assert 0 < pipeline_ns <= busy_ns, (pipeline_ns, busy_ns)
    for w in after.values():
        assert w["busy_rounds"] <= w["rounds"], after
