//! State written by packets: a fixed-size table shared by every worker.
//!
//! The third kind of data-path state (beside tables replicated by the
//! control thread and shared counters): entries that packets themselves
//! create and update, such as the MAC addresses an L2 learning switch
//! learns, or the per-flow states of a stateful table. Two packets of one
//! key may be handled by different workers (ports spread flows over
//! workers by a kernel hash, and a host's frames arrive on several ports),
//! so the next packet of a key must see the update whichever worker runs
//! it, and the packet path may neither lock nor allocate.
//!
//! # Layout
//!
//! A power-of-two array of slots, allocated once. A slot is one cache line
//! of atomics: a sequence number, the key (up to [`KEY_BYTES`] bytes as two
//! words, zero-padded), a value word (bit 63: occupied; low 32 bits: the
//! state, e.g. the port a MAC was seen on) and a last-seen stamp. A key
//! lives in one of the [`PROBE`] slots after its hash (open addressing,
//! linear probing within a window; no chains, nothing to allocate). The
//! hash mixes the key with two random seeds drawn when the table is made,
//! so which keys collide is not predictable from outside.
//!
//! # Concurrency: a seqlock per slot, writers never wait
//!
//! - A reader loads the sequence (Acquire), skips the slot if it is odd (a
//!   write in progress), loads the other words (Relaxed), issues an Acquire
//!   fence and reloads the sequence: if it changed the snapshot may be torn
//!   and is retried a few times, then treated as absent. A reader therefore
//!   never returns a key with another key's state.
//! - A writer moves the sequence from the even value it saw in its snapshot
//!   to odd with a compare-exchange, writes the words, and publishes with
//!   the next even value (Release). If the compare-exchange fails (another
//!   writer got there, or the slot changed since the snapshot) the update is
//!   *skipped*, not retried: no thread ever waits for another. For learning
//!   that costs nothing (the next frame from the host learns it again).
//! - Refreshing the stamp of an entry whose state is unchanged is a plain
//!   Relaxed store outside the seqlock, and only when the stamp is older
//!   than `max_age / 64`, so steady traffic does not bounce the cache line
//!   between workers. A refresh racing with a rewrite of the slot can at
//!   worst give the new entry a stamp of the same moment.
//! - Two workers inserting the same new key at the same time may claim two
//!   different free slots. Look-ups and updates use the first match in
//!   probe order, so the duplicate is invisible until it ages out; only if
//!   the first copy is removed can the older copy's state show again, and
//!   then only until it ages out too.
//!
//! # Aging and a full table
//!
//! An entry older than the caller's `max_age` counts as absent and its
//! slot is free for reuse (no sweeper thread). When all `PROBE` slots of a
//! key's window hold live entries the update is refused ([`Update::Full`],
//! counted in [`StateTable::full`]): for learning, the frame floods, as a
//! bridge with a full table does; nothing is evicted early. Windows fill
//! before the table does (at half load some keys already find theirs
//! full), so size a table at two to four times the live entries expected.

use std::hash::BuildHasher;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Largest key in bytes.
pub const KEY_BYTES: usize = 16;
/// Slots searched for a key.
pub const PROBE: usize = 8;
/// Snapshot attempts on a slot being written before it is skipped.
const READ_TRIES: usize = 4;
const OCCUPIED: u64 = 1 << 63;

/// A key of up to [`KEY_BYTES`] bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Key(pub [u64; 2]);

impl Key {
    /// The bytes (at most [`KEY_BYTES`]; more are ignored), zero-padded.
    pub fn from_bytes(b: &[u8]) -> Key {
        let mut buf = [0u8; KEY_BYTES];
        let n = b.len().min(KEY_BYTES);
        buf[..n].copy_from_slice(&b[..n]);
        let (lo, hi) = buf.split_at(8);
        let w = |s: &[u8]| s.try_into().map(u64::from_le_bytes).unwrap_or(0);
        Key([w(lo), w(hi)])
    }

    /// A MAC address (and VLAN id, 0 for none) as a key.
    #[inline]
    pub fn mac(mac: [u8; 6], vlan: u16) -> Key {
        let mut w = [0u8; 8];
        w[..6].copy_from_slice(&mac);
        w[6..].copy_from_slice(&vlan.to_le_bytes());
        Key([u64::from_le_bytes(w), 0])
    }
}

#[derive(Default)]
#[repr(align(64))]
struct Slot {
    seq: AtomicU64,
    key: [AtomicU64; 2],
    val: AtomicU64,
    stamp: AtomicU64,
}

/// A consistent copy of a slot.
#[derive(Clone, Copy)]
struct Snap {
    seq: u64,
    key: Key,
    val: u64,
    stamp: u64,
}

impl Snap {
    fn live(&self, now: u64, max_age: u64) -> bool {
        self.val & OCCUPIED != 0 && now.saturating_sub(self.stamp) < max_age
    }
}

impl Slot {
    /// A consistent snapshot, or `None` while writers keep it busy.
    #[inline]
    fn read(&self) -> Option<Snap> {
        for _ in 0..READ_TRIES {
            let s1 = self.seq.load(Ordering::Acquire);
            if s1 & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let key = Key([
                self.key[0].load(Ordering::Relaxed),
                self.key[1].load(Ordering::Relaxed),
            ]);
            let val = self.val.load(Ordering::Relaxed);
            let stamp = self.stamp.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s1 {
                return Some(Snap {
                    seq: s1,
                    key,
                    val,
                    stamp,
                });
            }
        }
        None
    }

    /// Replaces the slot's content if it is still what `seen` saw.
    #[inline]
    fn write(&self, seen: u64, key: Key, val: u64, stamp: u64) -> bool {
        if self
            .seq
            .compare_exchange(seen, seen + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.key[0].store(key.0[0], Ordering::Relaxed);
        self.key[1].store(key.0[1], Ordering::Relaxed);
        self.val.store(val, Ordering::Relaxed);
        self.stamp.store(stamp, Ordering::Relaxed);
        self.seq.store(seen + 2, Ordering::Release);
        true
    }
}

/// What [`StateTable::update`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// The key had this state: its stamp was refreshed (if due).
    Refreshed,
    /// The key was added.
    Inserted,
    /// The key's state was replaced.
    Changed,
    /// Another worker was writing the slot: skipped.
    Busy,
    /// No free slot in the key's window: refused.
    Full,
}

/// The shared table; see the module comment.
pub struct StateTable {
    slots: Box<[Slot]>,
    mask: usize,
    seeds: [u64; 2],
    full: AtomicU64,
}

impl std::fmt::Debug for StateTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateTable")
            .field("slots", &self.slots.len())
            .finish()
    }
}

impl StateTable {
    /// A table of at least `slots` slots (rounded up to a power of two,
    /// at least [`PROBE`]).
    pub fn new(slots: usize) -> StateTable {
        let n = slots.max(PROBE).next_power_of_two();
        let rs = std::collections::hash_map::RandomState::new();
        StateTable {
            slots: (0..n).map(|_| Slot::default()).collect(),
            mask: n - 1,
            seeds: [rs.hash_one(1u64), rs.hash_one(2u64)],
            full: AtomicU64::new(0),
        }
    }

    #[inline]
    fn home(&self, k: &Key) -> usize {
        // Seeded 64-bit mixing (multiply, xor-shift) of both key words.
        let mut x = (k.0[0] ^ self.seeds[0]).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= k.0[1] ^ self.seeds[1];
        x = (x ^ (x >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
        x ^= x >> 32;
        x as usize & self.mask
    }

    #[inline]
    fn window(&self, k: &Key) -> impl Iterator<Item = &Slot> {
        let h = self.home(k);
        (0..PROBE).filter_map(move |i| self.slots.get((h + i) & self.mask))
    }

    /// The state of `key` and when it was last seen, if it is younger
    /// than `max_age` at `now`.
    #[inline]
    pub fn lookup(&self, key: Key, now: u64, max_age: u64) -> Option<(u32, u64)> {
        self.window(&key)
            .filter_map(Slot::read)
            .find(|s| s.key == key && s.val & OCCUPIED != 0)
            .filter(|s| s.live(now, max_age))
            .map(|s| (s.val as u32, s.stamp))
    }

    /// Sets `key`'s state at `now` (see the module comment for what a
    /// race or a full window does).
    #[inline]
    pub fn update(&self, key: Key, state: u32, now: u64, max_age: u64) -> Update {
        let mut free: Option<(&Slot, u64)> = None;
        for slot in self.window(&key) {
            let Some(s) = slot.read() else { continue };
            if s.val & OCCUPIED != 0 && s.key == key {
                if s.val as u32 == state && s.live(now, max_age) {
                    if now.saturating_sub(s.stamp) >= max_age / 64 {
                        slot.stamp.store(now, Ordering::Relaxed);
                    }
                    return Update::Refreshed;
                }
                return if slot.write(s.seq, key, OCCUPIED | state as u64, now) {
                    Update::Changed
                } else {
                    Update::Busy
                };
            }
            if free.is_none() && !s.live(now, max_age) {
                free = Some((slot, s.seq));
            }
        }
        match free {
            Some((slot, seq)) if slot.write(seq, key, OCCUPIED | state as u64, now) => {
                Update::Inserted
            }
            Some(_) => Update::Busy,
            None => {
                self.full.fetch_add(1, Ordering::Relaxed);
                Update::Full
            }
        }
    }

    /// Removes every entry whose state satisfies `pred` (e.g. the MACs
    /// learned on a port that went down). Not for the packet path: it
    /// walks the whole table.
    pub fn remove_where(&self, mut pred: impl FnMut(u32) -> bool) -> usize {
        let mut n = 0;
        for slot in self.slots.iter() {
            if let Some(s) = slot.read() {
                if s.val & OCCUPIED != 0
                    && pred(s.val as u32)
                    && slot.write(s.seq, Key::default(), 0, 0)
                {
                    n += 1;
                }
            }
        }
        n
    }

    /// Entries younger than `max_age` (walks the table).
    pub fn live(&self, now: u64, max_age: u64) -> usize {
        self.slots
            .iter()
            .filter_map(Slot::read)
            .filter(|s| s.live(now, max_age))
            .count()
    }

    /// Updates refused for want of a free slot.
    pub fn full(&self) -> u64 {
        self.full.load(Ordering::Relaxed)
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    const AGE: u64 = 1_000;

    #[test]
    fn insert_refresh_change_age_remove() {
        let t = StateTable::new(64);
        let k = Key::mac([2, 0, 0, 0, 0, 1], 0);
        assert_eq!(t.lookup(k, 0, AGE), None);
        assert_eq!(t.update(k, 3, 10, AGE), Update::Inserted);
        assert_eq!(t.lookup(k, 20, AGE), Some((3, 10)));
        assert_eq!(t.update(k, 3, 500, AGE), Update::Refreshed);
        assert_eq!(t.lookup(k, 600, AGE), Some((3, 500)));
        assert_eq!(t.update(k, 4, 700, AGE), Update::Changed);
        assert_eq!(t.lookup(k, 701, AGE).map(|e| e.0), Some(4));
        // Aged out: absent, and the slot is reused.
        assert_eq!(t.lookup(k, 1_700, AGE), None);
        assert_eq!(t.live(1_700, AGE), 0);
        assert_eq!(t.update(k, 5, 1_800, AGE), Update::Changed);
        assert_eq!(t.remove_where(|s| s == 5), 1);
        assert_eq!(t.lookup(k, 1_800, AGE), None);
        assert_eq!(Key::from_bytes(&[1; 20]), Key::from_bytes(&[1; 16]));
    }

    #[test]
    fn full_window_refuses_and_aged_slots_are_reused() {
        // 8 slots = one window: the ninth live key is refused.
        let t = StateTable::new(8);
        for i in 0..8u8 {
            assert_eq!(
                t.update(Key::from_bytes(&[i]), i as u32, 0, AGE),
                Update::Inserted
            );
        }
        assert_eq!(t.update(Key::from_bytes(&[9]), 9, 0, AGE), Update::Full);
        assert_eq!(t.full(), 1);
        assert_eq!(
            t.update(Key::from_bytes(&[9]), 9, AGE, AGE),
            Update::Inserted
        );
        assert_eq!(
            t.lookup(Key::from_bytes(&[9]), AGE, AGE).map(|e| e.0),
            Some(9)
        );
    }

    /// Writers on several threads update a shared key set; readers check
    /// that a key is never seen with another key's state (no torn entry),
    /// and at the end every key is found with a state some thread wrote.
    #[test]
    fn concurrent_updates_never_tear() {
        // Room enough that no key's window fills up (a full window refuses
        // an insert by design; that is tested above).
        let t = Arc::new(StateTable::new(16384));
        let stop = Arc::new(AtomicBool::new(false));
        const KEYS: u32 = 1000;
        let mut hs = Vec::new();
        for w in 0..3u32 {
            let t = Arc::clone(&t);
            hs.push(std::thread::spawn(move || {
                for round in 0..30u32 {
                    for k in 0..KEYS {
                        let key = Key::from_bytes(&k.to_le_bytes());
                        t.update(key, (k << 8) | ((w * 30 + round) % 256), 1, u64::MAX);
                    }
                }
            }));
        }
        let reader = {
            let (t, stop) = (Arc::clone(&t), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut seen = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for k in 0..KEYS {
                        if let Some((s, _)) =
                            t.lookup(Key::from_bytes(&k.to_le_bytes()), 1, u64::MAX)
                        {
                            assert_eq!(s >> 8, k, "key {k} seen with another key's state");
                            seen += 1;
                        }
                    }
                }
                seen
            })
        };
        for h in hs {
            h.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        assert_eq!(t.full(), 0);
        for k in 0..KEYS {
            let got = t.lookup(Key::from_bytes(&k.to_le_bytes()), 1, u64::MAX);
            assert_eq!(got.map(|(s, _)| s >> 8), Some(k), "key {k} lost");
        }
    }
}
