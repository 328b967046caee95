"""Sets the states of many flows on a BEBA switch over one connection.

    python scripts/beba_set_states.py HOST:PORT APP FLOWS [FIRST]

For flow i in FIRST..FIRST+FLOWS of `crates/ports/examples/flows_tx.rs`'s
traffic, one STATE_MOD SET_FLOW_STATE on table 0, all back to back on one
OpenFlow 1.3 connection to the switch's passive port, then one barrier:
the switch has applied them all when this returns. APP says which key and
state (the apps of python/oxflow/apps/beba/):

- portknock: key = the IPv4 source 10.i (low 24 bits of i), state 4 (open);
- maclearning: key = the destination MAC 00:00:i, state 2 (learnt at port 2).

Prints the count, the seconds taken and the OFPT_ERRORs the switch sent
back (exit status 1 if any). Used by scripts/beba_bench.sh against oxflow
and the BEBA reference switch; `oxflow ctl beba-set-state` does one flow
per process.
"""

import socket
import struct
import sys
import threading
import time

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0] + "/python")

from oxflow import beba  # noqa: E402

OFP_VERSION = 4
OFPT_HELLO, OFPT_ERROR, OFPT_ECHO_REQUEST, OFPT_ECHO_REPLY = 0, 1, 2, 3
OFPT_EXPERIMENTER, OFPT_BARRIER_REQUEST, OFPT_BARRIER_REPLY = 4, 20, 21
BARRIER_XID = 0xFFFFFFFF
# STATE_MODs per sendall() call.
CHUNK = 4096


def header(msg_type, length, xid):
    return struct.pack("!BBHI", OFP_VERSION, msg_type, length, xid)


def state_key(app, i):
    b = struct.pack("!I", i)
    if app == "portknock":
        return bytes([10, b[1], b[2], b[3]]), 4
    if app == "maclearning":
        return bytes([0, 0]) + b, 2
    raise SystemExit("unknown app %r (portknock or maclearning)" % app)


def state_mod(app, i):
    key, state = state_key(app, i)
    data = struct.pack("!II", beba.BEBA_EXPERIMENTER, beba.EXP_STATE_MOD) \
        + beba.set_flow_state_data(0, key, state)
    return header(OFPT_EXPERIMENTER, 8 + len(data), i & 0x7FFFFFFF) + data


class Reader(threading.Thread):
    """Reads the switch's messages: answers echoes, counts errors, and
    stops at the barrier reply."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.sock = sock
        self.errors = 0
        self.first_error = None
        self.failed = None
        self.done = threading.Event()

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the switch closed the connection")
            buf += chunk
        return buf

    def run(self):
        try:
            self.serve()
        except (ConnectionError, OSError, struct.error) as e:
            self.failed = e
            self.done.set()

    def serve(self):
        while True:
            _, msg_type, length, xid = struct.unpack("!BBHI", self.recv_exact(8))
            body = self.recv_exact(length - 8)
            if msg_type == OFPT_ECHO_REQUEST:
                self.sock.sendall(header(OFPT_ECHO_REPLY, length, xid) + body)
            elif msg_type == OFPT_ERROR:
                self.errors += 1
                if self.first_error is None:
                    self.first_error = (xid, body[:4].hex())
            elif msg_type == OFPT_BARRIER_REPLY and xid == BARRIER_XID:
                self.done.set()
                return


def main():
    if len(sys.argv) not in (4, 5):
        raise SystemExit(__doc__)
    host, port = sys.argv[1].rsplit(":", 1)
    app, flows = sys.argv[2], int(sys.argv[3])
    first = int(sys.argv[4]) if len(sys.argv) == 5 else 0
    sock = socket.create_connection((host, int(port)))
    sock.sendall(header(OFPT_HELLO, 8, 0))
    reader = Reader(sock)
    # The switch's HELLO first.
    _, msg_type, length, _ = struct.unpack("!BBHI", reader.recv_exact(8))
    reader.recv_exact(length - 8)
    if msg_type != OFPT_HELLO:
        raise SystemExit("expected HELLO, got type %d" % msg_type)
    reader.start()
    start = time.monotonic()
    for lo in range(first, first + flows, CHUNK):
        hi = min(lo + CHUNK, first + flows)
        sock.sendall(b"".join(state_mod(app, i) for i in range(lo, hi)))
    sock.sendall(header(OFPT_BARRIER_REQUEST, 8, BARRIER_XID))
    reader.done.wait()
    if reader.failed is not None:
        raise SystemExit("connection lost: %s" % reader.failed)
    took = time.monotonic() - start
    print("%d states set in %.1f s, %d errors%s" % (
        flows, took, reader.errors,
        "" if reader.first_error is None
        else " (first: xid %d, type/code %s)" % reader.first_error))
    sock.close()
    sys.exit(1 if reader.errors else 0)


if __name__ == "__main__":
    main()
