"""BEBA's own controller against oxflow (issue 31, point 6): the example
apps of beba-eu/beba-ctrl (a Ryu 3.29 fork on Python 2.7), unchanged, run
by its `ryu-manager` and configure a real oxflow switch whose ports are
veth pairs to hosts in network namespaces; real traffic checks that they
behave:

- portknock: UDP knocks on 10, 11, 12, 13 open port 22 for that source
  only; a wrong order does not;
- maclearning: hosts ping each other, each host's port is learnt in the
  state table, and learnt unicast is no longer flooded;
- forwarding_consistency_1_to_many: TCP connections to the virtual
  10.0.0.2:80 are spread over three replicas by a SELECT group whose
  buckets SET_STATE the replica, and every connection sticks to its
  replica;
- ddos/ddos: a legitimate connection (DSCP AF11) passes; a burst of new
  connections beyond the DSCP-remark meter's 10 packets/s gets flows
  marked as attackers (state 1 in table 1) and dropped;
- in-switch packet generation (the pkttmp test of beba-ctrl, whose app
  drives Mininet, as a short app on beba-ctrl's own PKTTMP_MOD and
  IN_SWITCH_PKT_GEN encoders): a ping's ARP request makes the switch
  answer with the template.

Each run also loads PROBE_APP next to the BEBA app: it logs every
OFPT_ERROR the controller receives (the test fails on any) and polls the
state statistics with beba-ctrl's request and parses oxflow's replies with
beba-ctrl's parser (the states the tests read).

beba-ctrl is not vendored: `scripts/setup-beba-ctrl.sh BEBA_CTRL_CHECKOUT`
prepares target/beba-ctrl/{env,src} (or set $BEBA_CTRL_ENV, a Python 2.7
virtualenv with Ryu 3.29's dependencies, and $BEBA_CTRL_SRC, the
checkout); without them every test skips, saying so.

Namespace and interface names start with "b4".
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

from dp_util import HostSocket, capture, port_stats, wait_until
from test_beba_e2e import RECEIVER, App, received, send
from oxflow.netns import Process

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
BEBA_ENV = pathlib.Path(os.environ.get(
    "BEBA_CTRL_ENV", REPO_ROOT / "target" / "beba-ctrl" / "env"))
BEBA_SRC = pathlib.Path(os.environ.get(
    "BEBA_CTRL_SRC", REPO_ROOT / "target" / "beba-ctrl" / "src"))
BEBA_PY = BEBA_ENV / "bin" / "python"
APPS = "ryu/app/beba/"

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces)"),
    pytest.mark.skipif(
        not (BEBA_PY.exists()
             and (BEBA_SRC / "ryu/ofproto/beba_v1_0_parser.py").exists()),
        reason="beba-ctrl not prepared: run scripts/setup-beba-ctrl.sh "
        "BEBA_CTRL_CHECKOUT (a checkout of beba-eu/beba-ctrl), or set "
        "BEBA_CTRL_ENV and BEBA_CTRL_SRC"),
]

# A Ryu app (Python 2, run by beba-ctrl's ryu-manager next to the app under
# test). Log lines: "PROBE-ERROR ..." per OFPT_ERROR received (standard or
# experimenter), "PROBE-STATES [...]" per state-statistics reply (every
# record as [table, key string, state], parsed by beba-ctrl), polled every
# 0.3 s from the features reply on.
PROBE_APP = r'''
import binascii
import json
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import (CONFIG_DISPATCHER, HANDSHAKE_DISPATCHER,
                                    MAIN_DISPATCHER, set_ev_cls)
from ryu.lib import hub
import ryu.ofproto.beba_v1_0 as bebaproto
import ryu.ofproto.beba_v1_0_parser as bebaparser

ALL = [HANDSHAKE_DISPATCHER, CONFIG_DISPATCHER, MAIN_DISPATCHER]


class Probe(app_manager.RyuApp):
    @set_ev_cls(ofp_event.EventOFPErrorMsg, ALL)
    def error(self, ev):
        m = ev.msg
        self.logger.info("PROBE-ERROR type=%#x code=%#x data=%s", m.type,
                         m.code, binascii.hexlify(bytes(m.data)))

    @set_ev_cls(ofp_event.EventOFPErrorExperimenterMsg, ALL)
    def exp_error(self, ev):
        m = ev.msg
        self.logger.info("PROBE-ERROR type=%#x exp_type=%#x experimenter=%#x "
                         "data=%s", m.type, m.exp_type, m.experimenter,
                         binascii.hexlify(bytes(m.data)))

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        hub.spawn(self.poll, ev.msg.datapath)

    def poll(self, dp):
        while True:
            hub.sleep(0.3)
            dp.send_msg(bebaparser.OFPExpStateStatsMultipartRequest(dp))

    @set_ev_cls(ofp_event.EventOFPExperimenterStatsReply, MAIN_DISPATCHER)
    def reply(self, ev):
        body = ev.msg.body
        if (body.experimenter != 0xBEBABEBA
                or body.exp_type != bebaproto.OFPMP_EXP_STATE_STATS):
            return
        recs = [[s.table_id, bebaparser.state_entry_key_to_str(s),
                 s.entry.state]
                for s in bebaparser.OFPStateStats.parser(ev.msg)
                if s.entry.key_count]
        self.logger.info("PROBE-STATES %s", json.dumps(recs))
'''

# InSP: beba-ctrl's test/InSP__ryu.py (test 0) without its Mininet: the
# template is an ARP reply "172.16.0.2 is-at 00:01:02:03:04:05" to
# 46:9c:96:30:ff:d5, generated out of port 1 by every packet from port 1.
INSP_APP = r'''
import struct
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import CONFIG_DISPATCHER, set_ev_cls
import ryu.ofproto.ofproto_v1_3 as ofproto
import ryu.ofproto.ofproto_v1_3_parser as ofparser
import ryu.ofproto.beba_v1_0_parser as bebaparser


def mac(s):
    return b"".join(struct.pack("!B", int(x, 16)) for x in s.split(":"))


def ip(s):
    return b"".join(struct.pack("!B", int(x)) for x in s.split("."))


class InSP(app_manager.RyuApp):
    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def features(self, ev):
        dp = ev.msg.datapath
        src, dst = "00:01:02:03:04:05", "46:9c:96:30:ff:d5"
        arp = (struct.pack("!HHBBH", 1, 0x0800, 6, 4, 2) + mac(src)
               + ip("172.16.0.2") + mac(dst) + ip("172.16.0.1"))
        frame = mac(dst) + mac(src) + struct.pack("!H", 0x0806) + arp
        dp.send_msg(bebaparser.OFPExpMsgAddPktTmp(datapath=dp, pkttmp_id=0,
                                                  pkt_data=frame))
        inst = [bebaparser.OFPInstructionInSwitchPktGen(
            0, [ofparser.OFPActionOutput(1)])]
        dp.send_msg(ofparser.OFPFlowMod(
            datapath=dp, table_id=0, priority=0,
            match=ofparser.OFPMatch(in_port=1), instructions=inst))
'''


class BebaCtrlApp(App):
    """test_beba_e2e.App with beba-ctrl's ryu-manager as the controller:
    `app` is a path under the checkout, or an app source written to tmp."""

    def controller(self, port):
        probe = self.tmp / "oxflow_probe.py"
        probe.write_text(PROBE_APP)
        app = self.app
        if "\n" in app:  # app source
            path = self.tmp / "app_under_test.py"
            path.write_text(app)
            app = str(path)
        cmd = [str(BEBA_PY), str(BEBA_SRC / "bin" / "ryu-manager"),
               "--ofp-listen-host", "127.0.0.1",
               "--ofp-tcp-listen-port", str(port), app, str(probe)]
        return Process(cmd, self.tmp / "controller.log",
                       env={"PYTHONPATH": str(BEBA_SRC)}, cwd=str(BEBA_SRC),
                       name="beba-ctrl ryu-manager")

    def __exit__(self, *exc):
        super().__exit__(*exc)
        # Whatever the outcome: oxflow refused nothing beba-ctrl sent, and
        # beba-ctrl parsed everything oxflow sent (no traceback).
        log = self.ctrl.log_text()
        if exc[0] is None:
            errors = [l for l in log.splitlines() if "PROBE-ERROR" in l]
            assert not errors, "oxflow answered OFPT_ERROR:\n" + "\n".join(
                errors)
            assert "Traceback" not in log, log[-4000:]
        return False

    def probed_states(self, timeout=5, want=None):
        """{(table, key string): state} of the latest state-statistics
        reply beba-ctrl parsed, waiting up to `timeout` s for one for
        which want(states) is true (default: any)."""
        last = {}

        def latest():
            nonlocal last
            found = re.findall(r"PROBE-STATES (.*)", self.ctrl.log_text())
            if not found:
                return False
            # beba-ctrl writes keys as ipv4_src="10.0.0.1",tcp_dst=80.
            last = {(t, k.replace('"', "")): s
                    for t, k, s in json.loads(found[-1])}
            return want is None or want(last)

        wait_until(latest, timeout=timeout,
                   what="state statistics parsed by beba-ctrl (%s)" % (
                       self.tmp / "controller.log"))
        return last


def test_portknock(tmp_path):
    with BebaCtrlApp(tmp_path, APPS + "portknock.py", 2, prefix="b4") as a:
        # 1 ARP + 5 knock entries + wrong knock + test port 1300.
        a.wait_configured(8)
        a.rx = a.hosts[1].popen(
            [sys.executable, "-u", "-c", RECEIVER, "10.0.0.2", "22", "1300"],
            stdout=subprocess.PIPE, text=True)
        a.got = []
        try:
            assert a.rx.stdout.readline().strip() == "ready"
            wait_until(lambda: (send(a, 0, "probe", 1300),
                                received(a, "probe", 0.5))[1],
                       timeout=20, what="the test port 1300")
            send(a, 0, "closed", 22)
            send(a, 0, "x", 10, 12, 11, 13)
            send(a, 0, "wrong-order", 22)
            assert not received(a, "closed", 1.0)
            assert not received(a, "wrong-order", 0.5)
            assert a.states().get("0a000001", 0) == 0
            send(a, 0, "x", 10, 11, 12, 13)
            send(a, 0, "open", 22)
            assert received(a, "open", 5.0)
            # State 4 (OPEN) for h1, read by beba-ctrl's parser.
            st = a.probed_states(want=lambda s: s.get(
                (0, "ipv4_src=10.0.0.1")) == 4)
            assert st[(0, "ipv4_src=10.0.0.1")] == 4
        finally:
            a.rx.kill()
            a.rx.wait()


def test_maclearning(tmp_path):
    with BebaCtrlApp(tmp_path, APPS + "maclearning.py", 4,
                     prefix="b4") as a:
        a.wait_configured(4 * 5)
        h1 = a.hosts[0]
        wait_until(lambda: h1.ping("10.0.0.2", count=1, timeout=2)
                   .received == 1, timeout=20, what="h1 pings h2")
        assert h1.ping("10.0.0.3", count=1, timeout=2).received == 1
        st = a.probed_states(want=lambda s: len(s) >= 3)
        for i in (1, 2, 3):
            assert st[(0, "eth_dst=00:00:00:00:00:%02x" % i)] == i, st
        before = port_stats(a.sw)[4]["tx_pkts"]
        assert h1.ping("10.0.0.2", count=5, interval=0.05,
                       timeout=3).received == 5
        assert port_stats(a.sw)[4]["tx_pkts"] == before


# TCP echo server: answers every line with "NAME:line".
ECHO = r"""
import socket, sys, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(64)
print("ready", flush=True)
def serve(c):
    f = c.makefile("rb")
    for line in f:
        c.sendall(sys.argv[3].encode() + b":" + line)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""

# TCP client: N connections to ADDR:PORT opened together, then M rounds of
# one line per connection; prints the JSON list of the replying server
# names per connection.
CLIENT = r"""
import json, socket, sys
addr, port, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
tos = int(sys.argv[5]) if len(sys.argv) > 5 else 0
conns = []
for i in range(n):
    c = socket.socket()
    c.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    c.settimeout(5)
    c.connect((addr, port))
    conns.append((c, c.makefile("rb")))
names = [[] for _ in conns]
for r in range(m):
    for i, (c, f) in enumerate(conns):
        c.sendall(b"m%d\n" % r)
        names[i].append(f.readline().decode().split(":")[0])
print(json.dumps(names))
"""


def start_echo(a, host_index, ip, port, name):
    p = a.hosts[host_index].popen(
        [sys.executable, "-u", "-c", ECHO, ip, str(port), name],
        stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def tcp_client(a, host_index, addr, port, n, m, tos=0):
    out = a.hosts[host_index].run(
        [sys.executable, "-c", CLIENT, addr, str(port), str(n), str(m),
         str(tos)], timeout=30).stdout
    return json.loads(out)


def test_forwarding_consistency(tmp_path):
    with BebaCtrlApp(tmp_path, APPS + "forwarding_consistency_1_to_many.py",
                     4, prefix="b4") as a:
        # ARP + 3 reverse paths + state 0 to the group + states 2..4.
        a.wait_configured(8)
        servers = [start_echo(a, k - 1, "10.0.0.%d" % k, 100 * k, "h%d" % k)
                   for k in (2, 3, 4)]
        try:
            names = tcp_client(a, 0, "10.0.0.2", 80, 12, 3)
        finally:
            for p in servers:
                p.kill()
                p.wait()
        # Every connection answered by one replica throughout; the group
        # spread them (12 connections on one replica: (1/3)^11).
        assert all(len(set(n)) == 1 for n in names), names
        assert len({n[0] for n in names}) > 1, names
        # One state per connection: the replica's port.
        st = a.probed_states(want=lambda s: len(s) >= 12)
        assert sorted(st.values()) == sorted(int(n[0][1]) for n in names)


def test_ddos(tmp_path):
    with BebaCtrlApp(tmp_path, APPS + "ddos/ddos.py", 2, prefix="b4") as a:
        a.wait_configured(6)
        # The app forwards IPv4 only (Mininet's static ARP in the demo).
        h1, h2 = a.hosts
        h1.run(["ip", "neigh", "replace", "10.0.0.2", "lladdr",
                "00:00:00:00:00:02", "dev", "eth0"])
        h2.run(["ip", "neigh", "replace", "10.0.0.1", "lladdr",
                "00:00:00:00:00:01", "dev", "eth0"])
        srv = start_echo(a, 1, "10.0.0.2", 2000, "h2")
        try:
            # No attack: a connection with DSCP AF11 (TOS 0x28) works.
            assert tcp_client(a, 0, "10.0.0.2", 2000, 1, 3, tos=0x28) == [
                ["h2"] * 3]
            assert not [k for k, s in a.probed_states().items()
                        if k[0] == 1 and s == 1]
            # Attack: 100 new connections (SYNs, AF11) at once, beyond the
            # meter's 10 packets/s: the excess is remarked AF12 and its
            # flows marked attackers (state 1) in table 1.
            from scapy.all import IP, TCP, Ether
            syns = [Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02")
                    / IP(src="10.0.0.1", dst="10.0.0.2", tos=0x28)
                    / TCP(sport=20000 + i, dport=80, flags="S")
                    for i in range(100)]
            with capture([h2], keep=lambda f: b"\x00\x50" in f[36:38]) as cap, \
                    HostSocket(h1) as s:
                s.send(syns)
            marked = a.probed_states(want=lambda s: any(
                k[0] == 1 and v == 1 for k, v in s.items()))
            attackers = [k for k, v in marked.items() if k[0] == 1 and v == 1]
            got = len(cap["h2"]) if "h2" in cap else len(
                next(iter(cap.values())))
            assert attackers and got < 100, (attackers, got)
            assert got + len(attackers) >= 100, (attackers, got)
        finally:
            srv.kill()
            srv.wait()


def test_in_switch_packet_generation(tmp_path):
    with BebaCtrlApp(tmp_path, INSP_APP, 2, prefix="b4") as a:
        a.wait_configured(1)
        h1 = a.hosts[0]
        with capture([h1], keep=lambda f: f[12:14] == b"\x08\x06") as cap:
            h1.ping("10.0.0.2", count=1, timeout=1)
        frames = next(iter(cap.values()))
        replies = [f for f in frames
                   if f[:6] == bytes.fromhex("469c9630ffd5")
                   and f[28:32] == bytes([172, 16, 0, 2])]
        assert replies, frames
        assert replies[0][6:12] == bytes.fromhex("000102030405")
