//! Active endpoints (`tcp:`, `tls:`): the switch connects to a controller,
//! and reconnects with exponential backoff whenever the connection fails or
//! ends. A connector may also keep auxiliary connections (auxiliary_id
//! 1..=N) to the same controller, each with its own reconnect loop; all of
//! them form one controller group (see `hub`).

use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::timeout;

use super::connection::{run_connection, ConnError, ConnRole};
use super::endpoint::{Endpoint, Transport};
use super::Context;

/// Reconnect delays: `initial`, doubled after each failure up to `max`,
/// back to `initial` after a connection that completed its HELLO exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(8),
        }
    }
}

impl Backoff {
    fn next(&self, cur: Duration) -> Duration {
        (cur * 2).min(self.max)
    }
}

/// Running connection loops; dropping the connector closes them.
#[derive(Debug)]
pub struct Connector {
    pub endpoint: Endpoint,
    /// The hub's controller group of this connector's connections.
    pub group: super::hub::GroupId,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Connector {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Start connecting to `ep` (active) with `n_aux` auxiliary connections.
/// `tls` is required for `tls:`; refused here if missing.
pub fn connect(
    ep: Endpoint,
    tls: Option<Arc<ClientConfig>>,
    ctx: Context,
    n_aux: u8,
    backoff: Backoff,
) -> Result<Connector, String> {
    // The endpoint's own transport decides: a `[tls]` section in the config
    // must not turn plain `tcp:`/`ptcp:` endpoints into TLS ones.
    let tls = if ep.transport == Transport::Tls {
        tls
    } else {
        None
    };
    if ep.transport == Transport::Tls && tls.is_none() {
        return Err(format!("{ep}: TLS endpoint without TLS certificate files"));
    }
    let group = ctx.hub.new_id();
    let tasks = (0..=n_aux)
        .map(|aux| {
            let who = ConnRole {
                group,
                auxiliary_id: aux,
                is_controller: true,
            };
            tokio::spawn(reconnect_loop(ep, tls.clone(), ctx.clone(), who, backoff))
        })
        .collect();
    Ok(Connector {
        endpoint: ep,
        group,
        tasks,
    })
}

async fn reconnect_loop(
    ep: Endpoint,
    tls: Option<Arc<ClientConfig>>,
    ctx: Context,
    who: ConnRole,
    backoff: Backoff,
) {
    let mut delay = backoff.initial;
    loop {
        match once(ep, tls.clone(), &ctx, who).await {
            // Reached the serving state: the next failure starts afresh.
            Err(ConnError::Closed | ConnError::EchoTimeout(_) | ConnError::BadFrame) => {
                delay = backoff.initial;
            }
            Err(e) => tracing::debug!("{ep} aux {}: {e}", who.auxiliary_id),
            Ok(()) => delay = backoff.initial,
        }
        tracing::info!("{ep}: reconnecting in {delay:?}");
        tokio::time::sleep(delay).await;
        delay = backoff.next(delay);
    }
}

async fn once(
    ep: Endpoint,
    tls: Option<Arc<ClientConfig>>,
    ctx: &Context,
    who: ConnRole,
) -> Result<(), ConnError> {
    let tcp = TcpStream::connect(ep.addr).await?;
    let _ = tcp.set_nodelay(true);
    let (hub, dp, opts) = (ctx.hub.clone(), ctx.dp.clone(), ctx.opts);
    match tls {
        None => run_connection(tcp, ep.addr, hub, dp, who, opts).await,
        Some(cfg) => {
            let name = ServerName::IpAddress(ep.addr.ip().into());
            let conn = tokio_rustls::TlsConnector::from(cfg);
            let s = timeout(opts.hello_timeout, conn.connect(name, tcp))
                .await
                .map_err(|_| ConnError::HelloTimeout)??;
            run_connection(s, ep.addr, hub, dp, who, opts).await
        }
    }
}
