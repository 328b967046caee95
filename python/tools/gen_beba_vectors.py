#!/usr/bin/env python3
"""Write tests/vectors/ofp/beba.json: BEBA experimenter vectors.

Every vector is a whole OpenFlow 1.3 message whose BEBA part is packed by
`oxflow.beba` (the layouts of BEBA's `beba-ext.h`) and whose OpenFlow
framing is serialized by os-ken (OFPExperimenter, OFPExperimenterStatsRequest,
OFPFlowMod) or, for messages os-ken cannot serialize (multipart replies),
packed here from the 1.3 layouts. `beba` holds the typed values the Rust
codec must decode the BEBA part to (`crates/ofp/tests/beba_vectors.rs`).

    python/tools/gen_beba_vectors.py [OUT_DIR]
"""

import struct
import sys

from exp_vectors import osken_bytes, raw_message, write, xid_of
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

from oxflow import beba
from oxflow import ofp13

DP = ofp13.DP
KEY = bytes([10, 0, 0, 1, 10, 0, 0, 2])  # ipv4_src, ipv4_dst


def vectors():
    out = []

    def add(name, kind, raw, typed):
        out.append({"name": name, "category": "beba", "kind": kind,
                    "msg_type": raw[1], "xid": xid_of(name),
                    "source": "oxflow.beba + os-ken", "hex": raw.hex(),
                    # os-ken parses none of the BEBA parts (no experimenter
                    # instruction class, BEBA bodies kept as opaque data)
                    "osken_parse": False,
                    "beba": typed})

    def msg(name, exp_type, data, typed):
        add(name, "message",
            osken_bytes(beba.message(DP, exp_type, data), xid_of(name)), typed)

    def req(name, exp_type, data, typed):
        add(name, "multipart_request",
            osken_bytes(beba.stats_request(DP, exp_type, data), xid_of(name)),
            typed)

    def reply(name, exp_type, data, typed):
        body = struct.pack("!HH4xII", ofp.OFPMP_EXPERIMENTER, 0,
                           beba.BEBA_EXPERIMENTER, exp_type) + data
        add(name, "multipart_reply",
            raw_message(ofp.OFPT_MULTIPART_REPLY, body, xid_of(name)), typed)

    # --- STATE_MOD, every command
    sm = beba.EXP_STATE_MOD
    msg("state_mod_stateful_on", sm, beba.stateful_table_config_data(0, True),
        {"command": "stateful_table_config", "table_id": 0, "stateful": True})
    msg("state_mod_stateful_off", sm,
        beba.stateful_table_config_data(3, False),
        {"command": "stateful_table_config", "table_id": 3, "stateful": False})
    fields = [ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_IPV4_DST]
    msg("state_mod_lookup_extractor", sm,
        beba.extractor_data(0, fields),
        {"command": "set_l_extractor", "table_id": 0, "bit": False,
         "fields": fields})
    msg("state_mod_update_extractor_biflow", sm,
        beba.extractor_data(1, fields[::-1], update=True, bit=True),
        {"command": "set_u_extractor", "table_id": 1, "bit": True,
         "fields": fields[::-1]})
    six = [ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_ETH_DST, ofp.OXM_OF_IP_PROTO,
           ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_TCP_SRC, ofp.OXM_OF_TCP_DST]
    msg("state_mod_lookup_extractor_six_fields", sm,
        beba.extractor_data(2, six),
        {"command": "set_l_extractor", "table_id": 2, "bit": False,
         "fields": six})
    msg("state_mod_set_flow_state", sm,
        beba.set_flow_state_data(0, KEY, 2, 0xFF, hard_rollback=1,
                                 idle_rollback=7, hard_timeout_us=5000000,
                                 idle_timeout_us=1000000),
        {"command": "set_flow_state", "table_id": 0, "key": KEY.hex(),
         "state": 2, "state_mask": 0xFF, "hard_rollback": 1,
         "idle_rollback": 7, "hard_timeout": 5000000,
         "idle_timeout": 1000000})
    msg("state_mod_set_flow_state_odd_key", sm,
        beba.set_flow_state_data(4, b"\x06", 9),
        {"command": "set_flow_state", "table_id": 4, "key": "06",
         "state": 9, "state_mask": beba.ALL32, "hard_rollback": 0,
         "idle_rollback": 0, "hard_timeout": 0, "idle_timeout": 0})
    msg("state_mod_del_flow_state", sm, beba.del_flow_state_data(0, KEY),
        {"command": "del_flow_state", "table_id": 0, "key": KEY.hex()})
    msg("state_mod_set_global_state", sm,
        beba.set_global_state_data(0x5, 0xF),
        {"command": "set_global_state", "value": 5, "mask": 15})
    msg("state_mod_reset_global_state", sm, beba.reset_global_state_data(),
        {"command": "reset_global_state"})

    # --- PKTTMP_MOD
    frame = bytes.fromhex("ffffffffffff0000000000010806") + bytes(28)
    msg("pkttmp_add", beba.EXP_PKTTMP_MOD, beba.add_pkttmp_data(7, frame),
        {"command": "add", "pkttmp_id": 7, "data": frame.hex()})
    msg("pkttmp_del", beba.EXP_PKTTMP_MOD, beba.del_pkttmp_data(7),
        {"command": "delete", "pkttmp_id": 7})

    # --- asynchronous messages
    msg("state_changed", beba.EXP_STATE_CHANGED,
        beba.state_changed_data(0, 1, 2, beba.ALL32, KEY),
        {"table_id": 0, "old_state": 1, "new_state": 2,
         "state_mask": beba.ALL32, "key": KEY.hex()})
    msg("state_changed_odd_key", beba.EXP_STATE_CHANGED,
        beba.state_changed_data(2, 0, 3, 0xF, b"\x01\x02\x03"),
        {"table_id": 2, "old_state": 0, "new_state": 3, "state_mask": 15,
         "key": "010203"})
    m = p.OFPMatch(eth_type=0x0800, state=4)
    msg("flow_notification", beba.EXP_FLOW_NOTIFICATION,
        beba.flow_notification_data(1, 0, m, [ofp.OFPIT_APPLY_ACTIONS,
                                              ofp.OFPIT_GOTO_TABLE]),
        {"table_id": 1, "ntf_type": 0, "match_len": 22,
         "instructions": [ofp.OFPIT_APPLY_ACTIONS, ofp.OFPIT_GOTO_TABLE]})
    msg("flow_notification_one_instruction", beba.EXP_FLOW_NOTIFICATION,
        beba.flow_notification_data(0, 1, p.OFPMatch(), [1]),
        {"table_id": 0, "ntf_type": 1, "match_len": 4, "instructions": [1]})

    # --- actions, instruction and match fields inside flow mods
    def flow_mod(name, match, insts, typed):
        fm = p.OFPFlowMod(DP, table_id=0, priority=10, match=match,
                          instructions=insts)
        add(name, "flow_mod", osken_bytes(fm, xid_of(name)), typed)

    apply = ofp.OFPIT_APPLY_ACTIONS
    flow_mod("flow_mod_set_state", p.OFPMatch(state=0),
             [p.OFPInstructionActions(apply, [
                 beba.set_state_action(1, 0, hard_rollback=0,
                                       idle_timeout_us=10000000),
                 p.OFPActionOutput(2)])],
             {"match": [["state", 0, None]],
              "actions": [{"action": "set_state", "state": 1,
                           "state_mask": beba.ALL32, "table_id": 0,
                           "hard_rollback": 0, "idle_rollback": 0,
                           "hard_timeout": 0, "idle_timeout": 10000000,
                           "bit": False}]})
    flow_mod("flow_mod_set_state_biflow_masked",
             p.OFPMatch(state=(2, 0xF)),
             [p.OFPInstructionActions(apply, [
                 beba.set_state_action(3, 1, state_mask=0xF, bit=True,
                                       hard_rollback=4, idle_rollback=5,
                                       hard_timeout_us=6, idle_timeout_us=7)])],
             {"match": [["state", 2, 15]],
              "actions": [{"action": "set_state", "state": 3,
                           "state_mask": 15, "table_id": 1,
                           "hard_rollback": 4, "idle_rollback": 5,
                           "hard_timeout": 6, "idle_timeout": 7,
                           "bit": True}]})
    flow_mod("flow_mod_global_state",
             p.OFPMatch(global_state=(1, 1), in_port=1),
             [p.OFPInstructionActions(apply, [
                 beba.set_global_state_action(2, 2),
                 beba.set_global_state_action(7)])],
             {"match": [["global_state", 1, 1]],
              "actions": [{"action": "set_global_state", "value": 2,
                           "mask": 2},
                          {"action": "set_global_state", "value": 7,
                           "mask": beba.ALL32}]})
    flow_mod("flow_mod_inc_state", p.OFPMatch(global_state=9, state=1),
             [p.OFPInstructionActions(apply, [beba.inc_state_action(2)])],
             {"match": [["global_state", 9, None], ["state", 1, None]],
              "actions": [{"action": "inc_state", "table_id": 2}]})
    flow_mod("flow_mod_in_switch_pkt_gen", p.OFPMatch(),
             [beba.InSwitchPktGen(7, [p.OFPActionOutput(3)])],
             {"match": [], "pkt_gen": {"pkttmp_id": 7, "actions": 1}})
    flow_mod("flow_mod_in_switch_pkt_gen_no_actions", p.OFPMatch(state=5),
             [beba.InSwitchPktGen(0x01020304)],
             {"match": [["state", 5, None]],
              "pkt_gen": {"pkttmp_id": 0x01020304, "actions": 0}})

    # --- multipart requests
    for name, t in (("state_stats", beba.MP_STATE_STATS),
                    ("state_stats_and_delete", beba.MP_STATE_STATS_AND_DELETE),
                    ("state_stats_short", beba.MP_STATE_STATS_SHORT),
                    ("state_stats_and_delete_short",
                     beba.MP_STATE_STATS_AND_DELETE_SHORT)):
        req(name + "_request_all", t, beba.state_stats_request_data(),
            {"exp_type": t, "table_id": 0xFF, "state": None, "match_len": 4})
        req(name + "_request_state_match", t,
            beba.state_stats_request_data(
                0, 3, p.OFPMatch(eth_type=0x0800, ipv4_src="10.0.0.1")),
            {"exp_type": t, "table_id": 0, "state": 3, "match_len": 18})
    req("global_state_stats_request", beba.MP_GLOBAL_STATE_STATS, b"",
        {"exp_type": beba.MP_GLOBAL_STATE_STATS})

    # --- multipart replies
    def entry(table_id, key, state, short, d=(0, 0, 0, 0, 0, 0)):
        fixed = 8 if short else 32
        length = fixed + len(key) + (-(fixed + len(key)) % 8)
        if short:
            head = struct.pack("!HBBI", length, table_id, len(key), state)
        else:
            head = struct.pack("!HBB7I", length, table_id, len(key), *d,
                               state)
        e = {"table_id": table_id, "key": key.hex(), "state": state}
        if not short:
            e.update(zip(["duration_sec", "duration_nsec", "hard_rollback",
                          "idle_rollback", "hard_timeout", "idle_timeout"], d))
        return head + key + bytes(length - fixed - len(key)), e

    for name, t, short in (
            ("state_stats", beba.MP_STATE_STATS, False),
            ("state_stats_and_delete", beba.MP_STATE_STATS_AND_DELETE, False),
            ("state_stats_short", beba.MP_STATE_STATS_SHORT, True),
            ("state_stats_and_delete_short",
             beba.MP_STATE_STATS_AND_DELETE_SHORT, True)):
        a, ea = entry(0, KEY, 2, short, (12, 345, 1, 2, 3000000, 4000000))
        b, eb = entry(1, b"\x0a\x00\x00\x07\x00\x50", 5, short,
                      (1, 2, 3, 4, 5, 6))
        reply(name + "_reply", t, a + b,
              {"exp_type": t, "entries": [ea, eb]})
        reply(name + "_reply_empty", t, b"", {"exp_type": t, "entries": []})
    reply("global_state_stats_reply", beba.MP_GLOBAL_STATE_STATS,
          struct.pack("!4xI", 0xA5), {"exp_type": beba.MP_GLOBAL_STATE_STATS,
                                      "global_state": 0xA5})

    # --- errors
    bad = osken_bytes(beba.state_mod(DP, struct.pack("!Bx", 9)), 0)
    for code, cname in enumerate(beba.ERRORS):
        name = "error_" + cname.lower()
        body = struct.pack("!HHI", ofp.OFPET_EXPERIMENTER, code,
                           beba.BEBA_EXPERIMENTER) + bad
        add(name, "error", raw_message(ofp.OFPT_ERROR, body, xid_of(name)),
            {"code": code})
    return out


def main(argv):
    write(argv, "beba.json", vectors())


if __name__ == "__main__":
    main(sys.argv)
