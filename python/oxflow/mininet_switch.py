"""Mininet switch classes: oxflow, and Open vSwitch's user-space datapath.

From Python:

    from mininet.net import Mininet
    from mininet.node import RemoteController
    from oxflow.mininet_switch import OxflowSwitch

    net = Mininet(topo=..., switch=OxflowSwitch,
                  controller=lambda name: RemoteController(name, port=6653))
    net.start(); net.pingAll(); net.stop()

From the command line (`python/oxflow/mn_custom.py` registers the names):

    mn --custom python/oxflow/mn_custom.py --switch oxflow --topo tree,2 \\
       --controller remote,port=6653

`OxflowSwitch` starts one `oxflow run` per Mininet switch: its interfaces
(Mininet's port numbers, in order) become OpenFlow ports 1, 2, ...; each
controller Mininet hands it becomes `--controller tcp:IP:PORT`; with no
controller (or `failMode='standalone'`) it runs standalone. A passive
listener on 127.0.0.1 (`listenPort`, else a free port) serves `oxflow ctl`
and `dpctl()`. Logs go to `<logdir>/<name>.log` (default /tmp/oxflow-mn).
`stop()` sends SIGTERM and waits (SIGKILL after 5 s).

`UserOvsSwitch` is the reference: Open vSwitch's netdev (user-space)
datapath, which needs no kernel module. All switches of a process share one
private OVS instance (`OvsInstance`: own ovsdb-server and ovs-vswitchd, own
run directory), never a system OVS; each switch is one bridge of it.
The last bridge's `stop()` stops the instance (`UserOvsSwitch.teardown()`
does it at any time).

Both classes take `workers=N` (oxflow: `--workers`) and `extraArgs=[...]`
(oxflow: appended to its command line); `OxflowSwitch` also takes
`pollSpinUs=N` (`--poll-spin-us`: microseconds an idle worker keeps
polling after its last frame before it blocks in poll(2), 0 = at once;
None, the default, keeps oxflow's). `dpctl()` runs `oxflow ctl` against
the listener, or `ovs-ofctl` against the bridge's management socket.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from mininet.log import error, info
from mininet.node import Switch

from oxflow.netns import OvsSwitch as _OvsCheck
from oxflow.netns import free_tcp_port
from oxflow.switch import oxflow_bin

DEFAULT_LOGDIR = "/tmp/oxflow-mn"


def _port_open(port, host="127.0.0.1", timeout=0.2):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _controller_endpoints(controllers):
    """Mininet controller objects -> ["tcp:IP:PORT", ...]."""
    out = []
    for c in controllers:
        proto = getattr(c, "protocol", "tcp") or "tcp"
        out.append("%s:%s:%d" % (proto, c.IP(), c.port))
    return out


def _stop_process(proc, grace=5):
    if proc is None or proc.poll() is not None:
        return None if proc is None else proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(timeout=grace)


class OxflowSwitch(Switch):
    """One `oxflow run` process per Mininet switch (see module doc)."""

    def __init__(self, name, failMode="secure", logdir=DEFAULT_LOGDIR,
                 workers=1, extraArgs=(), logLevel="warn", pollSpinUs=None,
                 **params):
        Switch.__init__(self, name, **params)
        self.failMode = failMode
        self.logdir = logdir
        self.workers = workers
        self.extraArgs = [str(a) for a in extraArgs]
        self.logLevel = logLevel
        # µs an idle worker polls after its last frame (`oxflow run
        # --poll-spin-us`); None: oxflow's default.
        self.pollSpinUs = pollSpinUs
        self.proc = None
        self.logfile = None

    @classmethod
    def setup(cls):
        try:
            oxflow_bin()
        except FileNotFoundError as exc:
            error("*** %s\n" % exc)
            raise

    def ports_in_order(self):
        """The data interfaces, ordered by Mininet port number."""
        intfs = [i for i in self.intfList() if i.name != "lo"]
        return sorted(intfs, key=lambda i: self.ports[i])

    def argv(self, controllers):
        if self.listenPort is None:
            self.listenPort = free_tcp_port()
        argv = [oxflow_bin(), "run", "--dpid", "0x" + self.dpid]
        for intf in self.ports_in_order():
            argv += ["--port", intf.name]
        fail_mode = self.failMode if controllers else "standalone"
        for ep in _controller_endpoints(controllers):
            argv += ["--controller", ep]
        argv += ["--listen", "ptcp:%d:127.0.0.1" % self.listenPort,
                 "--fail-mode", fail_mode, "--log-level", self.logLevel]
        if self.workers:
            argv += ["--workers", str(self.workers)]
        if self.pollSpinUs is not None:
            argv += ["--poll-spin-us", str(int(self.pollSpinUs))]
        return argv + self.extraArgs

    def start(self, controllers):
        # Everything runs through the node's own cmd()/popen(), so the same
        # class works on a remote machine under Mininet's cluster mix-in
        # (oxflow.dccluster); the log file stays on this machine.
        os.makedirs(self.logdir, exist_ok=True)
        for intf in self.ports_in_order():
            # A user-space switch sees frames before the kernel fills in
            # offloaded checksums: switch offloads off on its ports.
            self.cmd("ethtool -K %s tx off rx off >/dev/null 2>&1; "
                     "ip link set %s up" % (intf.name, intf.name))
        argv = self.argv(controllers)
        path = os.path.join(self.logdir, "%s.log" % self.name)
        self.logfile = path
        with open(path, "ab") as log:
            log.write(("# %s\n" % " ".join(argv)).encode())
            log.flush()
            # mnexec without -d: with -d it forks when it leads its process
            # group (Mininet's cluster mix-in makes it so), and the Popen
            # would then hold a parent that exited, not oxflow.
            self.proc = self.popen(argv, stdout=log, stderr=log,
                                   stdin=subprocess.DEVNULL,
                                   mncmd=["mnexec", "-a", str(self.pid)])
        deadline = time.monotonic() + 15
        while not self.listening():
            if self.proc.poll() is not None:
                raise RuntimeError("oxflow for %s exited (%s); log %s:\n%s" % (
                    self.name, self.proc.returncode, path, self.log()[-2000:]))
            if time.monotonic() > deadline:
                raise TimeoutError("oxflow for %s: no listener on %d after "
                                   "15 s (log %s)" % (self.name,
                                                      self.listenPort, path))
            time.sleep(0.05)

    def log(self):
        if not self.logfile or not os.path.exists(self.logfile):
            return ""
        with open(self.logfile, errors="replace") as f:
            return f.read()

    def target(self):
        return "tcp:127.0.0.1:%d" % self.listenPort

    def listening(self):
        """Whether the passive listener accepts (checked where the switch
        runs, so also on a remote machine)."""
        if not getattr(self, "isRemote", False):
            return _port_open(self.listenPort)
        out = self.cmd("%s ctl show %s >/dev/null 2>&1; echo rc=$?" % (
            oxflow_bin(), self.target()))
        return "rc=0" in out

    def dpctl(self, *args):
        """`oxflow ctl ARGS[0] <listener> ARGS[1:]` -> its output."""
        if not args:
            raise ValueError("dpctl needs a command")
        proc = subprocess.run([oxflow_bin(), "ctl", args[0], self.target()]
                              + [str(a) for a in args[1:]],
                              capture_output=True, text=True, timeout=30)
        return proc.stdout + proc.stderr

    def connected(self):
        """True while the switch runs and its listener answers (oxflow
        forwards from then on, standalone or under its controller)."""
        return (self.proc is not None and self.proc.poll() is None
                and self.listening())

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, deleteIntfs=True):
        _stop_process(self.proc)
        self.proc = None
        Switch.stop(self, deleteIntfs)


class OvsInstance:
    """A private ovsdb-server + ovs-vswitchd (user-space datapath only) in
    `workdir`; `vsctl()` talks to its database."""

    def __init__(self, workdir):
        self.dir = os.path.abspath(workdir)
        self.db_sock = os.path.join(self.dir, "db.sock")
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_DBDIR=self.dir,
                        OVS_LOGDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.procs = []

    def _run(self, argv, check=True):
        proc = subprocess.run(argv, env=self.env, capture_output=True,
                              text=True, timeout=60)
        if check and proc.returncode != 0:
            raise RuntimeError("%s failed (%d): %s%s" % (
                " ".join(argv), proc.returncode, proc.stdout, proc.stderr))
        return proc

    def vsctl(self, *args, check=True):
        return self._run(["ovs-vsctl", "--db=unix:" + self.db_sock,
                          "--timeout=20"] + [str(a) for a in args],
                         check=check)

    def _spawn(self, argv, logname):
        log = open(os.path.join(self.dir, logname), "ab")
        proc = subprocess.Popen(argv, env=self.env, stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        db = os.path.join(self.dir, "conf.db")
        if os.path.exists(db):
            os.unlink(db)
        self._run(["ovsdb-tool", "create", db, _OvsCheck.SCHEMA])
        db_proc = self._spawn(
            ["ovsdb-server", db, "--remote=punix:" + self.db_sock,
             "--unixctl=" + os.path.join(self.dir, "ovsdb.ctl"),
             "--no-chdir"], "ovsdb.log")
        deadline = time.monotonic() + 10
        while not os.path.exists(self.db_sock):
            if db_proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("private ovsdb-server did not start "
                                   "(see %s/ovsdb.log)" % self.dir)
            time.sleep(0.05)
        self.vsctl("--no-wait", "init")
        self._spawn(["ovs-vswitchd", "unix:" + self.db_sock,
                     "--unixctl=" + os.path.join(self.dir, "vswitchd.ctl"),
                     "--no-chdir", "--disable-system"], "vswitchd.log")
        return self

    def stop(self):
        for proc in reversed(self.procs):
            _stop_process(proc, grace=3)
        self.procs = []


class UserOvsSwitch(Switch):
    """A bridge of the shared private user-space OVS (see module doc)."""

    instance = None
    workdir = None
    # names of the bridges started in the shared instance; the last
    # bridge's stop() stops the instance too (so `mn` leaves nothing)
    bridges = set()

    def __init__(self, name, failMode="secure", **params):
        params.pop("workers", None)
        params.pop("extraArgs", None)
        params.pop("logdir", None)
        Switch.__init__(self, name, **params)
        self.failMode = failMode

    @classmethod
    def setup(cls):
        if not _OvsCheck.available():
            raise RuntimeError(
                "Open vSwitch is not installed (ovsdb-server, ovs-vswitchd, "
                "ovs-vsctl, ovs-ofctl and %s): run scripts/setup.sh" %
                _OvsCheck.SCHEMA)
        if cls.instance is None:
            workdir = cls.workdir or tempfile.mkdtemp(prefix="oxflow-mn-ovs-")
            cls.instance = OvsInstance(workdir).start()

    @classmethod
    def teardown(cls):
        if cls.instance is not None:
            cls.instance.stop()
            cls.instance = None

    def start(self, controllers):
        self.setup()
        intfs = sorted((i for i in self.intfList() if i.name != "lo"),
                       key=lambda i: self.ports[i])
        args = ["--may-exist", "add-br", self.name, "--", "set", "bridge",
                self.name, "datapath_type=netdev",
                "fail-mode=%s" % (self.failMode if controllers
                                  else "standalone"),
                "protocols=OpenFlow13",
                "other-config:datapath-id=%s" % self.dpid]
        for intf in intfs:
            subprocess.run(["ethtool", "-K", intf.name, "tx", "off", "rx",
                            "off"], capture_output=True)
            subprocess.run(["ip", "link", "set", intf.name, "up"],
                           capture_output=True)
            args += ["--", "add-port", self.name, intf.name, "--", "set",
                     "interface", intf.name,
                     "ofport_request=%d" % self.ports[intf]]
        self.instance.vsctl(*args)
        UserOvsSwitch.bridges.add(self.name)
        targets = _controller_endpoints(controllers)
        if targets:
            ids = ["@c%d" % i for i in range(len(targets))]
            args = []
            for cid, target in zip(ids, targets):
                args += ["--", "--id=" + cid, "create", "Controller",
                         "target=\"%s\"" % target,
                         "connection-mode=out-of-band"]
            args += ["--", "set", "bridge", self.name,
                     "controller=[%s]" % ",".join(ids)]
            self.instance.vsctl(*args)

    def target(self):
        """ovs-ofctl's way in: the bridge's management socket."""
        return "unix:" + os.path.join(self.instance.dir, self.name + ".mgmt")

    def dpctl(self, *args):
        proc = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", args[0],
                               self.target()] + [str(a) for a in args[1:]],
                              capture_output=True, text=True, timeout=30)
        return proc.stdout + proc.stderr

    def connected(self):
        return self.instance is not None and os.path.exists(
            self.target()[len("unix:"):])

    def stop(self, deleteIntfs=True):
        if self.instance is not None:
            self.instance.vsctl("--if-exists", "del-br", self.name,
                                check=False)
        UserOvsSwitch.bridges.discard(self.name)
        if not UserOvsSwitch.bridges:
            self.teardown()
        Switch.stop(self, deleteIntfs)


def require_mininet_tools():
    """Raise RuntimeError naming what is missing for Mininet runs."""
    missing = [b for b in ("mnexec", "tc", "ip", "ethtool")
               if shutil.which(b) is None]
    if missing:
        raise RuntimeError("missing %s: install Mininet and iproute2 "
                           "(scripts/setup.sh)" % ", ".join(missing))
    info("")


SWITCHES = {"oxflow": OxflowSwitch, "ovsuser": UserOvsSwitch}
