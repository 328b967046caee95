//! The learning switch allocates nothing per packet once warm: the
//! `Learner` alone (NORMAL's use) and a whole worker round of a
//! `port_inc -> l2_learning -> port_out` graph (standalone mode), with
//! flooding, under a counting allocator (`ports::alloc_count`). The frames
//! must also come out, so a graph that dropped them could not pass.

mod common;

use common::{CountTx, ReplayRx};
use graph::modules::l2_learning::{Dest, Learner};
use graph::{Env, MonoClock, Registry, Runtime, StateTable};
use ports::alloc_count::count;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[global_allocator]
static ALLOC: ports::alloc_count::Counting = ports::alloc_count::Counting;

fn frame(dst: [u8; 6], src: u8) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&[2, 0, 0, 0, 0, src, 0x08, 0x00]);
    f.resize(64, 0);
    f
}

fn host(n: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, n]
}

#[test]
fn the_learner_does_not_allocate() {
    let l = Learner {
        table: Arc::new(StateTable::new(4096)),
        aging: u64::MAX,
    };
    let frames: Vec<(u32, Vec<u8>)> = (0..64u8)
        .map(|i| (u32::from(i % 3) + 1, frame(host(i.wrapping_add(1) % 64), i)))
        .collect();
    for (p, f) in &frames {
        l.forward(*p, f, 1);
    }
    let (known, allocs) = count(|| {
        let mut known = 0;
        for round in 0..100u64 {
            for (p, f) in &frames {
                if let Dest::Port(_) = l.forward(*p, f, 2 + round) {
                    known += 1;
                }
            }
        }
        known
    });
    assert_eq!(allocs, 0);
    assert!(known > 0);
}

#[test]
fn a_standalone_graph_round_does_not_allocate() {
    let sent = Arc::new(AtomicU64::new(0));
    let mut env = Env::default();
    // Hosts 1..=8 behind port 1, 11..=18 behind port 2; they talk across,
    // and one broadcast in every 16 frames floods.
    let mk = |base: u8, peer: u8| -> Vec<Vec<u8>> {
        (0..16u8)
            .map(|i| {
                if i == 15 {
                    frame([0xff; 6], base + i % 8)
                } else {
                    frame(host(peer + i % 8), base + i % 8)
                }
            })
            .collect()
    };
    for (name, no, frames) in [
        ("p1", 1, mk(1, 11)),
        ("p2", 2, mk(11, 1)),
        ("p3", 3, Vec::new()),
    ] {
        let s = Arc::clone(&sent);
        let rx: Vec<Box<dyn ports::PortRx>> = if frames.is_empty() {
            Vec::new()
        } else {
            vec![Box::new(ReplayRx { frames, next: 0 })]
        };
        env.add_port(
            name,
            no,
            rx,
            Box::new(move || Ok(Box::new(CountTx(Arc::clone(&s))) as Box<dyn ports::PortTx>)),
        );
    }
    let text = r#"
[[module]]
name = "in1"
kind = "port_inc"
port = "p1"
[[module]]
name = "in2"
kind = "port_inc"
port = "p2"
[[module]]
name = "l2"
kind = "l2_learning"
ports = [1, 2, 3]
[[module]]
name = "out1"
kind = "port_out"
port = "p1"
[[module]]
name = "out2"
kind = "port_out"
port = "p2"
[[module]]
name = "out3"
kind = "port_out"
port = "p3"
[[connect]]
from = "in1"
to = "l2"
[[connect]]
from = "in2"
to = "l2"
[[connect]]
from = "l2:0"
to = "out1"
[[connect]]
from = "l2:1"
to = "out2"
[[connect]]
from = "l2:2"
to = "out3"
"#;
    let mut rt = Runtime::from_config(
        text,
        "standalone.toml",
        &Registry::builtin(),
        &mut env,
        MonoClock::default(),
    )
    .unwrap();
    for _ in 0..200 {
        rt.round();
    }
    let before = sent.load(Ordering::Relaxed);
    let ((), allocs) = count(|| {
        for _ in 0..2000 {
            rt.round();
        }
    });
    assert_eq!(allocs, 0, "allocations in 2000 warm rounds");
    let out = sent.load(Ordering::Relaxed) - before;
    // 2000 rounds of 32 frames: 30 of 32 known unicast, 2 broadcasts
    // flooding to two ports each.
    assert!(out >= 2000 * 32, "{out} frames out");
    let c: std::collections::HashMap<_, _> = rt
        .graph
        .module("l2")
        .unwrap()
        .counters()
        .into_iter()
        .collect();
    assert!(c["forwarded"] > 0 && c["flooded"] > 0, "{c:?}");
}
