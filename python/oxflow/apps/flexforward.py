"""An os-ken app that runs a hypercube network of FlexForward switches
(docs/flexforward.md): it discovers the topology with LLDP, labels the
switches with hypercube addresses, gives them pairwise coprime KeyFlow keys,
installs both modes' parameters and a mode on every switch, and switches the
whole network from one mode to another on request.

- Discovery: on connect, a flow sends LLDP (eth_type 0x88cc) to the
  controller and the port descriptions are requested; every 0.5 s the app
  sends an LLDP frame out of every port of every switch (chassis id
  "dpid:<hex>", port id the port number) and learns a link from each one
  another switch sends back. Ports without a switch behind them are host
  ports.
- Once $OXFLOW_FF_SWITCHES switches (default 8) are connected and every one
  has log2(N) switch links, the labelling runs: breadth-first from the
  lowest dpid, which gets 0; its neighbours get 1, 2, 4, ... in port order;
  every other switch gets the OR of its neighbours' labels one level closer
  to the root (in a hypercube those differ from it in one bit each). The
  labelling is checked (every link must join labels one bit apart) and
  refused otherwise.
- Keys: `oxflow.flexnet.keys_for(N, highest port)`, in label order.
- Each switch gets SET_HYPERCUBE (its label, neighbours' labels -> ports,
  its single host port as local port), SET_KEYFLOW and SET_FWMODE with
  $OXFLOW_FF_MODE (default "hypercube") and fallback $OXFLOW_FF_FALLBACK
  (default "openflow"), then a barrier.
- Path ids: for every pair of switches with a host, the e-cube route and
  the MAC that is both the destination's HyperCube address and the route's
  KeyFlow path id (`flexforward.dual_mac`). The plan (labels, keys, host
  ports, MACs) is written as JSON to $OXFLOW_FF_PLAN when given, and
  "flexforward ready" is logged.
- Network-wide switch: the app polls the file $OXFLOW_FF_MODE_FILE (when
  given) every 0.2 s; when its content (a mode name) changes, every switch
  gets SET_FWMODE in label order, each followed by a barrier, and
  "flexforward mode <name> on N switches" is logged once all barriers came
  back. Switch errors are logged with their FlexForward code name.
"""

import json
import os
import struct

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.lib import hub
from os_ken.lib.packet import ethernet, lldp, packet
from os_ken.ofproto import ofproto_v1_3

from oxflow import flexforward as ff
from oxflow.flexnet import keys_for

ETH_TYPE_LLDP = 0x88CC
LLDP_INTERVAL = 0.5
MAX_PORT = 0xFFFFFF00


def lldp_frame(dpid, port):
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(
        dst=lldp.LLDP_MAC_NEAREST_BRIDGE, src="02:00:00:00:00:01",
        ethertype=ETH_TYPE_LLDP))
    tlvs = (lldp.ChassisID(subtype=lldp.ChassisID.SUB_LOCALLY_ASSIGNED,
                           chassis_id=b"dpid:%016x" % dpid),
            lldp.PortID(subtype=lldp.PortID.SUB_PORT_COMPONENT,
                        port_id=struct.pack("!I", port)),
            lldp.TTL(ttl=120), lldp.End())
    pkt.add_protocol(lldp.lldp(tlvs))
    pkt.serialize()
    return pkt.data


def parse_lldp(data):
    """(dpid, port) of an LLDP frame this app sent, or None."""
    try:
        lp = packet.Packet(data).get_protocol(lldp.lldp)
    except Exception:  # noqa: BLE001 - not ours
        return None
    if lp is None or len(lp.tlvs) < 2:
        return None
    cid = bytes(lp.tlvs[0].chassis_id)
    if not cid.startswith(b"dpid:"):
        return None
    return int(cid[5:], 16), struct.unpack("!I", bytes(lp.tlvs[1].port_id))[0]


def label_hypercube(links, root):
    """Hypercube labels {dpid: int} from `links` {dpid: {port: peer dpid}},
    breadth-first from `root`; raises ValueError if the graph is not a
    hypercube."""
    labels = {root: 0}
    level = {root: 0}
    for bit, port in enumerate(sorted(links[root])):
        peer = links[root][port]
        labels[peer] = 1 << bit
        level[peer] = 1
    frontier = [links[root][p] for p in sorted(links[root])]
    depth = 1
    while frontier:
        nxt = []
        for d in frontier:
            for p in sorted(links[d]):
                peer = links[d][p]
                if peer not in level:
                    level[peer] = depth + 1
                    nxt.append(peer)
        for d in nxt:
            lab = 0
            for peer in links[d].values():
                if level[peer] == depth:
                    lab |= labels[peer]
            labels[d] = lab
        frontier = nxt
        depth += 1
    for d, ports in links.items():
        for peer in ports.values():
            if bin(labels[d] ^ labels[peer]).count("1") != 1:
                raise ValueError("not a hypercube: %x-%x labelled %d, %d" % (
                    d, peer, labels[d], labels[peer]))
    if len(set(labels.values())) != len(labels):
        raise ValueError("not a hypercube: labels repeat")
    return labels


class FlexForward13(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.expected = int(os.environ.get("OXFLOW_FF_SWITCHES", "8"))
        self.mode = os.environ.get("OXFLOW_FF_MODE", "hypercube")
        self.fallback = os.environ.get("OXFLOW_FF_FALLBACK", "openflow")
        self.plan_path = os.environ.get("OXFLOW_FF_PLAN")
        self.mode_file = os.environ.get("OXFLOW_FF_MODE_FILE")
        self.dps = {}          # dpid -> datapath
        self.ports = {}        # dpid -> [port numbers]
        self.links = {}        # dpid -> {port: peer dpid}
        self.labels = None     # dpid -> label, once installed
        self.pending = {}      # barrier xid -> dpid, for a mode change
        self.switching = None
        hub.spawn(self._discover)
        if self.mode_file:
            hub.spawn(self._watch_mode_file)

    # --- connection and discovery

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def _features(self, ev):
        dp = ev.msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        self.dps[dp.id] = dp
        self.links.setdefault(dp.id, {})
        inst = [parser.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [
            parser.OFPActionOutput(ofp.OFPP_CONTROLLER,
                                   ofp.OFPCML_NO_BUFFER)])]
        dp.send_msg(parser.OFPFlowMod(
            dp, priority=0xFFFF, match=parser.OFPMatch(
                eth_type=ETH_TYPE_LLDP), instructions=inst))
        dp.send_msg(parser.OFPPortDescStatsRequest(dp, 0))

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply, MAIN_DISPATCHER)
    def _port_desc(self, ev):
        dp = ev.msg.datapath
        self.ports[dp.id] = sorted(p.port_no for p in ev.msg.body
                                   if p.port_no < MAX_PORT)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def _packet_in(self, ev):
        msg = ev.msg
        got = parse_lldp(msg.data)
        if got is None:
            return
        src, _ = got
        if src in self.dps and src != msg.datapath.id:
            self.links.setdefault(msg.datapath.id, {})[
                msg.match["in_port"]] = src

    def _discover(self):
        while self.labels is None:
            for dpid, dp in list(self.dps.items()):
                parser, ofp = dp.ofproto_parser, dp.ofproto
                for port in self.ports.get(dpid, []):
                    dp.send_msg(parser.OFPPacketOut(
                        dp, buffer_id=ofp.OFP_NO_BUFFER,
                        in_port=ofp.OFPP_CONTROLLER,
                        actions=[parser.OFPActionOutput(port)],
                        data=lldp_frame(dpid, port)))
            hub.sleep(LLDP_INTERVAL)
            self._maybe_install()

    def _complete(self):
        n = self.expected
        dim = n.bit_length() - 1
        return (len(self.dps) == n and 1 << dim == n
                and all(d in self.ports for d in self.dps)
                and all(len(self.links.get(d, {})) == dim for d in self.dps))

    # --- installation

    def _maybe_install(self):
        if self.labels is not None or not self._complete():
            return
        try:
            labels = label_hypercube(self.links, min(self.dps))
        except ValueError as exc:
            self.logger.error("flexforward: %s", exc)
            return
        n, dim = self.expected, self.expected.bit_length() - 1
        order = sorted(self.dps, key=lambda d: labels[d])
        top = max(max(self.ports[d]) for d in self.dps)
        keys = dict(zip(order, keys_for(n, top)))
        hosts = {}
        for d in order:
            edge = [p for p in self.ports[d] if p not in self.links[d]]
            hosts[d] = edge[0] if len(edge) == 1 else 0
        for d in order:
            dp = self.dps[d]
            nbrs = [(labels[peer], port)
                    for port, peer in sorted(self.links[d].items())]
            dp.send_msg(ff.set_hypercube(dp, labels[d], nbrs, hosts[d]))
            dp.send_msg(ff.set_keyflow(dp, keys[d]))
            dp.send_msg(ff.set_fwmode(dp, self.mode, fallback=self.fallback))
            dp.send_msg(dp.ofproto_parser.OFPBarrierRequest(dp))
        self.labels = labels
        by_label = {labels[d]: d for d in order}
        macs = {}
        for s in order:
            for t in order:
                if s == t or not hosts[s] or not hosts[t]:
                    continue
                route = self._route(labels[s], labels[t], by_label, hosts[t])
                macs["%d-%d" % (labels[s], labels[t])] = ff.dual_mac(
                    labels[t], [(p, keys[d]) for d, p in route])
        plan = {"labels": {"%x" % d: labels[d] for d in order},
                "keys": {"%x" % d: keys[d] for d in order},
                "host_ports": {"%x" % d: hosts[d] for d in order},
                "macs": macs, "mode": self.mode}
        if self.plan_path:
            tmp = self.plan_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(plan, f, indent=1, sort_keys=True)
            os.replace(tmp, self.plan_path)
        self.logger.info("flexforward ready: %d switches, mode %s",
                         n, self.mode)

    def _route(self, src, dst, by_label, host_port):
        """[(dpid, output port)] of the e-cube route from label src to
        label dst, the last hop the host port."""
        out = []
        cur = src
        while cur != dst:
            diff = cur ^ dst
            nxt = cur ^ (diff & -diff)
            d = by_label[cur]
            port = [p for p, peer in self.links[d].items()
                    if self.labels[peer] == nxt][0]
            out.append((d, port))
            cur = nxt
        out.append((by_label[dst], host_port))
        return out

    # --- network-wide mode changes

    def switch_network(self, mode, fallback=None):
        """SET_FWMODE `mode` on every switch in label order, each with a
        barrier; logs once all barriers are back."""
        if self.labels is None:
            self.logger.error("flexforward: not installed yet")
            return
        fb = fallback or self.fallback
        self.switching = mode
        self.pending = {}
        for d in sorted(self.dps, key=lambda d: self.labels[d]):
            dp = self.dps[d]
            dp.send_msg(ff.set_fwmode(dp, mode, fallback=fb))
            req = dp.ofproto_parser.OFPBarrierRequest(dp)
            dp.set_xid(req)
            self.pending[req.xid, d] = True
            dp.send_msg(req)
        self.mode = mode

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    def _barrier(self, ev):
        key = (ev.msg.xid, ev.msg.datapath.id)
        if self.pending.pop(key, None) and not self.pending:
            self.logger.info("flexforward mode %s on %d switches",
                             self.switching, len(self.dps))

    def _watch_mode_file(self):
        last = None
        while True:
            hub.sleep(0.2)
            try:
                with open(self.mode_file) as f:
                    want = f.read().strip()
            except OSError:
                continue
            if want and want != last and self.labels is not None:
                last = want
                if want not in ff.MODES:
                    self.logger.error("flexforward: unknown mode %r", want)
                    continue
                self.switch_network(want)

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    def _error(self, ev):
        m = ev.msg
        if m.type == 0xFFFF and getattr(m, "experimenter",
                                        None) == ff.FLEX_EXPERIMENTER:
            self.logger.error("flexforward refused by %x: %s",
                              m.datapath.id, ff.ERRORS[m.exp_type]
                              if m.exp_type < len(ff.ERRORS) else m.exp_type)
        else:
            self.logger.error("error from %x: type %d code %d",
                              m.datapath.id, m.type, m.code)
