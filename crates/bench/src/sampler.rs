//! CPU and memory of the switch process from /proc (OFLOPS used SNMP).
//!
//! `/proc/PID/stat` gives user + system CPU time of all threads in clock
//! ticks; `/proc/PID/status` gives VmRSS. CPU percent over an interval is
//! the tick difference over the elapsed wall time (100 % = one core busy).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::experiment::now_ns;

/// utime + stime of `pid` in seconds.
pub fn cpu_seconds(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the ")" that closes the command name: state is field 3,
    // utime field 14, stime field 15 (1-based over the whole line).
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    let tck = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    Some((utime + stime) / tck)
}

/// Resident memory of `pid` in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

/// CPU percent of `pid` over the span between two readings.
#[derive(Debug, Clone, Copy)]
pub struct CpuMark {
    cpu_s: f64,
    at: Instant,
}

impl CpuMark {
    pub fn now(pid: u32) -> Option<CpuMark> {
        Some(CpuMark {
            cpu_s: cpu_seconds(pid)?,
            at: Instant::now(),
        })
    }

    /// Percent of one core used since `self`.
    pub fn percent_since(&self, pid: u32) -> Option<f64> {
        let now = cpu_seconds(pid)?;
        let dt = self.at.elapsed().as_secs_f64().max(1e-6);
        Some(100.0 * (now - self.cpu_s) / dt)
    }
}

/// How [`settle`] ended: the time it waited, and whether the process went
/// quiet (`false`: still busy at the limit, or gone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    pub waited: Duration,
    pub quiet: bool,
}

/// Length of one of [`settle`]'s windows.
pub const SETTLE_WINDOW: Duration = Duration::from_millis(500);

/// Waits until `pid` has used under `pct` % of a core in each of two
/// consecutive [`SETTLE_WINDOW`]s, at most `max`. A switch that has just
/// had its flows replaced may still be working on them after the barrier
/// reply (Open vSwitch, after a delete of 110K flows: 4 s here, with
/// pings of 1-30 ms meanwhile); a rate or latency measured then is that
/// work's, not the data path's steady state. (`make bench` waits so
/// before its pings too, through `oxflow bench settle`.)
pub fn settle(pid: u32, max: Duration, pct: f64) -> Settled {
    let start = Instant::now();
    let mut quiet = 0;
    while start.elapsed() < max {
        let Some(mark) = CpuMark::now(pid) else { break };
        std::thread::sleep(SETTLE_WINDOW);
        let Some(used) = mark.percent_since(pid) else {
            break;
        };
        quiet = if used < pct { quiet + 1 } else { 0 };
        if quiet >= 2 {
            return Settled {
                waited: start.elapsed(),
                quiet: true,
            };
        }
    }
    Settled {
        waited: start.elapsed(),
        quiet: false,
    }
}

/// One periodic sample.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Sample {
    pub ts_ns: u64,
    pub cpu_percent: f64,
    pub rss_kib: u64,
}

/// Samples `pid` every `interval` on a thread until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Sample>>>,
    handle: Option<JoinHandle<()>>,
}

impl Sampler {
    pub fn start(pid: u32, interval: Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (s2, v2) = (Arc::clone(&stop), Arc::clone(&samples));
        let handle = std::thread::spawn(move || {
            let mut mark = CpuMark::now(pid);
            while !s2.load(Ordering::Relaxed) {
                std::thread::sleep(interval);
                let (Some(m), Some(rss)) = (mark, rss_kib(pid)) else {
                    return;
                };
                if let Some(p) = m.percent_since(pid) {
                    if let Ok(mut v) = v2.lock() {
                        v.push(Sample {
                            ts_ns: now_ns(),
                            cpu_percent: p,
                            rss_kib: rss,
                        });
                    }
                }
                mark = CpuMark::now(pid);
            }
        });
        Sampler {
            stop,
            samples,
            handle: Some(handle),
        }
    }

    /// Stop and return the samples.
    pub fn stop(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.samples.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_process() {
        let me = std::process::id();
        let t0 = cpu_seconds(me).expect("own /proc/self/stat");
        let mut x = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        assert!(cpu_seconds(me).expect("again") >= t0);
        assert!(rss_kib(me).expect("VmRSS") > 0);
        assert!(cpu_seconds(u32::MAX).is_none());
    }

    /// A process that spins for `seconds` (bash builtins only, so the
    /// CPU time is its own and not its children's), then sleeps.
    fn spinner(seconds: f64) -> std::process::Child {
        let us = (seconds * 1e6) as u64;
        std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "end=$((${{EPOCHREALTIME/./}} + {us})); \
                 while [ ${{EPOCHREALTIME/./}} -lt $end ]; do :; done; exec sleep 60"
            ))
            .spawn()
            .expect("bash")
    }

    #[test]
    fn settle_waits_for_a_busy_process_and_gives_up_on_a_gone_one() {
        let mut busy = spinner(1.5);
        let s = settle(busy.id(), Duration::from_secs(20), 5.0);
        let _ = busy.kill();
        let _ = busy.wait();
        assert!(s.quiet, "{s:?}");
        assert!(s.waited >= Duration::from_millis(1500), "{s:?}");
        // Idle from the start: the two windows only.
        let mut idle = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("sleep");
        let s = settle(idle.id(), Duration::from_secs(20), 5.0);
        let _ = idle.kill();
        let _ = idle.wait();
        assert!(s.quiet, "{s:?}");
        assert!(s.waited < Duration::from_millis(2500), "{s:?}");
        // Busy throughout: given up on at the limit.
        let mut spin = spinner(60.0);
        let s = settle(spin.id(), Duration::from_secs(2), 5.0);
        let _ = spin.kill();
        let _ = spin.wait();
        assert!(!s.quiet, "{s:?}");
        assert!(s.waited >= Duration::from_secs(2), "{s:?}");
        // No such process: not quiet, no wait.
        let s = settle(u32::MAX, Duration::from_secs(5), 5.0);
        assert!(!s.quiet && s.waited < Duration::from_secs(1), "{s:?}");
    }
}
