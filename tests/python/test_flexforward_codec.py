"""The Python FlexForward encoder (python/oxflow/flexforward.py) against
oxflow's Rust codec: the committed vectors (tests/vectors/ofp/flexforward.json,
decoded by crates/ofp/tests/flexforward_vectors.rs) equal a fresh run of
python/tools/gen_flexforward_vectors.py; the reply parser reads the reply
vectors back; the CRT helpers give path ids that work in both modes."""

import json
import subprocess
import sys

from conftest import REPO_ROOT, VECTOR_DIR
from oxflow import flexforward as ff


def test_committed_vectors_are_fresh(tmp_path):
    subprocess.run([sys.executable, str(REPO_ROOT / "python" / "tools" /
                                        "gen_flexforward_vectors.py"),
                    str(tmp_path)], check=True, capture_output=True)
    fresh = json.loads((tmp_path / "flexforward.json").read_text())
    committed = json.loads((VECTOR_DIR / "flexforward.json").read_text())
    assert fresh == committed, (
        "flexforward.json is stale: rerun "
        "python/tools/gen_flexforward_vectors.py")


def test_reply_parses_back():
    vecs = {v["name"]: v for v in
            json.loads((VECTOR_DIR / "flexforward.json").read_text())}
    raw = bytes.fromhex(vecs["fwmode_reply_full"]["hex"])
    r = ff.parse_reply(raw[16:])
    assert r["mode"] == "keyflow" and r["fallback"] == "drop"
    assert r["hypercube"] == (5, 4, [(4, 1), (7, 2), (1, 3)])
    assert r["keyflow_key"] == 7
    assert r["vlans"] == [(10, "hypercube", "drop")]
    assert r["counters"]["fallback_drop"] == 4


def test_dual_mac_is_both_addresses():
    path = [(2, 5), (3, 7), (4, 9)]  # (port, key) per switch
    mac = ff.dual_mac(3, path)
    value = int(mac.replace(":", ""), 16)
    assert value >> 16 == 3
    assert all(value % k == p for p, k in path)
    try:
        ff.dual_mac(3, [(1, 300), (2, 301)])
    except ValueError:
        pass
    else:
        raise AssertionError("a key product over 2**16 must be refused")
