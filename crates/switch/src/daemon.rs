//! `oxflow run`: the daemon that ties ports, datapath and controller channel
//! together.
//!
//! # Who owns what
//!
//! - The **ports** are opened here at start, and at run time through the
//!   opener [`crate::reload::prepare`] gives the datapath (`oxflow ctl
//!   add-port`, SIGHUP: [`crate::reload`]) (one [`AfPacket`] per configured
//!   interface, OpenFlow numbers 1, 2, ... in configuration order) and handed
//!   to [`Datapath::start`], which spawns the worker threads.
//! - The **datapath** (the authoritative pipeline) has two users on the
//!   control side: the channel's [`serve_datapath`] task (requests from
//!   controllers) and the **pump** below (events, timers, fail mode). Both
//!   reach it through [`SharedDatapath`], an `Arc<Mutex<Datapath>>`: each
//!   request or pump round holds the lock for one short, bounded piece of
//!   work, so the two never interleave inside an operation (a barrier or a
//!   counter collection sees a consistent sequence of operations).
//! - The **pump** is a plain thread (its work is blocking: collecting
//!   counters waits for the workers). Woken by every packet-in, and at the
//!   latest every [`PUMP_INTERVAL`], it drains
//!   [`Datapath::take_events`] into [`Hub::send_async`] (which applies roles
//!   and async filters and never waits) and applies the fail mode; every
//!   [`TICK_INTERVAL`] it runs [`Datapath::tick`] (link changes -> port-status
//!   and fast-failover, idle/hard timeouts -> flow-removed).
//!
//! # Fail mode (spec §6.4)
//!
//! - `standalone`: while no controller connection is up (passive management
//!   connections such as `oxflow ctl` do not count) the workers run the L2
//!   learning switch ([`Mode::Standalone`]); as soon as a controller connects
//!   they run the OpenFlow pipeline again. Flows are kept either way.
//! - `secure`: always the pipeline; without a controller, table misses that
//!   would go to the controller are dropped (the hub has nobody to send them
//!   to) and the flows stay.
//!
//! # The LOCAL port (spec §4.5)
//!
//! With `local_port = "NAME"` (or `--local-port NAME`) the daemon creates a
//! tap device NAME ([`TapPort`]) and registers it as port `OFPP_LOCAL`
//! (0xfffffffe): the switch's own network stack, reachable by
//! `output:LOCAL` and matched by `in_port=LOCAL`. It is a reserved port, so
//! ALL and FLOOD do not include it (the pipeline's `flood_set` covers
//! standard ports only). The device lives as long as its descriptor: it
//! disappears when the daemon exits. An existing interface of that name is
//! refused rather than attached to, so that the daemon never takes over (or
//! leaves behind) a device it did not create. Off by default.

use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ofp::message::Message;
use ofp::port::port_no;
use ofp::OfpMessage;
use ports::{AfPacket, AfPacketOpts, Port, RxMode, TapPort, XdpOpts, XdpPort};
use tokio::sync::mpsc;
use tracing::{info, warn};

use crate::channel::connection::ConnOptions;
use crate::channel::datapath::{self as chan_dp, serve_datapath, DP_QUEUE};
use crate::channel::hub::{ConnId, ConnInfo, ControllerStatus, Hub};
use crate::channel::{manager, Context};
use crate::config::{self, Config, FailMode, PortBackend};
use crate::datapath::ops::Mode;
use crate::datapath::trunk_start::TrunkOpen;
use crate::datapath::{Clock, Datapath, DpConfig, DpEvent, PollMode};

/// How often the pump checks the controller status (fail mode), link events
/// and pending events when nothing wakes it; packet-ins wake it at once.
/// Long enough that an idle switch costs next to no CPU.
pub const PUMP_INTERVAL: Duration = Duration::from_millis(10);
/// How often the pump checks links and flow timeouts.
pub const TICK_INTERVAL: Duration = Duration::from_millis(100);

/// Why the daemon could not start (the message names the port, endpoint or
/// file at fault).
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("port {no} ({interface}): {reason}")]
    Port {
        no: u32,
        interface: String,
        reason: String,
    },
    /// Queues that cannot be set up (the message names port and queue).
    #[error("{0}")]
    Queues(String),
    #[error("LOCAL port (tap {interface}): {reason}")]
    LocalPort { interface: String, reason: String },
    #[error("{0}")]
    Channel(#[from] manager::StartError),
    #[error("control thread: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("metrics endpoint {addr}: {reason}")]
    Metrics { addr: String, reason: String },
    #[error("{0}")]
    State(String),
    /// A module graph that does not load or build (`FILE:LINE: reason`).
    #[error("graph {0}")]
    Graph(String),
}

/// The datapath shared by the channel's request task and the pump (module
/// comment).
#[derive(Clone)]
pub struct SharedDatapath(pub Arc<Mutex<Datapath>>);

impl SharedDatapath {
    pub fn new(dp: Datapath) -> Self {
        SharedDatapath(Arc::new(Mutex::new(dp)))
    }

    /// Locks the datapath. A panic while it was held (a bug) leaves the
    /// pipeline as the last completed operation left it, so keep serving.
    pub fn lock(&self) -> MutexGuard<'_, Datapath> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl chan_dp::Datapath for SharedDatapath {
    fn handle(&mut self, conn: &ConnInfo, msg: OfpMessage, raw: &[u8]) -> Vec<OfpMessage> {
        chan_dp::Datapath::handle(&mut *self.lock(), conn, msg, raw)
    }

    fn connection_closed(&mut self, conn: ConnId) {
        chan_dp::Datapath::connection_closed(&mut *self.lock(), conn)
    }
}

/// Runs the daemon in the foreground until SIGTERM or SIGINT, on a tokio
/// runtime (the control thread).
pub fn run(config: Config) -> Result<(), DaemonError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("oxflow-control")
        .enable_all()
        .build()?;
    rt.block_on(async {
        let stop = shutdown_signal()?;
        serve(config, stop).await
    })
}

/// Resolves on the first SIGTERM or SIGINT (the handlers are installed when
/// this is called, before the future is polled).
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        info!("{name} received, stopping");
    })
}

/// Opened ports: `(OpenFlow port number, backend)`, as [`Datapath::start`]
/// takes them.
type OpenPorts = Vec<(u32, Box<dyn Port>)>;

/// Opens the configured ports.
fn open_ports(config: &Config) -> Result<OpenPorts, DaemonError> {
    let mut out: OpenPorts = Vec::new();
    for (i, pc) in config.ports.iter().enumerate() {
        let no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        out.push((no, open_port(config, no, pc)?));
    }
    if let Some(name) = &config.local_port {
        out.push((port_no::LOCAL, Box::new(create_local_port(name)?)));
    }
    Ok(out)
}

/// Opens the configured trunks (always AF_PACKET: `datapath::trunk`).
fn open_trunks(config: &Config) -> Result<Vec<TrunkOpen>, DaemonError> {
    let mut out = Vec::new();
    for (t, first_no) in config.trunks.iter().zip(config.trunk_port_numbers()) {
        let pc = config::PortConfig {
            name: None,
            interface: t.interface.clone(),
            backend: None,
            max_rate: None,
            queues: Vec::new(),
        };
        let err = |reason: String| DaemonError::Port {
            no: first_no,
            interface: t.interface.clone(),
            reason: format!("trunk {}={}-{}: {reason}", t.interface, t.first, t.last),
        };
        if !Path::new("/sys/class/net").join(&t.interface).exists() {
            return Err(err("no such network interface".into()));
        }
        let io = open_afpacket(config, first_no, &pc).map_err(err)?;
        info!(
            "trunk {}: VLANs {}-{} are ports {}-{} ({}.{} ...)",
            t.interface,
            t.first,
            t.last,
            first_no,
            first_no as usize + t.len() - 1,
            t.interface,
            t.first
        );
        out.push(TrunkOpen {
            io,
            first_vid: t.first,
            last_vid: t.last,
            first_no,
        });
    }
    Ok(out)
}

/// Opens one configured port as port `no` with its backend.
pub(crate) fn open_port(
    config: &Config,
    no: u32,
    pc: &config::PortConfig,
) -> Result<Box<dyn Port>, DaemonError> {
    {
        let err = |reason: String| DaemonError::Port {
            no,
            interface: pc.interface.clone(),
            reason,
        };
        if !Path::new("/sys/class/net").join(&pc.interface).exists() {
            return Err(err("no such network interface".into()));
        }
        let port: Box<dyn Port> = match config.backend_of(pc) {
            PortBackend::Xdp => match XdpPort::open(&pc.interface, &XdpOpts::default()) {
                Ok(p) => {
                    let how = format!("AF_XDP {}, {} queue(s)", p.mode(), p.queues());
                    log_port(no, pc, &p, &how);
                    Box::new(p)
                }
                Err(e) => {
                    warn!(
                        "port {no} ({}): cannot open AF_XDP ({e}); falling back to AF_PACKET",
                        pc.interface
                    );
                    open_afpacket(config, no, pc).map_err(err)?
                }
            },
            PortBackend::AfPacket => open_afpacket(config, no, pc).map_err(err)?,
        };
        Ok(port)
    }
}

/// Opens `pc` with AF_PACKET (with `PACKET_VNET_HDR` when `gso` is on,
/// receiving as `afpacket_rx` says).
fn open_afpacket(
    config: &Config,
    no: u32,
    pc: &config::PortConfig,
) -> Result<Box<dyn Port>, String> {
    let (rx, rx_name) = match config.afpacket_rx {
        config::AfPacketRx::Ring => (RxMode::FrameRing, ""),
        config::AfPacketRx::Blocks => (RxMode::BlockRing, ", block ring"),
        config::AfPacketRx::Recvmmsg => (RxMode::Recvmmsg, ", recvmmsg"),
    };
    let opts = AfPacketOpts {
        vnet_hdr: config.gso,
        rx,
        ..AfPacketOpts::default()
    };
    let p = AfPacket::open(&pc.interface, &opts).map_err(|e| e.to_string())?;
    let how = format!(
        "AF_PACKET{}{rx_name}",
        if config.gso { ", GSO" } else { "" }
    );
    log_port(no, pc, &p, &how);
    Ok(Box::new(p))
}

fn log_port(no: u32, pc: &config::PortConfig, port: &dyn Port, how: &str) {
    info!(
        "port {no}: {} (interface {}, {how}, link {})",
        pc.name(),
        pc.interface,
        if port.link_up() { "up" } else { "down" }
    );
}

/// Creates the tap device `name` for the LOCAL port (module comment).
fn create_local_port(name: &str) -> Result<TapPort, DaemonError> {
    let err = |reason: String| DaemonError::LocalPort {
        interface: name.to_string(),
        reason,
    };
    // IFNAMSIZ is 16 bytes including the terminating NUL.
    if name.is_empty() || name.len() > 15 || name.contains(['/', ' ', '\0']) {
        return Err(err(
            "bad interface name (1 to 15 characters, no '/' or spaces)".into(),
        ));
    }
    if Path::new("/sys/class/net").join(name).exists() {
        return Err(err("an interface of that name already exists".into()));
    }
    let tap = TapPort::create(name).map_err(|e| err(e.to_string()))?;
    let m = tap.hw_addr();
    info!(
        "port LOCAL: tap {name} (addr {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x})",
        m[0], m[1], m[2], m[3], m[4], m[5]
    );
    Ok(tap)
}

/// Runs the daemon until `stop` resolves; see the module comment.
pub async fn serve(config: Config, stop: impl Future<Output = ()>) -> Result<(), DaemonError> {
    let started = Instant::now();
    let ports = open_ports(&config)?;
    let trunks = open_trunks(&config)?;
    let n_ports = config.ports.len() + config.trunks.iter().map(|t| t.len()).sum::<usize>();
    let dp_config = DpConfig {
        datapath_id: config.datapath_id,
        n_workers: config.workers.max(1),
        poll: match config.poll_mode {
            config::PollMode::Adaptive => match config.poll_spin_us {
                Some(us) => PollMode::Adaptive {
                    spin: Duration::from_micros(us.into()),
                },
                None => PollMode::default(),
            },
            config::PollMode::Busy => PollMode::Busy,
        },
        select_method: config.select_method,
        state_capacity: config.state_capacity,
        table_lookups: config.table_lookups.clone(),
        graph: match &config.graph {
            Some(path) => Some(Arc::new(
                crate::datapath::graph_run::GraphSpec::load(path).map_err(DaemonError::Graph)?,
            )),
            None => None,
        },
        ..DpConfig::default()
    };
    let mut dp = Datapath::try_start_with_trunks(dp_config, ports, trunks, Clock::real())
        .map_err(DaemonError::Graph)?;
    let port_config = match crate::reload::prepare(&mut dp, &config) {
        Ok(c) => c,
        Err(e) => {
            dp.shutdown();
            return Err(e);
        }
    };
    // The saved state goes in before any connection is accepted.
    if let Some(dir) = &config.state_dir {
        if let Err(e) = crate::persist::restore(&mut dp, dir, config.state_corrupt) {
            dp.shutdown();
            return Err(DaemonError::State(e));
        }
    }
    let hub = Hub::new(dp.features());
    // The mode before any controller could connect (the pump keeps it up
    // to date from then on).
    let mode = wanted_mode(config.fail_mode, hub.controller_status());
    dp.set_mode(mode);
    log_mode(mode, config.fail_mode);
    let shared = SharedDatapath::new(dp);
    let (dp_tx, dp_rx) = mpsc::channel(DP_QUEUE);
    let server = tokio::spawn(serve_datapath(shared.clone(), dp_rx));
    let pump = Pump::start(shared.clone(), hub.clone(), config.fail_mode);
    let ctx = Context {
        hub: hub.clone(),
        dp: dp_tx,
        opts: ConnOptions::from_config(&config),
    };
    let channels = match manager::start(&config, ctx).await {
        Ok(c) => c,
        Err(e) => {
            pump.stop();
            server.abort();
            shared.lock().shutdown();
            return Err(e.into());
        }
    };
    let metrics = match start_metrics(&config, &shared, &hub, &channels, started).await {
        Ok(m) => m,
        Err(e) => {
            drop(channels);
            pump.stop();
            server.abort();
            shared.lock().shutdown();
            return Err(e);
        }
    };
    let listeners: Vec<String> = channels
        .listeners
        .iter()
        .map(|l| l.local_addr.to_string())
        .collect();
    let controllers: Vec<String> = config.controllers.iter().map(|e| e.to_string()).collect();
    info!(
        "oxflow ready: datapath {:016x}, {n_ports} ports{}, {} workers, controllers [{}], \
         listening on [{}], fail mode {}",
        config.datapath_id,
        match &config.local_port {
            Some(name) => format!(" + LOCAL ({name})"),
            None => String::new(),
        },
        config.workers.max(1),
        controllers.join(", "),
        listeners.join(", "),
        match config.fail_mode {
            FailMode::Secure => "secure",
            FailMode::Standalone => "standalone",
        }
    );
    let reloader = crate::reload::on_sighup(shared.clone(), port_config)?;
    stop.await;
    reloader.abort();
    // Close the endpoints first (no new requests), then the pump, then the
    // workers.
    drop(metrics);
    drop(channels);
    pump.stop();
    server.abort();
    shared.lock().shutdown();
    info!("stopped");
    Ok(())
}

/// Starts the metrics endpoint if `config.metrics` asks for one.
async fn start_metrics(
    config: &Config,
    shared: &SharedDatapath,
    hub: &Arc<Hub>,
    channels: &manager::Channels,
    started: Instant,
) -> Result<Option<crate::metrics::Metrics>, DaemonError> {
    let Some(addr) = config.metrics else {
        return Ok(None);
    };
    let view = crate::metrics::snapshot::ChannelView {
        hub: hub.clone(),
        controllers: channels
            .connectors
            .iter()
            .map(|c| (c.endpoint.to_string(), c.group))
            .collect(),
    };
    let m = crate::metrics::start(addr, shared.clone(), view, started)
        .await
        .map_err(|e| DaemonError::Metrics {
            addr: addr.to_string(),
            reason: e.to_string(),
        })?;
    info!(
        "metrics: http://{}{}",
        m.local_addr,
        crate::metrics::http::PATH
    );
    Ok(Some(m))
}

/// The pump thread (module comment).
struct Pump {
    stop: Arc<AtomicBool>,
    join: JoinHandle<()>,
}

impl Pump {
    fn start(dp: SharedDatapath, hub: Arc<Hub>, fail_mode: FailMode) -> Pump {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let join = std::thread::Builder::new()
            .name("oxflow-pump".into())
            .spawn(move || pump_loop(&dp, &hub, fail_mode, &flag))
            .expect("spawning the pump thread");
        Pump { stop, join }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.join.thread().unpark();
        if self.join.join().is_err() {
            warn!("the pump thread panicked");
        }
    }
}

/// The datapath mode the fail mode asks for, given the controller status.
pub fn wanted_mode(fail_mode: FailMode, status: ControllerStatus) -> Mode {
    match (fail_mode, status) {
        (FailMode::Standalone, ControllerStatus::DisconnectedSince(_)) => Mode::Standalone,
        _ => Mode::Pipeline,
    }
}

fn log_mode(mode: Mode, fail_mode: FailMode) {
    match mode {
        Mode::Standalone => {
            info!("no controller connected: fail-standalone, acting as an L2 learning switch")
        }
        Mode::Pipeline => info!("OpenFlow pipeline active (fail mode {fail_mode:?})"),
    }
}

fn to_message(ev: DpEvent) -> OfpMessage {
    let body = match ev {
        DpEvent::PacketIn(m) => Message::PacketIn(m),
        DpEvent::FlowRemoved(m) => Message::FlowRemoved(m),
        DpEvent::PortStatus(m) => Message::PortStatus(m),
        DpEvent::Experimenter(m) => Message::Experimenter(m),
    };
    OfpMessage::new(0, body)
}

fn pump_loop(dp: &SharedDatapath, hub: &Hub, fail_mode: FailMode, stop: &AtomicBool) {
    // Packet-ins wake this thread at once (it parks between rounds).
    dp.lock().set_event_thread(std::thread::current());
    let mut next_tick = Instant::now();
    // Link changes come from rtnetlink (RTM_NEWLINK) as soon as the kernel
    // reports them; the periodic tick re-checks every port as a fallback
    // (and is all there is if the netlink socket cannot be opened).
    let mut links = match ports::LinkMonitor::open() {
        Ok(m) => Some(m),
        Err(e) => {
            tracing::warn!("no netlink link monitor ({e}); link changes are polled");
            None
        }
    };
    let mut link_events = Vec::new();
    while !stop.load(Ordering::Acquire) {
        let mode = wanted_mode(fail_mode, hub.controller_status());
        link_events.clear();
        let link_changed = match links.as_mut().map(|m| m.read_events(&mut link_events)) {
            Some(Ok(n)) => n > 0,
            // ENOBUFS: events were lost; re-check every port.
            Some(Err(_)) => true,
            None => false,
        };
        let events = {
            let mut d = dp.lock();
            if d.mode() != mode {
                log_mode(mode, fail_mode);
                d.set_mode(mode);
            }
            if link_changed {
                d.poll_links();
            }
            if Instant::now() >= next_tick {
                d.tick();
                next_tick = Instant::now() + TICK_INTERVAL;
            }
            d.take_events()
        };
        for ev in events {
            hub.send_async(&to_message(ev));
        }
        std::thread::park_timeout(PUMP_INTERVAL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_mode_picks_the_datapath_mode() {
        let down = ControllerStatus::DisconnectedSince(Instant::now());
        let up = ControllerStatus::Connected(1);
        assert_eq!(wanted_mode(FailMode::Standalone, down), Mode::Standalone);
        assert_eq!(wanted_mode(FailMode::Standalone, up), Mode::Pipeline);
        assert_eq!(wanted_mode(FailMode::Secure, down), Mode::Pipeline);
        assert_eq!(wanted_mode(FailMode::Secure, up), Mode::Pipeline);
    }
}
