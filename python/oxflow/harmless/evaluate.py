"""`oxflow harmless eval`: the HARMLESS evaluation -- the workloads of
`oxflow bench run throughput` (l2, l3, lb_acl, gateway; crates/bench
workloads.rs) and ping latency through a hybrid deployment, against the
paper's "S4".

Every setup has the same legacy half: hosts h1 (generator, access VLAN
101) and h2 (sink, VLAN 102) on the emulated legacy switch (a private
user-space Open vSwitch in standalone mode), its trunk to the server
namespace. The server half differs:

- `proxy`: an Open vSwitch with only the trunk (port 1), connected to
  `oxflow harmless proxy --vlans 101-102`, which the controller sees as
  ports 1 and 2;
- `trunk`: `oxflow run --trunk eth0=101-102`, oxflow alone (its trunk
  ports: one process, no second switch);
- `s4`: the paper's S4, one ovs-vswitchd with two bridges joined by patch
  ports: `br0` holds the trunk and only translates (VLAN v <-> patch port;
  pop on the way in, push on the way out), `br-of` has the patch ports as
  OpenFlow ports 1 and 2 and talks to the controller.

For each setup: `oxflow bench run throughput --switch external` run in the
server's namespace (the bench is the controller: it installs the workload
as flows on ports 1 -> 2 and measures the forwarding rate from h1 to h2),
then the os-ken learning switch and `ping` from h1 to h2: after a
warm-up, `--ping-rounds` rounds of `--pings` echo requests each; the
report gives the median of the rounds' average RTTs and their spread
(lowest and highest round), since the machine is shared.

The access gateway workload (`gateway`) sends frames carrying the
customers' own VLAN tags (100..109) and matches them on the input port.
An 802.1Q access port drops such frames, so when `gateway` is among the
workloads h1's port of the legacy switch is an 802.1Q tunnel port
(`switchport mode dot1q-tunnel` on a Cisco switch; Open vSwitch
`vlan_mode=dot1q-tunnel` with the 0x8100 outer TPID): it pushes the access
VLAN outside the customer's tag, so the trunk carries [101][customer
VID]. `trunk` (oxflow removes only the outer tag) and `s4` (the
translating bridge pops one tag; every Open vSwitch here parses two tags,
`vlan-limit=0`) hand the customer tag to the OpenFlow pipeline; the proxy
cannot (its location tag is the outer one and it refuses every other
VLAN match), so `gateway` is skipped for `proxy` with that reason.

    oxflow harmless eval [--setups trunk,proxy,s4]
        [--workloads l2,l3,lb_acl,gateway] [--sizes 100,1000] [--seconds 1]
        [--pings 50] [--ping-rounds 5] [--full] [--out DIR]

Writes DIR/results.json and DIR/report.md (a table per measurement) and
prints the report. Needs root and Open vSwitch. `--full`: sizes
100..100,000, 2-second windows and the no-loss search.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time

from oxflow.harmless import lab, legacy_ovs, manager
from oxflow.netns import OvsSwitch, Process, Topology

CTL_PORT = 6653
PROXY_PORT = 6654
VIDS = (101, 102)
# network namespace / interface prefix (oxflow.netns.Topology)
PREFIX = os.environ.get("OXFLOW_HARMLESS_PREFIX", "hm")


GATEWAY_SKIP_PROXY = (
    "skipped: the proxy's location tag is the outer tag and it refuses "
    "any other VLAN match (OFPBMC_BAD_FIELD), so the customer tag cannot "
    "be matched")


def two_tags(ovs):
    """Makes Open vSwitch `ovs` parse (and match) two VLAN headers."""
    ovs.vsctl("set", "Open_vSwitch", ".", "other_config:vlan-limit=0")


def s4_switch(work, netns, nic):
    """The S4 software side: `br0` (trunk + patch ports, translating) and
    `br-of` (patch peers as OpenFlow ports 1, 2; controlled)."""
    of = OvsSwitch(work, ports=[nic], netns=netns)
    of.start()
    args = ["add-br", "br-of", "--", "set", "bridge", "br-of",
            "datapath_type=netdev", "fail-mode=secure",
            "protocols=OpenFlow13", "other-config:datapath-id=%016x" % 0x54]
    for i, v in enumerate(VIDS, 1):
        args += ["--", "add-port", "br0", "tr%d" % v, "--", "set",
                 "interface", "tr%d" % v, "type=patch",
                 "options:peer=of%d" % v, "ofport_request=%d" % (i + 1),
                 "--", "add-port", "br-of", "of%d" % v, "--", "set",
                 "interface", "of%d" % v, "type=patch",
                 "options:peer=tr%d" % v, "ofport_request=%d" % i]
    of.vsctl(*args)
    two_tags(of)
    for i, v in enumerate(VIDS, 1):
        of.ofctl("add-flow", "br0", "in_port=1,dl_vlan=%d,actions="
                 "pop_vlan,output:%d" % (v, i + 1))
        of.ofctl("add-flow", "br0", "in_port=%d,actions=push_vlan:0x8100,"
                 "set_field:%d->vlan_vid,output:1" % (i + 1, v | 0x1000))
    of.vsctl("set-controller", "br-of", "tcp:127.0.0.1:%d" % CTL_PORT,
             "--", "set", "controller", "br-of",
             "connection-mode=out-of-band", "max_backoff=1000")
    return of


def vswitchd_pid(of):
    for p in of.procs:
        if p.name == "ovs-vswitchd":
            return p.pid
    return 0


class Setup:
    """One server half, started in `netns`; `.pid` is the data plane's
    process (for the bench's CPU sampling)."""

    def __init__(self, name, work, netns, nic, binary):
        self.name, self.work, self.netns = name, work, netns
        self.procs, self.ovs, self.pid = [], None, 0
        os.makedirs(work, exist_ok=True)
        if name == "proxy":
            proxy = Process([binary, "harmless", "proxy", "--listen",
                             "127.0.0.1:%d" % PROXY_PORT, "--controller",
                             "127.0.0.1:%d" % CTL_PORT, "--trunk-port", "1",
                             "--vlans", "%d-%d" % VIDS],
                            os.path.join(work, "proxy.log"), netns=netns,
                            name="proxy").start()
            self.procs.append(proxy)
            proxy.wait_for_log(r"listening on", timeout=20)
            self.ovs = OvsSwitch(
                os.path.join(work, "of"), ports=[nic], netns=netns,
                controller="tcp:127.0.0.1:%d" % PROXY_PORT, dpid=0x4d)
            self.ovs.start()
            self.ovs.vsctl("set", "controller", "br0", "max_backoff=1000")
            self.pid = vswitchd_pid(self.ovs)
        elif name == "s4":
            self.ovs = s4_switch(os.path.join(work, "of"), netns, nic)
            self.pid = vswitchd_pid(self.ovs)
        elif name == "trunk":
            sw = Process([binary, "run", "--trunk", "%s=%d-%d"
                          % ((nic,) + VIDS), "--controller",
                          "tcp:127.0.0.1:%d" % CTL_PORT, "--listen",
                          "ptcp:127.0.0.1:6634", "--fail-mode", "secure"],
                         os.path.join(work, "oxflow.log"), netns=netns,
                         name="oxflow").start()
            self.procs.append(sw)
            lab.wait_listening(6634, netns)
            self.pid = sw.pid
        else:
            raise ValueError("unknown setup %r" % name)

    def close(self):
        if self.ovs:
            self.ovs.close()
        for p in reversed(self.procs):
            p.stop()


def run_bench(binary, setup, gen, cap, args, out, workloads):
    """`oxflow bench run throughput --switch external` in the server's
    namespace; the rows of its throughput table as dicts."""
    sets = {"workloads": ",".join(workloads), "sizes": args.sizes,
            "seconds": args.seconds, "warmup": 1,
            "search": "true" if args.full else "false", "settle": 10,
            "controller": "listen:127.0.0.1:%d" % CTL_PORT,
            "gen_iface": "eth0", "gen_netns": gen.ns, "gen_port": 1,
            "cap_iface": "eth0", "cap_netns": cap.ns, "cap_port": 2,
            "switch_pid": setup.pid, "max_seconds": 1800}
    argv = ["ip", "netns", "exec", setup.netns, binary, "bench", "run",
            "throughput", "--switch", "external", "--out", str(out)]
    for k, v in sets.items():
        argv += ["--set", "%s=%s" % (k, v)]
    log = pathlib.Path(out).with_suffix(".log")
    with open(log, "w") as f:
        proc = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT,
                              timeout=3600)
    res = pathlib.Path(out) / "results.json"
    if proc.returncode != 0 or not res.exists():
        return [{"error": "bench exited %d (see %s): %s" % (
            proc.returncode, log, log.read_text()[-400:].strip())}]
    data = json.loads(res.read_text())
    for t in data.get("results", data).get("tables", []):
        if t["name"] == "throughput":
            return [dict(zip(t["columns"], row)) for row in t["rows"]]
    return [{"error": "no throughput table in %s" % res}]


class CpuPeak:
    """Samples a process's CPU time (/proc/PID/stat utime + stime) every
    0.25 s in a thread while in a `with` block; `.peak` is the highest
    share of one core over any 1-second stretch (percent). Used on the
    legacy switch's ovs-vswitchd, whose main thread serves all its
    (non-PMD) ports."""

    def __init__(self, pid):
        self.pid, self.peak = pid, None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _ticks(self):
        try:
            with open("/proc/%d/stat" % self.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            return None

    def _run(self):
        hz = os.sysconf("SC_CLK_TCK")
        samples = []        # (monotonic time, ticks)
        while not self._stop.wait(0.25):
            t = self._ticks()
            if t is None:
                return
            now = time.monotonic()
            samples.append((now, t))
            old = [x for x in samples if now - x[0] >= 1.0]
            if old:
                t0, k0 = old[-1]
                pct = 100.0 * (t - k0) / hz / (now - t0)
                self.peak = pct if self.peak is None else max(self.peak, pct)
                samples = samples[samples.index(old[-1]):]

    def __enter__(self):
        if self.pid:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        return False


def ping_latency(work, server, gen, cap, pings, rounds):
    """RTTs (ms) from h1 to h2 under the os-ken learning switch: the
    median of `rounds` rounds' averages, the lowest and highest round,
    and the echo requests answered."""
    ctl = lab.start_controller(work, CTL_PORT, netns=server.ns)
    try:
        deadline = time.monotonic() + 30
        while gen.ping(cap.ip(), count=1, timeout=1).received == 0:
            if time.monotonic() > deadline:
                return {"error": "no ping reply in 30 s"}
        gen.ping(cap.ip(), count=5, interval=0.05)        # learn, warm up
        avgs, sent, received = [], 0, 0
        for _ in range(rounds):
            r = gen.ping(cap.ip(), count=pings, interval=0.02, timeout=2)
            sent, received = sent + r.transmitted, received + r.received
            if r.rtt_avg_ms is not None:
                avgs.append(r.rtt_avg_ms)
        if not avgs:
            return {"error": "no ping reply in %d rounds" % rounds}
        return {"rtt_avg_ms": statistics.median(avgs),
                "rtt_round_min_ms": min(avgs), "rtt_round_max_ms": max(avgs),
                "rounds": avgs, "sent": sent, "received": received}
    finally:
        ctl.stop()


def legacy_counters(legacy, ports):
    """{role: {"rx", "rx_dropped", "tx", "tx_dropped"}}: the legacy
    switch's port counters after the bench (OpenFlow port stats of its
    bridge), showing where frames were lost."""
    out = {}
    text = legacy.ovs.ofctl("dump-ports", legacy.ovs.mgmt(),
                            check=False).stdout
    stats = {}
    for m in re.finditer(r"port\s+(\d+): rx pkts=(\d+), bytes=\d+, "
                         r"drop=(\d+).*?\n\s+tx pkts=(\d+), bytes=\d+, "
                         r"drop=(\d+)", text):
        stats[int(m.group(1))] = {
            "rx": int(m.group(2)), "rx_dropped": int(m.group(3)),
            "tx": int(m.group(4)), "tx_dropped": int(m.group(5))}
    for role, port in ports.items():
        no = legacy.ovs.vsctl("get", "interface", port, "ofport",
                              check=False).stdout.strip()
        if no.isdigit() and int(no) in stats:
            out[role] = stats[int(no)]
    return out


def run_setup(name, args, binary, out):
    work = pathlib.Path(out) / name
    shutil.rmtree(work, ignore_errors=True)     # a previous run's
    work.mkdir(parents=True)
    workloads = [w for w in args.workloads.split(",") if w]
    gateway = "gateway" in workloads
    skipped = []
    if gateway and name == "proxy":
        workloads.remove("gateway")
        skipped.append({"workload": "gateway", "error": GATEWAY_SKIP_PROXY})
    with Topology(prefix=PREFIX) as topo:
        lg = lab.add_legacy_ns(topo)
        hosts = lab.add_hosts(topo, 2, lg.ns)
        server, legacy_end, nic = lab.add_server(topo, legacy_ns=lg.ns)
        ports = [p for _, p in hosts]
        legacy = legacy_ovs.LegacySwitch(
            work / "legacy", ports + [legacy_end],
            access=dict(zip(ports, VIDS)), trunks={legacy_end: list(VIDS)},
            netns=lg.ns)
        with legacy:
            if gateway:
                # h1's port as an 802.1Q tunnel port (module comment)
                two_tags(legacy.ovs)
                legacy.ovs.vsctl("set", "port", ports[0],
                                 "vlan_mode=dot1q-tunnel",
                                 "other_config:qinq-ethtype=802.1q")
            setup = Setup(name, str(work / "server"), server.ns, nic, binary)
            try:
                gen, cap = hosts[0][0], hosts[1][0]
                with CpuPeak(vswitchd_pid(legacy.ovs)) as legacy_cpu:
                    rows = run_bench(binary, setup, gen, cap, args,
                                     work / "bench", workloads) \
                        if workloads else []
                counters = legacy_counters(legacy, {
                    "h1": ports[0], "h2": ports[1], "trunk": legacy_end})
                ping = ping_latency(work, server, gen, cap, args.pings,
                                    args.ping_rounds)
            finally:
                setup.close()
    return {"throughput": rows + skipped, "ping": ping,
            "legacy_cpu_peak_pct": legacy_cpu.peak,
            "legacy_counters": counters,
            "load": os.getloadavg()}


def fmt(v, digits=3):
    if isinstance(v, float):
        return "%.*f" % (digits, v)
    return "-" if v is None else str(v)


def report(results, args):
    lines = ["# HARMLESS evaluation", "",
             "Setups: %s; workloads %s; sizes %s; %s-second windows; "
             "%d rounds of %d pings." % (
                 ", ".join(results), args.workloads, args.sizes,
                 args.seconds, getattr(args, "ping_rounds", 1), args.pings),
             "",
             "## Ping latency, h1 -> h2 (os-ken learning switch)", "",
             "| setup | median avg RTT (ms) | rounds' spread (ms) | "
             "received |", "|---|---|---|---|"]
    for name, r in results.items():
        p = r["ping"]
        if "error" in p:
            lines.append("| %s | %s | | |" % (name, p["error"]))
        else:
            spread = "%s-%s" % (fmt(p["rtt_round_min_ms"]),
                                fmt(p["rtt_round_max_ms"])) \
                if "rtt_round_min_ms" in p else "-"
            lines.append("| %s | %s | %s | %d/%d |" % (
                name, fmt(p["rtt_avg_ms"]), spread, p["received"],
                p["sent"]))
    lines += ["", "## Throughput, 64-byte frames h1 -> h2 (Mpps)", "",
              "| setup | workload | flows | max Mpps | offered Mpps | "
              "loss at max | no-loss Mpps | switch CPU % |",
              "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        for row in r["throughput"]:
            if "error" in row:
                cells = [row["workload"], row["error"]] \
                    if row.get("workload") else [row["error"], ""]
                lines.append("| %s | %s | %s | | | | | |" % (
                    (name,) + tuple(cells)))
                continue
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, row.get("workload"), fmt(row.get("flows")),
                fmt(row.get("max_mpps")), fmt(row.get("offered_mpps")),
                fmt(row.get("loss_at_max")), fmt(row.get("no_loss_mpps")),
                fmt(row.get("switch_cpu_pct"), 0)))
    peaks = ["%s: %s" % (n, fmt(r["legacy_cpu_peak_pct"], 0))
             for n, r in results.items()
             if r.get("legacy_cpu_peak_pct") is not None]
    if peaks:
        lines += ["", "Legacy switch (its ovs-vswitchd) at its busiest during "
                  "the bench, % of one core over 1 s: " + "; ".join(peaks)
                  + "."]
    drops = []
    for n, r in results.items():
        c = r.get("legacy_counters") or {}
        if "h1" in c and "trunk" in c:
            drops.append("%s: h1's port rx %d (dropped %d), trunk tx %d "
                         "(dropped %d) rx %d, h2's port tx %d" % (
                             n, c["h1"]["rx"], c["h1"]["rx_dropped"],
                             c["trunk"]["tx"], c["trunk"]["tx_dropped"],
                             c["trunk"]["rx"], c.get("h2", {}).get("tx", 0)))
    if drops:
        lines += ["", "Legacy switch port counters after the bench "
                  "(frames, all workloads): " + "; ".join(drops) + "."]
    loads = ["%s: %s" % (n, " ".join("%.1f" % x for x in r["load"]))
             for n, r in results.items() if r.get("load")]
    if loads:
        lines += ["", "Load average (1, 5, 15 min) after each setup: "
                  + "; ".join(loads) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="oxflow harmless eval",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--setups", default=None,
                    help="comma-separated: trunk, proxy, s4 (default: all "
                    "three; trunk only when oxflow has --trunk)")
    ap.add_argument("--workloads", default="l2,l3,lb_acl,gateway")
    ap.add_argument("--sizes", default="100,1000")
    ap.add_argument("--seconds", type=float, default=1)
    ap.add_argument("--pings", type=int, default=50,
                    help="echo requests per round (20 ms apart)")
    ap.add_argument("--ping-rounds", type=int, default=5)
    ap.add_argument("--full", action="store_true",
                    help="sizes 100..100000, 2 s windows, no-loss search")
    ap.add_argument("--out", default=None,
                    help="output directory (default results/harmless-TIME)")
    args = ap.parse_args(argv)
    if args.full:
        args.sizes, args.seconds = "100,1000,10000,100000", 2
    if os.geteuid() != 0:
        ap.error("needs root (network namespaces)")
    binary = manager.oxflow_binary({})
    if args.setups:
        setups = [s.strip() for s in args.setups.split(",") if s.strip()]
    else:
        setups = (["trunk"] if manager.trunk_supported(binary) else []) + \
            ["proxy", "s4"]
    for s in setups:
        if s not in ("proxy", "s4", "trunk"):
            ap.error("--setups: unknown setup %r" % s)
    if "trunk" in setups and not manager.trunk_supported(binary):
        ap.error("--setups trunk: %s run has no --trunk" % binary)
    out = pathlib.Path(args.out or "results/harmless-%s" % time.strftime(
        "%Y%m%d-%H%M%S"))
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for s in setups:
        print("== %s" % s, flush=True)
        results[s] = run_setup(s, args, binary, out)
    (out / "results.json").write_text(json.dumps(
        {"args": vars(args), "binary": binary, "results": results},
        indent=1))
    text = report(results, args)
    (out / "report.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
