//! The controller channel (spec §6.3): connections, roles, async config,
//! active connectors and passive listeners, TLS.
//!
//! - [`endpoint`]: `tcp:`/`tls:`/`ptcp:`/`ptls:` strings.
//! - [`connection`]: one connection's state machine.
//! - [`role`], [`async_config`]: controller roles and async filtering.
//! - [`hub`]: all connections, their roles, async delivery, fail-mode status.
//! - [`datapath`]: the trait and request queue to the datapath.
//! - [`listener`], [`connector`]: passive and active endpoints.
//! - [`tls`]: rustls configuration from PEM files.
//! - [`manager`]: start every configured endpoint.

pub mod async_config;
pub mod connection;
pub mod connector;
pub mod datapath;
pub mod endpoint;
pub mod hub;
pub mod listener;
pub mod manager;
pub mod role;
pub mod tls;

use std::sync::Arc;

/// What every connection task needs: the hub, the datapath queue and the
/// keepalive options.
#[derive(Debug, Clone)]
pub struct Context {
    pub hub: Arc<hub::Hub>,
    pub dp: datapath::DpSender,
    pub opts: connection::ConnOptions,
}
