"""MAC learning in the switch (BEBA's maclearning app).

Table 0 is stateful: the lookup scope is eth_dst, the update scope
eth_src, so a frame looks up where its destination was last seen and
records the port its source came in on (the state is the port number).
For every input port i and state s: SET_STATE(i) for the source, with a
hard timeout (HARD_S) that forgets it, then output to port s, or flood in
state 0 (destination unknown). No packet ever goes to the controller.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import SECOND, add_flow, stateful_table

PORTS = 4
HARD_S = 10


def configure(dp, ports=PORTS):
    stateful_table(dp, 0, [ofp.OXM_OF_ETH_DST], [ofp.OXM_OF_ETH_SRC])
    for i in range(1, ports + 1):
        for s in range(ports + 1):
            out = ofp.OFPP_FLOOD if s == 0 else s
            add_flow(dp, 0, 0, parser.OFPMatch(in_port=i, state=s),
                     [beba.set_state_action(i, 0,
                                            hard_timeout_us=HARD_S * SECOND),
                      parser.OFPActionOutput(out)])


class MacLearning(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)
