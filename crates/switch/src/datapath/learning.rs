//! The L2 learning switch of fail-standalone mode and of OFPP_NORMAL.
//!
//! A MAC table maps a source address to the port it was last seen on and
//! when. Frames to a known, fresh unicast address go to that port (or are
//! dropped when that is the ingress port); everything else floods (every
//! forwarding port but the ingress, BLOCKED ports excluded), which is loop
//! free on a tree topology. Entries age out after `aging`.

use ofp::port::port_no;
use pipeline::{Nanos, PortTable};
use std::collections::HashMap;

/// Default MAC aging time: 300 s like most bridges.
pub const DEFAULT_AGING: Nanos = 300 * 1_000_000_000;
/// At most this many addresses are learned (old ones are not evicted; new
/// ones flood until entries age out).
pub const MAX_MACS: usize = 8192;

#[derive(Debug, Clone)]
pub struct MacTable {
    /// Address -> (port, last seen).
    macs: HashMap<[u8; 6], (u32, Nanos)>,
    pub aging: Nanos,
}

impl Default for MacTable {
    fn default() -> Self {
        MacTable {
            macs: HashMap::new(),
            aging: DEFAULT_AGING,
        }
    }
}

fn is_multicast(mac: &[u8; 6]) -> bool {
    mac[0] & 1 != 0
}

impl MacTable {
    /// Learns from `frame` received on `in_port` and calls `emit` with each
    /// port to send it out of (no allocation).
    pub fn forward(
        &mut self,
        in_port: u32,
        frame: &[u8],
        ports: &PortTable,
        now: Nanos,
        mut emit: impl FnMut(u32),
    ) {
        let (Some(dst), Some(src)) = (
            frame.get(0..6).and_then(|s| <[u8; 6]>::try_from(s).ok()),
            frame.get(6..12).and_then(|s| <[u8; 6]>::try_from(s).ok()),
        ) else {
            return;
        };
        if !is_multicast(&src) && (self.macs.len() < MAX_MACS || self.macs.contains_key(&src)) {
            self.macs.insert(src, (in_port, now));
        }
        if !is_multicast(&dst) {
            if let Some(&(port, seen)) = self.macs.get(&dst) {
                if now.saturating_sub(seen) < self.aging {
                    if port != in_port && ports.get(port).is_some_and(|p| p.can_forward()) {
                        emit(port);
                    }
                    return;
                }
                self.macs.remove(&dst);
            }
        }
        // Like a bridge's own interface, the LOCAL port (when present) is
        // part of the learning switch's flood domain; OpenFlow's ALL/FLOOD
        // keep to standard ports (spec §4.5), so it is added here only.
        ports.flood_set(in_port, true).for_each(&mut emit);
        if in_port != port_no::LOCAL && ports.get(port_no::LOCAL).is_some_and(|p| p.can_forward()) {
            emit(port_no::LOCAL);
        }
    }

    /// Forgets the addresses learned on `port` (link down).
    pub fn flush_port(&mut self, port: u32) {
        self.macs.retain(|_, (p, _)| *p != port);
    }

    pub fn len(&self) -> usize {
        self.macs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.macs.is_empty()
    }
}
