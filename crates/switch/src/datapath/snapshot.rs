//! The datapath's state as the OpenFlow messages that re-create it
//! (`ofp::snapshot`), and restoring it from them, for `--state-dir`
//! (`crate::persist`).
//!
//! What a snapshot holds: the switch config (OFPT_SET_CONFIG), each port's
//! config bits (as port-mods), every meter, group and flow entry (with
//! cookie, priority, flags and timeouts). What it does not: counters
//! (restored entries, groups and meters start at zero), and the time
//! already spent by a flow's timeouts (they start again at the restore).
//! Tables have no configurable state (table-mod accepts no config bits).

use ofp::group::{command as group_command, GroupMod};
use ofp::message::{Message, PortMod};
use ofp::meter::{command as meter_command, MeterMod};
use ofp::multipart::FlowStats;
use ofp::port::config;
use ofp::snapshot::{flow_mod_of, order_groups};
use ofp::OfpMessage;

use super::bundle::Bundled;
use super::Datapath;

/// Port config bits a snapshot keeps.
const PORT_CONFIG_BITS: u32 =
    config::PORT_DOWN | config::NO_RECV | config::NO_FWD | config::NO_PACKET_IN;

impl Datapath {
    /// The messages that re-create the current state, in the order
    /// `ofp::snapshot` describes (xid 0).
    pub fn state_messages(&self) -> Vec<OfpMessage> {
        let mut out = vec![Message::SetConfig(self.switch_config)];
        for (no, info) in self.pipeline.ports.iter() {
            let Some(sp) = self.ports.get(&no) else {
                continue;
            };
            if info.config & PORT_CONFIG_BITS != 0 {
                out.push(Message::PortMod(PortMod {
                    port_no: no,
                    hw_addr: sp.hw_addr,
                    config: info.config & PORT_CONFIG_BITS,
                    mask: PORT_CONFIG_BITS,
                    advertise: 0,
                }));
            }
        }
        for m in self.pipeline.meters.iter() {
            out.push(Message::MeterMod(MeterMod {
                command: meter_command::ADD,
                flags: m.flags,
                meter_id: m.id,
                bands: m.bands.iter().map(|b| b.band.clone()).collect(),
            }));
        }
        let groups = self
            .pipeline
            .groups
            .iter()
            .map(|g| GroupMod {
                command: group_command::ADD,
                group_type: g.group_type,
                group_id: g.id,
                buckets: g.buckets.clone(),
            })
            .collect();
        out.extend(order_groups(groups).into_iter().map(Message::GroupMod));
        for t in self.pipeline.tables() {
            for e in t.entries() {
                let s = FlowStats {
                    table_id: t.id,
                    duration_sec: 0,
                    duration_nsec: 0,
                    priority: e.priority,
                    idle_timeout: e.idle_timeout,
                    hard_timeout: e.hard_timeout,
                    flags: e.flags(),
                    cookie: e.cookie(),
                    packet_count: 0,
                    byte_count: 0,
                    match_: ofp::oxm::Match::clone(&e.match_),
                    instructions: e.instructions.to_vec(),
                };
                out.push(Message::FlowMod(flow_mod_of(&s)));
            }
        }
        out.into_iter().map(|m| OfpMessage::new(0, m)).collect()
    }

    /// Applies a snapshot's messages as one atomic commit (the `bundle`
    /// machinery): all of them or none. Port-mods of ports the switch no
    /// longer has are skipped, and port-mods take the port's current
    /// hardware address. On failure, says which message failed and why.
    pub fn restore(&mut self, msgs: Vec<OfpMessage>) -> Result<usize, String> {
        let mut bundled = Vec::with_capacity(msgs.len());
        for (i, mut m) in msgs.into_iter().enumerate() {
            if let Message::PortMod(pm) = &mut m.body {
                match self.ports.get(&pm.port_no) {
                    Some(sp) => pm.hw_addr = sp.hw_addr,
                    None => {
                        tracing::warn!(port = pm.port_no, "state: port gone, its config skipped");
                        continue;
                    }
                }
            }
            // The xid numbers the message, so a failure can name it.
            m.xid = i as u32;
            let raw = m.encode();
            bundled.push(Bundled { msg: m, raw });
        }
        let n = bundled.len();
        let describe: Vec<String> = bundled
            .iter()
            .map(|b| format!("{:?}", b.msg.body).chars().take(300).collect())
            .collect();
        self.commit(bundled).map(|()| n).map_err(|e| {
            let what = match &e.body {
                Message::Error(m) => match m.typed() {
                    Some(c) => format!("{c:?}"),
                    None => format!("{m:?}"),
                },
                b => format!("{b:?}"),
            };
            let msg = describe.get(e.xid as usize).cloned().unwrap_or_default();
            format!("message {} refused with {what}: {msg}", e.xid)
        })
    }
}

/// Persistence hooks (`crate::persist` module comment "When it is
/// written").
impl Datapath {
    pub fn set_persister(&mut self, p: crate::persist::Persister) {
        self.persist = Some(p);
    }

    /// The state changed.
    pub(super) fn mark_dirty(&mut self) {
        if let Some(p) = self.persist.as_mut() {
            p.dirty = true;
        }
    }

    /// Writes the state if it changed since the last write.
    pub fn save_if_dirty(&mut self) {
        if !self.persist.as_ref().is_some_and(|p| p.dirty) {
            return;
        }
        let bytes = ofp::snapshot::encode(&self.state_messages());
        if let Some(p) = self.persist.as_mut() {
            if let Err(e) = p.write(&bytes) {
                tracing::error!("state: writing {}: {e}", p.path().display());
            }
        }
    }

    /// [`Self::save_if_dirty`] once the last write is
    /// `crate::persist::WRITE_INTERVAL` old.
    pub fn save_if_due(&mut self) {
        if self
            .persist
            .as_ref()
            .is_some_and(|p| p.dirty && p.last_write.elapsed() >= crate::persist::WRITE_INTERVAL)
        {
            self.save_if_dirty();
        }
    }

    /// Snapshots written so far (0 without a state directory).
    pub fn state_writes(&self) -> u64 {
        self.persist.as_ref().map_or(0, |p| p.writes)
    }
}

#[cfg(test)]
impl Datapath {
    /// [`Self::mark_dirty`] for tests outside this module (the channel
    /// marks it when it hands over a modification).
    pub(crate) fn mark_dirty_for_tests(&mut self) {
        self.mark_dirty();
    }
}
