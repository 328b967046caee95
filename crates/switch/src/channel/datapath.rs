//! The interface between the controller channel and the datapath.
//!
//! Connection tasks never call the datapath directly: they queue a
//! [`DpRequest`] on a bounded channel, and one task ([`serve_datapath`]) owns
//! the [`Datapath`] and handles requests one at a time, in arrival order. So
//! the authoritative pipeline has a single owner on the control thread, and
//! whatever it does to reach the workers (queues, barriers) stays behind the
//! trait.

use ofp::OfpMessage;
use tokio::sync::mpsc;

use super::hub::{ConnId, ConnInfo};

/// What the controller channel needs from the datapath.
pub trait Datapath: Send + 'static {
    /// Handle one request that the channel did not answer itself (everything
    /// but HELLO, ECHO, FEATURES, ROLE and ASYNC messages, and slave writes).
    /// `raw` is the message as received, for error data. Returned messages
    /// are queued on the same connection in order; later answers can use
    /// `conn.tx`.
    fn handle(&mut self, conn: &ConnInfo, msg: OfpMessage, raw: &[u8]) -> Vec<OfpMessage>;

    /// A connection closed (release its per-connection state).
    fn connection_closed(&mut self, _conn: ConnId) {}
}

/// One request from a connection task to the datapath task.
#[derive(Debug)]
pub enum DpRequest {
    /// `msg` is boxed: decoded messages are large enums.
    Message {
        conn: ConnInfo,
        msg: Box<OfpMessage>,
        raw: Vec<u8>,
    },
    Closed(ConnId),
}

/// Where connection tasks send requests.
pub type DpSender = mpsc::Sender<DpRequest>;

/// Capacity of the request queue: connection tasks wait (stop reading their
/// socket) when the datapath falls behind.
pub const DP_QUEUE: usize = 1024;

/// Run the datapath task until every sender is gone.
pub async fn serve_datapath<D: Datapath>(mut dp: D, mut rx: mpsc::Receiver<DpRequest>) -> D {
    while let Some(req) = rx.recv().await {
        match req {
            DpRequest::Message { conn, msg, raw } => {
                for reply in dp.handle(&conn, *msg, &raw) {
                    // The connection may be gone; its replies are moot then.
                    if conn.tx.send(reply).await.is_err() {
                        break;
                    }
                }
            }
            DpRequest::Closed(id) => dp.connection_closed(id),
        }
    }
    dp
}
