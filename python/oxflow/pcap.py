"""Write OpenFlow messages into a pcap as one TCP control-channel stream.

The capture holds a TCP handshake between a controller (10.0.0.1:40000) and
a switch (10.0.0.2:6653), then one OpenFlow message per TCP segment with
correct sequence numbers, each acknowledged, so Wireshark's OpenFlow
dissector (registered on tcp port 6653) decodes every frame.

CLI: python -m oxflow.pcap OUT.pcap VECTORS.json [...]
(each JSON file a list of objects with a "hex" field).
"""

import json
import sys

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.utils import wrpcap

CTRL = ("10.0.0.1", 40000, "02:00:00:00:00:01")
SWITCH = ("10.0.0.2", 6653, "02:00:00:00:00:02")


def control_channel_packets(messages):
    """Scapy packets: handshake + one data segment (and its ACK) per message.

    `messages` is an iterable of bytes. Returns (packets, frame_numbers)
    where frame_numbers[i] is the 1-based pcap frame holding messages[i].
    """
    c_ip, c_port, c_mac = CTRL
    s_ip, s_port, s_mac = SWITCH

    def c2s(flags, seq, ack, payload=b""):
        return (Ether(src=c_mac, dst=s_mac) / IP(src=c_ip, dst=s_ip)
                / TCP(sport=c_port, dport=s_port, flags=flags, seq=seq,
                      ack=ack, window=65535) / payload)

    def s2c(flags, seq, ack):
        return (Ether(src=s_mac, dst=c_mac) / IP(src=s_ip, dst=c_ip)
                / TCP(sport=s_port, dport=c_port, flags=flags, seq=seq,
                      ack=ack, window=65535))

    c_seq, s_seq = 1000, 5000
    pkts = [c2s("S", c_seq, 0), s2c("SA", s_seq, c_seq + 1)]
    c_seq += 1
    s_seq += 1
    pkts.append(c2s("A", c_seq, s_seq))
    frames = []
    for msg in messages:
        msg = bytes(msg)
        pkts.append(c2s("PA", c_seq, s_seq, msg))
        frames.append(len(pkts))
        c_seq += len(msg)
        pkts.append(s2c("A", s_seq, c_seq))
    t = 1700000000.0
    for i, pk in enumerate(pkts):
        pk.time = t + i * 0.001
    return pkts, frames


def write_pcap(path, messages):
    """Write the capture; return the frame number of each message."""
    pkts, frames = control_channel_packets(messages)
    wrpcap(path, pkts)
    return frames


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    msgs = []
    for name in argv[2:]:
        with open(name) as f:
            msgs += [bytes.fromhex(v["hex"]) for v in json.load(f)]
    write_pcap(argv[1], msgs)
    print("wrote %d messages to %s" % (len(msgs), argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
