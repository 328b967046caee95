#!/usr/bin/env bash
# Forwarding rate of a BEBA stateful pipeline, oxflow against the BEBA
# reference switch (beba-eu/beba-switch's ofdatapath), same traffic, same
# run (docs/bench/stateful-2026-11-28.md). Not part of `make test`.
#
#   scripts/beba_bench.sh [FLOWS] [SECONDS] [APPS]
#
# FLOWS (default 100): flows in the traffic, each with a state set
# beforehand (up to 2^24: flows_tx's keys use the low 24 bits); SECONDS (default 5): measured window, after 1 s of warm-up;
# APPS (default "portknock maclearning"): the os-ken apps of
# python/oxflow/apps/beba/ that configure the switch. CHECK_STATES=1 in
# the environment prints how many states table 0 holds once they are set.
#
# Needs root, `cargo build --release -p oxflow -p ports --example flows_tx`
# and a build of the reference at target/beba-ref/bin/ofdatapath (not part
# of this repository; docs/beba.md, "Reference switch": its frame
# reception needs a fix to forward anything). Per app and
# switch: the switch runs on core 1 with ports b6s1 (1) and b6s2 (2),
# veth peers of b6g (generator) and b6c (sink); the app connects to the
# switch's passive port (os-ken's --ofp-switch-address-list) and
# configures it; scripts/beba_set_states.py sets every flow's state, all
# STATE_MODs back to back on one connection then a barrier (portknock: the
# IPv4 source open, state 4; maclearning: the destination MAC learnt at
# port 2); oxflow's state tables hold max(65536, 2 FLOWS + 1024) flows
# (maclearning also learns every source MAC: 2 FLOWS states); a third
# run, "stateless", is oxflow with the same traffic through a table-0
# entry forwarding port 1 to port 2 (no app, no states); flows_tx sends the flows' frames
# (UDP to port 22, 64 bytes) flat out from core 0. Rate = frames b6c
# received in the window / SECONDS; offered = frames b6g sent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
flows="${1:-100}"
secs="${2:-5}"
apps="${3:-portknock maclearning}"
warm=1
ox="$root/target/release/oxflow"
ref="$root/target/beba-ref/bin/ofdatapath"
tx="$root/target/release/examples/flows_tx"
py="$root/.venv/bin/python"
port=16640
cap=$(( 2 * flows + 1024 > 65536 ? 2 * flows + 1024 : 65536 ))
for f in "$ox" "$ref" "$tx"; do
    [ -x "$f" ] || { echo "missing $f (see the header of $0)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
work="$(mktemp -d /tmp/b6-beba-bench.XXXXXX)"
pids=()

cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip link del b6g 2>/dev/null || true
    ip link del b6c 2>/dev/null || true
}
trap cleanup EXIT

ip link add b6g type veth peer name b6s1
ip link add b6c type veth peer name b6s2
for i in b6g b6s1 b6c b6s2; do
    sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
    ip link set "$i" up
done

count() { cat "/sys/class/net/$1/statistics/$2_packets"; }

run_one() {
    local sw=$1 app=$2 log="$work/$1-$2"
    port=$((port + 2))
    case "$sw" in
        oxflow|stateless) taskset -c 1 "$ox" run --port b6s1 --port b6s2 --workers 1 \
                    --listen "ptcp:$port:127.0.0.1" --fail-mode secure \
                    --state-capacity "$cap" --log-level warn 2>"$log.switch" & ;;
        reference) taskset -c 1 "$ref" -i b6s1,b6s2 --no-local-port --no-slicing \
                    "ptcp:$port" >"$log.switch" 2>&1 & ;;
    esac
    local spid=$!
    pids+=("$spid")
    sleep 1
    local cpid=""
    if [ "$sw" = stateless ]; then
        "$ox" ctl add-flow "tcp:127.0.0.1:$port" "in_port=1,actions=output:2"
    else
        PYTHONPATH="$root/python" taskset -c 0 "$py" -m oxflow.controller \
            --app "oxflow.apps.beba.$app" --ofp-tcp-listen-port $((port + 1)) \
            -- --ofp-switch-address-list "127.0.0.1:$port" >"$log.ctrl" 2>&1 &
        cpid=$!
        pids+=("$cpid")
    fi
    # Configured: table 0 has the app's entries.
    local n=0
    for _ in $(seq 60); do
        n=$("$ox" ctl dump-flows "tcp:127.0.0.1:$port" 2>/dev/null | grep -c "table=0" || true)
        [ "$n" -gt 0 ] && break
        sleep 0.5
    done
    [ "$n" -gt 0 ] || { echo "$sw/$app: not configured (see $log.*)" >&2; return 1; }
    if [ "$sw" != stateless ]; then
        printf '%-10s %-12s flows=%-7s ' "$sw" "$app" "$flows"
        "$py" "$root/scripts/beba_set_states.py" "127.0.0.1:$port" "$app" "$flows" \
            || { echo "$sw/$app: states not set (see $log.*)" >&2; return 1; }
        # CHECK_STATES=1: count the table's states (a dump: slow at 1M).
        if [ "${CHECK_STATES:-0}" = 1 ]; then
            echo "  states in table 0: $("$ox" ctl beba-dump-states "tcp:127.0.0.1:$port" 0 short | grep -c 'state=' || true)"
        fi
    fi
    taskset -c 0 "$tx" b6g "$flows" $((warm + secs)) >"$log.tx" &
    local tpid=$!
    sleep "$warm"
    local r0 t0 r1 t1
    r0=$(count b6c rx); t0=$(count b6g tx)
    sleep "$secs"
    r1=$(count b6c rx); t1=$(count b6g tx)
    wait "$tpid"
    kill $cpid "$spid" 2>/dev/null || true
    wait $cpid "$spid" 2>/dev/null || true
    printf '%-10s %-12s flows=%-7s offered %10.0f pkt/s  forwarded %10.0f pkt/s\n' \
        "$sw" "$app" "$flows" "$(( (t1 - t0) / secs ))" "$(( (r1 - r0) / secs ))"
}

for app in $apps; do
    for sw in oxflow reference; do
        run_one "$sw" "$app"
    done
done
run_one stateless -
rm -rf "$work"
