"""Control-plane integration tests of the oxflow switch (issue 3, items 6
and 7): the real `oxflow run` binary on veth ports of namespace hosts,
driven by os-ken apps (oxflow.controller) and by a raw OpenFlow 1.3
controller endpoint (cp_util.RawController / OfConn, built on os-ken's
message classes) where a test needs exact control of the bytes.

Every OFPT_ERROR is checked as (type, code) against os-ken's
ofproto_v1_3 constants, with the request's xid and its first bytes in the
error data (spec 7.4.4: at least 64 bytes of the failed request, or all of
it when shorter), and the connection must stay usable (an ECHO after each).

Needs root (namespaces) and the oxflow binary (oxflow.switch.oxflow_bin:
$OXFLOW_BIN or target/{release,debug}/oxflow); skipped only when those are
missing. Tests marked xfail(strict) document switch behaviour verified to
be missing; their reasons say what is sent and what comes back.
"""

import json
import os
import signal
import ssl
import struct
import subprocess
import sys
import time

import pytest

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
from scapy.layers.l2 import Ether
from scapy.packet import Raw

import cp_util
from cp_util import (DP, RawController, apply_actions,
                     connect_passive, output)
from oxflow.netns import Process, Topology, free_tcp_port, sh
from oxflow.switch import Switch, run_oxflow
from oxflow.traffic import Sniffer, send_frames


pytestmark = cp_util.NEEDS_SWITCH

PYTHON_DIR = str(cp_util.REPO_ROOT / "python")
MAC = {1: "02:00:00:00:77:01", 2: "02:00:00:00:77:02",
       3: "02:00:00:00:77:03"}
IP = {1: "10.77.0.1", 2: "10.77.0.2", 3: "10.77.0.3"}
ETH_TEST = 0x88B5  # IEEE local experimental ethertype: no host reacts


def frame(src, dst, size, tag=b"", eth_type=ETH_TEST):
    """An Ethernet frame of exactly `size` bytes with a recognisable
    payload."""
    body = (b"oxflow-cp-" + tag).ljust(size - 14, b".")
    return bytes(Ether(src=MAC[src], dst=MAC[dst], type=eth_type)
                 / Raw(body))


def topology(n=2):
    """A Topology with hosts h1..hn on switch ports 1..n (caller closes)."""
    topo = Topology()
    try:
        for i in range(1, n + 1):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, IP[i] + "/24", MAC[i])
    except BaseException:
        topo.close()
        raise
    return topo


def capture(host, action, settle=0.5):
    """Run action() while capturing on host's eth0; return the frames seen
    up to `settle` seconds after it (a timeout, not a timing check)."""
    sn = Sniffer(host)
    try:
        action()
        time.sleep(settle)
        return sn.stop()
    finally:
        sn.kill()


def packet_ins(conn, data_prefix, timeout=5):
    """Wait for the first PACKET_IN whose data starts with data_prefix."""
    got = conn.until(lambda m: isinstance(m, p.OFPPacketIn)
                     and bytes(m.data).startswith(data_prefix), timeout)
    return got[-1]


def check_error(conn, raw, xid, etype, code, timeout=5):
    """The next error for xid is (etype, code) with raw's first bytes as
    data; then the connection still answers an ECHO."""
    got = conn.until(lambda m: getattr(m, "xid", None) == xid, timeout)
    err = got[-1]
    assert isinstance(err, p.OFPErrorMsg), (
        "request %s answered with %s, expected OFPT_ERROR (%d, %d)" % (
            raw[:16].hex(), err, etype, code))
    assert (err.type, err.code) == (etype, code), (
        "request %s: error (type, code) = (%d, %d), expected (%d, %d)" % (
            raw[:16].hex(), err.type, err.code, etype, code))
    data = bytes(err.data)
    assert len(data) >= min(64, len(raw)), (len(data), data.hex())
    assert data == raw[:len(data)], (data.hex(), raw.hex())
    conn.echo_ok()
    return err


@pytest.fixture
def topo2():
    topo = topology(2)
    try:
        yield topo
    finally:
        topo.close()


@pytest.fixture
def topo3():
    topo = topology(3)
    try:
        yield topo
    finally:
        topo.close()


def start_switch(tmp_path, ports, name="oxflow", **kw):
    return Switch(ports, log_path=tmp_path / ("%s.log" % name), **kw)


# ---------------------------------------------------------------------------
# 1. packet-in / packet-out
# ---------------------------------------------------------------------------


def test_packet_in_out_buffered_and_unbuffered(topo2, tmp_path):
    h1, h2 = topo2.hosts["h1"], topo2.hosts["h2"]
    with RawController() as ctl, \
            start_switch(tmp_path, topo2, dpid=0x77,
                         controllers=[ctl.endpoint]):
        conn = ctl.accept()
        feat = conn.handshake()
        assert feat.datapath_id == 0x77 and feat.auxiliary_id == 0
        # Table-miss to CONTROLLER, max_len 128: buffered and truncated.
        conn.flow_mod(priority=0, instructions=apply_actions(
            output(ofp.OFPP_CONTROLLER, 128)))
        f1 = frame(1, 2, 300, b"buffered")
        send_frames(h1, [f1])
        pi = packet_ins(conn, f1[:40])
        assert pi.buffer_id != ofp.OFP_NO_BUFFER, pi
        assert pi.reason == ofp.OFPR_NO_MATCH and pi.table_id == 0, pi
        assert pi.total_len == len(f1), pi
        assert bytes(pi.data) == f1[:128], pi
        assert pi.match["in_port"] == 1, pi

        # PACKET_OUT by buffer id: the whole frame leaves on port 2.
        def out_buffered():
            conn.send(p.OFPPacketOut(DP, buffer_id=pi.buffer_id, in_port=1,
                                     actions=[output(2)], data=None))
            assert not [m for m in conn.barrier()
                        if isinstance(m, p.OFPErrorMsg)]
        assert f1 in capture(h2, out_buffered)

        # The buffer is used up: a second packet-out on it is refused.
        po = p.OFPPacketOut(DP, buffer_id=pi.buffer_id, in_port=1,
                            actions=[output(2)], data=None)
        xid = conn.next_xid()
        raw = conn.raw_bytes(po, xid)
        conn.send(raw)
        check_error(conn, raw, xid, ofp.OFPET_BAD_REQUEST,
                    ofp.OFPBRC_BUFFER_EMPTY)

        # A flow-mod naming a buffer applies the new flow to that packet.
        f4 = frame(1, 2, 300, b"flowmod-buffer")
        send_frames(h1, [f4])
        pi4 = packet_ins(conn, f4[:40])
        assert pi4.buffer_id != ofp.OFP_NO_BUFFER, pi4

        def flow_mod_buffered():
            conn.flow_mod(priority=5, buffer_id=pi4.buffer_id,
                          match=p.OFPMatch(in_port=1, eth_dst=MAC[2]),
                          instructions=apply_actions(output(2)))
        assert f4 in capture(h2, flow_mod_buffered)

        # Unknown buffer id -> BAD_REQUEST/BUFFER_UNKNOWN.
        po = p.OFPPacketOut(DP, buffer_id=0x0ABCDEF0, in_port=1,
                            actions=[output(2)], data=None)
        xid = conn.next_xid()
        raw = conn.raw_bytes(po, xid)
        conn.send(raw)
        check_error(conn, raw, xid, ofp.OFPET_BAD_REQUEST,
                    ofp.OFPBRC_BUFFER_UNKNOWN)

        # OFPCML_NO_BUFFER: no buffer, the whole frame in the packet-in.
        conn.flow_mod(priority=0, command=ofp.OFPFC_MODIFY_STRICT,
                      instructions=apply_actions(
                          output(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)))
        f2 = frame(1, 3, 300, b"nobuffer")  # (1 -> 2 has a flow now)
        send_frames(h1, [f2])
        pi = packet_ins(conn, f2[:40])
        assert pi.buffer_id == ofp.OFP_NO_BUFFER, pi
        assert bytes(pi.data) == f2 and pi.total_len == len(f2), pi

        # PACKET_OUT carrying the data.
        f3 = frame(1, 2, 200, b"data-out")

        def out_data():
            conn.send(p.OFPPacketOut(DP, buffer_id=ofp.OFP_NO_BUFFER,
                                     in_port=ofp.OFPP_CONTROLLER,
                                     actions=[output(2)], data=f3))
            assert not [m for m in conn.barrier()
                        if isinstance(m, p.OFPErrorMsg)]
        assert f3 in capture(h2, out_data)


# ---------------------------------------------------------------------------
# 2. flow-removed
# ---------------------------------------------------------------------------


@pytest.fixture
def osken(tmp_path):
    """os-ken with the given apps: factory(apps) -> (port, recorder file,
    Process); stopped (SIGTERM) at teardown unless already killed."""
    procs = []

    def start(*apps):
        port = free_tcp_port()
        rec = tmp_path / ("recorder-%d.jsonl" % port)
        env = {"PYTHONPATH": PYTHON_DIR, "OXFLOW_RECORDER_FILE": str(rec)}
        argv = [sys.executable, "-m", "oxflow.controller",
                "--ofp-tcp-listen-port", str(port)]
        for a in apps:
            argv += ["--app", a]
        proc = Process(argv, tmp_path / ("os-ken-%d.log" % port), env=env,
                       name="os-ken").start()
        procs.append(proc)
        proc.wait_for_port(port, timeout=20)
        return port, rec, proc

    yield start
    for proc in procs:
        proc.stop()


def recorded(path, done, timeout=10):
    """Recorder events once done(events) holds."""
    deadline = time.monotonic() + timeout
    while True:
        evs = []
        if path.exists():
            with open(path) as f:
                evs = [json.loads(line) for line in f if line.strip()]
        if done(evs):
            return evs
        if time.monotonic() > deadline:
            raise TimeoutError("recorder events so far: %s" % evs)
        time.sleep(0.05)


def test_flow_removed_idle_and_hard_timeout(topo2, tmp_path, osken):
    cport, rec, _ = osken("oxflow.apps.recorder")
    with start_switch(tmp_path, topo2,
                      controllers=["tcp:127.0.0.1:%d" % cport]) as sw:
        recorded(rec, lambda evs: any(e["event"] == "connect" for e in evs))
        conn = connect_passive(sw.port)
        conn.handshake()
        flags = ofp.OFPFF_SEND_FLOW_REM
        conn.flow_mod(cookie=0xA1, priority=7, idle_timeout=1, flags=flags,
                      match=p.OFPMatch(in_port=1, eth_type=0x88B5),
                      instructions=apply_actions(output(2)))
        conn.flow_mod(cookie=0xB2, priority=8, hard_timeout=2, flags=flags,
                      match=p.OFPMatch(in_port=1, eth_type=0x88B6),
                      instructions=apply_actions(output(2)))
        # Expires silently: no SEND_FLOW_REM.
        conn.flow_mod(cookie=0xC3, priority=9, idle_timeout=1,
                      match=p.OFPMatch(in_port=1, eth_type=0x88B7),
                      instructions=apply_actions(output(2)))
        # Traffic through the pipeline: packet-out to TABLE from port 1.
        for eth_type, n in ((0x88B5, 3), (0x88B6, 2)):
            for _ in range(n):
                conn.send(p.OFPPacketOut(
                    DP, buffer_id=ofp.OFP_NO_BUFFER, in_port=1,
                    actions=[output(ofp.OFPP_TABLE)],
                    data=frame(1, 2, 100, eth_type=eth_type)))
        assert not [m for m in conn.barrier()
                    if isinstance(m, p.OFPErrorMsg)]

        removed = {}
        deadline = time.monotonic() + 10
        while len(removed) < 2:
            m = conn.recv(max(0.1, deadline - time.monotonic()))
            if isinstance(m, p.OFPFlowRemoved):
                assert m.cookie not in removed, m
                removed[m.cookie] = m
        assert set(removed) == {0xA1, 0xB2}, removed
        a, b = removed[0xA1], removed[0xB2]
        assert a.reason == ofp.OFPRR_IDLE_TIMEOUT, a
        assert (a.priority, a.table_id, a.idle_timeout) == (7, 0, 1), a
        assert (a.packet_count, a.byte_count) == (3, 300), a
        assert a.duration_sec >= 1, a
        assert dict(a.match.items()) == {"in_port": 1, "eth_type": 0x88B5}
        assert b.reason == ofp.OFPRR_HARD_TIMEOUT, b
        assert (b.priority, b.hard_timeout) == (8, 2), b
        assert (b.packet_count, b.byte_count) == (2, 200), b
        assert b.duration_sec >= 2, b
        # The flow without SEND_FLOW_REM is gone too, silently; after a
        # barrier nothing about it is pending.
        assert not [f for f in conn.flows()
                    if f.cookie in (0xA1, 0xB2, 0xC3)]
        late = [m for m in conn.barrier() if isinstance(m, p.OFPFlowRemoved)]
        assert not late, late

        # os-ken (role equal, default async config) got both as well.
        evs = recorded(rec, lambda evs: sum(
            e["event"] == "flow_removed" for e in evs) >= 2)
        fr = {e["msg"]["OFPFlowRemoved"]["cookie"]:
              e["msg"]["OFPFlowRemoved"] for e in evs
              if e["event"] == "flow_removed"}
        assert fr[0xA1]["reason"] == ofp.OFPRR_IDLE_TIMEOUT
        assert fr[0xB2]["reason"] == ofp.OFPRR_HARD_TIMEOUT
        assert fr[0xB2]["packet_count"] == 2
        assert not [e for e in evs if e["event"] == "error"], evs


# ---------------------------------------------------------------------------
# 3. roles and asynchronous-message filtering
# ---------------------------------------------------------------------------


def role_request(conn, role, gen):
    xid = conn.send(p.OFPRoleRequest(DP, role, gen))
    return conn.until(lambda m: m.xid == xid and isinstance(
        m, (p.OFPRoleReply, p.OFPErrorMsg)))[-1]


def test_roles_master_slave_and_async_filter(topo2, tmp_path):
    h1 = topo2.hosts["h1"]
    with RawController(name="A") as ca, RawController(name="B") as cb, \
            start_switch(tmp_path, topo2,
                         controllers=[ca.endpoint, cb.endpoint]):
        a, b = ca.accept(), cb.accept()
        a.handshake()
        b.handshake()
        r = role_request(a, ofp.OFPCR_ROLE_MASTER, 5)
        assert isinstance(r, p.OFPRoleReply), r
        assert (r.role, r.generation_id) == (ofp.OFPCR_ROLE_MASTER, 5), r
        r = role_request(b, ofp.OFPCR_ROLE_SLAVE, 5)
        assert isinstance(r, p.OFPRoleReply), r
        assert r.role == ofp.OFPCR_ROLE_SLAVE, r

        # A slave may not modify state.
        fm = p.OFPFlowMod(DP, priority=3, match=p.OFPMatch(in_port=2),
                          instructions=apply_actions(output(1)))
        xid = b.next_xid()
        raw = b.raw_bytes(fm, xid)
        b.send(raw)
        check_error(b, raw, xid, ofp.OFPET_BAD_REQUEST,
                    ofp.OFPBRC_IS_SLAVE)
        assert not [f for f in a.flows() if f.priority == 3]

        # A stale generation id (4 < 5) is refused.
        rq = p.OFPRoleRequest(DP, ofp.OFPCR_ROLE_MASTER, 4)
        xid = b.next_xid()
        raw = b.raw_bytes(rq, xid)
        b.send(raw)
        check_error(b, raw, xid, ofp.OFPET_ROLE_REQUEST_FAILED,
                    ofp.OFPRRFC_STALE)
        # ... and A is still master: its writes work.
        a.flow_mod(priority=0, instructions=apply_actions(
            output(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)))

        # Packet-in goes to the master only (default slave mask: none).
        f1 = frame(1, 2, 80, b"to-master")
        send_frames(h1, [f1])
        packet_ins(a, f1[:40])
        before = b.echo_ok()
        assert not [m for m in before if isinstance(m, p.OFPPacketIn)], before
        with pytest.raises(TimeoutError):
            packet_ins(b, f1[:40], timeout=0.5)

        # SET_ASYNC on B: slaves get table-miss packet-ins too.
        mask = 1 << ofp.OFPR_NO_MATCH | 1 << ofp.OFPR_ACTION
        b.send(p.OFPSetAsync(DP, [mask, mask], [0, 0], [0, 0]))
        got = b.request(p.OFPGetAsyncRequest(DP), p.OFPGetAsyncReply)
        assert got.packet_in_mask == [mask, mask], got
        f2 = frame(1, 2, 80, b"to-slave")
        send_frames(h1, [f2])
        pb = packet_ins(b, f2[:40])
        assert bytes(pb.data) == f2 and pb.match["in_port"] == 1, pb
        packet_ins(a, f2[:40])

        # B takes over with a newer generation: A becomes a slave.
        r = role_request(b, ofp.OFPCR_ROLE_MASTER, 6)
        assert isinstance(r, p.OFPRoleReply), r
        assert (r.role, r.generation_id) == (ofp.OFPCR_ROLE_MASTER, 6), r
        fm = p.OFPFlowMod(DP, priority=4, match=p.OFPMatch(in_port=2),
                          instructions=apply_actions(output(1)))
        xid = a.next_xid()
        raw = a.raw_bytes(fm, xid)
        a.send(raw)
        check_error(a, raw, xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_IS_SLAVE)
        b.flow_mod(priority=4, match=p.OFPMatch(in_port=2),
                   instructions=apply_actions(output(1)))
        r = role_request(a, ofp.OFPCR_ROLE_NOCHANGE, 0)
        assert r.role == ofp.OFPCR_ROLE_SLAVE, r


# ---------------------------------------------------------------------------
# 4. auxiliary connection
# ---------------------------------------------------------------------------


def test_packet_in_on_auxiliary_connection(topo2, tmp_path):
    h1 = topo2.hosts["h1"]
    with RawController() as ctl:
        cfg = tmp_path / "aux.toml"
        cfg.write_text('controllers = ["%s"]\nauxiliary_connections = 1\n'
                       % ctl.endpoint)
        with start_switch(tmp_path, topo2, extra_args=["--config", cfg]):
            conns = {}
            for _ in range(2):
                c = ctl.accept()
                feat = c.handshake()
                assert feat.auxiliary_id not in conns, feat
                conns[feat.auxiliary_id] = c
            assert set(conns) == {0, 1}, conns
            main, aux = conns[0], conns[1]
            main.flow_mod(priority=0, instructions=apply_actions(
                output(ofp.OFPP_CONTROLLER, ofp.OFPCML_NO_BUFFER)))
            f1 = frame(1, 2, 90, b"aux")
            send_frames(h1, [f1])
            pi = packet_ins(aux, f1[:40])
            assert bytes(pi.data) == f1, pi
            assert aux.echo_ok() == []
            assert not [m for m in main.echo_ok()
                        if isinstance(m, p.OFPPacketIn)]


# ---------------------------------------------------------------------------
# echo keepalive and reconnect
# ---------------------------------------------------------------------------


def test_echo_keepalive_drops_silent_controller_and_reconnects(tmp_path):
    with RawController() as ctl:
        cfg = tmp_path / "echo.toml"
        cfg.write_text('controllers = ["%s"]\necho_interval = 1\n'
                       'echo_max_missed = 2\nreconnect_initial = 1\n'
                       % ctl.endpoint)
        with start_switch(tmp_path, [], extra_args=["--config", cfg]):
            conn = ctl.accept()
            conn.handshake()
            conn.auto_echo = False
            # Silence: the switch probes with ECHO_REQUEST ...
            echo = conn.expect(p.OFPEchoRequest, timeout=5)
            # ... and, unanswered, gives up on the connection.
            with pytest.raises(ConnectionError):
                while True:
                    m = conn.recv(timeout=10)
                    assert isinstance(m, p.OFPEchoRequest), m
                    assert m.xid != echo.xid
            # Then it reconnects, and a fresh connection works.
            again = ctl.accept(timeout=10)
            again.handshake()
            again.echo_ok()


# ---------------------------------------------------------------------------
# 5. TLS with mutual authentication
# ---------------------------------------------------------------------------


def tls_config(path, pki, cert, key):
    path.write_text('[tls]\nprivate_key = "%s"\ncertificate = "%s"\n'
                    'ca_cert = "%s"\n' % (pki / key, pki / cert,
                                          pki / "ca-cert.pem"))
    return path


def test_tls_mutual_auth(tmp_path):
    pki = cp_util.make_pki(tmp_path / "pki")
    ctx = cp_util.controller_ssl_context(pki)
    with RawController(ssl_context=ctx, name="tls") as ctl:
        good = tls_config(tmp_path / "good.toml", pki, "switch-cert.pem",
                          "switch-key.pem")
        with start_switch(tmp_path, [], name="good", dpid=0x75,
                          controllers=[ctl.endpoint],
                          extra_args=["--config", good]):
            conn = ctl.accept()
            subject = dict(x[0] for x in conn.sock.getpeercert()["subject"])
            assert subject["commonName"] == "oxflow test switch"
            feat = conn.handshake()
            assert feat.datapath_id == 0x75
            conn.echo_ok()

        # A switch certificate from another CA: the handshake fails and
        # no OpenFlow message is ever exchanged.
        rogue = tls_config(tmp_path / "rogue.toml", pki, "rogue-cert.pem",
                           "rogue-key.pem")
        with start_switch(tmp_path, [], name="rogue",
                          controllers=[ctl.endpoint],
                          extra_args=["--config", rogue]):
            sock = ctl.accept_raw()
            sock.settimeout(10)
            with pytest.raises((ssl.SSLError, ConnectionError)):
                ctx.wrap_socket(sock, server_side=True)
            sock.close()

    # A controller whose certificate comes from another CA: the switch
    # refuses it.
    rogue_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    rogue_ctx.load_cert_chain(str(pki / "rogue-cert.pem"),
                              str(pki / "rogue-key.pem"))
    rogue_ctx.load_verify_locations(str(pki / "ca-cert.pem"))
    rogue_ctx.verify_mode = ssl.CERT_REQUIRED
    with RawController(ssl_context=rogue_ctx, name="rogue-ctl") as ctl:
        with start_switch(tmp_path, [], name="good2",
                          controllers=[ctl.endpoint],
                          extra_args=["--config", good]):
            sock = ctl.accept_raw()
            sock.settimeout(10)
            with pytest.raises((ssl.SSLError, ConnectionError)):
                tls = rogue_ctx.wrap_socket(sock, server_side=True)
                # TLS 1.3: the client's verdict may only show on read.
                tls.recv(1)
            sock.close()


@pytest.mark.parametrize("side", ["active_tcp", "passive_ptcp"])
def test_tls_config_leaves_plain_endpoints_plain(side, tmp_path):
    pki = cp_util.make_pki(tmp_path / "pki")
    cfg = tls_config(tmp_path / "tls.toml", pki, "switch-cert.pem",
                     "switch-key.pem")
    with RawController(name="plain") as ctl, \
            start_switch(tmp_path, [], controllers=[ctl.endpoint],
                         extra_args=["--config", cfg]) as sw:
        if side == "active_tcp":
            conn = ctl.accept()
        else:
            conn = connect_passive(sw.port)
        try:
            conn.sock.settimeout(5)
            conn.handshake(timeout=3)
        finally:
            conn.close()


# ---------------------------------------------------------------------------
# 6. barrier
# ---------------------------------------------------------------------------


def test_barrier_reply_after_errors_and_rule_live(topo2, tmp_path):
    h1, h2 = topo2.hosts["h1"], topo2.hosts["h2"]
    with RawController() as ctl, \
            start_switch(tmp_path, topo2, controllers=[ctl.endpoint]):
        conn = ctl.accept()
        conn.handshake()
        bad1 = conn.send(p.OFPFlowMod(
            DP, table_id=0xFF, priority=10, match=p.OFPMatch(in_port=1),
            instructions=apply_actions(output(2))))
        good = conn.send(p.OFPFlowMod(
            DP, priority=10, match=p.OFPMatch(in_port=1, eth_type=ETH_TEST),
            instructions=apply_actions(output(2))))
        bad2 = conn.send(p.OFPFlowMod(
            DP, priority=11, match=p.OFPMatch(in_port=1),
            instructions=apply_actions(output(0))))
        before = conn.barrier()
        errs = {m.xid: (m.type, m.code) for m in before
                if isinstance(m, p.OFPErrorMsg)}
        assert errs == {
            bad1: (ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_BAD_TABLE_ID),
            bad2: (ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT)}, before
        assert good not in errs
        # After the reply the new rule forwards.
        f1 = frame(1, 2, 120, b"barrier")
        assert f1 in capture(h2, lambda: send_frames(h1, [f1]))
        assert conn.barrier() == []


# ---------------------------------------------------------------------------
# 7. controller loss: fail-secure and fail-standalone
# ---------------------------------------------------------------------------


def flow_keys(conn):
    return sorted((f.table_id, f.priority, str(f.match), str(f.instructions))
                  for f in conn.flows())


@pytest.mark.parametrize("mode", ["secure", "standalone"])
def test_controller_loss(mode, topo3, tmp_path, osken):
    h1 = topo3.hosts["h1"]
    cport, rec, cproc = osken("oxflow.apps.learning_switch",
                              "oxflow.apps.recorder")
    with start_switch(tmp_path, topo3, fail_mode=mode,
                      controllers=["tcp:127.0.0.1:%d" % cport]) as sw:
        recorded(rec, lambda evs: any(e["event"] == "connect" for e in evs))
        r = h1.ping(IP[2], count=3, interval=0.2)
        assert r.received >= 2, r.output
        conn = connect_passive(sw.port)
        conn.handshake()
        before = flow_keys(conn)
        # table-miss + both learned directions h1 <-> h2
        assert len(before) >= 3, before

        # Crash the controller (SIGKILL: no goodbye).
        offset = len(sw.log())
        os.killpg(cproc.pid, signal.SIGKILL)
        cproc.proc.wait(10)
        # The switch notices (its connection log line).
        sw.wait_for_log(r"connection closed", timeout=10, start=offset)

        # No flow lost.
        assert flow_keys(conn) == before
        if mode == "standalone":
            # Learning L2 switch: h1 reaches h3, never seen before.
            deadline = time.monotonic() + 10
            while True:
                r = h1.ping(IP[3], count=1, timeout=1)
                if r.received:
                    break
                assert time.monotonic() < deadline, (r.output, sw.log())
        else:
            # Misses are dropped; the installed flows still forward.
            r = h1.ping(IP[3], count=2, interval=0.2, timeout=1)
            assert r.received == 0, r.output
        r = h1.ping(IP[2], count=2, interval=0.2)
        assert r.received >= 1, r.output
        assert flow_keys(conn) == before


# ---------------------------------------------------------------------------
# 8. bad input
# ---------------------------------------------------------------------------


def oxm(field, value, length=None, oxm_class=0x8000):
    length = len(value) if length is None else length
    return struct.pack("!HBB", oxm_class, field << 1, length) + value


def match_bytes(oxms):
    length = 4 + len(oxms)
    body = struct.pack("!HH", ofp.OFPMT_OXM, length) + oxms
    return body + bytes(-len(body) % 8)


def flow_mod_bytes(xid, oxms=b"", insts=None, table_id=0,
                   command=ofp.OFPFC_ADD, priority=20):
    """A flow-mod assembled by hand, for matches os-ken cannot express."""
    if insts is None:
        insts = apply_actions(output(2))
    ib = bytearray()
    for i in insts:
        i.serialize(ib, len(ib))
    body = struct.pack(ofp.OFP_FLOW_MOD_PACK_STR0, 0, 0, table_id, command,
                       0, 0, priority, ofp.OFP_NO_BUFFER, ofp.OFPP_ANY,
                       ofp.OFPG_ANY, 0) + match_bytes(oxms) + bytes(ib)
    return cp_util.header(ofp.OFPT_FLOW_MOD, 8 + len(body), xid) + body


def fm(xid, **kw):
    """An os-ken flow-mod (ADD, priority 20) as bytes."""
    kw.setdefault("priority", 20)
    kw.setdefault("match", p.OFPMatch(in_port=1))
    kw.setdefault("instructions", apply_actions(output(2)))
    return cp_util.ofp13.serialize(p.OFPFlowMod(DP, **kw), xid)


IN_PORT_1 = oxm(ofp.OFPXMT_OFB_IN_PORT, struct.pack("!I", 1))


def flow_mod_insts(xid, inst_bytes):
    """A flow-mod (empty match) with hand-made instruction bytes."""
    body = struct.pack(ofp.OFP_FLOW_MOD_PACK_STR0, 0, 0, 0, ofp.OFPFC_ADD,
                       0, 0, 20, ofp.OFP_NO_BUFFER, ofp.OFPP_ANY,
                       ofp.OFPG_ANY, 0) + match_bytes(b"") + inst_bytes
    return cp_util.header(ofp.OFPT_FLOW_MOD, 8 + len(body), xid) + body


def apply_raw(action_bytes):
    """An APPLY_ACTIONS instruction around raw action bytes."""
    return struct.pack("!HH4x", ofp.OFPIT_APPLY_ACTIONS,
                       8 + len(action_bytes)) + action_bytes

# name -> (build(xid) -> bytes, expected error type, code)
BAD_INPUT = {
    "short_flow_mod": (
        lambda x: cp_util.header(ofp.OFPT_FLOW_MOD, 24, x) + bytes(16),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN),
    "short_role_request": (
        lambda x: cp_util.header(ofp.OFPT_ROLE_REQUEST, 16, x) + bytes(8),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_LEN),
    "unknown_type": (
        lambda x: cp_util.header(99, 16, x) + b"whatever",
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_TYPE),
    "oxm_unknown_field": (
        lambda x: flow_mod_bytes(x, IN_PORT_1 + oxm(0x7F, bytes(4))),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_FIELD),
    "oxm_bad_length": (
        lambda x: flow_mod_bytes(x, oxm(0, b"\0\x01", length=2)),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_LEN),
    "prereq_tcp_dst_without_ip_proto": (
        lambda x: fm(x, match=p.OFPMatch(eth_type=0x0800, tcp_dst=80)),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_PREREQ),
    "prereq_ip_proto_without_eth_type": (
        lambda x: fm(x, match=p.OFPMatch(ip_proto=6)),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_BAD_PREREQ),
    "output_port_0": (
        lambda x: fm(x, instructions=apply_actions(output(0))),
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT),
    "output_port_any": (
        lambda x: fm(x, instructions=apply_actions(output(ofp.OFPP_ANY))),
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT),
    "unknown_group": (
        lambda x: fm(x, instructions=apply_actions(p.OFPActionGroup(77))),
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_GROUP),
    "unknown_meter": (
        lambda x: fm(x, instructions=[p.OFPInstructionMeter(99)]
                     + apply_actions(output(2))),
        ofp.OFPET_METER_MOD_FAILED, ofp.OFPMMFC_UNKNOWN_METER),
    "goto_table_255": (
        lambda x: fm(x, instructions=[p.OFPInstructionGotoTable(255)]),
        ofp.OFPET_BAD_INSTRUCTION, ofp.OFPBIC_BAD_TABLE_ID),
    "flow_mod_table_ff_add": (
        lambda x: fm(x, table_id=0xFF),
        ofp.OFPET_FLOW_MOD_FAILED, ofp.OFPFMFC_BAD_TABLE_ID),
    "goto_table_backwards": (
        lambda x: fm(x, table_id=3, match=p.OFPMatch(),
                     instructions=[p.OFPInstructionGotoTable(2)]),
        ofp.OFPET_BAD_INSTRUCTION, ofp.OFPBIC_BAD_TABLE_ID),
    "oxm_duplicate_field": (
        lambda x: flow_mod_bytes(x, IN_PORT_1 + IN_PORT_1),
        ofp.OFPET_BAD_MATCH, ofp.OFPBMC_DUP_FIELD),
    "unknown_instruction": (
        lambda x: flow_mod_insts(x, struct.pack("!HH4x", 0x1234, 8)),
        ofp.OFPET_BAD_INSTRUCTION, ofp.OFPBIC_UNKNOWN_INST),
    "unknown_action": (
        lambda x: flow_mod_insts(x, apply_raw(struct.pack("!HH4x", 0x1234,
                                                          8))),
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_TYPE),
    "action_bad_length": (
        # an OUTPUT action claiming 12 bytes (not a multiple of 8, and
        # longer than what its instruction holds)
        lambda x: flow_mod_insts(x, apply_raw(struct.pack("!HHI", 0, 12,
                                                          2))),
        ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_LEN),
    "unknown_multipart_type": (
        lambda x: cp_util.header(ofp.OFPT_MULTIPART_REQUEST, 16, x)
        + struct.pack("!HH4x", 0x0FF0, 0),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_MULTIPART),
    # OFPMP_EXPERIMENTER of an experimenter the switch does not know, and
    # of oxflow's own id (0x006f7866) with an exp_type it does not define.
    "unknown_experimenter_multipart": (
        lambda x: cp_util.header(ofp.OFPT_MULTIPART_REQUEST, 24, x)
        + struct.pack("!HH4xII", ofp.OFPMP_EXPERIMENTER, 0, 0x2320, 1),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_EXPERIMENTER),
    "unknown_oxflow_exp_type": (
        lambda x: cp_util.header(ofp.OFPT_MULTIPART_REQUEST, 24, x)
        + struct.pack("!HH4xII", ofp.OFPMP_EXPERIMENTER, 0, 0x006f7866,
                      0x99),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_EXP_TYPE),
    # oxflow defines no OFPT_EXPERIMENTER message.
    "experimenter_message": (
        lambda x: cp_util.header(ofp.OFPT_EXPERIMENTER, 16, x)
        + struct.pack("!II", 0x006f7866, 1),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_EXPERIMENTER),
    "wrong_version_after_negotiation": (
        lambda x: struct.pack("!BBHI", 1, ofp.OFPT_ECHO_REQUEST, 8, x),
        ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_BAD_VERSION),
}


@pytest.fixture(scope="module")
def bad_input_switch(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad-input")
    with topology(2) as topo, Switch(topo, log_path=tmp / "oxflow.log") as sw:
        yield sw


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_gets_exact_error(case, bad_input_switch):
    build, etype, code = BAD_INPUT[case]
    conn = connect_passive(bad_input_switch.port, name=case)
    try:
        conn.handshake()
        xid = conn.next_xid()
        raw = build(xid)
        conn.send(raw)
        check_error(conn, raw, xid, etype, code)
        # Nothing was installed.
        assert not [f for f in conn.flows() if f.priority == 20]
    finally:
        conn.close()


def port_drops(conn, port_no):
    r = conn.request(p.OFPPortStatsRequest(DP, 0, port_no),
                     p.OFPPortStatsReply)
    (st,) = r.body
    return st.rx_dropped + st.rx_errors


def test_truncated_frames_are_dropped_and_counted(topo2, tmp_path):
    """A frame is parsed as deep as the installed rules look (lazy
    parsing): malformed in a layer no rule needs, it is forwarded as an L2
    switch would; malformed in a layer a rule needs, it is dropped and
    counted against the ingress port."""
    h1, h2 = topo2.hosts["h1"], topo2.hosts["h2"]
    with start_switch(tmp_path, topo2) as sw:
        conn = connect_passive(sw.port)
        conn.handshake()
        conn.flow_mod(priority=0, instructions=apply_actions(output(2)))
        good = frame(1, 2, 64, b"well-formed")
        assert good in capture(h2, lambda: send_frames(h1, [good]))
        eth = bytes(Ether(src=MAC[1], dst=MAC[2], type=0x0800))
        # IPv4 header cut after 6 bytes; a whole IPv4 header (total length
        # 40) announcing TCP followed by 4 bytes of TCP header.
        ip_cut = eth + bytes.fromhex("4500003c0000")
        tcp_cut = eth + bytes.fromhex(
            "450000280000400040060000" "0a4d0001" "0a4d0002") + bytes(4)
        # Only an L2 rule: nothing reads the IP headers, the frames pass.
        before = port_drops(conn, 1)
        got = capture(h2, lambda: send_frames(h1, [ip_cut, tcp_cut]))
        assert ip_cut in got and tcp_cut in got, got
        assert port_drops(conn, 1) == before
        # A rule on TCP ports: the switch now parses up to L4 and both
        # frames are malformed there.
        conn.flow_mod(priority=10,
                      match=p.OFPMatch(eth_type=0x0800, ip_proto=6,
                                       tcp_dst=80),
                      instructions=apply_actions(output(2)))
        before = port_drops(conn, 1)
        got = capture(h2, lambda: send_frames(h1, [ip_cut, tcp_cut, good]))
        assert good in got, got
        assert ip_cut not in got and tcp_cut not in got, got
        assert port_drops(conn, 1) == before + 2


# ---------------------------------------------------------------------------
# 9. bad configuration
# ---------------------------------------------------------------------------


def refused(*args):
    """Run `oxflow ARGS` expecting it to refuse at once (exit != 0)."""
    try:
        r = run_oxflow(*args, timeout=10)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("oxflow %s was accepted (still running after "
                             "10s): %s" % (" ".join(map(str, args)),
                                           e.stderr)) from None
    assert r.returncode != 0, r
    return r


def test_bad_config_file_names_the_line(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text('datapath_id = 7\n'
                   'workers = 1\n'
                   'fail_mode = "sometimes"\n')
    r = refused("run", "--config", cfg)
    assert "%s:3:" % cfg in r.stderr, r.stderr
    assert "sometimes" in r.stderr, r.stderr

    cfg.write_text('datapath_id = 7\n'
                   'controllers = ["tcp:127.0.0.1:6653",\n'
                   '               "tcp:999.1.1.1:6653"]\n')
    r = refused("run", "--config", cfg)
    assert "%s:3:" % cfg in r.stderr and "999.1.1.1" in r.stderr, r.stderr

    cfg.write_text('datapath_id = 7\n\nno_such_key = 1\n')
    r = refused("run", "--config", cfg)
    assert "%s:3:" % cfg in r.stderr and "no_such_key" in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["tcp:127.0.0.1:99999", "tcp:nowhere:6653",
                                   "udp:127.0.0.1:6653", "ptcp:6653"])
def test_bad_controller_flag_is_refused(value):
    r = refused("run", "--controller", value)
    assert value in r.stderr, r.stderr
    assert "controller" in r.stderr.lower(), r.stderr


# ---------------------------------------------------------------------------
# 10. ovs-ofctl through the passive listener
# ---------------------------------------------------------------------------


def ofctl(target, *args):
    return sh(["ovs-ofctl", "-O", "OpenFlow13"] + list(args[:1]) + [target]
              + list(args[1:]), timeout=20)


needs_ofctl = pytest.mark.skipif(not os.path.exists("/usr/bin/ovs-ofctl"),
                                 reason="ovs-ofctl not installed")


@needs_ofctl
def test_ovs_ofctl_reads_oxflow(topo2, tmp_path):
    with start_switch(tmp_path, topo2) as sw:
        conn = connect_passive(sw.port)
        conn.handshake()
        conn.flow_mod(priority=10, match=p.OFPMatch(in_port=1,
                                                    eth_dst=MAC[2]),
                      instructions=apply_actions(output(2)))
        conn.flow_mod(table_id=1, priority=5, match=p.OFPMatch(
            eth_type=0x0800, ipv4_dst=IP[3]), instructions=[])
        t = sw.target
        flows = ofctl(t, "dump-flows").stdout
        assert "priority=10,in_port=1,dl_dst=%s actions=output:2" % MAC[2] \
            in flows, flows
        assert "table=1" in flows and "nw_dst=%s" % IP[3] in flows, flows
        desc = ofctl(t, "dump-ports-desc").stdout
        for i, iface in enumerate(topo2.switch_ports, 1):
            assert " %d(%s): addr:" % (i, iface) in desc, desc
        tables = ofctl(t, "dump-tables").stdout
        assert "table 0:" in tables and "active=1," in tables, tables
        assert "...254: ditto" in tables, tables  # 255 tables


@needs_ofctl
def test_ovs_ofctl_modifies_oxflow(topo2, tmp_path):
    with start_switch(tmp_path, topo2) as sw:
        t = sw.target
        ofctl(t, "add-flow", "table=0,priority=10,in_port=1,"
              "dl_dst=%s,actions=output:2" % MAC[2])
        ofctl(t, "add-flow", "table=1,priority=5,ip,nw_dst=%s,"
              "actions=drop" % IP[3])
        flows = ofctl(t, "dump-flows").stdout
        assert "priority=10,in_port=1,dl_dst=%s actions=output:2" % MAC[2] \
            in flows, flows
        assert "nw_dst=%s" % IP[3] in flows, flows
        ofctl(t, "del-flows", "table=1")
        flows = ofctl(t, "dump-flows").stdout
        assert "nw_dst" not in flows and "in_port=1" in flows, flows
        ofctl(t, "del-flows")
        assert "actions=" not in ofctl(t, "dump-flows").stdout
