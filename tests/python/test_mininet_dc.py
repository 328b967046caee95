"""Mininet integration and the data-centre evaluation (docs/datacenter.md).

- OxflowSwitch under Mininet: standalone pingAll, pingAll under an os-ken
  learning switch reached through Mininet's RemoteController, `mn
  --custom python/oxflow/mn_custom.py --switch oxflow` from the command line.
- A 2-2-2 Spine-Leaf through oxflow with the fabric controller (ECMP SELECT
  groups): flows of every class (mouse, rabbit, elephant) carried as real TCP
  connections by the traffic agents; every flow must finish with its FCT
  logged. The elephant is 12 MB (just above the 10 MB class bound) so the
  test stays short.
- The evaluation's refusal of bad input (no root needed), the flow-size
  CDFs and the Poisson schedule's offered load.

Root is required for the Mininet parts (skipped otherwise); Mininet itself
missing is a failure: scripts/setup.sh installs it.
"""

import os
import subprocess
import sys

import pytest

from oxflow import dcflows, dctopo
from oxflow.switch import REPO_ROOT

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="Mininet needs root")
PY = sys.executable
ENV = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))


def _mininet():
    try:
        from mininet.net import Mininet  # noqa: F401
    except ImportError as exc:
        pytest.fail("Mininet missing (%s): run scripts/setup.sh" % exc)
    from mininet.log import setLogLevel
    setLogLevel("warning")
    import mininet.net
    return mininet.net


@needs_root
def test_oxflow_switch_standalone_pingall(tmp_path):
    mn = _mininet()
    from mininet.topo import SingleSwitchTopo
    from oxflow.mininet_switch import OxflowSwitch

    # pollSpinUs=0: idle workers block in poll(2) right after each frame;
    # every frame then arrives at a sleeping worker and must wake it.
    def sw(name, **kw):
        return OxflowSwitch(name, logdir=str(tmp_path), pollSpinUs=0, **kw)

    net = mn.Mininet(topo=SingleSwitchTopo(3), switch=sw, controller=None)
    try:
        net.start()
        s1 = net.get("s1")
        assert s1.connected()
        assert net.pingAll(timeout=2) == 0.0
        show = s1.dpctl("dump-ports-desc")
        for intf in ("s1-eth1", "s1-eth2", "s1-eth3"):
            assert intf in show, show
    finally:
        net.stop()
    assert not s1.running()
    assert (tmp_path / "s1.log").exists()
    assert "--poll-spin-us 0" in (tmp_path / "s1.log").read_text()


@needs_root
def test_oxflow_switch_with_osken_learning_switch(tmp_path):
    mn = _mininet()
    from mininet.node import RemoteController
    from mininet.topo import LinearTopo
    from oxflow.mininet_switch import OxflowSwitch
    from oxflow.netns import free_tcp_port
    from oxflow.switch import controller_process

    port = free_tcp_port()
    with controller_process(port, tmp_path / "osken.log") as ctrl:
        ctrl.wait_for_port(port, timeout=30)

        def sw(name, **kw):
            return OxflowSwitch(name, logdir=str(tmp_path), **kw)

        net = mn.Mininet(topo=LinearTopo(2, 1), switch=sw, build=False,
                         controller=None)
        net.addController(RemoteController("c0", ip="127.0.0.1", port=port))
        try:
            net.build()
            net.start()
            assert net.pingAll(timeout=2) == 0.0
            # the learning switch installed flows through the controller
            assert "priority=1" in net.get("s1").dpctl("dump-flows")
        finally:
            net.stop()
        assert "packet-in" in ctrl.log_text()


@needs_root
def test_mn_command_line_custom_switch():
    _mininet()
    proc = subprocess.run(
        ["mn", "--custom", str(REPO_ROOT / "python/oxflow/mn_custom.py"),
         "--switch", "oxflow", "--topo", "single,2", "--controller", "none",
         "--test", "pingall"], capture_output=True, text=True, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Results: 0% dropped (2/2 received)" in out, out


@needs_root
def test_mn_command_line_user_space_ovs_leaves_nothing_behind():
    _mininet()
    proc = subprocess.run(
        ["mn", "--custom", str(REPO_ROOT / "python/oxflow/mn_custom.py"),
         "--switch", "ovsuser", "--topo", "single,2", "--controller", "none",
         "--test", "pingall"], capture_output=True, text=True, timeout=90)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Results: 0% dropped (2/2 received)" in out, out
    left = subprocess.run(["pgrep", "-af", "oxflow-mn-ovs-"],
                          capture_output=True, text=True).stdout
    assert [ln for ln in left.splitlines() if "pgrep" not in ln] == []


@needs_root
def test_spine_leaf_2_2_2_flows_of_every_class(tmp_path):
    _mininet()
    from oxflow.datacenter import Fabric

    sizes = [2_000, 5_000, 9_000, 200_000, 1_000_000, 12_000_000]
    with Fabric("oxflow", 2, 2, 2, 100.0, str(tmp_path)) as fab:
        hosts = fab.hosts()
        # every flow crosses leaves: leaf-1 servers send to leaf-2 ones
        # and back, so both spines' ECMP buckets can be used
        flows = []
        for i, size in enumerate(sizes):
            src = hosts[i % 2]
            dst = hosts[2 + (i // 2) % 2]
            if i % 3 == 2:
                src, dst = dst, src
            flows.append({"id": i, "src": src[1], "dst": dst[1],
                          "dst_ip": dst[2], "start": 0.2 * i, "size": size})
        leaf = fab.net.get("lf1")
        groups = leaf.dpctl("dump-groups")
        assert "select" in groups.lower(), groups
        records, info = fab.run_flows(flows, "t", timeout=60)
    assert len(records) == len(flows)
    bad = [r for r in records if r.get("error") or not r.get("fct")]
    assert not bad, bad
    assert {r["class"] for r in records} == set(dcflows.CLASSES)
    for r in records:
        assert r["fct"] > 0
        assert r["class"] == dcflows.flow_class(r["size"])
    # the elephant cannot beat the 100 Mbit/s links it was shaped to
    eleph = next(r for r in records if r["class"] == "elephant")
    assert eleph["size"] * 8 / eleph["fct"] < 100e6
    assert 0.0 <= info["cpu_busy"] <= 1.0


def _eval(*args):
    return subprocess.run([PY, "-m", "oxflow.datacenter"] + list(args),
                          capture_output=True, text=True, timeout=60,
                          env=ENV)


@pytest.mark.parametrize("args,msg", [
    (["--dists", "websearch,nosuch"], "unknown distribution 'nosuch'"),
    (["--loads", "10,0"], "outside (0, 100)"),
    (["--loads", "100"], "outside (0, 100)"),
    (["--loads", "ten"], "not a number"),
    (["--servers", "70000"], "servers per leaf: at most 65534"),
    (["--leaves", "1"], "leaves must be at least 2"),
    (["--switches", "bofuss"], "unknown switch 'bofuss'"),
    (["--warmup", "30", "--duration", "20"], "--warmup < --duration"),
    (["--poll-spin-us", "-1"], "--poll-spin-us must be in 0..1000000"),
])
def test_eval_refuses_bad_input_before_starting(args, msg):
    proc = _eval(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert msg in proc.stderr, proc.stderr
    assert "Spine-Leaf, " not in proc.stderr  # nothing started


def test_flow_size_cdfs_match_their_published_means():
    ws = dcflows.FlowSizeCdf.load("websearch")
    dm = dcflows.FlowSizeCdf.load("datamining")
    # published means: ~1.6-1.7 MB (web search), ~7.4 MB (data mining)
    assert 1.5e6 < ws.mean() < 1.9e6
    assert 7.0e6 < dm.mean() < 7.9e6
    import random
    rng = random.Random(3)
    sizes = [dm.sample(rng) for _ in range(20000)]
    mice = sum(1 for s in sizes if dcflows.flow_class(s) == "mouse")
    assert 0.75 < mice / len(sizes) < 0.85  # CDF: 0.8 at 10,220 bytes
    with pytest.raises(ValueError, match="unknown distribution"):
        dcflows.FlowSizeCdf.load("nosuch")


def test_schedule_offers_the_requested_load():
    cdf = dcflows.FlowSizeCdf.load("websearch")
    hosts = dctopo.hosts_by_leaf(2, 4, 4)
    flows = dcflows.schedule(cdf, hosts, 20, 400.0, 100.0, seed=5)
    offered = sum(f["size"] for f in flows) * 8 / 400.0
    capacity = len(hosts) * 100e6
    assert 0.15 < offered / capacity < 0.25
    leaf_of = {name: leaf for leaf, name, _ in hosts}
    assert all(leaf_of[f["src"]] != leaf_of[f["dst"]] for f in flows)
    with pytest.raises(ValueError, match=r"\(0, 100\)"):
        dcflows.schedule(cdf, hosts, 0, 10.0, 100.0, seed=1)


def test_cluster_placement_keeps_leaves_with_their_servers():
    from oxflow.dccluster import placement
    where = placement(4, 4, 3, ["localhost", "m2", "m3"])
    assert where["lf1"] == where["h1n1"] == where["h1n3"] == "localhost"
    assert where["lf2"] == where["h2n2"] == "m2"
    assert where["lf4"] == where["h4n1"] == "localhost"
    assert [where["sp%d" % j] for j in range(1, 5)] == [
        "localhost", "m2", "m3", "localhost"]
    assert len(where) == 4 + 4 + 4 * 3
    with pytest.raises(ValueError, match="at least one machine"):
        placement(2, 2, 2, [])


@needs_root
def test_cluster_mode_on_one_machine(tmp_path):
    """The whole cluster path (MininetCluster, RemoteOxflowSwitch,
    RemoteHost, GRE-capable shaped links, agents over stdin/stdout) with
    every node on localhost."""
    _mininet()
    from oxflow.datacenter import Fabric

    with Fabric("oxflow", 2, 2, 1, 100.0, str(tmp_path),
                machines=["localhost"]) as fab:
        hosts = fab.hosts()
        flows = [{"id": 0, "src": hosts[0][1], "dst": hosts[1][1],
                  "dst_ip": hosts[1][2], "start": 0.0, "size": 300_000},
                 {"id": 1, "src": hosts[1][1], "dst": hosts[0][1],
                  "dst_ip": hosts[0][2], "start": 0.1, "size": 4_000}]
        records, _ = fab.run_flows(flows, "c", timeout=30)
    assert [r.get("error") for r in records] == [None, None], records
    assert all(r["fct"] > 0 for r in records)


def _leftovers():
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True,
                           text=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0]
             for ln in links.splitlines() if ":" in ln]
    mine = [n for n in names if n.startswith(("lf", "sp", "h1n", "h2n"))]
    procs = subprocess.run(["pgrep", "-af", "oxflow.dcflows agent|"
                            "oxflow.apps.fabric|--dpid 0x00000000000002"],
                           capture_output=True, text=True).stdout
    return mine, [p for p in procs.splitlines() if "pgrep" not in p]


@needs_root
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_interrupted_eval_cleans_up(tmp_path, sig):
    import signal
    import time
    _mininet()
    proc = subprocess.Popen(
        [PY, "-m", "oxflow.datacenter", "--switches", "oxflow", "--dists",
         "websearch", "--loads", "30", "--spines", "2", "--leaves", "2",
         "--servers", "2", "--duration", "60", "--warmup", "1",
         "--out", str(tmp_path / "out")], env=ENV, stderr=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    try:
        # wait until traffic runs (the run's first progress lines)
        deadline = time.monotonic() + 60
        links = []
        while time.monotonic() < deadline and proc.poll() is None:
            links = _leftovers()[0]
            if any(n.startswith("lf") for n in links) and _leftovers()[1]:
                break
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()
        assert links, "the fabric never came up"
        time.sleep(3)
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "interrupted" in err, err
    assert _leftovers() == ([], []), err
