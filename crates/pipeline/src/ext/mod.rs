//! Extensions: experimenter match fields, actions and instructions that a
//! data-path module gives meaning to. An extension lives in one module
//! here and is reached through the [`registry::Extensions`] the pipeline
//! is built with, by experimenter id; nothing else in the pipeline names
//! it. The pipeline has no list of extensions of its own: the switch's
//! table of extensions (`switch::datapath::extensions`) is the one list,
//! and its rows' flow-mod sides are what the switch's pipeline is built
//! with ([`Pipeline::with_extensions`]).
//!
//! What an extension supplies, generic parts first:
//!
//! - **Match fields** (generic, [`api::ExtMatch`]): an experimenter OXM
//!   field of a flow-mod's match is handed to its extension
//!   ([`registry::Extensions::match_field`]), which keeps it in a key slot
//!   of the entry's compiled match ([`api::KEY_SLOTS`]: so two entries
//!   that differ only there are different entries) or refuses it. The
//!   compiled match also holds it as a (field, value, mask) triple over
//!   that slot. Before a table holding such entries is looked up, the
//!   values the packet has there ([`api::ExtValues`], see
//!   [`Pipeline::ext_values`]) are written into the slots: the table's
//!   classifier (hash, trie, tuple space) then finds the entry as for any
//!   other field.
//! - **Actions** ([`api::ExtOp`]): an experimenter action is checked at
//!   flow-mod / group-mod time against its extension's state
//!   ([`Pipeline::check_ext_action`], the hook's `check_action`),
//!   compiled once into an op that names its extension by index
//!   ([`registry::Extensions::compile_action`]) and executed by the one
//!   executor through that extension's hook ([`Pipeline::execute_ext`]).
//! - **Instructions** ([`api::PktGen`]): an experimenter instruction is a
//!   packet generation (a template its hook keeps and the actions the
//!   generated packet runs through, [`Pipeline::generate`]).
//! - **The per-packet side** ([`api::Hook`], made by the row's `hook`
//!   when the pipeline is given its extensions, [`registry::Hooks`]): the
//!   values of the key slots ([`Pipeline::ext_values`]), whether a table
//!   is looked up through it on every packet ([`Pipeline::ext_table_active`]:
//!   a BEBA stateful table refreshes idle timers on look-up, even with no
//!   entry matching its state), the batch path's read-ahead, the ops'
//!   execution, the templates of packet generation. Until some hook
//!   raises the pipeline's one flag ([`api::HookEnv::live`]) a table visit
//!   reads that word and asks no hook anything.
//!
//! Files: [`api`] (the shared types), [`registry`] (the list a pipeline
//! is given, by experimenter id, and its hooks), one module per extension,
//! this one (the pipeline's calls). BEBA / OpenState ([`beba`]) is the one
//! in the switch; `examples/extension` is one built outside this crate.

pub mod api;
pub mod beba;
pub mod beba_op;
pub mod registry;

use crate::ext::api::{ExtOp, ExtValues, Hook};
use crate::pipeline::Pipeline;
use crate::table::Nanos;
use ofp::action::Action;
use ofp::error::ErrorCode;
use packet::FlowKey;
use std::sync::Arc;

impl Pipeline {
    /// Checks an experimenter action (flow-mod, group-mod); one no
    /// extension knows is BAD_ACTION/BAD_EXPERIMENTER.
    pub fn check_ext_action(&self, a: &Action) -> Result<(), ErrorCode> {
        self.exts.check_action(&self.hooks, a)
    }

    /// The hook of the extension of id `experimenter` as its own type
    /// (its state, shared with every replica made after this call), if
    /// this pipeline knows that extension and its hook is a `T`.
    pub fn hook<T: Hook>(&self, experimenter: u32) -> Option<Arc<T>> {
        let (i, _) = self.exts.by_id(experimenter)?;
        self.hooks.downcast(i)
    }

    /// Whether table `table_id` must be looked up through the extensions
    /// even with no entry matching their fields (module comment).
    #[inline(always)]
    pub(crate) fn ext_table_active(&self, table_id: u8) -> bool {
        self.hooks.live() && self.hooks.table_active(table_id)
    }

    /// Whether the batch path should parse a chunk before running it so
    /// that the extensions read its packets' state ahead
    /// ([`Pipeline::ext_read_ahead`]).
    #[inline]
    pub(crate) fn ext_worth_warming(&self) -> bool {
        self.hooks.live() && self.hooks.iter().any(|h| h.worth_reading_ahead())
    }

    /// Reads ahead what the extensions will read for the packets
    /// `keys[run[..]]` entering table 0, so that the chunk's cache misses
    /// overlap.
    #[inline]
    pub(crate) fn ext_read_ahead(&self, keys: &[FlowKey], run: &[u8]) {
        if self.hooks.live() {
            for h in self.hooks.iter() {
                h.read_ahead(keys, run);
            }
        }
    }

    /// The extension field values of the packet `key` in table
    /// `table_id` at `now` (module comment).
    #[inline]
    pub(crate) fn ext_values(&self, table_id: u8, key: &FlowKey, now: Nanos) -> ExtValues {
        let mut v = ExtValues::default();
        for h in self.hooks.iter() {
            h.values(table_id, key, now, &mut v);
        }
        v
    }

    /// Runs an extension op on the packet `key` at `now`, by its
    /// extension's hook.
    #[inline]
    pub(crate) fn execute_ext(&self, op: &ExtOp, key: &FlowKey, now: Nanos) {
        if let Some(h) = self.hooks.get(op.ext) {
            h.execute(op, key, now);
        }
    }

    /// Generates a packet from template `template` of extension `ext`
    /// (BEBA's InSP) and runs it through `ops` as received on the port
    /// its hook gives: never a packet-in (an output to CONTROLLER is
    /// skipped), never the tables. An unknown or empty template generates
    /// nothing.
    pub(crate) fn generate(
        &mut self,
        ext: u8,
        template: u32,
        ops: &[crate::program::Op],
        now: Nanos,
        out: &mut impl crate::output::Output,
    ) {
        use crate::program::Op;
        let Some((frame, in_port)) = self
            .hooks
            .get(ext)
            .and_then(|h| h.packet_template(template))
        else {
            return;
        };
        if frame.is_empty() {
            return;
        }
        let mut pkt = packet::PacketBuf::from_slice(&frame);
        let mut key = FlowKey::new(in_port);
        let _ = packet::parse(pkt.data(), &mut key);
        let mut ctx = crate::exec::Ctx::received(in_port, now);
        for op in ops {
            if matches!(op, Op::Output { port, .. } if *port == ofp::port::port_no::CONTROLLER) {
                continue;
            }
            let one = std::slice::from_ref(op);
            if self.execute_ops(&mut pkt, &mut key, one, &mut ctx, false, out)
                == crate::exec::Flow::Stop
            {
                return;
            }
        }
    }

    /// Whether the per-table way must leave every packet to the key path:
    /// some entry uses an extension, or an extension has per-packet work.
    #[inline]
    pub(crate) fn ext_in_use(&self) -> bool {
        self.ext_flows || self.hooks.live()
    }
}

/// BEBA's entry alone, as the switch's table of extensions gives it
/// (`registry` comment): what the tests of a pipeline with BEBA build it
/// with.
#[cfg(test)]
pub(crate) fn beba_only() -> registry::Extensions {
    std::iter::once(&beba::EXTENSION).collect()
}

/// BEBA state tables driven by packets through `process` and
/// `process_batch`: state matches, SET_STATE with timeouts, rollback.
#[cfg(test)]
mod tests;

/// Extension fields through the classifiers against a priority-order
/// scan, on random entries and packets.
#[cfg(test)]
mod classify_tests;
