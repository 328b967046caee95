//! The transmit side of an AF_PACKET port: `sendmmsg` handles
//! ([`TxSide`], [`AfPacketTx`]) and transmit-only sockets.
//!
//! # Transmit
//!
//! `sendmmsg` of up to [`BATCH`] frames per call, one iovec each, with a
//! destination `sockaddr_ll` whose protocol is 0 so the kernel takes the
//! protocol from the frame. The `mmsghdr`/`iovec` arrays are allocated once.
//! [`Port::tx_clone`](crate::Port::tx_clone) gives each worker its own handle on the same socket
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

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;
use std::sync::Arc;

use super::socket::{ctx, setsockopt, PACKET_VNET_HDR};
use crate::sys::{self, cvt};
use crate::vnet::{self, VNET_HDR_LEN};
use crate::{PortTx, TxCounters, BATCH};

/// The transmit side of an AF_PACKET socket: the (shared) socket, the
/// destination and this handle's own `sendmmsg` arrays. The port has one
/// and each [`AfPacketTx`] clone has its own, so threads transmit on the
/// same socket concurrently without a lock: `sendmmsg` without a TX ring
/// (`packet_snd`) takes no socket lock, and every handle uses only its own
/// arrays.
pub(super) struct TxSide {
    fd: Arc<OwnedFd>,
    /// Destination of every transmitted frame (our interface, protocol 0).
    pub(super) dest: libc::sockaddr_ll,
    /// Preallocated `sendmmsg` arrays; pointers are refreshed each call.
    /// With `vnet`, message `i` has two iovecs, `2i` (its header in
    /// `hdrs[i]`) and `2i + 1` (the frame); else one, `i`.
    msgs: Vec<libc::mmsghdr>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<[u8; VNET_HDR_LEN]>,
    pub(super) counters: Arc<TxCounters>,
    /// The socket has `PACKET_VNET_HDR` (`afpacket` module comment).
    vnet: bool,
    /// Interface name and last known MTU, for segmentation requests.
    pub(super) name: Arc<str>,
    mtu: u32,
}

// SAFETY: the raw pointers in msgs/iovs are only set during `send_chunk`
// (&mut self) and cleared before it returns; nothing else is shared.
unsafe impl Send for TxSide {}

/// A transmit clone of an [`AfPacket`](super::AfPacket) port
/// ([`Port::tx_clone`](crate::Port::tx_clone)).
pub struct AfPacketTx {
    pub(super) tx: TxSide,
}

impl PortTx for AfPacketTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
    }
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

pub(super) fn set_sndbuf(s: RawFd) {
    if setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &TX_SNDBUF).is_err() {
        let _ = setsockopt(s, libc::SOL_SOCKET, libc::SO_SNDBUF, &TX_SNDBUF);
    }
}

/// A transmit-only AF_PACKET socket (protocol 0, never bound: it receives
/// nothing, and each send names the interface) whose frames carry the
/// packet priority `priority` (`SO_PRIORITY`, which a classful qdisc
/// classifies on).
pub(super) fn open_tx_socket(name: &str, vnet: bool, priority: u32) -> io::Result<OwnedFd> {
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

impl TxSide {
    pub(super) fn new(
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
    pub(super) fn clone_handle(&self) -> TxSide {
        TxSide::new(
            Arc::clone(&self.fd),
            self.dest,
            Arc::clone(&self.counters),
            self.vnet,
            Arc::clone(&self.name),
        )
    }

    pub(super) fn send(&mut self, pkts: &[&[u8]]) -> usize {
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
