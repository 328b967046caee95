"""The emulated legacy 802.1Q switch (python/oxflow/harmless/legacy_ovs.py,
a private user-space Open vSwitch in standalone/learning mode) and its
NAPALM driver (napalm_ovslegacy.py).

Four hosts in namespaces: a and b on access VLAN 10, c on access VLAN 20,
t on the trunk (VLANs 10 and 20), all in one IP subnet so that only the
VLANs keep c apart. Checks: access-port isolation, the tags on the trunk,
and the driver's configuration sessions (get_config, replace, merge,
compare, discard, commit, rollback, a commit failing part-way) with
byte-identical restores."""

import time

import pytest
from scapy.layers.l2 import Dot1Q, Ether

from oxflow.harmless import legacy_ovs
from oxflow.netns import OvsSwitch, Topology
from oxflow.traffic import send_and_capture

pytestmark = pytest.mark.skipif(not OvsSwitch.available(),
                                reason="Open vSwitch is not installed")

MARK = b"OXHL:"

try:
    from napalm.base.exceptions import CommitError, ReplaceConfigException

    from oxflow.harmless.napalm_ovslegacy import OvsLegacyDriver
except ImportError:  # pragma: no cover - napalm missing
    OvsLegacyDriver = None

needs_napalm = pytest.mark.skipif(OvsLegacyDriver is None,
                                  reason="napalm is not installed "
                                  "(scripts/setup-python.sh)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with Topology(prefix="hl") as topo:
        hosts = {n: topo.add_host(n) for n in "abct"}
        ips = {"a": "10.9.0.1/24", "b": "10.9.0.2/24", "c": "10.9.0.3/24",
               "t": None}
        ports = {n: topo.add_switch_link(hosts[n], ip=ips[n]) for n in "abct"}
        sw = legacy_ovs.LegacySwitch(
            tmp_path_factory.mktemp("legacy"), [ports[n] for n in "abct"],
            access={ports["a"]: 10, ports["b"]: 10, ports["c"]: 20},
            trunks={ports["t"]: [10, 20]}, hostname="legacy1")
        with sw:
            yield {"topo": topo, "hosts": hosts, "ports": ports, "sw": sw,
                   "initial": sw.running_config()}


@pytest.fixture
def dev(lab):
    """An open driver; the switch's initial config is put back after."""
    d = OvsLegacyDriver(lab["sw"].db_sock, "", "")
    d.open()
    yield d
    d.load_replace_candidate(config=lab["initial"])
    d.commit_config()
    d.close()
    assert lab["sw"].running_config() == lab["initial"]


def marked(frame):
    return MARK in frame


def frame_from(host, dst="ff:ff:ff:ff:ff:ff", vlan=None, tag=b""):
    f = Ether(src=host.mac(), dst=dst)
    if vlan is not None:
        f = f / Dot1Q(vlan=vlan)
    return f / (MARK + tag + bytes(40))


def test_config_text_round_trips():
    text = ("! comment\nhostname sw9\n!\nvlan 10\n name users\n!\n"
            "interface p10\n switchport mode trunk\n"
            " switchport trunk allowed vlan 12,10,11,30\n!\n"
            "interface p9\n description up link\n"
            " switchport access vlan 20\n!\nend\n")
    cfg = legacy_ovs.parse_config(text)
    out = legacy_ovs.format_config(cfg)
    assert out == (legacy_ovs.HEADER + "\nhostname sw9\n!\nvlan 10\n"
                   " name users\n!\ninterface p9\n description up link\n"
                   " switchport mode access\n switchport access vlan 20\n!\n"
                   "interface p10\n switchport mode trunk\n"
                   " switchport trunk allowed vlan 10-12,30\n!\nend\n")
    assert legacy_ovs.format_config(legacy_ovs.parse_config(out)) == out
    for bad, what in [("interface p1\n switchport access vlan 4095\n",
                       "line 2: VLAN id '4095'"),
                      ("interface p1\n speed 10\n", "line 2: unknown"),
                      (" name x\n", "line 1:"),
                      ("router bgp 1\n", "line 1: unknown command")]:
        with pytest.raises(legacy_ovs.ConfigError, match=what):
            legacy_ovs.parse_config(bad)


def test_running_config_is_rendered_from_ovsdb(lab):
    p = lab["ports"]
    assert lab["initial"] == (
        legacy_ovs.HEADER + "\nhostname legacy1\n!\n"
        "interface %s\n switchport mode access\n switchport access vlan 10\n!"
        "\ninterface %s\n switchport mode access\n switchport access vlan 10"
        "\n!\ninterface %s\n switchport mode access\n"
        " switchport access vlan 20\n!\ninterface %s\n switchport mode trunk"
        "\n switchport trunk allowed vlan 10,20\n!\nend\n"
        % (p["a"], p["b"], p["c"], p["t"]))
    sw = lab["sw"]
    assert sw.ovs.vsctl("get", "port", p["c"], "tag").stdout.strip() == "20"


def test_access_vlans_isolate_and_the_trunk_tags(lab):
    h = lab["hosts"]
    assert h["a"].ping(h["b"].ip(), count=2).received >= 1
    assert h["a"].ping(h["c"].ip(), count=2, timeout=1).received == 0
    # a broadcast from a reaches b untagged and the trunk tagged 10, not c
    sent = frame_from(h["a"], tag=b"a")
    got = send_and_capture(h["a"], sent, [h["b"], h["c"], h["t"]],
                           keep=marked, timeout=2.0)
    assert got["c"] == []
    assert got["b"] == [bytes(sent)]
    assert len(got["t"]) == 1
    tagged = Ether(got["t"][0])
    assert tagged.haslayer(Dot1Q) and tagged[Dot1Q].vlan == 10
    assert MARK + b"a" in bytes(tagged[Dot1Q].payload)
    # a frame from c leaves the trunk tagged 20
    got = send_and_capture(h["c"], frame_from(h["c"], tag=b"c"),
                           [h["a"], h["t"]], keep=marked, timeout=2.0)
    assert got["a"] == []
    assert [Ether(f)[Dot1Q].vlan for f in got["t"]] == [20]
    # a frame tagged 20 on the trunk reaches c only, untagged
    got = send_and_capture(h["t"], frame_from(h["t"], vlan=20, tag=b"t"),
                           [h["a"], h["b"], h["c"]], keep=marked, timeout=2.0)
    assert got["a"] == [] and got["b"] == []
    assert len(got["c"]) == 1 and not Ether(got["c"][0]).haslayer(Dot1Q)


@needs_napalm
def test_replace_compare_discard_commit_rollback(lab, dev):
    h, p = lab["hosts"], lab["ports"]
    backup = dev.get_config()["running"]
    assert backup == lab["initial"]
    assert dev.get_config(retrieve="running")["candidate"] == ""
    moved = backup.replace("interface %s\n switchport mode access\n"
                           " switchport access vlan 20" % p["c"],
                           "interface %s\n switchport mode access\n"
                           " switchport access vlan 10" % p["c"])
    assert moved != backup
    dev.load_replace_candidate(config=moved)
    diff = dev.compare_config()
    assert "- switchport access vlan 20\n+ switchport access vlan 10\n" \
        in diff
    assert dev.get_config()["candidate"] == moved
    dev.discard_config()
    assert dev.compare_config() == ""
    assert dev.get_config()["running"] == backup
    dev.load_replace_candidate(config=moved)
    dev.commit_config()
    assert dev.get_config()["running"] == moved
    assert dev.compare_config() == ""
    # the change is in the data plane: c now shares a's VLAN
    assert h["a"].ping(h["c"].ip(), count=2).received >= 1
    dev.rollback()
    assert dev.get_config()["running"] == backup
    assert h["a"].ping(h["c"].ip(), count=2, timeout=1).received == 0


@needs_napalm
def test_restore_is_byte_identical(lab, dev, tmp_path):
    p = lab["ports"]
    backup = dev.get_config()["running"]
    (tmp_path / "backup.cfg").write_text(backup)
    other = ("hostname harmless\nvlan 30\n name lab\n"
             "interface %s\n description to the HARMLESS server\n"
             " switchport mode trunk\n" % p["t"]
             + "".join("interface %s\n switchport access vlan %d\n"
                       % (p[n], 100 + i) for i, n in enumerate("abc")))
    dev.load_replace_candidate(config=other)
    dev.commit_config()
    running = dev.get_config()["running"]
    assert "hostname harmless\n" in running and "vlan 30\n name lab\n" in \
        running and " description to the HARMLESS server\n" in running
    assert lab["sw"].ovs.vsctl("get", "port", p["b"], "tag").stdout.strip() \
        == "101"
    dev.load_replace_candidate(filename=str(tmp_path / "backup.cfg"))
    dev.commit_config()
    assert dev.get_config()["running"].encode() == backup.encode()


@needs_napalm
def test_merge_changes_only_what_it_names(lab, dev):
    p = lab["ports"]
    before = dev.get_config()["running"]
    dev.load_merge_candidate(config="interface %s\n switchport access vlan "
                             "30\n" % p["c"])
    diff = dev.compare_config()
    assert [ln for ln in diff.splitlines() if ln[:1] in "+-"
            and ln[:3] not in ("---", "+++")] == \
        ["- switchport access vlan 20", "+ switchport access vlan 30"]
    dev.commit_config()
    after = dev.get_config()["running"]
    assert after == before.replace("switchport access vlan 20",
                                   "switchport access vlan 30")
    # a merge keeps what it does not name: the description stays
    dev.load_merge_candidate(config="hostname merged\ninterface %s\n"
                             " description camera\n" % p["c"])
    dev.commit_config()
    dev.load_merge_candidate(config="interface %s\n switchport mode trunk\n"
                             % p["c"])
    dev.commit_config()
    assert dev.get_config()["running"] == after.replace(
        "hostname legacy1", "hostname merged").replace(
        "interface %s\n switchport mode access\n switchport access vlan 30"
        % p["c"], "interface %s\n description camera\n"
        " switchport mode trunk" % p["c"])


@needs_napalm
def test_commit_failing_part_way_is_rolled_back(lab, dev):
    p = lab["ports"]
    before = dev.get_config()["running"]
    with pytest.raises(ReplaceConfigException, match="line 2"):
        dev.load_replace_candidate(config="interface %s\n switchport access "
                                   "vlan 9999\n" % p["a"])
    # parses, but the switch refuses the second interface after changing
    # the ports the candidate does not name and the first one
    bad = ("interface %s\n switchport access vlan 77\n"
           "interface nosuchport\n switchport access vlan 78\n" % p["a"])
    dev.load_replace_candidate(config=bad)
    with pytest.raises(CommitError) as err:
        dev.commit_config()
    msg = str(err.value)
    assert "part-way" in msg and "nosuchport" in msg and p["a"] in msg
    assert "rolled back to the configuration before the commit " \
        "(byte-identical)" in msg
    assert dev.get_config()["running"] == before


@needs_napalm
def test_getters(lab, dev):
    p = lab["ports"]
    facts = dev.get_facts()
    assert facts["hostname"] == "legacy1" and facts["vendor"] == "oxflow"
    assert facts["interface_list"] == [p[n] for n in "abct"]
    # Open vSwitch refreshes link state on its own schedule: poll
    deadline = time.monotonic() + 30
    while True:
        intfs = dev.get_interfaces()
        up = all(i["is_up"] and i["is_enabled"] for i in intfs.values())
        if up or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert set(intfs) == set(p.values())
    assert up, intfs
    assert intfs[p["a"]]["mac_address"].count(":") == 5
    vlans = dev.get_vlans()
    assert vlans == {
        10: {"name": "VLAN0010", "interfaces": [p["a"], p["b"], p["t"]]},
        20: {"name": "VLAN0020", "interfaces": [p["c"], p["t"]]}}
    assert dev.is_alive() == {"is_alive": True}
