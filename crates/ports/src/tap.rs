//! A tap device as a port (the OpenFlow LOCAL port).
//!
//! `TapPort::create("oxlocal0")` opens `/dev/net/tun` with
//! `IFF_TAP | IFF_NO_PI` (whole Ethernet frames, no packet-info prefix),
//! which creates the interface for as long as the descriptor is open, and
//! sets it administratively up. Each `read` returns one frame the local
//! stack sent; each `write` delivers one frame to the local stack. The
//! descriptor is non-blocking, so a batch is a loop of reads until
//! `EAGAIN` or the batch is full. Frames are read straight into the
//! caller's `PacketBuf` (no intermediate copy).
//! The link is up while the interface is up: a tap has carrier as long as
//! our descriptor is attached. Transmit clones ([`Port::tx_clone`]) write
//! to the same descriptor (each `write` is one whole frame, so threads
//! need no lock) and share the port's [`TxCounters`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use packet::PacketBuf;

use crate::sys::{self, cvt};
use crate::{Port, PortStats, PortTx, TxCounters};

/// A tap interface; see the module comment.
pub struct TapPort {
    name: String,
    fd: Arc<OwnedFd>,
    /// A datagram socket for interface ioctls (flags, MTU, address).
    ctl: OwnedFd,
    hw_addr: [u8; 6],
    /// Receive counters (transmit ones are in `tx_counters`).
    stats: PortStats,
    tx_counters: Arc<TxCounters>,
}

/// A transmit clone of a [`TapPort`].
pub struct TapTx {
    fd: Arc<OwnedFd>,
    counters: Arc<TxCounters>,
}

impl PortTx for TapTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(write_frames(&self.fd, &self.counters, pkts))
    }
}

/// Writes each frame to the tap descriptor; see [`Port::tx_batch`].
fn write_frames(fd: &OwnedFd, c: &TxCounters, pkts: &[&[u8]]) -> usize {
    let mut sent = 0;
    for p in pkts {
        // SAFETY: writes from a live slice of the given length.
        let r = unsafe { libc::write(fd.as_raw_fd(), p.as_ptr().cast(), p.len()) };
        if r < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EIO) => c.dropped(1),
                _ => c.error(),
            }
            continue;
        }
        c.sent(p.len());
        sent += 1;
    }
    sent
}

impl TapPort {
    /// Creates (or attaches to) tap interface `name` and sets it up.
    pub fn create(name: &str) -> io::Result<TapPort> {
        let mut req = sys::ifreq(name)?;
        // SAFETY: open(2) of a constant NUL-terminated path; result checked.
        let raw = cvt(unsafe {
            libc::open(
                c"/dev/net/tun".as_ptr(),
                libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads/writes one ifreq, which `req` is.
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut req) })?;
        // SAFETY: plain socket(2) call; the result is checked and owned.
        let craw =
            cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: `craw` is a fresh descriptor nobody else owns.
        let ctl = unsafe { OwnedFd::from_raw_fd(craw) };
        sys::set_up(ctl.as_raw_fd(), name, true)?;
        let hw_addr = sys::hw_addr(ctl.as_raw_fd(), name)?;
        Ok(TapPort {
            name: name.to_string(),
            fd: Arc::new(fd),
            ctl,
            hw_addr,
            stats: PortStats::default(),
            tx_counters: Arc::default(),
        })
    }
}

impl Port for TapPort {
    fn name(&self) -> &str {
        &self.name
    }

    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let mut n = 0;
        while n < bufs.len() {
            let buf = &mut bufs[n];
            buf.clear();
            let room = buf.tailroom();
            let Ok(dst) = buf.push_back(room) else { break };
            // SAFETY: reads at most `room` bytes into the buffer's own
            // writable tail.
            let r = unsafe { libc::read(self.fd.as_raw_fd(), dst.as_mut_ptr().cast(), room) };
            if r < 0 {
                buf.clear();
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) => break,
                    Some(libc::EINTR) => continue,
                    _ => {
                        self.stats.rx_errors += 1;
                        return if n > 0 { Ok(n) } else { Err(e) };
                    }
                }
            }
            let len = r as usize;
            buf.truncate(len);
            if len < 14 || len == room {
                // Runt, or possibly cut short by the buffer size.
                self.stats.rx_dropped += 1;
                continue;
            }
            self.stats.rx_packets += 1;
            self.stats.rx_bytes += len as u64;
            n += 1;
        }
        Ok(n)
    }

    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(write_frames(&self.fd, &self.tx_counters, pkts))
    }

    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        Ok(Box::new(TapTx {
            fd: Arc::clone(&self.fd),
            counters: Arc::clone(&self.tx_counters),
        }))
    }

    fn fd(&self) -> Option<RawFd> {
        Some(self.fd.as_raw_fd())
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

    fn stats(&self) -> PortStats {
        let mut s = self.stats;
        self.tx_counters.fill(&mut s);
        s
    }
}
