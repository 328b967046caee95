//! Packet parser: fills a [`FlowKey`] from frame bytes.
//!
//! The parser goes layer by layer (L2: Ethernet, VLAN tags, MPLS, PBB; L3:
//! IPv4, IPv6 with its extension headers, ARP; L4: TCP, UDP, SCTP, ICMPv4,
//! ICMPv6 with neighbor discovery) and can stop after any layer
//! ([`parse_to`]) and resume later ([`continue_to`]), so a pipeline whose
//! tables only match on L2 never touches L3.
//!
//! Malformed or truncated packets are parsed as far as they are valid: the
//! fields read so far stay in the key (with their present bits) and the
//! result says at which layer and why parsing stopped. The parser only reads
//! through bounds-checked accessors and never panics.
//!
//! This runs once per packet, so it is written for the CPU: each layer's
//! parser hands where the next layer starts to the next parser as a return
//! value (`L3At`, `L4At`) instead of storing it to the key and loading
//! it back, the present bits are gathered in a register and stored once,
//! fields that lookups read together as one word are stored as one word
//! (a load spanning two stores in flight waits for them), and the rare
//! protocols (VLAN tags, MPLS, PBB, IPv6, ARP, ND) are out of line so that
//! the IPv4 TCP/UDP path stays short.

use crate::field::{exthdr, frag, Field, FieldSet};
use crate::key::{FlowKey, Layer, VID_PRESENT};
use crate::proto::{ethertype, ipproto, nd};
use thiserror::Error;

/// At most this many VLAN tags are skipped before giving up.
pub const MAX_VLAN_TAGS: u8 = 8;
/// At most this many IPv6 extension headers are walked.
pub const MAX_EXT_HEADERS: usize = 12;

/// Why parsing stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The frame ends inside a header.
    Truncated,
    /// IP version field does not match the ethertype.
    BadVersion,
    /// A header length field is too small or points past the end
    /// (IPv4 IHL < 5, TCP data offset < 5 or past the datagram).
    BadHeaderLength,
    /// IPv4 total length / IPv6 payload length is smaller than the header
    /// or larger than the frame.
    BadTotalLength,
    /// An IPv6 extension header extends past the datagram.
    BadExtHeader,
    /// More than [`MAX_EXT_HEADERS`] IPv6 extension headers.
    TooManyExtHeaders,
    /// More than [`MAX_VLAN_TAGS`] VLAN tags.
    TooManyTags,
    /// An ND option with length 0 or past the end.
    BadNdOption,
}

impl Reason {
    /// Number of reasons (for counter arrays indexed by [`Reason::index`]).
    pub const COUNT: usize = 8;

    /// A dense index in `0..COUNT`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Where and why parsing stopped. The key holds every field read before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Error)]
#[error("packet parse stopped at {layer:?}: {reason:?}")]
pub struct ParseError {
    pub layer: Layer,
    pub reason: Reason,
}

/// `Ok` if every requested layer parsed cleanly.
pub type ParseResult = Result<(), ParseError>;

#[inline]
fn err(layer: Layer, reason: Reason) -> ParseError {
    ParseError { layer, reason }
}

#[inline]
fn be16(b: &[u8], off: usize) -> Option<u16> {
    b.get(off..)?
        .first_chunk::<2>()
        .map(|a| u16::from_be_bytes(*a))
}

#[inline]
fn mac(b: &[u8; 6]) -> [u8; 6] {
    *b
}

/// Parses the whole packet (L2 to L4) into `key`, keeping its pipeline
/// fields.
#[inline]
pub fn parse(buf: &[u8], key: &mut FlowKey) -> ParseResult {
    parse_to(buf, key, Layer::L4)
}

/// Parses the packet up to and including `layer`.
#[inline]
pub fn parse_to(buf: &[u8], key: &mut FlowKey, layer: Layer) -> ParseResult {
    key.reset_packet_fields();
    continue_to(buf, key, layer)
}

/// What the L2 parser tells the L3 parser: where the L3 header starts and
/// what it is. The same as `key.offsets.l3` and `key.eth_type` after L2,
/// but handed over in registers: loading them back from the key right
/// after storing them would put a store-to-load round trip in front of
/// every L3 header read.
#[derive(Clone, Copy)]
struct L3At {
    /// Offset of the IPv4/IPv6/ARP header; 0 when there is none.
    l3: usize,
    eth_type: u16,
}

impl L3At {
    /// Where a parse that stopped after L2 resumes.
    #[inline]
    fn of(k: &FlowKey) -> L3At {
        L3At {
            l3: usize::from(k.offsets.l3),
            eth_type: k.eth_type,
        }
    }
}

/// What the L3 parser tells the L4 parser, in registers for the same
/// reason as [`L3At`]: `key.offsets.l4`, `key.offsets.l3_end`,
/// `key.ip_proto` and whether the ethertype is IPv4 (ICMPv4 or ICMPv6).
#[derive(Clone, Copy)]
struct L4At {
    /// Offset of the L4 header; 0 when there is none.
    l4: usize,
    /// End of the IP datagram.
    end: usize,
    proto: u8,
    ipv4: bool,
}

impl L4At {
    /// Where a parse that stopped after L3 resumes.
    #[inline]
    fn of(k: &FlowKey) -> L4At {
        L4At {
            l4: usize::from(k.offsets.l4),
            end: usize::from(k.offsets.l3_end),
            proto: k.ip_proto,
            ipv4: k.eth_type == ethertype::IPV4,
        }
    }
}

/// Continues a parse that stopped at `key.depth` up to `layer` (no-op if it
/// already got there). `buf` must be the same packet.
pub fn continue_to(buf: &[u8], key: &mut FlowKey, layer: Layer) -> ParseResult {
    if key.depth >= layer {
        return Ok(());
    }
    // Offsets are u16: only the first 64 KiB of a frame are looked at.
    let buf = buf.get(..0xffff).unwrap_or(buf);
    // The present bits are gathered here and stored once, as one 8-byte
    // word: later code reads them as one word, and a word built by
    // several narrower read-modify-writes of the key would make it wait.
    let mut present = key.present;
    let r = parse_layers(buf, key, &mut present, key.depth, layer);
    key.present = present;
    // After an error nothing more can be learnt from this packet.
    key.depth = if r.is_ok() { layer } else { Layer::L4 };
    r
}

/// Runs the layer parsers after `from` up to `to` (`from < to`).
#[inline(always)]
fn parse_layers(
    buf: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    from: Layer,
    to: Layer,
) -> ParseResult {
    let l3 = match from {
        Layer::None => parse_l2(buf, k, p)?,
        Layer::L2 => L3At::of(k),
        Layer::L3 => return parse_l4(buf, k, p, L4At::of(k)),
        Layer::L4 => return Ok(()),
    };
    if to == Layer::L2 {
        return Ok(());
    }
    let l4 = parse_l3(buf, k, p, l3)?;
    if to == Layer::L3 {
        return Ok(());
    }
    parse_l4(buf, k, p, l4)
}

/// Calls an out-of-line parser (a rare protocol's) on a copy of the
/// present bits: handing it the caller's would give them an address and
/// keep them in memory on the common path too.
#[inline(always)]
fn out_of_line<T>(p: &mut FieldSet, f: impl FnOnce(&mut FieldSet) -> T) -> T {
    let mut q = *p;
    let r = f(&mut q);
    *p = q;
    r
}

/// The fields every Ethernet frame has once its header is complete.
const ETH_FIELDS: FieldSet =
    FieldSet::of(&[Field::EthDst, Field::EthSrc, Field::VlanVid, Field::EthType]);

#[inline(always)]
fn parse_l2(buf: &[u8], k: &mut FlowKey, p: &mut FieldSet) -> Result<L3At, ParseError> {
    let Some(eth) = buf.first_chunk::<14>() else {
        return Err(out_of_line(p, |p| short_ethernet(buf, k, p)));
    };
    // Stored as 4 + 2 bytes, the way `mac_bits` reads them back.
    k.eth_dst.copy_from_slice(&eth[0..6]);
    k.eth_src.copy_from_slice(&eth[6..12]);
    let mut off = 12usize;
    let mut et = u16::from_be_bytes([eth[12], eth[13]]);
    let mut tags = 0u8;
    if ethertype::is_vlan(et) {
        (off, et, tags) = out_of_line(p, |p| parse_vlan_tags(buf, k, p, et))?;
    }
    k.offsets.vlan_tags = tags;
    k.offsets.eth_type = off as u16;
    k.eth_type = et;
    p.insert_all(ETH_FIELDS);
    let next = off + 2;
    match et {
        ethertype::IPV4 | ethertype::IPV6 | ethertype::ARP => {
            k.offsets.l3 = next as u16;
            Ok(L3At {
                l3: next,
                eth_type: et,
            })
        }
        ethertype::MPLS | ethertype::MPLS_MCAST | ethertype::PBB => {
            out_of_line(p, |p| parse_l2_shim(buf, k, p, et, next))?;
            Ok(L3At {
                l3: 0,
                eth_type: et,
            })
        }
        _ => Ok(L3At {
            l3: 0,
            eth_type: et,
        }),
    }
}

/// A frame shorter than an Ethernet header: the MAC addresses it has.
#[cold]
#[inline(never)]
fn short_ethernet(buf: &[u8], k: &mut FlowKey, p: &mut FieldSet) -> ParseError {
    if let Some(d) = buf.first_chunk::<6>() {
        k.eth_dst = mac(d);
        p.insert(Field::EthDst);
    }
    if let Some(s) = buf.get(6..).and_then(|b| b.first_chunk::<6>()) {
        k.eth_src = mac(s);
        p.insert(Field::EthSrc);
    }
    err(Layer::L2, Reason::Truncated)
}

/// Walks the VLAN tags starting at offset 12 (ethertype `et`, a tag):
/// the offset and value of the ethertype after them, and their number.
#[inline(never)]
fn parse_vlan_tags(
    buf: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    mut et: u16,
) -> Result<(usize, u16, u8), ParseError> {
    // Whatever happens, the header up to the first tag is complete.
    p.insert_all(FieldSet::of(&[
        Field::EthDst,
        Field::EthSrc,
        Field::VlanVid,
    ]));
    let mut off = 12usize;
    let mut tags = 0u8;
    while ethertype::is_vlan(et) {
        if tags == MAX_VLAN_TAGS {
            return Err(err(Layer::L2, Reason::TooManyTags));
        }
        // TCI and the next ethertype.
        let Some(t) = buf.get(off + 2..).and_then(|b| b.first_chunk::<4>()) else {
            return Err(err(Layer::L2, Reason::Truncated));
        };
        let tci = u16::from_be_bytes([t[0], t[1]]);
        match tags {
            0 => {
                k.vlan_vid = (tci & 0x0fff) | VID_PRESENT;
                k.vlan_pcp = (tci >> 13) as u8;
                p.insert(Field::VlanPcp);
            }
            1 => {
                k.inner_vlan_vid = (tci & 0x0fff) | VID_PRESENT;
                k.inner_vlan_pcp = (tci >> 13) as u8;
                p.insert_all(FieldSet::of(&[Field::InnerVlanVid, Field::InnerVlanPcp]));
            }
            _ => {}
        }
        tags += 1;
        off += 4;
        et = u16::from_be_bytes([t[2], t[3]]);
    }
    Ok((off, et, tags))
}

/// The MPLS label stack entry or PBB I-TAG at `next` (ethertype `et`).
#[inline(never)]
fn parse_l2_shim(
    buf: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    et: u16,
    next: usize,
) -> ParseResult {
    let Some(t) = buf.get(next..).and_then(|b| b.first_chunk::<4>()) else {
        return Err(err(Layer::L2, Reason::Truncated));
    };
    let word = u32::from_be_bytes(*t);
    if ethertype::is_mpls(et) {
        k.mpls_label = word >> 12;
        k.mpls_tc = ((word >> 9) & 7) as u8;
        k.mpls_bos = ((word >> 8) & 1) as u8;
        k.mpls_ttl = word as u8;
        k.offsets.mpls = next as u16;
        p.insert_all(FieldSet::of(&[
            Field::MplsLabel,
            Field::MplsTc,
            Field::MplsBos,
            Field::MplsTtl,
        ]));
    } else {
        k.pbb_isid = word & 0x00ff_ffff;
        k.offsets.pbb = next as u16;
        p.insert(Field::PbbIsid);
    }
    Ok(())
}

#[inline(always)]
fn parse_l3(buf: &[u8], k: &mut FlowKey, p: &mut FieldSet, at: L3At) -> Result<L4At, ParseError> {
    if at.l3 != 0 {
        match at.eth_type {
            ethertype::IPV4 => return parse_ipv4(buf, k, p, at.l3),
            ethertype::IPV6 => return out_of_line(p, |p| parse_ipv6(buf, k, p, at.l3)),
            ethertype::ARP => out_of_line(p, |p| parse_arp(buf, k, p, at.l3))?,
            _ => {}
        }
    }
    // No L4 header found here (one of the key's is from an earlier parse).
    Ok(L4At::of(k))
}

/// The IPv4 fields.
const IPV4_FIELDS: FieldSet = FieldSet::of(&[
    Field::IpDscp,
    Field::IpEcn,
    Field::IpProto,
    Field::IpTtl,
    Field::IpFrag,
    Field::Ipv4Src,
    Field::Ipv4Dst,
]);

#[inline(always)]
fn parse_ipv4(
    buf: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    l3: usize,
) -> Result<L4At, ParseError> {
    let Some(h) = buf.get(l3..).and_then(|b| b.first_chunk::<20>()) else {
        return Err(err(Layer::L3, Reason::Truncated));
    };
    if h[0] >> 4 != 4 {
        return Err(err(Layer::L3, Reason::BadVersion));
    }
    let ihl = usize::from(h[0] & 0x0f) * 4;
    if ihl < 20 {
        return Err(err(Layer::L3, Reason::BadHeaderLength));
    }
    let proto = h[9];
    k.ip_dscp = h[1] >> 2;
    k.ip_ecn = h[1] & 3;
    k.ip_ttl = h[8];
    k.ip_proto = proto;
    // Both addresses in one 8-byte store: lookups read them as one word.
    let addrs = u64::from(u32::from_be_bytes([h[12], h[13], h[14], h[15]]))
        | u64::from(u32::from_be_bytes([h[16], h[17], h[18], h[19]])) << 32;
    k.ipv4_src = addrs as u32;
    k.ipv4_dst = (addrs >> 32) as u32;
    let fo = u16::from_be_bytes([h[6], h[7]]);
    let later = fo & 0x1fff != 0;
    // Stored (and not read back) even when it is not a fragment: 0, what
    // a key holds before L3 anyway. Reading the key's old value instead
    // waited for the stores that built the key (~1 ns per packet).
    k.ip_frag = match (fo & 0x3fff != 0, later) {
        (false, _) => 0,
        (true, false) => frag::FRAGMENT,
        (true, true) => frag::FRAGMENT | frag::LATER,
    };
    p.insert_all(IPV4_FIELDS);
    if l3 + ihl > buf.len() {
        return Err(err(Layer::L3, Reason::Truncated));
    }
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    if total < ihl || l3 + total > buf.len() {
        return Err(err(Layer::L3, Reason::BadTotalLength));
    }
    let end = l3 + total;
    k.offsets.l3_end = end as u16;
    let l4 = if later {
        // No L4 header in this packet: the key's offset stays (0).
        usize::from(k.offsets.l4)
    } else {
        k.offsets.l4 = (l3 + ihl) as u16;
        l3 + ihl
    };
    Ok(L4At {
        l4,
        end,
        proto,
        ipv4: true,
    })
}

/// Position of each extension header in the order RFC 2460 §4.1 recommends;
/// `DEST_LAST` is the destination options header before the upper layer.
const RANK_HOP: u8 = 1;
const RANK_DEST_FIRST: u8 = 2;
const RANK_ROUTER: u8 = 3;
const RANK_FRAG: u8 = 4;
const RANK_AUTH: u8 = 5;
const RANK_ESP: u8 = 6;
const RANK_DEST_LAST: u8 = 7;

/// Computes the IPV6_EXTHDR flags while walking the chain (OpenFlow 1.3.5
/// §7.2.3.8): one bit per header kind seen; UNREP when a header appears more
/// often than allowed (each once, destination options twice: once before
/// the routing header and once before the upper layer); UNSEQ when a header
/// comes earlier than the recommended order
/// `HOP, DEST, ROUTER, FRAG, AUTH, ESP, DEST` allows (for example a
/// hop-by-hop header that is not first).
#[derive(Default)]
struct ExtHdrOrder {
    flags: u16,
    rank: u8,
    dests: u8,
    first_dest_rank: u8,
}

impl ExtHdrOrder {
    fn see(&mut self, flag: u16, rank: u8) {
        if self.flags & flag != 0 {
            self.flags |= exthdr::UNREP;
        }
        self.order(flag, rank);
    }

    fn order(&mut self, flag: u16, rank: u8) {
        if rank < self.rank {
            self.flags |= exthdr::UNSEQ;
        }
        self.rank = self.rank.max(rank);
        self.flags |= flag;
    }

    fn see_dest(&mut self) {
        let rank = match self.dests {
            0 if self.rank <= RANK_DEST_FIRST => RANK_DEST_FIRST,
            0 => RANK_DEST_LAST,
            1 if self.first_dest_rank == RANK_DEST_FIRST => RANK_DEST_LAST,
            _ => {
                self.flags |= exthdr::UNREP;
                RANK_DEST_LAST
            }
        };
        if self.dests == 0 {
            self.first_dest_rank = rank;
        }
        self.dests = self.dests.saturating_add(1);
        self.order(exthdr::DEST, rank);
    }
}

#[inline(never)]
fn parse_ipv6(
    buf: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    l3: usize,
) -> Result<L4At, ParseError> {
    let Some(h) = buf.get(l3..).and_then(|b| b.first_chunk::<40>()) else {
        return Err(err(Layer::L3, Reason::Truncated));
    };
    let w0 = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    if w0 >> 28 != 6 {
        return Err(err(Layer::L3, Reason::BadVersion));
    }
    let tc = (w0 >> 20) as u8;
    k.ip_dscp = tc >> 2;
    k.ip_ecn = tc & 3;
    k.ipv6_flabel = w0 & 0x000f_ffff;
    k.ip_ttl = h[7];
    let mut a = [0u8; 16];
    a.copy_from_slice(&h[8..24]);
    k.ipv6_src = u128::from_be_bytes(a);
    a.copy_from_slice(&h[24..40]);
    k.ipv6_dst = u128::from_be_bytes(a);
    p.insert_all(FieldSet::of(&[
        Field::IpDscp,
        Field::IpEcn,
        Field::IpTtl,
        Field::IpFrag,
        Field::Ipv6Src,
        Field::Ipv6Dst,
        Field::Ipv6Flabel,
    ]));
    let end = l3 + 40 + usize::from(u16::from_be_bytes([h[4], h[5]]));
    if end > buf.len() {
        return Err(err(Layer::L3, Reason::BadTotalLength));
    }
    k.offsets.l3_end = end as u16;

    // Walk the extension header chain.
    let mut order = ExtHdrOrder::default();
    let mut nh = h[6];
    let mut off = l3 + 40;
    // The upper-layer protocol and where its header starts, once known
    // (`l4` stays as the key has it when the header is not in the packet).
    let mut proto = 0u8;
    let mut l4 = usize::from(k.offsets.l4);
    let mut result = Err(err(Layer::L3, Reason::TooManyExtHeaders));
    for _ in 0..=MAX_EXT_HEADERS {
        let (flag, rank) = match nh {
            ipproto::HOPOPTS => (exthdr::HOP, RANK_HOP),
            ipproto::DSTOPTS => (exthdr::DEST, RANK_DEST_FIRST),
            ipproto::ROUTING => (exthdr::ROUTER, RANK_ROUTER),
            ipproto::FRAGMENT => (exthdr::FRAG, RANK_FRAG),
            ipproto::AH => (exthdr::AUTH, RANK_AUTH),
            ipproto::ESP => {
                // The rest is encrypted: ESP is the last thing we see.
                order.see(exthdr::ESP, RANK_ESP);
                proto = nh;
                result = Ok(());
                break;
            }
            ipproto::NONE => {
                order.flags |= exthdr::NONEXT;
                proto = nh;
                result = Ok(());
                break;
            }
            _ => {
                proto = nh;
                l4 = off;
                k.offsets.l4 = off as u16;
                result = Ok(());
                break;
            }
        };
        if flag == exthdr::DEST {
            order.see_dest();
        } else {
            order.see(flag, rank);
        }
        let Some(e) = buf.get(off..end).and_then(|b| b.first_chunk::<2>()) else {
            result = Err(err(Layer::L3, Reason::BadExtHeader));
            break;
        };
        let len = match nh {
            ipproto::FRAGMENT => 8,
            ipproto::AH => (usize::from(e[1]) + 2) * 4,
            _ => (usize::from(e[1]) + 1) * 8,
        };
        if off + len > end {
            result = Err(err(Layer::L3, Reason::BadExtHeader));
            break;
        }
        if nh == ipproto::FRAGMENT {
            let fo = be16(buf, off + 2).unwrap_or(0);
            k.ip_frag |= frag::FRAGMENT;
            if fo & 0xfff8 != 0 {
                // A later fragment: the next header is not in this packet.
                k.ip_frag |= frag::LATER;
                proto = e[0];
                result = Ok(());
                break;
            }
        }
        nh = e[0];
        off += len;
    }
    if result.is_ok() {
        k.ip_proto = proto;
        p.insert(Field::IpProto);
    }
    k.ipv6_exthdr = order.flags;
    p.insert(Field::Ipv6Exthdr);
    result.map(|()| L4At {
        l4,
        end,
        proto,
        ipv4: false,
    })
}

#[inline(never)]
fn parse_arp(buf: &[u8], k: &mut FlowKey, p: &mut FieldSet, l3: usize) -> ParseResult {
    let Some(a) = buf.get(l3..).and_then(|b| b.first_chunk::<28>()) else {
        return Err(err(Layer::L3, Reason::Truncated));
    };
    // Only Ethernet/IPv4 ARP has the OXM fields.
    if a[0..6] != [0x00, 0x01, 0x08, 0x00, 6, 4] {
        return Ok(());
    }
    k.arp_op = u16::from_be_bytes([a[6], a[7]]);
    k.arp_sha.copy_from_slice(&a[8..14]);
    k.arp_spa = u32::from_be_bytes([a[14], a[15], a[16], a[17]]);
    k.arp_tha.copy_from_slice(&a[18..24]);
    k.arp_tpa = u32::from_be_bytes([a[24], a[25], a[26], a[27]]);
    k.offsets.l3_end = (l3 + 28) as u16;
    p.insert_all(FieldSet::of(&[
        Field::ArpOp,
        Field::ArpSpa,
        Field::ArpTpa,
        Field::ArpSha,
        Field::ArpTha,
    ]));
    Ok(())
}

#[inline(always)]
fn parse_l4(buf: &[u8], k: &mut FlowKey, p: &mut FieldSet, at: L4At) -> ParseResult {
    if at.l4 == 0 {
        return Ok(());
    }
    let seg = buf.get(at.l4..at.end).unwrap_or_default();
    let truncated = Err(err(Layer::L4, Reason::Truncated));
    let hlen = match at.proto {
        ipproto::TCP => {
            ports(seg, k, p, Field::TcpSrc, Field::TcpDst)?;
            let Some(h) = seg.first_chunk::<20>() else {
                return truncated;
            };
            let hlen = usize::from(h[12] >> 4) * 4;
            if hlen < 20 || hlen > seg.len() {
                return Err(err(Layer::L4, Reason::BadHeaderLength));
            }
            // The 9 flag bits after the data offset (NS..FIN), as the
            // BEBA switch extracts them; the 3 reserved bits are left out.
            k.tcp_flags = u16::from_be_bytes([h[12], h[13]]) & 0x1ff;
            p.insert(Field::TcpFlags);
            hlen
        }
        ipproto::UDP => {
            ports(seg, k, p, Field::UdpSrc, Field::UdpDst)?;
            if seg.len() < 8 {
                return truncated;
            }
            8
        }
        ipproto::SCTP => {
            ports(seg, k, p, Field::SctpSrc, Field::SctpDst)?;
            if seg.len() < 12 {
                return truncated;
            }
            12
        }
        ipproto::ICMP if at.ipv4 => {
            // Type and code are the whole 4-byte minimum.
            icmp_type_code(seg, k, p, Field::Icmpv4Type, Field::Icmpv4Code)?;
            4
        }
        ipproto::ICMPV6 if !at.ipv4 => out_of_line(p, |p| parse_icmpv6(seg, k, p, at.l4))?,
        _ => return Ok(()),
    };
    k.offsets.payload = (at.l4 + hlen) as u16;
    Ok(())
}

/// The source and destination ports that start a TCP, UDP or SCTP header.
#[inline(always)]
fn ports(seg: &[u8], k: &mut FlowKey, p: &mut FieldSet, src: Field, dst: Field) -> ParseResult {
    let Some(h) = seg.first_chunk::<4>() else {
        return Err(err(Layer::L4, Reason::Truncated));
    };
    // Both ports in one 4-byte store: lookups read them as one word.
    let ports = u32::from(u16::from_be_bytes([h[0], h[1]]))
        | u32::from(u16::from_be_bytes([h[2], h[3]])) << 16;
    k.tp_src = ports as u16;
    k.tp_dst = (ports >> 16) as u16;
    p.insert(src);
    p.insert(dst);
    Ok(())
}

/// The type and code that start an ICMPv4 or ICMPv6 header.
#[inline(always)]
fn icmp_type_code(
    seg: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    ty: Field,
    code: Field,
) -> Result<(u8, u8), ParseError> {
    let Some(h) = seg.first_chunk::<4>() else {
        return Err(err(Layer::L4, Reason::Truncated));
    };
    k.icmp_type = h[0];
    k.icmp_code = h[1];
    p.insert(ty);
    p.insert(code);
    Ok((h[0], h[1]))
}

/// An ICMPv6 header (with the target and options of neighbor discovery):
/// its length.
#[inline(never)]
fn parse_icmpv6(
    seg: &[u8],
    k: &mut FlowKey,
    p: &mut FieldSet,
    l4: usize,
) -> Result<usize, ParseError> {
    let (ty, code) = icmp_type_code(seg, k, p, Field::Icmpv6Type, Field::Icmpv6Code)?;
    if (ty != nd::NEIGHBOR_SOLICIT && ty != nd::NEIGHBOR_ADVERT) || code != 0 {
        return Ok(4);
    }
    let Some(t) = seg.get(8..).and_then(|b| b.first_chunk::<16>()) else {
        return Err(err(Layer::L4, Reason::Truncated));
    };
    k.nd_target = u128::from_be_bytes(*t);
    p.insert(Field::Ipv6NdTarget);
    parse_nd_options(seg, l4, ty, k, p)?;
    Ok(seg.len())
}

/// Reads the link-layer address options of a neighbor solicitation (source
/// address) or advertisement (target address); the first one counts.
fn parse_nd_options(
    seg: &[u8],
    l4: usize,
    ty: u8,
    k: &mut FlowKey,
    p: &mut FieldSet,
) -> ParseResult {
    let (want, field) = if ty == nd::NEIGHBOR_SOLICIT {
        (nd::OPT_SOURCE_LL, Field::Ipv6NdSll)
    } else {
        (nd::OPT_TARGET_LL, Field::Ipv6NdTll)
    };
    let mut off = 24;
    while off < seg.len() {
        let Some(o) = seg.get(off..).and_then(|b| b.first_chunk::<2>()) else {
            return Err(err(Layer::L4, Reason::BadNdOption));
        };
        let len = usize::from(o[1]) * 8;
        if len == 0 || off + len > seg.len() {
            return Err(err(Layer::L4, Reason::BadNdOption));
        }
        if o[0] == want && !p.contains(field) {
            if let Some(m) = seg.get(off + 2..).and_then(|b| b.first_chunk::<6>()) {
                let at = (l4 + off + 2) as u16;
                if field == Field::Ipv6NdSll {
                    k.nd_sll = *m;
                    k.offsets.nd_sll = at;
                } else {
                    k.nd_tll = *m;
                    k.offsets.nd_tll = at;
                }
                p.insert(field);
            }
        }
        off += len;
    }
    Ok(())
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
