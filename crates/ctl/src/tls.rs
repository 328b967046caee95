//! `ssl:IP[:PORT]` targets: TLS with rustls (ring provider), as the
//! switch's `ptls:` listeners speak it.
//!
//! Like ovs-ofctl, the client takes three PEM files (`--private-key`,
//! `--certificate`, `--ca-cert`, or `-p`, `-c`, `-C`): it presents its own
//! certificate (the switch requires one) and accepts the switch's when it
//! chains to the CA. As in Open vSwitch and the switch's own TLS, the
//! certificate is not checked against the address it was reached at
//! (switches are addressed by IP and their certificates rarely name it);
//! the CA is the trust decision.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::{
    CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore,
    StreamOwned,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

/// The three PEM files of the client's TLS setup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub private_key: Option<PathBuf>,
    pub certificate: Option<PathBuf>,
    pub ca_cert: Option<PathBuf>,
}

/// The files given on the command line (set by the command parser;
/// `ssl:` targets read them when they connect).
static FILES: Mutex<Option<TlsFiles>> = Mutex::new(None);

/// Records the command line's TLS files for `ssl:` connections.
pub fn set_files(files: TlsFiles) {
    if let Ok(mut f) = FILES.lock() {
        *f = Some(files);
    }
}

/// The client configuration from the command line's files (checked
/// before anything is connected to).
pub fn configured() -> Result<Arc<ClientConfig>, String> {
    let files = FILES
        .lock()
        .ok()
        .and_then(|f| f.clone())
        .unwrap_or_default();
    client_config(&files)
}

/// A TLS stream over TCP.
pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// The crypto provider both ends use (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn need<'a>(p: &'a Option<PathBuf>, option: &str) -> Result<&'a Path, String> {
    p.as_deref()
        .ok_or_else(|| format!("ssl: targets need {option}=FILE"))
}

/// The certificates of the PEM file at `path` (at least one); errors name
/// the file.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no PEM certificate in file", path.display()));
    }
    Ok(certs)
}

/// The private key of the PEM file at `path`; errors name the file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A root store of the CA certificates in the PEM file at `path`.
pub fn load_roots(path: &Path) -> Result<Arc<RootCertStore>, String> {
    let mut roots = RootCertStore::empty();
    for c in load_certs(path)? {
        roots
            .add(c)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(Arc::new(roots))
}

/// Chain verification against the CA without the name check (module
/// comment).
#[derive(Debug)]
struct CaOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for CaOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The client configuration from `files`.
pub fn client_config(files: &TlsFiles) -> Result<Arc<ClientConfig>, String> {
    ca_only_client_config(
        need(&files.private_key, "--private-key")?,
        need(&files.certificate, "--certificate")?,
        need(&files.ca_cert, "--ca-cert")?,
    )
}

/// A TLS client that presents the certificate `cert` (key `key`) and
/// accepts a peer whose certificate chains to the CA in `ca`, whatever
/// name it carries (module comment). The switch's active `tls:`
/// connections to controllers use it too.
pub fn ca_only_client_config(
    key: &Path,
    cert: &Path,
    ca: &Path,
) -> Result<Arc<ClientConfig>, String> {
    let inner = WebPkiServerVerifier::builder_with_provider(load_roots(ca)?, provider())
        .build()
        .map_err(|e| format!("TLS setup: {e}"))?;
    let cfg = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS setup: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(CaOnly(inner)))
        .with_client_auth_cert(load_certs(cert)?, load_key(key)?)
        .map_err(|e| format!("TLS setup: {e}"))?;
    Ok(Arc::new(cfg))
}

/// TLS with `cfg` over the connected socket `tcp` to `host` (the
/// target's host part, for SNI when it is a name). The handshake
/// completes here, so certificate errors show at connect.
pub fn connect(cfg: Arc<ClientConfig>, tcp: TcpStream, host: &str) -> Result<TlsStream, String> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ServerName::IpAddress(ip.into()),
        Err(_) => ServerName::try_from(host.to_string())
            .map_err(|e| format!("{host}: not a host name for TLS: {e}"))?,
    };
    let conn = ClientConnection::new(cfg, name).map_err(|e| format!("TLS setup: {e}"))?;
    let mut s = StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn
            .complete_io(&mut s.sock)
            .map_err(|e| format!("TLS handshake: {e}"))?;
    }
    Ok(s)
}
