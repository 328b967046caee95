"""An os-ken app that records every asynchronous message a switch sends
(packet-in, flow-removed, port-status, error) plus switch connect/disconnect,
one JSON object per line, flushed per line so tests can tail the file.

The file is $OXFLOW_RECORDER_FILE (default ./oxflow-recorder.jsonl). Each
line has "event" (packet_in, flow_removed, port_status, error, connect,
disconnect), "dpid", "time" and the message as os-ken's to_jsondict()
(e.g. {"OFPPacketIn": {...}}) under "msg"; packet data is hex in "data_hex".
"""

import json
import os
import threading
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, DEAD_DISPATCHER,
                                       MAIN_DISPATCHER, set_ev_cls)
from os_ken.ofproto import ofproto_v1_3

ENV_FILE = "OXFLOW_RECORDER_FILE"
DEFAULT_FILE = "oxflow-recorder.jsonl"


class Recorder(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.path = os.environ.get(ENV_FILE, DEFAULT_FILE)
        self.lock = threading.Lock()
        self.out = open(self.path, "a", buffering=1)
        self.logger.info("recording async messages to %s", self.path)

    def write(self, event, dpid, msg=None, **extra):
        rec = {"event": event, "dpid": dpid, "time": time.time()}
        if msg is not None:
            try:
                rec["msg"] = msg.to_jsondict()
            except Exception as exc:  # keep recording whatever happens
                rec["msg_error"] = repr(exc)
            data = getattr(msg, "data", None)
            if isinstance(data, (bytes, bytearray)):
                rec["data_hex"] = bytes(data).hex()
        rec.update(extra)
        line = json.dumps(rec, default=repr)
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    @set_ev_cls(ofp_event.EventOFPSwitchFeatures, CONFIG_DISPATCHER)
    def on_features(self, ev):
        self.write("connect", ev.msg.datapath.id, ev.msg)

    @set_ev_cls(ofp_event.EventOFPStateChange, DEAD_DISPATCHER)
    def on_dead(self, ev):
        self.write("disconnect", ev.datapath.id)

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def on_packet_in(self, ev):
        self.write("packet_in", ev.msg.datapath.id, ev.msg)

    @set_ev_cls(ofp_event.EventOFPFlowRemoved, MAIN_DISPATCHER)
    def on_flow_removed(self, ev):
        self.write("flow_removed", ev.msg.datapath.id, ev.msg)

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def on_port_status(self, ev):
        self.write("port_status", ev.msg.datapath.id, ev.msg)

    @set_ev_cls(ofp_event.EventOFPErrorMsg,
                [CONFIG_DISPATCHER, MAIN_DISPATCHER])
    def on_error(self, ev):
        self.write("error", ev.msg.datapath.id, ev.msg)
