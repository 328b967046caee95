//! Memory floor: what one random read of a cache line costs on this
//! machine, by the size of the memory it falls in, read one at a time
//! (each read's address comes from the one before: the latency) and many
//! at once (the addresses known in advance: the cost per read when the
//! core overlaps as many as it can, which is what the pipeline's staged
//! lookups get at best).
//!
//! Read the pipeline-only figures at 100K entries against it: there a
//! packet's lookups land on cache lines of tables several megabytes
//! large, spread at random, and each such line costs a packet at least
//! the overlapped figure here, whatever the code around it does. On a
//! machine whose caches beyond the core's own L2 are shared with other
//! tenants (a cloud VM), that figure can be close to main memory's.
//!
//! No switch, no network: the reads run on one thread pinned to core 0
//! (the core the pipeline-only experiment's first worker uses), over
//! memory from the same allocator as the switch's tables.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::bail;
use crate::error::Result;
use crate::experiment::{Ctx, Experiment, ParamSpec};
use crate::results::Results;
use crate::rng::Rng;
use crate::stats::summarize;

/// Bytes per cache line: the reads touch one word of each line.
const LINE: usize = 64;
/// `u64` words per line.
const WORDS: usize = LINE / 8;
/// Random line numbers read per pass of the overlapped reads (4 MiB of
/// indices, read in order: the hardware prefetches them).
const INDICES: usize = 1 << 20;
/// Largest size accepted (KiB): 4 GiB.
const MAX_KIB: usize = 4 << 20;

/// One size's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Floor {
    pub kib: usize,
    /// ns per read when each read waits for the one before (median of
    /// the rounds).
    pub dependent_ns: f64,
    /// ns per read when the reads' addresses are known in advance.
    pub overlapped_ns: f64,
}

#[derive(Default)]
pub struct MemoryFloor {
    floors: Vec<Floor>,
}

/// `lines` lines, word 0 of line i holding the next line of one random
/// cycle through all of them (Sattolo's algorithm: a single cycle, so a
/// chase from any line visits every line before it comes back).
pub fn chase_buffer(lines: usize, rng: &mut impl FnMut(usize) -> usize) -> Vec<u64> {
    let mut order: Vec<usize> = (0..lines).collect();
    for i in (1..lines).rev() {
        let j = rng(i);
        order.swap(i, j);
    }
    let mut buf = vec![0u64; lines * WORDS];
    for (k, &line) in order.iter().enumerate() {
        let next = order[(k + 1) % lines];
        buf[line * WORDS] = next as u64;
    }
    buf
}

/// Follows the chain of `buf` from line 0 for `steps` reads; the line it
/// ends at (so that the reads cannot be left out).
fn chase(buf: &[u64], steps: usize) -> usize {
    let mut at = 0usize;
    for _ in 0..steps {
        at = buf.get(at * WORDS).map_or(0, |&n| n as usize);
    }
    at
}

/// Reads word 0 of each line in `idx` (independent reads).
fn gather(buf: &[u64], idx: &[u32]) -> u64 {
    idx.iter().fold(0u64, |s, &i| {
        s ^ buf.get(i as usize * WORDS).copied().unwrap_or(0)
    })
}

/// ns per read of `f` (which makes `reads` reads per call), called for
/// at least `d`.
fn per_read(d: Duration, reads: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    loop {
        f();
        calls += 1;
        let el = start.elapsed();
        if el >= d {
            return el.as_nanos() as f64 / (calls as f64 * reads as f64);
        }
    }
}

/// Measures one size: `rounds` rounds of `d` for each kind of read.
pub fn measure(kib: usize, d: Duration, rounds: usize) -> Floor {
    let lines = (kib * 1024 / LINE).max(2);
    // (A fixed seed per size: the same lines every run.)
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ kib as u64);
    let buf = chase_buffer(lines, &mut |n| rng.below(n));
    let idx: Vec<u32> = (0..INDICES).map(|_| rng.below(lines) as u32).collect();
    // One chase over every line first: pages faulted in, caches as warm
    // as they will get.
    black_box(chase(&buf, lines));
    let steps = 1 << 16;
    let (mut dep, mut ovl) = (Vec::new(), Vec::new());
    for _ in 0..rounds.max(1) {
        dep.push(per_read(d, steps, || {
            black_box(chase(black_box(&buf), steps));
        }));
        ovl.push(per_read(d, idx.len(), || {
            black_box(gather(black_box(&buf), &idx));
        }));
    }
    Floor {
        kib,
        dependent_ns: summarize(&dep).median,
        overlapped_ns: summarize(&ovl).median,
    }
}

impl Experiment for MemoryFloor {
    fn name(&self) -> &'static str {
        "memory_floor"
    }
    fn description(&self) -> &'static str {
        "random cache-line reads by memory size, one at a time and overlapped: the floor under the pipeline's big tables (no switch)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new(
                "sizes_kib",
                "256,1024,4096,16384,65536,262144",
                "sizes of the memory read (KiB), one measurement each",
            ),
            ParamSpec::new("seconds", "0.2", "time per kind of read per round"),
            ParamSpec::new("rounds", "3", "rounds per size (the median is reported)"),
        ]
    }
    fn needs_switch(&self) -> bool {
        false
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let sizes: Vec<usize> = ctx.params.list("sizes_kib")?;
        let seconds: f64 = ctx.param("seconds")?;
        let rounds: usize = ctx.param("rounds")?;
        if sizes.is_empty() {
            bail!("sizes_kib: give at least one size");
        }
        if let Some(s) = sizes.iter().find(|&&s| s == 0 || s > MAX_KIB) {
            bail!("sizes_kib: {s}: want 1 to {MAX_KIB} KiB");
        }
        if !(seconds > 0.0 && seconds <= 60.0) {
            bail!("seconds={seconds}: want more than 0 and at most 60");
        }
        if !(1..=100).contains(&rounds) {
            bail!("rounds={rounds}: want 1 to 100");
        }
        let d = Duration::from_secs_f64(seconds);
        ctx.progress.set_total(sizes.len() as u64);
        let floors = std::thread::scope(|s| {
            s.spawn(|| {
                if crate::switch::cores() >= 2 {
                    crate::switch::pin_self(0);
                }
                sizes
                    .iter()
                    .map(|&kib| measure(kib, d, rounds))
                    .collect::<Vec<_>>()
            })
            .join()
        });
        let Ok(floors) = floors else {
            bail!("the measuring thread panicked");
        };
        for f in &floors {
            ctx.progress.inc(1);
            ctx.note(format!(
                "{} KiB: {:.1} ns per read one at a time, {:.2} ns overlapped",
                f.kib, f.dependent_ns, f.overlapped_ns
            ));
        }
        self.floors = floors;
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        let mut r = Results::new();
        let rows = self
            .floors
            .iter()
            .map(|f| vec![f.kib.into(), f.dependent_ns.into(), f.overlapped_ns.into()])
            .collect();
        r.table("memory", &["kib", "dependent_ns", "overlapped_ns"], rows);
        let pts = |g: fn(&Floor) -> f64| -> Vec<[f64; 2]> {
            self.floors.iter().map(|f| [f.kib as f64, g(f)]).collect()
        };
        r.series("dependent", "KiB", "ns per read", pts(|f| f.dependent_ns));
        r.series("overlapped", "KiB", "ns per read", pts(|f| f.overlapped_ns));
        r.plot(
            "memory_floor",
            "Random cache-line reads by memory size",
            "memory size (KiB)",
            "ns per read",
            true,
            true,
            &["dependent", "overlapped"],
        );
        for f in &self.floors {
            r.scalar(&format!("dependent_ns_{}k", f.kib), f.dependent_ns, "ns");
            r.scalar(&format!("overlapped_ns_{}k", f.kib), f.overlapped_ns, "ns");
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line's successor, following the chain from line 0.
    fn walk(buf: &[u64]) -> Vec<usize> {
        let lines = buf.len() / WORDS;
        let mut seen = vec![false; lines];
        let mut at = 0;
        let mut order = Vec::new();
        while !seen[at] {
            seen[at] = true;
            order.push(at);
            at = buf[at * WORDS] as usize;
        }
        assert_eq!(at, 0, "the chain comes back to where it started");
        order
    }

    #[test]
    fn the_chase_is_one_cycle_through_every_line() {
        for lines in [2, 3, 17, 1000, 4096] {
            let mut rng = Rng::new(lines as u64 + 1);
            let buf = chase_buffer(lines, &mut |n| rng.below(n));
            assert_eq!(walk(&buf).len(), lines, "{lines} lines");
            // Only word 0 of a line holds a link.
            assert!(buf.chunks(WORDS).all(|l| l[1..].iter().all(|&w| w == 0)));
        }
    }

    #[test]
    fn the_chase_is_not_in_address_order() {
        // A chain in address order would measure the prefetcher, not
        // random reads: most steps of a random one go elsewhere than the
        // next line.
        let mut rng = Rng::new(7);
        let buf = chase_buffer(4096, &mut |n| rng.below(n));
        let order = walk(&buf);
        let next_line = order.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(next_line < 40, "{next_line} of 4096 steps to the next line");
    }

    #[test]
    fn chase_and_gather_read_what_the_buffer_holds() {
        let mut rng = Rng::new(3);
        let buf = chase_buffer(8, &mut |n| rng.below(n));
        let order = walk(&buf);
        assert_eq!(chase(&buf, 8), 0);
        assert_eq!(chase(&buf, 3), order[3]);
        let idx = [order[1] as u32, order[2] as u32];
        assert_eq!(gather(&buf, &idx), order[2] as u64 ^ order[3] as u64);
    }

    #[test]
    fn a_small_measurement_gives_positive_figures() {
        let f = measure(64, Duration::from_millis(5), 1);
        assert_eq!(f.kib, 64);
        assert!(f.dependent_ns > 0.0 && f.dependent_ns.is_finite(), "{f:?}");
        assert!(
            f.overlapped_ns > 0.0 && f.overlapped_ns.is_finite(),
            "{f:?}"
        );
    }
}
