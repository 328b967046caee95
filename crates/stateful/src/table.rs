//! One flow table's state table: its configuration (stateful flag and
//! scopes) and its [`Store`], with BEBA's semantics for look-ups, state
//! transitions, timeouts and statistics.
//!
//! # Configuration words
//!
//! The stateful flag and the three scopes (lookup, update, and the
//! *bi-flow* update scope that SET_STATE uses when its `bit` is set) are
//! atomics the control thread writes and packets read: each scope is one
//! packed [`Extractor`] word, so a packet sees either the old scope or the
//! new one. The store is created once, when the lookup and update scopes
//! are both set: from then on their key length cannot change (every scope
//! must have the same key length), so neither can the store's.
//!
//! # Timeouts
//!
//! As in the BEBA switch, timeouts are applied when an entry is looked
//! at (a packet's look-up, statistics, the periodic sweep), not by a
//! timer per entry: a hard timeout fires once `now > remove_at`, an idle
//! one once `now > last_used + idle_timeout`; the state becomes the
//! rollback state and both timeouts are cleared. A transition that sets a
//! timeout whose rollback state is the new state itself sets no timeout.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

use ofp::beba::{BebaErrorCode, SetState, StateEntryStats};
use ofp::oxm::{class, Match};
use packet::{Field, FlowKey};

use crate::key::{key_bytes, Extractor, KeyBuf};
use crate::notify::StateEvent;
use crate::store::{Decision, Entry, Store, StoreError};

/// The state of a flow the table has no entry for.
pub const STATE_DEFAULT: u32 = 0;
/// The state of a packet lacking a field of the lookup scope.
pub const STATE_NULL: u32 = u32::MAX;

/// A state transition's value, mask and timeouts (SET_STATE's or
/// SET_FLOW_STATE's), timeouts in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Transition {
    pub state: u32,
    pub mask: u32,
    pub hard_rollback: u32,
    pub idle_rollback: u32,
    pub hard_timeout: u32,
    pub idle_timeout: u32,
}

impl From<&SetState> for Transition {
    fn from(a: &SetState) -> Self {
        Transition {
            state: a.state,
            mask: a.state_mask,
            hard_rollback: a.hard_rollback,
            idle_rollback: a.idle_rollback,
            hard_timeout: a.hard_timeout,
            idle_timeout: a.idle_timeout,
        }
    }
}

/// The entry after its due timeouts at `now`, if one is due.
pub(crate) fn expire(e: &Entry, now: u64) -> Option<Entry> {
    let rollback = if e.hard_timeout != 0 && now > e.remove_at {
        e.hard_rollback
    } else if e.idle_timeout != 0 && now > e.last_used.saturating_add(u64::from(e.idle_timeout)) {
        e.idle_rollback
    } else {
        return None;
    };
    Some(Entry {
        state: rollback,
        created: now,
        hard_timeout: 0,
        idle_timeout: 0,
        hard_rollback: 0,
        idle_rollback: 0,
        ..*e
    })
}

/// `e` (or a new entry) after transition `t` to `new` at `now`.
fn transit(e: Option<&Entry>, new: u32, t: &Transition, now: u64) -> Entry {
    let mut n = e.copied().unwrap_or_default();
    n.state = new;
    n.created = now;
    if t.hard_timeout > 0 && t.hard_rollback != new {
        n.remove_at = now + u64::from(t.hard_timeout);
        n.hard_timeout = t.hard_timeout;
        n.hard_rollback = t.hard_rollback;
    } else {
        n.hard_timeout = 0;
        n.hard_rollback = 0;
    }
    if t.idle_timeout > 0 && t.idle_rollback != new {
        n.idle_timeout = t.idle_timeout;
        n.idle_rollback = t.idle_rollback;
        n.last_used = now;
    } else {
        n.idle_timeout = 0;
        n.idle_rollback = 0;
    }
    n
}

/// Whether an entry in this state, with these timers, can be forgotten.
fn reclaimable(e: &Entry) -> bool {
    e.state == STATE_DEFAULT && e.hard_timeout == 0 && e.idle_timeout == 0
}

/// See the module comment.
#[derive(Debug)]
pub struct StateTable {
    table_id: u8,
    capacity: usize,
    stateful: AtomicBool,
    lookup: AtomicU64,
    update: AtomicU64,
    bit_update: AtomicU64,
    store: OnceLock<Store>,
}

impl StateTable {
    /// Table `table_id`, whose store will hold about `capacity` entries.
    pub fn new(table_id: u8, capacity: usize) -> StateTable {
        StateTable {
            table_id,
            capacity,
            stateful: AtomicBool::new(false),
            lookup: AtomicU64::new(0),
            update: AtomicU64::new(0),
            bit_update: AtomicU64::new(0),
            store: OnceLock::new(),
        }
    }

    pub fn table_id(&self) -> u8 {
        self.table_id
    }

    /// STATEFUL_TABLE_CONFIG. Entries are kept when a table is made
    /// stateless (and seen again if it is made stateful again).
    pub fn set_stateful(&self, stateful: bool) {
        self.stateful.store(stateful, Ordering::Release);
    }

    pub fn is_stateful(&self) -> bool {
        self.stateful.load(Ordering::Acquire)
    }

    /// Stateful with both a lookup and an update scope: packets are looked
    /// up and states can be written.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.is_stateful() && self.store.get().is_some()
    }

    fn scope(&self, w: &AtomicU64) -> Option<Extractor> {
        Extractor::unpack(w.load(Ordering::Acquire))
    }

    pub fn lookup_scope(&self) -> Option<Extractor> {
        self.scope(&self.lookup)
    }

    pub fn update_scope(&self) -> Option<Extractor> {
        self.scope(&self.update)
    }

    pub fn bit_update_scope(&self) -> Option<Extractor> {
        self.scope(&self.bit_update)
    }

    /// The store, once the table has both scopes.
    pub fn store(&self) -> Option<&Store> {
        self.store.get()
    }

    /// SET_L_EXTRACTOR (`update` false) or SET_U_EXTRACTOR (`update`
    /// true, `bit` choosing the bi-flow scope). The key length must be
    /// that of the scopes already set (`BAD_EXP_LEN`), as the BEBA switch
    /// checks: lookup against update and bi-flow update; update against
    /// lookup and bi-flow update; bi-flow update against lookup and update.
    pub fn set_scope(&self, fields: &[u32], update: bool, bit: bool) -> Result<(), BebaErrorCode> {
        let e = Extractor::from_oxm(fields)?;
        let len = |w: &AtomicU64| self.scope(w).map(|x| x.key_len());
        let conflicts = |others: &[&AtomicU64]| {
            others
                .iter()
                .any(|w| len(w).is_some_and(|l| l != e.key_len()))
        };
        let dest = match (update, bit) {
            (false, _) => {
                if conflicts(&[&self.update, &self.bit_update]) {
                    return Err(BebaErrorCode::BadExpLen);
                }
                &self.lookup
            }
            (true, false) => {
                if conflicts(&[&self.lookup, &self.bit_update]) {
                    return Err(BebaErrorCode::BadExpLen);
                }
                &self.update
            }
            (true, true) => {
                if conflicts(&[&self.lookup, &self.update]) {
                    return Err(BebaErrorCode::BadExpLen);
                }
                &self.bit_update
            }
        };
        dest.store(e.pack(), Ordering::Release);
        if self.lookup_scope().is_some() && self.update_scope().is_some() {
            self.store
                .get_or_init(|| Store::new(e.key_len(), self.capacity));
        }
        Ok(())
    }

    /// The state of the packet whose fields are `k` at `now` (µs), before
    /// the flow-table look-up: `None` if the table is not enabled (the
    /// packet has no `state` field), [`STATE_NULL`] if the packet lacks a
    /// lookup-scope field, [`STATE_DEFAULT`] for an unknown flow. Applies
    /// the entry's due timeouts and refreshes its idle timer.
    #[inline]
    pub fn lookup(&self, k: &FlowKey, now: u64) -> Option<u32> {
        if !self.is_stateful() {
            return None;
        }
        let store = self.store.get()?;
        let Some(key) = self.lookup_scope().and_then(|e| e.extract(k)) else {
            return Some(STATE_NULL);
        };
        Some(self.lookup_key(store, &key, now))
    }

    /// Reads ahead, for the packets `keys` (a batch's, about to run
    /// through this table), the store lines their look-ups (lookup scope)
    /// and their SET_STATEs on this table (update scope) will read
    /// ([`Store::read_ahead`]); changes nothing. Returns a fold of what
    /// was read, for `std::hint::black_box`.
    pub fn read_ahead<'a>(&self, keys: impl Iterator<Item = &'a FlowKey>) -> u64 {
        let (Some(store), true) = (self.store.get(), self.is_stateful()) else {
            return 0;
        };
        let scopes = [self.lookup_scope(), self.update_scope()];
        let update = scopes[0] != scopes[1];
        let mut bufs = [KeyBuf::default(); crate::store::READ_AHEAD];
        let mut n = 0;
        for k in keys {
            let scopes = scopes.iter().take(1 + usize::from(update)).flatten();
            for key in scopes.filter_map(|e| e.extract(k)) {
                let Some(b) = bufs.get_mut(n) else { break };
                *b = key;
                n += 1;
            }
        }
        store.read_ahead(&bufs[..n])
    }

    #[inline]
    fn lookup_key(&self, store: &Store, key: &KeyBuf, now: u64) -> u32 {
        let Some(e) = store.get(key) else {
            return STATE_DEFAULT;
        };
        if expire(&e, now).is_some() {
            let done = store.update(key, |cur| match cur.and_then(|c| expire(c, now)) {
                Some(n) => Decision::Put(n),
                None => Decision::Leave,
            });
            return match done {
                Ok((_, Some(n))) => n.state,
                _ => expire(&e, now).map_or(e.state, |n| n.state),
            };
        }
        store.touch(key, &e, now);
        e.state
    }

    /// The SET_STATE action on the packet whose fields are `k`: writes the
    /// state of the flow its update scope (bi-flow scope if `bit`)
    /// extracts. Nothing happens if the table is not enabled or the packet
    /// lacks a scope field. Returns the transition if the state changed.
    #[inline]
    pub fn set_state(
        &self,
        k: &FlowKey,
        bit: bool,
        t: &Transition,
        now: u64,
    ) -> Option<StateEvent> {
        if !self.is_enabled() {
            return None;
        }
        let scope = if bit {
            self.bit_update_scope()
        } else {
            self.update_scope()
        };
        let key = scope?.extract(k)?;
        self.write(&key, t, now).ok().flatten()
    }

    /// The INC_STATE action: the update-scope flow's state plus one (a new
    /// flow starts at 1, with no timeout).
    pub fn inc_state(&self, k: &FlowKey, now: u64) {
        if !self.is_enabled() {
            return;
        }
        let (Some(store), Some(key)) = (
            self.store.get(),
            self.update_scope().and_then(|e| e.extract(k)),
        ) else {
            return;
        };
        let _ = store.update(&key, |cur| {
            Decision::Put(match cur {
                Some(e) => Entry {
                    state: e.state.wrapping_add(1),
                    ..*e
                },
                None => Entry {
                    state: 1,
                    created: now,
                    ..Entry::default()
                },
            })
        });
    }

    /// A transition of the flow `key`. An unknown flow gets an entry only
    /// if its new state is not DEFAULT or a timeout will take it
    /// elsewhere. `Ok(Some)`: the state changed.
    fn write(
        &self,
        key: &KeyBuf,
        t: &Transition,
        now: u64,
    ) -> Result<Option<StateEvent>, StoreError> {
        let Some(store) = self.store.get() else {
            return Ok(None);
        };
        let (old, new) = store.update(key, |cur| match cur {
            Some(e) => Decision::Put(transit(
                Some(e),
                (e.state & !t.mask) | (t.state & t.mask),
                t,
                now,
            )),
            None => {
                let new = t.state & t.mask;
                if new != STATE_DEFAULT
                    || (t.hard_timeout > 0 && t.hard_rollback != STATE_DEFAULT)
                    || (t.idle_timeout > 0 && t.idle_rollback != STATE_DEFAULT)
                {
                    Decision::Put(transit(None, new, t, now))
                } else {
                    Decision::Leave
                }
            }
        })?;
        let old_state = old.map_or(STATE_DEFAULT, |e| e.state);
        Ok(new.filter(|n| n.state != old_state).map(|n| StateEvent {
            table_id: self.table_id,
            old_state,
            new_state: n.state,
            state_mask: t.mask,
            key: *key,
        }))
    }

    /// SET_FLOW_STATE: the key must have the update scope's length
    /// (`BAD_EXP_LEN`). The caller checks the table is enabled.
    pub fn set_flow_state(
        &self,
        key: &[u8],
        t: &Transition,
        now: u64,
    ) -> Result<Option<StateEvent>, BebaErrorCode> {
        let key = self.checked_key(key)?;
        self.write(&key, t, now)
            .map_err(|_| BebaErrorCode::SetFlowState)
    }

    /// DEL_FLOW_STATE: `BAD_EXP_LEN` for a key of the wrong length,
    /// `DEL_FLOW_STATE` for an unknown flow.
    pub fn del_flow_state(&self, key: &[u8]) -> Result<(), BebaErrorCode> {
        let key = self.checked_key(key)?;
        let store = self.store.get().ok_or(BebaErrorCode::DelFlowState)?;
        match store.update(&key, |_| Decision::Remove) {
            Ok((Some(_), None)) => Ok(()),
            _ => Err(BebaErrorCode::DelFlowState),
        }
    }

    fn checked_key(&self, key: &[u8]) -> Result<KeyBuf, BebaErrorCode> {
        let len = self.update_scope().map(|e| e.key_len());
        if len != Some(key.len()) {
            return Err(BebaErrorCode::BadExpLen);
        }
        KeyBuf::from_bytes(key).ok_or(BebaErrorCode::BadExpLen)
    }

    /// Visits `budget` slots of the store (see [`Store::sweep`]): applies
    /// due timeouts and forgets flows back in DEFAULT with no timer.
    /// Returns the slots visited.
    pub fn sweep(&self, now: u64, budget: usize) -> usize {
        let Some(store) = self.store.get() else {
            return 0;
        };
        store.sweep(budget, |_, e| {
            let n = expire(e, now);
            match n {
                Some(n) if reclaimable(&n) => Decision::Remove,
                Some(n) => Decision::Put(n),
                None if reclaimable(e) => Decision::Remove,
                None => Decision::Leave,
            }
        })
    }

    /// The records of a state-statistics request for this table (call
    /// only for an enabled table): entries whose key matches `m` (each
    /// field compared by value with its bytes in the lookup scope's key;
    /// a field the scope lacks selects nothing at all) and, with `state`,
    /// only those in that state; then the DEFAULT record (key length 0)
    /// unless `state` excludes it. `delete` forgets the reported entries.
    /// Due timeouts are applied first.
    pub fn stats(
        &self,
        state: Option<u32>,
        m: &Match,
        delete: bool,
        now: u64,
    ) -> Vec<StateEntryStats> {
        let mut out = Vec::new();
        let (Some(store), Some(scope)) = (self.store.get(), self.lookup_scope()) else {
            return out;
        };
        // (offset, bytes) of each match field in the key.
        let mut want: Vec<(usize, Vec<u8>)> = Vec::new();
        for f in &m.fields {
            let id = f.field_id();
            let pos = if f.class() == class::OPENFLOW_BASIC {
                scope.position(id)
            } else {
                None
            };
            let (Some((off, len)), Some(field), Some((value, _))) =
                (pos, Field::from_u8(id), f.bits())
            else {
                return out;
            };
            let be = value.to_be_bytes();
            let be = be.get(16 - len..).unwrap_or_default();
            want.push((off, key_bytes(field, be)));
        }
        store.for_each(|key, e| {
            let cur = expire(e, now);
            let entry = cur.unwrap_or(*e);
            let kb = key.as_bytes();
            let hit = want
                .iter()
                .all(|(off, v)| kb.get(*off..*off + v.len()) == Some(v.as_slice()))
                && state.is_none_or(|s| s == entry.state);
            if hit {
                let age = now.saturating_sub(entry.created);
                out.push(StateEntryStats {
                    table_id: self.table_id,
                    key: kb.to_vec(),
                    duration_sec: (age / 1_000_000) as u32,
                    duration_nsec: ((age % 1_000_000) * 1000) as u32,
                    hard_rollback: entry.hard_rollback,
                    idle_rollback: entry.idle_rollback,
                    hard_timeout: entry.hard_timeout,
                    idle_timeout: entry.idle_timeout,
                    state: entry.state,
                });
                if delete {
                    return Decision::Remove;
                }
            }
            cur.map_or(Decision::Leave, Decision::Put)
        });
        if state.is_none_or(|s| s == STATE_DEFAULT) {
            out.push(StateEntryStats {
                table_id: self.table_id,
                ..StateEntryStats::default()
            });
        }
        out
    }
}
