#!/usr/bin/env python3
"""Cross-check tests/vectors/ofp/beba.json against BEBA's own controller
library (beba-eu/beba-ctrl, a Ryu fork; not part of oxflow, not vendored).

    python/tools/check_beba_ctrl.py BEBA_CTRL_CHECKOUT

Loads `ryu/ofproto/beba_v1_0.py` and the encoder part of
`ryu/ofproto/beba_v1_0_parser.py` from the checkout with `ryu` aliased to
os-ken (the functions use only os-ken-compatible classes), builds every
controller-to-switch vector with beba-ctrl's own functions and compares the
bytes, and runs beba-ctrl's reply parsers on the reply vectors. Exit status
1 on any difference.
"""
import sys, types, json, struct, importlib
import os_ken, os_ken.lib.pack_utils, os_ken.ofproto.ofproto_parser, os_ken.utils
import os_ken.lib.type_desc, os_ken.ofproto.oxm_fields as oxf, os_ken.ofproto.ofproto_utils
import os_ken.ofproto.ofproto_common as oc
import os
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))
CTRL = os.path.join(sys.argv[1], "ryu", "ofproto")
from oxflow import beba, ofp13  # registers state/global_state in os-ken
class BebaExperimenter(oxf._Experimenter):
    experimenter_id = 0xBEBABEBA
oxf.BebaExperimenter = BebaExperimenter
ryu = types.ModuleType("ryu"); ryu.__path__ = []
sys.modules["ryu"] = ryu
for n in ["lib", "lib.pack_utils", "ofproto", "ofproto.ofproto_parser", "ofproto.ofproto_v1_3_parser",
          "ofproto.ofproto_v1_3", "lib.type_desc", "ofproto.oxm_fields", "ofproto.ofproto_utils",
          "ofproto.ofproto_common", "utils"]:
    sys.modules["ryu." + n] = importlib.import_module("os_ken." + n)
sys.modules["ryu"].utils = os_ken.utils
sys.modules["ryu.lib"].type_desc = os_ken.lib.type_desc
sys.modules["ryu.ofproto"].oxm_fields = oxf
sys.modules["ryu.ofproto"].ofproto_utils = os_ken.ofproto.ofproto_utils
bp_src = open(os.path.join(CTRL, "beba_v1_0.py")).read()
mod = types.ModuleType("ryu.ofproto.beba_v1_0"); mod.__file__ = "beba_v1_0.py"
sys.modules["ryu.ofproto.beba_v1_0"] = mod
exec(compile(bp_src, "beba_v1_0.py", "exec"), mod.__dict__)
sys.modules["ryu.ofproto"].beba_v1_0 = mod
# The parser module ends with a Python 2 Open vSwitch wrapper (it imports
# ryu.controller and sets); only the part before it is loaded.
src = open(os.path.join(CTRL, "beba_v1_0_parser.py")).read()
cut = src.find("from ryu.controller.controller import Datapath")
cut = src.rfind("\n\'\'\'", 0, cut)
cut = src.rfind("\n\'\'\'", 0, cut)
bp = types.ModuleType("beba_v1_0_parser")
exec(compile(src[:cut], "beba_v1_0_parser.py", "exec"), bp.__dict__)
from os_ken.ofproto import ofproto_v1_3 as ofp, ofproto_v1_3_parser as p
DP = ofp13.DP
vec = {v["name"]: v for v in json.load(open(os.path.join(REPO, "tests", "vectors", "ofp", "beba.json")))}
def ser(m, name):
    m.xid = vec[name]["xid"]; m.serialize(); return bytes(m.buf).hex()
ok = bad = 0
def cmp(name, got):
    global ok, bad
    if got == vec[name]["hex"]: ok += 1
    else:
        bad += 1; print("DIFF", name, "\n beba-ctrl", got, "\n oxflow   ", vec[name]["hex"])
KEY = [10,0,0,1,10,0,0,2]
F = [ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_IPV4_DST]
cmp("state_mod_stateful_on", ser(bp.OFPExpMsgConfigureStatefulTable(DP, 1, 0), "state_mod_stateful_on"))
cmp("state_mod_stateful_off", ser(bp.OFPExpMsgConfigureStatefulTable(DP, 0, 3), "state_mod_stateful_off"))
cmp("state_mod_lookup_extractor", ser(bp.OFPExpMsgKeyExtract(DP, mod.OFPSC_EXP_SET_L_EXTRACTOR, F, 0), "state_mod_lookup_extractor"))
cmp("state_mod_update_extractor_biflow", ser(bp.OFPExpMsgKeyExtract(DP, mod.OFPSC_EXP_SET_U_EXTRACTOR, F[::-1], 1, bit=1), "state_mod_update_extractor_biflow"))
six = [ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_ETH_DST, ofp.OXM_OF_IP_PROTO, ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_TCP_SRC, ofp.OXM_OF_TCP_DST]
cmp("state_mod_lookup_extractor_six_fields", ser(bp.OFPExpMsgKeyExtract(DP, 1, six, 2), "state_mod_lookup_extractor_six_fields"))
cmp("state_mod_set_flow_state", ser(bp.OFPExpMsgSetFlowState(DP, 2, KEY, 0, idle_timeout=1, idle_rollback=7, hard_timeout=5, hard_rollback=1, state_mask=0xff), "state_mod_set_flow_state"))
cmp("state_mod_set_flow_state_odd_key", ser(bp.OFPExpMsgSetFlowState(DP, 9, [6], 4), "state_mod_set_flow_state_odd_key"))
cmp("state_mod_del_flow_state", ser(bp.OFPExpMsgDelFlowState(DP, KEY, 0), "state_mod_del_flow_state"))
cmp("state_mod_set_global_state", ser(bp.OFPExpSetGlobalState(DP, 5, 15), "state_mod_set_global_state"))
cmp("state_mod_reset_global_state", ser(bp.OFPExpResetGlobalState(DP), "state_mod_reset_global_state"))
frame = bytes.fromhex("ffffffffffff0000000000010806") + bytes(28)
cmp("pkttmp_add", ser(bp.OFPExpMsgAddPktTmp(DP, 7, frame), "pkttmp_add"))
cmp("pkttmp_del", ser(bp.OFPExpMsgDelPktTmp(DP, 7), "pkttmp_del"))
apply = ofp.OFPIT_APPLY_ACTIONS
def fm(name, match, insts):
    return ser(p.OFPFlowMod(DP, table_id=0, priority=10, match=match, instructions=insts), name)
# beba-ctrl's SetState takes timeouts in seconds (x 1e6 on the wire)
cmp("flow_mod_set_state", fm("flow_mod_set_state", p.OFPMatch(state=0), [p.OFPInstructionActions(apply, [bp.OFPExpActionSetState(1, 0, idle_timeout=10), p.OFPActionOutput(2)])]))
cmp("flow_mod_global_state", fm("flow_mod_global_state", p.OFPMatch(global_state=(1, 1), in_port=1), [p.OFPInstructionActions(apply, [bp.OFPExpActionSetGlobalState(2, 2), bp.OFPExpActionSetGlobalState(7)])]))
cmp("flow_mod_inc_state", fm("flow_mod_inc_state", p.OFPMatch(global_state=9, state=1), [p.OFPInstructionActions(apply, [bp.OFPExpActionIncState(2)])]))
cmp("flow_mod_in_switch_pkt_gen", fm("flow_mod_in_switch_pkt_gen", p.OFPMatch(), [bp.OFPInstructionInSwitchPktGen(7, [p.OFPActionOutput(3)])]))
cmp("flow_mod_in_switch_pkt_gen_no_actions", fm("flow_mod_in_switch_pkt_gen_no_actions", p.OFPMatch(state=5), [bp.OFPInstructionInSwitchPktGen(0x01020304, [])]))
for name, f in (("state_stats", bp.OFPExpStateStatsMultipartRequest), ("state_stats_and_delete", bp.OFPExpStateStatsMultipartRequestAndDelete),
                ("state_stats_short", bp.OFPExpStateStatsMultipartRequestShort), ("state_stats_and_delete_short", bp.OFPExpStateStatsMultipartRequestAndDeleteShort)):
    cmp(name + "_request_all", ser(f(DP), name + "_request_all"))
    cmp(name + "_request_state_match", ser(f(DP, table_id=0, state=3, match=p.OFPMatch(eth_type=0x0800, ipv4_src="10.0.0.1")), name + "_request_state_match"))
cmp("global_state_stats_request", ser(bp.OFPExpGlobalStateStatsMultipartRequest(DP), "global_state_stats_request"))
# replies: beba-ctrl's parsers on the oxflow bytes
for name in ("state_stats_reply", "state_stats_short_reply"):
    raw = bytes.fromhex(vec[name]["hex"]); data = raw[24:]
    cls = bp.OFPStateStats if "short" not in name else bp.OFPStateStatsShort
    msg = types.SimpleNamespace(body=types.SimpleNamespace(data=data), datapath=types.SimpleNamespace(lookup_scope={0: F, 1: F}))
    got = cls.parser(msg, 0)
    want = [(e["table_id"], e["state"], list(bytes.fromhex(e["key"]))) for e in vec[name]["beba"]["entries"]]
    have = [(s.table_id, s.state, s.entry.key) for s in got]
    cmp_ok = have == want
    if "short" not in name:
        cmp_ok = cmp_ok and [(s.dur_sec, s.dur_nsec, s.hard_rb, s.idle_rb, s.hard_to, s.idle_to) for s in got] == [tuple(e[k] for k in ("duration_sec","duration_nsec","hard_rollback","idle_rollback","hard_timeout","idle_timeout")) for e in vec[name]["beba"]["entries"]]
    print(name, "beba-ctrl parses to the vector's values:", cmp_ok, have)
    bad += 0 if cmp_ok else 1
raw = bytes.fromhex(vec["global_state_stats_reply"]["hex"])
g_ok = bp.OFPGlobalStateStats.parser(raw, 24).global_state == 0xA5
print("global_state_stats_reply beba-ctrl parses:", g_ok)
bad += 0 if g_ok else 1
print("beba-ctrl encodes %d vectors identically, %d differently" % (ok, bad))
sys.exit(1 if bad else 0)
