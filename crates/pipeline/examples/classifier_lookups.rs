//! Runs N lookups of one benchmark workload (see `benches/workloads`) with
//! no timing of its own, for load-independent measurements on a shared
//! machine: instructions and simulated cache misses per lookup from
//! cachegrind, as the difference between a run of N lookups and a run of
//! none (the set-up):
//!
//! ```text
//! cargo build --release -p pipeline --example classifier_lookups
//! B=target/release/examples/classifier_lookups
//! valgrind --tool=cachegrind --cache-sim=yes $B lpm_ipv4_10k 0
//! valgrind --tool=cachegrind --cache-sim=yes $B lpm_ipv4_10k 200000
//! ```
//!
//! Workloads: l2_exact_100, l2_exact_100k, linear_5, lpm_ipv4_10k,
//! lpm_ipv4_10k_plus_4_shapes, lpm_ipv6_10k, tss_32_shapes_10k_hit,
//! tss_32_shapes_10k_miss; `insert_l2` / `insert_mixed` install N
//! flow-mods instead (and print the wall time).

#[path = "../benches/workloads/mod.rs"]
#[allow(dead_code)]
mod workloads;

use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(which), Some(n)) = (
        args.get(1),
        args.get(2).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: classifier_lookups WORKLOAD N");
        std::process::exit(2);
    };
    if which == "insert_l2" || which == "insert_mixed" {
        let flows = if which == "insert_l2" {
            workloads::l2_flows(n as u64)
        } else {
            workloads::mixed_flows(n as u64)
        };
        let t = std::time::Instant::now();
        let p = workloads::install(&flows);
        println!(
            "{n} flow-mods in {:?} ({} entries)",
            t.elapsed(),
            p.table(0).map_or(0, |t| t.len())
        );
        return;
    }
    let candidates = match which.as_str() {
        "l2_exact_100" => vec![workloads::l2(100)],
        "l2_exact_100k" => vec![workloads::l2(100_000)],
        "linear_5" => vec![workloads::linear()],
        "lpm_ipv4_10k" => vec![workloads::lpm_v4(false)],
        "lpm_ipv4_10k_plus_4_shapes" => vec![workloads::lpm_v4(true)],
        "lpm_ipv6_10k" => vec![workloads::lpm_v6()],
        _ => {
            let (hit, miss) = workloads::tss();
            vec![hit, miss]
        }
    };
    let Some(w) = candidates.into_iter().find(|w| w.name == which) else {
        eprintln!("unknown workload {which}");
        std::process::exit(2);
    };
    let Some(t) = w.pipeline.table(0) else { return };
    assert_eq!(t.classifier_kind(), w.kind, "structure in use");
    let mut sum = 0u64;
    for i in 0..n {
        let k = black_box(&w.keys[i % w.keys.len()]);
        sum = sum.wrapping_add(t.peek(k).map_or(0, |e| e.cookie()));
    }
    println!(
        "{which}: {n} lookups ({} structure), checksum {sum}",
        w.kind
    );
}
