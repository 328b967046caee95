"""Per-flow fast failover with rollback (after BEBA's fail_recovery apps).

One switch, a source on port IN_PORT, a primary path on PRIMARY and a
backup on BACKUP. Table 0 is stateful, keyed by (eth_src, eth_dst); the
bi-flow scope (eth_dst, eth_src) lets a reply write the state of the flow
it answers.

- State 0 (primary): FAST_FAILOVER group 1 outputs to PRIMARY while it is
  live; once it is down the group's second bucket moves the flow to state
  FAILED (hard timeout PROBE_S, rolling back to PROBE) and outputs to
  BACKUP. The data plane reroutes without the controller.
- State FAILED: straight to BACKUP, until the hard timeout rolls the flow
  back to PROBE.
- State PROBE: the packet goes both ways (ALL group 2) to probe the
  primary path, and the flow returns to FAILED for another PROBE_S.
- A reply arriving on PRIMARY proves the path works: it sets the forward
  flow (bi-flow scope) back to 0 and goes to IN_PORT. Replies on BACKUP go
  to IN_PORT.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import CONFIG_DISPATCHER, set_ev_cls
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba
from oxflow.apps.beba.common import SECOND, add_flow, arp_flood, stateful_table

IN_PORT = 1
PRIMARY = 2
BACKUP = 3
FAILED = 17
PROBE = 100
PROBE_S = 10
FF_GROUP = 1
PROBE_GROUP = 2


def failed():
    return beba.set_state_action(FAILED, 0, hard_rollback=PROBE,
                                 hard_timeout_us=PROBE_S * SECOND)


def configure(dp):
    stateful_table(dp, 0, [ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_ETH_DST],
                   [ofp.OXM_OF_ETH_SRC, ofp.OXM_OF_ETH_DST],
                   bit_update=[ofp.OXM_OF_ETH_DST, ofp.OXM_OF_ETH_SRC])
    out = parser.OFPActionOutput
    dp.send_msg(parser.OFPGroupMod(
        dp, command=ofp.OFPGC_ADD, type_=ofp.OFPGT_FF, group_id=FF_GROUP,
        buckets=[parser.OFPBucket(watch_port=PRIMARY, actions=[out(PRIMARY)]),
                 parser.OFPBucket(watch_port=BACKUP,
                                  actions=[failed(), out(BACKUP)])]))
    dp.send_msg(parser.OFPGroupMod(
        dp, command=ofp.OFPGC_ADD, type_=ofp.OFPGT_ALL, group_id=PROBE_GROUP,
        buckets=[parser.OFPBucket(actions=[out(PRIMARY)]),
                 parser.OFPBucket(actions=[out(BACKUP)])]))
    arp_flood(dp)
    add_flow(dp, 0, 10, parser.OFPMatch(in_port=IN_PORT, state=0),
             [parser.OFPActionGroup(FF_GROUP)])
    add_flow(dp, 0, 10, parser.OFPMatch(in_port=IN_PORT, state=FAILED),
             [out(BACKUP)])
    add_flow(dp, 0, 10, parser.OFPMatch(in_port=IN_PORT, state=PROBE),
             [failed(), parser.OFPActionGroup(PROBE_GROUP)])
    add_flow(dp, 0, 10, parser.OFPMatch(in_port=PRIMARY),
             [beba.set_state_action(0, 0, bit=True), out(IN_PORT)])
    add_flow(dp, 0, 10, parser.OFPMatch(in_port=BACKUP), [out(IN_PORT)])


class FastFailover(app_manager.OSKenApp):
    OFP_VERSIONS = [ofp.OFP_VERSION]

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        configure(ev.msg.datapath)
