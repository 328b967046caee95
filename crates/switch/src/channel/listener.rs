//! Passive endpoints (`ptcp:`, `ptls:`): accept any number of connections,
//! each its own controller group.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::timeout;

use super::connection::{run_connection, ConnRole};
use super::endpoint::{Endpoint, Transport};
use super::Context;

/// A bound listener; dropping it stops accepting (open connections stay).
#[derive(Debug)]
pub struct Listener {
    pub local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Bind `ep` (which must be passive) and accept in a background task.
/// `tls` is required for `ptls:`. `is_controller`: connections count for
/// fail mode (a configured controller) rather than management.
pub async fn listen(
    ep: Endpoint,
    tls: Option<Arc<ServerConfig>>,
    ctx: Context,
    is_controller: bool,
) -> io::Result<Listener> {
    // The endpoint's own transport decides: a `[tls]` section in the config
    // must not turn plain `tcp:`/`ptcp:` endpoints into TLS ones.
    let tls = if ep.transport == Transport::Tls {
        tls
    } else {
        None
    };
    if ep.transport == Transport::Tls && tls.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{ep}: TLS endpoint without TLS certificate files"),
        ));
    }
    let sock = TcpListener::bind(ep.addr).await?;
    let local_addr = sock.local_addr()?;
    tracing::info!("listening on {ep} ({local_addr})");
    let task = tokio::spawn(async move {
        loop {
            let (tcp, peer) = match sock.accept().await {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accept on {local_addr}: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            let ctx = ctx.clone();
            let who = ConnRole {
                group: ctx.hub.new_id(),
                auxiliary_id: 0,
                is_controller,
            };
            let tls = tls.clone();
            tokio::spawn(async move {
                let (hub, dp, opts) = (ctx.hub, ctx.dp, ctx.opts);
                let r = match tls {
                    None => run_connection(tcp, peer, hub, dp, who, opts).await,
                    Some(cfg) => {
                        let acceptor = tokio_rustls::TlsAcceptor::from(cfg);
                        match timeout(opts.hello_timeout, acceptor.accept(tcp)).await {
                            Ok(Ok(s)) => run_connection(s, peer, hub, dp, who, opts).await,
                            Ok(Err(e)) => {
                                tracing::warn!(%peer, "TLS handshake refused: {e}");
                                return;
                            }
                            Err(_) => {
                                tracing::warn!(%peer, "TLS handshake timed out");
                                return;
                            }
                        }
                    }
                };
                if let Err(e) = r {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
            });
        }
    });
    Ok(Listener { local_addr, task })
}
