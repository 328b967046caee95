"""An os-ken app that installs a precomputed static fabric (groups + IPv4
flows) on each switch as it connects: the controller of the data-centre
evaluation (`oxflow.dctopo.fabric_rules` writes the rules).

The rules come from the JSON file named by $OXFLOW_FABRIC:
    {"<dpid>": {"groups": [{"group_id": 1, "type": "select",
                            "ports": [3, 4]}],
                "flows": [{"priority": 100, "ipv4_dst": "10.1.0.1",
                           "output": 1},
                          {"priority": 10, "group": 1}]}}
A "select" group gets one equal-weight bucket per port (output). A flow
matches eth_type IPv4 plus ipv4_dst (address or address/mask) when given,
and applies output:PORT or group:ID. Groups go first, then a barrier, then
the flows, then a barrier; when the last barrier reply arrives the app logs
"fabric ready dpid=<hex>", which the evaluation waits for.
"""

import json
import os

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.ofproto import ofproto_v1_3


def load_rules(path):
    with open(path) as f:
        raw = json.load(f)
    return {int(k): v for k, v in raw.items()}


class Fabric13(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        path = os.environ.get("OXFLOW_FABRIC")
        if not path:
            raise RuntimeError("oxflow.apps.fabric: set OXFLOW_FABRIC to the "
                               "rules file")
        self.rules = load_rules(path)
        # dpid -> xid of the barrier that follows the flows; its reply
        # means the switch has every rule.
        self.pending = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        rules = self.rules.get(dp.id)
        if rules is None:
            self.logger.warning("fabric: no rules for dpid=%x", dp.id)
            return
        for g in rules.get("groups", []):
            buckets = [parser.OFPBucket(
                weight=1, watch_port=ofp.OFPP_ANY, watch_group=ofp.OFPG_ANY,
                actions=[parser.OFPActionOutput(p)]) for p in g["ports"]]
            gtype = {"select": ofp.OFPGT_SELECT, "all": ofp.OFPGT_ALL,
                     "indirect": ofp.OFPGT_INDIRECT}[g.get("type", "select")]
            dp.send_msg(parser.OFPGroupMod(dp, ofp.OFPGC_ADD, gtype,
                                           g["group_id"], buckets))
        dp.send_msg(parser.OFPBarrierRequest(dp))
        for fl in rules.get("flows", []):
            fields = {"eth_type": 0x0800}
            if "ipv4_dst" in fl:
                addr = fl["ipv4_dst"]
                fields["ipv4_dst"] = tuple(addr.split("/")) if "/" in addr \
                    else addr
            if "group" in fl:
                actions = [parser.OFPActionGroup(fl["group"])]
            else:
                actions = [parser.OFPActionOutput(fl["output"])]
            inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                                 actions)]
            dp.send_msg(parser.OFPFlowMod(
                datapath=dp, priority=fl["priority"],
                match=parser.OFPMatch(**fields), instructions=inst))
        barrier = parser.OFPBarrierRequest(dp)
        dp.set_xid(barrier)
        self.pending[dp.id] = barrier.xid
        dp.send_msg(barrier)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, [CONFIG_DISPATCHER,
                                                 MAIN_DISPATCHER])
    def on_barrier(self, ev):
        dp = ev.msg.datapath
        if self.pending.get(dp.id) == ev.msg.xid:
            del self.pending[dp.id]
            self.logger.info("fabric ready dpid=%x", dp.id)

    @set_ev_cls(ofp_event.EventOFPErrorMsg, [CONFIG_DISPATCHER,
                                              MAIN_DISPATCHER])
    def on_error(self, ev):
        msg = ev.msg
        self.logger.error("fabric: error from dpid=%x type=%d code=%d",
                          msg.datapath.id, msg.type, msg.code)
