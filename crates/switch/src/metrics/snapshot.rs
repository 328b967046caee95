//! One scrape's numbers ([`Snapshot`]) and their metric families
//! ([`Snapshot::render`]).
//!
//! The datapath's part is read under the datapath lock with the code that
//! answers the OpenFlow statistics requests: one [`Datapath::collect`]
//! (the workers' flow, table and group counter deltas folded into the
//! authoritative pipeline, as one table-stats request does), then the
//! table, group, port, port-description and meter replies built from the
//! counters as they stand, and the worker statistics of
//! `oxflow ctl dump-worker-stats`. The channel's part comes from the
//! [`Hub`]. Per-flow counters are not exported: one series per flow
//! entry would grow with the flow tables (`oxflow ctl dump-flows` has
//! them).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ofp::experimenter::WorkerStats;
use ofp::multipart::{self as mp, MultipartReplyBody as R, MultipartRequestBody as Q};
use ofp::port::{config as port_config, port_no, state as port_state};

use super::exposition::{count, Exposition, Kind};
use crate::channel::hub::{GroupId, Hub};
use crate::channel::role::ControllerRole;
use crate::datapath::ops::Mode;
use crate::datapath::Datapath;

/// One port's numbers.
#[derive(Debug, Clone)]
pub struct PortSample {
    pub name: String,
    /// Link up (OFPPS_LINK_DOWN clear).
    pub link_up: bool,
    /// Administratively up (OFPPC_PORT_DOWN clear).
    pub admin_up: bool,
    pub stats: mp::PortStats,
}

/// One configured controller (active endpoint).
#[derive(Debug, Clone)]
pub struct ControllerSample {
    /// The endpoint as configured, e.g. `tcp:127.0.0.1:6653`.
    pub target: String,
    /// Its role while its main connection is up; `None` while not.
    pub role: Option<ControllerRole>,
}

/// The controller channel's numbers.
#[derive(Debug, Clone, Default)]
pub struct ChannelSample {
    pub controllers: Vec<ControllerSample>,
    /// Open connections to controllers (auxiliary ones included).
    pub controller_connections: usize,
    /// Open management connections (passive listeners: `oxflow ctl`).
    pub management_connections: usize,
    pub messages_received: u64,
    pub messages_sent: u64,
    pub async_dropped: u64,
    pub malformed: u64,
}

/// Everything one scrape reports (module comment).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub datapath_id: u64,
    pub ports: Vec<PortSample>,
    pub tables: Vec<mp::TableStats>,
    pub groups: Vec<mp::GroupStats>,
    pub meters: Vec<mp::MeterStats>,
    pub workers: Vec<WorkerStats>,
    pub packet_in_dropped: u64,
    /// BEBA STATE_CHANGED notifications dropped (their queue was full).
    pub state_changed_dropped: u64,
    /// Running the fail-standalone learning switch instead of the pipeline.
    pub standalone: bool,
    pub channel: ChannelSample,
    pub uptime: Duration,
    /// Seconds since the Unix epoch when the daemon started.
    pub start_time: f64,
}

/// What the metrics endpoint knows of the running daemon besides the
/// datapath: the hub and which controller group each configured
/// controller is.
#[derive(Debug, Clone)]
pub struct ChannelView {
    pub hub: std::sync::Arc<Hub>,
    /// `(target as configured, its controller group)`.
    pub controllers: Vec<(String, GroupId)>,
}

impl ChannelView {
    pub fn sample(&self) -> ChannelSample {
        let (controller_connections, management_connections) = self.hub.connection_counts();
        ChannelSample {
            controllers: self
                .controllers
                .iter()
                .map(|(target, group)| ControllerSample {
                    target: target.clone(),
                    role: self.hub.main_connection_role(*group),
                })
                .collect(),
            controller_connections,
            management_connections,
            messages_received: self.hub.messages_received(),
            messages_sent: self.hub.messages_sent(),
            async_dropped: self.hub.dropped_async(),
            malformed: self.hub.malformed_messages(),
        }
    }
}

/// The unix time of `started` (an `Instant`), from the current clocks.
pub fn unix_time_of(started: std::time::Instant) -> f64 {
    let since = started.elapsed();
    SystemTime::now()
        .checked_sub(since)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Snapshot {
    /// Reads the datapath's numbers (module comment); the caller holds
    /// the datapath lock for this call only.
    pub fn read_datapath(&mut self, dp: &mut Datapath) {
        use ofp::group::group_id;
        use ofp::meter::meter_id;
        dp.collect();
        self.datapath_id = dp.config.datapath_id;
        if let Ok(R::Table(t)) = dp.stats_reply(Q::Table) {
            // Table 0 always; the others once they hold or looked up
            // anything (255 mostly empty tables would be noise).
            self.tables = t
                .into_iter()
                .filter(|t| t.table_id == 0 || t.active_count > 0 || t.lookup_count > 0)
                .collect();
        }
        if let Ok(R::Group(g)) = dp.stats_reply(Q::Group {
            group_id: group_id::ALL,
        }) {
            self.groups = g;
        }
        if let Ok(R::Meter(m)) = dp.stats_reply(Q::Meter {
            meter_id: meter_id::ALL,
        }) {
            self.meters = m;
        }
        let descs = match dp.stats_reply(Q::PortDesc) {
            Ok(R::PortDesc(d)) => d,
            _ => Vec::new(),
        };
        if let Ok(R::PortStats(stats)) = dp.stats_reply(Q::PortStats {
            port_no: port_no::ANY,
        }) {
            self.ports = stats
                .into_iter()
                .filter_map(|s| {
                    let d = descs.iter().find(|d| d.port_no == s.port_no)?;
                    Some(PortSample {
                        name: d.name.clone(),
                        link_up: d.state & port_state::LINK_DOWN == 0,
                        admin_up: d.config & port_config::PORT_DOWN == 0,
                        stats: s,
                    })
                })
                .collect();
        }
        self.workers = dp.worker_stats();
        self.packet_in_dropped = dp.packet_in_drops();
        self.state_changed_dropped = dp.state_change_drops();
        self.standalone = dp.mode() == Mode::Standalone;
    }

    /// The text exposition of this snapshot.
    pub fn render(&self) -> String {
        let mut e = Exposition::new();
        self.render_switch(&mut e);
        self.render_ports(&mut e);
        self.render_tables(&mut e);
        self.render_groups(&mut e);
        self.render_meters(&mut e);
        self.render_workers(&mut e);
        self.render_channel(&mut e);
        e.finish()
    }

    fn render_switch(&self, e: &mut Exposition) {
        let dpid = format!("{:016x}", self.datapath_id);
        e.family(
            "oxflow_build_info",
            Kind::Gauge,
            "Always 1; the labels name the oxflow version and the datapath id.",
        )
        .sample(
            "oxflow_build_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("datapath_id", &dpid),
            ],
            1.0,
        );
        e.single(
            "oxflow_up",
            Kind::Gauge,
            "1 while the switch answers scrapes.",
            1.0,
        );
        e.single(
            "oxflow_start_time_seconds",
            Kind::Gauge,
            "When the switch started, in seconds since the Unix epoch.",
            self.start_time,
        );
        e.single(
            "oxflow_uptime_seconds",
            Kind::Gauge,
            "Seconds since the switch started.",
            self.uptime.as_secs_f64(),
        );
        e.single(
            "oxflow_standalone",
            Kind::Gauge,
            "1 while the workers run the fail-standalone learning switch instead of the OpenFlow pipeline.",
            if self.standalone { 1.0 } else { 0.0 },
        );
        e.single(
            "oxflow_packet_in_dropped_total",
            Kind::Counter,
            "Packet-ins dropped because the queue from the workers to the control thread was full.",
            count(self.packet_in_dropped),
        );
        e.single(
            "oxflow_beba_state_changed_dropped_total",
            Kind::Counter,
            "BEBA STATE_CHANGED notifications dropped because their queue from the workers to the control thread was full.",
            count(self.state_changed_dropped),
        );
    }

    fn render_ports(&self, e: &mut Exposition) {
        type Field = fn(&mp::PortStats) -> u64;
        let counters: [(&str, &str, Field); 8] = [
            (
                "oxflow_port_rx_packets_total",
                "Packets received on the port.",
                |s| s.rx_packets,
            ),
            (
                "oxflow_port_tx_packets_total",
                "Packets transmitted on the port.",
                |s| s.tx_packets,
            ),
            (
                "oxflow_port_rx_bytes_total",
                "Bytes received on the port.",
                |s| s.rx_bytes,
            ),
            (
                "oxflow_port_tx_bytes_total",
                "Bytes transmitted on the port.",
                |s| s.tx_bytes,
            ),
            (
                "oxflow_port_rx_dropped_total",
                "Received packets dropped (rings full).",
                |s| s.rx_dropped,
            ),
            (
                "oxflow_port_tx_dropped_total",
                "Packets dropped on transmission.",
                |s| s.tx_dropped,
            ),
            (
                "oxflow_port_rx_errors_total",
                "Receive errors, malformed frames included.",
                |s| s.rx_errors,
            ),
            ("oxflow_port_tx_errors_total", "Transmit errors.", |s| {
                s.tx_errors
            }),
        ];
        let labels: Vec<(String, &str)> = self
            .ports
            .iter()
            .map(|p| (port_label(p.stats.port_no), p.name.as_str()))
            .collect();
        for (name, help, get) in counters {
            e.family(name, Kind::Counter, help);
            for (p, (no, pname)) in self.ports.iter().zip(&labels) {
                e.sample(name, &[("port", no), ("name", pname)], count(get(&p.stats)));
            }
        }
        type Flag = fn(&PortSample) -> bool;
        let gauges: [(&str, &str, Flag); 2] = [
            ("oxflow_port_up", "1 while the port's link is up.", |p| {
                p.link_up
            }),
            (
                "oxflow_port_admin_up",
                "1 unless the port is administratively down (OFPPC_PORT_DOWN).",
                |p| p.admin_up,
            ),
        ];
        for (name, help, get) in gauges {
            e.family(name, Kind::Gauge, help);
            for (p, (no, pname)) in self.ports.iter().zip(&labels) {
                e.sample(name, &[("port", no), ("name", pname)], flag(get(p)));
            }
        }
    }

    fn render_tables(&self, e: &mut Exposition) {
        type Field = fn(&mp::TableStats) -> u64;
        let families: [(&str, Kind, &str, Field); 3] = [
            (
                "oxflow_table_lookups_total",
                Kind::Counter,
                "Packets looked up in the flow table.",
                |t| t.lookup_count,
            ),
            (
                "oxflow_table_matches_total",
                Kind::Counter,
                "Packets that matched a flow entry of the table.",
                |t| t.matched_count,
            ),
            (
                "oxflow_table_active_entries",
                Kind::Gauge,
                "Flow entries in the table.",
                |t| u64::from(t.active_count),
            ),
        ];
        for (name, kind, help, get) in families {
            e.family(name, kind, help);
            for t in &self.tables {
                let id = t.table_id.to_string();
                e.sample(name, &[("table", &id)], count(get(t)));
            }
        }
    }

    fn render_groups(&self, e: &mut Exposition) {
        type Field = fn(&mp::GroupStats) -> u64;
        let families: [(&str, Kind, &str, Field); 3] = [
            (
                "oxflow_group_packets_total",
                Kind::Counter,
                "Packets processed by the group.",
                |g| g.packet_count,
            ),
            (
                "oxflow_group_bytes_total",
                Kind::Counter,
                "Bytes processed by the group.",
                |g| g.byte_count,
            ),
            (
                "oxflow_group_references",
                Kind::Gauge,
                "Flow entries and groups that forward to the group.",
                |g| u64::from(g.ref_count),
            ),
        ];
        for (name, kind, help, get) in families {
            e.family(name, kind, help);
            for g in &self.groups {
                let id = g.group_id.to_string();
                e.sample(name, &[("group", &id)], count(get(g)));
            }
        }
        type Bucket = fn(&mp::BucketCounter) -> u64;
        let buckets: [(&str, &str, Bucket); 2] = [
            (
                "oxflow_group_bucket_packets_total",
                "Packets processed by the bucket.",
                |b| b.packet_count,
            ),
            (
                "oxflow_group_bucket_bytes_total",
                "Bytes processed by the bucket.",
                |b| b.byte_count,
            ),
        ];
        for (name, help, get) in buckets {
            e.family(name, Kind::Counter, help);
            for g in &self.groups {
                let id = g.group_id.to_string();
                for (i, b) in g.bucket_stats.iter().enumerate() {
                    let bucket = i.to_string();
                    e.sample(name, &[("group", &id), ("bucket", &bucket)], count(get(b)));
                }
            }
        }
    }

    fn render_meters(&self, e: &mut Exposition) {
        type Field = fn(&mp::MeterStats) -> u64;
        let families: [(&str, Kind, &str, Field); 3] = [
            (
                "oxflow_meter_packets_in_total",
                Kind::Counter,
                "Packets that entered the meter.",
                |m| m.packet_in_count,
            ),
            (
                "oxflow_meter_bytes_in_total",
                Kind::Counter,
                "Bytes that entered the meter.",
                |m| m.byte_in_count,
            ),
            (
                "oxflow_meter_flows",
                Kind::Gauge,
                "Flow entries that use the meter.",
                |m| u64::from(m.flow_count),
            ),
        ];
        for (name, kind, help, get) in families {
            e.family(name, kind, help);
            for m in &self.meters {
                let id = m.meter_id.to_string();
                e.sample(name, &[("meter", &id)], count(get(m)));
            }
        }
        type Band = fn(&mp::MeterBandStats) -> u64;
        let bands: [(&str, &str, Band); 2] = [
            (
                "oxflow_meter_band_packets_total",
                "Packets over the band's rate (the band applied to them).",
                |b| b.packet_band_count,
            ),
            (
                "oxflow_meter_band_bytes_total",
                "Bytes over the band's rate (the band applied to them).",
                |b| b.byte_band_count,
            ),
        ];
        for (name, help, get) in bands {
            e.family(name, Kind::Counter, help);
            for m in &self.meters {
                let id = m.meter_id.to_string();
                for (i, b) in m.band_stats.iter().enumerate() {
                    let band = i.to_string();
                    e.sample(name, &[("meter", &id), ("band", &band)], count(get(b)));
                }
            }
        }
    }

    fn render_workers(&self, e: &mut Exposition) {
        const NS: f64 = 1e-9;
        type Field = fn(&WorkerStats) -> f64;
        let families: [(&str, &str, Field); 6] = [
            (
                "oxflow_worker_rx_packets_total",
                "Packets the worker received from its ports.",
                |w| count(w.rx_packets),
            ),
            (
                "oxflow_worker_rounds_total",
                "Rounds of the worker's loop.",
                |w| count(w.rounds),
            ),
            (
                "oxflow_worker_busy_rounds_total",
                "Rounds that received at least one packet.",
                |w| count(w.busy_rounds),
            ),
            (
                "oxflow_worker_busy_seconds_total",
                "Time spent in busy rounds.",
                |w| count(w.busy_ns) * NS,
            ),
            (
                "oxflow_worker_pipeline_seconds_total",
                "Time spent running packets through the pipeline.",
                |w| count(w.pipeline_ns) * NS,
            ),
            (
                "oxflow_worker_sleeps_total",
                "Times the idle worker went to sleep in poll(2).",
                |w| count(w.sleeps),
            ),
        ];
        for (name, help, get) in families {
            e.family(name, Kind::Counter, help);
            for w in &self.workers {
                let id = w.worker.to_string();
                e.sample(name, &[("worker", &id)], get(w));
            }
        }
    }

    fn render_channel(&self, e: &mut Exposition) {
        let c = &self.channel;
        e.family(
            "oxflow_controller_connected",
            Kind::Gauge,
            "1 while the main connection to the configured controller is up.",
        );
        for s in &c.controllers {
            e.sample(
                "oxflow_controller_connected",
                &[("target", &s.target)],
                flag(s.role.is_some()),
            );
        }
        e.family(
            "oxflow_controller_role",
            Kind::Gauge,
            "1 for the configured controller's current role (equal, master or slave), 0 for the others and while it is not connected.",
        );
        for s in &c.controllers {
            for (role, name) in [
                (ControllerRole::Equal, "equal"),
                (ControllerRole::Master, "master"),
                (ControllerRole::Slave, "slave"),
            ] {
                e.sample(
                    "oxflow_controller_role",
                    &[("target", &s.target), ("role", name)],
                    flag(s.role == Some(role)),
                );
            }
        }
        e.family(
            "oxflow_controller_connections",
            Kind::Gauge,
            "Open OpenFlow connections: kind=controller (configured controllers, auxiliary connections included) or kind=management (passive listeners).",
        )
        .sample(
            "oxflow_controller_connections",
            &[("kind", "controller")],
            c.controller_connections as f64,
        )
        .sample(
            "oxflow_controller_connections",
            &[("kind", "management")],
            c.management_connections as f64,
        );
        e.single(
            "oxflow_controller_messages_received_total",
            Kind::Counter,
            "OpenFlow messages received after the HELLO exchange, over all connections.",
            count(c.messages_received),
        );
        e.single(
            "oxflow_controller_messages_sent_total",
            Kind::Counter,
            "OpenFlow messages written after the HELLO exchange, over all connections.",
            count(c.messages_sent),
        );
        e.single(
            "oxflow_controller_async_dropped_total",
            Kind::Counter,
            "Asynchronous messages (packet-in, flow-removed, port-status) dropped because a connection's queue was full.",
            count(c.async_dropped),
        );
        e.single(
            "oxflow_controller_malformed_messages_total",
            Kind::Counter,
            "Messages the switch could not decode (answered with OFPT_ERROR).",
            count(c.malformed),
        );
    }
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The `port` label: the port number, or `LOCAL` for OFPP_LOCAL.
fn port_label(no: u32) -> String {
    if no == port_no::LOCAL {
        "LOCAL".into()
    } else {
        no.to_string()
    }
}
