"""Run-time changes of an oxflow switch's module graph, from Python.

A switch started with `oxflow run --graph FILE` (docs/graph.md) runs a
BESS-style module graph in its workers. This module builds and sends the
changes `oxflow ctl graph-change / tc-set / tc-attach` send: oxflow's
experimenter multipart GRAPH_CHANGE (experimenter 0x006F7866, exp_type 3;
crates/ofp/src/graph_change.rs), whose data is a change set as TOML text.
The switch validates a change on a copy of the graph, then applies it on
every worker between two scheduling rounds, or refuses all of it with an
OFPET_EXPERIMENTER error whose data is the reason.

Three layers:

- `ChangeSet`: a builder of the change-set text (add/remove modules,
  connect/disconnect gates, attach/detach classes, change a share or a
  rate limit); `str(cs)` is the TOML the switch reads;
- `change_data(cs)` / `graph_request_data()`: the bytes after the
  experimenter multipart header; `change_request(datapath, cs)` /
  `graph_request(datapath)`: os-ken `OFPExperimenterStatsRequest`s for a
  controller app; `parse_graph(data)` reads a DATAPATH_GRAPH reply (the
  live graph with per-gate packets, module counters and class usage);
- `Client("tcp:127.0.0.1:6634")`: a minimal OpenFlow 1.3 client on the
  switch's passive listener that sends a change and waits for the reply
  (raising `Refused(reason)` on a refusal), or fetches the live graph,
  with nothing but the standard library.

Example::

    from oxflow.datapath_graph import ChangeSet, Client
    cs = (ChangeSet().disconnect("in2").add_module("m2", "measure")
          .connect("in2", "m2").connect("m2", "of"))
    with Client(switch.target) as c:
        c.apply(cs)
        print(c.graph()["counters"]["m2"])
"""

import socket
import struct

OXFLOW_EXPERIMENTER = 0x006F7866
DATAPATH_GRAPH = 2
GRAPH_CHANGE = 3

OFP_VERSION = 4
OFPT_HELLO = 0
OFPT_ERROR = 1
OFPT_ECHO_REQUEST = 2
OFPT_ECHO_REPLY = 3
OFPT_MULTIPART_REQUEST = 18
OFPT_MULTIPART_REPLY = 19
OFPMP_EXPERIMENTER = 0xFFFF
OFPET_EXPERIMENTER = 0xFFFF
OFPMPF_REPLY_MORE = 1


def _toml_str(s):
    out = ['"']
    for ch in str(s):
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 0x20 or ch == "\x7f":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[%s]" % ", ".join(_toml_value(x) for x in v)
    return _toml_str(v)


class ChangeSet:
    """A change set (the `graph` crate's change format). The switch
    applies the graph part in the order disconnect, remove, add, connect
    and then the class part in the order attach, detach, set, whatever
    order the builder calls came in."""

    def __init__(self):
        self.entries = []  # (table name, [(key, value)])

    def _add(self, table, **kv):
        self.entries.append((table, [(k, v) for k, v in kv.items()
                                     if v is not None]))
        return self

    def add_module(self, name, kind, **args):
        """A new module of a registered kind with its arguments."""
        self.entries.append(("module", [("name", name), ("kind", kind)]
                             + sorted(args.items())))
        return self

    def remove(self, name):
        return self._add("remove", name=name)

    def connect(self, frm, to):
        """Output gate `frm` ("module" or "module:gate") to input `to`."""
        return self._add("connect", **{"from": frm, "to": to})

    def disconnect(self, frm):
        return self._add("disconnect", **{"from": frm})

    def attach(self, cls, parent, task, share=1, priority=0):
        """A new leaf class `cls` under `parent` running task module
        `task` (a new task module must be attached, or the change is
        refused)."""
        return self._add("attach", **{"class": cls, "parent": parent,
                                      "task": task, "share": share,
                                      "priority": priority})

    def detach(self, cls):
        return self._add("detach", **{"class": cls})

    def set_share(self, cls, share):
        return self._add("set", **{"class": cls, "share": share})

    def set_limit(self, cls, limit, burst):
        """A rate_limit class's limit (units/s) and burst."""
        return self._add("set", **{"class": cls, "limit": limit,
                                   "burst": burst})

    def __str__(self):
        lines = []
        for table, kv in self.entries:
            lines.append("[[%s]]" % table)
            lines.extend("%s = %s" % (k, _toml_value(v)) for k, v in kv)
        return "\n".join(lines) + "\n"


def change_data(change):
    """The multipart data of a GRAPH_CHANGE: a ChangeSet or TOML text."""
    return str(change).encode("utf-8")


def graph_request_data():
    return b""


def multipart_request(xid, exp_type, data):
    """Wire bytes of an experimenter multipart request."""
    body = struct.pack("!HH4xII", OFPMP_EXPERIMENTER, 0, OXFLOW_EXPERIMENTER,
                       exp_type) + data
    return struct.pack("!BBHI", OFP_VERSION, OFPT_MULTIPART_REQUEST,
                       8 + len(body), xid) + body


def change_request(datapath, change):
    """An os-ken OFPExperimenterStatsRequest carrying `change`."""
    from os_ken.ofproto import ofproto_v1_3_parser as parser
    return parser.OFPExperimenterStatsRequest(
        datapath, 0, experimenter=OXFLOW_EXPERIMENTER, exp_type=GRAPH_CHANGE,
        data=change_data(change))


def graph_request(datapath):
    """An os-ken request for the live graph (DATAPATH_GRAPH)."""
    from os_ken.ofproto import ofproto_v1_3_parser as parser
    return parser.OFPExperimenterStatsRequest(
        datapath, 0, experimenter=OXFLOW_EXPERIMENTER,
        exp_type=DATAPATH_GRAPH, data=b"")


def parse_graph(data):
    """A DATAPATH_GRAPH reply's data -> dict with `nodes` {name: kind},
    `edges` [(from, gate, to, packets)], `counters` {node: {name: value}},
    `classes` [dict per class and worker], `workers` [dict]."""
    g = {"nodes": {}, "edges": [], "counters": {}, "classes": [],
         "workers": []}
    for line in data.decode("utf-8", "replace").splitlines():
        f = line.split(" ")
        if f[0] == "node" and len(f) == 3:
            g["nodes"][f[1]] = f[2]
        elif f[0] == "edge" and len(f) == 5:
            g["edges"].append((f[1], f[2], f[3], int(f[4])))
        elif f[0] == "counter" and len(f) == 4:
            g["counters"].setdefault(f[1], {})[f[2]] = int(f[3])
        elif f[0] == "worker" and len(f) == 5:
            g["workers"].append({"worker": int(f[1]), "class": f[2],
                                 "rounds": int(f[3]),
                                 "busy_rounds": int(f[4])})
        elif f[0] == "class" and len(f) == 11:
            names = ("share", "priority", "runs", "packets", "bits",
                     "throttled")
            c = {"worker": int(f[1]), "name": f[2], "kind": f[3],
                 "parent": None if f[4] == "-" else f[4]}
            c.update(zip(names, map(int, f[5:])))
            g["classes"].append(c)
    return g


class Refused(Exception):
    """The switch refused a request; `.reason` is its text."""

    def __init__(self, reason, err_type=None, code=None):
        super().__init__(reason)
        self.reason = reason
        self.err_type = err_type
        self.code = code


def parse_error(body):
    """An OFPT_ERROR body -> Refused (an oxflow experimenter refusal's
    reason is its text)."""
    (etype,) = struct.unpack_from("!H", body)
    if etype == OFPET_EXPERIMENTER and len(body) >= 8:
        code, exp = struct.unpack_from("!HI", body, 2)
        if exp == OXFLOW_EXPERIMENTER:
            return Refused(body[8:].decode("utf-8", "replace"), etype, code)
    (code,) = struct.unpack_from("!H", body, 2)
    return Refused("OFPT_ERROR type %d code %d" % (etype, code), etype, code)


class Client:
    """A minimal OpenFlow 1.3 client on an oxflow listener (module doc);
    `target` is "tcp:IP:PORT"."""

    def __init__(self, target, timeout=10.0):
        kind, host, port = target.split(":")
        if kind != "tcp":
            raise ValueError("only tcp:IP:PORT targets (got %r)" % target)
        self.sock = socket.create_connection((host, int(port)),
                                             timeout=timeout)
        self.xid = 0x6f780000
        self.sock.sendall(struct.pack("!BBHI", OFP_VERSION, OFPT_HELLO, 8, 1))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        self.sock.close()

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("switch closed the connection")
            buf += chunk
        return buf

    def _message(self):
        hdr = self._read(8)
        _, mtype, length, xid = struct.unpack("!BBHI", hdr)
        return mtype, xid, self._read(length - 8)

    def _multipart(self, exp_type, data):
        self.xid += 1
        xid = self.xid
        self.sock.sendall(multipart_request(xid, exp_type, data))
        out = b""
        while True:
            mtype, mxid, body = self._message()
            if mtype == OFPT_ECHO_REQUEST:
                self.sock.sendall(struct.pack("!BBHI", OFP_VERSION,
                                              OFPT_ECHO_REPLY, 8 + len(body),
                                              mxid) + body)
                continue
            if mxid != xid:
                continue
            if mtype == OFPT_ERROR:
                raise parse_error(body)
            if mtype == OFPT_MULTIPART_REPLY:
                _, flags = struct.unpack_from("!HH", body)
                out += body[16:]
                if not flags & OFPMPF_REPLY_MORE:
                    return out

    def apply(self, change):
        """Sends `change` (a ChangeSet or TOML text); returns once every
        worker applied it, raises Refused if the switch refused it."""
        self._multipart(GRAPH_CHANGE, change_data(change))

    def graph(self):
        """The live graph (parse_graph of the DATAPATH_GRAPH reply)."""
        return parse_graph(self._multipart(DATAPATH_GRAPH,
                                           graph_request_data()))
