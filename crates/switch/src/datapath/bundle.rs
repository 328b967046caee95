//! Bundles (ONF EXT-230 for OpenFlow 1.3, `ofp::bundle`): per-connection
//! bundle state, and the atomic commit on the authoritative pipeline.
//!
//! # State
//!
//! [`Bundles`] maps each connection to its open bundles by id. A bundle
//! is `Open` (messages may be added) or `Closed` (only commit or discard);
//! it keeps its flags and the decoded messages in the order they were
//! added. Adding to an unknown id opens it implicitly (as Open vSwitch
//! does). Whatever goes wrong with a bundle (bad flags, add to a closed
//! bundle, second close, a failed commit) discards it; a commit discards it
//! too, successful or not. Closing a connection discards its bundles, and
//! a bundle left untouched for [`IDLE_TIMEOUT`] is discarded with a
//! BUNDLE_FAILED/TIMEOUT error (carrying the message that opened it) on
//! its connection.
//!
//! # Commit
//!
//! Every commit is atomic and ordered, whatever the flags ask: the
//! messages are applied in order to the authoritative pipeline with the
//! datapath in *staging* mode (`Datapath::staging`): operations meant for
//! the workers are held back instead of being sent. Before the first
//! message the pipeline is cloned; if a message fails, the clone (and the
//! switch config, which a restored snapshot also sets: `snapshot`) is put
//! back, the held operations and the flow-removed events are dropped, and
//! the workers never saw anything. If all succeed, the held operations go
//! to the workers as one [`Op::Bundle`], which a worker applies between
//! two batches, so no packet sees half a bundle. The commit reply goes out
//! after a barrier: like a barrier reply, it means the data plane already
//! forwards with the bundle's rules.
//!
//! Flow-mods with a `buffer_id` release their buffered packet only after a
//! successful commit (a rolled-back commit keeps the buffer).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ofp::bundle::{self, ctrl_type, AddError, BundleCtrl, BundleFailedCode, BundleMsg};
use ofp::error::{BadRequestCode, ErrorCode, ErrorMsg};
use ofp::message::{Message, NO_BUFFER};
use ofp::OfpMessage;

use super::ops::Op;
use super::Datapath;
use crate::channel::hub::{ConnId, ConnInfo, ConnSender};
use crate::channel::role::ControllerRole;

/// Open bundles one connection may hold.
pub const MAX_BUNDLES: usize = 256;
/// Messages one bundle may hold.
pub const MAX_MESSAGES: usize = 1 << 20;
/// A bundle no message touched for this long is discarded (as Open
/// vSwitch's default bundle idle timeout).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a bundle still takes messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Closed,
}

/// One message of a bundle: decoded, with its bytes (for its error data).
#[derive(Debug, Clone)]
pub struct Bundled {
    pub msg: OfpMessage,
    pub raw: Vec<u8>,
}

#[derive(Debug)]
struct Bundle {
    flags: u16,
    state: State,
    msgs: Vec<Bundled>,
    /// Last open, add or close.
    used: Instant,
    /// The first bytes of the message that opened it (the data of a
    /// TIMEOUT error).
    opener: Vec<u8>,
}

impl Bundle {
    fn new(flags: u16) -> Bundle {
        Bundle {
            flags,
            state: State::Open,
            msgs: Vec::new(),
            used: Instant::now(),
            opener: Vec::new(),
        }
    }
}

/// Every connection's bundles (module comment), and where to send a
/// connection's TIMEOUT errors.
#[derive(Debug, Default)]
pub struct Bundles {
    by_conn: HashMap<ConnId, HashMap<u32, Bundle>>,
    senders: HashMap<ConnId, ConnSender>,
}

type BResult<T> = Result<T, BundleFailedCode>;

impl Bundles {
    fn conn(&mut self, conn: ConnId) -> &mut HashMap<u32, Bundle> {
        self.by_conn.entry(conn).or_default()
    }

    /// OPEN_REQUEST. An id already in use is BAD_ID and discards that
    /// bundle (OpenFlow 1.4 §7.3.9.2, as Open vSwitch does).
    pub fn open(&mut self, conn: ConnId, id: u32, flags: u16) -> BResult<()> {
        if flags & !bundle::flags::ALL != 0 {
            return Err(BundleFailedCode::BadFlags);
        }
        let c = self.conn(conn);
        if c.remove(&id).is_some() {
            return Err(BundleFailedCode::BadId);
        }
        if c.len() >= MAX_BUNDLES {
            return Err(BundleFailedCode::OutOfBundles);
        }
        c.insert(id, Bundle::new(flags));
        Ok(())
    }

    /// CLOSE_REQUEST.
    pub fn close(&mut self, conn: ConnId, id: u32, flags: u16) -> BResult<()> {
        let c = self.conn(conn);
        let b = c.get_mut(&id).ok_or(BundleFailedCode::BadId)?;
        let err = if b.state == State::Closed {
            BundleFailedCode::BundleClosed
        } else if b.flags != flags {
            BundleFailedCode::BadFlags
        } else {
            b.state = State::Closed;
            return Ok(());
        };
        c.remove(&id);
        Err(err)
    }

    /// DISCARD_REQUEST.
    pub fn discard(&mut self, conn: ConnId, id: u32) -> BResult<()> {
        self.conn(conn)
            .remove(&id)
            .map(drop)
            .ok_or(BundleFailedCode::BadId)
    }

    /// ADD_MESSAGE of an already decoded and checked message; opens the
    /// bundle if the id is new.
    pub fn add(&mut self, conn: ConnId, id: u32, flags: u16, m: Bundled) -> BResult<()> {
        if flags & !bundle::flags::ALL != 0 {
            return Err(BundleFailedCode::BadFlags);
        }
        let c = self.conn(conn);
        if !c.contains_key(&id) {
            if c.len() >= MAX_BUNDLES {
                return Err(BundleFailedCode::OutOfBundles);
            }
            c.insert(id, Bundle::new(flags));
        }
        let b = c.get_mut(&id).ok_or(BundleFailedCode::BadId)?;
        let err = if b.state == State::Closed {
            BundleFailedCode::BundleClosed
        } else if b.flags != flags {
            BundleFailedCode::BadFlags
        } else if b.msgs.len() >= MAX_MESSAGES {
            BundleFailedCode::MsgTooMany
        } else {
            b.msgs.push(m);
            return Ok(());
        };
        c.remove(&id);
        Err(err)
    }

    /// COMMIT_REQUEST: takes the bundle's messages out (the bundle is gone
    /// whatever the outcome).
    pub fn take(&mut self, conn: ConnId, id: u32, flags: u16) -> BResult<Vec<Bundled>> {
        let b = self.conn(conn).remove(&id).ok_or(BundleFailedCode::BadId)?;
        if b.flags != flags {
            return Err(BundleFailedCode::BadFlags);
        }
        Ok(b.msgs)
    }

    /// A connection closed: its bundles are discarded.
    pub fn connection_closed(&mut self, conn: ConnId) {
        self.by_conn.remove(&conn);
        self.senders.remove(&conn);
    }

    /// Bundle `id` was just opened, added to or closed by `raw` on
    /// `conn`: it is not idle, and the first such message is its opener.
    pub fn touch(&mut self, conn: &ConnInfo, id: u32, raw: &[u8]) {
        if let Some(b) = self.conn(conn.id).get_mut(&id) {
            b.used = Instant::now();
            if b.opener.is_empty() {
                b.opener = raw.get(..raw.len().min(64)).unwrap_or_default().to_vec();
            }
            self.senders
                .entry(conn.id)
                .or_insert_with(|| conn.tx.clone());
        }
    }

    /// Discards the bundles idle for [`IDLE_TIMEOUT`] at `now`; returns
    /// the TIMEOUT errors to send and where (xid and data of each
    /// bundle's opener).
    pub fn expire(&mut self, now: Instant) -> Vec<(ConnSender, OfpMessage)> {
        let mut out = Vec::new();
        for (conn, bundles) in self.by_conn.iter_mut() {
            let idle: Vec<u32> = bundles
                .iter()
                .filter(|(_, b)| now.saturating_duration_since(b.used) >= IDLE_TIMEOUT)
                .map(|(id, _)| *id)
                .collect();
            for id in idle {
                let Some(b) = bundles.remove(&id) else {
                    continue;
                };
                tracing::info!(conn, bundle_id = id, "bundle idle too long: discarded");
                if let Some(tx) = self.senders.get(conn) {
                    let xid = b
                        .opener
                        .get(4..8)
                        .map_or(0, |x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]));
                    let e = BundleFailedCode::Timeout.error_msg(&b.opener);
                    out.push((tx.clone(), OfpMessage::new(xid, Message::Error(e))));
                }
            }
        }
        out
    }

    /// Bundles a connection holds.
    pub fn count(&self, conn: ConnId) -> usize {
        self.by_conn.get(&conn).map_or(0, HashMap::len)
    }
}

/// The messages a bundle may hold: the state changes that have an
/// all-or-nothing meaning on the pipeline.
fn bundlable(m: &Message) -> bool {
    matches!(
        m,
        Message::FlowMod(_) | Message::GroupMod(_) | Message::MeterMod(_) | Message::PortMod(_)
    )
}

impl Datapath {
    /// Handles an ONF bundle message (`ofp::bundle::is_bundle` holds for
    /// `e`); returns the replies.
    pub(super) fn bundle_message(
        &mut self,
        conn: &ConnInfo,
        xid: u32,
        e: &ofp::message::Experimenter,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        let bundle_err =
            |c: BundleFailedCode| vec![OfpMessage::new(xid, Message::Error(c.error_msg(raw)))];
        let std_err = |c: ErrorCode| {
            vec![OfpMessage::new(
                xid,
                Message::Error(ErrorMsg::from_request(c, raw)),
            )]
        };
        if conn.role == ControllerRole::Slave {
            return std_err(crate::channel::role::IS_SLAVE);
        }
        let m = match bundle::decode(e, xid) {
            Some(Ok(m)) => m,
            Some(Err(AddError::Decode(d))) => return std_err(d.code),
            Some(Err(AddError::Bundle(c))) => return bundle_err(c),
            None => return std_err(ErrorCode::BadRequest(BadRequestCode::BadExpType)),
        };
        match m {
            BundleMsg::Add(add) => {
                let inner = match OfpMessage::decode(&add.message) {
                    Ok(m) => m,
                    Err(d) => return std_err(d.code),
                };
                if !bundlable(&inner.body) {
                    return bundle_err(BundleFailedCode::MsgUnsup);
                }
                let m = Bundled {
                    msg: inner,
                    raw: add.message,
                };
                match self.bundles.add(conn.id, add.bundle_id, add.flags, m) {
                    Ok(()) => {
                        self.bundles.touch(conn, add.bundle_id, raw);
                        Vec::new()
                    }
                    Err(c) => bundle_err(c),
                }
            }
            BundleMsg::Ctrl(c) => {
                let (result, reply_type) = match c.ctrl_type {
                    ctrl_type::OPEN_REQUEST => (
                        self.bundles.open(conn.id, c.bundle_id, c.flags),
                        ctrl_type::OPEN_REPLY,
                    ),
                    ctrl_type::CLOSE_REQUEST => (
                        self.bundles.close(conn.id, c.bundle_id, c.flags),
                        ctrl_type::CLOSE_REPLY,
                    ),
                    ctrl_type::DISCARD_REQUEST => (
                        self.bundles.discard(conn.id, c.bundle_id),
                        ctrl_type::DISCARD_REPLY,
                    ),
                    ctrl_type::COMMIT_REQUEST => {
                        let msgs = match self.bundles.take(conn.id, c.bundle_id, c.flags) {
                            Ok(m) => m,
                            Err(code) => return bundle_err(code),
                        };
                        if let Err(failed) = self.commit(msgs) {
                            // The failing message's own error (its xid,
                            // its bytes), then the commit's.
                            let mut out = vec![*failed];
                            out.extend(bundle_err(BundleFailedCode::MsgFailed));
                            return out;
                        }
                        (Ok(()), ctrl_type::COMMIT_REPLY)
                    }
                    _ => (Err(BundleFailedCode::BadType), 0),
                };
                if result.is_ok() {
                    self.bundles.touch(conn, c.bundle_id, raw);
                }
                match result {
                    Ok(()) => vec![OfpMessage::new(
                        xid,
                        Message::Experimenter(
                            BundleCtrl::new(c.bundle_id, reply_type, 0).to_experimenter(),
                        ),
                    )],
                    Err(code) => bundle_err(code),
                }
            }
        }
    }

    /// Discards idle bundles, telling their connections
    /// ([`Bundles::expire`]).
    pub(super) fn expire_bundles(&mut self) {
        for (tx, m) in self.bundles.expire(Instant::now()) {
            // A full or closed connection does not get the notice.
            let _ = tx.try_send(m);
        }
    }

    /// Applies `msgs` all or none (module comment "Commit"). On failure,
    /// returns the failing message's error reply and nothing is changed.
    pub(super) fn commit(&mut self, msgs: Vec<Bundled>) -> Result<(), Box<OfpMessage>> {
        // Fold the workers' counters first: flow-removed messages of
        // entries the bundle deletes carry totals, and the snapshot holds
        // them.
        self.collect();
        let snapshot = self.pipeline.clone();
        let switch_config = self.switch_config;
        let pending = self.pending.len();
        self.staging = Some(Vec::new());
        let mut buffered = Vec::new();
        let mut failed = None;
        for Bundled { mut msg, raw } in msgs {
            if let Message::FlowMod(fm) = &mut msg.body {
                if fm.buffer_id != NO_BUFFER {
                    buffered.push(fm.buffer_id);
                    fm.buffer_id = NO_BUFFER;
                }
            }
            let replies = self.handle_message(msg, &raw);
            if let Some(e) = replies
                .into_iter()
                .find(|r| matches!(r.body, Message::Error(_)))
            {
                failed = Some(e);
                break;
            }
        }
        let ops = self.staging.take().unwrap_or_default();
        if let Some(e) = failed {
            self.pipeline = snapshot;
            self.switch_config = switch_config;
            self.pending.truncate(pending);
            return Err(Box::new(e));
        }
        if !ops.is_empty() {
            self.broadcast(Op::Bundle(Arc::new(ops)));
        }
        let now = self.now();
        for id in buffered {
            match self.buffers.take(id, now) {
                Ok(b) => self.run_on_control(&b.data, b.in_port, None),
                Err(_) => tracing::debug!(buffer_id = id, "bundle: buffered packet gone"),
            }
        }
        self.barrier();
        self.mark_dirty();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Bundled {
        Bundled {
            msg: OfpMessage::new(1, Message::BarrierRequest),
            raw: Vec::new(),
        }
    }

    #[test]
    fn state_machine() {
        use BundleFailedCode as C;
        let mut b = Bundles::default();
        b.open(1, 10, 3).unwrap();
        assert_eq!(b.open(1, 10, 3), Err(C::BadId), "open twice");
        assert_eq!(b.count(1), 0, "and the first is discarded");
        assert_eq!(b.open(1, 10, 4), Err(C::BadFlags));
        b.open(1, 10, 1).unwrap();
        b.open(2, 10, 1).unwrap(); // per connection
        b.add(1, 10, 1, m()).unwrap();
        assert_eq!(b.add(1, 10, 3, m()), Err(C::BadFlags));
        assert_eq!(b.count(1), 0, "a bad add discards the bundle");
        // implicit open on add
        b.add(1, 11, 1, m()).unwrap();
        b.add(1, 11, 1, m()).unwrap();
        assert_eq!(b.close(1, 11, 0), Err(C::BadFlags));
        b.add(1, 11, 1, m()).unwrap();
        b.close(1, 11, 1).unwrap();
        assert_eq!(b.add(1, 11, 1, m()), Err(C::BundleClosed));
        assert_eq!(b.take(1, 11, 1).unwrap_err(), C::BadId);
        b.add(1, 12, 1, m()).unwrap();
        b.close(1, 12, 1).unwrap();
        assert_eq!(b.close(1, 12, 1), Err(C::BundleClosed));
        b.add(1, 13, 0, m()).unwrap();
        b.add(1, 13, 0, m()).unwrap();
        assert_eq!(b.take(1, 13, 1).unwrap_err(), C::BadFlags);
        assert_eq!(
            b.take(1, 13, 0).unwrap_err(),
            C::BadId,
            "gone after a commit"
        );
        b.add(1, 14, 0, m()).unwrap();
        b.add(1, 14, 0, m()).unwrap();
        assert_eq!(b.take(1, 14, 0).unwrap().len(), 2);
        assert_eq!(b.discard(1, 14), Err(C::BadId));
        b.open(1, 15, 0).unwrap();
        b.discard(1, 15).unwrap();
        assert_eq!(b.count(2), 1);
        b.connection_closed(2);
        assert_eq!(b.count(2), 0);
    }

    #[test]
    fn idle_bundles_time_out_with_their_opener() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(4);
        let conn = ConnInfo {
            id: 3,
            group: 0,
            auxiliary_id: 0,
            role: ControllerRole::Equal,
            peer: "127.0.0.1:1".parse().unwrap(),
            tx,
        };
        let mut b = Bundles::default();
        b.open(3, 1, 0).unwrap();
        let opener = [4, 4, 0, 24, 0, 0, 0, 0x2a];
        b.touch(&conn, 1, &opener);
        b.add(3, 2, 0, m()).unwrap();
        b.touch(&conn, 2, &[4, 4, 0, 8, 0, 0, 0, 7]);
        assert!(b.expire(Instant::now()).is_empty());
        let late = Instant::now() + IDLE_TIMEOUT;
        let out = b.expire(late);
        assert_eq!(out.len(), 2);
        assert_eq!(b.count(3), 0);
        let (_, e) = out.iter().find(|(_, m)| m.xid == 0x2a).unwrap();
        match &e.body {
            Message::Error(em) => {
                assert_eq!(
                    BundleFailedCode::of_error(em),
                    Some(BundleFailedCode::Timeout)
                );
            }
            other => panic!("{other:?}"),
        }
        for (tx, m) in out {
            tx.try_send(m).unwrap();
        }
        assert!(rx.try_recv().is_ok());
    }

    #[test]
    fn too_many_bundles() {
        let mut b = Bundles::default();
        for id in 0..MAX_BUNDLES as u32 {
            b.open(1, id, 0).unwrap();
        }
        assert_eq!(b.open(1, 9999, 0), Err(BundleFailedCode::OutOfBundles));
        assert_eq!(b.add(1, 9999, 0, m()), Err(BundleFailedCode::OutOfBundles));
    }
}
