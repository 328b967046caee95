"""Reverse cross-check: oxflow encodes, os-ken parses.

crates/ofp/examples/emit_vectors.rs builds messages from typed Rust values
and writes {name, hex, expect}; here os-ken parses each one (its registered
parsers, or python/oxflow/ofp13.py's parsers built from os-ken's component
parsers for the message types os-ken only serializes), every `expect` path
must hold, and re-serializing the parsed object must give back the same
bytes (os-ken's serializer where it has one, ofp13's otherwise).

Path syntax of `expect` keys: see the header of emit_vectors.rs.
"""

import re

import pytest

from os_ken.ofproto import ofproto_v1_3_parser as p

from oxflow import ofp13

# Reverse vectors os-ken cannot parse at all, and why.
NO_OSKEN_PARSE = {
    "rev_instruction_experimenter":
        "os-ken has no experimenter instruction class; its instruction "
        "parser returns None and the flow-mod parser then fails",
}

_STEP = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[-?\d+\])*)$")


def resolve(obj, path):
    """Follow a dotted path with [i] indices on an os-ken object."""
    for part in path.split("."):
        mt = _STEP.match(part)
        assert mt, "bad path element %r in %r" % (part, path)
        name, idx = mt.group(1), mt.group(2)
        if isinstance(obj, p.OFPMatch) and name not in ("oxm_fields", "length",
                                                        "type"):
            obj = obj[name]
        elif isinstance(obj, dict):
            obj = obj[name]
        else:
            assert hasattr(obj, name), "%s has no attribute %r (path %r)" % (
                type(obj).__name__, name, path)
            obj = getattr(obj, name)
        for i in re.findall(r"\[(-?\d+)\]", idx):
            obj = obj[int(i)]
    return obj


def normalize(v):
    if isinstance(v, tuple):
        return [normalize(x) for x in v]
    if isinstance(v, list):
        return [normalize(x) for x in v]
    return v


def match_fields(match):
    return {k: normalize(v) for k, v in match.items()}


def compare(actual, expected, path):
    if isinstance(actual, p.OFPMatch):
        assert isinstance(expected, dict), path
        assert match_fields(actual) == expected, path
        return
    if isinstance(actual, (bytes, bytearray)) and isinstance(expected, str):
        if expected.startswith("hex:"):
            assert bytes(actual).hex() == expected[4:], path
        else:
            text = bytes(actual).rstrip(b"\0").decode("utf-8")
            assert text == expected, path
        return
    if actual is None and expected == "hex:":
        return
    if isinstance(actual, bool):
        actual = int(actual)
    assert normalize(actual) == expected, "%s: os-ken has %r, want %r" % (
        path, actual, expected)


def check_vector(vec):
    raw = bytes.fromhex(vec["hex"])
    msg = ofp13.parse(raw)
    for path, expected in sorted(vec["expect"].items()):
        if path == "class":
            assert type(msg).__name__ == expected
            continue
        compare(resolve(msg, path), expected, path)
    return msg, raw


def test_reverse_vectors_parse_in_os_ken(reverse_vectors):
    failures = []
    checked = 0
    for vec in reverse_vectors:
        if vec["name"] in NO_OSKEN_PARSE:
            continue
        try:
            check_vector(vec)
            checked += 1
        except Exception as exc:  # collect all, report together
            failures.append("%s: %s: %s" % (vec["name"], type(exc).__name__,
                                            exc))
    print("os-ken parsed %d/%d reverse vectors (%d not parseable by os-ken)"
          % (checked, len(reverse_vectors), len(NO_OSKEN_PARSE)))
    assert not failures, "\n".join(failures)


def test_reverse_vectors_reserialize_identically(reverse_vectors):
    failures = []
    for vec in reverse_vectors:
        if vec["name"] in NO_OSKEN_PARSE:
            continue
        raw = bytes.fromhex(vec["hex"])
        try:
            msg = ofp13.parse(raw)
            xid = int.from_bytes(raw[4:8], "big")
            again = ofp13.serialize(msg, xid)
        except Exception as exc:
            failures.append("%s: %s: %s" % (vec["name"], type(exc).__name__,
                                            exc))
            continue
        if again != raw:
            who = "os-ken" if ofp13.serialized_by_osken(msg) else "ofp13"
            at = next((i for i, (a, b) in enumerate(zip(raw, again))
                       if a != b), min(len(raw), len(again)))
            failures.append("%s: %s re-serializes differently at byte %d:\n"
                            "  oxflow %s\n  %-6s %s" % (
                                vec["name"], who, at, raw.hex(), who,
                                again.hex()))
    assert not failures, "\n".join(failures)


def test_reverse_vectors_cover_everything(reverse_vectors):
    types = {bytes.fromhex(v["hex"])[1] for v in reverse_vectors}
    assert types == set(range(30)), sorted(set(range(30)) - types)
    names = {v["name"] for v in reverse_vectors}
    for n in ("rev_action_experimenter", "rev_instruction_meter",
              "rev_oxm_ipv6_exthdr_masked", "rev_mp_table_features_reply",
              "rev_mp_experimenter_reply", "rev_mp_flow_request_req_more"):
        assert n in names, n
    assert len(names) == len(reverse_vectors), "duplicate vector names"


def test_resolve_paths():
    m = p.OFPFlowMod(ofp13.DP, match=p.OFPMatch(in_port=3),
                     instructions=[p.OFPInstructionGotoTable(2)])
    assert resolve(m, "match.in_port") == 3
    assert resolve(m, "instructions[-1].table_id") == 2
    with pytest.raises(AssertionError):
        resolve(m, "nonexistent")
