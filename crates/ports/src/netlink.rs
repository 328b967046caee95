//! Link state from rtnetlink.
//!
//! A [`LinkMonitor`] is a non-blocking `NETLINK_ROUTE` socket subscribed to
//! `RTMGRP_LINK`: the kernel sends it an `RTM_NEWLINK` message whenever an
//! interface changes (flags, carrier, name, ...) and `RTM_DELLINK` when one
//! goes away. The switch polls [`LinkMonitor::fd`] and calls
//! [`LinkMonitor::read_events`] to turn the messages into [`LinkEvent`]s,
//! which feed port-status messages and fast-failover liveness.
//! [`LinkMonitor::request_dump`] asks for the current state of every link
//! (answered as RTM_NEWLINK messages too), used at start-up and after the
//! socket overflowed (`ENOBUFS` from `read_events`: events were lost).
//!
//! Messages are parsed from the received bytes without `unsafe`:
//! `nlmsghdr` (16 bytes) then, for link messages, `ifinfomsg` (16 bytes)
//! then `rtattr`s (len u16, type u16, value, padded to 4).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::sys::cvt;

const NLMSG_HDRLEN: usize = 16;
const IFINFOMSG_LEN: usize = 16;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const RTM_GETLINK: u16 = 18;
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;
const IFLA_IFNAME: u16 = 3;
const IFF_UP: u32 = 0x1;
#[cfg(test)]
const IFF_RUNNING: u32 = 0x40;
const IFF_LOWER_UP: u32 = 0x1_0000;

/// The state of one interface as reported by the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEvent {
    pub ifindex: i32,
    /// Interface name (empty if the message carried none).
    pub name: String,
    /// Raw `ifi_flags` (IFF_UP, IFF_RUNNING, IFF_LOWER_UP, ...).
    pub flags: u32,
    /// Administratively up and carrier present (`IFF_UP` and
    /// `IFF_LOWER_UP`): the link can carry frames.
    pub up: bool,
    /// The interface was removed (RTM_DELLINK).
    pub deleted: bool,
}

/// An rtnetlink socket reporting link changes; see the module comment.
pub struct LinkMonitor {
    fd: OwnedFd,
    buf: Vec<u8>,
    seq: u32,
}

impl LinkMonitor {
    /// Opens the monitor in the calling thread's network namespace.
    pub fn open() -> io::Result<LinkMonitor> {
        // SAFETY: plain socket(2) call; the result is checked and owned.
        let raw = cvt(unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_nl is plain old data; all-zero is valid.
        let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        sa.nl_groups = libc::RTMGRP_LINK as u32;
        // SAFETY: passes a live sockaddr_nl and its size.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })?;
        Ok(LinkMonitor {
            fd,
            buf: vec![0; 32 * 1024],
            seq: 0,
        })
    }

    /// Descriptor that polls readable when events are waiting.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Asks the kernel for the state of every link; the answers arrive
    /// through [`LinkMonitor::read_events`].
    pub fn request_dump(&mut self) -> io::Result<()> {
        self.seq = self.seq.wrapping_add(1);
        let mut msg = [0u8; NLMSG_HDRLEN + IFINFOMSG_LEN];
        let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
        let total = msg.len() as u32;
        msg[0..4].copy_from_slice(&total.to_ne_bytes());
        msg[4..6].copy_from_slice(&RTM_GETLINK.to_ne_bytes());
        msg[6..8].copy_from_slice(&flags.to_ne_bytes());
        msg[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        msg[NLMSG_HDRLEN] = libc::AF_UNSPEC as u8;
        // SAFETY: sends from a live buffer of the given length.
        let r = unsafe { libc::send(self.fd(), msg.as_ptr().cast(), msg.len(), 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Reads every waiting message and appends the link events to `out`;
    /// returns how many were appended (0: nothing waiting). `ENOBUFS` means
    /// the kernel dropped events: call `request_dump` to resynchronise.
    pub fn read_events(&mut self, out: &mut Vec<LinkEvent>) -> io::Result<usize> {
        let before = out.len();
        loop {
            // SAFETY: receives into our own buffer, at most its length.
            let r = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) => break,
                    Some(libc::EINTR) => continue,
                    _ => return Err(e),
                }
            }
            let len = (r as usize).min(self.buf.len());
            parse_messages(&self.buf[..len], out);
        }
        Ok(out.len() - before)
    }
}

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(off..off + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

/// Parses a datagram of netlink messages, appending link events; anything
/// malformed ends the parse of this datagram.
pub(crate) fn parse_messages(mut b: &[u8], out: &mut Vec<LinkEvent>) {
    while b.len() >= NLMSG_HDRLEN {
        let Some(len) = u32_at(b, 0).map(|l| l as usize) else {
            return;
        };
        if len < NLMSG_HDRLEN || len > b.len() {
            return;
        }
        let ty = u16_at(b, 4).unwrap_or(0);
        let msg = &b[NLMSG_HDRLEN..len];
        match ty {
            RTM_NEWLINK | RTM_DELLINK => {
                if let Some(ev) = parse_link(msg, ty == RTM_DELLINK) {
                    out.push(ev);
                }
            }
            NLMSG_DONE | NLMSG_ERROR => {}
            _ => {}
        }
        let aligned = (len + 3) & !3;
        b = b.get(aligned..).unwrap_or(&[]);
    }
}

/// Parses `ifinfomsg` + attributes.
fn parse_link(msg: &[u8], deleted: bool) -> Option<LinkEvent> {
    // ifinfomsg: family u8, pad u8, type u16, index i32, flags u32, change u32
    let ifindex = u32_at(msg, 4)? as i32;
    let flags = u32_at(msg, 8)?;
    let mut name = String::new();
    let mut attrs = msg.get(IFINFOMSG_LEN..)?;
    while attrs.len() >= 4 {
        let alen = u16_at(attrs, 0)? as usize;
        let aty = u16_at(attrs, 2)? & 0x3fff;
        if alen < 4 || alen > attrs.len() {
            break;
        }
        if aty == IFLA_IFNAME {
            let v = &attrs[4..alen];
            let v = v.split(|&c| c == 0).next().unwrap_or(&[]);
            name = String::from_utf8_lossy(v).into_owned();
        }
        attrs = attrs.get((alen + 3) & !3..).unwrap_or(&[]);
    }
    Some(LinkEvent {
        ifindex,
        name,
        flags,
        up: !deleted && flags & IFF_UP != 0 && flags & IFF_LOWER_UP != 0,
        deleted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link_msg(ty: u16, index: i32, flags: u32, name: &str) -> Vec<u8> {
        let mut attr = Vec::new();
        let alen = 4 + name.len() + 1;
        attr.extend_from_slice(&(alen as u16).to_ne_bytes());
        attr.extend_from_slice(&IFLA_IFNAME.to_ne_bytes());
        attr.extend_from_slice(name.as_bytes());
        attr.push(0);
        while attr.len() % 4 != 0 {
            attr.push(0);
        }
        let mut m = Vec::new();
        let total = NLMSG_HDRLEN + IFINFOMSG_LEN + attr.len();
        m.extend_from_slice(&(total as u32).to_ne_bytes());
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(&[0, 0, 1, 0]);
        m.extend_from_slice(&index.to_ne_bytes());
        m.extend_from_slice(&flags.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&attr);
        m
    }

    #[test]
    fn parses_new_and_del_link() {
        let mut d = link_msg(RTM_NEWLINK, 7, IFF_UP | IFF_RUNNING | IFF_LOWER_UP, "veth0");
        d.extend(link_msg(RTM_NEWLINK, 8, IFF_UP, "veth1"));
        d.extend(link_msg(RTM_DELLINK, 9, 0, "gone"));
        let mut out = Vec::new();
        parse_messages(&d, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(
            (out[0].ifindex, out[0].name.as_str(), out[0].up),
            (7, "veth0", true)
        );
        assert_eq!((out[1].name.as_str(), out[1].up), ("veth1", false));
        assert!(out[2].deleted && !out[2].up);
    }

    #[test]
    fn garbage_never_panics() {
        let mut out = Vec::new();
        for n in 0..64usize {
            let d: Vec<u8> = (0..n).map(|i| (i * 37 + n) as u8).collect();
            parse_messages(&d, &mut out);
        }
        let mut m = link_msg(RTM_NEWLINK, 1, 0, "x");
        m[NLMSG_HDRLEN + IFINFOMSG_LEN] = 200; // attribute longer than message
        parse_messages(&m, &mut out);
    }
}
