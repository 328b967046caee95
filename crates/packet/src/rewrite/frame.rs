//! The frame halves of the fast paths: rewrites of raw frame bytes at
//! offsets the caller knows, without a key, which the pipeline's
//! templates also call on frames they have no key for.

use super::checksums::{apply_even, Ck};
use crate::checksum;
use crate::field::Field;

/// Writes both MAC addresses of an Ethernet header (`h`: its first 12 bytes)
/// in one go: the frame half of [`set_macs`](super::set_macs), which the
/// route template (`pipeline`) also uses on frames it has no key for.
#[inline(always)]
pub fn write_macs(h: &mut [u8; 12], dst: &[u8; 6], src: &[u8; 6]) {
    let (d, s) = h.split_at_mut(6);
    d.copy_from_slice(dst);
    s.copy_from_slice(src);
}

/// Lowers the TTL of an IPv4 header (`h`: its first 12 bytes) from `ttl`
/// (above 1) by one and updates the header checksum: the frame half of
/// [`dec_nw_ttl`](super::dec_nw_ttl)'s fast path. The TTL and the checksum
/// are one 16-bit word apart, and lowering the TTL by one changes the
/// header's sum by `-0x0100` (RFC 1624 eqn. 3 with a constant delta
/// `0xfeff`). Returns the new TTL.
#[inline(always)]
pub fn ipv4_ttl_down(h: &mut [u8; 12], ttl: u8) -> u8 {
    let ttl = ttl.wrapping_sub(1);
    h[8] = ttl;
    let hc = u16::from_be_bytes([h[10], h[11]]);
    [h[10], h[11]] = checksum::apply_delta(hc, 0xfeff).to_be_bytes();
    ttl
}

/// Where IPv4 address field `f` is in the IPv4 header: 12 for the
/// source, 16 for the destination, `None` for any other field.
#[inline(always)]
pub fn ipv4_addr_offset(f: Field) -> Option<usize> {
    match f {
        Field::Ipv4Src => Some(12),
        Field::Ipv4Dst => Some(16),
        _ => None,
    }
}

/// The bytes [`set_ipv4_port`](super::set_ipv4_port)'s fast path writes, on a
/// frame whose IPv4 header (20 bytes at least) starts at `l3` and whose TCP
/// (`udp` false) or UDP header starts at `l4`, within the datagram up to its
/// checksum (the caller checked): the address at `a_off` in the IP header (12
/// source, 16 destination) becomes `a` with the header checksum updated, the
/// port at `p_off` in the L4 header (0 source, 2 destination) becomes `p`,
/// and the L4 checksum takes both deltas in one (a UDP checksum 0, "none",
/// stays 0; one that would become 0 is written 0xffff). False, with nothing
/// written, when the frame is too short for either header (the callers'
/// checks make that impossible).
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn nat_ipv4_at(
    data: &mut [u8],
    l3: usize,
    l4: usize,
    udp: bool,
    a_off: usize,
    a: u32,
    p_off: usize,
    p: u16,
) -> bool {
    let ck_off = if udp { 6 } else { 16 };
    let Some((front, back)) = data.split_at_mut_checked(l4) else {
        return false;
    };
    let Some(ip) = front.get_mut(l3..).and_then(|h| h.first_chunk_mut::<20>()) else {
        return false;
    };
    let Some(th) = back.get_mut(..ck_off + 2) else {
        return false;
    };
    let (Some(ad), true) = (ip.get_mut(a_off..a_off + 4), p_off + 2 <= ck_off) else {
        return false;
    };
    let old_a = u32::from_be_bytes([ad[0], ad[1], ad[2], ad[3]]);
    ad.copy_from_slice(&a.to_be_bytes());
    let da = checksum::delta32(old_a, a);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    [ip[10], ip[11]] = checksum::apply_delta(hc, da).to_be_bytes();
    let old_p = u16::from_be_bytes([th[p_off], th[p_off + 1]]);
    [th[p_off], th[p_off + 1]] = p.to_be_bytes();
    let hc = u16::from_be_bytes([th[ck_off], th[ck_off + 1]]);
    if !(udp && hc == 0) {
        let both = checksum::add(da, checksum::delta16(old_p, p));
        let mut v = checksum::apply_delta(hc, both);
        if udp && v == 0 {
            v = 0xffff;
        }
        [th[ck_off], th[ck_off + 1]] = v.to_be_bytes();
    }
    true
}

/// The bytes [`set_field`](super::set_field)'s fast path for an IPv4 address
/// writes, on a frame whose IPv4 header starts at `l3`: the address at `off`
/// in it (12 source, 16 destination) becomes `a` with the header checksum
/// updated, and the TCP or UDP checksum at `l4_ck` (its offset in the frame
/// and whether a stored 0 means "none", as for UDP), if any, takes the
/// pseudo-header's delta. False, with nothing written, when the frame ends
/// inside the 20 bytes of the IP header.
#[inline]
pub fn ipv4_addr_at(
    data: &mut [u8],
    l3: usize,
    off: usize,
    a: u32,
    l4_ck: Option<(usize, bool)>,
) -> bool {
    let Some(ip) = data.get_mut(l3..).and_then(|h| h.first_chunk_mut::<20>()) else {
        return false;
    };
    let Some(at) = ip.get_mut(off..off + 4) else {
        return false;
    };
    let old = u32::from_be_bytes([at[0], at[1], at[2], at[3]]);
    at.copy_from_slice(&a.to_be_bytes());
    let delta = checksum::delta32(old, a);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    [ip[10], ip[11]] = checksum::apply_delta(hc, delta).to_be_bytes();
    if let Some((at, zero_is_none)) = l4_ck {
        let ck = Ck {
            at,
            base: l3,
            zero_is_none,
        };
        apply_even(data, ck, delta);
    }
    true
}

/// The bytes [`set_field`](super::set_field)'s fast path for a TCP or UDP
/// port writes, on a frame whose TCP (`udp` false) or UDP header starts at
/// `l4` and holds its checksum (the caller checked): the port at `p_off`
/// in it (0 source, 2 destination) becomes `p`, and the checksum takes the
/// delta (a UDP checksum 0, "none", stays 0; one that would become 0 is
/// written 0xffff). False, with nothing written, when the frame ends
/// before the checksum.
#[inline]
pub fn l4_port_at(data: &mut [u8], l4: usize, udp: bool, p_off: usize, p: u16) -> bool {
    let ck_off = if udp { 6 } else { 16 };
    let Some(th) = data.get_mut(l4..l4 + ck_off + 2) else {
        return false;
    };
    let Some(at) = th.get_mut(p_off..p_off + 2) else {
        return false;
    };
    let old = u16::from_be_bytes([at[0], at[1]]);
    at.copy_from_slice(&p.to_be_bytes());
    let ck = Ck {
        at: ck_off,
        base: 0,
        zero_is_none: udp,
    };
    apply_even(th, ck, checksum::delta16(old, p));
    true
}
