"""The HARMLESS manager: `oxflow harmless up|down|status --config FILE`.

`up` migrates access ports of one or more legacy switches to OpenFlow:
for each legacy switch it downloads and stores the running configuration
(NAPALM `get_config`), gives every migrated access port its own VLAN and
makes the trunk carry them (NAPALM merge + commit), then starts the
software side on the server:

- mode "trunk": `oxflow run --trunk NIC=FIRST-LAST ...` (one `--trunk`
  per legacy switch), connected to the controller;
- mode "proxy": a private user-space Open vSwitch with only the trunk NIC
  (OpenFlow port 1), connected to `oxflow harmless proxy`, connected to
  the controller.

`down` stops the software side; `down --restore` also puts every legacy
switch back to its stored configuration and checks that the running
configuration is byte-identical to the backup. `status` reports the
processes and each legacy switch's state.

Anything that goes wrong during `up` undoes what was done (legacy switches
restored from their backups, started processes stopped) and says so; the
configuration file is checked completely before anything is touched.

The topology file (TOML, or YAML with the same structure):

    mode = "trunk"                  # (the default) or "proxy"
    controller = "127.0.0.1:6653"   # HOST:PORT of the OpenFlow controller
    state_dir = "harmless-state"    # backups, logs, pids (relative to
                                    # the file)

    [server]
    nic = "eth1"                    # where the trunk arrives
    netns = "sv"                    # optional: run the software side there
    listen = "127.0.0.1:6654"       # proxy: where the OVS meets the proxy;
                                    # trunk: oxflow's management listener
    dpid = "0x4d"                   # optional datapath id

    [[legacy]]
    name = "legacy1"
    driver = "ovslegacy"            # a NAPALM driver name, or "module:Class"
    host = "/path/to/db.sock"       # what the driver connects to
    username = ""
    password = ""
    optional_args = {}
    timeout = 10
    trunk = "ge-0/0/48"             # the legacy switch's port to the server
    access = ["ge-0/0/1", "ge-0/0/2"]   # the ports to migrate, in order
    vlans = "101-102"               # one VLAN per access port, in order
    nic = "eth1"                    # optional: this switch's server NIC

The state file (STATE_DIR/state.json) records the mode, the processes
started (pid, pid file or command) and each legacy switch's backup.
"""

import argparse
import importlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

STATE_FILE = "state.json"
MODES = ("trunk", "proxy")


class ManagerError(RuntimeError):
    """A failure with a message for the user (exit status 1)."""


class ConfigError(ManagerError):
    """A topology file that is wrong; says where."""


# --- the topology file -------------------------------------------------------

def load_file(path):
    """The topology file as a dict (TOML or YAML by extension; else TOML,
    then YAML)."""
    text = pathlib.Path(path).read_text()
    ext = pathlib.Path(path).suffix.lower()

    def as_toml():
        import tomllib
        return tomllib.loads(text)

    def as_yaml():
        import yaml
        data = yaml.safe_load(text)
        if not isinstance(data, dict):
            raise ConfigError("%s: not a mapping at the top" % path)
        return data

    try:
        if ext in (".yaml", ".yml"):
            return as_yaml()
        if ext == ".toml":
            return as_toml()
        try:
            return as_toml()
        except Exception:
            return as_yaml()
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError("%s: cannot parse: %s" % (path, e)) from e


def parse_vlans(text, where):
    """'101-110' or '7' -> (first, last), ids 1..4094."""
    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", str(text))
    if not m:
        raise ConfigError("%s: %r is not FIRST-LAST" % (where, text))
    a = int(m.group(1))
    b = int(m.group(2) or a)
    for v in (a, b):
        if not 1 <= v <= 4094:
            raise ConfigError("%s: VLAN %d is outside 1-4094" % (where, v))
    if a > b:
        raise ConfigError("%s: %r: the first VLAN is above the last"
                          % (where, text))
    return a, b


def _need(d, key, where, kind=str):
    if key not in d:
        raise ConfigError("%s: %s is missing" % (where, key))
    v = d[key]
    if not isinstance(v, kind):
        raise ConfigError("%s.%s: want %s, got %r"
                          % (where, key, kind.__name__, v))
    return v


def check_config(data, path):
    """The validated configuration: a dict with the defaults filled in.
    Raises ConfigError naming the file and the key."""
    where = str(path)
    mode = data.get("mode", "trunk")
    if mode not in MODES:
        raise ConfigError("%s: mode %r: want one of %s"
                          % (where, mode, ", ".join(MODES)))
    controller = _need(data, "controller", where)
    if not re.fullmatch(r"[^\s:]+:\d{1,5}", controller):
        raise ConfigError("%s: controller %r: want HOST:PORT"
                          % (where, controller))
    server = data.get("server", {})
    if not isinstance(server, dict):
        raise ConfigError("%s: server: want a table" % where)
    nic = _need(server, "nic", where + ": server")
    base = pathlib.Path(path).resolve().parent
    state_dir = base / data.get("state_dir", "harmless-state")
    legacies = data.get("legacy")
    if not isinstance(legacies, list) or not legacies:
        raise ConfigError("%s: no [[legacy]] switch" % where)
    out = []
    names = set()
    used = []           # (first, last, name, nic)
    for i, lg in enumerate(legacies):
        w = "%s: legacy[%d]" % (where, i)
        if not isinstance(lg, dict):
            raise ConfigError("%s: want a table" % w)
        name = lg.get("name", "legacy%d" % i)
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", str(name)) or name in names:
            raise ConfigError("%s: name %r: want a unique word" % (w, name))
        names.add(name)
        w = "%s (%s)" % (w, name)
        access = _need(lg, "access", w, list)
        if not access or not all(isinstance(p, str) for p in access):
            raise ConfigError("%s: access: want a list of port names" % w)
        if len(set(access)) != len(access):
            raise ConfigError("%s: access: a port is listed twice" % w)
        trunk = _need(lg, "trunk", w)
        if trunk in access:
            raise ConfigError("%s: trunk %s is also an access port"
                              % (w, trunk))
        first, last = parse_vlans(_need(lg, "vlans", w), w + ".vlans")
        if last - first + 1 != len(access):
            raise ConfigError(
                "%s: vlans %d-%d are %d VLANs for %d access ports (one "
                "each)" % (w, first, last, last - first + 1, len(access)))
        lg_nic = lg.get("nic", nic)
        for (a, b, other, other_nic) in used:
            if first <= b and a <= last:
                raise ConfigError(
                    "%s: vlans %d-%d overlap %s's %d-%d"
                    % (w, first, last, other, a, b))
        used.append((first, last, name, lg_nic))
        out.append({
            "name": name, "driver": lg.get("driver", "ovslegacy"),
            "host": _need(lg, "host", w),
            "username": lg.get("username", ""),
            "password": lg.get("password", ""),
            "optional_args": lg.get("optional_args", {}) or {},
            "timeout": int(lg.get("timeout", 10)),
            "trunk": trunk, "access": list(access),
            "first": first, "last": last, "nic": lg_nic})
    if mode == "proxy":
        nics = {lg["nic"] for lg in out}
        spans = sorted((lg["first"], lg["last"]) for lg in out)
        contiguous = all(spans[k][1] + 1 == spans[k + 1][0]
                         for k in range(len(spans) - 1))
        if len(nics) != 1 or not contiguous:
            raise ConfigError(
                "%s: mode proxy serves one trunk NIC and one contiguous "
                "VLAN range (have NICs %s, VLANs %s); use mode trunk for "
                "more" % (where, ", ".join(sorted(nics)),
                          ", ".join("%d-%d" % s for s in spans)))
    listen = server.get("listen", "127.0.0.1:6654" if mode == "proxy"
                        else "127.0.0.1:6634")
    return {"mode": mode, "controller": controller, "nic": nic,
            "netns": server.get("netns"), "listen": listen,
            "dpid": str(server.get("dpid", "0x4d")),
            "oxflow": data.get("oxflow"),
            "state_dir": str(state_dir), "legacy": out, "path": str(path)}


# --- NAPALM ------------------------------------------------------------------

def driver_class(name):
    """A NAPALM driver class: "ovslegacy" (ours), "module:Class", or a
    name napalm.get_network_driver knows."""
    if name == "ovslegacy":
        from oxflow.harmless.napalm_ovslegacy import OvsLegacyDriver
        return OvsLegacyDriver
    if ":" in name:
        mod, _, cls = name.partition(":")
        return getattr(importlib.import_module(mod), cls)
    import napalm
    return napalm.get_network_driver(name)


def open_device(lg):
    try:
        cls = driver_class(lg["driver"])
    except Exception as e:
        raise ManagerError("%s: no NAPALM driver %r: %s"
                           % (lg["name"], lg["driver"], e)) from e
    dev = cls(lg["host"], lg["username"], lg["password"],
              timeout=lg["timeout"], optional_args=lg["optional_args"])
    try:
        dev.open()
    except Exception as e:
        raise ManagerError("%s (%s): unreachable or refusing: %s"
                           % (lg["name"], lg["host"], e)) from e
    return dev


def trunk_vlans(cfg, lg):
    """The VLAN ranges `lg`'s trunk carries: its own plus those of the
    entries before it on the same device and trunk (port subsets of one
    switch migrated as separate entries share the trunk)."""
    spans = []
    for other in cfg["legacy"]:
        if (other["host"], other["trunk"]) == (lg["host"], lg["trunk"]):
            spans.append((other["first"], other["last"]))
        if other is lg:
            break
    return ",".join("%d-%d" % s for s in sorted(spans))


def migration_config(lg, allowed=None):
    """The merge candidate: each access port on its VLAN, the trunk
    carrying `allowed` (default: the entry's own range)."""
    lines = []
    for i, port in enumerate(lg["access"]):
        lines += ["interface %s" % port, " switchport mode access",
                  " switchport access vlan %d" % (lg["first"] + i), "!"]
    lines += ["interface %s" % lg["trunk"], " switchport mode trunk",
              " switchport trunk allowed vlan %s"
              % (allowed or "%d-%d" % (lg["first"], lg["last"])),
              "!", "end"]
    return "\n".join(lines) + "\n"


def restore(dev, backup):
    """Replace the running configuration with `backup`; True when the
    result is byte-identical."""
    dev.load_replace_candidate(config=backup)
    dev.commit_config()
    return dev.get_config(retrieve="running")["running"] == backup


# --- processes ---------------------------------------------------------------

def _in_ns(argv, netns):
    return (["ip", "netns", "exec", netns] + argv) if netns else argv


def spawn(argv, log, netns=None, env=None):
    """A detached background process (own session), output to `log`;
    its pid."""
    e = dict(os.environ)
    e.update(env or {})
    with open(log, "ab") as f:
        proc = subprocess.Popen(_in_ns(argv, netns), stdout=f,
                                stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=e,
                                start_new_session=True)
    return proc.pid


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


def stop_pid(pid, grace=5.0):
    """SIGTERM (its process group when it leads one), then SIGKILL."""
    if not alive(pid):
        return
    try:
        pgid = os.getpgid(pid)
        target = -pgid if pgid == pid else pid
        os.kill(target, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while alive(pid) and time.monotonic() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    if alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_log(path, regex, pid, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = pathlib.Path(path).read_text(errors="replace") \
            if os.path.exists(path) else ""
        if re.search(regex, text):
            return
        if not alive(pid):
            raise ManagerError("%s exited: %s" % (path, text[-800:]))
        time.sleep(0.1)
    raise ManagerError("timed out waiting for %r in %s" % (regex, path))


def oxflow_binary(cfg):
    if cfg.get("oxflow"):
        return cfg["oxflow"]
    from oxflow.switch import oxflow_bin
    return oxflow_bin()


def trunk_supported(binary):
    """Whether `oxflow run` of `binary` has --trunk."""
    proc = subprocess.run([binary, "run", "--help"], capture_output=True,
                          text=True)
    return "--trunk" in proc.stdout


OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"


def start_ovs(cfg, run):
    """The trunk-only OpenFlow switch: a private user-space OVS in
    STATE/ovs (daemons detached, pid files there), bridge br0 with the
    trunk NIC as port 1, connected to the proxy. Adds its pid files to
    `run`."""
    d = os.path.join(cfg["state_dir"], "ovs")
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d,
               OVS_SYSCONFDIR=d)
    db = os.path.join(d, "conf.db")
    sock = os.path.join(d, "db.sock")
    if os.path.exists(db):
        os.unlink(db)

    def sh(argv, netns=None):
        p = subprocess.run(_in_ns(argv, netns), capture_output=True,
                           text=True, env=env, timeout=60)
        if p.returncode != 0:
            raise ManagerError("%s: %s" % (" ".join(argv),
                                           p.stderr.strip()))
        return p

    sh(["ovsdb-tool", "create", db, OVS_SCHEMA])
    sh(["ovsdb-server", db, "--remote=punix:" + sock,
        "--unixctl=" + os.path.join(d, "ovsdb.ctl"), "--no-chdir",
        "--detach", "--pidfile=" + os.path.join(d, "ovsdb.pid"),
        "--log-file=" + os.path.join(d, "ovsdb.log")])
    run["pidfiles"].append(os.path.join(d, "ovsdb.pid"))
    vsctl = ["ovs-vsctl", "--db=unix:" + sock, "--timeout=10"]
    sh(vsctl + ["--no-wait", "init"])
    sh(["ovs-vswitchd", "unix:" + sock,
        "--unixctl=" + os.path.join(d, "vswitchd.ctl"), "--no-chdir",
        "--disable-system", "--detach",
        "--pidfile=" + os.path.join(d, "vswitchd.pid"),
        "--log-file=" + os.path.join(d, "vswitchd.log")], cfg["netns"])
    run["pidfiles"].insert(0, os.path.join(d, "vswitchd.pid"))
    dpid = int(cfg["dpid"], 0)
    sh(vsctl + ["add-br", "br0", "--", "set", "bridge", "br0",
                "datapath_type=netdev", "fail-mode=secure",
                "protocols=OpenFlow13",
                "other-config:datapath-id=%016x" % dpid,
                "--", "add-port", "br0", cfg["nic"], "--", "set",
                "interface", cfg["nic"], "ofport_request=1"])
    sh(vsctl + ["set-controller", "br0", "tcp:" + cfg["listen"], "--",
                "set", "controller", "br0", "connection-mode=out-of-band"])
    run["ovs_dir"] = d


def preflight(cfg):
    """Checks, before any device is touched, that the software side can
    start: the oxflow binary and what the mode needs of it, Open vSwitch
    for the proxy, the server NICs. Raises ManagerError."""
    try:
        binary = oxflow_binary(cfg)
    except FileNotFoundError as e:
        raise ManagerError(str(e)) from e
    if not os.access(binary, os.X_OK):
        raise ManagerError("oxflow binary %s is not executable" % binary)
    if cfg["mode"] == "proxy":
        p = subprocess.run([binary, "harmless", "proxy", "--help"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise ManagerError("%s has no `harmless proxy`" % binary)
        import shutil
        missing = [b for b in ("ovsdb-tool", "ovsdb-server", "ovs-vswitchd",
                               "ovs-vsctl") if not shutil.which(b)]
        if missing or not os.path.exists(OVS_SCHEMA):
            raise ManagerError("mode proxy needs Open vSwitch (missing: %s)"
                               % ", ".join(missing or [OVS_SCHEMA]))
    elif not trunk_supported(binary):
        raise ManagerError("%s run has no --trunk: mode trunk needs an "
                           "oxflow with trunk ports" % binary)
    for nic in sorted({lg["nic"] for lg in cfg["legacy"]}):
        p = subprocess.run(_in_ns(["ip", "link", "show", nic],
                                  cfg["netns"]), capture_output=True,
                           text=True)
        if p.returncode != 0:
            raise ManagerError("server NIC %s not found%s" % (
                nic, " in namespace %s" % cfg["netns"] if cfg["netns"]
                else ""))
    return binary


def start_software(cfg, run):
    """Starts the software side; records what it started in `run`."""
    binary = oxflow_binary(cfg)
    sd = cfg["state_dir"]
    if cfg["mode"] == "proxy":
        first = min(lg["first"] for lg in cfg["legacy"])
        last = max(lg["last"] for lg in cfg["legacy"])
        log = os.path.join(sd, "proxy.log")
        pid = spawn([binary, "harmless", "proxy", "--listen", cfg["listen"],
                     "--controller", cfg["controller"], "--trunk-port", "1",
                     "--vlans", "%d-%d" % (first, last)], log, cfg["netns"])
        run["pids"].append({"name": "proxy", "pid": pid, "log": log})
        wait_log(log, r"listening on", pid)
        start_ovs(cfg, run)
    else:
        if not trunk_supported(binary):
            raise ManagerError("%s run has no --trunk: mode trunk needs an "
                               "oxflow with trunk ports" % binary)
        # fail-mode secure as the proxy's Open vSwitch: without the
        # controller nothing is forwarded (standalone would bridge the
        # access VLANs the migration separated)
        argv = [binary, "run", "--controller", "tcp:" + cfg["controller"],
                "--listen", "ptcp:" + cfg["listen"], "--dpid", cfg["dpid"],
                "--fail-mode", "secure"]
        for t in trunk_flags(cfg):
            argv += ["--trunk", t]
        log = os.path.join(sd, "oxflow.log")
        pid = spawn(argv, log, cfg["netns"])
        run["pids"].append({"name": "oxflow", "pid": pid, "log": log})
        wait_port(cfg["listen"], pid, cfg["netns"], log)


def trunk_flags(cfg):
    """The `--trunk NIC=FIRST-LAST` values for mode trunk, one per entry
    in order, except that an entry continuing the previous one's range on
    the same NIC extends it (same logical port numbers, one trunk)."""
    spans = []      # [nic, first, last]
    for lg in cfg["legacy"]:
        if spans and spans[-1][0] == lg["nic"] and \
                spans[-1][2] + 1 == lg["first"]:
            spans[-1][2] = lg["last"]
        else:
            spans.append([lg["nic"], lg["first"], lg["last"]])
    return ["%s=%d" % (n, a) if a == b else "%s=%d-%d" % (n, a, b)
            for n, a, b in spans]


def wait_port(hostport, pid, netns, log, timeout=20):
    """Until process `pid` listens on TCP HOST:PORT (its own listener:
    another program on that port does not count)."""
    port = int(hostport.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = subprocess.run(_in_ns(["ss", "-Hltnp", "sport = :%d" % port],
                                  netns), capture_output=True, text=True)
        if "pid=%d," % pid in p.stdout:
            return
        if not alive(pid):
            text = pathlib.Path(log).read_text(errors="replace")
            raise ManagerError("oxflow exited: %s" % text[-800:])
        time.sleep(0.1)
    raise ManagerError("oxflow does not listen on %s" % hostport)


def stop_software(run):
    for p in run.get("pids", []):
        stop_pid(p["pid"])
    for pf in run.get("pidfiles", []):
        try:
            pid = int(pathlib.Path(pf).read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        stop_pid(pid)


# --- the commands ------------------------------------------------------------

def state_path(cfg):
    return os.path.join(cfg["state_dir"], STATE_FILE)


def read_state(cfg):
    try:
        with open(state_path(cfg)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def write_state(cfg, state):
    tmp = state_path(cfg) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, state_path(cfg))


def _say(out, msg):
    print(msg, file=out)
    out.flush()


def up(cfg, out=sys.stdout):
    """Migrates the legacy switches and starts the software side; on any
    failure undoes everything and raises ManagerError saying what was
    undone."""
    if read_state(cfg):
        raise ManagerError("already up (%s); run `down` first"
                           % state_path(cfg))
    try:
        preflight(cfg)
    except ManagerError as e:
        raise ManagerError("up failed: %s; nothing was changed" % e) from e
    os.makedirs(os.path.join(cfg["state_dir"], "backups"), exist_ok=True)
    done = []       # (lg, dev, backup) of switches changed so far
    run = {"pids": [], "pidfiles": []}
    try:
        for lg in cfg["legacy"]:
            dev = open_device(lg)
            try:
                backup = dev.get_config(retrieve="running")["running"]
                bfile = os.path.join(cfg["state_dir"], "backups",
                                     lg["name"] + ".cfg")
                with open(bfile, "w") as f:
                    f.write(backup)
                _say(out, "%s: running configuration saved to %s (%d bytes)"
                     % (lg["name"], bfile, len(backup)))
                if hasattr(dev, "get_interfaces"):
                    have = set(dev.get_interfaces())
                    missing = [p for p in lg["access"] + [lg["trunk"]]
                               if p not in have]
                    if missing:
                        raise ManagerError("%s: no such port(s) on the "
                                           "device: %s" % (
                                               lg["name"],
                                               ", ".join(missing)))
                dev.load_merge_candidate(
                    config=migration_config(lg, trunk_vlans(cfg, lg)))
                done.append((lg, dev, backup))
                dev.commit_config()
            except BaseException:
                if not done or done[-1][1] is not dev:
                    dev.close()
                raise
            _say(out, "%s: access ports %s on VLANs %d-%d, trunk %s"
                 % (lg["name"], ", ".join(lg["access"]), lg["first"],
                    lg["last"], lg["trunk"]))
        start_software(cfg, run)
    except BaseException as e:
        stop_software(run)
        undone = []
        for lg, dev, backup in reversed(done):
            try:
                same = restore(dev, backup)
                undone.append("%s restored from its backup (%s)" % (
                    lg["name"], "byte-identical" if same else
                    "BUT IT DIFFERS from the backup"))
            except Exception as e2:
                undone.append("%s NOT restored: %s" % (lg["name"], e2))
            finally:
                dev.close()
        what = "; ".join(undone) or "nothing had been changed"
        if isinstance(e, ManagerError):
            raise ManagerError("up failed: %s; rolled back: %s" % (e, what)) \
                from e
        raise ManagerError("up failed: %s: %s; rolled back: %s"
                           % (type(e).__name__, e, what)) from e
    for _, dev, _ in done:
        dev.close()
    state = {"config": cfg["path"], "mode": cfg["mode"],
             "started": time.time(), "run": run,
             "legacy": [{"name": lg["name"],
                         "backup": os.path.join(cfg["state_dir"], "backups",
                                                lg["name"] + ".cfg")}
                        for lg in cfg["legacy"]]}
    write_state(cfg, state)
    _say(out, "up: mode %s, %d logical ports, controller %s"
         % (cfg["mode"], sum(len(lg["access"]) for lg in cfg["legacy"]),
            cfg["controller"]))
    return state


def down(cfg, restore_legacy=False, out=sys.stdout):
    """Stops the software side; with `restore_legacy`, puts every legacy
    switch back to its backup (byte-identical check). Returns True when
    everything restored identically."""
    state = read_state(cfg)
    if not state:
        raise ManagerError("not up (no %s)" % state_path(cfg))
    stop_software(state["run"])
    _say(out, "software side stopped")
    ok = True
    if restore_legacy:
        by_name = {lg["name"]: lg for lg in cfg["legacy"]}
        # Last first: an entry's backup may hold an earlier entry's changes
        # (port subsets of one switch).
        for rec in reversed(state["legacy"]):
            lg = by_name.get(rec["name"])
            if lg is None:
                raise ManagerError("%s is in the state but not in %s"
                                   % (rec["name"], cfg["path"]))
            backup = pathlib.Path(rec["backup"]).read_text()
            dev = open_device(lg)
            try:
                same = restore(dev, backup)
            finally:
                dev.close()
            ok = ok and same
            _say(out, "%s: restored from %s: %s" % (
                rec["name"], rec["backup"],
                "byte-identical" if same else "DIFFERS from the backup"))
    os.unlink(state_path(cfg))
    return ok


def status(cfg, out=sys.stdout):
    """Prints the state; returns True when up and every process runs."""
    state = read_state(cfg)
    if not state:
        _say(out, "down (no %s)" % state_path(cfg))
        return False
    healthy = True
    _say(out, "up since %s, mode %s" % (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(state["started"])),
        state["mode"]))
    run = state["run"]
    for p in run.get("pids", []):
        ok = alive(p["pid"])
        healthy = healthy and ok
        _say(out, "  %-10s pid %-7d %s" % (p["name"], p["pid"],
                                           "running" if ok else "DEAD"))
    for pf in run.get("pidfiles", []):
        try:
            pid = int(pathlib.Path(pf).read_text().split()[0])
            ok = alive(pid)
        except (OSError, ValueError, IndexError):
            pid, ok = 0, False
        healthy = healthy and ok
        _say(out, "  %-10s pid %-7d %s" % (
            os.path.basename(pf)[:-4], pid, "running" if ok else "DEAD"))
    by_name = {lg["name"]: lg for lg in cfg["legacy"]}
    for rec in state["legacy"]:
        lg = by_name.get(rec["name"])
        try:
            dev = open_device(lg)
            try:
                running = dev.get_config(retrieve="running")["running"]
            finally:
                dev.close()
            backup = pathlib.Path(rec["backup"]).read_text()
            _say(out, "  %-10s reachable, configuration %s the backup; "
                 "access VLANs %d-%d" % (
                     rec["name"], "differs from" if running != backup
                     else "EQUALS", lg["first"], lg["last"]))
        except ManagerError as e:
            healthy = False
            _say(out, "  %-10s %s" % (rec["name"], e))
    return healthy


def main(command, argv=None):
    ap = argparse.ArgumentParser(
        prog="oxflow harmless %s" % command,
        description={"up": "Migrate legacy access ports and start the "
                     "software side.",
                     "down": "Stop the software side (--restore: put the "
                     "legacy switches back).",
                     "status": "Report the HARMLESS deployment."}[command])
    ap.add_argument("--config", required=True, metavar="FILE",
                    help="topology file (TOML or YAML; see "
                    "docs/harmless.md)")
    if command == "down":
        ap.add_argument("--restore", action="store_true",
                        help="restore each legacy switch's saved "
                        "configuration")
    ns = ap.parse_args(argv)
    prog = "oxflow harmless %s" % command
    try:
        if not os.path.exists(ns.config):
            raise ConfigError("%s: no such file" % ns.config)
        cfg = check_config(load_file(ns.config), ns.config)
        if command == "up":
            up(cfg)
            return 0
        if command == "down":
            return 0 if down(cfg, ns.restore) else 1
        return 0 if status(cfg) else 1
    except ManagerError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return 1
