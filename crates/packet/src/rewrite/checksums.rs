//! Writing header bytes with the checksums that cover them kept up to
//! date (RFC 1624, incremental: [`patch`], and [`apply_even`] for the fast
//! paths' one precomputed delta), where those checksums are ([`ip_ck`],
//! [`l4_ck`]), SCTP's CRC32c, and recomputing every checksum from
//! scratch ([`recompute_checksums`]).

use super::error::RewriteError;
use crate::checksum;
use crate::key::FlowKey;
use crate::proto::{ethertype, ipproto};

/// A checksum to keep up to date while patching bytes: the checksum field
/// is at `at`; `base` is the start of the summed region (for byte parity);
/// `zero_is_none`: a stored 0 means "no checksum" (UDP) and is kept.
#[derive(Clone, Copy)]
pub(super) struct Ck {
    pub(super) at: usize,
    pub(super) base: usize,
    pub(super) zero_is_none: bool,
}

pub(super) fn be16_at(d: &[u8], off: usize) -> Option<u16> {
    d.get(off..)?
        .first_chunk::<2>()
        .map(|a| u16::from_be_bytes(*a))
}

pub(super) fn be32_at(d: &[u8], off: usize) -> Option<u32> {
    d.get(off..)?
        .first_chunk::<4>()
        .map(|a| u32::from_be_bytes(*a))
}

/// Puts `new` at `off` and returns the bytes that were there; `None`
/// (nothing written) when the packet ends before `off + N`.
#[inline]
pub(super) fn swap_at<const N: usize>(d: &mut [u8], off: usize, new: [u8; N]) -> Option<[u8; N]> {
    let dst = d.get_mut(off..)?.first_chunk_mut::<N>()?;
    Some(std::mem::replace(dst, new))
}

/// Writes `new` at `off` and updates the checksums in `cks` (those that are
/// inside the packet). `N` is a constant so copies and sums are unrolled.
#[inline]
pub(super) fn patch<const N: usize>(
    d: &mut [u8],
    off: usize,
    new: &[u8; N],
    cks: &[Option<Ck>],
) -> Result<(), RewriteError> {
    let old = swap_at(d, off, *new).ok_or(RewriteError::Truncated)?;
    let mut even_delta = None;
    for ck in cks.iter().flatten() {
        let Some(hc) = be16_at(d, ck.at) else {
            continue;
        };
        if ck.zero_is_none && hc == 0 {
            continue;
        }
        let dl = *even_delta.get_or_insert_with(|| checksum::delta(&old, new));
        let odd = off.wrapping_sub(ck.base) & 1 == 1;
        let mut v = checksum::apply_delta(hc, if odd { dl.swap_bytes() } else { dl });
        if ck.zero_is_none && v == 0 {
            v = 0xffff;
        }
        if let Some(c) = d.get_mut(ck.at..ck.at + 2) {
            c.copy_from_slice(&v.to_be_bytes());
        }
    }
    Ok(())
}

/// IPv4 header checksum.
pub(super) fn ip_ck(key: &FlowKey) -> Option<Ck> {
    (key.eth_type == ethertype::IPV4 && key.offsets.l3 != 0).then(|| {
        let l3 = usize::from(key.offsets.l3);
        Ck {
            at: l3 + 10,
            base: l3,
            zero_is_none: false,
        }
    })
}

/// The L4 checksum, if the L4 header (with its checksum field) is in the
/// datagram. `pseudo`: only checksums that cover the pseudo-header (for
/// address changes), with `base` = the IP header (addresses are even).
pub(super) fn l4_ck(key: &FlowKey, pseudo: bool) -> Option<Ck> {
    let l4 = usize::from(key.offsets.l4);
    if l4 == 0 {
        return None;
    }
    let v6 = key.eth_type == ethertype::IPV6;
    let (at, zero_is_none) = match key.ip_proto {
        ipproto::TCP => (l4 + 16, false),
        ipproto::UDP => (l4 + 6, true),
        ipproto::ICMP if !v6 && !pseudo => (l4 + 2, false),
        ipproto::ICMPV6 if v6 => (l4 + 2, false),
        _ => return None,
    };
    if at + 2 > usize::from(key.offsets.l3_end) {
        return None;
    }
    let base = if pseudo {
        usize::from(key.offsets.l3)
    } else {
        l4
    };
    Some(Ck {
        at,
        base,
        zero_is_none,
    })
}

/// Recomputes the SCTP CRC32c over the SCTP packet.
pub(super) fn sctp_fix(d: &mut [u8], key: &FlowKey) {
    let l4 = usize::from(key.offsets.l4);
    let end = usize::from(key.offsets.l3_end);
    if let Some(seg) = d.get_mut(l4..end) {
        if let Some(crc) = checksum::sctp_crc(seg) {
            if let Some(c) = seg.get_mut(8..12) {
                c.copy_from_slice(&crc.to_le_bytes());
            }
        }
    }
}

/// Updates the checksum `ck` for a change of one's complement sum
/// `delta` at an even position of its region (the fast paths' fields all
/// are). Skipped when the field is not in the packet, as in `patch`.
#[inline]
pub(super) fn apply_even(d: &mut [u8], ck: Ck, delta: u16) {
    let Some(c) = d.get_mut(ck.at..).and_then(|t| t.first_chunk_mut::<2>()) else {
        return;
    };
    let hc = u16::from_be_bytes(*c);
    if ck.zero_is_none && hc == 0 {
        return;
    }
    let mut v = checksum::apply_delta(hc, delta);
    if ck.zero_is_none && v == 0 {
        v = 0xffff;
    }
    *c = v.to_be_bytes();
}

/// Recomputes every checksum of the packet from scratch (IPv4 header,
/// TCP/UDP/ICMP/ICMPv6, SCTP): for packets built by hand, and to check the
/// incremental updates. A UDP checksum of 0 stays 0.
pub fn recompute_checksums(d: &mut [u8], key: &FlowKey) {
    if let Some(ck) = ip_ck(key) {
        let l3 = ck.base;
        let ihl = usize::from(d.get(l3).copied().unwrap_or(0) & 0xf) * 4;
        if let Some(h) = d.get_mut(l3..l3 + ihl) {
            if let Some(c) = h.get_mut(10..12) {
                c.fill(0);
            }
            let v = checksum::checksum(0, h);
            if let Some(c) = h.get_mut(10..12) {
                c.copy_from_slice(&v.to_be_bytes());
            }
        }
    }
    if key.ip_proto == ipproto::SCTP {
        sctp_fix(d, key);
        return;
    }
    let Some(ck) = l4_ck(key, false) else {
        return;
    };
    if ck.zero_is_none && be16_at(d, ck.at) == Some(0) {
        return;
    }
    let l3 = usize::from(key.offsets.l3);
    let l4 = ck.base;
    let end = usize::from(key.offsets.l3_end);
    let len = end - l4;
    let pseudo = match (key.eth_type, key.ip_proto) {
        (ethertype::IPV4, ipproto::ICMP) => 0,
        (ethertype::IPV4, p) => match (d.get(l3 + 12..l3 + 16), d.get(l3 + 16..l3 + 20)) {
            (Some(s), Some(t)) => checksum::pseudo_v4(s, t, p, len),
            _ => return,
        },
        (_, p) => match (d.get(l3 + 8..l3 + 24), d.get(l3 + 24..l3 + 40)) {
            (Some(s), Some(t)) => checksum::pseudo_v6(s, t, p, len),
            _ => return,
        },
    };
    if let Some(c) = d.get_mut(ck.at..ck.at + 2) {
        c.fill(0);
    }
    let Some(seg) = d.get(l4..end) else {
        return;
    };
    let mut v = checksum::checksum(pseudo, seg);
    if ck.zero_is_none && v == 0 {
        v = 0xffff;
    }
    if let Some(c) = d.get_mut(ck.at..ck.at + 2) {
        c.copy_from_slice(&v.to_be_bytes());
    }
}
