"""The data-centre evaluation: a Spine-Leaf in Mininet, web-search and
data-mining traffic at several offered loads, oxflow against Open vSwitch.

    sudo .venv/bin/python -m oxflow.datacenter [--full] [--out DIR] ...
    oxflow eval datacenter [...]          (the same, from the binary)
    make eval-datacenter [EVAL_ARGS=...]

Per switch kind and repeat, `Fabric` builds the topology once
(`oxflow.dctopo.SpineLeafTopo`, every link shaped to --bw Mbit/s by an htb
class, no netem), starts the os-ken app `oxflow.apps.fabric` (static routes,
ECMP through a SELECT group on each leaf) and waits until every switch has
its rules; then every (distribution, load) runs on it in turn: one
`oxflow.dcflows` agent per host carrying the flows of `dcflows.schedule`.
Flows starting in the warm-up are carried but not counted. Results
(`report.write_report`): flows.csv, summary.csv, plots (SVG), index.html.

The runner samples the machine's CPU while traffic runs and flags runs in
which it was saturated, since then the switches, not the links, bound FCT.

Interrupts: SIGINT/SIGTERM stop the agents, the controller, every switch
and the Mininet links and namespaces this run made (`Fabric.close`). A
signal is noted and acted on at the next check between two steps
(`Interrupt`), never inside a Mininet call: a node interrupted in the
middle of `cmd()` keeps a shell that is still running the command, and
the clean-up's own commands on that node would then fail or wait forever,
leaving switches behind.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from oxflow import dcflows, dctopo
from oxflow.netns import Managed

class Interrupt:
    """The first SIGINT/SIGTERM of a run (its number; None: none yet),
    turned into KeyboardInterrupt by `check()` at points where every
    process and Mininet node is in a known state (module comment)."""

    signum = None

    @classmethod
    def handler(cls, signum, _frame):
        if cls.signum is None:
            cls.signum = signum

    @classmethod
    def check(cls):
        if cls.signum is not None:
            raise KeyboardInterrupt("signal %d" % cls.signum)


DEFAULTS = {"spines": 4, "leaves": 4, "servers": 4, "bw": 100.0,
            "duration": 25.0, "warmup": 5.0, "drain": 20.0, "repeats": 1,
            "max_size": 30e6}
FULL = {"spines": 4, "leaves": 4, "servers": 20, "bw": 100.0,
        "duration": 1800.0, "warmup": 800.0, "drain": 300.0, "repeats": 10,
        "max_size": 0}
SWITCH_KINDS = ("oxflow", "ovs")
# `oxflow run --poll-spin-us` of the fabric's switches; None: oxflow's own
# default (docs/datacenter.md).
POLL_SPIN_US = None
AGENT_PORT = 5001
_STALE_LINK_RE = re.compile(r"^(lf|sp)\d+-eth\d+$")


def _p99(values):
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(0.99 * len(s)))]


class SetupError(RuntimeError):
    """What is missing or wrong before a run starts."""


def _size(text):
    """"30MB", "500K", "1e6" -> bytes (decimal units); 0 = no cap."""
    m = re.match(r"^\s*([0-9.eE+]+)\s*([kKmMgG]?)[bB]?\s*$", str(text))
    if not m:
        raise argparse.ArgumentTypeError("not a size: %r" % text)
    mult = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    return float(m.group(1)) * mult


def check_environment(kinds):
    """Raise SetupError naming every missing piece (before anything runs)."""
    problems = []
    if os.geteuid() != 0:
        problems.append("must run as root (Mininet creates namespaces and "
                        "links)")
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        problems.append("the mininet Python module is missing: run "
                        "scripts/setup.sh (Debian package `mininet`)")
    for tool in ("mnexec", "tc", "ip", "ethtool"):
        if shutil.which(tool) is None:
            problems.append("`%s` not found: run scripts/setup.sh" % tool)
    if "oxflow" in kinds:
        from oxflow.switch import oxflow_bin
        try:
            oxflow_bin()
        except FileNotFoundError as exc:
            problems.append(str(exc))
    if "ovs" in kinds:
        from oxflow.netns import OvsSwitch
        if not OvsSwitch.available():
            problems.append("Open vSwitch is missing (ovsdb-server, "
                            "ovs-vswitchd, ovs-vsctl, ovs-ofctl): run "
                            "scripts/setup.sh or leave `ovs` out of "
                            "--switches")
    if problems:
        raise SetupError("cannot start:\n  - " + "\n  - ".join(problems))


def cleanup_stale_links():
    """Delete switch-side links a killed earlier run left behind (names
    lf<N>-eth<M> / sp<N>-eth<M>, which only this evaluation makes)."""
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        parts = line.split(":")
        if len(parts) < 2:
            continue
        name = parts[1].strip().split("@")[0]
        if _STALE_LINK_RE.match(name):
            subprocess.run(["ip", "link", "del", name], capture_output=True)


class CpuSampler:
    """Busy fraction of all CPUs between start() and stop() (/proc/stat)."""

    @staticmethod
    def _ticks():
        with open("/proc/stat") as f:
            vals = [int(v) for v in f.readline().split()[1:]]
        idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
        return sum(vals), idle

    def start(self):
        self.t0 = self._ticks()
        return self

    def stop(self):
        total, idle = self._ticks()
        dt = total - self.t0[0]
        return 0.0 if dt <= 0 else 1.0 - (idle - self.t0[1]) / dt


class AgentSink:
    """Collects the JSON lines traffic agents print: a reader thread per
    agent appends flow records and "done" markers under a lock."""

    def __init__(self, rundir):
        self.rundir = rundir
        self.lock = threading.Lock()
        self.records = []
        self.done = set()
        self.threads = []

    def follow(self, name, stream):
        t = threading.Thread(target=self._read, args=(name, stream),
                             daemon=True)
        t.start()
        self.threads.append(t)

    def _read(self, name, stream):
        with open(os.path.join(self.rundir, "%s.out" % name), "w") as copy:
            for raw in stream:
                line = raw.decode(errors="replace")
                copy.write(line)
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                with self.lock:
                    if "done" in obj:
                        self.done.add(obj["done"])
                    elif "id" in obj:
                        self.records.append(obj)

    def snapshot(self):
        with self.lock:
            return list(self.records), set(self.done)

    def join(self, timeout=5):
        for t in self.threads:
            t.join(timeout)


class Fabric(Managed):
    """A running Spine-Leaf: Mininet network, switches of one kind, the
    fabric controller. Context manager; `close()` undoes everything."""

    def __init__(self, kind, spines, leaves, servers, bw, workdir,
                 log=print, machines=None, controller_ip="127.0.0.1",
                 poll_spin_us=POLL_SPIN_US):
        """machines: names for Mininet's cluster mode (oxflow.dccluster),
        None for one machine; controller_ip: where the switches reach the
        controller (an address of this machine the others can reach)."""
        self.machines = machines
        self.poll_spin_us = poll_spin_us
        self.controller_ip = controller_ip
        self.kind = kind
        self.shape = (spines, leaves, servers)
        self.bw = bw
        self.workdir = workdir
        self.log = log
        self.net = None
        self.ctrl = None
        self.agents = []

    def switch_class(self):
        from oxflow.mininet_switch import OxflowSwitch, UserOvsSwitch
        if self.machines:
            if self.kind != "oxflow":
                raise SetupError("--machines runs oxflow only (the private "
                                 "user-space OVS is one local instance)")
            from oxflow import dccluster
            return dccluster.cluster_classes()[1]
        if self.kind == "oxflow":
            return OxflowSwitch
        UserOvsSwitch.workdir = os.path.join(self.workdir, "ovs")
        return UserOvsSwitch

    def start(self, ready_timeout=60):
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import RemoteController
        from oxflow.netns import free_tcp_port
        from oxflow.switch import controller_process

        setLogLevel("warning")
        os.makedirs(self.workdir, exist_ok=True)
        cleanup_stale_links()
        rules = {str(k): v for k, v in
                 dctopo.fabric_rules(*self.shape).items()}
        rules_path = os.path.join(self.workdir, "fabric.json")
        with open(rules_path, "w") as f:
            json.dump(rules, f)
        port = free_tcp_port()
        self.ctrl_log = os.path.join(self.workdir, "controller.log")
        self.ctrl = controller_process(
            port, self.ctrl_log, apps=["oxflow.apps.fabric"],
            env={"OXFLOW_FABRIC": rules_path},
            host="0.0.0.0" if self.machines else "127.0.0.1")
        self.ctrl.start()
        self.ctrl.wait_for_port(port, timeout=30)
        Interrupt.check()
        cls = self.switch_class()
        logdir = os.path.join(self.workdir, "switches")

        def make_switch(name, **params):
            if self.kind == "oxflow":
                params.setdefault("pollSpinUs", self.poll_spin_us)
            return cls(name, logdir=logdir, **params)

        if self.machines:
            from oxflow import dccluster
            cluster, cls, host_cls, link_cls = dccluster.cluster_classes()
            where = dccluster.placement(*self.shape, self.machines)
            topo = dctopo.SpineLeafTopo(*self.shape, bw=self.bw,
                                        placement=where)
            self.net = cluster(topo=topo, switch=make_switch, host=host_cls,
                               link=link_cls, servers=self.machines,
                               controller=None, autoSetMacs=False,
                               autoStaticArp=False, build=False)
        else:
            topo = dctopo.SpineLeafTopo(*self.shape, bw=self.bw)
            self.net = Mininet(topo=topo, switch=make_switch,
                               link=dctopo.HtbLink, controller=None,
                               autoSetMacs=False, autoStaticArp=False,
                               build=False)
        self.net.addController(RemoteController(
            "c0", ip=self.controller_ip, port=port))
        self.net.build()
        Interrupt.check()
        self.net.start()
        Interrupt.check()
        self.net.staticArp()
        for h in self.net.hosts:
            Interrupt.check()
            h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1")
        want = {dctopo.spine_dpid(j) for j in range(1, self.shape[0] + 1)}
        want |= {dctopo.leaf_dpid(lf) for lf in range(1, self.shape[1] + 1)}
        deadline = time.monotonic() + ready_timeout
        while True:
            Interrupt.check()
            text = self.ctrl.log_text()
            got = {int(m, 16) for m in re.findall(r"fabric ready dpid=(\w+)",
                                                  text)}
            if want <= got:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("switches without rules after %ds: %s "
                                   "(controller log %s)" % (
                                       ready_timeout,
                                       sorted("%x" % d for d in want - got),
                                       self.ctrl_log))
            time.sleep(0.2)
        return self

    def hosts(self):
        return dctopo.hosts_by_leaf(*self.shape)

    def ping_check(self):
        """One ping between the first and last server (different leaves);
        raises RuntimeError when it fails."""
        hs = self.hosts()
        src = self.net.get(hs[0][1])
        out = src.cmd("ping -c 2 -W 2 %s" % hs[-1][2])
        if " 0% packet loss" not in out and "1 received" not in out:
            raise RuntimeError("no connectivity %s -> %s:\n%s" % (
                hs[0][1], hs[-1][1], out))

    def run_flows(self, flows, tag, timeout, progress=None):
        """Carry `flows` (dcflows.schedule format) with one agent per host;
        returns (records, info). Waits until every agent has finished its
        flows or `timeout` seconds after the last start.

        Each agent gets its schedule on standard input and writes its
        records to standard output (so an agent on another machine needs
        no shared files); a thread per agent collects them, and copies
        them to <workdir>/<tag>/<host>.out."""
        rundir = os.path.join(self.workdir, tag)
        os.makedirs(rundir, exist_ok=True)
        names = [name for _, name, _ in self.hosts()]
        per_host = {n: [] for n in names}
        for fl in flows:
            per_host[fl["src"]].append(fl)
        # `env VAR=...` rather than Popen's env=: an agent on another
        # machine is started over ssh, which does not carry the environment
        pythonpath = os.path.dirname(os.path.dirname(os.path.abspath(
            dcflows.__file__)))
        t0 = time.time() + 2.0 + 0.15 * len(names)
        sink = AgentSink(rundir)
        for n in names:
            Interrupt.check()
            host = self.net.get(n)
            log = open(os.path.join(rundir, "%s.log" % n), "w")
            proc = host.popen(["env", "PYTHONPATH=" + pythonpath,
                               sys.executable, "-m", "oxflow.dcflows",
                               "agent", "--name", n, "--port",
                               str(AGENT_PORT), "--schedule", "-",
                               "--t0", repr(t0), "--out", "-"],
                              mncmd=["mnexec", "-a", str(host.pid)],
                              stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=log)
            log.close()
            self.agents.append(proc)
            proc.stdin.write("".join(json.dumps(fl) + "\n"
                                     for fl in per_host[n]).encode())
            proc.stdin.close()
            sink.follow(n, proc.stdout)
        spine_before = self.spine_tx_bytes()
        last = max([fl["start"] for fl in flows] or [0.0])
        deadline = t0 + last + timeout
        cpu = None
        total = len(flows)
        while True:
            Interrupt.check()
            now = time.time()
            if cpu is None and now >= t0:
                cpu = CpuSampler().start()
            records, done = sink.snapshot()
            if progress:
                progress(max(0.0, now - t0), len(records), total)
            if len(done) == len(names) or now > deadline:
                break
            if any(p.poll() is not None for p in self.agents):
                raise RuntimeError("a traffic agent exited early (see %s)"
                                   % rundir)
            time.sleep(0.5)
        busy = cpu.stop() if cpu else 0.0
        spine_after = self.spine_tx_bytes()
        self.stop_agents()
        sink.join()
        records, done = sink.snapshot()
        finished = {r["id"] for r in records}
        for fl in flows:
            if fl["id"] not in finished:
                records.append({"id": fl["id"], "src": fl["src"],
                                "dst": fl["dst"], "size": fl["size"],
                                "class": dcflows.flow_class(fl["size"]),
                                "start": fl["start"], "fct": None,
                                "error": "not finished in time"})
        records.sort(key=lambda r: r["id"])
        sent = [a - b for a, b in zip(spine_after, spine_before)]
        share = [round(x / sum(sent), 3) if sum(sent) else 0.0 for x in sent]
        return records, {"cpu_busy": busy, "elapsed": time.time() - t0,
                         "spine_share": share}

    def spine_tx_bytes(self):
        """Bytes each spine sent so far (kernel counters of its ports, so
        the same for every switch kind); [] in cluster mode."""
        if self.machines:
            return []
        out = []
        for j in range(1, self.shape[0] + 1):
            total = 0
            for leaf in range(1, self.shape[1] + 1):
                path = "/sys/class/net/sp%d-eth%d/statistics/tx_bytes" % (
                    j, leaf)
                try:
                    with open(path) as f:
                        total += int(f.read())
                except (OSError, ValueError):
                    pass
            out.append(total)
        return out

    def stop_agents(self):
        for p in self.agents:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.agents:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        self.agents = []

    def close(self):
        self.stop_agents()
        if self.net is not None:
            try:
                self.net.stop()
            except Exception as exc:  # keep cleaning up the rest
                self.log("warning: net.stop: %s" % exc)
            self.net = None
        if self.kind == "ovs":
            from oxflow.mininet_switch import UserOvsSwitch
            UserOvsSwitch.teardown()
        if self.ctrl is not None:
            self.ctrl.stop(grace=3)
            self.ctrl = None
        cleanup_stale_links()


class Progress:
    """One self-overwriting status line on stderr."""

    def __init__(self, total_runs, stream=sys.stderr):
        self.total = total_runs
        self.done = 0
        self.stream = stream
        self.tty = stream.isatty()
        self.label = ""

    def run(self, label):
        self.label = label

    def update(self, elapsed, flows_done, flows_total):
        width = 24
        frac = (self.done + (flows_done / flows_total if flows_total
                             else 0)) / max(1, self.total)
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        line = "[%s] %d/%d %s t=%.0fs flows %d/%d" % (
            bar, self.done + 1, self.total, self.label, elapsed, flows_done,
            flows_total)
        if self.tty:
            self.stream.write("\r" + line.ljust(78)[:100])
        self.stream.flush()

    def finish_run(self, summary):
        self.done += 1
        if self.tty:
            self.stream.write("\r")
        self.stream.write("[%d/%d] %s: %s\n" % (self.done, self.total,
                                                self.label, summary))
        self.stream.flush()


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="oxflow eval datacenter",
        description="Spine-Leaf data-centre evaluation in Mininet: "
        "web-search and data-mining flows at several loads, oxflow vs "
        "Open vSwitch (user-space datapath); FCT and throughput per flow "
        "class with 95%% confidence intervals. Needs root.")
    ap.add_argument("--full", action="store_true",
                    help="the paper's parameters: 4-4-20, 1800 s runs with "
                    "800 s warm-up, 10 repeats, uncapped flow sizes "
                    "(many hours)")
    ap.add_argument("--switches", default="oxflow,ovs",
                    help="comma list of: %s (default oxflow,ovs)" %
                    ", ".join(SWITCH_KINDS))
    ap.add_argument("--dists", default="websearch,datamining",
                    help="comma list of flow-size distributions: %s" %
                    ", ".join(dcflows.distributions()))
    ap.add_argument("--loads", default="10,20,40",
                    help="comma list of offered loads in percent of the "
                    "servers' access capacity (default 10,20,40)")
    for key, typ, hlp in (
            ("spines", int, "spine switches"),
            ("leaves", int, "leaf switches"),
            ("servers", int, "servers per leaf"),
            ("bw", float, "link rate in Mbit/s (every link)"),
            ("duration", float, "seconds of flow arrivals per run, "
             "warm-up included"),
            ("warmup", float, "seconds at the start whose flows are not "
             "counted"),
            ("drain", float, "seconds to wait after the last arrival for "
             "flows to finish"),
            ("repeats", int, "runs per (switch, distribution, load)")):
        ap.add_argument("--" + key, type=typ, default=None,
                        help="%s (default %s, --full %s)" % (
                            hlp, DEFAULTS[key], FULL[key]))
    ap.add_argument("--max-size", type=_size, default=None,
                    help="cap flow sizes at this many bytes (e.g. 30MB; 0: "
                    "no cap; default 30MB, --full: no cap)")
    ap.add_argument("--machines", default=None,
                    help="comma list of machines for Mininet's cluster mode "
                    "(oxflow only; docs/datacenter.md), e.g. localhost,m2,m3")
    ap.add_argument("--controller-ip", default=None,
                    help="with --machines: this machine's address the "
                    "others reach the controller at (default 127.0.0.1 "
                    "when every machine is localhost)")
    ap.add_argument("--poll-spin-us", type=int, default=POLL_SPIN_US,
                    help="oxflow switches' --poll-spin-us: microseconds an "
                    "idle worker keeps polling after its last frame before "
                    "it blocks in poll(2); 0: at once (default: oxflow "
                    "run's own, 25)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None,
                    help="output directory (default results/datacenter-"
                    "<UTC time>)")
    args = ap.parse_args(argv)
    base = FULL if args.full else DEFAULTS
    for key in base:
        if getattr(args, key) is None:
            setattr(args, key, base[key])
    return ap, args


def validate(ap, args):
    """Turn the arguments into lists, or exit with what is wrong."""
    kinds = [k.strip() for k in args.switches.split(",") if k.strip()]
    for k in kinds:
        if k not in SWITCH_KINDS:
            ap.error("unknown switch %r in --switches (known: %s)" % (
                k, ", ".join(SWITCH_KINDS)))
    dists = [d.strip() for d in args.dists.split(",") if d.strip()]
    for d in dists:
        if d not in dcflows.distributions():
            ap.error("unknown distribution %r in --dists (known: %s)" % (
                d, ", ".join(dcflows.distributions())))
    loads = []
    for text in args.loads.split(","):
        try:
            value = float(text)
        except ValueError:
            ap.error("--loads: %r is not a number" % text)
        if not 0 < value < 100:
            ap.error("--loads: %s is outside (0, 100)" % text)
        loads.append(value)
    try:
        dctopo.check_shape(args.spines, args.leaves, args.servers)
    except ValueError as exc:
        ap.error("topology: %s" % exc)
    if not 0 < args.bw <= 1000:
        ap.error("--bw must be in (0, 1000] Mbit/s, got %s" % args.bw)
    if args.duration <= 0 or not 0 <= args.warmup < args.duration:
        ap.error("need 0 <= --warmup < --duration, got %s and %s" % (
            args.warmup, args.duration))
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.poll_spin_us is not None and \
            not 0 <= args.poll_spin_us <= 1000000:
        ap.error("--poll-spin-us must be in 0..1000000, got %d" %
                 args.poll_spin_us)
    if args.machines is not None:
        args.machines = [m.strip() for m in args.machines.split(",")
                         if m.strip()]
        if not args.machines:
            ap.error("--machines: no machine named")
        if kinds != ["oxflow"]:
            ap.error("--machines runs oxflow only: add --switches oxflow")
        remote = [m for m in args.machines if m != "localhost"]
        if remote and not args.controller_ip:
            ap.error("--machines with other machines (%s) needs "
                     "--controller-ip" % ", ".join(remote))
    if not args.controller_ip:
        args.controller_ip = "127.0.0.1"
    if not (kinds and dists and loads):
        ap.error("nothing to run")
    return kinds, dists, loads


def run_one(args, kind, dist, load, rep, seed, cdf, workdir, progress,
            all_flows):
    """Build the fabric for `kind`, carry one schedule, tear it down;
    appends the flow records to all_flows and returns the run's facts."""
    with Fabric(kind, args.spines, args.leaves, args.servers, args.bw,
                os.path.join(workdir, "%s-%s-%g-%d" % (kind, dist, load,
                                                       rep)),
                machines=args.machines,
                controller_ip=args.controller_ip,
                poll_spin_us=args.poll_spin_us) as fab:
        Interrupt.check()
        fab.ping_check()
        Interrupt.check()
        flows = dcflows.schedule(cdf, fab.hosts(), load, args.duration,
                                 args.bw, seed,
                                 max_size=args.max_size or None)
        progress.run("%s %s %g%% rep %d" % (kind, dist, load, rep + 1))
        recs, info = fab.run_flows(flows, "traffic", args.drain,
                                   progress=progress.update)
    for r in recs:
        r.update(switch=kind, dist=dist, load=load, rep=rep,
                 counted=r["start"] >= args.warmup)
    all_flows += recs
    run = {"switch": kind, "dist": dist, "load": load, "rep": rep,
           "flows": len(recs),
           "unfinished": sum(1 for r in recs if r.get("fct") is None),
           "cpu_busy": round(info["cpu_busy"], 3),
           # how late agents started flows (a busy machine delays them)
           "lag_p99_ms": round(1e3 * _p99([r["lag"] for r in recs
                                           if r.get("lag") is not None]), 1),
           "spine_share": " ".join("%.2f" % x for x in info["spine_share"])}
    progress.finish_run("%d flows, %d unfinished, CPU %.0f%% busy, spine "
                        "shares %s" % (run["flows"], run["unfinished"],
                                       100 * run["cpu_busy"],
                                       run["spine_share"] or "-"))
    return run


def main(argv=None):
    from oxflow import dcreport

    ap, args = parse_args(argv)
    kinds, dists, loads = validate(ap, args)
    try:
        check_environment(kinds)
    except SetupError as exc:
        print("oxflow eval datacenter: %s" % exc, file=sys.stderr)
        return 2
    out = args.out or os.path.join(
        "results", "datacenter-" + time.strftime("%Y%m%d-%H%M%S",
                                                 time.gmtime()))
    os.makedirs(out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="oxflow-dc-")

    Interrupt.signum = None
    handlers = {sig: signal.signal(sig, Interrupt.handler)
                for sig in (signal.SIGINT, signal.SIGTERM)}
    cdfs = {d: dcflows.FlowSizeCdf.load(d) for d in dists}
    params = {k: getattr(args, k) for k in DEFAULTS}
    params.update(seed=args.seed, switches=kinds, dists=dists, loads=loads,
                  full=args.full, command=" ".join(sys.argv))
    progress = Progress(len(kinds) * args.repeats * len(dists) * len(loads))
    all_flows, runs = [], []
    print("oxflow eval datacenter: %d-%d-%d Spine-Leaf, %g Mbit/s links, "
          "%d run(s), each %gs of arrivals (flows of the first %gs not "
          "counted); logs in %s, results in %s" % (
              args.spines, args.leaves, args.servers, args.bw,
              progress.total, args.duration, args.warmup, workdir, out),
          file=sys.stderr)
    try:
        # Switch kinds alternate within every (repeat, distribution, load),
        # each on a freshly built fabric and with the same flow schedule,
        # so a change in the machine's load hits both alike.
        for rep in range(args.repeats):
            for dist in dists:
                for load in loads:
                    seed = args.seed * 1000003 + rep * 7919 + \
                        int(load * 10) + 17 * dists.index(dist)
                    for kind in kinds:
                        Interrupt.check()
                        run = run_one(args, kind, dist, load, rep, seed,
                                      cdfs[dist], workdir, progress,
                                      all_flows)
                        runs.append(run)
    except KeyboardInterrupt as exc:
        print("\ninterrupted (%s): cleaned up; partial results follow" % (
            exc or "SIGINT"), file=sys.stderr)
    finally:
        for sig, old in handlers.items():
            signal.signal(sig, old)
    if not all_flows:
        print("no flows measured", file=sys.stderr)
        return 1
    paths = dcreport.write_report(out, all_flows, runs, params)
    print("report: %s" % paths["html"], file=sys.stderr)
    print(dcreport.markdown_table(dcreport.summarize(all_flows, runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
