//! Flow tables and flow entries (spec §5.2, §5.3).
//!
//! A [`FlowTable`] owns its entries in one store and keeps three views of
//! them:
//!
//! ```text
//!  store      hot:  Vec<HotEntry>   dense; position i = entry(i)
//!             cold: Vec<ColdEntry>  parallel to hot (same positions)
//!  handle_at  Vec<u32>              position -> handle
//!  pos_of     Vec<u32>              handle -> position (NIL when free)
//!  order      Order                    priority order (entries())
//!  classifier Auto                  lookup structures, name entries by handle
//! ```
//!
//! - The **store** is split in two parallel arrays by who reads them:
//!
//!   ```text
//!    position:   0          1          2               n-1
//!    hot   [ HotEntry | HotEntry | HotEntry | ... | HotEntry ]  64 B each,
//!          counters, last hit, program, cookie, flags,          one cache
//!          priority: all a matched packet reads or writes       line apiece
//!    cold  [ ColdEntry| ColdEntry| ColdEntry| ... | ColdEntry]  control plane
//!          match (compiled and wire form), instructions,        only
//!          timeouts, install time, sequence number
//!   ```
//!
//!   A packet touches one line of `hot` per table; the cold records (about
//!   three lines each) stay out of the caches, and a table's hot array is a
//!   third of what one array of whole entries was (a 10K-route table: 640
//!   KB instead of 1.9 MB). Each field is in exactly one of the two
//!   records: `cookie` and `flags` in the hot one (the packet path reads
//!   them; the control plane reads them there too), `priority` in the cold
//!   one (a key of the structures). One field is a copy:
//!   `HotEntry::miss`, derived from the cold record's priority and match
//!   by [`FlowTable::insert`], the only place that sets it (neither input
//!   changes after insertion, so it stays true). [`EntryRef`] pairs the two
//!   records of a position for the control plane, [`FlowEntry`] holds the
//!   two records of an entry as one value (built by flow-mod, given to
//!   `insert`, returned by `remove`).
//! - The store is where counters live. It is dense so that positions
//!   `0..len()` name every entry (the datapath pairs per-entry counter
//!   deltas of worker replicas by position). An insertion appends, a
//!   removal moves the last entry into the hole (`swap_remove`, in both
//!   arrays): both O(1),
//!   and deterministic, so two replicas that applied the same operations
//!   have the same positions (and `Clone` copies them as they are).
//! - **Handles** are stable names for entries: the classifier's structures
//!   refer to entries by handle, so moving an entry in the store updates
//!   one `pos_of` slot and no structure. Freed handles are reused.
//! - The **order** (`crate::order`: one list per priority, in
//!   installation order) sorts as ranks do: priority first (highest
//!   first) and, among equal priorities, installation order (earliest
//!   first). The spec leaves the choice between overlapping entries of
//!   equal priority undefined; this order makes it deterministic: the
//!   earliest installed entry wins. `entries()` iterates in this order
//!   (flow stats), and `entries_with_priority` reads one priority's list
//!   (CHECK_OVERLAP).
//! - The **classifier** (`crate::classifier`: linear scan, exact hash,
//!   LPM trie, tuple space search, chosen from the entries) answers
//!   lookups with the handle of the highest-priority match and is also the
//!   strict index `(priority, match) -> entry`.
//!
//! Insert and remove of one entry cost O(log n) plus the classifier's
//! update (no rebuild); see the classifier module for lookup costs.
//! Entries' `compiled` match and `priority` cannot be changed through
//! [`FlowTable::modify_at`] (modify changes instructions and counters
//! only): they are keys of the structures.

use crate::classifier::fields::FrameFields;
use crate::classifier::{Auto, Rank, Ref, SEQ_LIMIT};
use crate::matcher::CompiledMatch;
use crate::order::Order;
use crate::program::Program;
use ofp::instruction::Instruction;
use ofp::message::flow_mod_flags;
use ofp::oxm::Match;
use packet::FlowKey;
use std::sync::Arc;

/// Time as the pipeline sees it: nanoseconds since an arbitrary epoch,
/// passed in by the caller (a fake clock in tests).
pub type Nanos = u64;

const NS_PER_SEC: u64 = 1_000_000_000;

/// One flow entry as a whole value: what flow-mod builds, `insert`
/// takes and `remove` returns. A table stores its two records in
/// parallel arrays (module comment).
#[derive(Debug, Clone)]
pub struct FlowEntry {
    pub hot: HotEntry,
    pub cold: ColdEntry,
}

/// What a matched packet reads and writes of an entry: its counters,
/// last hit, program, cookie, flags and whether it is the table-miss
/// entry (45 bytes), aligned so that each record
/// has a cache line of its own (module comment).
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct HotEntry {
    pub packet_count: u64,
    pub byte_count: u64,
    /// Last time a packet matched (or install time); drives idle timeouts.
    pub last_hit: Nanos,
    /// [`ColdEntry::instructions`] compiled for the packet path
    /// (`crate::program`); always set together with them. Entries with
    /// equal instructions may share one program.
    program: Arc<Program>,
    pub cookie: u64,
    /// Bits of `flow_mod_flags`.
    pub flags: u16,
    /// Whether the entry is the table-miss entry (priority 0, empty
    /// match): a copy of [`ColdEntry::is_table_miss`], set by
    /// [`FlowTable::insert`] (module comment).
    pub(crate) miss: bool,
}

/// The rest of an entry, read by the control plane only (module comment).
#[derive(Debug, Clone)]
pub struct ColdEntry {
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// When the entry was installed (duration counts from here).
    pub installed_at: Nanos,
    /// Installation sequence number: the tie-break among equal priorities
    /// (set by [`FlowTable::insert`]).
    pub(crate) seq: u64,
    pub compiled: CompiledMatch,
    pub instructions: Arc<[Instruction]>,
    /// The match as the controller sent it (reported back in stats and
    /// flow-removed messages); shared with the replicas' copies.
    pub match_: Arc<Match>,
}

/// The two records of one stored entry, for the control plane. It
/// dereferences to the cold record; the hot record's fields (counters,
/// cookie, flags) are read through [`EntryRef::hot`] or the accessors.
#[derive(Debug, Clone, Copy)]
pub struct EntryRef<'a> {
    pub hot: &'a HotEntry,
    pub cold: &'a ColdEntry,
}

/// Mutable access to one stored entry (modify: instructions, program and
/// counters). The cold record's match and priority must not change.
#[derive(Debug)]
pub struct EntryMut<'a> {
    pub hot: &'a mut HotEntry,
    pub instructions: &'a mut Arc<[Instruction]>,
}

/// Seconds and nanoseconds from `since` to `now`.
fn duration_since(since: Nanos, now: Nanos) -> (u32, u32) {
    let d = now.saturating_sub(since);
    (
        (d / NS_PER_SEC).min(u64::from(u32::MAX)) as u32,
        (d % NS_PER_SEC) as u32,
    )
}

/// Why an entry with these timeouts, install time and last hit has
/// expired at `now`, if it has: hard timeout first.
fn expiry(idle: u16, hard: u16, installed_at: Nanos, last_hit: Nanos, now: Nanos) -> Option<u8> {
    use ofp::message::flow_removed_reason as r;
    let secs = |t: u16| u64::from(t) * NS_PER_SEC;
    if hard != 0 && now.saturating_sub(installed_at) >= secs(hard) {
        return Some(r::HARD_TIMEOUT);
    }
    if idle != 0 && now.saturating_sub(last_hit) >= secs(idle) {
        return Some(r::IDLE_TIMEOUT);
    }
    None
}

impl FlowEntry {
    /// A test entry: `m` at `priority` with `cookie`, no instructions,
    /// flags, timeouts or counts.
    #[cfg(test)]
    pub(crate) fn plain(priority: u16, m: CompiledMatch, cookie: u64) -> FlowEntry {
        FlowEntry {
            hot: HotEntry::new(Arc::default(), cookie, 0, 0),
            cold: ColdEntry {
                priority,
                idle_timeout: 0,
                hard_timeout: 0,
                installed_at: 0,
                seq: 0,
                match_: m.to_match(&Default::default()).into(),
                compiled: m,
                instructions: Arc::from(Vec::new()),
            },
        }
    }

    /// The entry seen as a stored one is (accessors, `expired`).
    pub fn view(&self) -> EntryRef<'_> {
        EntryRef {
            hot: &self.hot,
            cold: &self.cold,
        }
    }
}

impl HotEntry {
    /// The record of a new entry installed at `now`: no counts, last hit
    /// `now`.
    pub fn new(program: Arc<Program>, cookie: u64, flags: u16, now: Nanos) -> HotEntry {
        HotEntry {
            packet_count: 0,
            byte_count: 0,
            last_hit: now,
            program,
            cookie,
            flags,
            miss: false,
        }
    }

    /// The entry's compiled program.
    #[inline(always)]
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// Gives the entry another program (a MODIFY).
    pub fn set_program(&mut self, program: Arc<Program>) {
        self.program = program;
    }

    /// Counts one packet of `len` bytes (unless the flags say not to).
    #[inline]
    pub fn hit(&mut self, len: usize, now: Nanos) {
        if self.flags & flow_mod_flags::NO_PKT_COUNTS == 0 {
            self.packet_count += 1;
        }
        if self.flags & flow_mod_flags::NO_BYT_COUNTS == 0 {
            self.byte_count += len as u64;
        }
        self.last_hit = now;
    }
}

impl ColdEntry {
    /// Seconds and nanoseconds since installation.
    pub fn duration(&self, now: Nanos) -> (u32, u32) {
        duration_since(self.installed_at, now)
    }

    /// Whether the entry can expire (idle or hard timeout set).
    pub fn has_timeout(&self) -> bool {
        self.idle_timeout != 0 || self.hard_timeout != 0
    }

    /// Whether the entry is a table-miss entry (priority 0, empty match).
    pub fn is_table_miss(&self) -> bool {
        self.priority == 0 && self.compiled.is_empty()
    }
}

impl std::ops::Deref for EntryRef<'_> {
    type Target = ColdEntry;
    fn deref(&self) -> &ColdEntry {
        self.cold
    }
}

impl EntryRef<'_> {
    pub fn packet_count(&self) -> u64 {
        self.hot.packet_count
    }

    pub fn byte_count(&self) -> u64 {
        self.hot.byte_count
    }

    /// Last time a packet matched (or install time).
    pub fn last_hit(&self) -> Nanos {
        self.hot.last_hit
    }

    pub fn cookie(&self) -> u64 {
        self.hot.cookie
    }

    /// Bits of `flow_mod_flags`.
    pub fn flags(&self) -> u16 {
        self.hot.flags
    }

    /// Why the entry has expired at `now`, if it has: hard timeout first.
    pub fn expired(&self, now: Nanos) -> Option<u8> {
        let c = self.cold;
        expiry(
            c.idle_timeout,
            c.hard_timeout,
            c.installed_at,
            self.hot.last_hit,
            now,
        )
    }
}

/// Per-table counters (`ofp_table_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableCounters {
    pub lookup_count: u64,
    pub matched_count: u64,
}

/// "No position" / "no handle".
const NIL: u32 = u32::MAX;

/// One flow table; see the module comment.
#[derive(Debug, Clone)]
pub struct FlowTable {
    pub id: u8,
    hot: Vec<HotEntry>,
    cold: Vec<ColdEntry>,
    handle_at: Vec<u32>,
    pos_of: Vec<u32>,
    free_handles: Vec<u32>,
    order: Order,
    classifier: Auto,
    pub counters: TableCounters,
    next_seq: u64,
    /// How many entries have an idle or hard timeout (expiry scans are
    /// skipped while there are none).
    timed: usize,
    /// How many entries match an extension field (`crate::ext`): while
    /// there is one, the executor writes the extension's values into a
    /// packet's key before looking it up here (the classifier indexes
    /// them as the key fields `mod_state` / `mod_global_state`).
    ext_entries: usize,
}

impl FlowTable {
    pub fn new(id: u8) -> FlowTable {
        FlowTable {
            id,
            hot: Vec::new(),
            cold: Vec::new(),
            handle_at: Vec::new(),
            pos_of: Vec::new(),
            free_handles: Vec::new(),
            order: Order::default(),
            classifier: Auto::default(),
            counters: TableCounters::default(),
            next_seq: 0,
            timed: 0,
            ext_entries: 0,
        }
    }

    /// The lookup structure in use: "linear", "hash", "lpm" or "tss"
    /// (see `crate::classifier`), or a plugged structure's name.
    pub fn classifier_kind(&self) -> &'static str {
        self.classifier.kind_name()
    }

    /// Plugs a lookup structure into the table (filled with its entries
    /// now), or takes it out (`None`); see `crate::table_kinds`.
    pub fn set_lookup(&mut self, s: Option<Box<dyn crate::classifier::LookupStructure>>) {
        self.classifier.set_plugged(s);
    }

    /// Keeps or drops the classifier's lookup-only indexes, the exact
    /// index and the LPM trie (see `Pipeline::set_lookup_indexes`).
    pub fn set_lookup_indexes(&mut self, on: bool) {
        self.classifier.set_exact_index(on);
        self.classifier.set_lpm_index(on);
    }

    fn rank(e: &ColdEntry) -> Rank {
        Rank::new(e.priority, e.seq)
    }

    pub(crate) fn pos_of_handle(&self, h: u32) -> Option<usize> {
        self.pos_of.get(h as usize).map(|p| *p as usize)
    }

    fn by_handle(&self, h: u32) -> Option<EntryRef<'_>> {
        self.entry(self.pos_of_handle(h)?)
    }

    /// The entries, highest priority first (earliest installed first among
    /// equal priorities).
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = EntryRef<'_>> + Clone + '_ {
        self.order.handles().map(move |h| {
            // Every handle in `order` has a position (module comment).
            let p = self.pos_of[h as usize] as usize;
            EntryRef {
                hot: &self.hot[p],
                cold: &self.cold[p],
            }
        })
    }

    /// The entries of one priority, earliest installed first.
    pub fn entries_with_priority(&self, priority: u16) -> impl Iterator<Item = EntryRef<'_>> + '_ {
        self.order
            .with_priority(priority)
            .filter_map(move |h| self.by_handle(h))
    }

    pub fn len(&self) -> usize {
        self.hot.len()
    }

    /// Whether some entry has an idle or hard timeout.
    pub fn has_timeouts(&self) -> bool {
        self.timed > 0
    }

    pub fn is_empty(&self) -> bool {
        self.hot.is_empty()
    }

    /// Position of the highest-priority entry matching `key`.
    #[inline(always)]
    pub(crate) fn find(&self, key: &FlowKey) -> Option<usize> {
        let h = self.classifier.lookup(key)?;
        self.pos_of_handle(h)
    }

    /// `find` for several keys (at most `crate::chunk::CHUNK`): `pos[j]`
    /// is the position for `keys[at[j]]`, `u32::MAX` for no match.
    /// Touches no counters.
    pub(crate) fn find_many(&self, keys: &[FlowKey], at: &[u8], pos: &mut [u32]) {
        let mut handles = [None; crate::chunk::CHUNK];
        let n = at.len().min(pos.len()).min(handles.len());
        self.classifier
            .lookup_many(keys, &at[..n], &mut handles[..n]);
        for (p, h) in pos.iter_mut().zip(&handles[..n]) {
            *p = h
                .and_then(|h| self.pos_of.get(h as usize).copied())
                .unwrap_or(NIL);
        }
    }

    /// Whether packets can be looked up here from their frames
    /// (`find_frames`): no entry matches a field beyond those a
    /// `FrameFields` holds (`FRAME_FIELDS`; an extension field is not
    /// one).
    #[inline]
    pub(crate) fn frames_answer(&self) -> bool {
        crate::classifier::fields::FRAME_FIELDS.contains_all(self.match_fields())
    }

    /// `find_many` for packets read from their frames (`FrameFields`)
    /// instead of parsed into keys, when `frames_answer`
    /// (`Auto::lookup_frames_many`: the same answer as a key's). `false` (nothing written)
    /// when the table cannot answer so.
    pub(crate) fn find_frames(&self, frames: &[FrameFields], at: &[u8], pos: &mut [u32]) -> bool {
        if !self.frames_answer() {
            return false;
        }
        let mut handles = [None; crate::chunk::CHUNK];
        let n = at.len().min(pos.len()).min(handles.len());
        self.classifier
            .lookup_frames_many(frames, &at[..n], &mut handles[..n]);
        for (p, h) in pos.iter_mut().zip(&handles[..n]) {
            *p = h
                .and_then(|h| self.pos_of.get(h as usize).copied())
                .unwrap_or(NIL);
        }
        true
    }

    /// `lookup` for a packet read from its frame (`FrameFields`),
    /// counted the same; `None` (nothing counted) unless
    /// `frames_answer`.
    #[inline]
    pub(crate) fn lookup_frame(&mut self, f: &FrameFields) -> Option<Option<usize>> {
        let hit = self.find_frame(f)?;
        Some(self.lookup_known(hit))
    }

    /// `lookup_frame` without counting.
    #[inline(always)]
    pub(crate) fn find_frame(&self, f: &FrameFields) -> Option<Option<usize>> {
        if !self.frames_answer() {
            return None;
        }
        Some(
            self.classifier
                .lookup_frame(f)
                .and_then(|h| self.pos_of_handle(h)),
        )
    }

    /// Looks `key` up, counting the lookup (and the match).
    #[inline]
    pub fn lookup(&mut self, key: &FlowKey) -> Option<usize> {
        self.counters.lookup_count += 1;
        let hit = self.find(key);
        if hit.is_some() {
            self.counters.matched_count += 1;
        }
        hit
    }

    /// Whether some entry matches an extension field.
    #[inline(always)]
    pub(crate) fn has_ext(&self) -> bool {
        self.ext_entries > 0
    }

    /// The table's lookup structure.
    #[cfg(test)]
    pub(crate) fn classifier(&self) -> &Auto {
        &self.classifier
    }

    /// Every field some entry matches on (see `Auto::match_fields`).
    #[inline]
    pub(crate) fn match_fields(&self) -> packet::FieldSet {
        self.classifier.match_fields()
    }

    /// Counts a lookup whose answer (`hit`, from `find_many` on the same
    /// key with the table unchanged since) is known, as `lookup` would.
    #[inline]
    pub(crate) fn lookup_known(&mut self, hit: Option<usize>) -> Option<usize> {
        self.counters.lookup_count += 1;
        if hit.is_some() {
            self.counters.matched_count += 1;
        }
        hit
    }

    /// Looks `key` up without touching counters.
    pub fn peek(&self, key: &FlowKey) -> Option<EntryRef<'_>> {
        self.entry(self.find(key)?)
    }

    /// The entry at store position `i` (positions are not in priority
    /// order; see the module comment).
    pub fn entry(&self, i: usize) -> Option<EntryRef<'_>> {
        Some(EntryRef {
            hot: self.hot.get(i)?,
            cold: self.cold.get(i)?,
        })
    }

    /// The packet path's record of the entry at position `i`.
    #[inline]
    pub fn hot(&self, i: usize) -> Option<&HotEntry> {
        self.hot.get(i)
    }

    /// The packet path's record of the entry at position `i` (counters).
    #[inline]
    pub fn hot_mut(&mut self, i: usize) -> Option<&mut HotEntry> {
        self.hot.get_mut(i)
    }

    /// Runs `f` with mutable access to the entry at position `i`
    /// (modify); false if there is none.
    pub fn modify_at(&mut self, i: usize, f: impl FnOnce(EntryMut<'_>)) -> bool {
        let (Some(hot), Some(cold)) = (self.hot.get_mut(i), self.cold.get_mut(i)) else {
            return false;
        };
        f(EntryMut {
            hot,
            instructions: &mut cold.instructions,
        });
        true
    }

    /// Position of the entry with exactly this match and priority.
    pub fn find_strict(&self, m: &CompiledMatch, priority: u16) -> Option<usize> {
        let r = self.classifier.find(m, priority)?;
        self.pos_of_handle(r.handle)
    }

    /// Inserts a new entry; among entries of its priority it ranks last.
    pub fn insert(&mut self, e: FlowEntry) {
        if self.next_seq >= SEQ_LIMIT - 1 {
            self.renumber();
        }
        let FlowEntry { mut hot, mut cold } = e;
        cold.seq = self.next_seq;
        hot.miss = cold.is_table_miss();
        self.next_seq += 1;
        let handle = match self.free_handles.pop() {
            Some(h) => h,
            None => {
                self.pos_of.push(NIL);
                (self.pos_of.len() - 1) as u32
            }
        };
        let rank = Self::rank(&cold);
        self.classifier.insert(Ref { rank, handle }, &cold.compiled);
        self.order.insert(cold.priority, cold.seq, handle);
        self.pos_of[handle as usize] = self.hot.len() as u32;
        self.handle_at.push(handle);
        self.timed += usize::from(cold.has_timeout());
        self.ext_entries += usize::from(!cold.compiled.ext().is_empty());
        self.hot.push(hot);
        self.cold.push(cold);
    }

    /// Removes and returns the entry at position `i`; the last entry takes
    /// its position.
    pub fn remove(&mut self, i: usize) -> Option<FlowEntry> {
        if i >= self.hot.len() || i >= self.cold.len() {
            return None;
        }
        let hot = self.hot.swap_remove(i);
        let cold = self.cold.swap_remove(i);
        let handle = self.handle_at.swap_remove(i);
        if let Some(moved) = self.handle_at.get(i) {
            self.pos_of[*moved as usize] = i as u32;
        }
        self.pos_of[handle as usize] = NIL;
        self.free_handles.push(handle);
        let rank = Self::rank(&cold);
        self.order.remove(cold.priority, cold.seq);
        self.classifier.remove(Ref { rank, handle }, &cold.compiled);
        self.timed -= usize::from(cold.has_timeout());
        self.ext_entries -= usize::from(!cold.compiled.ext().is_empty());
        Some(FlowEntry { hot, cold })
    }

    /// Removes the entry with exactly this match and priority.
    pub fn remove_strict(&mut self, m: &CompiledMatch, priority: u16) -> Option<FlowEntry> {
        let i = self.find_strict(m, priority)?;
        self.remove(i)
    }

    /// Removes and returns every entry for which `pred` holds, in priority
    /// order (`pred` sees the entries in that order too). They are removed
    /// one by one in that order, as a replica removing the same list by
    /// `remove_strict` would: positions stay in step.
    ///
    /// When every entry goes (a delete-all), the table is emptied in one
    /// pass instead: the same entries come out in the same order and the
    /// table ends up empty either way, but removing entry by entry from
    /// every structure cost about a microsecond per entry (mostly a cache
    /// miss per tuple-space bucket: ~110 ms for 100,000). Handles then
    /// start afresh; they are the table's own (a replica removing the
    /// same entries one by one keeps others, and positions, which the
    /// counters go by, are the same: none).
    pub fn remove_where(&mut self, mut pred: impl FnMut(EntryRef<'_>) -> bool) -> Vec<FlowEntry> {
        let doomed: Vec<u32> = self
            .order
            .handles()
            .filter(|h| self.by_handle(*h).is_some_and(&mut pred))
            .collect();
        if !doomed.is_empty() && doomed.len() == self.hot.len() {
            return self.take_all(&doomed);
        }
        doomed
            .into_iter()
            .filter_map(|h| {
                let p = self.pos_of_handle(h)?;
                self.remove(p)
            })
            .collect()
    }

    /// Empties the table; returns its entries in the order of `handles`
    /// (every handle in use, see `remove_where`).
    fn take_all(&mut self, handles: &[u32]) -> Vec<FlowEntry> {
        let mut at: Vec<Option<FlowEntry>> = self
            .hot
            .drain(..)
            .zip(self.cold.drain(..))
            .map(|(hot, cold)| Some(FlowEntry { hot, cold }))
            .collect();
        let out = handles
            .iter()
            .filter_map(|h| {
                let p = *self.pos_of.get(*h as usize)?;
                at.get_mut(p as usize)?.take()
            })
            .collect();
        self.handle_at.clear();
        self.pos_of.clear();
        self.free_handles.clear();
        self.order.clear();
        self.classifier = self.classifier.emptied();
        self.timed = 0;
        self.ext_entries = 0;
        out
    }

    /// Mutable access to every entry for which `pred` holds (modify); the
    /// match and priority must not change.
    pub fn for_each_where(
        &mut self,
        mut pred: impl FnMut(EntryRef<'_>) -> bool,
        mut f: impl FnMut(EntryMut<'_>),
    ) -> usize {
        let mut n = 0;
        for (hot, cold) in self.hot.iter_mut().zip(self.cold.iter_mut()) {
            if pred(EntryRef { hot, cold }) {
                f(EntryMut {
                    hot,
                    instructions: &mut cold.instructions,
                });
                n += 1;
            }
        }
        n
    }

    /// Gives the entries sequence numbers 0.. in their current order and
    /// rebuilds the structures (before sequence numbers run out; see
    /// `classifier::SEQ_LIMIT`). Positions and handles do not change.
    fn renumber(&mut self) {
        let handles: Vec<u32> = self.order.handles().collect();
        self.order.clear();
        self.classifier = self.classifier.emptied();
        for (seq, h) in handles.into_iter().enumerate() {
            let Some(p) = self.pos_of_handle(h) else {
                continue;
            };
            let Some(e) = self.cold.get_mut(p) else {
                continue;
            };
            e.seq = seq as u64;
            let rank = Self::rank(e);
            self.classifier.insert(Ref { rank, handle: h }, &e.compiled);
            self.order.insert(e.priority, e.seq, h);
        }
        self.next_seq = self.hot.len() as u64;
    }

    /// Test hook: pretends `n` sequence numbers were used.
    #[cfg(test)]
    pub(crate) fn skip_seq(&mut self, n: u64) {
        self.next_seq += n;
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
