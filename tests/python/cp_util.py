"""Helpers for the control-plane integration tests (test_switch_control.py).

- `RawController`: a listening socket that plays the controller side of
  OpenFlow 1.3 connections opened by the switch (`--controller
  tcp:127.0.0.1:PORT`, or `tls:` with an `ssl.SSLContext`). `accept()`
  returns an `OfConn`.
- `OfConn`: one OpenFlow connection, controller side. Messages are os-ken
  objects serialized with `oxflow.ofp13.serialize`, or raw bytes (for
  malformed input); everything received is parsed with `oxflow.ofp13.parse`
  (os-ken's parsers). ECHO_REQUESTs from the switch are answered
  automatically; every other message is returned in arrival order.
- `connect_passive(port)`: an `OfConn` to the switch's passive listener.
- `make_pki(dir)`: a CA, a controller and a switch certificate signed by it,
  and a "rogue" CA with a switch certificate of its own, made with the
  `openssl` command line tool.
- `NEEDS_SWITCH`: the `pytestmark` of a module whose tests run oxflow in
  network namespaces (skipped, with the reason, without root or without the
  oxflow binary).
"""

import os
import pathlib
import socket
import ssl
import struct
import subprocess
import time

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

import pytest

from oxflow import ofp13
from oxflow.switch import oxflow_bin

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DP = ofp13.DP


def _have_oxflow():
    try:
        oxflow_bin()
    except FileNotFoundError:
        return False
    return True


NEEDS_SWITCH = [
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="network namespaces need root"),
    pytest.mark.skipif(not _have_oxflow(),
                       reason="no oxflow binary: run `cargo build --release "
                       "-p oxflow` (or set OXFLOW_BIN)"),
]


def header(msg_type, length, xid):
    return struct.pack("!BBHI", ofp.OFP_VERSION, msg_type, length, xid)


def with_xid(raw, xid):
    """raw message bytes with the header's xid replaced."""
    return raw[:4] + struct.pack("!I", xid) + raw[8:]


class OfConn:
    """The controller side of one OpenFlow 1.3 connection (see module doc).

    `buf` holds bytes received but not yet framed; `xid` is the last
    transaction id handed out by `send`; `auto_echo` False hands the
    switch's ECHO_REQUESTs to the caller instead of answering them."""

    def __init__(self, sock, name="conn"):
        self.sock = sock
        self.name = name
        self.buf = b""
        self.xid = 0x1000
        self.auto_echo = True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def next_xid(self):
        self.xid += 1
        return self.xid

    def send(self, msg, xid=None):
        """Send an os-ken message object or raw bytes; returns the xid used
        (for raw bytes: the xid given, patched into the header, or the one
        already in the bytes)."""
        if isinstance(msg, (bytes, bytearray)):
            raw = bytes(msg)
            if xid is not None:
                raw = with_xid(raw, xid)
            self.sock.sendall(raw)
            return struct.unpack_from("!I", raw, 4)[0]
        if xid is None:
            xid = self.next_xid()
        self.sock.sendall(ofp13.serialize(msg, xid))
        return xid

    def raw_bytes(self, msg, xid):
        """Wire bytes of an os-ken message (for checking error data)."""
        return ofp13.serialize(msg, xid)

    def _frame(self):
        if len(self.buf) < 8:
            return None
        (length,) = struct.unpack_from("!H", self.buf, 2)
        if length < 8:
            raise AssertionError("%s: bad length %d in a message from the "
                                 "switch: %s" % (self.name, length,
                                                 self.buf[:16].hex()))
        if len(self.buf) < length:
            return None
        raw, self.buf = self.buf[:length], self.buf[length:]
        return raw

    def recv(self, timeout=5):
        """The next message (os-ken object, with `.raw` set to its bytes);
        raises TimeoutError, or ConnectionError when the switch closed."""
        deadline = time.monotonic() + timeout
        while True:
            raw = self._frame()
            if raw is not None:
                msg = ofp13.parse(raw)
                msg.raw = raw
                if self.auto_echo and isinstance(msg, p.OFPEchoRequest):
                    self.send(p.OFPEchoReply(DP, data=msg.data), msg.xid)
                    continue
                return msg
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: no message from the switch within "
                                   "%ss" % (self.name, timeout))
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise ConnectionError("%s: the switch closed the "
                                      "connection" % self.name)
            self.buf += data

    def expect(self, cls, timeout=5, skip=()):
        """The next message, which must be a `cls` (messages of the types
        in `skip`, e.g. PORT_STATUS, are ignored)."""
        while True:
            msg = self.recv(timeout)
            if isinstance(msg, tuple(skip)):
                continue
            assert isinstance(msg, cls), "%s: expected %s, got %s" % (
                self.name, cls.__name__, msg)
            return msg

    def until(self, pred, timeout=5):
        """Messages received up to and including the first one for which
        `pred(msg)` holds."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("%s: condition not met; got %s" % (
                    self.name, got))
            msg = self.recv(left)
            got.append(msg)
            if pred(msg):
                return got

    def request(self, msg, reply_cls, timeout=5):
        """Send msg, return the reply of class reply_cls with its xid
        (asynchronous messages in between are dropped; an error for this
        xid fails the test)."""
        xid = self.send(msg)
        for m in self.until(lambda m: m.xid == xid and isinstance(
                m, (reply_cls, p.OFPErrorMsg)), timeout):
            if m.xid == xid:
                assert isinstance(m, reply_cls), "%s: %s answered with %s" % (
                    self.name, type(msg).__name__, m)
                return m
        raise AssertionError("unreachable")

    def barrier(self, timeout=5):
        """Send a barrier; return the messages received before its reply
        (the reply excluded)."""
        xid = self.send(p.OFPBarrierRequest(DP))
        got = self.until(lambda m: isinstance(m, p.OFPBarrierReply)
                         and m.xid == xid, timeout)
        return got[:-1]

    def echo_ok(self, timeout=5):
        """The connection is alive: an ECHO_REQUEST gets its reply (with
        the same data). Returns the messages received before the reply."""
        data = b"oxflow-alive-%d" % self.next_xid()
        xid = self.send(p.OFPEchoRequest(DP, data=data))
        got = self.until(lambda m: isinstance(m, p.OFPEchoReply)
                         and m.xid == xid, timeout)
        assert bytes(got[-1].data) == data, got[-1]
        return got[:-1]

    def hello(self, timeout=5):
        """Exchange HELLOs (we send ours first; the switch's must be 1.3)."""
        self.send(p.OFPHello(DP))
        msg = self.expect(p.OFPHello, timeout)
        assert msg.version == ofp.OFP_VERSION, msg
        return msg

    def handshake(self, timeout=5):
        """HELLO + FEATURES_REQUEST; returns the FEATURES_REPLY."""
        self.hello(timeout)
        return self.request(p.OFPFeaturesRequest(DP), p.OFPSwitchFeatures,
                            timeout)

    def flow_mod(self, check=True, **kw):
        """Send an ADD flow-mod built from kwargs (os-ken OFPFlowMod);
        with check, a barrier follows and no error may come back."""
        kw.setdefault("match", p.OFPMatch())
        fm = p.OFPFlowMod(DP, **kw)
        xid = self.send(fm)
        if check:
            errs = [m for m in self.barrier() if isinstance(m, p.OFPErrorMsg)]
            assert not errs, "%s: flow-mod %s refused: %s" % (
                self.name, fm, errs)
        return xid

    def flows(self, table_id=ofp.OFPTT_ALL):
        """Flow stats of every flow (all reply parts)."""
        xid = self.send(p.OFPFlowStatsRequest(
            DP, 0, table_id, ofp.OFPP_ANY, ofp.OFPG_ANY, 0, 0, p.OFPMatch()))
        out = []
        while True:
            m = self.until(lambda m: m.xid == xid and isinstance(
                m, (p.OFPFlowStatsReply, p.OFPErrorMsg)))[-1]
            assert isinstance(m, p.OFPFlowStatsReply), m
            out += m.body
            if not m.flags & ofp.OFPMPF_REPLY_MORE:
                return out


def apply_actions(*actions):
    return [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, list(actions))]


def output(port, max_len=ofp.OFPCML_NO_BUFFER):
    return p.OFPActionOutput(port, max_len)


class RawController:
    """A listening socket for switch-initiated connections; `ssl_context`
    (server side) makes it a TLS controller."""

    def __init__(self, ssl_context=None, name="ctl"):
        self.ssl_context = ssl_context
        self.name = name
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        self.conns = []

    @property
    def endpoint(self):
        return "%s:127.0.0.1:%d" % ("tls" if self.ssl_context else "tcp",
                                    self.port)

    def accept_raw(self, timeout=10):
        self.lsock.settimeout(timeout)
        try:
            sock, _ = self.lsock.accept()
        except socket.timeout:
            raise TimeoutError("%s: the switch did not connect to port %d "
                               "within %ss" % (self.name, self.port, timeout))
        return sock

    def accept(self, timeout=10):
        """The next connection (TLS handshake done when TLS), as an
        OfConn."""
        sock = self.accept_raw(timeout)
        if self.ssl_context is not None:
            sock.settimeout(timeout)
            sock = self.ssl_context.wrap_socket(sock, server_side=True)
        conn = OfConn(sock, "%s#%d" % (self.name, len(self.conns) + 1))
        self.conns.append(conn)
        return conn

    def close(self):
        for c in self.conns:
            c.close()
        self.lsock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def connect_passive(port, timeout=10, name="passive"):
    """Connect to the switch's passive listener (retrying until it is up)
    and return an OfConn (no handshake yet)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2)
            return OfConn(sock, name)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# ---------------------------------------------------------------------------
# Certificates
# ---------------------------------------------------------------------------


def _openssl(*args, cwd):
    proc = subprocess.run(["openssl"] + list(args), cwd=cwd,
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise RuntimeError("openssl %s failed: %s" % (" ".join(args),
                                                      proc.stderr))


_LEAF_EXT = ("basicConstraints=critical,CA:FALSE\n"
             "keyUsage=critical,digitalSignature,keyEncipherment\n"
             "extendedKeyUsage=serverAuth,clientAuth\n"
             "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
             "subjectKeyIdentifier=hash\n"
             "authorityKeyIdentifier=keyid\n")


def _ca(d, name):
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out",
             "%s-key.pem" % name, cwd=d)
    _openssl("req", "-new", "-x509", "-key", "%s-key.pem" % name,
             "-out", "%s-cert.pem" % name, "-days", "30",
             "-subj", "/CN=oxflow test %s" % name,
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)


def _leaf(d, name, ca):
    (d / "leaf.ext").write_text(_LEAF_EXT)
    # PKCS#8 key: rustls reads "PRIVATE KEY" PEM (and SEC1 too).
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-out", "%s-key.pem" % name,
             cwd=d)
    _openssl("req", "-new", "-key", "%s-key.pem" % name, "-out",
             "%s.csr" % name, "-subj", "/CN=oxflow test %s" % name, cwd=d)
    _openssl("x509", "-req", "-in", "%s.csr" % name, "-CA",
             "%s-cert.pem" % ca, "-CAkey", "%s-key.pem" % ca,
             "-CAcreateserial", "-out", "%s-cert.pem" % name, "-days", "30",
             "-extfile", "leaf.ext", cwd=d)


def make_pki(d):
    """Create in directory d: ca-*.pem, controller-*.pem, switch-*.pem
    (signed by ca) and rogueca-*.pem, rogue-*.pem (a switch certificate
    signed by another CA). Returns d as a pathlib.Path."""
    d = pathlib.Path(d)
    d.mkdir(parents=True, exist_ok=True)
    _ca(d, "ca")
    _leaf(d, "controller", "ca")
    _leaf(d, "switch", "ca")
    _ca(d, "rogueca")
    _leaf(d, "rogue", "rogueca")
    return d


def controller_ssl_context(pki):
    """Server-side context of a controller that requires a client
    certificate chaining to pki/ca-cert.pem."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(pki / "controller-cert.pem"),
                        str(pki / "controller-key.pem"))
    ctx.load_verify_locations(str(pki / "ca-cert.pem"))
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx
