//! A small safe wrapper over `epoll(7)` plus an `eventfd` wake-up, so an
//! idle worker can sleep in the kernel until a port has a frame or the
//! control side has something for it.
//!
//! # Data structures
//!
//! - [`Poller`]: one epoll instance owned by one thread. Descriptors are
//!   registered *level-triggered* for `EPOLLIN` with a caller-chosen `u64`
//!   token; the ports' descriptors ([`crate::Port::fd`]) already poll
//!   readable exactly while `rx_batch` has something to return, so
//!   level-triggered readiness needs no extra bookkeeping.
//! - [`Waker`]: an `eventfd` registered in the poller under the reserved
//!   token [`WAKER_TOKEN`], shared (`Arc`) with other threads. `wake()` adds
//!   1 to the counter, which keeps the descriptor readable until the poller
//!   drains it. [`Poller::wait`] drains it *before* returning, so a caller
//!   that checks its queues after `wait` returns cannot lose a wake-up: a
//!   `wake()` that lands after the drain leaves the descriptor readable and
//!   the next `wait` returns at once.
//!
//! Registering a raw descriptor is memory-safe even if it is (or later
//! becomes) invalid: `epoll_ctl` then fails with `EBADF`, and the kernel
//! removes a closed file from every epoll set by itself.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use crate::sys::cvt;

/// Token under which a [`Poller`] reports its own [`Waker`].
pub const WAKER_TOKEN: u64 = u64::MAX;

/// Wakes a thread blocked in [`Poller::wait`]; cheap to share (`Arc`).
#[derive(Debug)]
pub struct Waker {
    fd: OwnedFd,
}

impl Waker {
    fn new() -> io::Result<Waker> {
        // SAFETY: eventfd takes no pointers; the result is checked and
        // then owned by the OwnedFd.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        Ok(Waker {
            // SAFETY: `fd` is a fresh descriptor nobody else owns.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Makes the poller's next (or current) `wait` return.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd. The
        // only failure (EAGAIN at counter overflow) leaves it readable,
        // which is all a wake-up needs.
        unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
    }

    fn drain(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from our own non-blocking
        // eventfd; EAGAIN (counter already zero) is fine.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
    }
}

/// An epoll set with a [`Waker`]; see the module comment.
#[derive(Debug)]
pub struct Poller {
    ep: OwnedFd,
    waker: Arc<Waker>,
    events: Vec<libc::epoll_event>,
}

/// Readiness of one registered descriptor after [`Poller::wait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub token: u64,
    pub readable: bool,
    /// `EPOLLERR` / `EPOLLHUP` (e.g. the interface went away).
    pub error: bool,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes no pointers; the result is checked
        // and owned.
        let ep = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `ep` is a fresh descriptor nobody else owns.
        let ep = unsafe { OwnedFd::from_raw_fd(ep) };
        let p = Poller {
            ep,
            waker: Arc::new(Waker::new()?),
            events: Vec::with_capacity(64),
        };
        p.add(p.waker.fd.as_raw_fd(), WAKER_TOKEN)?;
        Ok(p)
    }

    /// The waker of this poller (share it with the threads that must be
    /// able to wake the owner).
    pub fn waker(&self) -> Arc<Waker> {
        Arc::clone(&self.waker)
    }

    /// Registers `fd` for readability (level-triggered) under `token`
    /// (any value except [`WAKER_TOKEN`]).
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: passes a live epoll_event; an invalid `fd` only makes
        // the call fail (module comment).
        cvt(unsafe { libc::epoll_ctl(self.ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Unregisters `fd`.
    pub fn remove(&self, fd: RawFd) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in `add` (the event is ignored by EPOLL_CTL_DEL but
        // must be non-null on old kernels).
        cvt(unsafe { libc::epoll_ctl(self.ep.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) })?;
        Ok(())
    }

    /// Blocks until a registered descriptor is ready, the waker fired or
    /// `timeout` passed (`None`: no limit). Returns the ready descriptors
    /// (the waker's event, token [`WAKER_TOKEN`], included; the waker is
    /// drained). `EINTR` returns an empty list.
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<Vec<Event>> {
        let ms: libc::c_int = match timeout {
            None => -1,
            // Round up so a short timeout does not become a busy loop.
            Some(d) => d.as_micros().div_ceil(1000).min(libc::c_int::MAX as u128) as libc::c_int,
        };
        self.events.clear();
        let cap = self.events.capacity().max(1);
        // SAFETY: the kernel writes at most `cap` events into the
        // vector's spare capacity; we then set the length to the count it
        // returned (<= cap), all of which it initialised.
        let n = unsafe {
            libc::epoll_wait(
                self.ep.as_raw_fd(),
                self.events.as_mut_ptr(),
                cap as libc::c_int,
                ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(Vec::new());
            }
            return Err(e);
        }
        // SAFETY: see above; 0 <= n <= cap.
        unsafe { self.events.set_len(n as usize) };
        let out: Vec<Event> = self
            .events
            .iter()
            .map(|e| {
                let bits = e.events;
                Event {
                    token: e.u64,
                    readable: bits & libc::EPOLLIN as u32 != 0,
                    error: bits & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0,
                }
            })
            .collect();
        if out.iter().any(|e| e.token == WAKER_TOKEN) {
            self.waker.drain();
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemPort, Port};

    #[test]
    fn wakes_on_waker_and_on_port() {
        let mut p = Poller::new().unwrap();
        let (mut a, b) = MemPort::pair().unwrap();
        p.add(b.fd().unwrap(), 7).unwrap();
        // Nothing ready: a zero timeout returns nothing.
        assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
        // A wake-up from another thread ends an unbounded wait.
        let w = p.waker();
        let t = std::thread::spawn(move || w.wake());
        let ev = p.wait(None).unwrap();
        t.join().unwrap();
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].token, WAKER_TOKEN);
        // Drained: not ready any more.
        assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
        // A frame makes the port ready, level-triggered (twice).
        a.tx_batch(&[&[0u8; 60]]).unwrap();
        for _ in 0..2 {
            let ev = p.wait(None).unwrap();
            assert_eq!(ev.len(), 1);
            assert_eq!(ev[0].token, 7);
            assert!(ev[0].readable);
        }
        p.remove(b.fd().unwrap()).unwrap();
        assert!(p.wait(Some(Duration::ZERO)).unwrap().is_empty());
    }

    #[test]
    fn wake_before_wait_is_not_lost() {
        let mut p = Poller::new().unwrap();
        p.waker().wake();
        let ev = p.wait(None).unwrap();
        assert_eq!(ev[0].token, WAKER_TOKEN);
    }

    #[test]
    fn bad_descriptor_is_an_error_not_ub() {
        let p = Poller::new().unwrap();
        assert!(p.add(-1, 1).is_err());
    }
}
