//! The TPACKET_V3 block ring ([`RxMode::BlockRing`](super::RxMode::BlockRing)):
//! its mapping, the walk over its blocks, and its setup.
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

use std::io;
use std::os::fd::RawFd;
use std::ptr;
use std::sync::atomic::{fence, AtomicU32, Ordering};

use packet::PacketBuf;

use super::opts::AfPacketOpts;
use super::rx::{complete_vnet, Frame, ETH_P_8021Q};
use super::socket::{ctx, map_ring, setsockopt};
use crate::vnet::{VnetHdr, VNET_HDR_LEN};

const TPACKET_V3: libc::c_int = 2;

/// The mmap'd TPACKET_V3 receive ring and our position in it; see the
/// module comment.
pub(super) struct RxRing {
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

    pub(super) fn read_u32(block: *const u8, off: usize) -> u32 {
        // SAFETY: callers check off + 4 <= block_size; unaligned read of
        // plain bytes the kernel has finished writing (Acquire on status).
        unsafe { ptr::read_unaligned(block.add(off) as *const u32) }
    }

    pub(super) fn read_u16(block: *const u8, off: usize) -> u16 {
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
    /// and completes the frame copied into `buf` (`afpacket` module
    /// comment); `shift`: bytes we inserted (a VLAN tag). False if the
    /// header is bad.
    pub(super) fn apply_vnet(
        block: *const u8,
        start: usize,
        buf: &mut PacketBuf,
        shift: usize,
    ) -> bool {
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

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: map/map_len are exactly what mmap returned; nothing
        // borrows the ring any more.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// One receive batch from the TPACKET_V3 ring; returns (frames, bytes,
/// dropped, errors).
pub(super) fn ring_batch(ring: &mut RxRing, bufs: &mut [PacketBuf]) -> (usize, u64, u64, u64) {
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

/// Sets up and maps the TPACKET_V3 receive ring of socket `s`.
pub(super) fn open_ring(s: RawFd, name: &str, opts: &AfPacketOpts) -> io::Result<RxRing> {
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
