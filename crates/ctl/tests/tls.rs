//! `ssl:` targets: `oxflow ctl` against a TLS endpoint that, like the
//! switch's `ptls:` listener, requires a client certificate from its CA.
//! Certificates come from an rcgen test CA in a temporary directory.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use ctl::tls;
use ofp::header::frame_len;
use ofp::message::{Hello, Message};
use ofp::multipart::{Desc, MultipartReply, MultipartReplyBody, MultipartRequestBody};
use ofp::OfpMessage;
use rustls::server::WebPkiClientVerifier;
use rustls::{ServerConfig, ServerConnection, StreamOwned};

#[path = "support/test_ca.rs"]
mod test_ca;
use test_ca::{Ca, LeafFiles, TempDir};

/// A TLS OpenFlow endpoint on 127.0.0.1 (connections one after another):
/// HELLO, then a switch description for a DESC request.
fn serve_tls(files: &LeafFiles) -> u16 {
    let verifier = WebPkiClientVerifier::builder_with_provider(
        tls::load_roots(&files.ca).unwrap(),
        tls::provider(),
    )
    .build()
    .unwrap();
    let cfg = Arc::new(
        ServerConfig::builder_with_provider(tls::provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                tls::load_certs(&files.cert).unwrap(),
                tls::load_key(&files.key).unwrap(),
            )
            .unwrap(),
    );
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(s) = s else { return };
            let Ok(conn) = ServerConnection::new(cfg.clone()) else {
                return;
            };
            let mut s = StreamOwned::new(conn, s);
            let hello = OfpMessage::new(1, Message::Hello(Hello::ofp13())).encode();
            if s.write_all(&hello).is_err() {
                continue;
            }
            let mut buf = Vec::new();
            loop {
                let mut chunk = [0u8; 4096];
                match s.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
                while let Ok(Some(len)) = frame_len(&buf) {
                    let frame: Vec<u8> = buf.drain(..len).collect();
                    let Ok(m) = OfpMessage::decode(&frame) else {
                        return;
                    };
                    if let Message::MultipartRequest(r) = m.body {
                        if r.body == MultipartRequestBody::Desc {
                            let desc = Desc {
                                mfr_desc: "tls test".into(),
                                ..Desc::default()
                            };
                            let reply = Message::MultipartReply(MultipartReply::new(
                                MultipartReplyBody::Desc(desc),
                            ));
                            let _ = s.write_all(&OfpMessage::new(m.xid, reply).encode());
                        }
                    }
                }
            }
        }
    });
    port
}

fn ctl(args: &[String]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = ctl::commands::run(args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn ssl_target_with_client_certificate() {
    let dir = TempDir::new("ctl-tls");
    let ca = Ca::new("ctl test CA");
    let switch = ca.leaf(&dir, "switch", "127.0.0.2", &ca);
    let client = ca.leaf(&dir, "ctl", "127.0.0.2", &ca);
    let port = serve_tls(&switch);
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let target = format!("ssl:127.0.0.1:{port}");
    let (code, out, err) = ctl(&[
        format!("--private-key={}", s(&client.key)),
        "-c".into(),
        s(&client.cert),
        format!("-C{}", s(&client.ca)),
        "dump-desc".into(),
        target.clone(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Manufacturer: tls test"), "{out}");

    // A client certificate from another CA: the endpoint refuses it (the
    // client trusts the endpoint's CA, so the refusal is the endpoint's).
    let other = Ca::new("another CA");
    let rogue = other.leaf(&dir, "rogue", "127.0.0.2", &ca);
    let (code, _, err) = ctl(&[
        format!("--private-key={}", s(&rogue.key)),
        format!("--certificate={}", s(&rogue.cert)),
        format!("--ca-cert={}", s(&rogue.ca)),
        "dump-desc".into(),
        target.clone(),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("alert") || err.contains("TLS"), "{err}");

    // Without the files: a clear message, before any traffic.
    let (code, _, err) = ctl(&["dump-desc".into(), "ssl:127.0.0.1:1".into()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("ssl: targets need --private-key=FILE"),
        "{err}"
    );
}
