//! The TPACKET_V2 frame ring ([`RxMode::FrameRing`](super::RxMode::FrameRing),
//! the default; the `afpacket` module comment, "Receive", says why): its
//! slots, the walk over them, and its setup.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{fence, AtomicU32, Ordering};

use packet::PacketBuf;

use super::block_ring::RxRing;
use super::opts::AfPacketOpts;
use super::recvmmsg::RxMsgs;
use super::rx::{Frame, ETH_P_8021Q};
use super::socket::{ctx, map_ring, setsockopt};

const TPACKET_V2: libc::c_int = 1;

/// The mmap'd TPACKET_V2 receive ring (`afpacket` module comment):
/// `frame_nr` slots of `frame_size` bytes, `per_block` to a block, each
/// starting with its own `tpacket2_hdr` whose status word passes the slot
/// between the kernel and us:
///
/// ```text
///  slot: | tpacket2_hdr (32) | sockaddr_ll | [virtio_net_hdr] | frame ... |
///          tp_status, tp_len, tp_snaplen, tp_mac, .., tp_vlan_tci/tpid
/// ```
///
/// A frame that does not fit a slot arrives truncated with
/// `TP_STATUS_COPY`, and whole on the socket queue (`PACKET_COPY_THRESH`),
/// where we read it in the same order.
pub(super) struct FrameRing {
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

    pub(super) fn batch(
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
pub(super) fn open_frame_ring(s: RawFd, name: &str, opts: &AfPacketOpts) -> io::Result<FrameRing> {
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
