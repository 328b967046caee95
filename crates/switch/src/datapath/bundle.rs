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
//! too, successful or not. Closing a connection discards its bundles.
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

use ofp::bundle::{self, ctrl_type, AddError, BundleCtrl, BundleFailedCode, BundleMsg};
use ofp::error::{BadRequestCode, ErrorCode, ErrorMsg};
use ofp::message::{Message, NO_BUFFER};
use ofp::OfpMessage;

use super::ops::Op;
use super::Datapath;
use crate::channel::hub::{ConnId, ConnInfo};
use crate::channel::role::ControllerRole;

/// Open bundles one connection may hold.
pub const MAX_BUNDLES: usize = 256;
/// Messages one bundle may hold.
pub const MAX_MESSAGES: usize = 1 << 20;

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
}

/// Every connection's bundles (module comment).
#[derive(Debug, Default)]
pub struct Bundles {
    by_conn: HashMap<ConnId, HashMap<u32, Bundle>>,
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
        c.insert(
            id,
            Bundle {
                flags,
                state: State::Open,
                msgs: Vec::new(),
            },
        );
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
            c.insert(
                id,
                Bundle {
                    flags,
                    state: State::Open,
                    msgs: Vec::new(),
                },
            );
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
                    Ok(()) => Vec::new(),
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
    fn too_many_bundles() {
        let mut b = Bundles::default();
        for id in 0..MAX_BUNDLES as u32 {
            b.open(1, id, 0).unwrap();
        }
        assert_eq!(b.open(1, 9999, 0), Err(BundleFailedCode::OutOfBundles));
        assert_eq!(b.add(1, 9999, 0, m()), Err(BundleFailedCode::OutOfBundles));
    }
}
