"""BEBA asynchronous messages and InSP end to end (issue 31): real os-ken
apps against an oxflow switch whose ports are veth pairs to hosts in
network namespaces.

- STATE_CHANGED: the port-knocking app logs every STATE_CHANGED the switch
  sends (decoded with python/oxflow/beba.py); the knocks of a host move
  its state 0->1->2->3->4, one notification each, with its key; the app's
  flow-mods are each acknowledged with a FLOW_NOTIFICATION.
- IN_SWITCH_PKT_GEN: the ARP-responder app installs a template ARP reply
  and a flow that emits it; a host resolving the virtual IP gets the reply
  from the switch and the controller receives no packet-in for it (it does
  for other traffic); the same flow written with `oxflow ctl` answers a
  second host.

Namespace and interface names start with "b2".
"""

import os
import re
import subprocess
import time

import pytest

from dp_util import have_ovs_ofctl, ovs_ofctl, wait_until
from oxflow.apps.beba import arp_responder, portknock
from oxflow.apps.beba.common import host_ip, host_mac
from oxflow.switch import oxflow_bin
from test_beba_e2e import App, send

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root (namespaces)")

PREFIX = "b2"


def controller_log(a):
    return (a.tmp / "controller.log").read_text(errors="replace")


def state_changes(a):
    """[(table, key hex, old, new)] the app logged."""
    return [(int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)))
            for m in re.finditer(
                r"beba state_changed table=(\d+) key=([0-9a-f]*) "
                r"(\d+)->(\d+)", controller_log(a))]


def test_state_changed_reaches_the_controller(tmp_path):
    with App(tmp_path, "oxflow.apps.beba.portknock", 2,
             prefix=PREFIX) as a:
        a.wait_configured(8)
        # Every flow-mod after the table became stateful is acknowledged.
        wait_until(lambda: controller_log(a).count(
            "beba flow_notification table=0") == 8, timeout=10,
            what="8 FLOW_NOTIFICATIONs in %s" % (tmp_path / "controller.log"))
        assert state_changes(a) == []
        # `oxflow ctl dump-flows` prints the BEBA actions.
        assert any("actions=set_state(1,table=0,idle_timeout=%d)" % (
            portknock.KNOCK_IDLE_S * 1_000_000) in f for f in a.flows()), \
            a.flows()
        # Only the BEBA controller's connection gets FLOW_NOTIFICATIONs:
        # ovs-ofctl (which would take one for its flow-mod's failure) and
        # oxflow ctl add flows on the stateful switch as usual.
        a.sw.ctl("add-flow", "priority=1,udp,tp_dst=5555,actions=drop",
                 check=True)
        if have_ovs_ofctl():
            ovs_ofctl(a.sw.target, "add-flow",
                      "priority=1,udp,tp_dst=5556,actions=drop")
        # `oxflow ctl monitor` (another equal connection) prints them too.
        monitor = subprocess.Popen(
            [oxflow_bin(), "ctl", "monitor", a.sw.target, "--count=5"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        time.sleep(1.0)
        # A knock of the wrong port in state 0 writes state 0 again: no
        # change, no notification.
        send(a, 0, "x", 1234)
        # The knocks, one at a time (each waits for its notification, so
        # the order of the states is the knocks' order).
        key = "0a000001"
        for i, port in enumerate(portknock.KNOCKS):
            send(a, 0, "knock", port)
            wait_until(lambda: len(state_changes(a)) == i + 1, timeout=10,
                       what="STATE_CHANGED of knock %d" % (i + 1))
        assert state_changes(a) == [
            (0, key, i, i + 1) for i in range(len(portknock.KNOCKS))]
        # The state the notifications report is the one in the switch.
        assert a.states()[key] == len(portknock.KNOCKS)
        # A wrong knock puts it back to 0: reported too.
        send(a, 0, "x", 1234)
        wait_until(lambda: len(state_changes(a)) == 5, timeout=10,
                   what="STATE_CHANGED of the wrong knock")
        assert state_changes(a)[-1] == (0, key, len(portknock.KNOCKS), 0)
        out, _ = monitor.communicate(timeout=10)
        assert re.findall(r"BEBA STATE_CHANGED \(xid=0x0\): table=0 "
                          r"key=0x0a000001 state=(\d+)->(\d+)", out) == [
            ("0", "1"), ("1", "2"), ("2", "3"), ("3", "4"), ("4", "0")], out


def arp_packet_ins(a):
    """The packet-ins the ARP responder logged, as (eth_type, arp_spa,
    arp_tpa)."""
    return re.findall(r"packet_in \d+ eth_type=(0x[0-9a-f]+) "
                      r"arp_spa=(\S+) arp_tpa=(\S+)", controller_log(a))


def vip_requests(a, host):
    """The packet-ins of host n's ARP requests for the VIP."""
    return [p for p in arp_packet_ins(a)
            if p[1:] == (host_ip(host), arp_responder.VIP)]


def resolves_vip(host):
    """Whether `host` has the VIP at VMAC in its neighbour table."""
    out = host.run(["ip", "neigh", "show", arp_responder.VIP]).stdout
    return arp_responder.VMAC in out


def test_in_switch_arp_responder(tmp_path):
    with App(tmp_path, "oxflow.apps.beba.arp_responder", 3,
             prefix=PREFIX) as a:
        # The app's responder flow for host 1 and its table-miss.
        a.wait_configured(2)
        h1, h2, h3 = a.hosts
        assert any("pkt_gen(1,output:1)" in f for f in a.flows()), a.flows()
        # h1 resolves the VIP: the ARP reply comes from the switch. The
        # ICMP echo that follows goes to the controller (a packet-in).
        wait_until(lambda: (h1.ping(arp_responder.VIP, count=1, timeout=1),
                            resolves_vip(h1))[1],
                   timeout=20, what="h1 resolves the VIP")
        wait_until(lambda: ("0x0800", "-", "-") in arp_packet_ins(a),
                   timeout=10, what="the ICMP echo as a packet-in")
        assert vip_requests(a, 1) == [], arp_packet_ins(a)
        # h3 has no responder flow: its request for the VIP is a packet-in
        # (the controller would see the requests if the switch did not
        # answer them), and it gets no reply.
        h3.ping(arp_responder.VIP, count=1, timeout=1)
        wait_until(lambda: vip_requests(a, 3), timeout=10,
                   what="h3's ARP request as a packet-in")
        assert not resolves_vip(h3)
        # The same for h2, written with `oxflow ctl`.
        frame = arp_responder.arp_reply(host_ip(2), host_mac(2))
        a.sw.ctl("beba-add-template", 2, frame.hex(), check=True)
        a.sw.ctl("add-flow", "priority=100,in_port=2,arp,arp_op=1,"
                 "arp_spa=%s,arp_tpa=%s,actions=pkt_gen(2,output:2)" % (
                     host_ip(2), arp_responder.VIP), check=True)
        assert any("pkt_gen(2,output:2)" in f for f in a.flows()), a.flows()
        wait_until(lambda: (h2.ping(arp_responder.VIP, count=1, timeout=1),
                            resolves_vip(h2))[1],
                   timeout=20, what="h2 resolves the VIP")
        # h2's later packets came up (the ICMP echo); its ARP never did.
        wait_until(lambda: ("0x0800", "-", "-") in arp_packet_ins(a)[
            arp_packet_ins(a).index(vip_requests(a, 3)[0]):],
            timeout=10, what="h2's ICMP echo as a packet-in")
        assert vip_requests(a, 2) == [], arp_packet_ins(a)
        assert vip_requests(a, 1) == [], arp_packet_ins(a)
