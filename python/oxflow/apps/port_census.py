"""An os-ken app that asks every switch, once it is up, for its port
descriptions and port statistics, and records what it got: one JSON object
per line in $OXFLOW_PORTS_FILE (default ./oxflow-ports.jsonl), flushed per
line, and a log line "ports of dpid=... : N [names]".

Lines: {"event": "port_desc", "dpid": ..., "ports": [{"port_no", "name",
"hw_addr", "state"}, ...]}, {"event": "port_stats", "dpid": ...,
"stats": [{"port_no", "rx_packets", "tx_packets"}, ...]} and, for each
port-status message, {"event": "port_status", "dpid": ..., "reason": ...,
"port_no": ..., "name": ..., "state": ...}. Used by the
HARMLESS tests and demo to show what the controller sees.
"""

import json
import os
import threading
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.ofproto import ofproto_v1_3

ENV_FILE = "OXFLOW_PORTS_FILE"
DEFAULT_FILE = "oxflow-ports.jsonl"


class PortCensus(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.out = open(os.environ.get(ENV_FILE, DEFAULT_FILE), "a",
                        buffering=1)
        self.lock = threading.Lock()

    def write(self, rec):
        rec["time"] = time.time()
        with self.lock:
            self.out.write(json.dumps(rec) + "\n")
            self.out.flush()

    @set_ev_cls(ofp_event.EventOFPStateChange, MAIN_DISPATCHER)
    def on_main(self, ev):
        dp = ev.datapath
        parser, ofp = dp.ofproto_parser, dp.ofproto
        dp.send_msg(parser.OFPPortDescStatsRequest(dp, 0))
        dp.send_msg(parser.OFPPortStatsRequest(dp, 0, ofp.OFPP_ANY))

    @set_ev_cls(ofp_event.EventOFPPortDescStatsReply,
                [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_port_desc(self, ev):
        dp = ev.msg.datapath
        ports = [{"port_no": p.port_no,
                  "name": p.name.decode(errors="replace")
                  if isinstance(p.name, bytes) else p.name,
                  "hw_addr": p.hw_addr, "state": p.state}
                 for p in ev.msg.body]
        self.logger.info("ports of dpid=%016x: %d %s", dp.id, len(ports),
                         [p["name"] for p in ports])
        self.write({"event": "port_desc", "dpid": dp.id, "ports": ports})

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    def on_port_stats(self, ev):
        stats = [{"port_no": s.port_no, "rx_packets": s.rx_packets,
                  "tx_packets": s.tx_packets} for s in ev.msg.body]
        self.write({"event": "port_stats", "dpid": ev.msg.datapath.id,
                    "stats": stats})

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def on_port_status(self, ev):
        p = ev.msg.desc
        self.write({"event": "port_status", "dpid": ev.msg.datapath.id,
                    "reason": ev.msg.reason, "port_no": p.port_no,
                    "name": p.name.decode(errors="replace")
                    if isinstance(p.name, bytes) else p.name,
                    "state": p.state})
