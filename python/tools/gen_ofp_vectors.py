#!/usr/bin/env python3
"""Generate OpenFlow 1.3 wire vectors from os-ken (forward direction).

Every vector is a whole OpenFlow message built from os-ken's
`ofproto_v1_3_parser` classes. Output: tests/vectors/ofp/<category>.json, a
JSON list of

    {"name", "category", "msg_type", "xid", "source", "osken_parse",
     "hex", "fields"}

- `fields` is os-ken's to_jsondict() of the object the bytes were made from;
  tests/python/test_ofp_crosscheck.py checks that os-ken parses `hex` back to
  the same dict, and crates/ofp/tests/vectors.rs checks that oxflow decodes
  `hex` and re-encodes it byte-identically.
- `source` is "os-ken" when os-ken's own serializer wrote the bytes, "hand"
  when this script (via python/oxflow/ofp13.py) packed them from the spec's
  struct layouts because os-ken cannot. Hand-built, and why:
    * every switch -> controller message (HELLO with elements, FEATURES_REPLY,
      GET_CONFIG_REPLY, PACKET_IN, FLOW_REMOVED, PORT_STATUS, every
      MULTIPART_REPLY, QUEUE_GET_CONFIG_REPLY, ROLE_REPLY, GET_ASYNC_REPLY):
      os-ken is a controller and has no serializer for them. Their nested
      structures (match, instructions, buckets, bands) still use os-ken's
      component serializers, and os-ken's parser checks the result.
    * TABLE_FEATURES with properties: os-ken's OFPOxmId.serialize writes
      oxm length 0 (see its "XXX" comment); we write the real length.
    * PACKET_OUT with data and no actions: os-ken's serializer overwrites the
      first 16 data bytes.
    * the experimenter instruction: os-ken has no class for it, and its
      parser cannot read it back (`osken_parse: false`).
- `osken_parse` is false where os-ken's parser cannot read the vector.
- category "corpus" (source "os-ken-testdata") holds os-ken's own OF 1.3
  test captures as an independent corpus; `oxflow_rejects` marks the few
  that oxflow refuses on purpose (CORPUS_REJECTS).

Deterministic: xid = crc32(name), lists sorted by name.

Usage: gen_ofp_vectors.py [OUT_DIR]   (default: <repo>/tests/vectors/ofp)
"""

import json
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

from os_ken.ofproto import ofproto_v1_3 as ofp  # noqa: E402
from os_ken.ofproto import ofproto_v1_3_parser as p  # noqa: E402

from oxflow import ofp13  # noqa: E402
from oxflow.ofp13 import DP  # noqa: E402

CATEGORIES = ("message", "multipart", "oxm", "action", "instruction",
              "corpus", "bundle")

# Corpus vectors (os-ken's own OF1.3 test captures) that oxflow's decoder
# refuses on purpose, with the reason. crates/ofp/tests/vectors.rs checks
# that these give a DecodeError (not a panic) instead of a round trip.
CORPUS_REJECTS = {
    "4-2-ofp_flow_mod":
        "push_pbb with ethertype 0x1234: oxflow answers BAD_ACTION/"
        "BAD_ARGUMENT (spec: PBB push ethertype must be 0x88e7)",
    "4-12-ofp_flow_stats_reply":
        "same push_pbb 0x1234 action inside a flow stats entry",
    "4-36-ofp_queue_get_config_reply":
        "experimenter queue properties with lengths 17 and 18, not padded "
        "to 8 bytes",
}

# A small, valid Ethernet/IPv4/UDP frame used as packet-in / packet-out data.
FRAME = bytes.fromhex(
    "ffffffffffff" "001122334455" "0800"
    "4500001c0001000040117cce0a0000010a0000ff"
    "0035003500080000")

# A frame of the local-experimental ethertype 0x88b5 (no dissector decodes
# its payload), used where only a prefix of the frame is sent.
FRAME_LOCAL = bytes.fromhex("ffffffffffff" "001122334455" "88b5") + bytes(
    range(50))

# Experimenter ids used in vectors (arbitrary, none registered in os-ken).
EXP_ID = 0x00A0B0C0
ONF_EXP_ID = 0x4F4E4600


class Vectors:
    def __init__(self):
        self.items = []
        self.names = set()

    def add(self, category, name, msg, osken_parse=True):
        assert category in CATEGORIES
        assert name not in self.names, name
        self.names.add(name)
        xid = zlib.crc32(name.encode()) & 0xFFFFFFFF
        source = "os-ken" if ofp13.serialized_by_osken(msg) else "hand"
        raw = ofp13.serialize(msg, xid)
        fields = msg.to_jsondict()
        self._push(category, name, raw, xid, source, osken_parse, fields)
        if osken_parse:
            back = ofp13.parse(raw).to_jsondict()
            if back != fields:
                raise SystemExit("%s: os-ken parses back differently:\n%s\n%s"
                                 % (name, json.dumps(fields, sort_keys=True),
                                    json.dumps(back, sort_keys=True)))

    def add_raw(self, category, name, raw, fields, osken_parse):
        """A vector whose bytes were put together by hand (`raw` has xid 0 in
        its header; it is patched here)."""
        assert name not in self.names, name
        self.names.add(name)
        xid = zlib.crc32(name.encode()) & 0xFFFFFFFF
        raw = bytearray(raw)
        struct.pack_into("!HI", raw, 2, len(raw), xid)
        self._push(category, name, bytes(raw), xid, "hand", osken_parse,
                   fields)

    def _push(self, category, name, raw, xid, source, osken_parse, fields,
              extra=None):
        self.items.append(dict(extra or {}, **{
            "name": name,
            "category": category,
            "msg_type": raw[1],
            "xid": xid,
            "source": source,
            "osken_parse": osken_parse,
            "hex": raw.hex(),
            "fields": fields,
        }))


def out(port, max_len=ofp.OFPCML_NO_BUFFER):
    return p.OFPActionOutput(port, max_len)


def apply(*actions):
    return p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, list(actions))


def port(no, name, mac):
    return p.OFPPort(
        port_no=no, hw_addr=mac, name=name.encode(),
        config=ofp.OFPPC_NO_PACKET_IN, state=ofp.OFPPS_LIVE,
        curr=ofp.OFPPF_1GB_FD | ofp.OFPPF_COPPER,
        advertised=ofp.OFPPF_1GB_FD | ofp.OFPPF_AUTONEG,
        supported=ofp.OFPPF_100MB_FD | ofp.OFPPF_1GB_FD,
        peer=0, curr_speed=1000000, max_speed=1000000)


# ---------------------------------------------------------------------------
# message
# ---------------------------------------------------------------------------


def gen_messages(v):
    c = "message"
    v.add(c, "hello", p.OFPHello(DP))
    v.add(c, "hello_version_bitmap",
          p.OFPHello(DP, [p.OFPHelloElemVersionBitmap([1, 4])]))
    v.add(c, "hello_version_bitmap_1_to_4",
          p.OFPHello(DP, [p.OFPHelloElemVersionBitmap([1, 2, 3, 4])]))

    v.add(c, "error_hello_failed",
          p.OFPErrorMsg(DP, ofp.OFPET_HELLO_FAILED, ofp.OFPHFC_INCOMPATIBLE,
                        b"we speak 1.3 only"))
    bad = ofp13.serialize(p.OFPFlowMod(DP, match=p.OFPMatch(in_port=1)), 99)
    v.add(c, "error_bad_match_with_request",
          p.OFPErrorMsg(DP, ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_PREREQ, bad))
    long_fm = ofp13.serialize(p.OFPFlowMod(
        DP, match=p.OFPMatch(in_port=1, eth_type=0x0800, ipv4_src="1.2.3.4",
                             ipv4_dst="5.6.7.8"),
        instructions=[apply(out(1), out(2))]), 100)
    # The spec asks for at least 64 bytes of the failed request.
    v.add(c, "error_flow_mod_failed_truncated_request",
          p.OFPErrorMsg(DP, ofp.OFPET_FLOW_MOD_FAILED,
                        ofp.OFPFMFC_TABLE_FULL, long_fm[:64]))
    v.add(c, "error_experimenter",
          p.OFPErrorMsg(DP, ofp.OFPET_EXPERIMENTER, data=b"exp-error",
                        exp_type=3, experimenter=EXP_ID))

    v.add(c, "echo_request", p.OFPEchoRequest(DP, b""))
    v.add(c, "echo_request_data", p.OFPEchoRequest(DP, b"ping 1234"))
    v.add(c, "echo_reply_data", p.OFPEchoReply(DP, b"ping 1234"))
    v.add(c, "experimenter",
          p.OFPExperimenter(DP, EXP_ID, 7, b"oxflow-experimenter"))
    v.add(c, "experimenter_empty", p.OFPExperimenter(DP, EXP_ID, 1, b""))

    v.add(c, "features_request", p.OFPFeaturesRequest(DP))
    v.add(c, "features_reply",
          p.OFPSwitchFeatures(DP, datapath_id=0x0000AABBCCDDEEFF,
                              n_buffers=256, n_tables=254, auxiliary_id=0,
                              capabilities=ofp.OFPC_FLOW_STATS
                              | ofp.OFPC_TABLE_STATS | ofp.OFPC_PORT_STATS
                              | ofp.OFPC_GROUP_STATS | ofp.OFPC_QUEUE_STATS
                              | ofp.OFPC_PORT_BLOCKED))
    v.add(c, "get_config_request", p.OFPGetConfigRequest(DP))
    v.add(c, "get_config_reply",
          p.OFPGetConfigReply(DP, ofp.OFPC_FRAG_NORMAL, 128))
    v.add(c, "set_config",
          p.OFPSetConfig(DP, ofp.OFPC_FRAG_REASM, ofp.OFPCML_NO_BUFFER))

    v.add(c, "packet_in_no_buffer",
          p.OFPPacketIn(DP, buffer_id=ofp.OFP_NO_BUFFER, total_len=len(FRAME),
                        reason=ofp.OFPR_NO_MATCH, table_id=0,
                        cookie=0xFFFFFFFFFFFFFFFF,
                        match=p.OFPMatch(in_port=3), data=FRAME))
    v.add(c, "packet_in_action_buffered",
          p.OFPPacketIn(DP, buffer_id=0x1F, total_len=1500,
                        reason=ofp.OFPR_ACTION, table_id=3,
                        cookie=0x1234,
                        match=p.OFPMatch(in_port=3, in_phy_port=1,
                                         metadata=0xFEED,
                                         tunnel_id=0x55),
                        data=FRAME_LOCAL[:32]))
    v.add(c, "packet_in_invalid_ttl",
          p.OFPPacketIn(DP, buffer_id=ofp.OFP_NO_BUFFER, total_len=len(FRAME),
                        reason=ofp.OFPR_INVALID_TTL, table_id=1, cookie=0,
                        match=p.OFPMatch(in_port=ofp.OFPP_LOCAL), data=FRAME))

    v.add(c, "packet_out_buffer",
          p.OFPPacketOut(DP, buffer_id=0x1F, in_port=ofp.OFPP_CONTROLLER,
                         actions=[out(ofp.OFPP_FLOOD)]))
    v.add(c, "packet_out_data",
          p.OFPPacketOut(DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=2,
                         actions=[p.OFPActionSetField(vlan_vid=0x1005),
                                  out(ofp.OFPP_TABLE)],
                         data=FRAME))
    # Hand-built: os-ken's serializer corrupts a packet-out with no actions
    # and data (see ofp13.serialized_by_osken).
    v.add(c, "packet_out_no_actions_data",
          p.OFPPacketOut(DP, buffer_id=ofp.OFP_NO_BUFFER,
                         in_port=ofp.OFPP_CONTROLLER, actions=[],
                         data=FRAME))

    v.add(c, "flow_removed",
          p.OFPFlowRemoved(DP, cookie=0xABCDEF, priority=1000,
                           reason=ofp.OFPRR_IDLE_TIMEOUT, table_id=2,
                           duration_sec=61, duration_nsec=500000000,
                           idle_timeout=60, hard_timeout=0, packet_count=12,
                           byte_count=1480,
                           match=p.OFPMatch(in_port=1, eth_type=0x0800,
                                            ipv4_dst="10.1.2.3")))
    v.add(c, "flow_removed_delete_empty_match",
          p.OFPFlowRemoved(DP, cookie=0, priority=0, reason=ofp.OFPRR_DELETE,
                           table_id=0, duration_sec=0, duration_nsec=0,
                           idle_timeout=0, hard_timeout=0, packet_count=0,
                           byte_count=0, match=p.OFPMatch()))

    for reason, rname in ((ofp.OFPPR_ADD, "add"), (ofp.OFPPR_DELETE, "delete"),
                          (ofp.OFPPR_MODIFY, "modify")):
        v.add(c, "port_status_" + rname,
              p.OFPPortStatus(DP, reason, port(5, "eth5",
                                               "02:00:00:00:00:05")))

    m = p.OFPMatch(in_port=7, eth_type=0x0800,
                   ipv4_dst=("10.0.0.0", "255.0.0.0"))
    v.add(c, "flow_mod_add",
          p.OFPFlowMod(DP, cookie=0x1234, table_id=0,
                       command=ofp.OFPFC_ADD, idle_timeout=10,
                       hard_timeout=300, priority=100,
                       buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
                       out_group=ofp.OFPG_ANY,
                       flags=ofp.OFPFF_SEND_FLOW_REM | ofp.OFPFF_CHECK_OVERLAP,
                       match=m, instructions=[apply(out(2))]))
    v.add(c, "flow_mod_add_table_miss",
          p.OFPFlowMod(DP, table_id=0, command=ofp.OFPFC_ADD, priority=0,
                       buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
                       out_group=ofp.OFPG_ANY, match=p.OFPMatch(),
                       instructions=[apply(out(ofp.OFPP_CONTROLLER))]))
    v.add(c, "flow_mod_modify",
          p.OFPFlowMod(DP, cookie=0x1234, table_id=1,
                       command=ofp.OFPFC_MODIFY, priority=100,
                       buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
                       out_group=ofp.OFPG_ANY,
                       flags=ofp.OFPFF_RESET_COUNTS, match=m,
                       instructions=[apply(out(3))]))
    v.add(c, "flow_mod_modify_strict",
          p.OFPFlowMod(DP, table_id=1, command=ofp.OFPFC_MODIFY_STRICT,
                       priority=100, buffer_id=0x42, out_port=ofp.OFPP_ANY,
                       out_group=ofp.OFPG_ANY, match=m,
                       instructions=[apply(out(4))]))
    v.add(c, "flow_mod_delete",
          p.OFPFlowMod(DP, cookie=0x1200, cookie_mask=0xFF00,
                       table_id=ofp.OFPTT_ALL, command=ofp.OFPFC_DELETE,
                       buffer_id=ofp.OFP_NO_BUFFER, out_port=2,
                       out_group=ofp.OFPG_ANY, match=p.OFPMatch()))
    v.add(c, "flow_mod_delete_strict",
          p.OFPFlowMod(DP, table_id=0, command=ofp.OFPFC_DELETE_STRICT,
                       priority=100, buffer_id=ofp.OFP_NO_BUFFER,
                       out_port=ofp.OFPP_ANY, out_group=5, match=m))

    b1 = p.OFPBucket(actions=[out(1)])
    b2 = p.OFPBucket(actions=[p.OFPActionSetField(eth_dst="02:00:00:00:00:02"),
                              out(2)])
    v.add(c, "group_mod_all",
          p.OFPGroupMod(DP, ofp.OFPGC_ADD, ofp.OFPGT_ALL, 1, [b1, b2]))
    v.add(c, "group_mod_select",
          p.OFPGroupMod(DP, ofp.OFPGC_ADD, ofp.OFPGT_SELECT, 2,
                        [p.OFPBucket(weight=3, actions=[out(1)]),
                         p.OFPBucket(weight=1, actions=[out(2)])]))
    v.add(c, "group_mod_indirect",
          p.OFPGroupMod(DP, ofp.OFPGC_ADD, ofp.OFPGT_INDIRECT, 3,
                        [p.OFPBucket(actions=[p.OFPActionPushVlan(0x8100),
                                              p.OFPActionSetField(
                                                  vlan_vid=0x1010),
                                              out(4)])]))
    v.add(c, "group_mod_ff",
          p.OFPGroupMod(DP, ofp.OFPGC_ADD, ofp.OFPGT_FF, 4,
                        [p.OFPBucket(watch_port=1, watch_group=ofp.OFPG_ANY,
                                     actions=[out(1)]),
                         p.OFPBucket(watch_port=ofp.OFPP_ANY, watch_group=3,
                                     actions=[p.OFPActionGroup(3)])]))
    v.add(c, "group_mod_modify",
          p.OFPGroupMod(DP, ofp.OFPGC_MODIFY, ofp.OFPGT_ALL, 1, [b1]))
    v.add(c, "group_mod_delete",
          p.OFPGroupMod(DP, ofp.OFPGC_DELETE, ofp.OFPGT_ALL, ofp.OFPG_ALL,
                        []))

    v.add(c, "port_mod",
          p.OFPPortMod(DP, port_no=5, hw_addr="02:00:00:00:00:05",
                       config=ofp.OFPPC_PORT_DOWN,
                       mask=ofp.OFPPC_PORT_DOWN | ofp.OFPPC_NO_FWD,
                       advertise=ofp.OFPPF_1GB_FD))
    v.add(c, "table_mod", p.OFPTableMod(DP, ofp.OFPTT_ALL, 0))
    v.add(c, "table_mod_deprecated_bits", p.OFPTableMod(DP, 3, 3))

    v.add(c, "meter_mod_drop",
          p.OFPMeterMod(DP, ofp.OFPMC_ADD, ofp.OFPMF_KBPS | ofp.OFPMF_BURST,
                        1, [p.OFPMeterBandDrop(rate=1000, burst_size=100)]))
    v.add(c, "meter_mod_dscp_remark",
          p.OFPMeterMod(DP, ofp.OFPMC_ADD, ofp.OFPMF_PKTPS | ofp.OFPMF_STATS,
                        2, [p.OFPMeterBandDscpRemark(rate=500, burst_size=0,
                                                     prec_level=1)]))
    v.add(c, "meter_mod_experimenter",
          p.OFPMeterMod(DP, ofp.OFPMC_MODIFY, ofp.OFPMF_KBPS, 3,
                        [p.OFPMeterBandExperimenter(rate=42, burst_size=7,
                                                    experimenter=EXP_ID)]))
    v.add(c, "meter_mod_three_bands",
          p.OFPMeterMod(DP, ofp.OFPMC_ADD, ofp.OFPMF_KBPS, 4,
                        [p.OFPMeterBandDrop(rate=2000, burst_size=0),
                         p.OFPMeterBandDscpRemark(rate=1000, burst_size=0,
                                                  prec_level=2),
                         p.OFPMeterBandExperimenter(rate=10, burst_size=0,
                                                    experimenter=EXP_ID)]))
    v.add(c, "meter_mod_delete",
          p.OFPMeterMod(DP, ofp.OFPMC_DELETE, 0, ofp.OFPM_ALL, []))

    v.add(c, "barrier_request", p.OFPBarrierRequest(DP))
    v.add(c, "barrier_reply", p.OFPBarrierReply(DP))
    v.add(c, "queue_get_config_request",
          p.OFPQueueGetConfigRequest(DP, 5))
    v.add(c, "queue_get_config_reply",
          p.OFPQueueGetConfigReply(DP, port=5, queues=[
              p.OFPPacketQueue(1, 5, [p.OFPQueuePropMinRate(100),
                                      p.OFPQueuePropMaxRate(900)]),
              p.OFPPacketQueue(2, 5, [p.OFPQueuePropMinRate(0xFFFF)]),
              p.OFPPacketQueue(3, 5, [])]))
    v.add(c, "queue_get_config_reply_experimenter_prop",
          p.OFPQueueGetConfigReply(DP, port=6, queues=[
              p.OFPPacketQueue(1, 6, [
                  p.OFPQueuePropMaxRate(500),
                  p.OFPQueuePropExperimenter(EXP_ID,
                                             list(b"oxflow-q"))])]))
    v.add(c, "role_request",
          p.OFPRoleRequest(DP, ofp.OFPCR_ROLE_MASTER, 0x1122334455667788))
    v.add(c, "role_request_nochange",
          p.OFPRoleRequest(DP, ofp.OFPCR_ROLE_NOCHANGE, 0))
    v.add(c, "role_reply",
          p.OFPRoleReply(DP, ofp.OFPCR_ROLE_SLAVE, 0x1122334455667788))
    v.add(c, "get_async_request", p.OFPGetAsyncRequest(DP))
    v.add(c, "get_async_reply",
          p.OFPGetAsyncReply(DP, [0x7, 0x0], [0x7, 0x7], [0xF, 0x0]))
    v.add(c, "set_async",
          p.OFPSetAsync(DP, [1 << ofp.OFPR_NO_MATCH | 1 << ofp.OFPR_ACTION, 0],
                        [0x7, 0x7],
                        [1 << ofp.OFPRR_IDLE_TIMEOUT, 1 << ofp.OFPRR_DELETE]))


# ---------------------------------------------------------------------------
# multipart
# ---------------------------------------------------------------------------


def table_feature_props():
    """One property of every OFPTFPT type."""
    inst_ids = [p.OFPInstructionId(t) for t in (
        ofp.OFPIT_GOTO_TABLE, ofp.OFPIT_WRITE_METADATA,
        ofp.OFPIT_WRITE_ACTIONS, ofp.OFPIT_APPLY_ACTIONS,
        ofp.OFPIT_CLEAR_ACTIONS, ofp.OFPIT_METER)]
    act_ids = [p.OFPActionId(t) for t in (
        ofp.OFPAT_OUTPUT, ofp.OFPAT_GROUP, ofp.OFPAT_SET_QUEUE,
        ofp.OFPAT_PUSH_VLAN, ofp.OFPAT_POP_VLAN, ofp.OFPAT_SET_FIELD)]

    def oxm_ids(spec):
        ids = []
        for name, hasmask in spec:
            _n, _v, _m = ofp.oxm_from_user(name, None)
            length = _oxm_payload_len(name) * (2 if hasmask else 1)
            ids.append(p.OFPOxmId(name, hasmask=hasmask, length=length))
        return ids

    match = [("in_port", False), ("eth_dst", True), ("eth_src", True),
             ("eth_type", False), ("vlan_vid", True), ("ipv4_src", True),
             ("ipv4_dst", True), ("ip_proto", False), ("tcp_dst", False),
             ("ipv6_dst", True), ("metadata", True)]
    wild = [("eth_dst", False), ("ipv4_src", False), ("ipv4_dst", False)]
    setf = [("eth_dst", False), ("eth_src", False), ("vlan_vid", False),
            ("ipv4_dst", False)]
    T = p.OFPTableFeaturePropInstructions
    N = p.OFPTableFeaturePropNextTables
    A = p.OFPTableFeaturePropActions
    O = p.OFPTableFeaturePropOxm
    E = p.OFPTableFeaturePropExperimenter
    return [
        T(ofp.OFPTFPT_INSTRUCTIONS, instruction_ids=inst_ids),
        T(ofp.OFPTFPT_INSTRUCTIONS_MISS, instruction_ids=inst_ids[3:]),
        N(ofp.OFPTFPT_NEXT_TABLES, table_ids=[1, 2, 3]),
        N(ofp.OFPTFPT_NEXT_TABLES_MISS, table_ids=[1]),
        A(ofp.OFPTFPT_WRITE_ACTIONS, action_ids=act_ids),
        A(ofp.OFPTFPT_WRITE_ACTIONS_MISS, action_ids=act_ids[:2]),
        A(ofp.OFPTFPT_APPLY_ACTIONS, action_ids=act_ids),
        A(ofp.OFPTFPT_APPLY_ACTIONS_MISS, action_ids=act_ids[:1]),
        O(ofp.OFPTFPT_MATCH, oxm_ids=oxm_ids(match)),
        O(ofp.OFPTFPT_WILDCARDS, oxm_ids=oxm_ids(wild)),
        O(ofp.OFPTFPT_WRITE_SETFIELD, oxm_ids=oxm_ids(setf)),
        O(ofp.OFPTFPT_WRITE_SETFIELD_MISS, oxm_ids=oxm_ids(setf[:1])),
        O(ofp.OFPTFPT_APPLY_SETFIELD, oxm_ids=oxm_ids(setf)),
        O(ofp.OFPTFPT_APPLY_SETFIELD_MISS, oxm_ids=oxm_ids(setf[:2])),
        E(ofp.OFPTFPT_EXPERIMENTER, experimenter=EXP_ID, exp_type=1,
          data=[0xDEADBEEF]),
        E(ofp.OFPTFPT_EXPERIMENTER_MISS, experimenter=EXP_ID, exp_type=2,
          data=[]),
    ]


_OXM_LEN = {}


def _oxm_payload_len(name):
    """Payload length of an unmasked OXM field, measured by serializing it."""
    if name not in _OXM_LEN:
        buf = bytearray()
        sample = {"eth_dst": "00:00:00:00:00:00",
                  "eth_src": "00:00:00:00:00:00",
                  "ipv4_src": "0.0.0.0", "ipv4_dst": "0.0.0.0",
                  "ipv6_dst": "::", "ipv6_src": "::"}.get(name, 0)
        p.OFPMatch(**{name: sample}).serialize(buf, 0)
        _OXM_LEN[name] = buf[7]
    return _OXM_LEN[name]


def table_features(table_id, name, props):
    return p.OFPTableFeaturesStats(
        table_id=table_id, name=name.encode(), metadata_match=0xFFFFFFFFFFFFFFFF,
        metadata_write=0xFFFFFFFFFFFFFFFF, config=0, max_entries=4096,
        properties=props)


def gen_multipart(v):
    c = "multipart"
    REQ_MORE = ofp.OFPMPF_REQ_MORE
    m = p.OFPMatch(in_port=1, eth_type=0x0800, ipv4_src=("10.0.0.0",
                                                         "255.255.255.0"))
    v.add(c, "desc_request", p.OFPDescStatsRequest(DP, 0))
    v.add(c, "desc_reply",
          p.OFPDescStatsReply(DP, flags=0, body=p.OFPDescStats(
              mfr_desc=b"oxflow project",
              hw_desc=b"software",
              sw_desc=b"oxflow 0.1.0",
              serial_num=b"0001",
              dp_desc=b"test switch")))

    v.add(c, "flow_stats_request",
          p.OFPFlowStatsRequest(DP, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY,
                                ofp.OFPG_ANY, 0, 0, p.OFPMatch()))
    v.add(c, "flow_stats_request_filtered",
          p.OFPFlowStatsRequest(DP, 0, 1, 2, 3, 0x1200, 0xFF00, m))
    v.add(c, "flow_stats_request_req_more",
          p.OFPFlowStatsRequest(DP, REQ_MORE, ofp.OFPTT_ALL, ofp.OFPP_ANY,
                                ofp.OFPG_ANY, 0, 0, p.OFPMatch()))
    fs = [p.OFPFlowStats(table_id=0, duration_sec=10, duration_nsec=5,
                         priority=100, idle_timeout=0, hard_timeout=0,
                         flags=ofp.OFPFF_SEND_FLOW_REM, cookie=0x1234,
                         packet_count=7, byte_count=700, match=m,
                         instructions=[apply(out(2))]),
          p.OFPFlowStats(table_id=1, duration_sec=1, duration_nsec=0,
                         priority=0, idle_timeout=30, hard_timeout=60,
                         flags=0, cookie=0, packet_count=0, byte_count=0,
                         match=p.OFPMatch(), instructions=[])]
    v.add(c, "flow_stats_reply", p.OFPFlowStatsReply(DP, body=fs, flags=0))
    v.add(c, "flow_stats_reply_reply_more",
          p.OFPFlowStatsReply(DP, body=fs[:1], flags=ofp.OFPMPF_REPLY_MORE))
    v.add(c, "flow_stats_reply_empty",
          p.OFPFlowStatsReply(DP, body=[], flags=0))

    v.add(c, "aggregate_stats_request",
          p.OFPAggregateStatsRequest(DP, 0, ofp.OFPTT_ALL, ofp.OFPP_ANY,
                                     ofp.OFPG_ANY, 0, 0, m))
    v.add(c, "aggregate_stats_reply",
          p.OFPAggregateStatsReply(DP, flags=0, body=p.OFPAggregateStats(
              packet_count=100, byte_count=64000, flow_count=3)))

    v.add(c, "table_stats_request", p.OFPTableStatsRequest(DP, 0))
    v.add(c, "table_stats_reply", p.OFPTableStatsReply(DP, flags=0, body=[
        p.OFPTableStats(table_id=0, active_count=3, lookup_count=1000,
                        matched_count=900),
        p.OFPTableStats(table_id=1, active_count=0, lookup_count=0,
                        matched_count=0)]))

    v.add(c, "port_stats_request",
          p.OFPPortStatsRequest(DP, 0, ofp.OFPP_ANY))
    v.add(c, "port_stats_reply", p.OFPPortStatsReply(DP, flags=0, body=[
        p.OFPPortStats(port_no=1, rx_packets=10, tx_packets=20, rx_bytes=1000,
                       tx_bytes=2000, rx_dropped=1, tx_dropped=2, rx_errors=3,
                       tx_errors=4, rx_frame_err=5, rx_over_err=6,
                       rx_crc_err=7, collisions=8, duration_sec=100,
                       duration_nsec=200),
        p.OFPPortStats(port_no=ofp.OFPP_LOCAL, rx_packets=0, tx_packets=0,
                       rx_bytes=0, tx_bytes=0, rx_dropped=0, tx_dropped=0,
                       rx_errors=0, tx_errors=0, rx_frame_err=0,
                       rx_over_err=0, rx_crc_err=0, collisions=0,
                       duration_sec=0, duration_nsec=0)]))

    v.add(c, "queue_stats_request",
          p.OFPQueueStatsRequest(DP, 0, ofp.OFPP_ANY, ofp.OFPQ_ALL))
    v.add(c, "queue_stats_reply", p.OFPQueueStatsReply(DP, flags=0, body=[
        p.OFPQueueStats(port_no=1, queue_id=0, tx_bytes=5000, tx_packets=50,
                        tx_errors=0, duration_sec=9, duration_nsec=1)]))

    v.add(c, "group_stats_request",
          p.OFPGroupStatsRequest(DP, 0, ofp.OFPG_ALL))
    v.add(c, "group_stats_reply", p.OFPGroupStatsReply(DP, flags=0, body=[
        p.OFPGroupStats(group_id=1, ref_count=2, packet_count=30,
                        byte_count=3000, duration_sec=5, duration_nsec=6,
                        bucket_stats=[p.OFPBucketCounter(10, 1000),
                                      p.OFPBucketCounter(20, 2000)]),
        p.OFPGroupStats(group_id=2, ref_count=0, packet_count=0,
                        byte_count=0, duration_sec=1, duration_nsec=0,
                        bucket_stats=[])]))

    v.add(c, "group_desc_request", p.OFPGroupDescStatsRequest(DP, 0))
    v.add(c, "group_desc_reply", p.OFPGroupDescStatsReply(DP, flags=0, body=[
        p.OFPGroupDescStats(ofp.OFPGT_ALL, 1,
                            [p.OFPBucket(actions=[out(1)]),
                             p.OFPBucket(actions=[out(2)])]),
        p.OFPGroupDescStats(ofp.OFPGT_FF, 4,
                            [p.OFPBucket(watch_port=1, actions=[out(1)])])]))

    v.add(c, "group_features_request", p.OFPGroupFeaturesStatsRequest(DP, 0))
    all_actions = sum(1 << a for a in (
        ofp.OFPAT_OUTPUT, ofp.OFPAT_COPY_TTL_OUT, ofp.OFPAT_COPY_TTL_IN,
        ofp.OFPAT_SET_MPLS_TTL, ofp.OFPAT_DEC_MPLS_TTL, ofp.OFPAT_PUSH_VLAN,
        ofp.OFPAT_POP_VLAN, ofp.OFPAT_PUSH_MPLS, ofp.OFPAT_POP_MPLS,
        ofp.OFPAT_SET_QUEUE, ofp.OFPAT_GROUP, ofp.OFPAT_SET_NW_TTL,
        ofp.OFPAT_DEC_NW_TTL, ofp.OFPAT_SET_FIELD, ofp.OFPAT_PUSH_PBB,
        ofp.OFPAT_POP_PBB))
    v.add(c, "group_features_reply", p.OFPGroupFeaturesStatsReply(
        DP, flags=0, body=p.OFPGroupFeaturesStats(
            types=0xF,
            capabilities=ofp.OFPGFC_SELECT_WEIGHT | ofp.OFPGFC_CHAINING,
            max_groups=[1024, 1024, 1024, 1024],
            actions=[all_actions] * 4)))

    v.add(c, "meter_stats_request",
          p.OFPMeterStatsRequest(DP, 0, ofp.OFPM_ALL))
    v.add(c, "meter_stats_reply", p.OFPMeterStatsReply(DP, flags=0, body=[
        p.OFPMeterStats(meter_id=1, flow_count=2, packet_in_count=100,
                        byte_in_count=10000, duration_sec=3,
                        duration_nsec=4,
                        band_stats=[p.OFPMeterBandStats(5, 500)])]))

    v.add(c, "meter_config_request",
          p.OFPMeterConfigStatsRequest(DP, 0, ofp.OFPM_ALL))
    v.add(c, "meter_config_reply", p.OFPMeterConfigStatsReply(
        DP, flags=0, body=[
            p.OFPMeterConfigStats(
                flags=ofp.OFPMF_KBPS, meter_id=1,
                bands=[p.OFPMeterBandDrop(rate=1000, burst_size=0)]),
            p.OFPMeterConfigStats(
                flags=ofp.OFPMF_PKTPS | ofp.OFPMF_BURST, meter_id=2,
                bands=[p.OFPMeterBandDscpRemark(rate=10, burst_size=5,
                                                prec_level=1),
                       p.OFPMeterBandExperimenter(rate=1, burst_size=1,
                                                  experimenter=EXP_ID)])]))

    v.add(c, "meter_features_request", p.OFPMeterFeaturesStatsRequest(DP, 0))
    v.add(c, "meter_features_reply", p.OFPMeterFeaturesStatsReply(
        DP, flags=0, body=[p.OFPMeterFeaturesStats(
            max_meter=1024,
            band_types=1 << ofp.OFPMBT_DROP | 1 << ofp.OFPMBT_DSCP_REMARK,
            capabilities=ofp.OFPMF_KBPS | ofp.OFPMF_PKTPS | ofp.OFPMF_BURST
            | ofp.OFPMF_STATS,
            max_bands=2, max_color=8)]))

    v.add(c, "table_features_request_empty",
          p.OFPTableFeaturesStatsRequest(DP, 0, []))
    v.add(c, "table_features_request_set",
          p.OFPTableFeaturesStatsRequest(DP, 0, [
              table_features(0, "classifier", table_feature_props()[:4])]))
    v.add(c, "table_features_reply", p.OFPTableFeaturesStatsReply(
        DP, flags=0, body=[
            table_features(0, "table0", table_feature_props()),
            table_features(1, "table1", table_feature_props()[8:10])]))
    v.add(c, "table_features_reply_reply_more", p.OFPTableFeaturesStatsReply(
        DP, flags=ofp.OFPMPF_REPLY_MORE, body=[
            table_features(0, "table0", table_feature_props()[2:4])]))

    v.add(c, "port_desc_request", p.OFPPortDescStatsRequest(DP, 0))
    v.add(c, "port_desc_reply", p.OFPPortDescStatsReply(DP, flags=0, body=[
        port(1, "eth1", "02:00:00:00:00:01"),
        port(ofp.OFPP_LOCAL, "br0", "02:00:00:00:00:ff")]))

    v.add(c, "experimenter_request",
          p.OFPExperimenterStatsRequest(DP, 0, EXP_ID, 5, b"query!!!"))
    # os-ken's OFPExperimenterMultipart parser advances by 16 bytes per
    # entry whatever the body length, so the reply body is kept at 16 bytes.
    v.add(c, "experimenter_reply", p.OFPExperimenterStatsReply(
        DP, flags=0, body=p.OFPExperimenterMultipart(EXP_ID, 5,
                                                     b"answer!!")))


# ---------------------------------------------------------------------------
# oxm
# ---------------------------------------------------------------------------

IP4 = {"eth_type": 0x0800}
IP6 = {"eth_type": 0x86DD}
ARP = {"eth_type": 0x0806}

# name -> (prerequisite fields, unmasked value, masked (value, mask) or None)
OXM_FIELDS = {
    "in_port": ({}, 7, None),
    "in_phy_port": ({"in_port": 7}, 3, None),
    "metadata": ({}, 0x0123456789ABCDEF,
                 (0x0123456700000000, 0xFFFFFFFF00000000)),
    "eth_dst": ({}, "aa:bb:cc:dd:ee:ff",
                ("01:00:00:00:00:00", "01:00:00:00:00:00")),
    "eth_src": ({}, "00:11:22:33:44:55",
                ("00:11:22:00:00:00", "ff:ff:ff:00:00:00")),
    "eth_type": ({}, 0x88CC, None),
    "vlan_vid": ({}, 0x1000 | 100, (0x1000, 0x1000)),
    "vlan_pcp": ({"vlan_vid": 0x1000 | 100}, 5, None),
    "ip_dscp": (IP4, 46, None),
    "ip_ecn": (IP4, 2, None),
    "ip_proto": (IP4, 6, None),
    "ipv4_src": (IP4, "192.168.1.1", ("192.168.0.0", "255.255.0.0")),
    "ipv4_dst": (IP4, "10.0.0.1", ("10.0.0.0", "255.0.0.0")),
    "tcp_src": (dict(IP4, ip_proto=6), 1234, None),
    "tcp_dst": (dict(IP4, ip_proto=6), 80, None),
    "udp_src": (dict(IP4, ip_proto=17), 5353, None),
    "udp_dst": (dict(IP4, ip_proto=17), 53, None),
    "sctp_src": (dict(IP4, ip_proto=132), 2905, None),
    "sctp_dst": (dict(IP4, ip_proto=132), 2906, None),
    "icmpv4_type": (dict(IP4, ip_proto=1), 8, None),
    "icmpv4_code": (dict(IP4, ip_proto=1), 3, None),
    "arp_op": (ARP, 1, None),
    "arp_spa": (ARP, "10.1.1.1", ("10.1.0.0", "255.255.0.0")),
    "arp_tpa": (ARP, "10.1.1.2", ("10.1.1.0", "255.255.255.0")),
    "arp_sha": (ARP, "00:11:22:33:44:66",
                ("00:11:22:00:00:00", "ff:ff:ff:00:00:00")),
    "arp_tha": (ARP, "00:11:22:33:44:77",
                ("00:00:00:33:44:77", "00:00:00:ff:ff:ff")),
    "ipv6_src": (IP6, "2001:db8::1", ("2001:db8::", "ffff:ffff::")),
    "ipv6_dst": (IP6, "fe80::1", ("fe80::", "ffc0::")),
    "ipv6_flabel": (IP6, 0x12345, (0x12300, 0xFFF00)),
    "icmpv6_type": (dict(IP6, ip_proto=58), 128, None),
    "icmpv6_code": (dict(IP6, ip_proto=58), 1, None),
    "ipv6_nd_target": (dict(IP6, ip_proto=58, icmpv6_type=135), "fe80::2",
                       None),
    "ipv6_nd_sll": (dict(IP6, ip_proto=58, icmpv6_type=135),
                    "00:11:22:33:44:88", None),
    "ipv6_nd_tll": (dict(IP6, ip_proto=58, icmpv6_type=136),
                    "00:11:22:33:44:99", None),
    "mpls_label": ({"eth_type": 0x8847}, 0x12345, None),
    "mpls_tc": ({"eth_type": 0x8847}, 3, None),
    "mpls_bos": ({"eth_type": 0x8847}, 1, None),
    "pbb_isid": ({"eth_type": 0x88E7}, 0xABCDEF, (0xAB0000, 0xFF0000)),
    "tunnel_id": ({}, 0x1122334455667788,
                  (0x1122334400000000, 0xFFFFFFFF00000000)),
    "ipv6_exthdr": (IP6, 0x0104, (0x0040, 0x01C0)),
}


def oxm_flow_mod(match):
    return p.OFPFlowMod(DP, cookie=0, table_id=0, command=ofp.OFPFC_ADD,
                        priority=10, buffer_id=ofp.OFP_NO_BUFFER,
                        out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                        match=match, instructions=[apply(out(1))])


def gen_oxm(v):
    c = "oxm"
    assert len(OXM_FIELDS) == 40
    for name, (pre, value, masked) in OXM_FIELDS.items():
        v.add(c, "oxm_%s" % name, oxm_flow_mod(
            p.OFPMatch(**dict(pre, **{name: value}))))
        if masked is not None:
            v.add(c, "oxm_%s_masked" % name, oxm_flow_mod(
                p.OFPMatch(**dict(pre, **{name: masked}))))
    v.add(c, "oxm_vlan_vid_none", oxm_flow_mod(
        p.OFPMatch(vlan_vid=ofp.OFPVID_NONE)))
    v.add(c, "oxm_many_fields", oxm_flow_mod(p.OFPMatch(
        in_port=1, eth_dst="aa:bb:cc:dd:ee:ff",
        eth_src=("00:11:22:00:00:00", "ff:ff:ff:00:00:00"),
        eth_type=0x0800, vlan_vid=0x1001, vlan_pcp=3, ip_dscp=10, ip_ecn=1,
        ip_proto=17, ipv4_src="1.2.3.4", ipv4_dst=("5.6.7.0",
                                                   "255.255.255.0"),
        udp_src=1, udp_dst=2, metadata=(1, 1), tunnel_id=9)))
    # Experimenter OXM (OFPXMC_EXPERIMENTER = 0xffff) as os-ken expresses
    # ONF EXT-256 pbb_uca and EXT-109 tcp_flags for OF 1.3: oxm_length
    # counts the 4-byte experimenter id, a 2-byte ONF field type and value.
    v.add(c, "oxm_experimenter_onf_pbb_uca", oxm_flow_mod(
        p.OFPMatch(eth_type=0x88E7, pbb_uca=1)))
    v.add(c, "oxm_experimenter_onf_tcp_flags_masked", oxm_flow_mod(
        p.OFPMatch(eth_type=0x0800, ip_proto=6, tcp_flags=(0x002, 0x012))))


# ---------------------------------------------------------------------------
# action
# ---------------------------------------------------------------------------


def action_flow_mod(actions, match=None):
    return p.OFPFlowMod(DP, cookie=0, table_id=0, command=ofp.OFPFC_ADD,
                        priority=20, buffer_id=ofp.OFP_NO_BUFFER,
                        out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                        match=match or p.OFPMatch(in_port=1),
                        instructions=[apply(*actions)])


def gen_actions(v):
    c = "action"
    mpls = p.OFPMatch(in_port=1, eth_type=0x8847)
    ip4 = p.OFPMatch(in_port=1, eth_type=0x0800)
    A = [
        ("output", [out(2)], None),
        ("output_controller_max_len", [out(ofp.OFPP_CONTROLLER, 128)], None),
        ("output_special_ports", [out(ofp.OFPP_IN_PORT), out(ofp.OFPP_ALL),
                                  out(ofp.OFPP_FLOOD), out(ofp.OFPP_NORMAL),
                                  out(ofp.OFPP_LOCAL)], None),
        ("copy_ttl_out", [p.OFPActionCopyTtlOut(), out(2)], mpls),
        ("copy_ttl_in", [p.OFPActionCopyTtlIn(), out(2)], mpls),
        ("set_mpls_ttl", [p.OFPActionSetMplsTtl(64), out(2)], mpls),
        ("dec_mpls_ttl", [p.OFPActionDecMplsTtl(), out(2)], mpls),
        ("push_vlan", [p.OFPActionPushVlan(0x8100), out(2)], None),
        ("push_vlan_qinq", [p.OFPActionPushVlan(0x88A8), out(2)], None),
        ("pop_vlan", [p.OFPActionPopVlan(), out(2)],
         p.OFPMatch(in_port=1, vlan_vid=(0x1000, 0x1000))),
        ("push_mpls", [p.OFPActionPushMpls(0x8847), out(2)], ip4),
        ("push_mpls_multicast", [p.OFPActionPushMpls(0x8848), out(2)], ip4),
        ("pop_mpls", [p.OFPActionPopMpls(0x0800), out(2)], mpls),
        ("set_queue", [p.OFPActionSetQueue(3), out(2)], None),
        ("group", [p.OFPActionGroup(7)], None),
        ("set_nw_ttl", [p.OFPActionSetNwTtl(32), out(2)], ip4),
        ("dec_nw_ttl", [p.OFPActionDecNwTtl(), out(2)], ip4),
        ("set_field_eth_dst",
         [p.OFPActionSetField(eth_dst="02:00:00:00:00:09"), out(2)], None),
        ("set_field_vlan_vid", [p.OFPActionSetField(vlan_vid=0x1000 | 42),
                                out(2)],
         p.OFPMatch(in_port=1, vlan_vid=(0x1000, 0x1000))),
        ("set_field_ipv4_src", [p.OFPActionSetField(ipv4_src="192.0.2.1"),
                                out(2)], ip4),
        ("set_field_tcp_dst", [p.OFPActionSetField(tcp_dst=8080), out(2)],
         p.OFPMatch(in_port=1, eth_type=0x0800, ip_proto=6)),
        ("set_field_ipv6_dst", [p.OFPActionSetField(ipv6_dst="2001:db8::9"),
                                out(2)],
         p.OFPMatch(in_port=1, eth_type=0x86DD)),
        ("set_field_mpls_label", [p.OFPActionSetField(mpls_label=77),
                                  out(2)], mpls),
        ("set_field_tunnel_id", [p.OFPActionSetField(tunnel_id=0xABCDEF),
                                 out(2)], None),
        ("push_pbb", [p.OFPActionPushPbb(0x88E7), out(2)], None),
        ("pop_pbb", [p.OFPActionPopPbb(), out(2)],
         p.OFPMatch(in_port=1, eth_type=0x88E7)),
        ("experimenter", [p.OFPActionExperimenterUnknown(
            EXP_ID, b"\x01\x02\x03\x04\x05\x06\x07\x08"), out(2)], None),
        ("experimenter_long", [p.OFPActionExperimenterUnknown(
            EXP_ID, b"0123456789abcdef01234567"), out(2)], None),
    ]
    for name, actions, match in A:
        v.add(c, "action_" + name, action_flow_mod(actions, match))


# ---------------------------------------------------------------------------
# instruction
# ---------------------------------------------------------------------------


def inst_flow_mod(instructions, table_id=0):
    return p.OFPFlowMod(DP, cookie=0, table_id=table_id,
                        command=ofp.OFPFC_ADD, priority=30,
                        buffer_id=ofp.OFP_NO_BUFFER, out_port=ofp.OFPP_ANY,
                        out_group=ofp.OFPG_ANY, match=p.OFPMatch(in_port=1),
                        instructions=instructions)


def gen_instructions(v):
    c = "instruction"
    I = p.OFPInstructionActions
    v.add(c, "instruction_goto_table",
          inst_flow_mod([p.OFPInstructionGotoTable(1)]))
    v.add(c, "instruction_write_metadata",
          inst_flow_mod([p.OFPInstructionWriteMetadata(0xAB00, 0xFF00)]))
    v.add(c, "instruction_write_actions",
          inst_flow_mod([I(ofp.OFPIT_WRITE_ACTIONS,
                           [p.OFPActionSetQueue(1), out(2)])]))
    v.add(c, "instruction_apply_actions",
          inst_flow_mod([I(ofp.OFPIT_APPLY_ACTIONS,
                           [p.OFPActionPushVlan(0x8100), out(2)])]))
    v.add(c, "instruction_apply_actions_empty",
          inst_flow_mod([I(ofp.OFPIT_APPLY_ACTIONS, [])]))
    v.add(c, "instruction_clear_actions",
          inst_flow_mod([I(ofp.OFPIT_CLEAR_ACTIONS, [])]))
    v.add(c, "instruction_meter",
          inst_flow_mod([p.OFPInstructionMeter(5)]))
    v.add(c, "instruction_all_six",
          inst_flow_mod([p.OFPInstructionMeter(1),
                         I(ofp.OFPIT_APPLY_ACTIONS, [out(3)]),
                         I(ofp.OFPIT_CLEAR_ACTIONS, []),
                         I(ofp.OFPIT_WRITE_ACTIONS, [out(2)]),
                         p.OFPInstructionWriteMetadata(1, 1),
                         p.OFPInstructionGotoTable(4)], table_id=2))

    # Experimenter instruction: os-ken has no class for it. Hand-built:
    # ofp_instruction_experimenter {type=0xffff, len=16, experimenter} + 8
    # bytes of experimenter data, appended to an os-ken flow-mod with no
    # instructions. os-ken's parser cannot read it back.
    base = inst_flow_mod([])
    raw = ofp13.serialize(base, 0)
    inst = struct.pack("!HHI", ofp.OFPIT_EXPERIMENTER, 16, EXP_ID) \
        + b"exp-inst"
    fields = base.to_jsondict()
    fields["OFPFlowMod"]["instructions"] = [{"OFPInstructionExperimenter": {
        "type": ofp.OFPIT_EXPERIMENTER, "len": 16, "experimenter": EXP_ID,
        "data": b"exp-inst".hex()}}]
    v.add_raw(c, "instruction_experimenter", raw + inst, fields,
              osken_parse=False)
    inst2 = [I(ofp.OFPIT_APPLY_ACTIONS, [out(2)])]
    base = inst_flow_mod(inst2)
    raw = ofp13.serialize(base, 0)
    fields = base.to_jsondict()
    fields["OFPFlowMod"]["instructions"].append(
        {"OFPInstructionExperimenter": {
            "type": ofp.OFPIT_EXPERIMENTER, "len": 8,
            "experimenter": EXP_ID, "data": ""}})
    v.add_raw(c, "instruction_experimenter_after_apply",
              raw + struct.pack("!HHI", ofp.OFPIT_EXPERIMENTER, 8, EXP_ID),
              fields, osken_parse=False)


def gen_corpus(v):
    """os-ken's own OpenFlow 1.3 test captures (os_ken/tests/packet_data/
    of13, Apache-2.0), as an independent corpus: bytes written by other
    implementations and by hand, not by this script. `fields` is what
    os-ken's parser makes of them."""
    import glob
    import os_ken
    base = os.path.join(os.path.dirname(os_ken.__file__), "tests",
                        "packet_data", "of13")
    files = sorted(glob.glob(os.path.join(base, "4-*.packet"))
                   + glob.glob(os.path.join(base, "libofproto-OFP13-*.packet")))
    assert files, "os-ken test data not found under " + base
    for path in files:
        name = os.path.basename(path)[:-len(".packet")]
        with open(path, "rb") as f:
            raw = f.read()
        assert struct.unpack_from("!H", raw, 2)[0] == len(raw), name
        msg = ofp13.parse(raw)
        extra = {"origin": "os-ken tests/packet_data/of13/"
                 + os.path.basename(path)}
        if name in CORPUS_REJECTS:
            extra["oxflow_rejects"] = CORPUS_REJECTS[name]
        assert name not in v.names, name
        v.names.add(name)
        v._push("corpus", name, raw, struct.unpack_from("!I", raw, 4)[0],
                "os-ken-testdata", True, msg.to_jsondict(), extra)


def gen_bundle(v):
    """ONF bundle messages (EXT-230 for OpenFlow 1.3), serialized by
    os-ken's ONFBundleCtrlMsg / ONFBundleAddMsg (ofp13.serialize has no
    path for them). os-ken parses control messages back; an add it parses
    only as a generic experimenter (`osken_parse: false`). Checked by
    crates/ofp/tests/bundle_vectors.rs against ofp::bundle."""
    def push(name, msg, osken_parse):
        assert name not in v.names, name
        v.names.add(name)
        xid = zlib.crc32(name.encode()) & 0xFFFFFFFF
        msg.set_xid(xid)
        msg.serialize()
        raw = bytes(msg.buf)
        fields = msg.to_jsondict()
        if osken_parse:
            back = ofp13.parse(raw).to_jsondict()
            if back != fields:
                raise SystemExit("%s: os-ken parses back differently" % name)
        v._push("bundle", name, raw, xid, "os-ken", osken_parse, fields)

    both = ofp.ONF_BF_ATOMIC | ofp.ONF_BF_ORDERED
    for name, typ, flags in (
            ("open_request", ofp.ONF_BCT_OPEN_REQUEST, both),
            ("open_reply", ofp.ONF_BCT_OPEN_REPLY, 0),
            ("close_request", ofp.ONF_BCT_CLOSE_REQUEST, ofp.ONF_BF_ATOMIC),
            ("commit_request", ofp.ONF_BCT_COMMIT_REQUEST, both),
            ("commit_reply", ofp.ONF_BCT_COMMIT_REPLY, 0),
            ("discard_request", ofp.ONF_BCT_DISCARD_REQUEST,
             ofp.ONF_BF_ORDERED)):
        push("bundle_ctrl_" + name,
             p.ONFBundleCtrlMsg(DP, 0x0B0D1E00 + typ, typ, flags, []), True)
    fm = p.OFPFlowMod(DP, cookie=0x77, priority=9, match=p.OFPMatch(
        in_port=1, eth_type=0x0800, ipv4_dst="10.0.0.1"),
        instructions=[p.OFPInstructionActions(
            ofp.OFPIT_APPLY_ACTIONS, [out(2)])])
    gm = p.OFPGroupMod(DP, ofp.OFPGC_ADD, ofp.OFPGT_ALL, 5, [p.OFPBucket(
        actions=[out(3)])])
    mm = p.OFPMeterMod(DP, ofp.OFPMC_ADD, ofp.OFPMF_PKTPS, 2, [
        p.OFPMeterBandDrop(rate=100, burst_size=0)])
    pm = p.OFPPortMod(DP, 1, "02:00:00:00:00:01", ofp.OFPPC_NO_FWD,
                      ofp.OFPPC_NO_FWD, 0)
    for name, msg in (("flow_mod", fm), ("group_mod", gm),
                      ("meter_mod", mm), ("port_mod", pm)):
        push("bundle_add_" + name,
             p.ONFBundleAddMsg(DP, 42, both, msg, []), False)


def generate():
    v = Vectors()
    gen_messages(v)
    gen_multipart(v)
    gen_oxm(v)
    gen_actions(v)
    gen_instructions(v)
    gen_corpus(v)
    gen_bundle(v)
    return v.items


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else os.path.join(
        REPO, "tests", "vectors", "ofp")
    os.makedirs(out_dir, exist_ok=True)
    items = generate()
    for cat in CATEGORIES:
        sel = sorted((x for x in items if x["category"] == cat),
                     key=lambda x: x["name"])
        with open(os.path.join(out_dir, cat + ".json"), "w") as f:
            json.dump(sel, f, indent=1, sort_keys=True)
            f.write("\n")
        hand = sum(1 for x in sel if x["source"] == "hand")
        print("%-12s %3d vectors (%d hand-built)" % (cat, len(sel), hand))
    print("%-12s %3d vectors (%d hand-built)" % (
        "total", len(items), sum(1 for x in items if x["source"] == "hand")))


if __name__ == "__main__":
    main(sys.argv)
