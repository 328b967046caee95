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
//! - **Block ring** (TPACKET_V3, below): frames packed tightly into blocks,
//!   no system call either, but the kernel hands a block over only when it
//!   is full or its timeout expires, so a lone frame (a ping) waits up to
//!   `block_timeout_ms`: measured here one hop took ~0.9 ms median against
//!   ~7 µs with `recvmmsg`.
//! - **`recvmmsg`**: a batch is one system call straight into the caller's
//!   [`PacketBuf`]s (the kernel's copy is the only one), with
//!   `PACKET_AUXDATA` control messages for the stripped VLAN tag and the
//!   source address for the packet type (`RxMsgs`, arrays allocated
//!   once; frames a batch skips are compacted away by swapping buffers).
//!   Under load here it forwarded 1.5-2.5x less than the block ring.
//!
//! # The block ring
//!
//! `PACKET_RX_RING` with `TPACKET_V3` gives a ring of `block_nr` blocks of
//! `block_size` bytes each, shared with the kernel through one `mmap`:
//!
//! ```text
//!  block 0                     block 1                      ...
//!  | tpacket_block_desc | pkt | pkt | ... |  tpacket_block_desc | pkt | ...
//!    block_status, num_pkts,  each pkt = tpacket3_hdr, sockaddr_ll, frame
//!    offset_to_first_pkt      linked by tp_next_offset
//! ```
//!
//! The kernel fills a block with as many frames as fit, then hands it over
//! by setting `block_status = TP_STATUS_USER` (when the block is full or
//! when the block timeout `block_timeout_ms` expires, so a lone packet waits
//! at most that long). We walk the blocks in order, copy frames out, and
//! give a block back with `block_status = TP_STATUS_KERNEL` once all its
//! frames are copied. A receive batch may stop in the middle of a block;
//! [`RxRing`] remembers where. The socket polls readable when the next
//! block is ours.
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
//! # Transmit
//!
//! `sendmmsg` of up to [`BATCH`] frames per call, one iovec each, with a
//! destination `sockaddr_ll` whose protocol is 0 so the kernel takes the
//! protocol from the frame. The `mmsghdr`/`iovec` arrays are allocated once.
//! [`Port::tx_clone`] gives each worker its own handle on the same socket
//! (own arrays, shared counters) so transmit needs no lock; a second socket
//! per worker would also work but must be opened in the interface's network
//! namespace, which the switch's threads are not necessarily in.
//!
//! A `PACKET_TX_RING` (TPACKET_V2, one socket and ring per handle, one
//! `send` kick per batch) was tried (commit 0337c44, reverted): on veth it
//! gained nothing measurable, because the ring's frames reach the device
//! as zero-copy page fragments and veth must copy them (`skb_copy_ubufs`:
//! a page allocation and a copy per frame, 11 % of the forwarder's time)
//! before handing the skb to the peer, which cancels what the single
//! system call saves. It may pay off on a hardware NIC.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::Arc;

use packet::PacketBuf;

use crate::netns::in_netns_of;
use crate::sys::{self, cvt};
use crate::vnet::{self, VnetHdr, VNET_HDR_LEN};
use crate::{Port, PortRx, PortStats, PortTx, RxCounters, TxCounters, BATCH};

const ETH_P_ALL: u16 = 0x0003;
const ETH_P_8021Q: u16 = 0x8100;
const TPACKET_V2: libc::c_int = 1;
const TPACKET_V3: libc::c_int = 2;
/// `PACKET_COPY_THRESH` socket option.
const PACKET_COPY_THRESH: libc::c_int = 7;
/// `PACKET_FANOUT` flag: the kernel picks a free group id (Linux >= 4.5).
const PACKET_FANOUT_FLAG_UNIQUEID: i32 = 0x2000;

/// Options of [`AfPacket::open`].
#[derive(Debug, Clone)]
pub struct AfPacketOpts {
    /// Bytes per ring block (a multiple of the page size).
    pub block_size: u32,
    /// Number of ring blocks.
    pub block_nr: u32,
    /// Slot size of the frame ring (frames up to about `frame_size - 80`
    /// bytes fit a slot; larger ones take the socket queue). The block ring
    /// packs frames tightly and uses it only for the kernel's frame count
    /// check.
    pub frame_size: u32,
    /// Block ring only: milliseconds after which the kernel hands over a
    /// partly filled block.
    pub block_timeout_ms: u32,
    /// Put the interface in promiscuous mode (for as long as the socket
    /// lives) with `PACKET_ADD_MEMBERSHIP`.
    pub promisc: bool,
    /// Join `PACKET_FANOUT` group `id` in hash mode (flows spread over the
    /// sockets of the group, one per worker).
    pub fanout: Option<u16>,
    /// Segmentation offload aware mode (`PACKET_VNET_HDR`, module
    /// comment): frames up to [`VNET_MAX_FRAME`] bytes.
    pub vnet_hdr: bool,
    /// How the socket receives (module comment).
    pub rx: RxMode,
    /// Socket receive buffer in bytes without the ring (`SO_RCVBUFFORCE`,
    /// else `SO_RCVBUF` as far as the system allows).
    pub rcvbuf: u32,
}

/// How an [`AfPacket`] socket receives (module comment, "Receive").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxMode {
    /// TPACKET_V2 ring of `frame_size` slots; larger frames through the
    /// socket queue (`PACKET_COPY_THRESH`). No system call per batch, each
    /// frame at once.
    #[default]
    FrameRing,
    /// TPACKET_V3 ring of `block_size` blocks: frames packed tightly, but a
    /// block is handed over when full or after `block_timeout_ms`.
    BlockRing,
    /// `recvmmsg` into the caller's buffers: one system call per batch.
    Recvmmsg,
}

/// Largest frame a `vnet_hdr` port delivers: a 64 KiB IP packet behind an
/// Ethernet header with two VLAN tags, rounded up.
pub const VNET_MAX_FRAME: usize = 65_600;
/// `PACKET_VNET_HDR` socket option.
const PACKET_VNET_HDR: libc::c_int = 15;

impl Default for AfPacketOpts {
    fn default() -> Self {
        AfPacketOpts {
            block_size: 1 << 18,
            block_nr: 16,
            frame_size: 2048,
            block_timeout_ms: 1,
            promisc: true,
            fanout: None,
            vnet_hdr: false,
            rx: RxMode::FrameRing,
            rcvbuf: 8 << 20,
        }
    }
}

/// `struct tpacket_stats_v3` (read with `PACKET_STATISTICS`; reading
/// resets the kernel's counters).
#[repr(C)]
#[derive(Default)]
struct TpacketStatsV3 {
    tp_packets: u32,
    tp_drops: u32,
    tp_freeze_q_cnt: u32,
}

/// The mmap'd TPACKET_V3 receive ring and our position in it; see the
/// module comment.
struct RxRing {
    map: *mut u8,
    map_len: usize,
    block_size: usize,
    block_nr: usize,
    /// Block we are reading (or will read next).
    cur: usize,
    /// Whether block `cur` is ours and partly consumed.
    in_block: bool,
    /// Frames of block `cur` not yet copied.
    pkts_left: u32,
    /// Offset in block `cur` of the next frame's `tpacket3_hdr`.
    next_off: usize,
    /// A `virtio_net_hdr` precedes each frame (`PACKET_VNET_HDR`).
    vnet: bool,
}

/// What the ring walk found at one frame.
enum Frame {
    /// Copied into the buffer.
    Got(usize),
    /// Skipped (outgoing) or dropped (too big, truncated, corrupt).
    Skipped,
    Dropped,
    /// Frame with a bad `virtio_net_hdr` (counted as an error).
    Invalid,
    /// Ring structure broken: give up on the block.
    Corrupt,
}

impl RxRing {
    fn block(&self, i: usize) -> *mut u8 {
        // SAFETY: i < block_nr, so the offset is inside the mapping.
        unsafe { self.map.add(i * self.block_size) }
    }

    /// The status word of block `i`, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        let p = self.block(i);
        // SAFETY: a block starts with tpacket_block_desc { version: u32,
        // offset_to_priv: u32, hdr.bh1.block_status: u32 .. }: offset 8 is
        // the 4-aligned status word, which lives as long as the mapping
        // (i.e. &self). The kernel updates it concurrently, hence atomic.
        unsafe { &*(p.add(8) as *const AtomicU32) }
    }

    /// Hands block `cur` back to the kernel and moves to the next one.
    fn release(&mut self) {
        self.status(self.cur)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.cur = (self.cur + 1) % self.block_nr;
        self.in_block = false;
    }

    fn read_u32(block: *const u8, off: usize) -> u32 {
        // SAFETY: callers check off + 4 <= block_size; unaligned read of
        // plain bytes the kernel has finished writing (Acquire on status).
        unsafe { ptr::read_unaligned(block.add(off) as *const u32) }
    }

    fn read_u16(block: *const u8, off: usize) -> u16 {
        // SAFETY: as read_u32, with off + 2 <= block_size.
        unsafe { ptr::read_unaligned(block.add(off) as *const u16) }
    }

    /// Copies the next frame of block `cur` into `buf`.
    fn take_frame(&mut self, buf: &mut PacketBuf) -> Frame {
        // Layout of tpacket3_hdr (48 bytes), then sockaddr_ll at 48.
        const NEXT_OFFSET: usize = 0;
        const SNAPLEN: usize = 12;
        const LEN: usize = 16;
        const STATUS: usize = 20;
        const MAC: usize = 24;
        const VLAN_TCI: usize = 32;
        const VLAN_TPID: usize = 36;
        const SLL_PKTTYPE: usize = 48 + 10;
        let block = self.block(self.cur) as *const u8;
        let bs = self.block_size;
        let off = self.next_off;
        if off.checked_add(SLL_PKTTYPE + 1).is_none_or(|end| end > bs) {
            return Frame::Corrupt;
        }
        let next = Self::read_u32(block, off + NEXT_OFFSET) as usize;
        let snaplen = Self::read_u32(block, off + SNAPLEN) as usize;
        let len = Self::read_u32(block, off + LEN) as usize;
        let status = Self::read_u32(block, off + STATUS);
        let mac = Self::read_u16(block, off + MAC) as usize;
        self.next_off = off + next;
        self.pkts_left -= 1;
        let start = off + mac;
        if start.checked_add(snaplen).is_none_or(|end| end > bs) || snaplen < 14 {
            return Frame::Corrupt;
        }
        // SAFETY: off + SLL_PKTTYPE < block_size was checked above.
        let pkttype = unsafe { *block.add(off + SLL_PKTTYPE) };
        if pkttype == libc::PACKET_OUTGOING {
            return Frame::Skipped;
        }
        if snaplen < len {
            return Frame::Dropped;
        }
        // SAFETY: start..start+snaplen is inside block `cur` (checked), which
        // the kernel handed to us (status USER, read with Acquire) and does
        // not touch until we release it.
        let frame = unsafe { std::slice::from_raw_parts(block.add(start), snaplen) };
        if status & libc::TP_STATUS_VLAN_VALID != 0 {
            let tci = Self::read_u32(block, off + VLAN_TCI) as u16;
            let tpid = if status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                Self::read_u16(block, off + VLAN_TPID)
            } else {
                ETH_P_8021Q
            };
            buf.clear();
            let Ok(dst) = buf.push_back(snaplen + 4) else {
                return Frame::Dropped;
            };
            dst[..12].copy_from_slice(&frame[..12]);
            dst[12..14].copy_from_slice(&tpid.to_be_bytes());
            dst[14..16].copy_from_slice(&tci.to_be_bytes());
            dst[16..].copy_from_slice(&frame[12..]);
            if self.vnet && !Self::apply_vnet(block, start, buf, 4) {
                return Frame::Invalid;
            }
            Frame::Got(snaplen + 4)
        } else if buf.set(frame).is_ok() {
            if self.vnet && !Self::apply_vnet(block, start, buf, 0) {
                return Frame::Invalid;
            }
            Frame::Got(snaplen)
        } else {
            Frame::Dropped
        }
    }

    /// Reads the `virtio_net_hdr` before the frame at `start` of `block`
    /// and completes the frame copied into `buf` (module comment);
    /// `shift`: bytes we inserted (a VLAN tag). False if the header is bad.
    fn apply_vnet(block: *const u8, start: usize, buf: &mut PacketBuf, shift: usize) -> bool {
        // The kernel puts the header right before the MAC header, after the
        // tpacket3_hdr and sockaddr_ll, so start >= VNET_HDR_LEN.
        let Some(at) = start.checked_sub(VNET_HDR_LEN) else {
            return false;
        };
        let mut raw = [0u8; VNET_HDR_LEN];
        // SAFETY: at..start lies inside the block (before the frame, which
        // was bounds-checked), in memory the kernel handed to us.
        unsafe { ptr::copy_nonoverlapping(block.add(at), raw.as_mut_ptr(), VNET_HDR_LEN) };
        complete_vnet(&VnetHdr::parse(&raw), buf, shift)
    }
}

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

/// Preallocated `recvmmsg` arrays (module comment). Message `i` receives
/// into `bufs[i]` (its `virtio_net_hdr` first, into `hdrs[i]`, with
/// `vnet`), its source address into `names[i]` and its `PACKET_AUXDATA`
/// into `cmsgs[i]`; pointers are refreshed on every call.
struct RxMsgs {
    msgs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    names: Vec<libc::sockaddr_ll>,
    /// Control buffers, 8-byte aligned, room for one `tpacket_auxdata`.
    cmsgs: Vec<[u64; 8]>,
    hdrs: Vec<[u8; VNET_HDR_LEN]>,
    vnet: bool,
}

/// `struct tpacket_auxdata` (`PACKET_AUXDATA` control message).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

const PACKET_AUXDATA: libc::c_int = 8;

impl RxMsgs {
    fn new(vnet: bool) -> RxMsgs {
        RxMsgs {
            // SAFETY: mmsghdr, iovec and sockaddr_ll are plain old data;
            // all-zero is valid.
            msgs: vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; BATCH],
            // SAFETY: as above.
            iovs: vec![unsafe { std::mem::zeroed::<libc::iovec>() }; 2 * BATCH],
            // SAFETY: as above.
            names: vec![unsafe { std::mem::zeroed::<libc::sockaddr_ll>() }; BATCH],
            cmsgs: vec![[0; 8]; BATCH],
            hdrs: vec![[0; VNET_HDR_LEN]; BATCH],
            vnet,
        }
    }

    /// One `recvmmsg` into `bufs`; returns (frames, bytes, dropped,
    /// errors) with the frames in `bufs[..frames]`.
    fn batch(&mut self, fd: RawFd, bufs: &mut [PacketBuf]) -> (usize, u64, u64, u64) {
        let k = bufs.len().min(BATCH);
        let per = if self.vnet { 2 } else { 1 };
        for (i, buf) in bufs[..k].iter_mut().enumerate() {
            buf.clear();
            let room = buf.tailroom();
            let frame = match buf.push_back(room) {
                Ok(dst) => libc::iovec {
                    iov_base: dst.as_mut_ptr().cast(),
                    iov_len: dst.len(),
                },
                Err(_) => libc::iovec {
                    iov_base: ptr::null_mut(),
                    iov_len: 0,
                },
            };
            if self.vnet {
                self.iovs[2 * i] = libc::iovec {
                    iov_base: self.hdrs[i].as_mut_ptr().cast(),
                    iov_len: VNET_HDR_LEN,
                };
                self.iovs[2 * i + 1] = frame;
            } else {
                self.iovs[i] = frame;
            }
            let h = &mut self.msgs[i].msg_hdr;
            h.msg_name = (&mut self.names[i] as *mut libc::sockaddr_ll).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[per * i];
            h.msg_iovlen = per;
            h.msg_control = self.cmsgs[i].as_mut_ptr().cast();
            h.msg_controllen = std::mem::size_of::<[u64; 8]>();
            h.msg_flags = 0;
            self.msgs[i].msg_len = 0;
        }
        // SAFETY: msgs[..k] point at iovecs into `bufs[..k]` (exclusively
        // borrowed for this call), at names/cmsgs/hdrs of self; all live
        // for the duration of the call.
        let r = unsafe {
            libc::recvmmsg(
                fd,
                self.msgs.as_mut_ptr(),
                k as libc::c_uint,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                ptr::null_mut(),
            )
        };
        let got = if r > 0 { r as usize } else { 0 };
        let (mut n, mut bytes, mut dropped, mut errors) = (0usize, 0u64, 0u64, 0u64);
        for i in 0..got {
            match self.finish(i, &mut bufs[i]) {
                Frame::Got(len) => {
                    bytes += len as u64;
                    bufs.swap(n, i);
                    n += 1;
                }
                Frame::Skipped => {}
                Frame::Dropped => dropped += 1,
                Frame::Invalid | Frame::Corrupt => errors += 1,
            }
        }
        // Leave no buffer claiming bytes it did not receive, and no
        // pointer into the caller's buffers.
        for buf in &mut bufs[n..k] {
            buf.clear();
        }
        for iov in &mut self.iovs[..per * k] {
            iov.iov_base = ptr::null_mut();
        }
        (n, bytes, dropped, errors)
    }

    /// Turns message `i`, received into `buf`, into a frame.
    fn finish(&self, i: usize, buf: &mut PacketBuf) -> Frame {
        let m = &self.msgs[i];
        if self.names[i].sll_pkttype == libc::PACKET_OUTGOING {
            return Frame::Skipped;
        }
        if m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
            return Frame::Dropped;
        }
        let hdr = if self.vnet { VNET_HDR_LEN } else { 0 };
        let len = (m.msg_len as usize).saturating_sub(hdr);
        if len < 14 || len > buf.len() {
            return Frame::Corrupt;
        }
        buf.truncate(len);
        let mut shift = 0;
        if let Some(aux) = self.auxdata(i) {
            if aux.tp_status & libc::TP_STATUS_VLAN_VALID != 0 {
                let tpid = if aux.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                    aux.tp_vlan_tpid
                } else {
                    ETH_P_8021Q
                };
                let Ok(tag) = buf.insert(12, 4) else {
                    return Frame::Dropped;
                };
                tag[..2].copy_from_slice(&tpid.to_be_bytes());
                tag[2..].copy_from_slice(&aux.tp_vlan_tci.to_be_bytes());
                shift = 4;
            }
        }
        if self.vnet && !complete_vnet(&VnetHdr::parse(&self.hdrs[i]), buf, shift) {
            return Frame::Invalid;
        }
        Frame::Got(buf.len())
    }

    /// The `PACKET_AUXDATA` control message of message `i`, if any.
    fn auxdata(&self, i: usize) -> Option<TpacketAuxdata> {
        let h = &self.msgs[i].msg_hdr;
        // SAFETY: `h` describes the control buffer cmsgs[i] the kernel just
        // filled (msg_controllen updated to what it wrote); the CMSG_*
        // helpers stay inside it.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_PACKET
                    && (*c).cmsg_type == PACKET_AUXDATA
                    && (*c).cmsg_len as usize
                        >= libc::CMSG_LEN(std::mem::size_of::<TpacketAuxdata>() as u32) as usize
                {
                    let d = libc::CMSG_DATA(c) as *const TpacketAuxdata;
                    return Some(ptr::read_unaligned(d));
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }
}

/// Completes a received frame from its `virtio_net_hdr` (module comment);
/// `shift`: bytes inserted before the L4 header since (a VLAN tag). False
/// if the header is bad.
fn complete_vnet(h: &VnetHdr, buf: &mut PacketBuf, shift: usize) -> bool {
    if h.flags & vnet::F_NEEDS_CSUM != 0 {
        vnet::complete_rx(buf.data_mut(), h, shift)
    } else {
        if h.gso_type != vnet::GSO_NONE {
            vnet::fix_tcp_checksum(buf.data_mut());
        }
        true
    }
}

/// The mmap'd TPACKET_V2 receive ring (module comment): `frame_nr` slots of
/// `frame_size` bytes, `per_block` to a block, each starting with its own
/// `tpacket2_hdr` whose status word passes the slot between the kernel and
/// us:
///
/// ```text
///  slot: | tpacket2_hdr (32) | sockaddr_ll | [virtio_net_hdr] | frame ... |
///          tp_status, tp_len, tp_snaplen, tp_mac, .., tp_vlan_tci/tpid
/// ```
///
/// A frame that does not fit a slot arrives truncated with
/// `TP_STATUS_COPY`, and whole on the socket queue (`PACKET_COPY_THRESH`),
/// where we read it in the same order.
struct FrameRing {
    map: *mut u8,
    map_len: usize,
    block_size: usize,
    frame_size: usize,
    per_block: usize,
    frame_nr: usize,
    /// Slot we read next.
    cur: usize,
    vnet: bool,
}

impl FrameRing {
    fn slot(&self, i: usize) -> *mut u8 {
        let off = (i / self.per_block) * self.block_size + (i % self.per_block) * self.frame_size;
        // SAFETY: i < frame_nr, so the slot lies inside the mapping.
        unsafe { self.map.add(off) }
    }

    /// The status word of slot `i`, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: a slot starts with the 4-aligned tp_status word, which
        // lives as long as the mapping (&self); the kernel writes it
        // concurrently, hence atomic.
        unsafe { &*(self.slot(i) as *const AtomicU32) }
    }

    fn batch(
        &mut self,
        fd: RawFd,
        msgs: &mut RxMsgs,
        bufs: &mut [PacketBuf],
    ) -> (usize, u64, u64, u64) {
        let (mut bytes, mut dropped, mut errors) = (0u64, 0u64, 0u64);
        let mut n = 0;
        while n < bufs.len() {
            let st = self.status(self.cur).load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            let got = if st & libc::TP_STATUS_COPY != 0 {
                // The whole frame waits on the socket queue.
                let (k, b, d, e) = msgs.batch(fd, &mut bufs[n..n + 1]);
                dropped += d;
                errors += e;
                (k == 1).then_some(b as usize)
            } else {
                match self.take(st, &mut bufs[n]) {
                    Frame::Got(len) => Some(len),
                    Frame::Skipped => None,
                    Frame::Dropped => {
                        dropped += 1;
                        None
                    }
                    Frame::Invalid | Frame::Corrupt => {
                        errors += 1;
                        None
                    }
                }
            };
            self.status(self.cur)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.cur = (self.cur + 1) % self.frame_nr;
            if let Some(len) = got {
                bytes += len as u64;
                n += 1;
            }
        }
        (n, bytes, dropped, errors)
    }

    /// Copies the frame of slot `cur` (status `st`) into `buf`.
    fn take(&self, st: u32, buf: &mut PacketBuf) -> Frame {
        // tpacket2_hdr: tp_len@4, tp_snaplen@8, tp_mac@12 (u16),
        // tp_vlan_tci@24, tp_vlan_tpid@26; sockaddr_ll at 32.
        const SLL_PKTTYPE: usize = 32 + 10;
        let slot = self.slot(self.cur) as *const u8;
        let fs = self.frame_size;
        let len = RxRing::read_u32(slot, 4) as usize;
        let snaplen = RxRing::read_u32(slot, 8) as usize;
        let mac = RxRing::read_u16(slot, 12) as usize;
        if mac.checked_add(snaplen).is_none_or(|end| end > fs) || snaplen < 14 || mac <= SLL_PKTTYPE
        {
            return Frame::Corrupt;
        }
        // SAFETY: SLL_PKTTYPE < mac <= frame_size: inside the slot.
        if unsafe { *slot.add(SLL_PKTTYPE) } == libc::PACKET_OUTGOING {
            return Frame::Skipped;
        }
        if snaplen < len {
            return Frame::Dropped;
        }
        // SAFETY: mac..mac+snaplen is inside the slot (checked), which the
        // kernel handed to us (status USER, read with Acquire) and does not
        // touch until we give it back.
        let frame = unsafe { std::slice::from_raw_parts(slot.add(mac), snaplen) };
        let mut shift = 0;
        if st & libc::TP_STATUS_VLAN_VALID != 0 {
            let tci = RxRing::read_u16(slot, 24);
            let tpid = if st & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                RxRing::read_u16(slot, 26)
            } else {
                ETH_P_8021Q
            };
            buf.clear();
            let Ok(dst) = buf.push_back(snaplen + 4) else {
                return Frame::Dropped;
            };
            dst[..12].copy_from_slice(&frame[..12]);
            dst[12..14].copy_from_slice(&tpid.to_be_bytes());
            dst[14..16].copy_from_slice(&tci.to_be_bytes());
            dst[16..].copy_from_slice(&frame[12..]);
            shift = 4;
        } else if buf.set(frame).is_err() {
            return Frame::Dropped;
        }
        if self.vnet && !RxRing::apply_vnet(slot, mac, buf, shift) {
            return Frame::Invalid;
        }
        Frame::Got(buf.len())
    }
}

impl Drop for FrameRing {
    fn drop(&mut self) {
        // SAFETY: map/map_len are exactly what mmap returned; nothing
        // borrows the ring any more.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// Sets up and maps the TPACKET_V2 receive ring of socket `s`.
fn open_frame_ring(s: RawFd, name: &str, opts: &AfPacketOpts) -> io::Result<FrameRing> {
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_VERSION, &TPACKET_V2)
        .map_err(|e| ctx(e, "PACKET_VERSION", name))?;
    let frame_size = opts.frame_size.max(256);
    let per_block = (opts.block_size / frame_size).max(1);
    let req = libc::tpacket_req {
        tp_block_size: opts.block_size,
        tp_block_nr: opts.block_nr,
        tp_frame_size: frame_size,
        tp_frame_nr: per_block * opts.block_nr,
    };
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
        .map_err(|e| ctx(e, "PACKET_RX_RING", name))?;
    let map_len = opts.block_size as usize * opts.block_nr as usize;
    let map = map_ring(s, map_len, name)?;
    Ok(FrameRing {
        map: map.cast(),
        map_len,
        block_size: opts.block_size as usize,
        frame_size: frame_size as usize,
        per_block: per_block as usize,
        frame_nr: (per_block * opts.block_nr) as usize,
        cur: 0,
        vnet: opts.vnet_hdr,
    })
}

/// One receive batch from the TPACKET_V3 ring; returns (frames, bytes,
/// dropped, errors).
fn ring_batch(ring: &mut RxRing, bufs: &mut [PacketBuf]) -> (usize, u64, u64, u64) {
    let (mut bytes, mut dropped, mut errors) = (0u64, 0u64, 0u64);
    let mut n = 0;
    while n < bufs.len() {
        if !ring.in_block {
            let st = ring.status(ring.cur).load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                break;
            }
            fence(Ordering::Acquire);
            let block = ring.block(ring.cur) as *const u8;
            // tpacket_hdr_v1: block_status@8, num_pkts@12,
            // offset_to_first_pkt@16.
            ring.pkts_left = RxRing::read_u32(block, 12);
            ring.next_off = RxRing::read_u32(block, 16) as usize;
            ring.in_block = true;
        }
        if ring.pkts_left == 0 {
            ring.release();
            continue;
        }
        match ring.take_frame(&mut bufs[n]) {
            Frame::Got(len) => {
                bytes += len as u64;
                n += 1;
            }
            Frame::Skipped => {}
            Frame::Dropped => dropped += 1,
            Frame::Invalid => errors += 1,
            Frame::Corrupt => {
                errors += 1;
                ring.release();
            }
        }
    }
    // Give a fully read block back now rather than on the next call.
    if ring.in_block && ring.pkts_left == 0 {
        ring.release();
    }
    (n, bytes, dropped, errors)
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

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: map/map_len are exactly what mmap returned; nothing
        // borrows the ring any more.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// The transmit side of an AF_PACKET socket: the (shared) socket, the
/// destination and this handle's own `sendmmsg` arrays. The port has one
/// and each [`AfPacketTx`] clone has its own, so threads transmit on the
/// same socket concurrently without a lock: `sendmmsg` without a TX ring
/// (`packet_snd`) takes no socket lock, and every handle uses only its own
/// arrays.
struct TxSide {
    fd: Arc<OwnedFd>,
    /// Destination of every transmitted frame (our interface, protocol 0).
    dest: libc::sockaddr_ll,
    /// Preallocated `sendmmsg` arrays; pointers are refreshed each call.
    /// With `vnet`, message `i` has two iovecs, `2i` (its header in
    /// `hdrs[i]`) and `2i + 1` (the frame); else one, `i`.
    msgs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<[u8; VNET_HDR_LEN]>,
    counters: Arc<TxCounters>,
    /// The socket has `PACKET_VNET_HDR` (module comment).
    vnet: bool,
    /// Interface name and last known MTU, for segmentation requests.
    name: Arc<str>,
    mtu: u32,
}

// SAFETY: the raw pointers in msgs/iovs are only set during `send_chunk`
// (&mut self) and cleared before it returns; nothing else is shared.
unsafe impl Send for TxSide {}

/// A transmit clone of an [`AfPacket`] port ([`Port::tx_clone`]).
pub struct AfPacketTx {
    tx: TxSide,
}

impl PortTx for AfPacketTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
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

/// Joins socket `fd` to fanout group `id` in hash mode (`extra` flags
/// added), and returns the group id the kernel reports (the allocated one
/// with `PACKET_FANOUT_FLAG_UNIQUEID`).
fn join_fanout(fd: RawFd, id: u16, extra: i32) -> io::Result<u16> {
    let arg = i32::from(id) | ((libc::PACKET_FANOUT_HASH as i32 | extra) << 16);
    setsockopt(fd, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg)?;
    let mut val: u32 = 0;
    let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
    // SAFETY: passes a live u32 and its size as out-params.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_FANOUT,
            (&mut val as *mut u32).cast(),
            &mut len,
        )
    })?;
    Ok((val & 0xffff) as u16)
}

/// The kernel's ring drop count of socket `fd` since the last call
/// (`PACKET_STATISTICS` resets on read); 0 if it cannot be read.
fn take_kernel_drops(fd: RawFd) -> u64 {
    let mut st = TpacketStatsV3::default();
    let mut len = std::mem::size_of::<TpacketStatsV3>() as libc::socklen_t;
    // SAFETY: passes a live TpacketStatsV3 and its size as out-params.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut TpacketStatsV3).cast(),
            &mut len,
        )
    };
    if r == 0 {
        u64::from(st.tp_drops)
    } else {
        0
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, val: &T) -> io::Result<()> {
    // SAFETY: passes a pointer to a live T and its exact size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (val as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Maps the receive ring of `len` bytes the kernel just allocated for
/// socket `s` (after PACKET_RX_RING).
fn map_ring(s: RawFd, len: usize, name: &str) -> io::Result<*mut libc::c_void> {
    // SAFETY: maps the ring the kernel allocated for this socket; the
    // result is checked against MAP_FAILED before anyone uses it.
    let map = unsafe {
        libc::mmap(
            ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_POPULATE,
            s,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(ctx(io::Error::last_os_error(), "mmap ring", name));
    }
    Ok(map)
}

fn ctx(e: io::Error, what: &str, name: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {what}: {e}"))
}

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

/// Send buffer of every transmitting socket, in bytes (`SO_SNDBUFFORCE`,
/// else `SO_SNDBUF` as far as `net.core.wmem_max` allows). A frame sent on
/// an AF_PACKET socket stays charged to the socket until the device has
/// taken it from its qdisc, and a send that finds the buffer full fails
/// (`EAGAIN`/`ENOBUFS`: the frames are dropped and counted, the workers
/// never wait). With the system default (`net.core.wmem_default`, about
/// 208 KB, some 90 full-size frames) a port shaped by a qdisc (htb, tbf:
/// Mininet's links, `docs/queues.md`) or simply busy dropped frames at the
/// socket while its qdisc still had room; 8 MiB holds a default qdisc's
/// 1,000 full-size frames several times over, so the qdisc's own limit
/// decides, as it does for a switch that blocks in `send`.
const TX_SNDBUF: i32 = 8 << 20;

fn set_sndbuf(s: RawFd) {
    if setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &TX_SNDBUF).is_err() {
        let _ = setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUF, &TX_SNDBUF);
    }
}

/// A transmit-only AF_PACKET socket (protocol 0, never bound: it receives
/// nothing, and each send names the interface) whose frames carry the
/// packet priority `priority` (`SO_PRIORITY`, which a classful qdisc
/// classifies on).
fn open_tx_socket(name: &str, vnet: bool, priority: u32) -> io::Result<OwnedFd> {
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
    set_sndbuf(s);
    if vnet {
        setsockopt(s, libc::SOL_PACKET, PACKET_VNET_HDR, &1i32)
            .map_err(|e| ctx(e, "PACKET_VNET_HDR", name))?;
    }
    let prio = i32::try_from(priority)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "priority above i32::MAX"))?;
    setsockopt(s, libc::SOL_SOCKET, libc::SO_PRIORITY, &prio)
        .map_err(|e| ctx(e, "SO_PRIORITY", name))?;
    Ok(fd)
}

/// Sets up and maps the TPACKET_V3 receive ring of socket `s`.
fn open_ring(s: RawFd, name: &str, opts: &AfPacketOpts) -> io::Result<RxRing> {
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_VERSION, &TPACKET_V3)
        .map_err(|e| ctx(e, "PACKET_VERSION", name))?;
    let req = libc::tpacket_req3 {
        tp_block_size: opts.block_size,
        tp_block_nr: opts.block_nr,
        tp_frame_size: opts.frame_size,
        tp_frame_nr: (opts.block_size / opts.frame_size.max(1)) * opts.block_nr,
        tp_retire_blk_tov: opts.block_timeout_ms,
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
        .map_err(|e| ctx(e, "PACKET_RX_RING", name))?;
    let map_len = opts.block_size as usize * opts.block_nr as usize;
    let map = map_ring(s, map_len, name)?;
    let ring = RxRing {
        map: map.cast(),
        map_len,
        block_size: opts.block_size as usize,
        block_nr: opts.block_nr as usize,
        cur: 0,
        in_block: false,
        pkts_left: 0,
        next_off: 0,
        vnet: opts.vnet_hdr,
    };
    Ok(ring)
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

impl TxSide {
    fn new(
        fd: Arc<OwnedFd>,
        dest: libc::sockaddr_ll,
        counters: Arc<TxCounters>,
        vnet: bool,
        name: Arc<str>,
    ) -> TxSide {
        let mtu = sys::mtu(fd.as_raw_fd(), &name).unwrap_or(1500);
        TxSide {
            fd,
            dest,
            // SAFETY: mmsghdr and iovec are plain old data; all-zero is valid.
            msgs: vec![unsafe { std::mem::zeroed::<libc::mmsghdr>() }; BATCH],
            // SAFETY: as above.
            iovs: vec![unsafe { std::mem::zeroed::<libc::iovec>() }; 2 * BATCH],
            hdrs: vec![[0; VNET_HDR_LEN]; BATCH],
            counters,
            vnet,
            name,
            mtu,
        }
    }

    /// Another handle on the same socket (own arrays, shared counters).
    fn clone_handle(&self) -> TxSide {
        TxSide::new(
            Arc::clone(&self.fd),
            self.dest,
            Arc::clone(&self.counters),
            self.vnet,
            Arc::clone(&self.name),
        )
    }

    fn send(&mut self, pkts: &[&[u8]]) -> usize {
        pkts.chunks(BATCH).map(|c| self.send_chunk(c)).sum()
    }

    /// Sends one chunk of at most BATCH frames; returns frames accepted.
    fn send_chunk(&mut self, pkts: &[&[u8]]) -> usize {
        let n = pkts.len();
        let per = if self.vnet { 2 } else { 1 };
        for (i, p) in pkts.iter().enumerate() {
            let frame = libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            };
            if self.vnet {
                // Frames over the MTU we knew: re-read it (cheap next to a
                // 64 KiB frame) so a changed MTU is honoured.
                if p.len() > self.mtu as usize + 14 {
                    self.mtu = sys::mtu(self.fd.as_raw_fd(), &self.name).unwrap_or(self.mtu);
                }
                self.hdrs[i] = vnet::tx_header(p, self.mtu).to_bytes();
                self.iovs[2 * i] = libc::iovec {
                    iov_base: self.hdrs[i].as_mut_ptr().cast(),
                    iov_len: VNET_HDR_LEN,
                };
                self.iovs[2 * i + 1] = frame;
            } else {
                self.iovs[i] = frame;
            }
        }
        let dest = &self.dest as *const libc::sockaddr_ll as *mut libc::c_void;
        for i in 0..n {
            let h = &mut self.msgs[i].msg_hdr;
            h.msg_name = dest;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            h.msg_iov = &mut self.iovs[per * i];
            h.msg_iovlen = per;
            h.msg_control = ptr::null_mut();
            h.msg_controllen = 0;
            h.msg_flags = 0;
        }
        let mut done = 0;
        // After the interface went down and up again, the socket still
        // holds the ENETDOWN error of the down event, and the next send
        // reports it once (the frame is not sent). Retrying once tells that
        // stale error apart from a device that is down now.
        let mut retried = false;
        while done < n {
            // SAFETY: msgs[done..n] point at iovecs that point into `pkts`
            // and at `self.dest`, all alive for the duration of the call.
            let r = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    self.msgs.as_mut_ptr().add(done),
                    (n - done) as libc::c_uint,
                    libc::MSG_DONTWAIT,
                )
            };
            if r > 0 {
                for p in &pkts[done..done + r as usize] {
                    self.counters.sent(p.len());
                }
                done += r as usize;
                continue;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) => {
                    // Device queue full: drop the rest of the chunk.
                    self.counters.dropped((n - done) as u64);
                    break;
                }
                Some(libc::ENETDOWN) if !retried => retried = true,
                Some(libc::ENETDOWN) | Some(libc::ENXIO) => {
                    self.counters.dropped((n - done) as u64);
                    break;
                }
                _ => {
                    // This frame was refused (e.g. EMSGSIZE): skip it.
                    self.counters.error();
                    done += 1;
                }
            }
        }
        // Do not keep dangling pointers into the caller's frames.
        for iov in &mut self.iovs[..per * n] {
            iov.iov_base = ptr::null_mut();
        }
        done
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
