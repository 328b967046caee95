"""The BEBA example apps (python/oxflow/apps/beba/) without a switch: the
messages each app's `configure(dp)` sends are decoded by oxflow's Rust
codec and their BEBA content replayed through the `stateful` semantics
(crates/stateful/examples/beba_replay.rs), in order: every message must
decode, every state-mod must be accepted (no BEBA error), and each app
installs the stateful tables, templates, flows, groups and meters it
describes.
End-to-end tests with traffic: test_beba_e2e.py.
"""

import subprocess

import pytest

from conftest import REPO_ROOT
from oxflow.apps.beba import (ddos, fast_failover, forwarding_consistency,
                              maclearning, portknock)
from oxflow import ofp13


class Recorder(ofp13.Datapath):
    def __init__(self):
        self.sent = []

    def send_msg(self, msg):
        msg.xid = len(self.sent) + 1
        msg.serialize()
        self.sent.append(bytes(msg.buf).hex())


def replay(app):
    dp = Recorder()
    app.configure(dp)
    proc = subprocess.run(
        ["cargo", "run", "-q", "-p", "stateful", "--example", "beba_replay",
         "--"] + dp.sent, cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=1800)
    lines = proc.stdout.splitlines()
    assert len(lines) == len(dp.sent), proc.stderr
    bad = [l for l in lines if l.startswith("refused") or " ERROR " in l]
    assert not bad and proc.returncode == 0, bad
    return lines


def kinds(lines):
    out = {}
    for l in lines:
        k = l.split()[0]
        out[k] = out.get(k, 0) + 1
    return out


def test_portknock():
    lines = replay(portknock)
    assert lines[0] == ("state_mod OK StatefulTableConfig { table_id: 0, "
                        "stateful: true }")
    assert lines[1].startswith("state_mod OK SetLookupExtractor(Extractor "
                               "{ table_id: 0, bit: false, fields: "
                               "[2147489284] })")
    flows = [l for l in lines if l.startswith("flow_mod")]
    # ARP, 4 knocks (state + set_state), the open port (state), wrong
    # knock (set_state), test port.
    assert flows == ["flow_mod table=0 beba=0"] + \
        ["flow_mod table=0 beba=2"] * 4 + \
        ["flow_mod table=0 beba=1", "flow_mod table=0 beba=1",
         "flow_mod table=0 beba=0"]


def test_maclearning():
    lines = replay(maclearning)
    assert kinds(lines) == {"state_mod": 3, "flow_mod": 4 * 5}
    assert all(l == "flow_mod table=0 beba=2" for l in lines[3:])


def test_forwarding_consistency():
    lines = replay(forwarding_consistency)
    assert kinds(lines) == {"state_mod": 3, "group_mod": 1, "flow_mod": 8}
    assert "group_mod beba=3" in lines, "a SET_STATE in each SELECT bucket"


def test_ddos_two_stages():
    lines = replay(ddos)
    assert kinds(lines) == {"state_mod": 6, "meter_mod": 1, "flow_mod": 6}
    tables = sorted(l.split()[1] for l in lines if l.startswith("flow_mod"))
    assert tables == ["table=0"] * 3 + ["table=1"] * 3


def test_fast_failover_with_rollback():
    lines = replay(fast_failover)
    assert kinds(lines) == {"state_mod": 4, "group_mod": 2, "flow_mod": 6}
    assert any("bit: true" in l for l in lines), "bi-flow update scope"
    assert lines[4] == "group_mod beba=1", "FF backup bucket sets FAILED"


def test_replay_reports_refusals():
    """The checker itself fails on a refused state-mod (SET_FLOW_STATE on
    a table never configured)."""
    from oxflow import beba

    dp = Recorder()
    dp.send_msg(beba.state_mod(dp, beba.set_flow_state_data(0, b"\x0a\0\0\1",
                                                            1)))
    proc = subprocess.run(
        ["cargo", "run", "-q", "-p", "stateful", "--example", "beba_replay",
         "--"] + dp.sent, cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=1800)
    assert proc.returncode == 1
    assert "state_mod ERROR SetFlowState" in proc.stdout


def test_arp_responder():
    from oxflow.apps.beba import arp_responder
    lines = replay(arp_responder)
    # Per host a template and its IN_SWITCH_PKT_GEN flow, then the
    # table-miss to the controller.
    assert lines == ["pkttmp_mod OK", "flow_mod table=0 beba=1"] * len(
        arp_responder.HOSTS) + ["flow_mod table=0 beba=0"]
    # The template is the ARP reply "VIP is at VMAC" to the host.
    from scapy.layers.l2 import ARP, Ether
    f = Ether(arp_responder.arp_reply("10.0.0.2", "00:00:00:00:00:02"))
    assert (f.dst, f.src, f[ARP].op, f[ARP].psrc, f[ARP].hwsrc,
            f[ARP].pdst, f[ARP].hwdst) == (
        "00:00:00:00:00:02", arp_responder.VMAC, 2, arp_responder.VIP,
        arp_responder.VMAC, "10.0.0.2", "00:00:00:00:00:02")
