//! The table's classifier ([`Auto`]): which structure answers a table's
//! lookups, kept beside the tuple space and chosen again after every
//! change (see the `classifier` module comment, "The choice").

use super::exact::{at, Exact, Hit};
use super::fields::{Fields, FrameFields};
use super::linear::Linear;
use super::lpm::{self, Lpm, LpmForm};
use super::plugged::{LookupStructure, Plugged};
use super::rank::{Ref, Shape, HASH_MIN_ENTRIES, LINEAR_MAX};
use super::tss::Tss;
use crate::matcher::CompiledMatch;
use packet::{Field, FieldSet, FlowKey};

/// Which structure answers lookups (module comment, "The choice").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Linear,
    Hash,
    Lpm,
    Tss,
    /// A structure from outside the pipeline (`plugged`).
    Plugged,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Linear => "linear",
            Kind::Hash => "hash",
            Kind::Lpm => "lpm",
            Kind::Tss => "tss",
            Kind::Plugged => "plugged",
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
    pub(super) tss: Tss,
    /// The trie, over the entries whose shape is in its form; those
    /// subtables of `tss` are marked `in_lpm`.
    pub(super) lpm: Option<Lpm>,
    /// Present exactly while the table has at most `LINEAR_MAX` entries.
    pub(super) linear: Option<Linear>,
    /// Present exactly while the table has one non-empty shape and that
    /// shape packs into 64 bits (`exact`), unless `exact_on` is off.
    pub(super) exact: Option<Exact>,
    /// Whether to keep the exact index (see `set_exact_index`).
    pub(super) exact_on: bool,
    /// Whether to keep an LPM trie (see `set_lpm_index`).
    pub(super) lpm_on: bool,
    /// The table's plugged structure, if it has one: it holds every
    /// entry and answers every lookup (the kind is then `Plugged`, and
    /// there is no exact index and no trie).
    pub(super) plugged: Option<Plugged>,
    pub(super) len: usize,
    pub(super) kind: Kind,
    /// `ipv4_routes`' start in the trie, worked out by `choose` after
    /// every change (lookups read it instead of testing the kind, the
    /// trie and the tuple space each time).
    v4: Option<lpm::Start>,
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
            plugged: None,
            len: 0,
            kind: Kind::Linear,
            v4: None,
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
        if let Some(p) = &mut self.plugged {
            p.0.insert(r, m);
        }
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
        if let Some(p) = &mut self.plugged {
            p.0.remove(r, m);
        }
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
            (Kind::Plugged, _, _) => self.lookup_plugged(key),
            _ => self.lookup_other(key),
        }
    }

    /// `lookup` for a packet read from its frame (`FrameFields`, whose
    /// fields must include every `match_fields` one): the exact index's
    /// probe with the key packed from the frame's values, the linear
    /// list's scan, an IPv4 routing table's trie walked straight with the
    /// frame's destination (`ipv4_routes`), else through the trie and
    /// the tuple space. The same answer as `lookup` of the packet's key.
    #[inline(always)]
    pub(crate) fn lookup_frame(&self, f: &FrameFields) -> Option<u32> {
        // (The kind first: only an `lpm` one has `ipv4_routes`.)
        match (self.kind, &self.exact, &self.linear) {
            (Kind::Hash, Some(ex), _) => {
                match self.answer_known(f.pack(ex).and_then(|k| ex.get(k))) {
                    Some(answer) => answer,
                    None => self
                        .tss
                        .lookup_with(f, Ref::NONE, false)
                        .some()
                        .map(|r| r.handle),
                }
            }
            (Kind::Linear, _, Some(l)) => l.lookup_fields(f).map(|r| r.handle),
            (Kind::Plugged, _, _) => self.lookup_plugged_frame(f),
            _ => match self.ipv4_routes() {
                Some((lpm, start)) => {
                    Self::v4_answer(lpm.lookup_v4(start, frame_dst(f)), self.lookup_any())
                }
                None => self.lookup_fields(f).some().map(|r| r.handle),
            },
        }
    }

    /// `lookup_frame` for several packets (at most `crate::chunk::CHUNK`):
    /// `out[j]` for `frames[at[j]]`. The exact index probes them all at
    /// once (`Exact::get_many`) as `lookup_many` does for keys; the other
    /// kinds go through the trie and the tuple space
    /// (`lookup_fields_many`).
    pub(crate) fn lookup_frames_many(
        &self,
        frames: &[FrameFields],
        at: &[u8],
        out: &mut [Option<u32>],
    ) {
        const N: usize = crate::chunk::CHUNK;
        let n = at.len().min(out.len()).min(N);
        let frame = |j: usize| frames.get(usize::from(at[j]));
        if self.kind == Kind::Plugged {
            for (j, o) in out[..n].iter_mut().enumerate() {
                *o = frame(j).and_then(|f| self.lookup_plugged_frame(f));
            }
            return;
        }
        if let (Kind::Hash, Some(ex)) = (self.kind, &self.exact) {
            let mut keys = [None; N];
            for (j, k) in keys[..n].iter_mut().enumerate() {
                *k = frame(j).and_then(|f| f.pack(ex));
            }
            let mut hits = [None; N];
            ex.get_many(&keys[..n], &mut hits[..n]);
            for (j, (o, &h)) in out[..n].iter_mut().zip(&hits).enumerate() {
                *o = match self.answer_known(h) {
                    Some(answer) => answer,
                    None => frame(j).and_then(|f| {
                        let r = self.tss.lookup_with(f, Ref::NONE, false);
                        r.some().map(|r| r.handle)
                    }),
                };
            }
            return;
        }
        let mut best = [Ref::NONE; N];
        if let Some((lpm, start)) = self.ipv4_routes() {
            let mut dsts = [None; N];
            for (j, d) in dsts[..n].iter_mut().enumerate() {
                *d = frame(j).map(frame_dst);
            }
            lpm.lookup_v4_many(start, &dsts[..n], &mut best[..n]);
            let any = self.lookup_any();
            for (o, b) in out[..n].iter_mut().zip(&best) {
                *o = Self::v4_answer(*b, any);
            }
            return;
        }
        self.lookup_fields_many(frames, &at[..n], &mut best[..n]);
        for (o, b) in out[..n].iter_mut().zip(&best) {
            *o = b.some().map(|r| r.handle);
        }
    }

    /// `lookup` when the kind is `Plugged`: the structure answers.
    #[inline(never)]
    fn lookup_plugged(&self, key: &FlowKey) -> Option<u32> {
        let p = self.plugged.as_ref()?;
        p.0.lookup(key).map(|r| r.handle)
    }

    /// `lookup_many` when the kind is `Plugged`.
    #[inline(never)]
    fn lookup_plugged_many(&self, keys: &[FlowKey], at: &[u8], out: &mut [Option<u32>]) {
        let Some(p) = &self.plugged else { return };
        let mut best = [None; crate::chunk::CHUNK];
        let n = at.len().min(out.len()).min(best.len());
        p.0.lookup_many(keys, &at[..n], &mut best[..n]);
        for (o, b) in out[..n].iter_mut().zip(&best[..n]) {
            *o = b.map(|r| r.handle);
        }
    }

    /// `lookup_frame` when the kind is `Plugged`: the structure answers
    /// if it looks frames up, else the tuple space (which holds every
    /// entry: the same answer).
    #[inline(never)]
    fn lookup_plugged_frame(&self, f: &FrameFields) -> Option<u32> {
        let answer = match self.plugged.as_ref().and_then(|p| p.0.lookup_frame(f)) {
            Some(answer) => answer,
            None => self.lookup_fields(f).some(),
        };
        answer.map(|r| r.handle)
    }

    /// Plugs a structure in (filled with the table's entries now) or,
    /// with `None`, takes it out (the exact index and the trie come back
    /// as their settings say).
    pub fn set_plugged(&mut self, s: Option<Box<dyn LookupStructure>>) {
        self.plugged = s.map(|mut s| {
            self.tss
                .for_each(|r, fields| s.insert(r, &fields.compiled()));
            Plugged(s)
        });
        self.exact = None;
        self.lpm = None;
        self.tss.mark_lpm(|_| false);
        if self.tss.n_nonempty() == 1 {
            self.build_exact();
        }
        if self.tss.n_nonempty() > 0 {
            self.try_lpm();
        }
        self.choose();
    }

    /// The name of the structure answering lookups: `kind`'s, or the
    /// plugged structure's.
    pub fn kind_name(&self) -> &'static str {
        match &self.plugged {
            Some(p) => p.0.name(),
            None => self.kind().name(),
        }
    }

    /// The answer of an IPv4 routing table (`ipv4_routes`) for a packet
    /// whose trie walk found `trie`: the better of that and the best
    /// match-everything entry `any`, by rank (ranks are distinct).
    #[inline(always)]
    fn v4_answer(trie: Ref, any: Ref) -> Option<u32> {
        trie.better(any).some().map(|r| r.handle)
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
    /// ones (it exists exactly then, whatever the kind).
    #[cfg(test)]
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
    /// are distinct): how `lookup_frame` looks frames up in it.
    #[inline(always)]
    pub fn ipv4_routes(&self) -> Option<(&Lpm, lpm::Start)> {
        let start = self.v4?;
        Some((self.lpm.as_ref()?, start))
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

    /// `lookup` for several keys (at most `crate::chunk::CHUNK`): `out[j]`
    /// for `keys[at[j]]` (`at`: the keys of a batch that are at this
    /// table, so the loops below visit only those). The exact index reads
    /// the first slot of every key before probing (`Exact::probe_many`), a
    /// trie walks all keys level by level (`Lpm::lookup_many`), the tuple
    /// space probes subtable by subtable for all keys
    /// (`Tss::lookup_many`): the memory reads of different keys overlap. A
    /// linear list is looked up key by key (it is small, hence in cache).
    pub fn lookup_many(&self, keys: &[FlowKey], at: &[u8], out: &mut [Option<u32>]) {
        const N: usize = crate::chunk::CHUNK;
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
            (Kind::Plugged, ..) => {
                self.lookup_plugged_many(keys, &at[..n], &mut out[..n]);
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
    /// `FlowKey` (a frame's `FrameFields`), whatever the kind:
    /// through the trie and the tuple space, which hold every entry (a
    /// linear list's and an exact index's too). `out[j]` (the best entry,
    /// `Ref::NONE` for none) for `keys[at[j]]`, at most
    /// `crate::chunk::CHUNK`: the caller keeps `out` between calls, so
    /// that a batch of one packet does not clear `CHUNK` of them.
    pub(crate) fn lookup_fields_many<K: Fields>(&self, keys: &[K], at: &[u8], out: &mut [Ref]) {
        let n = at.len().min(out.len()).min(crate::chunk::CHUNK);
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
    /// (`lookup_other`'s `FlowKey`, a frame's `FrameFields`).
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
        let mut a = Auto {
            exact_on: self.exact_on,
            lpm_on: self.lpm_on,
            plugged: self.plugged.as_ref().map(|p| Plugged(p.0.fresh())),
            ..Auto::default()
        };
        a.choose();
        a
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
        if !self.exact_on || self.plugged.is_some() {
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
        self.kind = if self.plugged.is_some() {
            Kind::Plugged
        } else if self.len < HASH_MIN_ENTRIES || (self.len <= LINEAR_MAX && shapes != 1) {
            Kind::Linear
        } else if shapes == 1 {
            Kind::Hash
        } else if self.lpm.is_some() {
            Kind::Lpm
        } else {
            Kind::Tss
        };
        self.v4 = match (self.kind, &self.lpm) {
            (Kind::Lpm, Some(lpm)) if self.tss.all_in_lpm() => lpm.ipv4_start(),
            _ => None,
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
        if !self.lpm_on || self.plugged.is_some() {
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
pub(super) fn triples(m: &CompiledMatch) -> impl Iterator<Item = (Field, u128, u128)> + Clone + '_ {
    m.fields().iter().map(|f| (f.field, f.mask, f.value))
}

/// The IPv4 destination of a frame read into `f` (every `FrameFields` is
/// IPv4: `read_frame`).
#[inline(always)]
fn frame_dst(f: &FrameFields) -> u32 {
    f.common[at::IPV4_DST & (super::exact::COMMON - 1)] as u32
}
