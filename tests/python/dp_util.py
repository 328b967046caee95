"""Helpers for the data-plane integration tests (test_switch_dataplane.py).

- `require_oxflow()`: skip (with the reason) when the oxflow binary or
  ovs-ofctl is missing.
- `HostSocket`: a raw AF_PACKET socket bound to an interface inside a host
  namespace, held by the test process itself. It is opened by a short-lived
  thread that setns()es into the namespace (a socket keeps the namespace it
  was created in), so sending needs no helper process: the barrier test can
  send "the very next packet" microseconds after the barrier reply, and the
  meter test can send a burst of 1000 frames.
- `capture(hosts)`: traffic.Sniffer captures started in parallel on several
  hosts, stopped together, frames filtered by the test marker.
- Frame helpers: `marked(pkt, tag)` appends a payload that names the case,
  `case_of(frame)` reads it back, `checksum_errors(frame)` lists every
  checksum scapy would compute differently.
"""

import contextlib
import ctypes
import os
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from oxflow import switch as switch_mod
from oxflow.traffic import Sniffer

# Every frame the tests send carries MARK + a case tag in its payload, so a
# capture keeps only test frames (never stray kernel traffic) and each frame
# can be attributed to the case that sent it.
MARK = b"OXDP:"
_TAG_RE = re.compile(re.escape(MARK) + rb"([A-Za-z0-9_.-]{1,40});")

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def openflow_graph(inputs):
    """A graph file (an oxflow.datapath_graph.ChangeSet: print it with str)
    of the default graph's shape: each input module, given as (name,
    kind, arguments), into `of` (openflow), then `out` (tx)."""
    from oxflow.datapath_graph import ChangeSet
    g = ChangeSet()
    names = []
    for name, kind, args in inputs:
        g.add_module(name, kind, **args)
        names.append(name)
    g.add_module("of", "openflow").add_module("out", "tx")
    for name in names:
        g.connect(name, "of")
    return g.connect("of", "out")


def require_oxflow():
    """The oxflow binary path, or pytest.skip naming what is missing."""
    try:
        return switch_mod.oxflow_bin()
    except FileNotFoundError as exc:
        pytest.skip("oxflow binary missing: %s" % exc)


def have_ovs_ofctl():
    return shutil.which("ovs-ofctl") is not None


def ovs_ofctl(target, *args, timeout=15):
    """`ovs-ofctl -O OpenFlow13 ARGS[0] TARGET ARGS[1:]`; raises on failure."""
    argv = ["ovs-ofctl", "-O", "OpenFlow13", args[0], target] + list(args[1:])
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError("%s failed (exit %d): %s%s" % (
            " ".join(argv), proc.returncode, proc.stdout, proc.stderr))
    return proc


def in_netns(ns, fn):
    """Call fn() on a thread that joined network namespace `ns`; return its
    result. The calling thread's namespace is untouched."""
    out = {}

    def run():
        try:
            fd = os.open("/var/run/netns/%s" % ns, os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, "setns(%s): %s" % (ns,
                                                          os.strerror(err)))
            finally:
                os.close(fd)
            out["value"] = fn()
        except BaseException as exc:  # handed to the caller
            out["error"] = exc

    t = threading.Thread(target=run, name="setns-" + ns)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


class HostSocket:
    """Send-only raw socket on `iface` inside `host`'s namespace."""

    def __init__(self, host, iface="eth0"):
        self.host = host
        self.iface = iface

        def open_sock():
            # Protocol 0: the socket receives nothing, it only sends.
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.bind((iface, 0))
            return s

        self.sock = in_netns(host.ns, open_sock)

    def send(self, frames):
        for f in frames if isinstance(frames, (list, tuple)) else [frames]:
            self.sock.send(f if isinstance(f, (bytes, bytearray))
                           else bytes(f))

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def marked_only(frame):
    return MARK in frame


@contextlib.contextmanager
def capture(hosts, keep=marked_only, settle=0.4):
    """Capture on every host while the body runs (sniffers started in
    parallel); yields a dict filled on exit with {host name: [frames]}.
    `settle` seconds are waited before stopping, for in-flight frames."""
    sniffers = {}
    errors = []

    def start(h):
        try:
            sniffers[h.name] = Sniffer(h)
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(h,)) for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result = {}
    try:
        if errors:
            raise errors[0]
        yield result
        time.sleep(settle)
        for name, s in sniffers.items():
            result[name] = [f for f in s.stop() if keep is None or keep(f)]
    finally:
        for s in sniffers.values():
            s.kill()


def tag_payload(tag, size=0):
    """The payload naming case `tag`, padded with '.' to `size` bytes."""
    p = MARK + tag.encode() + b";"
    return p + b"." * max(0, size - len(p))


def case_of(frame):
    """The case tag a captured frame carries, or None."""
    m = _TAG_RE.search(frame)
    return m.group(1).decode() if m else None


def by_case(frames):
    """{case tag: [frames]} of a capture."""
    out = {}
    for f in frames:
        out.setdefault(case_of(f), []).append(f)
    return out


def checksum_errors(frame):
    """Names of the layers of `frame` whose checksum differs from the one
    scapy computes (IPv4 header, TCP, UDP, SCTP, ICMP, ICMPv6)."""
    from scapy.all import Ether

    errs = []
    depth = 0
    while True:
        fresh = Ether(frame)
        layer = fresh
        for _ in range(depth):
            layer = layer.payload
        if not layer or layer.name in ("NoPayload", "Raw", "Padding"):
            return errs
        for fname in ("chksum", "cksum"):
            if layer.fields.get(fname) is not None:
                got = layer.fields[fname]
                setattr(layer, fname, None)  # invalidates scapy's cache
                if bytes(fresh) != frame:
                    errs.append("%s %s=%#x is wrong" % (layer.name, fname,
                                                         got))
        depth += 1


def port_stats(sw):
    """{port number: {"rx_pkts": n, "tx_pkts": n, "rx_drop": n}} from
    `oxflow ctl dump-ports`."""
    out = sw.ctl("dump-ports", check=True).stdout
    stats = {}
    for m in re.finditer(
            r"port\s+(\w+): rx pkts=(\d+), bytes=(\d+), drop=(\d+)"
            r".*?\n\s+tx pkts=(\d+)", out):
        try:
            no = int(m.group(1))
        except ValueError:
            continue
        stats[no] = {"rx_pkts": int(m.group(2)), "rx_bytes": int(m.group(3)),
                     "rx_drop": int(m.group(4)), "tx_pkts": int(m.group(5))}
    return stats


def port_link_down(sw, port_no):
    """Whether dump-ports-desc shows LINK_DOWN for port_no (None if absent)."""
    out = sw.ctl("dump-ports-desc", check=True).stdout
    blocks = re.split(r"\n(?= \S)", out)
    for b in blocks:
        if re.match(r"\s*%d\(" % port_no, b):
            st = re.search(r"state:\s*(.*)", b)
            return st is not None and "LINK_DOWN" in st.group(1)
    return None


def wait_until(pred, timeout=10, interval=0.05, what="condition"):
    """Poll pred() until true (a timeout only to avoid hangs)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %ss waiting for %s" % (
                timeout, what))
        time.sleep(interval)
