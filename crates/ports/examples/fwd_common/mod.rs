//! Command line, clock and report shared by the I/O ceiling forwarders
//! (`fwd_afpacket`, `fwd_xdp`).
//!
//! ```text
//! fwd_X IN OUT [--seconds S] [--json]
//! ```
//!
//! Forwards every frame received on IN out of OUT (one direction, no
//! parsing) for S seconds (default 10), then prints the frames forwarded
//! and the rate. The rate is taken over the *active window*, from the first
//! to the last forwarded frame, so a traffic generator that starts late or
//! stops early does not dilute it; `elapsed_s` is the whole run.

use std::time::{Duration, Instant};

pub struct Args {
    pub input: String,
    pub output: String,
    pub seconds: f64,
    pub json: bool,
}

pub fn parse_args(tool: &str) -> Args {
    let usage = || -> ! {
        eprintln!("usage: {tool} IN_IFACE OUT_IFACE [--seconds S] [--json]");
        std::process::exit(2);
    };
    let mut pos = Vec::new();
    let mut seconds = 10.0;
    let mut json = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = true,
            "--seconds" => {
                seconds = match it.next().and_then(|s| s.parse::<f64>().ok()) {
                    Some(s) if s > 0.0 => s,
                    _ => usage(),
                }
            }
            "-h" | "--help" => usage(),
            _ if a.starts_with('-') => usage(),
            _ => pos.push(a),
        }
    }
    if pos.len() != 2 {
        usage();
    }
    let output = pos.pop().unwrap_or_default();
    let input = pos.pop().unwrap_or_default();
    Args {
        input,
        output,
        seconds,
        json,
    }
}

/// Counts forwarded frames and remembers the active window.
pub struct Meter {
    start: Instant,
    deadline: Duration,
    first: Option<Instant>,
    last: Instant,
    /// Calls of `done` since the clock was last read.
    polls: u32,
    finished: bool,
    pub packets: u64,
    pub bytes: u64,
}

impl Meter {
    pub fn new(seconds: f64) -> Meter {
        let now = Instant::now();
        Meter {
            start: now,
            deadline: Duration::from_secs_f64(seconds),
            first: None,
            last: now,
            polls: 0,
            finished: false,
            packets: 0,
            bytes: 0,
        }
    }

    /// Whether the run time is over (reads the clock every 64 calls).
    pub fn done(&mut self) -> bool {
        self.polls += 1;
        if self.polls >= 64 {
            self.polls = 0;
            self.finished = self.start.elapsed() >= self.deadline;
        }
        self.finished
    }

    /// Adds `n` frames of `bytes` bytes forwarded just now.
    pub fn add(&mut self, n: usize, bytes: u64) {
        if n == 0 {
            return;
        }
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = now;
        self.packets += n as u64;
        self.bytes += bytes;
    }

    /// Prints the result (`extra`: more `"key": value` JSON members).
    pub fn report(&self, tool: &str, a: &Args, extra: &[(&str, String)]) {
        let elapsed = self.start.elapsed().as_secs_f64();
        let active = self
            .first
            .map_or(0.0, |f| self.last.duration_since(f).as_secs_f64());
        let mpps = if active > 0.0 {
            self.packets as f64 / active / 1e6
        } else {
            0.0
        };
        if a.json {
            let mut s = format!(
                "{{\"tool\": \"{tool}\", \"in\": \"{}\", \"out\": \"{}\", \"packets\": {}, \
                 \"bytes\": {}, \"active_s\": {active:.6}, \"elapsed_s\": {elapsed:.6}, \
                 \"mpps\": {mpps:.6}",
                a.input, a.output, self.packets, self.bytes
            );
            for (k, v) in extra {
                s.push_str(&format!(", \"{k}\": {v}"));
            }
            s.push('}');
            println!("{s}");
        } else {
            println!(
                "{tool} {} -> {}: {} packets forwarded in {active:.3} s active \
                 ({elapsed:.3} s run): {mpps:.3} Mpps",
                a.input, a.output, self.packets
            );
            for (k, v) in extra {
                println!("  {k}: {v}");
            }
        }
    }
}

/// Spins this many empty rounds before sleeping in `poll` (so an idle
/// forwarder does not burn a core, but a busy one never sleeps).
pub const SPIN_ROUNDS: u32 = 256;

/// Waits up to 10 ms for `fd` to be readable.
pub fn wait_readable(fd: i32) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut pfd, 1, 10) };
}
