"""Data-centre traffic: flow sizes from published CDFs, Poisson arrivals at an
offered load, and a per-host agent that carries each flow over its own TCP
connection and logs its completion time.

Flow sizes: `python/oxflow/data/<name>.cdf` (websearch: DCTCP; datamining:
VL2; each file names its source). `FlowSizeCdf.sample(rng)` draws by
inverse transform with linear interpolation between the table's points.

Offered load (`schedule`): `load` is the fraction of the servers' access
capacity offered as new flows: the whole network starts flows at rate
    lambda = load * n_servers * link_bps / (8 * mean_flow_size)
split evenly over the servers, each a Poisson process; every flow goes to a
server chosen uniformly on another leaf.

Classes: mouse < 10 KB (10,000 bytes), elephant > 10 MB (10,000,000 bytes),
rabbit in between.

Agent (`python -m oxflow.dcflows agent --port P --schedule FILE|- --t0 T
--out FILE|-`), one per host, run inside the host's namespace: it serves
every connection made to it (an 8-byte big-endian size, then that many
bytes, answered with one byte once all arrived) and, from the schedule
(JSON lines {"id", "start", "dst", "size"}, start in seconds after the
common epoch time T), opens one connection per flow at its start time and
sends its bytes. A flow's FCT is from just before connect() to the
receiver's one-byte answer (so it covers the handshake and every byte
delivered). One JSON line per flow goes to --out: id, src, dst, size,
class, start (scheduled, relative), fct (seconds) or error; "done" marks
the end of its own flows. The agent keeps serving until SIGTERM.
"""

import argparse
import asyncio
import bisect
import json
import os
import pathlib
import random
import signal
import struct
import sys
import time

DATA_DIR = pathlib.Path(__file__).resolve().parent / "data"
MOUSE_MAX = 10_000          # bytes: a mouse is smaller than this
ELEPHANT_MIN = 10_000_000   # bytes: an elephant is larger than this
CLASSES = ("mouse", "rabbit", "elephant")
CHUNK = 64 * 1024


def distributions():
    """Names of the shipped flow-size distributions."""
    return sorted(p.stem for p in DATA_DIR.glob("*.cdf"))


def flow_class(size):
    if size < MOUSE_MAX:
        return "mouse"
    if size > ELEPHANT_MIN:
        return "elephant"
    return "rabbit"


class FlowSizeCdf:
    """A piecewise-linear flow-size CDF: sorted (size, probability) points,
    probabilities non-decreasing from 0 to 1."""

    def __init__(self, points, name="cdf"):
        if len(points) < 2:
            raise ValueError("%s: a CDF needs at least two points" % name)
        prev = (0, 0.0)
        for size, p in points:
            if size < prev[0] or p < prev[1] or not 0 <= p <= 1:
                raise ValueError("%s: points must grow in size and "
                                 "probability within [0, 1]: %r" % (
                                     name, (size, p)))
            prev = (size, p)
        if points[-1][1] != 1.0:
            raise ValueError("%s: the last probability must be 1" % name)
        self.name = name
        self.sizes = [float(s) for s, _ in points]
        self.probs = [float(p) for _, p in points]

    @classmethod
    def load(cls, name):
        """The shipped distribution `name` (see `distributions()`)."""
        path = DATA_DIR / ("%s.cdf" % name)
        if not path.exists():
            raise ValueError("unknown distribution %r (known: %s)" % (
                name, ", ".join(distributions())))
        points = []
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                points.append((float(parts[0]), float(parts[1])))
            except (IndexError, ValueError):
                raise ValueError("%s:%d: expected `SIZE PROBABILITY`" % (
                    path, lineno)) from None
        return cls(points, name)

    def quantile(self, u):
        i = bisect.bisect_left(self.probs, u)
        if i <= 0:
            return self.sizes[0]
        if i >= len(self.probs):
            return self.sizes[-1]
        p0, p1 = self.probs[i - 1], self.probs[i]
        s0, s1 = self.sizes[i - 1], self.sizes[i]
        if p1 == p0:
            return s1
        return s0 + (s1 - s0) * (u - p0) / (p1 - p0)

    def sample(self, rng):
        return max(1, int(round(self.quantile(rng.random()))))

    def mean(self, cap=None):
        """Mean size (with sizes above `cap` counted as `cap`)."""
        total = 0.0
        for i in range(1, len(self.sizes)):
            dp = self.probs[i] - self.probs[i - 1]
            lo, hi = self.sizes[i - 1], self.sizes[i]
            if cap:
                lo, hi = min(lo, cap), min(hi, cap)
            total += dp * (lo + hi) / 2
        return total


def check_load(load_percent):
    if not isinstance(load_percent, (int, float)) or not \
            0 < load_percent < 100:
        raise ValueError("load must be a percentage in (0, 100), got %r" %
                         (load_percent,))


def schedule(cdf, hosts, load_percent, duration, link_mbps, seed,
             max_size=None):
    """Flows for `duration` seconds: [{"id", "src", "dst", "start", "size"}]
    sorted by start. hosts: [(leaf, name, ip)]; max_size caps sizes (None:
    uncapped)."""
    check_load(load_percent)
    leaves = {leaf for leaf, _, _ in hosts}
    if len(leaves) < 2:
        raise ValueError("flows need servers on at least two leaves")
    rng = random.Random(seed)
    mean = cdf.mean(cap=max_size)
    rate_total = (load_percent / 100.0) * len(hosts) * link_mbps * 1e6 / (
        8.0 * mean)
    rate = rate_total / len(hosts)
    flows = []
    for leaf, name, _ip in hosts:
        others = [(n, ip) for lf, n, ip in hosts if lf != leaf]
        t = rng.expovariate(rate)
        while t < duration:
            dst_name, dst_ip = rng.choice(others)
            size = cdf.sample(rng)
            if max_size:
                size = min(size, int(max_size))
            flows.append({"src": name, "dst": dst_name, "dst_ip": dst_ip,
                          "start": round(t, 6), "size": size})
            t += rng.expovariate(rate)
    flows.sort(key=lambda f: f["start"])
    for i, f in enumerate(flows):
        f["id"] = i
    return flows


# --- the agent -------------------------------------------------------------

async def _serve(reader, writer):
    try:
        head = await reader.readexactly(8)
        (size,) = struct.unpack("!Q", head)
        left = size
        while left > 0:
            data = await reader.read(min(left, 1 << 20))
            if not data:
                return
            left -= len(data)
        writer.write(b"\x01")
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _send_flow(flow, port, t0, out, src):
    delay = t0 + flow["start"] - time.time()
    if delay > 0:
        await asyncio.sleep(delay)
    rec = {"id": flow["id"], "src": src, "dst": flow["dst"],
           "size": flow["size"], "class": flow_class(flow["size"]),
           "start": flow["start"], "lag": round(time.time() - t0 -
                                                flow["start"], 6)}
    began = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection(flow["dst_ip"], port)
        writer.write(struct.pack("!Q", flow["size"]))
        left = flow["size"]
        block = bytes(min(CHUNK, left))
        while left > 0:
            n = min(left, CHUNK)
            writer.write(block if n == len(block) else block[:n])
            left -= n
            await writer.drain()
        ack = await reader.readexactly(1)
        rec["fct"] = round(time.monotonic() - began, 6)
        if ack != b"\x01":
            rec["error"] = "bad answer"
        writer.close()
    except (OSError, asyncio.IncompleteReadError) as exc:
        rec["error"] = "%s: %s" % (type(exc).__name__, exc)
        rec["fct"] = None
    out.write(json.dumps(rec) + "\n")
    out.flush()


async def _agent(args):
    server = await asyncio.start_server(_serve, "0.0.0.0", args.port,
                                        backlog=1024)
    flows = []
    if args.schedule == "-":
        flows = [json.loads(line) for line in sys.stdin if line.strip()]
    elif args.schedule:
        with open(args.schedule) as f:
            flows = [json.loads(line) for line in f if line.strip()]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    with (open(args.out, "a") if args.out != "-" else
          os.fdopen(os.dup(sys.stdout.fileno()), "w")) as out:
        out.write(json.dumps({"ready": args.name}) + "\n")
        out.flush()
        tasks = [asyncio.ensure_future(_send_flow(fl, args.port, args.t0,
                                                  out, args.name))
                 for fl in flows]
        if tasks:
            done_all = asyncio.ensure_future(asyncio.gather(*tasks))
            waiter = asyncio.ensure_future(stop.wait())
            await asyncio.wait([done_all, waiter],
                               return_when=asyncio.FIRST_COMPLETED)
        out.write(json.dumps({"done": args.name}) + "\n")
        out.flush()
        await stop.wait()
        server.close()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m oxflow.dcflows")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ag = sub.add_parser("agent", help="serve and send flows (one per host)")
    ag.add_argument("--name", required=True)
    ag.add_argument("--port", type=int, default=5001)
    ag.add_argument("--schedule", help="JSON lines of this host's flows "
                    "(a file, or - for standard input)")
    ag.add_argument("--t0", type=float, default=0.0,
                    help="epoch time the schedule's starts count from")
    ag.add_argument("--out", required=True,
                    help="where records go (a file, or - for standard "
                    "output)")
    cdf = sub.add_parser("cdf", help="print a distribution's statistics")
    cdf.add_argument("name", choices=distributions())
    args = ap.parse_args(argv)
    if args.cmd == "agent":
        asyncio.run(_agent(args))
        return 0
    d = FlowSizeCdf.load(args.name)
    rng = random.Random(1)
    counts = {c: 0 for c in CLASSES}
    for _ in range(100000):
        counts[flow_class(d.sample(rng))] += 1
    print("%s: mean %.0f bytes; classes %s" % (args.name, d.mean(), counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())

