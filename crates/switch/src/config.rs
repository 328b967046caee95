//! Configuration of `oxflow run`: a TOML file merged with command-line
//! overrides.
//!
//! ```toml
//! datapath_id = "0x0000000000000001"   # or an integer
//! fail_mode = "standalone"             # or "secure"
//! workers = 1
//! log_level = "info"                   # error | warn | info | debug | trace
//! controllers = ["tcp:127.0.0.1:6653"] # active endpoints (tcp:, tls:)
//! listeners = ["ptcp:6634:127.0.0.1"]  # passive endpoints (ptcp:, ptls:)
//! auxiliary_connections = 0            # per active controller
//! echo_interval = 5                    # seconds
//! echo_max_missed = 3
//! reconnect_initial = 1                # seconds, doubled up to reconnect_max
//! reconnect_max = 8
//! local_port = "oxlocal0"              # tap device for OpenFlow LOCAL; none by default
//! port_backend = "afpacket"            # default backend of ports: afpacket | xdp
//! poll_mode = "adaptive"               # idle workers: adaptive (spin, then sleep) | busy
//! poll_spin_us = 25                    # adaptive: µs an idle worker keeps polling after its
//!                                      # last frame before blocking in poll(2); 0: block at
//!                                      # once (least CPU, e.g. many switches on few cores);
//!                                      # 0..=1000000, default 25 (datapath::ADAPTIVE_SPIN)
//! gso = true                           # AF_PACKET ports pass TCP segments larger than
//!                                      # the MTU (PACKET_VNET_HDR); false: MTU frames only
//! afpacket_rx = "ring"                 # AF_PACKET receive: ring (TPACKET_V2 frame ring) |
//!                                      # blocks (TPACKET_V3: up to ~1 ms delay per lone
//!                                      # frame) | recvmmsg (one system call per batch)
//! metrics = "127.0.0.1:9464"           # Prometheus endpoint (GET /metrics, docs/metrics.md);
//!                                      # IP:PORT ([IPv6]:PORT); off by default
//! select_method = "hash"               # SELECT groups: hash (a flow keeps its bucket) |
//!                                      # round_robin (exact weight shares per packet,
//!                                      # counted per worker); see pipeline::group
//! state_dir = "/var/lib/oxflow"        # keep flows, groups, meters, config across
//!                                      # restarts (docs/persistence.md); off by default
//! state_corrupt = "refuse"             # a state file that cannot be restored: refuse
//!                                      # to start | empty (start without it)
//! graph = "graph.toml"                 # workers run this module graph instead of
//!                                      # ports -> OpenFlow -> ports (docs/graph.md)
//! state_capacity = 65536               # flows each BEBA state table holds
//!                                      # (docs/beba.md); 1..=MAX_STATE_CAPACITY
//!
//! [[port]]                             # OpenFlow ports 1, 2, ... in order
//! name = "h1"                          # optional, defaults to the interface
//! interface = "veth-h1"
//! backend = "xdp"                      # optional, defaults to port_backend
//! max_rate = "1G"                      # optional: the speed queue rates are relative
//!                                      # to (default: the interface's, else 10G)
//! queues = [                           # optional: queues for set_queue (AF_PACKET
//!   { id = 1, min_rate = "10M", max_rate = "50M" },  # ports only; rates in bit/s
//!   { id = 2, max_rate = "20M" },      # with k/M/G; docs/queues.md)
//! ]
//!
//! [[trunk]]                            # a trunk: one logical OpenFlow port per VLAN,
//! interface = "eth1"                   # named eth1.101 ... eth1.110, numbered after the
//! vlans = "101-110"                    # [[port]] ports (docs/trunk.md); always AF_PACKET
//!
//! [[table]]                            # a table's lookup structure (table_config.rs):
//! id = 3                               # 0..=254
//! lookup = "auto"                      # auto (built-in choice, the default) | a name
//!                                      # registered by the program (oxflow: in_port_array)
//!
//! [tls]
//! private_key = "switch-key.pem"
//! certificate = "switch-cert.pem"
//! ca_cert = "ca-cert.pem"
//! ```
//!
//! SIGHUP re-reads the `[[port]]` list (ports added, removed, queues changed;
//! `crate::reload`); the other keys need a restart.
//!
//! Without `listeners`, the switch listens on `ptcp:6634:127.0.0.1` (local
//! management only); it never listens on a public address unless told to.
//! Errors name the file, line and column: values are checked while
//! deserializing, so toml's spans point at the bad value.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::channel::connector::Backoff;
use crate::channel::endpoint::{Direction, Endpoint, Transport};
use crate::channel::tls::TlsFiles;

/// The management listener used when none is configured.
pub const DEFAULT_LISTENER: &str = "ptcp:6634:127.0.0.1";

/// What the switch does while no controller is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailMode {
    /// Keep flows, drop table misses.
    Secure,
    /// Behave as a learning L2 switch.
    #[default]
    Standalone,
}

impl FromStr for FailMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "secure" => Ok(FailMode::Secure),
            "standalone" => Ok(FailMode::Standalone),
            _ => Err(format!(
                "unknown fail_mode \"{s}\" (expected secure or standalone)"
            )),
        }
    }
}

/// Log verbosity, as tracing names its levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogLevel {
    Error,
    Warn,
    #[default]
    Info,
    Debug,
    Trace,
}

impl FromStr for LogLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "error" => LogLevel::Error,
            "warn" => LogLevel::Warn,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            "trace" => LogLevel::Trace,
            _ => {
                return Err(format!(
                    "unknown log_level \"{s}\" (expected error, warn, info, debug or trace)"
                ))
            }
        })
    }
}

impl LogLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

/// Parse a datapath id: an integer, `0x` + up to 16 hex digits, or 16 hex
/// digits as Open vSwitch prints them (with or without colons).
pub fn parse_dpid(s: &str) -> Result<u64, String> {
    let bad = || format!("bad datapath_id \"{s}\" (expected 0xHEX, 16 hex digits or a number)");
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if h.is_empty() || h.len() > 16 {
            return Err(bad());
        }
        return u64::from_str_radix(h, 16).map_err(|_| bad());
    }
    let plain: String = s.chars().filter(|c| *c != ':').collect();
    if plain.len() == 16 {
        return u64::from_str_radix(&plain, 16).map_err(|_| bad());
    }
    s.parse::<u64>().map_err(|_| bad())
}

/// Deserialize any `FromStr<Err = String>` from a TOML string, so that its
/// error carries the value's span.
fn from_str<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    let s = String::deserialize(d)?;
    s.parse().map_err(de::Error::custom)
}

/// Largest `poll_spin_us` (one second: beyond it the worker would
/// rather be in `poll_mode = "busy"`).
pub const MAX_POLL_SPIN_US: u32 = 1_000_000;

/// Largest `state_capacity` (2^26 flows: each state table's store is
/// allocated whole when the table is made stateful, ~1.5 slots per flow).
pub const MAX_STATE_CAPACITY: usize = 1 << 26;

/// Checks a `state_capacity` value.
fn check_state_capacity(n: i64) -> Result<usize, String> {
    match usize::try_from(n) {
        Ok(c) if (1..=MAX_STATE_CAPACITY).contains(&c) => Ok(c),
        _ => Err(format!(
            "state_capacity = {n} is out of range (expected flows, 1..={MAX_STATE_CAPACITY})"
        )),
    }
}

/// `state_capacity`: an integer in `1..=MAX_STATE_CAPACITY`.
fn opt_state_capacity<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
    let n = i64::deserialize(d)?;
    check_state_capacity(n).map(Some).map_err(de::Error::custom)
}

/// `poll_spin_us`: an integer in `0..=MAX_POLL_SPIN_US`.
fn opt_poll_spin_us<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    let n = i64::deserialize(d)?;
    match u32::try_from(n) {
        Ok(us) if us <= MAX_POLL_SPIN_US => Ok(Some(us)),
        _ => Err(de::Error::custom(format!(
            "poll_spin_us = {n} is out of range (expected microseconds, 0..={MAX_POLL_SPIN_US})"
        ))),
    }
}

fn opt_from_str<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    from_str(d).map(Some)
}

/// An endpoint that must be active (`tcp:`/`tls:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActiveEndpoint(pub Endpoint);
/// An endpoint that must be passive (`ptcp:`/`ptls:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassiveEndpoint(pub Endpoint);

impl FromStr for ActiveEndpoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let e: Endpoint = s
            .parse()
            .map_err(|e: crate::channel::endpoint::EndpointError| e.to_string())?;
        if e.direction != Direction::Active {
            return Err(format!(
                "controller \"{s}\" is passive; controllers are tcp:IP:PORT or tls:IP:PORT (put ptcp:/ptls: in listeners)"
            ));
        }
        Ok(ActiveEndpoint(e))
    }
}

impl FromStr for PassiveEndpoint {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let e: Endpoint = s
            .parse()
            .map_err(|e: crate::channel::endpoint::EndpointError| e.to_string())?;
        if e.direction != Direction::Passive {
            return Err(format!(
                "listener \"{s}\" is active; listeners are ptcp:[PORT][:IP] or ptls:[PORT][:IP]"
            ));
        }
        Ok(PassiveEndpoint(e))
    }
}

macro_rules! deserialize_via_from_str {
    ($($t:ty),*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                from_str(d)
            }
        }
    )*};
}
/// The packet I/O backend of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PortBackend {
    /// AF_PACKET socket with a TPACKET_V3 ring (any interface).
    #[default]
    AfPacket,
    /// AF_XDP sockets (falls back to AF_PACKET where XDP cannot be used).
    Xdp,
}

impl FromStr for PortBackend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "afpacket" => Ok(PortBackend::AfPacket),
            "xdp" => Ok(PortBackend::Xdp),
            _ => Err(format!(
                "unknown port backend \"{s}\" (expected afpacket or xdp)"
            )),
        }
    }
}

/// How idle workers wait for packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PollMode {
    /// Poll a few empty rounds, then sleep until a port is readable (an
    /// idle switch uses almost no CPU).
    #[default]
    Adaptive,
    /// Never sleep: lowest latency, one core per worker always busy.
    Busy,
}

impl FromStr for PollMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "adaptive" => Ok(PollMode::Adaptive),
            "busy" => Ok(PollMode::Busy),
            _ => Err(format!(
                "unknown poll_mode \"{s}\" (expected adaptive or busy)"
            )),
        }
    }
}

/// How AF_PACKET ports receive (`ports::RxMode`, see `ports::afpacket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AfPacketRx {
    /// TPACKET_V2 frame ring: no system call per batch, every frame at once.
    #[default]
    Ring,
    /// TPACKET_V3 block ring: frames packed in blocks, but a lone frame
    /// waits for the block timeout (about a millisecond).
    Blocks,
    /// `recvmmsg`: one system call per batch, every frame at once.
    Recvmmsg,
}

impl FromStr for AfPacketRx {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ring" => Ok(AfPacketRx::Ring),
            "blocks" => Ok(AfPacketRx::Blocks),
            "recvmmsg" => Ok(AfPacketRx::Recvmmsg),
            _ => Err(format!(
                "unknown afpacket_rx \"{s}\" (expected ring, blocks or recvmmsg)"
            )),
        }
    }
}

/// The address of the metrics endpoint: `IP:PORT` or `[IPv6]:PORT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsAddr(pub std::net::SocketAddr);

impl FromStr for MetricsAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.parse().map(MetricsAddr).map_err(|_| {
            format!(
                "bad metrics address \"{s}\" (expected IP:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"
            )
        })
    }
}

deserialize_via_from_str!(FailMode, LogLevel, PortBackend, PollMode, AfPacketRx);
deserialize_via_from_str!(crate::persist::OnCorrupt);

/// A datapath id written as a TOML integer or string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Dpid(u64);

impl<'de> Deserialize<'de> for Dpid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dpid;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a datapath id (integer or hex string)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dpid, E> {
                u64::try_from(v)
                    .map(Dpid)
                    .map_err(|_| E::custom("datapath_id must not be negative"))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dpid, E> {
                Ok(Dpid(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dpid, E> {
                parse_dpid(v).map(Dpid).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// One `[[port]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortConfig {
    /// Name used in logs and port descriptions; the interface by default.
    #[serde(default)]
    pub name: Option<String>,
    /// Linux interface to attach.
    pub interface: String,
    /// Backend of this port; `None`: the top-level `port_backend`.
    #[serde(default, deserialize_with = "opt_from_str")]
    pub backend: Option<PortBackend>,
    /// Speed the port's queue rates are relative to (module comment).
    #[serde(default)]
    pub max_rate: Option<crate::datapath::queues::Rate>,
    /// The port's queues (module comment; `crate::datapath::queues`).
    #[serde(default)]
    pub queues: Vec<crate::datapath::queues::QueueConfig>,
}

impl PortConfig {
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.interface)
    }
}

/// One `[[trunk]]` entry as written (checked into a
/// [`crate::trunk_config::TrunkSpec`] with its spans).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrunkFile {
    interface: Spanned<String>,
    vlans: Spanned<String>,
}

/// One `[[table]]` entry as written (checked into a
/// [`crate::table_config::TableLookup`] with its spans).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TableFile {
    id: Spanned<i64>,
    lookup: Spanned<String>,
}

/// The file as written (every key optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    datapath_id: Option<Dpid>,
    #[serde(default, rename = "port")]
    ports: Vec<PortConfig>,
    #[serde(default, rename = "trunk")]
    trunks: Vec<TrunkFile>,
    #[serde(default, rename = "table")]
    tables: Vec<TableFile>,
    // Endpoints are parsed after deserializing, with their own spans: an
    // error inside an array would otherwise point at the array's `[`.
    #[serde(default)]
    controllers: Vec<Spanned<String>>,
    listeners: Option<Vec<Spanned<String>>>,
    #[serde(default, deserialize_with = "opt_from_str")]
    fail_mode: Option<FailMode>,
    workers: Option<u16>,
    #[serde(default, deserialize_with = "opt_from_str")]
    log_level: Option<LogLevel>,
    auxiliary_connections: Option<u8>,
    echo_interval: Option<u32>,
    echo_max_missed: Option<u32>,
    reconnect_initial: Option<u32>,
    reconnect_max: Option<u32>,
    tls: Option<TlsFiles>,
    local_port: Option<String>,
    #[serde(default, deserialize_with = "opt_from_str")]
    port_backend: Option<PortBackend>,
    #[serde(default, deserialize_with = "opt_from_str")]
    poll_mode: Option<PollMode>,
    #[serde(default, deserialize_with = "opt_poll_spin_us")]
    poll_spin_us: Option<u32>,
    gso: Option<bool>,
    #[serde(default, deserialize_with = "opt_from_str")]
    afpacket_rx: Option<AfPacketRx>,
    #[serde(default, deserialize_with = "opt_from_str")]
    metrics: Option<MetricsAddr>,
    #[serde(default, deserialize_with = "opt_from_str")]
    select_method: Option<pipeline::group::SelectMethod>,
    state_dir: Option<PathBuf>,
    #[serde(default, deserialize_with = "opt_from_str")]
    state_corrupt: Option<crate::persist::OnCorrupt>,
    graph: Option<PathBuf>,
    #[serde(default, deserialize_with = "opt_state_capacity")]
    state_capacity: Option<usize>,
}

/// The complete configuration of the daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub datapath_id: u64,
    /// OpenFlow port `i + 1` is `ports[i]`.
    pub ports: Vec<PortConfig>,
    /// Trunks whose VLANs are logical ports after `ports` (docs/trunk.md).
    pub trunks: Vec<crate::trunk_config::TrunkSpec>,
    pub controllers: Vec<Endpoint>,
    pub listeners: Vec<Endpoint>,
    pub fail_mode: FailMode,
    pub workers: usize,
    pub log_level: LogLevel,
    pub auxiliary_connections: u8,
    pub echo_interval: Duration,
    pub echo_max_missed: u32,
    pub reconnect: Backoff,
    pub tls: Option<TlsFiles>,
    /// Name of the tap device the daemon creates as port OFPP_LOCAL
    /// (`None`: no LOCAL port).
    pub local_port: Option<String>,
    /// Backend of ports that do not name one.
    pub port_backend: PortBackend,
    pub poll_mode: PollMode,
    /// Adaptive workers' spin after the last frame, in µs (`None`: the
    /// datapath's default).
    pub poll_spin_us: Option<u32>,
    /// GSO/TSO-aware AF_PACKET ports (`PACKET_VNET_HDR`).
    pub gso: bool,
    pub afpacket_rx: AfPacketRx,
    /// Address of the Prometheus metrics endpoint (`None`: off).
    pub metrics: Option<std::net::SocketAddr>,
    /// How SELECT groups choose a bucket.
    pub select_method: pipeline::group::SelectMethod,
    /// Where the state file lives (`crate::persist`); `None`: no
    /// persistence.
    pub state_dir: Option<PathBuf>,
    pub state_corrupt: crate::persist::OnCorrupt,
    /// The file whose `[[port]]` list SIGHUP re-reads (`crate::reload`):
    /// the loaded file, unless `--port` flags replaced its ports.
    pub port_file: Option<PathBuf>,
    /// The module graph file the workers run (docs/graph.md); `None`:
    /// the default graph, ports -> OpenFlow -> ports.
    pub graph: Option<PathBuf>,
    /// Flows each BEBA state table holds.
    pub state_capacity: usize,
    /// Tables whose lookup structure is not the built-in choice
    /// (`[[table]]`, `--table-lookup`).
    pub table_lookups: Vec<crate::table_config::TableLookup>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            datapath_id: 1,
            ports: Vec::new(),
            trunks: Vec::new(),
            controllers: Vec::new(),
            listeners: vec![Self::default_listener()],
            fail_mode: FailMode::default(),
            workers: 1,
            log_level: LogLevel::default(),
            auxiliary_connections: 0,
            echo_interval: Duration::from_secs(5),
            echo_max_missed: 3,
            reconnect: Backoff::default(),
            tls: None,
            local_port: None,
            port_backend: PortBackend::default(),
            poll_mode: PollMode::default(),
            poll_spin_us: None,
            gso: true,
            afpacket_rx: AfPacketRx::default(),
            metrics: None,
            select_method: pipeline::group::SelectMethod::default(),
            state_dir: None,
            state_corrupt: crate::persist::OnCorrupt::default(),
            port_file: None,
            graph: None,
            state_capacity: stateful::DEFAULT_CAPACITY,
            table_lookups: Vec::new(),
        }
    }
}

/// Command-line values that override the file (the binary fills this from
/// its flags; `None`/empty = not given). Repeated flags replace the file's
/// list as a whole.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub datapath_id: Option<String>,
    pub ports: Vec<String>,
    /// `--trunk IFACE=FIRST-LAST` values (replace the file's trunks).
    pub trunks: Vec<String>,
    pub controllers: Vec<String>,
    pub listeners: Vec<String>,
    pub fail_mode: Option<String>,
    pub workers: Option<usize>,
    pub log_level: Option<String>,
    pub poll_spin_us: Option<u32>,
    pub state_capacity: Option<u64>,
    /// `--table-lookup ID=NAME` values (replace the file's `[[table]]`s).
    pub table_lookups: Vec<String>,
}

/// A configuration error, already formatted for the user:
/// `FILE:LINE:COLUMN: message` for file errors, `--flag: message` for
/// flags.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// 1-based line and column of byte offset `pos` in `src`.
fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = src.get(..pos).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl Config {
    fn default_listener() -> Endpoint {
        DEFAULT_LISTENER
            .parse()
            .unwrap_or_else(|_| unreachable!("DEFAULT_LISTENER is a valid endpoint"))
    }

    /// Read and check a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let src = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        let mut cfg = Self::parse(&src, &path.display().to_string())?;
        cfg.port_file = Some(path.to_path_buf());
        Ok(cfg)
    }

    /// Parse config text; `file` names it in errors.
    pub fn parse(src: &str, file: &str) -> Result<Config, ConfigError> {
        let f: FileConfig = toml::from_str(src).map_err(|e| {
            let msg = e.message().trim_end();
            match e.span() {
                Some(span) => {
                    let (l, c) = line_col(src, span.start);
                    ConfigError(format!("{file}:{l}:{c}: {msg}"))
                }
                None => ConfigError(format!("{file}: {msg}")),
            }
        })?;
        let at = |span: std::ops::Range<usize>, m: String| {
            let (l, c) = line_col(src, span.start);
            ConfigError(format!("{file}:{l}:{c}: {m}"))
        };
        let controllers = f
            .controllers
            .iter()
            .map(|s| {
                s.get_ref()
                    .parse::<ActiveEndpoint>()
                    .map(|e| e.0)
                    .map_err(|m| at(s.span(), m))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let listeners = match &f.listeners {
            None => None,
            Some(l) => Some(
                l.iter()
                    .map(|s| {
                        s.get_ref()
                            .parse::<PassiveEndpoint>()
                            .map(|e| e.0)
                            .map_err(|m| at(s.span(), m))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        let trunks = Self::file_trunks(&f, &at)?;
        let table_lookups = Self::file_tables(&f, &at)?;
        let base = PathBuf::from(file);
        let dir = base.parent().unwrap_or(Path::new(""));
        let d = Config::default();
        let cfg = Config {
            datapath_id: f.datapath_id.map_or(d.datapath_id, |x| x.0),
            ports: f.ports,
            trunks,
            controllers,
            listeners: listeners.unwrap_or(d.listeners),
            fail_mode: f.fail_mode.unwrap_or(d.fail_mode),
            workers: f.workers.map_or(d.workers, usize::from),
            log_level: f.log_level.unwrap_or(d.log_level),
            auxiliary_connections: f.auxiliary_connections.unwrap_or(0),
            echo_interval: f
                .echo_interval
                .map_or(d.echo_interval, |s| Duration::from_secs(s.into())),
            echo_max_missed: f.echo_max_missed.unwrap_or(d.echo_max_missed),
            reconnect: Backoff {
                initial: f
                    .reconnect_initial
                    .map_or(d.reconnect.initial, |s| Duration::from_secs(s.into())),
                max: f
                    .reconnect_max
                    .map_or(d.reconnect.max, |s| Duration::from_secs(s.into())),
            },
            // Relative TLS paths are relative to the config file.
            tls: f.tls.map(|t| TlsFiles {
                private_key: dir.join(t.private_key),
                certificate: dir.join(t.certificate),
                ca_cert: dir.join(t.ca_cert),
            }),
            local_port: f.local_port,
            port_backend: f.port_backend.unwrap_or(d.port_backend),
            poll_mode: f.poll_mode.unwrap_or(d.poll_mode),
            poll_spin_us: f.poll_spin_us,
            gso: f.gso.unwrap_or(d.gso),
            afpacket_rx: f.afpacket_rx.unwrap_or(d.afpacket_rx),
            metrics: f.metrics.map(|m| m.0),
            select_method: f.select_method.unwrap_or(d.select_method),
            // A relative state_dir is relative to the config file.
            state_dir: f.state_dir.map(|p| dir.join(p)),
            state_corrupt: f.state_corrupt.unwrap_or(d.state_corrupt),
            port_file: None,
            // A relative graph file is relative to the config file.
            graph: f.graph.map(|p| dir.join(p)),
            state_capacity: f.state_capacity.unwrap_or(d.state_capacity),
            table_lookups,
        };
        cfg.check()
            .map_err(|m| ConfigError(format!("{file}: {m}")))?;
        Ok(cfg)
    }

    /// Apply command-line overrides, then re-check.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), ConfigError> {
        if let Some(s) = &o.datapath_id {
            self.datapath_id = parse_dpid(s).map_err(|m| ConfigError(format!("--dpid: {m}")))?;
        }
        if !o.ports.is_empty() {
            self.port_file = None;
            self.ports = o
                .ports
                .iter()
                .map(|i| PortConfig {
                    name: None,
                    interface: i.clone(),
                    backend: None,
                    max_rate: None,
                    queues: Vec::new(),
                })
                .collect();
        }
        if !o.trunks.is_empty() {
            self.trunks = o
                .trunks
                .iter()
                .map(|s| {
                    s.parse()
                        .map_err(|m| ConfigError(format!("--trunk {s}: {m}")))
                })
                .collect::<Result<_, _>>()?;
        }
        if !o.trunks.is_empty() || !o.ports.is_empty() {
            let ports: Vec<&str> = self.ports.iter().map(|p| p.interface.as_str()).collect();
            for i in 0..self.trunks.len() {
                crate::trunk_config::check_one(&self.trunks, i, &ports).map_err(|m| {
                    let t = &self.trunks[i];
                    ConfigError(format!(
                        "--trunk {}={}-{}: {m}",
                        t.interface, t.first, t.last
                    ))
                })?;
            }
        }
        if !o.controllers.is_empty() {
            self.controllers = o
                .controllers
                .iter()
                .map(|s| s.parse::<ActiveEndpoint>().map(|e| e.0))
                .collect::<Result<_, _>>()
                .map_err(|m| ConfigError(format!("--controller: {m}")))?;
        }
        if !o.listeners.is_empty() {
            self.listeners = o
                .listeners
                .iter()
                .map(|s| s.parse::<PassiveEndpoint>().map(|e| e.0))
                .collect::<Result<_, _>>()
                .map_err(|m| ConfigError(format!("--listen: {m}")))?;
        }
        if let Some(s) = &o.fail_mode {
            self.fail_mode = s
                .parse()
                .map_err(|m| ConfigError(format!("--fail-mode: {m}")))?;
        }
        if let Some(w) = o.workers {
            self.workers = w;
        }
        if let Some(s) = &o.log_level {
            self.log_level = s
                .parse()
                .map_err(|m| ConfigError(format!("--log-level: {m}")))?;
        }
        if let Some(us) = o.poll_spin_us {
            if us > MAX_POLL_SPIN_US {
                return Err(ConfigError(format!(
                    "--poll-spin-us: {us} is out of range (0..={MAX_POLL_SPIN_US})"
                )));
            }
            self.poll_spin_us = Some(us);
        }
        if let Some(n) = o.state_capacity {
            self.state_capacity = check_state_capacity(i64::try_from(n).unwrap_or(i64::MAX))
                .map_err(|m| ConfigError(format!("--state-capacity: {m}")))?;
        }
        if !o.table_lookups.is_empty() {
            self.table_lookups.clear();
            for s in &o.table_lookups {
                let err = |m| ConfigError(format!("--table-lookup {s}: {m}"));
                self.table_lookups.push(s.parse().map_err(err)?);
                crate::table_config::check_last(&self.table_lookups).map_err(err)?;
            }
        }
        self.check().map_err(ConfigError)
    }

    /// The `[[table]]` tables of `f`, checked; errors point at the value.
    fn file_tables(
        f: &FileConfig,
        at: &dyn Fn(std::ops::Range<usize>, String) -> ConfigError,
    ) -> Result<Vec<crate::table_config::TableLookup>, ConfigError> {
        use crate::table_config::{check_last, lookup_name, table_id, TableLookup};
        let mut out = Vec::with_capacity(f.tables.len());
        for t in &f.tables {
            out.push(TableLookup {
                table: table_id(*t.id.get_ref()).map_err(|m| at(t.id.span(), m))?,
                lookup: lookup_name(t.lookup.get_ref()).map_err(|m| at(t.lookup.span(), m))?,
            });
            check_last(&out).map_err(|m| at(t.id.span(), m))?;
        }
        Ok(out)
    }

    /// The `[[trunk]]` tables of `f`, checked; errors point at the value.
    fn file_trunks(
        f: &FileConfig,
        at: &dyn Fn(std::ops::Range<usize>, String) -> ConfigError,
    ) -> Result<Vec<crate::trunk_config::TrunkSpec>, ConfigError> {
        use crate::trunk_config::{check_one, TrunkSpec};
        let ports: Vec<&str> = f.ports.iter().map(|p| p.interface.as_str()).collect();
        let mut out = Vec::with_capacity(f.trunks.len());
        for t in &f.trunks {
            let iface = t.interface.get_ref();
            let spec = TrunkSpec::new(iface, t.vlans.get_ref()).map_err(|m| {
                let span = if m.starts_with("bad interface") {
                    t.interface.span()
                } else {
                    t.vlans.span()
                };
                at(span, m)
            })?;
            out.push(spec);
            check_one(&out, out.len() - 1, &ports).map_err(|m| {
                let span = if m.contains("both a port") {
                    t.interface.span()
                } else {
                    t.vlans.span()
                };
                at(span, m)
            })?;
        }
        Ok(out)
    }

    /// Number of the first logical port of each trunk (after the ports).
    pub fn trunk_port_numbers(&self) -> Vec<u32> {
        let mut next = self.ports.len() + 1;
        self.trunks
            .iter()
            .map(|t| {
                let first = next;
                next += t.len();
                u32::try_from(first).unwrap_or(u32::MAX)
            })
            .collect()
    }

    /// The backend port `p` uses (its own, else `port_backend`).
    pub fn backend_of(&self, p: &PortConfig) -> PortBackend {
        p.backend.unwrap_or(self.port_backend)
    }

    /// Checks across fields.
    fn check(&self) -> Result<(), String> {
        if self.workers == 0 {
            return Err("workers must be at least 1".into());
        }
        if self.echo_interval.is_zero() {
            return Err("echo_interval must be at least 1 second".into());
        }
        if self.echo_max_missed == 0 {
            return Err("echo_max_missed must be at least 1".into());
        }
        if self.reconnect.initial.is_zero() || self.reconnect.max < self.reconnect.initial {
            return Err("reconnect_initial must be >= 1 and <= reconnect_max".into());
        }
        let tls_used = self
            .controllers
            .iter()
            .chain(&self.listeners)
            .find(|e| e.transport == Transport::Tls);
        if let (Some(e), None) = (tls_used, &self.tls) {
            return Err(format!(
                "{e} needs a [tls] section (private_key, certificate, ca_cert)"
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for p in &self.ports {
            if !seen.insert(p.interface.as_str()) {
                return Err(format!("interface \"{}\" is listed twice", p.interface));
            }
            let specs: Vec<_> = p.queues.iter().map(|q| q.spec()).collect();
            let speed = p.max_rate.map_or(u64::MAX, |r| r.0);
            if p.max_rate.is_some_and(|r| r.0 == 0) {
                return Err(format!(
                    "port \"{}\": max_rate must be above 0",
                    p.interface
                ));
            }
            crate::datapath::queues::check(&specs, speed)
                .map_err(|e| format!("port \"{}\": {e}", p.interface))?;
        }
        let ports: Vec<&str> = self.ports.iter().map(|p| p.interface.as_str()).collect();
        crate::trunk_config::check(&self.trunks, &ports)?;
        let logical: usize = self.trunks.iter().map(|t| t.len()).sum();
        if self.ports.len() + logical > ofp::port::port_no::MAX as usize {
            return Err("too many ports and trunk VLANs for OpenFlow port numbers".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_file() {
        let src = r#"
datapath_id = "0x00000000000000ab"
fail_mode = "secure"
workers = 2
log_level = "debug"
controllers = ["tcp:10.0.0.1:6653", "tls:10.0.0.2"]
listeners = ["ptcp:6634:127.0.0.1", "ptls:6653:0.0.0.0"]
auxiliary_connections = 2
echo_interval = 2
reconnect_max = 4

[[port]]
name = "h1"
interface = "veth-h1"

[[port]]
interface = "veth-h2"

[tls]
private_key = "k.pem"
certificate = "c.pem"
ca_cert = "/etc/ca.pem"
"#;
        let c = Config::parse(src, "/etc/oxflow/oxflow.toml").unwrap();
        assert_eq!(c.datapath_id, 0xab);
        assert_eq!(c.fail_mode, FailMode::Secure);
        assert_eq!(c.workers, 2);
        assert_eq!(c.log_level, LogLevel::Debug);
        assert_eq!(c.controllers.len(), 2);
        assert_eq!(c.controllers[1].addr.port(), 6653);
        assert_eq!(c.listeners[1].to_string(), "ptls:6653:0.0.0.0");
        assert_eq!(c.auxiliary_connections, 2);
        assert_eq!(c.echo_interval, Duration::from_secs(2));
        assert_eq!(c.reconnect.max, Duration::from_secs(4));
        assert_eq!(c.ports[0].name(), "h1");
        assert_eq!(c.ports[1].name(), "veth-h2");
        let tls = c.tls.unwrap();
        assert_eq!(tls.private_key, PathBuf::from("/etc/oxflow/k.pem"));
        assert_eq!(tls.ca_cert, PathBuf::from("/etc/ca.pem"));
    }

    #[test]
    fn defaults_listen_on_loopback_only() {
        let c = Config::parse("", "x.toml").unwrap();
        assert_eq!(c, Config::default());
        assert_eq!(c.listeners.len(), 1);
        assert_eq!(c.listeners[0].addr, "127.0.0.1:6634".parse().unwrap());
        assert_eq!(c.fail_mode, FailMode::Standalone);
        // An explicit empty list means no listener at all.
        assert!(Config::parse("listeners = []", "x.toml")
            .unwrap()
            .listeners
            .is_empty());
    }

    fn err(src: &str) -> String {
        Config::parse(src, "oxflow.toml").unwrap_err().0
    }

    #[test]
    fn errors_name_line_and_column() {
        let src = "datapath_id = 1\n\n\n\n\n\nfail_mode = \"sekure\"\n";
        assert_eq!(
            err(src),
            "oxflow.toml:7:13: unknown fail_mode \"sekure\" (expected secure or standalone)"
        );
        let e = err("workers = 1\ncontrollers = [\"ptcp:6653\"]\n");
        assert!(
            e.starts_with("oxflow.toml:2:16: controller \"ptcp:6653\" is passive"),
            "{e}"
        );
        let e = err("listeners = [\"ptcp:99999\"]");
        assert!(e.starts_with("oxflow.toml:1:14: bad endpoint"), "{e}");
        let e = err("\nworkerz = 3\n");
        assert!(
            e.starts_with("oxflow.toml:2:1: unknown field `workerz`"),
            "{e}"
        );
        let e = err("datapath_id = \"0xzz\"");
        assert!(e.starts_with("oxflow.toml:1:15: bad datapath_id"), "{e}");
        let e = err("workers = [");
        assert!(e.starts_with("oxflow.toml:1:"), "{e}");
        let e = err("log_level = \"loud\"");
        assert!(e.contains("unknown log_level \"loud\""), "{e}");
    }

    #[test]
    fn select_method() {
        use pipeline::group::SelectMethod;
        let c = Config::parse("", "x.toml").unwrap();
        assert_eq!(c.select_method, SelectMethod::Hash);
        let c = Config::parse("select_method = \"round_robin\"", "x.toml").unwrap();
        assert_eq!(c.select_method, SelectMethod::RoundRobin);
        assert_eq!(
            err("select_method = \"random\""),
            "oxflow.toml:1:17: unknown select method \"random\" (expected \"hash\" or \"round_robin\")"
        );
    }

    #[test]
    fn graph_file_is_relative_to_the_config() {
        assert_eq!(Config::parse("", "/etc/x.toml").unwrap().graph, None);
        let c = Config::parse("graph = \"g.toml\"\n", "/etc/oxflow/x.toml").unwrap();
        assert_eq!(c.graph, Some(PathBuf::from("/etc/oxflow/g.toml")));
    }

    #[test]
    fn backends_poll_mode_and_gso() {
        let c = Config::parse("", "x.toml").unwrap();
        assert_eq!(c.port_backend, PortBackend::AfPacket);
        assert_eq!(c.poll_mode, PollMode::Adaptive);
        assert!(c.gso);
        assert_eq!(c.afpacket_rx, AfPacketRx::Ring);
        let src = r#"
port_backend = "xdp"
poll_mode = "busy"
gso = false
afpacket_rx = "recvmmsg"

[[port]]
interface = "a"

[[port]]
interface = "b"
backend = "afpacket"
"#;
        let c = Config::parse(src, "x.toml").unwrap();
        assert_eq!(c.backend_of(&c.ports[0]), PortBackend::Xdp);
        assert_eq!(c.backend_of(&c.ports[1]), PortBackend::AfPacket);
        assert_eq!(c.poll_mode, PollMode::Busy);
        assert!(!c.gso);
        assert_eq!(c.afpacket_rx, AfPacketRx::Recvmmsg);
        assert_eq!(
            err("afpacket_rx = \"mmap\""),
            "oxflow.toml:1:15: unknown afpacket_rx \"mmap\" (expected ring, blocks or recvmmsg)"
        );
        let c =
            Config::parse("[[port]]\ninterface = \"a\"\nbackend = \"xdp\"\n", "x.toml").unwrap();
        assert_eq!(c.backend_of(&c.ports[0]), PortBackend::Xdp);

        assert_eq!(
            err("[[port]]\ninterface = \"a\"\nbackend = \"dpdk\"\n"),
            "oxflow.toml:3:11: unknown port backend \"dpdk\" (expected afpacket or xdp)"
        );
        assert_eq!(
            err("\nport_backend = \"netmap\""),
            "oxflow.toml:2:16: unknown port backend \"netmap\" (expected afpacket or xdp)"
        );
        assert_eq!(
            err("poll_mode = \"lazy\""),
            "oxflow.toml:1:13: unknown poll_mode \"lazy\" (expected adaptive or busy)"
        );
        let e = err("gso = \"yes\"");
        assert!(e.starts_with("oxflow.toml:1:7:"), "{e}");
    }

    #[test]
    fn poll_spin_us() {
        let c = Config::parse("", "x.toml").unwrap();
        assert_eq!(c.poll_spin_us, None);
        let c = Config::parse("poll_spin_us = 0", "x.toml").unwrap();
        assert_eq!(c.poll_spin_us, Some(0));
        let c = Config::parse("poll_mode = \"adaptive\"\npoll_spin_us = 200", "x.toml").unwrap();
        assert_eq!(c.poll_spin_us, Some(200));
        assert_eq!(
            err("poll_spin_us = -1"),
            "oxflow.toml:1:16: poll_spin_us = -1 is out of range (expected microseconds, 0..=1000000)"
        );
        assert_eq!(
            err("\npoll_spin_us = 2000000"),
            "oxflow.toml:2:16: poll_spin_us = 2000000 is out of range (expected microseconds, 0..=1000000)"
        );
        let e = err("poll_spin_us = \"25us\"");
        assert!(e.starts_with("oxflow.toml:1:16:"), "{e}");
        let mut c = Config::parse("poll_spin_us = 50", "x.toml").unwrap();
        c.apply(&Overrides {
            poll_spin_us: Some(0),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.poll_spin_us, Some(0));
        let e = c
            .apply(&Overrides {
                poll_spin_us: Some(MAX_POLL_SPIN_US + 1),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0, "--poll-spin-us: 1000001 is out of range (0..=1000000)");
    }

    /// `[[table]]` and `--table-lookup`: a registered name or "auto" for
    /// a table that exists, once; anything else is refused with where and
    /// why.
    #[test]
    fn table_lookups() {
        use crate::table_config::TableLookup;
        table_kind_example::register();
        let name = table_kind_example::NAME;
        let src = format!(
            "[[table]]\nid = 3\nlookup = \"{name}\"\n[[table]]\nid = 0\nlookup = \"auto\"\n"
        );
        let c = Config::parse(&src, "x.toml").unwrap();
        let want = |table, lookup: &str| TableLookup {
            table,
            lookup: lookup.into(),
        };
        assert_eq!(c.table_lookups, [want(3, name), want(0, "auto")]);
        let e = err("[[table]]\nid = 3\nlookup = \"nope\"\n");
        assert!(
            e.starts_with("oxflow.toml:3:10: unknown table lookup `nope` (known: auto, "),
            "{e}"
        );
        assert_eq!(
            err("[[table]]\nid = 255\nlookup = \"auto\"\n"),
            "oxflow.toml:2:6: table 255 does not exist (tables 0..=254)"
        );
        assert_eq!(
            err("[[table]]\nid = 1\nlookup = \"auto\"\n[[table]]\nid = 1\nlookup = \"auto\"\n"),
            "oxflow.toml:5:6: table 1 is listed twice"
        );
        assert!(err("[[table]]\nid = 1\n").contains("missing field `lookup`"));
        let mut c = Config::parse(&src, "x.toml").unwrap();
        let flags = |v: &[&str]| Overrides {
            table_lookups: v.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        c.apply(&flags(&[&format!("7={name}")])).unwrap();
        assert_eq!(c.table_lookups, [want(7, name)]);
        let e = c.apply(&flags(&["7=x"])).unwrap_err();
        assert!(
            e.0.starts_with("--table-lookup 7=x: unknown table lookup `x`"),
            "{e}"
        );
        let e = c.apply(&flags(&["1=auto", "1=auto"])).unwrap_err();
        assert_eq!(e.0, "--table-lookup 1=auto: table 1 is listed twice");
        let e = c.apply(&flags(&["auto"])).unwrap_err();
        assert_eq!(
            e.0,
            "--table-lookup auto: expected ID=NAME, e.g. 3=my_lookup"
        );
        let e = c.apply(&flags(&["-1=auto"])).unwrap_err();
        assert_eq!(
            e.0,
            "--table-lookup -1=auto: table -1 does not exist (tables 0..=254)"
        );
    }

    #[test]
    fn state_capacity() {
        let c = Config::parse("", "x.toml").unwrap();
        assert_eq!(c.state_capacity, stateful::DEFAULT_CAPACITY);
        let mut c = Config::parse("state_capacity = 2000000", "x.toml").unwrap();
        assert_eq!(c.state_capacity, 2_000_000);
        assert_eq!(
            err("state_capacity = 0"),
            "oxflow.toml:1:18: state_capacity = 0 is out of range (expected flows, 1..=67108864)"
        );
        let e = err("state_capacity = \"1M\"");
        assert!(e.starts_with("oxflow.toml:1:18:"), "{e}");
        c.apply(&Overrides {
            state_capacity: Some(100),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.state_capacity, 100);
        let e = c
            .apply(&Overrides {
                state_capacity: Some(1 << 27),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(
            e.0,
            "--state-capacity: state_capacity = 134217728 is out of range (expected flows, 1..=67108864)"
        );
    }

    #[test]
    fn cross_field_errors() {
        assert_eq!(
            err("workers = 0"),
            "oxflow.toml: workers must be at least 1"
        );
        let e = err("controllers = [\"tls:1.2.3.4:6653\"]");
        assert!(e.contains("needs a [tls] section"), "{e}");
        let e = err("[[port]]\ninterface = \"a\"\n[[port]]\ninterface = \"a\"\n");
        assert!(e.contains("listed twice"), "{e}");
    }

    #[test]
    fn overrides() {
        let mut c = Config::parse("fail_mode = \"secure\"\nworkers = 2", "x.toml").unwrap();
        c.apply(&Overrides {
            datapath_id: Some("00:00:00:00:00:00:00:2a".into()),
            ports: vec!["eth1".into(), "eth2".into()],
            controllers: vec!["tcp:127.0.0.1:6653".into()],
            listeners: vec!["ptcp:7000".into()],
            fail_mode: Some("standalone".into()),
            workers: None,
            log_level: Some("warn".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.datapath_id, 42);
        assert_eq!(c.ports[1].interface, "eth2");
        assert_eq!(c.listeners[0].addr, "127.0.0.1:7000".parse().unwrap());
        assert_eq!(c.fail_mode, FailMode::Standalone);
        assert_eq!(c.workers, 2);
        assert_eq!(c.log_level, LogLevel::Warn);
        let e = c
            .apply(&Overrides {
                fail_mode: Some("sekure".into()),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(
            e.0,
            "--fail-mode: unknown fail_mode \"sekure\" (expected secure or standalone)"
        );
        assert!(parse_dpid("1234").is_ok());
        assert_eq!(parse_dpid("0x10"), Ok(16));
        assert!(parse_dpid("0x").is_err());
    }

    #[test]
    fn metrics_address() {
        assert_eq!(Config::default().metrics, None);
        let c = Config::parse("metrics = \"127.0.0.1:9464\"\n", "f.toml").unwrap();
        assert_eq!(c.metrics, Some("127.0.0.1:9464".parse().unwrap()));
        let c = Config::parse("metrics = \"[::1]:9464\"\n", "f.toml").unwrap();
        assert_eq!(c.metrics, Some("[::1]:9464".parse().unwrap()));
        let e = Config::parse("workers = 1\nmetrics = \"localhost\"\n", "f.toml").unwrap_err();
        assert_eq!(
            e.0,
            "f.toml:2:11: bad metrics address \"localhost\" (expected IP:PORT, e.g. 127.0.0.1:9464 or [::1]:9464)"
        );
    }

    #[test]
    fn trunks_in_the_file_and_flags() {
        let src = "[[port]]\ninterface = \"a\"\n[[port]]\ninterface = \"b\"\n\n\
                   [[trunk]]\ninterface = \"t1\"\nvlans = \"101-110\"\n\n\
                   [[trunk]]\ninterface = \"t2\"\nvlans = \"5\"\n";
        let c = Config::parse(src, "f.toml").unwrap();
        assert_eq!(c.trunks.len(), 2);
        assert_eq!((c.trunks[0].first, c.trunks[0].last), (101, 110));
        assert_eq!(c.trunk_port_numbers(), vec![3, 13]);
        let e = err("[[trunk]]\ninterface = \"t\"\nvlans = \"0-3\"\n");
        assert_eq!(e, "oxflow.toml:3:9: VLAN id 0 is outside 1-4094");
        let e = err("[[trunk]]\ninterface = \"t\"\nvlans = \"1-9\"\n\
                     [[trunk]]\ninterface = \"t\"\nvlans = \"9-12\"\n");
        assert!(
            e.starts_with("oxflow.toml:6:9: trunk t=9-12 overlaps trunk t=1-9"),
            "{e}"
        );
        let e = err("[[port]]\ninterface = \"t\"\n[[trunk]]\ninterface = \"t\"\nvlans = \"1\"\n");
        assert_eq!(
            e,
            "oxflow.toml:4:13: interface \"t\" is both a port and a trunk"
        );
        let e = err("[[trunk]]\ninterface = \"t\"\nvlan = \"1\"\n");
        assert!(e.starts_with("oxflow.toml:"), "{e}");

        let mut c = Config::default();
        let o = |ports: &[&str], trunks: &[&str]| Overrides {
            ports: ports.iter().map(|s| s.to_string()).collect(),
            trunks: trunks.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        c.apply(&o(&["p1"], &["eth1=101-110", "eth2=7-8"])).unwrap();
        assert_eq!(c.trunk_port_numbers(), vec![2, 12]);
        let e = c.apply(&o(&[], &["eth1=5000"])).unwrap_err().0;
        assert_eq!(e, "--trunk eth1=5000: VLAN id 5000 is outside 1-4094");
        let e = c.apply(&o(&[], &["eth1"])).unwrap_err().0;
        assert!(
            e.starts_with("--trunk eth1: \"eth1\" is not IFACE=FIRST-LAST"),
            "{e}"
        );
        let e = c.apply(&o(&[], &["eth1=1-5", "eth1=5-6"])).unwrap_err().0;
        assert!(
            e.starts_with("--trunk eth1=5-6: trunk eth1=5-6 overlaps"),
            "{e}"
        );
        let e = c.apply(&o(&["eth1"], &["eth1=1-5"])).unwrap_err().0;
        assert_eq!(
            e,
            "--trunk eth1=1-5: interface \"eth1\" is both a port and a trunk"
        );
    }
}
