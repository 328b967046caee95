//! Flow tables and flow entries (spec §5.2, §5.3).
//!
//! A [`FlowTable`] owns its entries in one store, a `Vec` kept sorted by
//! priority (highest first) and, among equal priorities, by installation
//! order (earliest first). The spec leaves the choice between overlapping
//! entries of equal priority undefined; this order makes it deterministic:
//! the earliest installed entry wins.
//!
//! Lookup goes through the small [`Classifier`] trait. [`LinearScan`] walks
//! the sorted store and stops at the first match, so it returns the
//! highest-priority match by construction. The table uses
//! `crate::classifier::Auto`, which switches to one hash map when every
//! entry matches the same fields with the same masks (or everything: the
//! L2 MAC table case) and scans otherwise. Further structures of DESIGN.md
//! (an LPM trie for prefix masks on one address, tuple space search over
//! per-mask subtables) plug in the same way: the table calls `inserted`
//! after an insertion, `rebuild` after other changes of the store and
//! `lookup` per packet, and a classifier returns an index into the store,
//! so counters, timeouts and flow-mod semantics stay in one place whatever
//! the structure. Property tests compare the classifiers with a naive
//! reference scan.

use crate::classifier::Auto;
use crate::matcher::CompiledMatch;
use ofp::instruction::Instruction;
use ofp::message::flow_mod_flags;
use ofp::oxm::Match;
use packet::FlowKey;

/// Time as the pipeline sees it: nanoseconds since an arbitrary epoch,
/// passed in by the caller (a fake clock in tests).
pub type Nanos = u64;

const NS_PER_SEC: u64 = 1_000_000_000;

/// One flow entry.
#[derive(Debug, Clone)]
pub struct FlowEntry {
    /// The match as the controller sent it (reported back in stats and
    /// flow-removed messages).
    pub match_: Match,
    pub compiled: CompiledMatch,
    pub priority: u16,
    pub cookie: u64,
    /// Bits of `flow_mod_flags`.
    pub flags: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub instructions: std::sync::Arc<[Instruction]>,
    pub packet_count: u64,
    pub byte_count: u64,
    /// When the entry was installed (duration counts from here).
    pub installed_at: Nanos,
    /// Last time a packet matched (or install time); drives idle timeouts.
    pub last_hit: Nanos,
    /// Installation sequence number: the tie-break among equal priorities.
    pub(crate) seq: u64,
}

impl FlowEntry {
    /// Seconds and nanoseconds since installation.
    pub fn duration(&self, now: Nanos) -> (u32, u32) {
        let d = now.saturating_sub(self.installed_at);
        (
            (d / NS_PER_SEC).min(u64::from(u32::MAX)) as u32,
            (d % NS_PER_SEC) as u32,
        )
    }

    /// Whether the entry is a table-miss entry (priority 0, empty match).
    pub fn is_table_miss(&self) -> bool {
        self.priority == 0 && self.compiled.is_empty()
    }

    /// Counts one packet of `len` bytes (unless the flags say not to).
    pub fn hit(&mut self, len: usize, now: Nanos) {
        if self.flags & flow_mod_flags::NO_PKT_COUNTS == 0 {
            self.packet_count += 1;
        }
        if self.flags & flow_mod_flags::NO_BYT_COUNTS == 0 {
            self.byte_count += len as u64;
        }
        self.last_hit = now;
    }

    /// Why the entry has expired at `now`, if it has: hard timeout first.
    pub fn expired(&self, now: Nanos) -> Option<u8> {
        use ofp::message::flow_removed_reason as r;
        let secs = |t: u16| u64::from(t) * NS_PER_SEC;
        if self.hard_timeout != 0
            && now.saturating_sub(self.installed_at) >= secs(self.hard_timeout)
        {
            return Some(r::HARD_TIMEOUT);
        }
        if self.idle_timeout != 0 && now.saturating_sub(self.last_hit) >= secs(self.idle_timeout) {
            return Some(r::IDLE_TIMEOUT);
        }
        None
    }
}

/// A lookup structure over a table's sorted entry store (module comment).
pub(crate) trait Classifier: std::fmt::Debug + Send {
    /// Called after the store changed.
    fn rebuild(&mut self, entries: &[FlowEntry]);
    /// Called after one entry was inserted at `pos` (nothing else changed).
    fn inserted(&mut self, entries: &[FlowEntry], _pos: usize) {
        self.rebuild(entries);
    }
    /// Index of the highest-priority entry matching `key`.
    fn lookup(&self, entries: &[FlowEntry], key: &FlowKey) -> Option<usize>;
}

/// Scans the priority-sorted store; fine for a handful of entries.
#[derive(Debug, Default)]
pub(crate) struct LinearScan;

impl Classifier for LinearScan {
    fn rebuild(&mut self, _entries: &[FlowEntry]) {}

    fn lookup(&self, entries: &[FlowEntry], key: &FlowKey) -> Option<usize> {
        entries.iter().position(|e| e.compiled.matches(key))
    }
}

/// Per-table counters (`ofp_table_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounters {
    pub lookup_count: u64,
    pub matched_count: u64,
}

/// One flow table; see the module comment.
#[derive(Debug)]
pub struct FlowTable {
    pub id: u8,
    entries: Vec<FlowEntry>,
    classifier: Auto,
    pub counters: TableCounters,
    next_seq: u64,
}

/// A copy (for a worker's replica): the classifier is rebuilt from the
/// copied entries, as it would be chosen for them anyway.
impl Clone for FlowTable {
    fn clone(&self) -> Self {
        let mut t = FlowTable {
            id: self.id,
            entries: self.entries.clone(),
            classifier: Auto::default(),
            counters: self.counters,
            next_seq: self.next_seq,
        };
        t.classifier.rebuild(&t.entries);
        t
    }
}

impl FlowTable {
    pub fn new(id: u8) -> FlowTable {
        FlowTable {
            id,
            entries: Vec::new(),
            classifier: Auto::default(),
            counters: TableCounters::default(),
            next_seq: 0,
        }
    }

    /// The lookup structure in use: "hash" or "linear".
    pub fn classifier_kind(&self) -> &'static str {
        self.classifier.kind()
    }

    /// The entries, highest priority first.
    pub fn entries(&self) -> &[FlowEntry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Looks `key` up, counting the lookup (and the match).
    pub fn lookup(&mut self, key: &FlowKey) -> Option<usize> {
        self.counters.lookup_count += 1;
        let hit = self.classifier.lookup(&self.entries, key);
        if hit.is_some() {
            self.counters.matched_count += 1;
        }
        hit
    }

    /// Looks `key` up without touching counters.
    pub fn peek(&self, key: &FlowKey) -> Option<&FlowEntry> {
        self.classifier
            .lookup(&self.entries, key)
            .and_then(|i| self.entries.get(i))
    }

    pub fn entry(&self, i: usize) -> Option<&FlowEntry> {
        self.entries.get(i)
    }

    pub fn entry_mut(&mut self, i: usize) -> Option<&mut FlowEntry> {
        self.entries.get_mut(i)
    }

    /// Index of the entry with exactly this match and priority.
    pub fn find_strict(&self, m: &CompiledMatch, priority: u16) -> Option<usize> {
        self.entries
            .iter()
            .position(|e| e.priority == priority && e.compiled == *m)
    }

    /// Inserts a new entry at its place in the priority order (after the
    /// existing entries of the same priority).
    pub fn insert(&mut self, mut e: FlowEntry) {
        e.seq = self.next_seq;
        self.next_seq += 1;
        let pos = self.entries.partition_point(|x| x.priority >= e.priority);
        self.entries.insert(pos, e);
        self.classifier.inserted(&self.entries, pos);
    }

    /// Removes and returns every entry for which `pred` holds, in store
    /// order.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&FlowEntry) -> bool) -> Vec<FlowEntry> {
        let mut removed = Vec::new();
        let mut kept = Vec::with_capacity(self.entries.len());
        for e in self.entries.drain(..) {
            if pred(&e) {
                removed.push(e);
            } else {
                kept.push(e);
            }
        }
        self.entries = kept;
        if !removed.is_empty() {
            self.classifier.rebuild(&self.entries);
        }
        removed
    }

    /// Mutable access to every entry for which `pred` holds (modify); the
    /// match and priority must not change, so no rebuild is needed.
    pub fn for_each_where(
        &mut self,
        mut pred: impl FnMut(&FlowEntry) -> bool,
        mut f: impl FnMut(&mut FlowEntry),
    ) -> usize {
        let mut n = 0;
        for e in self.entries.iter_mut().filter(|e| pred(e)) {
            f(e);
            n += 1;
        }
        n
    }
}
