//! Which templates serve a batch and what they kept for a chunk.

use super::chain::*;
use super::route::*;
/// Which templates serve a batch (`Pipeline::process_batch`): the
/// Ethernet one, the route one under its plan, or the chain one
/// (`chain_serves`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plans {
    pub ethernet: bool,
    pub route: Option<RoutePlan>,
    pub chain: bool,
    /// No template: the per-table way (`crate::per_table`).
    pub per_table: bool,
}

/// What the route or the chain template kept for a chunk's packets
/// (`Pipeline::run_fast` reads the one its `Fast` names).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ways<'a> {
    None,
    Route(RoutePlan, &'a Hops),
    Chain(&'a Chains),
}
