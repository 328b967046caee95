//! Trunks at the datapath's start (`super::trunk`): their logical ports
//! join the port list, and the workers' receive sources get the trunks
//! instead of the logical ports (which receive nothing themselves).

use super::trunk::{Trunk, TrunkRx};
use super::worker::RxSource;
use super::{Datapath, SwitchPorts};
use ports::Port;
use std::sync::Arc;

/// A trunk to start with: its opened interface, its VLAN range and the
/// number of the logical port of `first_vid`.
pub struct TrunkOpen {
    pub io: Box<dyn Port>,
    pub first_vid: u16,
    pub last_vid: u16,
    pub first_no: u32,
}

/// Makes the trunks and appends their logical ports to `ports`.
pub(crate) fn expand(
    trunks: Vec<TrunkOpen>,
    ports: &mut Vec<(u32, Box<dyn Port>)>,
) -> Vec<Arc<Trunk>> {
    trunks
        .into_iter()
        .map(|t| {
            let trunk = Trunk::new(t.io, t.first_vid, t.last_vid, t.first_no);
            ports.extend(trunk.logical_ports());
            trunk
        })
        .collect()
}

/// [`Datapath::deal_rx`] for the ordinary ports, then each trunk's
/// sources: one per worker where the trunk splits reception, else the
/// whole trunk to one worker (round robin over trunks).
pub(crate) fn deal_rx(ports: &SwitchPorts, trunks: &[Arc<Trunk>], n: usize) -> Vec<Vec<RxSource>> {
    let plain: SwitchPorts = Arc::new(
        ports
            .iter()
            .filter(|(no, _)| !trunks.iter().any(|t| t.has_port(**no)))
            .map(|(no, p)| (*no, p.clone()))
            .collect(),
    );
    let mut rx = Datapath::deal_rx(&plain, n);
    for (i, t) in trunks.iter().enumerate() {
        let sources = TrunkRx::deal(t, n);
        if sources.len() == n {
            for (list, s) in rx.iter_mut().zip(sources) {
                list.push(RxSource::Trunk(s));
            }
        } else {
            let w = i % n.max(1);
            if let Some(list) = rx.get_mut(w) {
                list.extend(sources.into_iter().map(RxSource::Trunk));
            }
        }
    }
    rx
}

impl Datapath {
    /// The trunk whose logical port `no` is, if any.
    pub fn trunk_of(&self, no: u32) -> Option<&Arc<Trunk>> {
        self.trunks.iter().find(|t| t.has_port(no))
    }
}
