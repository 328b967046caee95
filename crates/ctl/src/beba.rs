//! BEBA / OpenState commands (`docs/beba.md` has the syntax and examples):
//! stateful tables, scopes, flow and global states, packet templates, and
//! the state and global-state statistics.
//!
//! ```text
//! beba-config TABLE stateful|stateless
//! beba-lookup-scope TABLE FIELD[,FIELD...]
//! beba-update-scope TABLE FIELD[,FIELD...] [bit]
//! beba-set-state TABLE KEY STATE[/MASK] [idle_timeout=T] [hard_timeout=T]
//!                [idle_rollback=S] [hard_rollback=S]
//! beba-del-state TABLE KEY
//! beba-set-global VALUE[/MASK]
//! beba-reset-global
//! beba-add-template ID HEX
//! beba-del-template ID
//! beba-dump-states [TABLE|all] [state=S] [FIELD=VALUE...] [short] [delete]
//! beba-dump-global
//! ```
//!
//! KEY is `FIELD=VALUE[,FIELD=VALUE...]`, the update scope's fields in its
//! order (turned into the key bytes the BEBA switch uses: ports and other
//! integers little-endian, addresses in network order, see
//! `stateful::key`), or the raw bytes as `0xHEX`. A time T is microseconds,
//! or a number with `s`, `ms` or `us`.

use ofp::beba::{
    BebaMessage, BebaMultipartReply, BebaMultipartRequest, Extractor, PktTmpMod, SetFlowState,
    StateEntryStats, StateMod, StateStatsKind, StateStatsRequest,
};
use ofp::message::Message;
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};
use ofp::oxm::{class, oxm_header, Match};

use crate::fields::{lookup, make_field, parse_int, parse_value};

/// The commands this module handles.
pub const COMMANDS: [&str; 11] = [
    "beba-config",
    "beba-lookup-scope",
    "beba-update-scope",
    "beba-set-state",
    "beba-del-state",
    "beba-set-global",
    "beba-reset-global",
    "beba-add-template",
    "beba-del-template",
    "beba-dump-states",
    "beba-dump-global",
];

/// Usage lines for `oxflow ctl --help`.
pub const USAGE: &str = "  beba-config TABLE stateful|stateless     BEBA state tables (docs/beba.md)
  beba-lookup-scope TABLE FIELDS | beba-update-scope TABLE FIELDS [bit]
  beba-set-state TABLE KEY STATE[/MASK] [idle_timeout=T] [hard_timeout=T] [idle_rollback=S] [hard_rollback=S]
  beba-del-state TABLE KEY | beba-set-global VALUE[/MASK] | beba-reset-global
  beba-add-template ID HEX | beba-del-template ID
  beba-dump-states [TABLE|all] [state=S] [FIELD=VALUE...] [short] [delete] | beba-dump-global";

/// What a BEBA command sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Modifications (sent with a barrier).
    Mods(Vec<Message>),
    /// One multipart request; print the reply with [`format_reply`].
    Dump(MultipartRequestBody),
}

fn msg(m: BebaMessage) -> Message {
    Message::Experimenter(m.to_experimenter())
}

fn state_mod(m: StateMod) -> Request {
    Request::Mods(vec![msg(BebaMessage::StateMod(m))])
}

fn int<T: TryFrom<u128>>(s: &str, what: &str) -> Result<T, String> {
    parse_int(s)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("bad {what} \"{s}\""))
}

fn need<'a>(args: &'a [String], i: usize, what: &str) -> Result<&'a str, String> {
    args.get(i)
        .map(String::as_str)
        .ok_or_else(|| format!("missing {what}"))
}

/// A field name's OXM id and its value bytes (big-endian, the field's
/// width) for `NAME=VALUE`.
fn field_value(s: &str) -> Result<(u8, Vec<u8>, ofp::oxm::OxmField), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FIELD=VALUE, got \"{s}\""))?;
    let def = lookup(name).ok_or_else(|| format!("unknown field \"{name}\""))?;
    let (v, m) = parse_value(def.kind, value)?;
    if m.is_some() {
        return Err(format!("\"{s}\": a key field cannot be masked"));
    }
    let f = make_field(def.id, v, None)?;
    let len = ofp::oxm::field::info(def.id).map_or(0, |i| i.len);
    let be = v.to_be_bytes();
    let bytes = be.get(16 - len..).unwrap_or_default().to_vec();
    Ok((def.id, bytes, f))
}

/// KEY: `0xHEX` or `FIELD=VALUE,...` (see the module comment).
pub fn parse_key(s: &str) -> Result<Vec<u8>, String> {
    if let Some(hex) = s.strip_prefix("0x") {
        if hex.is_empty() || hex.len() % 2 != 0 {
            return Err(format!("bad key \"{s}\": an even number of hex digits"));
        }
        return (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
                    .ok_or_else(|| format!("bad key \"{s}\""))
            })
            .collect();
    }
    let mut key = Vec::new();
    for part in s.split(',') {
        let (id, be, _) = field_value(part)?;
        let f = packet::Field::from_u8(id)
            .ok_or_else(|| format!("field \"{part}\" cannot be in a key"))?;
        key.extend(stateful::key::key_bytes(f, &be));
    }
    Ok(key)
}

/// A scope: comma-separated field names.
fn parse_scope(s: &str) -> Result<Vec<u32>, String> {
    s.split(',')
        .map(|name| {
            let def = lookup(name).ok_or_else(|| format!("unknown field \"{name}\""))?;
            let len = ofp::oxm::field::info(def.id).map_or(0, |i| i.len);
            Ok(oxm_header(class::OPENFLOW_BASIC, def.id, false, len as u8))
        })
        .collect()
}

/// T: microseconds, or `Ns` / `Nms` / `Nus`.
pub fn parse_time_us(s: &str) -> Result<u32, String> {
    let (num, mul) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000_000)
    } else {
        (s, 1)
    };
    let bad = || format!("bad time \"{s}\" (microseconds, or N s / ms / us)");
    let n: u128 = if let Some((whole, frac)) = num.split_once('.') {
        let scale = 10u128.pow(frac.len() as u32);
        let w = whole.parse::<u128>().map_err(|_| bad())?;
        let f = frac.parse::<u128>().map_err(|_| bad())?;
        (w * scale + f) * mul / scale
    } else {
        num.parse::<u128>().map_err(|_| bad())? * mul
    };
    u32::try_from(n).map_err(|_| format!("time \"{s}\" is over 2^32 microseconds"))
}

fn value_mask(s: &str, what: &str) -> Result<(u32, u32), String> {
    match s.split_once('/') {
        Some((v, m)) => Ok((int(v, what)?, int(m, "mask")?)),
        None => Ok((int(s, what)?, u32::MAX)),
    }
}

/// The request of BEBA command `cmd`, or `None` if `cmd` is not one.
pub fn parse(cmd: &str, args: &[String]) -> Option<Result<Request, String>> {
    if !COMMANDS.contains(&cmd) {
        return None;
    }
    Some(parse_known(cmd, args).map_err(|e| format!("{cmd}: {e}")))
}

fn parse_known(cmd: &str, args: &[String]) -> Result<Request, String> {
    let table = |i| -> Result<u8, String> { int(need(args, i, "TABLE")?, "table") };
    Ok(match cmd {
        "beba-config" => {
            let stateful = match need(args, 1, "stateful|stateless")? {
                "stateful" | "1" | "on" => true,
                "stateless" | "0" | "off" => false,
                o => return Err(format!("expected stateful or stateless, got \"{o}\"")),
            };
            state_mod(StateMod::StatefulTableConfig {
                table_id: table(0)?,
                stateful,
            })
        }
        "beba-lookup-scope" | "beba-update-scope" => {
            let e = Extractor {
                table_id: table(0)?,
                bit: match args.get(2).map(String::as_str) {
                    None => false,
                    Some("bit") if cmd == "beba-update-scope" => true,
                    Some(o) => return Err(format!("unexpected \"{o}\"")),
                },
                fields: parse_scope(need(args, 1, "FIELDS")?)?,
            };
            if e.fields.len() > ofp::beba::MAX_FIELD_COUNT {
                return Err(format!("at most {} fields", ofp::beba::MAX_FIELD_COUNT));
            }
            state_mod(if cmd == "beba-lookup-scope" {
                StateMod::SetLookupExtractor(e)
            } else {
                StateMod::SetUpdateExtractor(e)
            })
        }
        "beba-set-state" => {
            let (state, state_mask) = value_mask(need(args, 2, "STATE")?, "state")?;
            let mut s = SetFlowState {
                table_id: table(0)?,
                key: parse_key(need(args, 1, "KEY")?)?,
                state,
                state_mask,
                ..SetFlowState::default()
            };
            for opt in &args[3..] {
                let (k, v) = opt
                    .split_once('=')
                    .ok_or_else(|| format!("expected NAME=VALUE, got \"{opt}\""))?;
                match k {
                    "idle_timeout" => s.idle_timeout = parse_time_us(v)?,
                    "hard_timeout" => s.hard_timeout = parse_time_us(v)?,
                    "idle_rollback" => s.idle_rollback = int(v, "state")?,
                    "hard_rollback" => s.hard_rollback = int(v, "state")?,
                    _ => return Err(format!("unknown option \"{k}\"")),
                }
            }
            state_mod(StateMod::SetFlowState(s))
        }
        "beba-del-state" => state_mod(StateMod::DelFlowState {
            table_id: table(0)?,
            key: parse_key(need(args, 1, "KEY")?)?,
        }),
        "beba-set-global" => {
            let (value, mask) = value_mask(need(args, 0, "VALUE")?, "global state")?;
            state_mod(StateMod::SetGlobalState { value, mask })
        }
        "beba-reset-global" => state_mod(StateMod::ResetGlobalState),
        "beba-add-template" => {
            let data = parse_key(&format!(
                "0x{}",
                need(args, 1, "HEX")?.trim_start_matches("0x")
            ))
            .map_err(|_| "bad HEX frame".to_string())?;
            Request::Mods(vec![msg(BebaMessage::PktTmpMod(PktTmpMod::Add {
                pkttmp_id: int(need(args, 0, "ID")?, "template id")?,
                data,
            }))])
        }
        "beba-del-template" => {
            Request::Mods(vec![msg(BebaMessage::PktTmpMod(PktTmpMod::Delete {
                pkttmp_id: int(need(args, 0, "ID")?, "template id")?,
            }))])
        }
        "beba-dump-states" => {
            let mut req = StateStatsRequest {
                kind: StateStatsKind::Full,
                table_id: 0xff,
                state: None,
                match_: Match::new(Vec::new()),
            };
            let (mut short, mut delete) = (false, false);
            for (i, a) in args.iter().enumerate() {
                match a.as_str() {
                    "short" => short = true,
                    "delete" => delete = true,
                    "all" if i == 0 => {}
                    t if i == 0 && !t.contains('=') => req.table_id = int(t, "table")?,
                    s => match s.strip_prefix("state=") {
                        Some(v) => req.state = Some(int(v, "state")?),
                        None => req.match_.fields.push(field_value(s)?.2),
                    },
                }
            }
            req.kind = match (short, delete) {
                (false, false) => StateStatsKind::Full,
                (false, true) => StateStatsKind::AndDelete,
                (true, false) => StateStatsKind::Short,
                (true, true) => StateStatsKind::AndDeleteShort,
            };
            Request::Dump(MultipartRequestBody::Experimenter(
                BebaMultipartRequest::StateStats(req).to_experimenter(),
            ))
        }
        "beba-dump-global" => {
            if let Some(a) = args.first() {
                return Err(format!("unexpected \"{a}\""));
            }
            Request::Dump(MultipartRequestBody::Experimenter(
                BebaMultipartRequest::GlobalStateStats.to_experimenter(),
            ))
        }
        _ => return Err("not a BEBA command".into()),
    })
}

fn format_key(key: &[u8]) -> String {
    if key.is_empty() {
        "(default)".to_string()
    } else {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        format!("0x{hex}")
    }
}

fn format_entry(e: &StateEntryStats, short: bool) -> String {
    let key = format_key(&e.key);
    let mut s = format!(" table={} key={key} state={}", e.table_id, e.state);
    if !short && !e.key.is_empty() {
        s += &format!(
            " duration={}.{:03}s idle_timeout={} hard_timeout={} idle_rollback={} hard_rollback={}",
            e.duration_sec,
            e.duration_nsec / 1_000_000,
            e.idle_timeout,
            e.hard_timeout,
            e.idle_rollback,
            e.hard_rollback
        );
    }
    s
}

/// The printed reply of a BEBA dump (other replies as the generic printer).
pub fn format_reply(xid: u32, body: &MultipartReplyBody) -> String {
    let MultipartReplyBody::Experimenter(e) = body else {
        return crate::print::format_multipart_reply(xid, body);
    };
    match BebaMultipartReply::from_experimenter(e) {
        Some(Ok(BebaMultipartReply::StateStats { kind, entries })) => {
            let mut s = format!(
                "BEBA state stats reply (xid={xid:#x}): {} entries",
                entries.len()
            );
            for e in &entries {
                s.push('\n');
                s += &format_entry(e, kind.short());
            }
            s
        }
        Some(Ok(BebaMultipartReply::GlobalStateStats { global_state })) => {
            format!("BEBA global state reply (xid={xid:#x}): global_state={global_state:#010x}")
        }
        Some(Err(err)) => format!("BEBA reply (xid={xid:#x}) undecodable: {err}"),
        None => crate::print::format_multipart_reply(xid, body),
    }
}

/// The printed form of BEBA's asynchronous messages (STATE_CHANGED,
/// FLOW_NOTIFICATION), for `monitor`; `None` for any other message.
pub fn format_async(xid: u32, e: &ofp::message::Experimenter) -> Option<String> {
    Some(match BebaMessage::from_experimenter(e)? {
        Ok(BebaMessage::StateChanged(m)) => format!(
            "BEBA STATE_CHANGED (xid={xid:#x}): table={} key={} state={}->{} mask={:#x}",
            m.table_id,
            format_key(&m.key),
            m.old_state,
            m.new_state,
            m.state_mask
        ),
        Ok(BebaMessage::FlowNotification(n)) => format!(
            "BEBA FLOW_NOTIFICATION (xid={xid:#x}): table={} ntf_type={} match={} instructions={}",
            n.table_id,
            n.ntf_type,
            crate::flow::format_match(&n.match_, None),
            n.instructions
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        Ok(_) => return None,
        Err(err) => format!("BEBA message (xid={xid:#x}) undecodable: {err}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn async_messages_print() {
        let sc = BebaMessage::StateChanged(ofp::beba::StateChanged {
            table_id: 0,
            old_state: 1,
            new_state: 2,
            state_mask: u32::MAX,
            key: vec![10, 0, 0, 1],
        });
        assert_eq!(
            format_async(0, &sc.to_experimenter()).as_deref(),
            Some("BEBA STATE_CHANGED (xid=0x0): table=0 key=0x0a000001 state=1->2 mask=0xffffffff")
        );
        let fnt = BebaMessage::FlowNotification(ofp::beba::FlowNotification {
            table_id: 1,
            ntf_type: 14,
            match_: Match::new(vec![ofp::oxm::OxmField::InPort(3)]),
            instructions: vec![4, 1],
        });
        assert_eq!(
            format_async(7, &fnt.to_experimenter()).as_deref(),
            Some("BEBA FLOW_NOTIFICATION (xid=0x7): table=1 ntf_type=14 match=in_port=3 instructions=4,1")
        );
        let sm = BebaMessage::StateMod(StateMod::ResetGlobalState);
        assert_eq!(format_async(0, &sm.to_experimenter()), None);
    }

    fn a(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keys_times_and_errors() {
        assert_eq!(
            parse_key("ipv4_src=10.0.0.1,tcp_dst=22"),
            Ok(vec![10, 0, 0, 1, 22, 0])
        );
        assert_eq!(parse_key("0x0a000001"), Ok(vec![10, 0, 0, 1]));
        assert!(parse_key("0x0a0").is_err());
        assert!(parse_key("bogus=1").is_err());
        assert_eq!(parse_time_us("10s"), Ok(10_000_000));
        assert_eq!(parse_time_us("1.5s"), Ok(1_500_000));
        assert_eq!(parse_time_us("250ms"), Ok(250_000));
        assert_eq!(parse_time_us("7"), Ok(7));
        assert!(parse_time_us("5000s").is_err());
        assert_eq!(parse("dump-flows", &[]), None);
        let e = parse("beba-config", &a(&["0", "maybe"]));
        assert_eq!(
            e,
            Some(Err(
                "beba-config: expected stateful or stateless, got \"maybe\"".into()
            ))
        );
        let e = parse(
            "beba-set-state",
            &a(&["0", "ipv4_src=10.0.0.1", "1", "idle=3"]),
        );
        assert_eq!(
            e,
            Some(Err("beba-set-state: unknown option \"idle\"".into()))
        );
        assert!(matches!(
            parse("beba-lookup-scope", &a(&["0"])),
            Some(Err(_))
        ));
    }
}
