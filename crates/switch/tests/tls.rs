//! TLS with mutual authentication: certificates from an rcgen test CA,
//! written to a temporary directory that is removed at the end.

use std::sync::Arc;
use std::time::Duration;

use ofp::message::{FeaturesReply, Hello, Message};
use ofp::OfpMessage;
use rustls_pki_types::ServerName;
use switch::channel::connection::ConnOptions;
use switch::channel::connector::{connect, Backoff};
use switch::channel::datapath::{serve_datapath, Datapath, DP_QUEUE};
use switch::channel::hub::{ConnInfo, ControllerStatus, Hub};
use switch::channel::listener::listen;
use switch::channel::tls::{client_config, server_config, TlsFiles};
use switch::channel::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::timeout;

const GUARD: Duration = Duration::from_secs(10);

struct NoDp;
impl Datapath for NoDp {
    fn handle(&mut self, _: &ConnInfo, _: OfpMessage, _: &[u8]) -> Vec<OfpMessage> {
        vec![]
    }
}

#[path = "../../ctl/tests/support/test_ca.rs"]
mod test_ca;
use test_ca::{Ca, TempDir};

/// The switch's view of a leaf's files.
fn files(ca: &Ca, dir: &TempDir, prefix: &str, trust: &Ca) -> TlsFiles {
    let f = ca.leaf(dir, prefix, "127.0.0.1", trust);
    TlsFiles {
        private_key: f.key,
        certificate: f.cert,
        ca_cert: f.ca,
    }
}

fn ctx() -> Context {
    let hub = Hub::new(FeaturesReply {
        datapath_id: 7,
        ..Default::default()
    });
    let (tx, rx) = mpsc::channel(DP_QUEUE);
    tokio::spawn(serve_datapath(NoDp, rx));
    Context {
        hub,
        dp: tx,
        opts: ConnOptions::default(),
    }
}

/// Over `s`: send HELLO, read one whole message (the switch's HELLO).
async fn hello<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    s: &mut S,
) -> std::io::Result<OfpMessage> {
    s.write_all(&OfpMessage::new(1, Message::Hello(Hello::ofp13())).encode())
        .await?;
    let mut h = [0u8; 8];
    s.read_exact(&mut h).await?;
    let len = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let mut m = h.to_vec();
    m.resize(len, 0);
    s.read_exact(&mut m[8..]).await?;
    Ok(OfpMessage::decode(&m).unwrap())
}

#[tokio::test]
async fn passive_tls_requires_a_client_cert_from_the_ca() {
    let dir = TempDir::new("switch-tls");
    let ca = Ca::new("oxflow test CA");
    let other = Ca::new("another CA");
    let switch_files = files(&ca, &dir, "switch", &ca);
    let good = files(&ca, &dir, "ctl", &ca);
    let bad = files(&other, &dir, "rogue", &ca);

    let l = listen(
        "ptls:0:127.0.0.1".parse().unwrap(),
        Some(server_config(&switch_files).unwrap()),
        ctx(),
        true,
    )
    .await
    .unwrap();
    let name = ServerName::IpAddress("127.0.0.1".parse::<std::net::IpAddr>().unwrap().into());

    // A client with a certificate from the CA is served.
    let conn = tokio_rustls::TlsConnector::from(client_config(&good).unwrap());
    let tcp = TcpStream::connect(l.local_addr).await.unwrap();
    let mut s = timeout(GUARD, conn.connect(name.clone(), tcp))
        .await
        .unwrap()
        .unwrap();
    let m = timeout(GUARD, hello(&mut s)).await.unwrap().unwrap();
    assert!(matches!(m.body, Message::Hello(_)));

    // A client whose certificate comes from another CA is refused: the
    // handshake or the first read fails, and no HELLO ever arrives.
    let conn = tokio_rustls::TlsConnector::from(client_config(&bad).unwrap());
    let tcp = TcpStream::connect(l.local_addr).await.unwrap();
    let refused = match timeout(GUARD, conn.connect(name, tcp)).await.unwrap() {
        Err(_) => true,
        Ok(mut s) => timeout(GUARD, hello(&mut s)).await.unwrap().is_err(),
    };
    assert!(refused, "a client with a foreign certificate was served");
}

#[tokio::test]
async fn active_tls_connects_to_a_controller_with_mutual_auth() {
    let dir = TempDir::new("switch-tls");
    let ca = Ca::new("oxflow test CA");
    let switch_files = files(&ca, &dir, "switch", &ca);
    let controller_files = files(&ca, &dir, "controller", &ca);
    // The controller requires client certificates from the CA.
    let acceptor = tokio_rustls::TlsAcceptor::from(server_config(&controller_files).unwrap());
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let c = ctx();
    let hub = c.hub.clone();
    let _conn = connect(
        format!("tls:{addr}").parse().unwrap(),
        Some(client_config(&switch_files).unwrap()),
        c,
        0,
        Backoff {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(100),
        },
    )
    .unwrap();
    let (tcp, _) = timeout(GUARD, l.accept()).await.unwrap().unwrap();
    let mut s = timeout(GUARD, acceptor.accept(tcp)).await.unwrap().unwrap();
    // The switch presented its certificate.
    assert!(s
        .get_ref()
        .1
        .peer_certificates()
        .is_some_and(|c| !c.is_empty()));
    let m = timeout(GUARD, hello(&mut s)).await.unwrap().unwrap();
    assert!(matches!(m.body, Message::Hello(_)));
    let mut st = hub.watch_status();
    timeout(GUARD, st.wait_for(|s| *s == ControllerStatus::Connected(1)))
        .await
        .unwrap()
        .unwrap();
    let _ = Arc::strong_count(&hub);
}
