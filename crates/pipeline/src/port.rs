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

/// Port numbers below this are kept in a directly indexed array.
const DIRECT: u32 = 1024;

/// The port set, ordered by port number (so ALL/FLOOD output is
/// deterministic).
///
/// Looked up once or twice per packet (ingress checks, every output), so
/// the usual port numbers (below [`DIRECT`]) sit in an array indexed by
/// number: one bounds check instead of a tree walk. Higher numbers (LOCAL,
/// and the rare switch with huge port numbers) live in an ordered map.
/// Every port number of `direct` is smaller than every one of `others`, so
/// iterating `direct` then `others` is in port-number order.
#[derive(Debug, Clone, Default)]
pub struct PortTable {
    direct: Vec<Option<PortInfo>>,
    others: BTreeMap<u32, PortInfo>,
}

impl PortTable {
    pub fn new() -> PortTable {
        PortTable::default()
    }

    /// Adds or replaces a port (a standard port, or LOCAL).
    pub fn insert(&mut self, no: u32, info: PortInfo) {
        if no < DIRECT {
            let i = no as usize;
            if self.direct.len() <= i {
                self.direct.resize(i + 1, None);
            }
            self.direct[i] = Some(info);
        } else {
            self.others.insert(no, info);
        }
    }

    pub fn remove(&mut self, no: u32) -> Option<PortInfo> {
        if no < DIRECT {
            self.direct.get_mut(no as usize).and_then(Option::take)
        } else {
            self.others.remove(&no)
        }
    }

    #[inline]
    pub fn get(&self, no: u32) -> Option<&PortInfo> {
        if no < DIRECT {
            self.direct.get(no as usize).and_then(Option::as_ref)
        } else {
            self.others.get(&no)
        }
    }

    pub fn get_mut(&mut self, no: u32) -> Option<&mut PortInfo> {
        if no < DIRECT {
            self.direct.get_mut(no as usize).and_then(Option::as_mut)
        } else {
            self.others.get_mut(&no)
        }
    }

    pub fn contains(&self, no: u32) -> bool {
        self.get(no).is_some()
    }

    /// Every port, by number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &PortInfo)> {
        self.direct
            .iter()
            .enumerate()
            .filter_map(|(n, p)| p.as_ref().map(|p| (n as u32, p)))
            .chain(self.others.iter().map(|(n, p)| (*n, p)))
    }

    /// Liveness for fast-failover watch ports; unknown ports are not live.
    pub fn is_live(&self, no: u32) -> bool {
        self.get(no).is_some_and(PortInfo::is_live)
    }

    /// The standard ports (not LOCAL) that ALL (`flood == false`) or FLOOD
    /// outputs to: every forwarding port except the ingress port. FLOOD
    /// additionally skips ports whose state is BLOCKED (by a loop-avoidance
    /// protocol outside OpenFlow).
    pub fn flood_set(&self, in_port: u32, flood: bool) -> impl Iterator<Item = u32> + '_ {
        self.iter()
            .filter(move |(n, p)| {
                *n != in_port
                    && *n <= port_no::MAX
                    && p.can_forward()
                    && !(flood && p.state & state::BLOCKED != 0)
            })
            .map(|(n, _)| n)
    }
}
