"""DDoS detection with two stateful stages (BEBA's ddos app).

Both tables are stateful, keyed by the TCP connection (ipv4_src, ipv4_dst,
tcp_src, tcp_dst). Stage 1 (table 0) marks new connections towards the
protected host VICTIM: a connection in state 0 is set to state 1 (idle
timeout IDLE_S) and its packet passes meter 1, which remarks the DSCP
(drop precedence +1: AF11 = 10 becomes 12) above METER_PPS packets per
second, i.e. when new connections arrive too fast; known connections
(state 1) go to table 1 untouched. Stage 2 (table 1): a packet with DSCP
12 (came through the meter over the rate) marks its connection as an
attacker (state 1, idle timeout IDLE_S) and is dropped; packets with DSCP
10 are forwarded to the victim (port VICTIM_PORT) if their connection is
in state 0, dropped in state 1. Traffic to the client (10.0.0.1) goes to
port 1.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import SECOND, add_flow, stateful_table

VICTIM = "10.0.0.2"
VICTIM_PORT = 2
CLIENT = "10.0.0.1"
CLIENT_PORT = 1
METER = 1
METER_PPS = 10
IDLE_S = 30
DSCP_NORMAL = 10
DSCP_REMARKED = 12


def configure(dp):
    conn = [ofp.OXM_OF_IPV4_SRC, ofp.OXM_OF_IPV4_DST, ofp.OXM_OF_TCP_SRC,
            ofp.OXM_OF_TCP_DST]
    for table in (0, 1):
        stateful_table(dp, table, conn, conn)
    band = parser.OFPMeterBandDscpRemark(rate=METER_PPS, prec_level=1)
    dp.send_msg(parser.OFPMeterMod(dp, command=ofp.OFPMC_ADD,
                                   flags=ofp.OFPMF_PKTPS, meter_id=METER,
                                   bands=[band]))
    goto1 = parser.OFPInstructionGotoTable(1)
    # Stage 1.
    add_flow(dp, 0, 10, parser.OFPMatch(eth_type=0x0800, ipv4_dst=VICTIM,
                                        state=0),
             [beba.set_state_action(1, 0, idle_timeout_us=IDLE_S * SECOND)],
             extra=[parser.OFPInstructionMeter(METER), goto1])
    add_flow(dp, 0, 10, parser.OFPMatch(eth_type=0x0800, ipv4_dst=VICTIM,
                                        state=1),
             extra=[goto1])
    add_flow(dp, 0, 10, parser.OFPMatch(eth_type=0x0800, ipv4_dst=CLIENT),
             [parser.OFPActionOutput(CLIENT_PORT)])
    # Stage 2.
    add_flow(dp, 1, 10, parser.OFPMatch(state=0, eth_type=0x0800,
                                        ipv4_dst=VICTIM, ip_dscp=DSCP_NORMAL),
             [parser.OFPActionOutput(VICTIM_PORT)])
    add_flow(dp, 1, 10, parser.OFPMatch(eth_type=0x0800, ipv4_dst=VICTIM,
                                        ip_dscp=DSCP_REMARKED),
             [beba.set_state_action(1, 1, idle_timeout_us=IDLE_S * SECOND)])
    add_flow(dp, 1, 10, parser.OFPMatch(state=1, eth_type=0x0800,
                                        ipv4_dst=VICTIM, ip_dscp=DSCP_NORMAL))


class DDoSDetection(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)
