"""`scripts/ab_pipeline.py` (the A/B of two builds' pipelines) driving
stand-in workers that speak the protocol of `oxflow bench windows`
(crates/bench/src/windows.rs): the ratio of the sessions, the ABBA order,
a worker that forwards differently or fails, and the statistics."""

import importlib.util
import json
import os
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "ab_pipeline.py")

# A stand-in for `oxflow bench windows WORKLOAD ...`: NS ns per packet,
# FWD packets forwarded per window, every request logged to LOG.
WORKER = """#!{python}
import sys
args = sys.argv[1:]
assert args[:2] == ["bench", "windows"], args
workload = args[2]
if workload == "bad/1":
    print("oxflow bench windows: workload refused", file=sys.stderr)
    sys.exit(1)
with open({log!r}, "a") as f:
    f.write("start-" + {name!r} + "\\n")
with open({log!r} + ".argv", "a") as f:
    f.write(" ".join(args) + "\\n")
print("ready", workload, 96, flush=True)
for line in sys.stdin:
    with open({log!r}, "a") as f:
        f.write({name!r} + "\\n")
    print({ns}, {fwd}, flush=True)
"""


def worker(tmp_path, name, ns, fwd=96):
    path = tmp_path / name
    log = str(tmp_path / "order.log")
    path.write_text(WORKER.format(python=sys.executable, log=log, name=name, ns=ns, fwd=fwd))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, "--cpu", "-1", *args],
                          capture_output=True, text=True, timeout=60)


def load():
    spec = importlib.util.spec_from_file_location("ab_pipeline", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ratio_of_a_faster_b(tmp_path):
    a = worker(tmp_path, "a", 100.0)
    b = worker(tmp_path, "b", 90.0)
    out = tmp_path / "ab.json"
    r = run(a, b, "gateway/100000", "--sessions", "3", "--pairs", "4", "--warmup", "1",
            "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "| gateway/100000 | 100.0 | 90.0 | 0.900 | 0.900-0.900 | 12/12 pairs |" in r.stdout
    doc = json.loads(out.read_text())
    row = doc["rows"][0]
    assert row["sessions"] == 3 and row["pairs"] == 12
    assert [len(s["a"]) for s in row["sessions_windows"]] == [4, 4, 4]
    # Per session: warm-up and measured pairs, A B then B A in turn, the
    # worker started first alternating between sessions.
    log = (tmp_path / "order.log").read_text().split()
    starts = [x for x in log if x.startswith("start-")]
    assert starts == ["start-a", "start-b", "start-b", "start-a", "start-a", "start-b"]
    order = [x for x in log if not x.startswith("start-")]
    assert order[:10] == ["a", "b", "b", "a", "a", "b", "b", "a", "a", "b"]
    assert len(order) == 3 * 2 * 5


def test_builds_forwarding_differently_are_an_error(tmp_path):
    a = worker(tmp_path, "a", 100.0, fwd=96)
    b = worker(tmp_path, "b", 90.0, fwd=95)
    r = run(a, b, "l2/100", "--sessions", "1", "--pairs", "2")
    assert r.returncode == 1
    assert "A forwarded 96 packets of a window, B 95" in r.stdout


def test_a_worker_that_fails_is_reported(tmp_path):
    a = worker(tmp_path, "a", 100.0)
    r = run(a, a, "bad/1", "l2/100", "--sessions", "1", "--pairs", "1")
    assert r.returncode == 1
    assert "workload refused" in r.stdout
    # The other workloads still run.
    assert "| l2/100 | 100.0 | 100.0 | 1.000 |" in r.stdout


def test_bad_arguments(tmp_path):
    a = worker(tmp_path, "a", 100.0)
    r = run(a, str(tmp_path / "missing"), "l2/100")
    assert r.returncode == 2
    assert "not an executable file" in r.stderr
    r = run(a, a, "l2/100", "--pairs", "0")
    assert r.returncode == 2


def test_statistics():
    mod = load()
    assert mod.percentile([3, 1, 2, 4], 0.5) == 2.5
    assert mod.percentile([5], 0.9) == 5
    s = mod.summarize([100, 110, 120], [90, 121, 108])
    assert s["a_ns"] == 110 and s["b_ns"] == 108
    assert abs(s["ratio"] - 108 / 110) < 1e-12
    assert s["b_wins"] == 2
    assert abs(s["pair_ratio_median"] - 0.9) < 1e-12


def test_order_is_passed_on_only_when_random(tmp_path):
    """`--order random` reaches the workers as `--order random`; the
    default adds nothing (builds from before the option still serve)."""
    a = worker(tmp_path, "a", 100.0)
    r = run(a, a, "l3/100000", "--sessions", "1", "--pairs", "1", "--warmup", "0")
    assert r.returncode == 0, r.stderr
    assert "entries order" in r.stdout
    argv = (tmp_path / "order.log.argv").read_text().splitlines()
    assert argv and all("--order" not in x for x in argv), argv
    r = run(a, a, "l3/100000", "--sessions", "1", "--pairs", "1", "--warmup", "0",
            "--order", "random")
    assert r.returncode == 0, r.stderr
    assert "random order" in r.stdout
    argv = (tmp_path / "order.log.argv").read_text().splitlines()
    assert argv[-1].endswith("--order random"), argv
    r = run(a, a, "l3/100000", "--order", "sorted")
    assert r.returncode == 2 and "invalid choice" in r.stderr
