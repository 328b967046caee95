"""A port shaped by a qdisc: oxflow hands frames to the qdisc and lets the
qdisc's queue decide, as a switch blocking in send would.

The switch's egress toward h2 gets an htb qdisc at 100 Mbit/s (what
Mininet's `TCLink(bw=100)` and oxflow's own queues set up). A frame waiting
in htb stays charged to oxflow's transmit socket, so with the system's
default socket send buffer (~90 full-size frames) oxflow's sends failed and
it dropped frames (the port's tx drops; retransmissions and long flow
completion times for TCP) while htb's queue still had room. The transmit
sockets' send buffer is bigger than a default qdisc's queue
(`ports::afpacket::TX_SNDBUF`), so the qdisc decides.
"""

import json
import re
import subprocess
import time

import cp_util
from oxflow.netns import Topology, sh
from oxflow.switch import Switch

pytestmark = cp_util.NEEDS_SWITCH


def _port_stats(sw):
    """{port_no: (tx_pkts, tx_drop)} from `oxflow ctl dump-ports`."""
    out = sw.ctl("dump-ports", check=True).stdout
    stats, port = {}, None
    for line in out.splitlines():
        words = line.split()
        if words[:1] == ["port"]:
            port = int(words[1].rstrip(":"))
        if port is not None and "tx" in words[:1]:
            fields = dict(w.rstrip(",").split("=") for w in words[1:] if "=" in w)
            stats[port] = (int(fields["pkts"]), int(fields["drop"]))
    return stats


def _udp_arrived(host):
    """UDP datagrams that reached the host's stack intact (its
    /proc/net/snmp): delivered to a socket, dropped by a full socket
    buffer, or for a port no socket had (any more)."""
    lines = [l.split() for l in host.run(["cat", "/proc/net/snmp"]).stdout
             .splitlines() if l.startswith("Udp:")]
    udp = dict(zip(lines[0][1:], map(int, lines[1][1:])))
    return udp["InDatagrams"] + udp["RcvbufErrors"] + udp["NoPorts"]


def test_a_burst_into_a_shaped_port_waits_in_its_qdisc():
    """400 datagrams sent back to back (far above 100 Mbit/s) all wait in
    htb's queue (1,000 frames) and arrive; with the default send buffer
    the switch dropped all but about 90 of them."""
    n = 400
    with Topology() as topo:
        h1 = topo.add_host("h1")
        p1 = topo.add_switch_link(h1, "10.0.0.1/24")
        h2 = topo.add_host("h2")
        p2 = topo.add_switch_link(h2, "10.0.0.2/24")
        sh(["tc", "qdisc", "add", "dev", p2, "root", "handle", "5:", "htb",
            "default", "1"])
        sh(["tc", "class", "add", "dev", p2, "parent", "5:", "classid",
            "5:1", "htb", "rate", "100mbit", "burst", "15k"])
        with Switch([p1, p2], fail_mode="standalone") as sw:
            assert h1.ping("10.0.0.2", count=3, timeout=10).received >= 1
            arrived = _udp_arrived(h2)
            srv = h2.popen(["iperf3", "-s", "-1", "-J"],
                           stdout=subprocess.PIPE, text=True)
            try:
                time.sleep(0.5)
                h1.run(["iperf3", "-c", "10.0.0.2", "-u", "-b", "0", "-l",
                        "1400", "-n", str(1400 * n)], timeout=30)
                server = json.loads(srv.communicate(timeout=15)[0])
            finally:
                if srv.poll() is None:
                    srv.kill()
            _, tx_drop = _port_stats(sw)[2]
            arrived = _udp_arrived(h2) - arrived
        qdisc = sh(["tc", "-s", "qdisc", "show", "dev", p2]).stdout
    udp = server["end"]["sum"]
    assert tx_drop == 0, (tx_drop, udp, qdisc)
    # The switch handed every frame to htb and htb sent them all: nothing
    # dropped, every datagram (and the ping, ARP and iperf3's control
    # frames) sent.
    sent = re.search(r"Sent \d+ bytes (\d+) pkt \(dropped (\d+)", qdisc)
    assert sent and int(sent.group(2)) == 0 and int(sent.group(1)) >= n, qdisc
    # And they reached h2's UDP stack (+1: the datagram with which
    # iperf3's client opens a UDP test). A few can go missing between the
    # qdisc and h2's stack while htb still reports them all sent (seen in
    # about 1 run in 25 here, with the same qdisc count as a full run):
    # that is after the switch, so a few are allowed; the send-buffer
    # fault this test guards against lost over three quarters. iperf3's
    # own count is not used: on a loaded machine its server misses
    # datagrams that arrived (a full socket buffer, the test's end).
    assert arrived >= n + 1 - 8, (arrived, udp, qdisc)
