"""Forwarding consistency, one to many (BEBA's
forwarding_consistency_1_to_many app).

A client on port 1 talks to the virtual service VIP:VIP_PORT (10.0.0.2:80);
replicas sit on ports 2..PORTS, replica n at 10.0.0.n, MAC 00:..:0n, TCP
port n*100. Table 0 is stateful, keyed by the TCP connection (ipv4_src,
ipv4_dst, tcp_src, tcp_dst) in both scopes. A connection's first packet
(state 0) goes to SELECT group 1, whose bucket n sets the connection's
state to n and rewrites it towards replica n; later packets (state n)
are rewritten to replica n directly, so a connection stays on its
replica. Replies are rewritten back to the VIP. ARP is flooded.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import (add_flow, arp_flood, host_ip, host_mac,
                                     stateful_table)

PORTS = 4
CLIENT_PORT = 1
VIP = "10.0.0.2"
VIP_MAC = "00:00:00:00:00:02"
VIP_PORT = 80
GROUP = 1


def to_replica(n):
    return [parser.OFPActionSetField(ipv4_dst=host_ip(n)),
            parser.OFPActionSetField(eth_dst=host_mac(n)),
            parser.OFPActionSetField(tcp_dst=n * 100),
            parser.OFPActionOutput(n)]


def configure(dp, ports=PORTS):
    conn = [ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_IPV4_DST, ofp.OXM_OF_TCP_SRC,
            ofp.OXM_OF_TCP_DST]
    stateful_table(dp, 0, conn, conn)
    buckets = [parser.OFPBucket(weight=100, watch_port=ofp.OFPP_ANY,
                                watch_group=ofp.OFPG_ANY,
                                actions=[beba.set_state_action(n, 0)]
                                + to_replica(n))
               for n in range(2, ports + 1)]
    dp.send_msg(parser.OFPGroupMod(dp, command=ofp.OFPGC_ADD,
                                   type_=ofp.OFPGT_SELECT, group_id=GROUP,
                                   buckets=buckets))
    arp_flood(dp)
    for n in range(2, ports + 1):
        add_flow(dp, 0, 100,
                 parser.OFPMatch(in_port=n, eth_type=0x0800, ip_proto=6,
                                 ipv4_src=host_ip(n), eth_src=host_mac(n),
                                 tcp_src=n * 100),
                 [parser.OFPActionSetField(ipv4_src=VIP),
                  parser.OFPActionSetField(eth_src=VIP_MAC),
                  parser.OFPActionSetField(tcp_src=VIP_PORT),
                  parser.OFPActionOutput(CLIENT_PORT)])
    add_flow(dp, 0, 100,
             parser.OFPMatch(in_port=CLIENT_PORT, state=0, eth_type=0x0800,
                             ip_proto=6),
             [parser.OFPActionGroup(GROUP)])
    for n in range(2, ports + 1):
        add_flow(dp, 0, 100,
                 parser.OFPMatch(in_port=CLIENT_PORT, state=n,
                                 eth_type=0x0800, ip_proto=6),
                 to_replica(n))


class ForwardingConsistency(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)
