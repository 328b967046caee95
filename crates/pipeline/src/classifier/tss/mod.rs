//! Tuple space search: one hash subtable per shape, probed in order of the
//! subtables' max priority (design and costs in the parent module comment).
//!
//! ```text
//!  Tss
//!   any        Same            the match-everything entries (empty shape)
//!   subtables  [Option<Subtable>]   slab, freed slots reused
//!   by_shape   HashTable<u32>  shape hash -> subtable (strict index, insert)
//!   order      [(max prio, in_lpm, subtable)]   max prio descending
//!   order_odd  the same without the in_lpm ones (probed beside a trie)
//!   union      every field of every shape (read once per packet)
//!  Subtable
//!   shape      [(field, mask)], required presence bits, positions in union
//!   spans      the packing of the shape's masked bits into one u128,
//!              when they fit (below)
//!   buckets    HashTable<Bucket>        hash of masked values -> Bucket
//!   prios      BTreeMap<prio, count>    max priority after removals
//!   filter     one bit per hash of one field's value (below), big
//!              subtables with a full-mask field of 16 bits or more
//!  Bucket (64 bytes: one cache line)
//!   key        the packed masked values (packed subtables)
//!   hash
//!   wide       [u128], one masked value per shape field (other subtables)
//!   same       Same (entries, best first)
//! ```
//!
//! Packing: each `(field, mask)` of a shape keeps the bits of its mask's
//! span (lowest to highest set bit), the spans side by side in a `u128`,
//! first field lowest (as the exact index packs into 64 bits,
//! `classifier::exact`). Two matches or packets of the shape have the same
//! masked values exactly when their packed keys are equal. Every shape
//! whose spans add up to at most 128 bits is packed: all IPv4 and
//! Ethernet shapes of up to a 5-tuple (eth_type, ip_proto, both
//! addresses and a port make 104 bits). A bucket then holds its key
//! inline and a probe hashes and compares one `u128`; only wider shapes
//! (IPv6 addresses with other fields) keep their values behind a pointer.
//!
//! Hashing: the masked values are written one by one into a hasher of the
//! table's random-seeded `DefaultHashBuilder` (foldhash), both when an
//! entry is added (from its match's values) and per packet (from the
//! key's bits under the shape's masks), so a probe needs no key buffer.
//! A packet's packed key is built only to confirm a candidate bucket (a
//! probe that misses costs the hash alone). When a lookup will probe several
//! subtables, it first reads each field of `union` from the key once into
//! a fixed array on the stack (at most `UNION_MAX` fields; bigger unions
//! read the key per probe).
//!
//! Filter: a packet that misses a subtable still pays its hash of every
//! shape field (a 5-tuple ACL's deny rules: five fields, most packets
//! miss). A subtable with at least `FILTER_MIN` buckets whose shape has
//! a field matched exactly (full mask) of 16 bits or more (the widest,
//! the first of equals: a deny rule's source address) also keeps a bit
//! array with one bit set per bucket at a hash of the bucket's value of
//! that field. A probe first reads the bit of the packet's value: clear,
//! and no bucket can hold the packet (every bucket's bit is set), so the
//! probe is skipped; set, and it probes as before. So it changes no
//! answer, only what a miss costs: one multiply and one read of an array
//! of 8-16 bits per bucket (25,000 deny rules: 32-64 KiB) instead of the
//! hash of every field, for all but the packets whose value hashes to a
//! set bit (about 1 in 8 to 16 of the others; crafted packets can aim
//! at set bits, and then pay what every probe paid without a filter).
//! Removals leave their bits set (a packet may then probe for nothing);
//! an insert that would fill more than one bit in eight rebuilds the
//! array from the buckets at 16 bits per bucket, so rebuilds cost O(1)
//! per insert, amortised. The hash is a multiply by a constant of the
//! value XORed with a seed drawn from the table's random hasher.

use super::fields::Fields;
use super::rank::{Ref, Same, Shape};
use crate::matcher::{full_mask, CompiledMatch, FieldMatch};
use hashbrown::{DefaultHashBuilder, HashTable};
use packet::{Field, FieldSet, FlowKey};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};

mod search;
mod update;

/// One distinct match of a subtable (module comment).
#[derive(Debug, Clone)]
struct Bucket {
    /// The packed masked values; 0 in a wide subtable.
    key: u128,
    hash: u64,
    /// The masked values, one per shape field, in a wide subtable only.
    wide: Option<Box<[u128]>>,
    same: Same,
}

/// One shape field's place in a packed key (module comment): the field's
/// mask, and how far its span moves to reach its place (up when `up`,
/// else down: one shift either way).
#[derive(Debug, Clone, Copy)]
struct Span {
    mask: u128,
    shift: u32,
    up: bool,
}

impl Span {
    /// The masked bits of `bits` (a field's value, right-aligned) in the
    /// packed key.
    #[inline(always)]
    fn put(&self, bits: u128) -> u128 {
        let v = bits & self.mask;
        if self.up {
            v << self.shift
        } else {
            v >> self.shift
        }
    }

    /// The field's masked value back from a packed key.
    fn get(&self, key: u128) -> u128 {
        let v = if self.up {
            key >> self.shift
        } else {
            key << self.shift
        };
        v & self.mask
    }

    /// Where the span starts in the packed key.
    #[cfg(test)]
    fn offset(&self) -> u32 {
        let low = if self.mask == 0 {
            0
        } else {
            self.mask.trailing_zeros()
        };
        if self.up {
            low + self.shift
        } else {
            low - self.shift
        }
    }
}

/// The packing of `shape`, if its spans fit in 128 bits.
fn spans(shape: &Shape) -> Option<Box<[Span]>> {
    let mut offset = 0u32;
    shape
        .iter()
        .map(|(_, m)| {
            // (Compiled matches have no empty masks; such a shape would
            // be kept wide.)
            if *m == 0 {
                return None;
            }
            let low = m.trailing_zeros();
            let width = 128 - (m >> low).leading_zeros();
            if offset + width > 128 {
                return None;
            }
            let s = Span {
                mask: *m,
                shift: offset.abs_diff(low),
                up: offset >= low,
            };
            offset += width;
            Some(s)
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Subtable {
    shape: Box<Shape>,
    shape_hash: u64,
    required: FieldSet,
    buckets: HashTable<Bucket>,
    /// Number of entries per priority.
    prios: BTreeMap<u16, u32>,
    /// An LPM trie stands for this subtable (lookups may skip it).
    in_lpm: bool,
    /// Position in `Tss::union` and mask of each shape field.
    at: Box<[(u8, u128)]>,
    /// The packing of the shape (`None`: a wide subtable).
    spans: Option<Box<[Span]>>,
    /// The shape field a filter keys on (its position in the shape), if
    /// the shape has one (module comment).
    filter_at: Option<usize>,
    /// The filter, once the subtable has `FILTER_MIN` buckets.
    filter: Option<Filter>,
}

/// Subtables with at least this many buckets get a filter (module
/// comment).
const FILTER_MIN: usize = 8;

/// A subtable's filter (module comment): bit `slot(v)` of `words` is set
/// for the value `v` of the filter's field of every bucket.
#[derive(Debug, Clone)]
struct Filter {
    field: Field,
    seed: u64,
    /// 64 minus log2 of the number of bits.
    shift: u32,
    words: Box<[u64]>,
    /// Bits set since the last build (removed buckets' included).
    set: usize,
}

impl Filter {
    /// An empty filter of at least `bits` bits (a power of two, 64 at
    /// least) on `field`.
    fn new(field: Field, seed: u64, bits: usize) -> Filter {
        let bits = bits.next_power_of_two().max(64);
        Filter {
            field,
            seed,
            shift: 64 - bits.trailing_zeros(),
            words: vec![0; bits / 64].into_boxed_slice(),
            set: 0,
        }
    }

    /// The bit of value `v`.
    #[inline(always)]
    fn slot(&self, v: u128) -> usize {
        let x = (v as u64) ^ ((v >> 64) as u64).rotate_left(32) ^ self.seed;
        (x.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Whether a bucket may have value `v` (false: none has).
    #[inline(always)]
    fn maybe(&self, v: u128) -> bool {
        let s = self.slot(v);
        self.words
            .get(s >> 6)
            .is_some_and(|w| w >> (s & 63) & 1 == 1)
    }

    fn add(&mut self, v: u128) {
        let s = self.slot(v);
        if let Some(w) = self.words.get_mut(s >> 6) {
            *w |= 1 << (s & 63);
        }
        self.set += 1;
    }

    /// Whether one more bit would fill more than one in eight.
    fn full(&self) -> bool {
        8 * (self.set + 1) > 64 * self.words.len()
    }
}

/// The field of `shape` a filter keys on (module comment): the widest
/// matched exactly, 16 bits at least (the first of equals), as its
/// position in the shape.
fn filter_field(shape: &Shape) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (i, (f, m)) in shape.iter().enumerate() {
        let w = f.width();
        if w >= 2 && *m == full_mask(*f) && best.is_none_or(|(_, bw)| w > bw) {
            best = Some((i, w));
        }
    }
    best.map(|(i, _)| i)
}

impl Subtable {
    fn max_priority(&self) -> u16 {
        self.prios.last_key_value().map_or(0, |(p, _)| *p)
    }

    /// Whether a bucket may hold the packet, by the filter (true without
    /// one).
    #[inline(always)]
    fn may_hold<K: Fields>(&self, key: &K) -> bool {
        self.filter
            .as_ref()
            .is_none_or(|f| f.maybe(key.bits_inline(f.field)))
    }

    /// Keeps the filter in step after a bucket for a match with `fields`
    /// was added: its bit set, or the filter (re)built from the buckets
    /// when it is due (module comment).
    fn filter_added(&mut self, hasher: &DefaultHashBuilder, fields: &[FieldMatch]) {
        let Some(at) = self.filter_at else { return };
        match &mut self.filter {
            Some(f) if !f.full() => {
                if let Some(v) = fields.get(at) {
                    f.add(v.value);
                }
            }
            None if self.buckets.len() < FILTER_MIN => {}
            _ => {
                let Some(&(field, _)) = self.shape.get(at) else {
                    return;
                };
                let seed = hasher.hash_one((self.shape_hash, self.buckets.len()));
                let mut f = Filter::new(field, seed, 16 * self.buckets.len());
                for b in &self.buckets {
                    if let Some(v) = self.values(b).get(at) {
                        f.add(*v);
                    }
                }
                self.filter = Some(f);
            }
        }
    }

    /// The best entry of the bucket the packet falls in.
    #[inline]
    fn probe<K: Fields>(&self, hasher: &DefaultHashBuilder, key: &K) -> Option<Ref> {
        if !key.present().contains_all(self.required) || !self.may_hold(key) {
            return None;
        }
        self.buckets
            .find(self.key_hash(hasher, key), |b| self.holds(b, key))
            .map(|b| b.same.best())
    }

    /// The hash of the packet's masked values of this shape.
    #[inline]
    fn key_hash<K: Fields>(&self, hasher: &DefaultHashBuilder, key: &K) -> u64 {
        let mut h = hasher.build_hasher();
        for (f, m) in self.shape.iter() {
            h.write_u128(key.bits(*f) & m);
        }
        h.finish()
    }

    /// Whether bucket `b` holds the packet's masked values. The packed
    /// key is only built here, for a candidate bucket: a probe that
    /// misses costs the hash alone.
    #[inline]
    fn holds<K: Fields>(&self, b: &Bucket, key: &K) -> bool {
        match (&b.wide, &self.spans) {
            (None, Some(spans)) => {
                let packed = self
                    .shape
                    .iter()
                    .zip(spans.iter())
                    .fold(0, |k, ((f, _), s)| k | s.put(key.bits(*f)));
                b.key == packed
            }
            (Some(values), _) => values
                .iter()
                .zip(self.shape.iter())
                .all(|(v, (f, m))| key.bits(*f) & m == *v),
            (None, None) => false,
        }
    }

    /// `probe` with the packet's field values read beforehand (`vals`, by
    /// position in `Tss::union`; absent fields are 0 and fail `required`).
    #[inline]
    fn probe_vals(
        &self,
        hasher: &DefaultHashBuilder,
        present: FieldSet,
        vals: &[u128; UNION_MAX],
    ) -> Option<Ref> {
        if !present.contains_all(self.required) {
            return None;
        }
        // Positions are below `UNION_MAX` (a power of two): the mask only
        // spares a bounds check.
        let val = |a: u8| vals[usize::from(a) & (UNION_MAX - 1)];
        if let (Some(f), Some(&(a, _))) =
            (&self.filter, self.filter_at.and_then(|i| self.at.get(i)))
        {
            if !f.maybe(val(a)) {
                return None;
            }
        }
        let mut h = hasher.build_hasher();
        for (a, m) in self.at.iter() {
            h.write_u128(val(*a) & m);
        }
        self.buckets
            .find(h.finish(), |b| match (&b.wide, &self.spans) {
                (None, Some(spans)) => {
                    let packed = self
                        .at
                        .iter()
                        .zip(spans.iter())
                        .fold(0, |k, ((a, _), s)| k | s.put(val(*a)));
                    b.key == packed
                }
                (Some(values), _) => values
                    .iter()
                    .zip(self.at.iter())
                    .all(|(v, (a, m))| val(*a) & m == *v),
                (None, None) => false,
            })
            .map(|b| b.same.best())
    }

    /// The hash and packed key (0 in a wide subtable) of a match of this
    /// shape; the hash is the one `key_hash` gives a packet inside it.
    fn match_hash(&self, hasher: &DefaultHashBuilder, fields: &[FieldMatch]) -> (u64, u128) {
        let mut h = hasher.build_hasher();
        for f in fields {
            h.write_u128(f.value);
        }
        let packed = self.spans.as_ref().map_or(0, |spans| {
            fields
                .iter()
                .zip(spans.iter())
                .fold(0, |k, (f, s)| k | s.put(f.value))
        });
        (h.finish(), packed)
    }

    /// Whether bucket `b` is the one of a match of this shape (`packed`:
    /// its packed key, from `match_hash`).
    fn is_bucket_of(b: &Bucket, fields: &[FieldMatch], packed: u128) -> bool {
        match &b.wide {
            None => b.key == packed,
            Some(values) => values.iter().zip(fields).all(|(v, f)| *v == f.value),
        }
    }

    /// A new bucket for a match of this shape.
    fn new_bucket(&self, fields: &[FieldMatch], hash: u64, packed: u128, r: Ref) -> Bucket {
        Bucket {
            key: packed,
            hash,
            wide: self
                .spans
                .is_none()
                .then(|| fields.iter().map(|f| f.value).collect()),
            same: Same::new(r),
        }
    }

    /// The masked values of bucket `b`, one per shape field.
    fn values(&self, b: &Bucket) -> SmallVec<[u128; 4]> {
        match (&b.wide, &self.spans) {
            (Some(values), _) => values.iter().copied().collect(),
            (None, Some(spans)) => spans.iter().map(|s| s.get(b.key)).collect(),
            (None, None) => SmallVec::new(),
        }
    }
}

/// Lookups through tables with more than one subtable read each field of
/// the union of their shapes once per packet (instead of once per
/// subtable) when the union has at most this many fields (a power of two).
/// `at` positions are only used then.
const UNION_MAX: usize = 16;

/// A bucket's match, as the structures rebuilding from the tuple space
/// see it.
pub struct BucketFields<'a> {
    pub shape: &'a Shape,
    pub values: SmallVec<[u128; 4]>,
}

impl BucketFields<'_> {
    pub fn triples(&self) -> impl Iterator<Item = (Field, u128, u128)> + Clone + '_ {
        self.shape
            .iter()
            .zip(self.values.iter())
            .map(|((f, m), v)| (*f, *m, *v))
    }

    pub fn compiled(&self) -> CompiledMatch {
        CompiledMatch::from_fields(
            self.triples()
                .map(|(field, mask, value)| FieldMatch { field, value, mask })
                .collect(),
        )
    }
}

/// An entry of the probe order: what a lookup needs to decide whether to
/// probe a subtable, without touching it.
#[derive(Debug, Clone, Copy)]
struct Slot {
    max: u16,
    in_lpm: bool,
    sub: u32,
}

/// See the module comment.
#[derive(Debug, Clone, Default)]
pub struct Tss {
    hasher: DefaultHashBuilder,
    any: Option<Same>,
    subtables: Vec<Option<Subtable>>,
    free: Vec<u32>,
    by_shape: HashTable<u32>,
    order: Vec<Slot>,
    /// The slots of `order` not marked `in_lpm`, same order.
    order_odd: Vec<Slot>,
    /// Every field of every shape, sorted (see `UNION_MAX`).
    union: Vec<Field>,
    /// `union` as a set.
    union_set: FieldSet,
}

impl Tss {
    /// Every field some shape matches on: all a lookup reads of a key
    /// (with their presence bits).
    pub fn field_set(&self) -> FieldSet {
        self.union_set
    }

    /// Number of subtables (distinct non-empty shapes).
    pub fn n_nonempty(&self) -> usize {
        self.order.len()
    }

    /// The non-empty shapes, in subtable order.
    pub fn shapes(&self) -> impl Iterator<Item = &Shape> + '_ {
        self.order
            .iter()
            .filter_map(|o| self.sub(o.sub))
            .map(|s| &*s.shape)
    }

    fn sub(&self, i: u32) -> Option<&Subtable> {
        self.subtables.get(i as usize).and_then(Option::as_ref)
    }

    fn shape_hash(&self, fields: &[FieldMatch]) -> u64 {
        let mut h = self.hasher.build_hasher();
        for f in fields {
            h.write_u8(f.field as u8);
            h.write_u128(f.mask);
        }
        h.finish()
    }

    /// The subtable of a non-empty match's shape.
    fn find_sub(&self, fields: &[FieldMatch], shape_hash: u64) -> Option<u32> {
        self.by_shape
            .find(shape_hash, |i| {
                self.sub(*i).is_some_and(|s| {
                    s.shape.len() == fields.len()
                        && s.shape
                            .iter()
                            .zip(fields)
                            .all(|((f, m), g)| *f == g.field && *m == g.mask)
                })
            })
            .copied()
    }

    /// Whether every non-empty subtable is one an LPM trie stands for
    /// (a lookup beside the trie then probes none).
    pub fn all_in_lpm(&self) -> bool {
        self.order_odd.is_empty()
    }

    /// Number of subtables marked `in_lpm`.
    pub fn n_in_lpm(&self) -> usize {
        self.subtables.iter().flatten().filter(|s| s.in_lpm).count()
    }
}

#[cfg(test)]
mod tests;
