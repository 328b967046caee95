//! Printers for replies and asynchronous messages, in ovs-ofctl's format.
//!
//! Each multipart reply prints as a title line
//! (`OFPST_FLOW reply (OF1.3) (xid=0x2):`) followed by one entry per line;
//! [`format_message`] covers every message a client receives, so `monitor`
//! and unexpected replies print uniformly.

use std::fmt::Write as _;

use ofp::error::ErrorMsg;
use ofp::experimenter::WorkerStats;
use ofp::message::{
    capabilities, flow_removed_reason, packet_in_reason, port_reason, role, FeaturesReply,
    FlowRemoved, Message, PacketIn, PortStatus, NO_BUFFER,
};
use ofp::multipart::{
    GroupDesc, GroupStats, MeterConfig, MeterStats, MultipartReplyBody, PortStats, TableStats,
};
use ofp::port::{config, features, state, Port};
use ofp::table_features::{ActionId, InstructionId, OxmId, TableFeatureProp, TableFeatures};
use ofp::OfpMessage;

use crate::actions::format_actions;
use crate::fields::port_name;
use crate::flow::{format_flow_stats, format_match};
use crate::group::format_group;
use crate::meter::format_meter;

/// `CamelCase` (a Debug name) to `UPPER_SNAKE`.
fn upper_snake(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// `type=BAD_MATCH code=BAD_PREREQ` for an OFPT_ERROR body.
pub fn format_error_code(e: &ErrorMsg) -> String {
    if let Some(c) = crate::bundle::is_bundle_error(e) {
        return format!("type=BUNDLE_FAILED code={}", upper_snake(&format!("{c:?}")));
    }
    match (e, e.typed()) {
        (
            ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                ..
            },
            _,
        ) => format!("type=EXPERIMENTER experimenter={experimenter:#x} exp_type={exp_type}"),
        (_, Some(code)) => {
            // Debug of ErrorCode is `Type(Code)`.
            let dbg = format!("{code:?}");
            let (ty, c) = dbg.split_once('(').unwrap_or((&dbg, ""));
            format!(
                "type={} code={}",
                upper_snake(ty),
                upper_snake(c.trim_end_matches(')'))
            )
        }
        (ErrorMsg::Standard { err_type, code, .. }, None) => {
            format!("type={err_type} code={code}")
        }
    }
}

fn duration(sec: u32, nsec: u32) -> String {
    format!("{sec}.{:03}s", nsec / 1_000_000)
}

fn mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn bit_names(bits: u32, names: &[(u32, &str)]) -> String {
    let v: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if v.is_empty() {
        "0".into()
    } else {
        v.join(" ")
    }
}

const CONFIG_NAMES: &[(u32, &str)] = &[
    (config::PORT_DOWN, "PORT_DOWN"),
    (config::NO_RECV, "NO_RECV"),
    (config::NO_FWD, "NO_FWD"),
    (config::NO_PACKET_IN, "NO_PACKET_IN"),
];
const STATE_NAMES: &[(u32, &str)] = &[
    (state::LINK_DOWN, "LINK_DOWN"),
    (state::BLOCKED, "BLOCKED"),
    (state::LIVE, "LIVE"),
];
const FEATURE_NAMES: &[(u32, &str)] = &[
    (features::F10MB_HD, "10MB-HD"),
    (features::F10MB_FD, "10MB-FD"),
    (features::F100MB_HD, "100MB-HD"),
    (features::F100MB_FD, "100MB-FD"),
    (features::F1GB_HD, "1GB-HD"),
    (features::F1GB_FD, "1GB-FD"),
    (features::F10GB_FD, "10GB-FD"),
    (features::F40GB_FD, "40GB-FD"),
    (features::F100GB_FD, "100GB-FD"),
    (features::F1TB_FD, "1TB-FD"),
    (features::OTHER, "OTHER"),
    (features::COPPER, "COPPER"),
    (features::FIBER, "FIBER"),
    (features::AUTONEG, "AUTO_NEG"),
    (features::PAUSE, "AUTO_PAUSE"),
    (features::PAUSE_ASYM, "AUTO_PAUSE_ASYM"),
];

/// One port description, as in `show` and `dump-ports-desc`.
pub fn format_port(p: &Port) -> String {
    let mut s = format!(
        " {}({}): addr:{}\n     config:     {}\n     state:      {}\n",
        port_name(p.port_no),
        p.name,
        mac(&p.hw_addr),
        bit_names(p.config, CONFIG_NAMES),
        bit_names(p.state, STATE_NAMES)
    );
    for (label, bits) in [
        ("current:   ", p.curr),
        ("advertised:", p.advertised),
        ("supported: ", p.supported),
        ("peer:      ", p.peer),
    ] {
        if bits != 0 {
            let _ = writeln!(s, "     {label} {}", bit_names(bits, FEATURE_NAMES));
        }
    }
    let _ = write!(
        s,
        "     speed: {} Mbps now, {} Mbps max",
        p.curr_speed / 1000,
        p.max_speed / 1000
    );
    s
}

fn format_features(xid: u32, f: &FeaturesReply) -> String {
    let caps = bit_names(
        f.capabilities,
        &[
            (capabilities::FLOW_STATS, "FLOW_STATS"),
            (capabilities::TABLE_STATS, "TABLE_STATS"),
            (capabilities::PORT_STATS, "PORT_STATS"),
            (capabilities::GROUP_STATS, "GROUP_STATS"),
            (capabilities::IP_REASM, "IP_REASM"),
            (capabilities::QUEUE_STATS, "QUEUE_STATS"),
            (capabilities::PORT_BLOCKED, "PORT_BLOCKED"),
        ],
    );
    format!(
        "OFPT_FEATURES_REPLY (OF1.3) (xid={xid:#x}): dpid:{:016x}\nn_tables:{}, n_buffers:{}\ncapabilities: {caps}",
        f.datapath_id, f.n_tables, f.n_buffers
    )
}

/// One `dump-ports` entry (three lines).
pub fn format_port_stats(p: &PortStats) -> String {
    format!(
        "  port {:>2}: rx pkts={}, bytes={}, drop={}, errs={}, frame={}, over={}, crc={}\n           tx pkts={}, bytes={}, drop={}, errs={}, coll={}\n           duration={}",
        port_name(p.port_no),
        p.rx_packets,
        p.rx_bytes,
        p.rx_dropped,
        p.rx_errors,
        p.rx_frame_err,
        p.rx_over_err,
        p.rx_crc_err,
        p.tx_packets,
        p.tx_bytes,
        p.tx_dropped,
        p.tx_errors,
        p.collisions,
        duration(p.duration_sec, p.duration_nsec)
    )
}

/// One `dump-tables` entry.
pub fn format_table_stats(t: &TableStats) -> String {
    format!(
        "  table {}:\n    active={}, lookup={}, matched={}",
        t.table_id, t.active_count, t.lookup_count, t.matched_count
    )
}

/// One `dump-group-stats` entry.
pub fn format_group_stats(g: &GroupStats) -> String {
    let mut s = format!(
        " group_id={},duration={},ref_count={},packet_count={},byte_count={}",
        g.group_id,
        duration(g.duration_sec, g.duration_nsec),
        g.ref_count,
        g.packet_count,
        g.byte_count
    );
    for (i, b) in g.bucket_stats.iter().enumerate() {
        let _ = write!(
            s,
            ",bucket{i}:packet_count={},byte_count={}",
            b.packet_count, b.byte_count
        );
    }
    s
}

/// One `dump-groups` entry.
pub fn format_group_desc(g: &GroupDesc) -> String {
    format!(" {}", format_group(g.group_type, g.group_id, &g.buckets))
}

/// One `dump-meters` entry.
pub fn format_meter_config(m: &MeterConfig) -> String {
    format_meter(m.meter_id, m.flags, &m.bands)
}

/// One `meter-stats` entry.
pub fn format_meter_stats(m: &MeterStats) -> String {
    let mut s = format!(
        "meter:{} flow_count:{} packet_in_count:{} byte_in_count:{} duration:{} bands:",
        m.meter_id,
        m.flow_count,
        m.packet_in_count,
        m.byte_in_count,
        duration(m.duration_sec, m.duration_nsec)
    );
    for (i, b) in m.band_stats.iter().enumerate() {
        let _ = write!(
            s,
            "\n{i}: packet_count:{} byte_count:{}",
            b.packet_band_count, b.byte_band_count
        );
    }
    s
}

fn instruction_name(t: u16) -> String {
    use ofp::instruction::instruction_type as it;
    match t {
        it::GOTO_TABLE => "goto_table".into(),
        it::WRITE_METADATA => "write_metadata".into(),
        it::WRITE_ACTIONS => "write_actions".into(),
        it::APPLY_ACTIONS => "apply_actions".into(),
        it::CLEAR_ACTIONS => "clear_actions".into(),
        it::METER => "meter".into(),
        t => t.to_string(),
    }
}

fn action_name(t: u16) -> String {
    use ofp::action::action_type as at;
    match t {
        at::OUTPUT => "output".into(),
        at::COPY_TTL_OUT => "copy_ttl_out".into(),
        at::COPY_TTL_IN => "copy_ttl_in".into(),
        at::SET_MPLS_TTL => "set_mpls_ttl".into(),
        at::DEC_MPLS_TTL => "dec_mpls_ttl".into(),
        at::PUSH_VLAN => "push_vlan".into(),
        at::POP_VLAN => "pop_vlan".into(),
        at::PUSH_MPLS => "push_mpls".into(),
        at::POP_MPLS => "pop_mpls".into(),
        at::SET_QUEUE => "set_queue".into(),
        at::GROUP => "group".into(),
        at::SET_NW_TTL => "set_nw_ttl".into(),
        at::DEC_NW_TTL => "dec_ttl".into(),
        at::SET_FIELD => "set_field".into(),
        at::PUSH_PBB => "push_pbb".into(),
        at::POP_PBB => "pop_pbb".into(),
        t => t.to_string(),
    }
}

fn oxm_id_names(ids: &[OxmId]) -> String {
    ids.iter()
        .map(|id| {
            let h = id.header();
            let (class, field) = ((h >> 16) as u16, ((h >> 9) & 0x7f) as u8);
            if class == ofp::oxm::class::OPENFLOW_BASIC {
                crate::fields::oxm_name(field).to_string()
            } else {
                format!("{h:#010x}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Table numbers as ranges: `1-5 7`.
fn table_ranges(tables: &[u8]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tables.len() {
        let mut j = i;
        while j + 1 < tables.len() && u16::from(tables[j + 1]) == u16::from(tables[j]) + 1 {
            j += 1;
        }
        out.push(if i == j {
            tables[i].to_string()
        } else {
            format!("{}-{}", tables[i], tables[j])
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(" ")
    }
}

/// One table-feature property as `name: values`.
fn format_table_prop(p: &TableFeatureProp) -> String {
    let miss = |m: &bool| if *m { " (table miss)" } else { "" };
    let ids = |v: &[ActionId]| {
        v.iter()
            .map(|a| match a {
                ActionId::Standard(t) => action_name(*t),
                ActionId::Experimenter(e) => format!("experimenter:{e:#x}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    match p {
        TableFeatureProp::Instructions { miss: m, ids: v } => format!(
            "instructions{}: {}",
            miss(m),
            v.iter()
                .map(|i| match i {
                    InstructionId::Standard(t) => instruction_name(*t),
                    InstructionId::Experimenter(e) => format!("experimenter:{e:#x}"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        ),
        TableFeatureProp::NextTables { miss: m, tables } => {
            format!("next tables{}: {}", miss(m), table_ranges(tables))
        }
        TableFeatureProp::WriteActions { miss: m, ids: v } => {
            format!("write actions{}: {}", miss(m), ids(v))
        }
        TableFeatureProp::ApplyActions { miss: m, ids: v } => {
            format!("apply actions{}: {}", miss(m), ids(v))
        }
        TableFeatureProp::Match(v) => format!("match: {}", oxm_id_names(v)),
        TableFeatureProp::Wildcards(v) => format!("wildcards: {}", oxm_id_names(v)),
        TableFeatureProp::WriteSetfield { miss: m, ids: v } => {
            format!("write set_field{}: {}", miss(m), oxm_id_names(v))
        }
        TableFeatureProp::ApplySetfield { miss: m, ids: v } => {
            format!("apply set_field{}: {}", miss(m), oxm_id_names(v))
        }
        TableFeatureProp::Experimenter {
            miss: m,
            experimenter,
            exp_type,
            data,
        } => format!(
            "experimenter{}: {experimenter:#x} type={exp_type} len={}",
            miss(m),
            data.len()
        ),
    }
}

/// One `dump-table-features` entry: ids, limits, then one line per property.
pub fn format_table_features(t: &TableFeatures) -> String {
    let mut s = format!(
        "  table {} (\"{}\"):\n    metadata: match={:#x} write={:#x}\n    config={:#x}, max_entries={}",
        t.table_id, t.name, t.metadata_match, t.metadata_write, t.config, t.max_entries
    );
    for p in &t.properties {
        let _ = write!(s, "\n    {}", format_table_prop(p));
    }
    s
}

fn title(name: &str, xid: u32) -> String {
    format!("{name} reply (OF1.3) (xid={xid:#x}):")
}

/// A whole multipart reply: title line and entries.
pub fn format_multipart_reply(xid: u32, body: &MultipartReplyBody) -> String {
    let mut lines = Vec::new();
    match body {
        MultipartReplyBody::Desc(d) => {
            lines.push(title("OFPST_DESC", xid));
            lines.push(format!("Manufacturer: {}", d.mfr_desc));
            lines.push(format!("Hardware: {}", d.hw_desc));
            lines.push(format!("Software: {}", d.sw_desc));
            lines.push(format!("Serial Num: {}", d.serial_num));
            lines.push(format!("DP Description: {}", d.dp_desc));
        }
        MultipartReplyBody::Flow(v) => {
            lines.push(title("OFPST_FLOW", xid));
            lines.extend(v.iter().map(|f| format!(" {}", format_flow_stats(f))));
        }
        MultipartReplyBody::Aggregate(a) => {
            lines.push(title("OFPST_AGGREGATE", xid));
            lines.push(format!(
                " packet_count={} byte_count={} flow_count={}",
                a.packet_count, a.byte_count, a.flow_count
            ));
        }
        MultipartReplyBody::Table(v) => {
            lines.push(title("OFPST_TABLE", xid));
            lines.extend(v.iter().map(format_table_stats));
        }
        MultipartReplyBody::PortStats(v) => {
            lines.push(format!("{} {} ports", title("OFPST_PORT", xid), v.len()));
            lines.extend(v.iter().map(format_port_stats));
        }
        MultipartReplyBody::Queue(v) => {
            lines.push(format!("{} {} queues", title("OFPST_QUEUE", xid), v.len()));
            lines.extend(v.iter().map(|q| {
                format!(
                    "  port {} queue {}: bytes={}, pkts={}, errors={}, duration={}",
                    port_name(q.port_no),
                    q.queue_id,
                    q.tx_bytes,
                    q.tx_packets,
                    q.tx_errors,
                    duration(q.duration_sec, q.duration_nsec)
                )
            }));
        }
        MultipartReplyBody::Group(v) => {
            lines.push(title("OFPST_GROUP", xid));
            lines.extend(v.iter().map(format_group_stats));
        }
        MultipartReplyBody::GroupDesc(v) => {
            lines.push(title("OFPST_GROUP_DESC", xid));
            lines.extend(v.iter().map(format_group_desc));
        }
        MultipartReplyBody::GroupFeatures(g) => {
            lines.push(title("OFPST_GROUP_FEATURES", xid));
            lines.push(format!(
                " types={:#x} capabilities={:#x} max_groups={:?} actions={:x?}",
                g.types, g.capabilities, g.max_groups, g.actions
            ));
        }
        MultipartReplyBody::Meter(v) => {
            lines.push(title("OFPST_METER", xid));
            lines.extend(v.iter().map(format_meter_stats));
        }
        MultipartReplyBody::MeterConfig(v) => {
            lines.push(title("OFPST_METER_CONFIG", xid));
            lines.extend(v.iter().map(format_meter_config));
        }
        MultipartReplyBody::MeterFeatures(f) => {
            lines.push(title("OFPST_METER_FEATURES", xid));
            lines.push(format!(
                "max_meter:{} max_bands:{} max_color:{} band_types:{:#x} capabilities:{:#x}",
                f.max_meter, f.max_bands, f.max_color, f.band_types, f.capabilities
            ));
        }
        MultipartReplyBody::TableFeatures(v) => {
            lines.push(title("OFPST_TABLE_FEATURES", xid));
            lines.extend(v.iter().map(format_table_features));
        }
        MultipartReplyBody::PortDesc(v) => {
            lines.push(title("OFPST_PORT_DESC", xid));
            lines.extend(v.iter().map(format_port));
        }
        MultipartReplyBody::Experimenter(e) => match WorkerStats::parse_reply(e) {
            Some(Ok(stats)) => {
                lines.push(format!(
                    "{} {} workers",
                    title("OXFLOW_WORKER_STATS", xid),
                    stats.len()
                ));
                lines.extend(stats.iter().map(format_worker_stats));
            }
            _ => {
                lines.push(title("OFPST_EXPERIMENTER", xid));
                lines.push(format!(
                    " experimenter={:#x} exp_type={} len={}",
                    e.experimenter,
                    e.exp_type,
                    e.data.len()
                ));
            }
        },
    }
    lines.join("\n")
}

/// One worker of oxflow's worker statistics (`ofp::experimenter`): its
/// counters, then what follows from them: the busy time and the
/// pipeline's part of it per received frame, and the mean batch of a
/// busy round.
fn format_worker_stats(s: &WorkerStats) -> String {
    let per = |num: u64, den: u64| {
        if den == 0 {
            "-".to_string()
        } else {
            format!("{:.1}", num as f64 / den as f64)
        }
    };
    format!(
        "  worker {}: rx_pkts={} rounds={} busy_rounds={} busy_ns={} pipeline_ns={} sleeps={}\n           busy_ns/pkt={} pipeline_ns/pkt={} pkts/busy_round={}",
        s.worker,
        s.rx_packets,
        s.rounds,
        s.busy_rounds,
        s.busy_ns,
        s.pipeline_ns,
        s.sleeps,
        per(s.busy_ns, s.rx_packets),
        per(s.pipeline_ns, s.rx_packets),
        per(s.rx_packets, s.busy_rounds)
    )
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn format_packet_in(xid: u32, p: &PacketIn) -> String {
    let reason = match p.reason {
        packet_in_reason::NO_MATCH => "no_match".to_string(),
        packet_in_reason::ACTION => "action".to_string(),
        packet_in_reason::INVALID_TTL => "invalid_ttl".to_string(),
        r => r.to_string(),
    };
    let buffer = if p.buffer_id == NO_BUFFER {
        "(unbuffered)".to_string()
    } else {
        format!("buffer={:#010x}", p.buffer_id)
    };
    format!(
        "OFPT_PACKET_IN (OF1.3) (xid={xid:#x}): table_id={} cookie={:#x} total_len={} {} (via {reason}) data_len={} {buffer}\npacket={}",
        p.table_id,
        p.cookie,
        p.total_len,
        format_match(&p.match_, None),
        p.data.len(),
        hex(&p.data)
    )
}

fn format_flow_removed(xid: u32, f: &FlowRemoved) -> String {
    let reason = match f.reason {
        flow_removed_reason::IDLE_TIMEOUT => "idle".to_string(),
        flow_removed_reason::HARD_TIMEOUT => "hard".to_string(),
        flow_removed_reason::DELETE => "delete".to_string(),
        flow_removed_reason::GROUP_DELETE => "group_delete".to_string(),
        r => r.to_string(),
    };
    format!(
        "OFPT_FLOW_REMOVED (OF1.3) (xid={xid:#x}): {} reason={reason} table_id={} cookie={:#x} duration={} idle_timeout={} hard_timeout={} n_packets={} n_bytes={}",
        format_match(&f.match_, Some(f.priority)),
        f.table_id,
        f.cookie,
        duration(f.duration_sec, f.duration_nsec),
        f.idle_timeout,
        f.hard_timeout,
        f.packet_count,
        f.byte_count
    )
}

fn format_port_status(xid: u32, p: &PortStatus) -> String {
    let reason = match p.reason {
        port_reason::ADD => "ADD",
        port_reason::DELETE => "DEL",
        port_reason::MODIFY => "MOD",
        _ => "?",
    };
    format!(
        "OFPT_PORT_STATUS (OF1.3) (xid={xid:#x}): {reason}:{}",
        format_port(&p.desc)
    )
}

/// Name of a controller role.
pub fn role_name(r: u32) -> String {
    match r {
        role::NOCHANGE => "nochange".into(),
        role::EQUAL => "equal".into(),
        role::MASTER => "master".into(),
        role::SLAVE => "slave".into(),
        r => r.to_string(),
    }
}

/// Any message a client may receive, as one or more lines.
pub fn format_message(m: &OfpMessage) -> String {
    let xid = m.xid;
    match &m.body {
        Message::Error(e) => format!("OFPT_ERROR: {} (xid={xid:#x})", format_error_code(e)),
        Message::FeaturesReply(f) => format_features(xid, f),
        Message::GetConfigReply(c) => format!(
            "OFPT_GET_CONFIG_REPLY (OF1.3) (xid={xid:#x}): frags={} miss_send_len={}",
            match c.flags & ofp::message::config_flags::FRAG_MASK {
                0 => "normal",
                1 => "drop",
                2 => "reassemble",
                _ => "?",
            },
            c.miss_send_len
        ),
        Message::PacketIn(p) => format_packet_in(xid, p),
        Message::FlowRemoved(f) => format_flow_removed(xid, f),
        Message::PortStatus(p) => format_port_status(xid, p),
        Message::MultipartReply(r) => format_multipart_reply(xid, &r.body),
        Message::RoleReply(r) => format!(
            "OFPT_ROLE_REPLY (OF1.3) (xid={xid:#x}): role={} generation_id={}",
            role_name(r.role),
            r.generation_id
        ),
        Message::BarrierReply => format!("OFPT_BARRIER_REPLY (OF1.3) (xid={xid:#x}):"),
        Message::EchoRequest(_) => format!("OFPT_ECHO_REQUEST (OF1.3) (xid={xid:#x}):"),
        Message::EchoReply(_) => format!("OFPT_ECHO_REPLY (OF1.3) (xid={xid:#x}):"),
        Message::Hello(h) => format!("OFPT_HELLO (xid={xid:#x}): version {:#x}", h.version),
        Message::PacketOut(p) => format!(
            "OFPT_PACKET_OUT (OF1.3) (xid={xid:#x}): in_port={} actions={} data_len={}",
            port_name(p.in_port),
            format_actions(&p.actions),
            p.data.len()
        ),
        Message::Experimenter(e) => crate::beba::format_async(xid, e)
            .unwrap_or_else(|| format!("(xid={xid:#x}): {:?}", m.body)),
        other => format!("(xid={xid:#x}): {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::{parse_flow, FlowUsage};
    use ofp::error::{BadMatchCode, ErrorCode};
    use ofp::multipart::FlowStats;

    #[test]
    fn table_features_lines() {
        let t = TableFeatures {
            table_id: 0,
            name: "classifier".into(),
            metadata_match: 0,
            metadata_write: 0,
            config: 0,
            max_entries: 10,
            properties: vec![
                TableFeatureProp::NextTables {
                    miss: false,
                    tables: vec![1, 2, 3, 7],
                },
                TableFeatureProp::Instructions {
                    miss: true,
                    ids: vec![InstructionId::Standard(1), InstructionId::Standard(4)],
                },
                TableFeatureProp::ApplyActions {
                    miss: false,
                    ids: vec![ActionId::Standard(0), ActionId::Standard(25)],
                },
                TableFeatureProp::Match(vec![OxmId::Standard(ofp::oxm::oxm_header(
                    0x8000,
                    ofp::oxm::field::ETH_DST,
                    false,
                    6,
                ))]),
            ],
        };
        assert_eq!(
            format_table_features(&t),
            "  table 0 (\"classifier\"):\n    metadata: match=0x0 write=0x0\n    config=0x0, max_entries=10\n    \
             next tables: 1-3 7\n    instructions (table miss): goto_table apply_actions\n    \
             apply actions: output set_field\n    match: eth_dst"
        );
    }

    #[test]
    fn async_messages() {
        let spec = parse_flow("priority=10,udp,tp_dst=53,actions=drop", FlowUsage::Add).unwrap();
        let fr = Message::FlowRemoved(FlowRemoved {
            cookie: 0x7,
            priority: 10,
            reason: flow_removed_reason::IDLE_TIMEOUT,
            table_id: 2,
            duration_sec: 3,
            duration_nsec: 5_000_000,
            idle_timeout: 3,
            hard_timeout: 0,
            packet_count: 1,
            byte_count: 60,
            match_: spec.match_.clone(),
        });
        assert_eq!(
            format_message(&OfpMessage::new(0, fr)),
            "OFPT_FLOW_REMOVED (OF1.3) (xid=0x0): priority=10,udp,tp_dst=53 reason=idle table_id=2 cookie=0x7 duration=3.005s idle_timeout=3 hard_timeout=0 n_packets=1 n_bytes=60"
        );
        let pi = Message::PacketIn(PacketIn {
            buffer_id: 0x10,
            total_len: 3,
            reason: packet_in_reason::NO_MATCH,
            table_id: 0,
            cookie: 0,
            match_: ofp::oxm::Match::new(vec![ofp::oxm::OxmField::InPort(3)]),
            data: vec![1, 2, 0xab],
        });
        assert_eq!(
            format_message(&OfpMessage::new(0, pi)),
            "OFPT_PACKET_IN (OF1.3) (xid=0x0): table_id=0 cookie=0x0 total_len=3 in_port=3 (via no_match) data_len=3 buffer=0x00000010\npacket=0102ab"
        );
        let ps = Message::PortStatus(PortStatus {
            reason: port_reason::DELETE,
            desc: Port {
                port_no: 2,
                name: "p2".into(),
                config: config::PORT_DOWN,
                state: state::LINK_DOWN,
                ..Port::default()
            },
        });
        assert!(format_message(&OfpMessage::new(0, ps)).starts_with(
            "OFPT_PORT_STATUS (OF1.3) (xid=0x0): DEL: 2(p2): addr:00:00:00:00:00:00\n     config:     PORT_DOWN\n     state:      LINK_DOWN"
        ));
    }

    #[test]
    fn error_names() {
        let e = ErrorMsg::from_request(ErrorCode::BadMatch(BadMatchCode::BadPrereq), &[]);
        let m = OfpMessage::new(4, Message::Error(e));
        assert_eq!(
            format_message(&m),
            "OFPT_ERROR: type=BAD_MATCH code=BAD_PREREQ (xid=0x4)"
        );
        let e = ErrorMsg::Standard {
            err_type: 77,
            code: 3,
            data: vec![],
        };
        assert_eq!(format_error_code(&e), "type=77 code=3");
    }

    #[test]
    fn flow_stats_line() {
        let spec = parse_flow(
            "priority=10,ip,nw_dst=10.0.0.0/8,actions=output:2",
            FlowUsage::Add,
        )
        .unwrap();
        let fs = FlowStats {
            table_id: 0,
            duration_sec: 1,
            duration_nsec: 234_000_000,
            priority: 10,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            cookie: 0,
            packet_count: 3,
            byte_count: 180,
            match_: spec.match_,
            instructions: spec.instructions,
        };
        assert_eq!(
            format_flow_stats(&fs),
            "cookie=0x0, duration=1.234s, table=0, n_packets=3, n_bytes=180, priority=10,ip,nw_dst=10.0.0.0/8 actions=output:2"
        );
        let fs2 = FlowStats {
            priority: 0x8000,
            idle_timeout: 10,
            flags: 1,
            match_: ofp::oxm::Match::default(),
            instructions: vec![],
            ..fs
        };
        assert_eq!(
            format_flow_stats(&fs2),
            "cookie=0x0, duration=1.234s, table=0, n_packets=3, n_bytes=180, idle_timeout=10, send_flow_rem actions=drop"
        );
    }

    #[test]
    fn port_and_stats() {
        let p = Port {
            port_no: 1,
            hw_addr: [0, 1, 2, 3, 4, 5],
            name: "eth1".into(),
            state: state::LIVE,
            curr: features::F10GB_FD | features::COPPER,
            curr_speed: 10_000_000,
            ..Port::default()
        };
        assert_eq!(
            format_port(&p),
            " 1(eth1): addr:00:01:02:03:04:05\n     config:     0\n     state:      LIVE\n     current:    10GB-FD COPPER\n     speed: 10000 Mbps now, 0 Mbps max"
        );
        let ms = MeterStats {
            meter_id: 1,
            flow_count: 2,
            packet_in_count: 3,
            byte_in_count: 4,
            duration_sec: 5,
            duration_nsec: 0,
            band_stats: vec![ofp::multipart::MeterBandStats {
                packet_band_count: 6,
                byte_band_count: 7,
            }],
        };
        assert_eq!(
            format_meter_stats(&ms),
            "meter:1 flow_count:2 packet_in_count:3 byte_in_count:4 duration:5.000s bands:\n0: packet_count:6 byte_count:7"
        );
    }

    #[test]
    fn worker_stats_lines() {
        let stats = [
            WorkerStats {
                worker: 0,
                rx_packets: 640,
                rounds: 100,
                busy_rounds: 20,
                busy_ns: 64_000,
                pipeline_ns: 3_200,
                sleeps: 2,
            },
            WorkerStats {
                worker: 1,
                ..WorkerStats::default()
            },
        ];
        let body = MultipartReplyBody::Experimenter(WorkerStats::reply(&stats));
        assert_eq!(
            format_multipart_reply(5, &body),
            "OXFLOW_WORKER_STATS reply (OF1.3) (xid=0x5): 2 workers\n  \
             worker 0: rx_pkts=640 rounds=100 busy_rounds=20 busy_ns=64000 pipeline_ns=3200 sleeps=2\n           \
             busy_ns/pkt=100.0 pipeline_ns/pkt=5.0 pkts/busy_round=32.0\n  \
             worker 1: rx_pkts=0 rounds=0 busy_rounds=0 busy_ns=0 pipeline_ns=0 sleeps=0\n           \
             busy_ns/pkt=- pipeline_ns/pkt=- pkts/busy_round=-"
        );
        // Another experimenter's reply keeps the generic line.
        let other = MultipartReplyBody::Experimenter(ofp::multipart::ExperimenterMultipart {
            experimenter: 0x2320,
            exp_type: 7,
            data: vec![1, 2, 3],
        });
        assert_eq!(
            format_multipart_reply(5, &other),
            "OFPST_EXPERIMENTER reply (OF1.3) (xid=0x5):\n experimenter=0x2320 exp_type=7 len=3"
        );
    }
}
