//! Actions and instructions in ovs-ofctl syntax: parse and print.
//!
//! An `actions=` list mixes actions (which become one APPLY_ACTIONS
//! instruction) with the instruction keywords `write_actions(...)`,
//! `clear_actions`, `write_metadata:V[/M]`, `goto_table:N` and `meter:N`,
//! and BEBA's IN_SWITCH_PKT_GEN as `pkt_gen(TEMPLATE_ID,ACTION...)`
//! (`docs/beba.md`); BEBA's actions are [`crate::beba_actions`]'. The parser returns instructions in ovs-ofctl's
//! canonical order (meter, apply, clear, write-actions, write-metadata,
//! goto, then experimenter instructions), which is also the printing
//! order, so `parse(print(x)) == x` for parsed lists.

use ofp::action::{controller_max_len, Action};
use ofp::beba::InSwitchPktGen;
use ofp::instruction::Instruction;
use ofp::oxm::{field, vid, OxmField};
use ofp::port::port_no;

use crate::fields::{self, format_field_value, make_field, parse_int, parse_port, parse_value};
use crate::lex::{tokenize, Token};
use crate::syntax_error::SyntaxError;

/// What the surrounding flow tells the action parser (for `mod_tp_src`,
/// which means TCP, UDP or SCTP depending on the match).
#[derive(Debug, Clone, Copy, Default)]
pub struct ActionContext {
    pub ip_proto: Option<u8>,
}

fn num<T: TryFrom<u128>>(t: &Token<'_>, what: &str) -> Result<T, SyntaxError> {
    let v = t.need_value()?;
    parse_int(v)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| t.value_err(format!("bad {what} \"{v}\"")))
}

fn set_field(t: &Token<'_>, id: u8, value: u128) -> Result<Action, SyntaxError> {
    make_field(id, value, None)
        .map(Action::SetField)
        .map_err(|e| t.value_err(e))
}

/// `mod_*` shorthands: the OXM id and value syntax they set.
fn mod_target(key: &str, ctx: ActionContext) -> Option<Result<(u8, fields::Kind), &'static str>> {
    use fields::Kind::*;
    let transport = |tcp, udp, sctp| match ctx.ip_proto {
        Some(6) => Ok((tcp, Dec)),
        Some(17) => Ok((udp, Dec)),
        Some(132) => Ok((sctp, Dec)),
        _ => Err("needs a tcp, udp or sctp match; use set_field:N->tcp_src etc."),
    };
    Some(match key {
        "mod_dl_src" => Ok((field::ETH_SRC, Mac)),
        "mod_dl_dst" => Ok((field::ETH_DST, Mac)),
        "mod_nw_src" => Ok((field::IPV4_SRC, Ipv4)),
        "mod_nw_dst" => Ok((field::IPV4_DST, Ipv4)),
        "mod_vlan_pcp" => Ok((field::VLAN_PCP, Dec)),
        "mod_nw_ecn" => Ok((field::IP_ECN, Dec)),
        "mod_tp_src" => transport(field::TCP_SRC, field::UDP_SRC, field::SCTP_SRC),
        "mod_tp_dst" => transport(field::TCP_DST, field::UDP_DST, field::SCTP_DST),
        _ => return None,
    })
}

/// Parse one action token.
pub fn parse_action(t: &Token<'_>, ctx: ActionContext) -> Result<Action, SyntaxError> {
    let key = t.key.to_ascii_lowercase();
    let out = |port| Action::Output { port, max_len: 0 };
    if t.value.is_none() {
        if let Some(p) = parse_int(t.key).and_then(|n| u32::try_from(n).ok()) {
            return Ok(out(p));
        }
    }
    if let Some(beba) = crate::beba_actions::parse(t, &key) {
        return beba;
    }
    let a = match key.as_str() {
        "output" => {
            let v = t.need_value()?;
            out(parse_port(v).ok_or_else(|| t.value_err(format!("bad port \"{v}\"")))?)
        }
        "in_port" | "all" | "flood" | "local" | "normal" | "table" if t.value.is_none() => {
            out(parse_port(&key).unwrap_or(port_no::ANY))
        }
        "controller" => {
            let max_len = match t.value {
                None => controller_max_len::NO_BUFFER,
                Some(v) => {
                    let v = v.strip_prefix("max_len=").unwrap_or(v);
                    parse_int(v)
                        .and_then(|n| u16::try_from(n).ok())
                        .ok_or_else(|| t.value_err(format!("bad max_len \"{v}\"")))?
                }
            };
            Action::Output {
                port: port_no::CONTROLLER,
                max_len,
            }
        }
        "set_field" => {
            let v = t.need_value()?;
            let Some((value, name)) = v.split_once("->") else {
                return Err(t.value_err("set_field needs VALUE->FIELD"));
            };
            let name_at = t.value_at + value.len() + 2;
            let name_err = |m: String| SyntaxError::new(m, name_at, name.len());
            let def = fields::lookup(name)
                .ok_or_else(|| name_err(format!("unknown field \"{name}\"")))?;
            if def.remap == fields::Remap::Transport {
                return Err(name_err(format!(
                    "\"{name}\" is ambiguous here; use tcp_*, udp_* or sctp_*"
                )));
            }
            if !ofp::action::is_settable_field(def.id) {
                return Err(name_err(format!("field \"{name}\" cannot be set")));
            }
            let value_err = |m: String| SyntaxError::new(m, t.value_at, value.len());
            let (val, mask) = parse_value(def.kind, value).map_err(value_err)?;
            let f = make_field(def.id, val, mask).map_err(value_err)?;
            if f.has_mask() {
                return Err(value_err(
                    "a masked set_field needs OpenFlow 1.5; OpenFlow 1.3 sets whole fields".into(),
                ));
            }
            Action::SetField(f)
        }
        "mod_vlan_vid" => {
            let v: u16 = num(t, "VLAN id")?;
            if v > 0xfff {
                return Err(t.value_err("VLAN id above 4095"));
            }
            set_field(t, field::VLAN_VID, u128::from(vid::PRESENT | v))?
        }
        "mod_nw_tos" => {
            let tos: u8 = num(t, "ToS")?;
            if tos & 3 != 0 {
                return Err(t.value_err("ToS low 2 bits (ECN) must be zero"));
            }
            set_field(t, field::IP_DSCP, u128::from(tos >> 2))?
        }
        "push_vlan" => Action::PushVlan(num(t, "ethertype")?),
        "pop_vlan" | "strip_vlan" => Action::PopVlan,
        "push_mpls" => Action::PushMpls(num(t, "ethertype")?),
        "pop_mpls" => Action::PopMpls(num(t, "ethertype")?),
        "push_pbb" => Action::PushPbb(num(t, "ethertype")?),
        "pop_pbb" => Action::PopPbb,
        "set_queue" => Action::SetQueue(num(t, "queue id")?),
        "group" => Action::Group(num(t, "group id")?),
        "dec_ttl" => Action::DecNwTtl,
        "set_nw_ttl" | "mod_nw_ttl" => Action::SetNwTtl(num(t, "TTL")?),
        "set_mpls_ttl" => Action::SetMplsTtl(num(t, "TTL")?),
        "dec_mpls_ttl" => Action::DecMplsTtl,
        "copy_ttl_in" => Action::CopyTtlIn,
        "copy_ttl_out" => Action::CopyTtlOut,
        k => match mod_target(k, ctx) {
            Some(Ok((id, kind))) => {
                let v = t.need_value()?;
                let (val, _) = parse_value(kind, v).map_err(|e| t.value_err(e))?;
                set_field(t, id, val)?
            }
            Some(Err(e)) => return Err(t.key_err(format!("{k} {e}"))),
            None => return Err(t.key_err(format!("unknown action \"{}\"", t.key))),
        },
    };
    Ok(a)
}

/// Parse a plain action list (bucket actions, write_actions, packet-out).
/// `drop` (or an empty list) is no action.
pub fn parse_action_list(
    s: &str,
    base: usize,
    ctx: ActionContext,
) -> Result<Vec<Action>, SyntaxError> {
    let mut v = Vec::new();
    for t in tokenize(s, base)? {
        if t.key.eq_ignore_ascii_case("drop") && t.value.is_none() {
            continue;
        }
        v.push(parse_action(&t, ctx)?);
    }
    Ok(v)
}

/// `pkt_gen(TEMPLATE_ID,ACTION...)`: BEBA's IN_SWITCH_PKT_GEN, which
/// emits template TEMPLATE_ID through the actions.
fn parse_pkt_gen(t: &Token<'_>, ctx: ActionContext) -> Result<Instruction, SyntaxError> {
    let usage = "needs (TEMPLATE_ID,ACTION...), e.g. pkt_gen(1,output:2)";
    let v = match (t.sep, t.value) {
        (Some('('), Some(v)) if !v.is_empty() => v,
        _ => return Err(t.key_err(format!("\"{}\" {usage}", t.key))),
    };
    let mut toks = tokenize(v, t.value_at)?.into_iter();
    let id = toks.next().ok_or_else(|| t.value_err(usage))?;
    let pkttmp_id = match (parse_int(id.key), id.value) {
        (Some(n), None) => u32::try_from(n).map_err(|_| id.err("template id above 32 bits"))?,
        _ => return Err(id.err(format!("bad template id \"{}\": {usage}", id.text))),
    };
    let mut actions = Vec::new();
    for a in toks {
        if !(a.key.eq_ignore_ascii_case("drop") && a.value.is_none()) {
            actions.push(parse_action(&a, ctx)?);
        }
    }
    Ok(InSwitchPktGen { pkttmp_id, actions }.to_instruction())
}

/// Parse the text after `actions=` into instructions (see module doc).
pub fn parse_instructions(
    s: &str,
    base: usize,
    ctx: ActionContext,
) -> Result<Vec<Instruction>, SyntaxError> {
    let mut apply = Vec::new();
    let mut meter = None;
    let mut clear = false;
    let mut write = None;
    let mut metadata = None;
    let mut goto = None;
    let mut pkt_gen = None;
    let dup = |t: &Token<'_>| t.key_err(format!("instruction \"{}\" given twice", t.key));
    for t in tokenize(s, base)? {
        match t.key.to_ascii_lowercase().as_str() {
            "drop" if t.value.is_none() => {}
            "meter" => {
                if meter.replace(num::<u32>(&t, "meter id")?).is_some() {
                    return Err(dup(&t));
                }
            }
            "clear_actions" => {
                if std::mem::replace(&mut clear, true) {
                    return Err(dup(&t));
                }
            }
            "write_actions" => {
                let v = t.value.unwrap_or("");
                let acts = parse_action_list(v, t.value_at, ctx)?;
                if write.replace(acts).is_some() {
                    return Err(dup(&t));
                }
            }
            "write_metadata" => {
                let v = t.need_value()?;
                let (val, mask) = parse_value(fields::Kind::Hex, v).map_err(|e| t.value_err(e))?;
                let val = u64::try_from(val).map_err(|_| t.value_err("metadata above 64 bits"))?;
                let mask = match mask {
                    None => u64::MAX,
                    Some(m) => u64::try_from(m).map_err(|_| t.value_err("mask above 64 bits"))?,
                };
                if metadata.replace((val, mask)).is_some() {
                    return Err(dup(&t));
                }
            }
            "goto_table" => {
                let n: u8 = num(&t, "table id")?;
                if n > ofp::instruction::TABLE_MAX {
                    return Err(t.value_err("table id above 254"));
                }
                if goto.replace(n).is_some() {
                    return Err(dup(&t));
                }
            }
            "pkt_gen" | "in_switch_pkt_gen" => {
                if pkt_gen.replace(parse_pkt_gen(&t, ctx)?).is_some() {
                    return Err(dup(&t));
                }
            }
            _ => apply.push(parse_action(&t, ctx)?),
        }
    }
    let mut out = Vec::new();
    out.extend(meter.map(Instruction::Meter));
    if !apply.is_empty() {
        out.push(Instruction::ApplyActions(apply));
    }
    if clear {
        out.push(Instruction::ClearActions);
    }
    out.extend(write.map(Instruction::WriteActions));
    out.extend(metadata.map(|(metadata, mask)| Instruction::WriteMetadata { metadata, mask }));
    out.extend(goto.map(Instruction::GotoTable));
    out.extend(pkt_gen);
    Ok(out)
}

/// Print one action in ovs-ofctl syntax.
pub fn format_action(a: &Action) -> String {
    match a {
        Action::Output { port, max_len } => match *port {
            port_no::CONTROLLER => format!("CONTROLLER:{max_len}"),
            p if p > port_no::MAX => fields::port_name(p),
            p => format!("output:{p}"),
        },
        Action::SetField(f) => {
            let value = match f {
                OxmField::VlanVid(v, None) => format!("{v:#x}"),
                _ => format_field_value(f),
            };
            format!("set_field:{value}->{}", fields::oxm_name(f.field_id()))
        }
        Action::PushVlan(t) => format!("push_vlan:{t:#06x}"),
        Action::PopVlan => "pop_vlan".into(),
        Action::PushMpls(t) => format!("push_mpls:{t:#06x}"),
        Action::PopMpls(t) => format!("pop_mpls:{t:#06x}"),
        Action::PushPbb(t) => format!("push_pbb:{t:#06x}"),
        Action::PopPbb => "pop_pbb".into(),
        Action::SetQueue(q) => format!("set_queue:{q}"),
        Action::Group(g) => format!("group:{g}"),
        Action::DecNwTtl => "dec_ttl".into(),
        Action::SetNwTtl(n) => format!("mod_nw_ttl:{n}"),
        Action::SetMplsTtl(n) => format!("set_mpls_ttl({n})"),
        Action::DecMplsTtl => "dec_mpls_ttl".into(),
        Action::CopyTtlIn => "copy_ttl_in".into(),
        Action::CopyTtlOut => "copy_ttl_out".into(),
        Action::Experimenter { experimenter, data } => crate::beba_actions::format(a)
            .unwrap_or_else(|| format!("experimenter({experimenter:#x},len={})", data.len())),
    }
}

/// Print an action list; empty is `drop`.
pub fn format_actions(actions: &[Action]) -> String {
    if actions.is_empty() {
        return "drop".into();
    }
    actions
        .iter()
        .map(format_action)
        .collect::<Vec<_>>()
        .join(",")
}

/// Print instructions as the text after `actions=`; none is `drop`.
pub fn format_instructions(insts: &[Instruction]) -> String {
    // Canonical order, whatever the order on the wire.
    let rank = |i: &Instruction| match i {
        Instruction::Meter(_) => 0,
        Instruction::ApplyActions(_) => 1,
        Instruction::ClearActions => 2,
        Instruction::WriteActions(_) => 3,
        Instruction::WriteMetadata { .. } => 4,
        Instruction::GotoTable(_) => 5,
        Instruction::Experimenter { .. } => 6,
    };
    let mut sorted: Vec<&Instruction> = insts.iter().collect();
    sorted.sort_by_key(|i| rank(i));
    let parts: Vec<String> = sorted
        .into_iter()
        .filter_map(|i| match i {
            Instruction::Meter(m) => Some(format!("meter:{m}")),
            Instruction::ApplyActions(a) if a.is_empty() => None,
            Instruction::ApplyActions(a) => Some(format_actions(a)),
            Instruction::ClearActions => Some("clear_actions".into()),
            Instruction::WriteActions(a) => Some(format!(
                "write_actions({})",
                a.iter().map(format_action).collect::<Vec<_>>().join(",")
            )),
            Instruction::WriteMetadata { metadata, mask } if *mask == u64::MAX => {
                Some(format!("write_metadata:{metadata:#x}"))
            }
            Instruction::WriteMetadata { metadata, mask } => {
                Some(format!("write_metadata:{metadata:#x}/{mask:#x}"))
            }
            Instruction::GotoTable(t) => Some(format!("goto_table:{t}")),
            Instruction::Experimenter { experimenter, .. } => {
                Some(match InSwitchPktGen::from_instruction(i) {
                    Some(Ok(g)) if g.actions.is_empty() => format!("pkt_gen({})", g.pkttmp_id),
                    Some(Ok(g)) => {
                        format!("pkt_gen({},{})", g.pkttmp_id, format_actions(&g.actions))
                    }
                    _ => format!("experimenter({experimenter:#x})"),
                })
            }
        })
        .collect();
    if parts.is_empty() {
        "drop".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn insts(s: &str) -> Vec<Instruction> {
        parse_instructions(s, 0, ActionContext { ip_proto: Some(6) }).unwrap()
    }

    #[test]
    fn action_forms() {
        let i = insts(
            "output:1,2,IN_PORT,in_port,ALL,FLOOD,LOCAL,NORMAL,CONTROLLER:128,controller(max_len=64),controller",
        );
        let Instruction::ApplyActions(a) = &i[0] else {
            panic!("{i:?}")
        };
        let ports: Vec<u32> = a
            .iter()
            .map(|a| match a {
                Action::Output { port, .. } => *port,
                _ => 0,
            })
            .collect();
        assert_eq!(
            ports,
            [
                1,
                2,
                port_no::IN_PORT,
                port_no::IN_PORT,
                port_no::ALL,
                port_no::FLOOD,
                port_no::LOCAL,
                port_no::NORMAL,
                port_no::CONTROLLER,
                port_no::CONTROLLER,
                port_no::CONTROLLER
            ]
        );
        assert_eq!(
            a[8],
            Action::Output {
                port: port_no::CONTROLLER,
                max_len: 128
            }
        );
        assert_eq!(
            a[9],
            Action::Output {
                port: port_no::CONTROLLER,
                max_len: 64
            }
        );
        assert_eq!(
            a[10],
            Action::Output {
                port: port_no::CONTROLLER,
                max_len: 0xffff
            }
        );
    }

    #[test]
    fn set_fields_and_mods() {
        let i = insts("set_field:10.0.0.1->ip_dst,mod_nw_src:1.2.3.4,mod_tp_dst:80,mod_vlan_vid:10,mod_nw_tos:16");
        assert_eq!(
            i,
            vec![Instruction::ApplyActions(vec![
                Action::SetField(OxmField::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1), None)),
                Action::SetField(OxmField::Ipv4Src(Ipv4Addr::new(1, 2, 3, 4), None)),
                Action::SetField(OxmField::TcpDst(80)),
                Action::SetField(OxmField::VlanVid(0x100a, None)),
                Action::SetField(OxmField::IpDscp(4)),
            ])]
        );
    }

    #[test]
    fn instructions_canonical_order() {
        let i = insts("goto_table:2,write_metadata:0x1/0xff,output:1,meter:3,clear_actions,write_actions(group:1,output:2)");
        assert_eq!(
            i,
            vec![
                Instruction::Meter(3),
                Instruction::ApplyActions(vec![Action::Output {
                    port: 1,
                    max_len: 0
                }]),
                Instruction::ClearActions,
                Instruction::WriteActions(vec![
                    Action::Group(1),
                    Action::Output {
                        port: 2,
                        max_len: 0
                    }
                ]),
                Instruction::WriteMetadata {
                    metadata: 1,
                    mask: 0xff
                },
                Instruction::GotoTable(2),
            ]
        );
        assert_eq!(
            format_instructions(&i),
            "meter:3,output:1,clear_actions,write_actions(group:1,output:2),write_metadata:0x1/0xff,goto_table:2"
        );
        assert_eq!(insts(&format_instructions(&i)), i);
        assert!(insts("drop").is_empty());
        assert_eq!(format_instructions(&[]), "drop");
    }

    #[test]
    fn every_action_round_trips() {
        let s =
            "push_vlan:0x8100,pop_vlan,push_mpls:0x8847,pop_mpls:0x0800,push_pbb:0x88e7,pop_pbb,\
                 set_queue:3,group:7,dec_ttl,mod_nw_ttl:9,set_mpls_ttl(5),dec_mpls_ttl,copy_ttl_in,\
                 copy_ttl_out,set_field:aa:bb:cc:dd:ee:ff->eth_dst,set_field:0x100a->vlan_vid,\
                 set_field:2001:db8::1->ipv6_src,set_field:80->udp_src,output:3,CONTROLLER:65535";
        let i = insts(s);
        assert_eq!(format_instructions(&i), s);
    }

    /// set_field on every settable field prints and parses back.
    #[test]
    fn every_set_field_round_trips() {
        for info in ofp::oxm::FIELD_INFO {
            if !ofp::action::is_settable_field(info.id) {
                continue;
            }
            let width = if info.len >= 16 {
                u128::MAX
            } else {
                (1u128 << (8 * info.len)) - 1
            };
            let v = (width & 0x0123_4567_89ab_cdef_0123_4567_89ab_cdef).min(info.max) | 1;
            let f = OxmField::from_bits(info.id, v.min(info.max), None).expect(info.name);
            let a = vec![Action::SetField(f)];
            let text = format_actions(&a);
            let back = parse_action_list(&text, 0, ActionContext::default())
                .unwrap_or_else(|e| panic!("{}", e.render(&text)));
            assert_eq!(back, a, "{text}");
        }
    }

    #[test]
    fn bad_actions_point_at_token() {
        let ctx = ActionContext::default();
        let e = parse_instructions("output:1,outptu:2", 10, ctx).unwrap_err();
        assert_eq!((e.offset, e.len), (19, 6));
        assert!(e.message.contains("unknown action"));
        let e = parse_instructions("set_field:1->nw_dstt", 0, ctx).unwrap_err();
        assert_eq!((e.offset, e.len), (13, 7));
        let e = parse_instructions("set_field:1.2.3.x->ip_dst", 0, ctx).unwrap_err();
        assert_eq!(e.offset, 10);
        let e = parse_instructions("mod_tp_dst:80", 0, ctx).unwrap_err();
        assert_eq!(e.offset, 0);
        let e = parse_instructions("goto_table:1,goto_table:2", 0, ctx).unwrap_err();
        assert_eq!(e.offset, 13);
        assert!(parse_instructions("set_field:10.0.0.0/8->ip_dst", 0, ctx).is_err());
        assert!(parse_instructions("set_field:1->in_port", 0, ctx).is_err());
    }

    #[test]
    fn pkt_gen_is_beba_in_switch_pkt_gen() {
        let i = insts("pkt_gen(7,output:2,dec_ttl),output:1");
        let gen = InSwitchPktGen {
            pkttmp_id: 7,
            actions: vec![
                Action::Output {
                    port: 2,
                    max_len: 0,
                },
                Action::DecNwTtl,
            ],
        };
        assert_eq!(
            i,
            vec![
                Instruction::ApplyActions(vec![Action::Output {
                    port: 1,
                    max_len: 0
                }]),
                gen.to_instruction(),
            ]
        );
        let text = format_instructions(&i);
        assert_eq!(text, "output:1,pkt_gen(7,output:2,dec_ttl)");
        assert_eq!(insts(&text), i);
        // No actions: the template is generated and dropped.
        let empty = insts("in_switch_pkt_gen(0)");
        assert_eq!(format_instructions(&empty), "pkt_gen(0)");
        assert_eq!(insts("pkt_gen(0,drop)"), empty);
        let ctx = ActionContext::default();
        for bad in [
            "pkt_gen",
            "pkt_gen:3",
            "pkt_gen()",
            "pkt_gen(x,output:1)",
            "pkt_gen(0x100000000)",
            "pkt_gen(1,outptu:2)",
            "pkt_gen(1),pkt_gen(2)",
        ] {
            assert!(parse_instructions(bad, 0, ctx).is_err(), "{bad}");
        }
        let e = parse_instructions("pkt_gen(1,outptu:2)", 0, ctx).unwrap_err();
        assert_eq!((e.offset, e.len), (10, 6));
    }
}
