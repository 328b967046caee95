"""The data-centre evaluation on several machines (Mininet's cluster mode).

Placement (`placement`): leaf l and its servers go to machine
(l - 1) mod M, so host-to-leaf links stay on one machine and only
leaf-to-spine links cross machines; spine j goes to machine (j - 1) mod M.
With 4 leaves on 4 machines every leaf-to-spine link but one per leaf
crosses between machines (a GRE tunnel, `RemoteGRELink`).

`cluster_classes()` returns the node classes for Mininet's
`mininet.examples.cluster.MininetCluster`: `RemoteOxflowSwitch` (OxflowSwitch
with Mininet's RemoteMixin: started over ssh through the node's own
popen/cmd), `RemoteUserOvsSwitch` is not provided (each machine would need
its own private OVS instance; use Mininet's RemoteOVSSwitch against a
system OVS there), `RemoteHost`, and a GRE link class whose ends are shaped
by htb like the single-machine links.

Requirements on every machine: the same checkout at the same path (the
oxflow binary and python/ are run from there), Mininet installed, root ssh
without a password from the machine running the evaluation, and a
controller address the other machines reach (`--controller-ip`).
docs/datacenter.md walks through it.
"""

from oxflow import dctopo


def placement(spines, leaves, servers, machines):
    """{node name: machine} for the Spine-Leaf (see module doc)."""
    dctopo.check_shape(spines, leaves, servers)
    machines = [m for m in machines if m]
    if not machines:
        raise ValueError("placement needs at least one machine")
    out = {}
    for j in range(1, spines + 1):
        out["sp%d" % j] = machines[(j - 1) % len(machines)]
    for leaf in range(1, leaves + 1):
        m = machines[(leaf - 1) % len(machines)]
        out["lf%d" % leaf] = m
        for n in range(1, servers + 1):
            out[dctopo.host_name(leaf, n)] = m
    return out


def cluster_classes():
    """(MininetCluster, RemoteOxflowSwitch, RemoteHost, link class)."""
    from mininet.examples.cluster import (MininetCluster, RemoteGRELink,
                                          RemoteHost, RemoteMixin)

    from oxflow.mininet_switch import OxflowSwitch

    class RemoteOxflowSwitch(RemoteMixin, OxflowSwitch):
        """OxflowSwitch on the machine named by its `server` parameter."""

    class ShapedRemoteLink(RemoteGRELink):
        """Mininet's remote link (veth on one machine, GRE tunnel across
        machines) with htb-shaped ends."""

        def __init__(self, node1, node2, **kwargs):
            kwargs.setdefault("cls1", dctopo.HtbIntf)
            kwargs.setdefault("cls2", dctopo.HtbIntf)
            RemoteGRELink.__init__(self, node1, node2, **kwargs)

    return MininetCluster, RemoteOxflowSwitch, RemoteHost, ShapedRemoteLink
