"""Reports of the data-centre evaluation (`oxflow.datacenter`).

Input: flow records (one per flow: switch, dist, load, rep, class, size,
start, fct or None, counted = started after the warm-up) and per-run facts
(CPU busy fraction, unfinished flows).

Statistics per (switch, distribution, load, class), over counted flows:
- FCT: mean flow completion time in milliseconds;
- throughput: mean per-flow throughput, size * 8 / FCT, in Mbit/s;
- 95 % confidence interval half-widths (Student's t): over the repeats'
  means when there are at least two repeats, else over the flows of the
  single run (say which: the `ci_over` column);
- unfinished flows are counted separately, never averaged in.

Files: flows.csv, runs.csv, summary.csv, fct-<dist>.svg,
throughput-<dist>.svg (one panel per class, loads on the x axis, one bar
per switch with its interval: the layout of BOFUSS's Figs. 8-9),
index.html (parameters, the machine caveats, tables, the plots), and
params.json.
"""

import csv
import html
import json
import math
import os

from oxflow.dcflows import CLASSES

# Two-sided 95 % Student t quantiles by degrees of freedom (normal beyond).
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447,
        7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 12: 2.179, 15: 2.131,
        20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
CPU_SATURATED = 0.90
COLORS = {"oxflow": "#d95f02", "ovs": "#1b9e77"}


def t95(df):
    if df <= 0:
        return float("nan")
    best = None
    for k in sorted(_T95):
        if k <= df:
            best = _T95[k]
    return best if df <= 120 else 1.960


def mean_ci(values):
    """(mean, 95 % CI half-width) of a list; (nan, nan) when empty."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(values) / n
    if n == 1:
        return m, float("nan")
    var = sum((v - m) ** 2 for v in values) / (n - 1)
    return m, t95(n - 1) * math.sqrt(var / n)


def summarize(flows, runs):
    """Rows: one per (switch, dist, load, class) that has flows."""
    keys = sorted({(f["switch"], f["dist"], f["load"], f["class"])
                   for f in flows},
                  key=lambda k: (k[1], k[0], k[2], CLASSES.index(k[3])))
    rows = []
    for sw, dist, load, cls in keys:
        group = [f for f in flows if f["switch"] == sw and f["dist"] == dist
                 and f["load"] == load and f["class"] == cls and
                 f.get("counted", True)]
        done = [f for f in group if f.get("fct")]
        reps = sorted({f["rep"] for f in group})
        fct = [f["fct"] * 1e3 for f in done]
        tput = [f["size"] * 8 / f["fct"] / 1e6 for f in done]
        if len(reps) >= 2:
            per_fct = [_mean([f["fct"] * 1e3 for f in done if f["rep"] == r])
                       for r in reps]
            per_tput = [_mean([f["size"] * 8 / f["fct"] / 1e6 for f in done
                               if f["rep"] == r]) for r in reps]
            fct_m, fct_ci = mean_ci([v for v in per_fct if v == v])
            tp_m, tp_ci = mean_ci([v for v in per_tput if v == v])
            over = "repeats"
        else:
            fct_m, fct_ci = mean_ci(fct)
            tp_m, tp_ci = mean_ci(tput)
            over = "flows"
        busy = [r["cpu_busy"] for r in runs if r["switch"] == sw and
                r["dist"] == dist and r["load"] == load]
        rows.append({
            "switch": sw, "dist": dist, "load": load, "class": cls,
            "flows": len(group), "finished": len(done),
            "unfinished": len(group) - len(done),
            "fct_ms": fct_m, "fct_ci_ms": fct_ci,
            "fct_p99_ms": _percentile(fct, 0.99),
            "tput_mbps": tp_m, "tput_ci_mbps": tp_ci, "ci_over": over,
            "cpu_busy": max(busy) if busy else float("nan")})
    return rows


def _mean(values):
    return sum(values) / len(values) if values else float("nan")


def _percentile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(math.ceil(q * len(s))) - 1)]


def _fmt(v, digits=1):
    if v is None or v != v:
        return "-"
    return "%.*f" % (digits, v)


def markdown_table(rows):
    lines = ["| distribution | load % | class | switch | flows (unfinished) "
             "| mean FCT ms ± 95% CI | p99 FCT ms | throughput Mbit/s ± 95% "
             "CI | CPU busy |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %g | %s | %s | %d (%d) | %s ± %s | %s "
                     "| %s ± %s | %s%% |" % (
                         r["dist"], r["load"], r["class"], r["switch"],
                         r["flows"], r["unfinished"], _fmt(r["fct_ms"]),
                         _fmt(r["fct_ci_ms"]), _fmt(r["fct_p99_ms"]),
                         _fmt(r["tput_mbps"], 2), _fmt(r["tput_ci_mbps"], 2),
                         _fmt(100 * r["cpu_busy"], 0)))
    return "\n".join(lines)


def _write_csv(path, rows, fields):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def bar_svg(rows, dist, metric, ci, ylabel, title):
    """Grouped bars: one panel per class, loads on x, a bar per switch."""
    sel = [r for r in rows if r["dist"] == dist]
    switches = sorted({r["switch"] for r in sel})
    loads = sorted({r["load"] for r in sel})
    pw, ph, left, top, bottom = 260, 220, 60, 40, 50
    width = left + len(CLASSES) * (pw + 20) + 20
    height = top + ph + bottom + 20
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (width, height),
           '<text x="%d" y="18" font-size="14">%s</text>' % (
               left, html.escape(title))]
    for k, sw in enumerate(switches):
        out.append('<rect x="%d" y="24" width="10" height="10" fill="%s"/>'
                   '<text x="%d" y="33">%s</text>' % (
                       width - 200 + 80 * k, COLORS.get(sw, "#7570b3"),
                       width - 186 + 80 * k, html.escape(sw)))
    for ci_idx, cls in enumerate(CLASSES):
        x0 = left + ci_idx * (pw + 20)
        vals = [r for r in sel if r["class"] == cls]
        vmax = max([(r[metric] or 0) + (r[ci] if r[ci] == r[ci] else 0)
                    for r in vals if r[metric] == r[metric]] or [1.0])
        vmax = vmax * 1.1 or 1.0
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
                   'stroke="#888"/>' % (x0, top, pw, ph))
        out.append('<text x="%d" y="%d">%s</text>' % (
            x0 + 4, top + 14, cls))
        for t in range(5):
            v = vmax * t / 4
            y = top + ph - ph * t / 4
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (
                x0 - 3, y + 4, _fmt(v, 1 if vmax < 100 else 0)))
        gw = pw / max(1, len(loads))
        bw = gw * 0.7 / max(1, len(switches))
        for li, load in enumerate(loads):
            gx = x0 + li * gw + gw * 0.15
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%g%%'
                       '</text>' % (x0 + li * gw + gw / 2, top + ph + 14,
                                    load))
            for si, sw in enumerate(switches):
                r = next((r for r in vals if r["load"] == load and
                          r["switch"] == sw), None)
                if r is None or r[metric] != r[metric]:
                    continue
                h = ph * r[metric] / vmax
                x = gx + si * bw
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" '
                           'height="%.1f" fill="%s"><title>%s %g%% %s: %s'
                           '</title></rect>' % (
                               x, top + ph - h, bw - 2, h,
                               COLORS.get(sw, "#7570b3"), sw, load, cls,
                               _fmt(r[metric], 2)))
                if r[ci] == r[ci]:
                    cy0 = top + ph - ph * (r[metric] + r[ci]) / vmax
                    cy1 = top + ph - ph * max(0, r[metric] - r[ci]) / vmax
                    cx = x + (bw - 2) / 2
                    out.append('<path d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f '
                               '%.1fH%.1f" stroke="#000"/>' % (
                                   cx, cy0, cy1, cx - 3, cy0, cx + 3, cx - 3,
                                   cy1, cx + 3))
    out.append('<text x="14" y="%d" transform="rotate(-90 14 %d)">%s</text>'
               % (top + ph // 2, top + ph // 2, html.escape(ylabel)))
    out.append('<text x="%d" y="%d">offered load</text>' % (
        width // 2 - 30, top + ph + 34))
    out.append("</svg>")
    return "\n".join(out)


def write_report(out, flows, runs, params):
    """Write every file listed in the module doc; returns their paths."""
    os.makedirs(out, exist_ok=True)
    rows = summarize(flows, runs)
    paths = {"flows": os.path.join(out, "flows.csv"),
             "runs": os.path.join(out, "runs.csv"),
             "summary": os.path.join(out, "summary.csv"),
             "html": os.path.join(out, "index.html")}
    _write_csv(paths["flows"], flows,
               ["switch", "dist", "load", "rep", "id", "src", "dst", "size",
                "class", "start", "lag", "fct", "counted", "error"])
    _write_csv(paths["runs"], runs, ["switch", "dist", "load", "rep",
                                     "flows", "unfinished", "cpu_busy",
                                     "lag_p99_ms", "spine_share"])
    _write_csv(paths["summary"], rows, list(rows[0]) if rows else ["none"])
    with open(os.path.join(out, "params.json"), "w") as f:
        json.dump(params, f, indent=1)
    plots = []
    for dist in sorted({r["dist"] for r in rows}):
        for metric, ci, ylabel, name in (
                ("fct_ms", "fct_ci_ms", "mean FCT (ms)", "fct"),
                ("tput_mbps", "tput_ci_mbps", "mean flow throughput (Mbit/s)",
                 "throughput")):
            fname = "%s-%s.svg" % (name, dist)
            with open(os.path.join(out, fname), "w") as f:
                f.write(bar_svg(rows, dist, metric, ci, ylabel,
                                "%s: %s per flow class" % (dist, ylabel)))
            plots.append(fname)
    saturated = [r for r in runs if r["cpu_busy"] >= CPU_SATURATED]
    unfinished = sum(r["unfinished"] for r in runs)
    notes = []
    if saturated:
        notes.append("CPU saturated (>= %d%% busy) in %d of %d runs (%s): "
                     "there the switches and traffic agents, not the %s "
                     "Mbit/s links, bound FCT and throughput." % (
                         100 * CPU_SATURATED, len(saturated), len(runs),
                         ", ".join("%s %s %g%%" % (r["switch"], r["dist"],
                                                   r["load"])
                                   for r in saturated), params.get("bw")))
    if unfinished:
        notes.append("%d flows did not finish within the drain time; they "
                     "are listed in flows.csv and left out of the means." %
                     unfinished)
    body = ["<!doctype html><meta charset=utf-8><title>oxflow data-centre "
            "evaluation</title><style>body{font-family:sans-serif;margin:2em}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
            "padding:2px 6px;text-align:right}</style>",
            "<h1>Spine-Leaf data-centre evaluation</h1>",
            "<p>%d-%d-%d Spine-Leaf (spines-leaves-servers per leaf), %g "
            "Mbit/s links, %gs of arrivals per run (first %gs not counted), "
            "%d repeat(s), flow sizes capped at %s. Command: <code>%s</code>"
            "</p>" % (params["spines"], params["leaves"], params["servers"],
                      params["bw"], params["duration"], params["warmup"],
                      params["repeats"],
                      ("%g bytes" % params["max_size"]) if params.get(
                          "max_size") else "no cap",
                      html.escape(params.get("command", ""))),
            "<p>Classes: mouse &lt; 10 KB, elephant &gt; 10 MB, rabbit in "
            "between. Intervals: 95 %% Student t over %s.</p>" % (
                "repeats" if params["repeats"] > 1 else "the run's flows")]
    for n in notes:
        body.append("<p><b>Note:</b> %s</p>" % html.escape(n))
    for p in plots:
        body.append('<p><img src="%s"></p>' % p)
    body.append("<table><tr>" + "".join(
        "<th>%s</th>" % h for h in (
            "distribution", "load %", "class", "switch", "flows",
            "unfinished", "mean FCT ms", "± CI", "p99 FCT ms",
            "throughput Mbit/s", "± CI", "CPU busy %")) + "</tr>")
    for r in rows:
        body.append("<tr>" + "".join("<td>%s</td>" % c for c in (
            r["dist"], "%g" % r["load"], r["class"], r["switch"], r["flows"],
            r["unfinished"], _fmt(r["fct_ms"]), _fmt(r["fct_ci_ms"]),
            _fmt(r["fct_p99_ms"]), _fmt(r["tput_mbps"], 2),
            _fmt(r["tput_ci_mbps"], 2), _fmt(100 * r["cpu_busy"], 0))) +
            "</tr>")
    body.append("</table>")
    body.append("<h2>Runs</h2><p>Spine shares: the fraction of the bytes "
                "the spines forwarded that each spine carried (ECMP "
                "balance). Start lag: how late the agents started flows "
                "(p99), high when the CPU is saturated.</p>"
                "<table><tr>" + "".join(
                    "<th>%s</th>" % h for h in (
                        "switch", "distribution", "load %", "repeat",
                        "flows", "unfinished", "CPU busy %",
                        "p99 start lag ms", "spine shares")) + "</tr>")
    for r in runs:
        body.append("<tr>" + "".join("<td>%s</td>" % c for c in (
            r["switch"], r["dist"], "%g" % r["load"], r["rep"] + 1,
            r["flows"], r["unfinished"], _fmt(100 * r["cpu_busy"], 0),
            _fmt(r.get("lag_p99_ms"), 1), r.get("spine_share", ""))) +
            "</tr>")
    body.append("</table><p>Raw data: flows.csv, runs.csv, summary.csv, "
                "params.json.</p>")
    with open(paths["html"], "w") as f:
        f.write("\n".join(body))
    return paths
