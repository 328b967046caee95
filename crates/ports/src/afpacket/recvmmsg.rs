//! The `recvmmsg` receive path ([`RxMode::Recvmmsg`](super::RxMode::Recvmmsg),
//! and the frames a frame ring leaves on the socket queue): preallocated
//! message arrays, and the `PACKET_AUXDATA` control message that carries
//! a stripped VLAN tag.

use std::os::fd::RawFd;
use std::ptr;

use packet::PacketBuf;

use super::rx::{complete_vnet, Frame, ETH_P_8021Q};
use super::socket::PACKET_AUXDATA;
use crate::vnet::{VnetHdr, VNET_HDR_LEN};
use crate::BATCH;

/// Preallocated `recvmmsg` arrays (`afpacket` module comment). Message
/// `i` receives into `bufs[i]` (its `virtio_net_hdr` first, into
/// `hdrs[i]`, with `vnet`), its source address into `names[i]` and its
/// `PACKET_AUXDATA` into `cmsgs[i]`; pointers are refreshed on every call.
pub(super) struct RxMsgs {
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

impl RxMsgs {
    pub(super) fn new(vnet: bool) -> RxMsgs {
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
    pub(super) fn batch(&mut self, fd: RawFd, bufs: &mut [PacketBuf]) -> (usize, u64, u64, u64) {
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
