//! OpenFlow messages (spec §7.1, §7.3-§7.5): the [`Message`] enum with one
//! variant per OFPT_* type, a named body struct for every non-empty body, and
//! [`OfpMessage`], a decoded header + body.
//!
//! Decoding is strict and reports the exact OFPT_ERROR (type, code) the switch
//! must answer with:
//! - header `length` different from the buffer length, or a body too short or
//!   too long for its type: BAD_REQUEST/BAD_LEN;
//! - version other than 4 on anything but HELLO: BAD_REQUEST/BAD_VERSION;
//! - unknown message type: BAD_REQUEST/BAD_TYPE;
//! - per-message semantic checks that need no switch state (bad commands,
//!   undefined flag bits, reserved ids where the spec forbids them), listed on
//!   each body's `decode`;
//! - errors from nested decoders (match, actions, instructions, buckets,
//!   bands, multipart) are passed on unchanged.
//!
//! Checks that need switch state (does the port / group / meter / table
//! exist, is the buffer id known, experimenter support) belong to the switch.

use crate::action::{decode_actions, encode_actions, Action};
use crate::error::{
    BadRequestCode, DecodeError, ErrorCode, ErrorMsg, FlowModFailedCode, PortModFailedCode,
    RoleRequestFailedCode, SwitchConfigFailedCode, TableModFailedCode,
};
use crate::group::GroupMod;
use crate::header::{msg_type, Header, OFP_VERSION};
use crate::instruction::{decode_instructions, encode_instructions, Instruction};
use crate::meter::MeterMod;
use crate::multipart::{MultipartReply, MultipartRequest};
use crate::oxm::Match;
use crate::port::{port_no, Port, PORT_LEN};
use crate::queue::{QueueGetConfigReply, QueueGetConfigRequest};
use crate::wire::{Reader, Writer};

/// `OFP_NO_BUFFER`: the packet is not buffered in the switch.
pub const NO_BUFFER: u32 = 0xffff_ffff;

/// `ofp_controller_max_len`: `max_len` / `miss_send_len` values.
pub mod cml {
    /// Largest length that asks the switch to buffer the rest of the packet.
    pub const MAX: u16 = 0xffe5;
    /// Send the whole packet, do not buffer.
    pub const NO_BUFFER: u16 = 0xffff;
}

/// Table numbers (`ofp_table`).
pub mod table_id {
    /// Last usable table number.
    pub const MAX: u8 = 0xfe;
    /// Wildcard table, for delete and stats requests.
    pub const ALL: u8 = 0xff;
}

// ---------------------------------------------------------------------------
// HELLO
// ---------------------------------------------------------------------------

/// `ofp_hello_elem_type`.
pub mod hello_elem {
    pub const VERSIONBITMAP: u16 = 1;
}

/// One hello element. On the wire each is a TLV whose `length` excludes the
/// zero padding that follows it up to a multiple of 8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelloElement {
    /// Bit `n` of `bitmaps[i]` set = version `32 * i + n` supported.
    VersionBitmap(Vec<u32>),
    /// An element type this codec does not know, body kept raw (without
    /// padding); the spec asks receivers to ignore such elements.
    Unknown { elem_type: u16, data: Vec<u8> },
}

impl HelloElement {
    /// Decode one element. A length below 4 or past the end, or a version
    /// bitmap that is not a whole number of u32, is BAD_REQUEST/BAD_LEN.
    /// The trailing padding of the last element may be missing.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let elem_type = r.u16("hello elem: type")?;
        let length = r.u16("hello elem: length")? as usize;
        if length < 4 {
            return Err(DecodeError::bad_len("hello elem: length below 4"));
        }
        let mut b = r.sub(length - 4, "hello elem: body")?;
        let pad = crate::wire::padding_to_8(length).min(r.remaining());
        r.pad(pad)?;
        Ok(match elem_type {
            hello_elem::VERSIONBITMAP => {
                if !b.remaining().is_multiple_of(4) {
                    return Err(DecodeError::bad_len("hello elem: bitmap length"));
                }
                let mut bitmaps = Vec::new();
                while !b.is_empty() {
                    bitmaps.push(b.u32("hello elem: bitmap")?);
                }
                HelloElement::VersionBitmap(bitmaps)
            }
            _ => HelloElement::Unknown {
                elem_type,
                data: b.rest().to_vec(),
            },
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        match self {
            HelloElement::VersionBitmap(bitmaps) => {
                w.put_u16(hello_elem::VERSIONBITMAP);
                w.put_u16(0);
                for b in bitmaps {
                    w.put_u32(*b);
                }
            }
            HelloElement::Unknown { elem_type, data } => {
                w.put_u16(*elem_type);
                w.put_u16(0);
                w.put_bytes(data);
            }
        }
        let len = (w.len() - start) as u16;
        w.patch_u16(start + 2, len);
        w.pad_to_8(start);
    }
}

/// OFPT_HELLO body.
///
/// Unlike every other message, a HELLO may carry any version in its header
/// (that is how versions are negotiated), so the header version is kept here:
/// decode stores it, encode writes it. A switch sends `OFP_VERSION`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub version: u8,
    pub elements: Vec<HelloElement>,
}

impl Hello {
    /// The HELLO oxflow sends: version 4 with a bitmap announcing only 1.3.
    pub fn ofp13() -> Self {
        Hello {
            version: OFP_VERSION,
            elements: vec![HelloElement::VersionBitmap(vec![1 << OFP_VERSION])],
        }
    }

    /// Whether the peer's HELLO announces support for `version`: from its
    /// version bitmap if it sent one, else from its header version (spec
    /// §6.3.1: the negotiated version is the smaller of the two headers).
    pub fn supports(&self, version: u8) -> bool {
        let bitmap = self.elements.iter().find_map(|e| match e {
            HelloElement::VersionBitmap(b) => Some(b),
            HelloElement::Unknown { .. } => None,
        });
        match bitmap {
            Some(b) => b
                .get(usize::from(version / 32))
                .is_some_and(|w| w & (1 << (version % 32)) != 0),
            None => self.version >= version,
        }
    }

    fn decode(version: u8, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut elements = Vec::new();
        while !r.is_empty() {
            elements.push(HelloElement::decode(r)?);
        }
        Ok(Hello { version, elements })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        for e in &self.elements {
            e.encode(w);
        }
    }
}

// ---------------------------------------------------------------------------
// Symmetric and switch-configuration messages
// ---------------------------------------------------------------------------

/// OFPT_ECHO_REQUEST / OFPT_ECHO_REPLY body: arbitrary data, echoed back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Echo {
    pub data: Vec<u8>,
}

/// OFPT_EXPERIMENTER body (`ofp_experimenter_header` after the header).
/// Decoded generically; whether the experimenter and type are supported is the
/// switch's decision (BAD_EXPERIMENTER / BAD_EXP_TYPE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Experimenter {
    pub experimenter: u32,
    pub exp_type: u32,
    pub data: Vec<u8>,
}

/// `ofp_capabilities` bits of FEATURES_REPLY.
pub mod capabilities {
    pub const FLOW_STATS: u32 = 1 << 0;
    pub const TABLE_STATS: u32 = 1 << 1;
    pub const PORT_STATS: u32 = 1 << 2;
    pub const GROUP_STATS: u32 = 1 << 3;
    pub const IP_REASM: u32 = 1 << 5;
    pub const QUEUE_STATS: u32 = 1 << 6;
    pub const PORT_BLOCKED: u32 = 1 << 8;
}

/// OFPT_FEATURES_REPLY body (`ofp_switch_features` after the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeaturesReply {
    pub datapath_id: u64,
    /// Packets the switch can buffer at once.
    pub n_buffers: u32,
    pub n_tables: u8,
    /// 0 on the main connection, else the auxiliary connection id.
    pub auxiliary_id: u8,
    /// Bits of [`capabilities`].
    pub capabilities: u32,
    pub reserved: u32,
}

impl FeaturesReply {
    pub const LEN: usize = 24;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let datapath_id = r.u64("features_reply: datapath_id")?;
        let n_buffers = r.u32("features_reply: n_buffers")?;
        let n_tables = r.u8("features_reply: n_tables")?;
        let auxiliary_id = r.u8("features_reply: auxiliary_id")?;
        r.pad(2)?;
        Ok(FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities: r.u32("features_reply: capabilities")?,
            reserved: r.u32("features_reply: reserved")?,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u64(self.datapath_id);
        w.put_u32(self.n_buffers);
        w.put_u8(self.n_tables);
        w.put_u8(self.auxiliary_id);
        w.put_zeros(2);
        w.put_u32(self.capabilities);
        w.put_u32(self.reserved);
    }
}

/// `ofp_config_flags`: IP fragment handling (a 2-bit field, not bits).
pub mod config_flags {
    pub const FRAG_NORMAL: u16 = 0;
    pub const FRAG_DROP: u16 = 1;
    pub const FRAG_REASM: u16 = 2;
    pub const FRAG_MASK: u16 = 3;
}

/// OFPT_GET_CONFIG_REPLY / OFPT_SET_CONFIG body (`ofp_switch_config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchConfig {
    /// One of [`config_flags`].
    pub flags: u16,
    /// Bytes of a table-miss packet sent to the controller (see [`cml`]).
    pub miss_send_len: u16,
}

impl SwitchConfig {
    pub const LEN: usize = 4;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(SwitchConfig {
            flags: r.u16("switch_config: flags")?,
            miss_send_len: r.u16("switch_config: miss_send_len")?,
        })
    }

    /// SET_CONFIG checks: flag bits outside OFPC_FRAG_MASK are
    /// SWITCH_CONFIG_FAILED/BAD_FLAGS; a `miss_send_len` above OFPCML_MAX
    /// other than OFPCML_NO_BUFFER is SWITCH_CONFIG_FAILED/BAD_LEN ("specified
    /// len is invalid"; the spec defines no value in between).
    fn validate_set(&self) -> Result<(), DecodeError> {
        let fail = |c, what| DecodeError::new(ErrorCode::SwitchConfigFailed(c), what);
        if self.flags & !config_flags::FRAG_MASK != 0 {
            return Err(fail(SwitchConfigFailedCode::BadFlags, "set_config: flags"));
        }
        if self.miss_send_len > cml::MAX && self.miss_send_len != cml::NO_BUFFER {
            return Err(fail(
                SwitchConfigFailedCode::BadLen,
                "set_config: miss_send_len",
            ));
        }
        Ok(())
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u16(self.flags);
        w.put_u16(self.miss_send_len);
    }
}

// ---------------------------------------------------------------------------
// Asynchronous messages (switch to controller)
// ---------------------------------------------------------------------------

/// `ofp_packet_in_reason`.
pub mod packet_in_reason {
    pub const NO_MATCH: u8 = 0;
    pub const ACTION: u8 = 1;
    pub const INVALID_TTL: u8 = 2;
}

/// OFPT_PACKET_IN body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketIn {
    /// Buffer id, or [`NO_BUFFER`].
    pub buffer_id: u32,
    /// Full length of the frame (`data` may be truncated).
    pub total_len: u16,
    /// One of [`packet_in_reason`].
    pub reason: u8,
    pub table_id: u8,
    /// Cookie of the flow entry that sent the packet.
    pub cookie: u64,
    /// Pipeline fields (in_port, metadata, tunnel id, ...).
    pub match_: Match,
    /// The frame, or its first bytes.
    pub data: Vec<u8>,
}

impl PacketIn {
    /// Fixed part + smallest `ofp_match` + 2 bytes of padding.
    pub const MIN_LEN: usize = 16 + 8 + 2;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let buffer_id = r.u32("packet_in: buffer_id")?;
        let total_len = r.u16("packet_in: total_len")?;
        let reason = r.u8("packet_in: reason")?;
        let table_id = r.u8("packet_in: table_id")?;
        let cookie = r.u64("packet_in: cookie")?;
        let match_ = Match::decode(r)?;
        r.pad(2)?;
        Ok(PacketIn {
            buffer_id,
            total_len,
            reason,
            table_id,
            cookie,
            match_,
            data: r.rest().to_vec(),
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.buffer_id);
        w.put_u16(self.total_len);
        w.put_u8(self.reason);
        w.put_u8(self.table_id);
        w.put_u64(self.cookie);
        self.match_.encode(w);
        w.put_zeros(2);
        w.put_bytes(&self.data);
    }
}

/// `ofp_flow_removed_reason`.
pub mod flow_removed_reason {
    pub const IDLE_TIMEOUT: u8 = 0;
    pub const HARD_TIMEOUT: u8 = 1;
    pub const DELETE: u8 = 2;
    pub const GROUP_DELETE: u8 = 3;
}

/// OFPT_FLOW_REMOVED body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowRemoved {
    pub cookie: u64,
    pub priority: u16,
    /// One of [`flow_removed_reason`].
    pub reason: u8,
    pub table_id: u8,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub packet_count: u64,
    pub byte_count: u64,
    pub match_: Match,
}

impl FlowRemoved {
    /// Fixed part + smallest `ofp_match`.
    pub const MIN_LEN: usize = 40 + 8;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let cookie = r.u64("flow_removed: cookie")?;
        let priority = r.u16("flow_removed: priority")?;
        let reason = r.u8("flow_removed: reason")?;
        let table_id = r.u8("flow_removed: table_id")?;
        let duration_sec = r.u32("flow_removed: duration_sec")?;
        let duration_nsec = r.u32("flow_removed: duration_nsec")?;
        let idle_timeout = r.u16("flow_removed: idle_timeout")?;
        let hard_timeout = r.u16("flow_removed: hard_timeout")?;
        let packet_count = r.u64("flow_removed: packet_count")?;
        let byte_count = r.u64("flow_removed: byte_count")?;
        let match_ = Match::decode(r)?;
        Ok(FlowRemoved {
            cookie,
            priority,
            reason,
            table_id,
            duration_sec,
            duration_nsec,
            idle_timeout,
            hard_timeout,
            packet_count,
            byte_count,
            match_,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u64(self.cookie);
        w.put_u16(self.priority);
        w.put_u8(self.reason);
        w.put_u8(self.table_id);
        w.put_u32(self.duration_sec);
        w.put_u32(self.duration_nsec);
        w.put_u16(self.idle_timeout);
        w.put_u16(self.hard_timeout);
        w.put_u64(self.packet_count);
        w.put_u64(self.byte_count);
        self.match_.encode(w);
    }
}

/// `ofp_port_reason`.
pub mod port_reason {
    pub const ADD: u8 = 0;
    pub const DELETE: u8 = 1;
    pub const MODIFY: u8 = 2;
}

/// OFPT_PORT_STATUS body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortStatus {
    /// One of [`port_reason`].
    pub reason: u8,
    pub desc: Port,
}

impl PortStatus {
    pub const LEN: usize = 8 + PORT_LEN;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let reason = r.u8("port_status: reason")?;
        r.pad(7)?;
        Ok(PortStatus {
            reason,
            desc: Port::decode(r)?,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.reason);
        w.put_zeros(7);
        self.desc.encode(w);
    }
}

// ---------------------------------------------------------------------------
// Controller-to-switch modifications
// ---------------------------------------------------------------------------

/// OFPT_PACKET_OUT body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketOut {
    /// Buffer id, or [`NO_BUFFER`] when `data` carries the frame.
    pub buffer_id: u32,
    /// Ingress port for processing: a standard port or OFPP_CONTROLLER.
    pub in_port: u32,
    pub actions: Vec<Action>,
    pub data: Vec<u8>,
}

impl PacketOut {
    pub const MIN_LEN: usize = 16;

    /// In-port rule of spec §7.3.7: "a valid standard switch port or
    /// OFPP_CONTROLLER"; standard ports are 1..=OFPP_MAX and OFPP_LOCAL.
    /// (Open vSwitch also accepts OFPP_ANY; the spec does not.)
    pub fn is_valid_in_port(p: u32) -> bool {
        (1..=port_no::MAX).contains(&p) || p == port_no::LOCAL || p == port_no::CONTROLLER
    }

    /// Checks: invalid `in_port` is BAD_REQUEST/BAD_PORT; `actions_len`
    /// beyond the body is BAD_REQUEST/BAD_LEN.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let buffer_id = r.u32("packet_out: buffer_id")?;
        let in_port = r.u32("packet_out: in_port")?;
        let actions_len = r.u16("packet_out: actions_len")? as usize;
        r.pad(6)?;
        if !Self::is_valid_in_port(in_port) {
            return Err(DecodeError::bad_request(
                BadRequestCode::BadPort,
                "packet_out: in_port",
            ));
        }
        if actions_len > r.remaining() {
            return Err(DecodeError::bad_len("packet_out: actions_len past end"));
        }
        let actions = decode_actions(r, actions_len)?;
        Ok(PacketOut {
            buffer_id,
            in_port,
            actions,
            data: r.rest().to_vec(),
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.buffer_id);
        w.put_u32(self.in_port);
        let len_at = w.len();
        w.put_u16(0);
        w.put_zeros(6);
        let start = w.len();
        encode_actions(&self.actions, w);
        let len = (w.len() - start) as u16;
        w.patch_u16(len_at, len);
        w.put_bytes(&self.data);
    }
}

/// `ofp_flow_mod_command`.
pub mod flow_mod_command {
    pub const ADD: u8 = 0;
    pub const MODIFY: u8 = 1;
    pub const MODIFY_STRICT: u8 = 2;
    pub const DELETE: u8 = 3;
    pub const DELETE_STRICT: u8 = 4;
}

/// `ofp_flow_mod_flags`.
pub mod flow_mod_flags {
    pub const SEND_FLOW_REM: u16 = 1 << 0;
    pub const CHECK_OVERLAP: u16 = 1 << 1;
    pub const RESET_COUNTS: u16 = 1 << 2;
    pub const NO_PKT_COUNTS: u16 = 1 << 3;
    pub const NO_BYT_COUNTS: u16 = 1 << 4;
    /// Every flag the spec defines.
    pub const ALL: u16 = 0x1f;
}

/// OFPT_FLOW_MOD body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowMod {
    pub cookie: u64,
    /// For modify/delete: only entries whose cookie matches under this mask.
    pub cookie_mask: u64,
    pub table_id: u8,
    /// One of [`flow_mod_command`].
    pub command: u8,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    /// Buffered packet to apply the new entry to, or [`NO_BUFFER`].
    pub buffer_id: u32,
    /// For delete: only entries that output to this port (OFPP_ANY: any).
    pub out_port: u32,
    /// For delete: only entries that output to this group (OFPG_ANY: any).
    pub out_group: u32,
    /// Bits of [`flow_mod_flags`].
    pub flags: u16,
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl FlowMod {
    /// Fixed part + smallest `ofp_match`.
    pub const MIN_LEN: usize = 40 + 8;

    /// Checks, in order, before the match and instructions are decoded:
    /// unknown command is FLOW_MOD_FAILED/BAD_COMMAND; undefined flag bits
    /// FLOW_MOD_FAILED/BAD_FLAGS; table OFPTT_ALL with add or modify
    /// FLOW_MOD_FAILED/BAD_TABLE_ID (spec §7.3.4.1: OFPTT_ALL is only valid
    /// for delete).
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use flow_mod_command as cmd;
        let cookie = r.u64("flow_mod: cookie")?;
        let cookie_mask = r.u64("flow_mod: cookie_mask")?;
        let table_id = r.u8("flow_mod: table_id")?;
        let command = r.u8("flow_mod: command")?;
        let idle_timeout = r.u16("flow_mod: idle_timeout")?;
        let hard_timeout = r.u16("flow_mod: hard_timeout")?;
        let priority = r.u16("flow_mod: priority")?;
        let buffer_id = r.u32("flow_mod: buffer_id")?;
        let out_port = r.u32("flow_mod: out_port")?;
        let out_group = r.u32("flow_mod: out_group")?;
        let flags = r.u16("flow_mod: flags")?;
        r.pad(2)?;
        let fail = |c, what| DecodeError::new(ErrorCode::FlowModFailed(c), what);
        if command > cmd::DELETE_STRICT {
            return Err(fail(FlowModFailedCode::BadCommand, "flow_mod: command"));
        }
        if flags & !flow_mod_flags::ALL != 0 {
            return Err(fail(FlowModFailedCode::BadFlags, "flow_mod: flags"));
        }
        if table_id == table_id::ALL && command <= cmd::MODIFY_STRICT {
            return Err(fail(
                FlowModFailedCode::BadTableId,
                "flow_mod: OFPTT_ALL with add/modify",
            ));
        }
        let match_ = Match::decode(r)?;
        let instructions = decode_instructions(r)?;
        Ok(FlowMod {
            cookie,
            cookie_mask,
            table_id,
            command,
            idle_timeout,
            hard_timeout,
            priority,
            buffer_id,
            out_port,
            out_group,
            flags,
            match_,
            instructions,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u64(self.cookie);
        w.put_u64(self.cookie_mask);
        w.put_u8(self.table_id);
        w.put_u8(self.command);
        w.put_u16(self.idle_timeout);
        w.put_u16(self.hard_timeout);
        w.put_u16(self.priority);
        w.put_u32(self.buffer_id);
        w.put_u32(self.out_port);
        w.put_u32(self.out_group);
        w.put_u16(self.flags);
        w.put_zeros(2);
        self.match_.encode(w);
        encode_instructions(&self.instructions, w);
    }
}

/// Every `ofp_port_config` bit the spec defines.
const PORT_CONFIG_ALL: u32 = crate::port::config::PORT_DOWN
    | crate::port::config::NO_RECV
    | crate::port::config::NO_FWD
    | crate::port::config::NO_PACKET_IN;
/// Every `ofp_port_features` bit the spec defines.
const PORT_FEATURES_ALL: u32 = 0xffff;

/// OFPT_PORT_MOD body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortMod {
    pub port_no: u32,
    /// Must match the port's address (checked by the switch: BAD_HW_ADDR).
    pub hw_addr: [u8; 6],
    /// New values of the config bits selected by `mask`.
    pub config: u32,
    pub mask: u32,
    /// Features to advertise; 0 leaves them unchanged.
    pub advertise: u32,
}

impl PortMod {
    pub const LEN: usize = 32;

    /// Checks: port 0, or above OFPP_MAX other than OFPP_LOCAL, is
    /// PORT_MOD_FAILED/BAD_PORT; mask bits outside the defined port config
    /// bits are BAD_CONFIG (config bits outside the mask are ignored, as the
    /// spec says); undefined advertise bits are BAD_ADVERTISE.
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let port_no = r.u32("port_mod: port_no")?;
        r.pad(4)?;
        let hw_addr = r.array("port_mod: hw_addr")?;
        r.pad(2)?;
        let config = r.u32("port_mod: config")?;
        let mask = r.u32("port_mod: mask")?;
        let advertise = r.u32("port_mod: advertise")?;
        r.pad(4)?;
        let fail = |c, what| DecodeError::new(ErrorCode::PortModFailed(c), what);
        if port_no == 0 || (port_no > port_no::MAX && port_no != port_no::LOCAL) {
            return Err(fail(PortModFailedCode::BadPort, "port_mod: port_no"));
        }
        if mask & !PORT_CONFIG_ALL != 0 {
            return Err(fail(PortModFailedCode::BadConfig, "port_mod: mask"));
        }
        if advertise & !PORT_FEATURES_ALL != 0 {
            return Err(fail(PortModFailedCode::BadAdvertise, "port_mod: advertise"));
        }
        Ok(PortMod {
            port_no,
            hw_addr,
            config,
            mask,
            advertise,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port_no);
        w.put_zeros(4);
        w.put_bytes(&self.hw_addr);
        w.put_zeros(2);
        w.put_u32(self.config);
        w.put_u32(self.mask);
        w.put_u32(self.advertise);
        w.put_zeros(4);
    }
}

/// `ofp_table_config`: in 1.3 only the deprecated 1.1/1.2 table-miss bits.
pub mod table_config {
    pub const DEPRECATED_MASK: u32 = 3;
}

/// OFPT_TABLE_MOD body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableMod {
    /// A table, or OFPTT_ALL.
    pub table_id: u8,
    pub config: u32,
}

impl TableMod {
    pub const LEN: usize = 8;

    /// Checks: config bits outside OFPTC_DEPRECATED_MASK are
    /// TABLE_MOD_FAILED/BAD_CONFIG (1.3 defines no other bit).
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let table_id = r.u8("table_mod: table_id")?;
        r.pad(3)?;
        let config = r.u32("table_mod: config")?;
        if config & !table_config::DEPRECATED_MASK != 0 {
            return Err(DecodeError::new(
                ErrorCode::TableModFailed(TableModFailedCode::BadConfig),
                "table_mod: config",
            ));
        }
        Ok(TableMod { table_id, config })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.table_id);
        w.put_zeros(3);
        w.put_u32(self.config);
    }
}

// ---------------------------------------------------------------------------
// Roles and asynchronous configuration
// ---------------------------------------------------------------------------

/// `ofp_controller_role`.
pub mod role {
    pub const NOCHANGE: u32 = 0;
    pub const EQUAL: u32 = 1;
    pub const MASTER: u32 = 2;
    pub const SLAVE: u32 = 3;
}

/// OFPT_ROLE_REQUEST / OFPT_ROLE_REPLY body (`ofp_role_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Role {
    /// One of [`role`].
    pub role: u32,
    /// Master election generation id (ignored for NOCHANGE and EQUAL).
    pub generation_id: u64,
}

impl Role {
    pub const LEN: usize = 16;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let role = r.u32("role: role")?;
        r.pad(4)?;
        Ok(Role {
            role,
            generation_id: r.u64("role: generation_id")?,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.role);
        w.put_zeros(4);
        w.put_u64(self.generation_id);
    }
}

/// OFPT_GET_ASYNC_REPLY / OFPT_SET_ASYNC body (`ofp_async_config`).
/// Index 0 of each pair applies to master/equal connections, index 1 to
/// slave connections; bit `n` set = messages with reason `n` are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AsyncConfig {
    pub packet_in_mask: [u32; 2],
    pub port_status_mask: [u32; 2],
    pub flow_removed_mask: [u32; 2],
}

impl AsyncConfig {
    pub const LEN: usize = 24;

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let mut pair = |what| -> Result<[u32; 2], DecodeError> { Ok([r.u32(what)?, r.u32(what)?]) };
        Ok(AsyncConfig {
            packet_in_mask: pair("async: packet_in_mask")?,
            port_status_mask: pair("async: port_status_mask")?,
            flow_removed_mask: pair("async: flow_removed_mask")?,
        })
    }

    fn encode(&self, w: &mut Vec<u8>) {
        for m in [
            self.packet_in_mask,
            self.port_status_mask,
            self.flow_removed_mask,
        ] {
            w.put_u32(m[0]);
            w.put_u32(m[1]);
        }
    }
}

// ---------------------------------------------------------------------------
// The message enum
// ---------------------------------------------------------------------------

/// Every OpenFlow 1.3 message, one variant per OFPT_* type. Variants without
/// a payload have an empty body on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Hello(Hello),
    Error(ErrorMsg),
    EchoRequest(Echo),
    EchoReply(Echo),
    Experimenter(Experimenter),
    FeaturesRequest,
    FeaturesReply(FeaturesReply),
    GetConfigRequest,
    GetConfigReply(SwitchConfig),
    SetConfig(SwitchConfig),
    PacketIn(PacketIn),
    FlowRemoved(FlowRemoved),
    PortStatus(PortStatus),
    PacketOut(PacketOut),
    FlowMod(FlowMod),
    GroupMod(GroupMod),
    PortMod(PortMod),
    TableMod(TableMod),
    MultipartRequest(MultipartRequest),
    MultipartReply(MultipartReply),
    BarrierRequest,
    BarrierReply,
    QueueGetConfigRequest(QueueGetConfigRequest),
    QueueGetConfigReply(QueueGetConfigReply),
    RoleRequest(Role),
    RoleReply(Role),
    GetAsyncRequest,
    GetAsyncReply(AsyncConfig),
    SetAsync(AsyncConfig),
    MeterMod(MeterMod),
}

/// Body size rule of one message type.
enum BodyLen {
    Exactly(usize),
    AtLeast(usize),
}

impl Message {
    /// The OFPT_* number of this message.
    pub fn msg_type(&self) -> u8 {
        use msg_type as t;
        match self {
            Message::Hello(_) => t::HELLO,
            Message::Error(_) => t::ERROR,
            Message::EchoRequest(_) => t::ECHO_REQUEST,
            Message::EchoReply(_) => t::ECHO_REPLY,
            Message::Experimenter(_) => t::EXPERIMENTER,
            Message::FeaturesRequest => t::FEATURES_REQUEST,
            Message::FeaturesReply(_) => t::FEATURES_REPLY,
            Message::GetConfigRequest => t::GET_CONFIG_REQUEST,
            Message::GetConfigReply(_) => t::GET_CONFIG_REPLY,
            Message::SetConfig(_) => t::SET_CONFIG,
            Message::PacketIn(_) => t::PACKET_IN,
            Message::FlowRemoved(_) => t::FLOW_REMOVED,
            Message::PortStatus(_) => t::PORT_STATUS,
            Message::PacketOut(_) => t::PACKET_OUT,
            Message::FlowMod(_) => t::FLOW_MOD,
            Message::GroupMod(_) => t::GROUP_MOD,
            Message::PortMod(_) => t::PORT_MOD,
            Message::TableMod(_) => t::TABLE_MOD,
            Message::MultipartRequest(_) => t::MULTIPART_REQUEST,
            Message::MultipartReply(_) => t::MULTIPART_REPLY,
            Message::BarrierRequest => t::BARRIER_REQUEST,
            Message::BarrierReply => t::BARRIER_REPLY,
            Message::QueueGetConfigRequest(_) => t::QUEUE_GET_CONFIG_REQUEST,
            Message::QueueGetConfigReply(_) => t::QUEUE_GET_CONFIG_REPLY,
            Message::RoleRequest(_) => t::ROLE_REQUEST,
            Message::RoleReply(_) => t::ROLE_REPLY,
            Message::GetAsyncRequest => t::GET_ASYNC_REQUEST,
            Message::GetAsyncReply(_) => t::GET_ASYNC_REPLY,
            Message::SetAsync(_) => t::SET_ASYNC,
            Message::MeterMod(_) => t::METER_MOD,
        }
    }

    /// The body length rule of a message type, `None` for unknown types.
    /// Minimums count the fixed part only (plus the smallest `ofp_match`
    /// where a match follows); the nested decoders check the rest.
    fn body_len(ty: u8) -> Option<BodyLen> {
        use msg_type as t;
        use BodyLen::*;
        Some(match ty {
            t::HELLO | t::ECHO_REQUEST | t::ECHO_REPLY => AtLeast(0),
            t::ERROR => AtLeast(4),
            t::EXPERIMENTER => AtLeast(8),
            t::FEATURES_REQUEST
            | t::GET_CONFIG_REQUEST
            | t::BARRIER_REQUEST
            | t::BARRIER_REPLY
            | t::GET_ASYNC_REQUEST => Exactly(0),
            t::FEATURES_REPLY => Exactly(FeaturesReply::LEN),
            t::GET_CONFIG_REPLY | t::SET_CONFIG => Exactly(SwitchConfig::LEN),
            t::PACKET_IN => AtLeast(PacketIn::MIN_LEN),
            t::FLOW_REMOVED => AtLeast(FlowRemoved::MIN_LEN),
            t::PORT_STATUS => Exactly(PortStatus::LEN),
            t::PACKET_OUT => AtLeast(PacketOut::MIN_LEN),
            t::FLOW_MOD => AtLeast(FlowMod::MIN_LEN),
            t::GROUP_MOD => AtLeast(crate::group::GROUP_MOD_LEN),
            t::PORT_MOD => Exactly(PortMod::LEN),
            t::TABLE_MOD => Exactly(TableMod::LEN),
            t::MULTIPART_REQUEST | t::MULTIPART_REPLY => AtLeast(8),
            t::QUEUE_GET_CONFIG_REQUEST => Exactly(8),
            t::QUEUE_GET_CONFIG_REPLY => AtLeast(8),
            t::ROLE_REQUEST | t::ROLE_REPLY => Exactly(Role::LEN),
            t::GET_ASYNC_REPLY | t::SET_ASYNC => Exactly(AsyncConfig::LEN),
            t::METER_MOD => AtLeast(crate::meter::METER_MOD_LEN),
            _ => return None,
        })
    }

    /// Decode the body (the bytes after `ofp_header`) of a message of type
    /// `ty`. `version` is the header's version, kept only by HELLO; the caller
    /// has already refused other versions for other types.
    pub fn decode_body(ty: u8, version: u8, body: &[u8]) -> Result<Self, DecodeError> {
        use msg_type as t;
        let rule = Self::body_len(ty)
            .ok_or_else(|| DecodeError::bad_request(BadRequestCode::BadType, "message: type"))?;
        let ok = match rule {
            BodyLen::Exactly(n) => body.len() == n,
            BodyLen::AtLeast(n) => body.len() >= n,
        };
        if !ok {
            return Err(DecodeError::bad_len("message: body length for type"));
        }
        let r = &mut Reader::message(body);
        let m = match ty {
            t::HELLO => Message::Hello(Hello::decode(version, r)?),
            t::ERROR => Message::Error(ErrorMsg::decode(r)?),
            t::ECHO_REQUEST => Message::EchoRequest(Echo {
                data: r.rest().to_vec(),
            }),
            t::ECHO_REPLY => Message::EchoReply(Echo {
                data: r.rest().to_vec(),
            }),
            t::EXPERIMENTER => Message::Experimenter(Experimenter {
                experimenter: r.u32("experimenter: experimenter")?,
                exp_type: r.u32("experimenter: exp_type")?,
                data: r.rest().to_vec(),
            }),
            t::FEATURES_REQUEST => Message::FeaturesRequest,
            t::FEATURES_REPLY => Message::FeaturesReply(FeaturesReply::decode(r)?),
            t::GET_CONFIG_REQUEST => Message::GetConfigRequest,
            t::GET_CONFIG_REPLY => Message::GetConfigReply(SwitchConfig::decode(r)?),
            t::SET_CONFIG => {
                let c = SwitchConfig::decode(r)?;
                c.validate_set()?;
                Message::SetConfig(c)
            }
            t::PACKET_IN => Message::PacketIn(PacketIn::decode(r)?),
            t::FLOW_REMOVED => Message::FlowRemoved(FlowRemoved::decode(r)?),
            t::PORT_STATUS => Message::PortStatus(PortStatus::decode(r)?),
            t::PACKET_OUT => Message::PacketOut(PacketOut::decode(r)?),
            t::FLOW_MOD => Message::FlowMod(FlowMod::decode(r)?),
            t::GROUP_MOD => Message::GroupMod(GroupMod::decode(r)?),
            t::PORT_MOD => Message::PortMod(PortMod::decode(r)?),
            t::TABLE_MOD => Message::TableMod(TableMod::decode(r)?),
            t::MULTIPART_REQUEST => Message::MultipartRequest(MultipartRequest::decode(r)?),
            t::MULTIPART_REPLY => Message::MultipartReply(MultipartReply::decode(r)?),
            t::BARRIER_REQUEST => Message::BarrierRequest,
            t::BARRIER_REPLY => Message::BarrierReply,
            t::QUEUE_GET_CONFIG_REQUEST => {
                Message::QueueGetConfigRequest(QueueGetConfigRequest::decode(r)?)
            }
            t::QUEUE_GET_CONFIG_REPLY => {
                Message::QueueGetConfigReply(QueueGetConfigReply::decode(r)?)
            }
            t::ROLE_REQUEST => {
                let role = Role::decode(r)?;
                if role.role > role::SLAVE {
                    return Err(DecodeError::new(
                        ErrorCode::RoleRequestFailed(RoleRequestFailedCode::BadRole),
                        "role_request: role",
                    ));
                }
                Message::RoleRequest(role)
            }
            t::ROLE_REPLY => Message::RoleReply(Role::decode(r)?),
            t::GET_ASYNC_REQUEST => Message::GetAsyncRequest,
            t::GET_ASYNC_REPLY => Message::GetAsyncReply(AsyncConfig::decode(r)?),
            t::SET_ASYNC => Message::SetAsync(AsyncConfig::decode(r)?),
            t::METER_MOD => Message::MeterMod(MeterMod::decode(r)?),
            _ => {
                return Err(DecodeError::bad_request(
                    BadRequestCode::BadType,
                    "message: type",
                ))
            }
        };
        r.finish("message: trailing bytes")?;
        Ok(m)
    }

    /// Encode the body (the bytes after `ofp_header`).
    pub fn encode_body(&self, w: &mut Vec<u8>) {
        match self {
            Message::Hello(h) => h.encode(w),
            Message::Error(e) => e.encode(w),
            Message::EchoRequest(e) | Message::EchoReply(e) => w.put_bytes(&e.data),
            Message::Experimenter(e) => {
                w.put_u32(e.experimenter);
                w.put_u32(e.exp_type);
                w.put_bytes(&e.data);
            }
            Message::FeaturesRequest
            | Message::GetConfigRequest
            | Message::BarrierRequest
            | Message::BarrierReply
            | Message::GetAsyncRequest => {}
            Message::FeaturesReply(f) => f.encode(w),
            Message::GetConfigReply(c) | Message::SetConfig(c) => c.encode(w),
            Message::PacketIn(p) => p.encode(w),
            Message::FlowRemoved(f) => f.encode(w),
            Message::PortStatus(p) => p.encode(w),
            Message::PacketOut(p) => p.encode(w),
            Message::FlowMod(f) => f.encode(w),
            Message::GroupMod(g) => g.encode(w),
            Message::PortMod(p) => p.encode(w),
            Message::TableMod(t) => t.encode(w),
            Message::MultipartRequest(m) => m.encode(w),
            Message::MultipartReply(m) => m.encode(w),
            Message::QueueGetConfigRequest(q) => q.encode(w),
            Message::QueueGetConfigReply(q) => q.encode(w),
            Message::RoleRequest(r) | Message::RoleReply(r) => r.encode(w),
            Message::GetAsyncReply(a) | Message::SetAsync(a) => a.encode(w),
            Message::MeterMod(m) => m.encode(w),
        }
    }
}

/// One OpenFlow 1.3 message: header fields plus typed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfpMessage {
    pub xid: u32,
    pub body: Message,
}

impl OfpMessage {
    pub fn new(xid: u32, body: Message) -> Self {
        OfpMessage { xid, body }
    }

    /// Decode exactly one message from `buf` (which must hold exactly the
    /// message: framing is done by the caller, see `header::frame_len`).
    ///
    /// Order of checks: header present and its length equal to the buffer
    /// (BAD_LEN), version (BAD_VERSION, except for HELLO), type (BAD_TYPE),
    /// body length for the type (BAD_LEN), then the body itself.
    pub fn decode(buf: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::message(buf);
        let h = Header::decode(&mut r)?;
        if usize::from(h.length) != buf.len() {
            return Err(DecodeError::bad_len("header: length differs from message"));
        }
        if h.version != OFP_VERSION && h.msg_type != msg_type::HELLO {
            return Err(DecodeError::bad_request(
                BadRequestCode::BadVersion,
                "header: version",
            ));
        }
        let body = Message::decode_body(h.msg_type, h.version, r.rest())?;
        Ok(OfpMessage { xid: h.xid, body })
    }

    /// Encode with a correct header: version 4 (a HELLO's own version for
    /// HELLO) and the computed length. Messages must stay below 64 KiB (the
    /// length field is 16 bits); callers truncate packet data to fit.
    pub fn encode(&self) -> Vec<u8> {
        let version = match &self.body {
            Message::Hello(h) => h.version,
            _ => OFP_VERSION,
        };
        let mut w = Vec::with_capacity(64);
        Header {
            version,
            msg_type: self.body.msg_type(),
            length: 0,
            xid: self.xid,
        }
        .encode(&mut w);
        self.body.encode_body(&mut w);
        let len = w.len().min(usize::from(u16::MAX)) as u16;
        w.patch_u16(2, len);
        w
    }
}

/// proptest strategies for every message type, shared with other modules'
/// tests (e.g. a connection codec).
#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use crate::group::Bucket;
    use crate::meter::arb::any_meter_mod;
    use crate::port::Port;
    use crate::queue::arb::any_reply as any_queue_reply;
    use proptest::collection::vec;
    use proptest::prelude::*;

    pub fn any_match() -> impl Strategy<Value = Match> {
        crate::oxm::arb::any_match()
    }

    pub fn any_actions() -> impl Strategy<Value = Vec<Action>> {
        crate::action::arb::any_actions()
    }

    pub fn any_instructions() -> impl Strategy<Value = Vec<Instruction>> {
        crate::instruction::arb::any_instructions()
    }

    fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        vec(any::<u8>(), 0..max)
    }

    fn any_hello() -> impl Strategy<Value = Hello> {
        let elem = prop_oneof![
            vec(any::<u32>(), 0..3).prop_map(HelloElement::VersionBitmap),
            (2u16.., bytes(12))
                .prop_map(|(elem_type, data)| HelloElement::Unknown { elem_type, data }),
        ];
        (any::<u8>(), vec(elem, 0..3)).prop_map(|(version, elements)| Hello { version, elements })
    }

    fn any_error() -> impl Strategy<Value = ErrorMsg> {
        prop_oneof![
            (0u16..0xffff, any::<u16>(), bytes(70)).prop_map(|(err_type, code, data)| {
                ErrorMsg::Standard {
                    err_type,
                    code,
                    data,
                }
            }),
            (any::<u16>(), any::<u32>(), bytes(20)).prop_map(|(exp_type, experimenter, data)| {
                ErrorMsg::Experimenter {
                    exp_type,
                    experimenter,
                    data,
                }
            }),
        ]
    }

    fn any_port() -> impl Strategy<Value = Port> {
        (
            any::<u32>(),
            any::<[u8; 6]>(),
            "[a-z0-9]{0,15}",
            any::<[u32; 8]>(),
        )
            .prop_map(|(port_no, hw_addr, name, v)| Port {
                port_no,
                hw_addr,
                name,
                config: v[0],
                state: v[1],
                curr: v[2],
                advertised: v[3],
                supported: v[4],
                peer: v[5],
                curr_speed: v[6],
                max_speed: v[7],
            })
    }

    fn any_packet_in() -> impl Strategy<Value = PacketIn> {
        (
            any::<u32>(),
            any::<u16>(),
            any::<u8>(),
            any::<u8>(),
            any::<u64>(),
            any_match(),
            bytes(64),
        )
            .prop_map(
                |(buffer_id, total_len, reason, table_id, cookie, match_, data)| PacketIn {
                    buffer_id,
                    total_len,
                    reason,
                    table_id,
                    cookie,
                    match_,
                    data,
                },
            )
    }

    fn any_flow_removed() -> impl Strategy<Value = FlowRemoved> {
        (
            (any::<u64>(), any::<u16>(), any::<u8>(), any::<u8>()),
            (any::<u32>(), any::<u32>(), any::<u16>(), any::<u16>()),
            (any::<u64>(), any::<u64>(), any_match()),
        )
            .prop_map(
                |(
                    (cookie, priority, reason, table_id),
                    (duration_sec, duration_nsec, idle_timeout, hard_timeout),
                    (packet_count, byte_count, match_),
                )| FlowRemoved {
                    cookie,
                    priority,
                    reason,
                    table_id,
                    duration_sec,
                    duration_nsec,
                    idle_timeout,
                    hard_timeout,
                    packet_count,
                    byte_count,
                    match_,
                },
            )
    }

    fn any_in_port() -> impl Strategy<Value = u32> {
        prop_oneof![
            1..=port_no::MAX,
            Just(port_no::LOCAL),
            Just(port_no::CONTROLLER)
        ]
    }

    fn any_packet_out() -> impl Strategy<Value = PacketOut> {
        (any::<u32>(), any_in_port(), any_actions(), bytes(64)).prop_map(
            |(buffer_id, in_port, actions, data)| PacketOut {
                buffer_id,
                in_port,
                actions,
                data,
            },
        )
    }

    pub fn any_flow_mod() -> impl Strategy<Value = FlowMod> {
        (
            (any::<u64>(), any::<u64>(), 0u8..=4, any::<u8>()),
            (any::<u16>(), any::<u16>(), any::<u16>(), any::<u32>()),
            (any::<u32>(), any::<u32>(), 0u16..=flow_mod_flags::ALL),
            (any_match(), any_instructions()),
        )
            .prop_map(
                |(
                    (cookie, cookie_mask, command, table),
                    (idle_timeout, hard_timeout, priority, buffer_id),
                    (out_port, out_group, flags),
                    (match_, instructions),
                )| FlowMod {
                    cookie,
                    cookie_mask,
                    // OFPTT_ALL only with the delete commands
                    table_id: if command < flow_mod_command::DELETE {
                        table.min(table_id::MAX)
                    } else {
                        table
                    },
                    command,
                    idle_timeout,
                    hard_timeout,
                    priority,
                    buffer_id,
                    out_port,
                    out_group,
                    flags,
                    match_,
                    instructions,
                },
            )
    }

    fn any_bucket() -> impl Strategy<Value = Bucket> {
        (any::<u16>(), any::<u32>(), any::<u32>(), any_actions()).prop_map(
            |(weight, watch_port, watch_group, actions)| Bucket {
                weight,
                watch_port,
                watch_group,
                actions,
            },
        )
    }

    pub fn any_group_mod() -> impl Strategy<Value = GroupMod> {
        (
            0u16..=2,
            0u8..=3,
            0..=crate::group::group_id::MAX,
            vec(any_bucket(), 0..4),
        )
            .prop_map(|(command, group_type, group_id, buckets)| GroupMod {
                command,
                group_type,
                group_id,
                buckets,
            })
    }

    fn any_port_mod() -> impl Strategy<Value = PortMod> {
        (
            prop_oneof![1..=port_no::MAX, Just(port_no::LOCAL)],
            any::<[u8; 6]>(),
            any::<u32>(),
            0..=PORT_CONFIG_ALL,
            0..=PORT_FEATURES_ALL,
        )
            .prop_map(|(port_no, hw_addr, config, mask, advertise)| PortMod {
                port_no,
                hw_addr,
                config,
                mask: mask & PORT_CONFIG_ALL,
                advertise,
            })
    }

    fn any_switch_config() -> impl Strategy<Value = SwitchConfig> {
        (0u16..=3, prop_oneof![0..=cml::MAX, Just(cml::NO_BUFFER)]).prop_map(
            |(flags, miss_send_len)| SwitchConfig {
                flags,
                miss_send_len,
            },
        )
    }

    fn any_async() -> impl Strategy<Value = AsyncConfig> {
        any::<[u32; 6]>().prop_map(|v| AsyncConfig {
            packet_in_mask: [v[0], v[1]],
            port_status_mask: [v[2], v[3]],
            flow_removed_mask: [v[4], v[5]],
        })
    }

    fn any_features() -> impl Strategy<Value = FeaturesReply> {
        (
            any::<u64>(),
            any::<u32>(),
            any::<u8>(),
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
        )
            .prop_map(
                |(datapath_id, n_buffers, n_tables, auxiliary_id, capabilities, reserved)| {
                    FeaturesReply {
                        datapath_id,
                        n_buffers,
                        n_tables,
                        auxiliary_id,
                        capabilities,
                        reserved,
                    }
                },
            )
    }

    /// Any valid message body (one the decoder accepts).
    pub fn any_body() -> impl Strategy<Value = Message> {
        prop_oneof![
            any_hello().prop_map(Message::Hello),
            any_error().prop_map(Message::Error),
            bytes(32).prop_map(|data| Message::EchoRequest(Echo { data })),
            bytes(32).prop_map(|data| Message::EchoReply(Echo { data })),
            (any::<u32>(), any::<u32>(), bytes(32)).prop_map(|(experimenter, exp_type, data)| {
                Message::Experimenter(Experimenter {
                    experimenter,
                    exp_type,
                    data,
                })
            }),
            Just(Message::FeaturesRequest),
            any_features().prop_map(Message::FeaturesReply),
            Just(Message::GetConfigRequest),
            (any::<u16>(), any::<u16>()).prop_map(|(flags, miss_send_len)| {
                Message::GetConfigReply(SwitchConfig {
                    flags,
                    miss_send_len,
                })
            }),
            any_switch_config().prop_map(Message::SetConfig),
            any_packet_in().prop_map(Message::PacketIn),
            any_flow_removed().prop_map(Message::FlowRemoved),
            (any::<u8>(), any_port())
                .prop_map(|(reason, desc)| Message::PortStatus(PortStatus { reason, desc })),
            any_packet_out().prop_map(Message::PacketOut),
            any_flow_mod().prop_map(Message::FlowMod),
            any_group_mod().prop_map(Message::GroupMod),
            any_port_mod().prop_map(Message::PortMod),
            (any::<u8>(), 0u32..=3)
                .prop_map(|(table_id, config)| Message::TableMod(TableMod { table_id, config })),
            crate::multipart::arb::any_multipart_request().prop_map(Message::MultipartRequest),
            crate::multipart::arb::any_multipart_reply().prop_map(Message::MultipartReply),
            Just(Message::BarrierRequest),
            Just(Message::BarrierReply),
            prop_oneof![1..=port_no::MAX, Just(port_no::ANY)]
                .prop_map(|port| Message::QueueGetConfigRequest(QueueGetConfigRequest { port })),
            any_queue_reply().prop_map(Message::QueueGetConfigReply),
            (0u32..=3, any::<u64>()).prop_map(|(role, generation_id)| Message::RoleRequest(Role {
                role,
                generation_id
            })),
            (any::<u32>(), any::<u64>()).prop_map(|(role, generation_id)| Message::RoleReply(
                Role {
                    role,
                    generation_id
                }
            )),
            Just(Message::GetAsyncRequest),
            any_async().prop_map(Message::GetAsyncReply),
            any_async().prop_map(Message::SetAsync),
            any_meter_mod().prop_map(Message::MeterMod),
        ]
    }

    /// Any valid message with any xid.
    pub fn any_message() -> impl Strategy<Value = OfpMessage> {
        (any::<u32>(), any_body()).prop_map(|(xid, body)| OfpMessage { xid, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{GroupModFailedCode, MeterModFailedCode, QueueOpFailedCode};
    use crate::group::{group_type, Bucket};
    use crate::meter::MeterBand;
    use crate::oxm::OxmField;
    use crate::queue::{PacketQueue, QueueProp};
    use proptest::prelude::*;

    /// Decode `hex_str` to `want` and encode `want` back to the same bytes.
    fn vector(hex_str: &str, want: OfpMessage) {
        let bytes = hex::decode(hex_str).unwrap();
        assert_eq!(
            OfpMessage::decode(&bytes).unwrap(),
            want,
            "decode {hex_str}"
        );
        assert_eq!(hex::encode(want.encode()), hex_str, "encode {want:?}");
    }

    fn err(bytes: &[u8]) -> ErrorCode {
        OfpMessage::decode(bytes).unwrap_err().code
    }

    fn err_hex(h: &str) -> ErrorCode {
        err(&hex::decode(h).unwrap())
    }

    fn msg(xid: u32, body: Message) -> OfpMessage {
        OfpMessage { xid, body }
    }

    fn in_port_1() -> Match {
        Match {
            fields: vec![OxmField::InPort(1)],
        }
    }

    // Vectors below come from os-ken 's serializer (controller-to-switch
    // messages) or were parsed back by os-ken's parser (switch-to-controller
    // messages, which os-ken cannot serialize).

    #[test]
    fn hello() {
        vector(
            "0400000800000001",
            msg(
                1,
                Message::Hello(Hello {
                    version: 4,
                    elements: vec![],
                }),
            ),
        );
        // with a version bitmap announcing 1.3 only
        vector(
            "04000010000000010001000800000010",
            msg(1, Message::Hello(Hello::ofp13())),
        );
    }

    #[test]
    fn hello_unknown_element_and_other_version() {
        // version 6 hello: an unknown element with a 1-byte body (padded to
        // 8), then a bitmap for 1.0 and 1.3
        let want = msg(
            9,
            Message::Hello(Hello {
                version: 6,
                elements: vec![
                    HelloElement::Unknown {
                        elem_type: 2,
                        data: vec![7],
                    },
                    HelloElement::VersionBitmap(vec![0x12]),
                ],
            }),
        );
        vector(
            "060000180000000900020005070000000001000800000012",
            want.clone(),
        );
        // the last element's padding may be missing
        let short = hex::decode("0400000e00000001000100060000").unwrap();
        assert!(OfpMessage::decode(&short).is_err()); // bitmap of 2 bytes
        let short = hex::decode("0400000d000000010002000507").unwrap();
        assert_eq!(
            OfpMessage::decode(&short).unwrap().body,
            Message::Hello(Hello {
                version: 4,
                elements: vec![HelloElement::Unknown {
                    elem_type: 2,
                    data: vec![7]
                }],
            })
        );
        let Message::Hello(hello) = want.body else {
            unreachable!()
        };
        assert!(hello.supports(4));
        assert!(hello.supports(1));
        assert!(!hello.supports(5));
        assert!(Hello {
            version: 5,
            elements: vec![]
        }
        .supports(4));
        assert!(!Hello {
            version: 1,
            elements: vec![]
        }
        .supports(4));
    }

    #[test]
    fn error() {
        vector(
            "0401001400000009000100060405000900000001",
            msg(
                9,
                Message::Error(ErrorMsg::Standard {
                    err_type: 1,
                    code: 6,
                    data: hex::decode("0405000900000001").unwrap(),
                }),
            ),
        );
    }

    #[test]
    fn echo() {
        vector(
            "0402000c0000000270696e67",
            msg(
                2,
                Message::EchoRequest(Echo {
                    data: b"ping".to_vec(),
                }),
            ),
        );
        vector(
            "0403000c00000003706f6e67",
            msg(
                3,
                Message::EchoReply(Echo {
                    data: b"pong".to_vec(),
                }),
            ),
        );
    }

    #[test]
    fn experimenter() {
        vector(
            "04040013000000040000232000000007010203",
            msg(
                4,
                Message::Experimenter(Experimenter {
                    experimenter: 0x2320,
                    exp_type: 7,
                    data: vec![1, 2, 3],
                }),
            ),
        );
    }

    #[test]
    fn features() {
        vector("0405000800000005", msg(5, Message::FeaturesRequest));
        vector(
            "04060020000000010000000000000abc00000100fe0000000000004f00000000",
            msg(
                1,
                Message::FeaturesReply(FeaturesReply {
                    datapath_id: 0xabc,
                    n_buffers: 256,
                    n_tables: 254,
                    auxiliary_id: 0,
                    capabilities: capabilities::FLOW_STATS
                        | capabilities::TABLE_STATS
                        | capabilities::PORT_STATS
                        | capabilities::GROUP_STATS
                        | capabilities::QUEUE_STATS,
                    reserved: 0,
                }),
            ),
        );
    }

    #[test]
    fn switch_config() {
        vector("0407000800000006", msg(6, Message::GetConfigRequest));
        vector(
            "0408000c000000020000ffff",
            msg(
                2,
                Message::GetConfigReply(SwitchConfig {
                    flags: config_flags::FRAG_NORMAL,
                    miss_send_len: cml::NO_BUFFER,
                }),
            ),
        );
        vector(
            "0409000c0000000700010080",
            msg(
                7,
                Message::SetConfig(SwitchConfig {
                    flags: config_flags::FRAG_DROP,
                    miss_send_len: 128,
                }),
            ),
        );
    }

    #[test]
    fn packet_in() {
        vector(
            "040a002e00000003ffffffff003c010200000000deadbeef\
             0001000c800000040000000100000000000001020304",
            msg(
                3,
                Message::PacketIn(PacketIn {
                    buffer_id: NO_BUFFER,
                    total_len: 60,
                    reason: packet_in_reason::ACTION,
                    table_id: 2,
                    cookie: 0xdeadbeef,
                    match_: in_port_1(),
                    data: vec![1, 2, 3, 4],
                }),
            ),
        );
    }

    #[test]
    fn flow_removed() {
        vector(
            "040b00400000000400000000000000070064020100000005000001f4000a001e\
             000000000000000c0000000000000d480001000c800000040000000100000000",
            msg(
                4,
                Message::FlowRemoved(FlowRemoved {
                    cookie: 7,
                    priority: 100,
                    reason: flow_removed_reason::DELETE,
                    table_id: 1,
                    duration_sec: 5,
                    duration_nsec: 500,
                    idle_timeout: 10,
                    hard_timeout: 30,
                    packet_count: 12,
                    byte_count: 3400,
                    match_: in_port_1(),
                }),
            ),
        );
    }

    #[test]
    fn port_status() {
        use crate::port::{config, features, state};
        vector(
            "040c005000000005020000000000000000000003000000000200000000030000\
             7665746833000000000000000000000000000020000000040000084000000000\
             00000000000000000098968000989680",
            msg(
                5,
                Message::PortStatus(PortStatus {
                    reason: port_reason::MODIFY,
                    desc: Port {
                        port_no: 3,
                        hw_addr: [2, 0, 0, 0, 0, 3],
                        name: "veth3".into(),
                        config: config::NO_FWD,
                        state: state::LIVE,
                        curr: features::F10GB_FD | features::COPPER,
                        advertised: 0,
                        supported: 0,
                        peer: 0,
                        curr_speed: 10_000_000,
                        max_speed: 10_000_000,
                    },
                }),
            ),
        );
    }

    #[test]
    fn packet_out() {
        vector(
            "040d001800000008fffffffffffffffd0000000000000000",
            msg(
                8,
                Message::PacketOut(PacketOut {
                    buffer_id: NO_BUFFER,
                    in_port: port_no::CONTROLLER,
                    actions: vec![],
                    data: vec![],
                }),
            ),
        );
        vector(
            "040d001b00000008fffffffffffffffe0000000000000000aabbcc",
            msg(
                8,
                Message::PacketOut(PacketOut {
                    buffer_id: NO_BUFFER,
                    in_port: port_no::LOCAL,
                    actions: vec![],
                    data: vec![0xaa, 0xbb, 0xcc],
                }),
            ),
        );
    }

    #[test]
    fn packet_out_with_action() {
        vector(
            "040d002b00000008fffffffffffffffd0010000000000000\
             0000001000000002ffe5000000000000aabbcc",
            msg(
                8,
                Message::PacketOut(PacketOut {
                    buffer_id: NO_BUFFER,
                    in_port: port_no::CONTROLLER,
                    actions: vec![Action::Output {
                        port: 2,
                        max_len: cml::MAX,
                    }],
                    data: vec![0xaa, 0xbb, 0xcc],
                }),
            ),
        );
    }

    #[test]
    fn group_mod_with_actions() {
        let bucket = |port, actions| Bucket {
            weight: 0,
            watch_port: port,
            watch_group: crate::group::group_id::ANY,
            actions,
        };
        vector(
            "040f00580000000a0000030000000005\
             0020000000000001ffffffff00000000000000100000000100000000000000000\
             028000000000002ffffffff00000000000000100000000200000000000000000\
             012000800000000",
            msg(
                10,
                Message::GroupMod(GroupMod {
                    command: crate::group::command::ADD,
                    group_type: group_type::FF,
                    group_id: 5,
                    buckets: vec![
                        bucket(
                            1,
                            vec![Action::Output {
                                port: 1,
                                max_len: 0,
                            }],
                        ),
                        bucket(
                            2,
                            vec![
                                Action::Output {
                                    port: 2,
                                    max_len: 0,
                                },
                                Action::PopVlan,
                            ],
                        ),
                    ],
                }),
            ),
        );
    }

    #[test]
    fn flow_mod() {
        vector(
            "040e004000000009112233445566778800000000000000ff0100000a001e0064\
             ffffffffffffffffffffffff000300000001000c800000040000000100000000",
            msg(
                9,
                Message::FlowMod(FlowMod {
                    cookie: 0x1122334455667788,
                    cookie_mask: 0xff,
                    table_id: 1,
                    command: flow_mod_command::ADD,
                    idle_timeout: 10,
                    hard_timeout: 30,
                    priority: 100,
                    buffer_id: NO_BUFFER,
                    out_port: port_no::ANY,
                    out_group: crate::group::group_id::ANY,
                    flags: flow_mod_flags::SEND_FLOW_REM | flow_mod_flags::CHECK_OVERLAP,
                    match_: in_port_1(),
                    instructions: vec![],
                }),
            ),
        );
    }

    #[test]
    fn flow_mod_with_instructions() {
        vector(
            "040e006800000009000000000000000100000000000000000000000000000001\
             ffffffffffffffffffffffff0000000000010012800000040000000180000a02\
             0800000000000000000400180000000000000010000000020000000000000000\
             0001000801000000",
            msg(
                9,
                Message::FlowMod(FlowMod {
                    cookie: 1,
                    cookie_mask: 0,
                    table_id: 0,
                    command: flow_mod_command::ADD,
                    idle_timeout: 0,
                    hard_timeout: 0,
                    priority: 1,
                    buffer_id: NO_BUFFER,
                    out_port: port_no::ANY,
                    out_group: crate::group::group_id::ANY,
                    flags: 0,
                    match_: Match {
                        fields: vec![OxmField::InPort(1), OxmField::EthType(0x0800)],
                    },
                    instructions: vec![
                        Instruction::ApplyActions(vec![Action::Output {
                            port: 2,
                            max_len: 0,
                        }]),
                        Instruction::GotoTable(1),
                    ],
                }),
            ),
        );
    }

    #[test]
    fn group_mod() {
        vector(
            "040f00200000000a000001000000000500100002ffffffffffffffff00000000",
            msg(
                10,
                Message::GroupMod(GroupMod {
                    command: crate::group::command::ADD,
                    group_type: group_type::SELECT,
                    group_id: 5,
                    buckets: vec![Bucket {
                        weight: 2,
                        watch_port: port_no::ANY,
                        watch_group: crate::group::group_id::ANY,
                        actions: vec![],
                    }],
                }),
            ),
        );
    }

    #[test]
    fn port_mod() {
        use crate::port::{config, features};
        vector(
            "041000280000000b000000030000000002000000000300000000000100000021\
             0000004000000000",
            msg(
                11,
                Message::PortMod(PortMod {
                    port_no: 3,
                    hw_addr: [2, 0, 0, 0, 0, 3],
                    config: config::PORT_DOWN,
                    mask: config::PORT_DOWN | config::NO_FWD,
                    advertise: features::F10GB_FD,
                }),
            ),
        );
    }

    #[test]
    fn table_mod() {
        vector(
            "041100100000000c0200000000000003",
            msg(
                12,
                Message::TableMod(TableMod {
                    table_id: 2,
                    config: table_config::DEPRECATED_MASK,
                }),
            ),
        );
    }

    #[test]
    fn barrier() {
        vector("041400080000000d", msg(13, Message::BarrierRequest));
        vector("0415000800000006", msg(6, Message::BarrierReply));
    }

    #[test]
    fn queue_get_config() {
        vector(
            "041600100000000e0000000100000000",
            msg(
                14,
                Message::QueueGetConfigRequest(QueueGetConfigRequest { port: 1 }),
            ),
        );
        vector(
            "041700400000000a000000010000000000000002000000010030000000000000\
             00010010000000000064000000000000ffff0010000000000000232000000000",
            msg(
                10,
                Message::QueueGetConfigReply(QueueGetConfigReply {
                    port: 1,
                    queues: vec![PacketQueue {
                        queue_id: 2,
                        port: 1,
                        properties: vec![
                            QueueProp::MinRate(100),
                            QueueProp::Experimenter {
                                experimenter: 0x2320,
                                data: vec![],
                            },
                        ],
                    }],
                }),
            ),
        );
    }

    #[test]
    fn role() {
        vector(
            "041800180000000f00000002000000000102030405060708",
            msg(
                15,
                Message::RoleRequest(Role {
                    role: role::MASTER,
                    generation_id: 0x0102030405060708,
                }),
            ),
        );
        vector(
            "041900180000000700000003000000000000000000000009",
            msg(
                7,
                Message::RoleReply(Role {
                    role: role::SLAVE,
                    generation_id: 9,
                }),
            ),
        );
    }

    #[test]
    fn async_config() {
        vector("041a000800000010", msg(16, Message::GetAsyncRequest));
        let a = AsyncConfig {
            packet_in_mask: [3, 1],
            port_status_mask: [7, 0],
            flow_removed_mask: [15, 2],
        };
        vector(
            "041b002000000008000000030000000100000007000000000000000f00000002",
            msg(8, Message::GetAsyncReply(a)),
        );
        vector(
            "041c002000000011000000030000000100000007000000000000000f00000002",
            msg(17, Message::SetAsync(a)),
        );
    }

    #[test]
    fn meter_mod() {
        vector(
            "041d004000000012000000050000000100010010000003e80000006400000000\
             00020010000007d0000000c801000000ffff001000000bb80000012c00002320",
            msg(
                18,
                Message::MeterMod(MeterMod {
                    command: crate::meter::command::ADD,
                    flags: crate::meter::flags::KBPS | crate::meter::flags::BURST,
                    meter_id: 1,
                    bands: vec![
                        MeterBand::Drop {
                            rate: 1000,
                            burst_size: 100,
                        },
                        MeterBand::DscpRemark {
                            rate: 2000,
                            burst_size: 200,
                            prec_level: 1,
                        },
                        MeterBand::Experimenter {
                            rate: 3000,
                            burst_size: 300,
                            experimenter: 0x2320,
                            data: vec![],
                        },
                    ],
                }),
            ),
        );
    }

    #[test]
    fn msg_type_numbers() {
        assert_eq!(Message::BarrierRequest.msg_type(), 20);
        assert_eq!(Message::GetAsyncRequest.msg_type(), 26);
        assert_eq!(
            Message::MeterMod(MeterMod {
                command: 0,
                flags: 0,
                meter_id: 1,
                bands: vec![]
            })
            .msg_type(),
            29
        );
    }

    // ---- one test per error code emitted here ----

    const BAD_LEN: ErrorCode = ErrorCode::BadRequest(BadRequestCode::BadLen);

    #[test]
    fn bad_len() {
        // header length differs from the buffer
        assert_eq!(err_hex("0405000900000005"), BAD_LEN);
        assert_eq!(err_hex("040500080000000500"), BAD_LEN);
        // shorter than a header
        assert_eq!(err_hex("04050008"), BAD_LEN);
        // empty-body type with a body
        assert_eq!(err_hex("0414000c0000000d00000000"), BAD_LEN);
        // fixed-size body one byte short / long
        assert_eq!(err_hex("0409000b00000007000100"), BAD_LEN);
        assert_eq!(err_hex("0409000d0000000700010080ff"), BAD_LEN);
        // flow mod shorter than its fixed part + match header
        assert_eq!(err_hex("040e000c0000000911223344"), BAD_LEN);
        // error message without code
        assert_eq!(err_hex("0401000a000000090001"), BAD_LEN);
        // hello element shorter than its own header / past the end
        assert_eq!(err_hex("04000010000000010001000200000010"), BAD_LEN);
        assert_eq!(err_hex("04000010000000010001001000000010"), BAD_LEN);
        // version bitmap not a whole number of u32
        assert_eq!(err_hex("04000010000000010001000600000000"), BAD_LEN);
    }

    #[test]
    fn packet_out_actions_len_past_end() {
        assert_eq!(
            err_hex("040d001800000008fffffffffffffffd0008000000000000"),
            BAD_LEN
        );
    }

    #[test]
    fn bad_version() {
        assert_eq!(
            err_hex("0105000800000005"),
            ErrorCode::BadRequest(BadRequestCode::BadVersion)
        );
        // HELLO of any version is accepted
        assert!(OfpMessage::decode(&hex::decode("0100000800000001").unwrap()).is_ok());
    }

    #[test]
    fn bad_type() {
        assert_eq!(
            err_hex("041e000800000005"),
            ErrorCode::BadRequest(BadRequestCode::BadType)
        );
        assert_eq!(
            err_hex("04ff000800000005"),
            ErrorCode::BadRequest(BadRequestCode::BadType)
        );
    }

    #[test]
    fn packet_out_bad_port() {
        for port in ["00000000", "ffffffff", "fffffff8", "ffffff01"] {
            let h = format!("040d001800000008ffffffff{port}0000000000000000");
            assert_eq!(
                err_hex(&h),
                ErrorCode::BadRequest(BadRequestCode::BadPort),
                "{port}"
            );
        }
    }

    /// A FLOW_MOD with the given table, command and flags and an empty match.
    fn flow_mod_hex(table: u8, command: u8, flags: u16) -> String {
        format!(
            "040e003800000009{}{}{table:02x}{command:02x}{}{}{flags:04x}000000010004{}",
            "0".repeat(16),
            "0".repeat(16),
            "0".repeat(12),
            "f".repeat(24),
            "00000000"
        )
    }

    #[test]
    fn flow_mod_bad_command() {
        assert!(OfpMessage::decode(&hex::decode(flow_mod_hex(0, 4, 0)).unwrap()).is_ok());
        assert_eq!(
            err_hex(&flow_mod_hex(0, 5, 0)),
            ErrorCode::FlowModFailed(FlowModFailedCode::BadCommand)
        );
    }

    #[test]
    fn flow_mod_bad_flags() {
        assert!(OfpMessage::decode(&hex::decode(flow_mod_hex(0, 0, 0x1f)).unwrap()).is_ok());
        assert_eq!(
            err_hex(&flow_mod_hex(0, 0, 0x20)),
            ErrorCode::FlowModFailed(FlowModFailedCode::BadFlags)
        );
    }

    #[test]
    fn flow_mod_bad_table_id() {
        for command in 0..=2 {
            assert_eq!(
                err_hex(&flow_mod_hex(0xff, command, 0)),
                ErrorCode::FlowModFailed(FlowModFailedCode::BadTableId)
            );
        }
        for command in 3..=4 {
            assert!(
                OfpMessage::decode(&hex::decode(flow_mod_hex(0xff, command, 0)).unwrap()).is_ok()
            );
        }
    }

    #[test]
    fn flow_mod_match_error_propagates() {
        // match type 0 (OFPMT_STANDARD)
        let h = flow_mod_hex(0, 0, 0).replace("000000010004", "000000000004");
        assert_eq!(
            err_hex(&h),
            ErrorCode::BadMatch(crate::error::BadMatchCode::BadType)
        );
    }

    fn port_mod_hex(port: u32, mask: u32, advertise: u32) -> String {
        format!("041000280000000b{port:08x}00000000020000000003000000000000{mask:08x}{advertise:08x}00000000")
    }

    #[test]
    fn port_mod_bad_port() {
        for port in [0, 0xffff_ff01, port_no::ANY, port_no::CONTROLLER] {
            assert_eq!(
                err_hex(&port_mod_hex(port, 0, 0)),
                ErrorCode::PortModFailed(PortModFailedCode::BadPort)
            );
        }
        assert!(
            OfpMessage::decode(&hex::decode(port_mod_hex(port_no::LOCAL, 0, 0)).unwrap()).is_ok()
        );
    }

    #[test]
    fn port_mod_bad_config() {
        assert_eq!(
            err_hex(&port_mod_hex(1, 1 << 1, 0)),
            ErrorCode::PortModFailed(PortModFailedCode::BadConfig)
        );
    }

    #[test]
    fn port_mod_bad_advertise() {
        assert_eq!(
            err_hex(&port_mod_hex(1, 0, 1 << 16)),
            ErrorCode::PortModFailed(PortModFailedCode::BadAdvertise)
        );
    }

    #[test]
    fn table_mod_bad_config() {
        assert_eq!(
            err_hex("041100100000000c0200000000000004"),
            ErrorCode::TableModFailed(TableModFailedCode::BadConfig)
        );
    }

    #[test]
    fn role_request_bad_role() {
        assert_eq!(
            err_hex("041800180000000f00000004000000000102030405060708"),
            ErrorCode::RoleRequestFailed(RoleRequestFailedCode::BadRole)
        );
        // a reply is not validated
        assert!(OfpMessage::decode(
            &hex::decode("041900180000000f00000004000000000102030405060708").unwrap()
        )
        .is_ok());
    }

    #[test]
    fn set_config_bad_flags() {
        assert_eq!(
            err_hex("0409000c0000000700040080"),
            ErrorCode::SwitchConfigFailed(SwitchConfigFailedCode::BadFlags)
        );
        // GET_CONFIG_REPLY is not validated
        assert!(OfpMessage::decode(&hex::decode("0408000c0000000700040080").unwrap()).is_ok());
    }

    #[test]
    fn set_config_bad_len() {
        assert_eq!(
            err_hex("0409000c000000070000fff0"),
            ErrorCode::SwitchConfigFailed(SwitchConfigFailedCode::BadLen)
        );
        assert!(OfpMessage::decode(&hex::decode("0409000c000000070000ffe5").unwrap()).is_ok());
    }

    #[test]
    fn nested_errors_propagate() {
        // group mod with a bucket of length 8
        assert_eq!(
            err_hex("040f00200000000a000001000000000500080002ffffffffffffffff00000000"),
            ErrorCode::GroupModFailed(GroupModFailedCode::BadBucket)
        );
        // meter mod with meter id 0
        assert_eq!(err_hex("041d001000000012000000050000000000"), BAD_LEN);
        assert_eq!(
            err_hex("041d0010000000120000000500000000"),
            ErrorCode::MeterModFailed(MeterModFailedCode::InvalidMeter)
        );
        // packet out whose output action names port 0
        assert_eq!(
            err_hex(
                "040d002800000008fffffffffffffffd0010000000000000\
                     0000001000000000ffe5000000000000"
            ),
            ErrorCode::BadAction(crate::error::BadActionCode::BadOutPort)
        );
        // flow mod with an instruction of unknown type 9
        let h = flow_mod_hex(0, 0, 0).replacen("0038", "0040", 1) + "0009000800000000";
        assert_eq!(
            err_hex(&h),
            ErrorCode::BadInstruction(crate::error::BadInstructionCode::UnknownInst)
        );
        // queue config request for port 0
        assert_eq!(
            err_hex("041600100000000e0000000000000000"),
            ErrorCode::QueueOpFailed(QueueOpFailedCode::BadPort)
        );
    }

    proptest! {
        // every message type, several times each
        #![proptest_config(ProptestConfig::with_cases(2048))]
        #[test]
        fn round_trip(m in arb::any_message()) {
            let bytes = m.encode();
            prop_assert_eq!(bytes.len(), usize::from(u16::from_be_bytes([bytes[2], bytes[3]])));
            prop_assert_eq!(bytes[1], m.body.msg_type());
            let d = OfpMessage::decode(&bytes);
            prop_assert_eq!(d, Ok(m));
        }
    }

    /// Whatever decodes re-encodes canonically: decode(encode(m)) == m.
    /// PORT_STATUS is skipped: a port name with invalid UTF-8 is replaced
    /// lossily by the shared fixed-string codec and can grow past 15 bytes.
    fn check_canonical(b: &[u8]) -> Result<(), TestCaseError> {
        if let Ok(m) = OfpMessage::decode(b) {
            if !matches!(m.body, Message::PortStatus(_)) {
                prop_assert_eq!(OfpMessage::decode(&m.encode()), Ok(m));
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_canonical(&b)?;
        }

        /// Arbitrary bodies behind a well-formed header reach every body
        /// decoder.
        #[test]
        fn arbitrary_bodies_never_panic(
            ty in 0u8..32,
            xid in any::<u32>(),
            body in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut b = vec![4, ty];
            b.extend_from_slice(&((body.len() + 8) as u16).to_be_bytes());
            b.extend_from_slice(&xid.to_be_bytes());
            b.extend_from_slice(&body);
            check_canonical(&b)?;
        }

        /// Mutating one byte of a valid message never panics the decoder.
        #[test]
        fn mutated_messages_never_panic(
            m in arb::any_message(),
            pos in any::<prop::sample::Index>(),
            v in any::<u8>(),
        ) {
            let mut b = m.encode();
            let i = pos.index(b.len());
            b[i] = v;
            check_canonical(&b)?;
        }
    }
}
