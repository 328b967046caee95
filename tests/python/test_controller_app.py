"""The os-ken launcher (oxflow.controller) with our learning-switch and
recorder apps, driven by a minimal OpenFlow 1.3 "switch" written here on
top of oxflow.ofp13 (os-ken's own message classes and parsers)."""

import json
import os
import socket
import struct
import sys
import time

import pytest

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

from oxflow import ofp13
from oxflow.netns import OvsSwitch, Process, Topology, free_tcp_port

PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python")

MAC_A = "02:00:00:00:00:0a"
MAC_B = "02:00:00:00:00:0b"


def eth_frame(dst, src, payload=b"oxflow-learning-test"):
    mac = lambda s: bytes.fromhex(s.replace(":", ""))  # noqa: E731
    return mac(dst) + mac(src) + b"\x88\xb5" + payload.ljust(46, b"\0")


class FakeSwitch:
    """The switch side of one OpenFlow 1.3 connection: sends os-ken message
    objects (serialized with ofp13.serialize), receives parsed ones, and
    answers ECHO_REQUEST by itself."""

    def __init__(self, port, dpid):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.dpid = dpid
        self.xid = 100
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, msg, xid=None):
        if xid is None:
            self.xid += 1
            xid = self.xid
        self.sock.sendall(ofp13.serialize(msg, xid))

    def recv(self, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 8:
                (length,) = struct.unpack_from("!H", self.buf, 2)
                if len(self.buf) >= length:
                    raw, self.buf = self.buf[:length], self.buf[length:]
                    msg = ofp13.parse(raw)
                    if isinstance(msg, p.OFPEchoRequest):
                        self.send(p.OFPEchoReply(ofp13.DP, data=msg.data),
                                  msg.xid)
                        continue
                    return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no OpenFlow message from the controller")
            self.sock.settimeout(left)
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("controller closed the connection")
            self.buf += data

    def expect(self, cls, timeout=10):
        msg = self.recv(timeout)
        assert isinstance(msg, cls), "expected %s, got %s" % (
            cls.__name__, msg)
        return msg

    def handshake(self):
        """HELLO, FEATURES, PORT_DESC; returns the table-miss FLOW_MOD."""
        self.send(p.OFPHello(ofp13.DP))
        self.expect(p.OFPHello)
        req = self.expect(p.OFPFeaturesRequest)
        self.send(p.OFPSwitchFeatures(
            ofp13.DP, datapath_id=self.dpid, n_buffers=256, n_tables=254,
            auxiliary_id=0, capabilities=ofp.OFPC_FLOW_STATS), req.xid)
        got = {}
        for _ in range(2):
            msg = self.recv()
            got[type(msg)] = msg
        assert set(got) == {p.OFPPortDescStatsRequest, p.OFPFlowMod}, got
        ports = [p.OFPPort(port_no=n, hw_addr="02:00:00:00:01:%02x" % n,
                           name=("p%d" % n).encode(), config=0, state=0,
                           curr=0, advertised=0, supported=0, peer=0,
                           curr_speed=0, max_speed=0) for n in (1, 2, 3)]
        self.send(p.OFPPortDescStatsReply(ofp13.DP, flags=0, body=ports),
                  got[p.OFPPortDescStatsRequest].xid)
        return got[p.OFPFlowMod]

    def packet_in(self, in_port, frame, buffer_id=ofp.OFP_NO_BUFFER):
        self.send(p.OFPPacketIn(
            ofp13.DP, buffer_id=buffer_id, total_len=len(frame),
            reason=ofp.OFPR_NO_MATCH, table_id=0, cookie=0,
            match=p.OFPMatch(in_port=in_port), data=frame))


def output_ports(actions):
    return [a.port for a in actions if isinstance(a, p.OFPActionOutput)]


def flow_outputs(flow_mod):
    (inst,) = flow_mod.instructions
    assert inst.type == ofp.OFPIT_APPLY_ACTIONS
    return output_ports(inst.actions)


@pytest.fixture
def controller(tmp_path):
    port = free_tcp_port()
    rec = tmp_path / "recorder.jsonl"
    env = {"PYTHONPATH": os.path.abspath(PYTHON_DIR),
           "OXFLOW_RECORDER_FILE": str(rec)}
    proc = Process([sys.executable, "-m", "oxflow.controller",
                    "--ofp-tcp-listen-port", str(port),
                    "--app", "oxflow.apps.learning_switch",
                    "--app", "oxflow.apps.recorder"],
                   tmp_path / "controller.log", env=env, name="os-ken")
    with proc:
        proc.wait_for_log(r"instantiating app oxflow\.apps\.recorder")
        proc.wait_for_port(port)
        yield port, rec, proc
    # SIGTERM ends the launcher with status 0.
    assert proc.proc.returncode == 0, proc.log_text()[-3000:]


def test_learning_switch(controller):
    port, rec, proc = controller
    sw = FakeSwitch(port, dpid=0x1234)
    try:
        miss = sw.handshake()
        # Table-miss: priority 0, match all, whole packet to controller.
        assert miss.priority == 0 and miss.table_id == 0
        assert miss.command == ofp.OFPFC_ADD
        assert len(miss.match.to_jsondict()["OFPMatch"]["oxm_fields"]) == 0
        (act,) = miss.instructions[0].actions
        assert (act.port, act.max_len) == (ofp.OFPP_CONTROLLER,
                                          ofp.OFPCML_NO_BUFFER)

        # 1. A -> B, B unknown: flood by packet-out carrying the data.
        f_ab = eth_frame(MAC_B, MAC_A)
        sw.packet_in(1, f_ab)
        out = sw.expect(p.OFPPacketOut)
        assert out.buffer_id == ofp.OFP_NO_BUFFER and out.in_port == 1
        assert output_ports(out.actions) == [ofp.OFPP_FLOOD]
        assert out.data == f_ab

        # 2. B -> A, buffered: A was learned on port 1, so a flow-mod that
        # releases the buffer, and no packet-out.
        sw.packet_in(2, eth_frame(MAC_A, MAC_B), buffer_id=7)
        fm = sw.expect(p.OFPFlowMod)
        assert fm.buffer_id == 7 and fm.priority == 1
        assert fm.idle_timeout == 60 and fm.hard_timeout == 0
        assert dict(fm.match.items()) == {"in_port": 2, "eth_dst": MAC_A}
        assert flow_outputs(fm) == [1]

        # 3. A -> B again, unbuffered: B now known on port 2 -> flow-mod
        # (no buffer) then packet-out of the data to port 2. Being next in
        # the stream also proves step 2 sent no packet-out.
        sw.packet_in(1, f_ab)
        fm = sw.expect(p.OFPFlowMod)
        assert fm.buffer_id == ofp.OFP_NO_BUFFER
        assert dict(fm.match.items()) == {"in_port": 1, "eth_dst": MAC_B}
        assert flow_outputs(fm) == [2]
        out = sw.expect(p.OFPPacketOut)
        assert output_ports(out.actions) == [2] and out.data == f_ab

        # 4. Learning is per datapath: a second switch knows nothing.
        sw2 = FakeSwitch(port, dpid=0x99)
        try:
            sw2.handshake()
            # (buffered this time: the packet-out refers to the buffer and
            # carries no data)
            sw2.packet_in(3, eth_frame(MAC_A, MAC_B), buffer_id=9)
            out = sw2.expect(p.OFPPacketOut)
            assert output_ports(out.actions) == [ofp.OFPP_FLOOD]
            assert out.buffer_id == 9 and out.in_port == 3
            assert not out.data
        finally:
            sw2.close()

        # Recorder: async messages, whole packets, flow-removed and
        # port-status too.
        sw.send(p.OFPFlowRemoved(
            ofp13.DP, cookie=0, priority=1, reason=ofp.OFPRR_IDLE_TIMEOUT,
            table_id=0, duration_sec=1, duration_nsec=0, idle_timeout=60,
            hard_timeout=0, packet_count=3, byte_count=180,
            match=p.OFPMatch(in_port=1, eth_dst=MAC_B)))
        sw.send(p.OFPPortStatus(
            ofp13.DP, reason=ofp.OFPPR_MODIFY, desc=p.OFPPort(
                port_no=2, hw_addr="02:00:00:00:01:02", name=b"p2",
                config=0, state=ofp.OFPPS_LINK_DOWN, curr=0, advertised=0,
                supported=0, peer=0, curr_speed=0, max_speed=0)))
        events = wait_for_events(rec, lambda evs: "port_status" in
                                 [e["event"] for e in evs])
    finally:
        sw.close()

    mine = [e for e in events if e["dpid"] == 0x1234]
    kinds = [e["event"] for e in mine]
    assert kinds == ["connect", "packet_in", "packet_in", "packet_in",
                     "flow_removed", "port_status"], kinds
    assert mine[1]["data_hex"] == f_ab.hex()
    assert mine[2]["msg"]["OFPPacketIn"]["buffer_id"] == 7
    assert mine[4]["msg"]["OFPFlowRemoved"]["packet_count"] == 3
    desc = mine[5]["msg"]["OFPPortStatus"]["desc"]["OFPPort"]
    assert desc["port_no"] == 2 and desc["state"] == ofp.OFPPS_LINK_DOWN
    assert "error" not in kinds


def wait_for_events(path, done, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        evs = []
        if path.exists():
            with open(path) as f:
                evs = [json.loads(line) for line in f if line.strip()]
        if done(evs):
            return evs
        if time.monotonic() > deadline:
            raise TimeoutError("recorder events so far: %s" % evs)
        time.sleep(0.05)


def test_launcher_rejects_unknown_app(tmp_path):
    log = tmp_path / "bad.log"
    env = {"PYTHONPATH": os.path.abspath(PYTHON_DIR)}
    with Process([sys.executable, "-m", "oxflow.controller",
                  "--ofp-tcp-listen-port", str(free_tcp_port()),
                  "--app", "oxflow.apps.no_such_app"], log, env=env) as proc:
        proc.proc.wait(20)
    assert proc.proc.returncode != 0
    assert "no_such_app" in proc.log_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
@pytest.mark.skipif(not OvsSwitch.available(),
                    reason="Open vSwitch not installed "
                    "(scripts/setup.sh installs it)")
def test_learning_switch_with_ovs(controller, tmp_path):
    """End to end: our app drives a private user-space Open vSwitch; two
    namespace hosts ping each other, and the app installed exact flows."""
    port, _rec, _proc = controller
    with Topology() as topo:
        h1, h2 = topo.add_host("h1"), topo.add_host("h2")
        topo.add_switch_link(h1, "10.66.0.1/24", "02:00:00:00:66:01")
        topo.add_switch_link(h2, "10.66.0.2/24", "02:00:00:00:66:02")
        with OvsSwitch(tmp_path / "ovs", topo.switch_ports,
                       controller="tcp:127.0.0.1:%d" % port) as ovs:
            deadline = time.monotonic() + 15
            while "is_connected: true" not in ovs.vsctl("show").stdout:
                assert time.monotonic() < deadline, ovs.vsctl("show").stdout
                time.sleep(0.1)
            r = h1.ping("10.66.0.2", count=3, interval=0.2)
            assert r.received >= 2, r.output
            flows = ovs.ofctl("dump-flows", "br0").stdout
            assert "priority=0 actions=CONTROLLER:65535" in flows, flows
            # Both directions learned: exact eth_dst flows out the right port.
            assert "in_port=2,dl_dst=02:00:00:00:66:01 actions=output:1" \
                in flows.replace('"', ""), flows
            assert "in_port=1,dl_dst=02:00:00:00:66:02 actions=output:2" \
                in flows.replace('"', ""), flows
