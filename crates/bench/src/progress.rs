//! A progress bar for a run (indicatif), hidden when stderr is not a
//! terminal or when `OXFLOW_BENCH_QUIET` is set; messages still print.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress of the current experiment: `set_total` steps, `inc` per step,
/// `message` for the current phase.
pub struct Progress {
    bar: ProgressBar,
    visible: bool,
}

impl Progress {
    pub fn new(name: &str) -> Progress {
        use std::io::IsTerminal;
        let visible =
            std::io::stderr().is_terminal() && std::env::var_os("OXFLOW_BENCH_QUIET").is_none();
        let bar = ProgressBar::new(1);
        if visible {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {elapsed} {msg}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
        } else {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_prefix(name.to_string());
        Progress { bar, visible }
    }

    /// Total number of steps of this run.
    pub fn set_total(&self, n: u64) {
        self.bar.set_length(n.max(1));
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// The current phase, e.g. "N=100 repeat 2/5".
    pub fn message(&self, m: impl Into<String>) {
        self.bar.set_message(m.into());
    }

    /// A line above the bar (or on stderr when the bar is hidden).
    pub fn println(&self, s: &str) {
        if self.visible {
            self.bar.println(s);
        } else {
            eprintln!("{s}");
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
