"""Port knocking in the switch (BEBA's portknock app).

Table 0 is stateful, keyed by the IPv4 source in both scopes. A host's
state counts the correct knocks: UDP to KNOCKS[0] in state 0 moves it to
1, KNOCKS[1] in state 1 to 2, and so on, each step with an idle timeout
(KNOCK_IDLE_S, the last one LAST_KNOCK_IDLE_S) that rolls it back to 0.
In state len(KNOCKS), UDP to OPEN_PORT is forwarded to SERVER_PORT. Any
other UDP packet (a wrong knock) puts the host back in state 0. ARP is
flooded; UDP to TEST_PORT always goes through (to check the path).

Every knock that moves a host's state is reported by the switch with a
STATE_CHANGED message, which the app logs (`beba state_changed table=0
key=0a000001 0->1`).
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import (SECOND, add_flow, arp_flood,
                                     log_notification, stateful_table)

KNOCKS = [10, 11, 12, 13]
OPEN_PORT = 22
SERVER_PORT = 2
TEST_PORT = 1300
KNOCK_IDLE_S = 5
LAST_KNOCK_IDLE_S = 10


def configure(dp):
    stateful_table(dp, 0, [ofp.OXM_OF_IPV4_SRC], [ofp.OXM_OF_IPV4_SRC])
    arp_flood(dp)
    for i, port in enumerate(KNOCKS):
        idle = LAST_KNOCK_IDLE_S if i == len(KNOCKS) - 1 else KNOCK_IDLE_S
        add_flow(dp, 0, 10,
                 parser.OFPMatch(eth_type=0x0800, ip_proto=17, state=i,
                                 udp_dst=port),
                 [beba.set_state_action(i + 1, 0,
                                        idle_timeout_us=idle * SECOND)])
    add_flow(dp, 0, 10,
             parser.OFPMatch(eth_type=0x0800, ip_proto=17, state=len(KNOCKS),
                             udp_dst=OPEN_PORT),
             [parser.OFPActionOutput(SERVER_PORT)])
    # A wrong knock: back to the start.
    add_flow(dp, 0, 0, parser.OFPMatch(eth_type=0x0800, ip_proto=17),
             [beba.set_state_action(0, 0)])
    add_flow(dp, 0, 10,
             parser.OFPMatch(eth_type=0x0800, ip_proto=17, udp_dst=TEST_PORT),
             [parser.OFPActionOutput(SERVER_PORT)])


class PortKnocking(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)

    @set_ev_cls(ofp_event.EventOFPExperimenter, MAIN_DISPATCHER)
    def experimenter_handler(self, ev):
        log_notification(self.logger, ev.msg)
