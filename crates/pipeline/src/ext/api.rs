//! The types extensions and the pipeline share (`crate::ext`): an
//! entry's extension match, a packet's extension values, a compiled
//! extension action, an extension's entry points.

use crate::ext::beba_op::BebaOp;
use ofp::action::Action;
use ofp::error::ErrorCode;
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use packet::{Field, FlowKey};

/// An extension's match fields of one entry (module comment): each a
/// value and a mask (the mask's bits only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ExtMatch {
    /// BEBA `state`.
    pub state: Option<(u32, u32)>,
    /// BEBA `global_state`.
    pub global_state: Option<(u32, u32)>,
}

/// What a packet has of the extension match fields when a table looks it
/// up (module comment); `None`: the packet has no such field there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExtValues {
    pub state: Option<u32>,
    pub global_state: Option<u32>,
}

impl ExtValues {
    /// Writes the values into their key slots for a table's lookup (a
    /// value the packet lacks there is marked absent).
    #[inline]
    pub fn write(&self, key: &mut FlowKey) {
        key.mod_state = self.state.unwrap_or(0);
        key.mod_global_state = self.global_state.unwrap_or(0);
        key.present.remove(Field::ModState);
        key.present.remove(Field::ModGlobalState);
        if self.state.is_some() {
            key.present.insert(Field::ModState);
        }
        if self.global_state.is_some() {
            key.present.insert(Field::ModGlobalState);
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

    /// The match as (field, value, mask) triples over the key slots of
    /// the extension fields ([`ExtValues::write`] fills them for a
    /// lookup).
    pub fn key_fields(&self) -> impl Iterator<Item = (Field, u32, u32)> {
        let state = self.state.map(|(v, m)| (Field::ModState, v, m));
        let global = self
            .global_state
            .map(|(v, m)| (Field::ModGlobalState, v, m));
        state.into_iter().chain(global)
    }

    #[inline]
    pub fn matches(&self, v: &ExtValues) -> bool {
        field_matches(self.state, v.state) && field_matches(self.global_state, v.global_state)
    }

    /// Non-strict flow-mod selection (see `CompiledMatch::is_subsumed_by`).
    pub fn is_subsumed_by(&self, filter: &ExtMatch) -> bool {
        field_subsumed(self.state, filter.state)
            && field_subsumed(self.global_state, filter.global_state)
    }

    /// CHECK_OVERLAP (see `CompiledMatch::overlaps`).
    pub fn overlaps(&self, other: &ExtMatch) -> bool {
        field_overlaps(self.state, other.state)
            && field_overlaps(self.global_state, other.global_state)
    }
}

/// A compiled extension action (module comment); `Copy` as every
/// [`crate::program::Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtOp {
    Beba(BebaOp),
}

/// The data-path state extensions keep (shared by every replica of a
/// pipeline): BEBA's state tables, global state and templates.
pub type ExtState = stateful::Stateful;

/// A packet generation: the template id and the actions the generated
/// packet runs through.
pub type PktGen = (u32, Vec<Action>);

/// One extension's entry points (`crate::ext`).
pub struct Extension {
    pub experimenter: u32,
    /// Adds an experimenter OXM field to `m`, or refuses it.
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
