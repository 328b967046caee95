//! Flow table benchmarks: lookup cost per packet for each classifier
//! structure, and the control plane (100K flow-mods through
//! `Pipeline::flow_mod`). Workloads are in `workloads.rs`.
//!
//! Run (release build, a minute or two):
//!
//! ```text
//! cargo bench -p pipeline --bench classifier
//! cargo bench -p pipeline --bench classifier -- lookup/lpm   # some only
//! cargo bench -p pipeline --bench classifier -- --quick      # shorter
//! ```
//!
//! Each `lookup/*` iteration is one lookup (criterion's time is ns per
//! lookup), cycling over a ring of 4096 pre-built packet keys so that
//! successive lookups hit different entries. `flow_mod/add_*` iterations
//! are whole batches: their time is for 100,000 flow-mods into an empty
//! table; `flow_mod/delete_strict_and_readd_in_100k` is one pair.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ofp::message::flow_mod_command as cmd;
use pipeline::Pipeline;
use std::hint::black_box;

mod workloads;
use workloads::{install, l2_flows, mixed_flows};

fn lookups(c: &mut Criterion) {
    for w in workloads::all() {
        let Some(t) = w.pipeline.table(0) else {
            continue;
        };
        assert_eq!(t.classifier_kind(), w.kind, "{}: structure in use", w.name);
        // Every key finds an entry (the table-miss at worst).
        assert!(w.keys.iter().all(|k| t.peek(k).is_some()));
        let mut i = 0;
        c.bench_function(&format!("lookup/{}", w.name), |b| {
            b.iter(|| {
                i = (i + 1) % w.keys.len();
                black_box(t.peek(black_box(&w.keys[i])).map(|e| e.cookie()))
            })
        });
    }
}

fn flow_mods(c: &mut Criterion) {
    let mut g = c.benchmark_group("flow_mod");
    g.sample_size(10);
    let l2 = l2_flows(100_000);
    let mixed = mixed_flows(100_000);
    for (name, flows) in [("add_100k_l2", &l2), ("add_100k_mixed_priorities", &mixed)] {
        g.bench_function(name, |b| {
            b.iter_batched(
                || Pipeline::new(1),
                |mut p| {
                    for f in flows {
                        let _ = black_box(p.flow_mod(f, 0));
                    }
                    p
                },
                BatchSize::PerIteration,
            )
        });
    }
    // One strict delete + re-add in a 100K table (the time of the pair).
    let mut p = install(&l2);
    let mut i = 0;
    g.sample_size(50);
    g.bench_function("delete_strict_and_readd_in_100k", |b| {
        b.iter(|| {
            i = (i + 1) % 100_000;
            let add = &l2[i];
            let mut del = add.clone();
            del.command = cmd::DELETE_STRICT;
            let _ = black_box(p.flow_mod(&del, 0));
            let _ = black_box(p.flow_mod(add, 0));
        })
    });
    g.finish();
}

criterion_group!(benches, lookups, flow_mods);
criterion_main!(benches);
