//! The priority order of a flow table's entries (`FlowTable::entries`):
//! highest priority first and, among equal priorities, earliest installed
//! first (spec §5.3 leaves ties undefined; this order makes them
//! deterministic, as the classifier's `Rank` does).
//!
//! ```text
//!  prios  BTreeMap<Reverse<priority>, List>     one entry per priority
//!         300 -> List [ (seq 4, h 7) | (seq 9, h 2) ]
//!         100 -> List [ (seq 1, h 0) | (seq 2, DEAD) | (seq 5, h 3) ]
//! ```
//!
//! A list holds its priority's entries as (installation sequence number,
//! handle), in installation order. Sequence numbers only grow
//! (`FlowTable::insert` hands out the next one; a renumbering refills the
//! whole order), so an insert is a push at the end of its list. A removal
//! finds its slot by binary search on the sequence number and marks it
//! dead (`DEAD` handle) rather than shifting the rest; a list that is
//! more than half dead is compacted, so the dead slots cost amortised
//! O(1) per removal and never outnumber the live ones.
//!
//! Against one `BTreeMap` keyed by rank (what this replaced): inserting
//! 100,000 entries of one priority walked the tree from the root every
//! time, about 500 instructions per insert, a tenth of a flow-mod's work
//! in each of the authoritative copy and the replicas; a push is a few.
//! The map of priorities stays small: a table's entries share few
//! priorities.

use std::cmp::Reverse;
use std::collections::BTreeMap;

/// A dead slot's handle (handles are below `u32::MAX`: positions).
const DEAD: u32 = u32::MAX;

/// The entries of one priority (module comment).
#[derive(Debug, Clone, Default)]
struct List {
    /// (sequence number, handle or `DEAD`), sequence numbers ascending.
    slots: Vec<(u64, u32)>,
    dead: usize,
}

impl List {
    fn live(&self) -> usize {
        self.slots.len() - self.dead
    }

    fn handles(&self) -> impl DoubleEndedIterator<Item = u32> + Clone + '_ {
        self.slots
            .iter()
            .filter(|(_, h)| *h != DEAD)
            .map(|(_, h)| *h)
    }
}

/// The priority order of a table's entries (module comment).
#[derive(Debug, Clone, Default)]
pub(crate) struct Order {
    prios: BTreeMap<Reverse<u16>, List>,
}

impl Order {
    /// Adds the entry `handle` of `priority` with sequence number `seq`,
    /// which must be above every sequence number in the order.
    pub fn insert(&mut self, priority: u16, seq: u64, handle: u32) {
        let list = self.prios.entry(Reverse(priority)).or_default();
        debug_assert!(list.slots.last().is_none_or(|(s, _)| *s < seq));
        list.slots.push((seq, handle));
    }

    /// Removes the entry of `priority` with sequence number `seq`; its
    /// handle if it was there.
    pub fn remove(&mut self, priority: u16, seq: u64) -> Option<u32> {
        let list = self.prios.get_mut(&Reverse(priority))?;
        let i = list.slots.binary_search_by_key(&seq, |(s, _)| *s).ok()?;
        let slot = list.slots.get_mut(i)?;
        let handle = std::mem::replace(&mut slot.1, DEAD);
        if handle == DEAD {
            return None;
        }
        list.dead += 1;
        if list.live() == 0 {
            self.prios.remove(&Reverse(priority));
        } else if 2 * list.dead > list.slots.len() {
            list.slots.retain(|(_, h)| *h != DEAD);
            list.dead = 0;
        }
        Some(handle)
    }

    /// Every handle, in the order (module comment).
    pub fn handles(&self) -> impl DoubleEndedIterator<Item = u32> + Clone + '_ {
        self.prios.values().flat_map(List::handles)
    }

    /// The handles of one priority, earliest installed first.
    pub fn with_priority(&self, priority: u16) -> impl Iterator<Item = u32> + '_ {
        self.prios
            .get(&Reverse(priority))
            .into_iter()
            .flat_map(List::handles)
    }

    pub fn clear(&mut self) {
        self.prios.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The order against the map it replaced, keyed by (priority
    /// descending, sequence number ascending), under random inserts and
    /// removals of several priorities.
    #[test]
    fn matches_a_map_keyed_by_rank() {
        let mut order = Order::default();
        let mut map: BTreeMap<(Reverse<u16>, u64), u32> = BTreeMap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut seq = 0u64;
        for step in 0..20_000u32 {
            let r = next();
            if r % 3 != 0 || map.is_empty() {
                let priority = (r >> 8) as u16 % 4;
                order.insert(priority, seq, step);
                map.insert((Reverse(priority), seq), step);
                seq += 1;
            } else {
                // A live entry, or (one time in four) one that is gone.
                let keys: Vec<_> = map.keys().copied().collect();
                let (p, s) = keys[(r >> 8) as usize % keys.len()];
                if r % 4 == 0 {
                    assert_eq!(order.remove(p.0, seq + 7), None);
                }
                assert_eq!(order.remove(p.0, s), map.remove(&(p, s)));
                assert_eq!(order.remove(p.0, s), None);
            }
            if step % 500 == 0 {
                let want: Vec<u32> = map.values().copied().collect();
                assert_eq!(order.handles().collect::<Vec<_>>(), want);
                for p in 0..4 {
                    let want: Vec<u32> = map
                        .range((Reverse(p), 0)..=(Reverse(p), u64::MAX))
                        .map(|(_, h)| *h)
                        .collect();
                    assert_eq!(order.with_priority(p).collect::<Vec<_>>(), want);
                }
            }
        }
        // Dead slots never outnumber the live ones.
        for list in order.prios.values() {
            assert!(2 * list.dead <= list.slots.len());
        }
    }
}
