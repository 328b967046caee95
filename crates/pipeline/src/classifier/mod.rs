//! Lookup structures of a flow table, and the automatic choice between
//! them ([`Auto`]).
//!
//! # What a classifier answers
//!
//! Given a packet's [`FlowKey`], the spec wants the matching entry of
//! highest priority; among equal priorities this switch picks the earliest
//! installed one. Both criteria fold into one integer, the entry's
//! [`Rank`]: priority in the high 16 bits, the complement of the
//! installation sequence number below, so "better" is simply "larger".
//! Every structure below returns the [`Ref`] (rank + handle) of the best
//! matching entry (the exact index: its handle and priority), and
//! [`Auto`] answers with the handle; the table turns the handle into a
//! position in its store. Structures never see the store: counters, timeouts and flow-mod
//! semantics stay in `table.rs` / `flow_mod.rs` whatever the structure.
//!
//! # The shape of a match
//!
//! A compiled match is a list of `(field, value, mask)` triples. Its
//! *shape* is the list of `(field, mask)` pairs without the values. Two
//! entries of the same shape match a packet only if the packet's masked
//! bits equal their values, so all entries of one shape can be found with
//! a single hash probe keyed by the packet's masked bits. That is the base
//! of everything here.
//!
//! # Tuple space search ([`tss`]) — always maintained
//!
//! ```text
//!  any:   [r0]                  match-everything entries (the table-miss)
//!  order: [(max prio 300, S2), (max prio 200, S0)]
//!  S0  shape [(EthType, ffff), (Ipv4Dst, ffffff00)]
//!      buckets: {[0x0800, 10.1.2.0]: [r5], [0x0800, 10.9.9.0]: [r7, r2]}
//!  S2  shape [(InPort, ffffffff)]    buckets: {[3]: [r9]}
//! ```
//!
//! One *subtable* per non-empty shape, each a hash table from masked values
//! to the list of entries with exactly that match (equal matches at
//! different priorities share a bucket, best first); match-everything
//! entries need no probe and sit in one list. Subtables are kept ordered by
//! the highest priority they hold. A lookup starts from the best
//! match-everything entry, probes the subtables in that order and stops as
//! soon as the next subtable's max priority is below the best match found
//! so far (equal priority still probes: an earlier installed entry might
//! hide there). Insert and remove touch one bucket, one
//! per-subtable priority count (a small ordered map, so the max priority
//! is known after a removal too) and, when the max priority changes, move
//! one subtable in the order vector. The probes are allocation-free: the
//! packet's masked bits are fed straight into the hasher and compared in
//! place.
//!
//! The same structure is the table's strict index: `(priority, match)` ->
//! entry is one shape probe plus one bucket probe (ADD's replace check,
//! DELETE_STRICT, MODIFY_STRICT, the replicas' removals).
//!
//! # Exact match ([`exact`]) — beside the tuple space, one shape only
//!
//! The L2 MAC table case: every entry has the same shape (plus, maybe,
//! match-everything entries such as the table-miss, which stay in the
//! tuple space's `any`). When that shape's masks span at most 64 bits in
//! all (eth_dst 48; in_port 32; eth_type + ip_proto + ipv4_src 56), the
//! packet's masked bits pack into one `u64`, and an open-addressing table
//! of 16-byte slots (packed key, handle, priority) holds the best entry of
//! each distinct match:
//!
//! ```text
//!  key --pack--> 0x0000_0a01_0203_0806 --hash--> slot 5
//!  slots  [ - | - | - | - | k9 | k1 h7 p100 | k4 | - ]   load <= 1/2
//! ```
//!
//! One multiply-fold hash and usually one cache line per probe, against
//! the tuple space's hasher over 128-bit words, SwissTable control bytes
//! and a 64-byte bucket compared through a packed key built for it
//! ([`tss`]). The tuple space stays the strict index and holds every
//! entry; the exact index mirrors each bucket's best entry (an insert or
//! remove updates one slot from the bucket), and is compared with the
//! best match-everything entry by priority (the tuple space decides an
//! equal priority).
//!
//! # Longest prefix match ([`lpm`]) — beside the tuple space
//!
//! A routing table has many shapes (one per prefix length) that differ in
//! the mask of a single field, a prefix mask (`eth_type=0x0800,
//! ipv4_dst=10.0.0.0/8`, `.../24`, ...). Tuple space search would probe up
//! to 33 subtables. Shapes of the form "the same context fields S, plus a
//! prefix of field F (length 0 = F absent)" also go into a multibit trie
//! per context value, described in [`lpm`]: a packet walks at most
//! `width(F)/4 + 1` nodes, and the best rank along the path wins, so the
//! answer stays exact when priorities do not follow prefix lengths.
//!
//! The trie stands for the subtables in its form, which are marked in the
//! tuple space; shapes outside the form (an ARP rule, an `in_port` rule
//! next to the routes) stay ordinary subtables. A lookup walks the trie,
//! then the unmarked subtables with the trie's answer as the best so far
//! (so the priority cut-off applies), then compares the match-everything
//! entries.
//!
//! Which form: when a new shape arrives and there is no trie, every pair of
//! the first [`LPM_PAIR_SHAPES`] subtables that differ in exactly one
//! field, prefix-masked on both sides and shorter than the field on one,
//! proposes a form; the form most subtables share wins if it covers at
//! least half of them, and the trie is built from the tuple space's
//! buckets. The trie is then kept up to date entry by entry. It is dropped
//! when its last entry goes, or when new shapes outside its form leave it
//! standing for less than half of the subtables (then a form is sought
//! afresh).
//!
//! # Linear scan ([`linear`]) — small tables
//!
//! Up to [`LINEAR_MAX`] entries, a rank-sorted list checked entry by entry
//! is cheaper than a few hash probes.
//!
//! # The choice ([`Auto`], recomputed after every change in O(1))
//!
//! | table                                                   | lookup via |
//! |---------------------------------------------------------|------------|
//! | fewer than [`HASH_MIN_ENTRIES`] entries, or up to [`LINEAR_MAX`] entries and not exactly one non-empty shape | `linear` |
//! | exactly one non-empty shape                             | `hash`: `exact` if the shape packs in 64 bits, else `tss` (one subtable) |
//! | a trie exists (LPM form covering at least half of the shapes when chosen) | `lpm` (trie + other subtables) |
//! | otherwise                                               | `tss`      |
//!
//! The tuple space is always up to date (it is also the strict index). The
//! linear list exists while the table has at most [`LINEAR_MAX`] entries
//! (rebuilt from the tuple space when a table shrinks back to that size).
//! The exact index exists while the table has exactly one non-empty shape
//! and it packs (whatever the kind, so it is ready when the table passes
//! [`HASH_MIN_ENTRIES`]): it is dropped when a second shape arrives and
//! built from the tuple space's buckets when the table is back to one
//! shape. Apart from these (re)builds of a trie or of the exact index when
//! the set of *shapes* changes, no insert or remove rebuilds anything
//! proportional to the table (the exact index doubles its slots now and
//! then, rehashing its own keys: O(1) amortised).
//!
//! # Cost model (per packet, per table) and adversarial traffic
//!
//! There is no flow cache: the cost of a lookup depends on the rules, not
//! on what traffic came before, so an attacker who controls only packets
//! cannot build up state that slows the switch ("tuple space explosion"
//! attacks against OVS work by making the *megaflow cache* grow one
//! subtable per crafted packet; there is nothing here that grows).
//!
//! - `linear`: at most [`LINEAR_MAX`] match checks.
//! - `hash` (exact index): packing the shape's fields, one multiply-fold
//!   hash, a linear probe of 1.3 slots on average at the worst load
//!   (usually one cache line), and reading the best match-everything
//!   entry; a full tuple space lookup only when that entry's priority
//!   equals the found one's. The seeds are random per index.
//! - `hash` (shape over 64 bits): one hash of the shape's masked fields +
//!   one SwissTable probe (+ the best match-everything entry).
//! - `lpm`: one context probe (a scan of a few packed words when there
//!   are few contexts), then for a context with a direct table (see
//!   [`lpm`]) one read of it plus at most `(width - 16)/4` trie nodes (4
//!   for IPv4: a /24 takes 3 reads in all), otherwise at most `width/4`
//!   nodes after skipping the one-child chain at the top (8 for IPv4, 32
//!   for IPv6); one cache line per node; plus one probe per subtable
//!   outside the form.
//! - `tss`: at most one probe per subtable, i.e. per distinct shape the
//!   *controller* installed. Packets choose only how early the scan stops:
//!   a packet that misses the high-priority subtables pays the whole list,
//!   which is the bound to plan for. The hash is keyed with a random seed
//!   per table, so crafted packets cannot aim at long probe sequences
//!   either (and buckets hold only controller-installed entries). A
//!   subtable of at least 8 buckets with an exact field of 16 bits or
//!   more keeps a filter (`tss` module comment): most probes that cannot
//!   match cost one bit read instead of the hash of every field; a packet
//!   made to hit a set bit pays the probe as without it.
//!
//! Control plane: insert/remove are O(shape length + log n) for the tuple
//! space and the priority order, plus O(width/4) trie nodes in `lpm` form
//! (and, with a direct table, the 2^(16 - L) slots under a prefix of
//! length L < 16, else one slot) or one slot (amortised) of the exact
//! index;
//! a subtable's position in the order moves by one `Vec` shift (the number
//! of shapes, not of entries).

pub mod exact;
pub mod fields;
pub mod linear;
pub mod lpm;
pub mod tss;

#[cfg(test)]
mod tests;

use crate::matcher::CompiledMatch;

/// The splitmix64 mixer (Steele et al.): every output bit depends on
/// every input bit. It finishes the SELECT groups' flow hash
/// (`process::flow_hash_of`) and, over the golden-ratio sequence, makes
/// the trie's perfect-hash multipliers (`lpm`).
#[inline(always)]
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
pub use exact::{Exact, Hit};
use fields::Fields;
use linear::Linear;
use lpm::{Lpm, LpmForm};
use packet::{Field, FieldSet, FlowKey};
use tss::Tss;

/// Below this many entries the table scans (old name kept for callers).
pub const HASH_MIN_ENTRIES: usize = 4;

/// Tables of up to this many entries keep a linear list; with more than
/// one shape they scan it.
pub const LINEAR_MAX: usize = 8;

/// Bits of the installation sequence number in a [`Rank`].
const SEQ_BITS: u32 = 48;

/// Sequence numbers stay strictly below this; the table renumbers its
/// entries (keeping their order) before reaching it. At a million
/// flow-mods per second that takes nine years.
pub(crate) const SEQ_LIMIT: u64 = (1 << SEQ_BITS) - 1;

/// Priority and installation order packed so that a better entry has a
/// larger rank: `priority << 48 | (SEQ_LIMIT - seq)`. Never zero for an
/// entry (`seq < SEQ_LIMIT`), so `Rank::NONE` sorts below every entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Rank(u64);

impl Rank {
    /// Below every entry.
    pub const NONE: Rank = Rank(0);

    pub fn new(priority: u16, seq: u64) -> Rank {
        Rank((u64::from(priority) << SEQ_BITS) | (SEQ_LIMIT - seq.min(SEQ_LIMIT - 1)))
    }

    pub fn priority(self) -> u16 {
        (self.0 >> SEQ_BITS) as u16
    }
}

/// An entry as the structures know it: its rank and the table's stable
/// handle for it (the table maps handles to store positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ref {
    pub rank: Rank,
    pub handle: u32,
}

impl Ref {
    pub const NONE: Ref = Ref {
        rank: Rank::NONE,
        handle: u32::MAX,
    };

    /// The better of two (by rank; `NONE` loses).
    #[inline]
    pub fn better(self, other: Ref) -> Ref {
        if other.rank > self.rank {
            other
        } else {
            self
        }
    }

    pub fn is_none(self) -> bool {
        self.rank == Rank::NONE
    }

    pub fn some(self) -> Option<Ref> {
        (!self.is_none()).then_some(self)
    }
}

/// Entries with one and the same match (they differ in priority or
/// installation order), best first. The first is kept inline: almost every
/// bucket has exactly one entry, and then no list is allocated. The list
/// of the others sits behind one thin pointer so that a `Same` is 24
/// bytes (a tuple-space bucket, `Same` included, fills one cache line).
#[derive(Debug, Clone)]
pub struct Same {
    best: Ref,
    /// The others, best first (`None`: none). Boxed for the thin pointer
    /// (8 bytes; a `Vec` is 24).
    #[allow(clippy::box_collection)]
    rest: Option<Box<Vec<Ref>>>,
}

impl Same {
    pub fn new(r: Ref) -> Same {
        Same {
            best: r,
            rest: None,
        }
    }

    #[inline]
    pub fn best(&self) -> Ref {
        self.best
    }

    pub fn add(&mut self, r: Ref) {
        let rest = self.rest.get_or_insert_with(Box::default);
        if r.rank > self.best.rank {
            let old = std::mem::replace(&mut self.best, r);
            rest.insert(0, old);
        } else {
            let pos = rest.partition_point(|x| x.rank > r.rank);
            rest.insert(pos, r);
        }
    }

    /// Removes `r`; `Some(now_empty)` if it was there.
    pub fn remove(&mut self, r: Ref) -> Option<bool> {
        if self.best == r {
            let Some(rest) = self.rest.as_mut().filter(|v| !v.is_empty()) else {
                return Some(true);
            };
            self.best = rest.remove(0);
        } else {
            let rest = self.rest.as_mut()?;
            let pos = rest.iter().position(|x| *x == r)?;
            rest.remove(pos);
        }
        if self.rest.as_ref().is_some_and(|v| v.is_empty()) {
            self.rest = None;
        }
        Some(false)
    }

    /// Every entry, best first.
    pub fn iter(&self) -> impl Iterator<Item = Ref> + '_ {
        std::iter::once(self.best).chain(self.rest.iter().flat_map(|v| v.iter().copied()))
    }
}

/// A shape: `(field, mask)` pairs sorted by field (module comment).
pub type Shape = [(Field, u128)];

/// Which structure answers lookups (module comment, "The choice").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Linear,
    Hash,
    Lpm,
    Tss,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Linear => "linear",
            Kind::Hash => "hash",
            Kind::Lpm => "lpm",
            Kind::Tss => "tss",
        }
    }
}

/// What happened to an entry (`Auto::sync_exact`).
#[derive(Debug, Clone, Copy)]
enum Change {
    Added,
    /// With the best entry left with the same match.
    Removed(Option<Ref>),
}

/// The table's classifier; see the module comment.
#[derive(Debug, Clone)]
pub(crate) struct Auto {
    tss: Tss,
    /// The trie, over the entries whose shape is in its form; those
    /// subtables of `tss` are marked `in_lpm`.
    lpm: Option<Lpm>,
    /// Present exactly while the table has at most `LINEAR_MAX` entries.
    linear: Option<Linear>,
    /// Present exactly while the table has one non-empty shape and that
    /// shape packs into 64 bits (`exact`), unless `exact_on` is off.
    exact: Option<Exact>,
    /// Whether to keep the exact index (see `set_exact_index`).
    exact_on: bool,
    /// Whether to keep an LPM trie (see `set_lpm_index`).
    lpm_on: bool,
    len: usize,
    kind: Kind,
}

impl Default for Auto {
    fn default() -> Self {
        Auto {
            tss: Tss::default(),
            lpm: None,
            linear: Some(Linear::default()),
            exact: None,
            exact_on: true,
            lpm_on: true,
            len: 0,
            kind: Kind::Linear,
        }
    }
}

/// At most this many subtables (those of highest max priority) are paired
/// up when looking for an LPM form.
const LPM_PAIR_SHAPES: usize = 16;

impl Auto {
    /// The structure answering lookups now.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Number of distinct non-empty shapes (subtables) in the table.
    #[cfg(test)]
    pub fn n_shapes(&self) -> usize {
        self.tss.n_nonempty()
    }

    fn in_lpm_form(&self, m: &CompiledMatch) -> bool {
        self.lpm.as_ref().is_some_and(|lpm| {
            lpm.form()
                .conforms(m.fields().iter().map(|f| (f.field, f.mask)))
        })
    }

    /// Adds an entry.
    pub fn insert(&mut self, r: Ref, m: &CompiledMatch) {
        let in_lpm = self.in_lpm_form(m);
        let created = self.tss.insert(r, m, in_lpm);
        match &mut self.lpm {
            Some(lpm) if in_lpm => lpm.insert(r, triples(m)),
            // A new shape outside the form: if the trie now stands for
            // less than half of the subtables, look for a better form.
            Some(_) if created && 2 * self.tss.n_in_lpm() < self.tss.n_nonempty() => {
                self.lpm = None;
                self.tss.mark_lpm(|_| false);
                self.try_lpm();
            }
            None if created => self.try_lpm(),
            _ => {}
        }
        self.sync_exact(r, m, Change::Added, created);
        self.len += 1;
        if self.len <= LINEAR_MAX {
            self.linear.get_or_insert_with(Linear::default).insert(r, m);
        } else {
            self.linear = None;
        }
        self.choose();
    }

    /// Removes an entry (as inserted); false if it was not there.
    pub fn remove(&mut self, r: Ref, m: &CompiledMatch) -> bool {
        let in_lpm = self.in_lpm_form(m);
        let Some((destroyed, left)) = self.tss.remove_get_best(r, m) else {
            return false;
        };
        match &mut self.lpm {
            Some(lpm) if in_lpm => {
                lpm.remove(r, triples(m));
                if lpm.is_empty() {
                    // Nothing of that form left: pick a form afresh.
                    self.lpm = None;
                    self.tss.mark_lpm(|_| false);
                    self.try_lpm();
                }
            }
            None if destroyed => self.try_lpm(),
            _ => {}
        }
        self.sync_exact(r, m, Change::Removed(left), destroyed);
        self.len -= 1;
        match &mut self.linear {
            Some(l) => {
                l.remove(r);
            }
            None if self.len <= LINEAR_MAX => {
                let mut l = Linear::default();
                self.tss
                    .for_each(|r, fields| l.insert(r, &fields.compiled()));
                self.linear = Some(l);
            }
            None => {}
        }
        self.choose();
        true
    }

    /// The entry with exactly this match and priority.
    pub fn find(&self, m: &CompiledMatch, priority: u16) -> Option<Ref> {
        self.tss.find(m, priority)
    }

    /// The handle of the best entry matching `key`. The exact index's and
    /// the linear list's paths are small and inlined into the caller; the
    /// others are not.
    #[inline(always)]
    pub fn lookup(&self, key: &FlowKey) -> Option<u32> {
        match (self.kind, &self.exact, &self.linear) {
            (Kind::Hash, Some(ex), _) => self.exact_answer(ex.probe(key), key),
            (Kind::Linear, _, Some(l)) => l.lookup(key).map(|r| r.handle),
            _ => self.lookup_other(key),
        }
    }

    /// `lookup` through the trie and the tuple space (`lookup_fields`,
    /// a call of its own).
    #[inline]
    fn lookup_other(&self, key: &FlowKey) -> Option<u32> {
        self.lookup_fields(key).some().map(|r| r.handle)
    }

    /// The answer for `key` given what the exact index found for it: the
    /// better of that and the best match-everything entry, by priority;
    /// on equal priorities the installation order decides, which only the
    /// tuple space knows (it is asked then).
    #[inline]
    fn exact_answer(&self, hit: Option<Hit>, key: &FlowKey) -> Option<u32> {
        match self.answer_known(hit) {
            Some(answer) => answer,
            None => self.tie(key),
        }
    }

    /// The exact index, when it holds every entry but the match-everything
    /// ones (it exists exactly then, whatever the kind) and its keys can
    /// be made from an Ethernet header (`Exact::ethernet`): what the
    /// Ethernet template (`crate::template`) looks packets up in.
    #[inline]
    pub fn ethernet_index(&self) -> Option<&Exact> {
        self.exact_index().filter(|ex| ex.ethernet())
    }

    /// The exact index, when it holds every entry but the match-everything
    /// ones (it exists exactly then, whatever the kind): what the chain
    /// template (`crate::template`) looks packets up in.
    #[inline]
    pub fn exact_index(&self) -> Option<&Exact> {
        self.exact.as_ref()
    }

    /// The trie and where IPv4 packets' walks start in it, when this
    /// table is an IPv4 routing table that the trie answers for alone:
    /// the kind is `lpm`, the trie is over `ipv4_dst` with `eth_type=0x0800`
    /// as its one context (`Lpm::ipv4_start`), and no entry lies outside
    /// it but match-everything ones. The answer for an IPv4 packet is
    /// then the better of the trie's (`Lpm::lookup_v4_many`) and the best
    /// match-everything entry (`lookup_any`), by rank (no tie: ranks
    /// are distinct): what the route template (`crate::template`) looks
    /// packets up with.
    #[inline]
    pub fn ipv4_routes(&self) -> Option<(&Lpm, lpm::Start)> {
        match (self.kind, &self.lpm) {
            (Kind::Lpm, Some(lpm)) if self.tss.all_in_lpm() => Some((lpm, lpm.ipv4_start()?)),
            _ => None,
        }
    }

    /// The best match-everything entry (`Ref::NONE`: none).
    #[inline]
    pub fn lookup_any(&self) -> Ref {
        self.tss.lookup_any()
    }

    /// `lookup`'s answer given what the exact index found for the key
    /// (`hit`): the better of that and the best match-everything entry,
    /// by priority; `None` on equal priorities, where the installation
    /// order decides, which only the tuple space knows (it needs the
    /// whole key: `exact_answer`).
    #[inline]
    pub fn answer_known(&self, hit: Option<Hit>) -> Option<Option<u32>> {
        let any = self.tss.lookup_any();
        match hit {
            None => Some(any.some().map(|r| r.handle)),
            Some(h) if any.is_none() || h.priority > any.rank.priority() => Some(Some(h.handle)),
            Some(h) if h.priority < any.rank.priority() => Some(Some(any.handle)),
            Some(_) => None,
        }
    }

    /// `exact_answer` when the found entry and the best match-everything
    /// entry have the same priority: the tuple space decides.
    #[cold]
    #[inline(never)]
    fn tie(&self, key: &FlowKey) -> Option<u32> {
        self.tss.lookup(key).map(|r| r.handle)
    }

    /// Every field some entry matches on: all that `lookup` reads of a
    /// key (values and presence bits), whichever structure answers (the
    /// exact index, the trie and the linear list hold entries of the tuple
    /// space). Keys that agree on these fields get the same answer.
    #[inline]
    pub fn match_fields(&self) -> FieldSet {
        self.tss.field_set()
    }

    /// `lookup` for several keys (at most `crate::batch::CHUNK`): `out[j]`
    /// for `keys[at[j]]` (`at`: the keys of a batch that are at this
    /// table, so the loops below visit only those). The exact index reads
    /// the first slot of every key before probing (`Exact::probe_many`), a
    /// trie walks all keys level by level (`Lpm::lookup_many`), the tuple
    /// space probes subtable by subtable for all keys
    /// (`Tss::lookup_many`): the memory reads of different keys overlap. A
    /// linear list is looked up key by key (it is small, hence in cache).
    pub fn lookup_many(&self, keys: &[FlowKey], at: &[u8], out: &mut [Option<u32>]) {
        const N: usize = crate::batch::CHUNK;
        let mut best = [Ref::NONE; N];
        let n = at.len().min(out.len()).min(N);
        let key = |j: usize| keys.get(usize::from(at[j]));
        match (self.kind, &self.linear, &self.lpm, &self.exact) {
            (Kind::Hash, _, _, Some(ex)) => {
                let mut hits = [None; N];
                ex.probe_many(keys, &at[..n], &mut hits[..n]);
                for j in 0..n {
                    out[j] = key(j).and_then(|k| self.exact_answer(hits[j], k));
                }
                return;
            }
            (Kind::Linear, Some(_), _, _) => {
                for (j, o) in out[..n].iter_mut().enumerate() {
                    *o = key(j).and_then(|k| self.lookup(k));
                }
                return;
            }
            _ => self.lookup_trie_tss_many(keys, &at[..n], &mut best[..n]),
        }
        for (o, b) in out[..n].iter_mut().zip(&best[..n]) {
            *o = b.some().map(|r| r.handle);
        }
    }

    /// `lookup_many` through the trie (when the kind is `lpm`) and the
    /// tuple space: `best[j]` for `keys[at[j]]`.
    #[inline(always)]
    fn lookup_trie_tss_many<K: Fields>(&self, keys: &[K], at: &[u8], best: &mut [Ref]) {
        match (self.kind, &self.lpm) {
            (Kind::Lpm, Some(lpm)) => {
                lpm.lookup_many(keys, at, best);
                self.tss.lookup_many(keys, at, best, true);
            }
            _ => self.tss.lookup_many(keys, at, best, false),
        }
    }

    /// `lookup_many` for packets whose fields come from elsewhere than a
    /// `FlowKey` (the chain template's `FrameFields`), whatever the kind:
    /// through the trie and the tuple space, which hold every entry (a
    /// linear list's and an exact index's too). `out[j]` (the best entry,
    /// `Ref::NONE` for none) for `keys[at[j]]`, at most
    /// `crate::batch::CHUNK`: the caller keeps `out` between calls, so
    /// that a batch of one packet does not clear `CHUNK` of them.
    pub(crate) fn lookup_fields_many<K: Fields>(&self, keys: &[K], at: &[u8], out: &mut [Ref]) {
        let n = at.len().min(out.len()).min(crate::batch::CHUNK);
        if let ([j], [o]) = (&at[..n], &mut out[..n]) {
            // One key (a batch of one packet): the loops below set up
            // per-key arrays whose cost then exceeds the lookup's.
            *o = keys
                .get(usize::from(*j))
                .map_or(Ref::NONE, |k| self.lookup_fields(k));
            return;
        }
        out[..n].fill(Ref::NONE);
        self.lookup_trie_tss_many(keys, &at[..n], &mut out[..n]);
    }

    /// The best entry matching one key (or `Ref::NONE`) through the
    /// trie and the tuple space, whatever holds the key's fields
    /// (`lookup_other`'s `FlowKey`, the chain template's `FrameFields`).
    /// Never inlined: `lookup` keeps its slow path out of line, and
    /// inlined into `lookup_fields_many` it cost the many-key path 4-5 %
    /// at batches of 32 (the compiler laid that path out otherwise).
    #[inline(never)]
    fn lookup_fields<K: Fields>(&self, k: &K) -> Ref {
        match (self.kind, &self.lpm) {
            // The trie, then the subtables it does not stand for.
            (Kind::Lpm, Some(lpm)) => self.tss.lookup_with(k, lpm.lookup(k), true),
            _ => self.tss.lookup_with(k, Ref::NONE, false),
        }
    }

    /// A structure for no entries, with this one's settings (the exact
    /// index and the trie kept or not).
    pub fn emptied(&self) -> Auto {
        Auto {
            exact_on: self.exact_on,
            lpm_on: self.lpm_on,
            ..Auto::default()
        }
    }

    /// Turns the exact index on (built now if the table qualifies) or off
    /// (dropped; `hash` lookups then probe the tuple space's one
    /// subtable). A copy of the tables that serves few packets saves the
    /// index's upkeep per flow-mod this way: the switch's control thread
    /// keeps one (it serves packet-outs, stats and flow-mod semantics)
    /// while the workers' replicas forward.
    pub fn set_exact_index(&mut self, on: bool) {
        self.exact_on = on;
        if !on {
            self.exact = None;
        } else if self.exact.is_none() && self.tss.n_nonempty() == 1 {
            self.build_exact();
        }
    }

    /// Turns the LPM trie on (sought and built now if the shapes call for
    /// one, as when a new shape comes) or off (dropped, its subtables
    /// unmarked: `lpm` lookups then probe the tuple space's subtables). As
    /// with `set_exact_index`, for the control thread's copy: a 75,000
    /// prefix ACL's trie holds about 50 MB of nodes that only packet
    /// lookups read.
    pub fn set_lpm_index(&mut self, on: bool) {
        self.lpm_on = on;
        if !on {
            if self.lpm.take().is_some() {
                self.tss.mark_lpm(|_| false);
            }
        } else if self.lpm.is_none() && self.tss.n_nonempty() > 0 {
            self.try_lpm();
        }
        self.choose();
    }

    /// Keeps the exact index in step after `r` with match `m` was added
    /// or removed (`shapes_changed`: a subtable came or went with it). A
    /// change of the set of shapes drops the index and, if one shape is
    /// left, builds it afresh from the tuple space's buckets (O(entries),
    /// like a trie build). Otherwise one slot changes (O(1)): an added
    /// entry takes its key's slot if it has a higher priority than the
    /// slot's entry or the key is new (on an equal priority the tuple
    /// space's bucket says which is best); a removed entry that was its
    /// key's best leaves the slot to the best entry left with its match,
    /// or takes the key away.
    fn sync_exact(&mut self, r: Ref, m: &CompiledMatch, change: Change, shapes_changed: bool) {
        if shapes_changed {
            self.exact = None;
            if self.tss.n_nonempty() == 1 {
                self.build_exact();
            }
            return;
        }
        if m.is_empty() {
            return;
        }
        let Some(ex) = &mut self.exact else { return };
        let key = ex.pack_match(m.fields());
        let now = ex.get(key);
        let best = match (change, now) {
            (Change::Added, None) => Some(r),
            (Change::Added, Some(h)) => match r.rank.priority().cmp(&h.priority) {
                std::cmp::Ordering::Greater => Some(r),
                std::cmp::Ordering::Less => return,
                std::cmp::Ordering::Equal => self.tss.best(m),
            },
            (Change::Removed(left), Some(h)) if h.handle == r.handle => left,
            (Change::Removed(_), _) => return,
        };
        match best {
            Some(b) => ex.set(key, b),
            None => {
                ex.remove(key);
            }
        }
    }

    /// Builds the exact index of the one shape, if it packs in 64 bits.
    fn build_exact(&mut self) {
        if !self.exact_on {
            return;
        }
        let Some(mut ex) = self.tss.shapes().next().and_then(Exact::new) else {
            return;
        };
        self.tss.for_each_bucket(|fields, best| {
            let key = ex.pack_values(fields.values.iter().copied());
            ex.set(key, best);
        });
        self.exact = Some(ex);
    }

    fn choose(&mut self) {
        let shapes = self.tss.n_nonempty();
        self.kind = if self.len < HASH_MIN_ENTRIES || (self.len <= LINEAR_MAX && shapes != 1) {
            Kind::Linear
        } else if shapes == 1 {
            Kind::Hash
        } else if self.lpm.is_some() {
            Kind::Lpm
        } else {
            Kind::Tss
        };
    }

    /// With no trie yet: looks for the LPM form (module comment) that the
    /// most subtables share, among the forms two of the first
    /// `LPM_PAIR_SHAPES` subtables make, and builds the trie for it if at
    /// least half of the subtables are in that form (a trie for a few of
    /// many subtables saves little). Costs O(`LPM_PAIR_SHAPES`² x shapes)
    /// shape comparisons when a new shape comes (not per entry),
    /// O(entries) when a form is found.
    fn try_lpm(&mut self) {
        if !self.lpm_on {
            return;
        }
        let form = {
            let shapes: Vec<&Shape> = self.tss.shapes().collect();
            let head = &shapes[..shapes.len().min(LPM_PAIR_SHAPES)];
            let mut best: Option<(usize, LpmForm)> = None;
            for (i, a) in head.iter().enumerate() {
                for b in &head[i + 1..] {
                    let Some(form) = LpmForm::derive(a, b) else {
                        continue;
                    };
                    if best.as_ref().is_some_and(|(_, f)| *f == form) {
                        continue;
                    }
                    let n = shapes
                        .iter()
                        .filter(|s| form.conforms(s.iter().copied()))
                        .count();
                    if best.as_ref().is_none_or(|(m, _)| n > *m) {
                        best = Some((n, form));
                    }
                }
            }
            match best {
                Some((n, form)) if 2 * n >= shapes.len() => form,
                _ => return,
            }
        };
        let mut lpm = Lpm::new(form);
        self.tss.for_each(|r, fields| {
            if lpm.form().conforms(fields.shape.iter().copied()) {
                lpm.insert(r, fields.triples());
            }
        });
        self.tss
            .mark_lpm(|shape| lpm.form().conforms(shape.iter().copied()));
        self.lpm = Some(lpm);
    }
}

/// A match as `(field, mask, value)` triples.
fn triples(m: &CompiledMatch) -> impl Iterator<Item = (Field, u128, u128)> + Clone + '_ {
    m.fields().iter().map(|f| (f.field, f.mask, f.value))
}
