//! AF_PACKET backend: any Linux interface, a TPACKET_V2 frame ring (or a
//! TPACKET_V3 block ring, or `recvmmsg`) for receive, `sendmmsg` for
//! transmit.
//!
//! # Receive ([`RxMode`])
//!
//! - **Frame ring** (TPACKET_V2, the default): `block_nr` blocks cut into
//!   slots of `frame_size` bytes, one frame per slot, each with its own
//!   status word (`FrameRing`). The kernel hands over every frame as soon
//!   as it is written and wakes the socket, and reading costs no system
//!   call. A frame too big for a slot (a TSO super-frame with `vnet_hdr`)
//!   arrives truncated with `TP_STATUS_COPY` and whole on the socket queue
//!   (`PACKET_COPY_THRESH`), where we read it with `recvmmsg` in its turn.
//! - **Block ring** (TPACKET_V3, module `block_ring`): frames packed
//!   tightly into blocks, no system call either, but the kernel hands a
//!   block over only when it is full or its timeout expires, so a lone
//!   frame (a ping) waits up to `block_timeout_ms`: measured here one hop
//!   took ~0.9 ms median against ~7 µs with `recvmmsg`.
//! - **`recvmmsg`**: a batch is one system call straight into the caller's
//!   [`PacketBuf`]s (the kernel's copy is the only one), with
//!   `PACKET_AUXDATA` control messages for the stripped VLAN tag and the
//!   source address for the packet type (`RxMsgs`, arrays allocated
//!   once; frames a batch skips are compacted away by swapping buffers).
//!   Under load here it forwarded 1.5-2.5x less than the block ring.
//!
//! # Several receive queues (`rx_queues`)
//!
//! [`Port::rx_queues`]`(n)` makes the port's socket one of `n` sockets in a
//! `PACKET_FANOUT` group of type `PACKET_FANOUT_HASH` (without
//! `PACKET_FANOUT_FLAG_DEFRAG`): the kernel gives each frame to exactly one
//! member, chosen by the flow hash, so each flow stays on one worker, in
//! order. The group id comes from the kernel (`PACKET_FANOUT_FLAG_UNIQUEID`),
//! so it is unique per interface and process without guessing; a port
//! opened with [`AfPacketOpts::fanout`] keeps its given id. The `n - 1` new
//! sockets are opened in the namespace of the port's socket
//! ([`crate::netns::in_netns_of`]). Every receiving socket has its own
//! [`RxCounters`]; the port's `stats()` sums them, and the kernel ring drops
//! of every socket. A new socket joins the group only once it is bound
//! (the kernel requires a running socket), so frames arriving in that
//! instant may be seen twice; after `rx_queues` returns, each frame reaches
//! exactly one handle.
//!
//! # VLAN tags
//!
//! The kernel's receive path always strips the outer 802.1Q/802.1ad tag into
//! skb metadata (`skb_vlan_untag`), and the rings report it in
//! `hv1.tp_vlan_tci`/`tp_vlan_tpid` with `TP_STATUS_VLAN_VALID` (and
//! `TP_STATUS_VLAN_TPID_VALID`). We re-insert the tag after the MAC
//! addresses so the switch sees the frame as it was on the wire.
//!
//! # Own transmissions
//!
//! An AF_PACKET socket also sees frames sent out of its interface (by us or
//! by the local stack). `PACKET_IGNORE_OUTGOING` turns that off in the
//! kernel; frames whose `sll_pkttype` is `PACKET_OUTGOING` are skipped as
//! well, in case the option is not available.
//!
//! # Segmentation offload (`vnet_hdr`)
//!
//! With offloads on, the kernel hands AF_PACKET TCP frames larger than the
//! MTU (a local sender's TSO super-frames, a NIC's GRO) and frames whose
//! L4 checksum is left for the hardware (`CHECKSUM_PARTIAL`). Without
//! [`AfPacketOpts::vnet_hdr`] such frames are dropped or forwarded broken,
//! so offloads must be off on switch ports and on the hosts' veths
//! (`ethtool -K IFACE tx off rx off gro off`). With it, the socket uses
//! `PACKET_VNET_HDR` and [`crate::vnet`] keeps the pipeline unaware:
//!
//! - receive: the kernel writes a `virtio_net_hdr` just before each frame
//!   in the ring; a partial checksum is completed in software and a
//!   GRO super-frame gets a recomputed TCP checksum, so the frame handed up
//!   is a valid frame, only possibly larger than the MTU (up to
//!   [`VNET_MAX_FRAME`]: [`Port::max_frame_len`] says so, the caller sizes
//!   its buffers for it);
//! - transmit: each frame goes out behind a `virtio_net_hdr` that asks the
//!   kernel to segment a TCP frame larger than the MTU into MSS-sized
//!   segments (done by the device, or in software if it cannot), and is
//!   all zero for every other frame.
//!
//!
//! The block ring's layout and the transmit side are described in the
//! modules `block_ring` and `tx`.

mod block_ring;
mod frame_ring;
mod opts;
mod recvmmsg;
mod rx;
mod socket;
mod tx;

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use packet::PacketBuf;

use crate::netns::in_netns_of;
use crate::sys::{self, cvt};
use crate::{Port, PortRx, PortStats, PortTx, RxCounters};
use block_ring::{open_ring, ring_batch, RxRing};
use frame_ring::{open_frame_ring, FrameRing};
use recvmmsg::RxMsgs;
use socket::{
    ctx, join_fanout, setsockopt, take_kernel_drops, PACKET_AUXDATA, PACKET_COPY_THRESH,
    PACKET_FANOUT_FLAG_UNIQUEID, PACKET_VNET_HDR,
};
use tx::{open_tx_socket, set_sndbuf, TxSide};

pub use opts::{AfPacketOpts, RxMode, VNET_MAX_FRAME};
pub use tx::AfPacketTx;

const ETH_P_ALL: u16 = 0x0003;

/// One receiving socket: its ring and its counters. The port has one
/// until [`Port::rx_queues`] hands it (and the new fanout members) out as
/// [`AfPacketRx`] handles.
struct RxSocket {
    path: RxPath,
    counters: Arc<RxCounters>,
    // After the ring: unmapped before the socket is closed.
    fd: Arc<OwnedFd>,
}

// SAFETY: the ring mapping is owned by this value and only used through
// &mut self; nothing is shared with other threads except the kernel.
unsafe impl Send for RxSocket {}

/// How a socket receives (module comment).
enum RxPath {
    Msgs(RxMsgs),
    Ring(RxRing),
    /// The V2 ring, and the `recvmmsg` arrays for frames it copied to the
    /// socket queue.
    Frames(FrameRing, RxMsgs),
}

impl RxSocket {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> usize {
        let (n, bytes, dropped, errors) = match &mut self.path {
            RxPath::Msgs(m) => m.batch(self.fd.as_raw_fd(), bufs),
            RxPath::Ring(r) => ring_batch(r, bufs),
            RxPath::Frames(r, m) => r.batch(self.fd.as_raw_fd(), m, bufs),
        };
        self.counters.add(n as u64, bytes, dropped, errors);
        n
    }
}

/// A receive handle of an [`AfPacket`] port ([`Port::rx_queues`]): one
/// member socket of the port's fanout group.
pub struct AfPacketRx {
    rx: RxSocket,
}

impl PortRx for AfPacketRx {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        Ok(self.rx.rx_batch(bufs))
    }

    fn fd(&self) -> Option<RawFd> {
        Some(self.rx.fd.as_raw_fd())
    }

    fn take_error(&self) -> Option<io::Error> {
        sys::socket_error(self.rx.fd.as_raw_fd())
    }
}

/// A Linux interface opened with AF_PACKET; see the module comment.
pub struct AfPacket {
    name: String,
    ifindex: i32,
    hw_addr: [u8; 6],
    opts: AfPacketOpts,
    /// The port's own receive path; `None` once handed out by `rx_queues`.
    rx: Option<RxSocket>,
    tx: TxSide,
    /// Receive counters of every receiving socket (the port's own first,
    /// then the fanout members made by `rx_queues`); transmit counters are
    /// in `tx.counters`.
    rx_counters: Vec<Arc<RxCounters>>,
    /// The fanout members' sockets, for their kernel drop counts.
    member_fds: Vec<Arc<OwnedFd>>,
    /// The fanout group id, once the port's socket is in a group.
    fanout_id: Option<u16>,
    /// Kernel ring drops accumulated from PACKET_STATISTICS (which resets
    /// on read, hence a Cell so `stats(&self)` can fold them in).
    kernel_drops: Cell<u64>,
    // Declared last: the ring is unmapped before the socket is closed
    // (transmit clones may keep the socket open longer; they never touch
    // the ring).
    fd: Arc<OwnedFd>,
}

// SAFETY: the raw pointers (ring mapping, mmsghdr/iovec arrays) are owned by
// this value and only used through &mut self; nothing is shared with other
// threads except the kernel.
unsafe impl Send for AfPacket {}

/// What [`open_socket`] returns: a bound socket with its receive ring.
struct Opened {
    rx: RxSocket,
    ifindex: i32,
    hw_addr: [u8; 6],
    /// The bound address (our interface, ETH_P_ALL).
    sll: libc::sockaddr_ll,
}

/// Opens an AF_PACKET socket on interface `name` (in the calling thread's
/// namespace) receiving as `opts.rx` says, bound to the interface; joins
/// `opts.fanout` if set. Promiscuous mode is the caller's business.
fn open_socket(name: &str, opts: &AfPacketOpts) -> io::Result<Opened> {
    // Protocol 0: receive nothing until bound to the interface below,
    // so the ring never holds frames of other interfaces.
    // SAFETY: plain socket(2) call; the result is checked and owned.
    let raw = cvt(unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })
    .map_err(|e| ctx(e, "socket(AF_PACKET)", name))?;
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let s = fd.as_raw_fd();
    let ifindex = sys::ifindex(s, name).map_err(|e| ctx(e, "no such interface", name))?;
    let hw_addr = sys::hw_addr(s, name).map_err(|e| ctx(e, "SIOCGIFHWADDR", name))?;

    // Best effort (Linux >= 4.20); the ring walk also skips outgoing.
    let _ = setsockopt(s, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &1i32);
    set_sndbuf(s);
    // Must come before the ring is set up.
    if opts.vnet_hdr {
        setsockopt(s, libc::SOL_PACKET, PACKET_VNET_HDR, &1i32)
            .map_err(|e| ctx(e, "PACKET_VNET_HDR", name))?;
    }

    let socket_queue = |s: RawFd| -> io::Result<RxMsgs> {
        setsockopt(s, libc::SOL_PACKET, PACKET_AUXDATA, &1i32)
            .map_err(|e| ctx(e, "PACKET_AUXDATA", name))?;
        let size = opts.rcvbuf.min(i32::MAX as u32) as i32;
        if setsockopt(s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &size).is_err() {
            let _ = setsockopt(s, libc::SOL_SOCKET, libc::SO_RCVBUF, &size);
        }
        Ok(RxMsgs::new(opts.vnet_hdr))
    };
    let path = match opts.rx {
        RxMode::BlockRing => RxPath::Ring(open_ring(s, name, opts)?),
        RxMode::Recvmmsg => RxPath::Msgs(socket_queue(s)?),
        RxMode::FrameRing => {
            // Frames too big for a slot are queued on the socket whole.
            let msgs = socket_queue(s)?;
            setsockopt(s, libc::SOL_PACKET, PACKET_COPY_THRESH, &1i32)
                .map_err(|e| ctx(e, "PACKET_COPY_THRESH", name))?;
            RxPath::Frames(open_frame_ring(s, name, opts)?, msgs)
        }
    };
    let rx = RxSocket {
        path,
        counters: Arc::default(),
        fd: Arc::new(fd),
    };
    let s = rx.fd.as_raw_fd();

    // SAFETY: sockaddr_ll is plain old data; all-zero is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ETH_P_ALL.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: passes a live sockaddr_ll and its size.
    cvt(unsafe {
        libc::bind(
            s,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map_err(|e| ctx(e, "bind", name))?;
    if let Some(id) = opts.fanout {
        join_fanout(s, id, 0).map_err(|e| ctx(e, "PACKET_FANOUT", name))?;
    }
    Ok(Opened {
        rx,
        ifindex,
        hw_addr,
        sll,
    })
}

impl AfPacket {
    /// Opens interface `name` (in the caller thread's network namespace).
    pub fn open(name: &str, opts: &AfPacketOpts) -> io::Result<AfPacket> {
        let Opened {
            rx,
            ifindex,
            hw_addr,
            sll,
        } = open_socket(name, opts)?;
        let s = rx.fd.as_raw_fd();
        if opts.promisc {
            let mreq = libc::packet_mreq {
                mr_ifindex: ifindex,
                mr_type: libc::PACKET_MR_PROMISC as u16,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            setsockopt(s, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
                .map_err(|e| ctx(e, "PACKET_ADD_MEMBERSHIP promisc", name))?;
        }
        let mut dest = sll;
        dest.sll_protocol = 0;
        let fd = Arc::clone(&rx.fd);
        let tx = TxSide::new(
            Arc::clone(&fd),
            dest,
            Arc::default(),
            opts.vnet_hdr,
            Arc::from(name),
        );
        Ok(AfPacket {
            name: name.to_string(),
            ifindex,
            hw_addr,
            opts: opts.clone(),
            rx_counters: vec![Arc::clone(&rx.counters)],
            rx: Some(rx),
            tx,
            member_fds: Vec::new(),
            fanout_id: opts.fanout,
            kernel_drops: Cell::new(0),
            fd,
        })
    }

    /// The fanout group of the port's socket, joining a new one with a
    /// kernel-chosen id if it is in none yet.
    fn fanout_group(&mut self) -> io::Result<u16> {
        if let Some(id) = self.fanout_id {
            return Ok(id);
        }
        let id = join_fanout(self.fd.as_raw_fd(), 0, PACKET_FANOUT_FLAG_UNIQUEID)
            .map_err(|e| ctx(e, "PACKET_FANOUT (unique id)", &self.name))?;
        self.fanout_id = Some(id);
        Ok(id)
    }

    /// The interface index (in the namespace the port was opened in).
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// Reads and clears the socket's pending error (`SO_ERROR`). After the
    /// interface goes away the kernel sets `ENETDOWN` and the descriptor
    /// polls `POLLERR` until the error is read: a worker that sees
    /// `POLLERR` calls this (and usually closes the port).
    pub fn take_socket_error(&self) -> Option<io::Error> {
        sys::socket_error(self.fd.as_raw_fd())
    }
}

impl Port for AfPacket {
    fn name(&self) -> &str {
        &self.name
    }

    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        Ok(match &mut self.rx {
            Some(rx) => rx.rx_batch(bufs),
            None => 0,
        })
    }

    fn rx_queues(&mut self, n: usize) -> io::Result<Vec<Box<dyn PortRx>>> {
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: zero receive queues", self.name),
            ));
        }
        if self.rx.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: reception is already split", self.name),
            ));
        }
        if n > 1 {
            let id = self.fanout_group()?;
            let (name, mut opts) = (self.name.clone(), self.opts.clone());
            opts.fanout = Some(id);
            let members = in_netns_of(self.fd.as_raw_fd(), move || {
                (1..n)
                    .map(|_| open_socket(&name, &opts).map(|o| o.rx))
                    .collect::<io::Result<Vec<RxSocket>>>()
            })??;
            let own = self.rx.take().into_iter();
            let mut handles: Vec<Box<dyn PortRx>> = Vec::with_capacity(n);
            for rx in own.chain(members) {
                if !Arc::ptr_eq(&rx.fd, &self.fd) {
                    self.rx_counters.push(Arc::clone(&rx.counters));
                    self.member_fds.push(Arc::clone(&rx.fd));
                }
                handles.push(Box::new(AfPacketRx { rx }));
            }
            return Ok(handles);
        }
        let rx = self.rx.take().into_iter();
        Ok(rx
            .map(|rx| Box::new(AfPacketRx { rx }) as Box<dyn PortRx>)
            .collect())
    }

    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
    }

    fn take_error(&self) -> Option<io::Error> {
        self.take_socket_error()
    }

    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        Ok(Box::new(AfPacketTx {
            tx: self.tx.clone_handle(),
        }))
    }

    fn tx_clone_priority(&self, priority: u32) -> io::Result<Box<dyn PortTx>> {
        let vnet = self.opts.vnet_hdr;
        let name = self.name.clone();
        // The socket must live in the interface's namespace: `dest` names
        // the interface by its index there.
        let fd = in_netns_of(self.fd.as_raw_fd(), move || {
            open_tx_socket(&name, vnet, priority)
        })??;
        Ok(Box::new(AfPacketTx {
            tx: TxSide::new(
                Arc::new(fd),
                self.tx.dest,
                Arc::clone(&self.tx.counters),
                vnet,
                Arc::clone(&self.tx.name),
            ),
        }))
    }

    fn max_frame_len(&self) -> usize {
        if self.opts.vnet_hdr {
            VNET_MAX_FRAME
        } else {
            packet::buf::DEFAULT_CAPACITY
        }
    }

    fn fd(&self) -> Option<RawFd> {
        Some(self.fd.as_raw_fd())
    }

    fn hw_addr(&self) -> [u8; 6] {
        self.hw_addr
    }

    fn link_up(&self) -> bool {
        sys::link_up(self.fd.as_raw_fd(), &self.name)
    }

    fn mtu(&self) -> io::Result<u32> {
        sys::mtu(self.fd.as_raw_fd(), &self.name)
    }

    fn stats(&self) -> PortStats {
        let drops: u64 = std::iter::once(&self.fd)
            .chain(&self.member_fds)
            .map(|fd| take_kernel_drops(fd.as_raw_fd()))
            .sum();
        self.kernel_drops.set(self.kernel_drops.get() + drops);
        let mut s = PortStats::default();
        for c in &self.rx_counters {
            c.add_to(&mut s);
        }
        s.rx_dropped += self.kernel_drops.get();
        self.tx.counters.fill(&mut s);
        s
    }
}
