"""`oxflow bench settle`: `make bench` waits for a switch to go quiet
before it pings through it (the throughput experiment's wait, from the
command line). A process that works for a while is waited for, an idle
one costs the two quiet windows only, one that never stops is given up on
at the limit, and a process that is gone is not taken for quiet."""

import os
import subprocess
import sys
import time

from oxflow.switch import oxflow_bin

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A process that spins for SPIN seconds (a switch busy with its flows),
# then sleeps.
SPIN = """
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
time.sleep(120)
"""


def settle(pid, max_s, pct=5):
    """(exit code, seconds waited as printed, wall seconds)."""
    t = time.monotonic()
    r = subprocess.run([oxflow_bin(), "bench", "settle", str(pid), "--max", str(max_s),
                        "--pct", str(pct)],
                       capture_output=True, text=True, timeout=max_s + 30)
    return r.returncode, float(r.stdout.strip()), time.monotonic() - t


def spinner(seconds):
    return subprocess.Popen([sys.executable, "-c", SPIN, str(seconds)])


def settle_on(p, max_s):
    """`settle` on process `p`, which is killed afterwards."""
    try:
        return settle(p.pid, max_s)
    finally:
        p.kill()
        p.wait()


def test_waits_for_a_busy_process_to_go_quiet():
    rc, waited, wall = settle_on(spinner(2.0), 20)
    assert rc == 0
    # Busy for 2 s, then two quiet half-second windows.
    assert waited >= 2.0, waited
    assert waited < 8.0, waited
    assert abs(wall - waited) < 1.0


def test_an_idle_process_costs_two_windows():
    rc, waited, _ = settle_on(subprocess.Popen(["sleep", "120"]), 20)
    assert rc == 0
    assert 0.9 <= waited < 3.0, waited


def test_a_process_that_never_stops_is_given_up_on():
    rc, waited, _ = settle_on(spinner(120), 2)
    assert rc == 1
    assert 2.0 <= waited < 4.0, waited


def test_a_process_that_is_gone_is_not_quiet():
    p = subprocess.Popen(["true"])
    p.wait()
    rc, waited, _ = settle(p.pid, 5)
    assert rc == 1
    assert waited < 1.0, waited


def test_make_bench_refuses_a_settle_max_that_is_not_whole():
    """SETTLE_MAX is whole seconds: a fraction is refused up front
    (before the root check and the build), naming the variable."""
    env = dict(os.environ, SETTLE_MAX="2.5")
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts", "bench.sh")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2, r
    assert "SETTLE_MAX=2.5: want a whole number" in r.stderr, r.stderr


def test_settle_refuses_a_bad_limit():
    r = subprocess.run([oxflow_bin(), "bench", "settle", "1", "--max=-1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2, r
    assert "--max -1: want 0 to 3600 seconds" in r.stderr, r.stderr
