"""`oxflow harmless eval` (python/oxflow/harmless/evaluate.py): its report
and its argument checks. (The measurement itself is a benchmark, run by
hand: docs/bench/harmless-2026-11-28.md.)"""

import os
import subprocess
import sys
import time

import pytest

from oxflow.harmless import evaluate
from oxflow.switch import REPO_ROOT


class Args:
    workloads, sizes, seconds, pings, ping_rounds = "l2", "100", 1, 10, 3


def test_report_has_a_row_per_measurement_and_errors_verbatim():
    results = {
        "proxy": {"ping": {"rtt_avg_ms": 0.5, "rtt_round_min_ms": 0.25,
                           "rtt_round_max_ms": 0.75, "sent": 30,
                           "received": 29},
                  "throughput": [{"workload": "l2/100", "flows": 100,
                                  "max_mpps": 0.0123, "offered_mpps": 0.1,
                                  "loss_at_max": 0.87,
                                  "no_loss_mpps": None,
                                  "switch_cpu_pct": 13.4},
                                 {"workload": "gateway",
                                  "error": evaluate.GATEWAY_SKIP_PROXY}],
                  "legacy_cpu_peak_pct": 97.4, "load": (2.5, 3.0, 4.25)},
        "s4": {"ping": {"error": "no ping reply in 30 s"},
               "throughput": [{"error": "bench exited 1 (see x.log)"}]},
    }
    text = evaluate.report(results, Args())
    assert "3 rounds of 10 pings" in text
    assert "| proxy | 0.500 | 0.250-0.750 | 29/30 |" in text
    assert "| s4 | no ping reply in 30 s | | |" in text
    assert "| proxy | l2/100 | 100 | 0.012 | 0.100 | 0.870 | - | 13 |" \
        in text
    assert "| proxy | gateway | skipped: the proxy's location tag" in text
    assert "| s4 | bench exited 1 (see x.log) |" in text
    assert "proxy: 2.5 3.0 4.2" in text
    assert "% of one core over 1 s: proxy: 97." in text


@pytest.mark.skipif(os.geteuid() != 0, reason="the eval refuses non-root "
                    "before it checks the setups")
def test_unknown_setup_is_refused():
    proc = subprocess.run(
        [sys.executable, "-m", "oxflow.harmless.evaluate", "--setups",
         "proxy,s5", "--out", "/nonexistent/never-created"],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python")))
    assert proc.returncode == 2
    assert "unknown setup 's5'" in proc.stderr


def test_cpu_peak_sees_a_busy_process():
    """The legacy switch's CPU sampler on this (busy) process: a share
    above zero; on a process that is gone: nothing."""
    with evaluate.CpuPeak(os.getpid()) as busy:
        end = time.monotonic() + 1.6
        while time.monotonic() < end:
            pass
    assert busy.peak is not None and busy.peak > 0, busy.peak
    with evaluate.CpuPeak(2 ** 22 + 1) as gone:
        time.sleep(0.6)
    assert gone.peak is None
