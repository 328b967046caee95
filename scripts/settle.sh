# Sourced by scripts/bench.sh (and its test): waiting for a switch to go
# quiet before a latency measurement.
#
# A switch that has just had 100,000 flows replaced may still be working
# on them after its barrier reply: Open vSwitch's revalidators and main
# thread took the first ~40 pings after such a delete to 1-30 ms here
# (median of 100: 1.9 ms), against 0.3 ms once quiet. A latency measured
# then is that work's, not the data path's, and depends on which
# experiment ran before it.

# cpu_ticks PID: the process's user + system CPU time (all its threads),
# in clock ticks; 0 when there is no such process.
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

# settle PID MAX_S PCT: wait until process PID has used under PCT % of a
# core in each of two consecutive half-second windows, at most MAX_S
# seconds. Prints the seconds waited (three decimals); returns 0 when it
# went quiet, 1 when it was still busy at MAX_S (or is gone: nothing to
# wait for, which is not quiet either).
settle() {
    local pid=$1 max=$2 pct=$3 hz quiet=0 t0 t1 start now
    hz=$(getconf CLK_TCK)
    start=${EPOCHREALTIME/./}
    now=$start
    while [ $((now - start)) -lt $((max * 1000000)) ]; do
        [ -e "/proc/$pid/stat" ] || break
        t0=$(cpu_ticks "$pid")
        sleep 0.5
        t1=$(cpu_ticks "$pid")
        now=${EPOCHREALTIME/./}
        # ticks used in the window as a percentage of a core: 100 d /
        # (hz x 0.5 s) = 200 d / hz.
        if [ $((200 * (t1 - t0))) -lt $((pct * hz)) ]; then
            quiet=$((quiet + 1))
        else
            quiet=0
        fi
        if [ "$quiet" -ge 2 ]; then
            printf '%d.%03d\n' $(((now - start) / 1000000)) $(((now - start) / 1000 % 1000))
            return 0
        fi
    done
    now=${EPOCHREALTIME/./}
    printf '%d.%03d\n' $(((now - start) / 1000000)) $(((now - start) / 1000 % 1000))
    return 1
}
