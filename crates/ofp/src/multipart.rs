//! Multipart requests and replies (spec §7.3.5): OFPT_MULTIPART_REQUEST and
//! OFPT_MULTIPART_REPLY bodies of every OFPMP_* type, a reassembler for
//! requests/replies spread over several messages, and a splitter that cuts a
//! long reply into messages that fit the 64 KiB OpenFlow message limit.
//!
//! Both messages start (after `ofp_header`) with the same 8 bytes:
//! ```text
//!  0  type u16 (OFPMP_*) | flags u16 (OFPMPF_REQ_MORE / OFPMPF_REPLY_MORE) | pad[4]
//!  8  body, whose layout depends on type and direction
//! ```
//! Bodies are either one fixed structure (desc, aggregate, group/meter
//! features, the per-id stats requests) or a list of records filling the rest
//! of the message (flow stats, port stats, table features, port desc, ...).
//! Only lists can be spread over several messages: each part carries some of
//! the records and every part but the last has the MORE flag.
//!
//! Errors: an unknown type is BAD_REQUEST/BAD_MULTIPART; a body too short,
//! too long or with a record length inconsistent with the body is
//! BAD_REQUEST/BAD_LEN. Errors inside nested codecs are passed on unchanged
//! (BAD_MATCH/* in a flow stats match, BAD_INSTRUCTION/* in its instructions,
//! TABLE_FEATURES_FAILED/* in table features, ...).

use std::collections::HashMap;

use crate::error::{BadRequestCode, DecodeError};
use crate::group::{decode_buckets, encode_buckets, Bucket};
use crate::header::HEADER_LEN;
use crate::instruction::{decode_instructions, encode_instructions, Instruction};
use crate::meter::{decode_bands, encode_bands, MeterBand};
use crate::oxm::Match;
use crate::port::{Port, PORT_LEN};
use crate::table_features::TableFeatures;
use crate::wire::{get_fixed_str, put_fixed_str, Reader, Writer};

/// OFPMP_* multipart types.
pub mod mp_type {
    pub const DESC: u16 = 0;
    pub const FLOW: u16 = 1;
    pub const AGGREGATE: u16 = 2;
    pub const TABLE: u16 = 3;
    pub const PORT_STATS: u16 = 4;
    pub const QUEUE: u16 = 5;
    pub const GROUP: u16 = 6;
    pub const GROUP_DESC: u16 = 7;
    pub const GROUP_FEATURES: u16 = 8;
    pub const METER: u16 = 9;
    pub const METER_CONFIG: u16 = 10;
    pub const METER_FEATURES: u16 = 11;
    pub const TABLE_FEATURES: u16 = 12;
    pub const PORT_DESC: u16 = 13;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// `OFPMPF_REQ_MORE`: more request parts follow.
pub const OFPMPF_REQ_MORE: u16 = 1;
/// `OFPMPF_REPLY_MORE`: more reply parts follow.
pub const OFPMPF_REPLY_MORE: u16 = 1;

/// Size of the multipart header after `ofp_header` (type, flags, pad).
pub const MULTIPART_HEADER_LEN: usize = 8;
/// Largest OpenFlow message (the header's length field is a u16).
pub const MAX_MESSAGE_LEN: usize = 65535;

/// `DESC_STR_LEN`: size of the description strings of `ofp_desc`.
pub const DESC_STR_LEN: usize = 256;
/// `SERIAL_NUM_LEN`.
pub const SERIAL_NUM_LEN: usize = 32;
/// Size of the fixed part of `ofp_flow_stats` (before the match).
pub const FLOW_STATS_LEN: usize = 48;
/// Size of the fixed part of `ofp_flow_stats_request` (before the match).
pub const FLOW_STATS_REQUEST_LEN: usize = 32;
pub const TABLE_STATS_LEN: usize = 24;
pub const PORT_STATS_LEN: usize = 112;
pub const QUEUE_STATS_LEN: usize = 40;
/// Size of `ofp_group_stats` without bucket counters.
pub const GROUP_STATS_LEN: usize = 40;
pub const BUCKET_COUNTER_LEN: usize = 16;
/// Size of `ofp_group_desc` without buckets.
pub const GROUP_DESC_LEN: usize = 8;
/// Size of `ofp_meter_stats` without band stats.
pub const METER_STATS_LEN: usize = 40;
pub const METER_BAND_STATS_LEN: usize = 16;
/// Size of `ofp_meter_config` without bands.
pub const METER_CONFIG_LEN: usize = 8;

fn bad_len(what: &'static str) -> DecodeError {
    DecodeError::bad_len(what)
}

fn bad_multipart(what: &'static str) -> DecodeError {
    DecodeError::bad_request(BadRequestCode::BadMultipart, what)
}

/// A list record of a multipart body: decodes itself from the front of a
/// reader and encodes itself. Lets list bodies share one decoder, one
/// encoder and one splitter.
trait Record: Sized {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError>;
    fn encode_record(&self, w: &mut Vec<u8>);
}

/// Decode records until `r` is exhausted.
fn decode_list<T: Record>(r: &mut Reader<'_>) -> Result<Vec<T>, DecodeError> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(T::decode_record(r)?);
    }
    Ok(v)
}

fn encode_list<T: Record>(items: &[T], w: &mut Vec<u8>) {
    for it in items {
        it.encode_record(w);
    }
}

/// For records that start with their own u16 length at `off`: check it is at
/// least `min` and fits the input, and return a reader over exactly the
/// record.
fn record<'a>(
    r: &mut Reader<'a>,
    off: usize,
    min: usize,
    what: &'static str,
) -> Result<Reader<'a>, DecodeError> {
    if r.remaining() < min {
        return Err(bad_len(what));
    }
    let len = r.peek_u16_at(off, what)? as usize;
    if len < min || len > r.remaining() {
        return Err(bad_len(what));
    }
    r.sub(len, what)
}

/// Patch a u16 length at `pos` with the bytes written since `start`.
fn patch_len(w: &mut Vec<u8>, pos: usize, start: usize) {
    let len = w.len() - start;
    w.patch_u16(pos, len as u16);
}

// ---------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------

/// `ofp_flow_stats_request` and `ofp_aggregate_stats_request` (same layout):
/// which flow entries to report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowStatsRequest {
    /// A table id, or 0xff (OFPTT_ALL) for all tables.
    pub table_id: u8,
    /// Only entries with an output to this port (OFPP_ANY: no restriction).
    pub out_port: u32,
    /// Only entries with an output to this group (OFPG_ANY: no restriction).
    pub out_group: u32,
    pub cookie: u64,
    /// Bits of `cookie` that must match (0: no restriction).
    pub cookie_mask: u64,
    pub match_: Match,
}

impl FlowStatsRequest {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let table_id = r.u8("flow stats request: table_id")?;
        r.pad(3)?;
        let out_port = r.u32("flow stats request: out_port")?;
        let out_group = r.u32("flow stats request: out_group")?;
        r.pad(4)?;
        let cookie = r.u64("flow stats request: cookie")?;
        let cookie_mask = r.u64("flow stats request: cookie_mask")?;
        let match_ = Match::decode(r)?;
        Ok(FlowStatsRequest {
            table_id,
            out_port,
            out_group,
            cookie,
            cookie_mask,
            match_,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.table_id);
        w.put_zeros(3);
        w.put_u32(self.out_port);
        w.put_u32(self.out_group);
        w.put_zeros(4);
        w.put_u64(self.cookie);
        w.put_u64(self.cookie_mask);
        self.match_.encode(w);
    }
}

/// `ofp_experimenter_multipart_header` and the experimenter-defined data
/// after it (same shape in requests and replies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExperimenterMultipart {
    pub experimenter: u32,
    pub exp_type: u32,
    pub data: Vec<u8>,
}

impl ExperimenterMultipart {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(ExperimenterMultipart {
            experimenter: r.u32("multipart experimenter: experimenter")?,
            exp_type: r.u32("multipart experimenter: exp_type")?,
            data: r.rest().to_vec(),
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.experimenter);
        w.put_u32(self.exp_type);
        w.put_bytes(&self.data);
    }
}

/// The typed body of a multipart request, one variant per OFPMP_* type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartRequestBody {
    /// OFPMP_DESC: empty body.
    Desc,
    /// OFPMP_FLOW.
    Flow(FlowStatsRequest),
    /// OFPMP_AGGREGATE.
    Aggregate(FlowStatsRequest),
    /// OFPMP_TABLE: empty body.
    Table,
    /// OFPMP_PORT_STATS (`port_no` may be OFPP_ANY).
    PortStats { port_no: u32 },
    /// OFPMP_QUEUE (`port_no` may be OFPP_ANY, `queue_id` OFPQ_ALL).
    Queue { port_no: u32, queue_id: u32 },
    /// OFPMP_GROUP (`group_id` may be OFPG_ALL).
    Group { group_id: u32 },
    /// OFPMP_GROUP_DESC: empty body.
    GroupDesc,
    /// OFPMP_GROUP_FEATURES: empty body.
    GroupFeatures,
    /// OFPMP_METER (`meter_id` may be OFPM_ALL).
    Meter { meter_id: u32 },
    /// OFPMP_METER_CONFIG (`meter_id` may be OFPM_ALL).
    MeterConfig { meter_id: u32 },
    /// OFPMP_METER_FEATURES: empty body.
    MeterFeatures,
    /// OFPMP_TABLE_FEATURES: empty (query) or the tables to configure.
    TableFeatures(Vec<TableFeatures>),
    /// OFPMP_PORT_DESC: empty body.
    PortDesc,
    /// OFPMP_EXPERIMENTER.
    Experimenter(ExperimenterMultipart),
}

impl MultipartRequestBody {
    /// The OFPMP_* type.
    pub fn mp_type(&self) -> u16 {
        use mp_type as t;
        use MultipartRequestBody as B;
        match self {
            B::Desc => t::DESC,
            B::Flow(_) => t::FLOW,
            B::Aggregate(_) => t::AGGREGATE,
            B::Table => t::TABLE,
            B::PortStats { .. } => t::PORT_STATS,
            B::Queue { .. } => t::QUEUE,
            B::Group { .. } => t::GROUP,
            B::GroupDesc => t::GROUP_DESC,
            B::GroupFeatures => t::GROUP_FEATURES,
            B::Meter { .. } => t::METER,
            B::MeterConfig { .. } => t::METER_CONFIG,
            B::MeterFeatures => t::METER_FEATURES,
            B::TableFeatures(_) => t::TABLE_FEATURES,
            B::PortDesc => t::PORT_DESC,
            B::Experimenter(_) => t::EXPERIMENTER,
        }
    }

    /// Decode the body of type `typ` from all of `r`.
    fn decode(typ: u16, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use mp_type as t;
        use MultipartRequestBody as B;
        let body = match typ {
            t::DESC => B::Desc,
            t::FLOW => B::Flow(FlowStatsRequest::decode(r)?),
            t::AGGREGATE => B::Aggregate(FlowStatsRequest::decode(r)?),
            t::TABLE => B::Table,
            t::PORT_STATS => {
                let port_no = r.u32("port stats request: port_no")?;
                r.pad(4)?;
                B::PortStats { port_no }
            }
            t::QUEUE => B::Queue {
                port_no: r.u32("queue stats request: port_no")?,
                queue_id: r.u32("queue stats request: queue_id")?,
            },
            t::GROUP => {
                let group_id = r.u32("group stats request: group_id")?;
                r.pad(4)?;
                B::Group { group_id }
            }
            t::GROUP_DESC => B::GroupDesc,
            t::GROUP_FEATURES => B::GroupFeatures,
            t::METER | t::METER_CONFIG => {
                let meter_id = r.u32("meter multipart request: meter_id")?;
                r.pad(4)?;
                if typ == t::METER {
                    B::Meter { meter_id }
                } else {
                    B::MeterConfig { meter_id }
                }
            }
            t::METER_FEATURES => B::MeterFeatures,
            t::TABLE_FEATURES => B::TableFeatures(decode_list(r)?),
            t::PORT_DESC => B::PortDesc,
            t::EXPERIMENTER => B::Experimenter(ExperimenterMultipart::decode(r)?),
            _ => return Err(bad_multipart("multipart request: unknown type")),
        };
        r.finish("multipart request: body longer than its type")?;
        Ok(body)
    }

    fn encode(&self, w: &mut Vec<u8>) {
        use MultipartRequestBody as B;
        match self {
            B::Desc
            | B::Table
            | B::GroupDesc
            | B::GroupFeatures
            | B::MeterFeatures
            | B::PortDesc => {}
            B::Flow(f) | B::Aggregate(f) => f.encode(w),
            B::PortStats { port_no } => {
                w.put_u32(*port_no);
                w.put_zeros(4);
            }
            B::Queue { port_no, queue_id } => {
                w.put_u32(*port_no);
                w.put_u32(*queue_id);
            }
            B::Group { group_id: id }
            | B::Meter { meter_id: id }
            | B::MeterConfig { meter_id: id } => {
                w.put_u32(*id);
                w.put_zeros(4);
            }
            B::TableFeatures(t) => encode_list(t, w),
            B::Experimenter(e) => e.encode(w),
        }
    }
}

/// A multipart message body (everything after `ofp_header`): the common
/// header (`type`, `flags`, 4 pad bytes) and a typed body. Requests and
/// replies share this layout; [`MultipartRequest`] and [`MultipartReply`] name
/// the two instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipart<B> {
    /// OFPMPF_REQ_MORE / OFPMPF_REPLY_MORE and unknown bits, kept raw.
    pub flags: u16,
    pub body: B,
}

/// OFPT_MULTIPART_REQUEST body.
pub type MultipartRequest = Multipart<MultipartRequestBody>;
/// OFPT_MULTIPART_REPLY body.
pub type MultipartReply = Multipart<MultipartReplyBody>;

/// What [`Multipart`] needs of a body type: its OFPMP_* number and codec.
pub trait MultipartBody: Sized {
    /// Context strings for decode errors.
    const WHAT_TYPE: &'static str;
    const WHAT_FLAGS: &'static str;
    fn mp_type(&self) -> u16;
    fn decode_typed(typ: u16, r: &mut Reader<'_>) -> Result<Self, DecodeError>;
    fn encode_body(&self, w: &mut Vec<u8>);
}

impl MultipartBody for MultipartRequestBody {
    const WHAT_TYPE: &'static str = "multipart request: type";
    const WHAT_FLAGS: &'static str = "multipart request: flags";
    fn mp_type(&self) -> u16 {
        MultipartRequestBody::mp_type(self)
    }
    fn decode_typed(typ: u16, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        MultipartRequestBody::decode(typ, r)
    }
    fn encode_body(&self, w: &mut Vec<u8>) {
        self.encode(w)
    }
}

impl MultipartBody for MultipartReplyBody {
    const WHAT_TYPE: &'static str = "multipart reply: type";
    const WHAT_FLAGS: &'static str = "multipart reply: flags";
    fn mp_type(&self) -> u16 {
        MultipartReplyBody::mp_type(self)
    }
    fn decode_typed(typ: u16, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        MultipartReplyBody::decode(typ, r)
    }
    fn encode_body(&self, w: &mut Vec<u8>) {
        self.encode(w)
    }
}

impl<B: MultipartBody> Multipart<B> {
    /// A message with no flags.
    pub fn new(body: B) -> Self {
        Multipart { flags: 0, body }
    }

    /// True if more parts follow (REQ_MORE and REPLY_MORE are both bit 0).
    pub fn more(&self) -> bool {
        self.flags & OFPMPF_REQ_MORE != 0
    }

    /// Decode from the bytes after `ofp_header` (all remaining bytes of `r`).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = Reader::message(r.rest());
        let typ = r.u16(B::WHAT_TYPE)?;
        let flags = r.u16(B::WHAT_FLAGS)?;
        r.pad(4)?;
        let body = B::decode_typed(typ, &mut r)?;
        Ok(Multipart { flags, body })
    }

    /// Encode the bytes after `ofp_header`.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u16(self.body.mp_type());
        w.put_u16(self.flags);
        w.put_zeros(4);
        self.body.encode_body(w);
    }
}

// ---------------------------------------------------------------------------
// Reply records
// ---------------------------------------------------------------------------

/// `ofp_desc`: the switch's description strings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Desc {
    /// Manufacturer (at most 255 bytes on the wire).
    pub mfr_desc: String,
    /// Hardware description.
    pub hw_desc: String,
    /// Software description.
    pub sw_desc: String,
    /// Serial number (at most 31 bytes).
    pub serial_num: String,
    /// Human-readable datapath description.
    pub dp_desc: String,
}

impl Desc {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(Desc {
            mfr_desc: get_fixed_str(r, DESC_STR_LEN, "desc: mfr_desc")?,
            hw_desc: get_fixed_str(r, DESC_STR_LEN, "desc: hw_desc")?,
            sw_desc: get_fixed_str(r, DESC_STR_LEN, "desc: sw_desc")?,
            serial_num: get_fixed_str(r, SERIAL_NUM_LEN, "desc: serial_num")?,
            dp_desc: get_fixed_str(r, DESC_STR_LEN, "desc: dp_desc")?,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        put_fixed_str(w, &self.mfr_desc, DESC_STR_LEN);
        put_fixed_str(w, &self.hw_desc, DESC_STR_LEN);
        put_fixed_str(w, &self.sw_desc, DESC_STR_LEN);
        put_fixed_str(w, &self.serial_num, SERIAL_NUM_LEN);
        put_fixed_str(w, &self.dp_desc, DESC_STR_LEN);
    }
}

/// `ofp_flow_stats`: one flow entry and its counters.
///
/// Layout: `length u16 | table_id u8 | pad | duration_sec u32 | duration_nsec
/// u32 | priority u16 | idle_timeout u16 | hard_timeout u16 | flags u16 |
/// pad[4] | cookie u64 | packet_count u64 | byte_count u64 | match |
/// instructions`, where `length` covers the whole record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowStats {
    pub table_id: u8,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// OFPFF_* flags.
    pub flags: u16,
    pub cookie: u64,
    pub packet_count: u64,
    pub byte_count: u64,
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl Record for FlowStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        // The record must hold at least the fixed part and an empty match.
        let mut r = record(r, 0, FLOW_STATS_LEN + 8, "flow stats: length")?;
        r.pad(2)?;
        let table_id = r.u8("flow stats: table_id")?;
        r.pad(1)?;
        let duration_sec = r.u32("flow stats: duration_sec")?;
        let duration_nsec = r.u32("flow stats: duration_nsec")?;
        let priority = r.u16("flow stats: priority")?;
        let idle_timeout = r.u16("flow stats: idle_timeout")?;
        let hard_timeout = r.u16("flow stats: hard_timeout")?;
        let flags = r.u16("flow stats: flags")?;
        r.pad(4)?;
        let cookie = r.u64("flow stats: cookie")?;
        let packet_count = r.u64("flow stats: packet_count")?;
        let byte_count = r.u64("flow stats: byte_count")?;
        let match_ = Match::decode(&mut r)?;
        let instructions = decode_instructions(&mut r)?;
        Ok(FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            flags,
            cookie,
            packet_count,
            byte_count,
            match_,
            instructions,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_u8(self.table_id);
        w.put_zeros(1);
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
        w.put_u16(self.priority);
        w.put_u16(self.idle_timeout);
        w.put_u16(self.hard_timeout);
        w.put_u16(self.flags);
        w.put_zeros(4);
        w.put_u64(self.cookie);
        w.put_u64(self.packet_count);
        w.put_u64(self.byte_count);
        self.match_.encode(w);
        encode_instructions(&self.instructions, w);
        patch_len(w, start, start);
    }
}

/// `ofp_aggregate_stats_reply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AggregateStats {
    pub packet_count: u64,
    pub byte_count: u64,
    pub flow_count: u32,
}

impl AggregateStats {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let s = AggregateStats {
            packet_count: r.u64("aggregate stats: packet_count")?,
            byte_count: r.u64("aggregate stats: byte_count")?,
            flow_count: r.u32("aggregate stats: flow_count")?,
        };
        r.pad(4)?;
        Ok(s)
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u64(self.packet_count);
        w.put_u64(self.byte_count);
        w.put_u32(self.flow_count);
        w.put_zeros(4);
    }
}

/// `ofp_table_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TableStats {
    pub table_id: u8,
    pub active_count: u32,
    pub lookup_count: u64,
    pub matched_count: u64,
}

impl Record for TableStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let table_id = r.u8("table stats: table_id")?;
        r.pad(3)?;
        Ok(TableStats {
            table_id,
            active_count: r.u32("table stats: active_count")?,
            lookup_count: r.u64("table stats: lookup_count")?,
            matched_count: r.u64("table stats: matched_count")?,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        w.put_u8(self.table_id);
        w.put_zeros(3);
        w.put_u32(self.active_count);
        w.put_u64(self.lookup_count);
        w.put_u64(self.matched_count);
    }
}

/// `ofp_port_stats` (112 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortStats {
    pub port_no: u32,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_frame_err: u64,
    pub rx_over_err: u64,
    pub rx_crc_err: u64,
    pub collisions: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl Record for PortStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let port_no = r.u32("port stats: port_no")?;
        r.pad(4)?;
        // Struct literal fields are evaluated in source order: wire order.
        Ok(PortStats {
            port_no,
            rx_packets: r.u64("port stats: rx_packets")?,
            tx_packets: r.u64("port stats: tx_packets")?,
            rx_bytes: r.u64("port stats: rx_bytes")?,
            tx_bytes: r.u64("port stats: tx_bytes")?,
            rx_dropped: r.u64("port stats: rx_dropped")?,
            tx_dropped: r.u64("port stats: tx_dropped")?,
            rx_errors: r.u64("port stats: rx_errors")?,
            tx_errors: r.u64("port stats: tx_errors")?,
            rx_frame_err: r.u64("port stats: rx_frame_err")?,
            rx_over_err: r.u64("port stats: rx_over_err")?,
            rx_crc_err: r.u64("port stats: rx_crc_err")?,
            collisions: r.u64("port stats: collisions")?,
            duration_sec: r.u32("port stats: duration_sec")?,
            duration_nsec: r.u32("port stats: duration_nsec")?,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port_no);
        w.put_zeros(4);
        for v in [
            self.rx_packets,
            self.tx_packets,
            self.rx_bytes,
            self.tx_bytes,
            self.rx_dropped,
            self.tx_dropped,
            self.rx_errors,
            self.tx_errors,
            self.rx_frame_err,
            self.rx_over_err,
            self.rx_crc_err,
            self.collisions,
        ] {
            w.put_u64(v);
        }
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
    }
}

/// `ofp_queue_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    pub port_no: u32,
    pub queue_id: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
}

impl Record for QueueStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(QueueStats {
            port_no: r.u32("queue stats: port_no")?,
            queue_id: r.u32("queue stats: queue_id")?,
            tx_bytes: r.u64("queue stats: tx_bytes")?,
            tx_packets: r.u64("queue stats: tx_packets")?,
            tx_errors: r.u64("queue stats: tx_errors")?,
            duration_sec: r.u32("queue stats: duration_sec")?,
            duration_nsec: r.u32("queue stats: duration_nsec")?,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port_no);
        w.put_u32(self.queue_id);
        w.put_u64(self.tx_bytes);
        w.put_u64(self.tx_packets);
        w.put_u64(self.tx_errors);
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
    }
}

/// `ofp_bucket_counter`: per-bucket counters of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BucketCounter {
    pub packet_count: u64,
    pub byte_count: u64,
}

/// `ofp_group_stats`: `length u16 | pad[2] | group_id | ref_count | pad[4] |
/// packet_count u64 | byte_count u64 | duration_sec | duration_nsec |
/// bucket_stats[]`, `length` covering the record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupStats {
    pub group_id: u32,
    /// Number of flow entries or groups that forward to this group.
    pub ref_count: u32,
    pub packet_count: u64,
    pub byte_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub bucket_stats: Vec<BucketCounter>,
}

impl Record for GroupStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = record(r, 0, GROUP_STATS_LEN, "group stats: length")?;
        if !(r.remaining() - GROUP_STATS_LEN).is_multiple_of(BUCKET_COUNTER_LEN) {
            return Err(bad_len("group stats: bucket counters"));
        }
        r.pad(4)?;
        let group_id = r.u32("group stats: group_id")?;
        let ref_count = r.u32("group stats: ref_count")?;
        r.pad(4)?;
        let packet_count = r.u64("group stats: packet_count")?;
        let byte_count = r.u64("group stats: byte_count")?;
        let duration_sec = r.u32("group stats: duration_sec")?;
        let duration_nsec = r.u32("group stats: duration_nsec")?;
        let mut bucket_stats = Vec::new();
        while !r.is_empty() {
            bucket_stats.push(BucketCounter {
                packet_count: r.u64("bucket counter: packet_count")?,
                byte_count: r.u64("bucket counter: byte_count")?,
            });
        }
        Ok(GroupStats {
            group_id,
            ref_count,
            packet_count,
            byte_count,
            duration_sec,
            duration_nsec,
            bucket_stats,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_zeros(2);
        w.put_u32(self.group_id);
        w.put_u32(self.ref_count);
        w.put_zeros(4);
        w.put_u64(self.packet_count);
        w.put_u64(self.byte_count);
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
        for b in &self.bucket_stats {
            w.put_u64(b.packet_count);
            w.put_u64(b.byte_count);
        }
        patch_len(w, start, start);
    }
}

/// `ofp_group_desc`: `length u16 | type u8 | pad | group_id | buckets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDesc {
    /// OFPGT_* (see [`crate::group::group_type`]).
    pub group_type: u8,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}

impl Record for GroupDesc {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = record(r, 0, GROUP_DESC_LEN, "group desc: length")?;
        r.pad(2)?;
        let group_type = r.u8("group desc: type")?;
        r.pad(1)?;
        let group_id = r.u32("group desc: group_id")?;
        let buckets = decode_buckets(&mut r)?;
        Ok(GroupDesc {
            group_type,
            group_id,
            buckets,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_u8(self.group_type);
        w.put_zeros(1);
        w.put_u32(self.group_id);
        encode_buckets(&self.buckets, w);
        patch_len(w, start, start);
    }
}

/// `ofp_group_features`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupFeatures {
    /// Bitmap of supported OFPGT_* (1 << type).
    pub types: u32,
    /// OFPGFC_* bits.
    pub capabilities: u32,
    /// Maximum number of groups, per group type.
    pub max_groups: [u32; 4],
    /// Bitmap of supported OFPAT_* (1 << type), per group type.
    pub actions: [u32; 4],
}

impl GroupFeatures {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let types = r.u32("group features: types")?;
        let capabilities = r.u32("group features: capabilities")?;
        let mut max_groups = [0u32; 4];
        for v in max_groups.iter_mut() {
            *v = r.u32("group features: max_groups")?;
        }
        let mut actions = [0u32; 4];
        for v in actions.iter_mut() {
            *v = r.u32("group features: actions")?;
        }
        Ok(GroupFeatures {
            types,
            capabilities,
            max_groups,
            actions,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.types);
        w.put_u32(self.capabilities);
        self.max_groups.iter().for_each(|v| w.put_u32(*v));
        self.actions.iter().for_each(|v| w.put_u32(*v));
    }
}

/// `ofp_meter_band_stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterBandStats {
    pub packet_band_count: u64,
    pub byte_band_count: u64,
}

/// `ofp_meter_stats`: `meter_id | len u16 | pad[6] | flow_count |
/// packet_in_count u64 | byte_in_count u64 | duration_sec | duration_nsec |
/// band_stats[]`, `len` covering the record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeterStats {
    pub meter_id: u32,
    pub flow_count: u32,
    pub packet_in_count: u64,
    pub byte_in_count: u64,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub band_stats: Vec<MeterBandStats>,
}

impl Record for MeterStats {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = record(r, 4, METER_STATS_LEN, "meter stats: len")?;
        if !(r.remaining() - METER_STATS_LEN).is_multiple_of(METER_BAND_STATS_LEN) {
            return Err(bad_len("meter stats: band stats"));
        }
        let meter_id = r.u32("meter stats: meter_id")?;
        r.pad(2 + 6)?;
        let flow_count = r.u32("meter stats: flow_count")?;
        let packet_in_count = r.u64("meter stats: packet_in_count")?;
        let byte_in_count = r.u64("meter stats: byte_in_count")?;
        let duration_sec = r.u32("meter stats: duration_sec")?;
        let duration_nsec = r.u32("meter stats: duration_nsec")?;
        let mut band_stats = Vec::new();
        while !r.is_empty() {
            band_stats.push(MeterBandStats {
                packet_band_count: r.u64("meter band stats: packet_band_count")?,
                byte_band_count: r.u64("meter band stats: byte_band_count")?,
            });
        }
        Ok(MeterStats {
            meter_id,
            flow_count,
            packet_in_count,
            byte_in_count,
            duration_sec,
            duration_nsec,
            band_stats,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u32(self.meter_id);
        w.put_u16(0);
        w.put_zeros(6);
        w.put_u32(self.flow_count);
        w.put_u64(self.packet_in_count);
        w.put_u64(self.byte_in_count);
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
        for b in &self.band_stats {
            w.put_u64(b.packet_band_count);
            w.put_u64(b.byte_band_count);
        }
        patch_len(w, start + 4, start);
    }
}

/// `ofp_meter_config`: `length u16 | flags u16 | meter_id | bands`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterConfig {
    /// OFPMF_* (see [`crate::meter::flags`]).
    pub flags: u16,
    pub meter_id: u32,
    pub bands: Vec<MeterBand>,
}

impl Record for MeterConfig {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = record(r, 0, METER_CONFIG_LEN, "meter config: length")?;
        r.pad(2)?;
        let flags = r.u16("meter config: flags")?;
        let meter_id = r.u32("meter config: meter_id")?;
        let bands = decode_bands(&mut r)?;
        Ok(MeterConfig {
            flags,
            meter_id,
            bands,
        })
    }

    fn encode_record(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_u16(self.flags);
        w.put_u32(self.meter_id);
        encode_bands(&self.bands, w);
        patch_len(w, start, start);
    }
}

/// `ofp_meter_features`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeterFeatures {
    /// Maximum number of meters.
    pub max_meter: u32,
    /// Bitmap of supported OFPMBT_* (1 << type).
    pub band_types: u32,
    /// OFPMF_* bits.
    pub capabilities: u32,
    /// Maximum bands per meter.
    pub max_bands: u8,
    /// Maximum color value.
    pub max_color: u8,
}

impl MeterFeatures {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let f = MeterFeatures {
            max_meter: r.u32("meter features: max_meter")?,
            band_types: r.u32("meter features: band_types")?,
            capabilities: r.u32("meter features: capabilities")?,
            max_bands: r.u8("meter features: max_bands")?,
            max_color: r.u8("meter features: max_color")?,
        };
        r.pad(2)?;
        Ok(f)
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.max_meter);
        w.put_u32(self.band_types);
        w.put_u32(self.capabilities);
        w.put_u8(self.max_bands);
        w.put_u8(self.max_color);
        w.put_zeros(2);
    }
}

impl Record for Port {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut r = r.sub(PORT_LEN, "port desc: port")?;
        Port::decode(&mut r)
    }
    fn encode_record(&self, w: &mut Vec<u8>) {
        self.encode(w)
    }
}

impl Record for TableFeatures {
    fn decode_record(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        TableFeatures::decode(r)
    }
    fn encode_record(&self, w: &mut Vec<u8>) {
        self.encode(w)
    }
}

/// Public decode/encode for the list records (the `Record` trait is private).
macro_rules! record_api {
    ($($t:ty),+) => {$(
        impl $t {
            /// Decode one record from the front of `r`.
            pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                Self::decode_record(r)
            }
            pub fn encode(&self, w: &mut Vec<u8>) {
                self.encode_record(w)
            }
        }
    )+};
}
record_api!(
    FlowStats,
    TableStats,
    PortStats,
    QueueStats,
    GroupStats,
    GroupDesc,
    MeterStats,
    MeterConfig
);

// ---------------------------------------------------------------------------
// Reply
// ---------------------------------------------------------------------------

/// The typed body of a multipart reply, one variant per OFPMP_* type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultipartReplyBody {
    Desc(Desc),
    Flow(Vec<FlowStats>),
    Aggregate(AggregateStats),
    Table(Vec<TableStats>),
    PortStats(Vec<PortStats>),
    Queue(Vec<QueueStats>),
    Group(Vec<GroupStats>),
    GroupDesc(Vec<GroupDesc>),
    GroupFeatures(GroupFeatures),
    Meter(Vec<MeterStats>),
    MeterConfig(Vec<MeterConfig>),
    MeterFeatures(MeterFeatures),
    TableFeatures(Vec<TableFeatures>),
    PortDesc(Vec<Port>),
    Experimenter(ExperimenterMultipart),
}

impl MultipartReplyBody {
    /// The OFPMP_* type.
    pub fn mp_type(&self) -> u16 {
        use mp_type as t;
        use MultipartReplyBody as B;
        match self {
            B::Desc(_) => t::DESC,
            B::Flow(_) => t::FLOW,
            B::Aggregate(_) => t::AGGREGATE,
            B::Table(_) => t::TABLE,
            B::PortStats(_) => t::PORT_STATS,
            B::Queue(_) => t::QUEUE,
            B::Group(_) => t::GROUP,
            B::GroupDesc(_) => t::GROUP_DESC,
            B::GroupFeatures(_) => t::GROUP_FEATURES,
            B::Meter(_) => t::METER,
            B::MeterConfig(_) => t::METER_CONFIG,
            B::MeterFeatures(_) => t::METER_FEATURES,
            B::TableFeatures(_) => t::TABLE_FEATURES,
            B::PortDesc(_) => t::PORT_DESC,
            B::Experimenter(_) => t::EXPERIMENTER,
        }
    }

    fn decode(typ: u16, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use mp_type as t;
        use MultipartReplyBody as B;
        let body = match typ {
            t::DESC => B::Desc(Desc::decode(r)?),
            t::FLOW => B::Flow(decode_list(r)?),
            t::AGGREGATE => B::Aggregate(AggregateStats::decode(r)?),
            t::TABLE => B::Table(decode_list(r)?),
            t::PORT_STATS => B::PortStats(decode_list(r)?),
            t::QUEUE => B::Queue(decode_list(r)?),
            t::GROUP => B::Group(decode_list(r)?),
            t::GROUP_DESC => B::GroupDesc(decode_list(r)?),
            t::GROUP_FEATURES => B::GroupFeatures(GroupFeatures::decode(r)?),
            t::METER => B::Meter(decode_list(r)?),
            t::METER_CONFIG => B::MeterConfig(decode_list(r)?),
            t::METER_FEATURES => B::MeterFeatures(MeterFeatures::decode(r)?),
            t::TABLE_FEATURES => B::TableFeatures(decode_list(r)?),
            t::PORT_DESC => B::PortDesc(decode_list(r)?),
            t::EXPERIMENTER => B::Experimenter(ExperimenterMultipart::decode(r)?),
            _ => return Err(bad_multipart("multipart reply: unknown type")),
        };
        r.finish("multipart reply: body longer than its type")?;
        Ok(body)
    }

    fn encode(&self, w: &mut Vec<u8>) {
        use MultipartReplyBody as B;
        match self {
            B::Desc(d) => d.encode(w),
            B::Flow(v) => encode_list(v, w),
            B::Aggregate(a) => a.encode(w),
            B::Table(v) => encode_list(v, w),
            B::PortStats(v) => encode_list(v, w),
            B::Queue(v) => encode_list(v, w),
            B::Group(v) => encode_list(v, w),
            B::GroupDesc(v) => encode_list(v, w),
            B::GroupFeatures(g) => g.encode(w),
            B::Meter(v) => encode_list(v, w),
            B::MeterConfig(v) => encode_list(v, w),
            B::MeterFeatures(m) => m.encode(w),
            B::TableFeatures(v) => encode_list(v, w),
            B::PortDesc(v) => encode_list(v, w),
            B::Experimenter(e) => e.encode(w),
        }
    }
}

// ---------------------------------------------------------------------------
// Reassembly
// ---------------------------------------------------------------------------

/// A multipart request or reply, as the reassembler sees it.
pub trait MultipartPart: Sized {
    /// The OFPMP_* type.
    fn mp_type(&self) -> u16;
    /// True if the MORE flag is set.
    fn more(&self) -> bool;
    /// Clear the MORE flag (on the merged message).
    fn clear_more(&mut self);
    /// True if this type's body is a list that may span several messages.
    fn is_list(&self) -> bool;
    /// Append the records of `next` (same type, checked by the caller).
    /// Fails with BAD_REQUEST/BAD_MULTIPART if the bodies cannot be merged.
    fn append(&mut self, next: Self) -> Result<(), DecodeError>;
    /// Length of the whole message on the wire, `ofp_header` included.
    fn wire_len(&self) -> usize;
}

impl MultipartPart for MultipartRequest {
    fn mp_type(&self) -> u16 {
        self.body.mp_type()
    }
    fn more(&self) -> bool {
        Multipart::more(self)
    }
    fn clear_more(&mut self) {
        self.flags &= !OFPMPF_REQ_MORE;
    }
    fn is_list(&self) -> bool {
        matches!(
            self.body,
            MultipartRequestBody::TableFeatures(_) | MultipartRequestBody::Experimenter(_)
        )
    }
    fn append(&mut self, next: Self) -> Result<(), DecodeError> {
        use MultipartRequestBody as B;
        match (&mut self.body, next.body) {
            (B::TableFeatures(a), B::TableFeatures(b)) => a.extend(b),
            (B::Experimenter(a), B::Experimenter(b)) => append_experimenter(a, b)?,
            _ => return Err(bad_multipart("multipart request: parts cannot be merged")),
        }
        Ok(())
    }
    fn wire_len(&self) -> usize {
        let mut w = Vec::new();
        self.encode(&mut w);
        HEADER_LEN + w.len()
    }
}

impl MultipartPart for MultipartReply {
    fn mp_type(&self) -> u16 {
        self.body.mp_type()
    }
    fn more(&self) -> bool {
        Multipart::more(self)
    }
    fn clear_more(&mut self) {
        self.flags &= !OFPMPF_REPLY_MORE;
    }
    fn is_list(&self) -> bool {
        use MultipartReplyBody as B;
        !matches!(
            self.body,
            B::Desc(_) | B::Aggregate(_) | B::GroupFeatures(_) | B::MeterFeatures(_)
        )
    }
    fn append(&mut self, next: Self) -> Result<(), DecodeError> {
        use MultipartReplyBody as B;
        match (&mut self.body, next.body) {
            (B::Flow(a), B::Flow(b)) => a.extend(b),
            (B::Table(a), B::Table(b)) => a.extend(b),
            (B::PortStats(a), B::PortStats(b)) => a.extend(b),
            (B::Queue(a), B::Queue(b)) => a.extend(b),
            (B::Group(a), B::Group(b)) => a.extend(b),
            (B::GroupDesc(a), B::GroupDesc(b)) => a.extend(b),
            (B::Meter(a), B::Meter(b)) => a.extend(b),
            (B::MeterConfig(a), B::MeterConfig(b)) => a.extend(b),
            (B::TableFeatures(a), B::TableFeatures(b)) => a.extend(b),
            (B::PortDesc(a), B::PortDesc(b)) => a.extend(b),
            (B::Experimenter(a), B::Experimenter(b)) => append_experimenter(a, b)?,
            _ => return Err(bad_multipart("multipart reply: parts cannot be merged")),
        }
        Ok(())
    }
    fn wire_len(&self) -> usize {
        let mut w = Vec::new();
        self.encode(&mut w);
        HEADER_LEN + w.len()
    }
}

/// Experimenter parts concatenate their data if they agree on experimenter
/// and exp_type.
fn append_experimenter(
    a: &mut ExperimenterMultipart,
    b: ExperimenterMultipart,
) -> Result<(), DecodeError> {
    if a.experimenter != b.experimenter || a.exp_type != b.exp_type {
        return Err(bad_multipart("multipart experimenter: parts disagree"));
    }
    a.data.extend(b.data);
    Ok(())
}

/// Default cap on the bytes a [`MultipartAssembler`] buffers: 1 MiB.
pub const DEFAULT_ASSEMBLY_CAP: usize = 1 << 20;

/// Reassembles multipart requests (on a switch) or replies (on a controller)
/// that span several messages.
///
/// Parts are grouped by xid. A part without MORE for an xid with nothing
/// pending is returned at once (the common case, no buffering). A part with
/// MORE starts or extends the pending message of its xid; the part without
/// MORE that ends the sequence yields the merged message, its MORE flag
/// cleared.
///
/// Memory is bounded: `cap` limits the sum of the wire lengths of all parts
/// buffered over all xids (each part counts at least its 16 header bytes, so
/// empty parts are bounded too). A part that would exceed it discards its
/// xid's pending state and fails with BAD_REQUEST/MULTIPART_BUFFER_OVERFLOW.
/// A part whose type differs from the pending one, or a MORE part of a type
/// whose body is not a list, discards the xid and fails with
/// BAD_REQUEST/BAD_MULTIPART.
#[derive(Debug)]
pub struct MultipartAssembler<T> {
    /// Pending merged message per xid, with the bytes it accounts for.
    pending: HashMap<u32, (T, usize)>,
    /// Sum of the accounted bytes of `pending`.
    buffered: usize,
    cap: usize,
}

impl<T: MultipartPart> Default for MultipartAssembler<T> {
    fn default() -> Self {
        Self::new(DEFAULT_ASSEMBLY_CAP)
    }
}

impl<T: MultipartPart> MultipartAssembler<T> {
    /// An assembler that buffers at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        MultipartAssembler {
            pending: HashMap::new(),
            buffered: 0,
            cap,
        }
    }

    /// Feed one part. Returns `Ok(Some(message))` when a message is complete,
    /// `Ok(None)` when more parts are expected.
    pub fn push(&mut self, xid: u32, part: T) -> Result<Option<T>, DecodeError> {
        let pending = self.pending.remove(&xid);
        if let Some((_, n)) = &pending {
            self.buffered -= n;
        }
        if pending.is_none() && !part.more() {
            return Ok(Some(part));
        }
        if part.more() && !part.is_list() {
            return Err(bad_multipart(
                "multipart: MORE on a type that cannot span messages",
            ));
        }
        let (mut acc, mut used) = match pending {
            None => (None, 0),
            Some((acc, n)) => (Some(acc), n),
        };
        if let Some(a) = &acc {
            if a.mp_type() != part.mp_type() {
                return Err(bad_multipart(
                    "multipart: part type differs from the first part",
                ));
            }
        }
        used += part.wire_len();
        if self.buffered + used > self.cap {
            return Err(DecodeError::bad_request(
                BadRequestCode::MultipartBufferOverflow,
                "multipart: reassembly buffer full",
            ));
        }
        let more = part.more();
        let mut merged = match acc.take() {
            None => part,
            Some(mut a) => {
                a.append(part)?;
                a
            }
        };
        if more {
            self.buffered += used;
            self.pending.insert(xid, (merged, used));
            Ok(None)
        } else {
            merged.clear_more();
            Ok(Some(merged))
        }
    }

    /// Drop the pending parts of `xid` (e.g. after the connection answered
    /// with an error).
    pub fn discard(&mut self, xid: u32) {
        if let Some((_, n)) = self.pending.remove(&xid) {
            self.buffered -= n;
        }
    }

    /// Number of xids with parts pending.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Bytes currently buffered.
    pub fn buffered(&self) -> usize {
        self.buffered
    }
}

// ---------------------------------------------------------------------------
// Splitting
// ---------------------------------------------------------------------------

/// Cut `items` into runs whose encoded size stays within `budget` bytes. A
/// record larger than the budget on its own gets a run of its own. Always
/// returns at least one (possibly empty) run.
fn chunk<T: Record>(items: Vec<T>, budget: usize) -> Vec<Vec<T>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut used = 0;
    let mut scratch = Vec::new();
    for it in items {
        scratch.clear();
        it.encode_record(&mut scratch);
        let n = scratch.len();
        if !cur.is_empty() && used + n > budget {
            out.push(std::mem::take(&mut cur));
            used = 0;
        }
        used += n;
        cur.push(it);
    }
    out.push(cur);
    out
}

/// Body bytes available in one message of at most `max_msg_len` bytes.
fn body_budget(max_msg_len: usize) -> usize {
    max_msg_len
        .min(MAX_MESSAGE_LEN)
        .saturating_sub(HEADER_LEN + MULTIPART_HEADER_LEN)
}

/// Split a reply into parts whose messages (`ofp_header` and multipart header
/// included) are at most `max_msg_len` bytes, capped at 65535. List bodies
/// are cut between records; every part but the last gets OFPMPF_REPLY_MORE,
/// the last keeps the original flags. Single-structure bodies (desc,
/// aggregate, group/meter features, experimenter) come back unchanged. A
/// single record larger than the limit travels alone in its own part.
pub fn split_reply(reply: MultipartReply, max_msg_len: usize) -> Vec<MultipartReply> {
    use MultipartReplyBody as B;
    let budget = body_budget(max_msg_len);
    let flags = reply.flags;
    let bodies: Vec<MultipartReplyBody> = match reply.body {
        B::Flow(v) => chunk(v, budget).into_iter().map(B::Flow).collect(),
        B::Table(v) => chunk(v, budget).into_iter().map(B::Table).collect(),
        B::PortStats(v) => chunk(v, budget).into_iter().map(B::PortStats).collect(),
        B::Queue(v) => chunk(v, budget).into_iter().map(B::Queue).collect(),
        B::Group(v) => chunk(v, budget).into_iter().map(B::Group).collect(),
        B::GroupDesc(v) => chunk(v, budget).into_iter().map(B::GroupDesc).collect(),
        B::Meter(v) => chunk(v, budget).into_iter().map(B::Meter).collect(),
        B::MeterConfig(v) => chunk(v, budget).into_iter().map(B::MeterConfig).collect(),
        B::TableFeatures(v) => chunk(v, budget).into_iter().map(B::TableFeatures).collect(),
        B::PortDesc(v) => chunk(v, budget).into_iter().map(B::PortDesc).collect(),
        body => vec![body],
    };
    let n = bodies.len();
    bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| MultipartReply {
            flags: if i + 1 < n {
                flags | OFPMPF_REPLY_MORE
            } else {
                flags
            },
            body,
        })
        .collect()
}

/// Split a table-features request (the only list-valued request) the same
/// way as [`split_reply`], with OFPMPF_REQ_MORE on all parts but the last.
/// Other requests come back unchanged.
pub fn split_request(request: MultipartRequest, max_msg_len: usize) -> Vec<MultipartRequest> {
    let flags = request.flags;
    match request.body {
        MultipartRequestBody::TableFeatures(v) => {
            let parts = chunk(v, body_budget(max_msg_len));
            let n = parts.len();
            parts
                .into_iter()
                .enumerate()
                .map(|(i, t)| MultipartRequest {
                    flags: if i + 1 < n {
                        flags | OFPMPF_REQ_MORE
                    } else {
                        flags
                    },
                    body: MultipartRequestBody::TableFeatures(t),
                })
                .collect()
        }
        body => vec![MultipartRequest { flags, body }],
    }
}

#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use crate::action::arb::any_action;
    use crate::instruction::arb::any_instructions;
    use crate::meter::arb::any_band;
    use crate::oxm::arb::any_match;
    use crate::table_features::arb::any_table_features;
    use proptest::collection::vec;
    use proptest::prelude::*;

    pub fn any_flow_stats_request() -> impl Strategy<Value = FlowStatsRequest> {
        (
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
            any::<u64>(),
            any::<u64>(),
            any_match(),
        )
            .prop_map(
                |(table_id, out_port, out_group, cookie, cookie_mask, match_)| FlowStatsRequest {
                    table_id,
                    out_port,
                    out_group,
                    cookie,
                    cookie_mask,
                    match_,
                },
            )
    }

    fn any_experimenter() -> impl Strategy<Value = ExperimenterMultipart> {
        (any::<u32>(), any::<u32>(), vec(any::<u8>(), 0..24)).prop_map(
            |(experimenter, exp_type, data)| ExperimenterMultipart {
                experimenter,
                exp_type,
                data,
            },
        )
    }

    pub fn any_multipart_request_body() -> impl Strategy<Value = MultipartRequestBody> {
        use MultipartRequestBody as B;
        prop_oneof![
            Just(B::Desc),
            any_flow_stats_request().prop_map(B::Flow),
            any_flow_stats_request().prop_map(B::Aggregate),
            Just(B::Table),
            any::<u32>().prop_map(|port_no| B::PortStats { port_no }),
            (any::<u32>(), any::<u32>())
                .prop_map(|(port_no, queue_id)| B::Queue { port_no, queue_id }),
            any::<u32>().prop_map(|group_id| B::Group { group_id }),
            Just(B::GroupDesc),
            Just(B::GroupFeatures),
            any::<u32>().prop_map(|meter_id| B::Meter { meter_id }),
            any::<u32>().prop_map(|meter_id| B::MeterConfig { meter_id }),
            Just(B::MeterFeatures),
            vec(any_table_features(), 0..3).prop_map(B::TableFeatures),
            Just(B::PortDesc),
            any_experimenter().prop_map(B::Experimenter),
        ]
    }

    pub fn any_multipart_request() -> impl Strategy<Value = MultipartRequest> {
        (any::<u16>(), any_multipart_request_body())
            .prop_map(|(flags, body)| MultipartRequest { flags, body })
    }

    fn any_desc() -> impl Strategy<Value = Desc> {
        let s = || "[a-zA-Z0-9 ._-]{0,40}";
        (s(), s(), s(), "[A-Z0-9]{0,31}", s()).prop_map(
            |(mfr_desc, hw_desc, sw_desc, serial_num, dp_desc)| Desc {
                mfr_desc,
                hw_desc,
                sw_desc,
                serial_num,
                dp_desc,
            },
        )
    }

    fn any_flow_stats() -> impl Strategy<Value = FlowStats> {
        (
            (any::<u8>(), any::<u32>(), any::<u32>(), any::<u16>()),
            (any::<u16>(), any::<u16>(), any::<u16>()),
            (any::<u64>(), any::<u64>(), any::<u64>()),
            any_match(),
            any_instructions(),
        )
            .prop_map(
                |(
                    (table_id, duration_sec, duration_nsec, priority),
                    (idle_timeout, hard_timeout, flags),
                    (cookie, packet_count, byte_count),
                    match_,
                    instructions,
                )| FlowStats {
                    table_id,
                    duration_sec,
                    duration_nsec,
                    priority,
                    idle_timeout,
                    hard_timeout,
                    flags,
                    cookie,
                    packet_count,
                    byte_count,
                    match_,
                    instructions,
                },
            )
    }

    fn any_table_stats() -> impl Strategy<Value = TableStats> {
        (any::<u8>(), any::<u32>(), any::<u64>(), any::<u64>()).prop_map(
            |(table_id, active_count, lookup_count, matched_count)| TableStats {
                table_id,
                active_count,
                lookup_count,
                matched_count,
            },
        )
    }

    fn any_port_stats() -> impl Strategy<Value = PortStats> {
        (any::<u32>(), any::<[u64; 12]>(), any::<u32>(), any::<u32>()).prop_map(
            |(port_no, c, duration_sec, duration_nsec)| PortStats {
                port_no,
                rx_packets: c[0],
                tx_packets: c[1],
                rx_bytes: c[2],
                tx_bytes: c[3],
                rx_dropped: c[4],
                tx_dropped: c[5],
                rx_errors: c[6],
                tx_errors: c[7],
                rx_frame_err: c[8],
                rx_over_err: c[9],
                rx_crc_err: c[10],
                collisions: c[11],
                duration_sec,
                duration_nsec,
            },
        )
    }

    fn any_queue_stats() -> impl Strategy<Value = QueueStats> {
        (
            any::<u32>(),
            any::<u32>(),
            any::<[u64; 3]>(),
            any::<u32>(),
            any::<u32>(),
        )
            .prop_map(
                |(port_no, queue_id, c, duration_sec, duration_nsec)| QueueStats {
                    port_no,
                    queue_id,
                    tx_bytes: c[0],
                    tx_packets: c[1],
                    tx_errors: c[2],
                    duration_sec,
                    duration_nsec,
                },
            )
    }

    fn any_group_stats() -> impl Strategy<Value = GroupStats> {
        (
            (any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>()),
            (any::<u32>(), any::<u32>()),
            vec((any::<u64>(), any::<u64>()), 0..4),
        )
            .prop_map(
                |(
                    (group_id, ref_count, packet_count, byte_count),
                    (duration_sec, duration_nsec),
                    b,
                )| GroupStats {
                    group_id,
                    ref_count,
                    packet_count,
                    byte_count,
                    duration_sec,
                    duration_nsec,
                    bucket_stats: b
                        .into_iter()
                        .map(|(packet_count, byte_count)| BucketCounter {
                            packet_count,
                            byte_count,
                        })
                        .collect(),
                },
            )
    }

    fn any_bucket() -> impl Strategy<Value = Bucket> {
        (
            any::<u16>(),
            any::<u32>(),
            any::<u32>(),
            vec(any_action(), 0..3),
        )
            .prop_map(|(weight, watch_port, watch_group, actions)| Bucket {
                weight,
                watch_port,
                watch_group,
                actions,
            })
    }

    fn any_group_desc() -> impl Strategy<Value = GroupDesc> {
        (0u8..4, any::<u32>(), vec(any_bucket(), 0..4)).prop_map(
            |(group_type, group_id, buckets)| GroupDesc {
                group_type,
                group_id,
                buckets,
            },
        )
    }

    fn any_group_features() -> impl Strategy<Value = GroupFeatures> {
        (
            any::<u32>(),
            any::<u32>(),
            any::<[u32; 4]>(),
            any::<[u32; 4]>(),
        )
            .prop_map(|(types, capabilities, max_groups, actions)| GroupFeatures {
                types,
                capabilities,
                max_groups,
                actions,
            })
    }

    fn any_meter_stats() -> impl Strategy<Value = MeterStats> {
        (
            (any::<u32>(), any::<u32>(), any::<u64>(), any::<u64>()),
            (any::<u32>(), any::<u32>()),
            vec((any::<u64>(), any::<u64>()), 0..4),
        )
            .prop_map(
                |(
                    (meter_id, flow_count, packet_in_count, byte_in_count),
                    (duration_sec, duration_nsec),
                    b,
                )| MeterStats {
                    meter_id,
                    flow_count,
                    packet_in_count,
                    byte_in_count,
                    duration_sec,
                    duration_nsec,
                    band_stats: b
                        .into_iter()
                        .map(|(packet_band_count, byte_band_count)| MeterBandStats {
                            packet_band_count,
                            byte_band_count,
                        })
                        .collect(),
                },
            )
    }

    fn any_meter_config() -> impl Strategy<Value = MeterConfig> {
        (any::<u16>(), any::<u32>(), vec(any_band(), 0..3)).prop_map(|(flags, meter_id, bands)| {
            MeterConfig {
                flags,
                meter_id,
                bands,
            }
        })
    }

    fn any_meter_features() -> impl Strategy<Value = MeterFeatures> {
        (
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
        )
            .prop_map(
                |(max_meter, band_types, capabilities, max_bands, max_color)| MeterFeatures {
                    max_meter,
                    band_types,
                    capabilities,
                    max_bands,
                    max_color,
                },
            )
    }

    fn any_port() -> impl Strategy<Value = Port> {
        (
            any::<u32>(),
            any::<[u8; 6]>(),
            "[a-z0-9.-]{0,15}",
            any::<[u32; 8]>(),
        )
            .prop_map(|(port_no, hw_addr, name, c)| Port {
                port_no,
                hw_addr,
                name,
                config: c[0],
                state: c[1],
                curr: c[2],
                advertised: c[3],
                supported: c[4],
                peer: c[5],
                curr_speed: c[6],
                max_speed: c[7],
            })
    }

    pub fn any_multipart_reply_body() -> impl Strategy<Value = MultipartReplyBody> {
        use MultipartReplyBody as B;
        prop_oneof![
            any_desc().prop_map(B::Desc),
            vec(any_flow_stats(), 0..4).prop_map(B::Flow),
            (any::<u64>(), any::<u64>(), any::<u32>()).prop_map(
                |(packet_count, byte_count, flow_count)| B::Aggregate(AggregateStats {
                    packet_count,
                    byte_count,
                    flow_count,
                })
            ),
            vec(any_table_stats(), 0..4).prop_map(B::Table),
            vec(any_port_stats(), 0..4).prop_map(B::PortStats),
            vec(any_queue_stats(), 0..4).prop_map(B::Queue),
            vec(any_group_stats(), 0..4).prop_map(B::Group),
            vec(any_group_desc(), 0..4).prop_map(B::GroupDesc),
            any_group_features().prop_map(B::GroupFeatures),
            vec(any_meter_stats(), 0..4).prop_map(B::Meter),
            vec(any_meter_config(), 0..4).prop_map(B::MeterConfig),
            any_meter_features().prop_map(B::MeterFeatures),
            vec(any_table_features(), 0..3).prop_map(B::TableFeatures),
            vec(any_port(), 0..4).prop_map(B::PortDesc),
            any_experimenter().prop_map(B::Experimenter),
        ]
    }

    pub fn any_multipart_reply() -> impl Strategy<Value = MultipartReply> {
        (any::<u16>(), any_multipart_reply_body())
            .prop_map(|(flags, body)| MultipartReply { flags, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorCode, TableFeaturesFailedCode};
    use crate::port::port_no;
    use crate::table_features::{TableFeatureProp, TABLE_FEATURES_LEN};
    use proptest::prelude::*;

    fn unhex(s: &str) -> Vec<u8> {
        hex::decode(s).unwrap()
    }

    fn dec_req(b: &[u8]) -> Result<MultipartRequest, DecodeError> {
        MultipartRequest::decode(&mut Reader::message(b))
    }

    fn dec_rep(b: &[u8]) -> Result<MultipartReply, DecodeError> {
        MultipartReply::decode(&mut Reader::message(b))
    }

    fn enc_req(m: &MultipartRequest) -> Vec<u8> {
        let mut w = Vec::new();
        m.encode(&mut w);
        w
    }

    fn enc_rep(m: &MultipartReply) -> Vec<u8> {
        let mut w = Vec::new();
        m.encode(&mut w);
        w
    }

    /// Both directions: `bytes` decodes to `m` and `m` encodes to `bytes`.
    fn check_req(bytes: &[u8], m: MultipartRequest) {
        assert_eq!(dec_req(bytes).unwrap(), m);
        assert_eq!(enc_req(&m), bytes);
    }

    fn check_rep(bytes: &[u8], m: MultipartReply) {
        assert_eq!(dec_rep(bytes).unwrap(), m);
        assert_eq!(enc_rep(&m), bytes);
    }

    fn req(body: MultipartRequestBody) -> MultipartRequest {
        MultipartRequest::new(body)
    }

    fn rep(body: MultipartReplyBody) -> MultipartReply {
        MultipartReply::new(body)
    }

    fn code(r: Result<impl std::fmt::Debug, DecodeError>) -> ErrorCode {
        r.unwrap_err().code
    }

    const BAD_LEN: ErrorCode = ErrorCode::BadRequest(BadRequestCode::BadLen);
    const BAD_MULTIPART: ErrorCode = ErrorCode::BadRequest(BadRequestCode::BadMultipart);
    const OVERFLOW: ErrorCode = ErrorCode::BadRequest(BadRequestCode::MultipartBufferOverflow);

    /// A match decoded by the oxm codec (this module only frames it).
    fn match_from(hex: &str) -> Match {
        let b = unhex(hex);
        let mut r = Reader::message(&b);
        let m = Match::decode(&mut r).unwrap();
        assert!(r.is_empty());
        m
    }

    // Request vectors: body bytes (after ofp_header) written by os-ken's
    // OFP*StatsRequest serializers.

    #[test]
    fn request_desc() {
        check_req(&unhex("0000000000000000"), req(MultipartRequestBody::Desc));
    }

    #[test]
    fn request_flow() {
        check_req(
            &unhex(
                "000100000000000001000000ffffffffffffffff00000000\
                 1122334455667788ffffffffffffffff0001000400000000",
            ),
            req(MultipartRequestBody::Flow(FlowStatsRequest {
                table_id: 1,
                out_port: port_no::ANY,
                out_group: 0xffff_ffff,
                cookie: 0x1122_3344_5566_7788,
                cookie_mask: u64::MAX,
                match_: Match::default(),
            })),
        );
    }

    #[test]
    fn request_flow_with_match() {
        check_req(
            &unhex(
                "0001000000000000ff0000000000000200000003000000000000000000000000\
                 00000000000000000001000c800000040000000100000000",
            ),
            req(MultipartRequestBody::Flow(FlowStatsRequest {
                table_id: 0xff,
                out_port: 2,
                out_group: 3,
                cookie: 0,
                cookie_mask: 0,
                match_: match_from("0001000c800000040000000100000000"),
            })),
        );
    }

    #[test]
    fn request_aggregate() {
        check_req(
            &unhex(
                "0002000000000000ff000000ffffffffffffffff00000000\
                 000000000000000000000000000000000001000400000000",
            ),
            req(MultipartRequestBody::Aggregate(FlowStatsRequest {
                table_id: 0xff,
                out_port: port_no::ANY,
                out_group: 0xffff_ffff,
                ..Default::default()
            })),
        );
    }

    #[test]
    fn request_empty_bodies() {
        use MultipartRequestBody as B;
        for (hex, body) in [
            ("0003000000000000", B::Table),
            ("0007000000000000", B::GroupDesc),
            ("0008000000000000", B::GroupFeatures),
            ("000b000000000000", B::MeterFeatures),
            ("000c000000000000", B::TableFeatures(vec![])),
            ("000d000000000000", B::PortDesc),
        ] {
            check_req(&unhex(hex), req(body));
        }
    }

    #[test]
    fn request_port_queue_group_meter() {
        use MultipartRequestBody as B;
        check_req(
            &unhex("0004000000000000ffffffff00000000"),
            req(B::PortStats {
                port_no: port_no::ANY,
            }),
        );
        check_req(
            &unhex("000500000000000000000001ffffffff"),
            req(B::Queue {
                port_no: 1,
                queue_id: 0xffff_ffff,
            }),
        );
        check_req(
            &unhex("0006000000000000fffffffc00000000"),
            req(B::Group {
                group_id: 0xffff_fffc,
            }),
        );
        check_req(
            &unhex("0009000000000000ffffffff00000000"),
            req(B::Meter {
                meter_id: 0xffff_ffff,
            }),
        );
        check_req(
            &unhex("000a0000000000000000000500000000"),
            req(B::MeterConfig { meter_id: 5 }),
        );
    }

    #[test]
    fn request_experimenter() {
        check_req(
            &unhex("ffff000100000000000023200000000761626364"),
            MultipartRequest {
                flags: OFPMPF_REQ_MORE,
                body: MultipartRequestBody::Experimenter(ExperimenterMultipart {
                    experimenter: 0x2320,
                    exp_type: 7,
                    data: b"abcd".to_vec(),
                }),
            },
        );
    }

    #[test]
    fn request_table_features() {
        // os-ken OFPTableFeaturesStatsRequest with one OFPTableFeaturesStats
        // (table 0 "x", one INSTRUCTIONS prop [goto_table], one NEXT_TABLES [1, 2]).
        let b = unhex(
            "000c000000000000\
             005000000000000078000000000000000000000000000000000000000000000000000000\
             000000000000000000000001000000000000000200000000000000100000000800010004\
             0002000601020000",
        );
        let t = TableFeatures {
            table_id: 0,
            name: "x".into(),
            metadata_match: 1,
            metadata_write: 2,
            config: 0,
            max_entries: 16,
            properties: vec![
                TableFeatureProp::Instructions {
                    miss: false,
                    ids: vec![crate::table_features::InstructionId::Standard(1)],
                },
                TableFeatureProp::NextTables {
                    miss: false,
                    tables: vec![1, 2],
                },
            ],
        };
        check_req(&b, req(MultipartRequestBody::TableFeatures(vec![t])));
    }

    // Reply vectors: bytes packed with os-ken's OFP_*_PACK_STR layouts (os-ken
    // has no reply serializers), matches/buckets/bands from its serializers.

    #[test]
    fn reply_desc() {
        let mut b = unhex("0000000000000000");
        for (s, n) in [
            ("oxflow", 256),
            ("hw", 256),
            ("sw 1.0", 256),
            ("SN1", 32),
            ("dp one", 256),
        ] {
            let mut f = s.as_bytes().to_vec();
            f.resize(n, 0);
            b.extend_from_slice(&f);
        }
        assert_eq!(b.len(), 8 + 1056);
        check_rep(
            &b,
            rep(MultipartReplyBody::Desc(Desc {
                mfr_desc: "oxflow".into(),
                hw_desc: "hw".into(),
                sw_desc: "sw 1.0".into(),
                serial_num: "SN1".into(),
                dp_desc: "dp one".into(),
            })),
        );
    }

    #[test]
    fn reply_flow() {
        let b = unhex(
            "0001000000000000\
             004803000000000a000001f40064000500060001000000000000000000abcdef\
             000000000000000700000000000002bc\
             0001000c8000000400000001000000000001000802000000",
        );
        let insts = decode_instructions(&mut Reader::message(&unhex("0001000802000000"))).unwrap();
        assert_eq!(insts.len(), 1);
        check_rep(
            &b,
            rep(MultipartReplyBody::Flow(vec![FlowStats {
                table_id: 3,
                duration_sec: 10,
                duration_nsec: 500,
                priority: 100,
                idle_timeout: 5,
                hard_timeout: 6,
                flags: 1,
                cookie: 0xabcdef,
                packet_count: 7,
                byte_count: 700,
                match_: match_from("0001000c800000040000000100000000"),
                instructions: insts,
            }])),
        );
    }

    #[test]
    fn reply_flow_empty_match_with_more() {
        let b = unhex(
            "0001000100000000\
             0038000000000001000000020000000000000000000000000000000000000000\
             00000000000000000000000000000000\
             0001000400000000",
        );
        check_rep(
            &b,
            MultipartReply {
                flags: OFPMPF_REPLY_MORE,
                body: MultipartReplyBody::Flow(vec![FlowStats {
                    duration_sec: 1,
                    duration_nsec: 2,
                    ..Default::default()
                }]),
            },
        );
    }

    #[test]
    fn reply_aggregate() {
        check_rep(
            &unhex("0002000000000000000000000000000a00000000000003e80000000300000000"),
            rep(MultipartReplyBody::Aggregate(AggregateStats {
                packet_count: 10,
                byte_count: 1000,
                flow_count: 3,
            })),
        );
    }

    #[test]
    fn reply_table() {
        check_rep(
            &unhex(
                "0003000000000000\
                 00000000000000050000000000000064000000000000005a\
                 010000000000000000000000000000070000000000000000",
            ),
            rep(MultipartReplyBody::Table(vec![
                TableStats {
                    table_id: 0,
                    active_count: 5,
                    lookup_count: 100,
                    matched_count: 90,
                },
                TableStats {
                    table_id: 1,
                    active_count: 0,
                    lookup_count: 7,
                    matched_count: 0,
                },
            ])),
        );
    }

    #[test]
    fn reply_port_stats() {
        check_rep(
            &unhex(
                "0004000000000000\
                 0000000100000000\
                 0000000000000001000000000000000200000000000000030000000000000004\
                 0000000000000005000000000000000600000000000000070000000000000008\
                 0000000000000009000000000000000a000000000000000b000000000000000c\
                 0000003c000001f4",
            ),
            rep(MultipartReplyBody::PortStats(vec![PortStats {
                port_no: 1,
                rx_packets: 1,
                tx_packets: 2,
                rx_bytes: 3,
                tx_bytes: 4,
                rx_dropped: 5,
                tx_dropped: 6,
                rx_errors: 7,
                tx_errors: 8,
                rx_frame_err: 9,
                rx_over_err: 10,
                rx_crc_err: 11,
                collisions: 12,
                duration_sec: 60,
                duration_nsec: 500,
            }])),
        );
    }

    #[test]
    fn reply_queue() {
        check_rep(
            &unhex(
                "0005000000000000\
                 0000000100000002000000000000012c000000000000000300000000000000000000000a00000014",
            ),
            rep(MultipartReplyBody::Queue(vec![QueueStats {
                port_no: 1,
                queue_id: 2,
                tx_bytes: 300,
                tx_packets: 3,
                tx_errors: 0,
                duration_sec: 10,
                duration_nsec: 20,
            }])),
        );
    }

    #[test]
    fn reply_group() {
        check_rep(
            &unhex(
                "0006000000000000\
                 0048000000000007000000020000000000000000000000640000000000001900\
                 0000000900000063\
                 000000000000003c0000000000000f0000000000000000280000000000000a00",
            ),
            rep(MultipartReplyBody::Group(vec![GroupStats {
                group_id: 7,
                ref_count: 2,
                packet_count: 100,
                byte_count: 6400,
                duration_sec: 9,
                duration_nsec: 99,
                bucket_stats: vec![
                    BucketCounter {
                        packet_count: 60,
                        byte_count: 3840,
                    },
                    BucketCounter {
                        packet_count: 40,
                        byte_count: 2560,
                    },
                ],
            }])),
        );
    }

    #[test]
    fn reply_group_desc() {
        // select group 5, one bucket (weight 10) with output:2 max_len 0xffe5
        let bucket_hex = "0020000affffffffffffffff000000000000001000000002ffe5000000000000";
        let buckets = decode_buckets(&mut Reader::message(&unhex(bucket_hex))).unwrap();
        assert_eq!(buckets.len(), 1);
        check_rep(
            &unhex(&format!("00070000000000000028010000000005{bucket_hex}")),
            rep(MultipartReplyBody::GroupDesc(vec![GroupDesc {
                group_type: 1,
                group_id: 5,
                buckets,
            }])),
        );
        // all group 1, one bucket without actions
        check_rep(
            &unhex("0007000000000000001800000000000100100000ffffffffffffffff00000000"),
            rep(MultipartReplyBody::GroupDesc(vec![GroupDesc {
                group_type: 0,
                group_id: 1,
                buckets: vec![Bucket {
                    weight: 0,
                    watch_port: port_no::ANY,
                    watch_group: 0xffff_ffff,
                    actions: vec![],
                }],
            }])),
        );
    }

    #[test]
    fn reply_group_features() {
        check_rep(
            &unhex(
                "0008000000000000\
                 0000000f00000005000000010000000200000003000000040001ffff0000000100000000ffffffff",
            ),
            rep(MultipartReplyBody::GroupFeatures(GroupFeatures {
                types: 0xf,
                capabilities: 5,
                max_groups: [1, 2, 3, 4],
                actions: [0x1ffff, 1, 0, 0xffff_ffff],
            })),
        );
    }

    #[test]
    fn reply_meter() {
        check_rep(
            &unhex(
                "0009000000000000\
                 00000001003800000000000000000002000000000000012c0000000000009c40\
                 0000000500000006000000000000000a00000000000003e8",
            ),
            rep(MultipartReplyBody::Meter(vec![MeterStats {
                meter_id: 1,
                flow_count: 2,
                packet_in_count: 300,
                byte_in_count: 40000,
                duration_sec: 5,
                duration_nsec: 6,
                band_stats: vec![MeterBandStats {
                    packet_band_count: 10,
                    byte_band_count: 1000,
                }],
            }])),
        );
    }

    #[test]
    fn reply_meter_config() {
        check_rep(
            &unhex(
                "000a000000000000\
                 0028000500000003\
                 00010010000003e80000000a00000000\
                 00020010000007d00000001401000000",
            ),
            rep(MultipartReplyBody::MeterConfig(vec![MeterConfig {
                flags: crate::meter::flags::KBPS | crate::meter::flags::BURST,
                meter_id: 3,
                bands: vec![
                    MeterBand::Drop {
                        rate: 1000,
                        burst_size: 10,
                    },
                    MeterBand::DscpRemark {
                        rate: 2000,
                        burst_size: 20,
                        prec_level: 1,
                    },
                ],
            }])),
        );
    }

    #[test]
    fn reply_meter_features() {
        check_rep(
            &unhex("000b00000000000000000400000000060000000f02080000"),
            rep(MultipartReplyBody::MeterFeatures(MeterFeatures {
                max_meter: 1024,
                band_types: 6,
                capabilities: 0xf,
                max_bands: 2,
                max_color: 8,
            })),
        );
    }

    #[test]
    fn reply_table_features() {
        let mut b = unhex("000c000000000000");
        let t = TableFeatures {
            table_id: 3,
            name: "acl".into(),
            max_entries: 100,
            properties: vec![TableFeatureProp::NextTables {
                miss: true,
                tables: vec![4],
            }],
            ..Default::default()
        };
        t.encode(&mut b);
        assert_eq!(b.len(), 8 + TABLE_FEATURES_LEN + 8);
        assert_eq!(&b[8..10], &[0, 72]);
        assert_eq!(&b[8 + 64..], &[0, 3, 0, 5, 4, 0, 0, 0]);
        check_rep(&b, rep(MultipartReplyBody::TableFeatures(vec![t])));
    }

    #[test]
    fn reply_port_desc() {
        check_rep(
            &unhex(
                "000d000000000000\
                 0000000100000000020000000001000076657468310000000000000000000000\
                 0000000000000004000008400000000000000000000000000098968000989680",
            ),
            rep(MultipartReplyBody::PortDesc(vec![Port {
                port_no: 1,
                hw_addr: [2, 0, 0, 0, 0, 1],
                name: "veth1".into(),
                config: 0,
                state: 4,
                curr: 0x840,
                advertised: 0,
                supported: 0,
                peer: 0,
                curr_speed: 10_000_000,
                max_speed: 10_000_000,
            }])),
        );
    }

    #[test]
    fn reply_experimenter() {
        check_rep(
            &unhex("ffff000000000000000023200000000978797a"),
            rep(MultipartReplyBody::Experimenter(ExperimenterMultipart {
                experimenter: 0x2320,
                exp_type: 9,
                data: b"xyz".to_vec(),
            })),
        );
    }

    // Errors.

    #[test]
    fn error_bad_multipart_for_unknown_type() {
        for t in [14u16, 0x100, 0xfffe] {
            let mut b = t.to_be_bytes().to_vec();
            b.extend_from_slice(&[0; 6]);
            assert_eq!(code(dec_req(&b)), BAD_MULTIPART);
            assert_eq!(code(dec_rep(&b)), BAD_MULTIPART);
        }
    }

    #[test]
    fn error_bad_len_requests() {
        // short multipart header
        assert_eq!(code(dec_req(&[0, 0, 0])), BAD_LEN);
        assert_eq!(code(dec_req(&[0, 0, 0, 0, 0, 0])), BAD_LEN);
        for (t, good_len) in [
            (mp_type::DESC, 0usize),
            (mp_type::TABLE, 0),
            (mp_type::PORT_STATS, 8),
            (mp_type::QUEUE, 8),
            (mp_type::GROUP, 8),
            (mp_type::GROUP_DESC, 0),
            (mp_type::GROUP_FEATURES, 0),
            (mp_type::METER, 8),
            (mp_type::METER_CONFIG, 8),
            (mp_type::METER_FEATURES, 0),
            (mp_type::PORT_DESC, 0),
            (mp_type::EXPERIMENTER, 8),
        ] {
            let mut b = t.to_be_bytes().to_vec();
            b.extend_from_slice(&[0; 6]);
            b.resize(8 + good_len, 0);
            assert!(dec_req(&b).is_ok(), "type {t}");
            if good_len > 0 {
                assert_eq!(code(dec_req(&b[..b.len() - 1])), BAD_LEN, "type {t} short");
            }
            if t != mp_type::EXPERIMENTER {
                b.push(0);
                assert_eq!(code(dec_req(&b)), BAD_LEN, "type {t} long");
            }
        }
        // flow request: truncated fixed part, trailing bytes after the match
        let good = unhex(
            "000100000000000001000000ffffffffffffffff00000000\
             1122334455667788ffffffffffffffff0001000400000000",
        );
        assert_eq!(code(dec_req(&good[..20])), BAD_LEN);
        let mut long = good.clone();
        long.extend_from_slice(&[0; 8]);
        assert_eq!(code(dec_req(&long)), BAD_LEN);
    }

    #[test]
    fn error_bad_len_replies() {
        let with_type = |t: u16, body: &[u8]| {
            let mut b = t.to_be_bytes().to_vec();
            b.extend_from_slice(&[0; 6]);
            b.extend_from_slice(body);
            b
        };
        // fixed-size bodies: one byte short, one byte long
        for (t, n) in [
            (mp_type::DESC, 1056usize),
            (mp_type::AGGREGATE, 24),
            (mp_type::GROUP_FEATURES, 40),
            (mp_type::METER_FEATURES, 16),
        ] {
            assert!(dec_rep(&with_type(t, &vec![0; n])).is_ok());
            assert_eq!(code(dec_rep(&with_type(t, &vec![0; n - 1]))), BAD_LEN);
            assert_eq!(code(dec_rep(&with_type(t, &vec![0; n + 1]))), BAD_LEN);
        }
        // fixed-size records: a partial trailing record
        for (t, n) in [
            (mp_type::TABLE, 24usize),
            (mp_type::PORT_STATS, 112),
            (mp_type::QUEUE, 40),
            (mp_type::PORT_DESC, 64),
        ] {
            assert!(dec_rep(&with_type(t, &vec![0; 2 * n])).is_ok());
            assert_eq!(code(dec_rep(&with_type(t, &vec![0; 2 * n - 4]))), BAD_LEN);
        }
        // flow stats: length below the minimum, past the end
        let mut fs = vec![0u8; 56];
        fs[1] = 48;
        assert_eq!(code(dec_rep(&with_type(mp_type::FLOW, &fs))), BAD_LEN);
        fs[1] = 64;
        assert_eq!(code(dec_rep(&with_type(mp_type::FLOW, &fs))), BAD_LEN);
        // group stats: counters not in 16-byte units
        let mut gs = vec![0u8; 48];
        gs[1] = 48;
        assert_eq!(code(dec_rep(&with_type(mp_type::GROUP, &gs))), BAD_LEN);
        gs[1] = 32;
        assert_eq!(code(dec_rep(&with_type(mp_type::GROUP, &gs))), BAD_LEN);
        // meter stats: len below 40 and band stats not in 16-byte units
        let mut ms = vec![0u8; 48];
        ms[5] = 36;
        assert_eq!(code(dec_rep(&with_type(mp_type::METER, &ms))), BAD_LEN);
        ms[5] = 48;
        assert_eq!(code(dec_rep(&with_type(mp_type::METER, &ms))), BAD_LEN);
        // group desc and meter config: length below 8 or past the end
        for t in [mp_type::GROUP_DESC, mp_type::METER_CONFIG] {
            assert_eq!(
                code(dec_rep(&with_type(t, &[0, 4, 0, 0, 0, 0, 0, 0]))),
                BAD_LEN
            );
            assert_eq!(
                code(dec_rep(&with_type(t, &[0, 16, 0, 0, 0, 0, 0, 0]))),
                BAD_LEN
            );
        }
        // experimenter shorter than its header
        assert_eq!(
            code(dec_rep(&with_type(mp_type::EXPERIMENTER, &[0; 7]))),
            BAD_LEN
        );
    }

    #[test]
    fn table_features_errors_pass_through() {
        let mut b = unhex("000c000000000000");
        TableFeatures {
            table_id: 1,
            ..Default::default()
        }
        .encode(&mut b);
        assert!(dec_req(&b).is_ok());
        b[8 + 2] = 0xff; // table id 0xff
        assert_eq!(
            code(dec_req(&b)),
            ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadTable)
        );
        b[8 + 2] = 1;
        b[8 + 1] = 60; // length below 64
        assert_eq!(
            code(dec_req(&b)),
            ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadLen)
        );
        b[8 + 1] = 72;
        b.extend_from_slice(&[0, 11, 0, 4, 0, 0, 0, 0]); // property type 11
        assert_eq!(
            code(dec_req(&b)),
            ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadType)
        );
    }

    #[test]
    fn flow_request_table_id_is_free() {
        for t in [0u8, 0xfe, 0xff] {
            let m = req(MultipartRequestBody::Flow(FlowStatsRequest {
                table_id: t,
                ..Default::default()
            }));
            assert_eq!(dec_req(&enc_req(&m)).unwrap(), m);
        }
    }

    // Reassembly.

    fn tf(id: u8) -> TableFeatures {
        TableFeatures {
            table_id: id,
            name: format!("t{id}"),
            ..Default::default()
        }
    }

    fn tf_req(flags: u16, ids: &[u8]) -> MultipartRequest {
        MultipartRequest {
            flags,
            body: MultipartRequestBody::TableFeatures(ids.iter().map(|&i| tf(i)).collect()),
        }
    }

    #[test]
    fn assembler_passes_single_parts_through() {
        let mut a = MultipartAssembler::default();
        let m = req(MultipartRequestBody::Desc);
        assert_eq!(a.push(1, m.clone()).unwrap(), Some(m));
        assert_eq!(a.pending(), 0);
    }

    #[test]
    fn assembler_merges_request_parts() {
        let mut a = MultipartAssembler::new(1 << 16);
        assert_eq!(a.push(7, tf_req(OFPMPF_REQ_MORE, &[0, 1])).unwrap(), None);
        // another xid interleaved
        assert_eq!(a.push(8, tf_req(OFPMPF_REQ_MORE, &[9])).unwrap(), None);
        assert_eq!(a.push(7, tf_req(OFPMPF_REQ_MORE, &[2])).unwrap(), None);
        assert_eq!(a.pending(), 2);
        let done = a.push(7, tf_req(0, &[3])).unwrap().unwrap();
        assert_eq!(done, tf_req(0, &[0, 1, 2, 3]));
        assert_eq!(a.pending(), 1);
        a.discard(8);
        assert_eq!(a.pending(), 0);
        assert_eq!(a.buffered(), 0);
    }

    #[test]
    fn assembler_merges_reply_parts() {
        let mut a = MultipartAssembler::default();
        let part = |flags, ports: &[u32]| MultipartReply {
            flags,
            body: MultipartReplyBody::PortStats(
                ports
                    .iter()
                    .map(|&port_no| PortStats {
                        port_no,
                        ..Default::default()
                    })
                    .collect(),
            ),
        };
        assert_eq!(a.push(3, part(OFPMPF_REPLY_MORE, &[1, 2])).unwrap(), None);
        assert_eq!(a.push(3, part(0, &[3])).unwrap(), Some(part(0, &[1, 2, 3])));
    }

    #[test]
    fn assembler_error_bad_multipart_on_type_change() {
        let mut a = MultipartAssembler::default();
        a.push(1, tf_req(OFPMPF_REQ_MORE, &[0])).unwrap();
        let other = MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::Experimenter(ExperimenterMultipart::default()),
        };
        assert_eq!(code(a.push(1, other)), BAD_MULTIPART);
        // the xid was discarded
        assert_eq!(a.pending(), 0);
        assert_eq!(a.buffered(), 0);
    }

    #[test]
    fn assembler_error_bad_multipart_on_more_for_single_body() {
        let mut a = MultipartAssembler::default();
        let m = MultipartRequest {
            flags: OFPMPF_REQ_MORE,
            body: MultipartRequestBody::Desc,
        };
        assert_eq!(code(a.push(1, m)), BAD_MULTIPART);
        let mut a = MultipartAssembler::default();
        let m = MultipartReply {
            flags: OFPMPF_REPLY_MORE,
            body: MultipartReplyBody::Aggregate(AggregateStats::default()),
        };
        assert_eq!(code(a.push(1, m)), BAD_MULTIPART);
    }

    #[test]
    fn assembler_error_bad_multipart_on_experimenter_mismatch() {
        let mut a = MultipartAssembler::default();
        let e = |exp_type, flags| MultipartRequest {
            flags,
            body: MultipartRequestBody::Experimenter(ExperimenterMultipart {
                experimenter: 1,
                exp_type,
                data: vec![1, 2],
            }),
        };
        a.push(5, e(1, OFPMPF_REQ_MORE)).unwrap();
        assert_eq!(
            a.push(5, e(1, 0)).unwrap().unwrap(),
            MultipartRequest {
                flags: 0,
                body: MultipartRequestBody::Experimenter(ExperimenterMultipart {
                    experimenter: 1,
                    exp_type: 1,
                    data: vec![1, 2, 1, 2],
                }),
            }
        );
        a.push(5, e(1, OFPMPF_REQ_MORE)).unwrap();
        assert_eq!(code(a.push(5, e(2, 0))), BAD_MULTIPART);
    }

    #[test]
    fn assembler_error_buffer_overflow() {
        // each part: 16 bytes of headers + 64 per table
        let mut a = MultipartAssembler::new(200);
        a.push(1, tf_req(OFPMPF_REQ_MORE, &[0])).unwrap(); // 80
        a.push(1, tf_req(OFPMPF_REQ_MORE, &[1])).unwrap(); // 160
        assert_eq!(a.buffered(), 160);
        assert_eq!(code(a.push(1, tf_req(0, &[2]))), OVERFLOW);
        assert_eq!(a.pending(), 0);
        assert_eq!(a.buffered(), 0);
        // empty parts count their headers: the number of pending xids is bounded
        let mut a = MultipartAssembler::new(100);
        let mut xid = 0;
        let err = loop {
            match a.push(xid, tf_req(OFPMPF_REQ_MORE, &[])) {
                Ok(_) => xid += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err.code, OVERFLOW);
        assert_eq!(xid, 6);
    }

    // Splitting.

    fn many_ports(n: u32) -> MultipartReply {
        rep(MultipartReplyBody::PortStats(
            (0..n)
                .map(|port_no| PortStats {
                    port_no,
                    rx_packets: u64::from(port_no),
                    ..Default::default()
                })
                .collect(),
        ))
    }

    #[test]
    fn split_fits_64k() {
        let r = many_ports(2000); // 224000 bytes of records
        let parts = split_reply(r.clone(), MAX_MESSAGE_LEN);
        // (65535 - 16) / 112 = 584 records per part
        assert_eq!(parts.len(), 4);
        for (i, p) in parts.iter().enumerate() {
            let len = HEADER_LEN + enc_rep(p).len();
            assert!(len <= MAX_MESSAGE_LEN);
            assert_eq!(p.more(), i + 1 < parts.len());
        }
        let MultipartReplyBody::PortStats(first) = &parts[0].body else {
            panic!("type changed")
        };
        assert_eq!(first.len(), 584);
        let mut a = MultipartAssembler::new(1 << 20);
        let mut out = None;
        for p in parts {
            out = a.push(9, p).unwrap();
        }
        assert_eq!(out, Some(r));
    }

    #[test]
    fn split_caps_at_64k_and_handles_tiny_limits() {
        let r = many_ports(1200);
        assert_eq!(split_reply(r.clone(), 1 << 20).len(), 3);
        // a limit below one record: one record per part
        let parts = split_reply(many_ports(3), 20);
        assert_eq!(parts.len(), 3);
        assert!(parts[0].more() && parts[1].more() && !parts[2].more());
    }

    #[test]
    fn split_keeps_single_bodies_and_empty_lists() {
        let d = rep(MultipartReplyBody::Desc(Desc::default()));
        assert_eq!(split_reply(d.clone(), 100), vec![d]);
        let e = rep(MultipartReplyBody::Flow(vec![]));
        assert_eq!(split_reply(e.clone(), 100), vec![e]);
        // the last part keeps the caller's MORE flag
        let mut m = many_ports(2);
        m.flags = OFPMPF_REPLY_MORE;
        let parts = split_reply(m, 16 + 112);
        assert_eq!(parts.len(), 2);
        assert!(parts.iter().all(|p| p.more()));
    }

    #[test]
    fn split_request_table_features() {
        let r = tf_req(0, &[0, 1, 2, 3, 4]);
        let parts = split_request(r.clone(), 16 + 2 * 64);
        assert_eq!(parts.len(), 3);
        let mut a = MultipartAssembler::default();
        let mut out = None;
        for p in parts {
            assert!(HEADER_LEN + enc_req(&p).len() <= 16 + 2 * 64);
            out = a.push(1, p).unwrap();
        }
        assert_eq!(out, Some(r));
        let d = req(MultipartRequestBody::Desc);
        assert_eq!(split_request(d.clone(), 10), vec![d]);
    }

    proptest! {
        #[test]
        fn request_round_trip(m in arb::any_multipart_request()) {
            let b = enc_req(&m);
            prop_assert_eq!(dec_req(&b).unwrap(), m);
        }

        #[test]
        fn reply_round_trip(m in arb::any_multipart_reply()) {
            let b = enc_rep(&m);
            prop_assert_eq!(dec_rep(&b).unwrap(), m);
        }

        #[test]
        fn split_then_assemble(m in arb::any_multipart_reply(), max in 16usize..600) {
            let mut m = m;
            m.flags &= !OFPMPF_REPLY_MORE;
            let parts = split_reply(m.clone(), max);
            let mut a = MultipartAssembler::new(1 << 20);
            let mut out = None;
            for p in parts {
                prop_assert!(out.is_none());
                out = a.push(1, p).unwrap();
            }
            prop_assert_eq!(out, Some(m));
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = dec_req(&b);
            let _ = dec_rep(&b);
        }

        #[test]
        fn arbitrary_bodies_never_panic(
            t in prop_oneof![0u16..16, Just(0xffffu16)],
            b in proptest::collection::vec(any::<u8>(), 0..400),
        ) {
            let mut m = t.to_be_bytes().to_vec();
            m.extend_from_slice(&[0; 6]);
            m.extend_from_slice(&b);
            let _ = dec_req(&m);
            let _ = dec_rep(&m);
        }

        #[test]
        fn mutated_replies_never_panic(
            m in arb::any_multipart_reply(),
            i in any::<usize>(),
            v in any::<u8>(),
        ) {
            let mut b = enc_rep(&m);
            let n = b.len();
            b[i % n] = v;
            let _ = dec_rep(&b);
        }
    }
}
