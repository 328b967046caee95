"""`scripts/bench_report.py` (the table `make bench` prints) on a made-up
run folder: the ratios against the I/O ceilings, the warning next to a
ceiling whose repeats disagree, and the latency rows with the ping floor
of one veth pair and oxflow in busy-poll mode, the paired rounds and the
pipeline-only medians."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPORT = os.path.join(ROOT, "scripts", "bench_report.py")


def results(run, part, scalars=(), tables=()):
    """A part's `results.json` as `oxflow bench` writes it."""
    os.makedirs(os.path.join(run, part))
    doc = {"results": {
        "scalars": [{"name": n, "value": v} for n, v in scalars],
        "tables": [{"name": n, "columns": cols, "rows": rows}
                   for n, cols, rows in tables],
    }}
    with open(os.path.join(run, part, "results.json"), "w") as f:
        json.dump(doc, f)


def ceiling(run, part, max_mpps, spread):
    results(run, part, [("max_mpps", max_mpps), ("max_mpps_spread", spread),
                        ("offered_mpps", max_mpps), ("no_loss_mpps", max_mpps),
                        ("switch_cpu_pct", 99.0)])


def latency(run, label, rtt, settle_s=None):
    with open(os.path.join(run, "%s-latency.json" % label), "w") as f:
        json.dump({"ping_rtt_ms_median": rtt, "ping_count": 100, "settle_s": settle_s}, f)


def test_ratios_unsteady_ceiling_and_latency_rows(tmp_path):
    run = str(tmp_path / "run")
    os.makedirs(run)
    ceiling(run, "fwd_afpacket", 0.400, 0.004)   # steady: 1 %
    ceiling(run, "fwd_xdp", 0.400, 0.100)        # unsteady: 25 %
    cols = ["workload", "max_mpps", "no_loss_mpps"]
    results(run, "oxflow", tables=[("throughput", cols, [["l2/100", 0.380, 0.380]])])
    latency(run, "floor", 0.040)
    latency(run, "oxflow", 0.100, settle_s=1.013)
    latency(run, "oxflow_busy", 0.070)
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    # The ratio against the AF_PACKET ceiling.
    assert "| l2/100 | 0.380 | 0.380 | 0.95 |" in text, text
    # Only the unsteady ceiling is flagged, with its spread.
    assert "- fwd_xdp: its max-rate runs spread by 0.100 Mpps (25 % of 0.400)" in text
    assert "- fwd_afpacket:" not in text
    # Latency: the floor, then each switch with its RTT beyond 2 x floor.
    rows = [ln for ln in text.splitlines() if ln.startswith("| floor ")
            or ln.startswith("| oxflow ") or ln.startswith("| oxflow_busy ")]
    assert rows[0].startswith("| floor | 0.040 | - |"), rows
    assert "| oxflow | 0.100 | 0.020 |" in text, rows
    assert "| oxflow_busy | 0.070 | -0.010 |" in text, rows
    # How long the switch took to go quiet before the pings; "-" when
    # not waited for (busy polling).
    assert rows[1].endswith("| 1.0 |"), rows
    assert rows[2].endswith("| - |"), rows
    doc = json.load(open(js))
    assert doc["per_switch"]["floor"]["ping_rtt_ms_median"] == 0.040


def test_paired_rounds_give_the_ratio_of_medians(tmp_path):
    """The `paired` part: per backend and workload, the medians of the
    forwarder's and oxflow's rates over the rounds where both ran, their
    ratio, and the spread of the per-round ratios. A round whose oxflow
    part is missing (it did not start) does not count."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "max_mpps", "no_loss_mpps"]
    fwd = {"afpacket": [0.40, 0.44, 0.30], "xdp": [0.42, 0.36]}
    ox = {"afpacket": [[("l2/100000", 0.38), ("gateway/100000", 0.36)],
                       [("l2/100000", 0.44), ("gateway/100000", 0.40)],
                       [("l2/100000", 0.30), ("gateway/100000", 0.27)]],
          "xdp": [[("l2/100000", 0.42)], None]}
    for b in fwd:
        for i, mpps in enumerate(fwd[b], 1):
            ceiling(run, "paired-%s-%d-fwd" % (b, i), mpps, 0.0)
            if ox[b][i - 1] is not None:
                results(run, "paired-%s-%d-oxflow" % (b, i), tables=[
                    ("throughput", cols, [[w, m, None] for w, m in ox[b][i - 1]])])
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    # afpacket l2: medians 0.40 and 0.38; round ratios 0.95, 1.00, 1.00.
    assert "| afpacket | l2/100000 | 3 | 0.400 | 0.380 | 0.95 | 0.95-1.00 |" in text, text
    # gateway: medians 0.40 / 0.36 -> 0.90; rounds 0.90, 0.909, 0.90.
    assert "| afpacket | gateway/100000 | 3 | 0.400 | 0.360 | 0.90 | 0.90-0.91 |" in text
    # xdp: round 2 has no oxflow part; one round counts.
    assert "| xdp | l2/100000 | 1 | 0.420 | 0.420 | 1.00 | 1.00-1.00 |" in text
    doc = json.load(open(js))
    assert [p["rounds"] for p in doc["paired"]] == [3, 3, 1]


def test_pipeline_rows_are_medians_with_the_rounds_scaling(tmp_path):
    """The `pipeline` part: the median one- and two-worker rows, their
    ratio, and the range of the rounds' own ratios from its `scaling`
    table."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "kind", "size", "traffic", "workers", "mpps", "mpps_per_core",
            "ns_per_packet", "cpu_ns_per_packet", "not_forwarded"]
    rows = [["l2/100", "l2", 100, "spread", 1, 40.0, 40.0, 25.0, 24.9, 0],
            ["l2/100", "l2", 100, "spread", 2, 76.0, 38.0, 26.3, 26.2, 0]]
    scols = ["workload", "workers", "rounds", "one_worker_median_mpps",
             "workers_median_mpps", "ratio_of_medians", "round_ratio_min", "round_ratio_max"]
    srows = [["l2/100", 2, 3, 40.0, 76.0, 1.9, 1.7, 2.05]]
    results(run, "pipeline", tables=[
        ("pipeline", cols, rows),
        ("classifiers", ["workload", "table", "entries", "classifier"],
         [["l2/100", 0, 100, "hash"]]),
        ("scaling", scols, srows)])
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    assert "Every figure is the median of 3 rounds" in text, text
    assert "| l2/100 | 40.00 | 25.0 | 24.9 | 76.00 | 1.90 | 1.70-2.05 | t0:hash(100) |" in text, text

    # Without a scaling table (one worker only): no sentence about rounds,
    # no range.
    run1 = str(tmp_path / "run1")
    os.makedirs(run1)
    results(run1, "pipeline", tables=[("pipeline", cols, rows[:1])])
    subprocess.run([sys.executable, REPORT, run1, md, js, "test"], check=True)
    text = open(md).read()
    assert "median of" not in text, text
    assert "| l2/100 | 40.00 | 25.0 | 24.9 | - | - | - |  |" in text, text


def test_pipeline_window_pairs_beside_the_rounds(tmp_path):
    """With the interleaved windows (`pairs` > 0): their median ratio,
    range and pairs reaching 1.8 beside the rounds' figures; a row
    measured without them gets dashes."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "kind", "size", "traffic", "workers", "mpps", "mpps_per_core",
            "ns_per_packet", "cpu_ns_per_packet", "not_forwarded"]
    rows = [["l2/100", "l2", 100, "spread", 1, 40.0, 40.0, 25.0, 24.9, 0],
            ["l2/100", "l2", 100, "spread", 2, 60.0, 30.0, 33.3, 33.0, 0],
            ["l3/100", "l3", 100, "spread", 1, 20.0, 20.0, 50.0, 49.9, 0],
            ["l3/100", "l3", 100, "spread", 2, 39.0, 19.5, 51.3, 51.0, 0]]
    scols = ["workload", "workers", "rounds", "one_worker_median_mpps",
             "workers_median_mpps", "ratio_of_medians", "round_ratio_min",
             "round_ratio_max", "pairs", "windows_ratio", "windows_ratio_min",
             "windows_ratio_max", "windows_one_mpps", "windows_workers_mpps",
             "pairs_at_least_1_8", "host_ratio", "pairs_host_two_cores",
             "windows_ratio_two_cores"]
    srows = [["l2/100", 2, 3, 40.0, 60.0, 1.5, 1.2, 1.9, 20, 1.93, 1.02, 2.01, 41.0, 79.1,
              17.0, 1.52, 9.0, 1.97],
             ["l3/100", 2, 3, 20.0, 39.0, 1.95, 1.9, 2.0, 0, None, None, None, None, None,
              None, None, None, None]]
    results(run, "pipeline", tables=[("pipeline", cols, rows), ("scaling", scols, srows)])
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    assert "pairs of interleaved windows" in text, text
    assert "host reference" in text, text
    assert ("| l2/100 | 40.00 | 25.0 | 24.9 | 60.00 | 1.50 | 1.20-1.90 | 1.93 | 1.02-2.01 "
            "| 17/20 | 1.52 | 1.97 (9) |  |") in text, text
    assert ("| l3/100 | 20.00 | 50.0 | 49.9 | 39.00 | 1.95 | 1.90-2.00 | - | - | - | - | - |  |"
            in text), text


def test_cost_per_frame_on_the_switch_core(tmp_path):
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "max_mpps", "no_loss_mpps", "switch_cpu_ns_per_pkt",
            "switch_busy_ns_per_pkt", "switch_pipeline_ns_per_pkt",
            "switch_busy_pct", "switch_batch"]
    results(run, "oxflow", tables=[("throughput", cols, [
        ["l2/100", 0.300, 0.300, 3300.0, 3000.0, 150.0, 90.0, 4.25]])])
    results(run, "ovs", tables=[("throughput", cols, [
        ["l2/100", 0.140, 0.100, 7500.0, None, None, None, None]])])
    # A folder from before the cost columns: no such section.
    old = str(tmp_path / "old")
    os.makedirs(old)
    results(old, "oxflow", tables=[("throughput", cols[:3], [
        ["l2/100", 0.300, 0.300]])])
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    assert "## Cost per frame on the switch core" in text, text
    # Open vSwitch has only the CPU column.
    assert ("| workload | oxflow CPU ns | oxflow busy ns | oxflow pipeline ns "
            "| oxflow busy % | oxflow batch | ovs CPU ns | "
            "OVS CPU ns / oxflow busy ns |" in text), text
    assert "| l2/100 | 3300 | 3000 | 150 | 90 | 4.2 | 7500 | 2.50 |" in text, text
    subprocess.run([sys.executable, REPORT, old, md, js, "test"], check=True)
    assert "Cost per frame" not in open(md).read()


def test_install_figure_is_the_median_of_every_sample(tmp_path):
    # The throughput run's l2/100000 install (0.50 s) and the install
    # part's three (0.30, 0.40, 0.60): the cell is their median with the
    # range and count, the JSON keeps every sample in order. A switch with
    # the throughput row alone keeps its one figure.
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "max_mpps", "no_loss_mpps", "install_s"]
    results(run, "oxflow", tables=[("throughput", cols, [["l2/100000", 0.3, 0.3, 0.50]])])
    results(run, "ovs", tables=[("throughput", cols, [["l2/100000", 0.1, 0.1, 2.10]])])
    for i, v in enumerate([0.30, 0.40, 0.60], start=1):
        results(run, "oxflow-install-%d" % i, [("l2/100000_install_s", v)])
    latency(run, "oxflow", 0.100)
    latency(run, "ovs", 3.0)
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    row = [ln for ln in text.splitlines() if ln.startswith("| oxflow | 0.100")]
    assert row and "| 0.450 (0.300-0.600, 4) |" in row[0], text
    row = [ln for ln in text.splitlines() if ln.startswith("| ovs | 3.000")]
    assert row and "| 2.100 |" in row[0], text
    per = json.load(open(js))["per_switch"]
    assert per["oxflow"]["flow_mods_100k_barrier_samples"] == [0.50, 0.30, 0.40, 0.60]
    assert per["oxflow"]["flow_mods_100k_barrier_s"] == 0.45


def test_memory_floor_rows(tmp_path):
    """The memory floor (with the pipeline part): one row per size, the
    one-at-a-time and overlapped ns per read, in the Markdown and the
    JSON; no section when the part did not run."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    assert "Memory floor" not in open(md).read()
    results(run, "memory", tables=[("memory", ["kib", "dependent_ns", "overlapped_ns"],
                                    [[256, 5.43, 0.681], [65536, 170.2, 8.394]])])
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    assert "## Memory floor" in text
    assert "| 256 | 5.4 | 0.68 |" in text, text
    assert "| 65536 | 170.2 | 8.39 |" in text, text
    assert json.load(open(js))["memory"][1]["overlapped_ns"] == 8.394


def test_pipeline_random_order_section(tmp_path):
    """The `pipeline-random` part gets a table of its own after the
    pipeline's, its rows named WORKLOAD/SIZE[/tse]/random, with their
    tables' classifiers; no section when the part did not run."""
    run = str(tmp_path / "run")
    os.makedirs(run)
    cols = ["workload", "kind", "size", "traffic", "workers", "mpps", "mpps_per_core",
            "ns_per_packet", "cpu_ns_per_packet", "not_forwarded"]
    results(run, "pipeline", tables=[("pipeline", cols, [
        ["l3/100000", "l3", 100000, "spread", 1, 18.0, 18.0, 55.6, 55.5, 0]])])
    md, js = str(tmp_path / "r.md"), str(tmp_path / "r.json")
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    assert "random order" not in open(md).read()
    results(run, "pipeline-random", tables=[
        ("pipeline", cols, [
            ["l3/100000/random", "l3", 100000, "spread", 1, 10.0, 10.0, 100.0, 99.9, 0],
            ["l3/100000/tse/random", "l3", 100000, "tse", 1, 9.0, 9.0, 111.1, 111.0, 0]]),
        ("classifiers", ["workload", "table", "entries", "classifier"],
         [["l3/100000/random", 1, 100000, "lpm"]])])
    subprocess.run([sys.executable, REPORT, run, md, js, "test"], check=True)
    text = open(md).read()
    head = text.index("## Pipeline only, frames in random order")
    assert text.index("## Pipeline only (no I/O)") < head
    assert "| l3/100000/random | 10.00 | 100.0 | 99.9 | - | - | - | t1:lpm(100000) |" in text, text
    assert "| l3/100000/tse/random | 9.00 | 111.1 | 111.0 | - | - | - | t1:lpm(100000) |" in text
    doc = json.load(open(js))
    assert doc["pipeline-random"][0]["mpps"] == 10.0
    assert doc["pipeline"][0]["workload"] == "l3/100000"
