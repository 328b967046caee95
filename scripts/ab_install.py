#!/usr/bin/env python3
"""A/B of two oxflow builds' flow installation: N flow-mods + barrier.

    sudo scripts/ab_install.py BIN_A BIN_B [--rounds 8] [--workloads l2,l3] [--size 100000]
    sudo scripts/ab_install.py /tmp/A/oxflow target/release/oxflow --workloads l2,lb_acl

Each round runs `oxflow bench run throughput` once with each build, in
turn (A B, then B A, ...), with the build itself as the switch
(`--set oxflow_bin=`), and reads the "installed in" time of every
workload: the time from the first of the workload's flow-mods to the
barrier reply, on a fresh switch started by the bench on core 1 (the
`install_s` column of `make bench`). The load windows after each install
are kept short (`seconds=0.2`, no search); their figures are not used.

On this 2-vCPU VM one install of 100K flows moves by 30 % from run to
run (the switch's first touch of fresh memory costs what the host makes
it cost), so the verdict is the median of each build's rounds, with the
range beside it. Needs root (network namespaces), like the bench.
"""

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

INSTALLED = re.compile(r"^(\S+): installed in ([0-9.]+) s", re.M)


def run(binary, workloads, size):
    """One bench run of `binary`: {workload row: install seconds}."""
    out = tempfile.mkdtemp(prefix="ab_install.")
    try:
        p = subprocess.run(
            [binary, "bench", "run", "throughput", "--switch", "oxflow",
             "--out", out, "--set", f"oxflow_bin={binary}",
             "--set", f"workloads={workloads}", "--set", f"sizes={size}",
             "--set", "traffic=spread", "--set", "seconds=0.2",
             "--set", "search=false"],
            capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    got = {m.group(1): float(m.group(2)) for m in INSTALLED.finditer(p.stdout + p.stderr)}
    if p.returncode != 0 or not got:
        sys.exit(f"ab_install: {binary} failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--workloads", default="l2")
    ap.add_argument("--size", type=int, default=100000)
    args = ap.parse_args()
    times = {args.a: {}, args.b: {}}
    for r in range(args.rounds):
        order = (args.a, args.b) if r % 2 == 0 else (args.b, args.a)
        for binary in order:
            for row, s in run(binary, args.workloads, args.size).items():
                times[binary].setdefault(row, []).append(s)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{args.rounds} rounds; A = {args.a}, B = {args.b}\n")
    print("| workload | A median s | A range | B median s | B range | B/A |")
    print("|---|---|---|---|---|---|")
    for row in times[args.a]:
        a, b = times[args.a][row], times[args.b].get(row, [])
        if not b:
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"| {row} | {ma:.3f} | {min(a):.3f}-{max(a):.3f} | {mb:.3f} | "
              f"{min(b):.3f}-{max(b):.3f} | {mb / ma:.2f} |")


if __name__ == "__main__":
    main()
