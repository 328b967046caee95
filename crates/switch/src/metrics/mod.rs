//! The Prometheus metrics endpoint (`metrics = "IP:PORT"` in the config,
//! `--metrics IP:PORT` on the command line; off by default): `GET
//! /metrics` on that address answers the switch's counters in the
//! Prometheus text exposition format. `docs/metrics.md` lists every
//! metric.
//!
//! - [`exposition`]: the text format (families, HELP/TYPE, escaping).
//! - [`snapshot`]: one scrape's numbers, read with the code that answers
//!   the OpenFlow statistics requests, and their metric families.
//! - [`http`]: the minimal HTTP/1.1 server, bounded against slow or
//!   hostile clients.
//!
//! A scrape runs on the control thread's tokio runtime; the datapath part
//! (which waits for the workers' counters, as a table-stats request does)
//! runs on tokio's blocking pool, and scrapes take turns ([`Metrics`]'s
//! `turn` lock), so concurrent scrapes never stack up datapath work and
//! never hold up the runtime.

pub mod exposition;
pub mod http;
pub mod snapshot;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::daemon::SharedDatapath;
use snapshot::{ChannelView, Snapshot};

/// The running endpoint; dropping it stops accepting (connections being
/// answered finish on their own).
#[derive(Debug)]
pub struct Metrics {
    pub local_addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Metrics {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Listens on `addr` and serves scrapes of `dp` and `channel`; `started`
/// is when the daemon started (uptime).
pub async fn start(
    addr: SocketAddr,
    dp: SharedDatapath,
    channel: ChannelView,
    started: Instant,
) -> std::io::Result<Metrics> {
    let listener = TcpListener::bind(addr).await?;
    let local_addr = listener.local_addr()?;
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    let start_time = snapshot::unix_time_of(started);
    let render = move || {
        let (dp, channel, turn) = (dp.clone(), channel.clone(), turn.clone());
        async move {
            let _turn = turn.lock().await;
            let mut snap = Snapshot {
                uptime: started.elapsed(),
                start_time,
                channel: channel.sample(),
                ..Snapshot::default()
            };
            tokio::task::spawn_blocking(move || {
                snap.read_datapath(&mut dp.lock());
                snap.render()
            })
            .await
            .ok()
        }
    };
    let task = tokio::spawn(http::serve(listener, render));
    Ok(Metrics { local_addr, task })
}
