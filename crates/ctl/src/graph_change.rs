//! `oxflow ctl` commands that change a switch's module graph and its
//! traffic classes at run time (oxflow's experimenter request,
//! `ofp::graph_change`; docs/graph.md):
//!
//! ```text
//! graph-change TARGET FILE|-             send the change set in FILE (or stdin):
//!                                        [[module]] [[remove]] [[connect]]
//!                                        [[disconnect]] [[attach]] [[detach]] [[set]]
//! tc-set TARGET CLASS share=N            change a class's share (weighted parent)
//! tc-set TARGET CLASS limit=N burst=N    change a rate-limit class's limit and burst
//! tc-attach TARGET CLASS PARENT TASK [share=N] [priority=N]
//!                                        a new leaf CLASS under PARENT running TASK
//! ```
//!
//! The switch applies all of a change or none of it; a refusal prints its
//! reason (with the line of the change set at fault).

use std::io::{Read, Write};
use std::time::Duration;

use ofp::graph_change::GraphChange;
use ofp::multipart::MultipartRequestBody;

use crate::client::{ClientError, Connection, Target};

/// The commands this module runs.
pub const COMMANDS: &[&str] = &["graph-change", "tc-set", "tc-attach"];

/// Usage lines for the top usage text.
pub const USAGE: &str = "  graph-change FILE|- | tc-set CLASS share=N|limit=N burst=N
  tc-attach CLASS PARENT TASK [share=N] [priority=N]   the module graph at run time (oxflow)";

fn failure(e: ClientError) -> String {
    if let ClientError::Ofp { error, .. } = &e {
        if let Some(why) = ofp::port_admin::refusal_text(error) {
            return format!("refused by the switch: {why}");
        }
    }
    e.to_string()
}

/// A TOML string literal of `s`.
fn quoted(s: &str) -> String {
    toml_escape(s)
}

fn toml_escape(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// `key=N` arguments among `allowed`, as TOML lines.
fn numbers(command: &str, args: &[String], allowed: &[&str]) -> Result<String, String> {
    let mut text = String::new();
    for kv in args {
        let (k, v) = kv
            .split_once('=')
            .filter(|(k, _)| allowed.contains(k))
            .ok_or_else(|| {
                format!(
                    "{command}: unknown argument \"{kv}\" (expected {})",
                    allowed
                        .iter()
                        .map(|k| format!("{k}=N"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        let n: u64 = v
            .parse()
            .map_err(|_| format!("{command}: {k} must be a non-negative integer, not \"{v}\""))?;
        text.push_str(&format!("{k} = {n}\n"));
    }
    Ok(text)
}

/// The change-set text of a command's arguments (checked before
/// connecting).
pub fn change_text(command: &str, args: &[String]) -> Result<String, String> {
    let arg = |i: usize, what: &str| {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("{command}: missing {what}"))
    };
    match command {
        "graph-change" => match arg(0, "FILE (or - for stdin)")? {
            "-" => {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|e| format!("{command}: stdin: {e}"))?;
                Ok(s)
            }
            f => std::fs::read_to_string(f).map_err(|e| format!("{command}: {f}: {e}")),
        },
        "tc-set" => {
            let class = arg(0, "CLASS")?;
            let rest = args.get(1..).unwrap_or_default();
            if rest.is_empty() {
                return Err(format!("{command}: missing share=N or limit=N burst=N"));
            }
            Ok(format!(
                "[[set]]\nclass = {}\n{}",
                quoted(class),
                numbers(command, rest, &["share", "limit", "burst"])?
            ))
        }
        "tc-attach" => {
            let (class, parent, task) = (arg(0, "CLASS")?, arg(1, "PARENT")?, arg(2, "TASK")?);
            Ok(format!(
                "[[attach]]\nclass = {}\nparent = {}\ntask = {}\n{}",
                quoted(class),
                quoted(parent),
                quoted(task),
                numbers(
                    command,
                    args.get(3..).unwrap_or_default(),
                    &["share", "priority"]
                )?
            ))
        }
        _ => Err(format!("{command}: not a graph command")),
    }
}

/// Runs `command` (one of [`COMMANDS`]); the error is the message for
/// stderr.
pub fn run(
    command: &str,
    target: &str,
    args: &[String],
    timeout: Option<Duration>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let text = change_text(command, args)?;
    let t = Target::parse(target)?;
    let mut c = Connection::connect(&t, timeout).map_err(|e| format!("{target}: {e}"))?;
    c.multipart(MultipartRequestBody::Experimenter(
        GraphChange { text }.request(),
    ))
    .map_err(failure)?;
    writeln!(out, "applied on every worker").map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn commands_make_change_sets() {
        assert_eq!(
            change_text("tc-set", &args(&["slow", "limit=100000", "burst=32"])).unwrap(),
            "[[set]]\nclass = \"slow\"\nlimit = 100000\nburst = 32\n"
        );
        assert_eq!(
            change_text("tc-attach", &args(&["l4", "root", "in4", "share=2"])).unwrap(),
            "[[attach]]\nclass = \"l4\"\nparent = \"root\"\ntask = \"in4\"\nshare = 2\n"
        );
        for (c, a, want) in [
            ("tc-set", &["x"][..], "tc-set: missing share=N"),
            (
                "tc-set",
                &["x", "weight=2"][..],
                "tc-set: unknown argument \"weight=2\"",
            ),
            ("tc-set", &["x", "share=-1"][..], "tc-set: share must be"),
            ("tc-attach", &["l", "root"][..], "tc-attach: missing TASK"),
            ("graph-change", &[][..], "graph-change: missing FILE"),
            (
                "graph-change",
                &["/nonexistent/g1"][..],
                "graph-change: /nonexistent/g1: ",
            ),
        ] {
            let e = change_text(c, &args(a)).unwrap_err();
            assert!(e.starts_with(want), "{c} {a:?}: {e}");
        }
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
    }
}
