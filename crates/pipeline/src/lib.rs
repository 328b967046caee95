//! `pipeline` — the OpenFlow 1.3.5 datapath as a pure state machine.
//!
//! No threads, sockets or clocks: time is an argument ([`Nanos`]), packets
//! come in as [`packet::PacketBuf`]s and everything the datapath emits
//! (frames to ports, packet-ins, unsupported requests) goes through the
//! [`Output`] trait, so the `switch` crate decides the I/O and tests use a
//! recording output and a fake clock.
//!
//! Layout (one spec concept per module; the files import one another
//! without loops, `tests/module_dag.rs` checks it):
//! - [`pipeline`](Pipeline): the datapath state.
//! - [`matcher`]: `ofp_match` -> [`CompiledMatch`] over a `FlowKey`.
//! - [`table`]: flow entries and flow tables (store, priority order).
//! - [`table_kind`]: what the executor asks of a table ([`TableKind`]:
//!   batch lookup, entry application, entry compilation).
//! - [`classifier`]: lookup structures (linear, exact hash, LPM trie,
//!   tuple space search) chosen per table, or a structure from outside
//!   the crate ([`LookupStructure`]).
//! - [`table_kinds`]: lookup structures registered by name, plugged into
//!   a pipeline's tables.
//! - [`flow_mod`]: flow-mod (and group-mod, meter-mod) semantics,
//!   timeouts.
//! - [`program`]: instructions and actions compiled for the packet path.
//! - [`action_set`]: the action set and its execution order.
//! - [`consistency`]: actions checked against the match
//!   (BAD_ACTION/MATCH_INCONSISTENT).
//! - `exec`: the one executor of the instruction and action-set
//!   semantics, generic over [`TableKind`].
//! - [`process`]: a received packet and packet-out, into the executor.
//! - [`batch`]: a batch of packets with the same effect, cache misses
//!   overlapped.
//! - `per_table`: the batch path's lookups from the frames, table by
//!   table, with the key made only when a step needs it.
//! - [`output`]: what the datapath emits.
//! - [`group`]: the group table; `flow_hash`: SELECT's flow hash.
//! - [`port`]: the port set with config and liveness.
//! - [`meter`]: the meter table (token buckets, bands, stats).
//!
//! Left to the switch: buffer ids, packet-in truncation and the buffer
//! pool (a flow-mod with a buffer_id: the switch runs the buffered packet
//! through [`Pipeline::process`] after the add); table-mod, the feature
//! multiparts and flow/aggregate stats requests (the filters are here:
//! `CompiledMatch::is_subsumed_by`, [`outputs_to`]); merging the worker
//! replicas' `last_hit` stamps before calling `expire`.
//!
//! TODO(issue 3), not done yet:
//! - the virtual meters SLOWPATH / CONTROLLER (refused with INVALID_METER).

pub mod action_set;
pub mod batch;
mod chunk;
pub mod classifier;
pub mod consistency;
mod exec;
pub mod ext;
mod flow_hash;
pub mod flow_mod;
pub mod group;
pub mod matcher;
pub mod meter;
mod order;
pub mod output;
mod per_table;
mod pipeline;
pub mod port;
pub mod process;
pub mod program;
pub mod table;
pub mod table_kind;
pub mod table_kinds;

pub use action_set::ActionSet;
pub use classifier::fields::{matches_fields, Fields, FrameFields};
pub use classifier::{LookupStructure, Rank, Ref};
pub use flow_mod::{outputs_to, Prepared, RemovedFlow};
pub use group::{Group, GroupTable};
pub use matcher::{CompiledMatch, FieldMatch};
pub use meter::{Meter, MeterTable};
pub use output::{Output, PacketInEvent, Unsupported};
pub use pipeline::{Config, Pipeline, N_TABLES};
pub use port::{PortInfo, PortTable};
pub use table::{
    ColdEntry, EntryMut, EntryRef, FlowEntry, FlowTable, HotEntry, Nanos, TableCounters,
};
pub use table_kind::{Applied, TableKind};

#[cfg(test)]
mod tests;
