//! Longest-prefix-match structure for tables whose non-empty shapes are
//! all "context fields S + a prefix of one field F" (parent module
//! comment): a hash of the context values, each leading to a multibit
//! trie over F, and for the contexts with many entries a direct table of
//! the trie's first 16 bits.
//!
//! A packet finds its context without the general hash when there is one
//! context (compared in place: a routing table's `eth_type=0x0800`) or at
//! most `SCAN_MAX` whose fields pack into 64 bits (an ACL's few
//! destination VIPs: its packed context is compared with the one context
//! a perfect multiply-shift hash of the packed contexts names, or with
//! each if no such hash was found); else through the hash.
//!
//! # The trie (stride 4)
//!
//! F's value is left-aligned in a `u128`, so a prefix of length `L` is
//! its top `L` bits. Node `n` at depth `d` stands for one 4d-bit prefix.
//! A prefix of length `L > 0` lives in the node at depth `(L - 1) / 4`,
//! in one of its 30 *slots*: `rel = L - 4d` (1 to 4) more bits `b` name
//! slot `(1 << rel) - 2 + b` (slots 0-1: one more bit; 2-5: two; 6-13:
//! three; 14-29: four). The length-0 prefix lives in the root's slot 30.
//! A slot holds the list of entries with that context and prefix (equal
//! matches, best first).
//!
//! ```text
//!  node (depth d)                 nodes[n]: what lookups read
//!   nib[16].child    -> node at depth d+1        by the next 4 bits (nibble)
//!   nib[16].best     best entry among the slots covering that nibble value
//!                                 cold[n]: what inserts and removes read
//!   slot[31]         -> list of entries (Same)   prefixes of length 4d+1..4d+4
//!                                                 (slot 30: length 0, root only)
//! ```
//!
//! `nib[v].best` is the slot contents pre-expanded to the 16 nibble values
//! (controlled prefix expansion kept inside one node): slot `(rel, b)`
//! covers the nibbles whose top `rel` bits are `b`. It is recomputed from
//! the slots (a fixed 80 steps) whenever a slot of that node changes, so
//! an insert or remove touches only the nodes on one path. A prefix
//! whose length is a multiple of 4 sits in the node *above* the nibble it
//! ends with (a /24 at depth 5, not 6), so a walk never reads a node only
//! to find such a prefix.
//!
//! A lookup reads the packet's nibbles from the top, and at each node
//! keeps the better of its best so far and `nib[nibble].best`, then
//! follows `nib[nibble].child` until there is none (one cache line per
//! node). Every prefix that matches the packet lies in a slot on that
//! path and covers the packet's nibble, so the result is the best-ranked
//! matching prefix, whether or not priorities follow prefix lengths. At
//! most `width / 4` nodes (8 for an IPv4 address). A packet without F
//! matches only the length-0 prefix (root slot 30).
//!
//! # The direct table (first 16 bits)
//!
//! A context with at least [`DIRECT_MIN`] entries (F at least 16 bits
//! wide; at most [`DIRECT_MAX`] such contexts per trie, 1 MiB each) also
//! has a table indexed by F's top 16 bits, a memo of the trie's first four
//! levels (DIR-16 style):
//!
//! ```text
//!  direct[v16] = (best of the nib.best on the trie path of v16 through
//!                 depths 0-3, i.e. the best prefix of length <= 16
//!                 covering v16;  the node at depth 4 on that path or NIL)
//! ```
//!
//! A lookup starts with one read there and walks on from depth 4: a /24
//! costs 3 reads instead of 6, a /16 one. The trie stays the truth: after
//! an insert or remove of a prefix of length `L` the slots under its top
//! `min(L, 16)` bits are recomputed from the trie (four node reads each):
//! `2^(16 - L)` slots for `L < 16` (65,536 for the length-0 prefix, about
//! a millisecond), one slot otherwise (a depth-4 node may have come or
//! gone). The table is built whole (65,536 slots) when its context reaches
//! `DIRECT_MIN` entries and dropped below `DIRECT_MIN / 2` (hysteresis:
//! no rebuild per flow-mod around the threshold).
//!
//! # The skip (sparse tops)
//!
//! A context without a direct table often has all its prefixes under one
//! longer prefix (an ACL's sources in one block): its trie then starts
//! with a chain of nodes that have one child and no slot. Each context
//! keeps the depth `k` where that chain ends (the first node with a slot
//! or two children), that node and the chain's `4k` bits; a walk checks
//! F's top `4k` bits against them once and starts at depth `k` (a key
//! that differs there matches nothing: no slot on the chain). Recomputed
//! after every insert or remove of the context (O(depth) node reads).
//!
//! Nodes and lists live in arenas (`Vec` + free list) named by `u32`;
//! a removal frees the nodes of its path that end up with no slot and no
//! child, and the context (with its direct table) when its root is empty.

use super::exact::Exact;
use super::fields::Fields;
use super::rank::{Rank, Ref, Same, Shape};
use crate::chunk::CHUNK;
use crate::matcher::full_mask;
use hashbrown::{DefaultHashBuilder, HashTable};
use packet::{Field, FieldSet};
use std::hash::{BuildHasher, Hasher};

mod update;
mod walk;

const NIL: u32 = u32::MAX;

/// Whether `m` is a non-empty prefix mask within `full`.
fn is_prefix(m: u128, full: u128) -> bool {
    let inv = full & !m;
    m != 0 && m & !full == 0 && inv & inv.wrapping_add(1) == 0
}

/// The form a table's shapes must have: see the module comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LpmForm {
    /// S: the shape without F.
    context: Box<Shape>,
    required: FieldSet,
    /// F.
    field: Field,
    /// Width of F in bits.
    width: u32,
    full: u128,
}

impl LpmForm {
    /// The form two distinct non-empty shapes share, if any: they differ in
    /// the mask of exactly one field, a prefix mask (or absent) in both,
    /// and shorter than the field in at least one.
    pub fn derive(a: &Shape, b: &Shape) -> Option<LpmForm> {
        let mut diff: Option<Field> = None;
        let mut note = |f: Field| -> Option<()> {
            if diff.is_some_and(|d| d != f) {
                return None;
            }
            diff = Some(f);
            Some(())
        };
        let (mut i, mut j) = (0, 0);
        loop {
            let (x, y) = (a.get(i), b.get(j));
            let from_a = match (x, y) {
                (None, None) => break,
                (Some(x), Some(y)) if x.0 == y.0 => {
                    if x.1 != y.1 {
                        note(x.0)?;
                    }
                    i += 1;
                    j += 1;
                    continue;
                }
                (Some(x), Some(y)) => x.0 < y.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let f = if from_a { x } else { y };
            if let Some((f, _)) = f {
                note(*f)?;
            }
            if from_a {
                i += 1;
            } else {
                j += 1;
            }
        }
        let field = diff?;
        let context: Box<Shape> = a.iter().filter(|(f, _)| *f != field).copied().collect();
        let required = context.iter().fold(FieldSet::EMPTY, |mut s, (f, _)| {
            s.insert(*f);
            s
        });
        let form = LpmForm {
            context,
            required,
            field,
            width: 8 * field.width() as u32,
            full: full_mask(field),
        };
        // A real prefix (not the whole field) on one side: otherwise the
        // two shapes are "exact F" and "no F", which the tuple space's two
        // probes handle without a trie per context value.
        let partial = |s: &Shape| {
            s.iter()
                .any(|(f, m)| *f == field && *m != form.full && *m != 0)
        };
        ((partial(a) || partial(b))
            && form.conforms(a.iter().copied())
            && form.conforms(b.iter().copied()))
        .then_some(form)
    }

    /// Whether a shape (sorted `(field, mask)` pairs) is in this form: not
    /// empty, S exactly, plus F with a prefix mask or without F.
    pub fn conforms(&self, shape: impl Iterator<Item = (Field, u128)>) -> bool {
        let mut ctx = self.context.iter();
        let mut nonempty = false;
        for (f, m) in shape {
            nonempty = true;
            if f == self.field {
                if !is_prefix(m, self.full) {
                    return false;
                }
            } else if ctx.next() != Some(&(f, m)) {
                return false;
            }
        }
        nonempty && ctx.next().is_none()
    }

    /// The prefix field.
    pub fn field(&self) -> Field {
        self.field
    }
}

/// What a lookup reads for one nibble value (or one direct-table slot):
/// kept together so that one node costs one cache line per packet.
#[derive(Debug, Clone, Copy)]
struct Nib {
    /// Best of the slots covering this nibble value.
    rank: Rank,
    handle: u32,
    child: u32,
}

impl Nib {
    const EMPTY: Nib = Nib {
        rank: Rank::NONE,
        handle: NIL,
        child: NIL,
    };

    fn best(&self) -> Ref {
        Ref {
            rank: self.rank,
            handle: self.handle,
        }
    }
}

/// Slots per node: 2 + 4 + 8 + 16 for prefixes 1 to 4 bits longer than
/// the node's depth, plus the length-0 prefix (module comment).
const SLOTS: usize = 31;

/// The slot of the length-0 prefix (root only).
const ZERO_SLOT: usize = 30;

/// Bits of F a direct table indexes, and the trie depth it stands for.
const DIRECT_BITS: u32 = 16;
const DIRECT_DEPTH: u32 = DIRECT_BITS / 4;

/// Entries a context needs for a direct table (module comment). Test
/// builds use a small threshold so the tests build, use and drop tables.
pub const DIRECT_MIN: usize = if cfg!(test) { 4 } else { 64 };

/// At most this many direct tables per trie (1 MiB each).
pub const DIRECT_MAX: usize = 16;

/// Up to this many contexts whose fields pack into 64 bits are found by
/// comparing the packet's packed context with each (`Lpm::scan`), not by
/// hashing: a handful of compares of one word (the ACL's few VIPs).
const SCAN_MAX: usize = 16;

/// Slots of the scan list's perfect hash (`Lpm::scan_at`): a power of
/// two, four for each of `SCAN_MAX` contexts, so that a multiplier that
/// sends every context to a slot of its own is found in a few tries.
const SCAN_SLOTS: usize = 64;

/// How many multipliers `refresh_sole` tries for the perfect hash before
/// it leaves the scan list to a plain scan.
const SCAN_TRIES: u64 = 256;

/// `Lpm::scan_at`'s "no context here".
const SCAN_NONE: u8 = u8::MAX;

/// A node as lookups read it (256 bytes: four cache lines, one read per
/// packet). Its slots, which only inserts and removes read, are kept
/// apart in [`Cold`] under the same index, so the nodes the packets walk
/// take less cache.
#[derive(Debug, Clone)]
struct Node {
    nib: [Nib; 16],
}

/// The rest of a node (see [`Node`]).
#[derive(Debug, Clone)]
struct Cold {
    slot: [u32; SLOTS],
    /// Slots and children in use.
    used: u8,
}

impl Node {
    const EMPTY: Node = Node {
        nib: [Nib::EMPTY; 16],
    };
}

impl Cold {
    const EMPTY: Cold = Cold {
        slot: [NIL; SLOTS],
        used: 0,
    };
}

/// Where a context's lookups start: its trie's root, its direct table
/// (`NIL`: none) and the skip of its trie's top (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    root: u32,
    direct: u32,
    /// The trie's nodes from the root down to depth `skip_depth` each
    /// have one child and no slot (`skip_depth` 0: no skip): a walk can
    /// begin at `skip_node` (at that depth) when F's top `4 * skip_depth`
    /// bits equal those of `skip_prefix` (left-aligned), and finds
    /// nothing otherwise.
    skip_depth: u32,
    skip_node: u32,
    skip_prefix: u128,
}

impl Start {
    fn at(root: u32) -> Start {
        Start {
            root,
            direct: NIL,
            skip_depth: 0,
            skip_node: root,
            skip_prefix: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Context {
    values: Box<[u128]>,
    hash: u64,
    start: Start,
    /// Entries of this context.
    len: usize,
}

/// See the module comment.
#[derive(Debug, Clone)]
pub struct Lpm {
    form: LpmForm,
    hasher: DefaultHashBuilder,
    contexts: HashTable<Context>,
    /// The context values and start when there is exactly one context
    /// (the usual routing table: no hashing per packet then); `begin`
    /// reads it only when there is no `scan` list (no `packer`).
    sole: Option<(Box<[u128]>, Start)>,
    /// `ipv4_start`'s answer, kept with `sole`.
    ipv4: Option<Start>,
    /// Packs the context fields' masked bits into one `u64` when they fit
    /// in 64 bits (an empty exact index, used for its packing only).
    packer: Option<Exact>,
    /// While there are 1..=`SCAN_MAX` contexts and `packer` exists: each
    /// context's packed values and start, for `begin` to scan. Empty
    /// otherwise (then `begin` hashes).
    ///
    /// ```text
    ///  packed key ctx  (eth_type, ip_proto, ipv4_dst) -> 0x0800_06_ac100001
    ///  scan  [ (0x080006ac100001, start0) | (0x080006ac100002, start1) | .. ]
    /// ```
    scan: Box<[(u64, Start)]>,
    /// A perfect hash of `scan`'s packed values, when `refresh_sole`
    /// found one: the context with packed values `k` can only be
    /// `scan[scan_at[(k * scan_mult) >> (64 - log2 SCAN_SLOTS)]]`, so a
    /// lookup compares one entry instead of scanning (`SCAN_NONE`: no
    /// context there). `scan_mult` 0: none found, `begin` scans.
    ///
    /// ```text
    ///  scan_at  [ NONE | 3 | NONE | 0 | .. ]  (SCAN_SLOTS)
    ///                    \-> scan[3] = (0x080006ac100004, start3)
    /// ```
    scan_mult: u64,
    scan_at: [u8; SCAN_SLOTS],
    /// Whether `refresh_sole` looks for the perfect hash (tests turn it
    /// off to check the plain scan: `with_list_scan`).
    perfect_scan: bool,
    nodes: Vec<Node>,
    /// `cold[n]`: the slots of `nodes[n]`.
    cold: Vec<Cold>,
    free_nodes: Vec<u32>,
    lists: Vec<Option<Same>>,
    free_lists: Vec<u32>,
    /// Direct tables (`1 << DIRECT_BITS` slots each; a freed one is
    /// empty and its index in `free_directs`).
    directs: Vec<Box<[Nib]>>,
    free_directs: Vec<u32>,
    /// Entries a context needs for a direct table (`DIRECT_MIN`; tests
    /// also run without direct tables).
    direct_min: usize,
    len: usize,
}

/// A lookup after its context step.
enum Walk {
    Done(Ref),
    /// Walk the context's trie with F's value `v` (left-aligned).
    From {
        start: Start,
        v: u128,
    },
}

/// A left-aligned value of F as a walk reads it (`u128` for any F, `u32`
/// for IPv4 addresses: a 128-bit shift costs several instructions).
trait Nibbles: Copy {
    /// The top 4 bits.
    fn top(self) -> usize;
    /// The rest, shifted up by 4.
    fn next(self) -> Self;
    /// The top `DIRECT_BITS` bits: a direct table's index.
    fn direct(self) -> usize;
    /// Shifted up by `k` bits (0 when `k` is the whole width).
    fn shl(self, k: u32) -> Self;
    /// Whether the top `k` bits (4 to the width) equal those of `prefix`,
    /// left-aligned in 128 bits (`Start::skip_prefix`).
    fn agrees(self, prefix: u128, k: u32) -> bool;
    /// `v`, a value left-aligned in 128 bits whose set bits are all in
    /// this type's width (a field as wide at most), in this type.
    fn from_left(v: u128) -> Self;
}

impl Nibbles for u128 {
    #[inline(always)]
    fn top(self) -> usize {
        (self >> 124) as usize
    }
    #[inline(always)]
    fn next(self) -> Self {
        self << 4
    }
    #[inline(always)]
    fn direct(self) -> usize {
        (self >> (128 - DIRECT_BITS)) as usize
    }
    #[inline(always)]
    fn shl(self, k: u32) -> Self {
        self.checked_shl(k).unwrap_or(0)
    }
    #[inline(always)]
    fn agrees(self, prefix: u128, k: u32) -> bool {
        (self ^ prefix) >> (128 - k) == 0
    }
    #[inline(always)]
    fn from_left(v: u128) -> Self {
        v
    }
}

impl Nibbles for u32 {
    #[inline(always)]
    fn top(self) -> usize {
        (self >> 28) as usize
    }
    #[inline(always)]
    fn next(self) -> Self {
        self << 4
    }
    #[inline(always)]
    fn direct(self) -> usize {
        (self >> (32 - DIRECT_BITS)) as usize
    }
    // In 64 bits, so that k = 32 shifts too.
    #[inline(always)]
    fn shl(self, k: u32) -> Self {
        (u64::from(self) << k.min(32)) as u32
    }
    #[inline(always)]
    fn agrees(self, prefix: u128, k: u32) -> bool {
        u64::from(self ^ (prefix >> 96) as u32) >> 32u32.saturating_sub(k) == 0
    }
    #[inline(always)]
    fn from_left(v: u128) -> Self {
        (v >> 96) as u32
    }
}

/// The 4 bits of the left-aligned `v` below depth `d` (0 past the end).
#[inline]
fn nibble(v: u128, d: u32) -> usize {
    if d < 32 {
        ((v >> (124 - 4 * d)) & 15) as usize
    } else {
        0
    }
}

/// The best entry of list `l` (`Ref::NONE` for `NIL` or a freed list).
fn list_best(lists: &[Option<Same>], l: u32) -> Ref {
    match lists.get(l as usize) {
        Some(Some(same)) => same.best(),
        _ => Ref::NONE,
    }
}

/// Where a prefix lives: context values, depth, slot, aligned value,
/// length.
struct Place {
    context: Vec<u128>,
    depth: u32,
    slot: usize,
    aligned: u128,
    len: u32,
}

impl Lpm {
    pub fn new(form: LpmForm) -> Lpm {
        Lpm {
            packer: Exact::new(&form.context),
            form,
            hasher: DefaultHashBuilder::default(),
            contexts: HashTable::new(),
            sole: None,
            ipv4: None,
            scan: Box::new([]),
            scan_mult: 0,
            scan_at: [SCAN_NONE; SCAN_SLOTS],
            perfect_scan: true,
            nodes: Vec::new(),
            cold: Vec::new(),
            free_nodes: Vec::new(),
            lists: Vec::new(),
            free_lists: Vec::new(),
            directs: Vec::new(),
            free_directs: Vec::new(),
            direct_min: DIRECT_MIN,
            len: 0,
        }
    }

    /// A trie that never builds direct tables (tests: the walks from the
    /// root and from the skip).
    #[cfg(test)]
    pub fn without_direct(form: LpmForm) -> Lpm {
        Lpm {
            direct_min: usize::MAX,
            ..Lpm::new(form)
        }
    }

    /// A trie that scans its few contexts' list without the perfect
    /// hash (tests: the fallback).
    #[cfg(test)]
    pub fn with_list_scan(form: LpmForm) -> Lpm {
        Lpm {
            perfect_scan: false,
            ..Lpm::new(form)
        }
    }

    /// Whether a lookup finds the context through the perfect hash
    /// (tests).
    #[cfg(test)]
    pub fn scans_by_hash(&self) -> bool {
        self.scan_mult != 0
    }

    pub fn form(&self) -> &LpmForm {
        &self.form
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn context_hash(&self, values: impl Iterator<Item = u128>) -> u64 {
        let mut h = self.hasher.build_hasher();
        for v in values {
            h.write_u128(v);
        }
        h.finish()
    }

    /// Splits a conforming match (`(field, mask, value)` triples).
    fn place(&self, fields: impl Iterator<Item = (Field, u128, u128)>) -> Place {
        let mut context = Vec::with_capacity(self.form.context.len());
        let (mut len, mut aligned) = (0u32, 0u128);
        for (f, m, v) in fields {
            if f == self.form.field {
                len = m.count_ones();
                aligned = v << (128 - self.form.width);
            } else {
                context.push(v);
            }
        }
        if len == 0 {
            return Place {
                context,
                depth: 0,
                slot: ZERO_SLOT,
                aligned,
                len,
            };
        }
        let depth = (len - 1) / 4;
        let rel = len - 4 * depth;
        let bits = ((aligned >> (128 - 4 * depth - rel)) & ((1 << rel) - 1)) as usize;
        Place {
            context,
            depth,
            slot: (1 << rel) - 2 + bits,
            aligned,
            len,
        }
    }

    /// Brings the copies of the contexts' starts that lookups read
    /// (`sole`, `scan`) up to date; called after every change of the
    /// contexts or of a start.
    fn refresh_sole(&mut self) {
        self.sole = match self.contexts.len() {
            1 => self
                .contexts
                .iter()
                .next()
                .map(|c| (c.values.clone(), c.start)),
            _ => None,
        };
        self.ipv4 = self.find_ipv4_start();
        let scan: Box<[(u64, Start)]> = match &self.packer {
            Some(packer) if (1..=SCAN_MAX).contains(&self.contexts.len()) => self
                .contexts
                .iter()
                .map(|c| (packer.pack_values(c.values.iter().copied()), c.start))
                .collect(),
            _ => Box::new([]),
        };
        // The perfect hash depends on the packed values and their order
        // only: a start that changed keeps it.
        let same_keys = scan.len() == self.scan.len()
            && scan.iter().zip(self.scan.iter()).all(|(a, b)| a.0 == b.0);
        if !self.perfect_scan {
            self.scan_mult = 0;
        } else if !same_keys {
            (self.scan_mult, self.scan_at) = Lpm::perfect_scan(&scan);
        }
        self.scan = scan;
    }

    /// The slot of packed context values `k` in `scan_at` under
    /// multiplier `mult`.
    #[inline(always)]
    fn scan_slot(k: u64, mult: u64) -> usize {
        (k.wrapping_mul(mult) >> (64 - SCAN_SLOTS.trailing_zeros())) as usize
    }

    /// A multiplier that gives each of `scan`'s packed values a slot of
    /// its own (`scan_mult`, `scan_at`), or 0 and no slots when none of
    /// `SCAN_TRIES` does (then `begin` scans the list).
    fn perfect_scan(scan: &[(u64, Start)]) -> (u64, [u8; SCAN_SLOTS]) {
        // Odd multipliers from a fixed sequence (splitmix64), so that the
        // same contexts always get the same hash.
        const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 1..=SCAN_TRIES {
            let mult = super::rank::splitmix64(GOLDEN.wrapping_mul(i + 1)) | 1;
            let mut at = [SCAN_NONE; SCAN_SLOTS];
            let free = scan.iter().enumerate().all(|(j, (k, _))| {
                let s = &mut at[Lpm::scan_slot(*k, mult)];
                let was = *s;
                *s = j as u8;
                was == SCAN_NONE
            });
            if free {
                return (mult, at);
            }
        }
        (0, [SCAN_NONE; SCAN_SLOTS])
    }
}

/// Puts `item` into `v` at an index taken from `free` (indexes of `v`
/// released earlier) or, when there is none, at the end: its index.
fn reuse_or_push<T>(v: &mut Vec<T>, free: &mut Vec<u32>, item: T) -> u32 {
    match free.pop() {
        Some(i) => {
            v[i as usize] = item;
            i
        }
        None => {
            v.push(item);
            (v.len() - 1) as u32
        }
    }
}
