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
//! # Checksums
//!
//! A frame from a host that leaves its TCP/UDP checksum to offload (a
//! veth's default) arrives with the checksum unfinished, and AF_XDP has
//! no metadata to say so (AF_PACKET has the `virtio_net_hdr`). Every
//! received frame goes through [`crate::partial::complete_unmarked`],
//! which recognises such a checksum by its value and finishes it (one
//! compare for an ordinary frame). Super-frames do not arrive here: a
//! veth with a native XDP program stops its peer's segmentation offload.
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
//! All transmit halves count into the port's one [`TxCounters`].

use std::ffi::CString;
use std::io;
use std::num::NonZeroU32;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use crate::segment::Segments;
use packet::PacketBuf;
use xsk_rs::config::{
    BindFlags, FrameSize, Interface, LibxdpFlags, QueueSize, SocketConfig, UmemConfig, XdpFlags,
};
use xsk_rs::{CompQueue, FillQueue, FrameDesc, RxQueue, Socket, TxQueue, Umem};

use crate::sys::{self, cvt};
use crate::{Port, PortRx, PortStats, PortTx, RxCounters, TxCounters, BATCH};

/// How the sockets of an [`XdpPort`] are attached (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// Driver XDP hook, frames DMA'd straight into the UMEM.
    NativeZeroCopy,
    /// Driver XDP hook, frames copied into the UMEM by the kernel.
    NativeCopy,
    /// Generic XDP after the kernel built an skb (works on any device).
    Generic,
}

impl std::fmt::Display for XdpMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            XdpMode::NativeZeroCopy => "native zero-copy",
            XdpMode::NativeCopy => "native copy",
            XdpMode::Generic => "generic (skb) copy",
        })
    }
}

/// Options of [`XdpPort::open`].
#[derive(Debug, Clone)]
pub struct XdpOpts {
    /// Frames per receive half and per transmit half of each socket (also
    /// the size of each ring); a power of two.
    pub ring_size: u32,
    /// Bytes per UMEM frame (2048 or 4096); a frame holds up to
    /// `frame_size - 256` bytes of packet.
    pub frame_size: u32,
    /// The modes to try, in order (default: zero-copy, native copy,
    /// generic).
    pub modes: Vec<XdpMode>,
}

impl Default for XdpOpts {
    fn default() -> Self {
        XdpOpts {
            ring_size: 2048,
            frame_size: 2048,
            modes: vec![
                XdpMode::NativeZeroCopy,
                XdpMode::NativeCopy,
                XdpMode::Generic,
            ],
        }
    }
}

/// Largest frame an [`XdpPort`] carries: 2048-byte UMEM frames less the
/// XDP headroom (module comment, "Frame size").
pub const MAX_XDP_FRAME: usize = 2048 - 256;

/// Frames per `consume`/`produce` call on the rings.
const RING_BATCH: usize = BATCH;

/// The receive half of one socket: rx ring, fill ring, and the frames that
/// circulate between them (module comment).
struct RxHalf {
    umem: Umem,
    rx: RxQueue,
    fill: FillQueue,
    /// Scratch descriptors for one `consume` (no allocation per batch).
    descs: Vec<FrameDesc>,
    /// Frames not currently in the fill ring (only when the fill ring had
    /// no room for them; normally empty).
    spare: Vec<FrameDesc>,
    counters: Arc<RxCounters>,
}

impl RxHalf {
    fn fd(&self) -> RawFd {
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

/// The transmit half of one socket: tx ring, completion ring and the free
/// frames (module comment).
struct TxHalf {
    umem: Umem,
    tx: TxQueue,
    comp: CompQueue,
    /// Frames we may write into.
    free: Vec<FrameDesc>,
    /// Scratch for one batch (completion reads, tx writes).
    descs: Vec<FrameDesc>,
    /// Largest frame a UMEM frame holds.
    frame_room: usize,
    /// The device MTU (when the port was opened): super-frames are cut
    /// to it.
    mtu: usize,
    /// One segment at a time, on its way into a UMEM frame.
    scratch: Vec<u8>,
    counters: Arc<TxCounters>,
}

impl TxHalf {
    /// Moves completed frames back to the free list.
    fn reclaim(&mut self) {
        loop {
            // SAFETY: completion entries name frames of this UMEM.
            let n = unsafe { self.comp.consume(&mut self.descs) };
            self.free.extend_from_slice(&self.descs[..n]);
            if n < self.descs.len() {
                break;
            }
        }
    }

    /// Transmits `pkts` in order (a TCP super-frame cut into segments,
    /// `crate::segment`); returns how many were handed to the kernel
    /// whole.
    fn send(&mut self, pkts: &[&[u8]]) -> usize {
        self.reclaim();
        let mut sent = 0;
        let mut k = 0;
        for p in pkts {
            if p.len() <= self.frame_room {
                self.stage(p, &mut k);
                if k == RING_BATCH {
                    sent += self.flush(&mut k);
                }
                continue;
            }
            // A super-frame: what is staged goes first, then its segments.
            sent += self.flush(&mut k);
            let Some(segs) = Segments::new(p, self.mtu) else {
                self.counters.error();
                continue;
            };
            let mut scratch = std::mem::take(&mut self.scratch);
            let mut whole = true;
            for i in 0..segs.len() {
                scratch.resize(segs.segment_len(i), 0);
                match segs.write(i, &mut scratch) {
                    Some(n) => whole &= self.stage(&scratch[..n], &mut k),
                    None => whole = false,
                }
                if k == RING_BATCH {
                    whole &= self.flush(&mut k) == RING_BATCH;
                }
            }
            let staged = k;
            whole &= self.flush(&mut k) == staged;
            sent += usize::from(whole);
            self.scratch = scratch;
        }
        sent + self.flush(&mut k)
    }

    /// Copies `p` into a free frame as `descs[*k]`; false (and counted)
    /// when there is none or it does not fit.
    fn stage(&mut self, p: &[u8], k: &mut usize) -> bool {
        if p.len() > self.frame_room {
            self.counters.error();
            return false;
        }
        let Some(mut d) = self.free.pop() else {
            self.counters.dropped(1);
            return false;
        };
        // SAFETY: `d` is a free frame of this UMEM: not in any ring, so
        // neither the kernel nor another handle touches it.
        let mut data = unsafe { self.umem.data_mut(&mut d) };
        let mut cur = data.cursor();
        cur.set_pos(0);
        if io::Write::write_all(&mut cur, p).is_err() {
            self.free.push(d);
            self.counters.error();
            return false;
        }
        self.descs[*k] = d;
        *k += 1;
        true
    }

    /// Hands the staged frames `descs[..*k]` to the kernel (all or none:
    /// the ones the ring has no room for go back to the free list,
    /// counted as dropped) and empties the stage; returns how many went.
    fn flush(&mut self, k: &mut usize) -> usize {
        let n = std::mem::take(k);
        if n == 0 {
            return 0;
        }
        let room = self.tx.nb_free(n as u32) as usize;
        let put = if room >= n {
            // SAFETY: descs[..n] are frames of this UMEM we just filled;
            // they belong to the kernel until completed.
            unsafe { self.tx.produce(&self.descs[..n]) }
        } else {
            0
        };
        if put < n {
            self.free.extend_from_slice(&self.descs[put..n]);
            self.counters.dropped((n - put) as u64);
        }
        for d in &self.descs[..put] {
            self.counters.sent(d.lengths().data());
        }
        if put > 0 && self.tx.needs_wakeup() {
            let _ = self.tx.wakeup();
        }
        put
    }
}

/// One AF_XDP socket as opened: its two halves.
struct QueueSocket {
    rx: RxHalf,
    tx: TxHalf,
}

/// Receive halves polled together (one port's own reception, or one
/// worker's share after `rx_queues`), with an epoll descriptor over their
/// sockets when there is more than one.
struct RxSet {
    halves: Vec<RxHalf>,
    /// Next half to read first (round robin, so one busy queue cannot
    /// starve the others).
    next: usize,
    epoll: Option<OwnedFd>,
}

impl RxSet {
    fn new(halves: Vec<RxHalf>) -> io::Result<RxSet> {
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

    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> usize {
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

    fn fd(&self) -> Option<RawFd> {
        match &self.epoll {
            Some(ep) => Some(ep.as_raw_fd()),
            None => self.halves.first().map(RxHalf::fd),
        }
    }
}

/// A receive handle of an [`XdpPort`] ([`Port::rx_queues`]): the sockets
/// of one or more device queues.
pub struct XdpRx {
    set: RxSet,
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

/// A transmit clone of an [`XdpPort`] ([`Port::tx_clone`]): the transmit
/// half of one device queue's socket.
pub struct XdpTx {
    tx: TxHalf,
}

impl PortTx for XdpTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
    }
}

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

/// `struct ethtool_channels` (`ETHTOOL_GCHANNELS`).
#[repr(C)]
#[derive(Default)]
struct EthtoolChannels {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// The number of receive queues of `name` (1 when the driver does not say).
fn rx_queue_count(fd: RawFd, name: &str) -> io::Result<usize> {
    let mut ch = EthtoolChannels {
        cmd: ETHTOOL_GCHANNELS,
        ..EthtoolChannels::default()
    };
    let mut req = sys::ifreq(name)?;
    req.ifr_ifru.ifru_data = (&mut ch as *mut EthtoolChannels).cast();
    // SAFETY: SIOCETHTOOL with ETHTOOL_GCHANNELS reads/writes one
    // ethtool_channels, which `req` points to and which outlives the call.
    let r = unsafe { libc::ioctl(fd, libc::SIOCETHTOOL as _, &mut req as *mut libc::ifreq) };
    if r < 0 {
        return Ok(1);
    }
    Ok((ch.rx_count.max(ch.combined_count) as usize).max(1))
}

fn ctx(e: impl std::fmt::Display, what: &str, name: &str) -> io::Error {
    io::Error::other(format!("{name}: {what}: {e}"))
}

/// Opens one socket on (`name`, `queue`) in `mode`, with its own UMEM.
fn open_queue(name: &str, queue: u32, mode: XdpMode, opts: &XdpOpts) -> io::Result<QueueSocket> {
    let ring = QueueSize::new(opts.ring_size).map_err(|e| ctx(e, "ring size", name))?;
    let frame_size = FrameSize::new(opts.frame_size).map_err(|e| ctx(e, "frame size", name))?;
    let ucfg = UmemConfig::builder()
        .frame_size(frame_size)
        .fill_queue_size(ring)
        .comp_queue_size(ring)
        .build()
        .map_err(|e| ctx(e, "UMEM config", name))?;
    let frame_room = ucfg.mtu() as usize;
    let count = NonZeroU32::new(opts.ring_size.saturating_mul(2))
        .ok_or_else(|| ctx("zero", "ring size", name))?;
    let (umem, mut frames) = Umem::new(ucfg, count, false).map_err(|e| ctx(e, "UMEM", name))?;
    let (xdp, bind) = match mode {
        XdpMode::NativeZeroCopy => (XdpFlags::XDP_FLAGS_DRV_MODE, BindFlags::XDP_ZEROCOPY),
        XdpMode::NativeCopy => (XdpFlags::XDP_FLAGS_DRV_MODE, BindFlags::XDP_COPY),
        XdpMode::Generic => (XdpFlags::XDP_FLAGS_SKB_MODE, BindFlags::XDP_COPY),
    };
    let scfg = SocketConfig::builder()
        .rx_queue_size(ring)
        .tx_queue_size(ring)
        .xdp_flags(xdp)
        .bind_flags(bind | BindFlags::XDP_USE_NEED_WAKEUP)
        .libxdp_flags(LibxdpFlags::empty())
        .build();
    let ifname = Interface::new(CString::new(name).map_err(|e| ctx(e, "name", name))?);
    // SAFETY: the UMEM is new and not shared, so the program-load flag
    // requirement of Socket::new does not apply.
    let (tx, rx, fq_cq) = unsafe { Socket::new(scfg, &umem, &ifname, queue) }
        .map_err(|e| ctx(e, &format!("AF_XDP socket on queue {queue} ({mode})"), name))?;
    let (mut fill, comp) = fq_cq.ok_or_else(|| ctx("no fill/completion ring", "AF_XDP", name))?;
    let tx_frames = frames.split_off(opts.ring_size as usize);
    // SAFETY: all receive frames are fresh frames of this UMEM.
    let put = unsafe { fill.produce(&frames) };
    let spare = if put == frames.len() {
        Vec::new()
    } else {
        frames
    };
    let counters = Arc::default();
    Ok(QueueSocket {
        rx: RxHalf {
            umem: umem.clone(),
            rx,
            fill,
            descs: vec![FrameDesc::default(); RING_BATCH],
            spare,
            counters,
        },
        tx: TxHalf {
            umem,
            tx,
            comp,
            free: tx_frames,
            descs: vec![FrameDesc::default(); RING_BATCH],
            frame_room,
            mtu: 1500,
            scratch: Vec::new(),
            counters: Arc::default(),
        },
    })
}

/// libxdp and libbpf print diagnostics to stderr by default (for instance
/// "No bpffs found ... falling back to loading single prog"), although
/// every failure also reaches the caller as an error: turn them off once
/// (called by [`XdpPort::open`]; public for programs that use xsk-rs
/// directly).
pub fn quiet_libxdp() {
    unsafe extern "C" fn quiet_xdp(
        _: libxdp_sys::libxdp_print_level,
        _: *const libc::c_char,
        _: *mut libxdp_sys::__va_list_tag,
    ) -> libc::c_int {
        0
    }
    unsafe extern "C" fn quiet_bpf(
        _: libbpf_sys::libbpf_print_level,
        _: *const libc::c_char,
        _: *mut libbpf_sys::__va_list_tag,
    ) -> libc::c_int {
        0
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: installs print callbacks that ignore their arguments;
        // both setters only swap a global function pointer.
        unsafe {
            libxdp_sys::libxdp_set_print(Some(quiet_xdp));
            libbpf_sys::libbpf_set_print(Some(quiet_bpf));
        }
    });
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

/// Kernel-side receive losses of AF_XDP socket `fd` (`XDP_STATISTICS`).
fn xdp_drops(fd: RawFd) -> u64 {
    // struct xdp_statistics: rx_dropped, rx_invalid_descs, tx_invalid_descs,
    // rx_ring_full, rx_fill_ring_empty_descs, tx_ring_empty_descs.
    let mut st = [0u64; 6];
    let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
    const SOL_XDP: libc::c_int = 283;
    const XDP_STATISTICS: libc::c_int = 7;
    // SAFETY: passes a live array and its size as out-params.
    let r = unsafe {
        libc::getsockopt(
            fd,
            SOL_XDP,
            XDP_STATISTICS,
            st.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if r == 0 {
        st[0] + st[1] + st[3]
    } else {
        0
    }
}
