//! `oxflow bench ...`: the command line of the bench. The `oxflow` binary
//! hands it the words after `bench` ([`main_with_args`]).
//!
//! - `list`: one experiment per line, name and description.
//! - `params EXPERIMENT`: its parameters with defaults and help.
//! - `run EXPERIMENT --switch oxflow|ovs|external --out DIR [--set K=V ...]
//!   [--config FILE.toml]`: one run; writes DIR/results.json, CSVs, SVGs and
//!   DIR/index.html.
//! - `compare A B --out DIR`: overlay two run folders.
//! - `windows WORKLOAD/SIZE [--traffic T] [--batches N] [--order O]`: pipeline-only
//!   windows on request, one per "run" line on stdin, for an A/B of two
//!   builds (`crate::windows`, `scripts/ab_pipeline.py`).
//! - `settle PID [--max S] [--pct P]`: wait until process PID is quiet
//!   (`sampler::settle`), print the seconds waited; exit 0 when it went
//!   quiet, 1 when it was still busy at the limit or is gone (`make bench`
//!   before its pings).
//!
//! Exit status: 0 on success, 1 when the run fails (the message says what
//! and where), 2 for bad arguments.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::experiments;
use crate::runner::{self, RunOpts, COMMON_KEYS};
use crate::switch::{SwitchKind, EXTERNAL_KEYS, SWITCH_KEYS};
use crate::workloads::{Kind, Traffic, Workload};

#[derive(Debug, Parser)]
#[command(
    name = "oxflow bench",
    about = "Measure an OpenFlow 1.3 switch from the outside"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// One experiment per line: name and description.
    List,
    /// Parameters of an experiment (and of the switch recipes).
    Params { experiment: String },
    /// Run one experiment against a switch.
    Run {
        experiment: String,
        /// oxflow, ovs or external.
        #[arg(long, default_value = "oxflow")]
        switch: SwitchKind,
        /// Output folder (created).
        #[arg(long)]
        out: PathBuf,
        /// KEY=VALUE (repeatable; see `oxflow bench params EXPERIMENT`).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// TOML file with parameters (a [params] table or top-level keys).
        #[arg(long, value_name = "FILE.toml")]
        config: Option<PathBuf>,
    },
    /// Overlay two run folders (same experiment) into a third.
    Compare {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Pipeline-only windows on request (for scripts/ab_pipeline.py):
    /// installs WORKLOAD/SIZE, then runs one window per "run" line on
    /// stdin and prints its ns per packet and packets forwarded.
    Windows {
        /// e.g. gateway/100000 (workloads: single, l2, l3, lb_acl, gateway, acl_l3).
        workload: String,
        /// spread or tse.
        #[arg(long, default_value = "spread")]
        traffic: Traffic,
        /// Batches of 32 frames per window.
        #[arg(long, default_value_t = 4000)]
        batches: usize,
        /// The frames' order: entries (as the workload lists them) or
        /// random (one fixed random permutation).
        #[arg(long, default_value = "entries")]
        order: crate::pipeline_only::Order,
    },
    /// Wait until process PID has used under PCT % of a core in two
    /// consecutive half-second windows (at most MAX seconds); print the
    /// seconds waited. Exit 0: quiet; 1: still busy at MAX, or no such
    /// process.
    Settle {
        pid: u32,
        /// Longest wait, seconds.
        #[arg(long, default_value_t = 60.0)]
        max: f64,
        /// "Quiet": under this share of a core, percent.
        #[arg(long, default_value_t = 5.0)]
        pct: f64,
    },
}

/// `KIND/SIZE` (`gateway/100000`) as a workload of `traffic`.
fn parse_workload(s: &str, traffic: Traffic) -> Result<Workload, String> {
    let (kind, size) = s
        .split_once('/')
        .ok_or_else(|| format!("workload {s:?}: want KIND/SIZE, e.g. l2/100"))?;
    let kind: Kind = kind.parse()?;
    let size: usize = size
        .parse()
        .map_err(|_| format!("workload {s:?}: size {size:?} is not a number"))?;
    if !(1..=1_000_000).contains(&size) {
        return Err(format!("workload {s:?}: size {size} (want 1 to 1000000)"));
    }
    Ok(Workload::new(kind, size, traffic))
}

/// Run `oxflow bench` with `args` (the words after `bench`).
pub fn main_with_args(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(std::iter::once("oxflow bench".to_string()).chain(args)) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match cli.cmd {
        Cmd::List => {
            for e in experiments::all() {
                println!("{:<20} {}", e.name(), e.description());
            }
            0
        }
        Cmd::Params { experiment } => {
            let Some(e) = experiments::by_name(&experiment) else {
                eprintln!(
                    "oxflow bench: unknown experiment {experiment:?} (see `oxflow bench list`)"
                );
                return 2;
            };
            for p in e.params() {
                println!("{:<20} default {:<12} {}", p.name, p.default, p.help);
            }
            println!("# every run, and the switch recipes:");
            for (k, d, h) in COMMON_KEYS.iter().chain(SWITCH_KEYS).chain(EXTERNAL_KEYS) {
                println!("{k:<20} default {d:<12} {h}");
            }
            0
        }
        Cmd::Run {
            experiment,
            switch,
            out,
            sets,
            config,
        } => {
            let opts = RunOpts {
                experiment,
                switch,
                out,
                sets,
                config,
            };
            crate::interrupt::install();
            match runner::run(&opts) {
                Ok(dir) => {
                    println!("{}", dir.join("index.html").display());
                    0
                }
                Err(e) => {
                    eprintln!("oxflow bench run: {e}");
                    1
                }
            }
        }
        Cmd::Windows {
            workload,
            traffic,
            batches,
            order,
        } => {
            let mut w = match parse_workload(&workload, traffic) {
                Ok(w) => w,
                Err(e) => {
                    eprintln!("oxflow bench windows: {e}");
                    return 2;
                }
            };
            order.apply(&mut w.frames);
            let stdin = std::io::stdin().lock();
            match crate::windows::serve(&w, batches, stdin, std::io::stdout().lock()) {
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("oxflow bench windows: {e}");
                    1
                }
            }
        }
        Cmd::Settle { pid, max, pct } => {
            if !(0.0..=3600.0).contains(&max) {
                eprintln!("oxflow bench settle: --max {max}: want 0 to 3600 seconds");
                return 2;
            }
            let s = crate::sampler::settle(pid, std::time::Duration::from_secs_f64(max), pct);
            println!("{:.3}", s.waited.as_secs_f64());
            i32::from(!s.quiet)
        }
        Cmd::Compare { a, b, out } => match crate::report::compare(&a, &b, &out) {
            Ok(()) => {
                println!("{}", out.join("index.html").display());
                0
            }
            Err(e) => {
                eprintln!("oxflow bench compare: {e}");
                1
            }
        },
    }
}
