//! Small wrappers over the interface ioctls (`SIOCGIF*`), shared by the
//! backends. Each takes the socket to issue the ioctl on: an interface is
//! looked up in the network namespace of that socket, which matters when a
//! port was opened inside another namespace.

use std::io;
use std::os::fd::RawFd;

/// Turns a `-1` return into the thread's `errno`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// An `ifreq` with `name` filled in (names longer than IFNAMSIZ-1 are
/// rejected rather than cut).
pub(crate) fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    // SAFETY: ifreq is plain old data (a name and a union of integers and
    // sockaddrs), for which all-zero bytes are a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &b) in req.ifr_name.iter_mut().zip(bytes) {
        *dst = b as libc::c_char;
    }
    Ok(req)
}

/// Issues `ioctl(fd, request, &mut req)`.
fn ioctl(fd: RawFd, request: libc::c_ulong, req: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: every request used in this module reads/writes one `ifreq`,
    // and `req` is a valid, exclusively borrowed `ifreq`.
    cvt(unsafe { libc::ioctl(fd, request as _, req as *mut libc::ifreq) })?;
    Ok(())
}

/// The interface index of `name`.
pub fn ifindex(fd: RawFd, name: &str) -> io::Result<i32> {
    let mut req = ifreq(name)?;
    ioctl(fd, libc::SIOCGIFINDEX, &mut req)?;
    // SAFETY: SIOCGIFINDEX filled the ifindex member of the union.
    Ok(unsafe { req.ifr_ifru.ifru_ifindex })
}

/// The MTU of `name`.
pub fn mtu(fd: RawFd, name: &str) -> io::Result<u32> {
    let mut req = ifreq(name)?;
    ioctl(fd, libc::SIOCGIFMTU, &mut req)?;
    // SAFETY: SIOCGIFMTU filled the mtu member of the union.
    let mtu = unsafe { req.ifr_ifru.ifru_mtu };
    Ok(mtu.max(0) as u32)
}

/// The Ethernet address of `name`.
pub fn hw_addr(fd: RawFd, name: &str) -> io::Result<[u8; 6]> {
    let mut req = ifreq(name)?;
    ioctl(fd, libc::SIOCGIFHWADDR, &mut req)?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr (a sockaddr) member.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (dst, &b) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *dst = b as u8;
    }
    Ok(mac)
}

/// The (16-bit) interface flags of `name` (`IFF_UP`, `IFF_RUNNING`, ...).
pub fn flags(fd: RawFd, name: &str) -> io::Result<i32> {
    let mut req = ifreq(name)?;
    ioctl(fd, libc::SIOCGIFFLAGS, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    Ok(i32::from(unsafe { req.ifr_ifru.ifru_flags }) & 0xffff)
}

/// Sets or clears `IFF_UP` on `name`.
pub fn set_up(fd: RawFd, name: &str, up: bool) -> io::Result<()> {
    let mut req = ifreq(name)?;
    ioctl(fd, libc::SIOCGIFFLAGS, &mut req)?;
    // SAFETY: SIOCGIFFLAGS filled the flags member; we write the same member.
    unsafe {
        if up {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        } else {
            req.ifr_ifru.ifru_flags &= !(libc::IFF_UP as libc::c_short);
        }
    }
    ioctl(fd, libc::SIOCSIFFLAGS, &mut req)
}

/// Link usable: administratively up and operationally running (carrier).
pub fn link_up(fd: RawFd, name: &str) -> bool {
    match flags(fd, name) {
        Ok(f) => f & libc::IFF_UP != 0 && f & libc::IFF_RUNNING != 0,
        Err(_) => false,
    }
}

/// Reads and clears the pending error (`SO_ERROR`) of socket `fd`.
pub(crate) fn socket_error(fd: RawFd) -> Option<io::Error> {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: passes a live c_int and its size as out-params.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut err as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r < 0 {
        return Some(io::Error::last_os_error());
    }
    (err != 0).then(|| io::Error::from_raw_os_error(err))
}
