"""The Prometheus metrics endpoint end to end: `oxflow run --metrics
127.0.0.1:PORT` on veth ports of hosts in network namespaces, real traffic
(ping, scapy frames), flows, a group and a meter installed with `oxflow
ctl`, a raw controller that becomes master; every scrape parsed with the
Prometheus project's own Python parser
(`prometheus_client.parser.text_string_to_metric_families`) and compared
with what was sent and what `oxflow ctl` reports. Also: the HTTP answers
to other paths and methods, a bad `--metrics` address, a busy one, and the
Grafana example dashboard referring only to metrics the switch exports.

Needs root and the binary (`cargo build --release -p oxflow`, or
$OXFLOW_BIN).
"""

import http.client
import json
import os
import pathlib
import re
import socket

import pytest
from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as p
from prometheus_client.parser import text_string_to_metric_families
from scapy.all import IP, UDP, Ether

from cp_util import DP, RawController
from dp_util import HostSocket, wait_until
from oxflow.netns import Topology, free_tcp_port
from oxflow.switch import Switch, oxflow_bin, run_oxflow

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DASHBOARD = REPO_ROOT / "docs" / "grafana" / "oxflow-dashboard.json"

needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="needs root (network namespaces)")


@pytest.fixture(scope="module")
def binary():
    try:
        return oxflow_bin()
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


def get(port, path="/metrics", method="GET"):
    """(status, headers, body) of one HTTP request to the endpoint."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path)
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode()
    finally:
        c.close()


class Scrape:
    """One scrape, parsed: families by name, samples by (name, labels)."""

    def __init__(self, port):
        status, headers, body = get(port)
        assert status == 200, body
        assert headers["Content-Type"] == \
            "text/plain; version=0.0.4; charset=utf-8", headers
        self.text = body
        self.families = {f.name: f for f in
                         text_string_to_metric_families(body)}
        self.samples = {}
        for f in self.families.values():
            for s in f.samples:
                key = (s.name, tuple(sorted(s.labels.items())))
                assert key not in self.samples, "sample twice: %s" % (key,)
                self.samples[key] = s.value

    def __call__(self, metric, /, **labels):
        key = (metric, tuple(sorted(labels.items())))
        if key not in self.samples:
            raise AssertionError("no sample %s%s in:\n%s" % (
                metric, labels, self.text))
        return self.samples[key]

    def series(self, name):
        """[(labels dict, value)] of every sample called name."""
        return [(dict(k[1]), v) for k, v in self.samples.items()
                if k[0] == name]


def dump_ports(sw):
    """{port: {rx_packets, rx_bytes, tx_packets, tx_bytes}} from
    `oxflow ctl dump-ports`."""
    out = sw.ctl("dump-ports", check=True).stdout
    stats = {}
    for m in re.finditer(r"port\s+(\d+): rx pkts=(\d+), bytes=(\d+),.*?\n"
                         r"\s+tx pkts=(\d+), bytes=(\d+)", out):
        stats[m.group(1)] = dict(zip(
            ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes"),
            (int(g) for g in m.groups()[1:])))
    assert stats, out
    return stats


def dump_table0(sw):
    """(active, lookup, matched) of table 0 from `oxflow ctl dump-tables`."""
    out = sw.ctl("dump-tables", check=True).stdout
    m = re.search(r"table 0:\s+active=(\d+), lookup=(\d+), matched=(\d+)",
                  out)
    assert m, out
    return tuple(int(g) for g in m.groups())


@pytest.fixture
def hosts():
    with Topology() as topo:
        for i in (1, 2, 3):
            h = topo.add_host("h%d" % i)
            topo.add_switch_link(h, "10.0.0.%d/24" % i)
        yield topo


@needs_root
def test_scrape_matches_traffic_and_ctl(binary, hosts, tmp_path):
    mport = free_tcp_port()
    with RawController() as ctrl, \
            Switch(hosts, controllers=[ctrl.endpoint], fail_mode="secure",
                   extra_args=["--workers", "2",
                               "--metrics", "127.0.0.1:%d" % mport],
                   log_path=tmp_path / "oxflow.log") as sw:
        assert "metrics: http://127.0.0.1:%d/metrics" % mport in sw.log()
        s = Scrape(mport)
        target = ctrl.endpoint
        # The controller has not connected yet, or just has (equal).
        assert s("oxflow_controller_role", target=target, role="master") == 0
        assert s("oxflow_up") == 1
        assert s("oxflow_build_info", version=s.series(
            "oxflow_build_info")[0][0]["version"],
            datapath_id="0000000000000001") == 1

        # A controller connects and becomes master.
        conn = ctrl.accept()
        conn.handshake()
        conn.request(p.OFPRoleRequest(DP, ofp.OFPCR_ROLE_MASTER, 1),
                     p.OFPRoleReply)
        conn.barrier()

        # h1 <-> h2 forward; UDP to port 9 from h1 goes through meter 1
        # (drop above 10 packets/s, burst 10) and group 1 (all: port 3).
        sw.ctl("add-group", "group_id=1,type=all,bucket=output:3",
               check=True)
        sw.ctl("add-meter", "meter=1,pktps,burst,stats,"
               "band=type=drop,rate=10,burst_size=10", check=True)
        for spec in ("priority=100,in_port=1,udp,udp_dst=9,"
                     "actions=meter:1,group:1",
                     "priority=10,in_port=1,actions=output:2",
                     "priority=10,in_port=2,actions=output:1"):
            sw.ctl("add-flow", spec, check=True)

        h1, h2 = hosts.hosts["h1"], hosts.hosts["h2"]
        r = h1.ping(h2.ip(), count=3, interval=0.2, timeout=3)
        assert r.received == 3, sw.log()
        n = 200
        frames = [bytes(Ether(src=h1.mac(), dst="ff:ff:ff:ff:ff:ff")
                        / IP(src=h1.ip(), dst="10.0.0.3")
                        / UDP(sport=1000 + i, dport=9) / (b"m" * 20))
                  for i in range(n)]
        with HostSocket(h1) as sock:
            sock.send(frames)
        # The frames are in once the meter has seen them all (a hang
        # guard only: no timing is asserted).
        wait_until(lambda: Scrape(mport)(
            "oxflow_meter_packets_in_total", meter="1") == n,
            timeout=10, what="meter 1 to count %d packets" % n)

        # Keep the controller connection alive however long this took
        # (the switch closes it after three unanswered echo intervals).
        conn.echo_ok()
        before_ports, before_t0 = dump_ports(sw), dump_table0(sw)
        s = Scrape(mport)
        after_ports, after_t0 = dump_ports(sw), dump_table0(sw)

        # Ports: between two dump-ports (the only traffic now is
        # whatever the kernel sends on its own).
        for port, b in before_ports.items():
            a = after_ports[port]
            for key, metric in (("rx_packets", "oxflow_port_rx_packets_total"),
                                ("rx_bytes", "oxflow_port_rx_bytes_total"),
                                ("tx_packets", "oxflow_port_tx_packets_total"),
                                ("tx_bytes", "oxflow_port_tx_bytes_total")):
                got = [v for l, v in s.series(metric) if l["port"] == port]
                assert len(got) == 1, (metric, port, s.text)
                assert b[key] <= got[0] <= a[key], (metric, port, b, got, a)
            assert s("oxflow_port_up", port=port,
                     name=sw.ifaces[int(port) - 1]) == 1
        assert s("oxflow_port_rx_packets_total", port="1",
                 name=sw.ifaces[0]) >= n + 3

        # Table 0: entries and counters as dump-tables and dump-flows say.
        assert before_t0[0] == after_t0[0] == 3
        assert s("oxflow_table_active_entries", table="0") == 3
        flows = sw.ctl("dump-flows", check=True).stdout
        assert len(re.findall(r"actions=", flows)) == 3, flows
        assert before_t0[1] <= s("oxflow_table_lookups_total", table="0") \
            <= after_t0[1]
        assert before_t0[2] <= s("oxflow_table_matches_total", table="0") \
            <= after_t0[2]

        # Meter and group: every frame entered the meter; the band dropped
        # some, the group forwarded the rest out of port 3.
        dropped = s("oxflow_meter_band_packets_total", meter="1", band="0")
        passed = s("oxflow_group_packets_total", group="1")
        assert s("oxflow_meter_packets_in_total", meter="1") == n
        assert 0 < dropped < n and dropped + passed == n, (dropped, passed)
        assert s("oxflow_group_bucket_packets_total", group="1",
                 bucket="0") == passed
        assert s("oxflow_group_bytes_total", group="1") == passed * 62
        assert s("oxflow_meter_flows", meter="1") == 1
        stats = sw.ctl("meter-stats", "meter=1", check=True).stdout
        assert re.search(r"packet_in_count:%d\b" % n, stats), stats
        gstats = sw.ctl("dump-group-stats", check=True).stdout
        assert "packet_count=%d," % passed in gstats, gstats

        # Workers: two of them, and between them they received it all.
        workers = s.series("oxflow_worker_rx_packets_total")
        assert sorted(l["worker"] for l, _ in workers) == ["0", "1"]
        assert sum(v for _, v in workers) >= n + 3
        assert s("oxflow_packet_in_dropped_total") == 0

        # The controller channel.
        assert s("oxflow_controller_connected", target=target) == 1
        assert s("oxflow_controller_role", target=target, role="master") == 1
        assert s("oxflow_controller_role", target=target, role="equal") == 0
        assert s("oxflow_controller_connections", kind="controller") == 1
        assert s("oxflow_controller_messages_received_total") >= 3
        assert s("oxflow_controller_messages_sent_total") >= 3
        assert s("oxflow_standalone") == 0

        # Counters only go up; the controller going away shows.
        conn.close()
        wait_until(lambda: Scrape(mport)(
            "oxflow_controller_connected", target=target) == 0,
            timeout=10, what="the controller to show as disconnected")
        s2 = Scrape(mport)
        assert s2("oxflow_controller_role", target=target, role="master") == 0
        assert s2("oxflow_meter_packets_in_total", meter="1") == n
        assert s2("oxflow_port_rx_packets_total", port="1",
                  name=sw.ifaces[0]) >= s("oxflow_port_rx_packets_total",
                                          port="1", name=sw.ifaces[0])

        # HTTP: HEAD, other paths and methods, garbage.
        status, headers, body = get(mport, method="HEAD")
        assert status == 200 and body == "" and \
            int(headers["Content-Length"]) > 1000, headers
        assert get(mport, "/")[0] == 404
        assert get(mport, "/metrics/x")[0] == 404
        status, headers, _ = get(mport, method="POST")
        assert status == 405 and headers["Allow"] == "GET, HEAD"
        with socket.create_connection(("127.0.0.1", mport), timeout=10) as c:
            c.sendall(b"\x00garbage\r\n\r\n")
            assert c.recv(100).startswith(b"HTTP/1.1 400 ")
        with socket.create_connection(("127.0.0.1", mport), timeout=10) as c:
            c.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20000)
            assert c.recv(100).startswith(b"HTTP/1.1 431 ")
        # ... and the switch still serves.
        assert Scrape(mport)("oxflow_up") == 1
        assert sw.stop() == 0


def test_bad_metrics_address_is_a_clear_cli_error(binary):
    r = run_oxflow("run", "--metrics", "localhost:9464")
    assert r.returncode == 2, r
    assert "--metrics" in r.stderr and \
        'bad metrics address "localhost:9464"' in r.stderr, r.stderr
    r = run_oxflow("run", "--metrics", "127.0.0.1")
    assert r.returncode == 2 and "bad metrics address" in r.stderr, r.stderr


@needs_root
def test_busy_metrics_address_from_the_config_file(binary, tmp_path):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    cfg = tmp_path / "oxflow.toml"
    cfg.write_text('listeners = ["ptcp:%d:127.0.0.1"]\n'
                   'metrics = "127.0.0.1:%d"\n' % (free_tcp_port(), port))
    try:
        r = run_oxflow("run", "--config", cfg)
    finally:
        busy.close()
    assert r.returncode == 1, r
    assert "metrics endpoint 127.0.0.1:%d:" % port in r.stderr, r.stderr
    cfg.write_text('metrics = "127.0.0.1:99999"\n')
    r = run_oxflow("run", "--config", cfg)
    assert r.returncode == 1 and "oxflow.toml:1:11: bad metrics address" \
        in r.stderr, r.stderr


def test_grafana_dashboard_uses_exported_metrics():
    """Every expression of the example dashboard names only metrics that
    docs/metrics.md lists (and the unit tests render)."""
    dash = json.loads(DASHBOARD.read_text())
    exprs = []

    def walk(panels):
        for panel in panels:
            exprs.extend(t["expr"] for t in panel.get("targets", ())
                         if "expr" in t)
            walk(panel.get("panels", ()))

    walk(dash["panels"])
    exprs.extend(v["definition"] for v in dash["templating"]["list"])
    assert len(exprs) >= 8, exprs
    documented = set(re.findall(
        r"^\| `(oxflow_\w+)`",
        (REPO_ROOT / "docs" / "metrics.md").read_text(), re.M))
    assert len(documented) >= 30, documented
    for e in exprs:
        names = set(re.findall(r"\boxflow_\w+", e))
        assert names, e
        unknown = names - documented
        assert not unknown, "%s uses unknown metrics %s" % (e, unknown)
