//! The callback side of the experiment API on a real veth pair (no
//! switch): timers drive the generator, captured frames arrive through
//! `on_packet` with kernel timestamps, `done` ends the loop, and the
//! runner writes the report. Needs root (network namespaces).

use std::sync::Mutex;
use std::time::Duration;

use bench::experiment::{Captured, Ctx, Dir, Experiment, ParamSpec};
use bench::frames::{find_probe, Probe};
use bench::runner::{run_experiment, RunOpts};
use bench::switch::SwitchKind;
use bench::Results;

/// Held by each test here for its whole run: a topology's setup reaps
/// the namespaces of dead runs (`bench::topology::reap_stale`), so a
/// test running beside `namespaces_of_dead_runs_are_reaped` could reap
/// its made-up dead run's namespace between `ip netns add` and its bind
/// mount (seen once in CI: "Bind /proc/self/ns/net -> /run/netns/...
/// failed").
static NETNS: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

/// Sends probe `i` when timer `i` fires (timers set in reverse order, so
/// the heap must sort them) and records what the capture side sees.
#[derive(Default)]
struct Ticker {
    fired: Vec<u64>,
    /// (seq, direction, role, kernel timestamp)
    seen: Vec<(u64, Dir, &'static str, u64)>,
    n: u64,
}

impl Experiment for Ticker {
    fn name(&self) -> &'static str {
        "ticker"
    }
    fn description(&self) -> &'static str {
        "test: timers send probes, captures count them"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![ParamSpec::new("n", "5", "probes")]
    }
    fn needs_switch(&self) -> bool {
        false
    }
    fn start(&mut self, ctx: &mut Ctx) -> bench::Result<()> {
        self.n = ctx.param("n")?;
        ctx.capture("gen")?;
        ctx.capture("cap")?;
        for i in (0..self.n).rev() {
            ctx.timer_after(Duration::from_millis(20 + 10 * i), i);
        }
        // A control-channel call without a switch is an error, not a panic.
        assert!(ctx.echo(Duration::from_millis(10)).is_err());
        Ok(())
    }
    fn on_timer(&mut self, ctx: &mut Ctx, id: u64) -> bench::Result<()> {
        self.fired.push(id);
        ctx.send_frame("gen", &Probe::default().build(id))?;
        Ok(())
    }
    fn on_packet(&mut self, ctx: &mut Ctx, pkt: &Captured) -> bench::Result<()> {
        if let Some(seq) = find_probe(&pkt.data) {
            self.seen.push((seq, pkt.dir, pkt.role, pkt.ts_ns));
        }
        let rx = self
            .seen
            .iter()
            .filter(|s| s.1 == Dir::Rx && s.2 == "cap")
            .count() as u64;
        let tx = self.seen.iter().filter(|s| s.1 == Dir::Tx).count() as u64;
        // Each interface is captured by its own thread: a probe's arrival
        // may be delivered before its own transmission stamp.
        if rx == self.n && tx == self.n {
            ctx.done();
        }
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> bench::Result<Results> {
        assert_eq!(self.fired, (0..self.n).collect::<Vec<_>>());
        let mut r = Results::new();
        let mut lat = Vec::new();
        for seq in 0..self.n {
            let tx = self.seen.iter().find(|s| s.0 == seq && s.1 == Dir::Tx);
            let rx = self.seen.iter().find(|s| s.0 == seq && s.1 == Dir::Rx);
            // Nothing comes back: the capture host drops probes silently.
            assert!(!self.seen.iter().any(|s| s.2 == "gen" && s.1 == Dir::Rx));
            let (tx, rx) = (
                tx.expect("own transmission seen"),
                rx.expect("arrival seen"),
            );
            assert_eq!((tx.2, rx.2), ("gen", "cap"));
            assert!(rx.3 >= tx.3, "kernel stamps in order");
            lat.push([seq as f64, (rx.3 - tx.3) as f64 / 1000.0]);
        }
        r.series("lat", "probe", "us", lat);
        r.plot("lat", "latency", "probe", "us", false, false, &["lat"]);
        Ok(r)
    }
}

#[test]
fn timers_capture_and_report() {
    let _one = NETNS.lock().unwrap_or_else(|e| e.into_inner());
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    let out = std::env::temp_dir().join(format!("obh-cb-{}", std::process::id()));
    let opts = RunOpts {
        experiment: String::new(),
        switch: SwitchKind::Oxflow,
        out: out.clone(),
        sets: vec!["n=4".into(), "max_seconds=20".into()],
        config: None,
    };
    run_experiment(Box::new(Ticker::default()), &opts).expect("run");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).expect("json"))
            .expect("valid json");
    assert_eq!(doc["meta"]["params"]["n"][0], "4");
    assert_eq!(doc["meta"]["params"]["n"][1], "--set");
    let pts = doc["results"]["series"][0]["points"]
        .as_array()
        .expect("points");
    assert_eq!(pts.len(), 4);
    assert!(out.join("lat.svg").exists() && out.join("index.html").exists());
    // An unknown key is refused before anything is built.
    let bad = RunOpts {
        sets: vec!["m=1".into()],
        ..opts
    };
    let e = run_experiment(Box::new(Ticker::default()), &bad).expect_err("unknown key");
    assert!(e.to_string().contains("\"m\""), "{e}");
    // A bad value is named with its experiment, once.
    let bad = RunOpts {
        sets: vec!["n=many".into()],
        ..bad
    };
    let e = run_experiment(Box::new(Ticker::default()), &bad).expect_err("bad value");
    let e = e.to_string();
    assert!(e.contains("parameter n=many (from --set)"), "{e}");
    assert_eq!(e.matches("experiment ticker").count(), 1, "{e}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn namespaces_of_dead_runs_are_reaped() {
    let _one = NETNS.lock().unwrap_or_else(|e| e.into_inner());
    if !is_root() {
        eprintln!("skipped: needs root");
        return;
    }
    // A pid that does not exist now stands for a bench run that died.
    let dead = (4_000_000u32..4_194_304)
        .find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        .expect("a free pid");
    let name = format!("obh{dead}c");
    let ok = std::process::Command::new("ip")
        .args(["netns", "add", &name])
        .status()
        .expect("ip");
    assert!(ok.success());
    // A live pid other than ours: this process's own topologies (other
    // tests running in parallel) remove `obh<our pid>*` namespaces when
    // they start, which would race with this check.
    let live = "obh1c".to_string();
    std::process::Command::new("ip")
        .args(["netns", "add", &live])
        .status()
        .expect("ip");
    bench::topology::reap_stale();
    let exists = |n: &str| std::path::Path::new(&format!("/run/netns/{n}")).exists();
    assert!(!exists(&name), "stale namespace reaped");
    assert!(exists(&live), "a live run's namespace is kept");
    let _ = std::process::Command::new("ip")
        .args(["netns", "del", &live])
        .status();
}
