//! Data-plane capture with kernel timestamps.
//!
//! One `AF_PACKET`/`SOCK_RAW` socket per captured interface, created inside
//! the interface's namespace, with `SO_TIMESTAMPNS`: every frame comes with
//! the kernel's CLOCK_REALTIME stamp taken when the frame reached the packet
//! tap (on receive: in the driver's receive path; on transmit: when the
//! frame was queued to the device). The socket is not bound (binding needs
//! a raw `sockaddr_ll`); it sees every interface of its namespace and keeps
//! only frames whose `sll_ifindex` is ours. Frames with
//! `sll_pkttype == PACKET_OUTGOING` are our generator's own transmissions
//! ([`Dir::Tx`]). A thread per capture reads with a 50 ms timeout so that it
//! notices when the capture is dropped.

use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;

use nix::sys::socket::{
    recvmsg, setsockopt, socket, sockopt, AddressFamily, ControlMessageOwned, LinkAddr, MsgFlags,
    SockFlag, SockProtocol, SockType,
};
use nix::sys::time::{TimeSpec, TimeVal};

use crate::error::{BenchError, Result};
use crate::experiment::{Captured, Dir, Event};
use crate::topology::Iface;

const PACKET_OUTGOING: u8 = 4;

/// A running capture; dropping it stops the thread.
pub struct Capture {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Open the capture socket in the current namespace: (socket, ifindex).
fn open_socket(iface: &str) -> Result<(OwnedFd, u32)> {
    let idx = nix::net::if_::if_nametoindex(iface)
        .map_err(|e| BenchError(format!("capture: no interface {iface}: {e}")))?;
    let fd = socket(
        AddressFamily::Packet,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::EthAll,
    )?;
    setsockopt(&fd, sockopt::ReceiveTimestampns, &true)?;
    setsockopt(&fd, sockopt::ReceiveTimeout, &TimeVal::new(0, 50_000))?;
    if setsockopt(&fd, sockopt::RcvBufForce, &(16 << 20)).is_err() {
        let _ = setsockopt(&fd, sockopt::RcvBuf, &(8 << 20));
    }
    Ok((fd, idx))
}

/// Open a socket for `iface` (in its namespace if it has one).
pub(crate) fn in_ns<T: Send + 'static>(
    netns: Option<&str>,
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    match netns {
        Some(ns) => ports::netns::in_netns(ns, f)
            .map_err(|e| BenchError(format!("entering namespace {ns}: {e}")))?,
        None => f(),
    }
}

impl Capture {
    pub fn start(ifc: &Iface, events: Sender<Event>) -> Result<Capture> {
        let name = ifc.name.clone();
        let n2 = name.clone();
        let (fd, idx) = in_ns(ifc.netns.as_deref(), move || open_socket(&n2))
            .map_err(|e| e.context(format!("capture on {name}")))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let role = ifc.role;
        let handle = std::thread::Builder::new()
            .name(format!("cap-{name}"))
            .spawn(move || capture_loop(fd, idx, name, role, stop2, events))?;
        Ok(Capture {
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn capture_loop(
    fd: OwnedFd,
    idx: u32,
    name: String,
    role: &'static str,
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
) {
    let mut buf = vec![0u8; 65536];
    let mut cmsg = nix::cmsg_space!(TimeSpec);
    while !stop.load(Ordering::Relaxed) {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let (len, ts, addr) =
            match recvmsg::<LinkAddr>(fd.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::empty())
            {
                Ok(r) => {
                    let mut ts = 0u64;
                    if let Ok(cms) = r.cmsgs() {
                        for c in cms {
                            if let ControlMessageOwned::ScmTimestampns(t) = c {
                                ts = t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64;
                            }
                        }
                    }
                    (r.bytes, ts, r.address)
                }
                Err(nix::errno::Errno::EAGAIN) | Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return,
            };
        let Some(addr) = addr else { continue };
        if addr.ifindex() != idx as usize {
            continue;
        }
        let dir = if addr.pkttype() == PACKET_OUTGOING {
            Dir::Tx
        } else {
            Dir::Rx
        };
        let ts_ns = if ts == 0 {
            crate::experiment::now_ns()
        } else {
            ts
        };
        let pkt = Captured {
            iface: name.clone(),
            role,
            dir,
            data: buf[..len.min(buf.len())].to_vec(),
            ts_ns,
        };
        if events.send(Event::Packet(pkt)).is_err() {
            return;
        }
    }
}
