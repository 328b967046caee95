//! OpenState / BEBA semantics: what the BEBA experimenter messages and
//! actions (`ofp::beba`) *do*, independent of how a pipeline runs them.
//!
//! - [`Stateful`]: a datapath's state tables (one [`StateTable`] per flow
//!   table), its global state and its packet templates; applies
//!   STATE_MOD and PKTTMP_MOD with the error codes the BEBA switch sends,
//!   the BEBA actions, and answers the state statistics.
//! - [`StateTable`]: a flow table's state table. A table kind calls
//!   [`StateTable::lookup`] before its flow look-up (the result is the
//!   packet's `state` match field) and [`StateTable::set_state`] from the
//!   SET_STATE action; both take `&self`, never lock and never allocate,
//!   and a state written by one worker is seen by the next packet of the
//!   same flow on any worker.
//! - [`key`]: extractors (lookup and update scopes) and the key layout.
//! - [`store`]: the lock-free store behind a state table.
//! - [`insp`]: packet templates and in-switch packet generation.
//! - [`notify`]: the STATE_CHANGED events SET_STATE makes, queued for the
//!   control thread without blocking or allocating.
//!
//! Times are microseconds on a clock the caller chooses (the wire's
//! timeouts are microseconds); periodic [`Stateful::sweep`] calls reclaim
//! entries back in DEFAULT with no timer and apply timeouts of flows no
//! packet looks at, a bounded number of slots per call.
//!
//! `docs/beba.md` lists where oxflow deliberately differs from the BEBA
//! switch.

pub mod insp;
pub mod key;
pub mod notify;
pub mod store;
pub mod table;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use ofp::beba::{
    BebaAction, BebaErrorCode, PktTmpMod, Refusal, StateEntryStats, StateMod, StateStatsRequest,
};
use ofp::error::BadRequestCode;
use ofp::ErrorCode;
use packet::FlowKey;

pub use insp::{Generated, Templates};
pub use key::{Extractor, KeyBuf};
pub use notify::{Notifications, StateEvent};
pub use store::{Entry, Store};
pub use table::{StateTable, Transition, STATE_DEFAULT, STATE_NULL};

/// `table_id` of a state-statistics request for every table.
pub const ALL_TABLES: u8 = 0xff;

/// Most records in one state-statistics reply (the BEBA switch's limit,
/// which keeps a reply under 64 KiB); more go in further replies of the
/// same multipart.
pub const RECORDS_PER_REPLY: usize = 500;

/// Default capacity (entries) of a state table's store.
pub const DEFAULT_CAPACITY: usize = 1 << 16;

/// A datapath's BEBA state; see the crate comment.
#[derive(Debug)]
pub struct Stateful {
    tables: Box<[StateTable]>,
    global: AtomicU32,
    templates: Templates,
    /// The state transitions SET_STATE made, for the controllers.
    notifications: Notifications,
    /// Set once some table has been made stateful (never cleared): a
    /// pipeline with no stateful table reads only this word per table
    /// visit (see [`Stateful::active`]). Shared when the owner gives one
    /// ([`Stateful::with_activity`]): a pipeline's extensions raise one
    /// flag that it reads for all of them.
    active: Arc<AtomicBool>,
}

impl Stateful {
    /// State for `n_tables` flow tables (ids 0 to n_tables - 1), each
    /// store holding about `capacity` entries once its table is configured.
    pub fn new(n_tables: u8, capacity: usize) -> Stateful {
        Stateful::with_activity(n_tables, capacity, Arc::default())
    }

    /// As [`Stateful::new`], raising `active` (not lowering it) when a
    /// table is first made stateful.
    pub fn with_activity(n_tables: u8, capacity: usize, active: Arc<AtomicBool>) -> Stateful {
        Stateful {
            tables: (0..n_tables)
                .map(|i| StateTable::new(i, capacity))
                .collect(),
            global: AtomicU32::new(0),
            templates: Templates::default(),
            notifications: Notifications::default(),
            active,
        }
    }

    pub fn table(&self, id: u8) -> Option<&StateTable> {
        self.tables.get(usize::from(id))
    }

    pub fn tables(&self) -> &[StateTable] {
        &self.tables
    }

    /// Whether some table is stateful: until one is, the pipeline adds no
    /// experimenter field to what controllers see.
    pub fn any_stateful(&self) -> bool {
        self.tables.iter().any(StateTable::is_stateful)
    }

    /// Whether some table has ever been made stateful (or another holder
    /// of a shared flag raised it): until then no packet needs a state
    /// look-up.
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The global state (the packet's `global_state` field).
    #[inline]
    pub fn global_state(&self) -> u32 {
        self.global.load(Ordering::Acquire)
    }

    /// `global = (global & !mask) | (value & mask)`, atomically.
    pub fn set_global_state(&self, value: u32, mask: u32) {
        let _ = self
            .global
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |g| {
                Some((g & !mask) | (value & mask))
            });
    }

    pub fn templates(&self) -> &Templates {
        &self.templates
    }

    fn table_or(&self, id: u8) -> Result<&StateTable, BebaErrorCode> {
        self.table(id).ok_or(BebaErrorCode::BadTableId)
    }

    /// Applies a STATE_MOD at `now`; the error is the BEBA code the BEBA
    /// switch answers with (`BAD_TABLE_ID` for a table beyond the
    /// pipeline, `SET_EXTRACTOR` for a scope of a stateless table,
    /// `SET_FLOW_STATE` / `DEL_FLOW_STATE` for a table not stateful or
    /// without both scopes, `BAD_EXP_LEN` for keys and scopes of the wrong
    /// length, `DEL_FLOW_STATE` for an unknown flow). A SET_FLOW_STATE
    /// that changed a state returns the transition (not queued as a
    /// notification: the controller asked for it).
    pub fn apply_state_mod(
        &self,
        m: &StateMod,
        now: u64,
    ) -> Result<Option<StateEvent>, BebaErrorCode> {
        match m {
            StateMod::StatefulTableConfig { table_id, stateful } => {
                self.table_or(*table_id)?.set_stateful(*stateful);
                if *stateful {
                    self.active.store(true, Ordering::Release);
                }
                Ok(None)
            }
            StateMod::SetLookupExtractor(e) | StateMod::SetUpdateExtractor(e) => {
                let t = self.table_or(e.table_id)?;
                if !t.is_stateful() {
                    return Err(BebaErrorCode::SetExtractor);
                }
                let update = matches!(m, StateMod::SetUpdateExtractor(_));
                t.set_scope(&e.fields, update, update && e.bit)?;
                Ok(None)
            }
            StateMod::SetFlowState(s) => {
                let t = self.table_or(s.table_id)?;
                if !t.is_enabled() {
                    return Err(BebaErrorCode::SetFlowState);
                }
                let tr = Transition {
                    state: s.state,
                    mask: s.state_mask,
                    hard_rollback: s.hard_rollback,
                    idle_rollback: s.idle_rollback,
                    hard_timeout: s.hard_timeout,
                    idle_timeout: s.idle_timeout,
                };
                t.set_flow_state(&s.key, &tr, now)
            }
            StateMod::DelFlowState { table_id, key } => {
                let t = self.table_or(*table_id)?;
                if !t.is_enabled() {
                    return Err(BebaErrorCode::DelFlowState);
                }
                t.del_flow_state(key).map(|()| None)
            }
            StateMod::SetGlobalState { value, mask } => {
                self.set_global_state(*value, *mask);
                Ok(None)
            }
            StateMod::ResetGlobalState => {
                self.global.store(0, Ordering::Release);
                Ok(None)
            }
        }
    }

    /// Checks a BEBA action of a flow-mod: a table beyond the pipeline is
    /// `BAD_TABLE_ID`, as the BEBA switch refuses it when decoding.
    pub fn check_action(&self, a: &BebaAction) -> Result<(), BebaErrorCode> {
        match a {
            BebaAction::SetState(s) => self.table_or(s.table_id).map(|_| ()),
            BebaAction::IncState { table_id } => self.table_or(*table_id).map(|_| ()),
            BebaAction::SetGlobalState { .. } => Ok(()),
        }
    }

    /// Runs a BEBA action on the packet whose fields are `k`; an action on
    /// a table that is not enabled does nothing. SET_STATE returns the
    /// transition when it changed a state (and queues its notification).
    #[inline]
    pub fn apply_action(&self, a: &BebaAction, k: &FlowKey, now: u64) -> Option<StateEvent> {
        match a {
            BebaAction::SetState(s) => {
                self.set_state(s.table_id, k, s.bit, &Transition::from(s), now)
            }
            BebaAction::SetGlobalState { value, mask } => {
                self.set_global_state(*value, *mask);
                None
            }
            BebaAction::IncState { table_id } => {
                self.table(*table_id)?.inc_state(k, now);
                None
            }
        }
    }

    /// The SET_STATE action on table `table_id` (see
    /// [`StateTable::set_state`]); a change is queued as a STATE_CHANGED
    /// notification ([`notify`]) and returned.
    #[inline]
    pub fn set_state(
        &self,
        table_id: u8,
        k: &FlowKey,
        bit: bool,
        t: &Transition,
        now: u64,
    ) -> Option<StateEvent> {
        let ev = self.table(table_id)?.set_state(k, bit, t, now)?;
        self.notifications.push(ev);
        Some(ev)
    }

    /// The queued STATE_CHANGED notifications ([`notify`]).
    pub fn notifications(&self) -> &Notifications {
        &self.notifications
    }

    /// PKTTMP_MOD.
    pub fn apply_pkttmp_mod(&self, m: &PktTmpMod) -> Result<(), BebaErrorCode> {
        self.templates.apply(m)
    }

    /// The records answering a state-statistics request (of any of the
    /// four kinds; the and-delete kinds forget what they report): every
    /// enabled table's for table 0xff, else the one table's (nothing if
    /// it is not enabled). A table beyond the pipeline is BAD_REQUEST /
    /// BAD_TABLE_ID. Split the records into replies of at most
    /// [`RECORDS_PER_REPLY`].
    pub fn state_stats(
        &self,
        req: &StateStatsRequest,
        now: u64,
    ) -> Result<Vec<StateEntryStats>, Refusal> {
        let delete = req.kind.deletes();
        let tables: Vec<&StateTable> = if req.table_id == ALL_TABLES {
            self.tables.iter().collect()
        } else {
            vec![self
                .table(req.table_id)
                .ok_or(Refusal::Standard(ErrorCode::BadRequest(
                    BadRequestCode::BadTableId,
                )))?]
        };
        Ok(tables
            .into_iter()
            .filter(|t| t.is_enabled())
            .flat_map(|t| t.stats(req.state, &req.match_, delete, now))
            .collect())
    }

    /// Sweeps `budget` slots of every enabled table (see
    /// [`StateTable::sweep`]).
    pub fn sweep(&self, now: u64, budget: usize) {
        for t in self.tables.iter().filter(|t| t.is_enabled()) {
            t.sweep(now, budget);
        }
    }
}
