//! Per-frame cost of the learning switch (standalone mode, OFPP_NORMAL):
//! learn the source, look up the destination, pick the output port, for
//! [`switch::datapath::LearningTable`] (graph's lock-free state table)
//! against a `Mutex<HashMap>` table with the same rules, the obvious
//! alternative. 1000 hosts on 8 ports, every destination known; `1
//! thread` is one worker, `2 threads` two workers forwarding at once on the
//! same table (the time is per frame of one thread).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pipeline::{PortInfo, PortTable};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switch::datapath::LearningTable;

const HOSTS: usize = 1000;
const PORTS: u32 = 8;
const AGING: u64 = 300_000_000_000;

/// The `Mutex<HashMap>` table: address -> (port, last seen).
#[derive(Default)]
struct Locked(Mutex<HashMap<[u8; 6], (u32, u64)>>);

impl Locked {
    fn forward(
        &self,
        in_port: u32,
        f: &[u8],
        ports: &PortTable,
        now: u64,
        mut emit: impl FnMut(u32),
    ) {
        let (Some(dst), Some(src)) = (
            f.get(0..6).and_then(|s| <[u8; 6]>::try_from(s).ok()),
            f.get(6..12).and_then(|s| <[u8; 6]>::try_from(s).ok()),
        ) else {
            return;
        };
        let Ok(mut t) = self.0.lock() else { return };
        if src[0] & 1 == 0 {
            t.insert(src, (in_port, now));
        }
        if dst[0] & 1 == 0 {
            if let Some(&(p, seen)) = t.get(&dst) {
                if now.saturating_sub(seen) < AGING {
                    if p != in_port && ports.get(p).is_some_and(|i| i.can_forward()) {
                        emit(p);
                    }
                    return;
                }
            }
        }
        ports.flood_set(in_port, true).for_each(emit);
    }
}

trait Forward: Send + Sync + 'static {
    fn fwd(&self, in_port: u32, f: &[u8], ports: &PortTable, now: u64) -> u32;
}

impl Forward for LearningTable {
    fn fwd(&self, in_port: u32, f: &[u8], ports: &PortTable, now: u64) -> u32 {
        let mut out = 0;
        self.forward(in_port, f, ports, now, |p| out += p);
        out
    }
}

impl Forward for Locked {
    fn fwd(&self, in_port: u32, f: &[u8], ports: &PortTable, now: u64) -> u32 {
        let mut out = 0;
        self.forward(in_port, f, ports, now, |p| out += p);
        out
    }
}

fn mac(i: usize) -> [u8; 6] {
    let b = (i as u32).to_be_bytes();
    [0x02, 0, b[0], b[1], b[2], b[3]]
}

fn port_of(i: usize) -> u32 {
    (i as u32 % PORTS) + 1
}

/// Frames host i -> host (i * 7 + 1) % HOSTS, with their ingress port.
fn frames() -> Vec<(u32, Vec<u8>)> {
    (0..HOSTS)
        .map(|i| {
            let mut f = mac((i * 7 + 1) % HOSTS).to_vec();
            f.extend_from_slice(&mac(i));
            f.extend_from_slice(&[0x08, 0x00]);
            f.resize(64, 0);
            (port_of(i), f)
        })
        .collect()
}

/// `iters` frames on each of `threads` threads; the slowest thread's time.
fn run<T: Forward>(
    t: &Arc<T>,
    ports: &Arc<PortTable>,
    fs: &Arc<Vec<(u32, Vec<u8>)>>,
    iters: u64,
    threads: usize,
) -> Duration {
    let hs: Vec<_> = (0..threads)
        .map(|k| {
            let (t, ports, fs) = (Arc::clone(t), Arc::clone(ports), Arc::clone(fs));
            std::thread::spawn(move || {
                let start = Instant::now();
                let mut sum = 0u32;
                for n in 0..iters as usize {
                    if let Some((p, f)) = fs.get((n + k * 500) % fs.len()) {
                        sum = sum.wrapping_add(t.fwd(*p, f, &ports, 1_000_000_000));
                    }
                }
                black_box(sum);
                start.elapsed()
            })
        })
        .collect();
    hs.into_iter()
        .filter_map(|h| h.join().ok())
        .max()
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let mut ports = PortTable::new();
    for no in 1..=PORTS {
        ports.insert(
            no,
            PortInfo {
                config: 0,
                state: ofp::port::state::LIVE,
            },
        );
    }
    let ports = Arc::new(ports);
    let fs = Arc::new(frames());
    let lockfree = Arc::new(LearningTable::default());
    let locked = Arc::new(Locked::default());
    for (p, f) in fs.iter() {
        lockfree.fwd(*p, f, &ports, 1_000_000_000);
        locked.fwd(*p, f, &ports, 1_000_000_000);
    }
    let mut g = c.benchmark_group("learning");
    g.throughput(Throughput::Elements(1));
    for threads in [1, 2] {
        g.bench_function(format!("state_table/{threads} thread(s)"), |b| {
            b.iter_custom(|iters| run(&lockfree, &ports, &fs, iters, threads))
        });
        g.bench_function(format!("mutex_hashmap/{threads} thread(s)"), |b| {
            b.iter_custom(|iters| run(&locked, &ports, &fs, iters, threads))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
