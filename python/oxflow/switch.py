"""Run the oxflow switch binary in tests and the demo.

    with Topology() as topo:
        ...ports = [topo.add_switch_link(h, ip) for h, ip in ...]
        with Switch(ports, log_path=tmp / "oxflow.log",
                    fail_mode="standalone") as sw:
            print(sw.ctl("dump-flows").stdout)     # oxflow ctl dump-flows TARGET
            assert sw.stop() == 0

`Switch(topology_or_ifaces, ...)` takes a `netns.Topology` (its switch ports,
in creation order, become OpenFlow ports 1, 2, ...) or a list of root-side
interface names. It starts `oxflow run` (foreground, logs to `log_path`)
with a passive listener on 127.0.0.1 (a free TCP port unless `listen` is
given) and waits until that listener accepts connections: the daemon opens
its ports before it listens, so the switch is forwarding by then.

The binary is found by `oxflow_bin()`: $OXFLOW_BIN, else
target/release/oxflow, else target/debug/oxflow (whichever exists, release
first).
"""

import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

from .netns import Process, Topology, free_tcp_port, sh

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def oxflow_bin():
    """Path of the oxflow binary (see module doc); raises FileNotFoundError
    naming the places looked at."""
    env = os.environ.get("OXFLOW_BIN")
    if env:
        if not os.path.exists(env):
            raise FileNotFoundError("OXFLOW_BIN=%s does not exist" % env)
        return env
    tried = []
    for profile in ("release", "debug"):
        path = REPO_ROOT / "target" / profile / "oxflow"
        tried.append(str(path))
        if path.exists():
            return str(path)
    raise FileNotFoundError(
        "no oxflow binary (tried %s): run `cargo build --release -p oxflow` "
        "or set OXFLOW_BIN" % ", ".join(tried))


def ctl(target, *args, check=False, timeout=30):
    """`oxflow ctl ARGS[0] TARGET ARGS[1:]` -> CompletedProcess (text)."""
    if not args:
        raise ValueError("ctl needs a command")
    argv = [oxflow_bin(), "ctl", args[0], target] + [str(a) for a in args[1:]]
    return sh(argv, check=check, timeout=timeout)


_LISTEN_RE = re.compile(r"^ptcp:(\d+)(?::([0-9.]+))?$")


class Switch:
    """An `oxflow run` process (context manager; see module doc).

    Arguments:
    - topology_or_ifaces: a Topology (uses .switch_ports) or interface names.
    - dpid: datapath id (int; None: no --dpid flag, e.g. with a config
      file in extra_args).
    - controllers: active endpoints, e.g. ["tcp:127.0.0.1:6653"].
    - listen: the passive listener "ptcp:PORT[:IP]"; None picks a free port
      on 127.0.0.1. `.target` is the matching "tcp:IP:PORT" for ctl.
    - fail_mode: "secure" or "standalone".
    - trunks: "IFACE=FIRST-LAST" values, one --trunk flag each (logical
      ports IFACE.VID after the ports; docs/trunk.md).
    - extra_args: appended to the command line (e.g. ["--workers", "2"]).
    - log_path: where stdout+stderr go (default: a temp file).
    - wait: wait for the listener on start (default True).
    """

    def __init__(self, topology_or_ifaces, dpid=1, controllers=(),
                 listen=None, fail_mode="secure", extra_args=(),
                 log_path=None, wait=True, log_level="info", trunks=()):
        if isinstance(topology_or_ifaces, Topology):
            self.ifaces = list(topology_or_ifaces.switch_ports)
        else:
            self.ifaces = list(topology_or_ifaces)
        self.dpid = dpid
        self.controllers = list(controllers)
        if listen is None:
            listen = "ptcp:%d:127.0.0.1" % free_tcp_port()
        m = _LISTEN_RE.match(listen)
        if not m:
            raise ValueError("listen must be ptcp:PORT[:IP], got %r" % listen)
        self.listen = listen
        self.port = int(m.group(1))
        self.host = m.group(2) or "127.0.0.1"
        if self.host == "0.0.0.0":
            self.host = "127.0.0.1"
        self.target = "tcp:%s:%d" % (self.host, self.port)
        self.fail_mode = fail_mode
        self.extra_args = [str(a) for a in extra_args]
        self.trunks = [str(t) for t in trunks]
        self.log_level = log_level
        if log_path is None:
            fd, log_path = tempfile.mkstemp(prefix="oxflow-", suffix=".log")
            os.close(fd)
        self.log_path = str(log_path)
        self.wait = wait
        self.proc = None

    def argv(self):
        """The command line `start()` runs."""
        argv = [oxflow_bin(), "run"]
        if self.dpid is not None:
            argv += ["--dpid", str(self.dpid)]
        for iface in self.ifaces:
            argv += ["--port", iface]
        for t in self.trunks:
            argv += ["--trunk", t]
        for c in self.controllers:
            argv += ["--controller", c]
        argv += ["--listen", self.listen]
        if self.fail_mode:
            argv += ["--fail-mode", self.fail_mode]
        if self.log_level:
            argv += ["--log-level", self.log_level]
        return argv + self.extra_args

    def start(self, timeout=15):
        self.proc = Process(self.argv(), self.log_path, name="oxflow")
        self.proc.start()
        if self.wait:
            try:
                self.proc.wait_for_port(self.port, self.host, timeout=timeout)
            except BaseException:
                self.stop()
                raise
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def running(self):
        return self.proc is not None and self.proc.running()

    @property
    def pid(self):
        return self.proc.pid

    def ctl(self, *args, check=False, timeout=30):
        """`oxflow ctl ARGS[0] <target> ARGS[1:]` -> CompletedProcess."""
        return ctl(self.target, *args, check=check, timeout=timeout)

    def wait_for_flows(self, regex, timeout=10, table=None):
        """Poll `dump-flows` until its output matches regex; returns the
        output. Raises TimeoutError with the last output and the log."""
        pat = re.compile(regex)
        args = ["dump-flows"] + (["table=%d" % table] if table is not None
                                 else [])
        deadline = time.monotonic() + timeout
        while True:
            out = self.ctl(*args)
            if out.returncode == 0 and pat.search(out.stdout):
                return out.stdout
            if not self.running():
                raise RuntimeError("oxflow exited (%s):\n%s" % (
                    self.proc.proc.returncode, self.log()[-4000:]))
            if time.monotonic() > deadline:
                raise TimeoutError(
                    "no /%s/ in dump-flows after %ss:\n%s%s\nlog:\n%s" % (
                        regex, timeout, out.stdout, out.stderr,
                        self.log()[-4000:]))
            time.sleep(0.1)

    def wait_for_log(self, regex, timeout=10, start=0):
        return self.proc.wait_for_log(regex, timeout=timeout, start=start)

    def log(self):
        """Everything oxflow logged so far."""
        return self.proc.log_text() if self.proc else ""

    def stop(self, grace=5):
        """SIGTERM (then SIGKILL after grace); returns the exit status."""
        if self.proc is None:
            return None
        return self.proc.stop(grace=grace)


def run_oxflow(*args, timeout=15):
    """Run `oxflow ARGS...` to completion -> CompletedProcess (text)."""
    return subprocess.run([oxflow_bin()] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def controller_process(port, log_path, apps=("oxflow.apps.learning_switch",),
                       env=None, host="127.0.0.1"):
    """A not yet started `netns.Process` running the os-ken launcher
    (`python -m oxflow.controller`) with `apps` on host:port; use it as a
    context manager, then `.wait_for_port(port)`."""
    cmd = [sys.executable, "-m", "oxflow.controller", "--ofp-listen-host",
           host, "--ofp-tcp-listen-port", str(port)]
    for app in apps:
        cmd += ["--app", app]
    full_env = {"PYTHONPATH": str(REPO_ROOT / "python")}
    if env:
        full_env.update(env)
    return Process(cmd, log_path, env=full_env, name="os-ken")
