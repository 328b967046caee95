//! Controller channel tests over loopback TCP (127.0.0.1, ephemeral ports),
//! against a fake datapath. Timeouts only guard against hangs; nothing
//! asserts on timing.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ofp::error::{BadRequestCode, ErrorCode, ErrorMsg, HelloFailedCode, RoleRequestFailedCode};
use ofp::header::frame_len;
use ofp::message::{
    role, AsyncConfig, Echo, FeaturesReply, Hello, HelloElement, Message, PacketIn, PortStatus,
    Role, TableMod,
};
use ofp::OfpMessage;
use switch::channel::connection::ConnOptions;
use switch::channel::connector::{connect, Backoff};
use switch::channel::datapath::{serve_datapath, Datapath, DP_QUEUE};
use switch::channel::hub::{ConnInfo, ControllerStatus, Hub};
use switch::channel::listener::{listen, Listener};
use switch::channel::Context;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::timeout;

/// Hang guard for every wait.
const GUARD: Duration = Duration::from_secs(10);

const DPID: u64 = 0x1234_5678_9abc_def0;

/// The fake datapath: records message types, answers barriers.
#[derive(Default, Clone)]
struct FakeDp {
    seen: Arc<Mutex<Vec<u8>>>,
}

impl Datapath for FakeDp {
    fn handle(&mut self, _conn: &ConnInfo, msg: OfpMessage, _raw: &[u8]) -> Vec<OfpMessage> {
        self.seen.lock().unwrap().push(msg.body.msg_type());
        match msg.body {
            Message::BarrierRequest => vec![OfpMessage::new(msg.xid, Message::BarrierReply)],
            _ => vec![],
        }
    }
}

fn features() -> FeaturesReply {
    FeaturesReply {
        datapath_id: DPID,
        n_buffers: 256,
        n_tables: 254,
        auxiliary_id: 0,
        capabilities: 0x4f,
        reserved: 0,
    }
}

fn opts() -> ConnOptions {
    ConnOptions {
        echo_interval: Duration::from_secs(5),
        echo_max_missed: 3,
        hello_timeout: Duration::from_secs(5),
    }
}

/// A hub and a running fake datapath.
fn setup() -> (Context, FakeDp) {
    let hub = Hub::new(features());
    let (tx, rx) = mpsc::channel(DP_QUEUE);
    let dp = FakeDp::default();
    tokio::spawn(serve_datapath(dp.clone(), rx));
    (
        Context {
            hub,
            dp: tx,
            opts: opts(),
        },
        dp,
    )
}

async fn passive(ctx: &Context) -> Listener {
    listen("ptcp:0:127.0.0.1".parse().unwrap(), None, ctx.clone(), true)
        .await
        .unwrap()
}

/// A controller-side peer speaking raw OpenFlow frames.
struct Peer<S> {
    s: S,
    buf: Vec<u8>,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Peer<S> {
    fn new(s: S) -> Self {
        Peer { s, buf: Vec::new() }
    }

    async fn send_raw(&mut self, b: &[u8]) {
        self.s.write_all(b).await.unwrap();
    }

    async fn send(&mut self, xid: u32, body: Message) {
        self.send_raw(&OfpMessage::new(xid, body).encode()).await;
    }

    /// Next frame, or None on EOF.
    async fn recv_raw(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(n) = frame_len(&self.buf).unwrap() {
                return Some(self.buf.drain(..n).collect());
            }
            let mut chunk = [0u8; 4096];
            let n = timeout(GUARD, self.s.read(&mut chunk))
                .await
                .expect("peer waited too long")
                .unwrap_or(0);
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    async fn recv(&mut self) -> OfpMessage {
        let raw = self.recv_raw().await.expect("connection closed");
        OfpMessage::decode(&raw).unwrap()
    }

    /// Exchange HELLOs; returns the switch's HELLO.
    async fn handshake(&mut self) -> Hello {
        self.send(1, Message::Hello(Hello::ofp13())).await;
        match self.recv().await.body {
            Message::Hello(h) => h,
            m => panic!("expected HELLO, got {m:?}"),
        }
    }

    async fn features(&mut self) -> FeaturesReply {
        self.send(2, Message::FeaturesRequest).await;
        match self.recv().await.body {
            Message::FeaturesReply(f) => f,
            m => panic!("expected FEATURES_REPLY, got {m:?}"),
        }
    }

    /// Barrier round trip: everything queued for us before it has arrived.
    /// Returns the messages that came before the reply.
    async fn barrier(&mut self, xid: u32) -> Vec<OfpMessage> {
        self.send(xid, Message::BarrierRequest).await;
        let mut before = Vec::new();
        loop {
            let m = self.recv().await;
            if m.body == Message::BarrierReply && m.xid == xid {
                return before;
            }
            before.push(m);
        }
    }

    async fn role(&mut self, xid: u32, r: u32, generation_id: u64) -> OfpMessage {
        self.send(
            xid,
            Message::RoleRequest(Role {
                role: r,
                generation_id,
            }),
        )
        .await;
        self.recv().await
    }
}

async fn client(addr: SocketAddr) -> Peer<TcpStream> {
    Peer::new(TcpStream::connect(addr).await.unwrap())
}

fn error_code(m: &OfpMessage) -> ErrorCode {
    match &m.body {
        Message::Error(e) => e.typed().expect("known error code"),
        b => panic!("expected ERROR, got {b:?}"),
    }
}

fn error_data(m: &OfpMessage) -> Vec<u8> {
    match &m.body {
        Message::Error(ErrorMsg::Standard { data, .. }) => data.clone(),
        b => panic!("expected ERROR, got {b:?}"),
    }
}

fn table_mod() -> Message {
    Message::TableMod(TableMod {
        table_id: 0,
        config: 0,
    })
}

fn packet_in(reason: u8) -> OfpMessage {
    OfpMessage::new(
        0,
        Message::PacketIn(PacketIn {
            buffer_id: ofp::message::NO_BUFFER,
            total_len: 4,
            reason,
            table_id: 0,
            cookie: 0,
            match_: Default::default(),
            data: vec![1, 2, 3, 4],
        }),
    )
}

#[tokio::test]
async fn hello_features_echo_and_datapath() {
    let (ctx, dp) = setup();
    let l = passive(&ctx).await;
    let mut c = client(l.local_addr).await;
    let hello = c.handshake().await;
    assert_eq!(hello.version, 4);
    assert!(hello.supports(4));
    assert!(!hello.supports(1));
    let f = c.features().await;
    assert_eq!(f.datapath_id, DPID);
    assert_eq!(f.n_tables, 254);
    assert_eq!(f.auxiliary_id, 0);
    c.send(
        77,
        Message::EchoRequest(Echo {
            data: b"ping".to_vec(),
        }),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(r.xid, 77);
    assert_eq!(
        r.body,
        Message::EchoReply(Echo {
            data: b"ping".to_vec()
        })
    );
    // Forwarded to the datapath, answered by it.
    assert!(c.barrier(5).await.is_empty());
    assert_eq!(
        *dp.seen.lock().unwrap(),
        vec![ofp::header::msg_type::BARRIER_REQUEST]
    );
}

#[tokio::test]
async fn hello_with_older_header_version_only_is_refused() {
    let (ctx, _) = setup();
    let l = passive(&ctx).await;
    let mut c = client(l.local_addr).await;
    // OpenFlow 1.0 HELLO without a bitmap.
    c.send_raw(&[1, 0, 0, 8, 0, 0, 0, 9]).await;
    assert!(matches!(c.recv().await.body, Message::Hello(_)));
    let e = c.recv().await;
    assert_eq!(
        error_code(&e),
        ErrorCode::HelloFailed(HelloFailedCode::Incompatible)
    );
    assert_eq!(e.xid, 9);
    assert!(c.recv_raw().await.is_none(), "connection must be closed");
}

#[tokio::test]
async fn hello_bitmap_without_1_3_is_refused_and_with_it_accepted() {
    let (ctx, _) = setup();
    let l = passive(&ctx).await;
    // Header says 1.5, bitmap lists 1.0 and 1.5 only.
    let mut c = client(l.local_addr).await;
    c.send(
        3,
        Message::Hello(Hello {
            version: 6,
            elements: vec![HelloElement::VersionBitmap(vec![(1 << 1) | (1 << 6)])],
        }),
    )
    .await;
    assert!(matches!(c.recv().await.body, Message::Hello(_)));
    assert_eq!(
        error_code(&c.recv().await),
        ErrorCode::HelloFailed(HelloFailedCode::Incompatible)
    );
    assert!(c.recv_raw().await.is_none());
    // 1.0, 1.3 and 1.5: 1.3 is common.
    let mut c = client(l.local_addr).await;
    c.send(
        3,
        Message::Hello(Hello {
            version: 6,
            elements: vec![HelloElement::VersionBitmap(vec![
                (1 << 1) | (1 << 4) | (1 << 6),
            ])],
        }),
    )
    .await;
    assert!(matches!(c.recv().await.body, Message::Hello(_)));
    assert_eq!(c.features().await.datapath_id, DPID);
}

#[tokio::test]
async fn malformed_messages_get_exact_errors_and_connection_stays() {
    let (ctx, dp) = setup();
    let l = passive(&ctx).await;
    let mut c = client(l.local_addr).await;
    c.handshake().await;
    // Unknown type 0xee.
    let bad_type = [4, 0xee, 0, 8, 0, 0, 0, 42];
    c.send_raw(&bad_type).await;
    let e = c.recv().await;
    assert_eq!(e.xid, 42);
    assert_eq!(
        error_code(&e),
        ErrorCode::BadRequest(BadRequestCode::BadType)
    );
    assert_eq!(error_data(&e), bad_type);
    // Wrong version.
    c.send_raw(&[3, 2, 0, 8, 0, 0, 0, 43]).await;
    assert_eq!(
        error_code(&c.recv().await),
        ErrorCode::BadRequest(BadRequestCode::BadVersion)
    );
    // A 100-byte TABLE_MOD (must be 16): BAD_LEN with the first 64 bytes.
    let mut long = vec![4, 17, 0, 100, 0, 0, 0, 44];
    long.extend((0..92).map(|i| i as u8));
    c.send_raw(&long).await;
    let e = c.recv().await;
    assert_eq!(
        error_code(&e),
        ErrorCode::BadRequest(BadRequestCode::BadLen)
    );
    assert_eq!(error_data(&e), long[..64]);
    // A switch-to-controller message from the controller.
    c.send(45, Message::BarrierReply).await;
    assert_eq!(
        error_code(&c.recv().await),
        ErrorCode::BadRequest(BadRequestCode::BadType)
    );
    // Still up; nothing malformed reached the datapath.
    assert!(c.barrier(46).await.is_empty());
    assert_eq!(
        *dp.seen.lock().unwrap(),
        vec![ofp::header::msg_type::BARRIER_REQUEST]
    );
}

#[tokio::test]
async fn roles_generation_ids_and_slave_writes() {
    let (ctx, dp) = setup();
    let l = passive(&ctx).await;
    let mut a = client(l.local_addr).await;
    let mut b = client(l.local_addr).await;
    a.handshake().await;
    b.handshake().await;

    // Query before any election: EQUAL.
    let r = a.role(10, role::NOCHANGE, 0).await;
    assert!(matches!(
        r.body,
        Message::RoleReply(Role {
            role: role::EQUAL,
            ..
        })
    ));

    let r = a.role(11, role::MASTER, 5).await;
    assert_eq!(
        r.body,
        Message::RoleReply(Role {
            role: role::MASTER,
            generation_id: 5
        })
    );
    let r = b.role(12, role::SLAVE, 4).await;
    assert_eq!(
        error_code(&r),
        ErrorCode::RoleRequestFailed(RoleRequestFailedCode::Stale)
    );
    assert_eq!(r.xid, 12);
    let r = b.role(13, role::SLAVE, 6).await;
    assert!(matches!(
        r.body,
        Message::RoleReply(Role {
            role: role::SLAVE,
            generation_id: 6
        })
    ));

    // Slave writes are refused; reads pass.
    b.send(14, table_mod()).await;
    let e = b.recv().await;
    assert_eq!(e.xid, 14);
    assert_eq!(
        error_code(&e),
        ErrorCode::BadRequest(BadRequestCode::IsSlave)
    );
    // SET_ASYNC is allowed to a slave.
    b.send(15, Message::SetAsync(AsyncConfig::default())).await;
    assert!(b.barrier(16).await.is_empty());
    a.send(17, table_mod()).await;
    assert!(a.barrier(18).await.is_empty());

    // B becomes master: A is demoted to slave.
    let r = b.role(19, role::MASTER, 7).await;
    assert!(matches!(
        r.body,
        Message::RoleReply(Role {
            role: role::MASTER,
            ..
        })
    ));
    let r = a.role(20, role::NOCHANGE, 0).await;
    assert!(matches!(
        r.body,
        Message::RoleReply(Role {
            role: role::SLAVE,
            generation_id: 7
        })
    ));
    a.send(21, table_mod()).await;
    assert_eq!(
        error_code(&a.recv().await),
        ErrorCode::BadRequest(BadRequestCode::IsSlave)
    );
    // EQUAL needs no generation id.
    let r = a.role(22, role::EQUAL, 0).await;
    assert!(matches!(
        r.body,
        Message::RoleReply(Role {
            role: role::EQUAL,
            ..
        })
    ));

    let seen = dp.seen.lock().unwrap().clone();
    use ofp::header::msg_type as t;
    assert_eq!(
        seen,
        vec![t::BARRIER_REQUEST, t::TABLE_MOD, t::BARRIER_REQUEST]
    );
}

#[tokio::test]
async fn async_filtering_by_role_and_set_async() {
    let (ctx, _) = setup();
    let hub = ctx.hub.clone();
    let l = passive(&ctx).await;
    let mut a = client(l.local_addr).await;
    let mut b = client(l.local_addr).await;
    a.handshake().await;
    b.handshake().await;
    a.role(1, role::MASTER, 1).await;
    b.role(1, role::SLAVE, 1).await;

    assert_eq!(hub.send_async(&packet_in(0)), 1);
    let got = a.barrier(2).await;
    assert_eq!(got.len(), 1);
    assert!(matches!(got[0].body, Message::PacketIn(_)));
    assert!(b.barrier(2).await.is_empty(), "slave got a packet-in");

    // Slaves get port status by default.
    let ps = OfpMessage::new(
        0,
        Message::PortStatus(PortStatus {
            reason: 2,
            desc: Default::default(),
        }),
    );
    assert_eq!(hub.send_async(&ps), 2);
    assert_eq!(b.barrier(3).await.len(), 1);
    assert_eq!(a.barrier(3).await.len(), 1);

    // B asks for NO_MATCH packet-ins as a slave; A turns ACTION off.
    let cfg = AsyncConfig {
        packet_in_mask: [0, 1],
        port_status_mask: [0, 0],
        flow_removed_mask: [0, 0],
    };
    b.send(4, Message::SetAsync(cfg)).await;
    b.send(5, Message::GetAsyncRequest).await;
    assert_eq!(b.recv().await.body, Message::GetAsyncReply(cfg));
    a.send(
        6,
        Message::SetAsync(AsyncConfig {
            packet_in_mask: [1, 0],
            ..cfg
        }),
    )
    .await;
    a.barrier(7).await;
    assert_eq!(hub.send_async(&packet_in(0)), 2);
    assert_eq!(hub.send_async(&packet_in(1)), 0);
    assert_eq!(hub.send_async(&ps), 0);
    assert_eq!(b.barrier(8).await.len(), 1);
    assert_eq!(a.barrier(8).await.len(), 1);
}

/// Accept one connection on `l` and complete the HELLO exchange as a
/// controller; returns the peer and its auxiliary id.
async fn accept_switch(l: &TcpListener) -> (Peer<TcpStream>, u8) {
    let (s, _) = timeout(GUARD, l.accept()).await.unwrap().unwrap();
    let mut p = Peer::new(s);
    p.handshake().await;
    let f = p.features().await;
    assert_eq!(f.datapath_id, DPID);
    (p, f.auxiliary_id)
}

#[tokio::test]
async fn active_connection_with_aux_and_reconnect() {
    let (ctx, _) = setup();
    let hub = ctx.hub.clone();
    let mut status = hub.watch_status();
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let ep = format!("tcp:{addr}").parse().unwrap();
    let backoff = Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
    };
    let _conn = connect(ep, None, ctx.clone(), 1, backoff).unwrap();

    let (mut p1, aux1) = accept_switch(&l).await;
    let (mut p2, aux2) = accept_switch(&l).await;
    let mut ids = [aux1, aux2];
    ids.sort();
    assert_eq!(ids, [0, 1]);
    let (main, aux) = if aux1 == 0 {
        (&mut p1, &mut p2)
    } else {
        (&mut p2, &mut p1)
    };
    timeout(
        GUARD,
        status.wait_for(|s| *s == ControllerStatus::Connected(2)),
    )
    .await
    .unwrap()
    .unwrap();

    // Packet-in goes on the auxiliary connection.
    assert_eq!(hub.send_async(&packet_in(0)), 1);
    assert_eq!(aux.barrier(9).await.len(), 1);
    assert!(main.barrier(9).await.is_empty());

    // The controller restarts: both connections and the listener go away.
    drop(p1);
    drop(p2);
    drop(l);
    timeout(
        GUARD,
        status.wait_for(|s| matches!(s, ControllerStatus::DisconnectedSince(_))),
    )
    .await
    .unwrap()
    .unwrap();
    let l = TcpListener::bind(addr).await.unwrap();
    let (_q1, a1) = accept_switch(&l).await;
    let (_q2, a2) = accept_switch(&l).await;
    assert_eq!(a1.max(a2), 1);
    timeout(
        GUARD,
        status.wait_for(|s| *s == ControllerStatus::Connected(2)),
    )
    .await
    .unwrap()
    .unwrap();
}

#[tokio::test]
async fn management_listener_does_not_count_as_controller() {
    let (ctx, _) = setup();
    let l = listen("ptcp:0".parse().unwrap(), None, ctx.clone(), false)
        .await
        .unwrap();
    let mut c = client(l.local_addr).await;
    c.handshake().await;
    c.barrier(1).await;
    assert_eq!(ctx.hub.connection_count(), 1);
    assert!(matches!(
        ctx.hub.controller_status(),
        ControllerStatus::DisconnectedSince(_)
    ));
}

#[tokio::test]
async fn echo_keepalive_closes_a_silent_peer() {
    let (mut ctx, _) = setup();
    ctx.opts.echo_interval = Duration::from_millis(50);
    ctx.opts.echo_max_missed = 2;
    let l = passive(&ctx).await;
    let mut c = client(l.local_addr).await;
    c.handshake().await;
    // We never answer: an echo request comes, then the switch closes.
    let m = c.recv().await;
    assert!(matches!(m.body, Message::EchoRequest(_)));
    while c.recv_raw().await.is_some() {}
}

#[tokio::test]
async fn unframeable_length_gets_bad_len_then_close() {
    let (ctx, _) = setup();
    let hub = ctx.hub.clone();
    let l = passive(&ctx).await;
    let mut c = client(l.local_addr).await;
    c.handshake().await;
    c.send_raw(&[4, 2, 0, 4, 0, 0, 0, 50]).await;
    let e = c.recv().await;
    assert_eq!(e.xid, 50);
    assert_eq!(
        error_code(&e),
        ErrorCode::BadRequest(BadRequestCode::BadLen)
    );
    assert!(c.recv_raw().await.is_none());
    assert_eq!(hub.malformed_messages(), 1);
}

#[tokio::test]
async fn manager_starts_configured_endpoints() {
    let (ctx, _) = setup();
    let controller = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let src = format!(
        "controllers = [\"tcp:{}\"]\nlisteners = [\"ptcp:0:127.0.0.1\"]\nauxiliary_connections = 1\nreconnect_initial = 1\n",
        controller.local_addr().unwrap()
    );
    let cfg = switch::config::Config::parse(&src, "test.toml").unwrap();
    let ch = switch::channel::manager::start(&cfg, ctx.clone())
        .await
        .unwrap();
    assert_eq!(ch.connectors.len(), 1);
    assert_eq!(ch.listeners.len(), 1);
    let (_p1, a1) = accept_switch(&controller).await;
    let (_p2, a2) = accept_switch(&controller).await;
    assert_eq!(a1 + a2, 1);
    let mut m = client(ch.listeners[0].local_addr).await;
    m.handshake().await;
    assert_eq!(m.features().await.datapath_id, DPID);
}
