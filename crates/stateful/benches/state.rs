//! Per-packet cost of a state table: the look-up a stateful table does
//! before its flow look-up (hit, and miss = DEFAULT) and the SET_STATE
//! action, with 100, 100K and 1M flows stored (keys: IPv4 source +
//! TCP destination, 6 bytes, as a port-knocking table); memory per entry;
//! and the timeout sweep over 1M entries, one step of 1024 slots (the unit
//! of work a datapath's timer runs between packets; a full pass is
//! `slots / 1024` steps, never one long pause).
//!
//! `notify`: SET_STATE changing every flow's state, bare
//! (`StateTable::set_state`) and with its STATE_CHANGED event queued
//! (`Stateful::set_state`): the queue drained after each batch as the
//! control thread does, or left full (every event dropped and counted).
//!
//! Memory per entry is printed once per size (stderr), not measured by
//! criterion.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ofp::beba::StateMod;
use ofp::oxm::{class, oxm_header};
use packet::{Field, FlowKey};
use stateful::{StateTable, Stateful, Transition};

fn packet(i: u32) -> FlowKey {
    let mut k = FlowKey::new(1);
    k.ipv4_src = 0x0a00_0000 | (i >> 6);
    k.tp_dst = (i & 63) as u16 + 1000;
    k.present.insert(Field::Ipv4Src);
    k.present.insert(Field::TcpDst);
    k
}

/// A configured table holding `n` flows (in state 1, idle timeout 10 s).
fn table(n: u32) -> StateTable {
    let t = StateTable::new(0, n as usize);
    t.set_stateful(true);
    let h = |f: Field| oxm_header(class::OPENFLOW_BASIC, f as u8, false, f.width() as u8);
    let scope = [h(Field::Ipv4Src), h(Field::TcpDst)];
    let _ = t.set_scope(&scope, false, false);
    let _ = t.set_scope(&scope, true, false);
    let tr = Transition {
        state: 1,
        mask: u32::MAX,
        idle_timeout: 10_000_000,
        ..Transition::default()
    };
    for i in 0..n {
        t.set_state(&packet(i), false, &tr, 1);
    }
    if let Some(s) = t.store() {
        eprintln!(
            "{n} entries: {} stored, {} slots, {} bytes, {:.1} bytes per entry, {} refused (full)",
            s.len(),
            s.slots(),
            s.memory_bytes(),
            s.memory_bytes() as f64 / f64::from(n),
            s.full()
        );
    }
    t
}

fn per_packet(c: &mut Criterion) {
    let mut g = c.benchmark_group("state");
    g.throughput(Throughput::Elements(1024));
    for n in [100u32, 100_000, 1_000_000] {
        let t = table(n);
        // Packets spread over the stored flows (a pseudo-random walk).
        let hits: Vec<FlowKey> = (0..1024u32)
            .map(|i| packet(i.wrapping_mul(2_654_435_761) % n))
            .collect();
        let misses: Vec<FlowKey> = (0..1024u32).map(|i| packet(n + i)).collect();
        g.bench_with_input(BenchmarkId::new("lookup_hit", n), &hits, |b, ks| {
            b.iter(|| {
                for k in ks {
                    black_box(t.lookup(k, 2));
                }
            })
        });
        g.bench_with_input(BenchmarkId::new("lookup_miss", n), &misses, |b, ks| {
            b.iter(|| {
                for k in ks {
                    black_box(t.lookup(k, 2));
                }
            })
        });
        let tr = Transition {
            state: 2,
            mask: u32::MAX,
            idle_timeout: 10_000_000,
            idle_rollback: 1,
            ..Transition::default()
        };
        g.bench_with_input(BenchmarkId::new("set_state", n), &hits, |b, ks| {
            let mut now = 2;
            b.iter(|| {
                now += 1;
                for k in ks {
                    black_box(t.set_state(k, false, &tr, now));
                }
            })
        });
    }
    g.finish();
}

fn sweep(c: &mut Criterion) {
    let t = table(1_000_000);
    let mut g = c.benchmark_group("sweep_1M");
    g.throughput(Throughput::Elements(1024));
    // Nothing due: the common case.
    g.bench_function("step_1024_slots", |b| {
        b.iter(|| black_box(t.sweep(2, 1024)))
    });
    g.finish();
}

/// A datapath whose table 0 is keyed as [`table`]'s, holding `n` flows.
fn datapath(n: u32) -> Stateful {
    let st = Stateful::new(1, n as usize);
    let h = |f: Field| oxm_header(class::OPENFLOW_BASIC, f as u8, false, f.width() as u8);
    let scope = vec![h(Field::Ipv4Src), h(Field::TcpDst)];
    for m in StateMod::stateful_table(0, scope.clone(), scope) {
        let _ = st.apply_state_mod(&m, 0);
    }
    let tr = Transition {
        state: 1,
        mask: u32::MAX,
        ..Transition::default()
    };
    if let Some(t) = st.table(0) {
        for i in 0..n {
            t.set_state(&packet(i), false, &tr, 1);
        }
    }
    st
}

fn notify(c: &mut Criterion) {
    let n = 100_000u32;
    let st = datapath(n);
    let Some(t) = st.table(0) else { return };
    let ks: Vec<FlowKey> = (0..1024u32)
        .map(|i| packet(i.wrapping_mul(2_654_435_761) % n))
        .collect();
    // Each batch writes the state the previous batch did not: every
    // SET_STATE changes its flow's state.
    let tr = |i: u64| Transition {
        state: 2 + (i & 1) as u32,
        mask: u32::MAX,
        ..Transition::default()
    };
    let mut g = c.benchmark_group("notify_100K");
    g.throughput(Throughput::Elements(1024));
    g.bench_function("set_state_change_bare", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let tr = tr(i);
            for k in &ks {
                black_box(t.set_state(k, false, &tr, 2));
            }
        })
    });
    g.bench_function("set_state_change_queued_drained", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let tr = tr(i);
            for k in &ks {
                black_box(st.set_state(0, k, false, &tr, 2));
            }
            st.notifications().drain(|e| {
                black_box(e);
            });
        })
    });
    g.bench_function("set_state_change_queue_full", |b| {
        for k in &ks {
            st.set_state(0, k, false, &tr(0), 2);
            st.set_state(0, k, false, &tr(1), 2);
        }
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            let tr = tr(i);
            for k in &ks {
                black_box(st.set_state(0, k, false, &tr, 2));
            }
        })
    });
    g.finish();
    eprintln!("notifications dropped: {}", st.notifications().dropped());
}

criterion_group!(benches, per_packet, sweep, notify);
criterion_main!(benches);
