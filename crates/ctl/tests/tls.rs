//! `ssl:` targets: `oxflow ctl` against a TLS endpoint that, like the
//! switch's `ptls:` listener, requires a client certificate from its CA.
//! Certificates come from an rcgen test CA in a temporary directory.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use ofp::header::frame_len;
use ofp::message::{Hello, Message};
use ofp::multipart::{Desc, MultipartReply, MultipartReplyBody, MultipartRequestBody};
use ofp::OfpMessage;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let cert = p.self_signed(&key).unwrap();
        Ca {
            pem: cert.pem(),
            issuer: Issuer::new(p, key),
        }
    }

    /// (key, cert, ca) files of a leaf issued by this CA, trusting `trust`.
    fn files(&self, dir: &TempDir, prefix: &str, trust: &Ca) -> [PathBuf; 3] {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec![format!("{prefix}.test")]).unwrap();
        p.subject_alt_names
            .push(SanType::IpAddress("127.0.0.2".parse().unwrap()));
        p.distinguished_name.push(DnType::CommonName, prefix);
        let cert = p.signed_by(&key, &self.issuer).unwrap();
        let f = ["key", "cert", "ca"].map(|k| dir.0.join(format!("{prefix}-{k}.pem")));
        std::fs::write(&f[0], key.serialize_pem()).unwrap();
        std::fs::write(&f[1], cert.pem()).unwrap();
        std::fs::write(&f[2], &trust.pem).unwrap();
        f
    }
}

/// A TLS OpenFlow endpoint on 127.0.0.1 (connections one after another):
/// HELLO, then a switch description for a DESC request.
fn serve_tls(files: &[PathBuf; 3]) -> u16 {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files[1])
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(&files[0]).unwrap();
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&files[2]).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    let cfg = Arc::new(
        ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(verifier)
            .with_single_cert(certs, key)
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
    let dir = TempDir(std::env::temp_dir().join(format!("oxflow-ctl-tls-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let ca = Ca::new("ctl test CA");
    let switch = ca.files(&dir, "switch", &ca);
    let client = ca.files(&dir, "ctl", &ca);
    let port = serve_tls(&switch);
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    let target = format!("ssl:127.0.0.1:{port}");
    let (code, out, err) = ctl(&[
        format!("--private-key={}", s(&client[0])),
        "-c".into(),
        s(&client[1]),
        format!("-C{}", s(&client[2])),
        "dump-desc".into(),
        target.clone(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Manufacturer: tls test"), "{out}");

    // A client certificate from another CA: the endpoint refuses it (the
    // client trusts the endpoint's CA, so the refusal is the endpoint's).
    let other = Ca::new("another CA");
    let rogue = other.files(&dir, "rogue", &ca);
    let (code, _, err) = ctl(&[
        format!("--private-key={}", s(&rogue[0])),
        format!("--certificate={}", s(&rogue[1])),
        format!("--ca-cert={}", s(&rogue[2])),
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
