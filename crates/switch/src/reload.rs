//! The configured ports' run-time side: how the datapath opens ports
//! added at run time, the configured queues, and SIGHUP.
//!
//! # SIGHUP
//!
//! On SIGHUP the daemon re-reads its configuration file (the one given
//! with `--config`, unless `--port` flags replaced its ports) and applies
//! the difference in its `[[port]]` list, leaving everything else as it
//! is (controllers, workers, ... need a restart):
//!
//! - an interface no longer listed is removed (PORT_STATUS DELETE);
//! - a newly listed interface is added with the next free number
//!   (PORT_STATUS ADD; numbers are never reused, so a port added this way
//!   does not necessarily get its position in the list);
//! - a listed port whose `queues` or `max_rate` changed gets its new
//!   queues.
//!
//! Ports added with `oxflow ctl add-port` are not in the file and are
//! left alone. A file with errors is logged and changes nothing; a port
//! that cannot be added or queues that cannot be set are logged, and the
//! rest is applied.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tracing::{info, warn};

use crate::config::{Config, PortConfig};
use crate::daemon::{open_port, DaemonError, SharedDatapath};
use crate::datapath::ports_runtime::PortRef;
use crate::datapath::queues::QueueSpec;
use crate::datapath::Datapath;

/// The configuration the port opener and the reloader share (the latest
/// loaded one).
pub(crate) type SharedConfig = Arc<Mutex<Config>>;

fn specs(pc: &PortConfig) -> Vec<QueueSpec> {
    pc.queues.iter().map(|q| q.spec()).collect()
}

/// Registers the port opener and sets up the configured queues (ports
/// are numbered 1, 2, ... in configuration order at start).
pub(crate) fn prepare(dp: &mut Datapath, config: &Config) -> Result<SharedConfig, DaemonError> {
    let shared: SharedConfig = Arc::new(Mutex::new(config.clone()));
    let cfg = shared.clone();
    dp.set_port_opener(Box::new(move |interface: &str| {
        let c = cfg.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let pc = c
            .ports
            .iter()
            .find(|p| p.interface == interface)
            .cloned()
            .unwrap_or_else(|| PortConfig {
                name: None,
                interface: interface.to_string(),
                backend: None,
                max_rate: None,
                queues: Vec::new(),
            });
        open_port(&c, 0, &pc).map_err(|e| match e {
            DaemonError::Port { reason, .. } => reason,
            other => other.to_string(),
        })
    }));
    for (i, pc) in config.ports.iter().enumerate() {
        if pc.queues.is_empty() {
            continue;
        }
        let no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        dp.set_port_queues(no, pc.max_rate.map(|r| r.0), &specs(pc))
            .map_err(DaemonError::Queues)?;
    }
    Ok(shared)
}

/// Applies the `[[port]]` list of `new` after `old` (module comment).
pub(crate) fn apply_ports(dp: &mut Datapath, old: &Config, new: &Config) {
    let listed: BTreeSet<&str> = new.ports.iter().map(|p| p.interface.as_str()).collect();
    for pc in &old.ports {
        if listed.contains(pc.interface.as_str()) {
            continue;
        }
        if dp.port_by_name(&pc.interface).is_some() {
            match dp.del_port(&PortRef::Name(pc.interface.clone())) {
                Ok(no) => info!("reload: port {no} ({}) removed", pc.interface),
                Err(e) => warn!("reload: {e}"),
            }
        }
    }
    for pc in &new.ports {
        let before = old.ports.iter().find(|p| p.interface == pc.interface);
        let no = match dp.port_by_name(&pc.interface) {
            Some(no) => no,
            None => match dp.add_port(&pc.interface, None) {
                Ok(no) => {
                    info!("reload: {} added as port {no}", pc.interface);
                    no
                }
                Err(e) => {
                    warn!("reload: {e}");
                    continue;
                }
            },
        };
        let mut want = specs(pc);
        want.sort_by_key(|q| q.id);
        let speed_changed = before.is_some_and(|b| b.max_rate != pc.max_rate);
        if want != dp.queue_specs(no) || speed_changed {
            if let Err(e) = dp.set_port_queues(no, pc.max_rate.map(|r| r.0), &want) {
                warn!("reload: {e}");
            }
        }
    }
}

/// Re-reads the file (module comment) and applies it.
fn reload(dp: &SharedDatapath, shared: &SharedConfig) {
    let old = shared.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(path) = old.port_file.clone() else {
        info!("SIGHUP: no configuration file to re-read (ports were given with --port)");
        return;
    };
    let mut new = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => {
            warn!("SIGHUP: configuration not reloaded: {e}");
            return;
        }
    };
    info!("SIGHUP: re-reading the ports of {}", path.display());
    if new.trunks != old.trunks {
        warn!("SIGHUP: [[trunk]] changes need a restart; the trunks stay as started");
    }
    // Everything but the ports stays as the daemon started with.
    let mut kept = old.clone();
    kept.ports = std::mem::take(&mut new.ports);
    *shared.lock().unwrap_or_else(|e| e.into_inner()) = kept.clone();
    apply_ports(&mut dp.lock(), &old, &kept);
}

/// Starts the SIGHUP handler task.
pub(crate) fn on_sighup(
    dp: SharedDatapath,
    shared: SharedConfig,
) -> Result<tokio::task::JoinHandle<()>, DaemonError> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hup = signal(SignalKind::hangup())?;
    Ok(tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let (dp, shared) = (dp.clone(), shared.clone());
            let _ = tokio::task::spawn_blocking(move || reload(&dp, &shared)).await;
        }
    }))
}
