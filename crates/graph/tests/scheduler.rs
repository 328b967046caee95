//! Scheduler accuracy with a fake clock: weighted shares, a rate limit,
//! priority starvation, round robin, and class changes under load.

use graph::batch::Batch;
use graph::module::{Ctx, Emit, Module, Task, Usage};
use graph::{Args, Env, FakeClock, Meta, Registry, Runtime};

/// A test task: `packets` 60-byte packets per run, for `runs` runs (then
/// idle; default forever).
struct Gen {
    packets: u64,
    runs: u64,
}

fn gen(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Gen {
        packets: args.u64("packets")?.unwrap_or(32),
        runs: args.u64("runs")?.unwrap_or(u64::MAX),
    }))
}

impl Module for Gen {
    fn kind(&self) -> &'static str {
        "gen"
    }
    fn igates(&self) -> usize {
        0
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, _: &mut Batch, _: &mut Emit) {}
    fn task(&mut self) -> Option<&mut dyn Task> {
        Some(self)
    }
}

impl Task for Gen {
    fn run(&mut self, _: &Ctx, out: &mut Emit) -> Usage {
        if self.runs == 0 {
            return Usage::default();
        }
        self.runs -= 1;
        for _ in 0..self.packets {
            let mut b = out.pool.get();
            let _ = b.set(&[0; 60]);
            out.emit(0, b, Meta::default());
        }
        Usage {
            packets: self.packets,
            bits: self.packets * 480,
            cycles: 0,
        }
    }
}

fn registry() -> Registry {
    let mut r = Registry::builtin();
    r.register("gen", gen);
    r
}

/// Two generators `a` and `b` into sinks, with `classes` appended.
fn runtime(a_args: &str, b_args: &str, classes: &str) -> (Runtime<FakeClock>, FakeClock) {
    let text = format!(
        "[[module]]\nname = \"a\"\nkind = \"gen\"\n{a_args}\n[[module]]\nname = \"b\"\nkind = \"gen\"\n{b_args}\n\
         [[module]]\nname = \"sa\"\nkind = \"sink\"\n[[module]]\nname = \"sb\"\nkind = \"sink\"\n\
         [[connect]]\nfrom = \"a\"\nto = \"sa\"\n[[connect]]\nfrom = \"b\"\nto = \"sb\"\n{classes}"
    );
    let clock = FakeClock::default();
    let rt = Runtime::from_config(
        &text,
        "t.toml",
        &registry(),
        &mut Env::default(),
        clock.clone(),
    )
    .unwrap();
    (rt, clock)
}

fn sunk(rt: &Runtime<FakeClock>, name: &str) -> u64 {
    rt.graph.stats(name).unwrap().packets
}

fn two_leaves(root: &str, a_attr: &str, b_attr: &str) -> String {
    format!(
        "[[class]]\nname = \"root\"\n{root}\n\
         [[class]]\nname = \"ca\"\nkind = \"leaf\"\nparent = \"root\"\ntask = \"a\"\n{a_attr}\n\
         [[class]]\nname = \"cb\"\nkind = \"leaf\"\nparent = \"root\"\ntask = \"b\"\n{b_attr}\n"
    )
}

#[test]
fn weights_one_to_two_share_packets_one_to_two() {
    // Different batch sizes, so the shares must come from the weights on
    // packets, not from taking turns.
    let classes = two_leaves(
        "kind = \"weighted\"\nresource = \"packets\"",
        "share = 1",
        "share = 2",
    );
    let (mut rt, clock) = runtime("packets = 32", "packets = 7", &classes);
    for _ in 0..30_000 {
        assert!(rt.round());
        clock.advance(1_000);
    }
    let (a, b) = (sunk(&rt, "sa") as f64, sunk(&rt, "sb") as f64);
    let ratio = b / a;
    assert!(
        (ratio - 2.0).abs() / 2.0 < 0.05,
        "a {a} b {b} ratio {ratio}"
    );
    // The per-class usage agrees with what the sinks saw.
    assert_eq!(rt.sched.usage("ca").unwrap().packets, a as u64);
    assert_eq!(rt.sched.usage("root").unwrap().packets, (a + b) as u64);
}

#[test]
fn a_rate_limit_of_100_kpps_holds_within_2_percent() {
    let classes = "[[class]]\nname = \"root\"\nkind = \"round_robin\"\n\
        [[class]]\nname = \"lim\"\nkind = \"rate_limit\"\nparent = \"root\"\nresource = \"packets\"\nlimit = 100000\nburst = 64\n\
        [[class]]\nname = \"ca\"\nkind = \"leaf\"\nparent = \"lim\"\ntask = \"a\"\n\
        [[class]]\nname = \"cb\"\nkind = \"leaf\"\nparent = \"root\"\ntask = \"b\"\n";
    let (mut rt, clock) = runtime("", "runs = 0", classes);
    // One simulated second in 10 µs rounds.
    for _ in 0..100_000 {
        rt.round();
        clock.advance(10_000);
    }
    let a = sunk(&rt, "sa") as f64;
    assert!(
        (a - 100_000.0).abs() / 100_000.0 < 0.02,
        "{a} packets in a second"
    );
    assert!(rt.sched.usage("lim").unwrap().throttled > 0);
}

#[test]
fn a_priority_class_starves_a_lower_one_while_backlogged() {
    let classes = two_leaves("kind = \"priority\"", "priority = 10", "priority = 1");
    let (mut rt, clock) = runtime("runs = 500", "", &classes);
    for _ in 0..500 {
        assert!(rt.round());
        clock.advance(1_000);
    }
    assert_eq!(sunk(&rt, "sa"), 500 * 32);
    assert_eq!(
        sunk(&rt, "sb"),
        0,
        "the low class ran while the high one was backlogged"
    );
    // `a` has nothing more: `b` gets the worker.
    for _ in 0..100 {
        rt.round();
        clock.advance(1_000);
    }
    assert!(sunk(&rt, "sb") > 0);
}

#[test]
fn round_robin_takes_turns() {
    let (mut rt, clock) = runtime(
        "packets = 1",
        "packets = 30",
        &two_leaves("kind = \"round_robin\"", "", ""),
    );
    for _ in 0..100 {
        rt.round();
        clock.advance(1_000);
    }
    assert_eq!(rt.sched.usage("ca").unwrap().runs, 50);
    assert_eq!(rt.sched.usage("cb").unwrap().runs, 50);
}

#[test]
fn class_changes_apply_under_load_and_bad_ones_change_nothing() {
    let classes = two_leaves(
        "kind = \"weighted\"\nresource = \"packets\"",
        "share = 1",
        "share = 1",
    );
    let (mut rt, clock) = runtime("", "", &classes);
    let run = |rt: &mut Runtime<FakeClock>, n| {
        let (a0, b0) = (sunk(rt, "sa"), sunk(rt, "sb"));
        for _ in 0..n {
            rt.round();
            clock.advance(1_000);
        }
        (sunk(rt, "sa") - a0, sunk(rt, "sb") - b0)
    };
    let (a, b) = run(&mut rt, 3000);
    assert!(a.abs_diff(b) <= 32, "{a} {b}");
    rt.sched.change(|s| s.set_share("cb", 3)).unwrap();
    let (a, b) = run(&mut rt, 4000);
    assert!((b as f64 / a as f64 - 3.0).abs() < 0.15, "{a} {b}");
    // Refused changes leave the tree as it was.
    let before: Vec<_> = rt
        .sched
        .classes()
        .map(|c| (c.name.clone(), c.share))
        .collect();
    assert!(rt.sched.change(|s| s.set_share("cb", 0)).is_err());
    assert!(rt.sched.change(|s| s.set_limit("cb", 10, 10)).is_err());
    assert!(rt.attach("cc", "nowhere", "a", 0, 1).is_err());
    assert!(
        rt.attach("cc", "root", "sa", 0, 1).is_err(),
        "a sink is no task"
    );
    assert!(rt
        .sched
        .change(|s| {
            s.set_share("ca", 5)?;
            s.remove("nothing")
        })
        .is_err());
    let after: Vec<_> = rt
        .sched
        .classes()
        .map(|c| (c.name.clone(), c.share))
        .collect();
    assert_eq!(before, after);
    // Put `a` under a rate limit at run time.
    rt.sched
        .change(|s| {
            s.remove("ca")?;
            s.add(
                graph::scheduler::spec(
                    "lim",
                    graph::scheduler::rate_limit(graph::tc::Resource::Packets, 10_000, 32),
                    Some("root"),
                    0,
                    1,
                ),
                0,
            )?;
            Ok(())
        })
        .unwrap();
    rt.attach("ca", "lim", "a", 0, 1).unwrap();
    let (a, _) = run(&mut rt, 100_000); // 0.1 s
                                        // 1000 packets, plus the burst and one batch of overshoot at most.
    assert!((1000..=1000 + 32 + 32).contains(&a), "{a}");
}
