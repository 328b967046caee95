"""Trunk ports (issue 33 point 1, docs/trunk.md): `oxflow run --trunk
IFACE=FIRST-LAST` makes every VLAN of the trunk a logical OpenFlow port
IFACE.VID numbered after the --port ports.

Part one: hosts h1, h2 on ports 1 and 2, host t on the far end of a trunk
with VLANs 101-103 (ports 3-5); t sends and receives 802.1Q-tagged frames
crafted with scapy (this kernel has no VLAN devices). Flows come from
`oxflow ctl`.

Part one runs twice: on the default graph and with a configured module graph (`--graph`,
docs/graph.md) whose trunk side is a `trunk_inc` task feeding the
`openflow` module, which `tx` follows (`graph_file` below).

Part two: the HARMLESS setup with real hosts: an emulated legacy switch
(a private user-space Open vSwitch as an 802.1Q learning switch,
oxflow.harmless.legacy_ovs) with hosts a, b, c on access VLANs 201-203 and
a trunk to oxflow (`--trunk X=201-203`), controlled by the os-ken learning
switch app (plus the recorder): the hosts ping each other through legacy
access port -> trunk -> oxflow -> trunk -> legacy access port, and the
controller hears port status DOWN for every logical port when the trunk
goes down.
"""

import json
import os
import re
import subprocess

import pytest
from scapy.all import Dot1Q, Ether, IP, UDP

import dp_util
from dp_util import capture, wait_until
from oxflow.netns import OvsSwitch, Topology, free_tcp_port, sh

MARK = dp_util.MARK
VLANS = (101, 102, 103)


def mac(n):
    return "02:00:00:00:07:%02x" % n


def frame(src, dst, case, vlan=None, inner=None):
    f = Ether(src=src, dst=dst)
    if vlan is not None:
        f = f / Dot1Q(vlan=vlan)
    if inner is not None:
        f = f / Dot1Q(vlan=inner)
    return f / IP(src="10.7.0.1", dst="10.7.0.2") / UDP(
        sport=1000, dport=2000) / (MARK + case.encode() + b";" + bytes(20))


def vlans_of(raw):
    """The VLAN ids of a frame's tags, outer first."""
    out = []
    p = Ether(raw)
    while p.haslayer(Dot1Q):
        p = p[Dot1Q]
        out.append(p.vlan)
        p = p.payload
    return out


def graph_file(p1, p2, tr):
    """The configured graph: both ports and the trunk's `trunk_inc` into
    `openflow`, then `tx`."""
    return str(dp_util.openflow_graph([
        ("in1", "port_inc", {"port": p1}),
        ("in2", "port_inc", {"port": p2}),
        ("in_tr", "trunk_inc", {"trunk": tr}),
    ]))


def graph_mode(sw):
    return "--graph" in sw.argv()


@pytest.fixture(scope="module", params=["default", "graph"])
def net(request, tmp_path_factory):
    dp_util.require_oxflow()
    from oxflow.switch import Switch

    d = tmp_path_factory.mktemp("trunk")
    prefix = "gw" if request.param == "default" else "g2"
    with Topology(prefix=prefix) as topo:
        h1, h2, t = (topo.add_host(n) for n in ("h1", "h2", "t"))
        p1 = topo.add_switch_link(h1, mac=mac(1))
        p2 = topo.add_switch_link(h2, mac=mac(2))
        tr = topo.add_switch_link(t, mac=mac(9))
        extra = []
        if request.param == "graph":
            (d / "graph.toml").write_text(graph_file(p1, p2, tr))
            extra = ["--graph", d / "graph.toml", "--workers", "2"]
        with Switch([p1, p2], dpid=0x7a, fail_mode="secure",
                    log_path=d / "oxflow.log", extra_args=extra,
                    trunks=["%s=%d-%d" % (tr, VLANS[0], VLANS[-1])]) as sw:
            yield topo, sw, tr
            assert sw.running(), "oxflow exited:\n" + sw.log()[-4000:]


def ctl(sw, *args):
    proc = sw.ctl(*args)
    assert proc.returncode == 0, "oxflow ctl %s: %s%s" % (
        " ".join(args), proc.stdout, proc.stderr)
    return proc.stdout


def flows(sw, *specs):
    ctl(sw, "del-flows")
    for s in specs:
        ctl(sw, "add-flow", s)


def test_port_desc_shows_one_port_per_vlan(net):
    _, sw, tr = net
    out = ctl(sw, "dump-ports-desc")
    for i, vid in enumerate(VLANS):
        assert re.search(r"\b%d\(%s\.%d\)" % (3 + i, re.escape(tr), vid),
                         out), out
    assert not re.search(r"\(%s\)" % re.escape(tr), out), \
        "the trunk itself is no OpenFlow port:\n" + out
    assert dp_util.port_link_down(sw, 4) is False


def test_in_port_match_pops_and_output_pushes(net):
    topo, sw, _ = net
    h = topo.hosts
    flows(sw, "in_port=4,actions=output:1",
          "in_port=2,actions=output:5",
          "in_port=3,actions=output:2")
    before = dp_util.port_stats(sw)
    with capture([h["h1"], h["h2"], h["t"]]) as got:
        with dp_util.HostSocket(h["t"]) as s:
            s.send(frame(mac(9), mac(1), "v102", vlan=102))
            s.send(frame(mac(9), mac(1), "v999", vlan=999))
            s.send(frame(mac(9), mac(1), "untagged"))
    assert [dp_util.case_of(f) for f in got["h1"]] == ["v102"]
    assert vlans_of(got["h1"][0]) == [], "access tag popped"
    assert got["h2"] == [] and got["t"] == []
    with capture([h["t"]]) as got:
        with dp_util.HostSocket(h["h2"]) as s:
            s.send(frame(mac(2), mac(9), "to103"))
    assert [vlans_of(f) for f in got["t"]] == [[103]]
    assert dp_util.case_of(got["t"][0]) == "to103"
    after = wait_until(lambda: (lambda s: s if s[4]["rx_pkts"] >
                                before[4]["rx_pkts"] else None)(
        dp_util.port_stats(sw)), what="port 4 rx counted")
    assert after[4]["rx_pkts"] - before[4]["rx_pkts"] == 1
    assert after[3]["rx_pkts"] == before[3]["rx_pkts"]
    assert after[5]["tx_pkts"] - before[5]["tx_pkts"] == 1
    assert after[1]["tx_pkts"] - before[1]["tx_pkts"] == 1


def test_qinq_keeps_the_inner_tag(net):
    topo, sw, _ = net
    h = topo.hosts
    flows(sw, "in_port=3,actions=output:1", "in_port=1,actions=output:4")
    with capture([h["h1"]]) as got:
        with dp_util.HostSocket(h["t"]) as s:
            s.send(frame(mac(9), mac(1), "qinq-in", vlan=101, inner=7))
    assert [vlans_of(f) for f in got["h1"]] == [[7]]
    with capture([h["t"]]) as got:
        with dp_util.HostSocket(h["h1"]) as s:
            s.send(frame(mac(1), mac(9), "qinq-out", vlan=8))
    assert [vlans_of(f) for f in got["t"]] == [[102, 8]]


def test_flood_reaches_every_vlan_but_the_ingress_one(net):
    topo, sw, _ = net
    h = topo.hosts
    flows(sw, "actions=FLOOD")
    with capture([h["h1"], h["h2"], h["t"]]) as got:
        with dp_util.HostSocket(h["h1"]) as s:
            s.send(frame(mac(1), "ff:ff:ff:ff:ff:ff", "fl1"))
    assert sorted(vlans_of(f)[0] for f in got["t"]) == list(VLANS)
    assert len(got["h2"]) == 1 and got["h1"] == []
    with capture([h["h1"], h["h2"], h["t"]]) as got:
        with dp_util.HostSocket(h["t"]) as s:
            s.send(frame(mac(9), "ff:ff:ff:ff:ff:ff", "fl2", vlan=102))
    assert sorted(vlans_of(f)[0] for f in got["t"]) == [101, 103]
    assert len(got["h1"]) == 1 and len(got["h2"]) == 1
    assert vlans_of(got["h1"][0]) == []


def test_show_pipeline_draws_the_trunk_with_counts(net):
    topo, sw, tr = net
    h = topo.hosts
    flows(sw, "in_port=5,actions=output:2")
    if graph_mode(sw):
        return check_graph_pipeline(topo, sw)
    # The default graph (`in_<trunk>` -> openflow -> tx), live.
    before = ctl(sw, "show-pipeline")
    with capture([h["h2"]]) as got:
        with dp_util.HostSocket(h["t"]) as s:
            s.send(frame(mac(9), mac(2), "pipe", vlan=103))
    assert len(got["h2"]) == 1

    def count(text, node, edge):
        part = text.split("%s (" % node, 1)[-1]
        m = re.search(r"^  :%s  packets=(\d+)$" % re.escape(edge), part,
                      re.M)
        assert m, "no %r of %r in:\n%s" % (edge, node, text)
        return int(m.group(1))

    after = ctl(sw, "show-pipeline")
    node = "in_%s" % tr
    assert "%s (trunk_inc)" % node in after, after
    assert "openflow (openflow)" in after, after
    assert count(after, node, "0 -> openflow") >= \
        count(before, node, "0 -> openflow") + 1
    assert count(after, "openflow", "0 -> tx") >= \
        count(before, "openflow", "0 -> tx") + 1
    tc = ctl(sw, "show-tc")
    assert re.search(r"^worker 0: round_robin rounds=\d+", tc, re.M), tc
    m = re.search(r"^    %s \(leaf\) .*runs=(\d+) packets=(\d+)"
                  % re.escape(node), tc, re.M)
    assert m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1, tc
    assert "%s." % tr not in tc, "logical ports are no tasks:\n" + tc
    dot = ctl(sw, "show-pipeline", "--dot")
    assert dot.startswith("digraph oxflow {"), dot
    assert '"%s" -> "openflow"' % node in dot, dot


def check_graph_pipeline(topo, sw):
    """With a graph, show-pipeline is the configured graph: the trunk's
    frames counted on `in_tr`'s gate to `of` (at least the one sent)."""
    def count(text):
        m = re.search(r"^  :0 -> of  packets=(\d+)$",
                      text.split("in_tr (trunk_inc)", 1)[-1], re.M)
        assert m, text
        return int(m.group(1))

    before = ctl(sw, "show-pipeline")
    assert "in_tr (trunk_inc)" in before, before
    with capture([topo.hosts["h2"]]) as got:
        with dp_util.HostSocket(topo.hosts["t"]) as s:
            s.send(frame(mac(9), mac(2), "pipe", vlan=103))
    assert len(got["h2"]) == 1 and vlans_of(got["h2"][0]) == []
    assert count(ctl(sw, "show-pipeline")) >= count(before) + 1


def test_trunk_down_takes_every_logical_port_down(net):
    topo, sw, tr = net
    try:
        topo.set_link(tr, False)
        for no in (3, 4, 5):
            wait_until(lambda: dp_util.port_link_down(sw, no),
                       what="port %d LINK_DOWN" % no)
        assert dp_util.port_link_down(sw, 1) is False
    finally:
        topo.set_link(tr, True)
    for no in (3, 4, 5):
        wait_until(lambda: dp_util.port_link_down(sw, no) is False,
                   what="port %d up again" % no)


@pytest.mark.parametrize("args,message", [
    (["--trunk", "lo=100-4095"], "--trunk lo=100-4095: VLAN id 4095 is "
     "outside 1-4094"),
    (["--trunk", "lo=5-9", "--trunk", "lo=9-12"], "--trunk lo=9-12: trunk "
     "lo=9-12 overlaps trunk lo=5-9"),
    (["--port", "lo", "--trunk", "lo=1-2"], "--trunk lo=1-2: interface "
     "\"lo\" is both a port and a trunk"),
    (["--trunk", "lo:1-2"], "--trunk lo:1-2: \"lo:1-2\" is not "
     "IFACE=FIRST-LAST"),
])
def test_bad_trunk_flags_are_refused(args, message):
    dp_util.require_oxflow()
    from oxflow.switch import run_oxflow

    r = run_oxflow("run", "--listen", "ptcp:%d:127.0.0.1" % free_tcp_port(),
                   *args)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


def test_bad_trunk_in_the_config_file_names_the_line(tmp_path):
    dp_util.require_oxflow()
    from oxflow.switch import run_oxflow

    cfg = tmp_path / "sw.toml"
    cfg.write_text('[[trunk]]\ninterface = "lo"\nvlans = "1-10"\n\n'
                   '[[trunk]]\ninterface = "lo"\nvlans = "10-0"\n')
    r = run_oxflow("run", "--config", cfg)
    assert r.returncode != 0
    assert "%s:7:9: VLAN id 0 is outside 1-4094" % cfg in r.stderr, r.stderr


# --------------------------------------------------------------------------
# Part two: the emulated legacy switch and a learning controller
# --------------------------------------------------------------------------

ACCESS = (201, 202, 203)


@pytest.mark.skipif(not OvsSwitch.available(),
                    reason="Open vSwitch is not installed")
@pytest.mark.parametrize("mode", ["controller", "standalone"])
def test_hosts_ping_through_the_legacy_switch(tmp_path, mode):
    """With the os-ken learning switch (one worker), and in fail-standalone
    mode without a controller (two workers sharing the trunk's reception
    by flow hash)."""
    dp_util.require_oxflow()
    from oxflow.harmless import legacy_ovs
    from oxflow.switch import Switch, controller_process

    rec = tmp_path / "recorder.jsonl"
    port = free_tcp_port()
    with Topology(prefix="gwl") as topo:
        hosts = [topo.add_host(n) for n in "abc"]
        access = [topo.add_switch_link(h, ip="10.8.0.%d/24" % (i + 1))
                  for i, h in enumerate(hosts)]
        # The trunk: a veth with both ends in the root namespace, one on
        # the legacy switch, one on oxflow.
        lt, ot = "gwl%dlt" % os.getpid(), "gwl%dot" % os.getpid()
        sh(["ip", "link", "add", lt, "type", "veth", "peer", "name", ot])
        try:
            for i in (lt, ot):
                sh(["ip", "link", "set", i, "up"])
                subprocess.run(["ethtool", "-K", i, "tx", "off", "rxvlan",
                                "off", "txvlan", "off"],
                               capture_output=True, check=False)
            sw_legacy = legacy_ovs.LegacySwitch(
                tmp_path / "legacy", access + [lt],
                access=dict(zip(access, ACCESS)), trunks={lt: list(ACCESS)})
            ctrl = controller_process(
                port, tmp_path / "osken.log",
                apps=("oxflow.apps.learning_switch", "oxflow.apps.recorder"),
                env={"OXFLOW_RECORDER_FILE": str(rec)})
            standalone = mode == "standalone"
            with sw_legacy, ctrl:
                ctrl.wait_for_port(port)
                with Switch([], dpid=0x7b,
                            fail_mode="standalone" if standalone
                            else "secure",
                            controllers=[] if standalone else
                            ["tcp:127.0.0.1:%d" % port],
                            log_path=tmp_path / "oxflow.log",
                            extra_args=["--trunk", "%s=%d-%d" % (
                                ot, ACCESS[0], ACCESS[-1])] + (
                                    ["--workers", "2"] if standalone
                                    else [])) as sw:
                    if not standalone:
                        wait_until(lambda: rec.exists() and "connect" in
                                   rec.read_text(), timeout=20,
                                   what="controller connected")
                    out = ctl(sw, "dump-ports-desc")
                    for i, vid in enumerate(ACCESS):
                        assert "%d(%s.%d)" % (i + 1, ot, vid) in out, out
                    for i, a in enumerate(hosts):
                        for j, b in enumerate(hosts):
                            if i != j:
                                ip = "10.8.0.%d" % (j + 1)
                                r = a.ping(ip, count=3, timeout=10)
                                assert r.received >= 1, (a.name, ip)
                    if standalone:
                        assert sw.running(), sw.log()[-3000:]
                        return
                    # the controller's learned flows match logical ports
                    dumped = ctl(sw, "dump-flows")
                    assert re.search(r"in_port=[123]\b", dumped), dumped
                    sh(["ip", "link", "set", lt, "down"])

                    def downs():
                        names = set()
                        for line in rec.read_text().splitlines():
                            ev = json.loads(line)
                            if ev["event"] != "port_status":
                                continue
                            d = ev["msg"]["OFPPortStatus"]["desc"]["OFPPort"]
                            if d["state"] & 1:
                                names.add(d["name"])
                        return names >= {"%s.%d" % (ot, v) for v in ACCESS}

                    wait_until(downs, timeout=15,
                               what="port status LINK_DOWN per VLAN")
                    assert sw.running(), sw.log()[-3000:]
        finally:
            sh(["ip", "link", "del", lt], check=False)
