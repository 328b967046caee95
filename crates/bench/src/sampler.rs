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
}
