"""NAPALM driver for the emulated legacy switch (`legacy_ovs`).

The device's "hostname" is the path of the private OVS's database socket;
username and password are ignored. optional_args: ``bridge`` (default: the
database's only bridge).

    from oxflow.harmless.napalm_ovslegacy import OvsLegacyDriver
    dev = OvsLegacyDriver(sw.db_sock, "", "")
    dev.open()
    backup = dev.get_config()["running"]
    dev.load_replace_candidate(config=new_text)
    print(dev.compare_config())
    dev.commit_config()            # all or nothing (see below)
    dev.rollback()                 # back to the config before the commit

Configuration sessions follow NAPALM: load_replace_candidate /
load_merge_candidate parse the text (a bad line raises
ReplaceConfigException / MergeConfigException and changes nothing) and
keep it as the candidate; compare_config is a unified diff of the running
configuration against what the candidate would make it; discard_config
drops the candidate; commit_config applies it, and when the switch refuses
a line part-way it puts the configuration it had before the commit back
and raises CommitError saying so (the error names the failing interface
and whether the restore left the running configuration byte-identical to
the one before); rollback restores the configuration from before the last
successful commit.
"""

import difflib
import time

from napalm.base import NetworkDriver
from napalm.base.exceptions import (CommitError, ConnectionException,
                                    MergeConfigException,
                                    ReplaceConfigException)

from oxflow.harmless import legacy_ovs


class OvsLegacyDriver(NetworkDriver):
    platform = "ovslegacy"

    def __init__(self, hostname, username="", password="", timeout=60,
                 optional_args=None):
        self.hostname = hostname
        self.username = username
        self.password = password
        self.timeout = timeout
        self.optional_args = optional_args or {}
        self.conn = None
        # candidate: (parsed config, replace?) or None
        self.candidate = None
        # the running config text before the last successful commit
        self.rollback_config = None
        self.opened_at = None

    # --- connection ---------------------------------------------------------

    def open(self):
        try:
            self.conn = legacy_ovs.OvsdbConn(
                self.hostname, self.optional_args.get("bridge"),
                timeout=min(int(self.timeout), 30))
        except (RuntimeError, OSError) as e:
            raise ConnectionException(
                "cannot reach the emulated legacy switch at %s: %s"
                % (self.hostname, e)) from e
        self.opened_at = time.monotonic()

    def close(self):
        self.conn = None

    def is_alive(self):
        if self.conn is None:
            return {"is_alive": False}
        proc = self.conn.vsctl("br-exists", self.conn.bridge, check=False)
        return {"is_alive": proc.returncode == 0}

    def _need_conn(self):
        if self.conn is None:
            raise ConnectionException("not open: call open() first")
        return self.conn

    # --- configuration --------------------------------------------------------

    def get_config(self, retrieve="all", full=False, sanitized=False,
                   format="text"):
        running = legacy_ovs.running_config(self._need_conn())
        out = {"running": "", "startup": "", "candidate": ""}
        if retrieve in ("all", "running"):
            out["running"] = running
        if retrieve in ("all", "candidate") and self.candidate is not None:
            out["candidate"] = self._candidate_text()
        return out

    @staticmethod
    def _read(filename, config, exc):
        if (filename is None) == (config is None):
            raise exc("give exactly one of filename and config")
        if filename is not None:
            try:
                with open(filename) as fh:
                    return fh.read()
            except OSError as e:
                raise exc("cannot read %s: %s" % (filename, e)) from e
        return config

    def _load(self, filename, config, replace, exc):
        text = self._read(filename, config, exc)
        try:
            parsed = legacy_ovs.parse_config(text, partial=not replace)
        except legacy_ovs.ConfigError as e:
            raise exc(str(e)) from e
        self._need_conn()
        self.candidate = (parsed, replace)

    def load_replace_candidate(self, filename=None, config=None):
        self._load(filename, config, True, ReplaceConfigException)

    def load_merge_candidate(self, filename=None, config=None):
        self._load(filename, config, False, MergeConfigException)

    def _merged(self):
        """For a merge candidate: the config to apply (hostname, VLAN names
        and the named interfaces, each completed from its running state)
        and the whole resulting configuration."""
        parsed, _ = self.candidate
        result = legacy_ovs.read_config(self._need_conn())
        if parsed["hostname"]:
            result["hostname"] = parsed["hostname"]
        result["vlans"].update(parsed["vlans"])
        apply = {"hostname": parsed["hostname"], "vlans": parsed["vlans"],
                 "interfaces": {}}
        for name, fields in parsed["interfaces"].items():
            full = dict(result["interfaces"].get(name,
                                                 legacy_ovs._new_intf()),
                        **fields)
            result["interfaces"][name] = full
            apply["interfaces"][name] = full
        return apply, result

    def _candidate_text(self):
        """The configuration the candidate would give."""
        parsed, replace = self.candidate
        if not replace:
            return legacy_ovs.format_config(self._merged()[1])
        result = {"hostname": parsed["hostname"],
                  "vlans": dict(parsed["vlans"]), "interfaces": {}}
        for port in self._need_conn().ports():
            result["interfaces"][port] = legacy_ovs._new_intf()
        result["interfaces"].update(parsed["interfaces"])
        return legacy_ovs.format_config(result)

    def compare_config(self):
        if self.candidate is None:
            return ""
        running = legacy_ovs.running_config(self._need_conn())
        diff = difflib.unified_diff(
            running.splitlines(keepends=True),
            self._candidate_text().splitlines(keepends=True),
            "running", "candidate")
        return "".join(diff)

    def discard_config(self):
        self.candidate = None

    def _restore(self, text):
        """Replace the running config by `text`; True when it is then
        byte-identical."""
        conn = self._need_conn()
        legacy_ovs.apply_config(conn, legacy_ovs.parse_config(text),
                                replace=True)
        return legacy_ovs.running_config(conn) == text

    def commit_config(self, message="", revert_in=None):
        if revert_in is not None:
            raise NotImplementedError("commit confirm (revert_in) is not "
                                      "supported by the emulated switch")
        if self.candidate is None:
            raise CommitError("no candidate configuration loaded")
        conn = self._need_conn()
        before = legacy_ovs.running_config(conn)
        parsed, replace = self.candidate
        try:
            legacy_ovs.apply_config(
                conn, parsed if replace else self._merged()[0], replace)
        except (legacy_ovs.ApplyError, RuntimeError) as e:
            applied = getattr(e, "applied", [])
            try:
                same = self._restore(before)
                how = ("rolled back to the configuration before the commit "
                       "(byte-identical)" if same else
                       "rolled back, but the running configuration differs "
                       "from the one before the commit")
            except Exception as e2:  # the restore itself failed
                how = "the roll-back failed too: %s" % e2
            raise CommitError(
                "commit failed part-way (%d interface(s) changed before: "
                "%s): %s; %s" % (len(applied), ", ".join(applied) or "none",
                                 e, how)) from e
        self.rollback_config = before
        self.candidate = None

    def rollback(self):
        if self.rollback_config is None:
            raise CommitError("nothing to roll back: no commit yet")
        if not self._restore(self.rollback_config):
            raise CommitError("rollback left a configuration that differs "
                              "from the one before the last commit")
        self.rollback_config = None

    # --- getters ----------------------------------------------------------------

    def get_facts(self):
        conn = self._need_conn()
        cfg = legacy_ovs.read_config(conn)
        ovs = conn.rows("Open_vSwitch", ["ovs_version", "_uuid"])
        version = ovs[0]["ovs_version"] if ovs else ""
        uuid = conn.rows("Bridge", ["_uuid"], conn.bridge)[0]["_uuid"]
        host = cfg["hostname"] or conn.bridge
        return {
            "uptime": float(time.monotonic() - (self.opened_at or
                                                time.monotonic())),
            "vendor": "oxflow",
            "model": "emulated legacy switch (Open vSwitch)",
            "os_version": version if isinstance(version, str) else "",
            "serial_number": uuid,
            "hostname": host,
            "fqdn": host,
            "interface_list": conn.ports(),
        }

    def get_interfaces(self):
        conn = self._need_conn()
        names = conn.ports()
        if not names:
            return {}
        cfg = legacy_ovs.read_config(conn)
        rows = conn.rows("Interface", ["name", "admin_state", "link_state",
                                       "mac_in_use", "mtu", "link_speed"],
                         *names)
        out = {}
        for r in rows:
            speed = r["link_speed"]
            mtu = r["mtu"]
            out[r["name"]] = {
                "is_up": r["link_state"] == "up",
                "is_enabled": r["admin_state"] == "up",
                "description": cfg["interfaces"][r["name"]]["description"]
                or "",
                "last_flapped": -1.0,
                "speed": float(speed) / 1e6 if isinstance(speed, int)
                else -1.0,
                "mtu": mtu if isinstance(mtu, int) else -1,
                "mac_address": r["mac_in_use"] if isinstance(
                    r["mac_in_use"], str) else "",
            }
        return out

    def get_vlans(self):
        cfg = legacy_ovs.read_config(self._need_conn())
        vlans = {}
        for vid, name in cfg["vlans"].items():
            vlans[vid] = {"name": name, "interfaces": []}
        for port, intf in cfg["interfaces"].items():
            if intf["mode"] == "access":
                vids = [intf["vlan"]]
            else:
                vids = intf["allowed"] or sorted(vlans)
            for vid in vids:
                vlans.setdefault(vid, {"name": "VLAN%04d" % vid,
                                       "interfaces": []})
                vlans[vid]["interfaces"].append(port)
        return {vid: {"name": v["name"],
                      "interfaces": sorted(v["interfaces"],
                                           key=legacy_ovs._port_key)}
                for vid, v in sorted(vlans.items())}
