//! FlexForward: the experimenter messages that choose, at run time, how the
//! data plane forwards (issue 32): by the OpenFlow tables, by **HyperCube**
//! (the destination node's address in the destination MAC, XORed with the
//! switch's own address) or by **KeyFlow** (a path id in the destination
//! MAC, modulo the switch's local key). `docs/flexforward.md` has the
//! layouts with worked bytes and the forwarding rules.
//!
//! All messages are OFPT_EXPERIMENTER under [`FLEX_EXPERIMENTER`] =
//! `0x4F58464C` (ASCII "OXFL"), the `exp_type` one of [`exp_type`]. The
//! switch answers a message it refuses with an OFPET_EXPERIMENTER error
//! (type `0xffff`, `exp_type` a [`FlexErrorCode`], this experimenter id,
//! the whole offending message as data) and changes nothing.
//!
//! Bodies (after the 16-byte experimenter header; all integers big
//! endian):
//!
//! ```text
//! SET_FWMODE (1), 8 + 4n bytes:
//!  0      1          2       3     4       6        8
//!  | mode | fallback | scope | pad | n u16 | vid u16 | port u32 * n |
//!
//! SET_HYPERCUBE (2), 16 + 8n bytes:
//!  0            4               8       10      16
//!  | address u32 | local_port u32 | n u16 | pad 6 | (address u32, port u32) * n |
//!
//! SET_KEYFLOW (3), 8 bytes:
//!  | key u32 | pad 4 |
//!
//! GET_FWMODE (4): no body.
//!
//! FWMODE_REPLY (5), 56 + 8 (ports + vlans + neighbours) bytes:
//!  0      1          2       3     4              8                 12
//!  | mode | fallback | flags | pad | hc_address u32 | hc_local_port u32 |
//!  12           16           18           20                22
//!  | kf_key u32 | n_ports u16 | n_vlans u16 | n_neighbours u16 | pad 2 |
//!  24                  32                40                     48
//!  | hypercube_fwd u64 | keyflow_fwd u64 | fallback_table u64 | fallback_drop u64 |
//!  56: (port u32, mode u8, fallback u8, pad 2) * n_ports
//!      (vid u16, mode u8, fallback u8, pad 4) * n_vlans
//!      (address u32, port u32) * n_neighbours
//! ```
//!
//! - `mode`: [`FwMode`] (0 OpenFlow, 1 HyperCube, 2 KeyFlow; in a port or
//!   VLAN scope also 0xff [`MODE_CLEAR`], which removes that override).
//! - `fallback`: [`Fallback`], the fate of a packet the mode cannot
//!   forward (0 the OpenFlow tables, 1 dropped); both counted.
//! - `scope`: [`Scope`] kind: 0 the whole switch (n = 0, vid = 0), 1 the
//!   listed ingress ports (n >= 1), 2 frames tagged with VLAN `vid`
//!   (0..=4095, n = 0). A VLAN override wins over a port override, which
//!   wins over the switch's mode.
//! - `flags` of the reply: bit 0 HyperCube parameters set, bit 1 KeyFlow
//!   key set.
//! - `local_port` of SET_HYPERCUBE: where a packet addressed to the
//!   switch's own node goes (0: to the fallback).

use crate::error::ErrorMsg;
use crate::message::Experimenter;
use crate::wire::{Reader, Writer};

/// The FlexForward experimenter id: ASCII "OXFL".
pub const FLEX_EXPERIMENTER: u32 = 0x4F58_464C;

/// `exp_type` of the FlexForward messages.
pub mod exp_type {
    pub const SET_FWMODE: u32 = 1;
    pub const SET_HYPERCUBE: u32 = 2;
    pub const SET_KEYFLOW: u32 = 3;
    pub const GET_FWMODE: u32 = 4;
    pub const FWMODE_REPLY: u32 = 5;
}

/// `mode` value of a port or VLAN scope that removes the override.
pub const MODE_CLEAR: u8 = 0xff;

/// Highest VLAN id of a VLAN scope.
pub const MAX_VID: u16 = 4095;

/// A forwarding mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum FwMode {
    /// The OpenFlow tables (the switch's mode at start).
    #[default]
    OpenFlow = 0,
    HyperCube = 1,
    KeyFlow = 2,
}

impl FwMode {
    pub fn from_u8(v: u8) -> Option<FwMode> {
        match v {
            0 => Some(FwMode::OpenFlow),
            1 => Some(FwMode::HyperCube),
            2 => Some(FwMode::KeyFlow),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FwMode::OpenFlow => "openflow",
            FwMode::HyperCube => "hypercube",
            FwMode::KeyFlow => "keyflow",
        }
    }

    pub fn parse(s: &str) -> Option<FwMode> {
        match s.to_ascii_lowercase().as_str() {
            "openflow" | "of" => Some(FwMode::OpenFlow),
            "hypercube" | "hc" => Some(FwMode::HyperCube),
            "keyflow" | "kf" => Some(FwMode::KeyFlow),
            _ => None,
        }
    }
}

/// The fate of a packet a tableless mode cannot forward.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Fallback {
    /// Handed to the OpenFlow tables.
    #[default]
    OpenFlow = 0,
    Drop = 1,
}

impl Fallback {
    pub fn from_u8(v: u8) -> Option<Fallback> {
        match v {
            0 => Some(Fallback::OpenFlow),
            1 => Some(Fallback::Drop),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fallback::OpenFlow => "openflow",
            Fallback::Drop => "drop",
        }
    }
}

/// Where a SET_FWMODE applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Switch,
    /// These ingress ports (at least one).
    Ports(Vec<u32>),
    /// Frames whose outer 802.1Q tag carries this VLAN id.
    Vlan(u16),
}

/// `scope` kinds on the wire.
pub mod scope_kind {
    pub const SWITCH: u8 = 0;
    pub const PORTS: u8 = 1;
    pub const VLAN: u8 = 2;
}

/// SET_FWMODE. `mode` is `None` for [`MODE_CLEAR`] (a port or VLAN scope
/// only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetFwMode {
    pub mode: Option<FwMode>,
    pub fallback: Fallback,
    pub scope: Scope,
}

/// SET_HYPERCUBE: the switch's node address, its neighbours' addresses
/// and the port that reaches each, and where its own node's packets go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetHyperCube {
    pub address: u32,
    /// 0: packets for `address` go to the fallback.
    pub local_port: u32,
    /// `(neighbour address, port)`.
    pub neighbours: Vec<(u32, u32)>,
}

/// A port or VLAN override in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Override<K> {
    pub key: K,
    pub mode: FwMode,
    pub fallback: Fallback,
}

/// FWMODE_REPLY: the switch's modes, parameters and counters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FwModeReply {
    pub mode: FwMode,
    pub fallback: Fallback,
    /// `None` until a SET_HYPERCUBE was accepted.
    pub hypercube: Option<SetHyperCube>,
    /// `None` until a SET_KEYFLOW was accepted.
    pub keyflow_key: Option<u32>,
    pub ports: Vec<Override<u32>>,
    pub vlans: Vec<Override<u16>>,
    pub counters: FlexCounters,
}

/// Packets the tableless modes handled, switch-wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlexCounters {
    pub hypercube_fwd: u64,
    pub keyflow_fwd: u64,
    /// Packets a tableless mode could not forward, handed to the tables.
    pub fallback_table: u64,
    /// Packets a tableless mode could not forward, dropped.
    pub fallback_drop: u64,
}

/// FlexForward's error codes: the `exp_type` of its experimenter errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum FlexErrorCode {
    /// An `exp_type` FlexForward does not define (or a reply sent to the
    /// switch).
    BadMessage = 0,
    /// The body's length does not match its fields.
    BadLen = 1,
    /// `mode` is not 0, 1, 2 (or 0xff in a port/VLAN scope).
    UnknownMode = 2,
    /// Unknown scope kind, a VLAN id over 4095, an empty or repeated port
    /// list, a port the switch lacks, or 0xff on the switch scope.
    BadScope = 3,
    /// `fallback` is not 0 or 1.
    BadFallback = 4,
    /// Two neighbours with the same address (or one with the switch's
    /// own).
    HcDupAddress = 5,
    /// A neighbour whose address does not differ from the switch's in
    /// exactly one bit.
    HcNotNeighbour = 6,
    /// A neighbour's port or the local port is not a port of the switch.
    HcBadPort = 7,
    /// KeyFlow key 0 or 1 (no remainder can be a port).
    KfBadKey = 8,
    /// No remainder of the key is a port of the switch (every port number
    /// is at least the key).
    KfNoPort = 9,
    /// The mode's parameters were never set (SET_HYPERCUBE / SET_KEYFLOW
    /// first).
    ModeUnconfigured = 10,
}

impl FlexErrorCode {
    pub const ALL: [FlexErrorCode; 11] = [
        FlexErrorCode::BadMessage,
        FlexErrorCode::BadLen,
        FlexErrorCode::UnknownMode,
        FlexErrorCode::BadScope,
        FlexErrorCode::BadFallback,
        FlexErrorCode::HcDupAddress,
        FlexErrorCode::HcNotNeighbour,
        FlexErrorCode::HcBadPort,
        FlexErrorCode::KfBadKey,
        FlexErrorCode::KfNoPort,
        FlexErrorCode::ModeUnconfigured,
    ];

    pub fn from_u16(v: u16) -> Option<FlexErrorCode> {
        Self::ALL.get(usize::from(v)).copied()
    }

    pub fn name(self) -> &'static str {
        match self {
            FlexErrorCode::BadMessage => "BAD_MESSAGE",
            FlexErrorCode::BadLen => "BAD_LEN",
            FlexErrorCode::UnknownMode => "UNKNOWN_MODE",
            FlexErrorCode::BadScope => "BAD_SCOPE",
            FlexErrorCode::BadFallback => "BAD_FALLBACK",
            FlexErrorCode::HcDupAddress => "HC_DUP_ADDRESS",
            FlexErrorCode::HcNotNeighbour => "HC_NOT_NEIGHBOUR",
            FlexErrorCode::HcBadPort => "HC_BAD_PORT",
            FlexErrorCode::KfBadKey => "KF_BAD_KEY",
            FlexErrorCode::KfNoPort => "KF_NO_PORT",
            FlexErrorCode::ModeUnconfigured => "MODE_UNCONFIGURED",
        }
    }

    /// The OFPT_ERROR body reporting this code for `request` (the whole
    /// offending message).
    pub fn error_msg(self, request: &[u8]) -> ErrorMsg {
        ErrorMsg::Experimenter {
            exp_type: self as u16,
            experimenter: FLEX_EXPERIMENTER,
            data: request.to_vec(),
        }
    }
}

/// A refused FlexForward message: the code and what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlexError {
    pub code: FlexErrorCode,
    pub what: &'static str,
}

impl FlexError {
    pub fn new(code: FlexErrorCode, what: &'static str) -> FlexError {
        FlexError { code, what }
    }
}

impl std::fmt::Display for FlexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.what)
    }
}

impl std::error::Error for FlexError {}

/// A FlexForward message, either direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlexMessage {
    SetFwMode(SetFwMode),
    SetHyperCube(SetHyperCube),
    SetKeyFlow { key: u32 },
    GetFwMode,
    FwModeReply(FwModeReply),
}

fn bad_len(what: &'static str) -> FlexError {
    FlexError::new(FlexErrorCode::BadLen, what)
}

impl FlexMessage {
    /// The FlexForward message in an OFPT_EXPERIMENTER body; `None` if the
    /// experimenter id is not [`FLEX_EXPERIMENTER`].
    pub fn from_experimenter(e: &Experimenter) -> Option<Result<FlexMessage, FlexError>> {
        (e.experimenter == FLEX_EXPERIMENTER).then(|| Self::decode(e.exp_type, &e.data))
    }

    pub fn exp_type(&self) -> u32 {
        match self {
            FlexMessage::SetFwMode(_) => exp_type::SET_FWMODE,
            FlexMessage::SetHyperCube(_) => exp_type::SET_HYPERCUBE,
            FlexMessage::SetKeyFlow { .. } => exp_type::SET_KEYFLOW,
            FlexMessage::GetFwMode => exp_type::GET_FWMODE,
            FlexMessage::FwModeReply(_) => exp_type::FWMODE_REPLY,
        }
    }

    /// The OFPT_EXPERIMENTER body carrying this message.
    pub fn to_experimenter(&self) -> Experimenter {
        let mut data = Vec::new();
        self.encode(&mut data);
        Experimenter {
            experimenter: FLEX_EXPERIMENTER,
            exp_type: self.exp_type(),
            data,
        }
    }

    /// The bytes after the experimenter header.
    pub fn encode(&self, w: &mut Vec<u8>) {
        match self {
            FlexMessage::SetFwMode(m) => {
                w.put_u8(m.mode.map_or(MODE_CLEAR, |m| m as u8));
                w.put_u8(m.fallback as u8);
                let (kind, ports, vid): (u8, &[u32], u16) = match &m.scope {
                    Scope::Switch => (scope_kind::SWITCH, &[], 0),
                    Scope::Ports(p) => (scope_kind::PORTS, p, 0),
                    Scope::Vlan(v) => (scope_kind::VLAN, &[], *v),
                };
                w.put_u8(kind);
                w.put_u8(0);
                w.put_u16(ports.len() as u16);
                w.put_u16(vid);
                for p in ports {
                    w.put_u32(*p);
                }
            }
            FlexMessage::SetHyperCube(h) => encode_hypercube(h, w),
            FlexMessage::SetKeyFlow { key } => {
                w.put_u32(*key);
                w.put_zeros(4);
            }
            FlexMessage::GetFwMode => {}
            FlexMessage::FwModeReply(r) => r.encode(w),
        }
    }

    /// Decode the bytes after the experimenter header of `exp_type`.
    pub fn decode(exp_type: u32, data: &[u8]) -> Result<FlexMessage, FlexError> {
        let mut r = Reader::message(data);
        match exp_type {
            exp_type::SET_FWMODE => decode_set_fwmode(&mut r).map(FlexMessage::SetFwMode),
            exp_type::SET_HYPERCUBE => {
                decode_hypercube(&mut r, true).map(FlexMessage::SetHyperCube)
            }
            exp_type::SET_KEYFLOW => {
                if data.len() != 8 {
                    return Err(bad_len("set_keyflow: length"));
                }
                let key = r
                    .u32("set_keyflow: key")
                    .map_err(|_| bad_len("set_keyflow"))?;
                Ok(FlexMessage::SetKeyFlow { key })
            }
            exp_type::GET_FWMODE if data.is_empty() => Ok(FlexMessage::GetFwMode),
            exp_type::GET_FWMODE => Err(bad_len("get_fwmode: length")),
            exp_type::FWMODE_REPLY => FwModeReply::decode(&mut r).map(FlexMessage::FwModeReply),
            _ => Err(FlexError::new(
                FlexErrorCode::BadMessage,
                "flexforward: unknown exp_type",
            )),
        }
    }
}

fn decode_set_fwmode(r: &mut Reader<'_>) -> Result<SetFwMode, FlexError> {
    let short = |_| bad_len("set_fwmode: short");
    let total = r.remaining();
    let mode = r.u8("mode").map_err(short)?;
    let fallback = r.u8("fallback").map_err(short)?;
    let kind = r.u8("scope").map_err(short)?;
    r.pad(1).map_err(short)?;
    let n = usize::from(r.u16("n").map_err(short)?);
    let vid = r.u16("vid").map_err(short)?;
    if total != 8 + 4 * n {
        return Err(bad_len("set_fwmode: length is not 8 + 4 * n"));
    }
    let mode = match (mode, FwMode::from_u8(mode)) {
        (_, Some(m)) => Some(m),
        (MODE_CLEAR, None) if kind != scope_kind::SWITCH => None,
        (MODE_CLEAR, None) => {
            return Err(FlexError::new(
                FlexErrorCode::BadScope,
                "set_fwmode: the switch scope cannot be cleared",
            ))
        }
        _ => {
            return Err(FlexError::new(
                FlexErrorCode::UnknownMode,
                "set_fwmode: unknown mode",
            ))
        }
    };
    let fallback = Fallback::from_u8(fallback).ok_or(FlexError::new(
        FlexErrorCode::BadFallback,
        "set_fwmode: unknown fallback",
    ))?;
    let bad_scope = |what| Err(FlexError::new(FlexErrorCode::BadScope, what));
    let scope = match kind {
        scope_kind::SWITCH if n == 0 && vid == 0 => Scope::Switch,
        scope_kind::SWITCH => return bad_scope("set_fwmode: switch scope with ports or vid"),
        scope_kind::PORTS if n > 0 && vid == 0 => {
            let mut ports = Vec::with_capacity(n);
            for _ in 0..n {
                let p = r.u32("port").map_err(short)?;
                if ports.contains(&p) {
                    return bad_scope("set_fwmode: a port listed twice");
                }
                ports.push(p);
            }
            Scope::Ports(ports)
        }
        scope_kind::PORTS => return bad_scope("set_fwmode: port scope needs n >= 1 and vid 0"),
        scope_kind::VLAN if n == 0 && vid <= MAX_VID => Scope::Vlan(vid),
        scope_kind::VLAN => return bad_scope("set_fwmode: vlan scope needs n 0 and vid <= 4095"),
        _ => return bad_scope("set_fwmode: unknown scope kind"),
    };
    Ok(SetFwMode {
        mode,
        fallback,
        scope,
    })
}

fn encode_hypercube(h: &SetHyperCube, w: &mut Vec<u8>) {
    w.put_u32(h.address);
    w.put_u32(h.local_port);
    w.put_u16(h.neighbours.len() as u16);
    w.put_zeros(6);
    for (a, p) in &h.neighbours {
        w.put_u32(*a);
        w.put_u32(*p);
    }
}

/// SET_HYPERCUBE's body; with `whole`, the body must end after the
/// neighbours.
fn decode_hypercube(r: &mut Reader<'_>, whole: bool) -> Result<SetHyperCube, FlexError> {
    let short = |_| bad_len("set_hypercube: short");
    let total = r.remaining();
    let address = r.u32("address").map_err(short)?;
    let local_port = r.u32("local_port").map_err(short)?;
    let n = usize::from(r.u16("n").map_err(short)?);
    r.pad(6).map_err(short)?;
    if whole && total != 16 + 8 * n {
        return Err(bad_len("set_hypercube: length is not 16 + 8 * n"));
    }
    let mut neighbours = Vec::with_capacity(n.min(total / 8));
    for _ in 0..n {
        let a = r.u32("neighbour address").map_err(short)?;
        let p = r.u32("neighbour port").map_err(short)?;
        neighbours.push((a, p));
    }
    Ok(SetHyperCube {
        address,
        local_port,
        neighbours,
    })
}

impl FwModeReply {
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.mode as u8);
        w.put_u8(self.fallback as u8);
        let flags = u8::from(self.hypercube.is_some()) | u8::from(self.keyflow_key.is_some()) << 1;
        w.put_u8(flags);
        w.put_u8(0);
        let hc = self.hypercube.clone().unwrap_or_default();
        w.put_u32(hc.address);
        w.put_u32(hc.local_port);
        w.put_u32(self.keyflow_key.unwrap_or(0));
        w.put_u16(self.ports.len() as u16);
        w.put_u16(self.vlans.len() as u16);
        w.put_u16(hc.neighbours.len() as u16);
        w.put_u16(0);
        let c = &self.counters;
        for v in [
            c.hypercube_fwd,
            c.keyflow_fwd,
            c.fallback_table,
            c.fallback_drop,
        ] {
            w.put_u64(v);
        }
        for o in &self.ports {
            w.put_u32(o.key);
            w.put_u8(o.mode as u8);
            w.put_u8(o.fallback as u8);
            w.put_u16(0);
        }
        for o in &self.vlans {
            w.put_u16(o.key);
            w.put_u8(o.mode as u8);
            w.put_u8(o.fallback as u8);
            w.put_u32(0);
        }
        for (a, p) in &hc.neighbours {
            w.put_u32(*a);
            w.put_u32(*p);
        }
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<FwModeReply, FlexError> {
        let short = |_| bad_len("fwmode_reply: short");
        let total = r.remaining();
        let mode_of = |v: u8| {
            FwMode::from_u8(v).ok_or(FlexError::new(
                FlexErrorCode::UnknownMode,
                "fwmode_reply: unknown mode",
            ))
        };
        let fallback_of = |v: u8| {
            Fallback::from_u8(v).ok_or(FlexError::new(
                FlexErrorCode::BadFallback,
                "fwmode_reply: unknown fallback",
            ))
        };
        let mode = mode_of(r.u8("mode").map_err(short)?)?;
        let fallback = fallback_of(r.u8("fallback").map_err(short)?)?;
        let flags = r.u8("flags").map_err(short)?;
        r.pad(1).map_err(short)?;
        let address = r.u32("hc_address").map_err(short)?;
        let local_port = r.u32("hc_local_port").map_err(short)?;
        let key = r.u32("kf_key").map_err(short)?;
        let n_ports = usize::from(r.u16("n_ports").map_err(short)?);
        let n_vlans = usize::from(r.u16("n_vlans").map_err(short)?);
        let n_nbrs = usize::from(r.u16("n_neighbours").map_err(short)?);
        r.pad(2).map_err(short)?;
        if total != 56 + 8 * (n_ports + n_vlans + n_nbrs) {
            return Err(bad_len("fwmode_reply: length"));
        }
        let counters = FlexCounters {
            hypercube_fwd: r.u64("c").map_err(short)?,
            keyflow_fwd: r.u64("c").map_err(short)?,
            fallback_table: r.u64("c").map_err(short)?,
            fallback_drop: r.u64("c").map_err(short)?,
        };
        let mut ports = Vec::with_capacity(n_ports);
        for _ in 0..n_ports {
            let key = r.u32("port").map_err(short)?;
            let mode = mode_of(r.u8("mode").map_err(short)?)?;
            let fallback = fallback_of(r.u8("fallback").map_err(short)?)?;
            r.pad(2).map_err(short)?;
            ports.push(Override {
                key,
                mode,
                fallback,
            });
        }
        let mut vlans = Vec::with_capacity(n_vlans);
        for _ in 0..n_vlans {
            let key = r.u16("vid").map_err(short)?;
            let mode = mode_of(r.u8("mode").map_err(short)?)?;
            let fallback = fallback_of(r.u8("fallback").map_err(short)?)?;
            r.pad(4).map_err(short)?;
            vlans.push(Override {
                key,
                mode,
                fallback,
            });
        }
        let mut neighbours = Vec::with_capacity(n_nbrs);
        for _ in 0..n_nbrs {
            let a = r.u32("neighbour address").map_err(short)?;
            let p = r.u32("neighbour port").map_err(short)?;
            neighbours.push((a, p));
        }
        Ok(FwModeReply {
            mode,
            fallback,
            hypercube: (flags & 1 != 0).then_some(SetHyperCube {
                address,
                local_port,
                neighbours,
            }),
            keyflow_key: (flags & 2 != 0).then_some(key),
            ports,
            vlans,
            counters,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(m: FlexMessage) -> Vec<u8> {
        let e = m.to_experimenter();
        assert_eq!(FlexMessage::from_experimenter(&e), Some(Ok(m)));
        e.data
    }

    #[test]
    fn set_fwmode_bytes() {
        let d = round_trip(FlexMessage::SetFwMode(SetFwMode {
            mode: Some(FwMode::HyperCube),
            fallback: Fallback::Drop,
            scope: Scope::Ports(vec![1, 3]),
        }));
        assert_eq!(d, [1, 1, 1, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3]);
        let d = round_trip(FlexMessage::SetFwMode(SetFwMode {
            mode: None,
            fallback: Fallback::OpenFlow,
            scope: Scope::Vlan(10),
        }));
        assert_eq!(d, [0xff, 0, 2, 0, 0, 0, 0, 10]);
    }

    #[test]
    fn refusals() {
        let code = |t, d: &[u8]| FlexMessage::decode(t, d).unwrap_err().code;
        use exp_type as t;
        use FlexErrorCode as C;
        assert_eq!(
            code(t::SET_FWMODE, &[3, 0, 0, 0, 0, 0, 0, 0]),
            C::UnknownMode
        );
        assert_eq!(
            code(t::SET_FWMODE, &[0xff, 0, 0, 0, 0, 0, 0, 0]),
            C::BadScope
        );
        assert_eq!(
            code(t::SET_FWMODE, &[0, 2, 0, 0, 0, 0, 0, 0]),
            C::BadFallback
        );
        assert_eq!(code(t::SET_FWMODE, &[0, 0, 3, 0, 0, 0, 0, 0]), C::BadScope);
        assert_eq!(code(t::SET_FWMODE, &[0, 0, 2, 0, 0, 0, 16, 0]), C::BadScope);
        assert_eq!(code(t::SET_FWMODE, &[0, 0, 1, 0, 0, 0, 0, 0]), C::BadScope);
        assert_eq!(code(t::SET_FWMODE, &[0, 0, 1, 0, 0, 1, 0, 0]), C::BadLen);
        assert_eq!(code(t::SET_KEYFLOW, &[0, 0, 0, 7]), C::BadLen);
        assert_eq!(code(t::GET_FWMODE, &[0]), C::BadLen);
        assert_eq!(code(99, &[]), C::BadMessage);
        let dup = [0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1];
        assert_eq!(code(t::SET_FWMODE, &dup), C::BadScope);
    }

    #[test]
    fn reply_round_trip() {
        round_trip(FlexMessage::FwModeReply(FwModeReply {
            mode: FwMode::KeyFlow,
            fallback: Fallback::Drop,
            hypercube: Some(SetHyperCube {
                address: 5,
                local_port: 4,
                neighbours: vec![(4, 1), (7, 2), (1, 3)],
            }),
            keyflow_key: Some(7),
            ports: vec![Override {
                key: 2,
                mode: FwMode::OpenFlow,
                fallback: Fallback::OpenFlow,
            }],
            vlans: vec![Override {
                key: 10,
                mode: FwMode::HyperCube,
                fallback: Fallback::Drop,
            }],
            counters: FlexCounters {
                hypercube_fwd: 1,
                keyflow_fwd: 2,
                fallback_table: 3,
                fallback_drop: 4,
            },
        }));
        round_trip(FlexMessage::FwModeReply(FwModeReply::default()));
    }
}
