//! The TTL actions: decrement and set the IP TTL (IPv6 hop limit) and the
//! outer MPLS TTL, and copy a TTL between the outer MPLS entry and the
//! header under it.

use super::checksums::{be32_at, ip_ck, patch, Ck};
use super::error::RewriteError;
use super::frame::ipv4_ttl_down;
use super::reparse::ensure;
use crate::buf::PacketBuf;
use crate::field::Field;
use crate::key::{FlowKey, Layer};
use crate::proto::ethertype;

/// Offset of the IP TTL / hop limit byte and of the IPv4 checksum.
fn ip_ttl_at(buf: &PacketBuf, key: &mut FlowKey) -> Result<(usize, Option<Ck>), RewriteError> {
    ensure(buf, key, Layer::L3);
    if !key.has(Field::IpTtl) {
        return Err(RewriteError::NoIp);
    }
    let l3 = usize::from(key.offsets.l3);
    if key.eth_type == ethertype::IPV4 {
        Ok((l3 + 8, ip_ck(key)))
    } else {
        Ok((l3 + 7, None))
    }
}

/// Dec NW TTL: decrements the IPv4 TTL (updating the header checksum) or
/// the IPv6 hop limit. A TTL of 0 or 1 is not decremented:
/// [`RewriteError::TtlExpired`].
///
/// IPv4 with the key parsed to L3 takes a fast path inlined into the
/// caller ([`ipv4_ttl_down`]).
#[inline(always)]
pub fn dec_nw_ttl(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    let l3 = usize::from(key.offsets.l3);
    if key.depth >= Layer::L3
        && key.has(Field::IpTtl)
        && key.eth_type == ethertype::IPV4
        && l3 != 0
        && key.ip_ttl > 1
    {
        // TTL at 8, checksum at 10..12 of the header.
        if let Some(h) = buf
            .data_mut()
            .get_mut(l3..)
            .and_then(|t| t.first_chunk_mut::<12>())
        {
            key.ip_ttl = ipv4_ttl_down(h, key.ip_ttl);
            return Ok(());
        }
    }
    dec_nw_ttl_general(buf, key)
}

/// [`dec_nw_ttl`] without the IPv4 fast path.
pub fn dec_nw_ttl_general(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    let (at, ck) = ip_ttl_at(buf, key)?;
    if key.ip_ttl <= 1 {
        return Err(RewriteError::TtlExpired(key.ip_ttl));
    }
    patch(buf.data_mut(), at, &[key.ip_ttl - 1], &[ck])?;
    key.ip_ttl -= 1;
    Ok(())
}

/// Set NW TTL.
pub fn set_nw_ttl(buf: &mut PacketBuf, key: &mut FlowKey, ttl: u8) -> Result<(), RewriteError> {
    let (at, ck) = ip_ttl_at(buf, key)?;
    patch(buf.data_mut(), at, &[ttl], &[ck])?;
    key.ip_ttl = ttl;
    Ok(())
}

fn mpls_at(buf: &PacketBuf, key: &mut FlowKey) -> Result<usize, RewriteError> {
    ensure(buf, key, Layer::L2);
    match usize::from(key.offsets.mpls) {
        0 => Err(RewriteError::NoMpls),
        at => Ok(at),
    }
}

/// Dec MPLS TTL of the outermost entry; 0 or 1 gives
/// [`RewriteError::TtlExpired`].
pub fn dec_mpls_ttl(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    let at = mpls_at(buf, key)?;
    if key.mpls_ttl <= 1 {
        return Err(RewriteError::TtlExpired(key.mpls_ttl));
    }
    patch(buf.data_mut(), at + 3, &[key.mpls_ttl - 1], &[])?;
    key.mpls_ttl -= 1;
    Ok(())
}

/// Set MPLS TTL of the outermost entry.
pub fn set_mpls_ttl(buf: &mut PacketBuf, key: &mut FlowKey, ttl: u8) -> Result<(), RewriteError> {
    let at = mpls_at(buf, key)?;
    patch(buf.data_mut(), at + 3, &[ttl], &[])?;
    key.mpls_ttl = ttl;
    Ok(())
}

/// The TTL byte of the header after the outermost MPLS entry: the next
/// entry if the outer one is not bottom of stack, else the IP header there
/// (told apart by its version nibble). Returns (offset, IPv4 header start).
fn inner_ttl_at(d: &[u8], at: usize) -> Result<(usize, Option<usize>), RewriteError> {
    let lse = be32_at(d, at).ok_or(RewriteError::Truncated)?;
    let next = at + 4;
    if lse & (1 << 8) == 0 {
        if next + 4 > d.len() {
            return Err(RewriteError::NoInnerTtl);
        }
        return Ok((next + 3, None));
    }
    match d.get(next).map(|b| b >> 4) {
        Some(4) if next + 20 <= d.len() => Ok((next + 8, Some(next))),
        Some(6) if next + 40 <= d.len() => Ok((next + 7, None)),
        _ => Err(RewriteError::NoInnerTtl),
    }
}

/// Copy TTL outwards: from the header after the outermost MPLS entry (next
/// entry or IP) to the outermost entry.
pub fn copy_ttl_out(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    let at = mpls_at(buf, key)?;
    let d = buf.data_mut();
    let (inner, _) = inner_ttl_at(d, at)?;
    let ttl = d.get(inner).copied().ok_or(RewriteError::Truncated)?;
    patch(d, at + 3, &[ttl], &[])?;
    key.mpls_ttl = ttl;
    Ok(())
}

/// Copy TTL inwards: from the outermost MPLS entry to the next entry or to
/// the IP header under it (updating the IPv4 checksum).
pub fn copy_ttl_in(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    let at = mpls_at(buf, key)?;
    let d = buf.data_mut();
    let (inner, ipv4) = inner_ttl_at(d, at)?;
    let ck = ipv4.map(|l3| Ck {
        at: l3 + 10,
        base: l3,
        zero_is_none: false,
    });
    patch(d, inner, &[key.mpls_ttl], &[ck])
}
