"""The oxflow binary end to end: `oxflow run` on veth ports of hosts in
network namespaces, standalone and under an os-ken controller, managed by
`oxflow ctl` and `ovs-ofctl`, its start-up errors and its clean stop.

Needs root and the binary (`cargo build --release -p oxflow`, or
$OXFLOW_BIN); `make test-python` builds it first.
"""

import itertools
import os
import shutil
import signal
import subprocess

import pytest

from oxflow.netns import Topology, free_tcp_port
from oxflow.switch import Switch, controller_process, oxflow_bin, run_oxflow

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root (network namespaces)")


@pytest.fixture(scope="module")
def binary():
    try:
        return oxflow_bin()
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def three_hosts():
    """h1..h3 (10.0.0.1..3/24), each on one veth to the root namespace;
    the root ends become OpenFlow ports 1..3."""
    with Topology() as topo:
        for i in (1, 2, 3):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i)
        yield topo


def ping_all(topo):
    """Ping every ordered pair once (two echo requests); returns the list of
    pairs that got no reply."""
    failed = []
    hosts = list(topo.hosts.values())
    for a, b in itertools.permutations(hosts, 2):
        r = a.ping(b.ip(), count=2, interval=0.2, timeout=2)
        if r.received == 0:
            failed.append("%s->%s" % (a.name, b.name))
    return failed


def test_standalone_learning_switch(binary, three_hosts, tmp_path):
    with Switch(three_hosts, fail_mode="standalone",
                log_path=tmp_path / "oxflow.log") as sw:
        failed = ping_all(three_hosts)
        assert not failed, "no reply for %s; log:\n%s" % (failed, sw.log())
        assert "learning switch" in sw.log()
        # Standalone forwarding does not go through flow entries.
        flows = sw.ctl("dump-flows", check=True).stdout
        assert "actions=" not in flows, flows
        ports = sw.ctl("dump-ports", check=True).stdout
        assert "port  1" in ports or "port 1" in ports, ports
        assert sw.stop() == 0


def test_osken_learning_switch(binary, three_hosts, tmp_path):
    port = free_tcp_port()
    with controller_process(port, tmp_path / "osken.log") as ctrl:
        ctrl.wait_for_port(port, timeout=30)
        with Switch(three_hosts, dpid=0x42,
                    controllers=["tcp:127.0.0.1:%d" % port],
                    fail_mode="secure",
                    log_path=tmp_path / "oxflow.log") as sw:
            # The app's table-miss entry shows the controller is attached.
            sw.wait_for_flows(r"priority=0.*actions=CONTROLLER", timeout=15)
            failed = ping_all(three_hosts)
            assert not failed, "no reply for %s; oxflow log:\n%s\nos-ken:\n%s" \
                % (failed, sw.log(), ctrl.log_text()[-3000:])
            flows = sw.ctl("dump-flows", check=True).stdout
            # One learned flow per direction of each pair at least.
            learned = [l for l in flows.splitlines() if "priority=1," in l]
            assert len(learned) >= 6, flows
            for h in three_hosts.hosts.values():
                assert "dl_dst=%s" % h.mac() in flows, (h, flows)
            assert sw.stop() == 0


@pytest.mark.skipif(shutil.which("ovs-ofctl") is None,
                    reason="ovs-ofctl not installed")
def test_ovs_ofctl_manages_oxflow(binary, three_hosts, tmp_path):
    with Switch(three_hosts, fail_mode="secure",
                log_path=tmp_path / "oxflow.log") as sw:
        h1, h2, h3 = (three_hosts.hosts[n] for n in ("h1", "h2", "h3"))

        # ovs-ofctl 3.x asks for TABLE_FEATURES (table names) and port
        # descriptions (port names) before add-flow/dump-flows.
        def ofctl(*args):
            return subprocess.run(["ovs-ofctl", "-O", "OpenFlow13"]
                                  + list(args), capture_output=True,
                                  text=True, timeout=20)

        for spec in ("priority=10,in_port=1,actions=output:2",
                     "priority=10,in_port=2,actions=output:1"):
            r = ofctl("add-flow", sw.target, spec)
            assert r.returncode == 0, r.stderr
        r = ofctl("dump-flows", sw.target)
        assert r.returncode == 0, r.stderr
        assert "in_port=1" in r.stdout and "actions=output:2" in r.stdout, \
            r.stdout
        assert h1.ping(h2.ip(), count=2, timeout=2).received >= 1, sw.log()
        # Secure mode without controller: no flow for h3, so no learning.
        assert h1.ping(h3.ip(), count=1, timeout=1).received == 0
        r = ofctl("del-flows", sw.target)
        assert r.returncode == 0, r.stderr
        assert "actions=" not in sw.ctl("dump-flows", check=True).stdout
        assert h1.ping(h2.ip(), count=1, timeout=1).received == 0


def test_missing_interface_is_a_clear_error(binary):
    r = run_oxflow("run", "--port", "oxfnosuch0",
                   "--listen", "ptcp:%d:127.0.0.1" % free_tcp_port())
    assert r.returncode != 0
    assert "oxfnosuch0" in r.stderr and "no such network interface" in \
        r.stderr, r.stderr


def test_bad_config_names_the_line(binary, tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('datapath_id = 1\nworkers = 1\nfail_mode = "sometimes"\n')
    r = run_oxflow("run", "--config", cfg)
    assert r.returncode != 0
    assert "%s:3:" % cfg in r.stderr and "sometimes" in r.stderr, r.stderr


def test_bad_flag_says_what_is_wrong(binary):
    r = run_oxflow("run", "--fail-mode", "maybe")
    assert r.returncode == 2
    assert "maybe" in r.stderr and "--fail-mode" in r.stderr, r.stderr
    r = run_oxflow("run", "--controller", "udp:1.2.3.4:5")
    assert r.returncode != 0
    assert "--controller" in r.stderr, r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_cleanly(binary, three_hosts, tmp_path, sig):
    sw = Switch(three_hosts, fail_mode="standalone",
                log_path=tmp_path / "oxflow.log").start()
    try:
        assert sw.running()
        os.kill(sw.pid, sig)
        assert sw.proc.proc.wait(10) == 0, sw.log()
        assert "stopping" in sw.log() and "stopped" in sw.log(), sw.log()
    finally:
        sw.stop()


def test_config_file_with_flag_overrides(binary, three_hosts, tmp_path):
    """Ports, dpid and fail mode from a TOML file; --fail-mode overrides the
    file's "secure" (secure without a controller would forward nothing)."""
    cfg = tmp_path / "oxflow.toml"
    cfg.write_text('datapath_id = "0x2a"\nfail_mode = "secure"\n'
                   + "".join('[[port]]\ninterface = "%s"\n' % p
                             for p in three_hosts.switch_ports))
    with Switch([], dpid=None, fail_mode="standalone",
                extra_args=["--config", cfg],
                log_path=tmp_path / "oxflow.log") as sw:
        assert "--port" not in sw.argv() and "--dpid" not in sw.argv()
        failed = ping_all(three_hosts)
        assert not failed, "no reply for %s; log:\n%s" % (failed, sw.log())
        show = sw.ctl("show", check=True).stdout
        assert "000000000000002a" in show, show
        for i, port in enumerate(three_hosts.switch_ports, 1):
            assert "%d(%s)" % (i, port) in show, show
