//! Which task each worker runs, and how much (`oxflow ctl show-tc`).
//!
//! A worker's loop (`super::worker`) is one traffic class of the `graph`
//! crate's kinds: `round_robin` over its receive sources (each port or
//! trunk share it reads, polled once per round), each source a leaf task
//! (`port_inc`). Every source counts the frames and batches it received
//! ([`SourceUsage`]: one writer, the worker, adding once per non-empty
//! batch); the worker publishes its list ([`Source`]) in its
//! [`WorkerCounters`] whenever its sources change (the counts then start
//! from zero), and the control side reads it for the reply
//! (`ofp::graph_desc`: `worker` and `task` lines).

use super::ops::WorkerCounters;
use super::worker::RxSource;
use super::{Datapath, SwitchPorts};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Frames and non-empty batches one receive source delivered.
#[derive(Debug, Default)]
pub struct SourceUsage {
    pub packets: AtomicU64,
    pub batches: AtomicU64,
}

impl SourceUsage {
    /// Adds one batch of `n` frames (single writer: load and store).
    #[inline]
    pub fn add(&self, n: usize) {
        let p = self.packets.load(Ordering::Relaxed);
        self.packets.store(p + n as u64, Ordering::Relaxed);
        let b = self.batches.load(Ordering::Relaxed);
        self.batches.store(b + 1, Ordering::Relaxed);
    }
}

/// One published receive source: its task name and usage.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub usage: Arc<SourceUsage>,
}

/// New usage counters for `rx`, published in `counters`; returns them in
/// `rx` order for the worker.
pub(crate) fn publish(
    rx: &[RxSource],
    ports: &SwitchPorts,
    counters: &WorkerCounters,
) -> Vec<Arc<SourceUsage>> {
    let list: Vec<Source> = rx
        .iter()
        .map(|src| {
            let name = match src {
                RxSource::Trunk(t) => format!("in:{}", t.trunk.interface),
                other => {
                    let no = other.port_no();
                    ports
                        .get(&no)
                        .map_or_else(|| format!("in:{no}"), |p| format!("in:{}", p.name))
                }
            };
            Source {
                name,
                usage: Arc::default(),
            }
        })
        .collect();
    let usage = list.iter().map(|s| s.usage.clone()).collect();
    if let Ok(mut l) = counters.sources.lock() {
        *l = list;
    }
    usage
}

impl Datapath {
    /// Adds each worker's class and tasks to `g` (module comment).
    pub(crate) fn add_tc_view(&self, g: &mut ofp::graph_desc::DatapathGraph) {
        for (i, w) in self.workers.iter().enumerate() {
            let c = &w.counters;
            g.workers.push(ofp::graph_desc::GraphWorker {
                worker: i as u32,
                class: "round_robin".into(),
                rounds: WorkerCounters::get(&c.loops),
                busy_rounds: WorkerCounters::get(&c.busy_rounds),
            });
            let sources = c.sources.lock().map(|l| l.clone()).unwrap_or_default();
            for s in sources {
                g.tasks.push(ofp::graph_desc::GraphTask {
                    worker: i as u32,
                    name: s.name,
                    packets: s.usage.packets.load(Ordering::Relaxed),
                    batches: s.usage.batches.load(Ordering::Relaxed),
                });
            }
        }
    }
}
