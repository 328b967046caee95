"""FlexForward end to end (issue 32): a 2-cube of four oxflow switches in
the root namespace linked by veth pairs, hosts h1 and h2 in namespaces at
opposite corners (python/oxflow/flexnet.py), real pings and UDP streams.

- every mode forwards pings on its own: the tableless modes run with
  fallback=drop and no flow installed, so a reply proves the mode
  forwarded (and its counter grows); OpenFlow mode forwards only with its
  flows;
- switching the whole network HyperCube <-> KeyFlow several times under a
  stream of numbered UDP datagrams loses none;
- per-port and per-VLAN modes: overrides apply only to their scope;
- each documented error code comes back for its bad message, the
  connection stays up and the configuration is unchanged.

Interface and namespace names start with "ff".
"""

import json
import struct
import subprocess
import sys
import time

import pytest

from cp_util import connect_passive
from dp_util import HostSocket, capture, require_oxflow, tag_payload, wait_until
from oxflow import flexforward as ff
from oxflow.flexnet import HyperCubeNet

pytestmark = pytest.mark.skipif(
    __import__("os").geteuid() != 0, reason="needs root (namespaces)")


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    require_oxflow()
    with HyperCubeNet(dim=2, prefix="ff", workers=2,
                      log_dir=tmp_path_factory.mktemp("ff")) as n:
        n.configure()
        yield n


def pings(net, count=5):
    return net.h1.ping("10.0.0.2", count=count, interval=0.05,
                       timeout=2).received


def test_each_mode_forwards_pings(net):
    # OpenFlow: nothing without flows, everything with them.
    net.set_mode("openflow")
    net.remove_flows()
    assert pings(net, 2) == 0, "OpenFlow mode forwarded without flows"
    net.install_flows()
    assert wait_until(lambda: pings(net, 1) == 1, timeout=15,
                      what="ping in OpenFlow mode")
    assert pings(net) == 5
    net.remove_flows()
    for mode, counter in (("hypercube", "hypercube_fwd"),
                          ("keyflow", "keyflow_fwd")):
        net.set_mode(mode, fallback="drop")
        before = net.total(counter)
        assert pings(net) == 5, mode
        # 5 requests over 3 switches and 5 replies over 3: 30 frames.
        assert net.total(counter) - before >= 30, mode
    assert net.total("fallback_table") == 0


RECEIVER = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("10.0.0.2", 5555))
print("ready", flush=True)
seen = set()
s.settimeout(30)
first = None
try:
    while True:
        d = s.recv(2048)
        n = int.from_bytes(d[:4], "big")
        if n == 0xFFFFFFFF:
            break
        seen.add(n)
        s.settimeout(5)
except socket.timeout:
    pass
print(json.dumps(sorted(seen)), flush=True)
"""

SENDER = r"""
import socket, sys, time
n, rate = int(sys.argv[1]), float(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
for i in range(n):
    while time.monotonic() < t0 + i / rate:
        pass
    s.sendto(i.to_bytes(4, "big") + b"." * 60, ("10.0.0.2", 5555))
time.sleep(0.5)
for _ in range(20):
    s.sendto(b"\xff\xff\xff\xff", ("10.0.0.2", 5555))
    time.sleep(0.05)
"""


def test_switchover_under_traffic_loses_nothing(net):
    net.remove_flows()
    net.set_mode("hypercube", fallback="drop")
    assert wait_until(lambda: pings(net, 1) == 1, timeout=15,
                      what="ping in HyperCube mode")
    before = {c: net.total(c) for c in ("hypercube_fwd", "keyflow_fwd")}
    rx = net.h2.popen([sys.executable, "-c", RECEIVER],
                      stdout=subprocess.PIPE, text=True)
    try:
        assert rx.stdout.readline().strip() == "ready"
        count, rate = 6000, 1500.0
        tx = net.h1.popen([sys.executable, "-c", SENDER, str(count),
                           str(rate)])
        time.sleep(0.4)
        # Each switch changes at its own moment (ctl returns after the
        # switch's barrier): mixed networks carry the stream too.
        switches = 0
        for mode, order in (("keyflow", [0, 1, 2, 3]),
                            ("hypercube", [3, 2, 1, 0]),
                            ("keyflow", [1, 3, 0, 2]),
                            ("hypercube", [0, 1, 2, 3])):
            net.set_mode(mode, fallback="drop", order=order)
            switches += 1
        assert tx.poll() is None, (
            "the stream ended before the switchovers did: raise its length")
        tx.wait(timeout=60)
        out, _ = rx.communicate(timeout=60)
    finally:
        for p in (rx,):
            if p.poll() is None:
                p.kill()
    seen = json.loads(out.strip().splitlines()[-1])
    missing = sorted(set(range(count)) - set(seen))
    assert not missing, "%d of %d datagrams lost, first %s" % (
        len(missing), count, missing[:10])
    assert switches == 4
    for c, v in before.items():
        assert net.total(c) > v, "%s did not forward during the stream" % c


def test_port_and_vlan_scopes(net):
    net.remove_flows()
    net.set_mode("openflow")
    assert pings(net, 1) == 0
    # Every port of every switch in HyperCube: the network forwards.
    for sw in net.switches:
        ports = ",".join(str(p) for p in range(1, len(sw.ifaces) + 1))
        sw.ctl("fwmode", "hypercube", "ports=" + ports, "fallback=drop",
               check=True)
    assert pings(net, 3) == 3
    # Only h1's ingress port back to the tables: requests die there.
    net.switches[0].ctl("fwmode", "clear", "ports=%d" % (net.dim + 1),
                        check=True)
    assert pings(net, 2) == 0
    text = net.switches[0].ctl("show-fwmode", check=True).stdout
    assert "port 1 mode=hypercube fallback=drop" in text
    assert "port %d " % (net.dim + 1) not in text
    for sw in net.switches:
        ports = ",".join(str(p) for p in range(1, len(sw.ifaces) + 1))
        sw.ctl("fwmode", "clear", "ports=" + ports, check=True)
    assert pings(net, 1) == 0
    # VLAN 10 in KeyFlow everywhere; untagged and VLAN 20 stay OpenFlow.
    for sw in net.switches:
        sw.ctl("fwmode", "keyflow", "vlan=10", "fallback=drop", check=True)
    dst = bytes.fromhex(net.mac[net.n - 1].replace(":", ""))
    src = bytes.fromhex("020000000001")

    def frame(tag, vid):
        hdr = dst + src
        if vid is not None:
            hdr += struct.pack("!HH", 0x8100, vid)
        return hdr + b"\x88\xb5" + tag_payload(tag, 60)

    with HostSocket(net.h1) as s, capture([net.h2]) as got:
        s.send([frame("ffv10", 10), frame("ffv20", 20),
                frame("ffnone", None)])
    text = b"".join(got["h2"])
    assert b"ffv10" in text and b"ffv20" not in text and b"ffnone" not in text
    for sw in net.switches:
        sw.ctl("fwmode", "clear", "vlan=10", check=True)


def _raw(exp_type, data, xid):
    body = struct.pack("!II", ff.FLEX_EXPERIMENTER, exp_type) + data
    return struct.pack("!BBHI", 4, 4, 8 + len(body), xid) + body


BAD = [
    ("UNKNOWN_MODE", ff.SET_FWMODE, struct.pack("!BBBxHH", 7, 0, 0, 0, 0)),
    ("BAD_LEN", ff.SET_KEYFLOW, struct.pack("!I", 7)),
    ("BAD_SCOPE", ff.SET_FWMODE, ff.set_fwmode_data("keyflow", ports=[99])),
    ("BAD_SCOPE", ff.SET_FWMODE, struct.pack("!BBBxHH", 1, 0, 2, 0, 5000)),
    ("BAD_FALLBACK", ff.SET_FWMODE, struct.pack("!BBBxHH", 1, 9, 0, 0, 0)),
    ("HC_DUP_ADDRESS", ff.SET_HYPERCUBE,
     ff.set_hypercube_data(0, [(1, 1), (1, 2)])),
    ("HC_NOT_NEIGHBOUR", ff.SET_HYPERCUBE, ff.set_hypercube_data(0, [(3, 1)])),
    ("HC_BAD_PORT", ff.SET_HYPERCUBE, ff.set_hypercube_data(0, [(1, 42)])),
    ("KF_BAD_KEY", ff.SET_KEYFLOW, ff.set_keyflow_data(0)),
    ("BAD_MESSAGE", 77, b""),
]


def test_bad_messages_get_their_codes_and_change_nothing(net):
    sw = net.switches[1]
    before = sw.ctl("show-fwmode", check=True).stdout
    c = connect_passive(sw.port)
    try:
        c.handshake()
        for i, (name, exp_type, data) in enumerate(BAD):
            raw = _raw(exp_type, data, 0x500 + i)
            c.send(raw)
            msgs = c.until(lambda m: m.xid == 0x500 + i, timeout=10)
            err = msgs[-1]
            assert err.type == 0xFFFF, (name, err)
            assert err.experimenter == ff.FLEX_EXPERIMENTER, (name, err)
            assert ff.ERRORS[err.exp_type] == name, (name, err)
            assert bytes(err.data) == raw, "error data is the whole request"
            c.echo_ok()
    finally:
        c.close()
    after = sw.ctl("show-fwmode", check=True).stdout
    strip = [ln for ln in before.splitlines() if not ln.startswith("counters")]
    assert strip == [ln for ln in after.splitlines()
                     if not ln.startswith("counters")]
    # ctl prints the code name and fails.
    r = sw.ctl("keyflow", "key=0")
    assert r.returncode != 0 and "KF_BAD_KEY" in r.stderr, r


def test_single_switch_refusals(tmp_path):
    """MODE_UNCONFIGURED (a mode before its parameters) and KF_NO_PORT (a
    key below every port number) on a switch whose only port is 10."""
    require_oxflow()
    from oxflow.netns import Topology
    from oxflow.switch import Switch
    with Topology(prefix="ff") as topo:
        h = topo.add_host("u1")
        p1 = topo.add_switch_link(h, "10.9.0.1/24")
        p10 = topo.add_switch_link(h, "10.9.1.1/24")
        with Switch([p1], log_path=tmp_path / "sw.log") as sw:
            for mode in ("hypercube", "keyflow"):
                r = sw.ctl("fwmode", mode)
                assert r.returncode != 0, r
                assert "MODE_UNCONFIGURED" in r.stderr, r
            sw.ctl("add-port", p10, "10", check=True)
            sw.ctl("del-port", "1", check=True)
            r = sw.ctl("keyflow", "key=10")
            assert r.returncode != 0 and "KF_NO_PORT" in r.stderr, r
            sw.ctl("keyflow", "key=11", check=True)
            text = sw.ctl("show-fwmode", check=True).stdout
            assert "mode=openflow" in text and "keyflow key=11" in text


def test_controller_app_discovers_and_switches(tmp_path):
    """The os-ken app (python/oxflow/apps/flexforward.py) finds the 2-cube
    by LLDP, labels it as flexnet does, installs HyperCube, and switches
    the whole network to KeyFlow on request; pings cross in both modes."""
    require_oxflow()
    from oxflow.netns import free_tcp_port
    from oxflow.switch import controller_process
    port = free_tcp_port()
    plan = tmp_path / "plan.json"
    mode_file = tmp_path / "mode"
    env = {"OXFLOW_FF_SWITCHES": "4", "OXFLOW_FF_MODE": "hypercube",
           "OXFLOW_FF_FALLBACK": "drop", "OXFLOW_FF_PLAN": str(plan),
           "OXFLOW_FF_MODE_FILE": str(mode_file)}
    with controller_process(port, tmp_path / "osken.log",
                            apps=("oxflow.apps.flexforward",),
                            env=env) as ctrl:
        ctrl.wait_for_port(port, timeout=30)
        with HyperCubeNet(dim=2, prefix="ff", log_dir=tmp_path,
                          controllers=["tcp:127.0.0.1:%d" % port]) as n:
            ctrl.wait_for_log(r"flexforward ready", timeout=60)
            got = json.loads(plan.read_text())
            assert got["labels"] == {"%x" % (i + 1): i for i in range(4)}
            assert got["macs"]["3-0"] == n.mac[0]
            assert got["macs"]["0-3"] == n.mac[3]
            assert wait_until(lambda: pings(n, 1) == 1, timeout=15,
                              what="ping in HyperCube mode (app)")
            assert n.total("hypercube_fwd") > 0
            mode_file.write_text("keyflow\n")
            ctrl.wait_for_log(r"flexforward mode keyflow on 4 switches",
                              timeout=30)
            for sw in n.switches:
                assert "mode=keyflow" in sw.ctl("show-fwmode",
                                                check=True).stdout
            before = n.total("keyflow_fwd")
            assert pings(n, 3) == 3
            assert n.total("keyflow_fwd") >= before + 18
