"""Building blocks of a HARMLESS lab in network namespaces, shared by the
tests, `make demo-harmless` and the evaluation:

- `add_legacy_ns(topo)`: a namespace for the legacy switch;
- `add_hosts(topo, n, legacy_ns)`: hosts h1..hN, each on a veth whose
  other end is an access port of the legacy switch; IPs 10.33.0.1.. /24
  (one subnet, so only the VLANs and the OpenFlow side decide who reaches
  whom);
- `add_server(topo)`: the server, a namespace of its own holding the
  software side (the trunk-only OVS, the proxy, the controller): two
  user-space Open vSwitch instances in one namespace collide on their tap
  devices (`ovs-netdev`, the bridge's internal port), so the OpenFlow
  switch's ovs-vswitchd runs in the server's namespace (`OvsSwitch` with
  `netns=`)
  and the legacy switch's in its own (`add_legacy_ns`);
- `start_controller(...)`: the os-ken learning switch plus the port census
  app (`oxflow.apps.port_census`) as a background process;
- `wait_ports(path, n)`: the port descriptions the controller received.
"""

import json
import os
import sys
import time

from oxflow.netns import Process, sh

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SUBNET = "10.33.0.%d"


def add_legacy_ns(topo, name="lg"):
    """A namespace for the legacy switch (a `Host` without interfaces):
    running each user-space Open vSwitch in a namespace of its own keeps it
    clear of any other instance's tap devices on the machine."""
    return topo.add_host(name)


def _move(port, netns):
    """Moves root-side interface `port` into `netns`, up, IPv6 off."""
    if netns is None:
        return
    sh(["ip", "link", "set", port, "netns", netns])
    sh(["sysctl", "-q", "-w", "net.ipv6.conf.%s.disable_ipv6=1" % port],
       netns=netns, check=False)
    sh(["ip", "link", "set", port, "up"], netns=netns)


def add_hosts(topo, n, legacy_ns=None):
    """[(host, access port name)] for h1..hN; the access ports are moved
    into `legacy_ns` when given."""
    out = []
    for i in range(1, n + 1):
        h = topo.add_host("h%d" % i)
        port = topo.add_switch_link(h, ip=SUBNET % i + "/24")
        _move(port, legacy_ns)
        out.append((h, port))
    return out


def add_server(topo, name="sv", legacy_ns=None):
    """(server host, legacy end, server NIC): the trunk is a veth from the
    legacy switch's trunk port (in `legacy_ns`, else the root namespace) to
    eth0 of the server's namespace."""
    server = topo.add_host(name)
    legacy_end = topo.add_switch_link(server)
    _move(legacy_end, legacy_ns)
    return server, legacy_end, "eth0"


def controller_cmd(port, apps=("oxflow.apps.learning_switch",
                               "oxflow.apps.port_census")):
    cmd = [sys.executable, "-m", "oxflow.controller",
           "--ofp-tcp-listen-port", str(port)]
    for app in apps:
        cmd += ["--app", app]
    return cmd


def controller_env(ports_file):
    old = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": PYTHON_DIR + (":" + old if old else ""),
            "OXFLOW_PORTS_FILE": str(ports_file)}


def start_controller(workdir, port, netns=None):
    """The os-ken learning switch + port census on `port` (a running
    `Process`, in namespace `netns` if given); its port census file is
    workdir/ports.jsonl."""
    ports_file = os.path.join(str(workdir), "ports.jsonl")
    proc = Process(controller_cmd(port),
                   os.path.join(str(workdir), "controller.log"),
                   env=controller_env(ports_file), netns=netns,
                   name="os-ken")
    proc.start()
    proc.wait_for_log(r"instantiating app oxflow\.apps\.port_census",
                      timeout=30)
    wait_listening(port, netns)
    proc.ports_file = ports_file
    return proc


def wait_listening(port, netns=None, timeout=30):
    """Until something listens on TCP `port` (of namespace `netns`)."""
    deadline = time.monotonic() + timeout
    while True:
        out = sh(["ss", "-Hltn", "sport = :%d" % port], netns=netns,
                 check=False).stdout
        if out.strip():
            return
        if time.monotonic() > deadline:
            raise TimeoutError("nothing listens on port %d" % port)
        time.sleep(0.1)


def read_census(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_census(path, event, done=lambda rec: True, timeout=30):
    """The last `event` record of the port census for which `done` holds."""
    deadline = time.monotonic() + timeout
    while True:
        recs = [r for r in read_census(path) if r["event"] == event
                and done(r)]
        if recs:
            return recs[-1]
        if time.monotonic() > deadline:
            raise TimeoutError("no %s record in %s (have: %s)"
                               % (event, path, read_census(path)))
        time.sleep(0.1)


def ping_all(hosts, count=2, timeout=5):
    """{(a, b): received} for every ordered pair a < b of hosts."""
    out = {}
    for i, a in enumerate(hosts):
        for b in hosts[i + 1:]:
            out[(a.name, b.name)] = a.ping(b.ip(), count=count,
                                           timeout=timeout).received
    return out
