"""Network-namespace topologies and background processes for integration
tests and the demo (needs root, iproute2; ethtool optional).

    with Topology() as topo:
        h1 = topo.add_host("h1")
        p1 = topo.add_switch_link(h1, "10.0.0.1/24")   # root-side iface name
        h2 = topo.add_host("h2")
        p2 = topo.add_switch_link(h2, "10.0.0.2/24")
        with Process(["target/release/oxflow", "run", "--port", p1,
                      "--port", p2], log_path=tmp / "oxflow.log") as sw:
            sw.wait_for_log(r"port .* up")
            assert h1.ping("10.0.0.2").received == 1

Naming: every name carries the prefix and the pid of the creating process,
so parallel runs never collide and leftovers of crashed runs can be found:
- namespaces   "<prefix><pid>-<t>-<host>"       e.g. oxf1234-1-h1
  (<t> numbers the Topology objects of one process)
- root-side    "<prefix><pid>s<n>"  (<= 15 chars, IFNAMSIZ) e.g. oxf1234s1
  (<n> counts links over the whole process; "x<n>" for temporary names)
- inside a host namespace interfaces are called eth0, eth1, ... (private).
`cleanup_stale(prefix)` removes namespaces and root interfaces whose pid is
no longer alive; `Topology()` calls it on entry.

Cleanup always runs: on context exit, on `close()`, and at interpreter exit
(atexit) for whatever is still open. Deleting a namespace destroys the veth
ends inside it and therefore their peers in the root namespace.

Every host namespace gets IPv6 disabled (no router solicitations or
neighbour discovery frames to disturb byte-exact captures) and checksum
offload turned off on both veth ends when ethtool exists (a user-space
switch forwarding over veth otherwise emits frames with partial checksums).
"""

import atexit
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import namedtuple

DEFAULT_PREFIX = "oxf"
# IFNAMSIZ is 16 including the NUL: "<prefix><pid>s<n>" must fit in 15.
_MAX_PREFIX = 4
_IFNAMSIZ = 15

# Objects (topologies, processes) still open, closed at interpreter exit in
# reverse creation order. A list (not a WeakSet): atexit must still see
# objects the caller dropped without closing.
_LIVE = []
_LIVE_LOCK = threading.Lock()

# Process-wide counters: Topology numbers and veth numbers, so several
# topologies in one process never pick the same names.
_TOPO_SEQ = itertools.count(1)
_LINK_SEQ = itertools.count(1)


def _register(obj):
    with _LIVE_LOCK:
        _LIVE.append(obj)


def _unregister(obj):
    with _LIVE_LOCK:
        if obj in _LIVE:
            _LIVE.remove(obj)


@atexit.register
def _close_all():
    with _LIVE_LOCK:
        objs = list(reversed(_LIVE))
    for obj in objs:
        try:
            obj.close()
        except Exception:  # pragma: no cover - best effort at exit
            pass


class CommandError(RuntimeError):
    """A command failed; carries its output."""

    def __init__(self, cmd, proc):
        self.cmd = cmd
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        super().__init__("command %r failed (exit %d): %s%s" % (
            cmd, proc.returncode, proc.stdout or "", proc.stderr or ""))


def sh(cmd, check=True, timeout=30, netns=None, **kwargs):
    """Run `cmd` (list, or str for `sh -c`) in the root namespace or in
    `netns`; return the CompletedProcess (text mode)."""
    argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
    if netns is not None:
        argv = ["ip", "netns", "exec", netns] + argv
    proc = subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, **kwargs)
    if check and proc.returncode != 0:
        raise CommandError(argv, proc)
    return proc


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def list_netns():
    """Names of all named network namespaces."""
    out = sh(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def list_links():
    """Interface names in the root namespace."""
    out = sh(["ip", "-o", "link", "show"], check=False).stdout
    names = []
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def _kill_netns_pids(ns):
    out = sh(["ip", "netns", "pids", ns], check=False).stdout
    for tok in out.split():
        try:
            os.kill(int(tok), signal.SIGKILL)
        except (ValueError, ProcessLookupError):
            pass


def delete_netns(ns):
    _kill_netns_pids(ns)
    sh(["ip", "netns", "del", ns], check=False)


def cleanup_stale(prefix=DEFAULT_PREFIX, include_pid=None):
    """Remove namespaces and root interfaces named by `prefix` whose
    creating pid is dead (or equals include_pid). Returns removed names."""
    ns_re = re.compile(r"^%s(\d+)-" % re.escape(prefix))
    if_re = re.compile(r"^%s(\d+)[sx]\d+$" % re.escape(prefix))
    removed = []
    for ns in list_netns():
        m = ns_re.match(ns)
        if m and (int(m.group(1)) == include_pid
                  or not _pid_alive(int(m.group(1)))):
            delete_netns(ns)
            removed.append(ns)
    for ifname in list_links():
        m = if_re.match(ifname)
        if m and (int(m.group(1)) == include_pid
                  or not _pid_alive(int(m.group(1)))):
            sh(["ip", "link", "del", ifname], check=False)
            removed.append(ifname)
    return removed


def _no_offload(ifname, netns=None):
    if shutil.which("ethtool"):
        sh(["ethtool", "-K", ifname, "tx", "off", "rx", "off"],
           check=False, netns=netns)


def _disable_ipv6(ifname, netns=None):
    sh(["sysctl", "-q", "-w", "net.ipv6.conf.%s.disable_ipv6=1" % ifname],
       check=False, netns=netns)


PingResult = namedtuple("PingResult",
                        "transmitted received loss_pct rtt_avg_ms output")

_PING_COUNTS = re.compile(
    r"(\d+) packets transmitted, (\d+) (?:packets )?received")
_PING_LOSS = re.compile(r"([\d.]+)% packet loss")
_PING_RTT = re.compile(r"= [\d.]+/([\d.]+)/[\d.]+")


def parse_ping(output):
    """PingResult from iputils ping output (rtt_avg_ms None when no reply)."""
    m = _PING_COUNTS.search(output)
    if not m:
        raise ValueError("unrecognised ping output: %r" % output)
    loss = _PING_LOSS.search(output)
    rtt = _PING_RTT.search(output)
    return PingResult(int(m.group(1)), int(m.group(2)),
                      float(loss.group(1)) if loss else None,
                      float(rtt.group(1)) if rtt else None, output)


class Managed:
    """Base of objects with `start()` and `close()` used in a `with`
    block: `close()` also runs when `start()` fails half-way, so nothing
    a failed start created (processes, namespaces, files) outlives it."""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Host:
    """A network namespace acting as an end host."""

    def __init__(self, topo, name, ns):
        self.topo = topo
        self.name = name
        self.ns = ns
        # ifname (inside the namespace) -> {"ip": "10.0.0.1/24", "mac": ..,
        # "peer": root-side name or None}
        self.ifaces = {}

    def __repr__(self):
        return "Host(%s ns=%s)" % (self.name, self.ns)

    def run(self, cmd, check=True, timeout=30, **kwargs):
        """Run cmd in this namespace (see sh())."""
        return sh(cmd, check=check, timeout=timeout, netns=self.ns, **kwargs)

    def popen(self, cmd, **kwargs):
        """subprocess.Popen of cmd (list or str) inside this namespace."""
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        return subprocess.Popen(["ip", "netns", "exec", self.ns] + argv,
                                **kwargs)

    def ping(self, ip, count=1, interval=0.2, timeout=5):
        """Ping ip; returns PingResult (never raises for lost replies)."""
        cmd = ["ping", "-n", "-q", "-c", str(count), "-i", str(interval),
               "-W", str(max(1, int(timeout))), ip]
        proc = self.run(cmd, check=False, timeout=timeout + count * interval
                        + 5)
        return parse_ping(proc.stdout + proc.stderr)

    def ip(self, ifname="eth0"):
        """The address (without prefix length) of ifname."""
        return self.ifaces[ifname]["ip"].split("/")[0]

    def mac(self, ifname="eth0"):
        return self.ifaces[ifname]["mac"]


class Topology:
    """Hosts in namespaces plus veth links; a context manager."""

    def __init__(self, prefix=DEFAULT_PREFIX):
        if not re.fullmatch(r"[a-z][a-z0-9]{0,%d}" % (_MAX_PREFIX - 1),
                            prefix):
            raise ValueError("prefix must be 1-%d lowercase alphanumerics"
                             % _MAX_PREFIX)
        self.prefix = prefix
        self.pid = os.getpid()
        self.hosts = {}
        self.switch_ports = []  # root-side interface names, in order
        self.seq = next(_TOPO_SEQ)
        # Every interface name this topology created in the root namespace
        # (including temporary ones), for close().
        self._created = []
        self._closed = False
        cleanup_stale(prefix)
        _register(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _next_ifname(self, kind):
        name = "%s%d%s%d" % (self.prefix, self.pid, kind, next(_LINK_SEQ))
        if len(name) > _IFNAMSIZ:
            raise ValueError("interface name %s too long" % name)
        self._created.append(name)
        return name

    def add_host(self, name):
        if name in self.hosts:
            raise ValueError("host %s exists" % name)
        ns = "%s%d-%d-%s" % (self.prefix, self.pid, self.seq, name)
        sh(["ip", "netns", "add", ns])
        host = Host(self, name, ns)
        self.hosts[name] = host
        host.run(["ip", "link", "set", "lo", "up"])
        host.run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"],
                 check=False)
        host.run(["sysctl", "-q", "-w",
                  "net.ipv6.conf.default.disable_ipv6=1"], check=False)
        return host

    def _next_host_ifname(self, host):
        i = 0
        while "eth%d" % i in host.ifaces:
            i += 1
        return "eth%d" % i

    def _config_host_end(self, host, tmp, ip, mac):
        ifname = self._next_host_ifname(host)
        sh(["ip", "link", "set", tmp, "netns", host.ns])
        host.run(["ip", "link", "set", tmp, "name", ifname])
        if mac:
            host.run(["ip", "link", "set", ifname, "address", mac])
        if ip:
            host.run(["ip", "addr", "add", ip, "dev", ifname])
        host.run(["ip", "link", "set", ifname, "up"])
        _no_offload(ifname, host.ns)
        mac = host.run(["cat", "/sys/class/net/%s/address" % ifname]
                       ).stdout.strip()
        host.ifaces[ifname] = {"ip": ip, "mac": mac, "peer": None}
        return ifname

    def add_switch_link(self, host, ip=None, mac=None):
        """veth between `host` (next ethN) and the root namespace; returns
        the root-side interface name (up, no IP, IPv6 off) for the switch."""
        root = self._next_ifname("s")
        tmp = self._next_ifname("x")
        sh(["ip", "link", "add", root, "type", "veth", "peer", "name", tmp])
        try:
            _disable_ipv6(root)
            sh(["ip", "link", "set", root, "up"])
            _no_offload(root)
            ifname = self._config_host_end(host, tmp, ip, mac)
        except Exception:
            sh(["ip", "link", "del", root], check=False)
            raise
        host.ifaces[ifname]["peer"] = root
        self.switch_ports.append(root)
        return root

    def link_hosts(self, h1, h2, ip1=None, ip2=None, mac1=None, mac2=None):
        """veth directly between two host namespaces; returns the two
        interface names (in h1, in h2)."""
        a = self._next_ifname("x")
        b = self._next_ifname("x")
        sh(["ip", "link", "add", a, "type", "veth", "peer", "name", b])
        try:
            if1 = self._config_host_end(h1, a, ip1, mac1)
            if2 = self._config_host_end(h2, b, ip2, mac2)
        except Exception:
            sh(["ip", "link", "del", a], check=False)
            sh(["ip", "link", "del", b], check=False)
            raise
        return if1, if2

    def set_link(self, ifname, up, host=None):
        """Bring an interface (root side, or in host) up or down."""
        sh(["ip", "link", "set", ifname, "up" if up else "down"],
           netns=host.ns if host else None)

    def close(self):
        if self._closed:
            return
        self._closed = True
        for host in self.hosts.values():
            delete_netns(host.ns)
        # Root-side ends (and temporaries left by a failure half-way).
        links = set(list_links())
        for ifname in self._created:
            if ifname in links:
                sh(["ip", "link", "del", ifname], check=False)
        _unregister(self)


class Process:
    """A background command with stdout+stderr captured to log_path.

    Runs in its own session (process group), optionally inside a network
    namespace; stop() sends SIGTERM to the group, then SIGKILL after
    `grace` seconds. Context manager: starts on enter, stops on exit.
    """

    def __init__(self, cmd, log_path, env=None, cwd=None, netns=None,
                 name=None):
        self.cmd = list(cmd)
        self.log_path = str(log_path)
        self.env = env
        self.cwd = cwd
        self.netns = netns
        self.name = name or os.path.basename(self.cmd[0])
        self.proc = None
        self._log = None

    def __repr__(self):
        return "Process(%s pid=%s)" % (self.name,
                                       self.proc.pid if self.proc else None)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        argv = self.cmd
        if self.netns:
            argv = ["ip", "netns", "exec", self.netns] + argv
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, env=env, cwd=self.cwd,
            start_new_session=True)
        _register(self)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def _dead_error(self, what):
        return RuntimeError("%s exited (status %s) while waiting for %s; "
                            "log %s:\n%s" % (self.name, self.proc.returncode,
                                             what, self.log_path,
                                             self.log_text()[-4000:]))

    def wait_for_log(self, regex, timeout=10, start=0):
        """Wait until the log matches regex (from byte offset start);
        return the re.Match. Raises TimeoutError or RuntimeError (exited)."""
        pat = re.compile(regex)
        deadline = time.monotonic() + timeout
        while True:
            m = pat.search(self.log_text(), start)
            if m:
                return m
            if not self.running():
                raise self._dead_error("log /%s/" % regex)
            if time.monotonic() > deadline:
                raise TimeoutError("%s: no /%s/ in log %s after %ss:\n%s" % (
                    self.name, regex, self.log_path, timeout,
                    self.log_text()[-4000:]))
            time.sleep(0.05)

    def wait_for_port(self, port, host="127.0.0.1", timeout=10):
        """Wait until a TCP connect to host:port succeeds (in the root
        namespace, or in self.netns)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.netns:
                ok = sh(["bash", "-c", "exec 3<>/dev/tcp/%s/%d" % (host, port)],
                        check=False, netns=self.netns).returncode == 0
            else:
                try:
                    with socket.create_connection((host, port), timeout=1):
                        ok = True
                except OSError:
                    ok = False
            if ok:
                return
            if not self.running():
                raise self._dead_error("tcp %s:%d" % (host, port))
            if time.monotonic() > deadline:
                raise TimeoutError("%s: tcp %s:%d not open after %ss:\n%s" % (
                    self.name, host, port, timeout, self.log_text()[-4000:]))
            time.sleep(0.05)

    def stop(self, grace=5):
        """SIGTERM the process group, SIGKILL after grace; returns the exit
        status of the main process."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        if self._log:
            self._log.close()
            self._log = None
        _unregister(self)
        return self.proc.returncode

    close = stop


def free_tcp_port(host="127.0.0.1"):
    """A currently unused TCP port (may race; good enough for tests)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class OvsSwitch(Managed):
    """A private Open vSwitch instance (user-space netdev datapath, so no
    kernel module), used as a reference switch in tests: its own ovsdb and
    run directory under `workdir`, never touching a system OVS.

        with OvsSwitch(tmp_path, ports=topo.switch_ports,
                       controller="tcp:127.0.0.1:6653") as ovs:
            ovs.vsctl("show")

    The bridge is "br0", OpenFlow 1.3 only, fail-mode secure, out-of-band
    controller connection; ports get OpenFlow numbers 1, 2, ... in order.
    `available()` tells whether the OVS binaries are installed.
    """

    SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"

    @staticmethod
    def available():
        return all(shutil.which(b) for b in (
            "ovsdb-server", "ovsdb-tool", "ovs-vswitchd", "ovs-vsctl",
            "ovs-ofctl")) and os.path.exists(OvsSwitch.SCHEMA)

    def __init__(self, workdir, ports=(), controller=None, dpid=1,
                 netns=None):
        self.dir = os.path.abspath(str(workdir))
        # ovs-vswitchd runs in `netns` (its ports must be there);
        # ovsdb-server, ovs-vsctl and ovs-ofctl reach it through unix
        # sockets from anywhere.
        self.netns = netns
        self.ports = list(ports)
        self.controller = controller
        self.dpid = dpid
        self.db_sock = os.path.join(self.dir, "db.sock")
        self.env = {"OVS_RUNDIR": self.dir, "OVS_DBDIR": self.dir,
                    "OVS_LOGDIR": self.dir, "OVS_SYSCONFDIR": self.dir}
        self.procs = []

    def _run(self, argv, check=True):
        env = dict(os.environ)
        env.update(self.env)
        return sh(argv, check=check, env=env)

    def vsctl(self, *args, check=True):
        return self._run(["ovs-vsctl", "--db=unix:" + self.db_sock,
                          "--timeout=10"] + list(args), check=check)

    def ofctl(self, *args, check=True):
        return self._run(["ovs-ofctl", "-O", "OpenFlow13"] + list(args),
                         check=check)

    def mgmt(self):
        """ovs-ofctl target of br0 (its management socket)."""
        return "unix:" + os.path.join(self.dir, "br0.mgmt")

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        db = os.path.join(self.dir, "conf.db")
        self._run(["ovsdb-tool", "create", db, self.SCHEMA])
        db_proc = Process(
            ["ovsdb-server", db, "--remote=punix:" + self.db_sock,
             "--unixctl=" + os.path.join(self.dir, "ovsdb.ctl"),
             "--no-chdir"], os.path.join(self.dir, "ovsdb.log"),
            env=self.env, name="ovsdb-server").start()
        self.procs.append(db_proc)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.db_sock):
            if not db_proc.running() or time.monotonic() > deadline:
                raise db_proc._dead_error("db socket") if not \
                    db_proc.running() else TimeoutError("ovsdb-server")
            time.sleep(0.05)
        self.vsctl("--no-wait", "init")
        sw = Process(
            ["ovs-vswitchd", "unix:" + self.db_sock,
             "--unixctl=" + os.path.join(self.dir, "vswitchd.ctl"),
             "--no-chdir", "--disable-system"],
            os.path.join(self.dir, "vswitchd.log"), env=self.env,
            netns=self.netns, name="ovs-vswitchd").start()
        self.procs.append(sw)
        args = ["add-br", "br0", "--", "set", "bridge", "br0",
                "datapath_type=netdev", "fail-mode=secure",
                "protocols=OpenFlow13",
                "other-config:datapath-id=%016x" % self.dpid]
        for i, port in enumerate(self.ports, 1):
            args += ["--", "add-port", "br0", port, "--", "set", "interface",
                     port, "ofport_request=%d" % i]
        self.vsctl(*args)
        if self.controller:
            self.vsctl("set-controller", "br0", self.controller, "--", "set",
                       "controller", "br0", "connection-mode=out-of-band")
        return self

    def close(self):
        for proc in reversed(self.procs):
            proc.stop(grace=3)
        self.procs = []
