"""Helpers shared by the BEBA example apps."""

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser

from oxflow import beba

# Timeouts on the wire are microseconds.
SECOND = 1_000_000


def stateful_table(dp, table_id, lookup, update, bit_update=None):
    """Make `table_id` stateful with lookup and update scopes (lists of
    OXM headers, e.g. `ofp.OXM_OF_IPV4_SRC`) and, optionally, the bi-flow
    update scope that SET_STATE with `bit=True` writes."""
    dp.send_msg(beba.state_mod(dp, beba.stateful_table_config_data(table_id)))
    dp.send_msg(beba.state_mod(dp, beba.extractor_data(table_id, lookup)))
    dp.send_msg(beba.state_mod(dp, beba.extractor_data(table_id, update,
                                                       update=True)))
    if bit_update:
        dp.send_msg(beba.state_mod(dp, beba.extractor_data(
            table_id, bit_update, update=True, bit=True)))


def add_flow(dp, table_id, priority, match, actions=(), extra=()):
    """A flow whose instructions are APPLY_ACTIONS (if any actions) and
    `extra` instructions."""
    insts = []
    if actions:
        insts.append(parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                                  list(actions)))
    insts.extend(extra)
    dp.send_msg(parser.OFPFlowMod(dp, table_id=table_id, priority=priority,
                                  match=match, instructions=insts))


def arp_flood(dp, table_id=0, priority=100):
    add_flow(dp, table_id, priority, parser.OFPMatch(eth_type=0x0806),
             [parser.OFPActionOutput(ofp.OFPP_FLOOD)])


def host_ip(n):
    return "10.0.0.%d" % n


def host_mac(n):
    return "00:00:00:00:00:%02x" % n




def log_notification(logger, msg):
    """Log a BEBA STATE_CHANGED or FLOW_NOTIFICATION the switch sent (an
    os-ken OFPExperimenter); other experimenter messages are ignored. The
    lines are `beba state_changed table=T key=HEX OLD->NEW` and
    `beba flow_notification table=T instructions=[...]`."""
    got = beba.parse_experimenter(msg)
    if got is None:
        return
    kind, fields = got
    if kind == "state_changed":
        table_id, old, new, _mask, key = fields
        logger.info("beba state_changed table=%d key=%s %d->%d",
                    table_id, key.hex(), old, new)
    else:
        table_id, _ntf_type, _match, types = fields
        logger.info("beba flow_notification table=%d instructions=%s",
                    table_id, types)
