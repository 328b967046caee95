"""Tests of the namespace topology builder (oxflow.netns) and the scapy
send/capture helpers (oxflow.traffic). Need root and iproute2; no switch:
hosts are wired directly with veth pairs, or to the root namespace."""

import os
import subprocess
import sys
import time

import pytest

from oxflow import netns
from oxflow.netns import Process, Topology, parse_ping
from oxflow.traffic import send_and_capture

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="network namespaces need root")

# PID_MAX_LIMIT is 4194304 on 64-bit Linux: this pid can never be alive.
DEAD_PID = 4194390


def our_netns(prefix="oxf"):
    mine = "%s%d-" % (prefix, os.getpid())
    return [n for n in netns.list_netns() if n.startswith(mine)]


def our_links(prefix="oxf"):
    mine = "%s%d" % (prefix, os.getpid())
    return [n for n in netns.list_links() if n.startswith(mine)]


def test_parse_ping():
    out = ("PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n\n"
           "--- 10.0.0.2 ping statistics ---\n"
           "3 packets transmitted, 2 received, 33.3333% packet loss, "
           "time 402ms\nrtt min/avg/max/mdev = 0.040/0.055/0.070/0.015 ms\n")
    r = parse_ping(out)
    assert (r.transmitted, r.received, r.loss_pct, r.rtt_avg_ms) == (
        3, 2, 33.3333, 0.055)
    r = parse_ping("1 packets transmitted, 0 received, 100% packet loss\n")
    assert (r.received, r.loss_pct, r.rtt_avg_ms) == (0, 100.0, None)
    with pytest.raises(ValueError):
        parse_ping("ping: connect: Network is unreachable")


def test_hosts_ping_and_cleanup():
    with Topology() as topo:
        h1, h2, h3 = (topo.add_host(n) for n in ("h1", "h2", "h3"))
        topo.link_hosts(h1, h2, "10.77.0.1/24", "10.77.0.2/24",
                        mac1="02:00:00:00:00:01")
        # Switch-side links: root ends exist, are up, and listed in order.
        p1 = topo.add_switch_link(h3, "10.78.0.3/24", "02:00:00:00:00:03")
        p2 = topo.add_switch_link(h1, "10.78.0.1/24")
        assert topo.switch_ports == [p1, p2]
        assert len(p1) <= 15 and p1 in netns.list_links()
        state = netns.sh(["cat", "/sys/class/net/%s/operstate" % p1]).stdout
        assert state.strip() == "up"
        assert h3.mac() == "02:00:00:00:00:03"
        assert h1.mac("eth0") == "02:00:00:00:00:01"
        assert h1.ip("eth1") == "10.78.0.1"
        assert set(h1.ifaces) == {"eth0", "eth1"}

        r = h1.ping("10.77.0.2", count=2)
        assert r.received == 2 and r.loss_pct == 0.0 and r.rtt_avg_ms > 0
        # No path h1 -> h3 (h3 hangs off the root namespace, no switch).
        r = h1.ping("10.78.0.3", count=1, timeout=1)
        assert r.received == 0
        assert len(our_netns()) == 3
    assert our_netns() == []
    assert our_links() == []


def test_cleanup_on_exception():
    with pytest.raises(RuntimeError):
        with Topology() as topo:
            h = topo.add_host("a")
            topo.add_switch_link(h)
            raise RuntimeError("boom")
    assert our_netns() == [] and our_links() == []


def test_stale_leftovers_removed():
    ns = "oxf%d-1-h1" % DEAD_PID
    link = "oxf%ds1" % DEAD_PID
    netns.sh(["ip", "netns", "add", ns])
    netns.sh(["ip", "link", "add", link, "type", "veth", "peer", "name",
              "oxf%dx2" % DEAD_PID])
    try:
        with Topology():
            assert ns not in netns.list_netns()
            assert link not in netns.list_links()
            assert "oxf%dx2" % DEAD_PID not in netns.list_links()
    finally:
        netns.sh(["ip", "netns", "del", ns], check=False)
        netns.sh(["ip", "link", "del", link], check=False)


def test_capture_byte_exact_with_vlan_and_qinq():
    from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
    from scapy.layers.inet import IP, UDP
    from scapy.packet import Raw

    with Topology() as topo:
        h1, h2, h3 = (topo.add_host(n) for n in ("h1", "h2", "h3"))
        topo.link_hosts(h1, h2)
        topo.link_hosts(h1, h3)  # h1 eth1 <-> h3 eth0
        src, dst = h1.mac(), h2.mac()
        plain = (Ether(src=src, dst=dst) /
                 IP(src="10.1.0.1", dst="10.1.0.2", ttl=9) /
                 UDP(sport=1234, dport=5678) / Raw(b"oxflow" * 4))
        tagged = (Ether(src=src, dst="ff:ff:ff:ff:ff:ff") /
                  Dot1Q(vlan=42, prio=5) / IP(dst="10.1.0.9") / UDP() /
                  Raw(b"v" * 30))
        qinq = (Ether(src=src, dst=dst) / Dot1AD(vlan=100) /
                Dot1Q(vlan=7, prio=1) / IP(dst="10.1.0.2") / UDP(dport=9) /
                Raw(b"q" * 30))
        frames = [bytes(plain), bytes(tagged), bytes(qinq)]
        assert frames[1][12:14] == b"\x81\x00"
        assert frames[2][12:14] == b"\x88\xa8"
        assert frames[2][16:18] == b"\x81\x00"

        got = send_and_capture(h1, frames, [h2, h3], timeout=0.5)
        # Exactly the frames sent, in order, tags included, nothing else;
        # nothing leaks onto the other link.
        assert got["h2"] == frames
        assert got["h3"] == []

        got = send_and_capture(h1, tagged, [h2, h3], timeout=0.3,
                               src_iface="eth1")
        assert got == {"h2": [], "h3": [frames[1]]}


def test_process_helper(tmp_path):
    port = netns.free_tcp_port()
    code = ("import socket,sys,time\n"
            "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,"
            "socket.SO_REUSEADDR,1)\n"
            "s.bind(('127.0.0.1',%d)); s.listen()\n"
            "print('listening on', %d, flush=True)\n"
            "time.sleep(60)\n" % (port, port))
    log = tmp_path / "p.log"
    with Process([sys.executable, "-c", code], log, name="listener") as p:
        m = p.wait_for_log(r"listening on (\d+)")
        assert int(m.group(1)) == port
        p.wait_for_port(port)
        with pytest.raises(TimeoutError):
            p.wait_for_log(r"never printed", timeout=0.2)
    assert not p.running()
    assert p.proc.returncode == -15  # SIGTERM was enough

    # A process ignoring SIGTERM is killed after the grace period.
    stubborn = ("import signal,time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "print('ready', flush=True)\ntime.sleep(60)\n")
    p = Process([sys.executable, "-c", stubborn], tmp_path / "s.log").start()
    p.wait_for_log("ready")
    assert p.stop(grace=0.3) == -9

    # A process that dies is reported, with its log.
    p = Process([sys.executable, "-c", "print('bye')"], tmp_path / "d.log")
    with p:
        with pytest.raises(RuntimeError, match="bye"):
            p.wait_for_port(netns.free_tcp_port(), timeout=5)


def test_process_in_namespace(tmp_path):
    with Topology() as topo:
        h = topo.add_host("h")
        out = h.run(["ip", "-o", "link", "show"]).stdout
        assert "lo" in out and "eth0" not in out
        p = Process(["sleep", "30"], tmp_path / "n.log", netns=h.ns).start()
        try:
            # `ip netns exec` enters the namespace after it has started
            # (then execs the command under the same pid): wait for it.
            deadline = time.monotonic() + 5
            while True:
                pids = netns.sh(["ip", "netns", "pids", h.ns]).stdout.split()
                if str(p.pid) in pids or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert str(p.pid) in pids
        finally:
            p.stop()
        popen = h.popen(["echo", "hi"], stdout=subprocess.PIPE)
        assert popen.communicate(timeout=5)[0] == b"hi\n"
