"""The Python BEBA encoder (python/oxflow/beba.py) against oxflow's Rust codec.

- The committed vectors (tests/vectors/ofp/beba.json, checked by
  crates/ofp/tests/beba_vectors.rs) equal a fresh run of
  python/tools/gen_beba_vectors.py, i.e. of today's oxflow.beba.
- Messages built here by oxflow.beba through os-ken are decoded by the Rust
  codec (crates/ofp/examples/beba_decode.rs), which must print the values
  they were built from; malformed ones must be refused with BEBA's codes.
- The Python parsers read the switch-to-controller vectors back.
"""

import json
import struct
import subprocess
import sys

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

from conftest import REPO_ROOT, VECTOR_DIR
from oxflow import beba
from oxflow import ofp13

DP = ofp13.DP
ALL = 0xFFFFFFFF


def wire(msg):
    msg.xid = 1
    msg.serialize()
    return bytes(msg.buf).hex()


def rust_decode(hexes):
    proc = subprocess.run(
        ["cargo", "run", "-q", "-p", "ofp", "--example", "beba_decode", "--"]
        + hexes, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_committed_vectors_are_fresh(tmp_path):
    subprocess.run([sys.executable,
                    str(REPO_ROOT / "python" / "tools" / "gen_beba_vectors.py"),
                    str(tmp_path)], check=True, capture_output=True)
    fresh = json.loads((tmp_path / "beba.json").read_text())
    committed = json.loads((VECTOR_DIR / "beba.json").read_text())
    assert fresh == committed, (
        "beba.json is stale: rerun python/tools/gen_beba_vectors.py")


def flow_mod(match, insts):
    return p.OFPFlowMod(DP, table_id=0, priority=1, match=match,
                        instructions=insts)


class BadOxm:
    """A message whose masked `state` field gets value bits outside its
    mask (os-ken masks values before packing them)."""

    def __init__(self, msg):
        self.msg = msg

    def hex(self):
        good = beba.oxm_bytes(beba.OXM_STATE, 1, 1).hex()
        bad = beba.oxm_bytes(beba.OXM_STATE, 3, 1).hex()
        return wire(self.msg).replace(good, bad)


def test_rust_decodes_what_python_encodes():
    key = bytes(range(1, 14))
    apply = ofp.OFPIT_APPLY_ACTIONS
    cases = [
        (beba.state_mod(DP, beba.stateful_table_config_data(7, True)),
         "StateMod(StatefulTableConfig { table_id: 7, stateful: true })"),
        (beba.state_mod(DP, beba.extractor_data(
            3, [ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_VLAN_VID], update=True,
            bit=True)),
         "StateMod(SetUpdateExtractor(Extractor { table_id: 3, bit: true, "
         "fields: [%d, %d] }))" % (ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_VLAN_VID)),
        (beba.state_mod(DP, beba.set_flow_state_data(
            1, key, 11, 0xF0, hard_rollback=12, idle_rollback=13,
            hard_timeout_us=14, idle_timeout_us=15)),
         "StateMod(SetFlowState(SetFlowState { table_id: 1, key: %s, "
         "state: 11, state_mask: 240, hard_rollback: 12, idle_rollback: 13, "
         "hard_timeout: 14, idle_timeout: 15 }))"
         % str(list(key))),
        (beba.state_mod(DP, beba.del_flow_state_data(2, b"\x01\x02")),
         "StateMod(DelFlowState { table_id: 2, key: [1, 2] })"),
        (beba.state_mod(DP, beba.set_global_state_data(0x30, 0xF0)),
         "StateMod(SetGlobalState { value: 48, mask: 240 })"),
        (beba.state_mod(DP, beba.reset_global_state_data()),
         "StateMod(ResetGlobalState)"),
        (beba.pkttmp_mod(DP, beba.add_pkttmp_data(70000, b"\xaa\xbb")),
         "PktTmpMod(Add { pkttmp_id: 70000, data: [170, 187] })"),
        (beba.pkttmp_mod(DP, beba.del_pkttmp_data(70000)),
         "PktTmpMod(Delete { pkttmp_id: 70000 })"),
        (beba.message(DP, beba.EXP_STATE_CHANGED,
                      beba.state_changed_data(4, 5, 6, ALL, b"\x09")),
         "StateChanged(StateChanged { table_id: 4, old_state: 5, "
         "new_state: 6, state_mask: 4294967295, key: [9] })"),
        (beba.state_stats_request(DP, table_id=2, state=8, short=True,
                                  delete=True),
         "StateStats(StateStatsRequest { kind: AndDeleteShort, table_id: 2, "
         "state: Some(8), match_: Match { fields: [] } })"),
        (beba.state_stats_request(DP),
         "StateStats(StateStatsRequest { kind: Full, table_id: 255, "
         "state: None, match_: Match { fields: [] } })"),
        (beba.global_state_stats_request(DP), "GlobalStateStats"),
        (flow_mod(p.OFPMatch(state=(4, 6), global_state=1), [
            p.OFPInstructionActions(apply, [
                beba.set_state_action(9, 2, state_mask=0xF, bit=True,
                                      idle_timeout_us=100),
                beba.inc_state_action(3),
                beba.set_global_state_action(1, 3)])]),
         "State(4, Some(6)) GlobalState(1, None) SetState(SetState { "
         "state: 9, state_mask: 15, table_id: 2, hard_rollback: 0, "
         "idle_rollback: 0, hard_timeout: 0, idle_timeout: 100, bit: true }) "
         "IncState { table_id: 3 } SetGlobalState { value: 1, mask: 3 }"),
        (flow_mod(p.OFPMatch(), [beba.InSwitchPktGen(5, [
            p.OFPActionOutput(1, 0),
            p.OFPActionSetField(eth_dst="00:00:00:00:00:02")])]),
         "InSwitchPktGen { pkttmp_id: 5, actions: [Output { port: 1, "
         "max_len: 0 }, SetField(EthDst([0, 0, 0, 0, 0, 2], None))] }"),
        # refusals: unknown command, value bits outside the mask
        (beba.state_mod(DP, struct.pack("!Bx", 9)),
         'refused: BebaDecodeError { refusal: Beba(StateModBadCommand), '
         'what: "state_mod: command" }'),
        (BadOxm(flow_mod(p.OFPMatch(state=(1, 1)), [])),
         'refused: BebaDecodeError { refusal: Beba(BadMatchWildcard), '
         'what: "beba oxm: value bits outside mask" }'),
    ]
    got = rust_decode([m.hex() if isinstance(m, BadOxm) else wire(m)
                       for m, _ in cases])
    assert got == [want for _, want in cases]


def vector(name):
    for v in json.loads((VECTOR_DIR / "beba.json").read_text()):
        if v["name"] == name:
            return v
    raise KeyError(name)


def test_python_parses_switch_messages():
    v = vector("state_changed")
    data = bytes.fromhex(v["hex"])[16:]
    t = v["beba"]
    assert beba.parse_state_changed(data) == (
        t["table_id"], t["old_state"], t["new_state"], t["state_mask"],
        bytes.fromhex(t["key"]))
    for name, short in (("state_stats_reply", False),
                        ("state_stats_short_reply", True)):
        v = vector(name)
        entries = beba.parse_state_stats(bytes.fromhex(v["hex"])[24:], short)
        want = [dict(e, key=bytes.fromhex(e["key"]))
                for e in v["beba"]["entries"]]
        assert entries == want
    for name in ("flow_notification", "flow_notification_one_instruction"):
        v = vector(name)
        t = v["beba"]
        table_id, ntf_type, match, insts = beba.parse_flow_notification(
            bytes.fromhex(v["hex"])[16:])
        assert (table_id, ntf_type, match.length, insts) == (
            t["table_id"], t["ntf_type"], t["match_len"], t["instructions"])
    v = vector("global_state_stats_reply")
    assert beba.parse_global_state_stats(
        bytes.fromhex(v["hex"])[24:]) == v["beba"]["global_state"]


def test_oxm_fields_registered_in_os_ken():
    buf = bytearray()
    p.OFPMatch(state=3, global_state=(1, 3)).serialize(buf, 0)
    assert beba.oxm_bytes(beba.OXM_STATE, 3) in buf
    assert beba.oxm_bytes(beba.OXM_GLOBAL_STATE, 1, 3) in buf
    parsed = p.OFPMatch.parser(bytes(buf), 0)
    assert parsed["state"] == 3 and parsed["global_state"] == (1, 3)
