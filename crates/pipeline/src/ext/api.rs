//! The types extensions and the pipeline share (`crate::ext`): an
//! entry's extension match, a packet's extension values, a compiled
//! extension action, an extension's entry points.
//!
//! Generic: the key slots ([`KEY_SLOTS`]) and what is kept of them
//! ([`ExtMatch`], [`ExtValues`]), the entry points ([`Extension`]), the
//! packet generation ([`PktGen`]). BEBA's: the one variant of [`ExtOp`]
//! and the data-path state [`ExtState`]; an extension with actions of its
//! own adds an `ExtOp` variant (and its arm in `Pipeline::execute_ext`),
//! so that the executor dispatches a compiled action by a `match`, with
//! no look-up.

use crate::ext::beba_op::BebaOp;
use ofp::action::Action;
use ofp::error::ErrorCode;
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use packet::{Field, FlowKey};

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

/// A compiled extension action (module comment): one variant per
/// extension with actions, BEBA's the one there is; `Copy` as every
/// [`crate::program::Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtOp {
    Beba(BebaOp),
}

/// The data-path state extensions keep (shared by every replica of a
/// pipeline): BEBA's state tables, global state and templates (the
/// `stateful` crate). It is what [`Extension::check_action`] checks an
/// action against.
pub type ExtState = stateful::Stateful;

/// A packet generation: the template id and the actions the generated
/// packet runs through.
pub type PktGen = (u32, Vec<Action>);

/// One extension's flow-mod entry points (`crate::ext`): all generic,
/// called when a flow-mod, group-mod or packet-out is compiled (never per
/// packet). The switch's table of extensions holds one per extension that
/// has match fields, actions or instructions (`beba::EXTENSION`).
pub struct Extension {
    pub experimenter: u32,
    /// Adds an experimenter OXM field of its id to `m` (in a key slot of
    /// its choice), or refuses it.
    pub match_field: fn(&OxmField, &mut ExtMatch) -> Result<(), ErrorCode>,
    /// Checks an experimenter action against the extension's state.
    pub check_action: fn(&ExtState, &Action) -> Result<(), ErrorCode>,
    /// Compiles an experimenter action (checked before); `None`: ignored.
    pub compile_action: fn(&Action) -> Option<ExtOp>,
    /// The OXM fields of an extension match (reports built from
    /// compiled matches).
    pub to_oxm: fn(&ExtMatch) -> Vec<OxmField>,
    /// An experimenter instruction that generates a packet: the template
    /// id and the action list it runs through; an error refuses the
    /// instruction.
    pub pkt_gen: fn(&Instruction) -> Result<PktGen, ErrorCode>,
}
