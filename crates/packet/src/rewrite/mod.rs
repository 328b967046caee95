//! Header rewrites: set-field, push/pop of VLAN, MPLS and PBB headers, and
//! the TTL actions of OpenFlow 1.3.5.
//!
//! Every rewrite takes the packet buffer and its [`FlowKey`], uses the layer
//! offsets in the key instead of parsing again, and leaves the key
//! describing the rewritten packet: set-field updates the key in place;
//! push/pop (which move headers) parse the packet again up to the depth the
//! key had. If the key was parsed only partly (`parse_to`), a rewrite first
//! continues the parse as far as it needs.
//!
//! Checksums are updated incrementally (RFC 1624): the IPv4 header checksum,
//! TCP/UDP/ICMPv6 checksums including their pseudo-header when an address
//! changes, ICMPv4. A UDP checksum of 0 means "none" and stays 0. SCTP's
//! CRC32c is recomputed over the SCTP packet. A rewrite that fails leaves
//! the packet and the key unchanged.

use crate::buf::{BufError, PacketBuf};
use crate::checksum;
use crate::field::{frag, Field};
use crate::key::{FlowKey, Layer, VID_PRESENT};
use crate::parse::{continue_to, parse_to};
use crate::proto::{ethertype, ipproto};
use thiserror::Error;

/// Why a rewrite was not done. The packet and key are unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RewriteError {
    #[error("the packet has no {0:?} field")]
    MissingField(Field),
    #[error("value out of range for {0:?}")]
    BadValue(Field),
    #[error("no VLAN tag to pop")]
    NoVlan,
    #[error("no MPLS label stack entry")]
    NoMpls,
    #[error("no PBB I-TAG to pop")]
    NoPbb,
    #[error("no IP header")]
    NoIp,
    #[error("no inner MPLS or IP header to copy the TTL to or from")]
    NoInnerTtl,
    /// Decrementing a TTL of 0 or 1: the packet must not be forwarded (the
    /// pipeline may send it to the controller with reason INVALID_TTL).
    #[error("TTL expired (was {0})")]
    TtlExpired(u8),
    #[error("ethertype {0:#06x} is not valid for this push")]
    BadEthertype(u16),
    #[error("cannot recompute the SCTP checksum of a fragment")]
    SctpFragment,
    #[error("header extends past the end of the packet")]
    Truncated,
    #[error("packet buffer: {0}")]
    Buf(#[from] BufError),
}

/// A set-field action's value, one variant per settable field. Values are
/// host-order integers; VIDs may carry the 0x1000 present bit (ignored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetField {
    EthDst([u8; 6]),
    EthSrc([u8; 6]),
    /// The ethertype after the VLAN tags (`FlowKey::offsets.eth_type`);
    /// the key is parsed again, as the layers after it change meaning.
    EthType(u16),
    VlanVid(u16),
    VlanPcp(u8),
    IpDscp(u8),
    IpEcn(u8),
    /// The IPv4 protocol (header checksum updated) or the IPv6 next
    /// header that names the upper layer (the last one of the extension
    /// header chain); the L4 header is left as it is and the key is
    /// parsed again.
    IpProto(u8),
    Ipv4Src(u32),
    Ipv4Dst(u32),
    TcpSrc(u16),
    TcpDst(u16),
    UdpSrc(u16),
    UdpDst(u16),
    SctpSrc(u16),
    SctpDst(u16),
    Icmpv4Type(u8),
    Icmpv4Code(u8),
    ArpOp(u16),
    ArpSpa(u32),
    ArpTpa(u32),
    ArpSha([u8; 6]),
    ArpTha([u8; 6]),
    Ipv6Src(u128),
    Ipv6Dst(u128),
    Ipv6Flabel(u32),
    Icmpv6Type(u8),
    Icmpv6Code(u8),
    Ipv6NdTarget(u128),
    Ipv6NdSll([u8; 6]),
    Ipv6NdTll([u8; 6]),
    MplsLabel(u32),
    MplsTc(u8),
    MplsBos(u8),
    PbbIsid(u32),
    /// Pipeline field: only the key changes.
    TunnelId(u64),
}

impl SetField {
    /// The field this action sets.
    pub fn field(&self) -> Field {
        use SetField::*;
        match self {
            EthDst(_) => Field::EthDst,
            EthSrc(_) => Field::EthSrc,
            EthType(_) => Field::EthType,
            VlanVid(_) => Field::VlanVid,
            VlanPcp(_) => Field::VlanPcp,
            IpDscp(_) => Field::IpDscp,
            IpEcn(_) => Field::IpEcn,
            IpProto(_) => Field::IpProto,
            Ipv4Src(_) => Field::Ipv4Src,
            Ipv4Dst(_) => Field::Ipv4Dst,
            TcpSrc(_) => Field::TcpSrc,
            TcpDst(_) => Field::TcpDst,
            UdpSrc(_) => Field::UdpSrc,
            UdpDst(_) => Field::UdpDst,
            SctpSrc(_) => Field::SctpSrc,
            SctpDst(_) => Field::SctpDst,
            Icmpv4Type(_) => Field::Icmpv4Type,
            Icmpv4Code(_) => Field::Icmpv4Code,
            ArpOp(_) => Field::ArpOp,
            ArpSpa(_) => Field::ArpSpa,
            ArpTpa(_) => Field::ArpTpa,
            ArpSha(_) => Field::ArpSha,
            ArpTha(_) => Field::ArpTha,
            Ipv6Src(_) => Field::Ipv6Src,
            Ipv6Dst(_) => Field::Ipv6Dst,
            Ipv6Flabel(_) => Field::Ipv6Flabel,
            Icmpv6Type(_) => Field::Icmpv6Type,
            Icmpv6Code(_) => Field::Icmpv6Code,
            Ipv6NdTarget(_) => Field::Ipv6NdTarget,
            Ipv6NdSll(_) => Field::Ipv6NdSll,
            Ipv6NdTll(_) => Field::Ipv6NdTll,
            MplsLabel(_) => Field::MplsLabel,
            MplsTc(_) => Field::MplsTc,
            MplsBos(_) => Field::MplsBos,
            PbbIsid(_) => Field::PbbIsid,
            TunnelId(_) => Field::TunnelId,
        }
    }

    /// Builds a set-field from a field and its big-endian value (the OXM
    /// payload without mask). `None` if the field is not settable or the
    /// value has the wrong width.
    pub fn from_value(field: Field, value: &[u8]) -> Option<SetField> {
        if value.len() != field.width() {
            return None;
        }
        let n = value.iter().fold(0u128, |a, &b| (a << 8) | u128::from(b));
        let mac = || <[u8; 6]>::try_from(value).ok();
        use SetField as S;
        Some(match field {
            Field::EthDst => S::EthDst(mac()?),
            Field::EthSrc => S::EthSrc(mac()?),
            Field::EthType => S::EthType(n as u16),
            Field::VlanVid => S::VlanVid(n as u16),
            Field::VlanPcp => S::VlanPcp(n as u8),
            Field::IpDscp => S::IpDscp(n as u8),
            Field::IpEcn => S::IpEcn(n as u8),
            Field::IpProto => S::IpProto(n as u8),
            Field::Ipv4Src => S::Ipv4Src(n as u32),
            Field::Ipv4Dst => S::Ipv4Dst(n as u32),
            Field::TcpSrc => S::TcpSrc(n as u16),
            Field::TcpDst => S::TcpDst(n as u16),
            Field::UdpSrc => S::UdpSrc(n as u16),
            Field::UdpDst => S::UdpDst(n as u16),
            Field::SctpSrc => S::SctpSrc(n as u16),
            Field::SctpDst => S::SctpDst(n as u16),
            Field::Icmpv4Type => S::Icmpv4Type(n as u8),
            Field::Icmpv4Code => S::Icmpv4Code(n as u8),
            Field::ArpOp => S::ArpOp(n as u16),
            Field::ArpSpa => S::ArpSpa(n as u32),
            Field::ArpTpa => S::ArpTpa(n as u32),
            Field::ArpSha => S::ArpSha(mac()?),
            Field::ArpTha => S::ArpTha(mac()?),
            Field::Ipv6Src => S::Ipv6Src(n),
            Field::Ipv6Dst => S::Ipv6Dst(n),
            Field::Ipv6Flabel => S::Ipv6Flabel(n as u32),
            Field::Icmpv6Type => S::Icmpv6Type(n as u8),
            Field::Icmpv6Code => S::Icmpv6Code(n as u8),
            Field::Ipv6NdTarget => S::Ipv6NdTarget(n),
            Field::Ipv6NdSll => S::Ipv6NdSll(mac()?),
            Field::Ipv6NdTll => S::Ipv6NdTll(mac()?),
            Field::MplsLabel => S::MplsLabel(n as u32),
            Field::MplsTc => S::MplsTc(n as u8),
            Field::MplsBos => S::MplsBos(n as u8),
            Field::PbbIsid => S::PbbIsid(n as u32),
            Field::TunnelId => S::TunnelId(n as u64),
            _ => return None,
        })
    }
}

/// Makes sure the key was parsed at least up to `layer`.
#[inline]
fn ensure(buf: &PacketBuf, key: &mut FlowKey, layer: Layer) {
    if key.depth < layer {
        // Errors are recorded by the missing present bits.
        let _ = continue_to(buf.data(), key, layer);
    }
}

/// Parses the packet again up to the depth the key had (at least L2),
/// keeping the pipeline fields. Push/pop actions call this.
pub fn reparse(buf: &PacketBuf, key: &mut FlowKey) {
    let depth = key.depth.max(Layer::L2);
    let _ = parse_to(buf.data(), key, depth);
}

/// A checksum to keep up to date while patching bytes: the checksum field
/// is at `at`; `base` is the start of the summed region (for byte parity);
/// `zero_is_none`: a stored 0 means "no checksum" (UDP) and is kept.
#[derive(Clone, Copy)]
struct Ck {
    at: usize,
    base: usize,
    zero_is_none: bool,
}

fn be16_at(d: &[u8], off: usize) -> Option<u16> {
    d.get(off..)?
        .first_chunk::<2>()
        .map(|a| u16::from_be_bytes(*a))
}

fn be32_at(d: &[u8], off: usize) -> Option<u32> {
    d.get(off..)?
        .first_chunk::<4>()
        .map(|a| u32::from_be_bytes(*a))
}

/// Puts `new` at `off` and returns the bytes that were there; `None`
/// (nothing written) when the packet ends before `off + N`.
#[inline]
fn swap_at<const N: usize>(d: &mut [u8], off: usize, new: [u8; N]) -> Option<[u8; N]> {
    let dst = d.get_mut(off..)?.first_chunk_mut::<N>()?;
    Some(std::mem::replace(dst, new))
}

/// Writes `new` at `off` and updates the checksums in `cks` (those that are
/// inside the packet). `N` is a constant so copies and sums are unrolled.
#[inline]
fn patch<const N: usize>(
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
fn ip_ck(key: &FlowKey) -> Option<Ck> {
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
fn l4_ck(key: &FlowKey, pseudo: bool) -> Option<Ck> {
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
fn sctp_fix(d: &mut [u8], key: &FlowKey) {
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

/// Writes both MAC addresses of an Ethernet header (`h`: its first 12
/// bytes) in one go: the frame half of [`set_macs`], which the route
/// template (`pipeline`) also uses on frames it has no key for.
#[inline(always)]
pub fn write_macs(h: &mut [u8; 12], dst: &[u8; 6], src: &[u8; 6]) {
    let (d, s) = h.split_at_mut(6);
    d.copy_from_slice(dst);
    s.copy_from_slice(src);
}

/// Lowers the TTL of an IPv4 header (`h`: its first 12 bytes) from `ttl`
/// (above 1) by one and updates the header checksum: the frame half of
/// [`dec_nw_ttl`]'s fast path. The TTL and the checksum are one 16-bit
/// word apart, and lowering the TTL by one changes the header's sum by
/// `-0x0100` (RFC 1624 eqn. 3 with a constant delta `0xfeff`). Returns
/// the new TTL.
#[inline(always)]
pub fn ipv4_ttl_down(h: &mut [u8; 12], ttl: u8) -> u8 {
    let ttl = ttl.wrapping_sub(1);
    h[8] = ttl;
    let hc = u16::from_be_bytes([h[10], h[11]]);
    [h[10], h[11]] = checksum::apply_delta(hc, 0xfeff).to_be_bytes();
    ttl
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

/// The bytes [`set_ipv4_port`]'s fast path writes, on a frame whose
/// IPv4 header (20 bytes at least) starts at `l3` and whose TCP (`udp`
/// false) or UDP header starts at `l4`, within the datagram up to its
/// checksum (the caller checked): the address at `a_off` in the IP header
/// (12 source, 16 destination) becomes `a` with the header checksum
/// updated, the port at `p_off` in the L4 header (0 source, 2
/// destination) becomes `p`, and the L4 checksum takes both deltas in one
/// (a UDP checksum 0, "none", stays 0; one that would become 0 is written
/// 0xffff). False, with nothing written, when the frame is too short for
/// either header (the callers' checks make that impossible).
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

/// Updates the checksum `ck` for a change of one's complement sum
/// `delta` at an even position of its region (the fast paths' fields all
/// are). Skipped when the field is not in the packet, as in `patch`.
#[inline]
fn apply_even(d: &mut [u8], ck: Ck, delta: u16) {
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

/// The bytes [`set_field`]'s fast path for an IPv4 address writes, on a
/// frame whose IPv4 header starts at `l3`: the address at `off` in it
/// (12 source, 16 destination) becomes `a` with the header checksum
/// updated, and the TCP or UDP checksum at `l4_ck` (its offset in the
/// frame and whether a stored 0 means "none", as for UDP), if any, takes
/// the pseudo-header's delta. False, with nothing written, when the frame
/// ends inside the 20 bytes of the IP header.
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

/// [`set_field`] for every field, without the fast paths.
pub fn set_field_general(
    buf: &mut PacketBuf,
    key: &mut FlowKey,
    sf: SetField,
) -> Result<(), RewriteError> {
    use SetField as S;
    let f = sf.field();
    if let S::TunnelId(v) = sf {
        key.set_tunnel_id(v);
        return Ok(());
    }
    ensure(buf, key, f.layer());
    if !key.has(f) {
        return Err(RewriteError::MissingField(f));
    }
    let d = buf.data_mut();
    let o = key.offsets;
    let l3 = usize::from(o.l3);
    let l4 = usize::from(o.l4);
    let v6 = key.eth_type == ethertype::IPV6;
    let bad = Err(RewriteError::BadValue(f));
    match sf {
        S::EthDst(m) => {
            patch(d, 0, &m, &[])?;
            key.eth_dst = m;
        }
        S::EthSrc(m) => {
            patch(d, 6, &m, &[])?;
            key.eth_src = m;
        }
        S::EthType(t) => {
            // Below 0x0600 the two bytes would be an 802.3 length.
            if t < 0x0600 {
                return bad;
            }
            patch(d, usize::from(o.eth_type), &t.to_be_bytes(), &[])?;
            reparse(buf, key);
        }
        S::VlanVid(vid) => {
            if o.vlan_tags == 0 {
                return Err(RewriteError::NoVlan);
            }
            let tci = be16_at(d, 14).ok_or(RewriteError::Truncated)?;
            let tci = (tci & 0xf000) | (vid & 0x0fff);
            patch(d, 14, &tci.to_be_bytes(), &[])?;
            key.vlan_vid = (vid & 0x0fff) | VID_PRESENT;
        }
        S::VlanPcp(pcp) => {
            if pcp > 7 {
                return bad;
            }
            let tci = be16_at(d, 14).ok_or(RewriteError::Truncated)?;
            let tci = (tci & 0x1fff) | (u16::from(pcp) << 13);
            patch(d, 14, &tci.to_be_bytes(), &[])?;
            key.vlan_pcp = pcp;
        }
        S::IpDscp(dscp) => {
            if dscp > 63 {
                return bad;
            }
            set_tos(d, key, l3, v6, (dscp << 2) | key.ip_ecn)?;
            key.ip_dscp = dscp;
        }
        S::IpEcn(ecn) => {
            if ecn > 3 {
                return bad;
            }
            set_tos(d, key, l3, v6, (key.ip_dscp << 2) | ecn)?;
            key.ip_ecn = ecn;
        }
        S::IpProto(p) => {
            if v6 {
                let at = ipv6_upper_nh_at(d, l3, usize::from(o.l3_end))?;
                patch(d, at, &[p], &[])?;
            } else {
                patch(d, l3 + 9, &[p], &[ip_ck(key)])?;
            }
            reparse(buf, key);
        }
        S::Ipv4Src(a) => {
            patch(
                d,
                l3 + 12,
                &a.to_be_bytes(),
                &[ip_ck(key), l4_ck(key, true)],
            )?;
            key.ipv4_src = a;
        }
        S::Ipv4Dst(a) => {
            patch(
                d,
                l3 + 16,
                &a.to_be_bytes(),
                &[ip_ck(key), l4_ck(key, true)],
            )?;
            key.ipv4_dst = a;
        }
        S::Ipv6Src(a) => {
            patch(d, l3 + 8, &a.to_be_bytes(), &[l4_ck(key, true)])?;
            key.ipv6_src = a;
        }
        S::Ipv6Dst(a) => {
            patch(d, l3 + 24, &a.to_be_bytes(), &[l4_ck(key, true)])?;
            key.ipv6_dst = a;
        }
        S::Ipv6Flabel(fl) => {
            if fl > 0x000f_ffff {
                return bad;
            }
            let w = be32_at(d, l3).ok_or(RewriteError::Truncated)?;
            patch(d, l3, &((w & 0xfff0_0000) | fl).to_be_bytes(), &[])?;
            key.ipv6_flabel = fl;
        }
        S::TcpSrc(p) | S::UdpSrc(p) => {
            patch(d, l4, &p.to_be_bytes(), &[l4_ck(key, false)])?;
            key.tp_src = p;
        }
        S::TcpDst(p) | S::UdpDst(p) => {
            patch(d, l4 + 2, &p.to_be_bytes(), &[l4_ck(key, false)])?;
            key.tp_dst = p;
        }
        S::SctpSrc(p) | S::SctpDst(p) => {
            if key.ip_frag & frag::FRAGMENT != 0 {
                return Err(RewriteError::SctpFragment);
            }
            let at = if matches!(sf, S::SctpSrc(_)) {
                l4
            } else {
                l4 + 2
            };
            patch(d, at, &p.to_be_bytes(), &[])?;
            sctp_fix(d, key);
            if at == l4 {
                key.tp_src = p;
            } else {
                key.tp_dst = p;
            }
        }
        S::Icmpv4Type(t) | S::Icmpv6Type(t) => {
            patch(d, l4, &[t], &[l4_ck(key, false)])?;
            key.icmp_type = t;
            if v6 {
                // ND fields depend on the type.
                reparse(buf, key);
            }
        }
        S::Icmpv4Code(c) | S::Icmpv6Code(c) => {
            patch(d, l4 + 1, &[c], &[l4_ck(key, false)])?;
            key.icmp_code = c;
            if v6 {
                reparse(buf, key);
            }
        }
        S::ArpOp(op) => {
            patch(d, l3 + 6, &op.to_be_bytes(), &[])?;
            key.arp_op = op;
        }
        S::ArpSha(m) => {
            patch(d, l3 + 8, &m, &[])?;
            key.arp_sha = m;
        }
        S::ArpSpa(a) => {
            patch(d, l3 + 14, &a.to_be_bytes(), &[])?;
            key.arp_spa = a;
        }
        S::ArpTha(m) => {
            patch(d, l3 + 18, &m, &[])?;
            key.arp_tha = m;
        }
        S::ArpTpa(a) => {
            patch(d, l3 + 24, &a.to_be_bytes(), &[])?;
            key.arp_tpa = a;
        }
        S::Ipv6NdTarget(t) => {
            patch(d, l4 + 8, &t.to_be_bytes(), &[l4_ck(key, false)])?;
            key.nd_target = t;
        }
        S::Ipv6NdSll(m) => {
            patch(d, usize::from(o.nd_sll), &m, &[l4_ck(key, false)])?;
            key.nd_sll = m;
        }
        S::Ipv6NdTll(m) => {
            patch(d, usize::from(o.nd_tll), &m, &[l4_ck(key, false)])?;
            key.nd_tll = m;
        }
        S::MplsLabel(_) | S::MplsTc(_) | S::MplsBos(_) => {
            let at = usize::from(o.mpls);
            let w = be32_at(d, at).ok_or(RewriteError::Truncated)?;
            let w = match sf {
                S::MplsLabel(l) if l <= 0x000f_ffff => {
                    key.mpls_label = l;
                    (w & 0xfff) | (l << 12)
                }
                S::MplsTc(tc) if tc <= 7 => {
                    key.mpls_tc = tc;
                    (w & !(7 << 9)) | (u32::from(tc) << 9)
                }
                S::MplsBos(b) if b <= 1 => {
                    key.mpls_bos = b;
                    (w & !(1 << 8)) | (u32::from(b) << 8)
                }
                _ => return bad,
            };
            patch(d, at, &w.to_be_bytes(), &[])?;
        }
        S::PbbIsid(isid) => {
            if isid > 0x00ff_ffff {
                return bad;
            }
            let at = usize::from(o.pbb);
            let w = be32_at(d, at).ok_or(RewriteError::Truncated)?;
            patch(d, at, &((w & 0xff00_0000) | isid).to_be_bytes(), &[])?;
            key.pbb_isid = isid;
        }
        S::TunnelId(_) => {}
    }
    Ok(())
}

/// Offset of the IPv6 next-header byte that names the upper layer: the
/// fixed header's, or that of the last extension header (hop-by-hop,
/// routing, fragment, destination options, authentication) the chain
/// goes through before `end`.
fn ipv6_upper_nh_at(d: &[u8], l3: usize, end: usize) -> Result<usize, RewriteError> {
    let mut at = l3 + 6;
    let mut hdr = l3 + 40;
    loop {
        let nh = *d.get(at).ok_or(RewriteError::Truncated)?;
        let len = match nh {
            ipproto::FRAGMENT => 8,
            ipproto::HOPOPTS | ipproto::ROUTING | ipproto::DSTOPTS => {
                (usize::from(*d.get(hdr + 1).ok_or(RewriteError::Truncated)?) + 1) * 8
            }
            ipproto::AH => (usize::from(*d.get(hdr + 1).ok_or(RewriteError::Truncated)?) + 2) * 4,
            _ => return Ok(at),
        };
        if hdr + 2 > end {
            return Ok(at);
        }
        at = hdr;
        hdr += len;
    }
}

/// Writes the IPv4 TOS byte / IPv6 traffic class.
fn set_tos(d: &mut [u8], key: &FlowKey, l3: usize, v6: bool, tos: u8) -> Result<(), RewriteError> {
    if v6 {
        let w = be16_at(d, l3).ok_or(RewriteError::Truncated)?;
        let w = (w & 0xf00f) | (u16::from(tos) << 4);
        patch(d, l3, &w.to_be_bytes(), &[])
    } else {
        patch(d, l3 + 1, &[tos], &[ip_ck(key)])
    }
}

/// Push VLAN: inserts a tag with TPID `tpid` (0x8100 or 0x88a8) after the
/// MAC addresses. Its VID and PCP are copied from the current outer tag,
/// or 0 if there is none (OpenFlow 1.3.5 §5.12 field copy rules).
pub fn push_vlan(buf: &mut PacketBuf, key: &mut FlowKey, tpid: u16) -> Result<(), RewriteError> {
    if !ethertype::is_vlan(tpid) {
        return Err(RewriteError::BadEthertype(tpid));
    }
    ensure(buf, key, Layer::L2);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let tci = if key.offsets.vlan_tags > 0 {
        be16_at(buf.data(), 14).ok_or(RewriteError::Truncated)? & 0xefff
    } else {
        0
    };
    let gap = buf.insert(12, 4)?;
    gap[..2].copy_from_slice(&tpid.to_be_bytes());
    gap[2..].copy_from_slice(&tci.to_be_bytes());
    reparse(buf, key);
    Ok(())
}

/// Pop VLAN: removes the outermost tag.
pub fn pop_vlan(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    if key.offsets.vlan_tags == 0 {
        return Err(RewriteError::NoVlan);
    }
    buf.remove(12, 4)?;
    if key.offsets.vlan_tags == 1 {
        // The only tag went: what follows it moved up 4 bytes unchanged,
        // so the key of a new parse is this one without the tag and with
        // every layer offset 4 less (cheaper than that parse; the property
        // tests compare the two).
        key.vlan_vid = 0;
        key.vlan_pcp = 0;
        key.present.remove(Field::VlanPcp);
        let o = &mut key.offsets;
        o.vlan_tags = 0;
        for off in [
            &mut o.eth_type,
            &mut o.mpls,
            &mut o.pbb,
            &mut o.l3,
            &mut o.l3_end,
            &mut o.l4,
            &mut o.payload,
            &mut o.nd_sll,
            &mut o.nd_tll,
        ] {
            *off = off.saturating_sub(4);
        }
    } else {
        reparse(buf, key);
    }
    Ok(())
}

/// TTL given to a pushed MPLS entry when there is neither an MPLS nor an
/// IP TTL to copy (OpenFlow 1.3.5 §5.12.1, push-tag field values: "0").
pub const DEFAULT_MPLS_TTL: u8 = 0;

/// Push MPLS: inserts a label stack entry after the Ethernet header and
/// VLAN tags and sets the ethertype to `etype` (0x8847 or 0x8848). Label,
/// TC and TTL are copied from the current outer MPLS entry if any (BoS 0);
/// otherwise label 0, TC 0, BoS 1 and the TTL comes from the IP TTL
/// ([`DEFAULT_MPLS_TTL`] if the packet is not IP).
pub fn push_mpls(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    if !ethertype::is_mpls(etype) {
        return Err(RewriteError::BadEthertype(etype));
    }
    ensure(buf, key, Layer::L3);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let lse = if key.has(Field::MplsLabel) {
        (key.mpls_label << 12) | (u32::from(key.mpls_tc) << 9) | u32::from(key.mpls_ttl)
    } else {
        let ttl = if key.has(Field::IpTtl) {
            key.ip_ttl
        } else {
            DEFAULT_MPLS_TTL
        };
        (1 << 8) | u32::from(ttl)
    };
    let et = usize::from(key.offsets.eth_type);
    let gap = buf.insert(et + 2, 4)?;
    gap.copy_from_slice(&lse.to_be_bytes());
    if let Some(t) = buf.data_mut().get_mut(et..et + 2) {
        t.copy_from_slice(&etype.to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Pop MPLS: removes the outermost label stack entry and sets the
/// ethertype to `etype`.
pub fn pop_mpls(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    let at = usize::from(key.offsets.mpls);
    if at == 0 {
        return Err(RewriteError::NoMpls);
    }
    buf.remove(at, 4)?;
    let et = usize::from(key.offsets.eth_type);
    if let Some(t) = buf.data_mut().get_mut(et..et + 2) {
        t.copy_from_slice(&etype.to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Push PBB: encapsulates the whole frame behind a new backbone header
/// `B-DA B-SA 0x88e7 I-TAG`. B-DA/B-SA are copied from the frame's
/// addresses, I-SID from an existing I-TAG (else 0), I-PCP from the outer
/// VLAN PCP (else 0); DEI and UCA are 0.
pub fn push_pbb(buf: &mut PacketBuf, key: &mut FlowKey, etype: u16) -> Result<(), RewriteError> {
    if etype != ethertype::PBB {
        return Err(RewriteError::BadEthertype(etype));
    }
    ensure(buf, key, Layer::L2);
    if !key.has(Field::EthType) {
        return Err(RewriteError::MissingField(Field::EthType));
    }
    let isid = if key.has(Field::PbbIsid) {
        key.pbb_isid
    } else {
        0
    };
    let pcp = if key.has(Field::VlanPcp) {
        u32::from(key.vlan_pcp)
    } else {
        0
    };
    buf.push_front(18)?;
    let d = buf.data_mut();
    d.copy_within(18..30, 0);
    if let Some(h) = d.get_mut(12..18) {
        h[..2].copy_from_slice(&etype.to_be_bytes());
        h[2..].copy_from_slice(&((pcp << 29) | isid).to_be_bytes());
    }
    reparse(buf, key);
    Ok(())
}

/// Pop PBB: removes the backbone header (B-DA, B-SA, any B-tags, the
/// ethertype and the I-TAG), leaving the customer frame.
pub fn pop_pbb(buf: &mut PacketBuf, key: &mut FlowKey) -> Result<(), RewriteError> {
    ensure(buf, key, Layer::L2);
    let at = usize::from(key.offsets.pbb);
    if at == 0 {
        return Err(RewriteError::NoPbb);
    }
    buf.pull_front(at + 4)?;
    reparse(buf, key);
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    /// Ethernet / IPv4 10.0.0.1 -> 10.0.0.2 TTL 64 / UDP 1234 -> 80 / "hi".
    const UDP4: [u8; 44] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45,
        0x00, 0x00, 0x1e, 0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xcc, 0x0a, 0x00, 0x00, 0x01,
        0x0a, 0x00, 0x00, 0x02, 0x04, 0xd2, 0x00, 0x50, 0x00, 0x0a, 0x7e, 0x4c, 0x68, 0x69,
    ];

    fn setup(b: &[u8]) -> (PacketBuf, FlowKey) {
        let buf = PacketBuf::from_slice(b);
        let mut key = FlowKey::new(1);
        let _ = parse(buf.data(), &mut key);
        (buf, key)
    }

    #[test]
    fn set_ipv4_src_updates_both_checksums() {
        let (mut buf, mut key) = setup(&UDP4);
        set_field(&mut buf, &mut key, SetField::Ipv4Src(0xc0a8_0101)).unwrap();
        let d = buf.data();
        assert_eq!(&d[26..30], &[192, 168, 1, 1]);
        assert_eq!(&d[24..26], &[0xaf, 0x23]); // IPv4 header checksum (scapy)
        assert_eq!(&d[40..42], &[0xc6, 0xa3]); // UDP checksum (scapy)
        assert_eq!(key.ipv4_src, 0xc0a8_0101);
    }

    #[test]
    fn dec_ttl() {
        let (mut buf, mut key) = setup(&UDP4);
        dec_nw_ttl(&mut buf, &mut key).unwrap();
        assert_eq!(&buf.data()[22..26], &[0x3f, 0x11, 0x67, 0xcc]);
        assert_eq!(key.ip_ttl, 63);
        set_nw_ttl(&mut buf, &mut key, 1).unwrap();
        let before = buf.clone();
        assert_eq!(
            dec_nw_ttl(&mut buf, &mut key),
            Err(RewriteError::TtlExpired(1))
        );
        assert_eq!(buf, before);
    }

    #[test]
    fn push_pop_vlan_moves_only_header() {
        let (mut buf, mut key) = setup(&UDP4);
        let payload_addr = buf.data()[14..].as_ptr() as usize;
        push_vlan(&mut buf, &mut key, ethertype::VLAN).unwrap();
        assert_eq!(&buf.data()[12..18], &[0x81, 0x00, 0x00, 0x00, 0x08, 0x00]);
        assert_eq!(buf.data()[18..].as_ptr() as usize, payload_addr);
        assert_eq!((key.vlan_vid, key.offsets.l3), (VID_PRESENT, 18));
        set_field(&mut buf, &mut key, SetField::VlanVid(0x1000 | 0xabc)).unwrap();
        set_field(&mut buf, &mut key, SetField::VlanPcp(5)).unwrap();
        assert_eq!(&buf.data()[14..16], &[0xaa, 0xbc]);
        assert_eq!(
            set_field(&mut buf, &mut key, SetField::VlanPcp(8)),
            Err(RewriteError::BadValue(Field::VlanPcp))
        );
        push_vlan(&mut buf, &mut key, ethertype::QINQ).unwrap();
        assert_eq!(
            &buf.data()[12..20],
            &[0x88, 0xa8, 0xaa, 0xbc, 0x81, 0x00, 0xaa, 0xbc]
        );
        pop_vlan(&mut buf, &mut key).unwrap();
        pop_vlan(&mut buf, &mut key).unwrap();
        assert_eq!(buf.data(), &UDP4[..]);
        assert_eq!(pop_vlan(&mut buf, &mut key), Err(RewriteError::NoVlan));
        let (_, fresh) = setup(&UDP4);
        assert_eq!(key, fresh);
    }

    #[test]
    fn mpls_push_pop_ttl() {
        let (mut buf, mut key) = setup(&UDP4);
        push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
        assert_eq!(&buf.data()[12..18], &[0x88, 0x47, 0x00, 0x00, 0x01, 0x40]);
        assert_eq!((key.mpls_ttl, key.mpls_bos), (64, 1));
        dec_mpls_ttl(&mut buf, &mut key).unwrap();
        copy_ttl_in(&mut buf, &mut key).unwrap();
        assert_eq!(buf.data()[18 + 8], 63);
        set_mpls_ttl(&mut buf, &mut key, 9).unwrap();
        copy_ttl_out(&mut buf, &mut key).unwrap();
        assert_eq!(key.mpls_ttl, 63);
        set_mpls_ttl(&mut buf, &mut key, 0).unwrap();
        assert_eq!(
            dec_mpls_ttl(&mut buf, &mut key),
            Err(RewriteError::TtlExpired(0))
        );
        pop_mpls(&mut buf, &mut key, ethertype::IPV4).unwrap();
        let mut want = UDP4;
        // TTL 63 with the IPv4 checksum adjusted.
        want[22] = 0x3f;
        want[24..26].copy_from_slice(&[0x67, 0xcc]);
        assert_eq!(buf.data(), &want[..]);
        assert_eq!(key.ip_ttl, 63);
    }

    #[test]
    fn pbb_push_pop() {
        let (mut buf, mut key) = setup(&UDP4);
        push_pbb(&mut buf, &mut key, ethertype::PBB).unwrap();
        assert_eq!(&buf.data()[..12], &UDP4[..12]);
        assert_eq!(&buf.data()[12..18], &[0x88, 0xe7, 0, 0, 0, 0]);
        assert_eq!(&buf.data()[18..], &UDP4[..]);
        set_field(&mut buf, &mut key, SetField::PbbIsid(0x10203)).unwrap();
        assert_eq!(key.pbb_isid, 0x10203);
        pop_pbb(&mut buf, &mut key).unwrap();
        assert_eq!(buf.data(), &UDP4[..]);
        assert_eq!(
            push_pbb(&mut buf, &mut key, 0x8100),
            Err(RewriteError::BadEthertype(0x8100))
        );
    }

    #[test]
    fn missing_fields_and_bad_values() {
        let (mut buf, mut key) = setup(&UDP4);
        assert_eq!(
            set_field(&mut buf, &mut key, SetField::TcpSrc(1)),
            Err(RewriteError::MissingField(Field::TcpSrc))
        );
        assert_eq!(
            set_field(&mut buf, &mut key, SetField::Ipv6Src(1)),
            Err(RewriteError::MissingField(Field::Ipv6Src))
        );
        assert_eq!(
            set_field(&mut buf, &mut key, SetField::IpDscp(64)),
            Err(RewriteError::BadValue(Field::IpDscp))
        );
        assert_eq!(
            pop_mpls(&mut buf, &mut key, 0x800),
            Err(RewriteError::NoMpls)
        );
        assert_eq!(copy_ttl_out(&mut buf, &mut key), Err(RewriteError::NoMpls));
        assert_eq!(buf.data(), &UDP4[..]);
        set_field(&mut buf, &mut key, SetField::TunnelId(77)).unwrap();
        assert!(key.has(Field::TunnelId));
    }

    #[test]
    fn lazy_key_is_completed_by_rewrite() {
        let buf0 = PacketBuf::from_slice(&UDP4);
        let mut buf = buf0.clone();
        let mut key = FlowKey::new(1);
        parse_to(buf.data(), &mut key, Layer::L2).unwrap();
        set_field(&mut buf, &mut key, SetField::UdpDst(53)).unwrap();
        assert_eq!(key.tp_dst, 53);
        assert_eq!(&buf.data()[36..38], &[0, 53]);
        let mut d = buf.data().to_vec();
        recompute_checksums(&mut d, &key);
        assert_eq!(d, buf.data());
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn set_sctp_port_recomputes_crc32c() {
        // scapy: Ether/IP/SCTP(sport=1234, then 4321, dport=80)/DATA "hello".
        let a = hex("020000000002020000000001080045000038000100004084663f0a0000010a00000204d2005000000000edace60a0000001500000000000000000000000068656c6c6f000000");
        let b = hex("020000000002020000000001080045000038000100004084663f0a0000010a00000210e1005000000000dd48b2ad0000001500000000000000000000000068656c6c6f000000");
        let (mut buf, mut key) = setup(&a);
        set_field(&mut buf, &mut key, SetField::SctpSrc(4321)).unwrap();
        assert_eq!(buf.data(), &b[..]);
        assert_eq!(key.tp_src, 4321);
        set_field(&mut buf, &mut key, SetField::SctpDst(80)).unwrap();
        assert_eq!(buf.data(), &b[..]);
        set_field(&mut buf, &mut key, SetField::SctpSrc(1234)).unwrap();
        assert_eq!(buf.data(), &a[..]);
    }

    #[test]
    fn set_eth_type_rewrites_the_ethertype_after_the_tags() {
        let (mut buf, mut key) = setup(&UDP4);
        push_vlan(&mut buf, &mut key, ethertype::VLAN).unwrap();
        set_field(&mut buf, &mut key, SetField::EthType(0x86dd)).unwrap();
        assert_eq!(&buf.data()[12..18], &[0x81, 0x00, 0x00, 0x00, 0x86, 0xdd]);
        assert_eq!(key.eth_type, 0x86dd);
        // No longer parsed as IPv4.
        assert!(!key.has(Field::Ipv4Src));
        let before = buf.clone();
        assert_eq!(
            set_field(&mut buf, &mut key, SetField::EthType(0x05ff)),
            Err(RewriteError::BadValue(Field::EthType))
        );
        assert_eq!(buf, before);
        set_field(&mut buf, &mut key, SetField::EthType(0x0800)).unwrap();
        pop_vlan(&mut buf, &mut key).unwrap();
        assert_eq!(buf.data(), &UDP4[..]);
        let (_, fresh) = setup(&UDP4);
        assert_eq!(key, fresh);
    }

    #[test]
    fn set_ip_proto_v4_updates_the_header_checksum() {
        // scapy: IP(proto=6)/TCP bytes, and the same with proto=17.
        let a = hex("02000000000202000000000108004500002800010000400666cd0a0000010a0000020001000200000000000000005002200000000000");
        let b = hex("02000000000202000000000108004500002800010000401166c20a0000010a0000020001000200000000000000005002200000000000");
        let (mut buf, mut key) = setup(&a);
        assert_eq!(key.ip_proto, ipproto::TCP);
        set_field(&mut buf, &mut key, SetField::IpProto(ipproto::UDP)).unwrap();
        assert_eq!(buf.data(), &b[..]);
        let (_, fresh) = setup(&b);
        assert_eq!(key, fresh);
        assert_eq!(key.ip_proto, ipproto::UDP);
    }

    #[test]
    fn set_ip_proto_v6_rewrites_the_last_next_header() {
        // scapy: IPv6(nh=0)/HopByHop(nh=44)/Fragment(nh=17)/UDP 1 -> 2 "xy".
        let a = hex("02000000000202000000000186dd60000000001a004000000000000000000000000000000001000000000000000000000000000000022c00010400000000110000000000000700010002000a00007879");
        let (mut buf, mut key) = setup(&a);
        assert_eq!((key.ip_proto, key.tp_dst), (ipproto::UDP, 2));
        set_field(&mut buf, &mut key, SetField::IpProto(ipproto::TCP)).unwrap();
        let mut want = a.clone();
        want[14 + 40 + 8] = ipproto::TCP;
        assert_eq!(buf.data(), &want[..]);
        assert_eq!(key.ip_proto, ipproto::TCP);
        // Without extension headers: the fixed header's next header.
        let (mut buf, mut key) = setup(&a);
        set_field(&mut buf, &mut key, SetField::IpProto(ipproto::HOPOPTS)).unwrap();
        assert_eq!(buf.data()[20], ipproto::HOPOPTS);
    }

    #[test]
    fn push_mpls_ttl_is_zero_without_ip_or_mpls() {
        // An ARP request: neither an IP nor an MPLS TTL to copy.
        let arp = hex("ffffffffffff0200000000010806000108000604000102000000000100000000000000000000000a000002");
        let (mut buf, mut key) = setup(&arp);
        push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
        assert_eq!(&buf.data()[12..18], &[0x88, 0x47, 0x00, 0x00, 0x01, 0x00]);
        assert_eq!((key.mpls_ttl, key.mpls_bos), (0, 1));
        // A second push copies the outer entry's TTL (BoS 0).
        set_mpls_ttl(&mut buf, &mut key, 9).unwrap();
        push_mpls(&mut buf, &mut key, ethertype::MPLS).unwrap();
        assert_eq!(&buf.data()[14..18], &[0x00, 0x00, 0x00, 0x09]);
    }

    #[test]
    fn set_field_from_value() {
        assert_eq!(
            SetField::from_value(Field::Ipv4Src, &[1, 2, 3, 4]),
            Some(SetField::Ipv4Src(0x0102_0304))
        );
        assert_eq!(SetField::from_value(Field::Ipv4Src, &[1, 2, 3]), None);
        assert_eq!(
            SetField::from_value(Field::EthType, &[8, 0]),
            Some(SetField::EthType(0x0800))
        );
        assert_eq!(SetField::from_value(Field::InPort, &[0, 0, 0, 1]), None);
        assert_eq!(
            SetField::from_value(Field::PbbIsid, &[1, 2, 3]),
            Some(SetField::PbbIsid(0x010203))
        );
        for f in crate::field::Field::ALL {
            let v = vec![0u8; f.width()];
            if let Some(sf) = SetField::from_value(f, &v) {
                assert_eq!(sf.field(), f);
            }
        }
    }
}
