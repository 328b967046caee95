//! TLS for the controller channel with rustls (ring provider).
//!
//! Both sides authenticate: the switch presents its certificate, and
//! requires the peer's certificate to chain to the configured CA. As in
//! Open vSwitch, a controller's certificate is not checked against the
//! address it was reached at (controllers are configured by IP and their
//! certificates rarely name it); the CA is the trust decision. The PEM
//! loading and the client side are `oxflow ctl`'s (`ctl::tls`), which
//! makes the same decision as a client of switches.

use std::path::PathBuf;
use std::sync::Arc;

use ctl::tls;
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, ServerConfig};

/// The three PEM files of a TLS setup.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsFiles {
    /// This switch's private key.
    pub private_key: PathBuf,
    /// This switch's certificate (chain).
    pub certificate: PathBuf,
    /// CA certificate(s) that peers' certificates must chain to.
    pub ca_cert: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file that cannot be read or holds nothing usable (the
    /// message names the file), or a client setup that failed.
    #[error("{0}")]
    Setup(String),
    #[error("TLS setup: {0}")]
    Rustls(#[from] rustls::Error),
    #[error("TLS setup: {0}")]
    Verifier(String),
}

/// Server side (passive `ptls:`): client certificates required.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let roots = tls::load_roots(&files.ca_cert).map_err(TlsError::Setup)?;
    let verifier = WebPkiClientVerifier::builder_with_provider(roots, tls::provider())
        .build()
        .map_err(|e| TlsError::Verifier(e.to_string()))?;
    let cfg = ServerConfig::builder_with_provider(tls::provider())
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(verifier)
        .with_single_cert(
            tls::load_certs(&files.certificate).map_err(TlsError::Setup)?,
            tls::load_key(&files.private_key).map_err(TlsError::Setup)?,
        )?;
    Ok(Arc::new(cfg))
}

/// Client side (active `tls:`): presents our certificate, checks the
/// controller's against the CA.
pub fn client_config(files: &TlsFiles) -> Result<Arc<ClientConfig>, TlsError> {
    tls::ca_only_client_config(&files.private_key, &files.certificate, &files.ca_cert)
        .map_err(TlsError::Setup)
}
