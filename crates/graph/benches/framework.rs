//! Framework cost: a batch of 32 packets through chains of 0, 1, 2, 4 and
//! 8 pass-through modules into a `sink` (per packet: the time of one batch
//! / 32; the chain of 0 is the cost of the batch itself: buffers from the
//! pool and back), with `pass` (forwards the whole batch: `emit_all`) and
//! with `pass_each` (emits packet by packet, as a module that looks at
//! each packet does), and one scheduling round (`next` + `charge`) of a
//! small class tree.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use graph::batch::{Batch, BATCH};
use graph::module::{Ctx, Emit, Module, Usage};
use graph::scheduler::{rate_limit, spec};
use graph::tc::{ClassKind, Resource};
use graph::{Args, Env, Meta, Registry, Runtime, Scheduler};

/// Pass-through that emits each packet on its own.
struct PassEach;

impl Module for PassEach {
    fn kind(&self) -> &'static str {
        "pass_each"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, m) in batch.drain() {
            out.emit(0, b, m);
        }
    }
}

fn pass_each(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(PassEach))
}

fn chain(n: usize, kind: &str) -> String {
    let mut s = String::from("[[module]]\nname = \"sink\"\nkind = \"sink\"\n");
    for i in 0..n {
        let next = if i + 1 == n {
            "sink".to_string()
        } else {
            format!("p{}", i + 1)
        };
        s += &format!("[[module]]\nname = \"p{i}\"\nkind = \"{kind}\"\n[[connect]]\nfrom = \"p{i}\"\nto = \"{next}\"\n");
    }
    s
}

fn framework(c: &mut Criterion) {
    let mut reg = Registry::builtin();
    reg.register("pass_each", pass_each);
    for kind in ["pass", "pass_each"] {
        chains(c, &reg, kind);
    }
}

fn chains(c: &mut Criterion, reg: &Registry, kind: &str) {
    let mut g = c.benchmark_group(format!("chain_{kind}"));
    g.throughput(Throughput::Elements(BATCH as u64));
    for n in [0usize, 1, 2, 4, 8] {
        let rt = Runtime::from_config(
            &chain(n, kind),
            "bench.toml",
            reg,
            &mut Env::default(),
            graph::MonoClock::default(),
        );
        let mut rt = rt.expect("chain builds");
        let first = rt
            .graph
            .slot(if n == 0 { "sink" } else { "p0" })
            .expect("first");
        rt.graph.pool.prefill(64);
        let ctx = Ctx::default();
        let mut batch = Batch::new();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                for _ in 0..BATCH {
                    let buf = rt.graph.pool.get();
                    let _ = batch.push(buf, Meta::received(1));
                }
                rt.graph.push(first, 0, &mut batch, &ctx);
            })
        });
    }
    g.finish();
}

fn scheduler(c: &mut Criterion) {
    // root (priority) -> { weighted (packets) -> 4 leaves, rate_limit -> leaf }
    let mut s = Scheduler::new();
    s.add(spec("root", ClassKind::Priority, None, 0, 1), 0)
        .expect("root");
    s.add(
        spec(
            "w",
            ClassKind::Weighted {
                resource: Resource::Packets,
            },
            Some("root"),
            1,
            1,
        ),
        0,
    )
    .expect("w");
    for i in 0..4 {
        s.add(
            spec(
                &format!("l{i}"),
                ClassKind::Leaf { task: i },
                Some("w"),
                0,
                i as u64 + 1,
            ),
            0,
        )
        .expect("leaf");
    }
    s.add(
        spec(
            "rl",
            rate_limit(Resource::Packets, 1_000_000, 64),
            Some("root"),
            2,
            1,
        ),
        0,
    )
    .expect("rl");
    s.add(spec("l4", ClassKind::Leaf { task: 4 }, Some("rl"), 0, 1), 0)
        .expect("leaf");
    let u = Usage {
        packets: 32,
        bits: 32 * 512,
        cycles: 1000,
    };
    let mut now = 0u64;
    c.bench_function("scheduler_round", |b| {
        b.iter(|| {
            now += 100;
            if let Some((leaf, _task)) = s.next(now) {
                s.charge(leaf, &u, now);
            }
        })
    });
}

criterion_group!(benches, framework, scheduler);
criterion_main!(benches);
