"""The OpenFlow LOCAL port of `oxflow run --local-port NAME`: a tap device in
the root namespace that the switch registers as OFPP_LOCAL (spec 1.3.5
§4.5).

h1 (10.77.0.1, port 1) pings the root namespace's stack through the tap
(10.77.0.254) with flows `in_port=1 -> LOCAL` and `in_port=LOCAL -> 1`;
port-desc and port stats show LOCAL; a packet-out to LOCAL reaches a UDP
socket in the root namespace; the tap disappears when the switch stops.

Needs root and the binary (`cargo build --release -p oxflow`, or
$OXFLOW_BIN).
"""

import itertools
import os
import re
import socket

import pytest

from oxflow.netns import Topology, list_links, sh
from oxflow.switch import Switch, oxflow_bin

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root (network namespaces)")

_TAP_SEQ = itertools.count()
TAP_IP = "10.77.0.254"
H1_IP = "10.77.0.1"


@pytest.fixture(scope="module")
def binary():
    try:
        return oxflow_bin()
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def tap_name():
    """A tap name unique to this process (at most 15 characters); removed
    afterwards if a failed test left it behind."""
    name = "oxl%dt%d" % (os.getpid(), next(_TAP_SEQ))
    assert len(name) <= 15
    yield name
    if name in list_links():
        sh(["ip", "link", "del", name], check=False)


def port_stats(sw, port):
    """(rx_packets, tx_packets) of `port` from `oxflow ctl dump-ports`."""
    out = sw.ctl("dump-ports", check=True).stdout
    m = re.search(r"port\s+%s: rx pkts=(\d+),.*\n\s+tx pkts=(\d+)," % port,
                  out)
    assert m, "no %s in dump-ports:\n%s" % (port, out)
    return int(m.group(1)), int(m.group(2))


def test_local_port_tap(binary, tap_name, tmp_path):
    with Topology() as topo:
        h1 = topo.add_host("h1")
        topo.add_switch_link(h1, "%s/24" % H1_IP)
        with Switch(topo, fail_mode="secure",
                    extra_args=["--local-port", tap_name],
                    log_path=tmp_path / "oxflow.log") as sw:
            assert tap_name in list_links(), sw.log()
            sh(["sysctl", "-q", "-w",
                "net.ipv6.conf.%s.disable_ipv6=1" % tap_name], check=False)
            sh(["ip", "addr", "add", "%s/24" % TAP_IP, "dev", tap_name])
            tap_mac = open("/sys/class/net/%s/address" % tap_name
                           ).read().strip()

            desc = sw.ctl("dump-ports-desc", check=True).stdout
            assert " LOCAL(%s): addr:%s" % (tap_name, tap_mac) in desc, desc
            assert " 1(" in desc, desc

            # Secure mode, no flows: the tap is unreachable.
            assert h1.ping(TAP_IP, count=1, timeout=1).received == 0

            for spec in ("in_port=1,actions=LOCAL",
                         "in_port=LOCAL,actions=output:1"):
                sw.ctl("add-flow", spec, check=True)
            rx0, tx0 = port_stats(sw, "LOCAL")
            r = h1.ping(TAP_IP, count=3, interval=0.2, timeout=3)
            assert r.received >= 1, "%s\nlog:\n%s" % (r.output, sw.log())
            rx1, tx1 = port_stats(sw, "LOCAL")
            # Echo requests (and ARP) went out to the tap, replies came in.
            assert tx1 >= tx0 + r.received, (tx0, tx1)
            assert rx1 >= rx0 + r.received, (rx0, rx1)

            # Packet-out to LOCAL reaches the root namespace's stack.
            from scapy.all import IP, UDP, Ether, Raw
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.bind((TAP_IP, 0))
                s.settimeout(5)
                frame = (Ether(src=h1.mac(), dst=tap_mac)
                         / IP(src=H1_IP, dst=TAP_IP)
                         / UDP(sport=4321, dport=s.getsockname()[1])
                         / Raw(b"oxflow-local"))
                sw.ctl("packet-out", "CONTROLLER", "output:LOCAL",
                       bytes(frame).hex(), check=True)
                data, addr = s.recvfrom(100)
                assert data == b"oxflow-local" and addr[0] == H1_IP, addr

            assert sw.stop() == 0, sw.log()
        # The tap belonged to the switch's descriptor: gone with it.
        assert tap_name not in list_links()


def test_local_port_name_errors(binary, tap_name, tmp_path):
    with Topology() as topo:
        h1 = topo.add_host("h1")
        port = topo.add_switch_link(h1)
        # An existing interface is refused (never taken over).
        with Switch(topo, extra_args=["--local-port", port], wait=False,
                    log_path=tmp_path / "exists.log") as sw:
            assert sw.proc.proc.wait(timeout=10) == 1
            assert "LOCAL port (tap %s)" % port in sw.log(), sw.log()
            assert "already exists" in sw.log(), sw.log()
        assert port in list_links()
        # More than 15 characters cannot be an interface name.
        long_name = tap_name + "x" * 16
        with Switch(topo, extra_args=["--local-port", long_name],
                    wait=False, log_path=tmp_path / "long.log") as sw:
            assert sw.proc.proc.wait(timeout=10) == 1
            assert "LOCAL port (tap %s)" % long_name in sw.log(), sw.log()
            assert "bad interface name" in sw.log(), sw.log()


def test_local_port_in_standalone_learning(binary, tap_name, tmp_path):
    """Fail-standalone with no controller: the learning switch floods to
    LOCAL too (like a bridge's own interface), so h1 reaches the tap's IP."""
    with Topology() as topo:
        h1 = topo.add_host("h1")
        sw_if = topo.add_switch_link(h1, "%s/24" % H1_IP)
        # The switch-side veth end lives in the root namespace, whose stack
        # would answer h1's ARP for the tap's address by itself: with
        # arp_ignore=1 only the tap (through the switch) answers.
        sh(["sysctl", "-q", "-w", "net.ipv4.conf.%s.arp_ignore=1" % sw_if])
        with Switch(topo, fail_mode="standalone",
                    extra_args=["--local-port", tap_name],
                    log_path=tmp_path / "oxflow.log") as sw:
            assert tap_name in list_links(), sw.log()
            sh(["sysctl", "-q", "-w",
                "net.ipv6.conf.%s.disable_ipv6=1" % tap_name], check=False)
            sh(["ip", "addr", "add", "%s/24" % TAP_IP, "dev", tap_name])
            assert h1.ping(TAP_IP, count=3, timeout=3).received >= 1, sw.log()
            _, local_tx = port_stats(sw, "LOCAL")
            assert local_tx >= 1, "nothing was flooded or sent to LOCAL"
