#!/usr/bin/env python3
"""Summarise one `make bench` run (scripts/bench.sh) into a Markdown table
file and one JSON file.

    bench_report.py RUN_DIR OUT.md OUT.json "options line"

RUN_DIR holds one `oxflow bench run` output folder per part (pipeline, raw,
fwd_afpacket, fwd_xdp, oxflow, oxflow_xdp, ovs, SWITCH-100k when the
100K size was measured separately, paired-BACKEND-ROUND-fwd and
paired-BACKEND-ROUND-oxflow from the paired part) and SWITCH-latency.json
files.
"""
import json
import os
import platform
import statistics
import sys

SWITCHES = ["oxflow", "oxflow_xdp", "ovs"]
CEILING = {"oxflow": "fwd_afpacket", "oxflow_xdp": "fwd_xdp"}
# A ceiling whose max-rate runs spread by more than this fraction of its
# max is flagged in the report.
UNSTEADY = 0.05


def load(run, name):
    p = os.path.join(run, name, "results.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f).get("results")


def table(res, name):
    if not res:
        return []
    for t in res.get("tables", []):
        if t["name"] == name:
            return [dict(zip(t["columns"], r)) for r in t["rows"]]
    return []


def scalar(res, name):
    if not res:
        return None
    for s in res.get("scalars", []):
        if s["name"] == name:
            return s["value"]
    return None


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def install_samples(run, switch, row):
    """Every 100,000 flow-mods + barrier time measured for a switch: its
    throughput row of l2/100000 (`row`, if any) and the install part's
    runs (SWITCH-install-1, -2, ...), in that order."""
    got = [row["install_s"]] if row and row.get("install_s") is not None else []
    i = 1
    while os.path.isdir(os.path.join(run, f"{switch}-install-{i}")):
        v = scalar(load(run, f"{switch}-install-{i}"), "l2/100000_install_s")
        if v is not None:
            got.append(v)
        i += 1
    return got


def install_cell(samples):
    """The control-plane cell: median (min-max, n) of the install times."""
    if not samples:
        return "-"
    if len(samples) == 1:
        return fmt(samples[0])
    return (f"{fmt(statistics.median(samples))} ({fmt(min(samples))}-"
            f"{fmt(max(samples))}, {len(samples)})")


def paired_rows(run):
    """The `paired` part: for each backend and workload, the forwarder's
    and oxflow's max rate per round (a round counts only when both ran),
    their medians and the ratio of the medians."""
    rows = []
    for b in ["afpacket", "xdp"]:
        per = {}   # workload -> [(fwd, oxflow)] by round
        order = []
        i = 1
        while os.path.isdir(os.path.join(run, f"paired-{b}-{i}-fwd")) or \
                os.path.isdir(os.path.join(run, f"paired-{b}-{i}-oxflow")):
            fwd = scalar(load(run, f"paired-{b}-{i}-fwd"), "max_mpps")
            for r in table(load(run, f"paired-{b}-{i}-oxflow"), "throughput"):
                w = r["workload"]
                if w not in per:
                    per[w] = []
                    order.append(w)
                if fwd and r.get("max_mpps"):
                    per[w].append((fwd, r["max_mpps"]))
            i += 1
        for w in order:
            pairs = per[w]
            if not pairs:
                continue
            f = statistics.median(p[0] for p in pairs)
            o = statistics.median(p[1] for p in pairs)
            rr = [p[1] / p[0] for p in pairs]
            rows.append({"backend": b, "workload": w, "rounds": len(pairs),
                         "forwarder_median_mpps": f, "oxflow_median_mpps": o,
                         "ratio_of_medians": ratio(o, f),
                         "round_ratio_min": min(rr), "round_ratio_max": max(rr),
                         "rounds_mpps": pairs})
    return rows


def pipeline_section(lines, out, run, part, title, intro=()):
    """The pipeline-only table of `part` (`title` as its heading,
    `intro` lines under it) appended to `lines`, its rows in `out[part]`."""
    pres = load(run, part)
    pr = table(pres, "pipeline")
    out[part] = pr
    cls = {}
    for c in table(pres, "classifiers"):
        cls.setdefault(c["workload"], []).append(
            f"t{c['table']}:{c['classifier']}({c['entries']})")
    if pr:
        one = {r["workload"]: r for r in pr if r["workers"] == 1}
        many = {r["workload"]: r for r in pr if r["workers"] > 1}
        # Each row is the median of the experiment's rounds (one worker,
        # then two, back to back); the scaling is the ratio of the two
        # medians, with the range of the rounds' own ratios beside it.
        scl = {s["workload"]: s for s in table(pres, "scaling")}
        rounds = next(iter(scl.values()), {}).get("rounds")
        lines += [f"## {title}", ""] + list(intro)
        if rounds:
            lines += [f"Every figure is the median of {rounds} rounds; each round runs one "
                      "worker, then two, back to back, and the scaling is the ratio of the "
                      "medians (the rounds' own ratios in the next column).", ""]
        # Results from before the interleaved windows have no such columns.
        windows = any(s.get("pairs") for s in scl.values())
        if windows:
            lines += ["The window columns measure the scaling again in pairs of "
                      "interleaved windows of about 50 ms (one worker, then two, in ABBA "
                      "order): the median of the pairs' ratios, their range, and how "
                      "many pairs reach 1.8. Each pair also runs a host reference "
                      "(integer work, no memory, one thread then two on the same cores): "
                      "its median ratio, and the median of the pipeline's ratios in the "
                      "pairs where the reference scaled at least 1.9 (the host gave the "
                      "two workers two cores), with how many such pairs there were.",
                      ""]
        head = ("| workload | Mpps (1 core) | ns/packet | CPU ns/packet | Mpps (2 workers) "
                "| scaling | round scalings min-max |")
        rule = "|---|---|---|---|---|---|---|"
        if windows:
            head += (" window pairs median | pairs min-max | pairs >= 1.8 | host reference "
                     "| with two cores (pairs) |")
            rule += "---|---|---|---|---|"
        lines += [head + " tables |", rule + "---|"]
        for w, r in one.items():
            m = many.get(w)
            s = scl.get(w, {})
            span = (f"{fmt(s['round_ratio_min'], 2)}-{fmt(s['round_ratio_max'], 2)}"
                    if s else "-")
            row = (f"| {w} | {fmt(r['mpps'], 2)} | {fmt(r['ns_per_packet'], 1)} | "
                   f"{fmt(r.get('cpu_ns_per_packet'), 1)} | "
                   f"{fmt(m['mpps'] if m else None, 2)} | "
                   f"{fmt(ratio(m['mpps'], r['mpps']) if m else None, 2)} | {span} |")
            if windows:
                if s.get("pairs"):
                    row += (f" {fmt(s['windows_ratio'], 2)} | "
                            f"{fmt(s['windows_ratio_min'], 2)}-"
                            f"{fmt(s['windows_ratio_max'], 2)} | "
                            f"{int(s['pairs_at_least_1_8'])}/{int(s['pairs'])} |")
                    two = s.get("pairs_host_two_cores")
                    row += (f" {fmt(s.get('host_ratio'), 2)} | "
                            f"{fmt(s.get('windows_ratio_two_cores'), 2)} "
                            f"({int(two) if two is not None else '-'}) |")
                else:
                    row += " - | - | - | - | - |"
            lines.append(row + f" {' '.join(cls.get(w.replace('/tse', ''), []))} |")
        lines.append("")


def main():
    run, md_path, json_path, opts = sys.argv[1:5]
    out = {"options": opts, "machine": {
        "kernel": platform.release(), "cpus": os.cpu_count()}}
    lines = [f"# oxflow bench {os.path.basename(run)}", "",
             f"Options: `{opts}`. Machine: Linux {platform.release()}, "
             f"{os.cpu_count()} CPUs; 64-byte frames over veth, generator on "
             "core 0, switch on core 1. Raw results: "
             f"`{os.path.relpath(run)}`.", ""]

    # --- I/O ceilings
    ceil = {}
    for name in ["raw", "fwd_afpacket", "fwd_xdp"]:
        r = load(run, name)
        if r:
            ceil[name] = {"max_mpps": scalar(r, "max_mpps"),
                          "max_spread_mpps": scalar(r, "max_mpps_spread"),
                          "offered_mpps": scalar(r, "offered_mpps"),
                          "no_loss_mpps": scalar(r, "no_loss_mpps"),
                          "cpu_pct": scalar(r, "switch_cpu_pct")}
    out["ceilings"] = ceil
    if ceil:
        lines += ["## I/O ceilings (no OpenFlow)", "",
                  "| path | max Mpps | spread | offered Mpps | no-loss Mpps | CPU % |",
                  "|---|---|---|---|---|---|"]
        for k, v in ceil.items():
            lines.append(f"| {k} | {fmt(v['max_mpps'])} | {fmt(v['max_spread_mpps'])} | "
                         f"{fmt(v['offered_mpps'])} | "
                         f"{fmt(v['no_loss_mpps'])} | {fmt(v['cpu_pct'], 0)} |")
        lines.append("")
        # A ceiling whose repeats disagree makes every ratio against it
        # as uncertain: say so next to the table.
        for k, v in ceil.items():
            mx, sp = v["max_mpps"], v["max_spread_mpps"]
            if mx and sp is not None and sp / mx > UNSTEADY:
                lines.append(f"- {k}: its max-rate runs spread by {fmt(sp)} Mpps "
                             f"({100 * sp / mx:.0f} % of {fmt(mx)}): a ratio against it "
                             "is only good to about that much (a busy machine).")
        if lines[-1] != "":
            lines.append("")

    # --- throughput per workload
    rows = {}
    order = []
    for sw in SWITCHES:
        for part in [sw, sw + "-100k"]:
            for r in table(load(run, part), "throughput"):
                w = r["workload"]
                if w not in rows:
                    rows[w] = {}
                    order.append(w)
                rows[w][sw] = r
    out["throughput"] = rows
    present = [s for s in SWITCHES if any(s in rows[w] for w in rows)]
    if rows:
        hdr = ["workload"]
        for s in present:
            hdr += [f"{s} max", f"{s} no-loss"]
        if "oxflow" in present and "ovs" in present:
            hdr.append("oxflow/OVS")
        if "oxflow_xdp" in present and "ovs" in present:
            hdr.append("xdp/OVS")
        for s in present:
            if s in CEILING and CEILING[s] in ceil:
                hdr.append(f"{s}/{CEILING[s]}")
        lines += ["## Throughput (Mpps, max and RFC 2544 no-loss)", "",
                  "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for w in order:
            cells = [w]
            mx = {}
            for s in present:
                r = rows[w].get(s)
                mx[s] = r["max_mpps"] if r else None
                cells += [fmt(mx[s]), fmt(r["no_loss_mpps"] if r else None)]
            if "oxflow" in present and "ovs" in present:
                cells.append(fmt(ratio(mx["oxflow"], mx["ovs"]), 2))
            if "oxflow_xdp" in present and "ovs" in present:
                cells.append(fmt(ratio(mx["oxflow_xdp"], mx["ovs"]), 2))
            for s in present:
                if s in CEILING and CEILING[s] in ceil:
                    cells.append(fmt(ratio(mx[s], ceil[CEILING[s]]["max_mpps"]), 2))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        # tse vs spread, l2/100K vs single
        lines += ["## Cache-unfriendly traffic (max rate ratios)", "",
                  "| switch | workload | tse/spread | l2 at size / single |",
                  "|---|---|---|---|"]
        for s in present:
            single = rows.get("single/1", {}).get(s)
            for w in order:
                if w.endswith("/tse") or w not in rows or s not in rows[w]:
                    continue
                sp = rows[w][s]["max_mpps"]
                tse = rows.get(w + "/tse", {}).get(s)
                l2 = (ratio(sp, single["max_mpps"]) if single and w.startswith("l2/")
                      else None)
                if tse or l2:
                    lines.append(f"| {s} | {w} | "
                                 f"{fmt(ratio(tse['max_mpps'], sp) if tse else None, 2)} | "
                                 f"{fmt(l2, 2)} |")
        lines.append("")

    # --- what a frame cost each switch's core at its max rate: CPU time
    # per forwarded frame (any switch), and oxflow's own account (worker
    # statistics): busy time per frame, the pipeline's part of it, the
    # busy share of the core and the batch. Older result folders have
    # none of these.
    cost_cols = [("switch_cpu_ns_per_pkt", "CPU ns", 0),
                 ("switch_busy_ns_per_pkt", "busy ns", 0),
                 ("switch_pipeline_ns_per_pkt", "pipeline ns", 0),
                 ("switch_busy_pct", "busy %", 0),
                 ("switch_batch", "batch", 1)]
    # Per switch, the columns it has a value in (Open vSwitch: CPU only).
    cost = {s: [c for c in cost_cols
                if any(rows[w].get(s, {}).get(c[0]) is not None
                       for w in order)]
            for s in present}
    cost = {s: cols for s, cols in cost.items() if cols}
    if cost:
        hdr = ["workload"] + [f"{s} {label}" for s, cols in cost.items()
                              for _, label, _ in cols]
        versus = ("oxflow" in cost and "ovs" in cost
                  and any(c[0] == "switch_busy_ns_per_pkt"
                          for c in cost["oxflow"]))
        if versus:
            hdr.append("OVS CPU ns / oxflow busy ns")
        lines += ["## Cost per frame on the switch core (at the max rate)", "",
                  "CPU ns: the switch process's CPU time per frame the sink "
                  "received. busy ns: oxflow's workers' time in rounds that "
                  "received frames (receive, pipeline, transmit) per frame "
                  "received; pipeline ns: the pipeline's part of it; busy %: "
                  "that time as a share of the window (near 100: the "
                  "switch's core was the limit, not the generator); batch: "
                  "mean frames per round that received any. From oxflow's "
                  "worker statistics (`oxflow ctl dump-worker-stats`), which "
                  "Open vSwitch does not have.", "",
                  "| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for w in order:
            cells = [w]
            for s, cols in cost.items():
                r = rows[w].get(s) or {}
                cells += [fmt(r.get(k), d) for k, _, d in cols]
            if versus:
                cells.append(fmt(ratio(
                    (rows[w].get("ovs") or {}).get("switch_cpu_ns_per_pkt"),
                    (rows[w].get("oxflow") or {}).get(
                        "switch_busy_ns_per_pkt")), 2))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    # --- per switch: latency, TCP, flow-mods, idle CPU (plus the ping
    # floor of one veth pair and oxflow with busy polling, latency only)
    per = {}
    for s in ["floor"] + SWITCHES[:2] + ["oxflow_busy"] + SWITCHES[2:]:
        p = os.path.join(run, f"{s}-latency.json")
        lat = json.load(open(p)) if os.path.exists(p) else None
        fm = rows.get("l2/100000", {}).get(s)
        installs = install_samples(run, s, fm)
        if lat or installs:
            per[s] = dict(lat or {})
            per[s]["flow_mods_100k_barrier_s"] = (
                statistics.median(installs) if installs else None)
            per[s]["flow_mods_100k_barrier_samples"] = installs
    out["per_switch"] = per
    if per:
        floor = per.get("floor", {}).get("ping_rtt_ms_median")
        lines += ["## Latency, TCP, control plane, idle CPU", "",
                  "floor: one veth pair and no switch (a ping crosses two veths; through a "
                  "switch it crosses four, so 2 x floor is the RTT of a switch that takes no "
                  "time). oxflow_busy: oxflow with poll_mode = \"busy\" (its idle CPU is a "
                  "core by design).", "",
                  "Pings start once the switch, its flows replaced by the two the latency "
                  "part uses, has used under 5 % of a core in two consecutive half-second "
                  "windows (quiet after: the seconds that took; `-`: not waited for, as "
                  "for oxflow_busy, or still busy at the limit). Right after deleting the "
                  "throughput part's 100K flows a switch may still be working on them.", "",
                  "100K flow-mods + barrier: the median of the throughput run's l2/100000 "
                  "install and the install part's (SWITCH-install-N), with their range and "
                  "count.", "",
                  "| switch | ping RTT median ms | RTT - 2 x floor ms | iperf3 Gbit/s (offloads off) | "
                  "iperf3 Gbit/s (offloads on) | 100K flow-mods + barrier s | idle CPU % | "
                  "quiet after s |",
                  "|---|---|---|---|---|---|---|---|"]
        for s, v in per.items():
            rtt = v.get("ping_rtt_ms_median")
            own = (rtt - 2 * floor if s != "floor" and rtt is not None and floor is not None
                   else None)
            lines.append(
                f"| {s} | {fmt(rtt)} | {fmt(own)} | "
                f"{fmt(v.get('iperf3_gbps_offloads_off'), 2)} | "
                f"{fmt(v.get('iperf3_gbps_offloads_on'), 2)} | "
                f"{install_cell(v.get('flow_mods_100k_barrier_samples'))} | "
                f"{fmt(v.get('idle_cpu_pct'), 1)} | "
                f"{fmt(v.get('settle_s'), 1)} |")
        lines.append("")

    # --- pipeline only, in the workloads' order and in a random one
    pipeline_section(lines, out, run, "pipeline", "Pipeline only (no I/O)")
    pipeline_section(
        lines, out, run, "pipeline-random", "Pipeline only, frames in random order",
        ["The same at 100K entries with the frames in one fixed random permutation "
         "(`order=random`): every entry still hit once per pass, but not entry after "
         "entry, whose records and slots the hardware prefetches.", ""])

    # --- memory floor (with the pipeline part)
    mem = table(load(run, "memory"), "memory")
    out["memory"] = mem
    if mem:
        lines += ["## Memory floor (random cache-line reads, core 0)", "",
                  "What one read of a random cache line costs by the size of the memory "
                  "it falls in: one at a time (each address from the read before: the "
                  "latency) and overlapped (addresses known in advance: as many in flight "
                  "as the core allows, the best a staged lookup gets). A packet whose "
                  "lookups touch k random lines of tables larger than the core's caches "
                  "pays at least k times the overlapped figure.", "",
                  "| memory KiB | one at a time ns | overlapped ns |", "|---|---|---|"]
        for m in mem:
            lines.append(f"| {m['kib']} | {fmt(m['dependent_ns'], 1)} | "
                         f"{fmt(m['overlapped_ns'], 2)} |")
        lines.append("")

    # --- paired: forwarder and oxflow back to back, PAIRS rounds
    paired = paired_rows(run)
    out["paired"] = paired
    if paired:
        lines += ["## Paired with the plain forwarder (ratio of medians)", "",
                  "Each round runs the forwarder, then oxflow, seconds apart, one max-rate "
                  "run per row; the generator's rate drifts between minutes on this "
                  "machine, so these ratios, not the ones above, decide the 95 % targets.",
                  "",
                  "| backend | workload | rounds | forwarder median Mpps | oxflow median Mpps | "
                  "ratio of medians | round ratios min-max |",
                  "|---|---|---|---|---|---|---|"]
        for p in paired:
            lines.append(
                f"| {p['backend']} | {p['workload']} | {p['rounds']} | "
                f"{fmt(p['forwarder_median_mpps'])} | {fmt(p['oxflow_median_mpps'])} | "
                f"{fmt(p['ratio_of_medians'], 2)} | {fmt(p['round_ratio_min'], 2)}-"
                f"{fmt(p['round_ratio_max'], 2)} |")
        lines.append("")

    notes = []
    for part in sorted(os.listdir(run)):
        r = load(run, part)
        for n in (r or {}).get("notes", []):
            if "FAILED" in n or "limited" in n:
                notes.append(f"- {part}: {n}")
    if notes:
        lines += ["## Notes", ""] + notes + [""]

    with open(md_path, "w") as f:
        f.write("\n".join(lines))
    with open(json_path, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
