"""OpenFlow 1.3.5 conformance cases through the real switch (issue 35,
item 1): set-field of eth_type / ip_proto / sctp ports, push_mpls on a
frame without IP, SELECT groups spreading ARP and weighted flows, DSCP
remark meters. Same network and helpers as test_switch_dataplane.py (its
module-scoped switch is imported by name, not its tests)."""

import re
import time

from scapy.all import ARP, IP, SCTP, TCP, Ether, Raw, SCTPChunkData
from scapy.contrib.mpls import MPLS

from dp_util import HostSocket, capture, tag_payload
from test_switch_dataplane import ctl, dp, ip4, mac, net, udp4  # noqa: F401

AF11 = 10
AF12 = 12


def paced(sock, frames, pps):
    """Sends `frames` at about `pps` frames a second, so that the capture
    on the far side keeps up (a burst of a thousand frames at full speed
    overruns the sniffer, which then misses frames the switch did send)."""
    gap = 1.0 / pps
    start = time.monotonic()
    for i, f in enumerate(frames):
        delay = start + i * gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.send(f)


def meter_band_count(sw, meter_id):
    stats = ctl(sw, "meter-stats", "meter=%d" % meter_id)
    m = re.search(r"packet_in_count:(\d+).*?\n0: packet_count:(\d+)", stats,
                  re.S)
    assert m, stats
    return int(m.group(1)), int(m.group(2))


def test_remark_meter_remarks_exactly_what_exceeds(dp):
    dp.meter("meter=1,pktps,burst,stats,band=type=dscp_remark,rate=100,"
             "burst_size=10,prec_level=1")
    dp.flows("priority=100,in_port=1,udp,udp_dst=9,"
             "actions=meter:1,output:2")
    # Twice the band's rate for 2 s.
    n = 400
    frames = [bytes(udp4("rmk-%d" % i, dport=9, tos=AF11 << 2))
              for i in range(n)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        paced(s, frames, 200)
    out = got["h2"]
    dscps = [Ether(f)[IP].tos >> 2 for f in out]
    remarked = dscps.count(AF12)
    entered, band = meter_band_count(dp.sw, 1)
    # Every frame passes; the band's packets, and only those, are AF12.
    assert len(out) == n == entered, (len(out), entered)
    assert set(dscps) <= {AF11, AF12}, set(dscps)
    assert 0 < band < n and remarked == band, (remarked, band)
    # About the excess over 100 pkt/s plus a burst of 10 (not exact: the
    # pacing is the sender's).
    assert abs(band - (n - 200 - 10)) < n // 10, band


def test_remark_meter_passes_arp_unchanged(dp):
    dp.meter("meter=2,pktps,burst,stats,band=type=dscp_remark,rate=100,"
             "burst_size=10,prec_level=1")
    dp.flows("priority=100,in_port=1,arp,actions=meter:2,output:2")
    # Twice the band's rate for 1.5 s.
    n = 300
    frames = [bytes(Ether(src=mac(1), dst="ff:ff:ff:ff:ff:ff")
                    / ARP(op=1, hwsrc=mac(1), psrc=ip4(1),
                          pdst="10.0.1.%d" % (i % 250))
                    / tag_payload("arp-%d" % i, 24))
              for i in range(n)]
    with HostSocket(dp.h["h1"]) as s, capture([dp.h["h2"]]) as got:
        paced(s, frames, 200)
    entered, band = meter_band_count(dp.sw, 2)
    assert entered == n and band > 0, (entered, band)
    assert sorted(got["h2"]) == sorted(frames)
