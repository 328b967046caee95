"""BEBA's OpenFlow 1.3 additions outside its experimenter messages, end to
end on an oxflow switch whose ports are veth pairs to hosts in network
namespaces:

- `tcp_flags` (OpenFlow-basic OXM field 40, as beba-ctrl encodes it): an
  entry for SYN without ACK written with `oxflow ctl` takes a connection's
  first segment only, with real TCP frames; the same match sent by an
  os-ken controller as the raw OXM TLV 0x80005104 is installed and read
  back in flow statistics.
- A bad BEBA action or instruction in a flow-mod gets the BEBA switch's
  experimenter error (type 0xffff, experimenter 0xBEBABEBA, BEBA's code,
  the whole flow-mod as data), and the connection stays up.

Namespace and interface names start with "b5".
"""

import struct

import pytest
from os_ken.lib.pack_utils import msg_pack_into
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

import cp_util
from cp_util import DP, connect_passive
from dp_util import HostSocket, by_case, capture, tag_payload
from oxflow.netns import Topology
from oxflow.switch import Switch

pytestmark = cp_util.NEEDS_SWITCH

BEBA = 0xBEBABEBA
# BEBA's experimenter error codes (ofp_exp_beba_errors).
BAD_EXP_ACTION, BAD_EXP_LEN, BAD_EXP_INSTRUCTION = 6, 7, 10


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """(hosts, switch): h1..h3 on ports 1..3, no controller."""
    log = tmp_path_factory.mktemp("beba-tcp-flags") / "oxflow.log"
    with Topology(prefix="b5") as topo:
        hosts = []
        for i in range(1, 4):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i,
                                 mac="02:00:00:00:00:%02x" % i)
            hosts.append(h)
        with Switch(topo, log_path=log) as sw:
            yield hosts, sw
            assert sw.running(), "oxflow exited:\n" + sw.log()[-4000:]


def segment(tag, flags):
    """A TCP segment h1 -> h2 with `flags` (an int, 9 bits) and `tag`."""
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                 / IP(src="10.0.0.1", dst="10.0.0.2")
                 / TCP(sport=40000, dport=80, flags=flags)
                 / tag_payload(tag, 16))


def test_tcp_flags_syn_without_ack(net):
    hosts, sw = net
    sw.ctl("del-flows", check=True)
    sw.ctl("add-flow", "priority=20,tcp,tcp_flags=+syn-ack,actions=output:2",
           check=True)
    sw.ctl("add-flow", "priority=10,tcp,actions=output:3", check=True)
    flows = sw.ctl("dump-flows", check=True).stdout
    assert "tcp_flags=+syn-ack" in flows, flows
    cases = {"syn": 0x002, "syn_ns": 0x102, "synack": 0x012, "ack": 0x010,
             "fin_ack": 0x011}
    with HostSocket(hosts[0]) as s, capture(hosts[1:]) as got:
        s.send([segment(tag, f) for tag, f in cases.items()])
    assert sorted(by_case(got["h2"])) == ["syn", "syn_ns"], got
    assert sorted(by_case(got["h3"])) == ["ack", "fin_ack", "synack"], got


def handshaken(sw, name):
    conn = connect_passive(sw.port, name=name)
    conn.handshake()
    return conn


def test_tcp_flags_as_beba_ctrl_sends_it(net):
    _, sw = net
    sw.ctl("del-flows", check=True)
    conn = handshaken(sw, "tcp_flags")
    try:
        # eth_type, ip_proto, then TCP_FLAGS masked: 0x80005104 0002 0012.
        oxms = (struct.pack("!IH", 0x80000a02, 0x0800)
                + struct.pack("!IB", 0x80001401, 6)
                + struct.pack("!IHH", 0x80005104, 0x0002, 0x0012))
        match = struct.pack("!HH", ofp.OFPMT_OXM, 4 + len(oxms)) + oxms
        match += b"\0" * (-len(match) % 8)
        inst = struct.pack("!HH4xHHIH6x", ofp.OFPIT_APPLY_ACTIONS, 24,
                           ofp.OFPAT_OUTPUT, 16, 2, ofp.OFPCML_NO_BUFFER)
        body = struct.pack("!QQBBHHHIIIH2x", 0, 0, 0, ofp.OFPFC_ADD, 0, 0,
                           20, ofp.OFP_NO_BUFFER, ofp.OFPP_ANY,
                           ofp.OFPG_ANY, 0) + match + inst
        raw = cp_util.header(ofp.OFPT_FLOW_MOD, 8 + len(body), 0x77) + body
        conn.send(raw)
        errors = [m for m in conn.barrier() if isinstance(m, p.OFPErrorMsg)]
        assert not errors, errors
        flows = sw.ctl("dump-flows", check=True).stdout
        assert "priority=20,tcp,tcp_flags=+syn-ack" in flows, flows
        # The flow statistics carry the TLV as it was sent.
        xid = conn.send(p.OFPFlowStatsRequest(
            DP, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY, ofp.OFPG_ANY, 0, 0,
            p.OFPMatch()))
        reply = conn.until(lambda m: m.xid == xid)[-1]
        assert isinstance(reply, p.OFPFlowStatsReply), reply
        assert struct.pack("!IHH", 0x80005104, 2, 0x12) in reply.raw
    finally:
        conn.close()


def beba_action(act_type, body):
    """A BEBA experimenter action: act_type, 4 pad bytes, body, padded to
    the 8-byte action boundary."""
    data = struct.pack("!I4x", act_type) + body
    data += b"\0" * (-len(data) % 8)
    return p.OFPActionExperimenterUnknown(BEBA, data=data)


def flow_mod(actions=None, instructions=None):
    match = p.OFPMatch(in_port=5, eth_type=0x0800, ip_proto=1)
    if instructions is None:
        instructions = [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                                actions)]
    return p.OFPFlowMod(DP, priority=100, match=match,
                        instructions=instructions)


class BebaInstruction(p.OFPInstruction):
    """An OFPIT_EXPERIMENTER instruction under BEBA's id: instr_type, 4
    pad bytes, pkttmp_id, 4 pad bytes."""

    def __init__(self, instr_type):
        self.type = ofp.OFPIT_EXPERIMENTER
        self.len = 24
        self.instr_type = instr_type

    def serialize(self, buf, offset):
        msg_pack_into("!HHII4xI4x", buf, offset, self.type, self.len, BEBA,
                      self.instr_type, 0)


@pytest.mark.parametrize("case,msg,exp_type", [
    ("unknown_action", flow_mod([beba_action(10, b"\0")]), BAD_EXP_ACTION),
    ("short_set_state", flow_mod([beba_action(0, b"\0")]), BAD_EXP_LEN),
    ("short_set_global_state", flow_mod([beba_action(1, b"")]),
     BAD_EXP_LEN),
    ("unknown_instruction", flow_mod(instructions=[BebaInstruction(56)]),
     BAD_EXP_INSTRUCTION),
])
def test_bad_beba_flow_mod_gets_the_beba_error(net, case, msg, exp_type):
    _, sw = net
    conn = handshaken(sw, case)
    try:
        xid = conn.next_xid()
        raw = conn.raw_bytes(msg, xid)
        conn.send(raw)
        [err] = [m for m in conn.barrier() if isinstance(m, p.OFPErrorMsg)]
        assert err.xid == xid
        etype, code, experimenter = struct.unpack_from("!HHI", err.raw, 8)
        assert (etype, code, experimenter) == (
            ofp.OFPET_EXPERIMENTER, exp_type, BEBA), err
        # The whole flow-mod, as the BEBA switch sends it.
        assert err.raw[16:] == raw
        conn.echo_ok()
        assert not [f for f in conn.flows() if f.priority == 100]
    finally:
        conn.close()
