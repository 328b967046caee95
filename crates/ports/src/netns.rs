//! Running code inside a named network namespace (`ip netns add NAME`).
//!
//! A socket stays in the network namespace it was created in, whatever
//! thread later uses it. So to open ports on interfaces of another
//! namespace, [`in_netns`] runs a closure on a short-lived thread that first
//! joins the namespace with `setns(2)`; the ports it returns keep working
//! from any thread afterwards. The calling thread's namespace is untouched.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use crate::sys::cvt;

/// Runs `f` on a new thread inside network namespace `name` (a file in
/// `/run/netns/`, as made by `ip netns add`) and returns its result.
pub fn in_netns<T, F>(name: &str, f: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    if name.is_empty() || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad namespace name {name:?}"),
        ));
    }
    let ns = File::open(format!("/run/netns/{name}"))?;
    let handle = std::thread::spawn(move || -> io::Result<T> {
        // SAFETY: setns on an open namespace file descriptor; it only
        // changes this (new, private) thread's network namespace.
        cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
        Ok(f())
    });
    handle
        .join()
        .map_err(|_| io::Error::other("closure panicked inside the namespace"))?
}
