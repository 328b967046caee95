"""OpenFlow 1.3.5 conformance cases through the real switch (issue 35,
item 1): set-field of eth_type / ip_proto / sctp ports, push_mpls on a
frame without IP, SELECT groups spreading ARP and weighted flows, DSCP
remark meters. Same network and helpers as test_switch_dataplane.py (its
module-scoped switch is imported by name, not its tests)."""

import re
import time

from scapy.all import ARP, IP, SCTP, TCP, Ether, Raw, SCTPChunkData
from scapy.contrib.mpls import MPLS

from dp_util import HostSocket, capture, checksum_errors, tag_payload
from test_switch_dataplane import ctl, dp, ip4, mac, net, udp4  # noqa: F401

AF11 = 10
AF12 = 12


def paced(sock, frames, pps):
    """Sends `frames` at about `pps` frames a second, so that the capture
    on the far side keeps up (a burst of a thousand frames at full speed
    overruns the sniffer, which then misses frames the switch did send)."""
    gap = 1.0 / pps
    start = time.monotonic()
    for i, f in enumerate(frames):
        delay = start + i * gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.send(f)


def meter_band_count(sw, meter_id):
    stats = ctl(sw, "meter-stats", "meter=%d" % meter_id)
    m = re.search(r"packet_in_count:(\d+).*?\n0: packet_count:(\d+)", stats,
                  re.S)
    assert m, stats
    return int(m.group(1)), int(m.group(2))


def test_remark_meter_remarks_exactly_what_exceeds(dp):
    dp.meter("meter=1,pktps,burst,stats,band=type=dscp_remark,rate=100,"
             "burst_size=10,prec_level=1")
    dp.flows("priority=100,in_port=1,udp,udp_dst=9,"
             "actions=meter:1,output:2")
    # Twice the band's rate for 2 s.
    n = 400
    frames = [bytes(udp4("rmk-%d" % i, dport=9, tos=AF11 << 2))
              for i in range(n)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        paced(s, frames, 200)
    out = got["h2"]
    dscps = [Ether(f)[IP].tos >> 2 for f in out]
    remarked = dscps.count(AF12)
    entered, band = meter_band_count(dp.sw, 1)
    # Every frame passes; the band's packets, and only those, are AF12.
    assert len(out) == n == entered, (len(out), entered)
    assert set(dscps) <= {AF11, AF12}, set(dscps)
    assert 0 < band < n and remarked == band, (remarked, band)
    # About the excess over 100 pkt/s plus a burst of 10 (not exact: the
    # pacing is the sender's).
    assert abs(band - (n - 200 - 10)) < n // 10, band


def test_remark_meter_passes_arp_unchanged(dp):
    dp.meter("meter=2,pktps,burst,stats,band=type=dscp_remark,rate=100,"
             "burst_size=10,prec_level=1")
    dp.flows("priority=100,in_port=1,arp,actions=meter:2,output:2")
    # Twice the band's rate for 1.5 s.
    n = 300
    frames = [bytes(Ether(src=mac(1), dst="ff:ff:ff:ff:ff:ff")
                    / ARP(op=1, hwsrc=mac(1), psrc=ip4(1),
                          pdst="10.0.1.%d" % (i % 250))
                    / tag_payload("arp-%d" % i, 24))
              for i in range(n)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        paced(s, frames, 200)
    entered, band = meter_band_count(dp.sw, 2)
    assert entered == n and band > 0, (entered, band)
    assert sorted(got["h2"]) == sorted(frames)


def flows_file(dp, lines):
    """`oxflow ctl add-flows` of `lines` (which may use command words and
    port names)."""
    import os
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".flows",
                                     delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        return ctl(dp.sw, "add-flows", f.name)
    finally:
        os.unlink(f.name)


def test_set_field_eth_type_ip_proto_sctp_and_push_mpls(dp):
    p1, p2 = dp.topo.switch_ports[0], dp.topo.switch_ports[1]
    # Port names and command words of add-flows on the way.
    flows_file(dp, [
        "delete",
        "add priority=10,in_port=%s,tcp,tcp_dst=7,"
        "actions=set_field:253->ip_proto,output:%s" % (p1, p2),
        "priority=10,in_port=%s,arp,arp_op=1,"
        "actions=set_field:0x88b5->eth_type,output:%s" % (p1, p2),
        "priority=10,in_port=%s,arp,arp_op=2,"
        "actions=push_mpls:0x8847,output:%s" % (p1, p2),
        "priority=10,in_port=%s,sctp,sctp_dst=9,"
        "actions=set_field:4321->sctp_src,output:%s" % (p1, p2),
    ])
    flows = ctl(dp.sw, "dump-flows")
    assert flows.count("in_port=1,") == 4, flows
    eth = Ether(src=mac(1), dst=mac(2))
    tcp = eth / IP(src=ip4(1), dst=ip4(2)) / TCP(sport=5, dport=7) \
        / tag_payload("cf-tcp", 8)
    arp_req = Ether(src=mac(1), dst="ff:ff:ff:ff:ff:ff") / ARP(
        op=1, hwsrc=mac(1), psrc=ip4(1), pdst=ip4(2)) / tag_payload(
        "cf-arp1", 8)
    arp_rep = Ether(src=mac(1), dst=mac(2)) / ARP(
        op=2, hwsrc=mac(1), psrc=ip4(1), pdst=ip4(2)) / tag_payload(
        "cf-arp2", 8)
    sctp = eth / IP(src=ip4(1), dst=ip4(2)) / SCTP(sport=1234, dport=9) \
        / SCTPChunkData(data=b"OXDP:cf-sctp;")
    frames = [bytes(f) for f in (tcp, arp_req, arp_rep, sctp)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        s.send(frames)
    by_kind = {}
    for f in got["h2"]:
        e = Ether(f)
        if e.type == 0x88b5:
            by_kind["eth_type"] = f
        elif e.type == 0x8847:
            by_kind["mpls"] = f
        elif IP in e and e[IP].proto == 253:
            by_kind["ip_proto"] = f
        elif SCTP in e:
            by_kind["sctp"] = f
    assert sorted(by_kind) == ["eth_type", "ip_proto", "mpls", "sctp"], \
        [f.hex() for f in got["h2"]]
    # ip_proto: the protocol byte and the IPv4 header checksum, nothing else.
    want = bytearray(frames[0])
    want[23] = 253
    ip = IP(bytes(want[14:]))
    ip.chksum = None
    want[24:26] = bytes(IP(bytes(ip)))[10:12]
    assert by_kind["ip_proto"] == bytes(want)
    # eth_type: the two bytes after the MACs.
    assert by_kind["eth_type"] == frames[1][:12] + b"\x88\xb5" + frames[1][14:]
    # push_mpls on ARP: label 0, BoS, TTL 0 (OF 1.3.5 §5.12.1).
    m = by_kind["mpls"]
    assert m[12:18] == b"\x88\x47\x00\x00\x01\x00", m.hex()
    assert m[18:] == frames[2][14:]
    # sctp_src: the port and a valid CRC32c.
    e = Ether(by_kind["sctp"])
    assert e[SCTP].sport == 4321
    assert checksum_errors(by_kind["sctp"]) == []


def test_select_group_spreads_arp_flows(dp):
    dp.group("group_id=7,type=select,bucket=weight:1,output:2,"
             "bucket=weight:1,output:3")
    dp.flows("priority=10,in_port=1,arp,arp_tpa=10.0.2.0/24,actions=group:7")
    n = 200
    frames = [bytes(Ether(src=mac(1), dst="ff:ff:ff:ff:ff:ff")
                    / ARP(op=1, hwsrc=mac(1), psrc=ip4(1),
                          pdst="10.0.2.%d" % i)
                    / tag_payload("sel-%d" % i, 8))
              for i in range(n)]
    with HostSocket(dp.h["h1"]) as s:
        paced(s, frames, 1000)
    deadline = time.monotonic() + 5
    while True:
        stats = ctl(dp.sw, "dump-group-stats", "group_id=7")
        counts = [int(c) for c in re.findall(
            r"bucket\d+:packet_count=(\d+)", stats)]
        if sum(counts) >= n or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(counts) == 2 and sum(counts) == n, stats
    # 200 flows at even weights: each bucket within 30 % of half.
    assert all(abs(c - n // 2) < 30 for c in counts), stats


def test_ctl_monitor_invalid_ttl_and_exthdr(dp):
    # Flag names for ipv6_exthdr round-trip through the switch.
    dp.flows("priority=5,ipv6,ipv6_exthdr=+frag-esp,actions=drop")
    assert "ipv6_exthdr=-esp+frag" in ctl(dp.sw, "dump-flows"), \
        ctl(dp.sw, "dump-flows")
    # dec_ttl on a TTL-1 frame: an INVALID_TTL packet-in, which a monitor
    # asks for with invalid_ttl (the async config's default leaves it out).
    dp.flows("priority=10,in_port=1,udp,udp_dst=11,actions=dec_ttl,output:2")
    import subprocess
    from oxflow.switch import oxflow_bin
    mon = subprocess.Popen(
        [oxflow_bin(), "ctl", "monitor", dp.sw.target, "--count=1",
         "0xffff", "invalid_ttl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        with HostSocket(dp.h["h1"]) as s:
            for _ in range(5):
                s.send(bytes(udp4("ttl1", dport=11, ttl=1)))
                time.sleep(0.2)
        out, err = mon.communicate(timeout=20)
    finally:
        if mon.poll() is None:
            mon.kill()
    assert mon.returncode == 0, err
    assert "OFPT_PACKET_IN" in out and "(via invalid_ttl)" in out, out


def test_select_method_round_robin_from_the_config(tmp_path):
    """`select_method = "round_robin"` in the config file: one flow's
    frames are shared exactly by weight (one worker)."""
    import dp_util
    from oxflow.netns import Topology
    from oxflow.switch import Switch
    dp_util.require_oxflow()
    cfg = tmp_path / "oxflow.toml"
    cfg.write_text('select_method = "round_robin"\nworkers = 1\n')
    with Topology() as topo:
        for i, name in enumerate(("h1", "h2", "h3"), 1):
            h = topo.add_host(name)
            topo.add_switch_link(h, ip4(i) + "/24", mac=mac(i))
        with Switch(topo, dpid=0xd1, fail_mode="secure",
                    extra_args=["--config", str(cfg)],
                    log_path=tmp_path / "oxflow.log") as sw:
            ctl(sw, "add-group", "group_id=3,type=select,"
                "bucket=weight:1,output:2,bucket=weight:3,output:3")
            ctl(sw, "add-flow", "priority=10,in_port=1,udp,udp_dst=9,"
                "actions=group:3")
            frame = bytes(udp4("rr", dport=9))
            with HostSocket(topo.hosts["h1"]) as s:
                paced(s, [frame] * 40, 400)
            # (Polled until all 40 are counted: the last may still be on
            # their way through the worker when the sender returns.)
            deadline = time.monotonic() + 5
            while True:
                stats = ctl(sw, "dump-group-stats", "group_id=3")
                counts = [int(c) for c in re.findall(
                    r"bucket\d+:packet_count=(\d+)", stats)]
                if sum(counts) >= 40 or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert counts == [10, 30], stats


def test_ctl_ssl_target_against_the_switch(tmp_path):
    """`oxflow ctl ... ssl:` against the switch's own `ptls:` listener
    (mutual authentication): a client certificate from the switch's CA
    works, one from another CA is refused."""
    import subprocess

    import cp_util
    import dp_util
    from oxflow.netns import free_tcp_port
    from oxflow.switch import Switch, oxflow_bin
    dp_util.require_oxflow()
    pki = cp_util.make_pki(tmp_path / "pki")
    cfg = tmp_path / "tls.toml"
    cfg.write_text('[tls]\nprivate_key = "%s"\ncertificate = "%s"\n'
                   'ca_cert = "%s"\n' % (pki / "switch-key.pem",
                                         pki / "switch-cert.pem",
                                         pki / "ca-cert.pem"))
    port = free_tcp_port()
    target = "ssl:127.0.0.1:%d" % port

    def ssl_ctl(leaf, *args):
        return subprocess.run(
            [oxflow_bin(), "ctl", "--timeout=5",
             "--private-key=%s" % (pki / ("%s-key.pem" % leaf)),
             "--certificate=%s" % (pki / ("%s-cert.pem" % leaf)),
             "--ca-cert=%s" % (pki / "ca-cert.pem")] + list(args),
            capture_output=True, text=True, timeout=30)

    with Switch([], dpid=0x35, log_path=tmp_path / "oxflow.log",
                extra_args=["--config", str(cfg),
                            "--listen", "ptls:%d:127.0.0.1" % port]):
        deadline = time.monotonic() + 10
        while True:
            good = ssl_ctl("controller", "dump-desc", target)
            if good.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert good.returncode == 0, good.stderr
        assert "Manufacturer: oxflow" in good.stdout, good.stdout
        show = ssl_ctl("controller", "show", target)
        assert "dpid:0000000000000035" in show.stdout, show.stdout + show.stderr
        rogue = ssl_ctl("rogue", "dump-desc", target)
        assert rogue.returncode == 1, rogue.stdout
        assert rogue.stderr.strip(), "refused without a message"
