//! The types extensions and the pipeline share (`crate::ext`): an
//! entry's extension match, a packet's extension values, a compiled
//! extension action, an extension's entry points and its executor hook.
//!
//! All generic: the key slots ([`KEY_SLOTS`]) and what is kept of them
//! ([`ExtMatch`], [`ExtValues`]), a compiled action ([`ExtOp`]: which
//! extension, and a few bytes of its own encoding), the flow-mod entry
//! points ([`Extension`]), the per-packet side ([`Hook`]) and the packet
//! generation ([`PktGen`]). Nothing here names an extension.

use ofp::action::Action;
use ofp::error::ErrorCode;
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use packet::{Field, FlowKey};
use std::any::Any;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The key slots extensions match on: 32-bit fields of the flow key that
/// no packet header fills. An extension's match fields are kept in them
/// (an entry's [`ExtMatch`]); before a table holding such entries is
/// looked up, the values the extension gives the packet there
/// ([`ExtValues`]) are written into them, so the table's classifier finds
/// the entry as for any other field. Which extension field uses which
/// slot is the extension's choice (BEBA: `beba::STATE_SLOT`,
/// `beba::GLOBAL_STATE_SLOT`); the key has these two.
pub const KEY_SLOTS: [Field; 2] = [Field::ModState, Field::ModGlobalState];

/// How many key slots there are.
pub const N_SLOTS: usize = KEY_SLOTS.len();

/// An entry's extension match fields (module comment): per key slot, a
/// value and a mask (the mask's bits only), or `None`: that slot is not
/// matched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExtMatch {
    pub slots: [Option<(u32, u32)>; N_SLOTS],
}

/// What a packet has in the key slots when a table looks it up (module
/// comment); `None`: the packet has no value in that slot there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtValues {
    pub slots: [Option<u32>; N_SLOTS],
}

impl ExtValues {
    /// Writes the values into their key slots for a table's lookup (a
    /// value the packet lacks there is marked absent).
    #[inline]
    pub fn write(&self, key: &mut FlowKey) {
        // In `KEY_SLOTS` order: `mod_state`, then `mod_global_state`.
        let [a, b] = self.slots;
        key.mod_state = a.unwrap_or(0);
        key.mod_global_state = b.unwrap_or(0);
        for (field, v) in KEY_SLOTS.into_iter().zip(self.slots) {
            if v.is_some() {
                key.present.insert(field);
            } else {
                key.present.remove(field);
            }
        }
    }
}

fn field_matches(m: Option<(u32, u32)>, v: Option<u32>) -> bool {
    match m {
        None => true,
        Some((value, mask)) => v.is_some_and(|v| v & mask == value),
    }
}

fn field_subsumed(entry: Option<(u32, u32)>, filter: Option<(u32, u32)>) -> bool {
    match (entry, filter) {
        (_, None) => true,
        (None, Some(_)) => false,
        (Some((v, m)), Some((fv, fm))) => m & fm == fm && v & fm == fv,
    }
}

fn field_overlaps(a: Option<(u32, u32)>, b: Option<(u32, u32)>) -> bool {
    match (a, b) {
        (Some((av, am)), Some((bv, bm))) => (av ^ bv) & am & bm == 0,
        _ => true,
    }
}

impl ExtMatch {
    pub fn is_empty(&self) -> bool {
        *self == ExtMatch::default()
    }

    /// The match as (field, value, mask) triples over the key slots
    /// ([`ExtValues::write`] fills them for a lookup).
    pub fn key_fields(&self) -> impl Iterator<Item = (Field, u32, u32)> {
        KEY_SLOTS
            .into_iter()
            .zip(self.slots)
            .filter_map(|(field, m)| m.map(|(v, k)| (field, v, k)))
    }

    #[inline]
    pub fn matches(&self, v: &ExtValues) -> bool {
        self.slots
            .iter()
            .zip(&v.slots)
            .all(|(m, v)| field_matches(*m, *v))
    }

    /// Non-strict flow-mod selection (see `CompiledMatch::is_subsumed_by`).
    pub fn is_subsumed_by(&self, filter: &ExtMatch) -> bool {
        self.slots
            .iter()
            .zip(&filter.slots)
            .all(|(e, f)| field_subsumed(*e, *f))
    }

    /// CHECK_OVERLAP (see `CompiledMatch::overlaps`).
    pub fn overlaps(&self, other: &ExtMatch) -> bool {
        self.slots
            .iter()
            .zip(&other.slots)
            .all(|(a, b)| field_overlaps(*a, *b))
    }
}

/// A compiled extension action (module comment), `Copy` as every
/// [`crate::program::Op`]: the extension that runs it (`ext`, its index
/// in the pipeline's [`Extensions`](crate::ext::registry::Extensions),
/// set by the registry when it compiles the action) and the rest in the
/// extension's own encoding, made by its `compile_action` and read back
/// by its [`Hook::execute`] (BEBA: `beba_op::BebaOp::encode`). The
/// executor runs it with one indexed call, no look-up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExtOp {
    pub ext: u8,
    /// Which of the extension's actions.
    pub code: u8,
    /// Its small operands.
    pub bytes: [u8; 2],
    /// Its 32-bit operands.
    pub words: [u32; 6],
}

/// A packet generation: the template id and the actions the generated
/// packet runs through.
pub type PktGen = (u32, Vec<Action>);

/// What an extension's hook is made with ([`Extension::hook`]), by the
/// pipeline when it is given its extensions and again when its state
/// capacity changes.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// The pipeline's flow tables (ids 0 to `tables` - 1).
    pub tables: u8,
    /// About how many entries a store the data plane writes (a state
    /// table) holds.
    pub state_capacity: usize,
    /// The pipeline's one "some extension has per-packet work" flag: a
    /// hook raises it (never lowers it) when it first has some. Until it
    /// is raised the executor reads only this word per table visit and
    /// asks no hook anything.
    pub live: Arc<AtomicBool>,
}

/// A packet's template for a packet generation: its bytes and the port
/// it is run as received on.
pub type Template = (Arc<[u8]>, u32);

/// One extension's per-packet side, its executor hook (`crate::ext`):
/// the state its packets read and write (shared by every replica of the
/// pipeline: a clone of the pipeline clones the `Arc`, so a write by one
/// worker is seen by the next packet on any worker) and what the one
/// executor asks of it. Made by its row's [`Extension::hook`]; a
/// pipeline calls the per-packet methods only once [`HookEnv::live`] is
/// raised, except `execute` and `packet_template`, which run the
/// extension's own compiled actions and instructions.
pub trait Hook: Any + Send + Sync {
    /// Whether table `table_id` must be looked up through the extension
    /// even with no entry matching its fields (BEBA: a stateful table's
    /// look-up refreshes idle timers).
    fn table_active(&self, _table_id: u8) -> bool {
        false
    }

    /// Writes the packet `key`'s values in table `table_id` at `now` (the
    /// pipeline's time, `crate::table::Nanos`) into the key slots the
    /// extension owns in `v`.
    fn values(&self, _table_id: u8, _key: &FlowKey, _now: u64, _v: &mut ExtValues) {}

    /// Runs one of the extension's compiled actions on the packet `key`.
    fn execute(&self, op: &ExtOp, key: &FlowKey, now: u64);

    /// Whether reading a chunk's packets' state ahead pays (the batch
    /// path then parses a chunk before running it, [`Hook::read_ahead`]).
    fn worth_reading_ahead(&self) -> bool {
        false
    }

    /// Reads ahead what the extension will read for the packets
    /// `keys[run[..]]` entering table 0, so that a chunk's cache misses
    /// overlap.
    fn read_ahead(&self, _keys: &[FlowKey], _run: &[u8]) {}

    /// The template of a packet generation (an unknown id: `None`).
    fn packet_template(&self, _template: u32) -> Option<Template> {
        None
    }

    /// Checks one of the extension's actions against its state (flow-mod,
    /// group-mod); an error refuses the message.
    fn check_action(&self, _a: &Action) -> Result<(), ErrorCode> {
        Ok(())
    }
}

/// One extension's entry points (`crate::ext`): the flow-mod side, all
/// called when a flow-mod, group-mod or packet-out is compiled (never per
/// packet), and the constructor of its per-packet side. The switch's
/// table of extensions holds one per extension that has match fields,
/// actions or instructions (`beba::EXTENSION`).
pub struct Extension {
    pub experimenter: u32,
    /// Adds an experimenter OXM field of its id to `m` (in a key slot of
    /// its choice), or refuses it.
    pub match_field: fn(&OxmField, &mut ExtMatch) -> Result<(), ErrorCode>,
    /// Compiles an experimenter action (checked before, by its hook's
    /// [`Hook::check_action`]); `ext` is filled in by the registry.
    /// `None`: ignored.
    pub compile_action: fn(&Action) -> Option<ExtOp>,
    /// The OXM fields of an extension match (reports built from
    /// compiled matches).
    pub to_oxm: fn(&ExtMatch) -> Vec<OxmField>,
    /// An experimenter instruction that generates a packet: the template
    /// id and the action list it runs through; an error refuses the
    /// instruction.
    pub pkt_gen: fn(&Instruction) -> Result<PktGen, ErrorCode>,
    /// Makes its executor hook for a pipeline.
    pub hook: fn(&HookEnv) -> Arc<dyn Hook>,
}
