"""`make demo-harmless`: HARMLESS in one command.

    python -m oxflow.harmless.demo [--hosts N] [--mode trunk|proxy] [--keep]

1. builds the lab in network namespaces (prefix "hm"): hosts h1..hN on an
   emulated legacy switch (a private Open vSwitch acting as a plain 802.1Q
   learning switch, every port on VLAN 1), whose trunk port goes to the
   server's namespace;
2. starts the os-ken learning switch (+ the port census app) on the
   server;
3. `oxflow harmless up`: backs up the legacy switch's configuration,
   gives each host's port its own VLAN and makes the trunk carry them,
   starts the software side (trunk mode, the default: one `oxflow run
   --trunk NIC=FIRST-LAST`, oxflow's own trunk ports; proxy mode: a
   trunk-only Open vSwitch and `oxflow harmless proxy`);
4. shows that the controller sees N ports and that every host pings every
   other one (through the controller's flows now: the VLANs keep them
   apart on the legacy switch);
5. `oxflow harmless status`, then `down --restore`, and checks that the
   legacy switch's configuration is byte-identical to the backup.

Exit status 0 when every step worked. Needs root and Open vSwitch.
"""

import argparse
import pathlib
import sys
import tempfile

from oxflow.harmless import lab, legacy_ovs, manager
from oxflow.netns import Topology

CTL_PORT = 6653


def say(msg):
    print("\n\033[1m== %s\033[0m" % msg, flush=True)


def topology_file(path, mode, nic, netns, db_sock, trunk, ports, binary):
    first = 101
    path.write_text(
        'mode = "%s"\ncontroller = "127.0.0.1:%d"\nstate_dir = "state"\n'
        'oxflow = "%s"\n\n[server]\nnic = "%s"\nnetns = "%s"\n\n'
        '[[legacy]]\nname = "legacy1"\ndriver = "ovslegacy"\nhost = "%s"\n'
        'trunk = "%s"\naccess = [%s]\nvlans = "%d-%d"\n'
        % (mode, CTL_PORT, binary, nic, netns, db_sock, trunk,
           ", ".join('"%s"' % p for p in ports), first,
           first + len(ports) - 1))


def run(args, work):
    ok = True
    with Topology(prefix="hm") as topo:
        say("Lab: %d hosts on an emulated legacy switch, its trunk to the "
            "server namespace" % args.hosts)
        lg = lab.add_legacy_ns(topo)
        hosts = lab.add_hosts(topo, args.hosts, lg.ns)
        server, legacy_end, nic = lab.add_server(topo, legacy_ns=lg.ns)
        ports = [p for _, p in hosts]
        with legacy_ovs.LegacySwitch(work / "legacy", ports + [legacy_end],
                                     hostname="legacy1",
                                     netns=lg.ns) as legacy:
            initial = legacy.running_config()
            print(initial, end="")
            say("Controller: os-ken learning switch + port census, in the "
                "server namespace, port %d" % CTL_PORT)
            ctl = lab.start_controller(work, CTL_PORT, netns=server.ns)
            try:
                binary = manager.oxflow_binary({})
                cfgfile = work / "harmless.toml"
                topology_file(cfgfile, args.mode, nic, server.ns,
                              legacy.db_sock, legacy_end, ports, binary)
                say("Topology file %s" % cfgfile)
                print(cfgfile.read_text(), end="")
                cfg = manager.check_config(manager.load_file(cfgfile),
                                           cfgfile)
                say("oxflow harmless up --config %s" % cfgfile)
                manager.up(cfg)
                try:
                    say("What the controller sees (port description)")
                    rec = lab.wait_census(
                        ctl.ports_file, "port_desc",
                        lambda r: len(r["ports"]) == args.hosts)
                    for p in sorted(rec["ports"],
                                    key=lambda p: p["port_no"]):
                        print("   port %-3d %-16s %s" % (
                            p["port_no"], p["name"], p["hw_addr"]))
                    say("Every host pings every other one")
                    got = lab.ping_all([h for h, _ in hosts], count=3)
                    for (a, b), n in sorted(got.items()):
                        print("   %s -> %s: %d/3 replies" % (a, b, n))
                    ok = ok and all(n >= 2 for n in got.values())
                    say("oxflow harmless status")
                    ok = manager.status(cfg) and ok
                    say("The legacy switch now (access VLANs, trunk)")
                    print(legacy.running_config(), end="")
                finally:
                    say("oxflow harmless down --restore")
                    same = manager.down(cfg, restore_legacy=True)
                ok = ok and same and legacy.running_config() == initial
                print("   legacy configuration byte-identical to the "
                      "backup: %s" % ("yes" if same else "NO"))
            finally:
                ctl.stop()
    return ok


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m oxflow.harmless.demo")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--mode", choices=manager.MODES, default="trunk")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (logs, backups)")
    args = ap.parse_args(argv)
    if not 2 <= args.hosts <= 50:
        ap.error("--hosts: 2..50")
    work = pathlib.Path(tempfile.mkdtemp(prefix="oxflow-harmless-demo-"))
    try:
        ok = run(args, work)
    except manager.ManagerError as e:
        print("demo-harmless: %s" % e, file=sys.stderr)
        ok = False
    say("HARMLESS demo %s (work directory %s)"
        % ("passed" if ok else "FAILED", work))
    if not args.keep and ok:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
