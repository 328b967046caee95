//! Linear scan for small tables: the entries' matches in a list sorted by
//! rank (best first); the first that matches is the answer.

use super::fields::{matches_fields, Fields};
use super::rank::Ref;
use crate::matcher::CompiledMatch;
use packet::FlowKey;

#[derive(Debug, Clone, Default)]
pub struct Linear {
    entries: Vec<(Ref, CompiledMatch)>,
}

impl Linear {
    pub fn insert(&mut self, r: Ref, m: &CompiledMatch) {
        let pos = self.entries.partition_point(|(x, _)| x.rank > r.rank);
        self.entries.insert(pos, (r, m.clone()));
    }

    pub fn remove(&mut self, r: Ref) -> bool {
        match self.entries.iter().position(|(x, _)| *x == r) {
            Some(pos) => {
                self.entries.remove(pos);
                true
            }
            None => false,
        }
    }

    #[inline]
    pub fn lookup(&self, key: &FlowKey) -> Option<Ref> {
        self.entries
            .iter()
            .find(|(_, m)| m.matches(key))
            .map(|(r, _)| *r)
    }

    /// `lookup` for a packet whose fields come from elsewhere than a key
    /// (a frame's `FrameFields`): `CompiledMatch::matches` over `Fields`.
    #[inline]
    pub fn lookup_fields<K: Fields>(&self, k: &K) -> Option<Ref> {
        self.entries
            .iter()
            .find(|(_, m)| matches_fields(m, k))
            .map(|(r, _)| *r)
    }
}
