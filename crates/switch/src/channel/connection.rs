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

/// Reads whole OpenFlow frames from a byte stream.
///
/// `buf[start..]` holds the bytes read and not yet handed out: complete
/// frames are copied out from `start` onwards, and only when no complete
/// frame is left is the partial one moved to the front, once, before the
/// next read (taking each frame off the front of the buffer instead moved
/// everything behind it, per frame: for 100,000 flow-mods of ~120 bytes
/// read 16 KiB at a time, some 800 MB of copying within the cache, a few
/// tens of milliseconds). The buffer never holds
/// more than one maximal message (64 KiB) plus one read.
struct Framer<R> {
    rd: R,
    buf: Vec<u8>,
    start: usize,
}

impl<R: AsyncRead + Unpin> Framer<R> {
    fn new(rd: R) -> Self {
        Framer {
            rd,
            buf: Vec::with_capacity(2 * READ_CHUNK),
            start: 0,
        }
    }

    /// The bytes read and not yet handed out as frames.
    fn pending(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The next complete frame. Cancel-safe: bytes read stay in `buf`
    /// (`read_buf` is cancel-safe).
    async fn next(&mut self) -> Result<Vec<u8>, ConnError> {
        loop {
            match frame_len(self.pending()) {
                Ok(Some(n)) => {
                    let frame = self.buf[self.start..self.start + n].to_vec();
                    self.start += n;
                    return Ok(frame);
                }
                Ok(None) => {}
                Err(_) => return Err(ConnError::BadFrame),
            }
            self.buf.drain(..self.start);
            self.start = 0;
            self.buf.reserve(READ_CHUNK);
            let n = self.rd.read_buf(&mut self.buf).await?;
            if n == 0 {
                return Err(ConnError::Closed);
            }
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
    let counts = hub.clone();
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if wr.write_all(&m.encode()).await.is_err() {
                break;
            }
            counts.count_sent();
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
                let bytes = framer.pending().to_vec();
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
        hub.count_received();
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A byte stream that hands out `data` in pieces of the given sizes
    /// (cycled), as a socket may.
    struct Pieces {
        data: Vec<u8>,
        at: usize,
        sizes: Vec<usize>,
        next: usize,
    }

    impl AsyncRead for Pieces {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            out: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let me = &mut *self;
            let size = me.sizes[me.next % me.sizes.len()].max(1);
            me.next += 1;
            let n = size.min(out.remaining()).min(me.data.len() - me.at);
            out.put_slice(&me.data[me.at..me.at + n]);
            me.at += n;
            Poll::Ready(Ok(()))
        }
    }

    /// An OpenFlow-framed message of `len` bytes (at least the header).
    fn frame(len: usize, fill: u8) -> Vec<u8> {
        let mut f = vec![fill; len];
        f[0] = 4;
        f[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        f
    }

    proptest! {
        /// Whatever the pieces the stream comes in, the frames come out
        /// whole and in order, then `Closed`; frames of up to 64 KiB (more
        /// than one read) included.
        #[test]
        fn frames_come_out_whole_in_order(
            lens in proptest::collection::vec(
                prop_oneof![8usize..200, 200usize..3000, Just(65535usize)], 0..40),
            sizes in proptest::collection::vec(1usize..40_000, 1..8),
        ) {
            let frames: Vec<Vec<u8>> =
                lens.iter().enumerate().map(|(i, &l)| frame(l, i as u8)).collect();
            let data = frames.concat();
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let got: Vec<Result<Vec<u8>, String>> = rt.block_on(async {
                let mut f = Framer::new(Pieces { data, at: 0, sizes, next: 0 });
                let mut got = Vec::new();
                loop {
                    match f.next().await {
                        Ok(fr) => got.push(Ok(fr)),
                        Err(e) => {
                            got.push(Err(e.to_string()));
                            break;
                        }
                    }
                }
                got
            });
            let (last, whole) = got.split_last().unwrap();
            prop_assert_eq!(whole.len(), frames.len());
            for (g, want) in whole.iter().zip(&frames) {
                prop_assert_eq!(g.as_ref().unwrap(), want);
            }
            prop_assert_eq!(last.clone().unwrap_err(), ConnError::Closed.to_string());
        }
    }

    /// A length below the header is unframeable; the bytes stay pending
    /// (they go back in the BAD_LEN error).
    #[test]
    fn short_length_is_a_bad_frame() {
        let mut data = frame(16, 1);
        data.extend_from_slice(&[4, 0, 0, 4, 0, 0, 0, 9]);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut f = Framer::new(Pieces {
                data,
                at: 0,
                sizes: vec![5],
                next: 0,
            });
            assert_eq!(f.next().await.unwrap(), frame(16, 1));
            assert!(matches!(f.next().await, Err(ConnError::BadFrame)));
            assert!(f.pending().starts_with(&[4, 0, 0, 4]), "{:?}", f.pending());
        });
    }
}
