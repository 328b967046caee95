//! BEBA's actions in the `actions=` syntax (`docs/beba.md`), parsed and
//! printed so that `parse(print(x)) == x`:
//!
//! ```text
//! set_state(STATE[/MASK][,table=N][,idle_timeout=T][,hard_timeout=T]
//!           [,idle_rollback=S][,hard_rollback=S][,bit])
//! set_global_state(VALUE[/MASK])
//! inc_state(table=N)
//! ```
//!
//! `table` defaults to 0; T is microseconds or `10s` / `250ms` / `40us`
//! (printed in microseconds); `bit` writes through the bi-flow update scope.

use ofp::action::Action;
use ofp::beba::{BebaAction, SetState};

use crate::beba::parse_time_us;
use crate::fields::parse_int;
use crate::lex::{tokenize, Token};
use crate::syntax_error::SyntaxError;

/// The BEBA action of token `t` (key `key`, lowercase); `None` if `key`
/// names no BEBA action.
pub fn parse(t: &Token<'_>, key: &str) -> Option<Result<Action, SyntaxError>> {
    let usage = match key {
        "set_state" => "(STATE[/MASK][,table=N][,idle_timeout=T][,hard_timeout=T][,idle_rollback=S][,hard_rollback=S][,bit])",
        "set_global_state" => "(VALUE[/MASK])",
        "inc_state" => "(table=N)",
        _ => return None,
    };
    Some(parse_known(t, key, usage).map(|a| a.to_action()))
}

fn u32_of(t: &Token<'_>, s: &str, what: &str) -> Result<u32, SyntaxError> {
    parse_int(s)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| t.err(format!("bad {what} \"{s}\"")))
}

/// `V[/M]` (mask all ones when absent).
fn value_mask(t: &Token<'_>, what: &str) -> Result<(u32, u32), SyntaxError> {
    match t.text.split_once('/') {
        Some((v, m)) => Ok((u32_of(t, v, what)?, u32_of(t, m, "mask")?)),
        None => Ok((u32_of(t, t.text, what)?, u32::MAX)),
    }
}

fn parse_known(t: &Token<'_>, key: &str, usage: &str) -> Result<BebaAction, SyntaxError> {
    let v = match (t.sep, t.value) {
        (Some('('), Some(v)) if !v.is_empty() => v,
        _ => return Err(t.key_err(format!("\"{key}\" needs {usage}"))),
    };
    let mut toks = tokenize(v, t.value_at)?.into_iter();
    let mut s = SetState {
        state_mask: u32::MAX,
        ..SetState::default()
    };
    if key != "inc_state" {
        let first = toks.next().ok_or_else(|| t.value_err(usage))?;
        let (value, mask) = value_mask(&first, "value")?;
        if key == "set_global_state" {
            if let Some(extra) = toks.next() {
                return Err(extra.err(format!("unexpected \"{}\"", extra.text)));
            }
            return Ok(BebaAction::SetGlobalState { value, mask });
        }
        (s.state, s.state_mask) = (value, mask);
    }
    let mut table = None;
    for a in toks {
        let time = |a: &Token<'_>| parse_time_us(a.need_value()?).map_err(|e| a.value_err(e));
        let state = |a: &Token<'_>| u32_of(a, a.need_value()?, "state");
        match (key, a.key.to_ascii_lowercase().as_str()) {
            (_, "table") => {
                let v = a.need_value()?;
                let n = parse_int(v)
                    .and_then(|n| u8::try_from(n).ok())
                    .ok_or_else(|| a.value_err(format!("bad table \"{v}\"")))?;
                table = Some(n);
            }
            ("set_state", "idle_timeout") => s.idle_timeout = time(&a)?,
            ("set_state", "hard_timeout") => s.hard_timeout = time(&a)?,
            ("set_state", "idle_rollback") => s.idle_rollback = state(&a)?,
            ("set_state", "hard_rollback") => s.hard_rollback = state(&a)?,
            ("set_state", "bit") if a.value.is_none() => s.bit = true,
            _ => return Err(a.err(format!("unexpected \"{}\": {key}{usage}", a.text))),
        }
    }
    Ok(match key {
        "inc_state" => BebaAction::IncState {
            table_id: table.ok_or_else(|| t.value_err(format!("{key} needs {usage}")))?,
        },
        _ => {
            s.table_id = table.unwrap_or(0);
            BebaAction::SetState(s)
        }
    })
}

/// The text of a BEBA action; `None` for any other action (or a BEBA
/// action the codec refuses).
pub fn format(a: &Action) -> Option<String> {
    let mask = |m: u32| {
        if m == u32::MAX {
            String::new()
        } else {
            format!("/{m:#x}")
        }
    };
    Some(match BebaAction::from_action(a)?.ok()? {
        BebaAction::SetState(s) => {
            let mut out = format!(
                "set_state({}{},table={}",
                s.state,
                mask(s.state_mask),
                s.table_id
            );
            for (name, v) in [
                ("idle_timeout", s.idle_timeout),
                ("hard_timeout", s.hard_timeout),
                ("idle_rollback", s.idle_rollback),
                ("hard_rollback", s.hard_rollback),
            ] {
                if v != 0 {
                    out += &format!(",{name}={v}");
                }
            }
            if s.bit {
                out += ",bit";
            }
            out + ")"
        }
        BebaAction::SetGlobalState { value, mask: m } => {
            format!("set_global_state({value:#x}{})", mask(m))
        }
        BebaAction::IncState { table_id } => format!("inc_state(table={table_id})"),
    })
}

#[cfg(test)]
mod tests {
    use crate::actions::{format_actions, parse_action_list, ActionContext};

    fn round_trip(s: &str) -> String {
        let a = parse_action_list(s, 0, ActionContext::default()).unwrap();
        let text = format_actions(&a);
        let again = parse_action_list(&text, 0, ActionContext::default()).unwrap();
        assert_eq!(again, a, "{s} -> {text}");
        text
    }

    #[test]
    fn beba_actions_parse_and_print() {
        assert_eq!(round_trip("set_state(4)"), "set_state(4,table=0)");
        assert_eq!(
            round_trip("set_state(1/0xf,table=2,idle_timeout=5s,hard_timeout=250ms,idle_rollback=3,hard_rollback=7,bit),output:2"),
            "set_state(1/0xf,table=2,idle_timeout=5000000,hard_timeout=250000,idle_rollback=3,hard_rollback=7,bit),output:2"
        );
        assert_eq!(
            round_trip("set_global_state(5/6)"),
            "set_global_state(0x5/0x6)"
        );
        assert_eq!(
            round_trip("set_global_state(0x10)"),
            "set_global_state(0x10)"
        );
        assert_eq!(round_trip("inc_state(table=1)"), "inc_state(table=1)");
        // The bytes are BEBA's (docs/beba.md: SET_STATE is 48 bytes).
        let a = parse_action_list("set_state(4,table=0)", 0, ActionContext::default()).unwrap();
        match &a[0] {
            ofp::action::Action::Experimenter { experimenter, data } => {
                assert_eq!(*experimenter, ofp::beba::BEBA_EXPERIMENTER);
                assert_eq!(data.len() + 8, 48);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_beba_actions_are_refused() {
        for bad in [
            "set_state",
            "set_state()",
            "set_state(x)",
            "set_state(1,table=256)",
            "set_state(1,idle_timeout=soon)",
            "set_state(1,color=red)",
            "set_global_state(1,2)",
            "inc_state",
            "inc_state(3)",
            "inc_state(table=1,bit)",
        ] {
            assert!(
                parse_action_list(bad, 0, ActionContext::default()).is_err(),
                "{bad}"
            );
        }
    }
}
