"""A table whose lookup structure comes from outside the pipeline
(docs/ARCHITECTURE.md, "Add a table kind"; config `[[table]]`, README).

The `oxflow` binary registers the worked example's structure,
`in_port_array` (examples/table-kind: entries indexed by the in_port they
match). One `oxflow run` with two workers, three hosts on ports 1..3, and
table 0 configured with it in the config file; the flows, from `oxflow ctl
add-flows`, are in_port rules (in the array) and a higher-priority UDP
rule outside it. Checked:

- the switch says table 0 uses `in_port_array`;
- with no flows nothing passes; with the flows, ping h1 <-> h2 loses
  nothing, UDP to port 10 from h1 reaches h2 and UDP to port 9 (the rule
  outside the array, above the in_port rules) does not;
- an unknown name or a table that does not exist is refused at start,
  with the flag or the file, line and reason.

Needs root and the release binary.
"""

import subprocess

import pytest
from scapy.all import IP, UDP, Ether, Raw

import dp_util
from dp_util import HostSocket
from oxflow.netns import Topology
from oxflow.switch import Switch, oxflow_bin, run_oxflow

PREFIX = "tk"

FLOWS = """\
priority=1,in_port=1 actions=output:2
priority=1,in_port=2 actions=output:1
priority=1,in_port=3 actions=output:2
priority=10,udp,tp_dst=9 actions=drop
"""


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    dp_util.require_oxflow()
    d = tmp_path_factory.mktemp("table_kind")
    cfg = d / "oxflow.toml"
    cfg.write_text('workers = 2\n\n[[table]]\nid = 0\nlookup = "in_port_array"\n')
    with Topology(prefix=PREFIX) as topo:
        for i in (1, 2, 3):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i,
                                 mac="02:00:00:00:00:%02x" % i)
        with Switch(topo, extra_args=["--config", cfg],
                    log_path=d / "oxflow.log") as sw:
            yield topo, sw
            assert sw.running(), sw.log()[-4000:]


def add_flows(sw, text):
    proc = subprocess.run([oxflow_bin(), "ctl", "add-flows", sw.target, "-"],
                          input=text, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def rx_packets(host):
    return int(host.run(["cat", "/sys/class/net/eth0/statistics/rx_packets"]
                        ).stdout)


def udp_burst(src, dport, n):
    frames = [bytes(Ether(src=src.mac(), dst="02:00:00:00:00:02")
                    / IP(src=src.ip(), dst="10.0.0.2") / UDP(dport=dport)
                    / Raw(dp_util.MARK + (b"tk-%d;" % i)))
              for i in range(n)]
    with HostSocket(src) as s:
        s.send(frames)


def received_from_burst(h1, h2, dport, n=20):
    """Packets h2 receives while h1 sends `n` UDP frames to `dport`
    (waiting until all `n` came, else 0.5 s after the last one)."""
    before = rx_packets(h2)
    udp_burst(h1, dport, n)
    try:
        dp_util.wait_until(lambda: rx_packets(h2) - before >= n, timeout=0.5,
                           what="the burst")
    except AssertionError:
        pass
    return rx_packets(h2) - before


def test_plugged_table_forwards(net):
    topo, sw = net
    assert "table 0 looks packets up with in_port_array" in sw.log()
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    assert h1.ping("10.0.0.2", count=2, interval=0.2, timeout=1).received == 0
    add_flows(sw, FLOWS)
    r = h1.ping("10.0.0.2", count=10, interval=0.05)
    assert r.received == 10, r
    assert received_from_burst(h1, h2, 10) >= 20
    assert received_from_burst(h1, h2, 9) <= 2


@pytest.mark.parametrize("args,want", [
    (["--table-lookup", "0=nope"],
     "--table-lookup 0=nope: unknown table lookup `nope` "
     "(known: auto, in_port_array)"),
    (["--table-lookup", "255=in_port_array"],
     "--table-lookup 255=in_port_array: table 255 does not exist"),
])
def test_bad_lookup_flag_is_refused(args, want):
    dp_util.require_oxflow()
    proc = run_oxflow("run", *args, "--listen", "ptcp:0:127.0.0.1",
                      timeout=20)
    assert proc.returncode != 0
    assert want in proc.stderr, proc.stderr


def test_bad_lookup_in_file_is_refused(tmp_path):
    dp_util.require_oxflow()
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[[table]]\nid = 1\nlookup = "nope"\n')
    proc = run_oxflow("run", "--config", cfg, "--listen", "ptcp:0:127.0.0.1",
                      timeout=20)
    assert proc.returncode != 0
    assert "%s:3:10: unknown table lookup `nope`" % cfg in proc.stderr, \
        proc.stderr
