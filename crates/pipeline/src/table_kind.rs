//! What the one executor asks of a flow table: the table kind.
//!
//! # A table kind
//!
//! OpenFlow fixes what a flow table *means* (spec §5.1-§5.5: the
//! highest-priority entry whose match covers the packet, its counters,
//! its instructions), never how a table finds that entry or how it keeps
//! the entry's instructions. A table kind is one answer to both, behind
//! the [`TableKind`] trait:
//!
//! - **Lookup.** A kind chooses its own lookup structure for the entries
//!   it holds and answers one key ([`TableKind::lookup`], counted) or the
//!   keys of a whole chunk of a batch at once ([`TableKind::find_many`],
//!   uncounted, so that the batch path can overlap the cache misses of
//!   many packets and then count each lookup in packet order with
//!   [`TableKind::lookup_known`]). [`crate::table::FlowTable`], today's
//!   only kind, picks per table and after every change among a linear
//!   scan, an exact-match hash, an LPM trie and a tuple space search
//!   (`crate::classifier`), so one table of a pipeline can be a trie
//!   while the next is a hash: specialisation is per table, whatever the
//!   shape of the pipeline around it. A table can also be given a
//!   structure from outside the crate (`crate::LookupStructure`,
//!   registered by name in `crate::table_kinds`).
//! - **Lookup from the frame.** A kind whose structure can be probed
//!   with a packet's fields read straight from its frame
//!   (`FrameFields`: no `FlowKey` made) says so by answering
//!   [`TableKind::lookup_frame`] (one packet, counted) and
//!   [`TableKind::find_frames`] (a chunk, uncounted); the defaults answer
//!   "not available". `FlowTable` answers when every field its entries
//!   match is one a `FrameFields` holds, through its exact index, linear
//!   list, trie or tuple space as for a key. The executor then looks
//!   such a table up from the frame while the packet's key is not made
//!   (`exec::Lazy`), whatever tables come before or after it.
//! - **Entry programs.** A kind compiles each entry's instructions when
//!   the entry is installed ([`TableKind::compile`]; by default
//!   `Program::compile`: meter, apply-actions as an op list with the
//!   common runs fused, clear, write-actions, write-metadata, goto, plus
//!   what the program writes of the key). The packet path never reads the
//!   wire-form instructions.
//! - **Entry application.** [`TableKind::apply`] counts a matched packet
//!   against its entry (packets, bytes, last hit) and hands the executor
//!   the entry's compiled program with its cookie and whether it is the
//!   table-miss entry.
//! - **Staleness.** [`TableKind::match_fields`] says which key fields the
//!   table's entries look at: a lookup made in advance for a packet
//!   stays valid while no action on its way wrote one of them.
//!
//! # How the one executor drives tables
//!
//! `crate::exec` holds the only implementation of the instruction and
//! action-set semantics (goto-table, apply/write/clear-actions,
//! write-metadata, meters, groups, output, packet-in). For a packet it
//! starts at table 0: it takes the lookup the batch path made in advance
//! if that is still valid, else asks the table; calls `apply`; runs the
//! program in spec order; and follows the goto. It is generic over
//! `TableKind`, so the single-packet path (`Pipeline::process`,
//! packet-out's TABLE resubmit) and the batch path (`Pipeline::
//! process_batch`) run the same code with the same tables.

use crate::classifier::fields::FrameFields;
use crate::program::Program;
use crate::table::{FlowTable, Nanos};
use ofp::instruction::Instruction;
use packet::{FieldSet, FlowKey};

/// A matched entry as the executor sees it (see [`TableKind::apply`]).
#[derive(Debug, Clone, Copy)]
pub struct Applied<'a> {
    /// The entry's compiled instructions.
    pub program: &'a Program,
    /// The entry's cookie (packet-ins carry it).
    pub cookie: u64,
    /// Whether the entry is the table-miss entry (its controller output
    /// has reason NO_MATCH).
    pub miss: bool,
}

/// A flow table's lookup and entry application (module comment).
pub trait TableKind {
    /// Every key field some entry of the table matches on.
    fn match_fields(&self) -> FieldSet;

    /// The position of the best entry for `key`, counting the lookup
    /// (and the match) in the table's counters.
    fn lookup(&mut self, key: &FlowKey) -> Option<usize>;

    /// Counts a lookup whose answer `found` was made by
    /// [`TableKind::find_many`] with the same key and the table unchanged
    /// since, as `lookup` would have; returns `found`.
    fn lookup_known(&mut self, found: Option<usize>) -> Option<usize>;

    /// Batch lookup: `pos[j]` receives the position for `keys[at[j]]`
    /// (`u32::MAX`: no match) for at most `crate::chunk::CHUNK` keys.
    /// Counts nothing.
    fn find_many(&self, keys: &[FlowKey], at: &[u8], pos: &mut [u32]);

    /// Batch lookup from the frames: as `find_many`, for packets whose
    /// fields were read from their frames (`FrameFields`: no `FlowKey`
    /// made). Returns `false`, writing nothing, when the table's lookup
    /// structure cannot be probed so (the default); the executor then
    /// looks such a packet up with its key.
    fn find_frames(&self, _frames: &[FrameFields], _at: &[u8], _pos: &mut [u32]) -> bool {
        false
    }

    /// `lookup_frame` without counting: the position of the best entry
    /// for the packet read into `frame` (`Some(None)`: no match), `None`
    /// when the table cannot answer so (the default).
    fn find_frame(&self, _frame: &FrameFields) -> Option<Option<usize>> {
        None
    }

    /// `lookup` for a packet read from its frame (`FrameFields`, no
    /// key made), counted the same; `None`, counting nothing, when the
    /// table cannot answer so (the default: the executor then makes the
    /// key and calls `lookup`).
    fn lookup_frame(&mut self, _frame: &FrameFields) -> Option<Option<usize>> {
        None
    }

    /// The program of the entry at `pos`, for reading ahead (no
    /// counters).
    fn program_at(&self, pos: usize) -> Option<&Program>;

    /// Counts a packet of `len` bytes matched at `now` against the entry
    /// at `pos` and returns what the executor runs for it.
    fn apply(&mut self, pos: usize, len: usize, now: Nanos) -> Option<Applied<'_>>;

    /// Whether some entry matches an extension field (`crate::ext`):
    /// then the executor writes the extension's values into the key
    /// before [`TableKind::lookup`], and lookups made in advance do not
    /// count.
    fn has_ext(&self) -> bool {
        false
    }

    /// Compiles an entry's instructions for the packet path.
    fn compile(instructions: &[Instruction], exts: &crate::ext::registry::Extensions) -> Program
    where
        Self: Sized,
    {
        Program::compile(instructions, exts)
    }
}

impl TableKind for FlowTable {
    #[inline(always)]
    fn match_fields(&self) -> FieldSet {
        FlowTable::match_fields(self)
    }

    #[inline(always)]
    fn lookup(&mut self, key: &FlowKey) -> Option<usize> {
        FlowTable::lookup(self, key)
    }

    #[inline(always)]
    fn lookup_known(&mut self, found: Option<usize>) -> Option<usize> {
        FlowTable::lookup_known(self, found)
    }

    #[inline(always)]
    fn has_ext(&self) -> bool {
        FlowTable::has_ext(self)
    }

    #[inline(always)]
    fn find_many(&self, keys: &[FlowKey], at: &[u8], pos: &mut [u32]) {
        FlowTable::find_many(self, keys, at, pos)
    }

    #[inline(always)]
    fn lookup_frame(&mut self, frame: &FrameFields) -> Option<Option<usize>> {
        FlowTable::lookup_frame(self, frame)
    }

    #[inline(always)]
    fn find_frames(&self, frames: &[FrameFields], at: &[u8], pos: &mut [u32]) -> bool {
        FlowTable::find_frames(self, frames, at, pos)
    }

    #[inline(always)]
    fn find_frame(&self, frame: &FrameFields) -> Option<Option<usize>> {
        FlowTable::find_frame(self, frame)
    }

    #[inline(always)]
    fn program_at(&self, pos: usize) -> Option<&Program> {
        self.hot(pos).map(|e| &**e.program())
    }

    #[inline(always)]
    fn apply(&mut self, pos: usize, len: usize, now: Nanos) -> Option<Applied<'_>> {
        let entry = self.hot_mut(pos)?;
        entry.hit(len, now);
        Some(Applied {
            program: entry.program(),
            cookie: entry.cookie,
            miss: entry.miss,
        })
    }
}
