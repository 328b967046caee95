#!/usr/bin/env bash
# make bench: one run that measures oxflow, Open vSwitch and the plain
# forwarders on the same namespace topology and the same traffic (issue 4
# item 6), then prints a table and writes results/bench-<date>.md + .json.
# NOT part of `make test` (it takes minutes and needs root).
#
#   make bench                 everything (about an hour here: 3 switches x 34 workload rows,
#                              plus ~3 min of paired forwarder/oxflow rounds)
#   make bench QUICK=1         sizes 100 and 10000, short windows, 3 search steps, 1 repeat (~12 min)
#                              (full: 4 sizes, 2 s windows, 6 steps, median of 3 max-rate runs)
#   PARTS=pipeline,oxflow make bench      only some parts (see PARTS below)
#   SIZES=100,1000 WORKLOADS=l2,l3 make bench
#   OXFLOW_CONFIG_EXTRA='afpacket_rx = "recvmmsg"' make bench   extra top-level
#                              lines for oxflow's config (e.g. its low-latency receive mode)
#   XDP_RX=switch make bench   where an XDP port's receive runs (below; default sender)
#
# Topology (prefix obw; created here, deleted on exit):
#
#   netns obwg               netns obws (switch, core 1)          netns obwc
#   obwg0 10.78.0.1 ---veth--- obws1 [OF port 1]  [OF port 2] obws2 ---veth--- obwc0 10.78.0.2
#
# Every switch under test runs in obws pinned to core 1; the bench (its
# generator thread, trafgen, ping, iperf3) runs on core 0. The bench runs
# inside obws too and is the switch's controller (`oxflow bench run ...
# --switch external --set controller=listen:127.0.0.1:6653`), so oxflow and
# OVS get the very same messages and traffic.
#
# Parts (PARTS, comma-separated; default all):
#   pipeline    pipeline only (no I/O): Mpps per core, ns/packet, 2-worker scaling
#               (each the median of 3 rounds of one worker then two, back to back;
#               the scaling also in 20 pairs of interleaved ~50 ms windows, each
#               with a host reference pair). PIPE_SPLIT (default flows): each of
#               the two workers runs its own share of the flows, as the switch's
#               fanout hash gives each worker its flows; none: every flow
#               through both replicas (what runs before 2026-11-25f used).
#               Then the same at 100K with the frames in random order
#               (`order=random`: no entry-after-entry locality to prefetch), and
#               the memory floor (`oxflow bench run memory_floor`, ~10 s):
#               what a random cache-line read costs by memory size, one at a time
#               and overlapped, the floor under lookups in tables of several MiB
#   raw         raw veth (generator -> sink, nothing between): the generator's ceiling
#   fwd         plain fwd_afpacket / fwd_xdp forwarders (crates/ports examples): I/O ceiling
#   oxflow      oxflow, AF_PACKET ports
#   oxflow_xdp  oxflow, AF_XDP ports (port_backend = "xdp")
#   oxflow_busy oxflow, AF_PACKET ports, poll_mode = "busy": latency only
#               (ping, iperf3; its idle CPU is a whole core by design)
#   ovs         Open vSwitch, private instance, userspace (netdev) datapath
#   paired      the "≥ 95 % of the plain forwarder" targets measured in pairs:
#               PAIRS rounds (default 5) per backend (AF_PACKET, AF_XDP), each
#               the forwarder then oxflow, back to back, one max-rate run per
#               row (PAIRED_ROWS workloads at PAIRED_SIZE entries, spread
#               traffic; PAIRED_BACKENDS picks the backends, default
#               afpacket,xdp). On this 2-core machine the generator's own
#               rate moves by up to 25 % from minute to minute (the host),
#               so a ceiling measured once, minutes before a switch, cannot
#               rank them to 5 %; pairs a few seconds apart can (ratio of
#               medians).
# XDP_RX (default sender): where the kernel runs the receive of a switch
# port with an XDP program attached (veth's NAPI poll: the XDP program and,
# in copy mode, the copy into the socket's frame area). veth polls on the
# CPU that sent the frame: the generator's core 0, which then pays for the
# switch's receive (the generator's rate falls from ~0.6 to ~0.45 Mpps
# here) and caps every XDP figure. XDP_RX=switch turns threaded NAPI on for
# the switch's ports and pins those kernel threads to core 1, the switch's
# core, as a NIC's interrupt would be: the switch (and the plain XDP
# forwarder) then pay for their own receive. Measured 2026-11-27 (3 paired
# rounds each, single flow): forwarder 0.378 / oxflow 0.326 Mpps (0.86)
# with sender, 0.334 / 0.265 (0.79) with switch, so sender stays the
# default. (AF_PACKET ports, the plain AF_PACKET forwarder and Open vSwitch
# keep their receive on the sender's core either way: steering it with RPS
# costs an inter-processor interrupt per burst, a VM exit here, and cut the
# plain forwarder from 0.47 to 0.16 Mpps.)
# The raw part also pings across the generator's veth pair alone (an
# address on the switch's end, no switch): the RTT floor of one pair, two
# veth crossings per round trip; a ping through a switch crosses four.
# For each switch: throughput per workload and size (spread and tse traffic),
# ping RTT median, iperf3 TCP (offloads off and on), 100,000 flow-mods +
# barrier (the throughput run's l2/100000 install and INSTALLS more, default
# 4: median and range), idle CPU. The traffic of each throughput row and
# the pings wait until the switch, its flows just replaced, has gone quiet
# (under 5 % of a core in two consecutive half-second windows, at most
# SETTLE_MAX, default 60, seconds; SETTLE_MAX=0 does not wait; the
# throughput experiment's `settle`, `oxflow bench settle` for the pings): Open
# vSwitch pinged right after deleting 100K flows answered in 1-30 ms for
# its first ~40 pings, 0.3 ms once quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

QUICK=${QUICK:-0}
PARTS=${PARTS:-pipeline,raw,fwd,oxflow,oxflow_xdp,oxflow_busy,ovs,paired}
PAIRS=${PAIRS:-5}
PAIRED_ROWS=${PAIRED_ROWS:-single,l2,l3,lb_acl,gateway}
PAIRED_SIZE=${PAIRED_SIZE:-100000}
PAIRED_BACKENDS=${PAIRED_BACKENDS:-afpacket,xdp}
PIPE_SPLIT=${PIPE_SPLIT:-flows}
XDP_RX=${XDP_RX:-sender}
WORKLOADS=${WORKLOADS:-single,l2,l3,lb_acl,gateway}
TRAFFIC=${TRAFFIC:-spread,tse}
if [ "$QUICK" = 1 ]; then
    SIZES=${SIZES:-100,10000}
    WINDOW=${WINDOW:-1}
    WARMUP=${WARMUP:-0.5}
    STEPS=${STEPS:-3}
    REPEATS=${REPEATS:-1}
    PIPE_SECONDS=${PIPE_SECONDS:-0.3}
    PINGS=${PINGS:-100}
    IPERF_SECONDS=${IPERF_SECONDS:-2}
else
    SIZES=${SIZES:-100,1000,10000,100000}
    WINDOW=${WINDOW:-2}
    WARMUP=${WARMUP:-1}
    STEPS=${STEPS:-6}
    REPEATS=${REPEATS:-3}
    PIPE_SECONDS=${PIPE_SECONDS:-1}
    PINGS=${PINGS:-300}
    IPERF_SECONDS=${IPERF_SECONDS:-5}
fi
IDLE_SECONDS=${IDLE_SECONDS:-5}
SETTLE_MAX=${SETTLE_MAX:-60}   # longest wait for a quiet switch (s; 0: none)
INSTALLS=${INSTALLS:-4}
CARGO=${CARGO:-cargo}
# The counts must be whole numbers (`seq` would quietly run none), and so
# must SETTLE_MAX (whole seconds).
if [ "$XDP_RX" != switch ] && [ "$XDP_RX" != sender ]; then
    echo "make bench: XDP_RX=$XDP_RX: want switch or sender" >&2
    exit 2
fi
for v in PAIRS INSTALLS SETTLE_MAX; do
    if ! [[ ${!v} =~ ^[0-9]+$ ]]; then
        echo "make bench: $v=${!v}: want a whole number (0 for none)" >&2
        exit 2
    fi
done

if [ "$(id -u)" != 0 ]; then
    echo "make bench needs root (network namespaces, AF_PACKET, AF_XDP)" >&2
    exit 1
fi
has_part() { [[ ",$PARTS," == *",$1,"* ]]; }

STAMP=$(date -u +%Y%m%d-%H%M%S)
mkdir -p results
RUN=$ROOT/results/bench-$STAMP          # raw results of every part
MD=$ROOT/results/bench-$STAMP.md
JSON=$ROOT/results/bench-$STAMP.json
mkdir -p "$RUN"
LOG=$RUN/bench.log
log() { echo "[bench $(date -u +%H:%M:%S)] $*" | tee -a "$LOG" >&2; }

# ---------------------------------------------------------------- build
log "building (release)"
$CARGO build --release -p oxflow 2>&1 | tail -n 3
$CARGO build --release -p ports --example fwd_afpacket 2>&1 | tail -n 1 || true
$CARGO build --release -p ports --example fwd_xdp 2>&1 | tail -n 1 || true
OXFLOW=${OXFLOW:-$ROOT/target/release/oxflow}
EX=$ROOT/target/release/examples

# ---------------------------------------------------------------- topology
P=${BENCH_PREFIX:-obw}   # namespace/interface prefix (another bench may use obw)
NS_G=${P}g NS_S=${P}s NS_C=${P}c
PIDS=()
cleanup() {
    set +e
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    stop_ovs 2>/dev/null
    for ns in $NS_G $NS_S $NS_C; do ip netns del "$ns" 2>/dev/null; done
}
trap cleanup EXIT

topo_up() {
    for ns in $NS_G $NS_S $NS_C; do
        ip netns del "$ns" 2>/dev/null || true
        ip netns add "$ns"
        ip -n "$ns" link set lo up
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
    done
    ip link add ${P}g0 netns $NS_G type veth peer name ${P}s1 netns $NS_S
    ip link add ${P}c0 netns $NS_C type veth peer name ${P}s2 netns $NS_S
    ip -n $NS_S link set ${P}s1 up
    ip -n $NS_S link set ${P}s2 up
    ip -n $NS_G link set ${P}g0 address 02:00:00:00:00:01
    ip -n $NS_C link set ${P}c0 address 02:00:00:00:00:02
    ip -n $NS_G addr add 10.78.0.1/24 dev ${P}g0
    ip -n $NS_C addr add 10.78.0.2/24 dev ${P}c0
    ip -n $NS_G link set ${P}g0 up
    ip -n $NS_C link set ${P}c0 up
    ip -n $NS_G neigh replace 10.78.0.2 lladdr 02:00:00:00:00:02 dev ${P}g0 nud permanent
    ip -n $NS_C neigh replace 10.78.0.1 lladdr 02:00:00:00:00:01 dev ${P}c0 nud permanent
    offloads off
}

# xdp_rx_core: with XDP_RX=switch, turns threaded NAPI on for the switch's
# ports that have an XDP program and pins those threads (named
# napi/DEV-ID) to core 1. veth polls (and has NAPI threads) only while an
# XDP program is attached, so this runs after every start; with AF_PACKET
# ports there is nothing to do.
xdp_rx_core() {
    [ "$XDP_RX" = switch ] || return 0
    local d c pid pinned=""
    for d in ${P}s1 ${P}s2; do
        ip -n $NS_S link show dev $d 2>/dev/null | grep -q xdp || continue
        ip netns exec $NS_S sh -c "echo 1 > /sys/class/net/$d/threaded" 2>/dev/null ||
            log "$d: threaded NAPI refused; its XDP receive stays on the sender's core"
    done
    # (Not pgrep: a kernel thread's name is up to 15 characters, and pgrep
    # refuses patterns longer than that.)
    for c in /proc/[0-9]*/comm; do
        [[ $(cat "$c" 2>/dev/null) =~ ^napi/${P}s[12]-[0-9]+$ ]] || continue
        pid=${c#/proc/}
        pid=${pid%/comm}
        taskset -pc 1 "$pid" >/dev/null && pinned="$pinned $(cat "$c")"
    done
    [ -z "$pinned" ] || log "XDP receive threads on core 1:$pinned"
}

# offloads on|off: checksum/segmentation offloads of the two hosts' ends.
offloads() {
    ip netns exec $NS_G ethtool -K ${P}g0 tx "$1" tso "$1" gso "$1" >/dev/null 2>&1 || true
    ip netns exec $NS_C ethtool -K ${P}c0 tx "$1" tso "$1" gso "$1" >/dev/null 2>&1 || true
}

# ---------------------------------------------------------------- switches
SW_PID=""
SW_CTL=""      # oxflow ctl target of the running switch
OVS_DIR=$RUN/ovs-state

# start_oxflow afpacket|xdp [busy]: with busy, poll_mode = "busy" (files
# oxflow-afpacket-busy.*)
start_oxflow() {
    local name=$1${2:+-$2}
    local cfg=$RUN/oxflow-$name.toml
    local poll=""
    [ "${2:-}" = busy ] && poll='poll_mode = "busy"'
    cat > "$cfg" <<EOF
datapath_id = 1
fail_mode = "secure"
workers = 1
log_level = "info"
controllers = ["tcp:127.0.0.1:6653"]
listeners = ["ptcp:6634:127.0.0.1"]
reconnect_initial = 1
reconnect_max = 1
port_backend = "$1"
$poll
${OXFLOW_CONFIG_EXTRA:-}

[[port]]
interface = "${P}s1"

[[port]]
interface = "${P}s2"
EOF
    ip netns exec $NS_S taskset -c 1 "$OXFLOW" run --config "$cfg" \
        > "$RUN/oxflow-$name.log" 2>&1 &
    SW_PID=$!
    PIDS+=("$SW_PID")
    SW_CTL=tcp:127.0.0.1:6634
    for _ in $(seq 100); do
        if ip netns exec $NS_S "$OXFLOW" ctl show $SW_CTL >/dev/null 2>&1; then
            xdp_rx_core
            return 0
        fi
        kill -0 "$SW_PID" 2>/dev/null || break
        sleep 0.1
    done
    log "oxflow ($name) did not start; see $RUN/oxflow-$name.log"
    return 1
}

# stop_switch PID: stop the switch or forwarder PID, then detach any XDP
# program left on the switch's ports. A forwarder killed by a signal
# (fwd_xdp) leaves its program attached; with it, the next part's AF_PACKET
# frames take veth's XDP path (slower receive, no GRO/TSO super-frames), so
# every later part would be measured on a different data path.
stop_switch() {
    stop_pid "$1"
    local d
    for d in ${P}s1 ${P}s2; do
        if ip -n $NS_S link show dev $d 2>/dev/null | grep -q "xdp"; then
            log "$d: detaching the XDP program left behind"
            ip -n $NS_S link set dev $d xdp off 2>/dev/null || true
        fi
    done
}

stop_pid() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
    kill -9 "$1" 2>/dev/null || true
}

ovs_env() { env OVS_RUNDIR=$OVS_DIR OVS_DBDIR=$OVS_DIR OVS_LOGDIR=$OVS_DIR OVS_SYSCONFDIR=$OVS_DIR "$@"; }
vsctl() { ovs_env ovs-vsctl --db=unix:$OVS_DIR/db.sock --timeout=20 "$@"; }

start_ovs() { start_ovs_quiet >> "$LOG" 2>&1; }
start_ovs_quiet() {
    rm -rf "$OVS_DIR"; mkdir -p "$OVS_DIR"
    ovs_env ovsdb-tool create $OVS_DIR/conf.db /usr/share/openvswitch/vswitch.ovsschema
    ovs_env ovsdb-server $OVS_DIR/conf.db --remote=punix:$OVS_DIR/db.sock \
        --pidfile=$OVS_DIR/ovsdb-server.pid --unixctl=$OVS_DIR/ovsdb-server.ctl \
        --log-file=$OVS_DIR/ovsdb-server.log --detach
    vsctl --no-wait init
    # Userspace TSO: the OVS figure the issue compares iperf3 against.
    vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable=true
    ip netns exec $NS_S env OVS_RUNDIR=$OVS_DIR OVS_DBDIR=$OVS_DIR OVS_LOGDIR=$OVS_DIR \
        OVS_SYSCONFDIR=$OVS_DIR taskset -c 1 ovs-vswitchd unix:$OVS_DIR/db.sock \
        --pidfile=$OVS_DIR/ovs-vswitchd.pid --unixctl=$OVS_DIR/ovs-vswitchd.ctl \
        --log-file=$OVS_DIR/ovs-vswitchd.log --detach
    vsctl add-br ${P}br -- set bridge ${P}br datapath_type=netdev protocols=OpenFlow13 \
        fail-mode=secure other-config:datapath-id=0000000000000001 \
        -- add-port ${P}br ${P}s1 -- set Interface ${P}s1 ofport_request=1 \
        -- add-port ${P}br ${P}s2 -- set Interface ${P}s2 ofport_request=2
    vsctl set-controller ${P}br tcp:127.0.0.1:6653 -- set controller ${P}br \
        connection-mode=out-of-band inactivity_probe=0 max_backoff=1000
    SW_PID=$(cat $OVS_DIR/ovs-vswitchd.pid)
    SW_CTL=unix:$OVS_DIR/${P}br.mgmt
    for _ in $(seq 100); do [ -S "$OVS_DIR/${P}br.mgmt" ] && return 0; sleep 0.1; done
    log "OVS did not start; see $OVS_DIR"
    return 1
}

stop_ovs() {
    for f in ovs-vswitchd ovsdb-server; do
        [ -f "$OVS_DIR/$f.pid" ] && stop_pid "$(cat "$OVS_DIR/$f.pid")"
        rm -f "$OVS_DIR/$f.pid"
    done
    return 0
}

# ---------------------------------------------------------------- measurements
# cpu_ticks PID: the process's user + system CPU time (all its threads),
# in clock ticks; 0 when there is no such process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

EXT_SETS=(--set "controller=listen:127.0.0.1:6653"
          --set gen_iface=${P}g0 --set gen_netns=$NS_G --set gen_port=1
          --set cap_iface=${P}c0 --set cap_netns=$NS_C --set cap_port=2)

# bench_ext LABEL EXPERIMENT [--set ...]: an experiment against the switch
# running in obws (pid $SW_PID).
bench_ext() {
    local label=$1 exp=$2; shift 2
    log "$label: oxflow bench run $exp $*"
    ip netns exec $NS_S "$OXFLOW" bench run "$exp" --switch external --out "$RUN/$label" \
        "${EXT_SETS[@]}" --set "switch_pid=${SW_PID:-0}" "$@" 2>&1 | tail -n 40 >> "$LOG" || {
        log "$label: FAILED (see $LOG)"; return 0; }
}

# throughput LABEL: every workload, size and traffic mode through the switch.
throughput() {
    bench_ext "$1" throughput --set "workloads=$WORKLOADS" --set "sizes=$SIZES" \
        --set "traffic=$TRAFFIC" --set "seconds=$WINDOW" --set "warmup=$WARMUP" \
        --set "settle=$SETTLE_MAX" \
        --set "search_steps=$STEPS" --set "repeats=$REPEATS"
    if [[ ",$SIZES," != *",100000,"* ]]; then
        # the 100,000 flow-mods + barrier figure (and l2/100K's rate)
        bench_ext "$1-100k" throughput --set workloads=l2 --set sizes=100000 \
            --set traffic=spread --set search=false --set "seconds=$WINDOW" --set "warmup=$WARMUP"
    fi
}

# installs LABEL: INSTALLS more samples of the 100,000 flow-mods + barrier
# figure (l2/100000, short load windows) into the same switch; with the
# throughput run's own, the report gives their median and range (one
# install moves by about 30 % from run to run on this host).
installs() {
    local i
    for i in $(seq "$INSTALLS"); do
        bench_ext "$1-install-$i" throughput --set workloads=l2 --set sizes=100000 \
            --set traffic=spread --set search=false --set seconds=0.2 --set warmup=0.1
    done
}

# ping_rtts N TARGET: the RTTs in ms of N pings from the
# generator's namespace (core 0), space-separated (none if none came back).
ping_rtts() {
    ip netns exec $NS_G taskset -c 0 ping -c "$1" -i 0.01 -W 1 "$2" 2>/dev/null \
        | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | tr '\n' ' '
}

# ping_floor: the RTT of one veth pair (the generator's, to an address on
# the switch's end, no switch running): floor-latency.json.
ping_floor() {
    ip -n $NS_S addr add 10.78.0.254/24 dev ${P}s1
    local rtts
    rtts=$(ping_rtts "$PINGS" 10.78.0.254)
    ip -n $NS_S addr del 10.78.0.254/24 dev ${P}s1
    python3 - "$RUN/floor-latency.json" $rtts <<'PY' || log "ping floor: summary failed"
import json, statistics, sys
rtts = [float(x) for x in sys.argv[2:]]
json.dump({"ping_rtt_ms_median": statistics.median(rtts) if rtts else None,
           "ping_count": len(rtts)}, open(sys.argv[1], "w"), indent=1)
PY
    log "ping floor (one veth pair): $(tr -d '\n' < "$RUN/floor-latency.json")"
}

# latency LABEL [noisy]: ping RTT and iperf3 through the switch with
# in_port=1<->2, once the switch has settled (`settle`; not for a switch
# that busy-polls by design: pass "noisy").
latency() {
    local label=$1 out=$RUN/$1-latency.json
    ip netns exec $NS_S "$OXFLOW" ctl del-flows $SW_CTL >/dev/null
    ip netns exec $NS_S "$OXFLOW" ctl add-flow $SW_CTL "priority=10,in_port=1,actions=output:2"
    ip netns exec $NS_S "$OXFLOW" ctl add-flow $SW_CTL "priority=10,in_port=2,actions=output:1"
    # Pings start once the switch is quiet (`oxflow bench settle`, the
    # throughput experiment's wait), except one that busy-polls by design.
    local settled=""
    if [ "${2:-}" != noisy ] && [ "$SETTLE_MAX" != 0 ]; then
        if settled=$("$OXFLOW" bench settle "$SW_PID" --max "$SETTLE_MAX" --pct 5); then
            log "$label: switch quiet after $settled s"
        else
            log "$label: switch still busy after $settled s; measuring anyway"
            settled=""
        fi
    fi
    local rtts
    rtts=$(ping_rtts "$PINGS" 10.78.0.2)
    local iperf_off=0 iperf_on=0
    for mode in off on; do
        offloads $mode
        ip netns exec $NS_C taskset -c 0 iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
        local srv=$!
        sleep 0.5
        local bps
        bps=$(ip netns exec $NS_G taskset -c 0 timeout $((IPERF_SECONDS + 15)) \
            iperf3 -c 10.78.0.2 -p 5201 -t "$IPERF_SECONDS" -J 2>/dev/null \
            | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])
except Exception: print(0)') || true
        bps=$(echo "${bps:-0}" | tail -n 1)
        stop_pid $srv
        if [ $mode = off ]; then iperf_off=$bps; else iperf_on=$bps; fi
    done
    offloads off
    # idle CPU: flows installed, no traffic
    local t0 t1
    t0=$(cpu_ticks "$SW_PID")
    sleep "$IDLE_SECONDS"
    t1=$(cpu_ticks "$SW_PID")
    python3 - "$out" "$t0" "$t1" "$(getconf CLK_TCK)" "$IDLE_SECONDS" "${iperf_off:-0}" "${iperf_on:-0}" "${settled:--}" $rtts <<'PY' || log "$label: latency summary failed"
import json, statistics, sys
out, t0, t1, hz, secs, off, on, settled = sys.argv[1:9]
rtts = [float(x) for x in sys.argv[9:]]
json.dump({
    "ping_rtt_ms_median": statistics.median(rtts) if rtts else None,
    "ping_count": len(rtts),
    # seconds the switch took to go quiet before the pings (None: not
    # waited for, or still busy when the wait ended)
    "settle_s": None if settled == "-" else float(settled),
    "iperf3_gbps_offloads_off": float(off) / 1e9,
    "iperf3_gbps_offloads_on": float(on) / 1e9,
    "idle_cpu_pct": (int(t1) - int(t0)) / int(hz) / float(secs) * 100.0,
}, open(out, "w"), indent=1)
PY
    log "$label: $(tr -d '\n' < "$out")"
}

run_switch() { # LABEL START_CMD...
    local label=$1; shift
    if ! "$@"; then log "$label: switch did not start, skipped"; return 0; fi
    throughput "$label"
    latency "$label"
    installs "$label"
}

log "results in $RUN"
topo_up

if has_part pipeline; then
    log "pipeline only"
    taskset -c 0,1 "$OXFLOW" bench run pipeline --out "$RUN/pipeline" \
        --set "workloads=$WORKLOADS" --set "sizes=$SIZES" --set "traffic=$TRAFFIC" \
        --set "seconds=$PIPE_SECONDS" --set replicas=2 --set "split=$PIPE_SPLIT" 2>&1 \
        | tail -n 80 >> "$LOG" || log "pipeline: FAILED"
    log "pipeline only, frames in random order (100K)"
    taskset -c 0,1 "$OXFLOW" bench run pipeline --out "$RUN/pipeline-random" \
        --set "workloads=$WORKLOADS" --set sizes=100000 --set traffic=spread --set order=random \
        --set "seconds=$PIPE_SECONDS" --set replicas=2 --set "split=$PIPE_SPLIT" 2>&1 \
        | tail -n 30 >> "$LOG" || log "pipeline (random order): FAILED"
    log "memory floor (random cache-line reads by memory size, core 0)"
    "$OXFLOW" bench run memory_floor --out "$RUN/memory" 2>&1 \
        | tail -n 20 >> "$LOG" || log "memory floor: FAILED"
fi

if has_part raw; then
    SW_PID=""
    log "raw veth: generator -> sink"
    "$OXFLOW" bench run throughput_raw --out "$RUN/raw" --set "seconds=$WINDOW" \
        --set "warmup=$WARMUP" --set "search_steps=$STEPS" --set "repeats=$REPEATS" 2>&1 | tail -n 20 >> "$LOG" || log "raw: FAILED"
    ping_floor
fi

# start_fwd NAME LABEL: start the plain forwarder NAME (fwd_afpacket,
# fwd_xdp) on the switch's ports, pinned to core 1, logging to
# LABEL.log; SW_PID is its pid. Fails (and logs why) if it exited at
# start.
start_fwd() {
    ip netns exec $NS_S taskset -c 1 "$EX/$1" ${P}s1 ${P}s2 --seconds 3600 \
        > "$RUN/$2.log" 2>&1 &
    SW_PID=$!
    PIDS+=("$SW_PID")
    sleep 1
    if kill -0 "$SW_PID" 2>/dev/null; then
        xdp_rx_core
        return 0
    fi
    log "$2: $1 exited at start: $(tail -n 2 "$RUN/$2.log")"
    return 1
}

if has_part fwd; then
    for f in fwd_afpacket fwd_xdp; do
        if [ ! -x "$EX/$f" ]; then log "$f: not built, skipped"; continue; fi
        if start_fwd "$f" "$f"; then
            bench_ext "$f" throughput_raw --set "seconds=$WINDOW" --set "warmup=$WARMUP" \
                --set "search_steps=$STEPS" --set "repeats=$REPEATS"
        fi
        stop_switch "$SW_PID"
    done
fi

if has_part oxflow; then
    run_switch oxflow start_oxflow afpacket
    stop_switch "$SW_PID"
fi

if has_part oxflow_xdp; then
    if grep -q '"xdp"' crates/switch/src/config.rs; then
        run_switch oxflow_xdp start_oxflow xdp
        grep -i -m3 "xdp\|fall" "$RUN/oxflow-xdp.log" >> "$LOG" || true
        stop_switch "$SW_PID"
    else
        log "oxflow_xdp: this oxflow has no xdp port backend, skipped"
    fi
fi

if has_part oxflow_busy; then
    if start_oxflow afpacket busy; then
        latency oxflow_busy noisy
    else
        log "oxflow_busy: switch did not start, skipped"
    fi
    stop_switch "$SW_PID"
fi

if has_part ovs; then
    if command -v ovs-vswitchd >/dev/null; then
        run_switch ovs start_ovs
        stop_ovs
    else
        log "ovs: ovs-vswitchd not installed, skipped"
    fi
fi

if has_part paired; then
    # Round i of backend B: paired-B-i-fwd (the forwarder, throughput_raw)
    # then paired-B-i-oxflow (oxflow, PAIRED_ROWS), one max-rate run each.
    for b in ${PAIRED_BACKENDS//,/ }; do
        if [ ! -x "$EX/fwd_$b" ]; then log "paired: fwd_$b not built, skipped"; continue; fi
        for i in $(seq "$PAIRS"); do
            if start_fwd "fwd_$b" "paired-$b-$i-fwd"; then
                bench_ext "paired-$b-$i-fwd" throughput_raw --set "seconds=$WINDOW" \
                    --set "warmup=$WARMUP" --set search=false --set repeats=1
            fi
            stop_switch "$SW_PID"
            if start_oxflow "$b"; then
                bench_ext "paired-$b-$i-oxflow" throughput --set "workloads=$PAIRED_ROWS" \
                    --set "sizes=$PAIRED_SIZE" --set traffic=spread --set "seconds=$WINDOW" \
                    --set "warmup=$WARMUP" --set search=false --set repeats=1
            fi
            stop_switch "$SW_PID"
        done
    done
fi

# ---------------------------------------------------------------- report
python3 scripts/bench_report.py "$RUN" "$MD" "$JSON" \
    "QUICK=$QUICK PARTS=$PARTS INSTALLS=$INSTALLS PAIRS=$PAIRS PAIRED_ROWS=$PAIRED_ROWS PAIRED_SIZE=$PAIRED_SIZE SIZES=$SIZES WORKLOADS=$WORKLOADS TRAFFIC=$TRAFFIC WINDOW=$WINDOW STEPS=$STEPS REPEATS=$REPEATS PIPE_SPLIT=$PIPE_SPLIT XDP_RX=$XDP_RX"
cat "$MD"
log "wrote $MD and $JSON (raw results: $RUN)"
