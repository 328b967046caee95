//! Ctrl-C / SIGTERM during a run: the first signal sets a flag that the
//! event loop, the blocking helpers and the generator check, so the run
//! stops through the normal path and every namespace, switch and OVS daemon
//! is cleaned up; a second signal exits at once (exit status 130).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Install the handlers (once; `oxflow bench run` does this).
pub fn install() {
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Order matters: the shutdown check runs before the flag is set, so
        // only a second signal exits.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(flag));
        let _ = signal_hook::flag::register(sig, Arc::clone(flag));
    }
}

/// Whether a stop was requested.
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}
