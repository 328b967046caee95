"""The HARMLESS manager (python/oxflow/harmless/manager.py, `oxflow
harmless up|down|status --config FILE`) against the emulated legacy
switch, end to end.

The lab: hosts h1..h3 on ports of the emulated legacy switch (a private
OVS, root namespace), which starts as a plain switch (every port access
VLAN 1, so the hosts already reach each other); its trunk port goes to
eth0 of the server namespace, where the test runs the os-ken learning
switch and the manager starts the software side. The hosts are migrated
as two entries (h1, h2 on VLANs 101-102 and h3 on 103: port subsets of
one switch into one OpenFlow switch).

Checks: up / status / down --restore in proxy mode with real pings and
the controller seeing 3 ports; the restore is byte-identical; bad
topology files, a refusing device, a port the device does not have and a
commit failing half-way each give a clear error and leave the legacy
switch as it was; trunk mode (oxflow --trunk) the same way when the
binary has it."""

import os
import re
import subprocess
import sys
import time

import pytest

from oxflow.harmless import lab, legacy_ovs, manager
from oxflow.netns import OvsSwitch, Topology
from oxflow.switch import REPO_ROOT

try:
    from napalm.base.exceptions import CommitError

    from oxflow.harmless.napalm_ovslegacy import OvsLegacyDriver
except ImportError:  # pragma: no cover - napalm missing
    OvsLegacyDriver = None

N = 3
CTL_PORT = 6653     # in the server namespace
PYTHON_DIR = str(REPO_ROOT / "python")

def binary(subcommand_help):
    """First oxflow binary ($OXFLOW_BIN, release, debug) whose `ARGS
    --help` output contains the wanted text, or None."""
    args, want = subcommand_help
    for c in [os.environ.get("OXFLOW_BIN"),
              str(REPO_ROOT / "target" / "release" / "oxflow"),
              str(REPO_ROOT / "target" / "debug" / "oxflow")]:
        if not c or not os.path.exists(c):
            continue
        p = subprocess.run([c] + args + ["--help"], capture_output=True,
                           text=True)
        if p.returncode == 0 and want in p.stdout:
            return c
    return None


PROXY_BIN = binary((["harmless", "proxy"], "--trunk-port"))
TRUNK_BIN = binary((["run"], "--trunk"))
RELEASE = str(REPO_ROOT / "target" / "release" / "oxflow")


def _lab_missing():
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not OvsSwitch.available():
        return "Open vSwitch is not installed (scripts/setup.sh)"
    if OvsLegacyDriver is None:
        return "napalm is not installed (scripts/setup-python.sh)"
    if PROXY_BIN is None:
        return ("no oxflow binary with `harmless proxy` (cargo build -p "
                "oxflow)")
    return None


LAB_MISSING = _lab_missing()
needs_lab = pytest.mark.skipif(LAB_MISSING is not None,
                               reason=LAB_MISSING or "")


def write_config(tmp, lab_, mode="proxy", entries=None, name="topo.toml",
                 **extra):
    """A topology file for the lab; `entries` overrides the [[legacy]]
    tables (list of dicts of TOML values)."""
    ports = lab_["ports"]
    if entries is None:
        entries = [
            {"name": "legacy1a", "access": ports[:2], "vlans": "101-102"},
            {"name": "legacy1b", "access": ports[2:], "vlans": "103"}]
    binary_ = extra.pop("oxflow", PROXY_BIN if mode == "proxy"
                        else TRUNK_BIN)
    lines = ['mode = "%s"' % mode, 'controller = "127.0.0.1:%d"' % CTL_PORT,
             'state_dir = "state"', 'oxflow = "%s"' % binary_, "",
             "[server]", 'nic = "%s"' % lab_["nic"],
             'netns = "%s"' % lab_["server"].ns, ""]
    for e in entries:
        e = dict({"driver": "ovslegacy", "host": lab_["legacy"].db_sock,
                  "trunk": lab_["trunk"], "timeout": 5}, **e)
        lines.append("[[legacy]]")
        for k, v in e.items():
            if isinstance(v, list):
                v = "[%s]" % ", ".join('"%s"' % x for x in v)
            elif isinstance(v, str):
                v = '"%s"' % v
            lines.append("%s = %s" % (k, v))
        lines.append("")
    path = tmp / name
    path.write_text("\n".join(lines))
    return path


def run_cli(command, config, *args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-m", "oxflow.harmless.%s"
                           % command, "--config", str(config)] + list(args),
                          capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture(scope="module")
def hlab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hm-manager")
    with Topology(prefix="hm") as topo:
        lg = lab.add_legacy_ns(topo)
        hosts = lab.add_hosts(topo, N, lg.ns)
        server, legacy_end, nic = lab.add_server(topo, legacy_ns=lg.ns)
        ports = [p for _, p in hosts]
        legacy = legacy_ovs.LegacySwitch(tmp / "legacy", ports + [legacy_end],
                                         hostname="legacy1", netns=lg.ns)
        with legacy:
            # something a restore must bring back: a description
            legacy.ovs.vsctl("set", "port", ports[0],
                             "external_ids:description=\"desk 12\"")
            ctl = lab.start_controller(tmp, CTL_PORT, netns=server.ns)
            try:
                yield {"hosts": [h for h, _ in hosts], "ports": ports,
                       "server": server, "nic": nic, "trunk": legacy_end,
                       "legacy": legacy, "ctl": ctl, "tmp": tmp,
                       "initial": legacy.running_config()}
            finally:
                ctl.stop()


def assert_untouched(hlab_, config):
    assert hlab_["legacy"].running_config() == hlab_["initial"]
    assert not (config.parent / "state" / "state.json").exists()


# --- the topology file (no root needed) --------------------------------------

def base_cfg(**over):
    data = {"mode": "proxy", "controller": "127.0.0.1:6653",
            "server": {"nic": "eth1"},
            "legacy": [{"name": "a", "host": "h", "trunk": "t",
                        "access": ["p1", "p2"], "vlans": "101-102"},
                       {"name": "b", "host": "h2", "trunk": "t",
                        "access": ["q1"], "vlans": "103"}]}
    for k, v in over.items():
        if k.startswith("a_"):
            data["legacy"][0][k[2:]] = v
        elif k.startswith("b_"):
            data["legacy"][1][k[2:]] = v
        else:
            data[k] = v
    return data


@pytest.mark.parametrize("over,msg", [
    ({"b_vlans": "102"}, "overlap a's 101-102"),
    ({"a_vlans": "4094-4095"}, "VLAN 4095 is outside 1-4094"),
    ({"a_vlans": "0-1"}, "VLAN 0 is outside 1-4094"),
    ({"a_vlans": "101-103"}, "3 VLANs for 2 access ports"),
    ({"a_vlans": "102-101"}, "first VLAN is above the last"),
    ({"a_trunk": "p1"}, "trunk p1 is also an access port"),
    ({"b_vlans": "200"}, "mode proxy serves one trunk NIC and one "
     "contiguous VLAN range"),
    ({"mode": "hybrid"}, "mode 'hybrid'"),
    ({"controller": "nowhere"}, "want HOST:PORT"),
    ({"legacy": []}, "no [[legacy]] switch"),
])
def test_bad_topology_files_say_what_and_where(over, msg):
    with pytest.raises(manager.ConfigError, match=".*") as err:
        manager.check_config(base_cfg(**over), "topo.toml")
    assert msg in str(err.value) and "topo.toml" in str(err.value), \
        str(err.value)


def test_good_topology_file_and_yaml(tmp_path):
    cfg = manager.check_config(base_cfg(), tmp_path / "t.toml")
    assert [(lg["first"], lg["last"]) for lg in cfg["legacy"]] == \
        [(101, 102), (103, 103)]
    assert manager.migration_config(cfg["legacy"][0]) == (
        "interface p1\n switchport mode access\n switchport access vlan "
        "101\n!\ninterface p2\n switchport mode access\n switchport access "
        "vlan 102\n!\ninterface t\n switchport mode trunk\n switchport "
        "trunk allowed vlan 101-102\n!\nend\n")
    # mode trunk: one --trunk per NIC and contiguous run of entries
    cfg = manager.check_config(base_cfg(
        mode="trunk", b_vlans="103", legacy=base_cfg()["legacy"] + [
            {"name": "c", "host": "h3", "trunk": "t", "access": ["r1"],
             "vlans": "107"},
            {"name": "d", "host": "h4", "trunk": "t", "access": ["s1"],
             "vlans": "108", "nic": "eth2"}]), tmp_path / "t.toml")
    assert manager.trunk_flags(cfg) == ["eth1=101-103", "eth1=107",
                                        "eth2=108"]
    y = tmp_path / "t.yaml"
    y.write_text("mode: trunk\ncontroller: 10.0.0.1:6653\nserver: {nic: "
                 "eth1}\nlegacy:\n - {host: h, trunk: t, access: [p1], "
                 "vlans: '7'}\n")
    cfg = manager.check_config(manager.load_file(y), y)
    assert cfg["mode"] == "trunk" and cfg["legacy"][0]["first"] == 7
    bad = tmp_path / "bad.toml"
    bad.write_text("mode = \n")
    with pytest.raises(manager.ConfigError, match="bad.toml: cannot parse"):
        manager.load_file(bad)


# --- end to end --------------------------------------------------------------

@needs_lab
def test_up_status_down_restore_proxy_mode(hlab, tmp_path):
    config = write_config(tmp_path, hlab)
    hosts = hlab["hosts"]
    up = run_cli("up", config)
    assert up.returncode == 0, up.stdout + up.stderr
    assert "saved to" in up.stdout and "up: mode proxy, 3 logical ports" \
        in up.stdout
    try:
        running = hlab["legacy"].running_config()
        assert " switchport access vlan 103\n" in running
        assert " switchport trunk allowed vlan 101-103\n" in running
        backup = (tmp_path / "state" / "backups" / "legacy1a.cfg").read_text()
        assert backup == hlab["initial"]
        rec = lab.wait_census(hlab["ctl"].ports_file, "port_desc",
                              lambda r: len(r["ports"]) == N)
        assert sorted(p["port_no"] for p in rec["ports"]) == [1, 2, 3]
        got = lab.ping_all(hosts, count=3)
        assert all(n >= 2 for n in got.values()), got
        st = run_cli("status", config)
        assert st.returncode == 0, st.stdout + st.stderr
        assert "mode proxy" in st.stdout and "DEAD" not in st.stdout
        assert st.stdout.count("running") == 3     # proxy, ovsdb, vswitchd
        again = run_cli("up", config)
        assert again.returncode == 1 and "already up" in again.stderr
    finally:
        down = run_cli("down", config, "--restore")
    assert down.returncode == 0, down.stdout + down.stderr
    assert down.stdout.count("byte-identical") == 2, down.stdout
    assert hlab["legacy"].running_config().encode() == \
        hlab["initial"].encode()
    st = run_cli("status", config)
    assert st.returncode == 1 and "down" in st.stdout
    # the legacy switch is a plain switch again: hosts reach each other
    # without any software side
    assert hosts[0].ping(hosts[2].ip(), count=2).received >= 1


@needs_lab
def test_refusing_device_changes_nothing(hlab, tmp_path):
    config = write_config(tmp_path, hlab, entries=[
        {"name": "ok", "access": hlab["ports"][:2], "vlans": "101-102"},
        {"name": "gone", "access": hlab["ports"][2:], "vlans": "103",
         "host": str(tmp_path / "no-such-switch.sock")}])
    up = run_cli("up", config)
    assert up.returncode == 1
    assert "gone (%s): unreachable or refusing" % (
        tmp_path / "no-such-switch.sock") in up.stderr, up.stderr
    # the first entry had been migrated: it is put back
    assert "ok restored from its backup (byte-identical)" in up.stderr
    assert_untouched(hlab, config)


@needs_lab
def test_missing_port_changes_nothing(hlab, tmp_path):
    config = write_config(tmp_path, hlab, entries=[
        {"name": "x", "access": [hlab["ports"][0], "nosuchport"],
         "vlans": "101-102"}])
    up = run_cli("up", config)
    assert up.returncode == 1
    assert "no such port(s) on the device: nosuchport" in up.stderr
    assert "nothing had been changed" in up.stderr
    assert_untouched(hlab, config)


@needs_lab
def test_missing_server_nic_is_found_before_any_change(hlab, tmp_path):
    config = write_config(tmp_path, hlab)
    config.write_text(config.read_text().replace(
        'nic = "%s"' % hlab["nic"], 'nic = "eth9"'))
    up = run_cli("up", config)
    assert up.returncode == 1
    assert "server NIC eth9 not found in namespace %s" % hlab["server"].ns \
        in up.stderr and "nothing was changed" in up.stderr, up.stderr
    assert_untouched(hlab, config)


if OvsLegacyDriver is not None:
    class HalfWayDriver(OvsLegacyDriver):
        """Fails its first commit after changing one interface, leaving the
        device half-configured (unlike OvsLegacyDriver, which cleans up
        after itself): the manager must restore the backup."""

        failures = 1

        def commit_config(self, message="", revert_in=None):
            if HalfWayDriver.failures:
                HalfWayDriver.failures -= 1
                apply, _ = self._merged()
                first = next(iter(apply["interfaces"].items()))
                legacy_ovs.apply_config(
                    self._need_conn(), {"hostname": None, "vlans": {},
                                        "interfaces": dict([first])},
                    replace=False)
                raise CommitError("injected: the device stopped after "
                                  "interface %s" % first[0])
            return super().commit_config(message, revert_in)


@needs_lab
def test_commit_failing_half_way_is_rolled_back(hlab, tmp_path):
    config = write_config(tmp_path, hlab, entries=[
        {"name": "a", "access": hlab["ports"][:2], "vlans": "101-102"},
        {"name": "b", "access": hlab["ports"][2:], "vlans": "103",
         "driver": "test_harmless_manager:HalfWayDriver"}])
    cfg = manager.check_config(manager.load_file(config), config)
    changed = []

    class Spy:
        def write(self, text):
            changed.append((text, hlab["legacy"].running_config()))

        def flush(self):
            pass
    with pytest.raises(manager.ManagerError) as err:
        manager.up(cfg, out=Spy())
    msg = str(err.value)
    assert "injected: the device stopped after interface" in msg
    assert "b restored from its backup (byte-identical)" in msg
    assert "a restored from its backup (byte-identical)" in msg
    # it really was half-way: a's ports had moved before b failed
    assert any("access vlan 101" in cfg_ for _, cfg_ in changed)
    assert_untouched(hlab, config)


@needs_lab
@pytest.mark.skipif(TRUNK_BIN is None, reason="`%s run --help` does not "
                    "list --trunk (build oxflow: cargo build --release -p "
                    "oxflow)" % RELEASE)
def test_up_status_down_restore_trunk_mode(hlab, tmp_path):
    """The same as in proxy mode with oxflow's own trunk ports: one
    process (`oxflow run --trunk eth0=101-102 --trunk eth0=103`) instead
    of the proxy and a second switch."""
    config = write_config(tmp_path, hlab, mode="trunk")
    hosts = hlab["hosts"]
    since = time.time()
    up = run_cli("up", config)
    assert up.returncode == 0, up.stdout + up.stderr
    assert "saved to" in up.stdout and "up: mode trunk, 3 logical ports" \
        in up.stdout, up.stdout
    try:
        running = hlab["legacy"].running_config()
        assert " switchport access vlan 103\n" in running
        assert " switchport trunk allowed vlan 101-103\n" in running
        # the names are oxflow's IFACE.VID, and only records of this
        # oxflow count (the proxy test's controller saw the same names)
        rec = lab.wait_census(hlab["ctl"].ports_file, "port_desc",
                              lambda r: r["time"] >= since and sorted(
                                  p["name"] for p in r["ports"])
                              == ["%s.%d" % (hlab["nic"], v)
                                  for v in (101, 102, 103)])
        assert sorted(p["port_no"] for p in rec["ports"]) == [1, 2, 3]
        got = lab.ping_all(hosts, count=3)
        assert all(n >= 2 for n in got.values()), got
        # through the learning switch's flows on the logical ports (oxflow
        # runs fail-mode secure: nothing passes without the controller)
        flows = subprocess.run(
            ["ip", "netns", "exec", hlab["server"].ns, TRUNK_BIN, "ctl",
             "dump-flows", "tcp:127.0.0.1:6634"], capture_output=True,
            text=True, timeout=30)
        assert flows.returncode == 0, flows.stderr
        learned = re.findall(r"in_port=([123])\b", flows.stdout)
        assert len(set(learned)) == 3, flows.stdout
        st = run_cli("status", config)
        assert st.returncode == 0, st.stdout + st.stderr
        assert "mode trunk" in st.stdout and "DEAD" not in st.stdout
        assert st.stdout.count("running") == 1, st.stdout    # oxflow
    finally:
        down = run_cli("down", config, "--restore")
    assert down.returncode == 0, down.stdout + down.stderr
    assert down.stdout.count("byte-identical") == 2, down.stdout
    assert hlab["legacy"].running_config().encode() == \
        hlab["initial"].encode()
    st = run_cli("status", config)
    assert st.returncode == 1 and "down" in st.stdout
    assert hosts[0].ping(hosts[2].ip(), count=2).received >= 1


@needs_lab
@pytest.mark.skipif(TRUNK_BIN is None, reason="`%s run --help` does not "
                    "list --trunk" % RELEASE)
def test_software_side_failing_is_rolled_back_trunk_mode(hlab, tmp_path):
    """oxflow cannot start (its management listener is the controller's
    port, taken): `up` stops, restores both entries byte-identically and
    writes no state."""
    config = write_config(tmp_path, hlab, mode="trunk")
    config.write_text(config.read_text().replace(
        "[server]\n", '[server]\nlisten = "127.0.0.1:%d"\n' % CTL_PORT))
    up = run_cli("up", config)
    assert up.returncode == 1, up.stdout + up.stderr
    assert "up failed: oxflow exited:" in up.stderr, up.stderr
    assert "Address already in use" in up.stderr, up.stderr
    for name in ("legacy1a", "legacy1b"):
        assert "%s restored from its backup (byte-identical)" % name \
            in up.stderr, up.stderr
    assert_untouched(hlab, config)
