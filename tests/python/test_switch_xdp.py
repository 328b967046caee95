"""The release switch with AF_XDP ports: `oxflow run --config` with
`port_backend = "xdp"` on veth ports of hosts in network namespaces.
Checks that the ports really are AF_XDP (the port log line), that ping and
scapy frames pass through byte-exact, that the port counters move, and that
a port whose XDP socket cannot be opened falls back to AF_PACKET with one
warning line.

Needs root and the binary (`cargo build --release -p oxflow`, or
$OXFLOW_BIN).
"""

import os
import re
import subprocess
import time

import pytest
from scapy.all import IP, UDP, Ether, Raw

import dp_util
from oxflow.netns import Topology
from oxflow.switch import Switch
from oxflow.traffic import send_and_capture

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root (network namespaces)")

MARK = b"OXPXDP:"


@pytest.fixture
def two_hosts():
    """h1, h2 (10.0.0.1/2 on /24), each on a veth to the root namespace."""
    with Topology(prefix="oxp") as topo:
        for i in (1, 2):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i)
        yield topo


def write_config(path, ifaces, per_port=None, top="port_backend = \"xdp\""):
    lines = [top, ""]
    for i, iface in enumerate(ifaces):
        lines += ["[[port]]", "interface = \"%s\"" % iface]
        if per_port and per_port[i]:
            lines.append("backend = \"%s\"" % per_port[i])
        lines.append("")
    path.write_text("\n".join(lines))
    return path


def xdp_switch(topo, tmp_path, name="oxflow", **kw):
    cfg = write_config(tmp_path / ("%s.toml" % name), topo.switch_ports, **kw)
    # No --port flags: they would replace the file's [[port]] list.
    return Switch([], fail_mode="standalone", extra_args=["--config", cfg],
                  log_path=tmp_path / ("%s.log" % name))


def test_ping_and_scapy_frames_through_xdp_ports(two_hosts, tmp_path):
    dp_util.require_oxflow()
    h1, h2 = two_hosts.hosts["h1"], two_hosts.hosts["h2"]
    with xdp_switch(two_hosts, tmp_path) as sw:
        log = sw.log()
        for no, iface in enumerate(two_hosts.switch_ports, 1):
            assert re.search(r"port %d: %s \(interface %s, AF_XDP (native|generic)"
                             % (no, iface, iface), log), log
        assert "falling back" not in log, log

        r = h1.ping(h2.ip(), count=3, interval=0.2, timeout=2)
        assert r.received == 3, "ping through XDP ports: %s\n%s" % (
            r.output, sw.log())

        # Unicast UDP frames of several sizes to h2's address, learnt by
        # the ping: they must arrive byte-exact, in order.
        frames = [bytes(Ether(src=h1.mac(), dst=h2.mac()) /
                        IP(src=h1.ip(), dst=h2.ip()) /
                        UDP(sport=4000 + i, dport=5000) /
                        Raw(MARK + bytes([i]) + b"x" * n))
                  for i, n in enumerate((10, 100, 500, 1000, 1400))]
        got = send_and_capture(h1, frames, [h2], timeout=1.0,
                               keep=lambda f: MARK in f)
        assert got["h2"] == frames, (got, sw.log())

        stats = dp_util.port_stats(sw)
        assert stats[1]["rx_pkts"] >= len(frames) + 3, stats
        assert stats[2]["tx_pkts"] >= len(frames) + 3, stats
        assert sw.stop() == 0


# A TCP receiver in h2: accepts one connection, counts the bytes until
# the sender closes, prints the count.
TCP_SINK = """
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5301))
s.listen(1)
s.settimeout(20)
c, _ = s.accept()
c.settimeout(20)
n = 0
while True:
    b = c.recv(65536)
    if not b:
        break
    n += len(b)
print(n)
"""

TCP_SOURCE = """
import socket, sys, time
deadline = time.monotonic() + 10
while True:
    try:
        s = socket.create_connection((sys.argv[1], 5301), timeout=3)
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.1)
s.sendall(b"x" * int(sys.argv[2]))
s.close()
"""


def test_tcp_and_udp_through_xdp_ports_with_checksum_offload_on(two_hosts,
                                                                tmp_path):
    """Hosts with checksum offload on (a veth's default) leave their TCP
    and UDP checksums unfinished; AF_XDP says nothing about it, so the
    switch must finish them (ports::partial) or the receiving host drops
    every segment: a TCP connection must carry its bytes, and UDP
    datagrams must reach a socket (the kernel drops bad checksums)."""
    dp_util.require_oxflow()
    h1, h2 = two_hosts.hosts["h1"], two_hosts.hosts["h2"]
    for h in (h1, h2):
        h.run(["ethtool", "-K", "eth0", "tx", "on"], check=False)
        feats = h.run(["ethtool", "-k", "eth0"]).stdout
        assert "tx-checksumming: on" in feats, feats
    with xdp_switch(two_hosts, tmp_path) as sw:
        assert "AF_XDP" in sw.log(), sw.log()
        r = h1.ping(h2.ip(), count=2, interval=0.2, timeout=2)
        assert r.received == 2, sw.log()
        size = 2_000_000
        out, err = tcp_transfer(h1, h2, size)
        assert out == str(size), (out, err, sw.log())
        # UDP from h1's socket (checksum offloaded) to h2's socket.
        recv = h2.popen(["python3", "-c",
                         "import socket,sys\n"
                         "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                         "s.bind((sys.argv[1],5302)); s.settimeout(5)\n"
                         "print(s.recv(2048).decode())", h2.ip()],
                        stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        h1.run(["python3", "-c",
                "import socket,sys\n"
                "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                "[s.sendto(b'oxflow-udp', (sys.argv[1],5302)) for _ in range(3)]",
                h2.ip()])
        out, _ = recv.communicate(timeout=10)
        assert out.strip() == "oxflow-udp", (out, sw.log())
        assert sw.stop() == 0


def tcp_transfer(src, dst, size):
    """Sends `size` bytes over one TCP connection from host `src` to host
    `dst`; returns what the receiver counted (as text) and its stderr."""
    sink = dst.popen(["python3", "-c", TCP_SINK, dst.ip()],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
    try:
        src.run(["python3", "-c", TCP_SOURCE, dst.ip(), str(size)],
                timeout=40)
        out, err = sink.communicate(timeout=30)
    finally:
        sink.kill()
    return out.strip(), err


def test_tcp_super_frames_from_an_afpacket_port_are_cut_for_an_xdp_port(
        two_hosts, tmp_path):
    """h1 (segmentation offload on) sends TSO super-frames of up to 64 KB;
    port 1 (AF_PACKET, GSO) takes them whole, port 2 (AF_XDP) cannot send
    a frame over its MTU: the switch cuts them into MTU-sized segments
    (ports::segment) and the bytes arrive."""
    dp_util.require_oxflow()
    h1, h2 = two_hosts.hosts["h1"], two_hosts.hosts["h2"]
    offloads = ["tx", "on", "tso", "on", "gso", "on", "sg", "on"]
    h1.run(["ethtool", "-K", "eth0"] + offloads, check=False)
    assert "tcp-segmentation-offload: on" in h1.run(
        ["ethtool", "-k", "eth0"]).stdout
    cfg = write_config(tmp_path / "mixed.toml", two_hosts.switch_ports,
                       per_port=["afpacket", "xdp"], top="")
    with Switch([], fail_mode="standalone", extra_args=["--config", cfg],
                log_path=tmp_path / "mixed.log") as sw:
        log = sw.log()
        assert re.search(r"port 1: \S+ \(interface \S+, AF_PACKET", log), log
        assert re.search(r"port 2: \S+ \(interface \S+, AF_XDP", log), log
        r = h1.ping(h2.ip(), count=2, interval=0.2, timeout=2)
        assert r.received == 2, sw.log()
        before = dp_util.port_stats(sw)[1]
        size = 4_000_000
        out, err = tcp_transfer(h1, h2, size)
        assert out == str(size), (out, err, sw.log())
        after = dp_util.port_stats(sw)[1]
        pkts = after["rx_pkts"] - before["rx_pkts"]
        byts = after["rx_bytes"] - before["rx_bytes"]
        # Super-frames came in (on average more than an MTU-sized frame).
        assert pkts > 0 and byts / pkts > 1514, (pkts, byts)
        assert sw.stop() == 0


def test_xdp_port_falls_back_to_afpacket_with_one_warning(two_hosts,
                                                          tmp_path):
    """A second switch cannot bind AF_XDP to queues the first one holds: it
    says so once per port and uses AF_PACKET, and traffic still passes."""
    dp_util.require_oxflow()
    h1, h2 = two_hosts.hosts["h1"], two_hosts.hosts["h2"]
    ports = two_hosts.switch_ports
    with xdp_switch(two_hosts, tmp_path, name="first") as first:
        assert "AF_XDP" in first.log()
        # The second switch wants XDP on port 1 only (per-port setting).
        cfg = write_config(tmp_path / "second.toml", ports,
                           per_port=["xdp", None], top="")
        with Switch([], fail_mode="standalone",
                    extra_args=["--config", cfg],
                    log_path=tmp_path / "second.log") as second:
            log = second.log()
            warn = [l for l in log.splitlines() if "falling back" in l]
            assert len(warn) == 1, log
            assert re.search(r"port 1 \(%s\): cannot open AF_XDP \(.+\); "
                             r"falling back to AF_PACKET" % ports[0],
                             warn[0]), warn[0]
            assert re.search(r"port 1: %s \(interface %s, AF_PACKET"
                             % (ports[0], ports[0]), log), log
            assert re.search(r"port 2: %s \(interface %s, AF_PACKET"
                             % (ports[1], ports[1]), log), log
            assert second.stop() == 0
        # The first switch still forwards.
        r = h1.ping(h2.ip(), count=2, interval=0.2, timeout=2)
        assert r.received == 2, first.log()
