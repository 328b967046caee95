"""An ARP responder in the switch (BEBA's InSP, in-switch packet generation).

The switch answers ARP requests for a virtual IP (VIP, at VMAC) itself: no
packet-in, no controller round trip. As in the BEBA switch, a template is a
fixed frame (InSP copies no field of the triggering packet into it), so
there is one template per host: template `n` is the ARP reply "VIP is at
VMAC" addressed to host `n` (port n, host_ip(n), host_mac(n)), and the flow

    in_port=n, arp, arp_op=1, arp_spa=host_ip(n), arp_tpa=VIP
        -> IN_SWITCH_PKT_GEN(template n, output:n)

emits it back to the asking host (the request itself is dropped). Every
other packet goes to the controller, which counts its packet-ins and logs
each (`packet_in N eth_type=0x0806 arp_spa=... arp_tpa=...`), so that a
test can check
the VIP's requests never reach it. `oxflow ctl` writes the same flow as
`in_port=2,arp,arp_op=1,arp_spa=10.0.0.2,arp_tpa=10.0.0.254,
actions=pkt_gen(2,output:2)` after `beba-add-template 2 HEX`.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.lib.packet import arp, ethernet, packet
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import add_flow, host_ip, host_mac

VIP = "10.0.0.254"
VMAC = "02:00:00:00:00:fe"
# The hosts the app answers, by port (host n on port n).
HOSTS = [1]


def arp_reply(ip, mac):
    """The frame "VIP is at VMAC", to the host at ip / mac."""
    p = packet.Packet()
    p.add_protocol(ethernet.ethernet(dst=mac, src=VMAC, ethertype=0x0806))
    p.add_protocol(arp.arp(opcode=arp.ARP_REPLY, src_mac=VMAC, src_ip=VIP,
                           dst_mac=mac, dst_ip=ip))
    p.serialize()
    return bytes(p.data)


def responder_flow(n):
    """The match and instruction answering host n (module comment)."""
    match = parser.OFPMatch(in_port=n, eth_type=0x0806, arp_op=1,
                            arp_spa=host_ip(n), arp_tpa=VIP)
    return match, beba.InSwitchPktGen(n, [parser.OFPActionOutput(n)])


def configure(dp):
    for n in HOSTS:
        dp.send_msg(beba.pkttmp_mod(
            dp, beba.add_pkttmp_data(n, arp_reply(host_ip(n), host_mac(n)))))
        match, gen = responder_flow(n)
        add_flow(dp, 0, 100, match, extra=[gen])
    add_flow(dp, 0, 0, parser.OFPMatch(),
             [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                     ofp.OFPCML_NO_BUFFER)])


class ArpResponder(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.packet_ins = 0

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        self.packet_ins += 1
        pkt = packet.Packet(ev.msg.data)
        eth = pkt.get_protocol(ethernet.ethernet)
        a = pkt.get_protocol(arp.arp)
        self.logger.info("packet_in %d eth_type=%#06x arp_spa=%s arp_tpa=%s",
                         self.packet_ins, eth.ethertype if eth else 0,
                         a.src_ip if a else "-", a.dst_ip if a else "-")
