"""Workers running a configured module graph (`oxflow run --graph FILE`,
docs/graph.md; issue 30).

One `oxflow run` with three ports and this graph:

    in1 (port_inc, h1) -> m1 (measure) -> of (openflow) -> out (tx)
    in2 (port_inc, h2) ---------------->  of
    in3 (port_inc, h3) -> rl (rate_limit, 100 pps) -> of

and the flow table `in_port=1 -> 2, 2 -> 1, 3 -> 2` from `oxflow ctl
add-flows`. Checked:

- ping h1 <-> h2 goes through the flow table, with no loss; without the
  flows nothing passes (the graph forwards by the table, not by itself);
- a burst from h3 is policed by the rate limiter (most of it dropped)
  while the same burst from h1 arrives whole;
- a graph with an unknown module, a dangling gate, a cycle without a
  queue or an attribute nothing writes is refused at start with its file,
  line and reason, and the switch exits non-zero;
- run-time changes (`oxflow ctl graph-change`, `tc-set` and the Python API
  `oxflow.datapath_graph`): a measure module inserted into and removed
  from h3's path, again and again, while a ping stream h1 -> h2 loses
  nothing; a refused change (dangling gate, duplicate module) answers
  with its reason and leaves forwarding and `show-pipeline` as they were;
- `show-pipeline [--dot]` and `show-tc` print the live graph with per-gate
  packets and module counters, and each worker's class tree with usage;
- a port added at run time (`add-port`, own switch) forwards once a
  graph change adds a `port_inc` on it, and `del-port` is refused while
  that module uses it.

Needs root and the release binary.
"""

import re
import subprocess
import time

import pytest
from scapy.all import IP, UDP, Ether, Raw

import dp_util
from dp_util import HostSocket
from oxflow.netns import Topology
from oxflow.datapath_graph import ChangeSet, Client, Refused
from oxflow.switch import Switch, oxflow_bin, run_oxflow

PREFIX = "g1"
PPS = 100


def graph_text(ports):
    """in1 -> m1 (measure) -> of, in2 -> of, in3 -> rl (rate_limit) -> of,
    of -> out (tx)."""
    g = ChangeSet()
    for i, port in enumerate(ports[:3], 1):
        g.add_module("in%d" % i, "port_inc", port=port)
    (g.add_module("m1", "measure")
      .add_module("rl", "rate_limit", pps=PPS)
      .add_module("of", "openflow")
      .add_module("out", "tx"))
    for frm, to in (("in1", "m1"), ("m1", "of"), ("in2", "of"),
                    ("in3", "rl"), ("rl", "of"), ("of", "out")):
        g.connect(frm, to)
    return str(g)


FLOWS = """\
priority=1,in_port=1 actions=output:2
priority=1,in_port=2 actions=output:1
priority=1,in_port=3 actions=output:2
"""


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    dp_util.require_oxflow()
    d = tmp_path_factory.mktemp("graph")
    with Topology(prefix=PREFIX) as topo:
        for i in (1, 2, 3):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i,
                                 mac="02:00:00:00:00:%02x" % i)
        g = d / "graph.toml"
        g.write_text(graph_text(topo.switch_ports))
        with Switch(topo, extra_args=["--graph", g, "--workers", "2"],
                    log_path=d / "oxflow.log") as sw:
            yield topo, sw, d
            assert sw.running(), sw.log()[-4000:]


def ctl(sw, *args, stdin=None):
    proc = subprocess.run([oxflow_bin(), "ctl", args[0], sw.target]
                          + [str(a) for a in args[1:]], input=stdin,
                          capture_output=True, text=True, timeout=30)
    return proc


def add_flows(sw, text):
    proc = ctl(sw, "add-flows", "-", stdin=text)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_graph_forwards_by_the_flow_table(net):
    topo, sw, _ = net
    h1 = topo.hosts["h1"]
    # No flows yet: the table-miss drops everything.
    assert h1.ping("10.0.0.2", count=2, interval=0.2, timeout=1).received == 0
    add_flows(sw, FLOWS)
    r = h1.ping("10.0.0.2", count=10, interval=0.05)
    assert r.received == 10, r


def burst(host, tag, n):
    frames = [bytes(Ether(src=host.mac(), dst="02:00:00:00:00:02")
                    / IP(src=host.ip(), dst="10.0.0.2") / UDP(dport=9)
                    / Raw(dp_util.MARK + (b"%s-%d;" % (tag, i))))
              for i in range(n)]
    with HostSocket(host) as s:
        s.send(frames)


def rx_packets(host):
    return int(host.run(["cat", "/sys/class/net/eth0/statistics/rx_packets"]
                        ).stdout)


def test_rate_limit_module_polices(net):
    topo, sw, _ = net
    add_flows(sw, FLOWS)
    n = 1000
    h2 = topo.hosts["h2"]
    got = {}
    for tag, host in (("limited", "h3"), ("free", "h1")):
        before = rx_packets(h2)
        burst(topo.hosts[host], tag.encode(), n)
        time.sleep(0.5)
        got[tag] = rx_packets(h2) - before
    text = ctl(sw, "show-pipeline").stdout
    print("\nbursts of %d frames, received by h2: %r\n%s" % (n, got, text))
    assert got["free"] >= n, got
    # 100 pps with a burst of 32, over well under 10 s.
    assert 0 < got["limited"] < n // 2, got
    rl = re.search(r"rl \(rate_limit\)\n.* passed=(\d+) dropped=(\d+)\n",
                   text)
    assert rl and int(rl.group(1)) < n // 2 <= int(rl.group(2)), text


BAD = [
    ('[[module]]\nname = "a"\nkind = "nope"\n',
     ":1: module `a`: unknown module kind `nope`"),
    ('[[module]]\nname = "of"\nkind = "openflow"\n',
     ":1: "),
    ('[[module]]\nname = "p"\nkind = "pass"\n[[connect]]\nfrom = "p"\n'
     'to = "p"\n', ":4: "),
    ('[[module]]\nname = "of"\nkind = "openflow"\n[[module]]\nname = "t"\n'
     'kind = "tx"\n[[connect]]\nfrom = "of"\nto = "nothere"\n',
     ":7: dangling gate: no module `nothere`"),
    ('[[module]]\nname = "m"\nkind = "measure"\nlatency = true\n'
     '[[module]]\nname = "s"\nkind = "sink"\n[[connect]]\nfrom = "m"\n'
     'to = "s"\n', ":1: "),
]


@pytest.mark.parametrize("text,want", BAD)
def test_bad_graph_is_refused_at_start(net, text, want):
    topo, _, d = net
    g = d / "bad.toml"
    g.write_text(text)
    # The ports are in use by the running switch; a second one on fresh
    # names would not get that far, so point it at no ports at all.
    proc = run_oxflow("run", "--graph", g, "--listen", "ptcp:0:127.0.0.1",
                      timeout=20)
    assert proc.returncode != 0
    err = proc.stderr
    assert ("%s%s" % (g, want)) in err, err


INSERT = (ChangeSet().disconnect("in3").add_module("m3", "measure")
          .connect("in3", "m3").connect("m3", "rl"))
REMOVE = "[[disconnect]]\nfrom = \"in3\"\n[[remove]]\nname = \"m3\"\n" \
         "[[connect]]\nfrom = \"in3\"\nto = \"rl\"\n"


def test_changes_under_traffic_lose_nothing(net):
    topo, sw, d = net
    add_flows(sw, FLOWS)
    remove = d / "remove.toml"
    remove.write_text(REMOVE)
    h1 = topo.hosts["h1"]
    ping = h1.popen(["ping", "-n", "-q", "-c", "300", "-i", "0.01",
                     "10.0.0.2"], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True)
    changes = 0
    try:
        with Client(sw.target) as c:
            while ping.poll() is None and changes < 40:
                c.apply(INSERT)
                assert "m3" in c.graph()["nodes"]
                proc = ctl(sw, "graph-change", remove)
                assert proc.returncode == 0, proc.stdout + proc.stderr
                changes += 2
    finally:
        out, _ = ping.communicate(timeout=60)
    print("\n%d changes during the ping: %s" % (changes, out.strip()))
    assert changes >= 4
    assert re.search(r"300 packets transmitted, 300 received", out), out


def shape(sw):
    """show-pipeline without its counts."""
    proc = ctl(sw, "show-pipeline")
    assert proc.returncode == 0, proc.stderr
    return re.sub(r"=\d+", "=N", proc.stdout)


def test_refused_change_changes_nothing(net):
    topo, sw, d = net
    add_flows(sw, FLOWS)
    before = shape(sw)
    bad = d / "bad-change.toml"
    bad.write_text('[[disconnect]]\nfrom = "in2"\n[[connect]]\n'
                   'from = "in2"\nto = "nothere"\n')
    proc = ctl(sw, "graph-change", bad)
    assert proc.returncode != 0
    assert "refused by the switch: line 3: dangling gate: no module " \
           "`nothere`" in proc.stderr, proc.stderr
    with Client(sw.target) as c:
        with pytest.raises(Refused) as e:
            c.apply(ChangeSet().add_module("m1", "pass"))
        assert "duplicate module name `m1`" in e.value.reason
        with pytest.raises(Refused) as e:
            c.apply(ChangeSet().set_share("nope", 2))
        assert "no class `nope`" in e.value.reason
    assert shape(sw) == before
    r = topo.hosts["h2"].ping("10.0.0.1", count=5, interval=0.05)
    assert r.received == 5, r


def test_show_pipeline_and_tc_print_the_live_graph(net):
    topo, sw, _ = net
    add_flows(sw, FLOWS)
    assert topo.hosts["h1"].ping("10.0.0.2", count=3,
                                 interval=0.05).received == 3
    proc = ctl(sw, "tc-set", "in1", "share=3")
    assert proc.returncode == 0, proc.stderr
    text = ctl(sw, "show-pipeline").stdout
    assert "m1 (measure)" in text and "out (tx)" in text, text
    m1 = re.search(r"m1 \(measure\)\n  (.*)\n  :0 -> of  packets=(\d+)",
                   text)
    assert m1 and int(m1.group(2)) >= 3, text
    assert "rl (rate_limit)" in text
    dot = ctl(sw, "show-pipeline", "--dot").stdout
    assert '"m1" -> "of"' in dot, dot
    tc = ctl(sw, "show-tc").stdout
    for w in (0, 1):
        assert "worker %d: round_robin" % w in tc, tc
    assert re.search(r"    in1 \(leaf\) share=3 .* packets=\d+", tc), tc
    with Client(sw.target) as c:
        g = c.graph()
    assert g["nodes"]["rl"] == "rate_limit"
    assert g["counters"]["m1"]["packets"] >= 3
    assert {c["name"] for c in g["classes"]} >= {"root", "in1", "in2", "in3"}


def test_changeset_text_is_the_switch_format():
    """The Python builder writes the change-set TOML the switch parses
    (`graph::change`); the multipart bytes carry it after oxflow's
    experimenter id and GRAPH_CHANGE."""
    import tomllib
    from oxflow import datapath_graph as dg
    cs = (ChangeSet().disconnect("in2").add_module("m2", "rate_limit",
                                                   pps=5, burst=2)
          .connect("in2", "m2").attach("c\"2", "root", "in4", share=3)
          .set_limit("lim", 100000, 64).set_share("in1", 2).remove("x")
          .detach("old"))
    t = tomllib.loads(str(cs))
    assert t["module"] == [{"name": "m2", "kind": "rate_limit", "burst": 2,
                            "pps": 5}]
    assert t["disconnect"] == [{"from": "in2"}]
    assert t["connect"] == [{"from": "in2", "to": "m2"}]
    assert t["attach"] == [{"class": "c\"2", "parent": "root", "task": "in4",
                            "share": 3, "priority": 0}]
    assert t["set"] == [{"class": "lim", "limit": 100000, "burst": 64},
                        {"class": "in1", "share": 2}]
    assert t["remove"] == [{"name": "x"}] and t["detach"] == [{"class": "old"}]
    wire = dg.multipart_request(7, dg.GRAPH_CHANGE, dg.change_data(cs))
    assert wire[:8] == bytes([4, 18]) + len(wire).to_bytes(2, "big") + \
        (7).to_bytes(4, "big")
    assert wire[8:24] == bytes.fromhex("ffff0000000000000"
                                       "06f786600000003")
    assert wire[24:].decode() == str(cs)
    # os-ken encodes the controller-side request to the same bytes.
    from oxflow import ofp13
    assert ofp13.serialize(dg.change_request(ofp13.DP, cs), 7) == wire
    err = (0xFFFF).to_bytes(2, "big") + (3).to_bytes(2, "big") + \
        dg.OXFLOW_EXPERIMENTER.to_bytes(4, "big") + b"line 1: no"
    assert dg.parse_error(err).reason == "line 1: no"


def test_port_added_at_run_time_joins_the_graph(tmp_path):
    dp_util.require_oxflow()
    with Topology(prefix="g3") as topo:
        for i in (1, 2, 3):
            topo.add_host("h%d" % i)
        for i in (1, 2):
            topo.add_switch_link(topo.hosts["h%d" % i], "10.0.0.%d/24" % i)
        g = tmp_path / "graph.toml"
        g.write_text(str(dp_util.openflow_graph(
            ("in%d" % i, "port_inc", {"port": p})
            for i, p in enumerate(topo.switch_ports, 1))))
        with Switch(topo, extra_args=["--graph", g, "--workers", "2"],
                    log_path=tmp_path / "oxflow.log") as sw:
            h1, h3 = topo.hosts["h1"], topo.hosts["h3"]
            root3 = topo.add_switch_link(h3, "10.0.0.3/24")
            proc = ctl(sw, "add-port", root3)
            assert proc.stdout.strip() == "added port 3 (%s)" % root3, \
                proc.stdout + proc.stderr
            add_flows(sw, "in_port=1 actions=output:3\n"
                          "in_port=3 actions=output:1\n")
            # Transmitted to, but nothing reads it yet.
            assert h3.ping("10.0.0.1", count=2, interval=0.2,
                           timeout=1).received == 0
            in3 = tmp_path / "in3.toml"
            in3.write_text(str(
                ChangeSet().add_module("in3", "port_inc", port=root3)
                .connect("in3", "of").attach("in3", "root", "in3")))
            proc = ctl(sw, "graph-change", in3)
            assert proc.returncode == 0, proc.stderr
            r = h1.ping("10.0.0.3", count=5, interval=0.05)
            assert r.received == 5, (r, sw.log()[-3000:])
            proc = ctl(sw, "del-port", root3)
            assert proc.returncode != 0
            assert "used by module `in3`" in proc.stderr, proc.stderr
            proc = ctl(sw, "graph-change", "-",
                       stdin='[[remove]]\nname = "in3"\n')
            assert proc.returncode == 0, proc.stderr
            proc = ctl(sw, "del-port", root3)
            assert proc.returncode == 0, proc.stderr
            assert ctl(sw, "graph-change", in3).returncode != 0
            assert sw.running(), sw.log()[-3000:]
