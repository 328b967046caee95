//! Group syntax (`ovs-ofctl add-group`):
//!
//! ```text
//! group_id=1,type=select,bucket=weight:10,watch_port:2,actions=output:2,bucket=output:3
//! ```
//!
//! `bucket=` starts a bucket; the tokens up to the next `bucket=` belong to
//! it. Inside a bucket, `weight`, `watch_port` and `watch_group` (with `:` or
//! `=`) are bucket parameters, `actions=` is optional and everything else is
//! an action. Select buckets default to weight 1, as in ovs-ofctl.

use ofp::group::{command, group_id, group_type, Bucket, GroupMod};
use ofp::port::port_no;

use crate::actions::{format_actions, parse_action, ActionContext};
use crate::fields::{parse_int, parse_port, port_name};
use crate::lex::{split_token, tokenize, Token};
use crate::syntax_error::SyntaxError;

/// What a group string is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupUsage {
    /// add-group / mod-group: `group_id` and `type` required.
    Add,
    /// del-groups / dump filters: only `group_id`, default all.
    Delete,
}

const TYPES: &[(&str, u8)] = &[
    ("all", group_type::ALL),
    ("select", group_type::SELECT),
    ("indirect", group_type::INDIRECT),
    ("ff", group_type::FF),
    ("fast_failover", group_type::FF),
];

/// Name of a group type as ovs-ofctl prints it.
pub fn type_name(t: u8) -> String {
    TYPES
        .iter()
        .find(|(_, v)| *v == t)
        .map_or_else(|| t.to_string(), |(n, _)| (*n).to_string())
}

fn parse_group_id(t: &Token<'_>) -> Result<u32, SyntaxError> {
    let v = t.need_value()?;
    match v.to_ascii_lowercase().as_str() {
        "all" => Ok(group_id::ALL),
        "any" => Ok(group_id::ANY),
        _ => parse_int(v)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| t.value_err(format!("bad group id \"{v}\""))),
    }
}

/// Add one token to the bucket being built.
fn bucket_token(t: &Token<'_>, b: &mut Bucket, in_actions: &mut bool) -> Result<(), SyntaxError> {
    let num = |t: &Token<'_>| {
        let v = t.need_value()?;
        parse_int(v).ok_or_else(|| t.value_err(format!("bad number \"{v}\"")))
    };
    if !*in_actions {
        match t.key {
            "weight" => {
                b.weight = u16::try_from(num(t)?).map_err(|_| t.value_err("weight above 65535"))?;
                return Ok(());
            }
            "watch_port" => {
                let v = t.need_value()?;
                b.watch_port =
                    parse_port(v).ok_or_else(|| t.value_err(format!("bad port \"{v}\"")))?;
                return Ok(());
            }
            "watch_group" => {
                b.watch_group =
                    u32::try_from(num(t)?).map_err(|_| t.value_err("group id above 32 bits"))?;
                return Ok(());
            }
            "actions" | "action" => {
                *in_actions = true;
                let Some(v) = t.value.filter(|v| !v.is_empty()) else {
                    return Ok(());
                };
                let inner = split_token(v, t.value_at);
                return bucket_token(&inner, b, in_actions);
            }
            _ => {}
        }
    }
    if t.key.eq_ignore_ascii_case("drop") && t.value.is_none() {
        return Ok(());
    }
    b.actions.push(parse_action(t, ActionContext::default())?);
    Ok(())
}

/// Parse a group string into a GROUP_MOD with command ADD (the caller sets
/// MODIFY or DELETE).
pub fn parse_group(s: &str, usage: GroupUsage) -> Result<GroupMod, SyntaxError> {
    let mut id = None;
    let mut ty = None;
    let mut buckets: Vec<Bucket> = Vec::new();
    let mut in_actions = false;
    for t in tokenize(s, 0)? {
        let in_bucket = !buckets.is_empty();
        match t.key {
            "group_id" => id = Some(parse_group_id(&t)?),
            "type" if !in_bucket => {
                let v = t.need_value()?;
                let found = TYPES.iter().find(|(n, _)| n.eq_ignore_ascii_case(v));
                ty = Some(
                    found
                        .ok_or_else(|| t.value_err(format!("unknown group type \"{v}\"")))?
                        .1,
                );
            }
            "bucket" if usage == GroupUsage::Add => {
                buckets.push(Bucket {
                    weight: 0,
                    watch_port: port_no::ANY,
                    watch_group: group_id::ANY,
                    actions: Vec::new(),
                });
                in_actions = false;
                if let (Some(v), Some(b)) = (t.value.filter(|v| !v.is_empty()), buckets.last_mut())
                {
                    bucket_token(&split_token(v, t.value_at), b, &mut in_actions)?;
                }
            }
            _ => match buckets.last_mut() {
                Some(b) => bucket_token(&t, b, &mut in_actions)?,
                None => return Err(t.key_err(format!("unknown group keyword \"{}\"", t.key))),
            },
        }
    }
    let group_type = match (ty, usage) {
        (Some(t), _) => t,
        (None, GroupUsage::Delete) => group_type::ALL,
        (None, GroupUsage::Add) => {
            return Err(SyntaxError::new(
                "must specify a type (type=all|select|indirect|ff)",
                s.len(),
                0,
            ))
        }
    };
    let group_id = match (id, usage) {
        (Some(i), _) => i,
        (None, GroupUsage::Delete) => group_id::ALL,
        (None, GroupUsage::Add) => {
            return Err(SyntaxError::new("must specify a group_id", s.len(), 0))
        }
    };
    if group_type == group_type::SELECT {
        for b in &mut buckets {
            if b.weight == 0 {
                b.weight = 1;
            }
        }
    }
    Ok(GroupMod {
        command: if usage == GroupUsage::Delete {
            command::DELETE
        } else {
            command::ADD
        },
        group_type,
        group_id,
        buckets,
    })
}

/// Print buckets as ovs-ofctl does (`bucket=weight:10,actions=output:2`).
pub fn format_buckets(group_type: u8, buckets: &[Bucket]) -> String {
    buckets
        .iter()
        .map(|b| {
            let mut s = String::from("bucket=");
            // Only a weight other than the default (1 for select, else 0).
            if b.weight != u16::from(group_type == group_type::SELECT) {
                s += &format!("weight:{},", b.weight);
            }
            if b.watch_port != port_no::ANY {
                s += &format!("watch_port:{},", port_name(b.watch_port));
            }
            if b.watch_group != group_id::ANY {
                s += &format!("watch_group:{},", b.watch_group);
            }
            s + "actions=" + &format_actions(&b.actions)
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Print a group (the add-group form, also the dump-groups line).
pub fn format_group(group_type: u8, id: u32, buckets: &[Bucket]) -> String {
    let mut s = format!("group_id={id},type={}", type_name(group_type));
    if !buckets.is_empty() {
        s += ",";
        s += &format_buckets(group_type, buckets);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::action::Action;

    fn out(port: u32) -> Action {
        Action::Output { port, max_len: 0 }
    }

    #[test]
    fn select_group() {
        let s = "group_id=1,type=select,bucket=weight:10,watch_port:2,actions=output:2,bucket=output:3,group:4";
        let g = parse_group(s, GroupUsage::Add).unwrap();
        assert_eq!((g.group_id, g.group_type), (1, group_type::SELECT));
        assert_eq!(g.buckets.len(), 2);
        assert_eq!(
            (
                g.buckets[0].weight,
                g.buckets[0].watch_port,
                &g.buckets[0].actions
            ),
            (10, 2, &vec![out(2)])
        );
        assert_eq!(g.buckets[1].weight, 1);
        assert_eq!(g.buckets[1].actions, vec![out(3), Action::Group(4)]);
        let printed = format_group(g.group_type, g.group_id, &g.buckets);
        assert_eq!(
            printed,
            "group_id=1,type=select,bucket=weight:10,watch_port:2,actions=output:2,bucket=actions=output:3,group:4"
        );
        assert_eq!(parse_group(&printed, GroupUsage::Add).unwrap(), g);
    }

    #[test]
    fn ff_and_delete() {
        let s =
            "group_id=2,type=ff,bucket=watch_port:1,output:1,bucket=watch_group:3,actions=output:2";
        let g = parse_group(s, GroupUsage::Add).unwrap();
        assert_eq!(g.buckets[1].watch_group, 3);
        let p = format_group(g.group_type, g.group_id, &g.buckets);
        assert_eq!(parse_group(&p, GroupUsage::Add).unwrap(), g);
        let d = parse_group("", GroupUsage::Delete).unwrap();
        assert_eq!((d.group_id, d.command), (group_id::ALL, command::DELETE));
        let d = parse_group("group_id=5", GroupUsage::Delete).unwrap();
        assert_eq!(d.group_id, 5);
    }

    #[test]
    fn errors() {
        let e = parse_group("group_id=1,type=selct", GroupUsage::Add).unwrap_err();
        assert_eq!(e.offset, 16);
        let e = parse_group(
            "group_id=1,type=all,bucket=output:1,frob:2",
            GroupUsage::Add,
        )
        .unwrap_err();
        assert_eq!(e.offset, 36);
        assert!(parse_group("type=all", GroupUsage::Add).is_err());
        let e = parse_group("group_id=1,type=all,foo", GroupUsage::Add).unwrap_err();
        assert_eq!(e.offset, 20);
    }
}
