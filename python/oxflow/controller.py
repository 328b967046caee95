"""Launcher for os-ken controller apps (os-ken 4.x has no `osken-manager`).

    python -m oxflow.controller --ofp-tcp-listen-port 6653 \\
        --app oxflow.apps.learning_switch [--app oxflow.apps.recorder ...] \\
        [--ofp-listen-host 127.0.0.1] [--verbose] [-- extra os-ken options]

Starts os-ken's AppManager with `os_ken.controller.ofp_handler` (the
OpenFlow handshake/echo handler and the listening socket) plus the given app
modules, logs to stderr, and runs until SIGTERM/SIGINT.

os-ken options live in the global oslo.config object `os_ken.cfg.CONF`;
they must be registered (by importing the modules that declare them) before
`CONF(args=...)` parses the command line, which is what `main()` does.
Options this launcher does not know are handed to `CONF` unchanged (after a
`--`), so any os-ken option (e.g. `--ofp-ssl-listen-port`, `--ctl-privkey`)
still works.

os-ken 4.x uses native threads by default (OSKEN_HUB_TYPE=native, see
os_ken/lib/hub.py; the eventlet hub of older os-ken/ryu is gone as the
default); `AppManager.run_apps` blocks in `hub.joinall` forever, so the
process ends on a signal (SIGTERM/SIGINT -> exit status 0).
"""

import argparse
import logging
import os
import signal
import sys

DEFAULT_APPS = ["oxflow.apps.learning_switch"]


def build_parser():
    ap = argparse.ArgumentParser(
        prog="python -m oxflow.controller",
        description="Run os-ken controller apps (ofp_handler + --app ...).")
    ap.add_argument("--app", action="append", default=[],
                    help="app module to load (repeatable); default: %s"
                    % ", ".join(DEFAULT_APPS))
    ap.add_argument("--ofp-listen-host", default="127.0.0.1",
                    help="address to listen on (default 127.0.0.1)")
    ap.add_argument("--ofp-tcp-listen-port", type=int, default=6653,
                    help="OpenFlow TCP port (default 6653)")
    ap.add_argument("--verbose", action="store_true",
                    help="debug logging")
    ap.add_argument("extra", nargs="*",
                    help="further os-ken options, after `--`")
    return ap


def osken_args(ns):
    """The argument list handed to os_ken.cfg.CONF."""
    args = ["--ofp-listen-host", ns.ofp_listen_host,
            "--ofp-tcp-listen-port", str(ns.ofp_tcp_listen_port)]
    if ns.verbose:
        args.append("--verbose")
    return args + list(ns.extra)


def main(argv=None):
    ns = build_parser().parse_args(argv)
    apps = ns.app or list(DEFAULT_APPS)

    logging.basicConfig(
        stream=sys.stderr,
        level=logging.DEBUG if ns.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    # Importing these registers their CLI options on os_ken.cfg.CONF.
    # (app_manager first: importing os_ken.controller.controller before it
    # is a circular import.)
    from os_ken import cfg
    from os_ken.base.app_manager import AppManager
    from os_ken import log as osken_log  # noqa: F401  (log options)
    from os_ken.controller import controller  # noqa: F401  (ofp options)

    cfg.CONF(args=osken_args(ns), prog="oxflow.controller",
             project="os_ken", default_config_files=[])

    # With native hub threads (non-daemon, and hub.kill is a no-op) there is
    # no way to stop os-ken's threads, so a signal ends the process directly
    # after flushing the logs. Apps must not buffer state they need to keep
    # (the recorder app flushes every line).
    def on_signal(signum, _frame):
        logging.getLogger("oxflow.controller").info(
            "signal %d, stopping", signum)
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    logging.getLogger("oxflow.controller").info(
        "os-ken apps %s listening on %s:%d", apps, ns.ofp_listen_host,
        ns.ofp_tcp_listen_port)
    AppManager.run_apps(["os_ken.controller.ofp_handler"] + apps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
