//! Ports added, removed and re-attached while the switch runs, and the
//! port queues' configuration (`super::queues`).
//!
//! # Port set changes
//!
//! The port set ([`super::SwitchPorts`]) is an immutable map behind an
//! `Arc`: a change builds a new map and hands it to every worker in an
//! [`Op::Ports`] (between batches, like every operation), so the packet
//! path reads its own copy and takes no new lock. Adding a port:
//!
//! 1. the daemon's [`PortOpener`] opens the interface (same backend rules
//!    as at start);
//! 2. [`Op::Ports`] with the new map: every thread opens its transmit
//!    handle ([`super::worker::TxPorts::sync`]);
//! 3. [`Op::AddRx`]: its receive side goes to the workers, split over all
//!    of them where the backend can (as at start), else whole to one;
//! 4. [`Op::Port`]: the pipeline's port table gets it (flows may output
//!    to it from now on); PORT_STATUS reason ADD goes to the controllers.
//!
//! Removing one reverses it: [`Op::RemovePort`] (the pipeline stops
//! using it), then [`Op::Ports`] without it (workers drop its receive
//! source and transmit handles; the port closes when the last one is
//! dropped), PORT_STATUS reason DELETE. Flow entries that output to it
//! stay (OpenFlow 1.3.5 §7.4.3: a port deletion changes no flow table;
//! their output to a missing port is dropped); fast-failover groups
//! watching it see it not live. Its learned MAC addresses are forgotten.
//!
//! # Port numbers
//!
//! Ports opened at start are numbered 1, 2, ... in configuration order. A
//! port added without a number gets one above every number used since the
//! switch started, so a number is never reused for another interface
//! while the switch runs (a controller's flows for a deleted port cannot
//! catch a new one). A number may be asked for explicitly (any free
//! number from 1 to OFPP_MAX).
//!
//! # Interfaces that disappear and come back
//!
//! A port whose interface disappears stays in the port set with its
//! number, reported LINK_DOWN (PORT_STATUS MODIFY, from the link check).
//! When an interface of that name appears again (a new interface index),
//! the port is re-attached to it: the same number, reopened with the same
//! backend, its queues set up again (PORT_STATUS MODIFY with the new
//! device's address and state; another follows when its link comes up).
//! `oxflow ctl del-port` removes a port for good.

use super::ops::{Op, RxHandoff};
use super::queues::{self, Htb, PortQueues, Queue, QueueSpec};
use super::worker::RxSource;
use super::{Datapath, DpEvent, SwitchPort, SwitchPorts};
use ofp::port::port_no;
use pipeline::PortInfo;
use ports::Port;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Opens an interface as a port (the daemon's backend choice), or says
/// why not.
pub type PortOpener = Box<dyn Fn(&str) -> Result<Box<dyn Port>, String> + Send>;

/// State of run-time port and queue changes, kept by the [`Datapath`].
#[derive(Default)]
pub struct Runtime {
    pub(crate) opener: Option<PortOpener>,
    /// Lowest number a port added without one may get (module comment).
    next_no: u32,
    /// Ports with queues: their queues and the qdisc serving them.
    qos: BTreeMap<u32, Qos>,
    /// Interface index each port was opened on (re-attachment).
    ifindex: BTreeMap<u32, u32>,
}

/// One port's queues and the htb qdisc that shapes them.
struct Qos {
    queues: Arc<PortQueues>,
    /// The speed the configuration gave, if any (kept across changes).
    configured_speed: Option<u64>,
    _htb: Htb,
}

/// Which port a request names: a number or an interface / port name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortRef {
    No(u32),
    Name(String),
}

impl std::fmt::Display for PortRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortRef::No(n) => write!(f, "{n}"),
            PortRef::Name(s) => write!(f, "\"{s}\""),
        }
    }
}

/// The interface index of `name` (sysfs), if it exists.
fn ifindex_of(name: &str) -> Option<u32> {
    std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Datapath {
    /// Registers how interfaces are opened for [`Datapath::add_port`];
    /// without one, ports cannot be added at run time.
    pub fn set_port_opener(&mut self, opener: PortOpener) {
        self.rt.opener = Some(opener);
        for (no, sp) in self.ports.iter() {
            if let Some(i) = ifindex_of(&sp.name) {
                self.rt.ifindex.insert(*no, i);
            }
        }
    }

    /// The number of the port named `name` (its interface name).
    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        self.ports.values().find(|p| p.name == name).map(|p| p.no)
    }

    fn resolve(&self, r: &PortRef) -> Result<u32, String> {
        match r {
            PortRef::No(n) if self.ports.contains_key(n) => Ok(*n),
            PortRef::No(n) => Err(format!("no port {n}")),
            PortRef::Name(s) => self
                .port_by_name(s)
                .ok_or_else(|| format!("no port named \"{s}\"")),
        }
    }

    /// Adds interface `interface` as port `no` (or the next free number:
    /// module comment) and returns its number. Errors say what is wrong:
    /// an interface that does not exist or is already a port, a number in
    /// use or out of range.
    pub fn add_port(&mut self, interface: &str, no: Option<u32>) -> Result<u32, String> {
        if let Some(p) = self.port_by_name(interface) {
            return Err(format!("interface \"{interface}\" is already port {p}"));
        }
        if let Some(t) = self.trunks.iter().find(|t| t.interface == interface) {
            return Err(format!(
                "interface \"{interface}\" is a trunk (ports {}-{})",
                t.first_no,
                t.first_no as usize + t.logical.len() - 1
            ));
        }
        if interface.is_empty()
            || interface.len() > 15
            || interface.contains(['/', ' ', '\0'])
            || interface == "."
            || interface == ".."
        {
            return Err(format!(
                "bad interface name \"{interface}\" (1 to 15 characters, no '/' or spaces)"
            ));
        }
        let no = match no {
            Some(n) if n == 0 || n > port_no::MAX => {
                return Err(format!(
                    "port number {n} out of range (1 to {})",
                    port_no::MAX
                ))
            }
            Some(n) if self.ports.contains_key(&n) => {
                return Err(format!("port number {n} is in use"))
            }
            Some(n) => n,
            None => self.next_free_no()?,
        };
        let opener = self
            .rt
            .opener
            .as_ref()
            .ok_or("this switch cannot add ports at run time")?;
        let io = opener(interface).map_err(|e| format!("interface \"{interface}\": {e}"))?;
        self.attach(no, io, 0);
        if no <= port_no::MAX {
            self.rt.next_no = self.rt.next_no.max(no.saturating_add(1));
        }
        if let Some(desc) = self.port_desc(no) {
            self.pending
                .push(DpEvent::PortStatus(ofp::message::PortStatus {
                    reason: ofp::message::port_reason::ADD,
                    desc,
                }));
        }
        tracing::info!("port {no}: {interface} added");
        Ok(no)
    }

    /// A number above every one used since the start (module comment).
    fn next_free_no(&mut self) -> Result<u32, String> {
        let used = self
            .ports
            .keys()
            .copied()
            .filter(|n| *n <= port_no::MAX)
            .max()
            .unwrap_or(0);
        let n = self.rt.next_no.max(used.saturating_add(1)).max(1);
        if n > port_no::MAX {
            return Err("no port numbers left".into());
        }
        Ok(n)
    }

    /// Puts `io` into the port set as `no` with config bits `config` (steps
    /// 2-4 of the module comment; no port-status).
    fn attach(&mut self, no: u32, mut io: Box<dyn Port>, config: u32) {
        let state = if io.link_up() {
            ofp::port::state::LIVE
        } else {
            ofp::port::state::LINK_DOWN
        };
        let n = self.workers.len().max(1);
        let split = if n > 1 {
            match io.rx_queues(n) {
                Ok(h) if h.len() == n => Some(h),
                Ok(_) => None,
                Err(e) => {
                    tracing::info!(port = no, "reception not split over workers: {e}");
                    None
                }
            }
        } else {
            None
        };
        let sources: Vec<RxSource> = match split {
            Some(handles) => handles
                .into_iter()
                .map(|rx| RxSource::Own { no, rx })
                .collect(),
            None => vec![RxSource::Shared { no }],
        };
        if let Some(i) = ifindex_of(io.name()) {
            self.rt.ifindex.insert(no, i);
        }
        let sp = SwitchPort {
            no,
            name: io.name().to_string(),
            hw_addr: io.hw_addr(),
            io: Mutex::new(io),
            added_at: self.now(),
            rx_malformed: Default::default(),
        };
        let mut map = (*self.ports).clone();
        map.insert(no, Arc::new(sp));
        let ports: SwitchPorts = Arc::new(map);
        self.ports = ports.clone();
        self.tx.sync(&ports);
        self.graph_ctl.set_ports(&ports);
        self.broadcast(Op::Ports(ports));
        self.broadcast(Op::AddRx(Arc::new(RxHandoff::new(sources))));
        let info = PortInfo { config, state };
        self.pipeline.ports.insert(no, info);
        self.broadcast(Op::Port(no, info));
        self.barrier();
    }

    /// Takes port `no` out of the port set (module comment); returns its
    /// last config bits.
    fn detach(&mut self, no: u32) -> u32 {
        let config = self.pipeline.ports.get(no).map_or(0, |i| i.config);
        self.pipeline.ports.remove(no);
        self.broadcast(Op::RemovePort(no));
        let mut map = (*self.ports).clone();
        map.remove(&no);
        let ports: SwitchPorts = Arc::new(map);
        self.ports = ports.clone();
        self.tx.sync(&ports);
        self.graph_ctl.set_ports(&ports);
        self.broadcast(Op::Ports(ports));
        self.barrier();
        self.learning.flush_port(no);
        self.rt.ifindex.remove(&no);
        config
    }

    /// Removes a port (by number or name) and returns its number. The
    /// LOCAL port cannot be removed.
    pub fn del_port(&mut self, which: &PortRef) -> Result<u32, String> {
        let no = self.resolve(which)?;
        if no == port_no::LOCAL {
            return Err("the LOCAL port cannot be removed".into());
        }
        if let Some(t) = self.trunk_of(no) {
            return Err(format!(
                "port {no} is a VLAN of trunk {}; trunks change with a restart",
                t.interface
            ));
        }
        let name = self.ports.get(&no).map(|p| p.name.clone());
        if let Some(n) = name.as_deref() {
            if let Some(m) = self.graph_ctl.refuses_delete(n) {
                return Err(format!(
                    "port {no} ({n}) is used by module `{m}` of the data-path graph; \
                     remove that module with graph-change first"
                ));
            }
        }
        let desc = self.port_desc(no);
        self.detach(no);
        if self.rt.qos.remove(&no).is_some() {
            self.update_queue_ids();
        }
        if let Some(desc) = desc {
            self.pending
                .push(DpEvent::PortStatus(ofp::message::PortStatus {
                    reason: ofp::message::port_reason::DELETE,
                    desc,
                }));
        }
        tracing::info!("port {no}: {} removed", name.unwrap_or_default());
        Ok(no)
    }

    /// Re-attaches ports whose interface came back under a new index
    /// (module comment); called with the link check.
    pub(crate) fn reattach_ports(&mut self) {
        if self.rt.opener.is_none() {
            return;
        }
        let stale: Vec<(u32, String)> = self
            .ports
            .iter()
            .filter(|(no, _)| **no <= port_no::MAX)
            .filter_map(|(no, sp)| {
                let now = ifindex_of(&sp.name)?;
                (self.rt.ifindex.get(no) != Some(&now)).then(|| (*no, sp.name.clone()))
            })
            .collect();
        for (no, name) in stale {
            let Some(opener) = self.rt.opener.as_ref() else {
                return;
            };
            match opener(&name) {
                Ok(io) => {
                    // (The old qdisc went with the old interface.)
                    let qos = self.rt.qos.remove(&no);
                    let config = self.detach(no);
                    self.attach(no, io, config);
                    tracing::info!("port {no}: interface {name} is back, re-attached");
                    // A new device (new address, maybe another state).
                    if let Some(desc) = self.port_desc(no) {
                        self.pending
                            .push(DpEvent::PortStatus(ofp::message::PortStatus {
                                reason: ofp::message::port_reason::MODIFY,
                                desc,
                            }));
                    }
                    if let Some(q) = qos {
                        let specs: Vec<QueueSpec> =
                            q.queues.queues.iter().map(|x| x.spec).collect();
                        if let Err(e) = self.set_port_queues(no, q.configured_speed, &specs) {
                            tracing::warn!("port {no}: queues not restored: {e}");
                        }
                    }
                }
                Err(e) => {
                    // Try again on the next check.
                    tracing::debug!("port {no}: cannot re-attach {name} yet: {e}");
                }
            }
        }
    }

    /// The queues of port `no` (empty if it has none).
    pub fn port_queues(&self, no: u32) -> Option<Arc<PortQueues>> {
        self.rt.qos.get(&no).map(|q| q.queues.clone())
    }

    /// Every port with queues, by number.
    pub fn ports_with_queues(&self) -> impl Iterator<Item = (u32, &PortQueues)> {
        self.rt.qos.iter().map(|(no, q)| (*no, &*q.queues))
    }

    /// The speed port `no`'s queue rates are relative to: `speed` if
    /// given, else what the interface reports, else
    /// [`queues::DEFAULT_SPEED`].
    fn queue_speed(&self, no: u32, speed: Option<u64>) -> u64 {
        speed
            .or_else(|| self.rt.qos.get(&no).and_then(|q| q.configured_speed))
            .or_else(|| {
                self.ports
                    .get(&no)
                    .and_then(|p| queues::interface_speed(&p.name))
            })
            .unwrap_or(queues::DEFAULT_SPEED)
    }

    /// Sets port `no`'s queues to `specs` (none: remove its queues and
    /// qdisc), relative to `speed` (bit/s; see [`Self::queue_speed`]).
    /// Counters of queues that stay are kept. Errors name the port and
    /// queue at fault, and change nothing.
    pub fn set_port_queues(
        &mut self,
        no: u32,
        given: Option<u64>,
        specs: &[QueueSpec],
    ) -> Result<(), String> {
        let Some(sp) = self.ports.get(&no).cloned() else {
            return Err(format!("no port {no}"));
        };
        let at = |e: String| format!("port {no} ({}): {e}", sp.name);
        if no > port_no::MAX {
            return Err(at("reserved ports have no queues".into()));
        }
        let speed = self.queue_speed(no, given);
        queues::check(specs, speed).map_err(at)?;
        let now = self.now();
        let old = self.rt.qos.get(&no).map(|q| q.queues.clone());
        let mut sorted: Vec<QueueSpec> = specs.to_vec();
        sorted.sort_by_key(|q| q.id);
        let pq = PortQueues {
            speed,
            queues: sorted
                .iter()
                .map(|s| {
                    let kept = old.as_ref().and_then(|o| o.get(s.id));
                    Queue {
                        spec: *s,
                        counters: kept.map(|k| k.counters.clone()).unwrap_or_default(),
                        added_at: kept.map_or(now, |k| k.added_at),
                    }
                })
                .collect(),
        };
        // The control thread's handles first: a backend that cannot have
        // queues refuses here, before anything changed.
        self.tx.set_queues(no, &pq).map_err(at)?;
        // A changed set of classes: start from a fresh qdisc.
        let old_qos = self.rt.qos.remove(&no);
        let configured_speed = given.or(old_qos.as_ref().and_then(|q| q.configured_speed));
        drop(old_qos);
        let pq = Arc::new(pq);
        if !pq.is_empty() {
            match Htb::install(&sp.name, speed, &sorted) {
                Ok(htb) => {
                    self.rt.qos.insert(
                        no,
                        Qos {
                            queues: pq.clone(),
                            configured_speed,
                            _htb: htb,
                        },
                    );
                }
                Err(e) => {
                    let _ = self.tx.set_queues(no, &PortQueues::default());
                    self.broadcast(Op::Queues(no, Arc::default()));
                    self.update_queue_ids();
                    return Err(at(e));
                }
            }
        }
        self.broadcast(Op::Queues(no, pq));
        self.update_queue_ids();
        self.barrier();
        Ok(())
    }

    /// The pipeline's set of queue ids some port has.
    fn update_queue_ids(&mut self) {
        self.pipeline.queue_ids = self
            .rt
            .qos
            .values()
            .flat_map(|q| q.queues.queues.iter().map(|x| x.spec.id))
            .collect();
    }
}
