"""HARMLESS proxy variant end to end (docs/harmless.md): hosts h1..h3 on
access VLANs 101..103 of the emulated legacy switch (a private OVS in
standalone mode), its trunk to a second private OVS that has only the
trunk port (OpenFlow port 1) and connects to `oxflow harmless proxy`,
which connects to the os-ken learning switch (+ the port census app).

Checks: the controller sees 3 ports named TRUNK.VID (port desc) and gets
per-port stats records; every host pings every other one, so packet-in,
packet-out (flood) and the learned flows all work through the proxy; the
flows in the trunk-only OVS match the location tags; and a bad command
line gets a clear error."""

import os
import re
import socket
import struct
import subprocess
import sys
import time

import pytest

from os_ken.ofproto import ofproto_v1_3 as osk
from os_ken.ofproto import ofproto_v1_3_parser as osp

from oxflow import ofp13
from oxflow.harmless import lab, legacy_ovs
from oxflow.netns import OvsSwitch, Process, Topology, free_tcp_port
from oxflow.switch import REPO_ROOT

needs_lab = pytest.mark.skipif(
    os.geteuid() != 0 or not OvsSwitch.available(),
    reason="needs root (network namespaces) and Open vSwitch "
    "(scripts/setup.sh)")

N = 3
FIRST_VID = 101


def proxy_bin():
    """An oxflow binary that has `harmless proxy` ($OXFLOW_BIN, release,
    debug), or None."""
    cands = [os.environ.get("OXFLOW_BIN"),
             str(REPO_ROOT / "target" / "release" / "oxflow"),
             str(REPO_ROOT / "target" / "debug" / "oxflow")]
    for c in cands:
        if c and os.path.exists(c) and subprocess.run(
                [c, "harmless", "proxy", "--help"],
                capture_output=True).returncode == 0:
            return c
    return None


BIN = proxy_bin()
needs_bin = pytest.mark.skipif(BIN is None, reason="no oxflow binary with "
                               "`harmless proxy` (cargo build -p oxflow)")


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hm-proxy")
    with Topology(prefix="hm") as topo:
        lg = lab.add_legacy_ns(topo)
        hosts = lab.add_hosts(topo, N, lg.ns)
        server, legacy_end, nic = lab.add_server(topo, legacy_ns=lg.ns)
        vids = list(range(FIRST_VID, FIRST_VID + N))
        legacy = legacy_ovs.LegacySwitch(
            tmp / "legacy", [p for _, p in hosts] + [legacy_end],
            access={p: v for (_, p), v in zip(hosts, vids)},
            trunks={legacy_end: vids}, hostname="legacy1", netns=lg.ns)
        ctl_port, proxy_port = 6653, 6654   # the server namespace's own
        with legacy:
            ctl = lab.start_controller(tmp, ctl_port, netns=server.ns)
            try:
                with Process([BIN, "harmless", "proxy",
                              "--listen", "127.0.0.1:%d" % proxy_port,
                              "--controller", "127.0.0.1:%d" % ctl_port,
                              "--trunk-port", "1",
                              "--vlans", "%d-%d" % (vids[0], vids[-1])],
                             tmp / "proxy.log", netns=server.ns,
                             name="proxy") as proxy:
                    proxy.wait_for_log(r"listening on", timeout=20)
                    with OvsSwitch(tmp / "of", ports=[nic], netns=server.ns,
                                         controller="tcp:127.0.0.1:%d"
                                         % proxy_port, dpid=0x4d) as of:
                        yield {"hosts": [h for h, _ in hosts], "of": of,
                               "ctl": ctl, "proxy": proxy, "trunk": nic,
                               "server": server}
            finally:
                ctl.stop()


@needs_lab
@needs_bin
def test_controller_sees_one_port_per_access_vlan(hybrid):
    rec = lab.wait_census(hybrid["ctl"].ports_file, "port_desc",
                          lambda r: r["dpid"] == 0x4d)
    ports = sorted((p["port_no"], p["name"]) for p in rec["ports"])
    trunk = hybrid["trunk"]
    want = [(i + 1, "%s.%d" % (trunk, FIRST_VID + i)) for i in range(N)]
    # the name is the trunk's, shortened to fit 15 bytes with ".VID"
    assert [p for p, _ in ports] == [p for p, _ in want], ports
    for (_, got), v in zip(ports, range(FIRST_VID, FIRST_VID + N)):
        assert got.endswith(".%d" % v) and trunk.startswith(
            got[:-len(".%d" % v)]), got
    stats = lab.wait_census(hybrid["ctl"].ports_file, "port_stats",
                            lambda r: r["dpid"] == 0x4d)
    assert sorted(s["port_no"] for s in stats["stats"]) == [1, 2, 3]


@needs_lab
@needs_bin
def test_all_hosts_ping_each_other_through_the_proxy(hybrid):
    hosts = hybrid["hosts"]
    got = lab.ping_all(hosts, count=3)
    assert all(n >= 2 for n in got.values()), got
    # the learning switch's flows, as the trunk-only OVS holds them: on the
    # trunk (port 1), pinned to a location tag, output back to the trunk
    # with the destination's tag
    flows = hybrid["of"].ofctl("dump-flows", "br0").stdout
    learned = [ln for ln in flows.splitlines() if "priority=1," in ln]
    assert learned, flows
    vids = range(FIRST_VID, FIRST_VID + N)
    for ln in learned:
        m = re.search(r"in_port=1,dl_vlan=(\d+),.*actions="
                      r"set_field:(\d+)->vlan_vid,IN_PORT$", ln)
        assert m, ln
        src, dst = int(m.group(1)), int(m.group(2)) - 0x1000
        assert src in vids and dst in vids and src != dst, ln
    assert hybrid["proxy"].running()


@needs_lab
@needs_bin
def test_trunk_link_state_is_every_logical_ports(hybrid):
    """The trunk going down and up: one port-status per logical port."""
    path, server = hybrid["ctl"].ports_file, hybrid["server"]
    lab.wait_census(path, "port_desc", lambda r: r["dpid"] == 0x4d)
    before = len(lab.read_census(path))

    def statuses(down):
        recs = lab.read_census(path)[before:]
        return {r["port_no"] for r in recs if r["event"] == "port_status"
                and bool(r["state"] & 1) == down}   # OFPPS_LINK_DOWN
    try:
        server.run(["ip", "link", "set", "eth0", "down"])
        wait_for(lambda: statuses(True) == {1, 2, 3})
    finally:
        server.run(["ip", "link", "set", "eth0", "up"])
    wait_for(lambda: statuses(False) == {1, 2, 3})
    # and traffic flows again afterwards
    h = hybrid["hosts"]
    wait_for(lambda: h[0].ping(h[2].ip(), count=1, timeout=1).received)


def wait_for(cond, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)


@needs_bin
def test_bad_arguments_are_refused_clearly(tmp_path):
    for args, msg in [(["--vlans", "100-4095"], "4095"),
                      (["--vlans", "20-10"], "above the last"),
                      (["--vlans", "1-2", "--trunk-port", "0"],
                       "--trunk-port 0"),
                      (["--vlans", "1-2", "--controller", "nohost"],
                       "--controller")]:
        base = {"--listen": "127.0.0.1:0", "--controller": "127.0.0.1:1",
                "--trunk-port": "1"}
        argv = [BIN, "harmless", "proxy"]
        for k, v in base.items():
            if k not in args:
                argv += [k, v]
        proc = subprocess.run(argv + args, capture_output=True, text=True,
                              timeout=10)
        assert proc.returncode == 2, proc
        assert msg in proc.stderr, proc.stderr


@needs_lab
@needs_bin
def test_controller_vlan_push_lands_inside_the_access_tag(hybrid, tmp_path):
    """A controller flow `in_port=1 -> push_vlan, set vlan 7, output:2`
    through the proxy into the real OVS: h2 receives the frame tagged 7
    (the legacy switch took off the outer access tag). Runs last among the
    lab tests: it replaces the learning switch with a scripted
    controller."""
    from scapy.layers.l2 import Dot1Q, Ether

    from oxflow.traffic import send_and_capture
    hybrid["ctl"].stop()
    msgs = [osp.OFPFlowMod(ofp13.DP, table_id=osk.OFPTT_ALL,
                           command=osk.OFPFC_DELETE,
                           out_port=osk.OFPP_ANY, out_group=osk.OFPG_ANY,
                           match=osp.OFPMatch()),
            osp.OFPFlowMod(ofp13.DP, priority=10,
                           match=osp.OFPMatch(in_port=1),
                           instructions=[osp.OFPInstructionActions(
                               osk.OFPIT_APPLY_ACTIONS,
                               [osp.OFPActionPushVlan(0x8100),
                                osp.OFPActionSetField(vlan_vid=7 | 0x1000),
                                osp.OFPActionOutput(2)])]),
            osp.OFPBarrierRequest(ofp13.DP)]
    path = tmp_path / "msgs.hex"
    path.write_text("".join(ofp13.serialize(m, 900 + i).hex() + "\n"
                            for i, m in enumerate(msgs)))
    server = hybrid["server"]
    script = os.path.join(os.path.dirname(__file__), "hm_fake_controller.py")
    with Process([sys.executable, script, "6653", str(path)],
                 tmp_path / "fake.log", netns=server.ns,
                 name="fake-controller") as fake:
        fake.wait_for_log(r"installed|error", timeout=60)
        assert "error" not in fake.log_text(), fake.log_text()
        h1, h2 = hybrid["hosts"][0], hybrid["hosts"][1]
        sent = Ether(src=h1.mac(), dst="02:00:00:00:77:02") / (
            b"OXHM-QINQ" + bytes(40))
        got = send_and_capture(h1, sent, [h2], timeout=2.0,
                               keep=lambda f: b"OXHM-QINQ" in f)
        assert len(got["h2"]) == 1, got
        frame = Ether(got["h2"][0])
        assert frame.haslayer(Dot1Q) and frame[Dot1Q].vlan == 7, \
            frame.show(dump=True)
        assert not frame[Dot1Q].payload.haslayer(Dot1Q)
        flows = hybrid["of"].ofctl("dump-flows", "br0").stdout
        assert "priority=10,in_port=1,dl_vlan=101 actions=pop_vlan," \
            "push_vlan:0x8100,set_field:4103->vlan_vid,push_vlan:0x8100," \
            "set_field:4198->vlan_vid,IN_PORT,pop_vlan" in flows, flows


# --- the relay itself, with a fake switch and a fake controller (no root) ---

class Peer:
    """One end of an OpenFlow connection: os-ken message objects out
    (oxflow.ofp13), parsed messages and raw bytes in."""

    def __init__(self, sock):
        self.sock = sock
        self.sock.settimeout(10)
        self.buf = b""

    def send(self, msg, xid):
        self.sock.sendall(ofp13.serialize(msg, xid))

    def recv_raw(self, timeout=10):
        self.sock.settimeout(timeout)
        while True:
            if len(self.buf) >= 8:
                (length,) = struct.unpack_from("!H", self.buf, 2)
                if len(self.buf) >= length:
                    raw, self.buf = self.buf[:length], self.buf[length:]
                    return raw
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed")
            self.buf += data

    def recv(self, timeout=10):
        raw = self.recv_raw(timeout)
        return ofp13.parse(raw), struct.unpack_from("!I", raw, 4)[0]


@pytest.fixture
def relay(tmp_path):
    """(switch Peer, controller Peer) joined by `oxflow harmless proxy
    --trunk-port 5 --vlans 101-103`, and the proxy's Process."""
    if BIN is None:
        pytest.skip("no oxflow binary with `harmless proxy`")
    ctl_listen = socket.socket()
    ctl_listen.bind(("127.0.0.1", 0))
    ctl_listen.listen(1)
    ctl_listen.settimeout(20)
    listen = free_tcp_port()
    with Process([BIN, "harmless", "proxy", "--listen",
                  "127.0.0.1:%d" % listen, "--controller",
                  "127.0.0.1:%d" % ctl_listen.getsockname()[1],
                  "--trunk-port", "5", "--vlans", "101-103"],
                 tmp_path / "proxy.log", name="proxy") as proxy:
        proxy.wait_for_log(r"listening on", timeout=20)
        sw = Peer(socket.create_connection(("127.0.0.1", listen), timeout=10))
        ctl = Peer(ctl_listen.accept()[0])
        try:
            yield sw, ctl, proxy
        finally:
            sw.sock.close()
            ctl.sock.close()
            ctl_listen.close()


def test_relay_translates_refuses_and_passes_with_xids(relay):
    sw, ctl, proxy = relay
    # untouched types pass as the same bytes, both ways
    hello = ofp13.serialize(osp.OFPHello(ofp13.DP), 7)
    sw.sock.sendall(hello)
    assert ctl.recv_raw() == hello
    echo = ofp13.serialize(osp.OFPEchoRequest(ofp13.DP, data=b"hm"), 8)
    ctl.sock.sendall(echo)
    assert sw.recv_raw() == echo
    # a flow-mod on logical port 2 reaches the switch on the trunk + tag
    ctl.send(osp.OFPFlowMod(
        ofp13.DP, priority=5, match=osp.OFPMatch(in_port=2),
        instructions=[osp.OFPInstructionActions(
            osk.OFPIT_APPLY_ACTIONS, [osp.OFPActionOutput(3)])]), 21)
    fm, xid = sw.recv()
    assert xid == 21 and isinstance(fm, osp.OFPFlowMod)
    assert dict(fm.match.items()) == {"in_port": 5, "vlan_vid": 102 | 0x1000}
    (inst,) = fm.instructions
    assert [type(a).__name__ for a in inst.actions] == \
        ["OFPActionSetField", "OFPActionOutput"]
    assert inst.actions[1].port == osk.OFPP_IN_PORT
    # a flow-mod on a port the controller does not have: an error with the
    # xid, nothing reaches the switch (the barrier after it comes first)
    ctl.send(osp.OFPFlowMod(
        ofp13.DP, match=osp.OFPMatch(in_port=9),
        instructions=[]), 22)
    err, xid = ctl.recv()
    assert xid == 22 and isinstance(err, osp.OFPErrorMsg)
    assert err.type == osk.OFPET_BAD_MATCH
    ctl.send(osp.OFPBarrierRequest(ofp13.DP), 23)
    got, xid = sw.recv()
    assert isinstance(got, osp.OFPBarrierRequest) and xid == 23
    # a packet-in from VLAN 103 on the trunk: port 3, tag stripped
    frame = bytes.fromhex("020000000002" "020000000001" "8100" "0067"
                          "88b5") + b"x" * 46
    sw.send(osp.OFPPacketIn(
        ofp13.DP, buffer_id=osk.OFP_NO_BUFFER, total_len=len(frame),
        reason=osk.OFPR_NO_MATCH, table_id=0, cookie=0,
        match=osp.OFPMatch(in_port=5), data=frame), 0)
    pi, _ = ctl.recv()
    assert isinstance(pi, osp.OFPPacketIn)
    assert pi.match["in_port"] == 3
    assert pi.data == frame[:12] + frame[16:]
    # the switch going away closes the controller's connection
    sw.sock.close()
    with pytest.raises((ConnectionError, OSError)):
        ctl.recv_raw(timeout=10)
    assert proxy.running()
