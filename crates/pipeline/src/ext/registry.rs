//! The extensions a pipeline knows (`crate::ext`), by experimenter id.
//!
//! The pipeline keeps no list of its own: it is given an [`Extensions`]
//! value when built ([`Pipeline::with_extensions`]), and a pipeline built
//! without one knows no extension (every experimenter field, action and
//! instruction gets the spec's error). The switch makes that value from
//! its one table of extensions (`switch::datapath::extensions`, the flow
//! part of each row); a unit test passes the entries it needs, e.g.
//! `beba::EXTENSION`.
//!
//! Every look-up here is made when a flow-mod, group-mod or packet-out is
//! compiled, never per packet: a compiled action is an
//! [`ExtOp`](crate::ext::api::ExtOp) that names its extension by index,
//! and the executor calls that extension's hook ([`Hooks`]) directly.
//!
//! [`Pipeline::with_extensions`]: crate::Pipeline::with_extensions

use crate::ext::api::{ExtMatch, ExtOp, Extension, Hook, HookEnv, PktGen};
use ofp::action::Action;
use ofp::error::{BadActionCode, BadInstructionCode, BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The flow-mod side of the extensions a pipeline knows (module comment):
/// their entry points, at most one per experimenter id. A clone is a
/// reference count (every replica of a pipeline holds the same list).
#[derive(Clone, Default)]
pub struct Extensions(Arc<[&'static Extension]>);

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|e| format!("{:#x}", e.experimenter)))
            .finish()
    }
}

impl FromIterator<&'static Extension> for Extensions {
    fn from_iter<I: IntoIterator<Item = &'static Extension>>(it: I) -> Self {
        Extensions(it.into_iter().collect())
    }
}

impl Extensions {
    /// The extension of an experimenter id and its index, if the pipeline
    /// knows it.
    pub fn by_id(&self, experimenter: u32) -> Option<(u8, &'static Extension)> {
        let i = self.0.iter().position(|e| e.experimenter == experimenter)?;
        Some((u8::try_from(i).ok()?, self.0[i]))
    }

    /// Every extension, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = &'static Extension> + '_ {
        self.0.iter().copied()
    }

    /// An experimenter OXM field of a flow-mod match into `m`; a field no
    /// extension knows is BAD_MATCH/BAD_FIELD.
    pub fn match_field(&self, f: &OxmField, m: &mut ExtMatch) -> Result<(), ErrorCode> {
        let bad_field = ErrorCode::BadMatch(BadMatchCode::BadField);
        let OxmField::Experimenter { experimenter, .. } = f else {
            return Err(bad_field);
        };
        let (_, ext) = self.by_id(*experimenter).ok_or(bad_field)?;
        (ext.match_field)(f, m)
    }

    /// Checks an experimenter action against its extension's state (its
    /// hook in `hooks`); one no extension knows is
    /// BAD_ACTION/BAD_EXPERIMENTER.
    pub fn check_action(&self, hooks: &Hooks, a: &Action) -> Result<(), ErrorCode> {
        let Action::Experimenter { experimenter, .. } = a else {
            return Ok(());
        };
        let unknown = ErrorCode::BadAction(BadActionCode::BadExperimenter);
        let (i, _) = self.by_id(*experimenter).ok_or(unknown)?;
        hooks.get(i).ok_or(unknown)?.check_action(a)
    }

    /// An experimenter action compiled, naming its extension's index;
    /// `None` for one no extension knows (validation refused it before).
    pub fn compile_action(&self, a: &Action) -> Option<ExtOp> {
        let Action::Experimenter { experimenter, .. } = a else {
            return None;
        };
        let (i, ext) = self.by_id(*experimenter)?;
        (ext.compile_action)(a).map(|op| ExtOp { ext: i, ..op })
    }

    /// An experimenter instruction's packet generation: its extension's
    /// index, the template id and the actions; one no extension knows is
    /// BAD_INSTRUCTION/UNSUP_INST.
    pub fn pkt_gen(&self, i: &Instruction) -> Result<(u8, PktGen), ErrorCode> {
        let unsup = ErrorCode::BadInstruction(BadInstructionCode::UnsupInst);
        let Instruction::Experimenter { experimenter, .. } = i else {
            return Err(unsup);
        };
        let (index, ext) = self.by_id(*experimenter).ok_or(unsup)?;
        Ok((index, (ext.pkt_gen)(i)?))
    }

    /// The OXM fields of an extension match, every extension's.
    pub fn to_oxm(&self, m: &ExtMatch) -> Vec<OxmField> {
        self.iter().flat_map(|e| (e.to_oxm)(m)).collect()
    }
}

/// The executor hooks of a pipeline's extensions (`crate::ext::api::Hook`),
/// in the order of its [`Extensions`] (an `ExtOp`'s `ext` indexes both),
/// and the one flag they raise when they first have per-packet work
/// ([`HookEnv::live`]). A clone is two reference counts: every replica
/// of a pipeline holds the same hooks, so their state is shared.
#[derive(Clone, Default)]
pub struct Hooks {
    hooks: Arc<[Arc<dyn Hook>]>,
    live: Arc<AtomicBool>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("n", &self.hooks.len())
            .field("live", &self.live())
            .finish()
    }
}

impl Hooks {
    /// New hooks for `exts`, each made with a fresh state for a pipeline
    /// of `tables` tables.
    pub fn new(exts: &Extensions, tables: u8, state_capacity: usize) -> Hooks {
        let live = Arc::new(AtomicBool::new(false));
        let env = HookEnv {
            tables,
            state_capacity,
            live: live.clone(),
        };
        let hooks = exts.iter().map(|e| (e.hook)(&env)).collect();
        Hooks { hooks, live }
    }

    /// Whether some hook has raised the flag: has per-packet work
    /// ([`HookEnv::live`]).
    #[inline(always)]
    pub fn live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    /// Whether some hook looks table `table_id` up on every packet
    /// (`Hook::table_active`). Out of line: the executor inlines only the
    /// `live` test before it, so a pipeline whose hooks have no
    /// per-packet work pays nothing more per table visit.
    #[inline(never)]
    pub fn table_active(&self, table_id: u8) -> bool {
        self.iter().any(|h| h.table_active(table_id))
    }

    /// The hook of the extension at index `i`.
    #[inline(always)]
    pub fn get(&self, i: u8) -> Option<&dyn Hook> {
        self.hooks.get(usize::from(i)).map(|h| &**h)
    }

    /// Every hook, in the extensions' order.
    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = &dyn Hook> + '_ {
        self.hooks.iter().map(|h| &**h)
    }

    /// The hook of the extension at index `i` as its own type `T`, shared
    /// (what an extension's control side reads and writes: BEBA's state
    /// modifications).
    pub fn downcast<T: Hook>(&self, i: u8) -> Option<Arc<T>> {
        let h: Arc<dyn Any + Send + Sync> = self.hooks.get(usize::from(i))?.clone();
        h.downcast().ok()
    }
}
