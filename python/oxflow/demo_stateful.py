"""`make demo-stateful`: port knocking in the switch (BEBA/OpenState).

    sudo .venv/bin/python -m oxflow.demo_stateful [--prefix P] [--keep-logs]

1. Two hosts in network namespaces (h1 10.0.0.1, h2 10.0.0.2), each wired
   to oxflow by a veth pair; the os-ken app oxflow.apps.beba.portknock as
   controller. It makes table 0 stateful (keyed by the IPv4 source) and
   installs the knock flows: UDP to 10, 11, 12, 13 in that order opens UDP
   port 22 of h2 for the knocking host; anything else closes it.
2. h1 sends to port 22: dropped. h1 knocks 10, 11, 12, 13; each knock
   moves its state (`oxflow ctl beba-dump-states`) and the switch tells
   the controller (STATE_CHANGED, in the controller's log). Port 22 now
   reaches h2.
3. A wrong knock: back to state 0, port 22 closed again.
4. Clean-up (namespaces, veths, processes), also on Ctrl-C or failure.

Exit status 0 when every step saw what it expects, 1 otherwise.
"""

import argparse
import os
import re
import sys
import time

from .apps.beba import portknock
from .demo import (BOLD, GREEN, RED, RESET, info, port_or_free, run_demo, say,
                   show)
from .netns import Topology
from .switch import Switch, controller_process

# Waits (at most 1.5 s) for one datagram on 10.0.0.2:PORT; prints it.
RECEIVE = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.0.0.2", int(sys.argv[1])))
print("ready", flush=True)
s.settimeout(1.5)
try:
    print(s.recv(100).decode(), flush=True)
except socket.timeout:
    print("-", flush=True)
"""

SEND = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in sys.argv[2:]:
    s.sendto(sys.argv[1].encode(), ("10.0.0.2", int(p)))
"""


def send(h1, tag, *ports):
    info("h1 -> 10.0.0.2 UDP %s" % ",".join(str(p) for p in ports))
    h1.run([sys.executable, "-c", SEND, tag] + [str(p) for p in ports])


def port22_open(h1, h2, tag):
    """Whether a datagram from h1 to h2's port 22 arrives."""
    import subprocess
    rx = h2.popen([sys.executable, "-u", "-c", RECEIVE,
                   str(portknock.OPEN_PORT)], stdout=subprocess.PIPE,
                  text=True)
    try:
        rx.stdout.readline()
        send(h1, tag, portknock.OPEN_PORT)
        got = rx.stdout.readline().strip() == tag
    finally:
        rx.kill()
        rx.wait()
    info("port 22 at h2: %s" % (GREEN + "received" + RESET if got
                                else "nothing (dropped by the switch)"))
    return got


def run(logdir, prefix):
    failures = 0

    def expect(ok, what):
        nonlocal failures
        if not ok:
            failures += 1
            info(RED + "unexpected: " + what + RESET)

    say("Step 1: two hosts, oxflow, and the port-knocking app")
    with Topology(prefix=prefix) as topo:
        h1 = topo.add_host("h1")
        topo.add_switch_link(h1, "10.0.0.1/24", mac="00:00:00:00:00:01")
        h2 = topo.add_host("h2")
        topo.add_switch_link(h2, "10.0.0.2/24", mac="00:00:00:00:00:02")
        ctl_port = port_or_free(6653)
        log = os.path.join(logdir, "os-ken.log")
        ctrl = controller_process(ctl_port, log,
                                  apps=["oxflow.apps.beba.portknock"])
        info("$ " + " ".join(ctrl.cmd))
        with ctrl:
            ctrl.wait_for_port(ctl_port, timeout=30)
            sw = Switch(topo, dpid=0xbeba,
                        controllers=["tcp:127.0.0.1:%d" % ctl_port],
                        listen="ptcp:%d:127.0.0.1" % port_or_free(6634),
                        log_path=os.path.join(logdir, "oxflow.log"))
            info("$ " + " ".join(sw.argv()))
            with sw:
                sw.wait_for_flows(r"tp_dst=%d,state=" % portknock.OPEN_PORT,
                                  timeout=30)
                show("$ oxflow ctl dump-flows %s" % sw.target,
                     sw.ctl("dump-flows"))
                # ARP through the flooding flow, before the first knock.
                h1.ping("10.0.0.2", count=1, timeout=2)

                say("Step 2: port 22 is closed; knock 10, 11, 12, 13")
                expect(not port22_open(h1, h2, "before"),
                       "port 22 open before knocking")
                for port in portknock.KNOCKS:
                    send(h1, "knock", port)
                    time.sleep(0.2)
                    show("$ oxflow ctl beba-dump-states %s 0" % sw.target,
                         sw.ctl("beba-dump-states", 0))
                states = sw.ctl("beba-dump-states", 0).stdout
                expect("key=0x0a000001 state=%d" % len(portknock.KNOCKS)
                       in states, "h1 not in state 4 after the knocks")
                info("STATE_CHANGED messages the controller received:")
                with open(log, errors="replace") as f:
                    changes = [l.strip() for l in f
                               if "beba state_changed" in l]
                for l in changes:
                    print("     " + re.sub(r"^.*?(beba )", r"\1", l))
                expect(len(changes) == len(portknock.KNOCKS),
                       "%d STATE_CHANGED, not 4" % len(changes))
                expect(port22_open(h1, h2, "open"),
                       "port 22 closed after the knocks")

                say("Step 3: a wrong knock closes it again")
                send(h1, "wrong", 99)
                time.sleep(0.2)
                show("$ oxflow ctl beba-dump-states %s 0" % sw.target,
                     sw.ctl("beba-dump-states", 0))
                expect(not port22_open(h1, h2, "after"),
                       "port 22 open after a wrong knock")
        say("Step 4: cleaning up namespaces, veth pairs and processes")
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m oxflow.demo_stateful",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--prefix", default="knk",
                    help="name prefix of the namespaces and veths")
    ap.add_argument("--keep-logs", action="store_true",
                    help="keep the log directory even when all went well")
    args = ap.parse_args(argv)
    return run_demo("demo-stateful", lambda logdir: run(logdir, args.prefix),
                    args, lambda n: "%d step(s) went wrong" % n,
                    "%s%sPort knocking ran in the switch.%s"
                    % (BOLD, GREEN, RESET))


if __name__ == "__main__":
    sys.exit(main())
