#!/usr/bin/env python3
"""Write tests/vectors/ofp/flexforward.json: FlexForward experimenter vectors.

Every vector is a whole OpenFlow 1.3 message whose FlexForward part is
packed by `oxflow.flexforward` (the layouts of docs/flexforward.md) and
whose OpenFlow framing is serialized by os-ken (OFPExperimenter) or, for the
errors, packed here from the 1.3 layout. `flex` holds the typed values the
Rust codec must decode the FlexForward part to
(`crates/ofp/tests/flexforward_vectors.rs`); a vector with `refused` holds
the error code the codec must refuse it with instead.

    python/tools/gen_flexforward_vectors.py [OUT_DIR]
"""

import struct
import sys

from exp_vectors import osken_bytes, raw_message, write, xid_of
from os_ken.ofproto import ofproto_v1_3 as ofp

from oxflow import flexforward as ff
from oxflow import ofp13

DP = ofp13.DP


def vectors():
    out = []

    def add(name, kind, raw, typed, refused=None):
        v = {"name": name, "category": "flexforward", "kind": kind,
             "msg_type": raw[1], "xid": xid_of(name),
             "source": "oxflow.flexforward + os-ken", "hex": raw.hex(),
             "osken_parse": False, "flex": typed}
        if refused is not None:
            v["refused"] = refused
        out.append(v)

    def msg(name, exp_type, data, typed, refused=None):
        add(name, "message",
            osken_bytes(ff.message(DP, exp_type, data), xid_of(name)), typed,
            refused)

    # --- SET_FWMODE, each scope
    for mode in ("openflow", "hypercube", "keyflow"):
        msg("set_fwmode_" + mode, ff.SET_FWMODE, ff.set_fwmode_data(mode),
            {"mode": mode, "fallback": "openflow", "scope": "switch"})
    msg("set_fwmode_keyflow_drop", ff.SET_FWMODE,
        ff.set_fwmode_data("keyflow", fallback="drop"),
        {"mode": "keyflow", "fallback": "drop", "scope": "switch"})
    msg("set_fwmode_ports", ff.SET_FWMODE,
        ff.set_fwmode_data("hypercube", ports=[1, 3]),
        {"mode": "hypercube", "fallback": "openflow", "scope": "ports",
         "ports": [1, 3]})
    msg("set_fwmode_vlan", ff.SET_FWMODE,
        ff.set_fwmode_data("keyflow", vlan=10),
        {"mode": "keyflow", "fallback": "openflow", "scope": "vlan",
         "vlan": 10})
    msg("set_fwmode_clear_port", ff.SET_FWMODE,
        ff.set_fwmode_data(None, ports=[2]),
        {"mode": "clear", "fallback": "openflow", "scope": "ports",
         "ports": [2]})
    msg("set_fwmode_clear_vlan", ff.SET_FWMODE,
        ff.set_fwmode_data("clear", vlan=4095),
        {"mode": "clear", "fallback": "openflow", "scope": "vlan",
         "vlan": 4095})

    # --- SET_HYPERCUBE, SET_KEYFLOW, GET_FWMODE
    msg("set_hypercube", ff.SET_HYPERCUBE,
        ff.set_hypercube_data(5, [(4, 1), (7, 2), (1, 3)], local_port=4),
        {"address": 5, "local_port": 4,
         "neighbours": [[4, 1], [7, 2], [1, 3]]})
    msg("set_hypercube_no_neighbours", ff.SET_HYPERCUBE,
        ff.set_hypercube_data(0, []),
        {"address": 0, "local_port": 0, "neighbours": []})
    msg("set_keyflow", ff.SET_KEYFLOW, ff.set_keyflow_data(7), {"key": 7})
    msg("get_fwmode", ff.GET_FWMODE, ff.get_fwmode_data(), {})

    # --- FWMODE_REPLY
    msg("fwmode_reply_default", ff.FWMODE_REPLY, ff.fwmode_reply_data(),
        {"mode": "openflow", "fallback": "openflow", "hypercube": None,
         "keyflow_key": None, "ports": [], "vlans": [],
         "counters": [0, 0, 0, 0]})
    msg("fwmode_reply_full", ff.FWMODE_REPLY,
        ff.fwmode_reply_data(
            "keyflow", "drop", hypercube=(5, 4, [(4, 1), (7, 2), (1, 3)]),
            keyflow_key=7, ports=[(2, "openflow", "openflow")],
            vlans=[(10, "hypercube", "drop")], counters=(1, 2, 3, 4)),
        {"mode": "keyflow", "fallback": "drop",
         "hypercube": {"address": 5, "local_port": 4,
                       "neighbours": [[4, 1], [7, 2], [1, 3]]},
         "keyflow_key": 7, "ports": [[2, "openflow", "openflow"]],
         "vlans": [[10, "hypercube", "drop"]], "counters": [1, 2, 3, 4]})

    # --- malformed bodies the codec refuses (the switch answers the code)
    C = ff.ERROR_CODES
    msg("bad_unknown_mode", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 3, 0, 0, 0, 0), {}, C["UNKNOWN_MODE"])
    msg("bad_clear_switch", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 0xFF, 0, 0, 0, 0), {}, C["BAD_SCOPE"])
    msg("bad_scope_kind", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 1, 0, 7, 0, 0), {}, C["BAD_SCOPE"])
    msg("bad_vlan_id", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 1, 0, 2, 0, 4096), {}, C["BAD_SCOPE"])
    msg("bad_fallback", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 1, 2, 0, 0, 0), {}, C["BAD_FALLBACK"])
    msg("bad_fwmode_len", ff.SET_FWMODE,
        struct.pack("!BBBxHH", 1, 0, 1, 2, 0) + struct.pack("!I", 1), {},
        C["BAD_LEN"])
    msg("bad_hypercube_len", ff.SET_HYPERCUBE,
        ff.set_hypercube_data(5, [(4, 1)])[:-4], {}, C["BAD_LEN"])
    msg("bad_keyflow_len", ff.SET_KEYFLOW, struct.pack("!I", 7), {},
        C["BAD_LEN"])
    msg("bad_exp_type", 9, b"", {}, C["BAD_MESSAGE"])

    # --- errors, every code
    bad = osken_bytes(ff.message(DP, 9, b""), 0)
    for code, cname in enumerate(ff.ERRORS):
        name = "error_" + cname.lower()
        body = struct.pack("!HHI", ofp.OFPET_EXPERIMENTER, code,
                           ff.FLEX_EXPERIMENTER) + bad
        add(name, "error", raw_message(ofp.OFPT_ERROR, body, xid_of(name)),
            {"code": code})
    return out


def main(argv):
    write(argv, "flexforward.json", vectors())


if __name__ == "__main__":
    main(sys.argv)
