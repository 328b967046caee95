//! How to add a table kind: a lookup structure of its own for a flow
//! table, registered by name so that the switch's configuration can give
//! it to a table (`[[table]] id = 0`, `lookup = "in_port_array"`, or
//! `oxflow run --table-lookup 0=in_port_array`). The walkthrough is in
//! docs/ARCHITECTURE.md, "Add a table kind"; `tests/same_as_builtin.rs`
//! installs flows through the flow-mod path and checks that a table with
//! this structure forwards as one with the built-in classifier.
//!
//! The table keeps the OpenFlow semantics (entries, flow-mods, overlap,
//! timeouts, counters, stats): the structure only finds, for a packet, the
//! best entry among those the table gave it.

use packet::{Field, FlowKey};
use pipeline::{matches_fields, CompiledMatch, Fields, FrameFields, LookupStructure, Ref};
use std::sync::atomic::{AtomicU64, Ordering};

/// The name the structure is registered under.
pub const NAME: &str = "in_port_array";

/// Ports below this are indexed directly; entries for higher port
/// numbers go with the others into `rest`.
const DIRECT: usize = 4096;

/// Lookups answered by any `InPortArray`, so that the example's test can
/// see that a table uses it. One counter for every worker: its cache
/// line moves between their cores, a cost a structure meant for speed
/// would not pay.
pub static LOOKUPS: AtomicU64 = AtomicU64::new(0);

/// Step 1: the structure. A table of entries keyed by the in_port they
/// match exactly, in a vector indexed by port number:
///
/// ```text
///  by_port[1] = [(rank 900, h4, in_port=1,tcp_dst=22), (rank 500, h0, in_port=1)]
///  by_port[2] = [(rank 500, h1, in_port=2)]
///  rest       = [(rank 100, h2, ipv4_dst=10/8), (rank 0, h3, *)]
/// ```
///
/// Each list is kept best first (by rank: priority, then earlier
/// installation), so the first entry of a list that matches is that
/// list's answer, and a packet's answer is the better of its port's list
/// and `rest`. A controller that installs one rule per port (an
/// access-port table) makes this one array read and one short scan.
#[derive(Clone, Default)]
pub struct InPortArray {
    by_port: Vec<Vec<(Ref, CompiledMatch)>>,
    rest: Vec<(Ref, CompiledMatch)>,
}

impl InPortArray {
    /// The list an entry with match `m` goes to.
    fn list_mut(&mut self, m: &CompiledMatch) -> &mut Vec<(Ref, CompiledMatch)> {
        let port = m
            .fields()
            .iter()
            .find(|f| f.field == Field::InPort && f.mask == u128::from(u32::MAX))
            .map(|f| f.value as usize)
            .filter(|&p| p < DIRECT);
        match port {
            Some(p) => {
                if self.by_port.len() <= p {
                    self.by_port.resize_with(p + 1, Vec::new);
                }
                &mut self.by_port[p]
            }
            None => &mut self.rest,
        }
    }

    /// The best entry matching a packet whose fields `k` reads (a key or
    /// a frame's fields: the same code for both).
    fn find<K: Fields>(&self, k: &K) -> Option<Ref> {
        LOOKUPS.fetch_add(1, Ordering::Relaxed);
        let first = |list: &[(Ref, CompiledMatch)]| {
            list.iter()
                .find(|(_, m)| matches_fields(m, k))
                .map(|(r, _)| *r)
        };
        let by_port = if k.present().contains(Field::InPort) {
            let p = k.bits(Field::InPort) as usize;
            self.by_port.get(p).and_then(|l| first(l))
        } else {
            None
        };
        match (by_port, first(&self.rest)) {
            (Some(a), Some(b)) => Some(a.better(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Step 2: the trait the table drives.
impl LookupStructure for InPortArray {
    fn name(&self) -> &'static str {
        NAME
    }

    fn insert(&mut self, entry: Ref, m: &CompiledMatch) {
        let list = self.list_mut(m);
        let at = list.partition_point(|(r, _)| r.rank > entry.rank);
        list.insert(at, (entry, m.clone()));
    }

    fn remove(&mut self, entry: Ref, m: &CompiledMatch) {
        let list = self.list_mut(m);
        list.retain(|(r, _)| *r != entry);
    }

    fn lookup(&self, key: &FlowKey) -> Option<Ref> {
        self.find(key)
    }

    /// Packets read straight from their frames are looked up here too
    /// (without it, the table's tuple space would answer them).
    fn lookup_frame(&self, f: &FrameFields) -> Option<Option<Ref>> {
        Some(self.find(f))
    }

    fn fresh(&self) -> Box<dyn LookupStructure> {
        Box::new(InPortArray::default())
    }

    fn clone_box(&self) -> Box<dyn LookupStructure> {
        Box::new(self.clone())
    }
}

/// Step 3: register it by name, before the switch reads its
/// configuration (the `oxflow` binary calls this at start).
pub fn register() {
    let made = pipeline::table_kinds::register(NAME, || Box::new(InPortArray::default()));
    debug_assert!(made.is_ok(), "{NAME} is a valid name");
}
