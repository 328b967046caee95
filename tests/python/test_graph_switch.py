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
  line and reason, and the switch exits non-zero.

Needs root and the release binary.
"""

import time

import pytest
from scapy.all import IP, UDP, Ether, Raw

import dp_util
from dp_util import HostSocket
from oxflow.netns import Topology
from oxflow.switch import Switch, run_oxflow

PREFIX = "g1"
PPS = 100


def graph_text(ports):
    return """
[[module]]
name = "in1"
kind = "port_inc"
port = "%s"
[[module]]
name = "in2"
kind = "port_inc"
port = "%s"
[[module]]
name = "in3"
kind = "port_inc"
port = "%s"
[[module]]
name = "m1"
kind = "measure"
[[module]]
name = "rl"
kind = "rate_limit"
pps = %d
[[module]]
name = "of"
kind = "openflow"
[[module]]
name = "out"
kind = "tx"
[[connect]]
from = "in1"
to = "m1"
[[connect]]
from = "m1"
to = "of"
[[connect]]
from = "in2"
to = "of"
[[connect]]
from = "in3"
to = "rl"
[[connect]]
from = "rl"
to = "of"
[[connect]]
from = "of"
to = "out"
""" % (ports[0], ports[1], ports[2], PPS)


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


def add_flows(sw, text):
    from oxflow.switch import oxflow_bin
    import subprocess
    proc = subprocess.run([oxflow_bin(), "ctl", "add-flows", sw.target, "-"],
                          input=text, capture_output=True, text=True,
                          timeout=30)
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


def test_rate_limit_module_polices(net):
    topo, sw, _ = net
    add_flows(sw, FLOWS)
    n = 1000
    with dp_util.capture([topo.hosts["h2"]]) as got:
        start = time.monotonic()
        burst(topo.hosts["h3"], b"limited", n)
        burst(topo.hosts["h1"], b"free", n)
        sent_in = time.monotonic() - start
    cases = {}
    for f in got["h2"]:
        tag = dp_util.case_of(f) or ""
        cases.setdefault(tag.split("-")[0], 0)
        cases[tag.split("-")[0]] += 1
    print("\nburst of %d in %.3f s: %r" % (n, sent_in, cases))
    assert cases.get("free", 0) >= n * 0.95, cases
    # 100 pps with a burst of 32 over the capture (well under 10 s).
    assert 0 < cases.get("limited", 0) < n // 2, cases


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
