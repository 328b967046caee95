//! A lookup structure from outside the pipeline ([`LookupStructure`]),
//! plugged into one table's classifier ([`Plugged`]).
//!
//! What a table means stays the spec's and `FlowTable`'s: the entry
//! store, flow-mod add/modify/delete, overlap checks, timeouts, counters
//! and stats. What a plugged structure chooses is how the table finds the
//! best entry for a packet. Beside it, the tuple space keeps every entry
//! as always: it is the table's strict index (`(priority, match)` ->
//! entry, what flow-mods and replicas use) and answers the lookups the
//! structure says it cannot make (a frame lookup by default). While a
//! table has a plugged structure, `Auto` keeps no exact index and no LPM
//! trie (they would answer instead of it) and every key lookup goes to
//! the structure.
//!
//! The structure sees each entry once when it is installed
//! ([`LookupStructure::insert`]) and once when it goes
//! ([`LookupStructure::remove`]), named by its [`Ref`]: its [`Rank`]
//! (priority, then earlier installation, folded so that larger is better)
//! and the table's handle for it. A lookup answers the `Ref` of highest
//! rank among the entries whose match covers the packet: the same answer
//! as a scan of every entry in rank order (`classifier::tests` checks
//! plugged structures against that reference). Entries that match
//! everything (the table-miss) are given to the structure too.
//!
//! [`Rank`]: super::Rank

use super::fields::FrameFields;
#[cfg(doc)]
use super::fields::{matches_fields, Fields};
use super::rank::Ref;
use crate::matcher::CompiledMatch;
use packet::FlowKey;
use std::fmt;

/// A table's lookup structure, implemented outside the pipeline and
/// registered by name (`crate::table_kinds`). See the module comment.
pub trait LookupStructure: Send + Sync {
    /// The name it is registered under (`FlowTable::classifier_kind`
    /// reports it).
    fn name(&self) -> &'static str;

    /// Adds an entry. A `Ref` is inserted at most once until removed.
    fn insert(&mut self, entry: Ref, m: &CompiledMatch);

    /// Removes an entry inserted with this `Ref` and match.
    fn remove(&mut self, entry: Ref, m: &CompiledMatch);

    /// The entry of highest rank whose match covers `key`.
    fn lookup(&self, key: &FlowKey) -> Option<Ref>;

    /// `lookup` for several keys: `out[j]` for `keys[at[j]]` (the keys of
    /// a chunk that are at this table; `out` is as long as `at`). The
    /// default looks them up one by one; a structure may overlap their
    /// memory reads instead.
    fn lookup_many(&self, keys: &[FlowKey], at: &[u8], out: &mut [Option<Ref>]) {
        for (o, &j) in out.iter_mut().zip(at) {
            *o = keys.get(usize::from(j)).and_then(|k| self.lookup(k));
        }
    }

    /// `lookup` for a packet whose fields were read straight from its
    /// frame (no `FlowKey` made; [`Fields`] reads them, and
    /// [`matches_fields`] checks a match against them). `None`: not
    /// available (the default), and then the table's tuple space answers
    /// such packets; `Some(answer)` otherwise.
    fn lookup_frame(&self, _f: &FrameFields) -> Option<Option<Ref>> {
        None
    }

    /// A structure of the same kind holding no entry (a table emptied by
    /// a delete-all, or renumbered).
    fn fresh(&self) -> Box<dyn LookupStructure>;

    /// A copy with the same entries (the workers' replicas of a table are
    /// copies of the control thread's).
    fn clone_box(&self) -> Box<dyn LookupStructure>;
}

/// A plugged structure as `Auto` holds it (cloned with the table).
pub(crate) struct Plugged(pub(crate) Box<dyn LookupStructure>);

impl Clone for Plugged {
    fn clone(&self) -> Self {
        Plugged(self.0.clone_box())
    }
}

impl fmt::Debug for Plugged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Plugged({})", self.0.name())
    }
}
