//! Opening one AF_XDP socket on a device queue with its own UMEM, split
//! into its two halves ([`open_queue`]); the device's receive queue count;
//! the kernel's drop statistics of a socket; and silencing libxdp's
//! diagnostics ([`quiet_libxdp`]).

use std::ffi::CString;
use std::io;
use std::num::NonZeroU32;
use std::os::fd::RawFd;
use std::sync::Arc;

use xsk_rs::config::{
    BindFlags, FrameSize, Interface, LibxdpFlags, QueueSize, SocketConfig, UmemConfig, XdpFlags,
};
use xsk_rs::{FrameDesc, Socket, Umem};

use super::opts::{XdpMode, XdpOpts, RING_BATCH};
use super::rx::RxHalf;
use super::tx::TxHalf;
use crate::sys;

/// One AF_XDP socket as opened: its two halves.
pub(super) struct QueueSocket {
    pub(super) rx: RxHalf,
    pub(super) tx: TxHalf,
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
pub(super) fn rx_queue_count(fd: RawFd, name: &str) -> io::Result<usize> {
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

pub(super) fn ctx(e: impl std::fmt::Display, what: &str, name: &str) -> io::Error {
    io::Error::other(format!("{name}: {what}: {e}"))
}

/// Opens one socket on (`name`, `queue`) in `mode`, with its own UMEM.
pub(super) fn open_queue(
    name: &str,
    queue: u32,
    mode: XdpMode,
    opts: &XdpOpts,
) -> io::Result<QueueSocket> {
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
/// (called by [`XdpPort::open`](super::XdpPort::open); public for
/// programs that use xsk-rs directly).
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

/// Kernel-side receive losses of AF_XDP socket `fd` (`XDP_STATISTICS`).
pub(super) fn xdp_drops(fd: RawFd) -> u64 {
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
