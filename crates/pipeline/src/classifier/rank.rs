//! Ranks and references: how every lookup structure names an entry
//! (its priority and installation order packed in a [`Rank`], and the
//! table's stable handle in a [`Ref`]), the lists of entries with the same
//! match ([`Same`]) and a match's [`Shape`].

use packet::Field;

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
