"""`make demo`: oxflow switching real traffic between three hosts.

    sudo .venv/bin/python -m oxflow.demo [--keep-logs]

1. Three hosts (network namespaces h1, h2, h3 with 10.0.0.1-3/24), each
   wired to the switch by a veth pair.
2. oxflow in fail-standalone mode with no controller: an L2 learning
   switch. Every host pings every other host.
3. The os-ken learning-switch app (oxflow.apps.learning_switch) as the
   controller, oxflow restarted to use it (fail-secure): ping all pairs
   again, then the flows the app installed (`oxflow ctl dump-flows`) and the
   port counters (`oxflow ctl dump-ports`).
4. Clean-up (namespaces, veths, processes), also on Ctrl-C or failure.

Exit status 0 when every ping got a reply, 1 otherwise.
"""

import argparse
import itertools
import os
import shutil
import signal
import socket
import sys
import tempfile

from .netns import Topology, free_tcp_port
from .switch import Switch, controller_process, oxflow_bin

BOLD = "\033[1m" if sys.stdout.isatty() else ""
GREEN = "\033[32m" if sys.stdout.isatty() else ""
RED = "\033[31m" if sys.stdout.isatty() else ""
RESET = "\033[0m" if sys.stdout.isatty() else ""


def say(msg):
    print("\n%s== %s%s" % (BOLD, msg, RESET), flush=True)


def info(msg):
    print("   " + msg, flush=True)


def port_or_free(port):
    """`port` on 127.0.0.1 if nobody listens there, else a free one."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return port
        except OSError:
            return free_tcp_port()


def ping_all(topo):
    """Pings every ordered pair (3 echo requests); prints one line per pair
    and returns the number of pairs without any reply."""
    failures = 0
    hosts = list(topo.hosts.values())
    for a, b in itertools.permutations(hosts, 2):
        r = a.ping(b.ip(), count=3, interval=0.2, timeout=2)
        ok = r.received > 0
        failures += not ok
        rtt = "avg %.2f ms" % r.rtt_avg_ms if r.rtt_avg_ms is not None else ""
        info("%s (%s) -> %s (%s): %d/%d replies %s  %s" % (
            a.name, a.ip(), b.name, b.ip(), r.received, r.transmitted, rtt,
            GREEN + "ok" + RESET if ok else RED + "FAILED" + RESET))
    return failures


def show(title, proc):
    info(title)
    for line in (proc.stdout + proc.stderr).rstrip().splitlines():
        print("     " + line)


def run(logdir):
    failures = 0
    binary = oxflow_bin()
    say("Step 1: three hosts in network namespaces, wired to the switch")
    with Topology() as topo:
        for i in (1, 2, 3):
            h = topo.add_host("h%d" % i)
            root = topo.add_switch_link(h, "10.0.0.%d/24" % i)
            info("%s: namespace %s, eth0 %s (%s) <-veth-> switch port %d "
                 "(%s)" % (h.name, h.ns, h.ip(), h.mac(), i, root))

        listen_port = port_or_free(6634)
        target = "tcp:127.0.0.1:%d" % listen_port
        listen = "ptcp:%d:127.0.0.1" % listen_port

        say("Step 2: oxflow in standalone mode, no controller")
        sw = Switch(topo, dpid=1, fail_mode="standalone", listen=listen,
                    log_path=os.path.join(logdir, "oxflow-standalone.log"))
        info("$ " + " ".join(sw.argv()))
        info("Without a controller, fail-standalone makes oxflow an L2 "
             "learning switch.")
        with sw:
            info("oxflow is up (pid %d); management listener %s" % (
                sw.pid, target))
            say("Pinging all pairs through the learning switch")
            failures += ping_all(topo)
            show("$ oxflow ctl dump-ports %s" % target, sw.ctl("dump-ports"))
            code = sw.stop()
            info("oxflow stopped with SIGTERM (exit status %s)" % code)

        say("Step 3: the os-ken learning-switch app as controller")
        ctl_port = port_or_free(6653)
        ctrl = controller_process(
            ctl_port, os.path.join(logdir, "os-ken.log"))
        info("$ " + " ".join(ctrl.cmd))
        with ctrl:
            ctrl.wait_for_port(ctl_port, timeout=30)
            info("os-ken listens on tcp:127.0.0.1:%d" % ctl_port)
            sw = Switch(topo, dpid=1, fail_mode="secure", listen=listen,
                        controllers=["tcp:127.0.0.1:%d" % ctl_port],
                        log_path=os.path.join(logdir, "oxflow-osken.log"))
            info("Restarting oxflow pointed at the controller "
                 "(fail-secure: only the controller's flows forward):")
            info("$ " + " ".join(sw.argv()))
            with sw:
                sw.wait_for_flows(r"actions=CONTROLLER", timeout=20)
                info("Connected: the app installed its table-miss flow "
                     "(send to controller).")
                say("Pinging all pairs through the controller's flows")
                failures += ping_all(topo)
                say("Flows the learning-switch app installed")
                show("$ oxflow ctl dump-flows %s" % target,
                     sw.ctl("dump-flows"))
                say("Port counters")
                show("$ oxflow ctl dump-ports %s" % target,
                     sw.ctl("dump-ports"))
                code = sw.stop()
                info("oxflow stopped (exit status %s)" % code)
        say("Step 4: cleaning up namespaces, veth pairs and processes")
    return failures


def run_demo(name, run, args, failed, succeeded):
    """Runs a demo's `run(logdir)` as root with a log directory: returns
    the exit status (0, 1 on failures or an exception, 2 without root,
    130 when interrupted). `failed(n)` words n failures; `succeeded` is
    the closing line. Shared by the demos of this package."""
    if os.geteuid() != 0:
        print("the demo needs root (network namespaces): run it with sudo",
              file=sys.stderr)
        return 2
    # SIGTERM cleans up like Ctrl-C (context managers run on the way out).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    logdir = tempfile.mkdtemp(prefix="oxflow-%s-" % name)
    try:
        failures = run(logdir)
    except KeyboardInterrupt:
        print("\ninterrupted: cleaned up", file=sys.stderr)
        return 130
    except Exception as exc:
        print("\n%sdemo failed:%s %s\nlogs in %s" % (RED, RESET, exc, logdir),
              file=sys.stderr)
        return 1
    if failures:
        say("%s%s%s; logs in %s" % (RED, failed(failures), RESET, logdir))
        return 1
    say(succeeded)
    if not args.keep_logs:
        shutil.rmtree(logdir, ignore_errors=True)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m oxflow.demo",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep the log directory even when all went well")
    args = ap.parse_args(argv)
    return run_demo("demo", run, args,
                    lambda n: "%d ping pair(s) failed" % n,
                    "%sAll pings succeeded in both modes.%s" % (GREEN, RESET))


if __name__ == "__main__":
    sys.exit(main())
