"""FlexForward evaluation (issue 32, after the paper's 8-node hypercube):
per forwarding mode the RTT of pings, the jitter of an iperf3 UDP stream
and the TCP throughput between hosts at opposite corners (3 hops), then a
HyperCube -> KeyFlow switchover under numbered UDP streams with the loss
counted per 100 ms. Needs root (namespaces), iperf3 and a release oxflow.

    python -m oxflow.flexforward_eval [--out DIR] [--full]

The network is `oxflow.flexnet.HyperCubeNet(dim=3)`: eight oxflow
processes in the root namespace joined by veth pairs, hosts h1 and h2 in
namespaces on switches 0 and 7; interface names start with "ffe". Modes:
OpenFlow (one eth_dst flow per switch and direction), HyperCube, KeyFlow
(fallback drop, no flows: every frame is forwarded by the mode).

Short default: 1,000 pings at 1 ms (in 5 rounds, the modes taking
turns), 3 s iperf3 runs, switchover at t = 2 s
of 4 s streams at 1,000 and 5,000 datagrams/s. --full: 10,000 pings,
10 s runs, switchover at t = 20 s of 30 s streams at 1,000, 5,000 and
20,000 datagrams/s.

Files in DIR: rtt.csv (every RTT), summary.csv (per mode), switchover.csv
(per stream and 100 ms bin: sent, lost), rtt-cdf.svg, switchover.svg,
index.html.
"""

import argparse
import csv
import datetime
import json
import math
import pathlib
import re
import subprocess
import sys
import time

from .flexnet import HyperCubeNet

MODES = ("openflow", "hypercube", "keyflow")
BIN = 0.1
ROUNDS = 5
COLORS = {"openflow": "#1f77b4", "hypercube": "#d62728",
          "keyflow": "#2ca02c"}

RECEIVER = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
s.bind(("10.0.0.2", int(sys.argv[1])))
print("ready", flush=True)
seen = []
s.settimeout(60)
try:
    while True:
        d = s.recv(2048)
        n = int.from_bytes(d[:4], "big")
        if n == 0xFFFFFFFF:
            break
        seen.append(n)
        s.settimeout(3)
except socket.timeout:
    pass
print(" ".join(map(str, seen)), flush=True)
"""

SENDER = r"""
import socket, sys, time
n, rate, port = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t0 = time.monotonic()
print(t0, flush=True)
for i in range(n):
    while time.monotonic() < t0 + i / rate:
        pass
    s.sendto(i.to_bytes(4, "big") + b"." * 60, ("10.0.0.2", port))
time.sleep(0.5)
for _ in range(20):
    s.sendto(b"\xff\xff\xff\xff", ("10.0.0.2", port))
    time.sleep(0.05)
"""

_RTT = re.compile(r"icmp_seq=(\d+) .*time=([\d.]+) ms")


def set_mode(net, mode):
    if mode == "openflow":
        net.install_flows()
        net.set_mode("openflow")
    else:
        net.set_mode(mode, fallback="drop")
        net.remove_flows()
    if not net.wait_ready():
        raise RuntimeError("no ping crosses in mode %s" % mode)


def pings(net, count, interval):
    proc = net.h1.run(["ping", "-n", "-c", str(count), "-i", str(interval),
                       "-W", "1", "10.0.0.2"], check=False,
                      timeout=count * interval * 3 + 30)
    return [float(m.group(2)) for m in _RTT.finditer(proc.stdout)], count


def iperf(net, udp, seconds):
    srv = net.h2.popen(["iperf3", "-s", "-1", "-B", "10.0.0.2"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        argv = ["iperf3", "-c", "10.0.0.2", "-t", str(seconds), "-J"]
        if udp:
            argv += ["-u", "-b", "50M", "-l", "1200"]
        for _ in range(3):
            proc = net.h1.run(argv, check=False, timeout=seconds + 30)
            if proc.returncode == 0:
                break
            time.sleep(1)
        out = json.loads(proc.stdout)
    finally:
        srv.wait(timeout=30) if srv.poll() is None else None
    end = out["end"]
    if udp:
        return end["sum"]["jitter_ms"], end["sum"]["lost_percent"]
    return end["sum_received"]["bits_per_second"] / 1e6


def pct(v, q):
    if not v:
        return float("nan")
    s = sorted(v)
    return s[min(len(s) - 1, int(math.ceil(q * len(s))) - 1)]


def switchover(net, rate, duration, at, port):
    set_mode(net, "hypercube")
    count = int(rate * duration)
    rx = net.h2.popen([sys.executable, "-c", RECEIVER, str(port)],
                      stdout=subprocess.PIPE, text=True)
    if rx.stdout.readline().strip() != "ready":
        raise RuntimeError("receiver did not start")
    tx = net.h1.popen([sys.executable, "-c", SENDER, str(count), str(rate),
                       str(port)], stdout=subprocess.PIPE, text=True)
    t0 = float(tx.stdout.readline())
    while time.monotonic() < t0 + at:
        time.sleep(0.01)
    t_switch = time.monotonic() - t0
    net.set_mode("keyflow", fallback="drop")
    t_done = time.monotonic() - t0
    tx.wait(timeout=duration + 60)
    out, _ = rx.communicate(timeout=120)
    seen = set(int(x) for x in out.split())
    bins = {}
    for i in range(count):
        b = int(i / rate / BIN)
        sent, lost = bins.get(b, (0, 0))
        bins[b] = (sent + 1, lost + (i not in seen))
    return {"rate": rate, "count": count, "received": len(seen),
            "switch_start_s": t_switch, "switch_end_s": t_done,
            "bins": [(b * BIN, s, lo) for b, (s, lo) in sorted(bins.items())]}


# --- plots (plain SVG)

def _svg_frame(w, h, title, xlabel, ylabel, xmax, ymax, xticks, yticks):
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" text-anchor="middle" font-size="14">%s</text>'
           % (w / 2, title)]
    L, R, T, B = 60, 20, 30, 45
    pw, ph = w - L - R, h - T - B

    def X(x):
        return L + pw * x / xmax

    def Y(y):
        return T + ph * (1 - y / ymax)
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
               'stroke="black"/>' % (L, T, pw, ph))
    for x in xticks:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>'
                   % (X(x), T + ph + 16, x))
    for y in yticks:
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>'
                   % (L - 5, Y(y) + 4, y))
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" '
                   'stroke="#ddd"/>' % (L, L + pw, Y(y), Y(y)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
               % (L + pw / 2, h - 8, xlabel))
    out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" '
               'text-anchor="middle">%s</text>' % (T + ph / 2, T + ph / 2,
                                                   ylabel))
    return out, X, Y


def _ticks(hi, n=5):
    step = 10 ** math.floor(math.log10(hi / n)) if hi > 0 else 1
    for m in (1, 2, 5, 10):
        if hi / (step * m) <= n:
            step *= m
            break
    return [round(i * step, 10) for i in range(int(hi / step) + 1)]


def cdf_svg(rtts):
    xmax = max(pct(v, 0.99) for v in rtts.values() if v) * 1.1
    out, X, Y = _svg_frame(640, 360, "RTT CDF, h1 to h2 (3 hops)",
                           "RTT (ms), up to the 99th percentile", "fraction",
                           xmax, 1.0, _ticks(xmax), [0, 0.25, 0.5, 0.75, 1])
    for i, (mode, v) in enumerate(rtts.items()):
        s = sorted(v)
        # At most about 400 points per curve (the file stays small).
        step = max(1, len(s) // 400)
        pts = " ".join("%.1f,%.1f" % (X(min(x, xmax)), Y((k + 1) / len(s)))
                       for k, x in enumerate(s)
                       if x <= xmax and (k % step == 0 or k == len(s) - 1))
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" '
                   'points="%s"/>' % (COLORS[mode], pts))
        out.append('<text x="%d" y="%d" fill="%s">%s</text>'
                   % (80, 50 + 16 * i, COLORS[mode], mode))
    out.append("</svg>")
    return "\n".join(out)


def switchover_svg(runs):
    xmax = max(r["bins"][-1][0] + BIN for r in runs)
    ymax = max([lo / s * 100 for r in runs for _, s, lo in r["bins"]
                if s] + [1.0]) * 1.1
    out, X, Y = _svg_frame(640, 360, "Loss per 100 ms, HyperCube to KeyFlow",
                           "time (s)", "lost (%)", xmax, ymax,
                           _ticks(xmax), _ticks(ymax))
    palette = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b"]
    for i, r in enumerate(runs):
        c = palette[i % len(palette)]
        pts = " ".join("%.1f,%.1f" % (X(t + BIN / 2), Y(lo / s * 100))
                       for t, s, lo in r["bins"] if s)
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" '
                   'points="%s"/>' % (c, pts))
        out.append('<line x1="%.1f" x2="%.1f" y1="30" y2="315" stroke="%s" '
                   'stroke-dasharray="4 3"/>' % (X(r["switch_start_s"]),
                                                 X(r["switch_start_s"]), c))
        out.append('<text x="%d" y="%d" fill="%s">%d/s: %d of %d lost</text>'
                   % (80, 50 + 16 * i, c, r["rate"],
                      r["count"] - r["received"], r["count"]))
    out.append("</svg>")
    return "\n".join(out)


def write_html(out, summary, runs, meta):
    rows = "".join(
        "<tr><td>%s</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
        "<td>%.1f</td><td>%.4f</td><td>%.2f</td><td>%.0f</td></tr>" % (
            s["mode"], s["rtt_mean_ms"], s["rtt_p50_ms"], s["rtt_p90_ms"],
            s["rtt_p99_ms"], s["ping_loss_pct"], s["udp_jitter_ms"],
            s["udp_loss_pct"], s["tcp_mbps"]) for s in summary)
    sw = "".join("<tr><td>%d</td><td>%d</td><td>%d</td><td>%.3f</td>"
                 "<td>%.3f</td></tr>" % (
                     r["rate"], r["count"], r["count"] - r["received"],
                     r["switch_start_s"], r["switch_end_s"]) for r in runs)
    html = """<!doctype html><html><head><meta charset="utf-8">
<title>FlexForward evaluation</title></head><body>
<h1>FlexForward on an 8-node hypercube of oxflow switches</h1>
<p>%s</p>
<h2>Per mode</h2>
<table border="1" cellpadding="4"><tr><th>mode</th><th>RTT mean (ms)</th>
<th>p50</th><th>p90</th><th>p99</th><th>ping loss (%%)</th>
<th>UDP jitter (ms)</th><th>UDP loss (%%)</th><th>TCP (Mbit/s)</th></tr>
%s</table>
<img src="rtt-cdf.svg">
<h2>Switchover HyperCube to KeyFlow</h2>
<table border="1" cellpadding="4"><tr><th>rate (/s)</th><th>sent</th>
<th>lost</th><th>switch start (s)</th><th>all switches done (s)</th></tr>
%s</table>
<img src="switchover.svg">
</body></html>
""" % (meta, rows, sw)
    (out / "index.html").write_text(html)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--workers", type=int, default=1)
    a = ap.parse_args(argv)
    n_ping, secs = (10000, 10) if a.full else (1000, 3)
    duration, at = (30, 20) if a.full else (4, 2)
    rates = (1000, 5000, 20000) if a.full else (1000, 5000)
    out = a.out or pathlib.Path("results") / (
        "flexforward-" + datetime.datetime.now(datetime.timezone.utc)
        .strftime("%Y%m%dT%H%M%SZ"))
    out.mkdir(parents=True, exist_ok=True)
    rtts, summary, runs = {}, [], []
    with HyperCubeNet(dim=3, prefix="ffe", workers=a.workers,
                      log_dir=out) as net:
        net.configure()
        # Pings in ROUNDS rounds, the modes taking turns, so a change of
        # load on the machine shows in every mode alike.
        sent_by = {m: 0 for m in MODES}
        rtts = {m: [] for m in MODES}
        for _ in range(ROUNDS):
            for mode in MODES:
                set_mode(net, mode)
                v, sent = pings(net, n_ping // ROUNDS, 0.001)
                rtts[mode] += v
                sent_by[mode] += sent
        for mode in MODES:
            set_mode(net, mode)
            v, sent = rtts[mode], sent_by[mode]
            jitter, uloss = iperf(net, True, secs)
            tcp = iperf(net, False, secs)
            summary.append({
                "mode": mode, "pings": sent, "replies": len(v),
                "ping_loss_pct": 100.0 * (sent - len(v)) / sent,
                "rtt_mean_ms": sum(v) / len(v) if v else float("nan"),
                "rtt_p50_ms": pct(v, 0.5), "rtt_p90_ms": pct(v, 0.9),
                "rtt_p99_ms": pct(v, 0.99), "udp_jitter_ms": jitter,
                "udp_loss_pct": uloss, "tcp_mbps": tcp})
            print("%-9s rtt mean %.3f ms p50 %.3f p99 %.3f, jitter %.4f ms, "
                  "tcp %.0f Mbit/s" % (mode, summary[-1]["rtt_mean_ms"],
                                       summary[-1]["rtt_p50_ms"],
                                       summary[-1]["rtt_p99_ms"], jitter,
                                       tcp), flush=True)
        for i, rate in enumerate(rates):
            r = switchover(net, rate, duration, at, 6000 + i)
            runs.append(r)
            print("switchover at %d/s: %d of %d lost" % (
                rate, r["count"] - r["received"], r["count"]), flush=True)
    with open(out / "rtt.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "i", "rtt_ms"])
        for mode, v in rtts.items():
            w.writerows((mode, i, x) for i, x in enumerate(v))
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(summary[0]))
        w.writeheader()
        w.writerows(summary)
    with open(out / "switchover.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["rate", "bin_start_s", "sent", "lost", "switch_start_s",
                    "switch_end_s"])
        for r in runs:
            for t, s, lo in r["bins"]:
                w.writerow([r["rate"], "%.1f" % t, s, lo,
                            "%.3f" % r["switch_start_s"],
                            "%.3f" % r["switch_end_s"]])
    (out / "rtt-cdf.svg").write_text(cdf_svg(rtts))
    (out / "switchover.svg").write_text(switchover_svg(runs))
    meta = ("%d pings at 1 ms per mode, iperf3 runs of %d s, switchover at "
            "t = %d s of %d s streams; %d worker(s) per switch; %s" % (
                n_ping, secs, at, duration, a.workers,
                datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds")))
    write_html(out, summary, runs, meta)
    print("results in %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
