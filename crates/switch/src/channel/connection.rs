//! One OpenFlow connection (spec §6.3): framing, HELLO and version
//! negotiation, echo keepalive, the messages the channel answers itself
//! (echo, features, role, async config), role enforcement, and forwarding of
//! everything else to the datapath.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ofp::error::{ErrorCode, ErrorMsg, HelloFailedCode};
use ofp::header::{frame_len, HEADER_LEN};
use ofp::message::{Echo, Hello, Message};
use ofp::OfpMessage;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::datapath::{DpRequest, DpSender};
use super::hub::{ConnId, ConnInfo, GroupId, Hub};
use super::role::{forbidden_to_slave, ControllerRole, IS_SLAVE};

/// Keepalive and handshake timing of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnOptions {
    /// Send ECHO_REQUEST after this long without receiving anything.
    pub echo_interval: Duration,
    /// Close after this many echo intervals without receiving anything.
    pub echo_max_missed: u32,
    /// Give up if the peer's HELLO does not arrive within this time.
    pub hello_timeout: Duration,
}

impl Default for ConnOptions {
    fn default() -> Self {
        ConnOptions {
            echo_interval: Duration::from_secs(5),
            echo_max_missed: 3,
            hello_timeout: Duration::from_secs(10),
        }
    }
}

/// Who this connection is, decided by the listener/connector that made it.
#[derive(Debug, Clone, Copy)]
pub struct ConnRole {
    pub group: GroupId,
    pub auxiliary_id: u8,
    /// Counts for fail mode (configured controllers, not management).
    pub is_controller: bool,
}

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("peer closed the connection")]
    Closed,
    #[error("no HELLO from peer in time")]
    HelloTimeout,
    #[error("version negotiation failed: {0}")]
    Incompatible(String),
    #[error("peer sent an unframeable message (length below 8)")]
    BadFrame,
    #[error("no message from peer for {0} echo intervals")]
    EchoTimeout(u32),
    #[error("datapath is gone")]
    DatapathGone,
}

/// Outgoing queue length per connection.
const TX_QUEUE: usize = 1024;
/// Largest OpenFlow message (16-bit length) plus one read.
const READ_CHUNK: usize = 16 * 1024;

/// Reads whole OpenFlow frames from a byte stream. The buffer never holds
/// more than one maximal message (64 KiB) plus one read chunk, since a frame
/// is taken out as soon as it is complete.
struct Framer<R> {
    rd: R,
    buf: Vec<u8>,
}

impl<R: AsyncRead + Unpin> Framer<R> {
    fn new(rd: R) -> Self {
        Framer {
            rd,
            buf: Vec::with_capacity(READ_CHUNK),
        }
    }

    /// The next complete frame. Cancel-safe: bytes read stay in `buf`.
    async fn next(&mut self) -> Result<Vec<u8>, ConnError> {
        loop {
            match frame_len(&self.buf) {
                Ok(Some(n)) => return Ok(self.buf.drain(..n).collect()),
                Ok(None) => {}
                Err(_) => return Err(ConnError::BadFrame),
            }
            let mut chunk = [0u8; READ_CHUNK];
            let n = self.rd.read(&mut chunk).await?;
            if n == 0 {
                return Err(ConnError::Closed);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn xid_of(raw: &[u8]) -> u32 {
    match raw.get(4..8) {
        Some(b) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

fn error_reply(code: ErrorCode, raw: &[u8]) -> OfpMessage {
    OfpMessage::new(
        xid_of(raw),
        Message::Error(ErrorMsg::from_request(code, raw)),
    )
}

/// Messages only a switch sends; a controller sending one gets BAD_TYPE.
fn switch_to_controller(msg: &Message) -> bool {
    matches!(
        msg,
        Message::FeaturesReply(_)
            | Message::GetConfigReply(_)
            | Message::PacketIn(_)
            | Message::FlowRemoved(_)
            | Message::PortStatus(_)
            | Message::MultipartReply(_)
            | Message::BarrierReply
            | Message::QueueGetConfigReply(_)
            | Message::RoleReply(_)
            | Message::GetAsyncReply(_)
    )
}

/// Run one connection to its end: send our HELLO, negotiate, then serve.
/// Returns after the peer closes or fails; the hub and datapath are told.
pub async fn run_connection<S>(
    stream: S,
    peer: SocketAddr,
    hub: Arc<Hub>,
    dp: DpSender,
    who: ConnRole,
    opts: ConnOptions,
) -> Result<(), ConnError>
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (rd, mut wr) = tokio::io::split(stream);
    let mut framer = Framer::new(rd);

    // HELLO exchange (§6.3.1): both sides send HELLO at once; the version is
    // the highest in both bitmaps (or the smaller header version).
    wr.write_all(&OfpMessage::new(0, Message::Hello(Hello::ofp13())).encode())
        .await?;
    let first = timeout(opts.hello_timeout, framer.next())
        .await
        .map_err(|_| ConnError::HelloTimeout)??;
    let why = match OfpMessage::decode(&first) {
        Ok(OfpMessage {
            body: Message::Hello(h),
            ..
        }) if h.supports(ofp::header::OFP_VERSION) => None,
        Ok(OfpMessage {
            body: Message::Hello(h),
            ..
        }) => Some(format!(
            "peer announces version 0x{:02x}, no common version with 0x04 (OpenFlow 1.3)",
            h.version
        )),
        Ok(_) => Some("first message is not HELLO".to_string()),
        Err(e) => Some(format!("bad HELLO: {e}")),
    };
    if let Some(why) = why {
        let (err_type, code) = ErrorCode::HelloFailed(HelloFailedCode::Incompatible).type_code();
        let msg = OfpMessage::new(
            xid_of(&first),
            Message::Error(ErrorMsg::Standard {
                err_type,
                code,
                data: why.clone().into_bytes(),
            }),
        );
        wr.write_all(&msg.encode()).await?;
        wr.flush().await?;
        return Err(ConnError::Incompatible(why));
    }

    // Writer task: drains the outgoing queue onto the socket.
    let (tx, mut rx) = mpsc::channel::<OfpMessage>(TX_QUEUE);
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if wr.write_all(&m.encode()).await.is_err() {
                break;
            }
        }
        let _ = wr.shutdown().await;
    });

    let id: ConnId = hub.new_id();
    hub.register(
        id,
        who.group,
        who.auxiliary_id,
        who.is_controller,
        tx.clone(),
    );
    tracing::info!(conn = id, %peer, aux = who.auxiliary_id, "OpenFlow 1.3 connection up");
    let result = serve(&mut framer, id, peer, &hub, &dp, who, opts, &tx).await;
    hub.unregister(id);
    let _ = dp.send(DpRequest::Closed(id)).await;
    drop(tx);
    // The writer ends when the last sender (ours, the hub's, the datapath's
    // copies) is gone; do not wait for it.
    drop(writer);
    tracing::info!(conn = id, %peer, "connection closed: {:?}", result);
    result
}

#[allow(clippy::too_many_arguments)]
async fn serve<R: AsyncRead + Unpin>(
    framer: &mut Framer<R>,
    id: ConnId,
    peer: SocketAddr,
    hub: &Hub,
    dp: &DpSender,
    who: ConnRole,
    opts: ConnOptions,
    tx: &mpsc::Sender<OfpMessage>,
) -> Result<(), ConnError> {
    let send = |m: OfpMessage| async move { tx.send(m).await.map_err(|_| ConnError::Closed) };
    let mut missed = 0u32;
    let mut echo_xid = 0x8000_0000u32;
    loop {
        let raw = match timeout(opts.echo_interval, framer.next()).await {
            Ok(Err(ConnError::BadFrame)) => {
                // A length below 8 loses the framing for good: say why
                // (BAD_LEN with the offending bytes), then close.
                hub.count_malformed();
                let bytes = framer.buf.clone();
                send(error_reply(
                    ErrorCode::BadRequest(ofp::error::BadRequestCode::BadLen),
                    &bytes,
                ))
                .await?;
                return Err(ConnError::BadFrame);
            }
            Ok(r) => r?,
            Err(_) => {
                missed += 1;
                if missed >= opts.echo_max_missed {
                    return Err(ConnError::EchoTimeout(missed));
                }
                echo_xid = echo_xid.wrapping_add(1);
                send(OfpMessage::new(
                    echo_xid,
                    Message::EchoRequest(Echo::default()),
                ))
                .await?;
                continue;
            }
        };
        missed = 0;
        if raw.len() < HEADER_LEN {
            continue;
        }
        let msg = match OfpMessage::decode(&raw) {
            Ok(m) => m,
            Err(e) => {
                hub.count_malformed();
                tracing::debug!(conn = id, "refused message: {e}");
                send(error_reply(e.code, &raw)).await?;
                continue;
            }
        };
        let group = who.group;
        match &msg.body {
            // A late HELLO is harmless.
            Message::Hello(_) | Message::EchoReply(_) => {}
            Message::Error(e) => tracing::warn!(conn = id, "peer sent error {:?}", e.typed()),
            Message::EchoRequest(e) => {
                send(OfpMessage::new(msg.xid, Message::EchoReply(e.clone()))).await?
            }
            Message::FeaturesRequest => {
                let mut f = hub.features();
                f.auxiliary_id = who.auxiliary_id;
                send(OfpMessage::new(msg.xid, Message::FeaturesReply(f))).await?
            }
            Message::RoleRequest(r) => {
                let reply = match hub.role_request(group, *r) {
                    Ok(role) => OfpMessage::new(msg.xid, Message::RoleReply(role)),
                    Err(code) => error_reply(code, &raw),
                };
                send(reply).await?
            }
            Message::GetAsyncRequest => {
                let c = hub.async_config(group);
                send(OfpMessage::new(msg.xid, Message::GetAsyncReply(c))).await?
            }
            Message::SetAsync(c) => hub.set_async_config(group, *c),
            m if switch_to_controller(m) => {
                send(error_reply(
                    ErrorCode::BadRequest(ofp::error::BadRequestCode::BadType),
                    &raw,
                ))
                .await?
            }
            m => {
                let role = hub.role(group);
                if role == ControllerRole::Slave && forbidden_to_slave(m) {
                    send(error_reply(IS_SLAVE, &raw)).await?;
                    continue;
                }
                let conn = ConnInfo {
                    id,
                    group,
                    auxiliary_id: who.auxiliary_id,
                    role,
                    peer,
                    tx: tx.clone(),
                };
                dp.send(DpRequest::Message {
                    conn,
                    msg: Box::new(msg),
                    raw,
                })
                .await
                .map_err(|_| ConnError::DatapathGone)?;
            }
        }
    }
}
