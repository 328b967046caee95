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
use super::{Ref, Same, Shape};
use crate::matcher::{full_mask, CompiledMatch, FieldMatch};
use hashbrown::{DefaultHashBuilder, HashTable};
use packet::{Field, FieldSet, FlowKey};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};

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

    /// Moves subtable `i` to its place in `order` after its max priority
    /// changed (or to add it).
    fn reorder(&mut self, i: u32) {
        for list in [&mut self.order, &mut self.order_odd] {
            if let Some(pos) = list.iter().position(|o| o.sub == i) {
                list.remove(pos);
            }
        }
        if let Some(s) = self.sub(i) {
            let slot = Slot {
                max: s.max_priority(),
                in_lpm: s.in_lpm,
                sub: i,
            };
            let pos = self.order.partition_point(|o| o.max >= slot.max);
            self.order.insert(pos, slot);
            if !slot.in_lpm {
                let pos = self.order_odd.partition_point(|o| o.max >= slot.max);
                self.order_odd.insert(pos, slot);
            }
        }
    }

    /// Adds an entry; true if its shape got a new subtable.
    /// `in_lpm` marks the subtable if this creates it.
    pub fn insert(&mut self, r: Ref, m: &CompiledMatch, in_lpm: bool) -> bool {
        let fields = m.fields();
        if fields.is_empty() {
            match &mut self.any {
                Some(s) => s.add(r),
                None => self.any = Some(Same::new(r)),
            }
            return false;
        }
        let shape_hash = self.shape_hash(fields);
        let (i, created) = match self.find_sub(fields, shape_hash) {
            Some(i) => (i, false),
            None => {
                let shape: Box<Shape> = fields.iter().map(|f| (f.field, f.mask)).collect();
                let filter_at = filter_field(&shape);
                let sub = Subtable {
                    spans: spans(&shape),
                    shape,
                    shape_hash,
                    required: m.required(),
                    buckets: HashTable::new(),
                    prios: BTreeMap::new(),
                    in_lpm,
                    at: Box::default(),
                    filter_at,
                    filter: None,
                };
                let i = match self.free.pop() {
                    Some(i) => {
                        if let Some(slot) = self.subtables.get_mut(i as usize) {
                            *slot = Some(sub);
                        }
                        i
                    }
                    None => {
                        self.subtables.push(Some(sub));
                        (self.subtables.len() - 1) as u32
                    }
                };
                let subtables = &self.subtables;
                self.by_shape.insert_unique(shape_hash, i, |j| {
                    subtables
                        .get(*j as usize)
                        .and_then(Option::as_ref)
                        .map_or(0, |s| s.shape_hash)
                });
                (i, true)
            }
        };
        let hasher = &self.hasher;
        let Some(sub) = self.subtables.get_mut(i as usize).and_then(Option::as_mut) else {
            return created;
        };
        let (hash, packed) = sub.match_hash(hasher, fields);
        let old_max = sub.max_priority();
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        match sub.buckets.find_mut(hash, eq) {
            Some(b) => b.same.add(r),
            None => {
                let b = sub.new_bucket(fields, hash, packed, r);
                sub.buckets.insert_unique(hash, b, |b| b.hash);
                sub.filter_added(hasher, fields);
            }
        }
        *sub.prios.entry(r.rank.priority()).or_insert(0) += 1;
        if created || sub.max_priority() != old_max {
            self.reorder(i);
        }
        if created {
            self.refresh_union();
        }
        created
    }

    /// Recomputes `union` and every subtable's positions in it (when a
    /// shape comes or goes: O(shapes x fields)).
    fn refresh_union(&mut self) {
        let mut union: Vec<Field> = self
            .subtables
            .iter()
            .flatten()
            .flat_map(|s| s.shape.iter().map(|(f, _)| *f))
            .collect();
        union.sort();
        union.dedup();
        for sub in self.subtables.iter_mut().flatten() {
            sub.at = sub
                .shape
                .iter()
                .map(|(f, m)| {
                    let p = union.binary_search(f).map_or(UNION_MAX - 1, |p| p);
                    (p.min(UNION_MAX - 1) as u8, *m)
                })
                .collect();
        }
        self.union_set = FieldSet::of(&union);
        self.union = union;
    }

    /// Removes an entry: `None` if absent, else whether its subtable went
    /// away with it.
    pub fn remove(&mut self, r: Ref, m: &CompiledMatch) -> Option<bool> {
        self.remove_get_best(r, m).map(|(destroyed, _)| destroyed)
    }

    /// `remove`, also giving the best entry left with the same match
    /// (`None` if none, or for the empty match).
    pub fn remove_get_best(&mut self, r: Ref, m: &CompiledMatch) -> Option<(bool, Option<Ref>)> {
        let fields = m.fields();
        if fields.is_empty() {
            let any = self.any.as_mut()?;
            if any.remove(r)? {
                self.any = None;
            }
            return Some((false, None));
        }
        let shape_hash = self.shape_hash(fields);
        let i = self.find_sub(fields, shape_hash)?;
        let hasher = &self.hasher;
        let sub = self
            .subtables
            .get_mut(i as usize)
            .and_then(Option::as_mut)?;
        let (hash, packed) = sub.match_hash(hasher, fields);
        let old_max = sub.max_priority();
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        let mut entry = sub.buckets.find_entry(hash, eq).ok()?;
        let left = if entry.get_mut().same.remove(r)? {
            entry.remove();
            None
        } else {
            Some(entry.get().same.best())
        };
        let p = r.rank.priority();
        if let Some(c) = sub.prios.get_mut(&p) {
            *c -= 1;
            if *c == 0 {
                sub.prios.remove(&p);
            }
        }
        if sub.buckets.is_empty() {
            self.subtables[i as usize] = None;
            self.free.push(i);
            if let Ok(e) = self.by_shape.find_entry(shape_hash, |j| *j == i) {
                e.remove();
            }
            self.reorder(i);
            self.refresh_union();
            return Some((true, left));
        }
        if sub.max_priority() != old_max {
            self.reorder(i);
        }
        Some((false, left))
    }

    /// The entry with exactly this match and priority.
    pub fn find(&self, m: &CompiledMatch, priority: u16) -> Option<Ref> {
        let fields = m.fields();
        let same = if fields.is_empty() {
            self.any.as_ref()?
        } else {
            let sub = self.sub(self.find_sub(fields, self.shape_hash(fields))?)?;
            let (hash, packed) = sub.match_hash(&self.hasher, fields);
            let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
            &sub.buckets.find(hash, eq)?.same
        };
        same.iter().find(|r| r.rank.priority() == priority)
    }

    /// The best entry with exactly this (non-empty) match, any priority.
    pub fn best(&self, m: &CompiledMatch) -> Option<Ref> {
        let fields = m.fields();
        let sub = self.sub(self.find_sub(fields, self.shape_hash(fields))?)?;
        let (hash, packed) = sub.match_hash(&self.hasher, fields);
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        sub.buckets.find(hash, eq).map(|b| b.same.best())
    }

    /// The best match-everything entry (or `Ref::NONE`).
    #[inline]
    pub fn lookup_any(&self) -> Ref {
        self.any.as_ref().map_or(Ref::NONE, Same::best)
    }

    /// The best entry matching `key` (module comment).
    pub fn lookup(&self, key: &FlowKey) -> Option<Ref> {
        self.lookup_with(key, Ref::NONE, false).some()
    }

    /// The better of `start` and the best entry matching `key`, skipping
    /// the subtables an LPM trie stands for if `skip_lpm` (the caller
    /// looked those up in the trie and passes the result as `start`).
    #[inline]
    pub fn lookup_with<K: Fields>(&self, key: &K, start: Ref, skip_lpm: bool) -> Ref {
        let mut best = start.better(self.lookup_any());
        let order = if skip_lpm {
            &self.order_odd
        } else {
            &self.order
        };
        if order.len() > 1 && self.union.len() <= UNION_MAX {
            // Several probes: read the packet's fields once.
            let mut vals = [0u128; UNION_MAX];
            let present = key.present();
            for (v, f) in vals.iter_mut().zip(&self.union) {
                if present.contains(*f) {
                    *v = key.bits(*f);
                }
            }
            for o in order {
                if o.max < best.rank.priority() {
                    break;
                }
                let Some(sub) = self.sub(o.sub) else { continue };
                if let Some(r) = sub.probe_vals(&self.hasher, present, &vals) {
                    best = best.better(r);
                }
            }
            return best;
        }
        for o in order {
            if o.max < best.rank.priority() {
                break;
            }
            let Some(sub) = self.sub(o.sub) else { continue };
            if let Some(r) = sub.probe(&self.hasher, key) {
                best = best.better(r);
            }
        }
        best
    }

    /// `lookup_with` for several keys: `best[j]` becomes
    /// `lookup_with(&keys[at[j]], best[j], skip_lpm)`.
    ///
    /// Subtable by subtable rather than key by key (the same probes, the
    /// same answers): for each subtable in the order, every key still
    /// able to do better there (the priority cut-off of `lookup_with`
    /// holds per key) is hashed, then every key's candidate bucket is
    /// located (the control bytes only: an `eq` that accepts any
    /// candidate reads no bucket), then one word of every candidate is
    /// read, then the real probes run. A probe is two dependent cache
    /// misses (control bytes, bucket); none of these loops makes a load
    /// depend on another key's, so the CPU has the misses of all keys in
    /// flight at once and the probes hit. (Fetching ahead without
    /// prefetch instructions: there is no `unsafe` here.)
    pub fn lookup_many<K: Fields>(&self, keys: &[K], at: &[u8], best: &mut [Ref], skip_lpm: bool) {
        const N: usize = crate::batch::CHUNK;
        let n = at.len().min(best.len()).min(N);
        // The keys by their place in `at` (`None` past the end of `keys`:
        // looked up as nothing).
        let key = |i: usize| keys.get(usize::from(at[i]));
        let any = self.lookup_any();
        for (i, b) in best[..n].iter_mut().enumerate() {
            if key(i).is_some() {
                *b = b.better(any);
            }
        }
        let order = if skip_lpm {
            &self.order_odd
        } else {
            &self.order
        };
        for o in order {
            let Some(sub) = self.sub(o.sub) else { continue };
            let mut hash = [None; N];
            let mut todo = false;
            for i in 0..n {
                let Some(k) = key(i) else { continue };
                if o.max >= best[i].rank.priority()
                    && k.present().contains_all(sub.required)
                    && sub.may_hold(k)
                {
                    hash[i] = Some(sub.key_hash(&self.hasher, k));
                    todo = true;
                }
            }
            if !todo {
                // The order is by max priority: no key does better later.
                if (0..n).all(|i| key(i).is_none() || o.max < best[i].rank.priority()) {
                    break;
                }
                continue;
            }
            let mut cand: [Option<&Bucket>; N] = [None; N];
            for i in 0..n {
                cand[i] = hash[i].and_then(|h| sub.buckets.find(h, |_| true));
            }
            let mut sink = 0u64;
            for c in cand.iter().take(n).flatten() {
                // The word the probe compares first.
                sink ^= c.key as u64;
            }
            std::hint::black_box(sink);
            for i in 0..n {
                let (Some(h), Some(k)) = (hash[i], key(i)) else {
                    continue;
                };
                if let Some(b) = sub.buckets.find(h, |b| sub.holds(b, k)) {
                    best[i] = best[i].better(b.same.best());
                }
            }
        }
    }

    /// Marks the subtables an LPM trie stands for.
    pub fn mark_lpm(&mut self, f: impl Fn(&Shape) -> bool) {
        for sub in self.subtables.iter_mut().flatten() {
            sub.in_lpm = f(&sub.shape);
        }
        for o in &mut self.order {
            if let Some(Some(sub)) = self.subtables.get(o.sub as usize) {
                o.in_lpm = sub.in_lpm;
            }
        }
        self.order_odd = self.order.iter().filter(|o| !o.in_lpm).copied().collect();
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

    /// Calls `f` for every bucket (every distinct non-empty match) with
    /// its best entry (in no particular order).
    pub fn for_each_bucket(&self, mut f: impl FnMut(BucketFields<'_>, Ref)) {
        for o in &self.order {
            let Some(sub) = self.sub(o.sub) else { continue };
            for b in sub.buckets.iter() {
                let fields = BucketFields {
                    shape: &sub.shape,
                    values: sub.values(b),
                };
                f(fields, b.same.best());
            }
        }
    }

    /// Calls `f` for every entry with its match (in no particular order).
    pub fn for_each(&self, mut f: impl FnMut(Ref, BucketFields<'_>)) {
        if let Some(any) = &self.any {
            for r in any.iter() {
                f(
                    r,
                    BucketFields {
                        shape: &[],
                        values: SmallVec::new(),
                    },
                );
            }
        }
        for o in &self.order {
            let Some(sub) = self.sub(o.sub) else { continue };
            for b in sub.buckets.iter() {
                for r in b.same.iter() {
                    f(
                        r,
                        BucketFields {
                            shape: &sub.shape,
                            values: sub.values(b),
                        },
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket fills one cache line (module comment).
    #[test]
    fn bucket_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
    }

    /// Shapes whose mask spans fit in 128 bits are packed, side by side;
    /// wider ones are not. Values come back out of a packed key.
    #[test]
    fn packing() {
        use Field::*;
        let v4 = 0xffff_ffffu128;
        let five_tuple = [
            (EthType, 0xffff),
            (IpProto, 0xff),
            (Ipv4Src, v4),
            (Ipv4Dst, v4),
            (TcpDst, 0xffff),
        ];
        let s = spans(&five_tuple).expect("104 bits are packed");
        let offsets: Vec<u32> = s.iter().map(Span::offset).collect();
        assert_eq!(offsets, [0, 16, 24, 56, 88]);
        // A prefix keeps only its span: /24 is 24 bits at its low bit 8.
        let s = spans(&[(EthType, 0xffff), (Ipv4Dst, 0xffff_ff00)]).expect("40 bits");
        assert_eq!((s[1].shift, s[1].up, s[1].offset()), (8, true, 16));
        let key = s[0].put(0x0800) | s[1].put(0x0a01_02ff);
        assert_eq!((s[0].get(key), s[1].get(key)), (0x0800, 0x0a01_0200));
        // A whole IPv6 address fills the key exactly; anything more is wide.
        assert!(spans(&[(Ipv6Dst, u128::MAX)]).is_some());
        assert!(spans(&[(EthType, 0xffff), (Ipv6Dst, u128::MAX)]).is_none());
        assert!(spans(&[(Ipv6Src, u128::MAX << 64), (Ipv6Dst, u128::MAX << 64)]).is_some());
        assert!(spans(&[(Ipv6Src, u128::MAX << 63), (Ipv6Dst, u128::MAX << 64)]).is_none());
    }
}
