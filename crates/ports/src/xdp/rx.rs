//! The receive side of the AF_XDP sockets: one socket's receive half
//! ([`RxHalf`]: rx ring, fill ring and their frames), halves polled
//! together ([`RxSet`]), and the receive handle given to a worker
//! ([`XdpRx`]).
//!
//! # Checksums
//!
//! A frame from a host that leaves its TCP/UDP checksum to offload (a
//! veth's default) arrives with the checksum unfinished, and AF_XDP has
//! no metadata to say so (AF_PACKET has the `virtio_net_hdr`). Every
//! received frame goes through [`crate::partial::complete_unmarked`],
//! which recognises such a checksum by its value and finishes it (one
//! compare for an ordinary frame). Super-frames do not arrive here: a
//! veth with a native XDP program stops its peer's segmentation offload.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use packet::PacketBuf;
use xsk_rs::{FillQueue, FrameDesc, RxQueue, Umem};

use crate::sys::{self, cvt};
use crate::{PortRx, RxCounters};

/// The receive half of one socket: rx ring, fill ring, and the frames that
/// circulate between them (`xdp` module comment).
pub(super) struct RxHalf {
    pub(super) umem: Umem,
    pub(super) rx: RxQueue,
    pub(super) fill: FillQueue,
    /// Scratch descriptors for one `consume` (no allocation per batch).
    pub(super) descs: Vec<FrameDesc>,
    /// Frames not currently in the fill ring (only when the fill ring had
    /// no room for them; normally empty).
    pub(super) spare: Vec<FrameDesc>,
    pub(super) counters: Arc<RxCounters>,
}

impl RxHalf {
    pub(super) fn fd(&self) -> RawFd {
        self.rx.fd().as_raw_fd()
    }

    /// Copies up to `bufs.len()` received frames out and refills.
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> usize {
        let want = bufs.len().min(self.descs.len());
        // SAFETY: `descs` are scratch slots the ring writes into; the
        // frames they name belong to this socket's UMEM.
        let n = unsafe { self.rx.consume(&mut self.descs[..want]) };
        let (mut bytes, mut dropped) = (0u64, 0u64);
        let mut got = 0;
        for d in &self.descs[..n] {
            // SAFETY: the kernel handed this frame to us through the rx
            // ring and does not touch it until we put it in the fill ring
            // below; it belongs to this UMEM.
            let data = unsafe { self.umem.data(d) };
            if bufs[got].set(data.contents()).is_ok() {
                bytes += data.contents().len() as u64;
                // No metadata says whether the sender left the L4
                // checksum to offload (module comment, "Checksums").
                crate::partial::complete_unmarked(bufs[got].data_mut());
                got += 1;
            } else {
                dropped += 1;
            }
        }
        if n > 0 || !self.spare.is_empty() {
            self.spare.extend_from_slice(&self.descs[..n]);
            self.refill();
        } else if self.fill.needs_wakeup() {
            // Zero-copy drivers may wait for a poll to read the fill ring.
            let _ = self.fill.wakeup(self.rx.fd_mut(), 0);
        }
        self.counters.add(got as u64, bytes, dropped, 0);
        got
    }

    /// Puts the spare frames back in the fill ring (as many as fit).
    fn refill(&mut self) {
        let room = self.fill.nb_free(self.spare.len() as u32) as usize;
        let k = room.min(self.spare.len());
        if k == 0 {
            return;
        }
        let from = self.spare.len() - k;
        // SAFETY: these frames came from this UMEM's rx ring (or the
        // initial pool) and nothing else uses them now.
        let put = unsafe { self.fill.produce(&self.spare[from..]) };
        if put == k {
            self.spare.truncate(from);
        }
        if self.fill.needs_wakeup() {
            let _ = self.fill.wakeup(self.rx.fd_mut(), 0);
        }
    }
}

/// Receive halves polled together (one port's own reception, or one
/// worker's share after `rx_queues`), with an epoll descriptor over their
/// sockets when there is more than one.
pub(super) struct RxSet {
    pub(super) halves: Vec<RxHalf>,
    /// Next half to read first (round robin, so one busy queue cannot
    /// starve the others).
    next: usize,
    epoll: Option<OwnedFd>,
}

impl RxSet {
    pub(super) fn new(halves: Vec<RxHalf>) -> io::Result<RxSet> {
        let epoll = if halves.len() > 1 {
            // SAFETY: plain epoll_create1; the result is checked and owned.
            let ep =
                unsafe { OwnedFd::from_raw_fd(cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
            for h in &halves {
                let mut ev = libc::epoll_event {
                    events: libc::EPOLLIN as u32,
                    u64: h.fd() as u64,
                };
                // SAFETY: valid epoll and socket descriptors, live event.
                cvt(unsafe {
                    libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, h.fd(), &mut ev)
                })?;
            }
            Some(ep)
        } else {
            None
        };
        Ok(RxSet {
            halves,
            next: 0,
            epoll,
        })
    }

    pub(super) fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> usize {
        let m = self.halves.len();
        let mut n = 0;
        for i in 0..m {
            if n == bufs.len() {
                break;
            }
            let h = (self.next + i) % m;
            n += self.halves[h].rx_batch(&mut bufs[n..]);
        }
        if m > 0 {
            self.next = (self.next + 1) % m;
        }
        n
    }

    pub(super) fn fd(&self) -> Option<RawFd> {
        match &self.epoll {
            Some(ep) => Some(ep.as_raw_fd()),
            None => self.halves.first().map(RxHalf::fd),
        }
    }
}

/// A receive handle of an [`XdpPort`](super::XdpPort)
/// ([`Port::rx_queues`](crate::Port::rx_queues)): the sockets of one or
/// more device queues.
pub struct XdpRx {
    pub(super) set: RxSet,
}

impl PortRx for XdpRx {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        Ok(self.set.rx_batch(bufs))
    }

    fn fd(&self) -> Option<RawFd> {
        self.set.fd()
    }

    fn take_error(&self) -> Option<io::Error> {
        self.set
            .halves
            .iter()
            .find_map(|h| sys::socket_error(h.fd()))
    }
}
