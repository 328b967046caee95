//! A small safe wrapper over `poll(2)` plus an `eventfd` wake-up, so an
//! idle worker can sleep in the kernel until a port has a frame or the
//! control side has something for it.
//!
//! # Data structures
//!
//! - [`Poller`]: the set of descriptors one thread waits on, each with a
//!   caller-chosen `u64` token, kept as an array of `pollfd`s (`fds`) and
//!   a parallel array of tokens. Readiness is level-triggered: the ports'
//!   descriptors ([`crate::Port::fd`]) poll readable exactly while
//!   `rx_batch` has something to return.
//! - [`Waker`]: an `eventfd`, always entry 0 of the set under the reserved
//!   token [`WAKER_TOKEN`], shared (`Arc`) with other threads. `wake()` adds
//!   1 to the counter, which keeps the descriptor readable until the poller
//!   drains it. [`Poller::wait`] drains it *before* returning, so a caller
//!   that checks its queues after `wait` returns cannot lose a wake-up: a
//!   `wake()` that lands after the drain leaves the descriptor readable and
//!   the next `wait` returns at once.
//!
//! # Why `poll` and not `epoll`
//!
//! An epoll registration stays on each socket's wait queue while the
//! worker is busy, so under load *every* received frame
//! (`sk_data_ready`) and every transmitted frame's release
//! (`sock_wfree` -> `sk_write_space`) takes the wait-queue lock and runs
//! `ep_poll_callback`: measured with `perf` here that was ~7 % of a
//! forwarding worker's time. `poll(2)` puts the thread on the wait queues
//! only for the duration of the call, i.e. only while it is idle anyway;
//! for the handful of descriptors a worker has it costs the same.
//!
//! Registering a descriptor checks that it is open (`EBADF` otherwise). A
//! descriptor closed later polls `POLLNVAL`: `wait` reports it once as an
//! error event and stops polling it (as the kernel drops a closed file
//! from an epoll set).

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

/// A `poll` set with a [`Waker`]; see the module comment.
#[derive(Debug)]
pub struct Poller {
    waker: Arc<Waker>,
    /// What `poll` waits on: entry 0 is the waker, then every registered
    /// descriptor (fd -1 once it polled `POLLNVAL`: `poll` skips it).
    fds: Vec<libc::pollfd>,
    /// `tokens[i]` is the token of `fds[i]`.
    tokens: Vec<u64>,
}

/// Readiness of one registered descriptor after [`Poller::wait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub token: u64,
    pub readable: bool,
    /// `POLLERR` / `POLLHUP` / `POLLNVAL` (e.g. the interface went away).
    pub error: bool,
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        let waker = Arc::new(Waker::new()?);
        let mut p = Poller {
            fds: Vec::with_capacity(8),
            tokens: Vec::with_capacity(8),
            waker,
        };
        let fd = p.waker.fd.as_raw_fd();
        p.add(fd, WAKER_TOKEN)?;
        Ok(p)
    }

    /// The waker of this poller (share it with the threads that must be
    /// able to wake the owner).
    pub fn waker(&self) -> Arc<Waker> {
        Arc::clone(&self.waker)
    }

    /// Registers `fd` for readability (level-triggered) under `token`
    /// (any value except [`WAKER_TOKEN`]); `EBADF` if it is not open.
    pub fn add(&mut self, fd: RawFd, token: u64) -> io::Result<()> {
        // SAFETY: F_GETFD only reads the descriptor flags; an invalid
        // descriptor makes it fail with EBADF.
        cvt(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
        self.fds.push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        self.tokens.push(token);
        Ok(())
    }

    /// Unregisters `fd` (`ENOENT` if it is not registered).
    pub fn remove(&mut self, fd: RawFd) -> io::Result<()> {
        // Entry 0 is the waker, which stays.
        let i = self
            .fds
            .iter()
            .skip(1)
            .position(|p| p.fd == fd)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))?;
        self.fds.remove(i + 1);
        self.tokens.remove(i + 1);
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
        for p in &mut self.fds {
            p.revents = 0;
        }
        // SAFETY: `fds` is a live array of exactly `fds.len()` pollfds,
        // which the kernel reads and whose `revents` it writes.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(Vec::new());
            }
            return Err(e);
        }
        let mut out = Vec::new();
        for (p, &token) in self.fds.iter_mut().zip(&self.tokens) {
            let bits = p.revents;
            if bits == 0 {
                continue;
            }
            out.push(Event {
                token,
                readable: bits & libc::POLLIN != 0,
                error: bits & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0,
            });
            if bits & libc::POLLNVAL != 0 {
                // Closed: report it once, then stop polling it.
                p.fd = -1;
            }
        }
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
        let mut p = Poller::new().unwrap();
        assert!(p.add(-1, 1).is_err());
    }
}
