//! The L2 learning switch of fail-standalone mode and of OFPP_NORMAL.
//!
//! The addresses live in graph's data-plane state table
//! ([`graph::state::StateTable`]) through its [`Learner`]: one table made
//! by the [`super::Datapath`] and shared by every worker (and the control
//! thread's packet-outs), so an address learned from a frame on one worker
//! is used for the next frame to it on any other; learning and look-up
//! take no lock and allocate nothing. The table maps a source address to
//! the port it was last seen on and when.
//!
//! A frame to a known unicast address younger than [`DEFAULT_AGING`] goes
//! to that port if the port can forward (up, not NO_FWD), and is dropped
//! when that port is the ingress; everything else floods: every forwarding
//! port (up, not NO_FWD) but the ingress, BLOCKED ports excluded
//! ([`pipeline::PortTable::flood_set`]), plus LOCAL. That is loop free on
//! a tree topology. A table whose slots around an address are all taken by
//! live entries does not learn it (nothing is evicted early), so frames to
//! it flood until entries age out. The addresses learned on a port are
//! forgotten when its link goes down or it is removed
//! ([`LearningTable::flush_port`]).

use graph::modules::l2_learning::{Dest, Learner, DEFAULT_AGING_NS};
use graph::state::StateTable;
use ofp::port::port_no;
use pipeline::{Nanos, PortTable};
use std::sync::Arc;

/// MAC aging time: 300 s like most bridges.
pub const DEFAULT_AGING: Nanos = DEFAULT_AGING_NS;
/// Slots of the table: 16384 (1 MiB), room for about 8000 addresses
/// (`graph::state`: size a table at two to four times the live entries).
pub const SLOTS: usize = 16384;

/// The learning switch's table; a clone shares it.
#[derive(Debug, Clone)]
pub struct LearningTable {
    learner: Learner,
}

impl Default for LearningTable {
    fn default() -> Self {
        LearningTable::new(SLOTS, DEFAULT_AGING)
    }
}

impl LearningTable {
    /// A table of at least `slots` slots whose entries age out after `aging`.
    pub fn new(slots: usize, aging: Nanos) -> LearningTable {
        LearningTable {
            learner: Learner {
                table: Arc::new(StateTable::new(slots)),
                aging,
            },
        }
    }

    /// Learns from `frame` received on `in_port` and calls `emit` with each
    /// port to send it out of (no lock, no allocation). A frame whose
    /// ingress port is NO_RECV or PORT_DOWN is neither learned from nor
    /// forwarded.
    #[inline]
    pub fn forward(
        &self,
        in_port: u32,
        frame: &[u8],
        ports: &PortTable,
        now: Nanos,
        mut emit: impl FnMut(u32),
    ) {
        use ofp::port::config;
        if ports
            .get(in_port)
            .is_some_and(|p| p.config & (config::NO_RECV | config::PORT_DOWN) != 0)
        {
            return;
        }
        match self.learner.forward(in_port, frame, now) {
            Dest::Drop => {}
            Dest::Port(p) => {
                if ports.get(p).is_some_and(|i| i.can_forward()) {
                    emit(p);
                }
            }
            Dest::Flood => {
                // Like a bridge's own interface, the LOCAL port (when
                // present) is part of the learning switch's flood domain;
                // OpenFlow's ALL/FLOOD keep to standard ports (spec §4.5),
                // so it is added here only.
                ports.flood_set(in_port, true).for_each(&mut emit);
                if in_port != port_no::LOCAL
                    && ports.get(port_no::LOCAL).is_some_and(|p| p.can_forward())
                {
                    emit(port_no::LOCAL);
                }
            }
        }
    }

    /// Forgets the addresses learned on `port` (link down, port removed);
    /// walks the table, so it is for the control thread.
    pub fn flush_port(&self, port: u32) -> usize {
        self.learner.flush_port(port)
    }

    /// The port `mac` was last seen on, if younger than the aging time.
    pub fn port_of(&self, mac: [u8; 6], now: Nanos) -> Option<u32> {
        let key = graph::state::Key::mac(mac, 0);
        self.learner
            .table
            .lookup(key, now, self.learner.aging)
            .map(|(port, _)| port)
    }

    /// Addresses younger than the aging time at `now` (walks the table).
    pub fn len(&self, now: Nanos) -> usize {
        self.learner.table.live(now, self.learner.aging)
    }

    /// Whether no address is known at `now`.
    pub fn is_empty(&self, now: Nanos) -> bool {
        self.len(now) == 0
    }

    /// Addresses refused for want of a free slot (they flood).
    pub fn full(&self) -> u64 {
        self.learner.table.full()
    }
}
