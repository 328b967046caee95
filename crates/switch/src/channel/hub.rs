//! The hub: the control thread's view of every open controller connection.
//!
//! Data structure: one map from connection id to [`ConnEntry`] (its outgoing
//! queue, auxiliary id and controller group), and one map from group id to
//! [`GroupState`] (role and async config). A *group* is one controller: its
//! main connection (auxiliary_id 0) plus the auxiliary connections the
//! switch opened to the same controller; the spec gives auxiliaries the role
//! and async config of their main connection, so those live per group. A
//! passive listener makes a new group per accepted connection; an active
//! connector keeps one group for its main and aux connections.
//!
//! Everything sits behind one `std::sync::Mutex`: every critical section is
//! a few map operations and never awaits.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use ofp::error::ErrorCode;
use ofp::message::{AsyncConfig, FeaturesReply, Message, Role};
use ofp::OfpMessage;
use tokio::sync::{mpsc, watch};

use super::async_config::{default_async_config, wants};
use super::role::{ControllerRole, Election};

/// Id of one connection, unique for the life of the process.
pub type ConnId = u64;
/// Id of one controller group (see the module comment).
pub type GroupId = u64;

/// Queue of messages to write on one connection.
pub type ConnSender = mpsc::Sender<OfpMessage>;

/// What the datapath learns about the connection a request came from; the
/// sender lets it answer later (e.g. a barrier reply after the workers
/// acknowledged).
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub id: ConnId,
    pub group: GroupId,
    pub auxiliary_id: u8,
    pub role: ControllerRole,
    pub peer: SocketAddr,
    pub tx: ConnSender,
}

#[derive(Debug)]
struct ConnEntry {
    group: GroupId,
    auxiliary_id: u8,
    /// Counts toward "a controller is connected" (fail mode); false for
    /// management listeners.
    is_controller: bool,
    tx: ConnSender,
}

#[derive(Debug, Clone, Copy)]
struct GroupState {
    role: ControllerRole,
    async_config: AsyncConfig,
}

impl Default for GroupState {
    fn default() -> Self {
        GroupState {
            role: ControllerRole::Equal,
            async_config: default_async_config(),
        }
    }
}

/// Whether any controller is connected, for fail-secure / fail-standalone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerStatus {
    /// At least this many controller connections are up.
    Connected(usize),
    /// No controller connection since this instant (process start if none
    /// ever connected).
    DisconnectedSince(Instant),
}

#[derive(Debug)]
struct Inner {
    conns: HashMap<ConnId, ConnEntry>,
    groups: HashMap<GroupId, GroupState>,
    election: Election,
}

/// Shared by every connection task; see the module comment.
#[derive(Debug)]
pub struct Hub {
    inner: Mutex<Inner>,
    features: FeaturesReply,
    next_id: AtomicU64,
    status: watch::Sender<ControllerStatus>,
    /// Async messages dropped because a connection's queue was full.
    dropped_async: AtomicU64,
    /// Messages refused by the decoder (answered with OFPT_ERROR).
    malformed: AtomicU64,
    /// OpenFlow messages received and written, over all connections
    /// (the metrics endpoint reports them).
    received: AtomicU64,
    sent: AtomicU64,
}

impl Hub {
    /// `features` answers FEATURES_REQUEST (its `auxiliary_id` is replaced
    /// per connection).
    pub fn new(features: FeaturesReply) -> Arc<Self> {
        Arc::new(Hub {
            inner: Mutex::new(Inner {
                conns: HashMap::new(),
                groups: HashMap::new(),
                election: Election::default(),
            }),
            features,
            next_id: AtomicU64::new(1),
            status: watch::channel(ControllerStatus::DisconnectedSince(Instant::now())).0,
            dropped_async: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the maps inconsistent
        // (every section is a handful of inserts/removes), so keep going.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn features(&self) -> FeaturesReply {
        self.features
    }

    /// A fresh id for a connection or group.
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Register a connection after its HELLO exchange. A main connection
    /// resets its group to the initial state (role EQUAL, default masks).
    pub fn register(
        &self,
        id: ConnId,
        group: GroupId,
        auxiliary_id: u8,
        is_controller: bool,
        tx: ConnSender,
    ) {
        let mut g = self.lock();
        if auxiliary_id == 0 {
            g.groups.insert(group, GroupState::default());
        } else {
            g.groups.entry(group).or_default();
        }
        g.conns.insert(
            id,
            ConnEntry {
                group,
                auxiliary_id,
                is_controller,
                tx,
            },
        );
        self.update_status(&g);
    }

    pub fn unregister(&self, id: ConnId) {
        let mut g = self.lock();
        if let Some(e) = g.conns.remove(&id) {
            let group = e.group;
            if !g.conns.values().any(|c| c.group == group) {
                g.groups.remove(&group);
            }
        }
        self.update_status(&g);
    }

    fn update_status(&self, g: &Inner) {
        let n = g.conns.values().filter(|c| c.is_controller).count();
        self.status.send_if_modified(|s| {
            let new = match (n, *s) {
                (0, ControllerStatus::DisconnectedSince(_)) => return false,
                (0, ControllerStatus::Connected(_)) => {
                    ControllerStatus::DisconnectedSince(Instant::now())
                }
                (n, _) => ControllerStatus::Connected(n),
            };
            let changed = new != *s;
            *s = new;
            changed
        });
    }

    /// Current controller status.
    pub fn controller_status(&self) -> ControllerStatus {
        *self.status.borrow()
    }

    /// A receiver that wakes on every status change (for fail mode).
    pub fn watch_status(&self) -> watch::Receiver<ControllerStatus> {
        self.status.subscribe()
    }

    pub fn role(&self, group: GroupId) -> ControllerRole {
        self.lock()
            .groups
            .get(&group)
            .map(|s| s.role)
            .unwrap_or_default()
    }

    /// Handle a ROLE_REQUEST from `group`: NOCHANGE queries; EQUAL needs no
    /// generation id; MASTER and SLAVE are checked against the election
    /// (stale -> ROLE_REQUEST_FAILED/STALE). A new master demotes every other
    /// master to slave (OpenFlow 1.3 sends them nothing; ROLE_STATUS is 1.4).
    /// Returns the ROLE_REPLY body.
    pub fn role_request(&self, group: GroupId, req: Role) -> Result<Role, ErrorCode> {
        let mut g = self.lock();
        let g = &mut *g;
        if let Some(new) = ControllerRole::from_wire(req.role) {
            if new != ControllerRole::Equal {
                g.election.check(req.generation_id)?;
            }
            if new == ControllerRole::Master {
                for (id, s) in g.groups.iter_mut() {
                    if *id != group && s.role == ControllerRole::Master {
                        s.role = ControllerRole::Slave;
                    }
                }
            }
            g.groups.entry(group).or_default().role = new;
        }
        let role = g.groups.get(&group).map(|s| s.role).unwrap_or_default();
        Ok(Role {
            role: role.to_wire(),
            generation_id: g.election.reply_generation_id(),
        })
    }

    pub fn async_config(&self, group: GroupId) -> AsyncConfig {
        self.lock()
            .groups
            .get(&group)
            .map(|s| s.async_config)
            .unwrap_or_else(default_async_config)
    }

    pub fn set_async_config(&self, group: GroupId, config: AsyncConfig) {
        self.lock().groups.entry(group).or_default().async_config = config;
    }

    /// Send an asynchronous message (PACKET_IN, PORT_STATUS, FLOW_REMOVED)
    /// to every controller whose role and async config want it. A PACKET_IN
    /// goes on the controller's auxiliary connection with the lowest id when
    /// it has one, else on its main connection. Never waits: a full queue
    /// drops the message (counted in [`Hub::dropped_async`]). Returns the
    /// number of connections it was queued on.
    pub fn send_async(&self, msg: &OfpMessage) -> usize {
        let g = self.lock();
        let mut sent = 0;
        for (group, state) in &g.groups {
            if !wants(&state.async_config, state.role, &msg.body) {
                continue;
            }
            let members = g.conns.values().filter(|c| c.group == *group);
            let target = if matches!(msg.body, Message::PacketIn(_)) {
                members
                    .min_by_key(|c| match c.auxiliary_id {
                        0 => u16::MAX,
                        a => u16::from(a),
                    })
                    .map(|c| &c.tx)
            } else {
                members
                    .filter(|c| c.auxiliary_id == 0)
                    .map(|c| &c.tx)
                    .next()
            };
            if let Some(tx) = target {
                match tx.try_send(msg.clone()) {
                    Ok(()) => sent += 1,
                    Err(_) => {
                        self.dropped_async.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }
        sent
    }

    pub fn dropped_async(&self) -> u64 {
        self.dropped_async.load(Ordering::Relaxed)
    }

    pub fn count_malformed(&self) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
    }

    /// Messages refused by the decoder on any connection so far.
    pub fn malformed_messages(&self) -> u64 {
        self.malformed.load(Ordering::Relaxed)
    }

    /// Number of open connections (controllers and management).
    pub fn connection_count(&self) -> usize {
        self.lock().conns.len()
    }

    /// Open connections as `(controller, management)` counts (auxiliary
    /// connections included).
    pub fn connection_counts(&self) -> (usize, usize) {
        let g = self.lock();
        let controllers = g.conns.values().filter(|c| c.is_controller).count();
        (controllers, g.conns.len() - controllers)
    }

    /// The role of controller group `group` while its main connection is
    /// up; `None` while it is not.
    pub fn main_connection_role(&self, group: GroupId) -> Option<ControllerRole> {
        let g = self.lock();
        let up = g
            .conns
            .values()
            .any(|c| c.group == group && c.auxiliary_id == 0);
        up.then(|| g.groups.get(&group).map(|s| s.role).unwrap_or_default())
    }

    pub fn count_received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_sent(&self) {
        self.sent.fetch_add(1, Ordering::Relaxed);
    }

    /// OpenFlow messages received on any connection so far.
    pub fn messages_received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// OpenFlow messages written on any connection so far.
    pub fn messages_sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}
