"""A hypercube of oxflow switches for FlexForward tests and the evaluation.

    with HyperCubeNet(dim=2, prefix="ff") as net:
        net.set_mode("hypercube")          # or "keyflow", "openflow"
        assert net.h1.ping(net.h2.ip()).received == 1

Layout (`dim` d, N = 2**d switches, switch i has HyperCube address i):
- switch i's port b+1 (b = 0..d-1) is its link to switch i ^ (1 << b), a
  veth pair in the root namespace between the two switches' ports;
- hosts h1 (10.0.0.1) on switch 0 and h2 (10.0.0.2) on switch N-1, the
  opposite corners (d hops apart), each on port d+1 of its switch;
- KeyFlow keys: pairwise coprime, above every port number (`keys_for`);
- each host's MAC is its *dual* address (`flexforward.dual_mac`): its
  first 32 bits are the host's switch's HyperCube address and its 48-bit
  value the KeyFlow path id of the route from the other host, so the same
  frames are forwarded in all three modes and a network-wide change of
  mode needs no change on the hosts. Hosts get static neighbour entries
  (no ARP);
- OpenFlow mode: one flow per switch and destination MAC
  (`eth_dst=MAC actions=output:PORT`) along the same route.

The route is HyperCube's (lowest differing bit first), so all three modes
take the same path.
"""

import math
import time

from . import flexforward as ff
from .netns import Managed, Topology, _disable_ipv6, _no_offload, sh
from .switch import Switch

KEY_CANDIDATES = range(2, 1000)


def keys_for(n, above):
    """`n` pairwise coprime keys, each greater than `above`, small first."""
    keys = []
    for k in KEY_CANDIDATES:
        if k > above and all(math.gcd(k, x) == 1 for x in keys):
            keys.append(k)
            if len(keys) == n:
                return keys
    raise ValueError("not enough keys")


def ecube_path(src, dst, dim):
    """Switches and output ports from switch `src` towards switch `dst`:
    [(switch, port)], the last port the host port."""
    out = []
    cur = src
    while cur != dst:
        diff = cur ^ dst
        bit = (diff & -diff).bit_length() - 1
        out.append((cur, bit + 1))
        cur ^= 1 << bit
    out.append((dst, dim + 1))
    return out


class HyperCubeNet(Managed):
    def __init__(self, dim=2, prefix="ff", workers=1, log_dir=None,
                 extra_args=(), controllers=()):
        self.dim = dim
        self.n = 1 << dim
        self.prefix = prefix
        self.workers = workers
        self.log_dir = log_dir
        self.extra_args = list(extra_args)
        self.controllers = list(controllers)
        self.topo = None
        self.switches = []
        self.keys = keys_for(self.n, dim + 1)

    # --- build

    def _veth(self):
        a = self.topo._next_ifname("s")
        b = self.topo._next_ifname("s")
        sh(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
        for x in (a, b):
            _disable_ipv6(x)
            sh(["ip", "link", "set", x, "up"])
            _no_offload(x)
        return a, b

    def start(self):
        self.topo = Topology(prefix=self.prefix)
        ports = [[None] * self.dim for _ in range(self.n)]
        for i in range(self.n):
            for b in range(self.dim):
                j = i ^ (1 << b)
                if i < j:
                    ports[i][b], ports[j][b] = self._veth()
        corners = (0, self.n - 1)
        # Dual MAC of each host: reached from the other corner.
        self.mac = {}
        for here, there in ((0, self.n - 1), (self.n - 1, 0)):
            path = ecube_path(there, here, self.dim)
            self.mac[here] = ff.dual_mac(
                here, [(p, self.keys[s]) for s, p in path])
        self.h1 = self.topo.add_host("h1")
        self.h2 = self.topo.add_host("h2")
        host_port = {}
        for h, corner, ip in ((self.h1, 0, "10.0.0.1/24"),
                              (self.h2, self.n - 1, "10.0.0.2/24")):
            host_port[corner] = self.topo.add_switch_link(
                h, ip, mac=self.mac[corner])
        self.h1.run(["ip", "neigh", "replace", "10.0.0.2", "lladdr",
                     self.mac[self.n - 1], "dev", "eth0", "nud",
                     "permanent"])
        self.h2.run(["ip", "neigh", "replace", "10.0.0.1", "lladdr",
                     self.mac[0], "dev", "eth0", "nud", "permanent"])
        for i in range(self.n):
            ifaces = list(ports[i])
            if i in corners:
                ifaces.append(host_port[i])
            log = None
            if self.log_dir is not None:
                log = str(self.log_dir / ("s%d.log" % i))
            sw = Switch(ifaces, dpid=i + 1, log_path=log,
                        controllers=self.controllers,
                        extra_args=["--workers", str(self.workers)]
                        + self.extra_args)
            self.switches.append(sw)
            sw.start()
        return self

    def close(self):
        for sw in self.switches:
            try:
                sw.stop()
            except Exception:  # noqa: BLE001 - best effort cleanup
                pass
        self.switches = []
        if self.topo is not None:
            self.topo.close()
            self.topo = None

    # --- configuration

    def host_port(self, i):
        return self.dim + 1

    def configure(self):
        """HyperCube tables and KeyFlow keys on every switch (the mode is
        not changed)."""
        for i, sw in enumerate(self.switches):
            nbrs = ",".join("%d:%d" % (i ^ (1 << b), b + 1)
                            for b in range(self.dim))
            args = ["hypercube", "addr=%d" % i, "neighbours=" + nbrs]
            if i in (0, self.n - 1):
                args.append("local=%d" % self.host_port(i))
            sw.ctl(*args, check=True)
            sw.ctl("keyflow", "key=%d" % self.keys[i], check=True)

    def install_flows(self):
        """OpenFlow mode's flows: each destination MAC along its route."""
        for here, there in ((0, self.n - 1), (self.n - 1, 0)):
            for s, p in ecube_path(there, here, self.dim):
                self.switches[s].ctl(
                    "add-flow", "priority=10,eth_dst=%s,actions=output:%d" % (
                        self.mac[here], p), check=True)

    def remove_flows(self):
        for sw in self.switches:
            sw.ctl("del-flows", check=True)

    def set_mode(self, mode, fallback="openflow", order=None):
        """`mode` on every switch (in `order`, default 0..N-1); each ctl
        call returns after the switch's barrier."""
        for i in order if order is not None else range(self.n):
            self.switches[i].ctl("fwmode", mode, "fallback=" + fallback,
                                 check=True)

    def counters(self):
        """Per switch: the FWMODE_REPLY counters, from `ctl show-fwmode`."""
        out = []
        for sw in self.switches:
            text = sw.ctl("show-fwmode", check=True).stdout
            line = [x for x in text.splitlines()
                    if x.startswith("counters ")][0]
            out.append({k: int(v) for k, v in
                        (f.split("=") for f in line.split()[1:])})
        return out

    def total(self, name):
        return sum(c[name] for c in self.counters())

    def wait_ready(self, timeout=20):
        """Poll until a ping crosses in the current mode."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.h1.ping("10.0.0.2", timeout=1).received == 1:
                return True
            time.sleep(0.2)
        return False
