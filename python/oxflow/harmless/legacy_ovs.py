"""An emulated legacy Ethernet switch: a private user-space Open vSwitch
(`oxflow.netns.OvsSwitch`, netdev datapath) whose bridge runs without a
controller in fail-mode standalone, i.e. as a plain MAC-learning 802.1Q
switch (the NORMAL action): access ports carry `tag=VID`, trunk ports
`trunks=VIDs` and send frames 802.1Q-tagged.

Its running configuration is a text in an IOS-like language, rendered
deterministically from the database (`render_config`), so that a backup
and a restore can be compared byte for byte:

    ! oxflow emulated legacy switch
    hostname legacy1
    !
    vlan 10
     name users
    !
    interface ab1s3
     description host a
     switchport mode access
     switchport access vlan 10
    !
    interface ab1s7
     switchport mode trunk
     switchport trunk allowed vlan 10,20
    !
    end

Lines starting with `!` and blank lines are comments. Interfaces and
VLANs are listed in ascending order; an interface without `switchport`
lines is `switchport mode access` / `switchport access vlan 1`; `switchport
mode trunk` without an allowed list carries every VLAN. The configuration
cannot create ports: an `interface` names an existing bridge port.

Where things live in OVSDB: the hostname in the bridge's
`external_ids:hostname`, VLAN names in `external_ids:vlan-name-VID`, a
port's description in its Port row's `external_ids:description`; the mode
in the Port row's tag / trunks / vlan_mode columns.

`apply_config` changes the switch one interface (one ovs-vsctl
transaction) at a time, in the order of the text, so an error part-way
(say, a port that is not on the bridge) leaves the earlier interfaces
changed: callers that need all-or-nothing restore a backup on error (the
NAPALM driver, `napalm_ovslegacy`, does).
"""

import json
import re
import subprocess

from oxflow.netns import OvsSwitch

HEADER = "! oxflow emulated legacy switch"
DEFAULT_VLAN = 1


class ConfigError(ValueError):
    """A configuration text that does not parse; says the line."""


class ApplyError(RuntimeError):
    """The switch refused part of a configuration; `applied` lists the
    interfaces changed before the failure."""

    def __init__(self, message, applied):
        super().__init__(message)
        self.applied = applied


# --- the configuration model -------------------------------------------------
#
# A parsed configuration is a dict:
#   {"hostname": str or None,
#    "vlans": {vid: name},                       declared VLANs
#    "interfaces": {name: {"mode": "access"|"trunk",     (a partial parse
#                                                        has only the keys
#                                                        its text sets)
#                          "vlan": vid (access) ,
#                          "allowed": [vid, ...] or None (trunk; None = all),
#                          "description": str or None}}}
# and keeps the interfaces in the order of the text (apply order).


def _vid(text, lineno):
    if not re.fullmatch(r"[0-9]{1,4}", text) or not 1 <= int(text) <= 4094:
        raise ConfigError("line %d: VLAN id %r is not 1..4094"
                          % (lineno, text))
    return int(text)


def _vid_list(text, lineno):
    out = set()
    for part in text.split(","):
        if "-" in part:
            lo, _, hi = part.partition("-")
            a, b = _vid(lo, lineno), _vid(hi, lineno)
            if a > b:
                raise ConfigError("line %d: VLAN range %r is backwards"
                                  % (lineno, part))
            out.update(range(a, b + 1))
        else:
            out.add(_vid(part, lineno))
    return sorted(out)


def _new_intf():
    return {"mode": "access", "vlan": DEFAULT_VLAN, "allowed": None,
            "description": None}


def parse_config(text, partial=False):
    """Parses a configuration text (module doc); raises ConfigError.
    partial=True: each interface holds only the fields the text sets (for a
    merge); otherwise the others get their defaults."""
    cfg = {"hostname": None, "vlans": {}, "interfaces": {}}
    section = None          # ("vlan", vid) or ("interface", name)
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        words = line.split()
        indented = line[0] in " \t"
        if not indented:
            section = None
            if words == ["end"]:
                break
            if words[0] == "hostname" and len(words) == 2:
                cfg["hostname"] = words[1]
            elif words[0] == "vlan" and len(words) == 2:
                vid = _vid(words[1], lineno)
                cfg["vlans"].setdefault(vid, "VLAN%04d" % vid)
                section = ("vlan", vid)
            elif words[0] == "interface" and len(words) == 2:
                cfg["interfaces"].setdefault(words[1], {})
                section = ("interface", words[1])
            else:
                raise ConfigError("line %d: unknown command %r"
                                  % (lineno, line))
            continue
        if section is None:
            raise ConfigError("line %d: %r is indented but not inside a "
                              "vlan or interface" % (lineno, line.strip()))
        kind, key = section
        if kind == "vlan" and words[0] == "name" and len(words) == 2:
            cfg["vlans"][key] = words[1]
        elif kind == "interface" and words[0] == "description" and \
                len(words) >= 2:
            cfg["interfaces"][key]["description"] = " ".join(words[1:])
        elif kind == "interface" and words[:2] == ["switchport", "mode"] \
                and len(words) == 3 and words[2] in ("access", "trunk"):
            cfg["interfaces"][key]["mode"] = words[2]
        elif kind == "interface" and words[:3] == ["switchport", "access",
                                                   "vlan"] \
                and len(words) == 4:
            cfg["interfaces"][key]["vlan"] = _vid(words[3], lineno)
        elif kind == "interface" and words[:4] == ["switchport", "trunk",
                                                   "allowed", "vlan"] \
                and len(words) == 5:
            cfg["interfaces"][key]["allowed"] = _vid_list(words[4], lineno)
        else:
            raise ConfigError("line %d: unknown %s command %r"
                              % (lineno, kind, line.strip()))
    if not partial:
        for name, intf in cfg["interfaces"].items():
            cfg["interfaces"][name] = dict(_new_intf(), **intf)
    return cfg


def _ranges(vids):
    """[1,2,3,5] -> '1-3,5' (the canonical allowed-VLAN list)."""
    out, run = [], []
    for v in sorted(vids):
        if run and v == run[-1] + 1:
            run.append(v)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else
                       "%d-%d" % (run[0], run[-1]))
        run = [v]
    if run:
        out.append(str(run[0]) if len(run) == 1 else
                   "%d-%d" % (run[0], run[-1]))
    return ",".join(out)


def _port_key(name):
    """Natural order: ab1s10 after ab1s9."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def format_config(cfg):
    """The canonical text of a parsed configuration."""
    lines = [HEADER]
    if cfg.get("hostname"):
        lines += ["hostname %s" % cfg["hostname"]]
    lines.append("!")
    for vid in sorted(cfg["vlans"]):
        lines += ["vlan %d" % vid, " name %s" % cfg["vlans"][vid], "!"]
    for name in sorted(cfg["interfaces"], key=_port_key):
        intf = cfg["interfaces"][name]
        lines.append("interface %s" % name)
        if intf.get("description"):
            lines.append(" description %s" % intf["description"])
        if intf["mode"] == "access":
            lines += [" switchport mode access",
                      " switchport access vlan %d" % intf["vlan"]]
        else:
            lines.append(" switchport mode trunk")
            if intf["allowed"] is not None:
                lines.append(" switchport trunk allowed vlan %s"
                             % _ranges(intf["allowed"]))
        lines.append("!")
    lines.append("end")
    return "\n".join(lines) + "\n"


# --- the switch ----------------------------------------------------------------

class OvsdbConn:
    """ovs-vsctl against one OVSDB socket and bridge."""

    def __init__(self, db_sock, bridge=None, timeout=10):
        self.db_sock = db_sock
        self.timeout = timeout
        self.bridge = bridge or self._only_bridge()

    def vsctl(self, *args, check=True):
        proc = subprocess.run(
            ["ovs-vsctl", "--db=unix:" + self.db_sock,
             "--timeout=%d" % self.timeout] + [str(a) for a in args],
            capture_output=True, text=True, timeout=self.timeout + 5)
        if check and proc.returncode != 0:
            raise RuntimeError("ovs-vsctl %s: %s" % (
                " ".join(str(a) for a in args), proc.stderr.strip()))
        return proc

    def _only_bridge(self):
        names = self.vsctl("list-br").stdout.split()
        if len(names) != 1:
            raise RuntimeError("%s has %d bridges (%s): name one" % (
                self.db_sock, len(names), ", ".join(names) or "none"))
        return names[0]

    def rows(self, table, columns, *records):
        """list of dicts of `columns` (OVSDB JSON values decoded)."""
        out = self.vsctl("--format=json", "--columns=" + ",".join(columns),
                         "list", table, *records).stdout
        data = json.loads(out)
        return [dict(zip(data["headings"], (_decode(v) for v in row)))
                for row in data["data"]]

    def ports(self):
        """The bridge's port names except its own internal port."""
        names = self.vsctl("list-ports", self.bridge).stdout.split()
        return sorted(names, key=_port_key)


def _decode(value):
    """OVSDB JSON -> Python: ["set", [...]] -> list, ["map", ...] -> dict,
    ["uuid", u] -> u."""
    if isinstance(value, list) and len(value) == 2:
        kind, body = value
        if kind == "set":
            return [_decode(v) for v in body]
        if kind == "map":
            return {_decode(k): _decode(v) for k, v in body}
        if kind in ("uuid", "named-uuid"):
            return body
    return value


def read_config(conn):
    """The running configuration (parsed model) of `conn`'s bridge."""
    br = conn.rows("Bridge", ["external_ids"], conn.bridge)[0]
    ext = br["external_ids"] or {}
    cfg = {"hostname": ext.get("hostname") or None, "vlans": {},
           "interfaces": {}}
    for k, v in ext.items():
        m = re.fullmatch(r"vlan-name-([0-9]+)", k)
        if m:
            cfg["vlans"][int(m.group(1))] = v
    names = conn.ports()
    rows = conn.rows("Port", ["name", "tag", "trunks", "external_ids"],
                     *names) if names else []
    for row in rows:
        intf = _new_intf()
        tag = row["tag"]
        trunks = row["trunks"]
        if isinstance(tag, int):
            intf["vlan"] = tag
        else:
            intf["mode"] = "trunk"
            if isinstance(trunks, int):
                trunks = [trunks]
            intf["allowed"] = sorted(trunks) if trunks else None
        intf["description"] = (row["external_ids"] or {}).get("description")
        cfg["interfaces"][row["name"]] = intf
    return cfg


def running_config(conn):
    return format_config(read_config(conn))


def _intf_args(name, intf):
    args = ["--", "set", "port", name]
    if intf["mode"] == "access":
        args += ["tag=%d" % intf["vlan"], "vlan_mode=access", "--", "clear",
                 "port", name, "trunks"]
    else:
        args += ["vlan_mode=trunk", "--", "clear", "port", name, "tag"]
        if intf["allowed"]:
            args += ["--", "set", "port", name,
                     "trunks=%s" % ",".join(str(v) for v in intf["allowed"])]
        else:
            args += ["--", "clear", "port", name, "trunks"]
    if intf.get("description"):
        args += ["--", "set", "port", name,
                 "external_ids:description=%s"
                 % json.dumps(intf["description"])]
    else:
        args += ["--", "remove", "port", name, "external_ids", "description"]
    return args


def apply_config(conn, cfg, replace):
    """Makes the switch run `cfg`. replace=True: what `cfg` does not name is
    reset (interfaces to access VLAN 1, no description; VLAN names and the
    hostname removed); replace=False: a merge. Raises ApplyError naming the
    interfaces already changed when the switch refuses one."""
    br = conn.bridge
    head = []
    if replace:
        old = conn.rows("Bridge", ["external_ids"], br)[0]["external_ids"]
        for k in sorted(old or {}):
            if k == "hostname" or k.startswith("vlan-name-"):
                head += ["--", "remove", "bridge", br, "external_ids", k]
    if cfg.get("hostname"):
        head += ["--", "set", "bridge", br,
                 "external_ids:hostname=%s" % cfg["hostname"]]
    for vid, name in sorted(cfg["vlans"].items()):
        head += ["--", "set", "bridge", br,
                 "external_ids:vlan-name-%d=%s" % (vid, name)]
    if head:
        conn.vsctl(*head)
    todo = list(cfg["interfaces"].items())
    if replace:
        named = set(cfg["interfaces"])
        todo = [(p, _new_intf()) for p in conn.ports() if p not in named] \
            + todo
    applied = []
    for name, intf in todo:
        proc = conn.vsctl(*_intf_args(name, intf), check=False)
        if proc.returncode != 0:
            raise ApplyError("interface %s: %s" % (name, proc.stderr.strip()),
                             applied)
        applied.append(name)
    return applied


class LegacySwitch:
    """The emulated legacy switch: a private OVS (`OvsSwitch`) in `workdir`
    with bridge "br0" in standalone mode (MAC learning, no controller),
    `ports` added in order; `access` {port: VID} and `trunks` {port: [VID]
    or None for all} set their modes; with `netns`, its ovs-vswitchd runs
    in that network namespace, which must hold the ports. A context
    manager.

        with LegacySwitch(tmp, ports, access={p1: 10}, trunks={t: [10]}) \\
                as sw:
            print(sw.running_config())
    """

    def __init__(self, workdir, ports, access=None, trunks=None,
                 hostname=None, netns=None):
        # its ovs-vswitchd in namespace `netns` (which holds the ports)
        self.ovs = OvsSwitch(workdir, ports=ports, netns=netns)
        self.access = dict(access or {})
        self.trunks = dict(trunks or {})
        self.hostname = hostname
        self.conn = None

    @property
    def db_sock(self):
        """The NAPALM driver's "host"."""
        return self.ovs.db_sock

    def start(self):
        self.ovs.start()
        self.ovs.vsctl("set", "bridge", "br0", "fail-mode=standalone")
        self.conn = OvsdbConn(self.ovs.db_sock, "br0")
        cfg = {"hostname": self.hostname, "vlans": {}, "interfaces": {}}
        for port, vid in self.access.items():
            cfg["interfaces"][port] = dict(_new_intf(), vlan=vid)
        for port, vids in self.trunks.items():
            cfg["interfaces"][port] = dict(_new_intf(), mode="trunk",
                                           allowed=sorted(vids) if vids
                                           else None)
        apply_config(self.conn, cfg, replace=True)
        return self

    def running_config(self):
        return running_config(self.conn)

    def close(self):
        self.ovs.close()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
        return False
