//! Lookup structures behind `table::Classifier`, and the automatic choice
//! between them (`Auto`).
//!
//! # One-shape hash (`ShapeHash`)
//!
//! The common big table is an L2 MAC table: thousands of entries that all
//! match the same fields with the same masks (say `eth_dst` exact, or
//! `in_port` + `eth_dst`), plus a table-miss entry. When every entry of a
//! table either has one common *shape* — the same list of `(field, mask)`
//! pairs — or matches everything, a lookup is one hash probe instead of a
//! scan:
//!
//! ```text
//!  shape: [(InPort, 0xffffffff), (EthDst, 0xffffffffffff)]
//!  map:   [key bits & mask, per field]  ->  [(priority, seq), ...] best first
//!  any:   [(priority, seq), ...] of the match-everything entries, best first
//! ```
//!
//! Entries with equal masked values match exactly the same packets, so the
//! first of a map bucket (highest priority, then earliest installed) is the
//! best of them; the answer is the better of that and the first
//! match-everything entry. Entries are named by `(priority, seq)` rather
//! than by their index in the store so that an insertion (which shifts the
//! indices) costs one map update, not a rebuild; the index is found back by
//! a binary search of the store, which is sorted by exactly that pair.
//!
//! `Auto` keeps a `ShapeHash` while the table has that form and at
//! least [`HASH_MIN_ENTRIES`] entries, and falls back to the linear scan
//! otherwise (rebuilding on every change the scan does not care about).
//! The property tests compare both with a naive reference scan.

use crate::matcher::key_bits;
use crate::table::{Classifier, FlowEntry, LinearScan};
use packet::{Field, FieldSet, FlowKey};
use std::cmp::Reverse;
use std::collections::HashMap;

/// Below this many entries the linear scan is as fast and simpler.
pub const HASH_MIN_ENTRIES: usize = 4;

/// Order of the store: priority high first, then installation order.
type Rank = (Reverse<u16>, u64);

fn rank(e: &FlowEntry) -> Rank {
    (Reverse(e.priority), e.seq)
}

/// See the module comment.
#[derive(Debug, Clone)]
pub(crate) struct ShapeHash {
    shape: Vec<(Field, u128)>,
    required: FieldSet,
    map: HashMap<Vec<u128>, Vec<Rank>>,
    any: Vec<Rank>,
}

impl ShapeHash {
    /// Builds the structure, or `None` if the entries do not have the form
    /// (module comment).
    fn build(entries: &[FlowEntry]) -> Option<ShapeHash> {
        let first = entries.iter().find(|e| !e.compiled.is_empty())?;
        let mut h = ShapeHash {
            shape: first
                .compiled
                .fields()
                .iter()
                .map(|f| (f.field, f.mask))
                .collect(),
            required: first.compiled.required(),
            map: HashMap::new(),
            any: Vec::new(),
        };
        for e in entries {
            if !h.add(e) {
                return None;
            }
        }
        Some(h)
    }

    /// Adds one entry; false if it does not fit the shape. Entries are
    /// added in store order or later than everything of their rank, and
    /// each list is kept sorted either way.
    fn add(&mut self, e: &FlowEntry) -> bool {
        let r = rank(e);
        let list = if e.compiled.is_empty() {
            &mut self.any
        } else {
            let fields = e.compiled.fields();
            if fields.len() != self.shape.len()
                || fields
                    .iter()
                    .zip(&self.shape)
                    .any(|(f, (sf, sm))| f.field != *sf || f.mask != *sm)
            {
                return false;
            }
            self.map
                .entry(fields.iter().map(|f| f.value).collect())
                .or_default()
        };
        let pos = list.partition_point(|x| *x < r);
        list.insert(pos, r);
        true
    }

    fn best(&self, key: &FlowKey) -> Option<Rank> {
        let exact = if key.present.contains_all(self.required) {
            let k: Vec<u128> = self
                .shape
                .iter()
                .map(|(f, m)| key_bits(key, *f) & m)
                .collect();
            self.map.get(&k).and_then(|l| l.first().copied())
        } else {
            None
        };
        match (exact, self.any.first().copied()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The table's classifier: a `ShapeHash` when the entries allow it, else
/// the linear scan (module comment).
#[derive(Debug, Default)]
pub(crate) struct Auto {
    hash: Option<ShapeHash>,
    /// The table is big enough but has no single shape: insertions cannot
    /// fix that, so they do not retry (a removal rebuilds and retries).
    mixed: bool,
}

impl Auto {
    /// Which structure is in use ("hash" or "linear"), for tests and
    /// diagnostics.
    pub fn kind(&self) -> &'static str {
        if self.hash.is_some() {
            "hash"
        } else {
            "linear"
        }
    }
}

impl Classifier for Auto {
    fn rebuild(&mut self, entries: &[FlowEntry]) {
        let big = entries.len() >= HASH_MIN_ENTRIES;
        self.hash = if big { ShapeHash::build(entries) } else { None };
        self.mixed = big && self.hash.is_none() && entries.iter().any(|e| !e.compiled.is_empty());
    }

    fn inserted(&mut self, entries: &[FlowEntry], pos: usize) {
        match (&mut self.hash, entries.get(pos)) {
            (Some(h), Some(e)) => {
                if !h.add(e) {
                    self.hash = None;
                    self.mixed = true;
                }
            }
            _ if self.mixed => {}
            _ => self.rebuild(entries),
        }
    }

    fn lookup(&self, entries: &[FlowEntry], key: &FlowKey) -> Option<usize> {
        match &self.hash {
            Some(h) => {
                let r = h.best(key)?;
                let i = entries.partition_point(|e| rank(e) < r);
                // The structure mirrors the store; a mismatch would be a
                // bug, answered safely by the scan.
                if entries.get(i).is_some_and(|e| rank(e) == r) {
                    Some(i)
                } else {
                    LinearScan.lookup(entries, key)
                }
            }
            None => LinearScan.lookup(entries, key),
        }
    }
}
