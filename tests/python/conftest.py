"""pytest configuration for the Python cross-checks.

Locates the repository root, puts python/ on sys.path, and checks that the
interpreter running pytest has the pinned dependencies (os-ken, scapy):
run `scripts/setup-python.sh` once, then `.venv/bin/python -m pytest
tests/python` (or `make test`).

Fixtures:
- repo_root: pathlib.Path of the checkout.
- forward_vectors: every vector of tests/vectors/ofp/*.json (os-ken -> oxflow).
- reverse_vectors: the vectors oxflow's Rust codec emits (oxflow -> os-ken),
  from `cargo run -p ofp --example emit_vectors`, or from $OXFLOW_EMIT_VECTORS
  (a prebuilt emit_vectors binary, or an already written JSON file).
"""

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO_ROOT / "python"
VECTOR_DIR = REPO_ROOT / "tests" / "vectors" / "ofp"

if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))

# BEBA's own controller is not part of this repository (a checkout of
# beba-eu/beba-ctrl prepared by scripts/setup-beba-ctrl.sh): its
# compatibility tests are collected only where it has been prepared, so a
# clean clone's `make test` neither runs nor skips them.
_BEBA_CTRL = pathlib.Path(os.environ.get(
    "BEBA_CTRL_SRC", REPO_ROOT / "target" / "beba-ctrl" / "src"))
collect_ignore = []
if not (_BEBA_CTRL / "ryu" / "ofproto" / "beba_v1_0_parser.py").exists():
    collect_ignore.append("test_beba_ctrl_compat.py")

try:
    import os_ken  # noqa: F401
    import scapy  # noqa: F401
except ImportError as exc:  # pragma: no cover - environment problem
    pytest.exit(
        "missing Python dependency (%s): run scripts/setup-python.sh and use "
        "%s/.venv/bin/python -m pytest tests/python" % (exc, REPO_ROOT),
        returncode=4)


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


def load_forward_vectors():
    """All forward vectors, in file then list order."""
    out = []
    for path in sorted(VECTOR_DIR.glob("*.json")):
        with open(path) as f:
            data = json.load(f)
        out += data if isinstance(data, list) else [data]
    return out


@pytest.fixture(scope="session")
def forward_vectors():
    vecs = load_forward_vectors()
    assert vecs, "no vectors in %s (python/tools/gen_ofp_vectors.py)" % (
        VECTOR_DIR)
    return vecs


def build_reverse_vectors(out_path):
    """Write oxflow's emitted vectors to out_path and return them."""
    src = os.environ.get("OXFLOW_EMIT_VECTORS")
    if src and src.endswith(".json"):
        with open(src) as f:
            return json.load(f)
    if src:
        cmd = [src, str(out_path)]
    else:
        cmd = ["cargo", "run", "-q", "-p", "ofp", "--example", "emit_vectors",
               "--", str(out_path)]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        pytest.fail("%s failed (exit %d):\n%s\n%s" % (
            " ".join(cmd), proc.returncode, proc.stdout[-4000:],
            proc.stderr[-4000:]), pytrace=False)
    with open(out_path) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def reverse_vectors(tmp_path_factory):
    path = tmp_path_factory.mktemp("emit") / "reverse_vectors.json"
    vecs = build_reverse_vectors(path)
    assert vecs, "emit_vectors wrote no vectors"
    return vecs
