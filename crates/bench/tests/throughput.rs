//! Smoke runs of the throughput experiments through the runner, with small
//! parameters: the `pipeline` experiment (no I/O) and `throughput_raw` on a
//! real veth pair (generator wired straight to the sink). They check the
//! result files and that the figures are sane (traffic arrived, nothing
//! dropped by the pipeline), never a speed. Need root (namespaces).

use bench::runner::{run, RunOpts};
use bench::switch::SwitchKind;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

fn results(out: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("results.json")).expect("results.json written");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    doc["results"].clone()
}

fn scalar(r: &serde_json::Value, name: &str) -> Option<f64> {
    r["scalars"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)?["value"]
        .as_f64()
}

/// One test for both: the runner names its namespaces after the process,
/// so two runs of one test binary must not overlap.
#[test]
fn throughput_experiments_smoke() {
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    pipeline_experiment();
    throughput_raw();
}

fn pipeline_experiment() {
    let out = std::env::temp_dir().join(format!("obw-pipe-{}", std::process::id()));
    let opts = RunOpts {
        experiment: "pipeline".into(),
        switch: SwitchKind::Oxflow,
        out: out.clone(),
        sets: vec![
            "workloads=l2,gateway".into(),
            "sizes=100".into(),
            "traffic=spread,tse".into(),
            "seconds=0.05".into(),
            "replicas=2".into(),
            "rounds=2".into(),
            "pairs=3".into(),
        ],
        config: None,
    };
    run(&opts).expect("pipeline run");
    let r = results(&out);
    let rows = r["tables"][0]["rows"].as_array().expect("rows");
    let columns = r["tables"][0]["columns"].as_array().expect("columns");
    let col = |name: &str| {
        columns
            .iter()
            .position(|c| c == name)
            .unwrap_or_else(|| panic!("no column {name}: {columns:?}"))
    };
    // 2 workloads x 2 traffic modes x (1 and 2 workers)
    assert_eq!(rows.len(), 8);
    for row in rows {
        let cols = row.as_array().expect("row");
        assert!(
            cols[col("mpps")].as_f64().is_some_and(|m| m > 0.0),
            "mpps {row}"
        );
        assert!(
            cols[col("cpu_ns_per_packet")]
                .as_f64()
                .is_some_and(|c| c > 0.0),
            "CPU time {row}"
        );
        assert_eq!(
            cols[col("not_forwarded")],
            0,
            "frames not forwarded exactly once: {row}"
        );
    }
    assert!(scalar(&r, "l2/100_mpps").is_some_and(|v| v > 0.0));
    assert!(scalar(&r, "gateway/100/tse_scaling_2w").is_some_and(|v| v > 0.0));
    // The scaling table: one row per workload and mode, the ratio of the
    // medians within the range of the rounds' own ratios.
    let scaling = r["tables"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == "scaling"))
        .expect("a scaling table");
    let srows = scaling["rows"].as_array().expect("rows");
    assert_eq!(srows.len(), 4);
    for row in srows {
        let v = |i: usize| row[i].as_f64().unwrap_or(f64::NAN);
        assert_eq!(row[2], 2, "rounds: {row}");
        assert!(
            v(5) > 0.0 && v(6) <= v(5) + 1e-9 && v(5) <= v(7) + 1e-9,
            "{row}"
        );
        // The interleaved windows: 3 pairs, their median within their
        // range, both rates measured, and 0 to 3 pairs reaching 1.8.
        assert_eq!(row[8], 3, "pairs: {row}");
        assert!(
            v(9) > 0.0 && v(10) <= v(9) + 1e-9 && v(9) <= v(11) + 1e-9,
            "{row}"
        );
        assert!(v(12) > 0.0 && v(13) > 0.0, "{row}");
        assert!((0.0..=3.0).contains(&v(14)), "{row}");
        // The host reference of the same pairs, and the pipeline's median
        // in those where it scaled (none, or a ratio).
        assert!(v(15) > 0.0, "{row}");
        assert!((0.0..=3.0).contains(&v(16)), "{row}");
        assert!(row[17].is_null() == (v(16) == 0.0), "{row}");
    }
    assert!(scalar(&r, "gateway/100/tse_scaling_2w_windows").is_some_and(|v| v > 0.0));
    assert!(out.join("pipeline_mpps.svg").exists() && out.join("index.html").exists());
    let _ = std::fs::remove_dir_all(&out);
}

fn throughput_raw() {
    let out = std::env::temp_dir().join(format!("obw-raw-{}", std::process::id()));
    let opts = RunOpts {
        experiment: "throughput_raw".into(),
        switch: SwitchKind::Oxflow,
        out: out.clone(),
        sets: vec![
            "frames=100".into(),
            "seconds=0.2".into(),
            "warmup=0.1".into(),
            "search_steps=2".into(),
            "loss_tolerance=0.01".into(),
        ],
        config: None,
    };
    run(&opts).expect("throughput_raw run");
    let r = results(&out);
    let max = scalar(&r, "max_mpps").expect("max_mpps");
    let offered = scalar(&r, "offered_mpps").expect("offered_mpps");
    assert!(max > 0.0 && offered > 0.0, "max {max} offered {offered}");
    // A veth pair forwards what it is given (up to frames in flight at
    // the window's edges).
    assert!(
        max <= offered * 1.05 + 0.001,
        "received more than sent: {max} > {offered}"
    );
    assert!(scalar(&r, "loss_at_max").is_some_and(|l| (0.0..=1.0).contains(&l)));
    assert!(out.join("index.html").exists());
    let _ = std::fs::remove_dir_all(&out);
}
