"""An OpenFlow 1.3 L2 learning switch for os-ken (the classic
simple_switch_13, which os-ken 4.x no longer ships, rewritten small).

- On switch connect: a table-miss flow (priority 0, empty match) in table 0
  sending whole packets to the controller (OFPCML_NO_BUFFER).
- On packet-in: learn eth_src -> in_port for this datapath; if eth_dst is
  known, install an exact flow (in_port + eth_dst -> output) with an idle
  timeout, otherwise flood. The packet itself is sent with a packet-out that
  references the switch buffer when the packet-in had one, else carries the
  data.
- Flows are installed at priority 1 with an idle timeout (IDLE_TIMEOUT), so
  stale locations age out; the table-miss entry never expires.
"""

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_3

IDLE_TIMEOUT = 60
FLOW_PRIORITY = 1
ETH_TYPE_LLDP = 0x88CC


class LearningSwitch13(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # dpid -> {mac (str "aa:bb:..") -> port number}; one table per
        # switch, as the same MAC may sit behind different ports on each.
        self.mac_to_port = {}

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def switch_features_handler(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.mac_to_port.setdefault(dp.id, {})
        actions = [parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                          ofp.OFPCML_NO_BUFFER)]
        self.add_flow(dp, 0, parser.OFPMatch(), actions, idle_timeout=0)
        self.logger.info("switch %016x connected: table-miss installed",
                         dp.id)

    def add_flow(self, dp, priority, match, actions, idle_timeout,
                 buffer_id=None):
        ofp, parser = dp.ofproto, dp.ofproto_parser
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS,
                                             actions)]
        kwargs = {}
        if buffer_id is not None and buffer_id != ofp.OFP_NO_BUFFER:
            kwargs["buffer_id"] = buffer_id
        dp.send_msg(parser.OFPFlowMod(
            datapath=dp, priority=priority, match=match, instructions=inst,
            idle_timeout=idle_timeout, **kwargs))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in_handler(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        in_port = msg.match.get("in_port")
        if in_port is None:
            self.logger.warning("packet-in without in_port, ignored")
            return
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        if eth is None or eth.ethertype == ETH_TYPE_LLDP:
            return

        table = self.mac_to_port.setdefault(dp.id, {})
        table[eth.src] = in_port
        out_port = table.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        self.logger.info("packet-in dpid=%016x %s -> %s in_port=%d out=%s",
                         dp.id, eth.src, eth.dst, in_port,
                         "flood" if out_port == ofp.OFPP_FLOOD else out_port)

        buffered = msg.buffer_id != ofp.OFP_NO_BUFFER
        if out_port != ofp.OFPP_FLOOD:
            match = parser.OFPMatch(in_port=in_port, eth_dst=eth.dst)
            if buffered:
                # The flow-mod releases the buffered packet itself.
                self.add_flow(dp, FLOW_PRIORITY, match, actions,
                              IDLE_TIMEOUT, buffer_id=msg.buffer_id)
                return
            self.add_flow(dp, FLOW_PRIORITY, match, actions, IDLE_TIMEOUT)

        dp.send_msg(parser.OFPPacketOut(
            datapath=dp, buffer_id=msg.buffer_id, in_port=in_port,
            actions=actions, data=None if buffered else msg.data))
