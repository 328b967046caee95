//! The batch path allocates nothing per packet on the HARMLESS pipelines:
//! each workload (single flow, L2, L3, load balancer + ACL, access
//! gateway) installed as `make bench` installs it, its frames run through
//! `Pipeline::process_batch` in batches of 32 as a worker runs them, under
//! a counting allocator (`ports::alloc_count`). These pipelines go the
//! per-table way (`pipeline::per_table`: lookups from the frames, a lazy
//! key), so this covers its code as `crates/switch`'s
//! `forwarding_loop_does_not_allocate` covers the general path. Every
//! frame must also leave exactly once, so a pipeline that dropped the
//! frames cannot pass by doing nothing.

use bench::workloads::{Kind, Traffic, Workload};
use packet::PacketBuf;
use pipeline::{Output, PacketInEvent};

#[global_allocator]
static ALLOC: ports::alloc_count::Counting = ports::alloc_count::Counting;

/// Counts what leaves: frames per port and packet-ins.
#[derive(Default)]
struct Tally {
    out: u64,
    wrong_port: u64,
    packet_ins: u64,
}

impl Output for Tally {
    fn port(&mut self, port: u32, _data: &[u8], _queue: Option<u32>) {
        if port == 2 {
            self.out += 1;
        } else {
            self.wrong_port += 1;
        }
    }
    fn packet_in(&mut self, _ev: PacketInEvent<'_>) {
        self.packet_ins += 1;
    }
}

/// Runs every frame of `w` through a pipeline with `w` installed, `passes`
/// times after two warm-up passes; returns the allocations counted in the
/// measured passes and the tally of those passes.
fn run(w: &Workload, passes: usize) -> (u64, Tally, u64) {
    let mut p = bench::pipeline_only::install(w).expect("workload installs");
    let mut bufs: Vec<PacketBuf> = (0..bench::pipeline_only::BATCH)
        .map(|_| PacketBuf::new())
        .collect();
    let mut errors = 0u64;
    let mut pass = |p: &mut pipeline::Pipeline, tally: &mut Tally, errors: &mut u64| {
        for chunk in w.frames.chunks(bufs.len()) {
            let n = chunk.len();
            for (b, f) in bufs.iter_mut().zip(chunk) {
                b.set(f).expect("a 60-byte frame fits a buffer");
            }
            p.process_batch(&mut bufs[..n], 1, 1_000_000_000, tally, |_, _, _, r| {
                if r.is_err() {
                    *errors += 1;
                }
            });
        }
    };
    let mut warm = Tally::default();
    pass(&mut p, &mut warm, &mut errors);
    pass(&mut p, &mut warm, &mut errors);
    let mut tally = Tally::default();
    let mut measured_errors = 0u64;
    let ((), allocs) = ports::alloc_count::count(|| {
        for _ in 0..passes {
            pass(&mut p, &mut tally, &mut measured_errors);
        }
    });
    (allocs, tally, measured_errors)
}

#[test]
fn harmless_pipelines_do_not_allocate_per_packet() {
    // 100 entries: the batch path without its warm stages; 20,000: with
    // them (`pipeline::batch::WARM_MIN_ENTRIES` entries in all, 16,384,
    // make `Pipeline::worth_warming` true), where the per-table way looks a
    // chunk up at a time in stages. The gateway has its 10,000 routes in both.
    for size in [100, 20_000] {
        for kind in Kind::ALL {
            for traffic in [Traffic::Spread, Traffic::Tse] {
                let w = Workload::new(kind, size, traffic);
                let name = w.name();
                let passes = 2;
                let (allocs, t, errors) = run(&w, passes);
                // A `lb_acl` frame is either allowed (out of port 2) or
                // denied (dropped); its generator makes allowed ones only.
                let frames = (passes * w.frames.len()) as u64;
                assert_eq!(errors, 0, "{name}: frames refused as malformed");
                assert_eq!(t.packet_ins, 0, "{name}: packet-ins");
                assert_eq!(t.wrong_port, 0, "{name}: frames out of another port");
                assert_eq!(t.out, frames, "{name}: every frame out exactly once");
                assert_eq!(allocs, 0, "{name}: heap allocations in the batch path");
            }
        }
    }
}
