#!/usr/bin/env bash
# Instructions per packet of the pipeline's packet path, counted by
# callgrind: a figure that does not move with the machine's load, for
# comparing two builds on a busy 2-core machine where timings scatter by
# 5-10 % (it counts instructions, not cycles: a change that saves
# instructions but adds cache misses looks better here than it is, so
# confirm a win with `oxflow bench run pipeline`'s CPU-time figure too).
#
#   scripts/instructions_per_packet.sh [BIN] [WORKLOAD/SIZE ...]
#   scripts/instructions_per_packet.sh target/release/oxflow l2/100 l3/100
#   BATCH=1 scripts/instructions_per_packet.sh target/release/oxflow l2/100
#
# BATCH (1-32, default 32) is the frames per `process_batch` call: a small
# one shows what a batch costs beside its frames (a switch offered less
# than it can forward sees batches of one or two).
#
# The count is `Pipeline::process_batch` inclusive (parse, lookups,
# actions, and the harness's `Output`) over the packets it processed, from
# a 0.05 s pipeline-only run under valgrind (a few seconds per workload).
# Needs valgrind (apt install valgrind); not part of `make test`.
set -euo pipefail
BIN=${1:-target/release/oxflow}
BATCH=${BATCH:-32}
case "$BATCH" in
    [1-9] | [12][0-9] | 3[0-2]) ;;
    *)
        echo "instructions_per_packet: BATCH=$BATCH: want 1 to 32" >&2
        exit 2
        ;;
esac
shift || true
[ $# -gt 0 ] || set -- single/1 l2/100 l3/100 lb_acl/100 gateway/100
if ! command -v valgrind >/dev/null; then
    echo "instructions_per_packet: valgrind not found (apt install valgrind)" >&2
    exit 1
fi
if [ ! -x "$BIN" ]; then
    echo "instructions_per_packet: $BIN is not an executable (cargo build --release first)" >&2
    exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for ws in "$@"; do
    w=${ws%/*}
    s=${ws#*/}
    if [ "$w" = "$ws" ] || [ -z "$s" ]; then
        echo "instructions_per_packet: '$ws': want WORKLOAD/SIZE, e.g. l2/100" >&2
        exit 1
    fi
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg" "$BIN" bench run pipeline \
        --out "$TMP/out" --set workloads="$w" --set sizes="$s" --set traffic=spread \
        --set replicas=1 --set seconds=0.05 --set batch="$BATCH" >"$TMP/log" 2>&1 || {
        echo "instructions_per_packet: $ws: the run failed:" >&2
        tail -5 "$TMP/log" >&2
        exit 1
    }
    # In the caller tree, the lines just above `* ...process_batch` are
    # its callers with the inclusive count and the number of calls; every
    # call is one batch of BATCH frames, as the pipeline experiment sends
    # them.
    callgrind_annotate --inclusive=yes --tree=caller "$TMP/cg" 2>/dev/null | WS="$ws" BATCH="$BATCH" python3 -c '
import os, re, sys
lines = sys.stdin.read().split("\n")
for i, l in enumerate(lines):
    if re.search(r"\*\s+\S*pipeline::batch::<impl pipeline::(?:pipeline::)?Pipeline>::process_batch", l):
        total = calls = 0
        j = i - 1
        while j >= 0 and "<" in lines[j]:
            m = re.match(r"\s*([\d,]+).*\(([\d,]+)x\)", lines[j])
            if m:
                total += int(m.group(1).replace(",", ""))
                calls += int(m.group(2).replace(",", ""))
            j -= 1
        packets = calls * int(os.environ["BATCH"])
        ws = os.environ["WS"]
        print(f"{ws}: {total / packets:.0f} instructions per packet ({packets} packets)")
        break
else:
    sys.exit("instructions_per_packet: process_batch not found in the profile")
'
done
