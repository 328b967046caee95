//! Scheduler accuracy measured in the switch (docs/bench/graph-switch-2026-11-28.md):
//! a `Datapath` whose worker runs a configured graph with two `port_inc`
//! tasks on in-memory ports kept backlogged by a feeder thread, both
//! feeding the `openflow` module (no flows: the table-miss drops, so the
//! measurement is the scheduler's and the pipeline's, not a port's). The
//! class usage comes from the live graph (`show-tc`'s source).
//!
//! Ignored (it measures for seconds); run it with
//! `cargo test --release -p switch --test graph_sched_accuracy -- --ignored --nocapture`.

use ports::{MemPort, Port};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switch::datapath::graph_run::GraphSpec;
use switch::datapath::{Clock, Datapath, DpConfig};

const MODULES: &str = r#"
[[module]]
name = "in1"
kind = "port_inc"
port = "sw1"
[[module]]
name = "in2"
kind = "port_inc"
port = "sw2"
[[module]]
name = "of"
kind = "openflow"
[[module]]
name = "out"
kind = "tx"
[[connect]]
from = "in1"
to = "of"
[[connect]]
from = "in2"
to = "of"
[[connect]]
from = "of"
to = "out"
"#;

struct Rig {
    dp: Datapath,
    stop: Arc<AtomicBool>,
    feeders: Vec<std::thread::JoinHandle<()>>,
}

/// One worker running MODULES with `classes`; both inputs backlogged.
fn rig(classes: &str) -> Rig {
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    let stop = Arc::new(AtomicBool::new(false));
    let mut feeders = Vec::new();
    for no in 1..=2u32 {
        let (sw, mut host) =
            MemPort::pair_named(&format!("sw{no}"), &format!("h{no}"), 8192).unwrap();
        ports.push((no, Box::new(sw)));
        let stop = stop.clone();
        feeders.push(std::thread::spawn(move || {
            let f = vec![0x02u8; 64];
            let batch: Vec<&[u8]> = vec![&f[..]; 256];
            while !stop.load(Ordering::Relaxed) {
                if host.tx_batch(&batch).unwrap_or(0) < batch.len() {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }));
    }
    let cfg = DpConfig {
        n_workers: 1,
        graph: Some(Arc::new(GraphSpec {
            text: format!("{MODULES}{classes}"),
            file: "accuracy.toml".into(),
        })),
        ..DpConfig::default()
    };
    let dp = Datapath::try_start_with_trunks(cfg, ports, Vec::new(), Clock::real()).unwrap();
    Rig { dp, stop, feeders }
}

impl Rig {
    /// Packets of each class over `d` (after a warm-up).
    fn measure(&mut self, d: Duration) -> (Vec<(String, u64)>, f64) {
        std::thread::sleep(Duration::from_millis(300));
        let packets = |dp: &mut Datapath| -> Vec<(String, u64)> {
            dp.graph_view()
                .classes
                .iter()
                .map(|c| (c.name.clone(), c.packets))
                .collect()
        };
        let a = packets(&mut self.dp);
        let t = Instant::now();
        std::thread::sleep(d);
        let b = packets(&mut self.dp);
        let secs = t.elapsed().as_secs_f64();
        let diff = b
            .iter()
            .map(|(n, p)| {
                let before = a.iter().find(|x| &x.0 == n).map_or(0, |x| x.1);
                (n.clone(), p - before)
            })
            .collect();
        (diff, secs)
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for f in self.feeders.drain(..) {
            let _ = f.join();
        }
        self.dp.shutdown();
    }
}

fn get(v: &[(String, u64)], name: &str) -> u64 {
    v.iter().find(|x| x.0 == name).map_or(0, |x| x.1)
}

#[test]
#[ignore]
fn weighted_1_to_2() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"weighted\"\nresource = \"packets\"\n\
         [[class]]\nname = \"c1\"\nkind = \"leaf\"\nparent = \"root\"\nshare = 1\ntask = \"in1\"\n\
         [[class]]\nname = \"c2\"\nkind = \"leaf\"\nparent = \"root\"\nshare = 2\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let (a, b) = (get(&v, "c1"), get(&v, "c2"));
    let ratio = b as f64 / a.max(1) as f64;
    println!(
        "weighted 1:2: c1 {a} c2 {b} packets in {secs:.2} s ({:.0} pps total), c2/c1 = {ratio:.4} (error {:+.2} %)",
        (a + b) as f64 / secs,
        (ratio / 2.0 - 1.0) * 100.0
    );
    assert!((ratio / 2.0 - 1.0).abs() < 0.05, "{ratio}");
}

#[test]
#[ignore]
fn rate_limit_100_kpps() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"round_robin\"\n\
         [[class]]\nname = \"lim\"\nkind = \"rate_limit\"\nparent = \"root\"\nresource = \"packets\"\nlimit = 100000\nburst = 64\n\
         [[class]]\nname = \"c1\"\nkind = \"leaf\"\nparent = \"lim\"\ntask = \"in1\"\n\
         [[class]]\nname = \"lim2\"\nkind = \"rate_limit\"\nparent = \"root\"\nresource = \"packets\"\nlimit = 1\nburst = 1\n\
         [[class]]\nname = \"c2\"\nkind = \"leaf\"\nparent = \"lim2\"\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let pps = get(&v, "c1") as f64 / secs;
    println!(
        "rate limit 100 kpps: c1 {} packets in {secs:.2} s = {pps:.0} pps (error {:+.2} %)",
        get(&v, "c1"),
        (pps / 100_000.0 - 1.0) * 100.0
    );
    assert!((pps / 100_000.0 - 1.0).abs() < 0.02, "{pps}");
}

#[test]
#[ignore]
fn priority_starves_the_lower_class() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"priority\"\n\
         [[class]]\nname = \"hi\"\nkind = \"leaf\"\nparent = \"root\"\npriority = 1\ntask = \"in1\"\n\
         [[class]]\nname = \"lo\"\nkind = \"leaf\"\nparent = \"root\"\npriority = 0\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let (hi, lo) = (get(&v, "hi"), get(&v, "lo"));
    println!("priority: hi {hi} lo {lo} packets in {secs:.2} s");
    assert!(hi > 100_000 && lo == 0, "hi {hi} lo {lo}");
}
