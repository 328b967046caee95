//! Where a lookup reads a packet's fields ([`Fields`]).
//!
//! The general path looks packets up by their parsed `FlowKey`. The
//! per-table way (`crate::per_table`) reads the fields it knows straight
//! from the frame into an array (`FrameFields`, the exact index's
//! `Common` values plus the set of fields the frame has: `read_frame`),
//! and looks tables up with that. The trie and the tuple space are
//! written once, generic over this trait, so both sources get the same
//! probes, hashes and answers (a lookup reads nothing of a packet but
//! presence bits and field values).

use super::exact::{at, common_at, Common, Exact, COMMON};
use crate::matcher::{key_bits, CompiledMatch};
use packet::{ethertype, ipproto, Field, FieldSet, FlowKey, Layer};

/// The fields a frame read into `FrameFields` (IPv4 with TCP or UDP:
/// `read_frame`) has at every table, among those
/// `Exact::pack_common` reads, besides the L4 ports of its protocol
/// (`UDP_PORTS`, `TCP_PORTS`).
pub(crate) const CHAIN_FIELDS: FieldSet = FieldSet::of(&[
    Field::InPort,
    Field::Metadata,
    Field::EthDst,
    Field::EthSrc,
    Field::EthType,
    Field::VlanVid,
    Field::IpProto,
    Field::Ipv4Src,
    Field::Ipv4Dst,
]);
pub(crate) const UDP_PORTS: FieldSet = FieldSet::of(&[Field::UdpSrc, Field::UdpDst]);
pub(crate) const TCP_PORTS: FieldSet = FieldSet::of(&[Field::TcpSrc, Field::TcpDst]);

/// Every field a `FrameFields` may have (`CHAIN_FIELDS` and both
/// protocols' ports): a table matching on these alone can be looked up
/// with a frame's `FrameFields`.
pub(crate) const FRAME_FIELDS: FieldSet = CHAIN_FIELDS.union(UDP_PORTS).union(TCP_PORTS);

/// A packet's fields as the lookup structures read them.
pub trait Fields {
    /// The fields the packet has.
    fn present(&self) -> FieldSet;
    /// The value of field `f`, right-aligned as `key_bits` gives it (0
    /// when the packet lacks it; lookups check `present` first).
    fn bits(&self, f: Field) -> u128;
    /// `bits`, inlined for the fields a trie's context and prefix usually
    /// are (a call otherwise).
    #[inline(always)]
    fn bits_inline(&self, f: Field) -> u128 {
        self.bits(f)
    }
    /// The packed key of `ex`'s shape (`Exact::pack_key`), `None` when
    /// the packet lacks one of its fields.
    fn pack(&self, ex: &Exact) -> Option<u64>;
}

impl Fields for FlowKey {
    #[inline(always)]
    fn present(&self) -> FieldSet {
        self.present
    }

    #[inline(always)]
    fn bits(&self, f: Field) -> u128 {
        key_bits(self, f)
    }

    #[inline(always)]
    fn bits_inline(&self, f: Field) -> u128 {
        match f {
            Field::EthType => self.eth_type.into(),
            Field::InPort => self.in_port.into(),
            Field::IpProto => self.ip_proto.into(),
            Field::Ipv4Dst => self.ipv4_dst.into(),
            Field::Ipv4Src => self.ipv4_src.into(),
            Field::Ipv6Dst => self.ipv6_dst,
            Field::Ipv6Src => self.ipv6_src,
            _ => key_bits(self, f),
        }
    }

    #[inline(always)]
    fn pack(&self, ex: &Exact) -> Option<u64> {
        ex.pack_key(self)
    }
}

/// The fields of a frame as `read_frame` reads them: the values a key
/// would have of the exact index's common fields (those down to the
/// depth read: the others hold what was there before), and which of
/// them the frame has. Only tables whose every field is in `have`'s universe
/// (`FlowTable::frames_answer` checks `Auto::match_fields`) may be looked
/// up with it: any other field reads as absent.
#[derive(Debug, Clone, Copy)]
pub struct FrameFields {
    pub common: Common,
    pub have: FieldSet,
}

impl FrameFields {
    /// Nothing read (no field).
    pub const EMPTY: FrameFields = FrameFields {
        common: [0; COMMON],
        have: FieldSet::EMPTY,
    };
}

/// The `FrameFields` of a chunk's packets.
pub(crate) type ChunkFrames = [FrameFields; crate::chunk::CHUNK];

impl Fields for FrameFields {
    #[inline(always)]
    fn present(&self) -> FieldSet {
        self.have
    }

    #[inline(always)]
    fn bits(&self, f: Field) -> u128 {
        // (`common_at` is below `COMMON`, a power of two: the mask only
        // spares a bounds check.)
        common_at(f).map_or(0, |i| u128::from(self.common[i & (COMMON - 1)]))
    }

    #[inline(always)]
    fn pack(&self, ex: &Exact) -> Option<u64> {
        if !self.have.contains_all(ex.required()) {
            return None;
        }
        ex.pack_common(&self.common)
    }
}

/// Whether `m` covers a packet whose fields `k` reads (a `FlowKey` or a
/// frame's `FrameFields`): `CompiledMatch::matches` over [`Fields`].
#[inline]
pub fn matches_fields<K: Fields + ?Sized>(m: &CompiledMatch, k: &K) -> bool {
    k.present().contains_all(m.required())
        && m.fields()
            .iter()
            .all(|f| k.bits(f.field) & f.mask == f.value)
}

/// What the per-table way reads of a frame received on `in_port`, into
/// `f`: whether it still has its 802.1Q tag and its TTL, or `None` (and
/// `f` not to be used) unless it is IPv4 with no VLAN tag or one 802.1Q
/// tag (TPID 0x8100), whose header the general parse accepts
/// (`ipv4_header`), not a fragment, carrying a TCP or UDP header the
/// general parse accepts at L4 (TCP: 20 bytes at least and a data offset
/// within the datagram; UDP: 8 bytes).
///
/// The frame is checked at every layer whatever `depth`, and `f.have`
/// names every field it has, but only the values of the layers down to
/// `depth` are read: in_port, metadata, eth_type and vlan_vid always, the
/// MACs from `Layer::L2` on, the IPv4 and TCP/UDP fields from `Layer::L3`
/// on; the others keep what `f` held. The per-table way passes the
/// pipeline's parse depth (`Pipeline::parse_layer`): nothing reads a
/// field deeper than that, as the general path's key holds none (a
/// match, an op or a SELECT group raises the depth to the fields it
/// reads, and a lazy key's frame is hashed for a group only from L3 on:
/// `group_on_frame`).
#[inline(always)]
pub(crate) fn read_frame(
    data: &[u8],
    in_port: u32,
    depth: Layer,
    f: &mut FrameFields,
) -> Option<(bool, u8)> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    let (l3, vid) = match et {
        ethertype::IPV4 => (14, 0),
        ethertype::VLAN => {
            let t = data.get(14..18)?;
            if u16::from_be_bytes([t[2], t[3]]) != ethertype::IPV4 {
                return None;
            }
            (
                18,
                packet::VID_PRESENT | (u16::from_be_bytes([t[0], t[1]]) & 0x0fff),
            )
        }
        _ => return None,
    };
    let (h, ihl, total) = ipv4_header(data, l3)?;
    let seg = data.get(l3 + ihl..l3 + total)?;
    let udp = match h[9] {
        ipproto::UDP if seg.len() >= 8 => true,
        ipproto::TCP => {
            let hlen = usize::from(*seg.get(12)? >> 4) * 4;
            if seg.len() < 20 || hlen < 20 || hlen > seg.len() {
                return None;
            }
            false
        }
        _ => return None,
    };
    let mut have = CHAIN_FIELDS;
    have.insert_all(if udp { UDP_PORTS } else { TCP_PORTS });
    f.have = have;
    let c = &mut f.common;
    c[at::IN_PORT] = u64::from(in_port);
    c[at::METADATA] = 0;
    c[at::ETH_TYPE] = u64::from(ethertype::IPV4);
    c[at::VLAN_VID] = u64::from(vid);
    let read_macs = |c: &mut Common| {
        let (dst, src) = macs(eth);
        c[at::ETH_DST] = dst;
        c[at::ETH_SRC] = src;
    };
    // (The deepest first: one test for a pipeline that parses to L3.)
    if depth >= Layer::L3 {
        read_macs(c);
        c[at::IP_PROTO] = u64::from(h[9]);
        c[at::IPV4_SRC] = u64::from(u32::from_be_bytes([h[12], h[13], h[14], h[15]]));
        c[at::IPV4_DST] = u64::from(u32::from_be_bytes([h[16], h[17], h[18], h[19]]));
        c[at::TP_SRC] = u64::from(u16::from_be_bytes([seg[0], seg[1]]));
        c[at::TP_DST] = u64::from(u16::from_be_bytes([seg[2], seg[3]]));
    } else if depth == Layer::L2 {
        read_macs(c);
    }
    Some((vid != 0, h[8]))
}

/// The IPv4 header at `l3` of a frame, with its length and the
/// datagram's total length, when the general parse accepts it (version
/// 4, header length at least 20 bytes, a total length between the
/// header's and the frame's) and it is no fragment (`frag_drop` may drop
/// those, and a later one has no L4 header); `None` otherwise.
#[inline(always)]
fn ipv4_header(data: &[u8], l3: usize) -> Option<(&[u8; 20], usize, usize)> {
    let h = data.get(l3..)?.first_chunk::<20>()?;
    // As `packet::parse` checks: it reads at most the first 64 KiB.
    let len = data.len().min(0xffff);
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let frag = u16::from_be_bytes([h[6], h[7]]) & 0x3fff;
    // (A total length within the frame and at least the header's puts
    // the header within the frame too.)
    let ok = h[0] >> 4 == 4 && ihl >= 20 && total >= ihl && l3 + total <= len && frag == 0;
    ok.then_some((h, ihl, total))
}

/// The destination and source MACs of an Ethernet header as
/// `packet::mac_bits` gives them (six bytes big-endian): one 8-byte load
/// each, the two bytes after the address shifted out.
#[inline(always)]
fn macs(eth: &[u8; 14]) -> (u64, u64) {
    let word = |b: [u8; 8]| u64::from_be_bytes(b) >> 16;
    let (d, s) = (eth.first_chunk::<8>(), eth.last_chunk::<8>());
    (d.map_or(0, |b| word(*b)), s.map_or(0, |b| word(*b)))
}
