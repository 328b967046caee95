//! The set-fields routers, load balancers and NATs do per packet (MAC
//! addresses, IPv4 addresses, TCP/UDP ports) with fast paths inlined into
//! the caller: [`set_field`] and [`set_field_ref`], and the combined
//! rewrites [`set_macs`], [`set_eth_dst`], [`set_ipv4_addr`] and
//! [`set_ipv4_port`]. Each declines (changing nothing) whatever it does
//! not cover, which then goes through [`set_field_general`].

use super::checksums::{apply_even, l4_ck, swap_at};
use super::error::RewriteError;
use super::frame::{ipv4_addr_at, ipv4_addr_offset, nat_ipv4_at, write_macs};
use super::set_field::{set_field_general, SetField};
use crate::buf::PacketBuf;
use crate::checksum;
use crate::field::Field;
use crate::key::{FlowKey, Layer};
use crate::proto::{ethertype, ipproto};

/// Applies one set-field action.
///
/// The fields routers, load balancers and NATs rewrite per packet (MAC
/// addresses, IPv4 addresses, TCP/UDP ports) take a fast path inlined
/// into the caller when the key was parsed deep enough and the bytes are
/// in the packet: one write and one delta per checksum, computed on
/// machine words (`checksum::delta32`, `delta16`). Everything else, and
/// every case the fast path declines, goes through [`set_field_general`],
/// with the same result (`fast_paths_equal_general`).
#[inline]
pub fn set_field(buf: &mut PacketBuf, key: &mut FlowKey, sf: SetField) -> Result<(), RewriteError> {
    set_field_ref(buf, key, &sf)
}

/// [`set_field`] with the action by reference: a caller that holds the
/// action in memory (a compiled action list) passes it this way, so the
/// fast paths read the value from there. (By value, the inlined copy of
/// a MAC address went through the stack as two overlapping 4-byte
/// stores read back as two other 4-byte loads: a store-forwarding stall
/// of some 15 cycles per MAC.)
#[inline]
pub fn set_field_ref(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    sf: &SetField,
) -> Result<(), RewriteError> {
    use SetField as S;
    let done = match sf {
        S::EthDst(m) => fast_mac(buf, key, 0, m),
        S::EthSrc(m) => fast_mac(buf, key, 6, m),
        S::Ipv4Src(a) => fast_ipv4(buf, key, 12, *a),
        S::Ipv4Dst(a) => fast_ipv4(buf, key, 16, *a),
        S::TcpSrc(p) | S::UdpSrc(p) => fast_port(buf, key, sf.field(), 0, *p),
        S::TcpDst(p) | S::UdpDst(p) => fast_port(buf, key, sf.field(), 2, *p),
        _ => false,
    };
    if done {
        Ok(())
    } else {
        set_field_general(buf, key, *sf)
    }
}

/// Fast path of `set_field` for `eth_dst` (`at` 0) or `eth_src` (6):
/// false (nothing changed) when the general path must decide.
#[inline]
fn fast_mac(buf: &mut PacketBuf, key: &mut FlowKey, at: usize, m: &[u8; 6]) -> bool {
    let f = if at == 0 {
        Field::EthDst
    } else {
        Field::EthSrc
    };
    if key.depth < Layer::L2 || !key.has(f) {
        return false;
    }
    if swap_at(buf.data_mut(), at, *m).is_none() {
        return false;
    }
    if at == 0 {
        key.eth_dst = *m;
    } else {
        key.eth_src = *m;
    }
    true
}

/// Sets `eth_dst` and `eth_src` together: what `set_field_ref` with
/// [`SetField::EthDst`] and then [`SetField::EthSrc`] does (the two
/// fields share no byte, so their order does not matter), in one 12-byte
/// write when the key was parsed to L2 and has both. Any other case runs
/// the two set-fields; the result is the first error of the two (each is
/// tried whatever the other did, as two separate actions would be).
#[inline(always)]
pub fn set_macs(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    dst: &[u8; 6],
    src: &[u8; 6],
) -> Result<(), RewriteError> {
    if key.depth >= Layer::L2 && key.has(Field::EthDst) && key.has(Field::EthSrc) {
        if let Some(h) = buf.data_mut().first_chunk_mut::<12>() {
            write_macs(h, dst, src);
            key.eth_dst = *dst;
            key.eth_src = *src;
            return Ok(());
        }
    }
    set_macs_slow(buf, key, dst, src)
}

/// [`set_macs`] as two set-fields (kept out of line).
#[inline(never)]
fn set_macs_slow(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    dst: &[u8; 6],
    src: &[u8; 6],
) -> Result<(), RewriteError> {
    let a = set_field_ref(buf, key, &SetField::EthDst(*dst));
    let b = set_field_ref(buf, key, &SetField::EthSrc(*src));
    a.and(b)
}

/// Sets `eth_dst`: what `set_field_ref` with [`SetField::EthDst`] does,
/// for a caller holding the address alone.
#[inline(always)]
pub fn set_eth_dst(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    dst: &[u8; 6],
) -> Result<(), RewriteError> {
    if fast_mac(buf, key, 0, dst) {
        Ok(())
    } else {
        set_field_general(buf, key, SetField::EthDst(*dst))
    }
}

/// Sets an IPv4 address (`af`: `Ipv4Src` or `Ipv4Dst`) to `a`: what
/// `set_field_ref` with that set-field does, for a caller holding the
/// field and the address apart.
#[inline]
pub fn set_ipv4_addr(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    af: Field,
    a: u32,
) -> Result<(), RewriteError> {
    let Some(off) = ipv4_addr_offset(af) else {
        return Err(RewriteError::MissingField(af));
    };
    if fast_ipv4(buf, key, off, a) {
        return Ok(());
    }
    match SetField::from_value(af, &a.to_be_bytes()) {
        Some(sf) => set_field_general(buf, key, sf),
        None => Err(RewriteError::MissingField(af)),
    }
}

/// Sets an IPv4 address (`af`: `Ipv4Src` or `Ipv4Dst`) to `a`, then a
/// TCP or UDP port (`pf`: `TcpSrc`, `TcpDst`, `UdpSrc` or `UdpDst`) to
/// `p`, as the two set-fields would one after the other (a NAT's
/// rewrite), with the checksum updates of both in one pass when both
/// take their fast paths (`fast_ipv4`, `fast_port`): the L4 checksum
/// gets the address's pseudo-header delta, then the port's, exactly as
/// the two would apply them. Any other case runs the two set-fields; the
/// result is the first error of the two.
#[inline]
pub fn set_ipv4_port(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    af: Field,
    a: u32,
    pf: Field,
    p: u16,
) -> Result<(), RewriteError> {
    if fast_ipv4_port(buf, key, af, a, pf, p) {
        Ok(())
    } else {
        set_ipv4_port_slow(buf, key, af, a, pf, p)
    }
}

/// The fast path of [`set_ipv4_port`]: false (nothing changed) when the
/// two set-fields must decide.
///
/// It takes the IPv4 header (20 bytes from `l3`) and the TCP or UDP
/// header up to its checksum as two arrays, so the reads and writes
/// below need no check of their own, and declines a packet where either
/// is cut short (or whose IP total length ends before the L4 checksum):
/// the two set-fields then do what they do with such a packet. The L4
/// checksum takes the address's pseudo-header delta and the port's delta
/// as one: their one's complement sum ([`checksum::add`]), applied once,
/// gives the value applying them one after the other gives (a fold's
/// result depends only on the sum, and the UDP "0 means none" mapping in
/// between cannot change it: see `fast_ipv4_port_checksum_edges` in the
/// property tests).
#[inline]
fn fast_ipv4_port(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    af: Field,
    a: u32,
    pf: Field,
    p: u16,
) -> bool {
    let Some(a_off) = ipv4_addr_offset(af) else {
        return false;
    };
    let p_off = match pf {
        Field::TcpSrc | Field::UdpSrc => 0,
        Field::TcpDst | Field::UdpDst => 2,
        _ => return false,
    };
    if key.depth < Layer::L4 || !key.has(af) || !key.has(pf) || key.eth_type != ethertype::IPV4 {
        return false;
    }
    // (checksum offset in the L4 header, 0 stored means "none")
    let (ck_off, udp) = match key.ip_proto {
        ipproto::TCP => (16, false),
        ipproto::UDP => (6, true),
        _ => return false,
    };
    let (l3, l4) = (usize::from(key.offsets.l3), usize::from(key.offsets.l4));
    if l3 == 0 || l4 + ck_off + 2 > usize::from(key.offsets.l3_end) {
        return false;
    }
    if !nat_ipv4_at(buf.data_mut(), l3, l4, udp, a_off, a, p_off, p) {
        return false;
    }
    if a_off == 12 {
        key.ipv4_src = a;
    } else {
        key.ipv4_dst = a;
    }
    if p_off == 0 {
        key.tp_src = p;
    } else {
        key.tp_dst = p;
    }
    true
}

/// [`set_ipv4_port`] as two set-fields (kept out of line).
#[inline(never)]
fn set_ipv4_port_slow(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    af: Field,
    a: u32,
    pf: Field,
    p: u16,
) -> Result<(), RewriteError> {
    let run = |buf: &mut PacketBuf, key: &mut FlowKey, sf: Option<SetField>| match sf {
        Some(sf) => set_field_ref(buf, key, &sf),
        None => Err(RewriteError::MissingField(af)),
    };
    let x = run(buf, key, SetField::from_value(af, &a.to_be_bytes()));
    let y = run(buf, key, SetField::from_value(pf, &p.to_be_bytes()));
    x.and(y)
}

/// Fast path of `set_field` for `ipv4_src` (`off` 12) or `ipv4_dst`
/// (16): the address, the header checksum and the TCP/UDP checksum
/// (pseudo-header). The IPv4 header is taken as one 20-byte array (the
/// address and the header checksum then need no check of their own); a
/// packet cut inside it is left to the general path.
#[inline]
fn fast_ipv4(buf: &mut PacketBuf, key: &mut FlowKey, off: usize, a: u32) -> bool {
    let f = if off == 12 {
        Field::Ipv4Src
    } else {
        Field::Ipv4Dst
    };
    let l3 = usize::from(key.offsets.l3);
    if key.depth < Layer::L3 || !key.has(f) || key.eth_type != ethertype::IPV4 || l3 == 0 {
        return false;
    }
    let l4 = l4_ck(key, true).map(|ck| (ck.at, ck.zero_is_none));
    if !ipv4_addr_at(buf.data_mut(), l3, off, a, l4) {
        return false;
    }
    if off == 12 {
        key.ipv4_src = a;
    } else {
        key.ipv4_dst = a;
    }
    true
}

/// Fast path of `set_field` for a TCP or UDP source (`off` 0) or
/// destination (2) port and its checksum.
#[inline]
fn fast_port(buf: &mut PacketBuf, key: &mut FlowKey, f: Field, off: usize, p: u16) -> bool {
    if key.depth < Layer::L4 || !key.has(f) {
        return false;
    }
    let at = usize::from(key.offsets.l4) + off;
    let ck = l4_ck(key, false);
    let d = buf.data_mut();
    let Some(old) = swap_at(d, at, p.to_be_bytes()) else {
        return false;
    };
    if let Some(ck) = ck {
        apply_even(d, ck, checksum::delta16(u16::from_be_bytes(old), p));
    }
    if off == 0 {
        key.tp_src = p;
    } else {
        key.tp_dst = p;
    }
    true
}
