//! Where a lookup reads a packet's fields ([`Fields`]).
//!
//! The general path looks packets up by their parsed `FlowKey`. The chain
//! template (`crate::template`) and the per-table way (`crate::per_table`)
//! read the fields they know straight from the frame into an array
//! (`FrameFields`, the exact index's `Common` values plus the set of
//! fields the frame has), and look tables up with that. The trie and the tuple space are
//! written once, generic over this trait, so both sources get the same
//! probes, hashes and answers (a lookup reads nothing of a packet but
//! presence bits and field values).

use super::exact::{common_at, Common, Exact, COMMON};
use crate::matcher::{key_bits, CompiledMatch};
use packet::{Field, FieldSet, FlowKey};

/// The fields a frame read into `FrameFields` (IPv4 with TCP or UDP:
/// `template::chain::chain_frame`) has at every table, among those
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

/// The fields of a frame as the chain template reads them: the values a
/// key would have of the exact index's common fields, and which of them
/// the frame has. Only tables whose every field is in `have`'s universe
/// (the template checks `Auto::match_fields`) may be looked up with it:
/// any other field reads as absent.
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
