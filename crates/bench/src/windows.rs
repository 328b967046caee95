//! Pipeline-only windows on request (`oxflow bench windows`): the half of
//! an A/B comparison of two builds that runs inside each build.
//!
//! On this kind of machine (two vCPUs of a busy host) the speed of one
//! configuration moves by tens of percent from one minute to the next, so
//! two builds measured one after the other cannot be ranked to 5 %. Run
//! side by side on the same core, in short windows taken in turn, they
//! see the same host: `scripts/ab_pipeline.py` starts one worker per
//! build, each with the workload installed, and asks them for windows
//! alternately (A B B A ...), so every pair of windows lies within a
//! fraction of a second.
//!
//! The protocol, one line each way per window:
//!
//! ```text
//!  worker -> driver   "ready WORKLOAD packets_per_window"   once installed
//!  driver -> worker   "run"                                 one window
//!  worker -> driver   "NS_PER_PACKET FORWARDED"             after it
//! ```
//!
//! A window is `batches` batches of [`BATCH`] frames through
//! [`pipeline::Pipeline::process_batch`] exactly as the `pipeline`
//! experiment runs them (`pipeline_only::run_batches`), timed by the wall
//! clock: the worker that is not running waits in a blocking read, so it
//! takes no CPU from the one that is. The frames go on where the last
//! window stopped, so every window sees the same mix. End of input ends
//! the worker; any other line is an error.

use crate::bail;
use crate::error::Result;
use crate::pipeline_only::{install, run_batches, Sink, Split, Trace, BATCH};
use crate::workloads::Workload;
use std::io::{BufRead, Write};
use std::time::Instant;

/// Most batches a window may have (a window of 100K batches is about a
/// second of the fastest workload's traffic).
pub const MAX_BATCHES: usize = 1_000_000;

/// Serves windows of `w` (installed here) of `batches` batches each: one
/// per "run" line of `input`, its result a line on `output` (module
/// comment). Returns the number of windows served.
pub fn serve(
    w: &Workload,
    batches: usize,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<u64> {
    if batches == 0 || batches > MAX_BATCHES {
        bail!("batches={batches}: want 1 to {MAX_BATCHES}");
    }
    let mut p = install(w)?;
    let frames = Trace::new(&w.frames, Split::None, 0, 1);
    let mut bufs: Vec<packet::PacketBuf> = (0..BATCH).map(|_| packet::PacketBuf::new()).collect();
    let mut sink = Sink::default();
    let mut next = 0;
    let per_window = batches * BATCH;
    writeln!(output, "ready {} {per_window}", w.name())?;
    output.flush()?;
    let mut served = 0;
    for line in input.lines() {
        let line = line?;
        match line.trim() {
            "run" => {}
            "" => continue,
            other => bail!("unknown request {other:?} on stdin (expected \"run\")"),
        }
        let before = sink.forwarded;
        let start = Instant::now();
        run_batches(
            batches,
            &mut p,
            &mut bufs,
            &frames,
            &mut next,
            w.ports.input,
            1_000_000_000,
            &mut sink,
        );
        let ns = start.elapsed().as_nanos() as f64 / per_window as f64;
        writeln!(output, "{ns:.3} {}", sink.forwarded - before)?;
        output.flush()?;
        served += 1;
    }
    std::hint::black_box(sink.check);
    Ok(served)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::{Kind, Traffic};

    /// A window per "run", each forwarding every packet it ran; blank
    /// lines are skipped and end of input ends the worker.
    #[test]
    fn serves_one_window_per_request() {
        let w = Workload::new(Kind::L2, 100, Traffic::Spread);
        let mut out = Vec::new();
        let n = serve(&w, 3, "run\n\nrun\n".as_bytes(), &mut out).expect("serve");
        assert_eq!(n, 2);
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "ready l2/100 96");
        for l in &lines[1..] {
            let (ns, fwd) = l.split_once(' ').expect("two fields");
            assert!(ns.parse::<f64>().expect("ns") > 0.0, "{l}");
            assert_eq!(fwd, "96", "{l}");
        }
    }

    #[test]
    fn refuses_unknown_requests_and_bad_sizes() {
        let w = Workload::new(Kind::Single, 1, Traffic::Spread);
        let e = serve(&w, 1, "run\nstop\n".as_bytes(), Vec::new()).expect_err("stop");
        assert!(e.to_string().contains("unknown request \"stop\""), "{e}");
        let e = serve(&w, 0, "".as_bytes(), Vec::new()).expect_err("0 batches");
        assert!(e.to_string().contains("batches=0"), "{e}");
    }
}
