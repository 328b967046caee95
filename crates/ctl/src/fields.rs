//! The field registry: every match/set-field name ovs-ofctl accepts for
//! OpenFlow 1.3, the OXM field it stands for, and how its value is written.
//!
//! The names come from the field registry ([`packet::registry`]): its rows
//! give each field's accepted names (the first is the one printed in
//! matches), OXM identity and value syntax ([`Kind`]). [`fields()`] lists
//! them with the OpenFlow 1.0 style names whose meaning depends on the
//! protocol (`tp_src`, `nw_src` under `arp`, ...) and their [`Remap`] rule,
//! applied once the whole match is known.
//!
//! Values are handled as right-aligned integers (`OxmField::bits`), so one
//! parser/printer pair per [`Kind`] serves every field.

use std::net::{Ipv4Addr, Ipv6Addr};

use std::sync::OnceLock;

use ofp::oxm::{class, field, OxmField};
use ofp::port::port_no;
use packet::registry::Syntax;

/// How a field's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Integer printed in decimal (masks in hex).
    Dec,
    /// Integer printed in hex.
    Hex,
    /// A port number or reserved port name.
    Port,
    Mac,
    Ipv4,
    Ipv6,
    /// IPV6_EXTHDR's pseudo-header flags: an integer `VALUE[/MASK]`, or
    /// flag names each with `+` (must be set) or `-` (must be clear), the
    /// mask being the flags named (`+frag-esp`); see [`EXTHDR_FLAGS`].
    Exthdr,
    /// TCP flags, as [`Kind::Exthdr`] with the names of [`TCP_FLAGS`]
    /// (`+syn-ack`, or `0x2/0x12`).
    TcpFlags,
}

/// The IPV6_EXTHDR flags (OpenFlow 1.3.5 §7.2.3.8, `OFPIEH_*`) by name,
/// in bit order.
pub const EXTHDR_FLAGS: [(&str, u16); 9] = [
    ("nonext", 1 << 0),
    ("esp", 1 << 1),
    ("auth", 1 << 2),
    ("dest", 1 << 3),
    ("frag", 1 << 4),
    ("router", 1 << 5),
    ("hop", 1 << 6),
    ("unrep", 1 << 7),
    ("unseq", 1 << 8),
];

/// TCP flags (`tcp_flags`) by name, in bit order, as ovs-ofctl names
/// them.
pub const TCP_FLAGS: [(&str, u16); 9] = [
    ("fin", 1 << 0),
    ("syn", 1 << 1),
    ("rst", 1 << 2),
    ("psh", 1 << 3),
    ("ack", 1 << 4),
    ("urg", 1 << 5),
    ("ece", 1 << 6),
    ("cwr", 1 << 7),
    ("ns", 1 << 8),
];

/// `+name-name...` flag syntax of [`Kind::Exthdr`] and [`Kind::TcpFlags`]
/// over the flags `table` of `field`: (value, mask), the mask being the
/// flags named.
fn parse_flags(s: &str, field: &str, table: &[(&str, u16)]) -> Result<(u16, u16), String> {
    let (mut value, mut mask) = (0u16, 0u16);
    let mut rest = s;
    while let Some(sign) = rest.chars().next() {
        let body = &rest[1..];
        let end = body.find(['+', '-']).unwrap_or(body.len());
        let name = &body[..end];
        let bit = table
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, b)| *b)
            .ok_or_else(|| {
                let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown {field} flag \"{name}\" (expected {})",
                    names.join(", ")
                )
            })?;
        if mask & bit != 0 {
            return Err(format!("{field} flag \"{name}\" given twice"));
        }
        mask |= bit;
        if sign == '+' {
            value |= bit;
        }
        rest = &body[end..];
    }
    Ok((value, mask))
}

/// The flag syntax of `kind`: IPV6_EXTHDR with every flag named is an
/// exact match (the field has no other bits); TCP flags keep the mask.
fn parse_kind_flags(kind: Kind, s: &str) -> Result<(u128, Option<u128>), String> {
    let (value, mask) = match kind {
        TcpFlags => parse_flags(s, "tcp_flags", &TCP_FLAGS)?,
        _ => parse_flags(s, "ipv6_exthdr", &EXTHDR_FLAGS)?,
    };
    let all = EXTHDR_FLAGS.iter().fold(0, |a, (_, b)| a | b);
    let exact = kind == Exthdr && mask == all;
    Ok((u128::from(value), (!exact).then_some(u128::from(mask))))
}

/// `+name-name...` for flags `value` under `mask` (`None` if the bits are
/// not all flags of `table`).
fn format_flags(value: u128, mask: u128, table: &[(&str, u16)]) -> Option<String> {
    let all: u128 = table.iter().fold(0, |a, (_, b)| a | u128::from(*b));
    if mask == 0 || mask & !all != 0 || value & !mask != 0 {
        return None;
    }
    Some(
        table
            .iter()
            .filter(|(_, b)| mask & u128::from(*b) != 0)
            .map(|(n, b)| {
                let sign = if value & u128::from(*b) != 0 {
                    '+'
                } else {
                    '-'
                };
                format!("{sign}{n}")
            })
            .collect(),
    )
}

/// Protocol-dependent meaning of an OpenFlow 1.0 style name, resolved after
/// the whole match is parsed (see `flow::MatchBuilder::finish`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remap {
    None,
    /// `tp_src`/`tp_dst`: TCP, UDP or SCTP port by `ip_proto`.
    Transport,
    /// `nw_src`/`nw_dst`/`nw_proto`: ARP SPA/TPA/op under `arp`.
    Arp,
    /// `icmp_type`/`icmp_code`: ICMPv6 under `icmp6`.
    Icmp,
}

/// One row of the registry.
#[derive(Debug, Clone, Copy)]
pub struct FieldDef {
    /// Accepted names; `names[0]` is printed in matches.
    pub names: &'static [&'static str],
    /// OXM field id.
    pub id: u8,
    pub kind: Kind,
    pub remap: Remap,
}

/// ovs-ofctl's OpenFlow 1.0 style names whose field depends on the rest of
/// the match: ctl syntax, not fields, so they live here rather than in the
/// field registry.
const ALIASES: &[FieldDef] = &[
    alias(&["nw_proto"], field::IP_PROTO, Dec, Remap::Arp),
    alias(&["nw_src"], field::IPV4_SRC, Ipv4, Remap::Arp),
    alias(&["nw_dst"], field::IPV4_DST, Ipv4, Remap::Arp),
    alias(&["tp_src"], field::TCP_SRC, Dec, Remap::Transport),
    alias(&["tp_dst"], field::TCP_DST, Dec, Remap::Transport),
    alias(&["icmp_type"], field::ICMPV4_TYPE, Dec, Remap::Icmp),
    alias(&["icmp_code"], field::ICMPV4_CODE, Dec, Remap::Icmp),
];

const fn alias(names: &'static [&'static str], id: u8, kind: Kind, remap: Remap) -> FieldDef {
    FieldDef {
        names,
        id,
        kind,
        remap,
    }
}

use Kind::*;

/// How ctl writes a value of registry syntax `s`.
pub fn kind_of(s: Syntax) -> Kind {
    match s {
        Syntax::Dec => Dec,
        Syntax::Hex => Hex,
        Syntax::Port => Port,
        Syntax::Mac => Mac,
        Syntax::Ipv4 => Ipv4,
        Syntax::Ipv6 => Ipv6,
        Syntax::Exthdr => Exthdr,
        Syntax::TcpFlags => TcpFlags,
    }
}

/// Every OXM basic field name: the field registry's rows
/// ([`packet::FIELD_DEFS`]) with an OPENFLOW_BASIC identity and ctl names,
/// then [`ALIASES`]. `dl_vlan`, `vlan_tci` and `nw_tos` are special (a
/// value transformation, not just a name) and handled in `flow`.
pub fn fields() -> &'static [FieldDef] {
    static ROWS: OnceLock<Vec<FieldDef>> = OnceLock::new();
    ROWS.get_or_init(|| {
        packet::FIELD_DEFS
            .iter()
            .filter_map(|d| {
                let oxm = d.oxm.filter(|o| o.class == class::OPENFLOW_BASIC)?;
                (!d.ctl.is_empty()).then_some(FieldDef {
                    names: d.ctl,
                    id: oxm.field,
                    kind: kind_of(d.syntax),
                    remap: Remap::None,
                })
            })
            .chain(ALIASES.iter().copied())
            .collect()
    })
}

/// The registry row of an experimenter field ctl calls `name` (BEBA
/// `state`, `global_state`).
pub fn lookup_experimenter(name: &str) -> Option<&'static packet::FieldDef> {
    packet::registry::by_ctl_name(name)
        .filter(|d| d.oxm.is_some_and(|o| o.class == class::EXPERIMENTER))
}

/// The experimenter OXM field for registry row `d` with `value`/`mask`
/// (a full mask is dropped).
pub fn make_experimenter_field(
    d: &packet::FieldDef,
    value: u128,
    mask: Option<u128>,
) -> Result<OxmField, String> {
    let name = d.ctl_name().unwrap_or(d.name);
    let oxm = d
        .oxm
        .filter(|o| o.class == class::EXPERIMENTER)
        .ok_or_else(|| format!("{name} is not an experimenter field"))?;
    let full = if d.width >= 16 {
        u128::MAX
    } else {
        (1u128 << (8 * d.width)) - 1
    };
    let mask = mask.filter(|m| *m != full);
    if mask.is_some() && !d.maskable {
        return Err(format!("field {name} cannot be masked"));
    }
    if value & !full != 0 || mask.is_some_and(|m| m & !full != 0) {
        return Err(format!("value out of range for field {name}"));
    }
    if mask.is_some_and(|m| value & !m != 0) {
        return Err(format!("field {name}: value bits outside the mask"));
    }
    let mut payload = value.to_be_bytes()[16 - d.width..].to_vec();
    if let Some(m) = mask {
        payload.extend_from_slice(&m.to_be_bytes()[16 - d.width..]);
    }
    Ok(OxmField::Experimenter {
        field: oxm.field,
        has_mask: mask.is_some(),
        experimenter: oxm.experimenter,
        payload,
    })
}

/// `NAME=VALUE[/MASK]` for an experimenter field the registry knows, or
/// `None`.
pub fn format_experimenter_field(f: &OxmField) -> Option<String> {
    let OxmField::Experimenter {
        field,
        has_mask,
        experimenter,
        payload,
    } = f
    else {
        return None;
    };
    let d = packet::registry::by_oxm(packet::OxmId::experimenter(*experimenter, *field))?;
    let want = if *has_mask { 2 * d.width } else { d.width };
    if payload.len() != want {
        return None;
    }
    let int = |b: &[u8]| b.iter().fold(0u128, |a, x| (a << 8) | u128::from(*x));
    let value = int(&payload[..d.width]);
    let mask = has_mask.then(|| int(&payload[d.width..]));
    Some(format!(
        "{}={}",
        d.ctl_name()?,
        format_value(kind_of(d.syntax), value, mask)
    ))
}

/// The registry row for a name.
pub fn lookup(name: &str) -> Option<&'static FieldDef> {
    fields().iter().find(|d| d.names.contains(&name))
}

/// The first row for an OXM id (its printed name and kind).
pub fn by_id(id: u8) -> Option<&'static FieldDef> {
    fields()
        .iter()
        .find(|d| d.id == id && d.remap == Remap::None)
        .or_else(|| fields().iter().find(|d| d.id == id))
}

/// Name used in matches: OpenFlow 1.0 style where ovs-ofctl prints one.
pub fn match_name(id: u8) -> &'static str {
    match id {
        field::IPV4_SRC => "nw_src",
        field::IPV4_DST => "nw_dst",
        field::IP_PROTO => "nw_proto",
        field::TCP_SRC | field::UDP_SRC | field::SCTP_SRC => "tp_src",
        field::TCP_DST | field::UDP_DST | field::SCTP_DST => "tp_dst",
        field::ICMPV4_TYPE => "icmp_type",
        field::ICMPV4_CODE => "icmp_code",
        _ => by_id(id).map_or("?", |d| d.names[0]),
    }
}

/// Name used in `set_field:...->NAME` (the OXM-style name ovs-ofctl prints).
pub fn oxm_name(id: u8) -> &'static str {
    match id {
        field::ETH_DST => "eth_dst",
        field::ETH_SRC => "eth_src",
        field::ETH_TYPE => "eth_type",
        field::VLAN_PCP => "vlan_pcp",
        field::IP_ECN => "ip_ecn",
        field::IP_PROTO => "ip_proto",
        field::IPV4_SRC => "ip_src",
        field::IPV4_DST => "ip_dst",
        field::ICMPV4_TYPE => "icmpv4_type",
        field::ICMPV4_CODE => "icmpv4_code",
        _ => by_id(id).map_or("?", |d| d.names[0]),
    }
}

/// Parse an unsigned integer: decimal or `0x` hex.
pub fn parse_int(s: &str) -> Option<u128> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u128::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Parse a port: a number, a reserved name (any case), or the name of one
/// of the switch's ports once [`set_port_names`] has given them (as
/// `crate::port_names` does when a command's input names a port).
pub fn parse_port(s: &str) -> Option<u32> {
    let named = match s.to_ascii_uppercase().as_str() {
        "IN_PORT" => port_no::IN_PORT,
        "TABLE" => port_no::TABLE,
        "NORMAL" => port_no::NORMAL,
        "FLOOD" => port_no::FLOOD,
        "ALL" => port_no::ALL,
        "CONTROLLER" => port_no::CONTROLLER,
        "LOCAL" => port_no::LOCAL,
        "ANY" | "NONE" => port_no::ANY,
        _ => {
            return parse_int(s)
                .and_then(|v| u32::try_from(v).ok())
                .or_else(|| port_by_name(s))
        }
    };
    Some(named)
}

thread_local! {
    /// The switch's port names and numbers, once a command asked for them
    /// (`None` before).
    static PORT_NAMES: std::cell::RefCell<Option<Vec<(String, u32)>>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes [`parse_port`] accept these port names (the switch's port
/// descriptions) on this thread.
pub fn set_port_names(names: Vec<(String, u32)>) {
    PORT_NAMES.with(|p| *p.borrow_mut() = Some(names));
}

/// Whether [`set_port_names`] was called on this thread.
pub fn have_port_names() -> bool {
    PORT_NAMES.with(|p| p.borrow().is_some())
}

/// The number of the port called `name` (exact name), if known.
fn port_by_name(name: &str) -> Option<u32> {
    PORT_NAMES.with(|p| {
        p.borrow()
            .as_ref()?
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, no)| *no)
    })
}

/// Print a port number, by name when it is reserved.
pub fn port_name(p: u32) -> String {
    match p {
        port_no::IN_PORT => "IN_PORT".into(),
        port_no::TABLE => "TABLE".into(),
        port_no::NORMAL => "NORMAL".into(),
        port_no::FLOOD => "FLOOD".into(),
        port_no::ALL => "ALL".into(),
        port_no::CONTROLLER => "CONTROLLER".into(),
        port_no::LOCAL => "LOCAL".into(),
        port_no::ANY => "ANY".into(),
        n => n.to_string(),
    }
}

fn parse_mac(s: &str) -> Option<u128> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return None;
    }
    let mut v = 0u128;
    for p in parts {
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        v = (v << 8) | u128::from(u8::from_str_radix(p, 16).ok()?);
    }
    Some(v)
}

/// A CIDR prefix length as a mask of `bits` bits.
fn prefix_mask(n: u32, bits: u32) -> Option<u128> {
    if n > bits {
        return None;
    }
    let all = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    Some(if n == 0 { 0 } else { (all << (bits - n)) & all })
}

fn parse_one(kind: Kind, s: &str) -> Option<u128> {
    match kind {
        Dec | Hex | Exthdr | TcpFlags => parse_int(s),
        Port => parse_port(s).map(u128::from),
        Mac => parse_mac(s),
        Ipv4 => s.parse::<Ipv4Addr>().ok().map(|a| u32::from(a).into()),
        Ipv6 => s.parse::<Ipv6Addr>().ok().map(u128::from),
    }
}

/// Parse `VALUE[/MASK]` for a field of this kind. Address masks may be a
/// prefix length. Value bits outside the mask are cleared, as ovs-ofctl does.
pub fn parse_value(kind: Kind, s: &str) -> Result<(u128, Option<u128>), String> {
    if matches!(kind, Exthdr | TcpFlags) && s.starts_with(['+', '-']) {
        return parse_kind_flags(kind, s);
    }
    let (v, m) = match s.split_once('/') {
        Some((v, m)) => (v, Some(m)),
        None => (s, None),
    };
    let value = parse_one(kind, v).ok_or_else(|| format!("bad value \"{v}\""))?;
    let mask = match m {
        None => None,
        Some(m) => {
            let prefix = match kind {
                Ipv4 if !m.contains('.') => m.parse().ok().and_then(|n| prefix_mask(n, 32)),
                Ipv6 if !m.contains(':') => m.parse().ok().and_then(|n| prefix_mask(n, 128)),
                _ => None,
            };
            let mask = match prefix {
                Some(p) => p,
                None => parse_one(kind, m).ok_or_else(|| format!("bad mask \"{m}\""))?,
            };
            Some(mask)
        }
    };
    Ok(match mask {
        Some(m) => (value & m, Some(m)),
        None => (value, None),
    })
}

/// Build the OXM field `id` from parsed bits; a full mask becomes "exact".
pub fn make_field(id: u8, value: u128, mask: Option<u128>) -> Result<OxmField, String> {
    let info = ofp::oxm::field::info(id).ok_or("unknown OXM field")?;
    let full = if info.len >= 16 {
        u128::MAX
    } else {
        (1u128 << (8 * info.len)) - 1
    };
    let mask = mask.filter(|m| *m != full);
    if mask.is_some() && !info.maskable {
        return Err(format!("field {} cannot be masked", oxm_name(id)));
    }
    OxmField::from_bits(id, value, mask)
        .ok_or_else(|| format!("value out of range for field {}", oxm_name(id)))
}

fn cidr_len(m: u128, bits: u32) -> Option<u32> {
    let n = m.count_ones();
    (prefix_mask(n, bits) == Some(m)).then_some(n)
}

fn fmt_one(kind: Kind, v: u128) -> String {
    match kind {
        Dec => v.to_string(),
        Hex | Exthdr | TcpFlags => format!("{v:#x}"),
        Port => u32::try_from(v).map_or_else(|_| v.to_string(), port_name),
        Mac => {
            let b = (v as u64).to_be_bytes();
            format!(
                "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
                b[2], b[3], b[4], b[5], b[6], b[7]
            )
        }
        Ipv4 => Ipv4Addr::from(v as u32).to_string(),
        Ipv6 => Ipv6Addr::from(v).to_string(),
    }
}

/// Print `VALUE[/MASK]` the way ovs-ofctl does.
pub fn format_value(kind: Kind, value: u128, mask: Option<u128>) -> String {
    let Some(m) = mask else {
        return fmt_one(kind, value);
    };
    match kind {
        Exthdr => {
            format_flags(value, m, &EXTHDR_FLAGS).unwrap_or_else(|| format!("{value:#x}/{m:#x}"))
        }
        TcpFlags => {
            format_flags(value, m, &TCP_FLAGS).unwrap_or_else(|| format!("{value:#x}/{m:#x}"))
        }
        Dec | Hex | Port => format!("{value:#x}/{m:#x}"),
        Mac => format!("{}/{}", fmt_one(kind, value), fmt_one(kind, m)),
        Ipv4 => match cidr_len(m, 32) {
            Some(n) => format!("{}/{n}", fmt_one(kind, value)),
            None => format!("{}/{}", fmt_one(kind, value), fmt_one(kind, m)),
        },
        Ipv6 => match cidr_len(m, 128) {
            Some(n) => format!("{}/{n}", fmt_one(kind, value)),
            None => format!("{}/{}", fmt_one(kind, value), fmt_one(kind, m)),
        },
    }
}

/// Print one basic field as `VALUE[/MASK]` (no name).
pub fn format_field_value(f: &OxmField) -> String {
    match f.bits() {
        Some((v, m)) => {
            let kind = by_id(f.field_id()).map_or(Hex, |d| d.kind);
            format_value(kind, v, m)
        }
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(
            parse_value(Ipv4, "10.1.2.3/8").unwrap(),
            (0x0a00_0000, Some(0xff00_0000))
        );
        assert_eq!(parse_value(Hex, "0x1/0xff").unwrap(), (1, Some(0xff)));
        assert_eq!(
            parse_value(Mac, "aa:bb:cc:dd:ee:ff").unwrap(),
            (0xaabb_ccdd_eeff, None)
        );
        assert!(parse_value(Mac, "aa:bb:cc:dd:ee").is_err());
        assert!(parse_value(Dec, "12x").is_err());
        assert_eq!(
            parse_value(Port, "LOCAL").unwrap().0,
            u128::from(port_no::LOCAL)
        );
        let (v, m) = parse_value(Ipv6, "2001:db8::1/32").unwrap();
        assert_eq!(format_value(Ipv6, v, m), "2001:db8::/32");
        assert_eq!(
            format_value(Ipv4, 0x0a00_0000, Some(0xff00_00ff)),
            "10.0.0.0/255.0.0.255"
        );
    }

    #[test]
    fn every_basic_field_has_a_name() {
        for info in ofp::oxm::FIELD_INFO {
            assert!(by_id(info.id).is_some(), "{}", info.name);
        }
    }

    #[test]
    fn ipv6_exthdr_flags() {
        assert_eq!(
            parse_value(Exthdr, "+frag-esp").unwrap(),
            (0x10, Some(0x12))
        );
        assert_eq!(parse_value(Exthdr, "-NONEXT").unwrap(), (0, Some(1)));
        assert_eq!(parse_value(Exthdr, "0x4/0x4").unwrap(), (4, Some(4)));
        assert_eq!(format_value(Exthdr, 0x10, Some(0x12)), "-esp+frag");
        assert_eq!(format_value(Exthdr, 0x10, None), "0x10");
        assert_eq!(format_value(Exthdr, 0x10, Some(0x1010)), "0x10/0x1010");
        // Every flag named: an exact match.
        let all = "+nonext-esp-auth-dest-frag-router-hop-unrep+unseq";
        assert_eq!(parse_value(Exthdr, all).unwrap(), (0x101, None));
        let e = parse_value(Exthdr, "+frag+bogus").unwrap_err();
        assert!(e.starts_with("unknown ipv6_exthdr flag \"bogus\""), "{e}");
        assert!(parse_value(Exthdr, "+frag-frag").is_err());
        assert!(parse_value(Exthdr, "+").is_err());
    }

    #[test]
    fn tcp_flags() {
        assert_eq!(
            parse_value(TcpFlags, "+syn-ack").unwrap(),
            (0x2, Some(0x12))
        );
        assert_eq!(
            parse_value(TcpFlags, "0x002/0x012").unwrap(),
            (2, Some(0x12))
        );
        assert_eq!(parse_value(TcpFlags, "2").unwrap(), (2, None));
        assert_eq!(format_value(TcpFlags, 0x2, Some(0x12)), "+syn-ack");
        assert_eq!(format_value(TcpFlags, 0x2, None), "0x2");
        assert_eq!(format_value(TcpFlags, 0x2, Some(0x802)), "0x2/0x802");
        // Every flag named is still a mask: the field has 16 bits.
        let all = "+fin-syn-rst-psh-ack-urg-ece-cwr-ns";
        assert_eq!(parse_value(TcpFlags, all).unwrap(), (1, Some(0x1ff)));
        let e = parse_value(TcpFlags, "+syn+bogus").unwrap_err();
        assert!(e.starts_with("unknown tcp_flags flag \"bogus\""), "{e}");
        assert!(parse_value(TcpFlags, "+syn-syn").is_err());
    }

    #[test]
    fn full_mask_is_exact() {
        assert_eq!(
            make_field(field::IPV4_SRC, 1, Some(0xffff_ffff)).unwrap(),
            OxmField::Ipv4Src(Ipv4Addr::from(1), None)
        );
        assert!(make_field(field::TCP_SRC, 1, Some(1)).is_err());
        assert!(make_field(field::VLAN_PCP, 8, None).is_err());
    }
}
