//! Packed-key exact-match index for a table whose entries have one shape
//! that fits in 64 bits (design and costs in the parent module comment).
//!
//! # Packing
//!
//! Each `(field, mask)` of the shape keeps the bits of the mask's *span*
//! (lowest to highest set bit); the spans are laid side by side in a
//! `u64`, first field lowest. A packet's packed key is the OR of
//! `(field bits & mask) >> lowest << offset`; an entry's is the same of
//! its match values. Two keys of the shape are equal exactly when their
//! masked bits are, so a packed key stands for a bucket of the tuple
//! space.
//!
//! ```text
//!  shape  eth_type/ffff   ip_proto/ff   ipv4_src/ffffffff     (56 bits)
//!  packed |63 .. 56| ipv4_src 55..24 | ip_proto 23..16 | eth_type 15..0|
//! ```
//!
//! # The table
//!
//! ```text
//!  Exact
//!   parts     [(reader, lowest bit, mask >> lowest, offset)]  the packing
//!             above; the reader says where in the key the field is
//!   required  presence bits the packet must have (else: no probe)
//!   seed      random per index (hash)
//!   slots     [Slot; 2^k]   open addressing, linear probing, load <= 1/2
//!  Slot (16 bytes, four per cache line)
//!   key       packed key
//!   handle    the best entry with that match (as the tuple space's bucket)
//!   prio      0 = empty, else priority + 1 of that entry
//! ```
//!
//! A key starts at slot `hash(key) >> (64 - k)` and occupies the first
//! empty-or-equal slot from there on (wrapping). With at most half of the
//! slots used a probe usually reads one cache line and stops at the first
//! empty slot on a miss. A removal shifts the following run of the
//! cluster back (no tombstones, so probes never get longer over time).
//! The table doubles when an insert would pass the load limit.
//!
//! Only the best entry of a match is kept, with its priority (not its
//! full rank): the caller compares it with the best match-everything
//! entry by priority, and asks the tuple space on an equal priority (the
//! installation order then decides).
//!
//! # Hash
//!
//! One 64x64->128-bit multiply of the key xor a random seed by a random odd
//! seed, the halves folded by xor, then one multiply by a fixed odd
//! constant to stir the high bits, which give the slot index. (Without the
//! last step keys that differ only in bits 32..63 made runs a third longer
//! than random keys do; with it sequential keys at any bit offset probe
//! like random ones: 1.3 slots on average at load 0.38.) The seeds are per
//! index, so packets cannot be crafted to hit long runs (which only
//! controller-installed keys form anyway).

use super::rank::{Ref, Shape};
use crate::matcher::{key_bits, FieldMatch};
use hashbrown::DefaultHashBuilder;
use packet::{mac_bits as mac, Field, FieldSet, FlowKey};
use std::hash::BuildHasher;

/// Where a shape field's bits are read from in a key: the common fields
/// directly (inlined, 64-bit), the others through `key_bits`.
#[derive(Debug, Clone, Copy)]
enum Reader {
    InPort,
    Metadata,
    EthDst,
    EthSrc,
    EthType,
    VlanVid,
    IpProto,
    Ipv4Src,
    Ipv4Dst,
    TpSrc,
    TpDst,
    Other(Field),
}

impl Reader {
    #[inline]
    const fn of(f: Field) -> Reader {
        use Field::*;
        match f {
            InPort => Reader::InPort,
            Metadata => Reader::Metadata,
            EthDst => Reader::EthDst,
            EthSrc => Reader::EthSrc,
            EthType => Reader::EthType,
            VlanVid => Reader::VlanVid,
            IpProto => Reader::IpProto,
            Ipv4Src => Reader::Ipv4Src,
            Ipv4Dst => Reader::Ipv4Dst,
            TcpSrc | UdpSrc | SctpSrc => Reader::TpSrc,
            TcpDst | UdpDst | SctpDst => Reader::TpDst,
            f => Reader::Other(f),
        }
    }
}

impl Reader {
    /// Position in `common`'s array (`None` for `Other`).
    #[inline]
    const fn at(self) -> Option<u8> {
        let i = match self {
            Reader::InPort => at::IN_PORT,
            Reader::Metadata => at::METADATA,
            Reader::EthDst => at::ETH_DST,
            Reader::EthSrc => at::ETH_SRC,
            Reader::EthType => at::ETH_TYPE,
            Reader::VlanVid => at::VLAN_VID,
            Reader::IpProto => at::IP_PROTO,
            Reader::Ipv4Src => at::IPV4_SRC,
            Reader::Ipv4Dst => at::IPV4_DST,
            Reader::TpSrc => at::TP_SRC,
            Reader::TpDst => at::TP_DST,
            Reader::Other(_) => return None,
        };
        Some(i as u8)
    }
}

/// The position in [`Common`] of field `f`'s value, `None` for a field
/// that is not one of its (one read of a table made from `Reader::at`).
#[inline(always)]
pub(crate) fn common_at(f: Field) -> Option<usize> {
    let at = COMMON_AT.get(f as usize).copied().unwrap_or(NOT_COMMON);
    (at != NOT_COMMON).then_some(usize::from(at))
}

/// `COMMON_AT`'s entry for a field that is not one of `Common`'s.
const NOT_COMMON: u8 = u8::MAX;

/// `Reader::of(f).at()` by field number (`common_at`).
const COMMON_AT: [u8; Field::ALL.len()] = {
    let mut t = [NOT_COMMON; Field::ALL.len()];
    let mut i = 0;
    while i < t.len() {
        if let Some(at) = Reader::of(Field::ALL[i]).at() {
            t[i] = at;
        }
        i += 1;
    }
    t
};

/// Size of `common`'s array (a power of two: the index is masked, no
/// bounds check).
pub(crate) const COMMON: usize = 16;

/// The values of a key's common fields (`common`, `Exact::pack_common`),
/// by `Reader::at`: in_port, metadata, eth_dst, eth_src (as
/// `packet::mac_bits` gives them), eth_type, vlan_vid, ip_proto,
/// ipv4_src, ipv4_dst, the L4 source and destination ports; the rest 0.
pub(crate) type Common = [u64; COMMON];

/// Positions in [`Common`] (`Reader::at`).
pub(crate) mod at {
    pub const IN_PORT: usize = 0;
    pub const METADATA: usize = 1;
    pub const ETH_DST: usize = 2;
    pub const ETH_SRC: usize = 3;
    pub const ETH_TYPE: usize = 4;
    pub const VLAN_VID: usize = 5;
    pub const IP_PROTO: usize = 6;
    pub const IPV4_SRC: usize = 7;
    pub const IPV4_DST: usize = 8;
    pub const TP_SRC: usize = 9;
    pub const TP_DST: usize = 10;
}

/// Every `Reader` field but `Other` of a key, by `Reader::at`. A shape of
/// several such fields reads them all (straight-line loads) and picks
/// its own by index: no branch per field, where a `match` per field is an
/// indirect jump whose target changes from field to field.
#[inline(always)]
fn common(key: &FlowKey) -> Common {
    let mut v = [0; COMMON];
    v[at::IN_PORT] = key.in_port.into();
    v[at::METADATA] = key.metadata;
    v[at::ETH_DST] = mac(&key.eth_dst);
    v[at::ETH_SRC] = mac(&key.eth_src);
    v[at::ETH_TYPE] = key.eth_type.into();
    v[at::VLAN_VID] = key.vlan_vid.into();
    v[at::IP_PROTO] = key.ip_proto.into();
    v[at::IPV4_SRC] = key.ipv4_src.into();
    v[at::IPV4_DST] = key.ipv4_dst.into();
    v[at::TP_SRC] = key.tp_src.into();
    v[at::TP_DST] = key.tp_dst.into();
    v
}

/// One shape field's place in the packed key.
#[derive(Debug, Clone, Copy)]
struct Part {
    src: Reader,
    /// `src.at()`, `COMMON` for `Other`.
    at: u8,
    /// Lowest set bit of the field's mask.
    low: u32,
    /// The mask shifted down by `low` (it spans at most 64 bits).
    mask: u64,
    /// Where the span starts in the packed key.
    offset: u32,
}

impl Part {
    /// A match value's bits (a subset of the mask) in the packed key.
    fn pack(&self, value: u128) -> u64 {
        (((value >> self.low) as u64) & self.mask) << self.offset
    }

    /// The packet's masked bits in the packed key.
    #[inline(always)]
    fn read(&self, key: &FlowKey) -> u64 {
        let direct = |v: u64| v >> self.low;
        let v = match self.src {
            Reader::InPort => direct(key.in_port.into()),
            Reader::Metadata => direct(key.metadata),
            Reader::EthDst => direct(mac(&key.eth_dst)),
            Reader::EthSrc => direct(mac(&key.eth_src)),
            Reader::EthType => direct(key.eth_type.into()),
            Reader::VlanVid => direct(key.vlan_vid.into()),
            Reader::IpProto => direct(key.ip_proto.into()),
            Reader::Ipv4Src => direct(key.ipv4_src.into()),
            Reader::Ipv4Dst => direct(key.ipv4_dst.into()),
            Reader::TpSrc => direct(key.tp_src.into()),
            Reader::TpDst => direct(key.tp_dst.into()),
            Reader::Other(f) => (key_bits(key, f) >> self.low) as u64,
        };
        (v & self.mask) << self.offset
    }

    /// `read` from the `common` values of the key (`Reader::Other` not
    /// allowed).
    #[inline(always)]
    fn read_common(&self, common: &Common) -> u64 {
        ((common[usize::from(self.at) & (COMMON - 1)] >> self.low) & self.mask) << self.offset
    }
}

/// A used or empty slot of the table (module comment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C, align(16))]
struct Slot {
    key: u64,
    handle: u32,
    /// 0: empty; else the entry's priority + 1.
    prio: u32,
}

impl Slot {
    fn is_empty(&self) -> bool {
        self.prio == 0
    }

    /// The entry the slot holds, if any.
    #[inline]
    fn hit(&self) -> Option<Hit> {
        // `checked_sub` is `None` exactly for an empty slot (prio 0).
        let priority = self.prio.checked_sub(1)?;
        Some(Hit {
            handle: self.handle,
            priority: priority as u16,
        })
    }
}

/// What a probe finds: the best entry of the packet's match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub handle: u32,
    pub priority: u16,
}

/// The hash's last multiplier (odd; the golden ratio's bits).
const STIR: u64 = 0x9e37_79b9_7f4a_7c15;

/// Smallest number of slots.
const MIN_SLOTS: usize = 8;

/// See the module comment.
#[derive(Debug, Clone)]
pub struct Exact {
    shape: Box<Shape>,
    parts: Box<[Part]>,
    /// No part reads `Reader::Other` (`pack_key` may use `common`).
    all_common: bool,
    required: FieldSet,
    seed: u64,
    /// Odd.
    mult: u64,
    /// `STIR` (1 in some tests: the hash is then the key itself).
    stir: u64,
    slots: Box<[Slot]>,
    /// `64 - log2(slots.len())`.
    shift: u32,
    len: usize,
}

impl Exact {
    /// An empty index for `shape`, or `None` if the shape's spans do not
    /// fit in 64 bits (or the shape is empty).
    pub fn new(shape: &Shape) -> Option<Exact> {
        if shape.is_empty() {
            return None;
        }
        let mut parts = Vec::with_capacity(shape.len());
        let mut offset = 0u32;
        let mut required = FieldSet::EMPTY;
        for (field, mask) in shape {
            if *mask == 0 {
                return None;
            }
            let low = mask.trailing_zeros();
            let span = 128 - mask.leading_zeros() - low;
            if offset + span > 64 {
                return None;
            }
            let src = Reader::of(*field);
            parts.push(Part {
                src,
                at: src.at().unwrap_or(COMMON as u8),
                low,
                mask: (mask >> low) as u64,
                offset,
            });
            offset += span;
            required.insert(*field);
        }
        let seeds = DefaultHashBuilder::default();
        Some(Exact {
            shape: shape.into(),
            all_common: parts.iter().all(|p| p.src.at().is_some()),
            parts: parts.into(),
            required,
            seed: seeds.hash_one(0x5eed_u64),
            mult: seeds.hash_one(0x3u64) | 1,
            stir: STIR,
            slots: vec![Slot::default(); MIN_SLOTS].into(),
            shift: 64 - MIN_SLOTS.trailing_zeros(),
            len: 0,
        })
    }

    /// `new` whose hash is the key itself (tests: the home slot is then
    /// the key's top bits, so runs can be made at will).
    #[cfg(test)]
    fn with_identity_hash(shape: &Shape) -> Option<Exact> {
        Exact::new(shape).map(|ex| Exact {
            seed: 0,
            mult: 1,
            stir: 1,
            ..ex
        })
    }

    /// The shape this index is for.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Number of distinct matches held.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed key of a match's values (one per shape field, in shape
    /// order).
    pub fn pack_values(&self, values: impl IntoIterator<Item = u128>) -> u64 {
        self.parts
            .iter()
            .zip(values)
            .fold(0, |k, (p, v)| k | p.pack(v))
    }

    /// The packed key of a match of this shape.
    pub fn pack_match(&self, fields: &[FieldMatch]) -> u64 {
        self.pack_values(fields.iter().map(|f| f.value))
    }

    /// The packet's packed key, `None` if it lacks a field of the shape.
    /// One field is read inline, several out of line (`pack_parts`).
    #[inline(always)]
    pub fn pack_key(&self, key: &FlowKey) -> Option<u64> {
        if !key.present.contains_all(self.required) {
            return None;
        }
        Some(match &*self.parts {
            [p] => p.read(key),
            parts => self.pack_parts(parts, key),
        })
    }

    /// `pack_key` of a shape of several fields.
    #[inline(never)]
    fn pack_parts(&self, parts: &[Part], key: &FlowKey) -> u64 {
        if self.all_common {
            let common = common(key);
            parts.iter().fold(0, |k, p| k | p.read_common(&common))
        } else {
            parts.iter().fold(0, |k, p| k | p.read(key))
        }
    }

    #[inline]
    fn hash(&self, key: u64) -> u64 {
        let x = u128::from(key ^ self.seed) * u128::from(self.mult);
        ((x as u64) ^ ((x >> 64) as u64)).wrapping_mul(self.stir)
    }

    /// Mask of slot indexes.
    #[inline]
    fn index_mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The slot a key starts probing at.
    #[inline]
    pub(crate) fn home(&self, key: u64) -> usize {
        (self.hash(key) >> self.shift) as usize & self.index_mask()
    }

    /// The slot holding `key`, or the empty slot ending its probe.
    #[inline]
    fn slot_of(&self, key: u64, home: usize) -> usize {
        let mask = self.index_mask();
        let mut i = home & mask;
        // The load limit leaves an empty slot: the loop ends.
        loop {
            let s = self.slots[i];
            if s.is_empty() || s.key == key {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// The packed key of a packet whose common fields are `c` (made
    /// without a `FlowKey`: a frame's `FrameFields`);
    /// `None` when the shape reads a field outside them. The caller
    /// checks that the packet has the fields of `required`.
    #[inline(always)]
    pub(crate) fn pack_common(&self, c: &Common) -> Option<u64> {
        self.all_common
            .then(|| self.parts.iter().fold(0, |k, p| k | p.read_common(c)))
    }

    /// Whether every field of the shape is one of `Common`'s
    /// (`pack_common` can make its keys).
    #[inline]
    pub fn common_only(&self) -> bool {
        self.all_common
    }

    /// The fields a packet must have to be probed (`pack_key`).
    #[inline]
    pub fn required(&self) -> FieldSet {
        self.required
    }

    /// The best entry with packed key `key`.
    #[inline]
    pub fn get(&self, key: u64) -> Option<Hit> {
        self.get_from(key, self.home(key))
    }

    /// The key word of slot `i` (a read that brings its line in): with
    /// `home` and `get_from`, `get` in steps, for a caller that reads the
    /// home slots of a chunk's keys before probing any (as `probe_each`
    /// does, for keys of several indexes).
    #[inline(always)]
    pub(crate) fn touch(&self, i: usize) -> u64 {
        self.slots.get(i).map_or(0, |s| s.key)
    }

    /// `get` of `key` whose home slot is `home` (`home`).
    #[inline(always)]
    pub(crate) fn get_from(&self, key: u64, home: usize) -> Option<Hit> {
        self.slots[self.slot_of(key, home)].hit()
    }

    /// The best entry matching the packet (ignoring match-everything
    /// entries).
    #[inline]
    pub fn probe(&self, key: &FlowKey) -> Option<Hit> {
        self.get(self.pack_key(key)?)
    }

    /// Makes `best` the entry of packed key `key` (adding the key if new).
    pub fn set(&mut self, key: u64, best: Ref) {
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let i = self.slot_of(key, self.home(key));
        let s = &mut self.slots[i];
        if s.is_empty() {
            self.len += 1;
        }
        *s = Slot {
            key,
            handle: best.handle,
            prio: u32::from(best.rank.priority()) + 1,
        };
    }

    /// Removes key `key` (no entry has that match any more); false if it
    /// was not there.
    pub fn remove(&mut self, key: u64) -> bool {
        let mask = self.index_mask();
        let mut hole = self.slot_of(key, self.home(key));
        if self.slots[hole].is_empty() {
            return false;
        }
        self.len -= 1;
        // Backward shift: a later key of the run moves into the hole
        // unless its home lies after the hole (cyclically, up to its own
        // slot), where it would not be found.
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s.is_empty() {
                break;
            }
            let home = self.home(s.key);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = Slot::default();
        true
    }

    /// Doubles the slots (rehashing every key of this index only).
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); n].into());
        self.shift = 64 - n.trailing_zeros();
        for s in old.iter().filter(|s| !s.is_empty()) {
            let i = self.slot_of(s.key, self.home(s.key));
            self.slots[i] = *s;
        }
    }

    /// `probe` for several packets: `hits[j]` for `keys[at[j]]`
    /// (`probe_each`).
    pub fn probe_many(&self, keys: &[FlowKey], at: &[u8], hits: &mut [Option<Hit>]) {
        let m = at.len().min(hits.len());
        let key = |j: usize| keys.get(usize::from(at[j])).and_then(|k| self.pack_key(k));
        self.probe_each(m, key, hits);
    }

    /// `get` for several packed keys at once (`None`: no key, no probe;
    /// `probe_each`).
    pub fn get_many(&self, keys: &[Option<u64>], hits: &mut [Option<Hit>]) {
        let m = keys.len().min(hits.len());
        self.probe_each(m, |j| keys[j], hits);
    }

    /// `hits[j]` for the packed keys `key(j)`, `j < m` (at most
    /// `crate::chunk::CHUNK`), in three loops: every key and its home
    /// slot; then one read of every home slot, a short loop of loads that
    /// depend on nothing but the homes, so the out-of-order core has the
    /// cache misses of all keys in flight at once; then the probes, on
    /// lines now in cache.
    #[inline(always)]
    fn probe_each(&self, m: usize, key: impl Fn(usize) -> Option<u64>, hits: &mut [Option<Hit>]) {
        const N: usize = crate::chunk::CHUNK;
        let m = m.min(hits.len()).min(N);
        let mut packed = [None; N];
        let mut home = [0usize; N];
        for j in 0..m {
            packed[j] = key(j);
            home[j] = packed[j].map_or(0, |k| self.home(k));
        }
        let mut sink = 0u64;
        for h in &home[..m] {
            sink ^= self.touch(*h);
        }
        std::hint::black_box(sink);
        for j in 0..m {
            hits[j] = packed[j].and_then(|k| self.get_from(k, home[j]));
        }
    }

    /// Longest probe (slots read) of any held key: a test hook for the
    /// hash quality.
    #[cfg(test)]
    pub fn max_probe(&self) -> usize {
        let mask = self.index_mask();
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .map(|(i, s)| (i.wrapping_sub(self.home(s.key)) & mask) + 1)
            .max()
            .unwrap_or(0)
    }

    /// Slots (a test hook: growth).
    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
#[path = "exact_tests.rs"]
mod tests;
