"""Persistence (`--state-dir`) and `oxflow ctl save` / `restore`, against
the real `oxflow run` binary on veth ports of namespace hosts.

- SIGKILL under a flow-mod storm: a controller connection adds flows and
  sends a barrier after every few; the switch is killed with SIGKILL while
  it runs; restarted on the same state directory it holds every flow a
  barrier reply acknowledged (nothing acknowledged is lost, nothing it
  never received appears), and forwards real frames with them.
- The saved state is in place before any controller connects: the first
  thing a controller sees on a restarted switch is the restored table.
- A corrupt state file: refused with a message that says why, the switch
  does not start (state_corrupt = "refuse", the default); with
  state_corrupt = "empty" it starts with no flows and moves the file aside.
- ctl save -> wipe -> ctl restore gives back the same flows, groups and
  meters.

Needs root (namespaces) and the oxflow binary.
"""

import os
import signal
import threading
import time

import pytest

from os_ken.ofproto import ofproto_v1_3_parser as p

import cp_util
from cp_util import (DP, RawController, apply_actions, connect_passive,
                     output)
from oxflow.switch import Switch, run_oxflow
from oxflow.netns import free_tcp_port
from oxflow.traffic import send_and_capture

from test_switch_control import frame, topology


pytestmark = cp_util.NEEDS_SWITCH


@pytest.fixture
def topo():
    t = topology(2)
    try:
        yield t
    finally:
        t.close()


def switch(topo, tmp_path, state_dir, name, **kw):
    extra = ["--state-dir", str(state_dir)] + list(kw.pop("extra_args", []))
    return Switch(topo, log_path=tmp_path / ("%s.log" % name),
                  extra_args=extra, **kw)


def storm_flow(i):
    """Flow number i of the storm: its cookie names it."""
    return p.OFPFlowMod(DP, cookie=i, priority=100, match=p.OFPMatch(
        eth_type=0x88B5, eth_src="02:00:00:%02x:%02x:%02x" % (
            i >> 16 & 0xff, i >> 8 & 0xff, i & 0xff)),
        instructions=apply_actions(output(2)))


def test_sigkill_under_flow_mod_storm_keeps_every_acknowledged_flow(
        topo, tmp_path):
    state = tmp_path / "state"
    sent = []
    acked = []
    stop = threading.Event()
    failure = []

    with switch(topo, tmp_path, state, "first") as sw:
        conn = connect_passive(sw.port)
        conn.handshake()

        def storm():
            i = 0
            try:
                while not stop.is_set():
                    for _ in range(8):
                        i += 1
                        conn.send(storm_flow(i))
                        sent.append(i)
                    errs = [m for m in conn.barrier(timeout=10)
                            if isinstance(m, p.OFPErrorMsg)]
                    if errs:
                        failure.append(errs)
                        return
                    acked.append(i)
            except (ConnectionError, OSError, TimeoutError):
                pass  # the switch was killed

        t = threading.Thread(target=storm, daemon=True)
        t.start()
        # Let a good number of barriers go by, then kill it mid-storm.
        deadline = time.monotonic() + 20
        while len(acked) < 150 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(sw.pid, signal.SIGKILL)
        t.join(10)
        stop.set()
        conn.close()
    assert not failure, failure
    assert acked, "no barrier answered before the kill"
    last_acked = acked[-1]

    with switch(topo, tmp_path, state, "second") as sw:
        log = sw.log()
        assert "state: restored" in log, log[-3000:]
        conn = connect_passive(sw.port)
        conn.handshake()
        cookies = sorted(f.cookie for f in conn.flows())
        conn.close()
        # Everything a barrier acknowledged is there, nothing never sent.
        missing = [c for c in range(1, last_acked + 1) if c not in cookies]
        print("storm: %d flows sent, %d acknowledged by a barrier, %d "
              "restored" % (len(sent), last_acked, len(cookies)))
        assert not missing, "acknowledged flows lost: %s" % missing[:20]
        assert cookies and cookies[-1] <= sent[-1], cookies[-5:]
        # A snapshot is a whole table: the flows are 1..n without holes.
        assert cookies == list(range(1, len(cookies) + 1)), cookies[:20]
        # And they forward: flow 1 sends eth_src 02:00:00:00:00:01 to h2.
        h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
        f = frame(1, 2, 80, b"restored")
        f = f[:6] + bytes.fromhex("020000000001") + f[12:]
        got = send_and_capture(h1, [f], [h2])
        assert f in got[h2.name], got


def test_restore_happens_before_the_controller_connects(topo, tmp_path):
    state = tmp_path / "state"
    with switch(topo, tmp_path, state, "first") as sw:
        conn = connect_passive(sw.port)
        conn.handshake()
        conn.flow_mod(cookie=0x51, priority=7, hard_timeout=900,
                      match=p.OFPMatch(in_port=1),
                      instructions=apply_actions(output(2)))
        conn.close()
        assert sw.stop() == 0  # a clean stop writes (a barrier did too)
    with RawController() as ctl:
        with switch(topo, tmp_path, state, "second",
                    controllers=[ctl.endpoint]):
            conn = ctl.accept()
            conn.handshake()
            flows = conn.flows()
            assert [(f.cookie, f.priority, f.hard_timeout)
                    for f in flows] == [(0x51, 7, 900)], flows
            h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
            f = frame(1, 2, 80, b"before-controller")
            got = send_and_capture(h1, [f], [h2])
            assert f in got[h2.name], got


def corrupt(state):
    path = state / "state.oxf"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    return path


def test_corrupt_state_is_refused_or_set_aside(topo, tmp_path):
    state = tmp_path / "state"
    with switch(topo, tmp_path, state, "first") as sw:
        conn = connect_passive(sw.port)
        conn.handshake()
        conn.flow_mod(cookie=1, priority=1,
                      instructions=apply_actions(output(2)))
        conn.close()
    path = corrupt(state)
    listen = "ptcp:%d:127.0.0.1" % free_tcp_port()
    r = run_oxflow("run", "--state-dir", state, "--listen", listen,
                   "--port", topo.switch_ports[0], timeout=30)
    assert r.returncode != 0
    err = r.stderr
    assert "state file %s" % path in err, err
    assert "checksum mismatch" in err and "not starting" in err, err
    assert path.exists(), "a refused file stays where it is"

    cfg = tmp_path / "oxflow.toml"
    cfg.write_text('state_corrupt = "empty"\n')
    with switch(topo, tmp_path, state, "empty",
                extra_args=["--config", cfg]) as sw:
        assert "checksum mismatch" in sw.log()
        conn = connect_passive(sw.port)
        conn.handshake()
        assert conn.flows() == []
        conn.close()
    assert not path.exists()
    assert (state / "state.oxf.corrupt").exists()


def dump(sw, what):
    out = sw.ctl(what, check=True).stdout
    keep = []
    for line in out.splitlines()[1:]:
        fields = [f for f in line.strip().replace(" ", ",").split(",")
                  if f and not f.startswith(("duration=", "n_packets=",
                                             "n_bytes="))]
        keep.append(",".join(fields))
    return sorted(keep)


def test_ctl_save_and_restore_round_trip(topo, tmp_path):
    state = tmp_path / "state"
    with switch(topo, tmp_path, state, "ctl") as sw:
        for cmd in (["add-meter", "meter=4,pktps,band=type=drop,rate=50"],
                    ["add-group", "group_id=2,type=all,bucket=output:2"],
                    ["add-group",
                     "group_id=1,type=select,bucket=weight=3,group:2,"
                     "bucket=weight=1,output:1"],
                    ["add-flow", "table=0,priority=9,cookie=0x9,in_port=1,"
                     "idle_timeout=300,actions=group:1"],
                    ["add-flow", "table=0,priority=8,in_port=2,"
                     "actions=meter:4,goto_table:3"],
                    ["add-flow", "table=3,priority=1,actions=output:1"]):
            r = sw.ctl(*cmd)
            assert r.returncode == 0, (cmd, r.stderr)
        before = {w: dump(sw, w) for w in
                  ("dump-flows", "dump-groups", "dump-meters")}
        assert len(before["dump-flows"]) == 3, before
        saved = tmp_path / "saved.oxf"
        r = sw.ctl("save", saved)
        assert r.returncode == 0, r.stderr
        assert "3 flows, 2 groups, 1 meters" in r.stdout, r.stdout
        for cmd in ("del-flows", "del-groups", "del-meters"):
            assert sw.ctl(cmd).returncode == 0
        assert dump(sw, "dump-flows") == []
        r = sw.ctl("restore", saved, "--bundle")
        assert r.returncode == 0, r.stderr
        after = {w: dump(sw, w) for w in before}
        assert after == before
        # A second restore is refused: the meters and groups exist.
        r = sw.ctl("restore", saved)
        assert r.returncode == 1 and "METER_EXISTS" in r.stderr, r.stderr
