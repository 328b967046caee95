#!/usr/bin/env python3
"""A/B of two oxflow builds, pipeline only, side by side on one core.

    scripts/ab_pipeline.py BIN_A BIN_B WORKLOAD/SIZE [WORKLOAD/SIZE ...]
    scripts/ab_pipeline.py /tmp/oxflow-old target/release/oxflow gateway/100000

On a machine whose speed moves by tens of percent from minute to minute
(two vCPUs of a busy host), two builds measured one after the other cannot
be ranked to 5 %. Here each build runs `oxflow bench windows` (its own
process with the workload installed, pinned to the same core) and the
two are asked for short windows in turn, A B B A A B ..., so the windows
compared lie within a fraction of a second of each other and see the same
host. The first `--warmup` pairs are dropped (caches, page faults).

One pair of processes is not enough, though: the same build run twice
side by side differed by up to 20 % at 100K entries here (A against A:
1.20 in one session, 0.96 in the next), the luck of where each process's
memory lands (which host pages back it, how its tables fall into the
caches). So each workload runs in `--sessions` sessions, each with two
fresh processes (the one started first alternating), and the verdict is
the median of the sessions' ratios, with their range beside it.

Printed per workload: the median ns per packet of each build over all
windows, the median of the sessions' ratios of medians (B / A: below 1
means B is faster), the lowest and highest session ratio, and how many
pairs of windows B won. A build forwarding a different number of packets
than the other is an error: the two are not doing the same work.
`--json FILE` writes every window too. Needs no root and no network; see
crates/bench/src/windows.rs for the workers' side.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys


class WorkerError(Exception):
    pass


class Worker:
    """One build's `oxflow bench windows` process (the protocol is in
    crates/bench/src/windows.rs)."""

    def __init__(self, argv, label):
        self.label = label
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        line = self.proc.stdout.readline().split()
        if len(line) != 3 or line[0] != "ready":
            raise WorkerError(f"{label}: did not start ({self.error()})")
        self.workload = line[1]
        self.per_window = int(line[2])

    def error(self):
        """What the worker said on stderr after it exited."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        err = self.proc.stderr.read().strip()
        self.proc.wait()
        return err or f"exit status {self.proc.returncode}"

    def window(self):
        """One window: (ns per packet, packets forwarded)."""
        try:
            self.proc.stdin.write("run\n")
            self.proc.stdin.flush()
        except OSError:
            raise WorkerError(f"{self.label}: gone ({self.error()})")
        line = self.proc.stdout.readline().split()
        if len(line) != 2:
            raise WorkerError(f"{self.label}: no window ({self.error()})")
        return float(line[0]), int(line[1])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def percentile(xs, q):
    """The q-quantile (0..1) of xs by linear interpolation."""
    s = sorted(xs)
    if not s:
        raise ValueError("no values")
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(a, b):
    """Paired windows a[i], b[i] (ns per packet) -> the figures printed."""
    if len(a) != len(b) or not a:
        raise ValueError("want as many windows of A as of B, at least one")
    ratios = [y / x for x, y in zip(a, b)]
    med_a, med_b = statistics.median(a), statistics.median(b)
    return {
        "pairs": len(a),
        "a_ns": med_a,
        "b_ns": med_b,
        "ratio": med_b / med_a,
        "pair_ratio_p10": percentile(ratios, 0.1),
        "pair_ratio_median": statistics.median(ratios),
        "pair_ratio_p90": percentile(ratios, 0.9),
        "b_wins": sum(1 for r in ratios if r < 1.0),
    }


def session(argv_a, argv_b, pairs, warmup, b_first=False):
    """One session: two fresh workers (B's started first if `b_first`),
    `warmup` + `pairs` pairs of windows; returns (summary, windows of A,
    windows of B)."""
    first, second = (argv_b, "B"), (argv_a, "A")
    if not b_first:
        first, second = second, first
    one = Worker(*first)
    try:
        two = Worker(*second)
    except WorkerError:
        one.close()
        raise
    a, b = (two, one) if b_first else (one, two)
    try:
        if (a.workload, a.per_window) != (b.workload, b.per_window):
            raise WorkerError(f"A serves {a.workload} x{a.per_window}, B {b.workload} x{b.per_window}")
        wa, wb = [], []
        for k in range(warmup + pairs):
            # A B, then B A: a drift within a pair favours neither.
            order = (a, b) if k % 2 == 0 else (b, a)
            got = {w.label: w.window() for w in order}
            (ta, fa), (tb, fb) = got["A"], got["B"]
            if fa != fb:
                raise WorkerError(
                    f"{a.workload}: A forwarded {fa} packets of a window, B {fb}: "
                    "the builds do not do the same work")
            if k >= warmup:
                wa.append(ta)
                wb.append(tb)
        return summarize(wa, wb), wa, wb
    finally:
        a.close()
        b.close()


def measure(argv_a, argv_b, sessions, pairs, warmup):
    """`sessions` sessions (module comment): returns the summary of all
    windows with the median, lowest and highest of the sessions' ratios,
    and every session's windows."""
    runs = [session(argv_a, argv_b, pairs, warmup, b_first=i % 2 == 1) for i in range(sessions)]
    wa = [t for _, a, _ in runs for t in a]
    wb = [t for _, _, b in runs for t in b]
    s = summarize(wa, wb)
    ratios = [r["ratio"] for r, _, _ in runs]
    s.update(sessions=sessions, session_ratio=statistics.median(ratios),
             session_ratio_min=min(ratios), session_ratio_max=max(ratios))
    return s, [(a, b) for _, a, b in runs]


def worker_argv(binary, workload, args):
    argv = [binary, "bench", "windows", workload, "--traffic", args.traffic,
            "--batches", str(args.batches)]
    if args.order != "entries":
        # (Only then: builds from before the option still serve the rest.)
        argv += ["--order", args.order]
    if args.cpu is not None and shutil.which("taskset"):
        argv = ["taskset", "-c", str(args.cpu)] + argv
    return argv


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bin_a")
    ap.add_argument("bin_b")
    ap.add_argument("workloads", nargs="+", metavar="WORKLOAD/SIZE")
    ap.add_argument("--sessions", type=int, default=6,
                    help="sessions, each with two fresh processes (default 6)")
    ap.add_argument("--pairs", type=int, default=20,
                    help="pairs of windows measured per session (default 20)")
    ap.add_argument("--warmup", type=int, default=2, help="pairs dropped first (default 2)")
    ap.add_argument("--batches", type=int, default=4000,
                    help="batches of 32 frames per window (default 4000)")
    ap.add_argument("--traffic", default="spread", choices=["spread", "tse"])
    ap.add_argument("--order", default="entries", choices=["entries", "random"],
                    help="the frames' order: as the workload lists them, or one fixed "
                         "random permutation (no entry-after-entry locality)")
    ap.add_argument("--cpu", type=int, default=1,
                    help="core both builds are pinned to (default 1; -1: not pinned)")
    ap.add_argument("--json", metavar="FILE", help="write every window there")
    args = ap.parse_args(argv)
    if args.sessions < 1 or args.pairs < 1 or args.warmup < 0:
        ap.error("--sessions and --pairs must be at least 1, --warmup at least 0")
    if args.cpu is not None and args.cpu < 0:
        args.cpu = None
    for b in (args.bin_a, args.bin_b):
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error(f"{b}: not an executable file")
    print(f"A = {args.bin_a}\nB = {args.bin_b}")
    print(f"{args.sessions} sessions of {args.pairs} pairs of {args.batches * 32}-packet windows, "
          f"{args.traffic} traffic, {args.order} order, core {'any' if args.cpu is None else args.cpu}")
    print()
    print("| workload | A ns/pkt | B ns/pkt | B/A (median of sessions) | sessions min-max "
          "| B faster in |")
    print("|---|---|---|---|---|---|")
    out = []
    status = 0
    for w in args.workloads:
        try:
            s, windows = measure(worker_argv(args.bin_a, w, args), worker_argv(args.bin_b, w, args),
                                 args.sessions, args.pairs, args.warmup)
        except WorkerError as e:
            print(f"| {w} | failed: {e} | | | | |")
            status = 1
            continue
        print(f"| {w} | {s['a_ns']:.1f} | {s['b_ns']:.1f} | {s['session_ratio']:.3f} | "
              f"{s['session_ratio_min']:.3f}-{s['session_ratio_max']:.3f} | "
              f"{s['b_wins']}/{s['pairs']} pairs |", flush=True)
        out.append({"workload": w, **s,
                    "sessions_windows": [{"a": a, "b": b} for a, b in windows]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"a": args.bin_a, "b": args.bin_b, "traffic": args.traffic,
                       "batches": args.batches, "rows": out}, f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
