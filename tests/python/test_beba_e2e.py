"""BEBA / OpenState end to end (issue 31): the os-ken apps of
python/oxflow/apps/beba/ configure a real oxflow switch whose ports are
veth pairs to hosts in network namespaces, and real traffic (UDP from
Python sockets, ping) exercises the state tables in the switch:

- port knocking: the right knock sequence opens UDP port 22 for that
  source only, a wrong order does not, and the idle timeout of the last
  knock closes it again; `oxflow ctl beba-dump-states` shows the states
  the knocks wrote;
- MAC learning: hosts ping each other with no controller round trip; the
  state table learns each host's port, and once learned a unicast frame
  is no longer flooded to the other ports.

Namespace and interface names start with "sb".
"""

import os
import re
import sys
import time

import pytest

from dp_util import port_stats, require_oxflow, wait_until
from oxflow.apps.beba import maclearning, portknock
from oxflow.netns import Topology, free_tcp_port
from oxflow.switch import Switch, controller_process

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root (namespaces)")

RECEIVER = r"""
import socket, sys
socks = []
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], int(p)))
    socks.append(s)
import select
print("ready", flush=True)
while True:
    r, _, _ = select.select(socks, [], [])
    for s in r:
        d = s.recv(2048)
        print("%d %s" % (s.getsockname()[1], d.decode()), flush=True)
"""

# Datagrams to several ports are spaced: they are different flows, which
# two workers may receive at the same instant and handle out of order (as
# knocks sent without a gap can arrive out of order in any network).
SENDER = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for p in sys.argv[3:]:
    s.sendto(sys.argv[2].encode(), (sys.argv[1], int(p)))
    time.sleep(0.05)
"""


class App:
    """An os-ken app and an oxflow switch with one host per port."""

    def __init__(self, tmp, app, n_hosts, prefix="sb", addrs=None):
        self.tmp = tmp
        self.app = app
        # Host i (port i): 10.0.0.i, MAC 00:..:0i unless `addrs` lists
        # (ip, mac) per host.
        self.addrs = addrs or [("10.0.0.%d" % i, "00:00:00:00:00:%02x" % i)
                               for i in range(1, n_hosts + 1)]
        self.prefix = prefix

    def __enter__(self):
        require_oxflow()
        self.topo = Topology(prefix=self.prefix)
        self.hosts = []
        for i, (ip, mac) in enumerate(self.addrs, 1):
            h = self.topo.add_host("h%d" % i)
            self.topo.add_switch_link(h, ip + "/24", mac=mac)
            self.hosts.append(h)
        port = free_tcp_port()
        self.ctrl = self.controller(port)
        self.ctrl.__enter__()
        self.ctrl.wait_for_port(port)
        self.sw = Switch(self.topo, dpid=0xbeba,
                         controllers=["tcp:127.0.0.1:%d" % port],
                         log_path=self.tmp / "oxflow.log",
                         extra_args=["--workers", "2"])
        self.sw.start()
        return self

    def controller(self, port):
        """The (not yet started) controller process running `self.app` on
        127.0.0.1:port, logging to tmp/controller.log."""
        return controller_process(port, self.tmp / "controller.log",
                                  apps=[self.app])

    def __exit__(self, *exc):
        self.sw.stop()
        self.ctrl.__exit__(*exc)
        self.topo.close()
        return False

    def flows(self):
        out = self.sw.ctl("dump-flows", check=True).stdout
        return [l for l in out.splitlines() if "priority=" in l]

    def wait_configured(self, n_flows):
        wait_until(lambda: len(self.flows()) >= n_flows, timeout=30,
                   what="%d flows from %s (controller log: %s)" % (
                       n_flows, self.app, self.tmp / "controller.log"))

    def states(self, table=0):
        """{key hex: state} from `oxflow ctl beba-dump-states`."""
        out = self.sw.ctl("beba-dump-states", table, check=True).stdout
        return {m.group(1): int(m.group(2)) for m in re.finditer(
            r"key=0x([0-9a-f]+) state=(\d+)", out)}


@pytest.fixture
def knock(tmp_path):
    with App(tmp_path, "oxflow.apps.beba.portknock", 2) as a:
        # 1 ARP + 4 knocks + open + wrong knock + test port.
        a.wait_configured(8)
        rx = a.hosts[1].popen(
            [sys.executable, "-u", "-c", RECEIVER, "10.0.0.2",
             str(portknock.OPEN_PORT), str(portknock.TEST_PORT)],
            stdout=__import__("subprocess").PIPE, text=True)
        try:
            assert rx.stdout.readline().strip() == "ready"
            a.rx = rx
            a.got = []
            yield a
        finally:
            rx.kill()
            rx.wait()


def send(a, host, tag, *ports):
    a.hosts[host].run([sys.executable, "-c", SENDER, "10.0.0.2", tag]
                      + [str(p) for p in ports])


def received(a, tag, timeout):
    """Whether the server got datagram `tag` within `timeout` s."""
    import select
    deadline = time.monotonic() + timeout
    while True:
        if any(tag in l for l in a.got):
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([a.rx.stdout], [], [], left)
        if r:
            a.got.append(a.rx.stdout.readline())


def test_portknock(knock):
    a = knock
    # The path works (the test port is always open); the ARP flood flow
    # lets h1 resolve h2.
    wait_until(lambda: (send(a, 0, "probe", portknock.TEST_PORT),
                        received(a, "probe", 0.5))[1],
               timeout=20, what="the test port through the switch")
    # Port 22 is closed before knocking.
    send(a, 0, "closed", portknock.OPEN_PORT)
    # Wrong order: 10, 12, 11, 13 resets at the wrong knock.
    send(a, 0, "x", 10, 12, 11, 13)
    send(a, 0, "wrong-order", portknock.OPEN_PORT)
    assert not received(a, "closed", 1.0)
    assert not received(a, "wrong-order", 0.5)
    # The wrong knock (13 in state 0) left h1 in DEFAULT.
    assert a.states().get("0a000001", 0) == 0
    # Right order: open, for h1 only.
    send(a, 0, "x", *portknock.KNOCKS)
    send(a, 0, "open", portknock.OPEN_PORT)
    assert received(a, "open", 5.0)
    assert a.states()["0a000001"] == len(portknock.KNOCKS)
    # The idle timeout of the last knock closes it again (no packet of
    # h1 meanwhile).
    time.sleep(portknock.LAST_KNOCK_IDLE_S + 1.0)
    send(a, 0, "after-idle", portknock.OPEN_PORT)
    assert not received(a, "after-idle", 1.0)
    assert a.states().get("0a000001", 0) == 0


def test_maclearning(tmp_path):
    with App(tmp_path, "oxflow.apps.beba.maclearning",
             maclearning.PORTS) as a:
        a.wait_configured(maclearning.PORTS * (maclearning.PORTS + 1))
        h1, h2 = a.hosts[0], a.hosts[1]
        wait_until(lambda: h1.ping("10.0.0.2", count=1, timeout=2)
                   .received == 1, timeout=20, what="h1 pings h2")
        assert h1.ping("10.0.0.3", count=1, timeout=2).received == 1
        # Each host's MAC learned at its port (key = eth_src).
        st = a.states()
        assert st.get("000000000001") == 1, st
        assert st.get("000000000002") == 2, st
        assert st.get("000000000003") == 3, st
        # Learned: unicast h1 <-> h2 goes to port 2 / 1 only, never to
        # h4's port (ARP is already resolved).
        before = port_stats(a.sw)[4]["tx_pkts"]
        assert h1.ping("10.0.0.2", count=5, interval=0.05,
                       timeout=3).received == 5
        assert port_stats(a.sw)[4]["tx_pkts"] == before


TCP_SERVER = r"""
import socket, sys, threading
n = int(sys.argv[1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.0.0.%d" % n, n * 100))
s.listen(16)
print("ready", flush=True)
def serve(c):
    while True:
        d = c.recv(1024)
        if not d:
            return
        c.sendall(b"%d:" % n + d)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

TCP_CLIENT = r"""
import json, socket, sys, time
conns = []
for i in range(int(sys.argv[1])):
    c = socket.create_connection(("10.0.0.2", 80), timeout=10)
    conns.append(c)
out = []
for rnd in range(3):
    for i, c in enumerate(conns):
        c.sendall(b"m%d" % i)
        out.append((i, c.getsockname()[1], c.recv(1024).decode()))
    time.sleep(0.2)
print(json.dumps(out), flush=True)
"""


def test_forwarding_consistency(tmp_path):
    import json
    import subprocess
    from oxflow.apps.beba import forwarding_consistency as fc
    with App(tmp_path, "oxflow.apps.beba.forwarding_consistency",
             fc.PORTS) as a:
        # ARP + (PORTS-1) replies + state 0 + (PORTS-1) replicas.
        a.wait_configured(1 + 2 * (fc.PORTS - 1) + 1)
        servers = []
        try:
            for n in range(2, fc.PORTS + 1):
                srv = a.hosts[n - 1].popen(
                    [sys.executable, "-u", "-c", TCP_SERVER, str(n)],
                    stdout=subprocess.PIPE, text=True)
                servers.append(srv)
                assert srv.stdout.readline().strip() == "ready"
            res = a.hosts[0].run([sys.executable, "-c", TCP_CLIENT, "8"],
                                 timeout=60)
            out = json.loads(res.stdout)
        finally:
            for srv in servers:
                srv.kill()
                srv.wait()
        replica = {}
        for i, sport, reply in out:
            n, _, msg = reply.partition(":")
            assert msg == "m%d" % i
            # A connection stays on its replica.
            assert replica.setdefault(sport, int(n)) == int(n), out
        # Each connection's state is its replica (key: ipv4_src,
        # ipv4_dst, tcp_src, tcp_dst, the ports little-endian).
        st = a.states()
        for sport, n in replica.items():
            key = "0a000001" + "0a000002" + \
                sport.to_bytes(2, "little").hex() + (80).to_bytes(
                    2, "little").hex()
            assert st.get(key) == n, (key, st)


def test_fast_failover_with_rollback(tmp_path):
    from dp_util import port_link_down
    from oxflow.apps.beba import fast_failover as ff
    # h1 on IN_PORT; h2 (primary) and h3 (backup) are the same server
    # (10.0.0.2, MAC 00:..:02) behind two paths.
    server = ("10.0.0.2", "00:00:00:00:00:02")
    with App(tmp_path, "oxflow.apps.beba.fast_failover", 3,
             addrs=[("10.0.0.1", "00:00:00:00:00:01"), server,
                    server]) as a:
        a.wait_configured(6)
        h1, h2 = a.hosts[0], a.hosts[1]
        key = "000000000001" + "000000000002"
        wait_until(lambda: h1.ping("10.0.0.2", count=1, timeout=2)
                   .received == 1, timeout=20, what="ping on the primary")
        # Replies on the primary keep the flow in state 0 (DEFAULT).
        assert a.states().get(key, 0) == 0
        # The primary goes down: the FAST_FAILOVER group's backup bucket
        # moves the flow to FAILED and the backup answers.
        h2.run(["ip", "link", "set", "eth0", "down"])
        wait_until(lambda: port_link_down(a.sw, ff.PRIMARY), timeout=15,
                   what="primary port down")
        wait_until(lambda: h1.ping("10.0.0.2", count=1, timeout=2)
                   .received == 1, timeout=20, what="ping on the backup")
        out = a.sw.ctl("beba-dump-states", 0, check=True).stdout
        assert re.search(r"key=0x%s state=%d .*hard_timeout=%d .*"
                         r"hard_rollback=%d" % (key, ff.FAILED,
                                                ff.PROBE_S * 1_000_000,
                                                ff.PROBE), out), out
        # The primary comes back; the hard timeout rolls the flow back to
        # PROBE, whose packets go both ways; the primary's reply (bi-flow
        # scope) puts the flow back in state 0.
        h2.run(["ip", "link", "set", "eth0", "up"])
        wait_until(lambda: port_link_down(a.sw, ff.PRIMARY) is False,
                   timeout=15, what="primary port up")
        wait_until(lambda: a.states().get(key) == ff.PROBE,
                   timeout=ff.PROBE_S + 10, interval=0.5,
                   what="rollback to PROBE")
        wait_until(lambda: (h1.ping("10.0.0.2", count=1, timeout=2),
                            a.states().get(key, 0) == 0)[1],
                   timeout=20, what="back on the primary")


def test_ddos_two_stages(tmp_path):
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from dp_util import HostSocket
    from oxflow.apps.beba import ddos

    def syn(sport):
        return bytes(Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02")
                     / IP(src=ddos.CLIENT, dst=ddos.VICTIM,
                          tos=ddos.DSCP_NORMAL << 2)
                     / TCP(sport=sport, dport=80, flags="S"))

    def to_victim():
        return port_stats(a.sw)[ddos.VICTIM_PORT]["tx_pkts"]

    with App(tmp_path, "oxflow.apps.beba.ddos", 2) as a, \
            HostSocket(a.hosts[0]) as h1:
        a.wait_configured(6)
        # Slow new connections (~3 per second, under the meter's 10):
        # each is marked known in stage 1 and reaches the victim.
        before = to_victim()
        slow = list(range(1000, 1005))
        for sport in slow:
            h1.send(syn(sport))
            time.sleep(0.3)
        wait_until(lambda: to_victim() - before == len(slow), timeout=10,
                   what="the slow connections at the victim")
        # A burst of 100 new connections: over the rate the meter remarks
        # them, stage 2 marks those connections as attackers and drops.
        before = to_victim()
        burst = list(range(2000, 2100))
        h1.send([syn(sport) for sport in burst])
        time.sleep(1.0)
        passed = to_victim() - before
        assert passed < 50, passed
        attackers = [k for k, s in a.states(1).items() if s == 1]
        assert len(attackers) + passed >= len(burst), (passed, attackers)
        # Stage 1 knows every connection now (state 1).
        known = a.states(0)
        assert sum(1 for s in known.values() if s == 1) >= len(slow) + 100
        # Later packets: an attacker's are dropped (stage 2 state 1), a
        # slow connection's still pass.
        key_of = lambda sport: "0a000001" + "0a000002" + \
            sport.to_bytes(2, "little").hex() + (80).to_bytes(
                2, "little").hex()  # noqa: E731
        attacker = next(p for p in burst if key_of(p) in attackers)
        before = to_victim()
        h1.send(syn(attacker))
        time.sleep(0.3)
        h1.send(syn(slow[0]))
        wait_until(lambda: to_victim() - before >= 1, timeout=10,
                   what="the slow connection's packet")
        time.sleep(0.3)
        assert to_victim() - before == 1
