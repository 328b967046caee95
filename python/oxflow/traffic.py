"""Send crafted frames from one namespace host and capture on others.

scapy has no network-namespace support, so each capture or send runs in a
helper process started with `ip netns exec NS python -m oxflow.traffic ...`
(a fresh interpreter inside the namespace; more robust than setns() in a
forked copy of a threaded test process). The helpers talk JSON lines over
stdout; frames travel as hex.

    sniff --iface eth0     prints {"ready": true} once its AF_PACKET socket
                           is bound, then captures until stdin closes (or
                           --max-time), then prints {"frames": [hex, ...]}
    send --iface eth0 HEX [HEX...]
                           sends the frames, prints {"sent": n}

Captures use scapy's L2Socket: outgoing frames (sent by the namespace
itself) are skipped, and VLAN tags that the kernel strips into
PACKET_AUXDATA (veth offloads the outer tag) are put back, so a captured
802.1Q or QinQ frame is byte-identical to what was on the wire.

    frames = send_and_capture(h1, Ether(...)/Dot1Q(vlan=5)/..., [h2, h3])
    assert frames["h2"] == [bytes(expected)]
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _helper_argv(host, *args):
    return ["ip", "netns", "exec", host.ns, sys.executable, "-m",
            "oxflow.traffic"] + list(args)


def _helper_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _as_bytes(frame):
    return frame if isinstance(frame, (bytes, bytearray)) else bytes(frame)


class Sniffer:
    """A capture running in a host namespace (see module doc)."""

    def __init__(self, host, iface="eth0", max_time=60, ready_timeout=15):
        self.host = host
        self.iface = iface
        self.proc = subprocess.Popen(
            _helper_argv(host, "sniff", "--iface", iface, "--max-time",
                         str(max_time)),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=_helper_env())
        line = self._readline(ready_timeout)
        if json.loads(line or "{}").get("ready") is not True:
            self.proc.kill()
            err = self.proc.stderr.read().decode(errors="replace")
            raise RuntimeError("sniffer on %s/%s did not start: %r %s" % (
                host.name, iface, line, err[-2000:]))

    def _readline(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            return None
        return self.proc.stdout.readline().decode()

    def stop(self, timeout=15):
        """End the capture; return the captured frames as bytes."""
        try:
            out, err = self.proc.communicate(b"", timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise RuntimeError("sniffer on %s/%s did not stop" % (
                self.host.name, self.iface))
        for line in out.decode().splitlines():
            rec = json.loads(line)
            if "frames" in rec:
                return [bytes.fromhex(h) for h in rec["frames"]]
        raise RuntimeError("sniffer on %s/%s failed: %s" % (
            self.host.name, self.iface, err.decode(errors="replace")[-2000:]))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def send_frames(host, frames, iface="eth0", timeout=15):
    """Send frames (bytes or scapy packets) out of host's iface."""
    hexes = [_as_bytes(f).hex() for f in frames]
    proc = subprocess.run(_helper_argv(host, "send", "--iface", iface, *hexes),
                          capture_output=True, timeout=timeout,
                          env=_helper_env())
    if proc.returncode != 0:
        raise RuntimeError("send from %s/%s failed: %s" % (
            host.name, iface, proc.stderr.decode(errors="replace")[-2000:]))
    return json.loads(proc.stdout.decode().splitlines()[-1])["sent"]


def send_and_capture(src_host, frames, dst_hosts, timeout=1.0,
                     src_iface="eth0", dst_iface="eth0", keep=None):
    """Start captures on dst_hosts, send frames (one frame or a list) from
    src_host, wait `timeout` seconds for them to arrive, and return
    {host name: [captured frames as bytes]}. `keep(frame_bytes) -> bool`
    filters the captures (e.g. drop unrelated ARP)."""
    if not isinstance(frames, (list, tuple)):
        frames = [frames]
    sniffers = []
    try:
        for h in dst_hosts:
            sniffers.append(Sniffer(h, dst_iface))
        send_frames(src_host, frames, src_iface)
        time.sleep(timeout)
        out = {}
        for s in sniffers:
            got = s.stop()
            out[s.host.name] = [f for f in got if keep is None or keep(f)]
        return out
    finally:
        for s in sniffers:
            s.kill()


# ---------------------------------------------------------------------------
# Helper side (runs inside the namespace)
# ---------------------------------------------------------------------------


def _emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _cmd_sniff(args):
    from scapy.arch.linux import L2Socket

    sock = L2Socket(iface=args.iface, promisc=True)
    frames = []
    _emit({"ready": True})
    deadline = time.monotonic() + args.max_time
    stdin_fd = sys.stdin.fileno()
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([sock.ins, stdin_fd], [], [], 0.1)
            if sock.ins in r:
                _cls, data, _ts = sock.recv_raw(65535)
                if data is not None:
                    frames.append(bytes(data).hex())
                continue  # drain pending frames before honouring stdin
            if stdin_fd in r and not os.read(stdin_fd, 4096):
                # Final drain of anything already queued.
                while select.select([sock.ins], [], [], 0.05)[0]:
                    _cls, data, _ts = sock.recv_raw(65535)
                    if data is not None:
                        frames.append(bytes(data).hex())
                break
    finally:
        sock.close()
    _emit({"frames": frames})
    return 0


def _cmd_send(args):
    from scapy.arch.linux import L2Socket

    sock = L2Socket(iface=args.iface)
    try:
        for h in args.frames:
            sock.outs.send(bytes.fromhex(h))
    finally:
        sock.close()
    _emit({"sent": len(args.frames)})
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m oxflow.traffic")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sn = sub.add_parser("sniff")
    sn.add_argument("--iface", required=True)
    sn.add_argument("--max-time", type=float, default=60)
    se = sub.add_parser("send")
    se.add_argument("--iface", required=True)
    se.add_argument("frames", nargs="+", help="frames as hex")
    args = ap.parse_args(argv)
    return _cmd_sniff(args) if args.cmd == "sniff" else _cmd_send(args)


if __name__ == "__main__":
    sys.exit(main())
