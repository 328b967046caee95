//! Flow syntax (`ovs-ofctl add-flow` and friends) for OpenFlow 1.3.
//!
//! A flow string is a list of `key=value` / keyword tokens, then optionally
//! `actions=...`, which swallows the rest of the string:
//!
//! ```text
//! table=0,priority=10,cookie=0x1/0xff,idle_timeout=10,send_flow_rem,
//! tcp,in_port=1,nw_dst=10.0.0.0/8,tp_dst=80 actions=set_field:10.0.0.1->ip_dst,output:2
//! ```
//!
//! Parsing goes in four steps: tokens become flow-mod parameters or OXM
//! fields (through the registry in [`crate::fields`]); protocol shorthands
//! (`tcp`, `arp`, ...) add ETH_TYPE / IP_PROTO; protocol-dependent names
//! (`tp_src`, `nw_src` under `arp`, `icmp_type` under `icmp6`) are resolved;
//! prerequisites are checked field by field so the error can point at the
//! token whose prerequisite is missing. The resulting match is sorted by OXM
//! id, which makes printing and re-parsing stable.

use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command, flow_mod_flags, table_id, FlowMod, NO_BUFFER};
use ofp::multipart::FlowStatsRequest;
use ofp::oxm::{field, vid, Match, OxmField, Prerequisites};
use ofp::port::port_no;

use crate::actions::{format_instructions, parse_instructions, ActionContext};
use crate::fields::{self, format_field_value, make_field, parse_int, parse_value, Remap};
use crate::lex::{find_actions, tokenize, Token};
use crate::syntax_error::SyntaxError;

/// `OFP_DEFAULT_PRIORITY`.
pub const DEFAULT_PRIORITY: u16 = 0x8000;

/// What a flow string is for: it decides which parts are required/allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowUsage {
    /// add-flow / add-flows: actions required, no cookie mask.
    Add,
    /// mod-flows: actions required, a cookie mask selects flows.
    Modify,
    /// del-flows / dump-flows filter: no actions; out_port/out_group allowed.
    Filter,
}

/// A parsed flow: flow-mod parameters, match and instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSpec {
    /// `table=`; `None` means the command's default (0 for add, all otherwise).
    pub table_id: Option<u8>,
    pub priority: u16,
    pub cookie: u64,
    /// `cookie=V/M`: select flows by cookie (modify and filters only).
    pub cookie_mask: u64,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// Bits of `flow_mod_flags`.
    pub flags: u16,
    pub out_port: u32,
    pub out_group: u32,
    pub match_: Match,
    pub instructions: Vec<Instruction>,
}

impl Default for FlowSpec {
    fn default() -> Self {
        FlowSpec {
            table_id: None,
            priority: DEFAULT_PRIORITY,
            cookie: 0,
            cookie_mask: 0,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            out_port: port_no::ANY,
            out_group: ofp::group::group_id::ANY,
            match_: Match::default(),
            instructions: Vec::new(),
        }
    }
}

/// Protocol shorthands: name, ETH_TYPE, IP_PROTO.
const SHORTHANDS: &[(&str, u16, Option<u8>)] = &[
    ("ip", 0x0800, None),
    ("ipv4", 0x0800, None),
    ("icmp", 0x0800, Some(1)),
    ("tcp", 0x0800, Some(6)),
    ("udp", 0x0800, Some(17)),
    ("sctp", 0x0800, Some(132)),
    ("ipv6", 0x86dd, None),
    ("icmp6", 0x86dd, Some(58)),
    ("tcp6", 0x86dd, Some(6)),
    ("udp6", 0x86dd, Some(17)),
    ("sctp6", 0x86dd, Some(132)),
    ("arp", 0x0806, None),
    ("rarp", 0x8035, None),
    ("mpls", 0x8847, None),
    ("mplsm", 0x8848, None),
];

/// One match field being built, with the token it came from.
struct Pending {
    field: OxmField,
    remap: Remap,
    /// Name as written, for messages.
    name: String,
    at: usize,
    len: usize,
}

/// Collects match fields, refusing conflicting duplicates.
#[derive(Default)]
struct MatchBuilder {
    fields: Vec<Pending>,
}

impl MatchBuilder {
    fn add(&mut self, p: Pending) -> Result<(), SyntaxError> {
        if let Some(old) = self
            .fields
            .iter()
            .find(|o| oxm_key(&o.field) == oxm_key(&p.field) && o.remap == p.remap)
        {
            if old.field == p.field {
                return Ok(());
            }
            return Err(SyntaxError::new(
                format!(
                    "field \"{}\" conflicts with \"{}\" given before",
                    p.name, old.name
                ),
                p.at,
                p.len,
            ));
        }
        self.fields.push(p);
        Ok(())
    }

    fn exact(&self, id: u8) -> Option<u128> {
        self.fields
            .iter()
            .find(|p| p.field.is_basic() && p.field.field_id() == id && !p.field.has_mask())
            .and_then(|p| p.field.bits())
            .map(|(v, _)| v)
    }

    /// Resolve protocol-dependent names, check prerequisites, sort.
    fn finish(mut self) -> Result<Match, SyntaxError> {
        let eth = self.exact(field::ETH_TYPE).map(|v| v as u16);
        // IP_PROTO as written via `nw_proto` under `arp` is ARP_OP, so look
        // only at fields that will stay IP_PROTO.
        let proto = self
            .fields
            .iter()
            .find(|p| {
                p.field.is_basic()
                    && p.field.field_id() == field::IP_PROTO
                    && !(p.remap == Remap::Arp && eth == Some(0x0806))
            })
            .and_then(|p| p.field.bits())
            .map(|(v, _)| v as u8);
        for p in &mut self.fields {
            let id = p.field.field_id();
            let new_id = match (p.remap, id) {
                (Remap::Arp, field::IPV4_SRC) if eth == Some(0x0806) => field::ARP_SPA,
                (Remap::Arp, field::IPV4_DST) if eth == Some(0x0806) => field::ARP_TPA,
                (Remap::Arp, field::IP_PROTO) if eth == Some(0x0806) => field::ARP_OP,
                (Remap::Transport, field::TCP_SRC) if proto == Some(17) => field::UDP_SRC,
                (Remap::Transport, field::TCP_DST) if proto == Some(17) => field::UDP_DST,
                (Remap::Transport, field::TCP_SRC) if proto == Some(132) => field::SCTP_SRC,
                (Remap::Transport, field::TCP_DST) if proto == Some(132) => field::SCTP_DST,
                (Remap::Icmp, field::ICMPV4_TYPE) if proto == Some(58) => field::ICMPV6_TYPE,
                (Remap::Icmp, field::ICMPV4_CODE) if proto == Some(58) => field::ICMPV6_CODE,
                _ => id,
            };
            if new_id != id {
                let (v, m) = p.field.bits().unwrap_or((0, None));
                p.field = make_field(new_id, v, m).map_err(|e| SyntaxError::new(e, p.at, p.len))?;
            }
        }
        let m = Match::new(self.fields.iter().map(|p| p.field.clone()).collect());
        for p in &self.fields {
            if let Some(need) = missing_prereq(&p.field, &m) {
                return Err(SyntaxError::new(
                    format!("field \"{}\" needs {need}", p.name),
                    p.at,
                    p.len,
                ));
            }
        }
        let mut fields = m.fields;
        fields.sort_by_key(oxm_key);
        // The same field twice with the same value (`tcp,nw_proto=6`) is fine.
        fields.dedup();
        for w in fields.windows(2) {
            if oxm_key(&w[0]) == oxm_key(&w[1]) {
                let p = self
                    .fields
                    .iter()
                    .rev()
                    .find(|p| oxm_key(&p.field) == oxm_key(&w[0]));
                let (at, len) = p.map_or((0, 0), |p| (p.at, p.len));
                return Err(SyntaxError::new("field given twice", at, len));
            }
        }
        let m = Match::new(fields);
        // The codec's own check is the reference; the table above only
        // exists to explain which token is at fault.
        m.check_prerequisites()
            .map_err(|_| SyntaxError::new("match prerequisites not met", 0, 0))?;
        Ok(m)
    }
}

/// What identifies a field in a match: basic fields sort first, by id,
/// then experimenter fields by experimenter and id.
fn oxm_key(f: &OxmField) -> (bool, u16, u32, u8) {
    let exp = match f {
        OxmField::Experimenter { experimenter, .. } => *experimenter,
        _ => 0,
    };
    (!f.is_basic(), f.class(), exp, f.field_id())
}

/// What field `f` needs that `m` lacks (spec §7.2.3.6), as a hint. The
/// rule is the codec's (`ofp::oxm::Prerequisites`, from the field
/// registry); the hint names the ovs-ofctl words that satisfy it.
fn missing_prereq(f: &OxmField, m: &Match) -> Option<&'static str> {
    let mut known = Prerequisites::default();
    for g in &m.fields {
        known.learn(g);
    }
    if known.allows(f) {
        return None;
    }
    Some(match f.field_id() {
        field::IN_PHY_PORT => "in_port",
        field::VLAN_PCP => "a VLAN match (dl_vlan or vlan_vid)",
        field::IP_DSCP | field::IP_ECN | field::IP_PROTO => "ip or ipv6",
        field::IPV4_SRC | field::IPV4_DST => "ip (dl_type=0x0800)",
        field::TCP_SRC | field::TCP_DST | field::TCP_FLAGS => "tcp or tcp6",
        field::UDP_SRC | field::UDP_DST => "udp or udp6",
        field::SCTP_SRC | field::SCTP_DST => "sctp or sctp6",
        field::ICMPV4_TYPE | field::ICMPV4_CODE => "icmp",
        field::ARP_OP | field::ARP_SPA | field::ARP_TPA | field::ARP_SHA | field::ARP_THA => "arp",
        field::IPV6_SRC | field::IPV6_DST | field::IPV6_FLABEL | field::IPV6_EXTHDR => "ipv6",
        field::ICMPV6_TYPE | field::ICMPV6_CODE => "icmp6",
        field::IPV6_ND_TARGET => "icmp6,icmp_type=135 or 136",
        field::IPV6_ND_SLL => "icmp6,icmp_type=135",
        field::IPV6_ND_TLL => "icmp6,icmp_type=136",
        field::MPLS_LABEL | field::MPLS_TC | field::MPLS_BOS => "mpls or mplsm",
        field::PBB_ISID => "dl_type=0x88e7",
        _ => "its prerequisites",
    })
}

fn int_value<T: TryFrom<u128>>(t: &Token<'_>, what: &str) -> Result<T, SyntaxError> {
    let v = t.need_value()?;
    parse_int(v)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| t.value_err(format!("bad {what} \"{v}\"")))
}

fn pending(t: &Token<'_>, field: OxmField, remap: Remap) -> Pending {
    Pending {
        field,
        remap,
        name: t.key.to_string(),
        at: t.text_at,
        len: t.text.len(),
    }
}

/// Handle a match token: shorthand, special field or registry field.
/// Returns `false` if the key is no match field at all.
fn match_token(t: &Token<'_>, b: &mut MatchBuilder) -> Result<bool, SyntaxError> {
    let key = t.key.to_ascii_lowercase();
    if t.value.is_none() {
        if let Some(&(_, eth, proto)) = SHORTHANDS.iter().find(|s| s.0 == key) {
            b.add(pending(t, OxmField::EthType(eth), Remap::None))?;
            if let Some(p) = proto {
                b.add(pending(t, OxmField::IpProto(p), Remap::None))?;
            }
            return Ok(true);
        }
    }
    let field_err = |e: String| t.value_err(e);
    match key.as_str() {
        "dl_vlan" => {
            let v: u16 = int_value(t, "VLAN id")?;
            let f = match v {
                0xffff => OxmField::VlanVid(vid::NONE, None),
                v if v <= 0xfff => OxmField::VlanVid(vid::PRESENT | v, None),
                _ => return Err(t.value_err("VLAN id above 4095")),
            };
            b.add(pending(t, f, Remap::None))?;
        }
        "vlan_tci" => {
            let (v, m) = parse_value(fields::Kind::Hex, t.need_value()?).map_err(field_err)?;
            let m = m.unwrap_or(0xffff);
            if v > 0xffff || m > 0xffff {
                return Err(t.value_err("vlan_tci is 16 bits"));
            }
            if v == 0 && m == 0xffff {
                b.add(pending(t, OxmField::VlanVid(vid::NONE, None), Remap::None))?;
                return Ok(true);
            }
            // TCI = PCP(3) | CFI(1, "present" in OpenFlow 1.3) | VID(12).
            let (vv, vm) = (v & 0x1fff, m & 0x1fff);
            if vm != 0 {
                let f = make_field(field::VLAN_VID, vv, Some(vm)).map_err(field_err)?;
                b.add(pending(t, f, Remap::None))?;
            }
            match m >> 13 {
                0 => {}
                7 => b.add(pending(t, OxmField::VlanPcp((v >> 13) as u8), Remap::None))?,
                _ => return Err(t.value_err("vlan_tci mask must cover all or none of PCP")),
            }
        }
        "nw_tos" => {
            let tos: u8 = int_value(t, "ToS")?;
            if tos & 3 != 0 {
                return Err(t.value_err("ToS low 2 bits (ECN) must be zero; use nw_ecn"));
            }
            b.add(pending(t, OxmField::IpDscp(tos >> 2), Remap::None))?;
        }
        _ => {
            let Some(def) = fields::lookup(&key) else {
                let Some(d) = fields::lookup_experimenter(&key) else {
                    return Ok(false);
                };
                let kind = fields::kind_of(d.syntax);
                let (v, m) = parse_value(kind, t.need_value()?).map_err(field_err)?;
                let f = fields::make_experimenter_field(d, v, m).map_err(field_err)?;
                b.add(pending(t, f, Remap::None))?;
                return Ok(true);
            };
            let (v, m) = parse_value(def.kind, t.need_value()?).map_err(field_err)?;
            let f = make_field(def.id, v, m).map_err(field_err)?;
            b.add(pending(t, f, def.remap))?;
        }
    }
    Ok(true)
}

/// Parse a flow string for `usage`.
pub fn parse_flow(s: &str, usage: FlowUsage) -> Result<FlowSpec, SyntaxError> {
    let (match_part, actions) = match find_actions(s) {
        Some((kw, value)) => (&s[..kw], Some((kw, value))),
        None => (s, None),
    };
    let mut spec = FlowSpec::default();
    let mut b = MatchBuilder::default();
    for t in tokenize(match_part, 0)? {
        let key = t.key.to_ascii_lowercase();
        match key.as_str() {
            "table" => {
                let n: u8 = int_value(&t, "table id")?;
                if n == table_id::ALL && usage != FlowUsage::Filter {
                    return Err(t.value_err("table 255 (all) only for del-flows/dump-flows"));
                }
                spec.table_id = Some(n);
            }
            "priority" => spec.priority = int_value(&t, "priority")?,
            // Without a mask, `cookie=V` sets the cookie of an added flow
            // and selects exactly V in mod/del/dump (ovs-ofctl refuses the
            // latter and asks for V/M).
            "cookie" => {
                let (v, m) =
                    parse_value(fields::Kind::Hex, t.need_value()?).map_err(|e| t.value_err(e))?;
                spec.cookie = u64::try_from(v).map_err(|_| t.value_err("cookie is 64 bits"))?;
                if let Some(m) = m {
                    if usage == FlowUsage::Add {
                        return Err(t.value_err("cookie mask not allowed when adding a flow"));
                    }
                    spec.cookie_mask =
                        u64::try_from(m).map_err(|_| t.value_err("cookie mask is 64 bits"))?;
                } else if usage != FlowUsage::Add {
                    spec.cookie_mask = u64::MAX;
                }
            }
            "idle_timeout" => spec.idle_timeout = int_value(&t, "timeout")?,
            "hard_timeout" => spec.hard_timeout = int_value(&t, "timeout")?,
            "send_flow_rem" if t.value.is_none() => spec.flags |= flow_mod_flags::SEND_FLOW_REM,
            "check_overlap" if t.value.is_none() => spec.flags |= flow_mod_flags::CHECK_OVERLAP,
            "reset_counts" if t.value.is_none() => spec.flags |= flow_mod_flags::RESET_COUNTS,
            "no_packet_counts" if t.value.is_none() => spec.flags |= flow_mod_flags::NO_PKT_COUNTS,
            "no_byte_counts" if t.value.is_none() => spec.flags |= flow_mod_flags::NO_BYT_COUNTS,
            "out_port" if usage == FlowUsage::Filter => {
                let v = t.need_value()?;
                spec.out_port = fields::parse_port(v)
                    .ok_or_else(|| t.value_err(format!("bad port \"{v}\"")))?;
            }
            "out_group" if usage == FlowUsage::Filter => {
                spec.out_group = int_value(&t, "group id")?;
            }
            "out_port" | "out_group" => {
                return Err(t.key_err(format!(
                    "\"{}\" only selects flows in del-flows and dump-flows",
                    t.key
                )))
            }
            _ => {
                if !match_token(&t, &mut b)? {
                    return Err(t.key_err(format!("unknown field \"{}\"", t.key)));
                }
            }
        }
    }
    spec.match_ = b.finish()?;
    let ctx = ActionContext {
        ip_proto: spec.match_.get(field::IP_PROTO).and_then(|f| match f {
            OxmField::IpProto(p) => Some(*p),
            _ => None,
        }),
    };
    match (actions, usage) {
        (Some((kw, _)), FlowUsage::Filter) => {
            return Err(SyntaxError::new(
                "actions not allowed here",
                kw,
                s.len() - kw,
            ))
        }
        (Some((_, at)), _) => spec.instructions = parse_instructions(&s[at..], at, ctx)?,
        (None, FlowUsage::Filter) => {}
        (None, _) => {
            return Err(SyntaxError::new(
                "must specify an action (actions=...)",
                s.len(),
                0,
            ))
        }
    }
    Ok(spec)
}

impl FlowSpec {
    /// The FLOW_MOD for one of `flow_mod_command`.
    pub fn to_flow_mod(&self, command: u8) -> FlowMod {
        let deleting = matches!(
            command,
            flow_mod_command::DELETE | flow_mod_command::DELETE_STRICT
        );
        FlowMod {
            cookie: self.cookie,
            cookie_mask: if command == flow_mod_command::ADD {
                0
            } else {
                self.cookie_mask
            },
            table_id: self
                .table_id
                .unwrap_or(if deleting { table_id::ALL } else { 0 }),
            command,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: NO_BUFFER,
            out_port: if deleting {
                self.out_port
            } else {
                port_no::ANY
            },
            out_group: if deleting {
                self.out_group
            } else {
                ofp::group::group_id::ANY
            },
            flags: self.flags,
            match_: self.match_.clone(),
            instructions: if deleting {
                Vec::new()
            } else {
                self.instructions.clone()
            },
        }
    }

    /// The flow-stats request selecting the flows this filter names.
    pub fn to_stats_request(&self) -> FlowStatsRequest {
        FlowStatsRequest {
            table_id: self.table_id.unwrap_or(table_id::ALL),
            out_port: self.out_port,
            out_group: self.out_group,
            cookie: self.cookie,
            cookie_mask: self.cookie_mask,
            match_: self.match_.clone(),
        }
    }
}

/// The shorthand ovs-ofctl prints for ETH_TYPE / IP_PROTO, and whether it
/// already says the IP_PROTO.
fn shorthand(m: &Match) -> Option<(&'static str, bool)> {
    let eth = match m.get(field::ETH_TYPE) {
        Some(OxmField::EthType(t)) => *t,
        _ => return None,
    };
    let proto = match m.get(field::IP_PROTO) {
        Some(OxmField::IpProto(p)) => Some(*p),
        _ => None,
    };
    SHORTHANDS
        .iter()
        .filter(|s| s.0 != "ipv4")
        .find(|s| s.1 == eth && s.2.is_some() && s.2 == proto)
        .map(|s| (s.0, true))
        .or_else(|| {
            SHORTHANDS
                .iter()
                .find(|s| s.1 == eth && s.2.is_none())
                .map(|s| (s.0, false))
        })
}

/// The order in which ovs-ofctl prints match fields (after the shorthand).
const PRINT_ORDER: &[u8] = &[
    field::TUNNEL_ID,
    field::METADATA,
    field::IN_PORT,
    field::IN_PHY_PORT,
    field::VLAN_VID,
    field::VLAN_PCP,
    field::ETH_SRC,
    field::ETH_DST,
    field::ETH_TYPE,
    field::IPV6_SRC,
    field::IPV6_DST,
    field::IPV6_FLABEL,
    field::IPV6_EXTHDR,
    field::IPV4_SRC,
    field::IPV4_DST,
    field::ARP_SPA,
    field::ARP_TPA,
    field::IP_PROTO,
    field::ARP_OP,
    field::IP_DSCP,
    field::IP_ECN,
    field::MPLS_LABEL,
    field::MPLS_TC,
    field::MPLS_BOS,
    field::PBB_ISID,
    field::ICMPV4_TYPE,
    field::ICMPV4_CODE,
    field::ICMPV6_TYPE,
    field::ICMPV6_CODE,
    field::IPV6_ND_TARGET,
    field::IPV6_ND_SLL,
    field::IPV6_ND_TLL,
    field::ARP_SHA,
    field::ARP_THA,
    field::TCP_SRC,
    field::TCP_DST,
    field::UDP_SRC,
    field::UDP_DST,
    field::SCTP_SRC,
    field::SCTP_DST,
    field::TCP_FLAGS,
];

/// Print a match as ovs-ofctl does (`priority=10,tcp,nw_dst=10.0.0.0/8,tp_dst=80`);
/// `priority` is printed unless it is the default.
pub fn format_match(m: &Match, priority: Option<u16>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(p) = priority.filter(|p| *p != DEFAULT_PRIORITY) {
        parts.push(format!("priority={p}"));
    }
    let sh = shorthand(m);
    if let Some((name, _)) = sh {
        parts.push(name.into());
    }
    let fmt = |f: &OxmField| -> Option<String> {
        let id = f.field_id();
        if !f.is_basic() {
            return Some(
                fields::format_experimenter_field(f)
                    .unwrap_or_else(|| format!("oxm(class={:#x},field={id})", f.class())),
            );
        }
        Some(match f {
            OxmField::EthType(_) if sh.is_some() => return None,
            OxmField::IpProto(_) if sh.is_some_and(|s| s.1) => return None,
            OxmField::VlanVid(0, None) => "vlan_tci=0x0000".into(),
            OxmField::VlanVid(v, None) if v & vid::PRESENT != 0 => {
                format!("dl_vlan={}", v & 0xfff)
            }
            OxmField::VlanVid(v, Some(m)) if *m <= 0x1fff => format!("vlan_tci={v:#06x}/{m:#06x}"),
            // A mask with bits above the 13 VLAN_VID bits has no vlan_tci form.
            OxmField::VlanVid(v, Some(m)) => format!("vlan_vid={v:#x}/{m:#x}"),
            OxmField::IpDscp(d) => format!("nw_tos={}", u16::from(*d) << 2),
            // Under `icmp6`, ovs-ofctl says icmp_type/icmp_code.
            OxmField::Icmpv6Type(_) | OxmField::Icmpv6Code(_)
                if sh.is_some_and(|s| s.0 == "icmp6") =>
            {
                let name = if id == field::ICMPV6_TYPE {
                    "icmp_type"
                } else {
                    "icmp_code"
                };
                format!("{name}={}", format_field_value(f))
            }
            _ => format!("{}={}", fields::match_name(id), format_field_value(f)),
        })
    };
    let rank = |f: &&OxmField| {
        PRINT_ORDER
            .iter()
            .position(|id| f.is_basic() && *id == f.field_id())
            .unwrap_or(PRINT_ORDER.len())
    };
    let mut sorted: Vec<&OxmField> = m.fields.iter().collect();
    sorted.sort_by_key(rank);
    parts.extend(sorted.into_iter().filter_map(fmt));
    parts.join(",")
}

/// Print the flow-mod parameters ovs-ofctl shows (timeouts, flags): timeouts
/// are followed by `sep`, flags by `flag_sep`.
fn format_params(spec: &FlowSpec, sep: &str, flag_sep: &str) -> String {
    let mut s = String::new();
    let flags = [
        (flow_mod_flags::SEND_FLOW_REM, "send_flow_rem"),
        (flow_mod_flags::CHECK_OVERLAP, "check_overlap"),
        (flow_mod_flags::RESET_COUNTS, "reset_counts"),
        (flow_mod_flags::NO_PKT_COUNTS, "no_packet_counts"),
        (flow_mod_flags::NO_BYT_COUNTS, "no_byte_counts"),
    ];
    if spec.idle_timeout != 0 {
        s += &format!("idle_timeout={}{sep}", spec.idle_timeout);
    }
    if spec.hard_timeout != 0 {
        s += &format!("hard_timeout={}{sep}", spec.hard_timeout);
    }
    for (bit, name) in flags {
        if spec.flags & bit != 0 {
            s += name;
            s += flag_sep;
        }
    }
    s
}

/// Print a flow in the syntax `parse_flow` reads (the add-flow form).
pub fn format_flow(spec: &FlowSpec) -> String {
    let mut s = String::new();
    if let Some(t) = spec.table_id {
        s += &format!("table={t},");
    }
    if spec.cookie != 0 || spec.cookie_mask != 0 {
        s += &format!("cookie={:#x}", spec.cookie);
        if spec.cookie_mask != 0 && spec.cookie_mask != u64::MAX {
            s += &format!("/{:#x}", spec.cookie_mask);
        }
        s += ",";
    }
    s += &format_params(spec, ",", ",");
    s += &format_match(&spec.match_, Some(spec.priority));
    if !s.is_empty() && !s.ends_with(',') {
        s.push(',');
    }
    s + "actions=" + &format_instructions(&spec.instructions)
}

/// One `dump-flows` line, as ovs-ofctl prints it (without the leading space).
pub fn format_flow_stats(fs: &ofp::multipart::FlowStats) -> String {
    let spec = FlowSpec {
        idle_timeout: fs.idle_timeout,
        hard_timeout: fs.hard_timeout,
        flags: fs.flags,
        ..FlowSpec::default()
    };
    let m = format_match(&fs.match_, Some(fs.priority));
    format!(
        "cookie={:#x}, duration={}.{:03}s, table={}, n_packets={}, n_bytes={}, {}{}{}actions={}",
        fs.cookie,
        fs.duration_sec,
        fs.duration_nsec / 1_000_000,
        fs.table_id,
        fs.packet_count,
        fs.byte_count,
        format_params(&spec, ", ", " "),
        m,
        if m.is_empty() { "" } else { " " },
        format_instructions(&fs.instructions)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::action::Action;
    use std::net::Ipv4Addr;

    fn add(s: &str) -> FlowSpec {
        parse_flow(s, FlowUsage::Add).unwrap_or_else(|e| panic!("{}", e.render(s)))
    }

    #[test]
    fn full_example() {
        let f = add("table=1,priority=10,cookie=0x5,idle_timeout=10,hard_timeout=20,send_flow_rem,check_overlap,reset_counts,\
                     in_port=1,dl_dst=aa:bb:cc:dd:ee:ff/ff:ff:ff:00:00:00,tcp,nw_dst=10.0.0.0/8,tp_dst=80,metadata=0x1/0xff \
                     actions=set_field:10.0.0.1->ip_dst,output:2");
        assert_eq!(f.table_id, Some(1));
        assert_eq!(
            (f.priority, f.cookie, f.idle_timeout, f.hard_timeout),
            (10, 5, 10, 20)
        );
        assert_eq!(f.flags, 7);
        assert_eq!(
            f.match_.fields,
            vec![
                OxmField::InPort(1),
                OxmField::Metadata(1, Some(0xff)),
                OxmField::EthDst(
                    [0xaa, 0xbb, 0xcc, 0, 0, 0],
                    Some([0xff, 0xff, 0xff, 0, 0, 0])
                ),
                OxmField::EthType(0x0800),
                OxmField::IpProto(6),
                OxmField::Ipv4Dst(
                    Ipv4Addr::new(10, 0, 0, 0),
                    Some(Ipv4Addr::new(255, 0, 0, 0))
                ),
                OxmField::TcpDst(80),
            ]
        );
        assert_eq!(
            f.instructions,
            vec![Instruction::ApplyActions(vec![
                Action::SetField(OxmField::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1), None)),
                Action::Output {
                    port: 2,
                    max_len: 0
                }
            ])]
        );
        assert_eq!(
            format_flow(&f),
            "table=1,cookie=0x5,idle_timeout=10,hard_timeout=20,send_flow_rem,check_overlap,reset_counts,\
             priority=10,tcp,metadata=0x1/0xff,in_port=1,dl_dst=aa:bb:cc:00:00:00/ff:ff:ff:00:00:00,\
             nw_dst=10.0.0.0/8,tp_dst=80,actions=set_field:10.0.0.1->ip_dst,output:2"
        );
    }

    #[test]
    fn remaps() {
        let f = add("udp,tp_src=53,actions=drop");
        assert_eq!(f.match_.get(field::UDP_SRC), Some(&OxmField::UdpSrc(53)));
        let f = add("arp,nw_src=10.0.0.1,nw_proto=2,actions=drop");
        assert!(f.match_.get(field::ARP_SPA).is_some());
        assert_eq!(f.match_.get(field::ARP_OP), Some(&OxmField::ArpOp(2)));
        let f = add("icmp6,icmp_type=135,nd_target=fe80::1,actions=drop");
        assert_eq!(
            f.match_.get(field::ICMPV6_TYPE),
            Some(&OxmField::Icmpv6Type(135))
        );
        assert_eq!(add("tcp,nw_proto=6,actions=drop"), add("tcp,actions=drop"));
        let e = err("tcp,nw_proto=17,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 4);
        let e = err("out_port=1,actions=drop", FlowUsage::Add);
        assert!(e.message.contains("only selects"), "{}", e.message);
        let f = add("sctp6,tp_dst=9,actions=drop");
        assert_eq!(f.match_.get(field::SCTP_DST), Some(&OxmField::SctpDst(9)));
    }

    #[test]
    fn vlan_forms() {
        let f = add("dl_vlan=10,dl_vlan_pcp=3,actions=drop");
        assert_eq!(
            f.match_.fields,
            vec![OxmField::VlanVid(0x100a, None), OxmField::VlanPcp(3)]
        );
        let f = add("vlan_tci=0,actions=drop");
        assert_eq!(f.match_.fields, vec![OxmField::VlanVid(0, None)]);
        let f = add("vlan_tci=0x1000/0x1000,actions=drop");
        assert_eq!(
            f.match_.fields,
            vec![OxmField::VlanVid(0x1000, Some(0x1000))]
        );
        assert_eq!(format_match(&f.match_, None), "vlan_tci=0x1000/0x1000");
    }

    #[test]
    fn round_trips() {
        let flows = [
            "priority=10,ip,nw_dst=10.0.0.0/8,actions=output:2",
            "actions=drop",
            "priority=0,actions=CONTROLLER:65535",
            "table=3,in_port=LOCAL,actions=NORMAL",
            "cookie=0x1,udp6,ipv6_src=2001:db8::/32,ipv6_label=0x5,tp_dst=53,actions=ALL",
            "arp,arp_op=1,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24,arp_sha=00:00:00:00:00:01,arp_tha=00:00:00:00:00:02,actions=FLOOD",
            "icmp,icmp_type=8,icmp_code=0,nw_tos=32,nw_ecn=1,actions=dec_ttl,output:1",
            "icmp6,icmpv6_type=136,nd_target=fe80::1,nd_tll=00:11:22:33:44:55,actions=drop",
            "icmp6,icmpv6_type=135,nd_sll=00:11:22:33:44:55,actions=drop",
            "mpls,mpls_label=100,mpls_tc=3,mpls_bos=1,actions=pop_mpls:0x0800,output:1",
            "dl_type=0x88e7,pbb_isid=0x10/0xff,actions=pop_pbb",
            "tun_id=0x10/0xff,in_port=1,in_phy_port=1,actions=goto_table:1",
            "ipv6,ipv6_exthdr=0x4/0x4,actions=drop",
            "ipv6,ipv6_exthdr=+nonext-esp-frag,actions=drop",
            "ipv6,ipv6_exthdr=0x11,actions=drop",
            "sctp,tp_src=1,tp_dst=2,actions=write_actions(output:1),clear_actions",
            "ip,nw_proto=47,actions=meter:1,write_metadata:0x1/0xff,goto_table:5",
            "dl_src=00:00:00:00:00:01,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,dl_vlan=5,dl_vlan_pcp=2,actions=strip_vlan,output:1",
            "idle_timeout=5,no_packet_counts,no_byte_counts,tcp6,tp_src=0x100,actions=IN_PORT",
        ];
        for s in flows {
            let f = add(s);
            let printed = format_flow(&f);
            let again = add(&printed);
            assert_eq!(again, f, "{s} -> {printed}");
            assert_eq!(format_flow(&again), printed);
        }
    }

    /// One sample match per OXM field (with its prerequisites), exact and,
    /// where allowed, masked: print and parse back to the same match.
    #[test]
    fn every_field_round_trips() {
        use ofp::oxm::FIELD_INFO;
        for info in FIELD_INFO {
            let prereq: &[OxmField] = match info.id {
                field::IN_PHY_PORT => &[OxmField::InPort(1)],
                field::VLAN_PCP => &[OxmField::VlanVid(0x1005, None)],
                field::IP_DSCP
                | field::IP_ECN
                | field::IP_PROTO
                | field::IPV4_SRC
                | field::IPV4_DST => &[OxmField::EthType(0x0800)],
                field::TCP_SRC | field::TCP_DST | field::TCP_FLAGS => {
                    &[OxmField::EthType(0x0800), OxmField::IpProto(6)]
                }
                field::UDP_SRC | field::UDP_DST => {
                    &[OxmField::EthType(0x86dd), OxmField::IpProto(17)]
                }
                field::SCTP_SRC | field::SCTP_DST => {
                    &[OxmField::EthType(0x0800), OxmField::IpProto(132)]
                }
                field::ICMPV4_TYPE | field::ICMPV4_CODE => {
                    &[OxmField::EthType(0x0800), OxmField::IpProto(1)]
                }
                field::ARP_OP
                | field::ARP_SPA
                | field::ARP_TPA
                | field::ARP_SHA
                | field::ARP_THA => &[OxmField::EthType(0x0806)],
                field::IPV6_SRC | field::IPV6_DST | field::IPV6_FLABEL | field::IPV6_EXTHDR => {
                    &[OxmField::EthType(0x86dd)]
                }
                field::ICMPV6_TYPE | field::ICMPV6_CODE => {
                    &[OxmField::EthType(0x86dd), OxmField::IpProto(58)]
                }
                field::IPV6_ND_TARGET | field::IPV6_ND_SLL => &[
                    OxmField::EthType(0x86dd),
                    OxmField::IpProto(58),
                    OxmField::Icmpv6Type(135),
                ],
                field::IPV6_ND_TLL => &[
                    OxmField::EthType(0x86dd),
                    OxmField::IpProto(58),
                    OxmField::Icmpv6Type(136),
                ],
                field::MPLS_LABEL | field::MPLS_TC | field::MPLS_BOS => {
                    &[OxmField::EthType(0x8848)]
                }
                field::PBB_ISID => &[OxmField::EthType(0x88e7)],
                _ => &[],
            };
            let width = if info.len >= 16 {
                u128::MAX
            } else {
                (1u128 << (8 * info.len)) - 1
            };
            let value = info.max.min(width) & 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef | 1;
            let value = value.min(info.max);
            let mut samples = vec![(value, None)];
            if info.maskable {
                let mask = width & !0xf;
                samples.push((value & mask, Some(mask)));
            }
            for (v, m) in samples {
                let Some(f) = OxmField::from_bits(info.id, v, m) else {
                    panic!("{}: {v:#x}/{m:?}", info.name);
                };
                if prereq.iter().any(|p| p.field_id() == info.id) {
                    continue;
                }
                let mut fields: Vec<OxmField> = prereq.to_vec();
                fields.push(f);
                fields.sort_by_key(oxm_key);
                let m = Match::new(fields);
                let text = format!("{},actions=drop", format_match(&m, None));
                let back = parse_flow(&text, FlowUsage::Add)
                    .unwrap_or_else(|e| panic!("{}: {}", info.name, e.render(&text)));
                assert_eq!(back.match_, m, "{} via {text}", info.name);
            }
        }
    }

    /// Mangled inputs give errors (or flows), never panics, and every error
    /// points inside the input.
    #[test]
    fn mangled_inputs_never_panic() {
        let base = "table=1,priority=10,cookie=0x1/0xff,tcp,nw_dst=10.0.0.0/8,tp_dst=80,\
                    dl_vlan=5,vlan_tci=0x1000/0x1000 actions=write_actions(output:1),\
                    set_field:1.2.3.4->ip_src,controller(max_len=5),goto_table:2";
        let subst = [
            ',', '=', ':', '(', ')', '/', ' ', '-', '>', 'x', '0', '\u{e9}',
        ];
        for i in 0..base.len() {
            for c in subst {
                let mut s = base.to_string();
                s.replace_range(i..i + 1, &c.to_string());
                for usage in [FlowUsage::Add, FlowUsage::Modify, FlowUsage::Filter] {
                    if let Err(e) = parse_flow(&s, usage) {
                        assert!(e.offset <= s.len(), "{s}");
                        let _ = e.render(&s);
                    }
                }
                let _ = crate::group::parse_group(&s, crate::group::GroupUsage::Add);
                let _ = crate::meter::parse_meter(&s, crate::meter::MeterUsage::Add);
            }
            let cut = &base[..i];
            let _ = parse_flow(cut, FlowUsage::Add);
        }
    }

    #[test]
    fn oxm_names() {
        let a = add("eth_type=0x0800,ipv4_src=1.2.3.4,ip_proto=6,tcp_dst=22,eth_src=00:00:00:00:00:01,actions=drop");
        let b = add("tcp,nw_src=1.2.3.4,tp_dst=22,dl_src=00:00:00:00:00:01,actions=drop");
        assert_eq!(a, b);
    }

    fn err(s: &str, usage: FlowUsage) -> SyntaxError {
        parse_flow(s, usage).expect_err(s)
    }

    #[test]
    fn errors_point_at_token() {
        let s = "table=0,priority=1,nw_srcc=10.0.0.1,actions=drop";
        let e = err(s, FlowUsage::Add);
        assert_eq!(e.message, "unknown field \"nw_srcc\"");
        assert_eq!((e.offset, e.len), (19, 7));
        assert!(e
            .render(s)
            .starts_with("error: unknown field \"nw_srcc\" at column 20\n"));

        let e = err("ip,nw_dst=10.0.0.300,actions=drop", FlowUsage::Add);
        assert_eq!((e.offset, e.len), (10, 10));

        let e = err("in_port=1,tp_dst=80,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 10);
        assert!(e.message.contains("tcp"), "{}", e.message);

        let e = err("nw_dst=10.0.0.1,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 0);

        let e = err("in_port=1", FlowUsage::Add);
        assert!(e.message.contains("action"));
        let e = err("in_port=1,actions=output:1", FlowUsage::Filter);
        assert_eq!(e.offset, 10);
        let e = err("cookie=1/1,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 7);
        let e = err("tcp,udp,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 4);
        let e = err("dl_vlan_pcp=1,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 0);
        let e = err("ip,actions=output:1,bogus", FlowUsage::Add);
        assert_eq!(e.offset, 20);
        let e = err("priority=70000,actions=drop", FlowUsage::Add);
        assert_eq!(e.offset, 9);
    }

    #[test]
    fn to_flow_mod_defaults() {
        let f = parse_flow("ip", FlowUsage::Filter).unwrap();
        let fm = f.to_flow_mod(flow_mod_command::DELETE);
        assert_eq!(fm.table_id, table_id::ALL);
        assert_eq!(fm.out_port, port_no::ANY);
        let f = add("actions=drop");
        assert_eq!(f.to_flow_mod(flow_mod_command::ADD).table_id, 0);
        assert_eq!(
            f.to_flow_mod(flow_mod_command::ADD).priority,
            DEFAULT_PRIORITY
        );
        let f = parse_flow("cookie=0x1/0xf,out_port=2", FlowUsage::Filter).unwrap();
        let r = f.to_stats_request();
        assert_eq!((r.cookie, r.cookie_mask, r.out_port), (1, 0xf, 2));
    }
}
