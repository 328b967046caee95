//! Socket helpers shared by the receive and transmit sides: the
//! `SOL_PACKET` option numbers libc lacks, `setsockopt`, mapping a receive
//! ring, joining a fanout group, the kernel's ring drop count, and errors
//! that name the interface.

use std::io;
use std::os::fd::RawFd;
use std::ptr;

use crate::sys::cvt;

/// `PACKET_COPY_THRESH` socket option.
pub(super) const PACKET_COPY_THRESH: libc::c_int = 7;
/// `PACKET_FANOUT` flag: the kernel picks a free group id (Linux >= 4.5).
pub(super) const PACKET_FANOUT_FLAG_UNIQUEID: i32 = 0x2000;
/// `PACKET_VNET_HDR` socket option.
pub(super) const PACKET_VNET_HDR: libc::c_int = 15;
/// `PACKET_AUXDATA` socket option and control message type.
pub(super) const PACKET_AUXDATA: libc::c_int = 8;

/// `struct tpacket_stats_v3` (read with `PACKET_STATISTICS`; reading
/// resets the kernel's counters).
#[repr(C)]
#[derive(Default)]
struct TpacketStatsV3 {
    tp_packets: u32,
    tp_drops: u32,
    tp_freeze_q_cnt: u32,
}

/// Joins socket `fd` to fanout group `id` in hash mode (`extra` flags
/// added), and returns the group id the kernel reports (the allocated one
/// with `PACKET_FANOUT_FLAG_UNIQUEID`).
pub(super) fn join_fanout(fd: RawFd, id: u16, extra: i32) -> io::Result<u16> {
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
pub(super) fn take_kernel_drops(fd: RawFd) -> u64 {
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

pub(super) fn setsockopt<T>(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    val: &T,
) -> io::Result<()> {
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
pub(super) fn map_ring(s: RawFd, len: usize, name: &str) -> io::Result<*mut libc::c_void> {
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

pub(super) fn ctx(e: io::Error, what: &str, name: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {what}: {e}"))
}
