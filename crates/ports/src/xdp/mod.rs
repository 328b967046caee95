//! AF_XDP backend: a Linux interface through `AF_XDP` sockets (one per
//! receive queue of the device), using the `xsk-rs` bindings to libxdp.
//!
//! # Sockets, UMEM and the four rings
//!
//! Each AF_XDP socket is bound to one (interface, queue) pair and owns a
//! UMEM: one memory area cut into `frame_count` frames of `frame_size`
//! bytes, shared with the kernel. Frames move between us and the kernel
//! through four single-producer/single-consumer rings:
//!
//! ```text
//!   receive:   we --fill ring--> kernel --rx ring--> we   (frames to fill)
//!   transmit:  we --tx ring----> kernel --completion ring--> we
//! ```
//!
//! We split the frames in two fixed halves. The *receive half*
//! (`RxHalf`) starts with all its frames in the fill ring; `rx_batch`
//! takes up to a batch of filled frames from the rx ring, copies them into
//! the caller's [`PacketBuf`]s and gives the same frames straight back to
//! the fill ring. The *transmit half* (`TxHalf`) keeps a free list; each
//! transmitted frame is copied into a free frame, queued on the tx ring,
//! and returns to the free list when the completion ring reports it sent.
//! The halves share no frame, so the receive half can move to another
//! thread ([`Port::rx_queues`]) while the port keeps transmitting.
//!
//! # Modes
//!
//! [`XdpPort::open`] tries, in order: the driver's native XDP hook with
//! zero-copy (the NIC DMAs into the UMEM), native XDP in copy mode, then
//! generic (SKB) XDP in copy mode; [`XdpPort::mode`] says which one was
//! taken. libxdp loads its default program, which redirects each frame of
//! a queue to the socket bound to that queue. On a device with several
//! receive queues the port opens one socket per queue (a queue without a
//! socket would pass its frames to the kernel stack, unseen by the switch),
//! so [`Port::rx_queues`] can give them to up to that many workers.
//!
//! # Frame size
//!
//! One frame is one UMEM frame of 2048 bytes, 1792 after the XDP headroom
//! ([`MAX_XDP_FRAME`]), so [`XdpPort::open`] refuses a device whose MTU
//! (plus Ethernet header and two VLAN tags) does not fit; the switch then
//! falls back to AF_PACKET. Bigger UMEM frames would not lift the limit:
//! the kernel hands XDP any skb of more than about 2 KB in fragments
//! (seen here with generic and veth native XDP), which only multi-buffer
//! AF_XDP (`XDP_USE_SG` and a frags-aware program) could take. A TCP
//! super-frame another port received whole (AF_PACKET with GSO) is cut
//! into segments of the device MTU on the way out ([`crate::segment`]),
//! as the kernel's GSO would have; other frames over the room are
//! dropped and counted as errors.
//!
//! # Waking the kernel
//!
//! Sockets are bound with `XDP_USE_NEED_WAKEUP`: the kernel sets a flag on
//! a ring when it will not look at it without a system call. In copy mode
//! transmission always needs one (`sendto`, done per batch); the fill ring
//! of a zero-copy queue may need a `poll`.
//!
//! # Transmit clones
//!
//! Every queue's socket has its own UMEM and completion ring, so the
//! transmit half of each queue other than 0 (the port's own) can be handed
//! to another thread as a lock-free [`Port::tx_clone`]: a device with `n`
//! queues gives `n - 1` clones, then `Unsupported` (a veth has one queue
//! unless made with `numtxqueues`/`numrxqueues`). More clones on one queue
//! are not offered: a second socket on a queue shares that queue's
//! completion ring, which is single consumer, so it would need a lock
//! anyway; the switch then transmits through the port (under its mutex).
//! All transmit halves count into the port's one
//! [`TxCounters`](crate::TxCounters).
//!
//! Received frames' checksums are described in module `rx`.

mod opts;
mod rx;
mod socket;
mod tx;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use packet::PacketBuf;

use crate::sys::{self, cvt};
use crate::{Port, PortRx, PortStats, PortTx, RxCounters};
use rx::{RxHalf, RxSet};
use socket::{ctx, open_queue, rx_queue_count, xdp_drops, QueueSocket};
use tx::TxHalf;

pub use opts::{XdpMode, XdpOpts, MAX_XDP_FRAME};
pub use rx::XdpRx;
pub use socket::quiet_libxdp;
pub use tx::XdpTx;

/// A Linux interface opened with AF_XDP; see the module comment.
pub struct XdpPort {
    name: String,
    hw_addr: [u8; 6],
    mode: XdpMode,
    /// The port's own reception; `None` once handed out by `rx_queues`.
    rx: Option<RxSet>,
    /// Number of device queues (= sockets).
    queues: usize,
    /// Transmit through queue 0's socket; the other queues' transmit
    /// halves wait here to be handed out by `tx_clone` (module comment).
    tx: TxHalf,
    spare_tx: std::sync::Mutex<Vec<TxHalf>>,
    rx_counters: Vec<Arc<RxCounters>>,
    /// Socket descriptors of every queue, for kernel statistics.
    socket_fds: Vec<RawFd>,
    /// An AF_PACKET socket (bound to nothing, receives nothing) in the
    /// interface's namespace, for the interface ioctls: an AF_XDP socket
    /// does not answer them.
    ctl: OwnedFd,
}

impl XdpPort {
    /// Opens interface `name` (in the calling thread's network namespace):
    /// one socket per receive queue, in the first of `opts.modes` that
    /// works.
    pub fn open(name: &str, opts: &XdpOpts) -> io::Result<XdpPort> {
        quiet_libxdp();
        // SAFETY: plain socket(2) call; the result is checked and owned.
        let ctl = unsafe {
            OwnedFd::from_raw_fd(cvt(libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                0,
            ))?)
        };
        let c = ctl.as_raw_fd();
        sys::ifindex(c, name).map_err(|e| ctx(e, "no such interface", name))?;
        let hw_addr = sys::hw_addr(c, name).map_err(|e| ctx(e, "SIOCGIFHWADDR", name))?;
        let queues = rx_queue_count(c, name)?;
        // An MTU-sized frame with two VLAN tags must fit a UMEM frame after
        // the XDP headroom. Larger frames would need multi-buffer AF_XDP
        // (XDP_USE_SG and a frags-aware program), which this backend does
        // not do; the kernel also splits skbs of more than about 2 KB into
        // fragments before XDP (seen with generic and veth native XDP), so
        // 4096-byte frames would not help either.
        let mtu = sys::mtu(c, name).unwrap_or(1500) as usize;
        let room = (opts.frame_size as usize)
            .saturating_sub(256)
            .min(MAX_XDP_FRAME);
        if mtu + 22 > room {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{name}: MTU {mtu} too large for AF_XDP frames of {room} bytes \
                     (multi-buffer AF_XDP is not supported)"
                ),
            ));
        }
        let mut errors = Vec::new();
        for &mode in &opts.modes {
            let opened: io::Result<Vec<QueueSocket>> = (0..queues as u32)
                .map(|q| open_queue(name, q, mode, opts))
                .collect();
            match opened {
                Ok(socks) => {
                    let mut rxs = Vec::new();
                    let mut txs = Vec::new();
                    for s in socks {
                        rxs.push(s.rx);
                        txs.push(s.tx);
                    }
                    for t in &mut txs {
                        t.mtu = mtu;
                    }
                    let tx = txs.remove(0);
                    // One set of transmit counters for the port.
                    for t in &mut txs {
                        t.counters = Arc::clone(&tx.counters);
                    }
                    // Handed out last queue first (`pop`).
                    txs.reverse();
                    return Ok(XdpPort {
                        name: name.to_string(),
                        hw_addr,
                        mode,
                        rx_counters: rxs.iter().map(|h| Arc::clone(&h.counters)).collect(),
                        socket_fds: rxs.iter().map(RxHalf::fd).collect(),
                        rx: Some(RxSet::new(rxs)?),
                        queues,
                        tx,
                        spare_tx: std::sync::Mutex::new(txs),
                        ctl,
                    });
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        Err(io::Error::other(errors.join("; ")))
    }

    /// The mode the sockets were attached in.
    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    /// The number of device receive queues (one socket each).
    pub fn queues(&self) -> usize {
        self.queues
    }
}

impl Port for XdpPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        Ok(match &mut self.rx {
            Some(set) => set.rx_batch(bufs),
            None => 0,
        })
    }

    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
    }

    fn fd(&self) -> Option<RawFd> {
        self.rx.as_ref().and_then(RxSet::fd)
    }

    fn take_error(&self) -> Option<io::Error> {
        self.socket_fds.iter().find_map(|&fd| sys::socket_error(fd))
    }

    fn hw_addr(&self) -> [u8; 6] {
        self.hw_addr
    }

    fn link_up(&self) -> bool {
        sys::link_up(self.ctl.as_raw_fd(), &self.name)
    }

    fn mtu(&self) -> io::Result<u32> {
        sys::mtu(self.ctl.as_raw_fd(), &self.name)
    }

    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        let spare = self.spare_tx.lock().ok().and_then(|mut v| v.pop());
        match spare {
            Some(tx) => Ok(Box::new(XdpTx { tx })),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{}: no free queue for another AF_XDP transmit socket",
                    self.name
                ),
            )),
        }
    }

    fn max_frame_len(&self) -> usize {
        self.tx.frame_room.max(packet::buf::DEFAULT_CAPACITY)
    }

    fn stats(&self) -> PortStats {
        let mut s = PortStats::default();
        for c in &self.rx_counters {
            c.add_to(&mut s);
        }
        self.tx.counters.fill(&mut s);
        // Kernel-side losses of every socket, wherever its receive half
        // went.
        s.rx_dropped += self.socket_fds.iter().map(|&fd| xdp_drops(fd)).sum::<u64>();
        if let Ok(st) = self.tx.tx.fd().xdp_statistics() {
            s.tx_errors += st.tx_invalid_descs();
        }
        s
    }

    fn rx_queues(&mut self, n: usize) -> io::Result<Vec<Box<dyn PortRx>>> {
        if n == 0 || n > self.queues {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "{}: {n} receive queues asked, the device has {} (ethtool -L / numrxqueues)",
                    self.name, self.queues
                ),
            ));
        }
        let Some(set) = self.rx.take() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: reception is already split", self.name),
            ));
        };
        // Queue q goes to handle q % n.
        let mut shares: Vec<Vec<RxHalf>> = (0..n).map(|_| Vec::new()).collect();
        for (q, h) in set.halves.into_iter().enumerate() {
            shares[q % n].push(h);
        }
        shares
            .into_iter()
            .map(|halves| {
                Ok(Box::new(XdpRx {
                    set: RxSet::new(halves)?,
                }) as Box<dyn PortRx>)
            })
            .collect()
    }
}
