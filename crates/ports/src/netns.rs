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

/// Runs `f` in the network namespace that socket `sock` belongs to: on the
/// calling thread if that is the thread's own namespace, else on a new
/// thread that joins it (`SIOCGSKNS` gives the socket's namespace). Used to
/// open more sockets on an interface that was opened inside another
/// namespace.
pub fn in_netns_of<T, F>(sock: std::os::fd::RawFd, f: F) -> io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::fs::MetadataExt;
    // SAFETY: SIOCGSKNS takes no argument and returns a new descriptor
    // (checked), which we own from here on.
    let ns = unsafe { OwnedFd::from_raw_fd(cvt(libc::ioctl(sock, libc::SIOCGSKNS as _))?) };
    let ns = File::from(ns);
    let theirs = ns.metadata()?;
    let ours = std::fs::metadata("/proc/thread-self/ns/net")?;
    if (theirs.dev(), theirs.ino()) == (ours.dev(), ours.ino()) {
        return Ok(f());
    }
    let handle = std::thread::spawn(move || -> io::Result<T> {
        // SAFETY: setns on an open namespace descriptor; it only changes
        // this (new, private) thread's network namespace.
        cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
        Ok(f())
    });
    handle
        .join()
        .map_err(|_| io::Error::other("closure panicked inside the namespace"))?
}
