//! The pipeline's view of the switch ports (spec §4.1, §7.2.1): which port
//! numbers exist, their `ofp_port_config` bits (set by port-mod) and their
//! liveness (fed by the port backend's link detection). The pipeline uses it
//! to validate output ports in flow-mods, to expand ALL and FLOOD, to drop
//! on NO_FWD / NO_RECV / PORT_DOWN and to pick fast-failover buckets.

use ofp::port::{config, port_no, state};
use std::collections::BTreeMap;

/// What the pipeline knows about one port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortInfo {
    /// `ofp_port_config` bits.
    pub config: u32,
    /// `ofp_port_state` bits.
    pub state: u32,
}

impl PortInfo {
    /// An up, live port with no config bits set.
    pub fn up() -> PortInfo {
        PortInfo {
            config: 0,
            state: state::LIVE,
        }
    }

    /// Live for fast-failover: administratively up and link up.
    pub fn is_live(&self) -> bool {
        self.config & config::PORT_DOWN == 0 && self.state & state::LINK_DOWN == 0
    }

    /// Whether packets may be sent out of this port.
    pub fn can_forward(&self) -> bool {
        self.is_live() && self.config & config::NO_FWD == 0
    }
}

/// The port set, ordered by port number (so ALL/FLOOD output is
/// deterministic).
#[derive(Debug, Clone, Default)]
pub struct PortTable {
    ports: BTreeMap<u32, PortInfo>,
}

impl PortTable {
    pub fn new() -> PortTable {
        PortTable::default()
    }

    /// Adds or replaces a port (a standard port, or LOCAL).
    pub fn insert(&mut self, no: u32, info: PortInfo) {
        self.ports.insert(no, info);
    }

    pub fn remove(&mut self, no: u32) -> Option<PortInfo> {
        self.ports.remove(&no)
    }

    pub fn get(&self, no: u32) -> Option<&PortInfo> {
        self.ports.get(&no)
    }

    pub fn get_mut(&mut self, no: u32) -> Option<&mut PortInfo> {
        self.ports.get_mut(&no)
    }

    pub fn contains(&self, no: u32) -> bool {
        self.ports.contains_key(&no)
    }

    /// Every port, by number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &PortInfo)> {
        self.ports.iter().map(|(n, p)| (*n, p))
    }

    /// Liveness for fast-failover watch ports; unknown ports are not live.
    pub fn is_live(&self, no: u32) -> bool {
        self.ports.get(&no).is_some_and(PortInfo::is_live)
    }

    /// The standard ports (not LOCAL) that ALL (`flood == false`) or FLOOD
    /// outputs to: every forwarding port except the ingress port. FLOOD
    /// additionally skips ports whose state is BLOCKED (by a loop-avoidance
    /// protocol outside OpenFlow).
    pub fn flood_set(&self, in_port: u32, flood: bool) -> impl Iterator<Item = u32> + '_ {
        self.ports
            .iter()
            .filter(move |(n, p)| {
                **n != in_port
                    && **n <= port_no::MAX
                    && p.can_forward()
                    && !(flood && p.state & state::BLOCKED != 0)
            })
            .map(|(n, _)| *n)
    }
}
