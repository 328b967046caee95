//! Starting every configured endpoint: one connector per controller (with
//! its auxiliary connections) and one listener per passive endpoint.

use std::sync::Arc;

use crate::config::Config;

use super::connection::ConnOptions;
use super::connector::{connect, Connector};
use super::listener::{listen, Listener};
use super::tls::{client_config, server_config};
use super::Context;

/// The running endpoints; dropping this closes listeners and connectors
/// (connections already accepted on a listener keep running).
#[derive(Debug)]
pub struct Channels {
    pub connectors: Vec<Connector>,
    pub listeners: Vec<Listener>,
}

/// Why the endpoints could not start; the message names the endpoint or
/// file at fault.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

impl ConnOptions {
    /// Keepalive options from the daemon configuration.
    pub fn from_config(cfg: &Config) -> Self {
        ConnOptions {
            echo_interval: cfg.echo_interval,
            echo_max_missed: cfg.echo_max_missed,
            ..ConnOptions::default()
        }
    }
}

/// Start `cfg.controllers` (counted as controllers for fail mode) and
/// `cfg.listeners` (management). `ctx.opts` is used as given.
pub async fn start(cfg: &Config, ctx: Context) -> Result<Channels, StartError> {
    let (client, server) = match &cfg.tls {
        Some(files) => (
            Some(client_config(files).map_err(|e| StartError(e.to_string()))?),
            Some(server_config(files).map_err(|e| StartError(e.to_string()))?),
        ),
        None => (None, None),
    };
    let mut connectors = Vec::new();
    for ep in &cfg.controllers {
        let tls = client.as_ref().map(Arc::clone);
        connectors.push(
            connect(
                *ep,
                tls,
                ctx.clone(),
                cfg.auxiliary_connections,
                cfg.reconnect,
            )
            .map_err(StartError)?,
        );
    }
    let mut listeners = Vec::new();
    for ep in &cfg.listeners {
        let tls = server.as_ref().map(Arc::clone);
        listeners.push(
            listen(*ep, tls, ctx.clone(), false)
                .await
                .map_err(|e| StartError(format!("{ep}: {e}")))?,
        );
    }
    Ok(Channels {
        connectors,
        listeners,
    })
}
