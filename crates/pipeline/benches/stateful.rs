//! Forwarding through a BEBA stateful table against the same pipeline
//! without states (`docs/bench/stateful-2026-11-28.md`).
//!
//! ```text
//! cargo bench -p pipeline --bench stateful
//! ```
//!
//! Each iteration runs one batch of 32 UDP frames through
//! `Pipeline::process_batch` (criterion's time is per batch; divide by
//! 32 for a packet). The frames cycle over `n` flows, 100, 100,000 or
//! 1,000,000 (`STATEFUL_SIZES=100,1000` picks others):
//!
//! - `portknock/stateful/n`: table 0 keyed by `ipv4_src`; every source is
//!   in the open state (SET_FLOW_STATE beforehand), and the entry
//!   `udp_dst=22,state=4` forwards; beside it the knock entries (`state=i,
//!   udp_dst=10+i` -> SET_STATE) and the wrong-knock entry;
//! - `portknock/stateless/n`: the same entries without `state` (the
//!   forwarding one first);
//! - `maclearning/stateful/n`: lookup scope `eth_dst`, update scope
//!   `eth_src`, entries `in_port=1,state=s` -> SET_STATE(1) + output s
//!   (every frame writes its source's state and reads its destination's);
//! - `maclearning/stateless/n`: `n` entries `eth_dst=X` -> output 2 (a
//!   learnt L2 table).
//!
//! `STATEFUL_SWEEP=1000000` adds the timeout sweep running on another
//! thread while `portknock/stateful` forwards (`sweep_while_forwarding`,
//! printed, not criterion's); `STATEFUL_SIZES=` (empty) with it runs that
//! alone.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ofp::action::Action;
use ofp::beba::{BebaAction, BebaField, SetFlowState, SetState, StateMod};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod};
use ofp::oxm::{Match, OxmField};
use packet::PacketBuf;
use pipeline::{Output, PacketInEvent, Pipeline, PortInfo, Unsupported};
use std::hint::black_box;

const BATCH: usize = 32;
const IPV4_SRC: u32 = 0x8000_1604;
const ETH_SRC: u32 = 0x8000_0806;
const ETH_DST: u32 = 0x8000_0606;

struct Count(u64);

impl Output for Count {
    fn port(&mut self, _port: u32, _data: &[u8], _queue: Option<u32>) {
        self.0 += 1;
    }
    fn packet_in(&mut self, _ev: PacketInEvent<'_>) {}
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {}
}

fn fm(priority: u16, m: Vec<OxmField>, actions: Vec<Action>) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: cmd::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: u32::MAX,
        out_port: ofp::port::port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(m),
        instructions: vec![Instruction::ApplyActions(actions)],
    }
}

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn set_state(state: u32) -> Action {
    BebaAction::SetState(SetState {
        state,
        state_mask: u32::MAX,
        idle_timeout: 10_000_000,
        ..SetState::default()
    })
    .to_action()
}

fn state(s: u32) -> OxmField {
    BebaField::State(s, None).to_oxm()
}

fn udp(dport: u16) -> Vec<OxmField> {
    vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(17),
        OxmField::UdpDst(dport),
    ]
}

/// Ethernet / IPv4 / UDP from flow `i` (MACs and IPv4 source from `i`).
fn frame(i: u32, dport: u16) -> Vec<u8> {
    let b = i.to_be_bytes();
    let mut f = vec![0, 0, b[0], b[1], b[2], b[3]];
    f.extend_from_slice(&[2, 0, b[0], b[1], b[2], b[3]]);
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0]);
    f.extend_from_slice(&[10, b[1], b[2], b[3], 10, 255, 255, 254]);
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]);
    let ck = packet::checksum::checksum(0, &f[14..34]);
    f[24..26].copy_from_slice(&ck.to_be_bytes());
    f
}

fn base(n: usize) -> Pipeline {
    // BEBA's entry, as the switch's table of extensions gives it.
    let exts = std::iter::once(&pipeline::ext::beba::EXTENSION).collect();
    let mut p = Pipeline::new(1).with_extensions(exts);
    // Room for every flow's two keys (MAC learning: sources and
    // destinations).
    p.set_state_capacity(2 * n + 64);
    p.ports.insert(1, PortInfo::up());
    p.ports.insert(2, PortInfo::up());
    p
}

/// `p`'s BEBA state (`base` built it knowing BEBA).
fn beba_state(p: &Pipeline) -> std::sync::Arc<stateful::Stateful> {
    pipeline::ext::beba::state(p).expect("built knowing BEBA")
}

fn stateful_table(p: &Pipeline, lookup: u32, update: u32) {
    let st = beba_state(p);
    for m in StateMod::stateful_table(0, vec![lookup], vec![update]) {
        st.apply_state_mod(&m, 0).expect("state mod");
    }
}

fn portknock(n: usize, with_state: bool) -> Pipeline {
    let mut p = base(n);
    if with_state {
        stateful_table(&p, IPV4_SRC, IPV4_SRC);
        let mut open = udp(22);
        open.push(state(4));
        p.flow_mod(&fm(10, open, vec![out(2)]), 0).expect("flow");
        for i in 0..4u16 {
            let mut m = udp(10 + i);
            m.push(state(u32::from(i)));
            p.flow_mod(&fm(10, m, vec![set_state(u32::from(i) + 1)]), 0)
                .expect("flow");
        }
        p.flow_mod(&fm(0, udp_any(), vec![set_state(0)]), 0)
            .expect("flow");
        for i in 0..n as u32 {
            let b = i.to_be_bytes();
            let sm = StateMod::SetFlowState(SetFlowState {
                table_id: 0,
                key: vec![10, b[1], b[2], b[3]],
                state: 4,
                state_mask: u32::MAX,
                hard_rollback: 0,
                idle_rollback: 0,
                hard_timeout: 0,
                idle_timeout: 0,
            });
            beba_state(&p).apply_state_mod(&sm, 0).expect("state");
        }
    } else {
        p.flow_mod(&fm(10, udp(22), vec![out(2)]), 0).expect("flow");
        for i in 0..4u16 {
            p.flow_mod(&fm(10, udp(10 + i), vec![]), 0).expect("flow");
        }
        p.flow_mod(&fm(0, udp_any(), vec![]), 0).expect("flow");
    }
    p
}

fn udp_any() -> Vec<OxmField> {
    vec![OxmField::EthType(0x0800), OxmField::IpProto(17)]
}

fn maclearning(n: usize, with_state: bool) -> Pipeline {
    let mut p = base(n);
    if with_state {
        stateful_table(&p, ETH_DST, ETH_SRC);
        for s in 0..=2u32 {
            let m = vec![OxmField::InPort(1), state(s)];
            let o = if s == 0 { ofp::port::port_no::FLOOD } else { s };
            p.flow_mod(&fm(0, m, vec![set_state(1), out(o)]), 0)
                .expect("flow");
        }
        // Every destination learnt at port 2.
        for i in 0..n as u32 {
            let b = i.to_be_bytes();
            let sm = StateMod::SetFlowState(SetFlowState {
                table_id: 0,
                key: vec![0, 0, b[0], b[1], b[2], b[3]],
                state: 2,
                state_mask: u32::MAX,
                hard_rollback: 0,
                idle_rollback: 0,
                hard_timeout: 0,
                idle_timeout: 0,
            });
            beba_state(&p).apply_state_mod(&sm, 0).expect("state");
        }
    } else {
        for i in 0..n as u32 {
            let b = i.to_be_bytes();
            let m = vec![OxmField::EthDst([0, 0, b[0], b[1], b[2], b[3]], None)];
            p.flow_mod(&fm(10, m, vec![out(2)]), 0).expect("flow");
        }
    }
    p
}

fn run(c: &mut Criterion, name: &str, mut p: Pipeline, n: usize, dport: u16) {
    // Frames are built per batch (outside the measured time): a million
    // of them kept would be ~100 MB.
    let mut at = 0;
    let mut sent = 0u64;
    let mut fwd = Count(0);
    c.bench_function(name, |b| {
        b.iter_batched_ref(
            || {
                let v: Vec<PacketBuf> = (0..BATCH)
                    .map(|j| PacketBuf::from_slice(&frame(((at + j) % n) as u32, dport)))
                    .collect();
                at = (at + BATCH) % n;
                v
            },
            |bufs| {
                sent += BATCH as u64;
                p.process_batch(bufs, 1, 1_000, &mut fwd, |_, _, _, _| {});
                black_box(fwd.0)
            },
            BatchSize::SmallInput,
        )
    });
    assert_eq!(fwd.0, sent, "{name}: every frame forwarded");
}

fn benches(c: &mut Criterion) {
    let sizes: Vec<usize> = match std::env::var("STATEFUL_SIZES") {
        Ok(v) => v.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => vec![100, 100_000, 1_000_000],
    };
    for n in sizes {
        for with_state in [true, false] {
            let kind = if with_state { "stateful" } else { "stateless" };
            run(
                c,
                &format!("portknock/{kind}/{n}"),
                portknock(n, with_state),
                n,
                22,
            );
            run(
                c,
                &format!("maclearning/{kind}/{n}"),
                maclearning(n, with_state),
                n,
                5000,
            );
        }
    }
}

/// Per-batch time of `portknock/stateful/n` alone, then while another
/// thread sweeps the state table's timeouts back to back (steps of 4096
/// slots, as the switch's tick does), printed (stderr): mean,
/// percentiles, max per batch and how many batches took over 100 µs,
/// and the sweep's longest step and full-pass time. The table
/// holds `n` flows in traffic (idle timeout 60 s, not due) and `n` others
/// whose 1 µs idle timeout is due (the first pass rolls them back and
/// forgets them).
fn sweep_while_forwarding(n: usize) {
    const BATCHES: usize = 200_000;
    const STEP: usize = 4096;
    let now: u64 = 10_000_000_000;
    let mut p = portknock(n, true);
    for (prefix, idle) in [(10u8, 60_000_000u32), (11, 1)] {
        for i in 0..n as u32 {
            let b = i.to_be_bytes();
            let sm = StateMod::SetFlowState(SetFlowState {
                table_id: 0,
                key: vec![prefix, b[1], b[2], b[3]],
                state: 4,
                state_mask: u32::MAX,
                hard_rollback: 0,
                idle_rollback: 0,
                hard_timeout: 0,
                idle_timeout: idle,
            });
            beba_state(&p).apply_state_mod(&sm, 0).expect("state");
        }
    }
    let st = beba_state(&p);
    let stored = || st.table(0).and_then(|t| t.store()).map_or(0, |s| s.len());
    let forward = |p: &mut Pipeline, batches: usize| -> Vec<u64> {
        let mut fwd = Count(0);
        let mut times = Vec::with_capacity(batches);
        for b in 0..batches {
            let mut bufs: Vec<PacketBuf> = (0..BATCH)
                .map(|j| PacketBuf::from_slice(&frame(((b * BATCH + j) % n) as u32, 22)))
                .collect();
            let t = std::time::Instant::now();
            p.process_batch(&mut bufs, 1, now, &mut fwd, |_, _, _, _| {});
            times.push(t.elapsed().as_nanos() as u64);
        }
        times.sort_unstable();
        times
    };
    let report = |what: &str, t: &[u64]| {
        let mean = t.iter().sum::<u64>() as f64 / t.len().max(1) as f64;
        let q = |f: f64| t.get((t.len() as f64 * f) as usize).copied().unwrap_or(0);
        let max = t.last().copied().unwrap_or(0);
        let over = t.iter().filter(|&&x| x > 100_000).count();
        eprintln!(
            "sweep/{n} {what}: {} batches of {BATCH}, mean {mean:.0} ns, p50 {} ns, \
             p99 {} ns, p99.9 {} ns, max {max} ns, {over} over 100 us",
            t.len(),
            q(0.5),
            q(0.99),
            q(0.999),
        );
    };
    eprintln!("sweep/{n}: {} states stored before", stored());
    report("forwarding alone", &forward(&mut p, BATCHES));
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (sweeping, (steps, passes, longest, pass_ns)) = std::thread::scope(|s| {
        let sweeper = s.spawn(|| {
            let (mut steps, mut visited, mut longest, mut start) =
                (0u64, 0usize, 0u64, std::time::Instant::now());
            let slots = st.table(0).and_then(|t| t.store()).map_or(1, |s| s.slots());
            let (mut passes, mut pass_ns) = (0u64, 0u64);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = std::time::Instant::now();
                st.sweep(now / 1000, STEP);
                longest = longest.max(t.elapsed().as_nanos() as u64);
                steps += 1;
                visited += STEP;
                if visited >= slots {
                    visited = 0;
                    passes += 1;
                    pass_ns = start.elapsed().as_nanos() as u64;
                    start = std::time::Instant::now();
                }
            }
            (steps, passes, longest, pass_ns)
        });
        let times = forward(&mut p, BATCHES);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        (times, sweeper.join().expect("sweeper"))
    });
    report("forwarding while sweeping", &sweeping);
    eprintln!(
        "sweep/{n}: {steps} steps of {STEP} slots, {passes} full passes (last {:.1} ms), \
         longest step {longest} ns; {} states stored after",
        pass_ns as f64 / 1e6,
        stored()
    );
}

fn sweep_bench(_c: &mut Criterion) {
    if let Ok(sizes) = std::env::var("STATEFUL_SWEEP") {
        for n in sizes.split(',').filter_map(|x| x.trim().parse().ok()) {
            sweep_while_forwarding(n);
        }
    }
}

criterion_group!(stateful_benches, benches, sweep_bench);
criterion_main!(stateful_benches);
