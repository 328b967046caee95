"""Ports at run time (issue 35, item 4).

One `oxflow run` from a config file with h1 and h2 on ports 1 and 2, in
fail-secure mode with two workers (an added port's reception is split
between them), connected to a raw OpenFlow controller (cp_util) that
watches the PORT_STATUS messages. In order:

- `oxflow ctl add-port` attaches h3's link as port 3: PORT_STATUS ADD,
  and pings between h1 and h3 go through it (flows 1 <-> 3);
- the interface is deleted: port 3 is reported down (PORT_STATUS MODIFY,
  LINK_DOWN) and stays; an interface of the same name comes back: port 3
  is re-attached (MODIFY, live) and the pings go through again;
- `oxflow ctl del-port` removes it: PORT_STATUS DELETE, gone from the
  port descriptions, its flows kept;
- unknown interface or port names are refused with the reason;
- SIGHUP re-reads the config file's port list: an interface added to it
  becomes a port (ADD, with a number never used before), one removed
  from it goes (DELETE).

Needs root and the binary.
"""

import os
import signal

import pytest
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p

import dp_util
from cp_util import RawController
from oxflow.netns import Topology, sh
from oxflow.switch import Switch


def config(ifaces):
    return ('datapath_id = "0x35"\nfail_mode = "secure"\nworkers = 2\n'
            + "".join('[[port]]\ninterface = "%s"\n' % i for i in ifaces))


@pytest.fixture
def net(tmp_path):
    dp_util.require_oxflow()
    with Topology(prefix="oxr") as topo:
        for i in (1, 2, 3, 4):
            topo.add_host("h%d" % i)
        for i in (1, 2):
            topo.add_switch_link(topo.hosts["h%d" % i], "10.0.0.%d/24" % i)
        cfg = tmp_path / "oxflow.toml"
        cfg.write_text(config(topo.switch_ports))
        with RawController() as ctrl:
            with Switch([], dpid=None, fail_mode=None,
                        controllers=[ctrl.endpoint],
                        extra_args=["--config", cfg],
                        log_path=tmp_path / "oxflow.log") as sw:
                conn = ctrl.accept()
                conn.handshake()
                yield topo, sw, conn, cfg
                assert sw.running(), sw.log()[-4000:]


def port_status(conn, pred, what, timeout=10):
    """The first PORT_STATUS for which pred(msg) holds (others skipped)."""
    try:
        got = conn.until(lambda m: isinstance(m, p.OFPPortStatus)
                         and pred(m), timeout)
    except TimeoutError as e:
        raise AssertionError("no PORT_STATUS %s: %s" % (what, e))
    return got[-1]


def ctl(sw, *args, ok=True):
    r = sw.ctl(*args)
    if ok:
        assert r.returncode == 0, "oxflow ctl %s: %s%s" % (
            " ".join(args), r.stdout, r.stderr)
    return r


def ping_ok(src, ip):
    return src.ping(ip, count=3, interval=0.2, timeout=3).received > 0


def recreate_link(topo, host, root, ip, mac):
    """A new veth named `root` whose peer is `host`'s eth0 (ip, mac)."""
    tmp = root[:-1] + "y"
    sh(["ip", "link", "add", root, "type", "veth", "peer", "name", tmp])
    sh(["sysctl", "-q", "-w", "net.ipv6.conf.%s.disable_ipv6=1" % root],
       check=False)
    sh(["ip", "link", "set", tmp, "netns", host.ns])
    host.run(["ip", "link", "set", tmp, "name", "eth0"])
    host.run(["ip", "link", "set", "eth0", "address", mac])
    host.run(["ip", "addr", "add", ip, "dev", "eth0"])
    host.run(["ip", "link", "set", "eth0", "up"])
    sh(["ip", "link", "set", root, "up"])


def test_add_remove_and_reattach_ports(net):
    topo, sw, conn, _ = net
    h1, h3 = topo.hosts["h1"], topo.hosts["h3"]
    root3 = topo.add_switch_link(h3, "10.0.0.3/24")
    mac3 = h3.mac()

    out = ctl(sw, "add-port", root3).stdout
    assert out.strip() == "added port 3 (%s)" % root3, out
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_ADD, "ADD")
    assert m.desc.port_no == 3 and m.desc.name.decode() == root3, m
    ctl(sw, "add-flow", "in_port=1,actions=output:3")
    ctl(sw, "add-flow", "in_port=3,actions=output:1")
    assert ping_ok(h1, "10.0.0.3"), sw.log()[-3000:]

    # The interface disappears: reported down, the port stays.
    sh(["ip", "link", "del", root3])
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_MODIFY
                    and m.desc.port_no == 3
                    and m.desc.state & ofp.OFPPS_LINK_DOWN, "MODIFY down")
    assert root3 in ctl(sw, "dump-ports-desc").stdout
    assert not ping_ok(h1, "10.0.0.3")
    # It comes back under the same name: re-attached as port 3.
    recreate_link(topo, h3, root3, "10.0.0.3/24", mac3)
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_MODIFY
                    and m.desc.port_no == 3, "MODIFY re-attached")
    assert "re-attached" in sw.log(), sw.log()[-3000:]
    if m.desc.state & ofp.OFPPS_LINK_DOWN:
        port_status(conn, lambda m: m.reason == ofp.OFPPR_MODIFY
                    and m.desc.port_no == 3
                    and not m.desc.state & ofp.OFPPS_LINK_DOWN, "MODIFY up")
    dp_util.wait_until(lambda: ping_ok(h1, "10.0.0.3"), timeout=10,
                       what="ping through the re-attached port")

    out = ctl(sw, "del-port", root3).stdout
    assert out.strip() == "removed port 3", out
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_DELETE, "DELETE")
    assert m.desc.port_no == 3 and m.desc.name.decode() == root3, m
    assert root3 not in ctl(sw, "dump-ports-desc").stdout
    assert not ping_ok(h1, "10.0.0.3")
    # Flows that output to it stay (a port deletion changes no flows).
    assert "actions=output:3" in ctl(sw, "dump-flows").stdout

    # Unknown names get the reason.
    r = ctl(sw, "add-port", "oxrnosuch0", ok=False)
    assert r.returncode == 1
    assert 'interface "oxrnosuch0": no such network interface' in r.stderr, \
        r.stderr
    r = ctl(sw, "del-port", "oxrnosuch0", ok=False)
    assert r.returncode == 1 and 'no port named "oxrnosuch0"' in r.stderr, \
        r.stderr
    r = ctl(sw, "add-port", topo.switch_ports[0], ok=False)
    assert "is already port 1" in r.stderr, r.stderr
    # Port numbers are not reused.
    out = ctl(sw, "add-port", root3).stdout
    assert out.strip() == "added port 4 (%s)" % root3, out


def test_sighup_reloads_the_port_list(net):
    topo, sw, conn, cfg = net
    root4 = topo.add_switch_link(topo.hosts["h4"], "10.0.0.4/24")
    cfg.write_text(config(topo.switch_ports))
    os.kill(sw.pid, signal.SIGHUP)
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_ADD, "ADD")
    assert m.desc.port_no == 3 and m.desc.name.decode() == root4, m
    ctl(sw, "add-flow", "in_port=1,actions=output:3")
    ctl(sw, "add-flow", "in_port=3,actions=output:1")
    assert ping_ok(topo.hosts["h1"], "10.0.0.4"), sw.log()[-3000:]

    # A broken file changes nothing.
    cfg.write_text("fail_mode = 'sometimes'\n")
    os.kill(sw.pid, signal.SIGHUP)
    dp_util.wait_until(lambda: "not reloaded" in sw.log(), timeout=10,
                       what="the reload error in the log")
    assert root4 in ctl(sw, "dump-ports-desc").stdout

    cfg.write_text(config(topo.switch_ports[:2]))
    os.kill(sw.pid, signal.SIGHUP)
    m = port_status(conn, lambda m: m.reason == ofp.OFPPR_DELETE, "DELETE")
    assert m.desc.port_no == 3 and m.desc.name.decode() == root4, m
    assert root4 not in ctl(sw, "dump-ports-desc").stdout
