#!/usr/bin/env bash
# Forwarding rate of a BEBA stateful pipeline, oxflow against the BEBA
# reference switch (beba-eu/beba-switch's ofdatapath), same traffic, same
# run (docs/bench/stateful-2026-11-28.md). Not part of `make test`.
#
#   scripts/beba_bench.sh [FLOWS] [SECONDS] [APPS]
#
# FLOWS (default 100): flows in the traffic, each with a state set
# beforehand; SECONDS (default 5): measured window, after 1 s of warm-up;
# APPS (default "portknock maclearning"): the os-ken apps of
# python/oxflow/apps/beba/ that configure the switch.
#
# Needs root, `cargo build --release -p oxflow -p ports --example flows_tx`
# and a build of the reference at target/beba-ref/bin/ofdatapath (not part
# of this repository; docs/beba.md, "Reference switch": its frame
# reception needs a fix to forward anything). Per app and
# switch: the switch runs on core 1 with ports b3s1 (1) and b3s2 (2),
# veth peers of b3g (generator) and b3c (sink); the app connects to the
# switch's passive port (os-ken's --ofp-switch-address-list) and
# configures it; `oxflow ctl beba-set-state` sets every flow's state
# (portknock: the IPv4 source open, state 4; maclearning: the
# destination MAC learnt at port 2); flows_tx sends the flows' frames
# (UDP to port 22, 64 bytes) flat out from core 0. Rate = frames b3c
# received in the window / SECONDS; offered = frames b3g sent.
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
for f in "$ox" "$ref" "$tx"; do
    [ -x "$f" ] || { echo "missing $f (see the header of $0)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
work="$(mktemp -d /tmp/b3-beba-bench.XXXXXX)"
pids=()

cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    ip link del b3g 2>/dev/null || true
    ip link del b3c 2>/dev/null || true
}
trap cleanup EXIT

ip link add b3g type veth peer name b3s1
ip link add b3c type veth peer name b3s2
for i in b3g b3s1 b3c b3s2; do
    sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
    ip link set "$i" up
done

count() { cat "/sys/class/net/$1/statistics/$2_packets"; }

# The state key of flow i (flows_tx's frames) for app $1.
key() {
    local i=$1 hi=$(( ($2 >> 8) & 255 )) lo=$(( $2 & 255 )) mid=$(( ($2 >> 16) & 255 ))
    case "$i" in
        portknock) echo "ipv4_src=10.$mid.$hi.$lo 4" ;;
        maclearning) printf 'eth_src=00:00:00:%02x:%02x:%02x 2\n' "$mid" "$hi" "$lo" ;;
    esac
}

run_one() {
    local sw=$1 app=$2 log="$work/$1-$2"
    port=$((port + 2))
    case "$sw" in
        oxflow) taskset -c 1 "$ox" run --port b3s1 --port b3s2 --workers 1 \
                    --listen "ptcp:$port:127.0.0.1" --fail-mode secure \
                    --log-level warn 2>"$log.switch" & ;;
        reference) taskset -c 1 "$ref" -i b3s1,b3s2 --no-local-port --no-slicing \
                    "ptcp:$port" >"$log.switch" 2>&1 & ;;
    esac
    local spid=$!
    pids+=("$spid")
    sleep 1
    PYTHONPATH="$root/python" taskset -c 0 "$py" -m oxflow.controller \
        --app "oxflow.apps.beba.$app" --ofp-tcp-listen-port $((port + 1)) \
        -- --ofp-switch-address-list "127.0.0.1:$port" >"$log.ctrl" 2>&1 &
    local cpid=$!
    pids+=("$cpid")
    # Configured: table 0 has the app's entries.
    local n=0
    for _ in $(seq 60); do
        n=$("$ox" ctl dump-flows "tcp:127.0.0.1:$port" 2>/dev/null | grep -c "table=0" || true)
        [ "$n" -gt 0 ] && break
        sleep 0.5
    done
    [ "$n" -gt 0 ] || { echo "$sw/$app: not configured (see $log.*)" >&2; return 1; }
    for i in $(seq 0 $((flows - 1))); do
        # shellcheck disable=SC2046
        "$ox" ctl beba-set-state "tcp:127.0.0.1:$port" 0 $(key "$app" "$i") >/dev/null
    done
    taskset -c 0 "$tx" b3g "$flows" $((warm + secs)) >"$log.tx" &
    local tpid=$!
    sleep "$warm"
    local r0 t0 r1 t1
    r0=$(count b3c rx); t0=$(count b3g tx)
    sleep "$secs"
    r1=$(count b3c rx); t1=$(count b3g tx)
    wait "$tpid"
    kill "$cpid" "$spid" 2>/dev/null || true
    wait "$cpid" "$spid" 2>/dev/null || true
    printf '%-10s %-12s flows=%-7s offered %10.0f pkt/s  forwarded %10.0f pkt/s\n' \
        "$sw" "$app" "$flows" "$(( (t1 - t0) / secs ))" "$(( (r1 - r0) / secs ))"
}

for app in $apps; do
    for sw in oxflow reference; do
        run_one "$sw" "$app"
    done
done
rm -rf "$work"
