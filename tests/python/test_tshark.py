"""Third opinion: Wireshark's OpenFlow 1.3 dissector on every vector.

All vectors (forward: os-ken -> oxflow; reverse: oxflow -> os-ken) go into a
pcap as one TCP control channel to port 6653, one OpenFlow message per
segment (python/oxflow/pcap.py). tshark must decode every message frame as
OpenFlow 1.3 (`openflow_v4`) with the right type and xid, and raise no expert
item of severity warning or error (malformed, bounds exceptions).

Checked with TShark 4.0.17 (Debian 12). "Note"-level items such as
"Experimenter action body." only say the dissector does not decode
experimenter payloads and are accepted.

TSHARK_ALLOW lists vectors on which the dissector itself is wrong; each
entry names the vector and the dissector bug. Set OXFLOW_SKIP_TSHARK=1 to
skip when tshark is not installed (it is installed by scripts/setup.sh).
"""

import os
import shutil
import subprocess

import pytest

from conftest import load_forward_vectors

from oxflow.pcap import write_pcap

# Expert severities (epan/proto.h): PI_NOTE 0x400000, PI_WARN 0x600000,
# PI_ERROR 0x800000.
PI_WARN = 0x600000

# Dissector bugs in packet-openflow_v4.c (checked against Wireshark 4.0):
_METER_BAND_BUG = (
    "dissect_openflow_meter_band_v4: the experimenter band's undecoded-body "
    "item is added with length `offset - 16 + band_len` (absolute offset) "
    "instead of `band_len - 16`, so any OFPMBT_EXPERIMENTER band runs past "
    "the message and raises a bounds exception")
_EXP_MP_REPLY_BUG = (
    "dissect_openflow_multipart_reply_v4, OFPMP_EXPERIMENTER: the body item "
    "is added at offset 24 with length `length - 16` (should be length - "
    "24), 8 bytes past the end of every experimenter multipart reply")
_TRUNCATED_ERROR_DATA = (
    "the error dissector decodes the data as a whole OpenFlow message using "
    "the embedded header's length; spec 1.3.5 section 7.4.4 says data holds (at "
    "least 64 bytes of) the failed request, so a truncated request is valid "
    "but reported malformed")

_NOT_A_MESSAGE = (
    "corpus bytes whose payload is not what the dissector expects: error "
    "data that is not the failed request ('fugafuga', an 8-byte header of a "
    "flow-mod) or a packet-in frame of 4 bytes; the dissector decodes them "
    "as a message / Ethernet frame and runs out of bytes")

TSHARK_ALLOW = {
    # forward vectors (tests/vectors/ofp)
    "meter_mod_experimenter": _METER_BAND_BUG,
    "meter_mod_three_bands": _METER_BAND_BUG,
    "meter_config_reply": _METER_BAND_BUG,
    "experimenter_reply": _EXP_MP_REPLY_BUG,
    # the BEBA experimenter multipart replies (beba.json) hit the same bug
    **{name: _EXP_MP_REPLY_BUG for name in (
        "global_state_stats_reply", "state_stats_reply",
        "state_stats_reply_empty", "state_stats_short_reply",
        "state_stats_short_reply_empty", "state_stats_and_delete_reply",
        "state_stats_and_delete_reply_empty",
        "state_stats_and_delete_short_reply",
        "state_stats_and_delete_short_reply_empty")},
    "error_flow_mod_failed_truncated_request": _TRUNCATED_ERROR_DATA,
    # corpus (os-ken's own test captures, category "corpus")
    "4-15-ofp_error_msg": _NOT_A_MESSAGE,
    "libofproto-OFP13-error_msg": _NOT_A_MESSAGE,
    "libofproto-OFP13-packet_in": _NOT_A_MESSAGE,
    "4-45-ofp_meter_mod": _METER_BAND_BUG,
    "4-62-ofp_experimenter_reply": _EXP_MP_REPLY_BUG,
    # reverse vectors (crates/ofp/examples/emit_vectors.rs)
    "rev_meter_mod_experimenter_band": _METER_BAND_BUG,
    "rev_mp_experimenter_reply": _EXP_MP_REPLY_BUG,
    "rev_error_truncated_request": _TRUNCATED_ERROR_DATA,
}


def tshark_path():
    path = shutil.which("tshark")
    if path is None:
        if os.environ.get("OXFLOW_SKIP_TSHARK") == "1":
            pytest.skip("tshark not installed (OXFLOW_SKIP_TSHARK=1)")
        pytest.fail("tshark not installed: apt-get install tshark "
                    "(or set OXFLOW_SKIP_TSHARK=1)", pytrace=False)
    return path


def tshark_version():
    out = subprocess.run([tshark_path(), "--version"], capture_output=True,
                         text=True).stdout
    return out.splitlines()[0] if out else "unknown"


def dissect(vectors, tmp_path):
    """Run tshark on the vectors; return {name: problem or None}."""
    tshark = tshark_path()
    pcap = tmp_path / "ofp.pcap"
    msgs = [bytes.fromhex(v["hex"]) for v in vectors]
    frames = write_pcap(str(pcap), msgs)
    cmd = [tshark, "-n", "-r", str(pcap), "-d", "tcp.port==6653,openflow",
           "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=|",
           "-e", "frame.number", "-e", "frame.protocols",
           "-e", "openflow_v4.type", "-e", "openflow_v4.xid",
           "-e", "_ws.expert.severity", "-e", "_ws.expert.message"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = {}
    for line in proc.stdout.splitlines():
        cols = line.split("\t")
        cols += [""] * (6 - len(cols))
        rows[int(cols[0])] = cols
    result = {}
    for vec, raw, frame in zip(vectors, msgs, frames):
        _, protos, types, xids, sev, expert = rows[frame]
        problem = None
        if "openflow_v4" not in protos.split(":"):
            problem = "not decoded as openflow_v4 (%s)" % protos
        elif types.split("|")[0] != str(raw[1]):
            problem = "type %s, want %d" % (types, raw[1])
        elif xids.split("|")[0] != str(int.from_bytes(raw[4:8], "big")):
            problem = "xid %s" % xids
        else:
            bad = [m for s, m in zip(sev.split("|"), expert.split("|"))
                   if s and int(s) >= PI_WARN]
            if bad:
                problem = "expert: " + "; ".join(bad)
        result[vec["name"]] = problem
    return result


def check(vectors, tmp_path):
    result = dissect(vectors, tmp_path)
    print("tshark:", tshark_version())
    failures, allowed = [], []
    for name, problem in sorted(result.items()):
        if problem is None:
            continue
        if name in TSHARK_ALLOW:
            allowed.append("%s: %s [allowed: %s]" % (
                name, problem, TSHARK_ALLOW[name]))
        else:
            failures.append("%s: %s" % (name, problem))
    clean = sum(1 for p in result.values() if p is None)
    print("%d/%d frames clean, %d allow-listed dissector problems" % (
        clean, len(result), len(allowed)))
    for a in allowed:
        print("  ALLOWED", a)
    assert not failures, "\n".join(failures)


def test_tshark_forward_vectors(tmp_path):
    check(load_forward_vectors(), tmp_path)


def test_tshark_reverse_vectors(reverse_vectors, tmp_path):
    check(reverse_vectors, tmp_path)


def test_allow_list_reasons_are_real(tmp_path):
    # Every forward allow-list entry must still exist as a vector.
    names = {v["name"] for v in load_forward_vectors()}
    for name in TSHARK_ALLOW:
        if not name.startswith("rev_"):
            assert name in names, "stale allow-list entry " + name
