//! `queue`: a bounded lock-free ring (crossbeam's `ArrayQueue`, MPMC)
//! between tasks or workers. Its input side stores packets (a full ring
//! drops and counts); its output side is a task that takes up to a batch
//! and emits it on gate 0, so a queue ends one run and starts another: the
//! only module allowed in a cycle.
//!
//! Arguments: `capacity` (packets, default 1024), `shared` (a name: every
//! queue module with that name, in any worker's graph, uses one ring),
//! `side` (`both`, the default; `in`: only the input side, no output gate
//! and no task, the producer of a queue another worker drains; `out`: only
//! the output task, no input gate). Packets that enter a graph from an
//! `out` queue carry metadata the checks cannot see, so they count as
//! having no attribute written.

use crate::batch::{Batch, BATCH};
use crate::module::{Ctx, Emit, Module, Task, Usage};
use crate::registry::{Args, Env, Ring};
use crossbeam_queue::ArrayQueue;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Both,
    In,
    Out,
}

pub struct Queue {
    ring: Arc<Ring>,
    side: Side,
    pub enqueued: u64,
    pub dropped: u64,
}

pub fn new(args: &Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let cap = args.u64("capacity")?.unwrap_or(1024) as usize;
    if cap == 0 || cap > 1 << 20 {
        return Err("argument `capacity` must be 1..=1048576".into());
    }
    let ring = match args.str("shared")? {
        Some(name) => env.shared.queue(name, cap),
        None => Arc::new(ArrayQueue::new(cap)),
    };
    let side = match args.str("side")?.unwrap_or("both") {
        "both" => Side::Both,
        "in" => Side::In,
        "out" => Side::Out,
        s => {
            return Err(format!(
                "argument `side` must be both, in or out, not `{s}`"
            ))
        }
    };
    Ok(Box::new(Queue {
        ring,
        side,
        enqueued: 0,
        dropped: 0,
    }))
}

impl Module for Queue {
    fn kind(&self) -> &'static str {
        "queue"
    }
    fn ogates(&self) -> usize {
        usize::from(self.side != Side::In)
    }
    fn igates(&self) -> usize {
        usize::from(self.side != Side::Out)
    }
    fn breaks_cycles(&self) -> bool {
        true
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, m) in batch.drain() {
            match self.ring.push((b, m)) {
                Ok(()) => self.enqueued += 1,
                Err((b, _)) => {
                    self.dropped += 1;
                    out.drop_packet(b);
                }
            }
        }
    }
    fn task(&mut self) -> Option<&mut dyn Task> {
        if self.side == Side::In {
            None
        } else {
            Some(self)
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("enqueued", self.enqueued),
            ("dropped", self.dropped),
            ("waiting", self.ring.len() as u64),
        ]
    }
}

impl Task for Queue {
    fn run(&mut self, _: &Ctx, out: &mut Emit) -> Usage {
        let mut u = Usage::default();
        for _ in 0..BATCH {
            let Some((b, m)) = self.ring.pop() else { break };
            u.packets += 1;
            u.bits += b.len() as u64 * 8;
            out.emit(0, b, m);
        }
        u
    }
}
