//! The state store of one stateful table: flow key → state entry, shared
//! by every worker, read and written by packets with no lock and no
//! allocation.
//!
//! # Layout
//!
//! Allocated once, when the table's scopes fix its key length:
//!
//! - **slots**: an array of cache-line-aligned slots of `stride` 64-bit
//!   atomic words (8 for keys up to 8 bytes, 16 up to 48 bytes):
//!
//!   | word | content |
//!   |---|---|
//!   | 0 | sequence number (odd while a writer is inside) |
//!   | 1 | bit 63: occupied; low 32 bits: the state |
//!   | 2 | hard timeout << 32 \| idle timeout (µs) |
//!   | 3 | hard rollback << 32 \| idle rollback |
//!   | 4 | `created`: when the state was last written (µs) |
//!   | 5 | `remove_at`: when the hard timeout fires (µs) |
//!   | 6 | `last_used`: last packet of the flow (µs) |
//!   | 7.. | the key, little-endian words, zero-padded |
//!
//! - **tags**: one 64-bit word per *bucket* of 8 consecutive slots, one
//!   byte per slot: 0 for a free slot, otherwise a fingerprint of the
//!   slot's key (8 bits of its hash, never 0). A key lives in one of
//!   three buckets chosen by its hash (a new key goes to the least loaded
//!   one: multiple choices keep buckets even, so a table fills to its
//!   capacity before a key's buckets overflow), so a look-up reads at most
//!   three tag words and only the slots whose byte matches.
//!
//! # Concurrency
//!
//! - A slot is a seqlock: a reader loads the sequence (Acquire), skips the
//!   slot if it is odd, loads the words, fences (Acquire) and re-checks the
//!   sequence; a torn snapshot is retried a few times, then treated as
//!   absent, so a reader never returns one key with another key's entry.
//! - A writer moves the sequence from the even value of its snapshot to
//!   odd with a compare-exchange; if that fails (another writer got there
//!   first) it takes a new snapshot and starts its read-modify-write again
//!   (a bounded number of times, then it reports [`StoreError::Busy`]).
//!   No thread ever waits for another to finish.
//! - A new key *claims* a free slot by setting its tag byte with a
//!   compare-exchange of the bucket's tag word, then writes the slot. Two
//!   writers adding the same key race on the same (first free) byte: the
//!   loser sees the claimed tag, waits for the slot to be written and
//!   updates it. A slot is freed by clearing its occupied bit (under the
//!   seqlock) and then its tag byte.
//! - `last_used` is refreshed outside the seqlock by a plain store, only
//!   by flows with an idle timeout and only when it is older than 1/64 of
//!   the timeout, so steady traffic does not bounce the cache line.
//!
//! # A full table
//!
//! When all buckets of a key are full a new key is refused
//! ([`StoreError::Full`], counted); nothing is evicted. Tables are sized
//! at creation (`capacity` entries; 1.5 times that many slots, rounded up
//! to a power of two).

use std::hash::BuildHasher;
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};

use crate::key::KeyBuf;

const OCCUPIED: u64 = 1 << 63;
const READ_TRIES: usize = 4;
/// Attempts of a read-modify-write before it gives up as busy.
const WRITE_TRIES: usize = 64;
const BUCKET: usize = 8;
/// Buckets a key may live in.
const CHOICES: usize = 3;
const HEAD_WORDS: usize = 7;
/// Keys [`Store::read_ahead`] takes at once.
pub const READ_AHEAD: usize = 64;

/// A state entry's content (all times in microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Entry {
    pub state: u32,
    pub hard_timeout: u32,
    pub idle_timeout: u32,
    pub hard_rollback: u32,
    pub idle_rollback: u32,
    /// When the state was last written (a transition or a rollback).
    pub created: u64,
    /// When the hard timeout fires, if `hard_timeout` is not 0.
    pub remove_at: u64,
    /// The flow's last packet (only kept up to date with an idle timeout).
    pub last_used: u64,
}

/// Why a write did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreError {
    /// Other writers kept changing the key's slot or bucket.
    Busy,
    /// No free slot in the key's two buckets.
    Full,
}

/// What a read-modify-write decides, given the current entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Change nothing.
    Leave,
    /// Store this entry (adding the key if absent).
    Put(Entry),
    /// Forget the key.
    Remove,
}

#[derive(Default)]
#[repr(align(64))]
struct Line([AtomicU64; 8]);

/// A consistent copy of a slot.
#[derive(Clone, Copy)]
struct Snap {
    seq: u64,
    meta: u64,
    entry: Entry,
    key: [u64; 6],
}

impl Snap {
    fn occupied(&self) -> bool {
        self.meta & OCCUPIED != 0
    }
}

/// See the module comment.
pub struct Store {
    lines: Box<[Line]>,
    /// Words per slot (a multiple of 8).
    stride: usize,
    /// Key words compared (key length rounded up to 8 bytes).
    key_words: usize,
    key_len: usize,
    tags: Box<[AtomicU64]>,
    bucket_mask: usize,
    seeds: [u64; 2],
    len: AtomicUsize,
    full: AtomicU64,
    cursor: AtomicUsize,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("slots", &self.slots())
            .field("key_len", &self.key_len)
            .field("len", &self.len())
            .finish()
    }
}

/// The index and byte of each tag in `tags` equal to `tag`.
#[inline]
fn matching(tags: u64, tag: u8) -> impl Iterator<Item = usize> {
    let x = tags ^ (u64::from(tag) * 0x0101_0101_0101_0101);
    // High bit of each zero byte (plus possible false positives above a
    // zero byte, which the caller's exact check drops).
    let mut m = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
    std::iter::from_fn(move || {
        while m != 0 {
            let i = (m.trailing_zeros() / 8) as usize;
            m &= m - 1;
            if (tags >> (8 * i)) as u8 == tag {
                return Some(i);
            }
        }
        None
    })
}

impl Store {
    /// A store for keys of `key_len` bytes (1 to 48) holding about
    /// `capacity` entries.
    pub fn new(key_len: usize, capacity: usize) -> Store {
        let key_len = key_len.clamp(1, 48);
        let key_words = key_len.div_ceil(8);
        let stride = (HEAD_WORDS + key_words).div_ceil(8) * 8;
        let slots = (capacity.saturating_add(capacity / 2))
            .max(4 * BUCKET)
            .next_power_of_two();
        let buckets = slots / BUCKET;
        let lines = std::iter::repeat_with(Line::default)
            .take(slots * stride / 8)
            .collect::<Vec<_>>()
            .into_boxed_slice();
        let rs = std::collections::hash_map::RandomState::new();
        Store {
            lines,
            stride,
            key_words,
            key_len,
            tags: std::iter::repeat_with(AtomicU64::default)
                .take(buckets)
                .collect(),
            bucket_mask: buckets - 1,
            seeds: [rs.hash_one(1u64) | 1, rs.hash_one(2u64)],
            len: AtomicUsize::new(0),
            full: AtomicU64::new(0),
            cursor: AtomicUsize::new(0),
        }
    }

    pub fn key_len(&self) -> usize {
        self.key_len
    }

    pub fn slots(&self) -> usize {
        self.tags.len() * BUCKET
    }

    /// Entries stored (approximate while writers run).
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// New keys refused for want of a free slot.
    pub fn full(&self) -> u64 {
        self.full.load(Ordering::Relaxed)
    }

    /// Bytes the store occupies (slots and tags).
    pub fn memory_bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>() + self.tags.len() * 8
    }

    #[inline]
    fn word(&self, slot: usize, w: usize) -> &AtomicU64 {
        let i = slot * self.stride + w;
        // Slot indices come from `bucket_mask`, in bounds by construction.
        &self.lines[i / 8].0[i % 8]
    }

    /// (the key's [`CHOICES`] buckets, tag).
    #[inline]
    fn hash(&self, key: &KeyBuf) -> ([usize; CHOICES], u8) {
        let mut x = self.seeds[1];
        for i in 0..self.key_words {
            x = (x ^ key.word(i)).wrapping_mul(self.seeds[0]);
            x ^= x >> 29;
        }
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 32;
        let y = (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let b1 = x as usize & self.bucket_mask;
        let mut b2 = (x >> 32) as usize & self.bucket_mask;
        if b2 == b1 {
            b2 = b1 ^ 1;
        }
        let mut b3 = y as usize & self.bucket_mask;
        if b3 == b1 || b3 == b2 {
            b3 = b1 ^ 2;
            if b3 == b2 {
                b3 = b1 ^ 3;
            }
        }
        let tag = ((y >> 56) as u8).max(1);
        ([b1, b2, b3], tag)
    }

    #[inline]
    fn read(&self, slot: usize) -> Option<Snap> {
        for _ in 0..READ_TRIES {
            let seq = self.word(slot, 0).load(Ordering::Acquire);
            if seq & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let ld = |w| self.word(slot, w).load(Ordering::Relaxed);
            let meta = ld(1);
            let tm = ld(2);
            let rb = ld(3);
            let mut key = [0u64; 6];
            for (i, k) in key.iter_mut().enumerate().take(self.key_words) {
                *k = ld(HEAD_WORDS + i);
            }
            let entry = Entry {
                state: meta as u32,
                hard_timeout: (tm >> 32) as u32,
                idle_timeout: tm as u32,
                hard_rollback: (rb >> 32) as u32,
                idle_rollback: rb as u32,
                created: ld(4),
                remove_at: ld(5),
                last_used: ld(6),
            };
            fence(Ordering::Acquire);
            if self.word(slot, 0).load(Ordering::Relaxed) == seq {
                return Some(Snap {
                    seq,
                    meta,
                    entry,
                    key,
                });
            }
        }
        None
    }

    #[inline]
    fn key_is(&self, s: &Snap, key: &KeyBuf) -> bool {
        (0..self.key_words).all(|i| s.key[i] == key.word(i))
    }

    /// Writes `entry` (with `key`) or, for `None`, frees the slot, if it is
    /// still at sequence `seen`.
    fn write(&self, slot: usize, seen: u64, key: &KeyBuf, entry: Option<&Entry>) -> bool {
        if self
            .word(slot, 0)
            .compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        fence(Ordering::Release);
        let st = |w, v| self.word(slot, w).store(v, Ordering::Relaxed);
        match entry {
            Some(e) => {
                st(1, OCCUPIED | u64::from(e.state));
                st(
                    2,
                    u64::from(e.hard_timeout) << 32 | u64::from(e.idle_timeout),
                );
                st(
                    3,
                    u64::from(e.hard_rollback) << 32 | u64::from(e.idle_rollback),
                );
                st(4, e.created);
                st(5, e.remove_at);
                st(6, e.last_used);
                for i in 0..self.key_words {
                    st(HEAD_WORDS + i, key.word(i));
                }
            }
            None => st(1, 0),
        }
        self.word(slot, 0).store(seen + 2, Ordering::Release);
        true
    }

    /// Frees a slot written at `seen`: occupied bit, then tag byte.
    fn remove_at(&self, slot: usize, seen: u64, key: &KeyBuf) -> bool {
        if !self.write(slot, seen, key, None) {
            return false;
        }
        let byte = slot % BUCKET;
        self.tags[slot / BUCKET].fetch_and(!(0xffu64 << (8 * byte)), Ordering::Release);
        self.len.fetch_sub(1, Ordering::Relaxed);
        true
    }

    /// Where `key` is: `Ok(Some((slot, snapshot)))`, `Ok(None)` if absent,
    /// `Err(())` if a slot with its tag is being written (it may be `key`
    /// arriving). `seen` receives the tag words read.
    #[inline]
    fn find(
        &self,
        key: &KeyBuf,
        buckets: [usize; CHOICES],
        tag: u8,
        seen: &mut [u64; CHOICES],
    ) -> Result<Option<(usize, Snap)>, ()> {
        let mut busy = false;
        for (j, b) in buckets.into_iter().enumerate() {
            let tags = self.tags[b].load(Ordering::Acquire);
            seen[j] = tags;
            for i in matching(tags, tag) {
                let slot = b * BUCKET + i;
                match self.read(slot) {
                    Some(s) if s.occupied() => {
                        if self.key_is(&s, key) {
                            return Ok(Some((slot, s)));
                        }
                    }
                    _ => busy = true,
                }
            }
        }
        if busy {
            Err(())
        } else {
            Ok(None)
        }
    }

    /// Reads ahead the lines that looking `keys` up will read (at most
    /// [`READ_AHEAD`] keys; more are ignored), so that their cache misses
    /// overlap instead of coming one after the other: first the tag words
    /// of every key's buckets, then the first word of each slot whose tag
    /// byte matches. Changes nothing; returns a fold of the words read
    /// (for `std::hint::black_box`, so the reads stay).
    pub fn read_ahead(&self, keys: &[KeyBuf]) -> u64 {
        let n = keys.len().min(READ_AHEAD);
        let mut hashed = [([0usize; CHOICES], 0u8); READ_AHEAD];
        let mut sink = 0u64;
        for (h, key) in hashed.iter_mut().zip(&keys[..n]) {
            *h = self.hash(key);
            for b in h.0 {
                sink = sink.wrapping_add(self.tags[b].load(Ordering::Relaxed));
            }
        }
        for (buckets, tag) in &hashed[..n] {
            for b in *buckets {
                for i in matching(self.tags[b].load(Ordering::Relaxed), *tag) {
                    sink = sink.wrapping_add(self.word(b * BUCKET + i, 0).load(Ordering::Relaxed));
                }
            }
        }
        sink
    }

    /// The entry of `key`, if stored.
    #[inline]
    pub fn get(&self, key: &KeyBuf) -> Option<Entry> {
        let (buckets, tag) = self.hash(key);
        self.find(key, buckets, tag, &mut [0; CHOICES])
            .ok()
            .flatten()
            .map(|(_, s)| s.entry)
    }

    /// Sets `last_used` of `key` to `now` if it has an idle timeout and
    /// its `last_used` is older than 1/64 of it (see the module comment).
    #[inline]
    pub fn touch(&self, key: &KeyBuf, e: &Entry, now: u64) {
        if e.idle_timeout == 0
            || now.saturating_sub(e.last_used) < u64::from(e.idle_timeout / 64).max(1)
        {
            return;
        }
        let (buckets, tag) = self.hash(key);
        if let Ok(Some((slot, _))) = self.find(key, buckets, tag, &mut [0; CHOICES]) {
            self.word(slot, 6).store(now, Ordering::Relaxed);
        }
    }

    /// Read-modify-write of `key`'s entry: `f` sees the current entry (or
    /// `None`) and decides. Returns the entry before and after.
    pub fn update(
        &self,
        key: &KeyBuf,
        mut f: impl FnMut(Option<&Entry>) -> Decision,
    ) -> Result<(Option<Entry>, Option<Entry>), StoreError> {
        let (buckets, tag) = self.hash(key);
        let mut seen = [0u64; CHOICES];
        for _ in 0..WRITE_TRIES {
            let found = match self.find(key, buckets, tag, &mut seen) {
                Ok(found) => found,
                Err(()) => {
                    std::hint::spin_loop();
                    continue;
                }
            };
            if let Some((slot, s)) = found {
                match f(Some(&s.entry)) {
                    Decision::Leave => return Ok((Some(s.entry), Some(s.entry))),
                    Decision::Put(e) => {
                        if self.write(slot, s.seq, key, Some(&e)) {
                            return Ok((Some(s.entry), Some(e)));
                        }
                    }
                    Decision::Remove => {
                        if self.remove_at(slot, s.seq, key) {
                            return Ok((Some(s.entry), None));
                        }
                    }
                }
                continue;
            }
            let e = match f(None) {
                Decision::Put(e) => e,
                Decision::Leave | Decision::Remove => return Ok((None, None)),
            };
            match self.claim(buckets, seen, tag) {
                Some(slot) => {
                    let seq = self.word(slot, 0).load(Ordering::Acquire);
                    if seq & 1 == 0 && self.write(slot, seq, key, Some(&e)) {
                        self.len.fetch_add(1, Ordering::Relaxed);
                        return Ok((None, Some(e)));
                    }
                    // Not expected (a claimed slot has no other writer):
                    // give the slot back and start again.
                    let byte = slot % BUCKET;
                    self.tags[slot / BUCKET].fetch_and(!(0xffu64 << (8 * byte)), Ordering::Release);
                }
                None => {
                    let full = |t: &u64| t.to_ne_bytes().iter().all(|&b| b != 0);
                    if seen.iter().all(full) {
                        self.full.fetch_add(1, Ordering::Relaxed);
                        return Err(StoreError::Full);
                    }
                }
            }
        }
        Err(StoreError::Busy)
    }

    /// Claims the first free slot of the least loaded of the key's buckets
    /// (the earliest on a tie) for `tag`, if the bucket's tag word is
    /// still `seen` (the words the caller found the key absent in: a key
    /// added meanwhile makes the claim fail, so it is not added twice; two
    /// writers adding one key from the same words pick the same slot).
    fn claim(&self, buckets: [usize; CHOICES], seen: [u64; CHOICES], tag: u8) -> Option<usize> {
        let used = |t: u64| t.to_ne_bytes().iter().filter(|&&b| b != 0).count();
        let j = (0..CHOICES).min_by_key(|&j| used(seen[j]))?;
        let (b, tags) = (buckets[j], seen[j]);
        let i = (0..BUCKET).find(|i| (tags >> (8 * i)) as u8 == 0)?;
        let new = tags | u64::from(tag) << (8 * i);
        self.tags[b]
            .compare_exchange(tags, new, Ordering::AcqRel, Ordering::Relaxed)
            .ok()
            .map(|_| b * BUCKET + i)
    }

    /// Visits up to `budget` slots from a shared cursor (wrapping), calling
    /// `f` on each stored entry and applying its decision (a slot being
    /// written meanwhile is left for the next pass). Returns the slots
    /// visited. Successive calls cover the whole table in
    /// `slots / budget` calls: the cost is spread, never one long pause.
    pub fn sweep(&self, budget: usize, mut f: impl FnMut(&KeyBuf, &Entry) -> Decision) -> usize {
        let n = self.slots();
        let budget = budget.min(n);
        let start = self.cursor.fetch_add(budget, Ordering::Relaxed) % n;
        for k in 0..budget {
            let slot = (start + k) & (n - 1);
            self.visit(slot, &mut f);
        }
        budget
    }

    /// Every stored entry, in slot order (for statistics; walks the table).
    pub fn for_each(&self, mut f: impl FnMut(&KeyBuf, &Entry) -> Decision) {
        for slot in 0..self.slots() {
            self.visit(slot, &mut f);
        }
    }

    #[inline]
    fn visit(&self, slot: usize, f: &mut impl FnMut(&KeyBuf, &Entry) -> Decision) {
        let tags = self.tags[slot / BUCKET].load(Ordering::Relaxed);
        if (tags >> (8 * (slot % BUCKET))) as u8 == 0 {
            return;
        }
        let Some(s) = self.read(slot) else { return };
        if !s.occupied() {
            return;
        }
        let key = KeyBuf::from_words(&s.key[..self.key_words], self.key_len);
        match f(&key, &s.entry) {
            Decision::Leave => {}
            Decision::Put(e) => {
                self.write(slot, s.seq, &key, Some(&e));
            }
            Decision::Remove => {
                self.remove_at(slot, s.seq, &key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn k(n: u32) -> KeyBuf {
        KeyBuf::from_bytes(&n.to_be_bytes()).unwrap_or_default()
    }

    fn put(state: u32) -> impl FnMut(Option<&Entry>) -> Decision {
        move |_| {
            Decision::Put(Entry {
                state,
                ..Entry::default()
            })
        }
    }

    #[test]
    fn insert_get_remove() {
        let s = Store::new(4, 100);
        assert_eq!(s.get(&k(1)), None);
        assert!(s.update(&k(1), put(7)).is_ok());
        assert_eq!(s.get(&k(1)).map(|e| e.state), Some(7));
        assert!(s.update(&k(1), put(8)).is_ok());
        assert_eq!(s.get(&k(1)).map(|e| e.state), Some(8));
        assert_eq!(s.len(), 1);
        assert!(s.update(&k(1), |_| Decision::Remove).is_ok());
        assert_eq!(s.get(&k(1)), None);
        assert_eq!(s.len(), 0);
    }

    /// Reading ahead reads what a look-up would (its sum of the words
    /// read is 0 for an empty store, not once keys are stored) and
    /// changes nothing.
    #[test]
    fn read_ahead_reads_and_changes_nothing() {
        let s = Store::new(4, 100);
        let keys: Vec<KeyBuf> = (0..100).map(k).collect();
        let empty = s.read_ahead(&keys);
        assert_eq!(empty, 0, "no tag and no slot set");
        for i in 0..50 {
            assert!(s.update(&k(i), put(i)).is_ok());
        }
        assert_ne!(s.read_ahead(&keys), 0);
        assert_eq!(s.len(), 50);
        for i in 0..100 {
            assert_eq!(s.get(&k(i)).map(|e| e.state), (i < 50).then_some(i));
        }
    }

    /// A store takes its whole capacity, at any size.
    #[test]
    fn capacity_is_met() {
        for cap in [16u32, 100, 1000, 100_000] {
            let s = Store::new(4, cap as usize);
            for i in 0..cap {
                assert!(s.update(&k(i), put(1)).is_ok(), "capacity {cap}: key {i}");
            }
            assert_eq!((s.len(), s.full()), (cap as usize, 0));
        }
    }

    #[test]
    fn fills_to_capacity_then_refuses() {
        let s = Store::new(4, 1000);
        for i in 0..1000 {
            assert!(s.update(&k(i), put(i + 1)).is_ok(), "key {i}");
        }
        for i in 0..1000 {
            assert_eq!(s.get(&k(i)).map(|e| e.state), Some(i + 1));
        }
        let mut refused = 0;
        for i in 1000..(s.slots() as u32 + 100) {
            if s.update(&k(i), put(1)) == Err(StoreError::Full) {
                refused += 1;
            }
        }
        assert!(refused >= 100, "more keys than slots: {refused} refused");
        assert_eq!(s.full(), refused);
    }

    #[test]
    fn sweep_covers_everything_in_steps() {
        let s = Store::new(4, 1000);
        for i in 0..500 {
            assert!(s.update(&k(i), put(i % 2)).is_ok());
        }
        let mut visited = 0;
        while visited < s.slots() {
            visited += s.sweep(64, |_, e| {
                if e.state == 0 {
                    Decision::Remove
                } else {
                    Decision::Leave
                }
            });
        }
        assert_eq!(s.len(), 250);
        assert_eq!(s.get(&k(2)), None);
        assert_eq!(s.get(&k(3)).map(|e| e.state), Some(1));
    }

    /// Increments from several threads: every increment lands (a busy
    /// write is retried by the caller here), and the same key never gets
    /// two slots.
    #[test]
    fn concurrent_increments_are_not_lost() {
        let s = Arc::new(Store::new(4, 64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    for i in 0..2000u32 {
                        let key = k(i % 8);
                        while s
                            .update(&key, |e| {
                                Decision::Put(Entry {
                                    state: e.map_or(1, |e| e.state + 1),
                                    ..Entry::default()
                                })
                            })
                            .is_err()
                        {}
                    }
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().is_ok());
        }
        let mut total = 0;
        let mut keys = 0;
        s.for_each(|_, e| {
            total += e.state;
            keys += 1;
            Decision::Leave
        });
        assert_eq!(keys, 8);
        assert_eq!(total, 8000);
    }
}
