"""OpenFlow 1.3 bundles (ONF EXT-230) against the real `oxflow run` binary:
`ovs-ofctl -O OpenFlow13 --bundle`, `oxflow ctl --bundle`, and a raw
controller connection sending os-ken's ONFBundleCtrlMsg / ONFBundleAddMsg.

What is checked: a committed bundle's flows are installed and forward real
frames between namespace hosts; a bundle with one failing message commits
nothing (the failing message's own error, with its xid, then
BUNDLE_FAILED/MSG_FAILED for the commit) and the table is exactly what it
was; discard, unknown ids, a closed bundle and unbundlable messages get
the ONF bundle errors (OFPET_EXPERIMENTER, experimenter ONF, exp_type
2300 + code), and the connection stays up.

Needs root (namespaces), the oxflow binary and ovs-ofctl (scripts/setup.sh).
"""

import shutil
import struct

import pytest

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

import cp_util
from cp_util import DP, apply_actions, connect_passive, output
from oxflow.switch import Switch
from oxflow.netns import sh
from oxflow.traffic import send_and_capture

from test_switch_control import frame, topology


pytestmark = cp_util.NEEDS_SWITCH

ONF = 0x4F4E4600
FLAGS = ofp.ONF_BF_ATOMIC | ofp.ONF_BF_ORDERED


@pytest.fixture
def switch(tmp_path):
    topo = topology(2)
    try:
        with Switch(topo, log_path=tmp_path / "oxflow.log") as sw:
            yield topo, sw
    finally:
        topo.close()


def flows(sw):
    """dump-flows lines without the counters and durations."""
    out = sw.ctl("dump-flows", check=True).stdout
    lines = []
    for line in out.splitlines()[1:]:
        keep = [f for f in line.strip().split(", ")
                if not f.startswith(("duration=", "n_packets=", "n_bytes="))]
        lines.append(", ".join(keep))
    return sorted(lines)


def write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def ovs_ofctl(*args):
    return sh(["ovs-ofctl", "-O", "OpenFlow13"] + list(args), check=False,
              timeout=30)


def bundle_error(msg):
    """exp_type of an ONF experimenter OFPT_ERROR (from its bytes), else
    None."""
    raw = msg.raw
    if raw[1] != ofp.OFPT_ERROR:
        return None
    etype, exp_type, experimenter = struct.unpack_from("!HHI", raw, 8)
    if etype != ofp.OFPET_EXPERIMENTER or experimenter != ONF:
        return None
    return exp_type


def ctrl_reply(msg):
    """(bundle_id, type) of a bundle control reply (from its bytes)."""
    raw = msg.raw
    assert raw[1] == ofp.OFPT_EXPERIMENTER, msg
    experimenter, exp_type, bundle_id, typ, _ = struct.unpack_from(
        "!IIIHH", raw, 8)
    assert (experimenter, exp_type) == (ONF, ofp.ONF_ET_BUNDLE_CONTROL), msg
    return bundle_id, typ


def answer(conn, xid):
    """The next message for xid."""
    return conn.until(lambda m: m.xid == xid)[-1]


def osken_bytes(msg, xid):
    """os-ken's own serialization of a bundle message."""
    msg.set_xid(xid)
    msg.serialize()
    return bytes(msg.buf)


def ctrl(conn, bundle_id, typ, flags=FLAGS):
    msg = p.ONFBundleCtrlMsg(DP, bundle_id, typ, flags, [])
    return conn.send(osken_bytes(msg, conn.next_xid()))


def add(conn, bundle_id, msg, flags=FLAGS):
    """Add msg to the bundle; the add and the embedded message share an
    xid."""
    xid = conn.next_xid()
    return conn.send(osken_bytes(
        p.ONFBundleAddMsg(DP, bundle_id, flags, msg, []), xid))


def fm(priority, in_port, actions):
    return p.OFPFlowMod(DP, priority=priority, match=p.OFPMatch(
        in_port=in_port), instructions=apply_actions(*actions))


def test_ovs_ofctl_bundle_commits_all_or_nothing(switch, tmp_path):
    if shutil.which("ovs-ofctl") is None:
        pytest.fail("ovs-ofctl missing: run scripts/setup.sh")
    topo, sw = switch
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    good = write(tmp_path, "good.flows", [
        "priority=10,in_port=1,actions=output:2",
        "priority=10,in_port=2,actions=output:1",
    ])
    r = ovs_ofctl("--bundle", "add-flows", sw.target, good)
    assert r.returncode == 0, r.stderr
    before = flows(sw)
    assert len(before) == 2, before
    f = frame(1, 2, 100, b"bundle")
    got = send_and_capture(h1, [f], [h2])
    assert f in got[h2.name], got

    # One flow sends to a group that does not exist: nothing is installed,
    # not even the good lines before and after it, and the delete is undone.
    bad = write(tmp_path, "bad.flows", [
        "priority=20,in_port=1,actions=drop",
        "priority=21,in_port=2,actions=group:99",
        "priority=22,in_port=2,actions=drop",
    ])
    r = ovs_ofctl("--bundle", "add-flows", sw.target, bad)
    assert r.returncode != 0
    assert "OFPBAC_BAD_OUT_GROUP" in r.stderr, r.stderr
    assert "OFPBFC_MSG_FAILED" in r.stderr, r.stderr
    assert flows(sw) == before
    r = ovs_ofctl("--bundle", "del-flows", sw.target)
    assert r.returncode == 0, r.stderr
    assert flows(sw) == []


def test_oxflow_ctl_bundle(switch, tmp_path):
    _, sw = switch
    good = write(tmp_path, "good.flows", [
        "priority=10,in_port=1,actions=output:2",
        "priority=11,in_port=1,actions=output:2",
    ])
    r = sw.ctl("add-flows", good, "--bundle")
    assert r.returncode == 0, r.stderr
    before = flows(sw)
    assert len(before) == 2
    bad = write(tmp_path, "bad.flows", [
        "priority=30,in_port=1,actions=drop",
        "priority=31,in_port=1,actions=output:77",
    ])
    r = sw.ctl("add-flows", bad, "--bundle")
    assert r.returncode == 1
    assert "type=BAD_ACTION code=BAD_OUT_PORT" in r.stderr, r.stderr
    assert "type=BUNDLE_FAILED code=MSG_FAILED" in r.stderr, r.stderr
    assert flows(sw) == before
    # Without --bundle the same file installs its good line.
    r = sw.ctl("add-flows", bad)
    assert r.returncode == 1
    assert len(flows(sw)) == 3


def test_raw_bundle_state_machine_and_errors(switch):
    _, sw = switch
    conn = connect_passive(sw.port)
    try:
        conn.handshake()
        # open, add two, close, commit: installed, replies carry the id.
        xid = ctrl(conn, 7, ofp.ONF_BCT_OPEN_REQUEST)
        assert ctrl_reply(answer(conn, xid)) == (7, ofp.ONF_BCT_OPEN_REPLY)
        add(conn, 7, fm(5, 1, [output(2)]))
        add(conn, 7, fm(6, 2, [output(1)]))
        assert conn.flows() == [], "nothing before the commit"
        xid = ctrl(conn, 7, ofp.ONF_BCT_CLOSE_REQUEST)
        assert ctrl_reply(answer(conn, xid)) == (7, ofp.ONF_BCT_CLOSE_REPLY)
        # A closed bundle takes no more messages (and is discarded).
        xid = add(conn, 7, fm(9, 1, []))
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_BUNDLE_CLOSED
        xid = ctrl(conn, 7, ofp.ONF_BCT_COMMIT_REQUEST)
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_BAD_ID
        conn.echo_ok()

        xid = ctrl(conn, 8, ofp.ONF_BCT_OPEN_REQUEST)
        answer(conn, xid)
        add(conn, 8, fm(5, 1, [output(2)]))
        add(conn, 8, fm(6, 2, [output(1)]))
        xid = ctrl(conn, 8, ofp.ONF_BCT_COMMIT_REQUEST)
        assert ctrl_reply(answer(conn, xid)) == (8, ofp.ONF_BCT_COMMIT_REPLY)
        assert sorted(f.priority for f in conn.flows()) == [5, 6]

        # Discard: the messages are gone, the id too.
        add(conn, 9, fm(50, 1, []))
        xid = ctrl(conn, 9, ofp.ONF_BCT_DISCARD_REQUEST)
        assert ctrl_reply(answer(conn, xid)) == (9, ofp.ONF_BCT_DISCARD_REPLY)
        xid = ctrl(conn, 9, ofp.ONF_BCT_COMMIT_REQUEST)
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_BAD_ID
        assert len(conn.flows()) == 2

        # A failing message: its own error (its xid), then MSG_FAILED.
        add(conn, 10, fm(60, 1, []))
        bad = add(conn, 10, fm(61, 1, [output(99)]))
        xid = ctrl(conn, 10, ofp.ONF_BCT_COMMIT_REQUEST)
        got = conn.until(lambda m: m.xid == xid)
        errs = [m for m in got if isinstance(m, p.OFPErrorMsg)]
        assert errs[0].xid == bad and (errs[0].type, errs[0].code) == (
            ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_PORT), errs
        assert bundle_error(got[-1]) == ofp.ONFERR_ET_FAILED
        assert len(conn.flows()) == 2

        # Unbundlable message, flags out of range, unknown control type.
        xid = add(conn, 11, p.OFPBarrierRequest(DP))
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_MSG_UNSUP
        xid = ctrl(conn, 12, ofp.ONF_BCT_OPEN_REQUEST, flags=0x80)
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_BAD_FLAGS
        xid = ctrl(conn, 12, ofp.ONF_BCT_OPEN_REPLY)
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_BAD_TYPE
        # An embedded xid that differs from the add's (os-ken writes the
        # same one: patch the embedded header, 24 bytes in).
        raw = osken_bytes(p.ONFBundleAddMsg(DP, 13, FLAGS, fm(70, 1, []), []),
                          conn.next_xid())
        raw = raw[:28] + struct.pack("!I", 1) + raw[32:]
        xid = conn.send(raw)
        assert bundle_error(answer(conn, xid)) == ofp.ONFERR_ET_MSG_BAD_XID
        conn.echo_ok()
    finally:
        conn.close()


def test_bundles_die_with_their_connection(switch):
    _, sw = switch
    conn = connect_passive(sw.port)
    conn.handshake()
    add(conn, 1, fm(5, 1, [output(2)]))
    conn.echo_ok()
    conn.close()
    other = connect_passive(sw.port)
    try:
        other.handshake()
        # Bundle ids are per connection: id 1 is unknown here.
        xid = ctrl(other, 1, ofp.ONF_BCT_COMMIT_REQUEST)
        assert bundle_error(answer(other, xid)) == ofp.ONFERR_ET_BAD_ID
        assert other.flows() == []
    finally:
        other.close()
