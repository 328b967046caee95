"""TCP through the release switch with segmentation offloads ON (the
switch's AF_PACKET ports use PACKET_VNET_HDR, config `gso = true`, the
default): iperf3 between two namespaces must move data, and the switch must
have received frames larger than the MTU (TSO super-frames from the
sending host), which it forwards as such or has the kernel segment.

The harness turns checksum offload off on every veth it makes (the right
setting for byte-exact capture tests); this test turns offloads back on for
its own links. Prints the iperf3 rate (a figure for the report, not an
assertion: the machine is shared).

Needs root, iperf3, ethtool and the binary.
"""

import json
import os
import shutil
import subprocess
import time

import pytest

import dp_util
from oxflow.netns import Topology, sh
from oxflow.switch import Switch

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0,
                       reason="needs root (network namespaces)"),
    pytest.mark.skipif(shutil.which("iperf3") is None
                       or shutil.which("ethtool") is None,
                       reason="needs iperf3 and ethtool"),
]

OFFLOADS = ["tx", "on", "rx", "on", "tso", "on", "gso", "on", "sg", "on"]


@pytest.fixture
def offload_hosts():
    """h1, h2 on veths to the root namespace, offloads on at both ends."""
    with Topology(prefix="oxp") as topo:
        for i in (1, 2):
            h = topo.add_host("h%d" % i)
            root = topo.add_switch_link(h, "10.0.0.%d/24" % i)
            h.run(["ethtool", "-K", "eth0"] + OFFLOADS, check=False)
            sh(["ethtool", "-K", root] + OFFLOADS, check=False)
            feats = h.run(["ethtool", "-k", "eth0"]).stdout
            assert "tcp-segmentation-offload: on" in feats, feats
        yield topo


def iperf(topo, seconds=3):
    """iperf3 TCP h1 -> h2 for `seconds`; returns iperf3's JSON result."""
    h1, h2 = topo.hosts["h1"], topo.hosts["h2"]
    server = h2.popen(["iperf3", "-s", "-1", "-B", h2.ip()],
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                      text=True)
    try:
        # Start the client only once the server listens (on a loaded
        # machine that took longer than a fixed number of retries).
        deadline = time.monotonic() + 20
        while "5201" not in h2.run(["ss", "-Hltn"], check=False).stdout:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                raise AssertionError("iperf3 server did not listen: %s"
                                     % server.communicate()[1])
            time.sleep(0.05)
        out = h1.run(["iperf3", "-c", h2.ip(), "-t", str(seconds), "-J"],
                     check=False, timeout=seconds + 30)
        return json.loads(out.stdout)
    finally:
        server.kill()
        server.wait()


def test_iperf3_with_offloads_on_passes_super_frames(offload_hosts, tmp_path):
    dp_util.require_oxflow()
    h1, h2 = offload_hosts.hosts["h1"], offload_hosts.hosts["h2"]
    with Switch(offload_hosts, fail_mode="standalone",
                log_path=tmp_path / "oxflow.log") as sw:
        assert "AF_PACKET, GSO" in sw.log(), sw.log()
        r = h1.ping(h2.ip(), count=2, interval=0.2, timeout=2)
        assert r.received == 2, sw.log()
        before = dp_util.port_stats(sw)[1]
        res = iperf(offload_hosts)
        assert "error" not in res, res.get("error")
        end = res["end"]
        received = end["sum_received"]["bytes"]
        gbps = end["sum_received"]["bits_per_second"] / 1e9
        print("\niperf3 TCP through oxflow, offloads on: %.2f Gbit/s "
              "(%d bytes)" % (gbps, received))
        assert received > 0
        after = dp_util.port_stats(sw)[1]
        pkts = after["rx_pkts"] - before["rx_pkts"]
        byts = after["rx_bytes"] - before["rx_bytes"]
        assert pkts > 0
        # On average the frames port 1 received were larger than an
        # Ethernet frame of MTU 1500: TSO super-frames got through whole.
        print("port 1 received %d frames, %.0f bytes on average, "
              "%d dropped" % (pkts, byts / pkts,
                              after["rx_drop"] - before["rx_drop"]))
        assert byts / pkts > 1514, (pkts, byts)
        assert sw.stop() == 0
