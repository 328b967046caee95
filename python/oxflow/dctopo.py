"""The Spine-Leaf data-centre topology and its static ECMP forwarding.

Layout (S spines, L leaves, N servers per leaf; numbering from 1):
- spine j is switch `sp<j>`, datapath id 0x100 + j; its port l leads to
  leaf l.
- leaf l is switch `lf<l>`, datapath id 0x200 + l; ports 1..N lead to its
  servers, ports N+1..N+S to spines 1..S.
- server n of leaf l is host `h<l>n<n>` with address 10.<l>.<n // 256>.
  <n % 256>/8 and MAC 00:00:0a:<l>:<n // 256>:<n % 256>; every leaf owns
  10.<l>.0.0/16.

Forwarding (`fabric_rules`), all IPv4 on destination address (the hosts get
static ARP entries, so there is no ARP and nothing is flooded):
- leaf: one rule per local server (ipv4_dst=host -> its port), then a
  default IPv4 rule -> SELECT group 1 whose buckets output to each spine
  uplink with equal weight: ECMP by the switch's per-flow bucket hash.
- spine: one rule per leaf prefix (10.<l>.0.0/16 -> port l).
"""

from mininet.link import Link, TCIntf
from mininet.topo import Topo

SPINE_DPID_BASE = 0x100
LEAF_DPID_BASE = 0x200
MAX_LEAVES = 254
MAX_SERVERS = 65534


class HtbIntf(TCIntf):
    """Mininet's TCIntf with htb's r2q raised, so a 100 Mbit/s class gets a
    quantum within htb's range (tc otherwise warns on every link). Given
    only `bw`, TCIntf installs htb and no netem qdisc."""

    def bwCmds(self, **kwargs):
        cmds, parent = TCIntf.bwCmds(self, **kwargs)
        return [c.replace("htb default 1", "htb default 1 r2q 1000")
                for c in cmds], parent


class HtbLink(Link):
    """A veth link whose two ends are HtbIntf (params as TCLink's)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("cls1", HtbIntf)
        kwargs.setdefault("cls2", HtbIntf)
        Link.__init__(self, *args, **kwargs)


def check_shape(spines, leaves, servers):
    """Raise ValueError saying what does not fit in the address plan."""
    for name, value in (("spines", spines), ("leaves", leaves),
                        ("servers per leaf", servers)):
        if not isinstance(value, int) or value < 1:
            raise ValueError("%s must be a positive integer, got %r" %
                             (name, value))
    if leaves < 2:
        raise ValueError("leaves must be at least 2 (flows go between "
                         "servers on different leaves), got %d" % leaves)
    if leaves > MAX_LEAVES:
        raise ValueError("leaves: at most %d (one 10.<leaf>.0.0/16 per "
                         "leaf), got %d" % (MAX_LEAVES, leaves))
    if servers > MAX_SERVERS:
        raise ValueError("servers per leaf: at most %d addresses in a "
                         "leaf's /16, got %d" % (MAX_SERVERS, servers))
    if spines > 0xff:
        raise ValueError("spines: at most 255, got %d" % spines)


def host_name(leaf, n):
    return "h%dn%d" % (leaf, n)


def host_ip(leaf, n):
    return "10.%d.%d.%d" % (leaf, n >> 8, n & 0xff)


def host_mac(leaf, n):
    return "00:00:0a:%02x:%02x:%02x" % (leaf, n >> 8, n & 0xff)


def spine_dpid(j):
    return SPINE_DPID_BASE + j


def leaf_dpid(leaf):
    return LEAF_DPID_BASE + leaf


class SpineLeafTopo(Topo):
    """`SpineLeafTopo(spines, leaves, servers, bw=None)`; bw in Mbit/s for
    every link (None: unshaped). Also `mn --topo spineleaf,S,L,N`."""

    def build(self, spines=2, leaves=2, servers=2, bw=None, placement=None):
        """placement: {node name: machine} for Mininet's cluster mode
        (oxflow.dccluster.placement); None: one machine."""
        spines, leaves, servers = int(spines), int(leaves), int(servers)
        check_shape(spines, leaves, servers)
        where = placement or {}

        def on(name):
            return {"server": where[name]} if name in where else {}

        self.shape = (spines, leaves, servers)
        lopts = {}
        if bw:
            # bandwidth only: Mininet's TCIntf then installs an htb class
            # and no netem qdisc. Offloads off: user-space switches.
            lopts = {"bw": float(bw), "txo": False, "rxo": False}
        for j in range(1, spines + 1):
            self.addSwitch("sp%d" % j, dpid="%x" % spine_dpid(j),
                           **on("sp%d" % j))
        for leaf in range(1, leaves + 1):
            lf = self.addSwitch("lf%d" % leaf, dpid="%x" % leaf_dpid(leaf),
                                **on("lf%d" % leaf))
            for n in range(1, servers + 1):
                h = self.addHost(host_name(leaf, n),
                                 ip=host_ip(leaf, n) + "/8",
                                 mac=host_mac(leaf, n),
                                 **on(host_name(leaf, n)))
                self.addLink(h, lf, port1=0, port2=n, **lopts)
            for j in range(1, spines + 1):
                self.addLink(lf, "sp%d" % j, port1=servers + j, port2=leaf,
                             **lopts)


def fabric_rules(spines, leaves, servers):
    """{dpid: {"groups": [...], "flows": [...]}} for oxflow.apps.fabric."""
    check_shape(spines, leaves, servers)
    out = {}
    for j in range(1, spines + 1):
        out[spine_dpid(j)] = {"groups": [], "flows": [
            {"priority": 100, "ipv4_dst": "10.%d.0.0/255.255.0.0" % leaf,
             "output": leaf} for leaf in range(1, leaves + 1)]}
    for leaf in range(1, leaves + 1):
        flows = [{"priority": 100, "ipv4_dst": host_ip(leaf, n),
                  "output": n} for n in range(1, servers + 1)]
        flows.append({"priority": 10, "group": 1})
        out[leaf_dpid(leaf)] = {
            "groups": [{"group_id": 1, "type": "select",
                        "ports": [servers + j for j in range(1, spines + 1)]}],
            "flows": flows}
    return out


def hosts_by_leaf(spines, leaves, servers):
    """[(leaf, host name, ip)] in leaf, then server order."""
    return [(leaf, host_name(leaf, n), host_ip(leaf, n))
            for leaf in range(1, leaves + 1)
            for n in range(1, servers + 1)]
