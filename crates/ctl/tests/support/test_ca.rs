//! A test certificate authority (rcgen) that writes PEM files into a
//! temporary directory removed on drop. Shared by `ctl`'s and the
//! switch's TLS tests (the switch's includes this file by path).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};

/// A temporary directory removed on drop (also when a test fails).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "oxflow-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA that issues leaf certificates.
pub struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

/// The three PEM files of a leaf: its key, its certificate and the CA
/// certificate it trusts.
pub struct LeafFiles {
    pub key: PathBuf,
    pub cert: PathBuf,
    pub ca: PathBuf,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
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

    /// Writes under `dir` the files of a leaf named `prefix` (DNS name
    /// `PREFIX.test` and IP `ip` in its SAN), issued by this CA and
    /// trusting `trust`.
    pub fn leaf(&self, dir: &TempDir, prefix: &str, ip: &str, trust: &Ca) -> LeafFiles {
        let key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(vec![format!("{prefix}.test")]).unwrap();
        p.subject_alt_names
            .push(SanType::IpAddress(ip.parse().unwrap()));
        p.distinguished_name.push(DnType::CommonName, prefix);
        let cert = p.signed_by(&key, &self.issuer).unwrap();
        let f = LeafFiles {
            key: dir.0.join(format!("{prefix}-key.pem")),
            cert: dir.0.join(format!("{prefix}-cert.pem")),
            ca: dir.0.join(format!("{prefix}-ca.pem")),
        };
        std::fs::write(&f.key, key.serialize_pem()).unwrap();
        std::fs::write(&f.cert, cert.pem()).unwrap();
        std::fs::write(&f.ca, &trust.pem).unwrap();
        f
    }
}
