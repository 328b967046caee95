//! `oxflow ctl` commands for FlexForward's forwarding modes
//! (`ofp::flexforward`, docs/flexforward.md):
//!
//! ```text
//! fwmode TARGET MODE [ports=P,P..|vlan=VID] [fallback=openflow|drop]
//!                                  MODE: openflow | hypercube | keyflow, or clear
//!                                  (removes a port or VLAN override)
//! hypercube TARGET addr=A neighbours=ADDR:PORT,.. [local=PORT]
//!                                  the node address, the neighbour table and the
//!                                  port of the node's own frames
//! keyflow TARGET key=K             the local key
//! show-fwmode TARGET               modes, parameters and counters
//! ```
//!
//! Every change is followed by a barrier, so when the command returns every
//! worker forwards with it. A refusal prints the switch's error code name.

use std::io::Write;
use std::time::Duration;

use ofp::error::ErrorMsg;
use ofp::flexforward::{
    Fallback, FlexErrorCode, FlexMessage, FwMode, FwModeReply, Scope, SetFwMode, SetHyperCube,
    FLEX_EXPERIMENTER,
};
use ofp::message::Message;

use crate::client::{ClientError, Connection, Target};
use crate::fields::{parse_int, parse_port};

/// The commands this module runs.
pub const COMMANDS: &[&str] = &["fwmode", "hypercube", "keyflow", "show-fwmode"];

/// Usage lines for the top usage text.
pub const USAGE: &str = concat!(
    "  fwmode MODE [ports=P,..|vlan=VID] [fallback=openflow|drop]   forwarding mode: openflow,\n",
    "                             hypercube, keyflow, or clear (a port/VLAN override) (FlexForward)\n",
    "  hypercube addr=A neighbours=ADDR:PORT,.. [local=PORT] | keyflow key=K | show-fwmode"
);

fn error_text(error: &ErrorMsg) -> Option<String> {
    match error {
        ErrorMsg::Experimenter {
            exp_type,
            experimenter: FLEX_EXPERIMENTER,
            ..
        } => Some(match FlexErrorCode::from_u16(*exp_type) {
            Some(c) => format!("refused by the switch: FLEXFORWARD {}", c.name()),
            None => format!("refused by the switch: FLEXFORWARD code {exp_type}"),
        }),
        _ => None,
    }
}

fn failure(e: ClientError) -> String {
    if let ClientError::Ofp { error, .. } = &e {
        if let Some(t) = error_text(error) {
            return t;
        }
    }
    e.to_string()
}

fn number(s: &str, what: &str) -> Result<u32, String> {
    parse_int(s)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("bad {what} \"{s}\""))
}

fn port(s: &str) -> Result<u32, String> {
    parse_port(s).ok_or_else(|| format!("bad port \"{s}\""))
}

/// `key=value` arguments, each key once and one of `allowed`.
fn keyed<'a>(
    command: &str,
    args: &'a [String],
    allowed: &[&str],
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for a in args {
        let (k, v) = a
            .split_once('=')
            .ok_or_else(|| format!("{command}: expected KEY=VALUE, got \"{a}\""))?;
        if !allowed.contains(&k) {
            return Err(format!(
                "{command}: unknown argument \"{k}\" (expected {})",
                allowed.join(", ")
            ));
        }
        if out.iter().any(|(x, _)| *x == k) {
            return Err(format!("{command}: \"{k}\" given twice"));
        }
        out.push((k, v));
    }
    Ok(out)
}

/// The message of `command` with `args` (checked before connecting).
pub fn parse(command: &str, args: &[String]) -> Result<FlexMessage, String> {
    match command {
        "fwmode" => {
            let m = args
                .first()
                .ok_or_else(|| "fwmode: missing MODE".to_string())?;
            let mode = match m.as_str() {
                "clear" => None,
                s => Some(FwMode::parse(s).ok_or_else(|| {
                    format!("fwmode: unknown mode \"{s}\" (openflow, hypercube, keyflow, clear)")
                })?),
            };
            let mut scope = Scope::Switch;
            let mut fallback = Fallback::OpenFlow;
            for (k, v) in keyed(command, &args[1..], &["ports", "vlan", "fallback"])? {
                match k {
                    "ports" => {
                        if scope != Scope::Switch {
                            return Err("fwmode: give ports= or vlan=, not both".into());
                        }
                        let ports = v.split(',').map(port).collect::<Result<Vec<_>, _>>()?;
                        scope = Scope::Ports(ports);
                    }
                    "vlan" => {
                        if scope != Scope::Switch {
                            return Err("fwmode: give ports= or vlan=, not both".into());
                        }
                        let vid = number(v, "VLAN id")?;
                        if vid > u32::from(ofp::flexforward::MAX_VID) {
                            return Err(format!("fwmode: VLAN id {vid} is over 4095"));
                        }
                        scope = Scope::Vlan(vid as u16);
                    }
                    _ => {
                        fallback = match v {
                            "openflow" | "table" => Fallback::OpenFlow,
                            "drop" => Fallback::Drop,
                            _ => {
                                return Err(format!(
                                    "fwmode: fallback \"{v}\" (expected openflow or drop)"
                                ))
                            }
                        }
                    }
                }
            }
            if mode.is_none() && scope == Scope::Switch {
                return Err("fwmode: clear needs ports= or vlan=".into());
            }
            Ok(FlexMessage::SetFwMode(SetFwMode {
                mode,
                fallback,
                scope,
            }))
        }
        "hypercube" => {
            let mut h = SetHyperCube::default();
            let mut addr = None;
            for (k, v) in keyed(command, args, &["addr", "neighbours", "local"])? {
                match k {
                    "addr" => addr = Some(number(v, "address")?),
                    "local" => h.local_port = port(v)?,
                    _ => {
                        for pair in v.split(',').filter(|s| !s.is_empty()) {
                            let (a, p) = pair.split_once(':').ok_or_else(|| {
                                format!("hypercube: neighbour \"{pair}\" is not ADDR:PORT")
                            })?;
                            h.neighbours.push((number(a, "address")?, port(p)?));
                        }
                    }
                }
            }
            h.address = addr.ok_or_else(|| "hypercube: missing addr=".to_string())?;
            Ok(FlexMessage::SetHyperCube(h))
        }
        "keyflow" => {
            let kv = keyed(command, args, &["key"])?;
            let key = kv
                .first()
                .ok_or_else(|| "keyflow: missing key=".to_string())?
                .1;
            Ok(FlexMessage::SetKeyFlow {
                key: number(key, "key")?,
            })
        }
        "show-fwmode" => Ok(FlexMessage::GetFwMode),
        other => Err(format!("unknown command \"{other}\"")),
    }
}

/// The reply as `show-fwmode` prints it.
pub fn format_reply(r: &FwModeReply) -> String {
    let mut s = format!("mode={} fallback={}\n", r.mode.name(), r.fallback.name());
    match &r.hypercube {
        Some(h) => {
            let n: Vec<String> = h
                .neighbours
                .iter()
                .map(|(a, p)| format!("{a}:{p}"))
                .collect();
            s += &format!(
                "hypercube addr={} neighbours={} local={}\n",
                h.address,
                n.join(","),
                h.local_port
            );
        }
        None => s += "hypercube unset\n",
    }
    match r.keyflow_key {
        Some(k) => s += &format!("keyflow key={k}\n"),
        None => s += "keyflow unset\n",
    }
    for o in &r.ports {
        s += &format!(
            "port {} mode={} fallback={}\n",
            o.key,
            o.mode.name(),
            o.fallback.name()
        );
    }
    for o in &r.vlans {
        s += &format!(
            "vlan {} mode={} fallback={}\n",
            o.key,
            o.mode.name(),
            o.fallback.name()
        );
    }
    let c = &r.counters;
    s += &format!(
        "counters hypercube_fwd={} keyflow_fwd={} fallback_table={} fallback_drop={}",
        c.hypercube_fwd, c.keyflow_fwd, c.fallback_table, c.fallback_drop
    );
    s
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
    let msg = parse(command, args)?;
    let t = Target::parse(target)?;
    let mut c = Connection::connect(&t, timeout).map_err(|e| format!("{target}: {e}"))?;
    if msg != FlexMessage::GetFwMode {
        // A change is answered only by an error; the barrier reply says it
        // was accepted and every worker uses it.
        let xid = c
            .send(Message::Experimenter(msg.to_experimenter()))
            .map_err(failure)?;
        let barrier = c.send(Message::BarrierRequest).map_err(failure)?;
        loop {
            let m = c.recv().map_err(failure)?;
            match m.body {
                Message::Error(e) if m.xid == xid => {
                    return Err(error_text(&e).unwrap_or_else(|| format!("OFPT_ERROR {e:?}")))
                }
                Message::BarrierReply if m.xid == barrier => return Ok(()),
                _ => {}
            }
        }
    }
    let reply = c
        .transact(Message::Experimenter(msg.to_experimenter()))
        .map_err(failure);
    let reply = reply?;
    match reply.body {
        Message::Experimenter(e) => match FlexMessage::from_experimenter(&e) {
            Some(Ok(FlexMessage::FwModeReply(r))) => {
                writeln!(out, "{}", format_reply(&r)).map_err(|e| e.to_string())
            }
            _ => Err("show-fwmode: the switch did not answer with FWMODE_REPLY".into()),
        },
        other => Err(format!("show-fwmode: unexpected reply {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(cmd: &str, a: &[&str]) -> Result<FlexMessage, String> {
        let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse(cmd, &a)
    }

    #[test]
    fn parses_each_command() {
        assert_eq!(
            p("fwmode", &["hypercube", "ports=1,3", "fallback=drop"]),
            Ok(FlexMessage::SetFwMode(SetFwMode {
                mode: Some(FwMode::HyperCube),
                fallback: Fallback::Drop,
                scope: Scope::Ports(vec![1, 3]),
            }))
        );
        assert_eq!(
            p("fwmode", &["clear", "vlan=10"]),
            Ok(FlexMessage::SetFwMode(SetFwMode {
                mode: None,
                fallback: Fallback::OpenFlow,
                scope: Scope::Vlan(10),
            }))
        );
        assert_eq!(
            p(
                "hypercube",
                &["addr=5", "neighbours=4:1,7:2,1:3", "local=4"]
            ),
            Ok(FlexMessage::SetHyperCube(SetHyperCube {
                address: 5,
                local_port: 4,
                neighbours: vec![(4, 1), (7, 2), (1, 3)],
            }))
        );
        assert_eq!(
            p("keyflow", &["key=7"]),
            Ok(FlexMessage::SetKeyFlow { key: 7 })
        );
        assert_eq!(p("show-fwmode", &[]), Ok(FlexMessage::GetFwMode));
    }

    #[test]
    fn bad_arguments_say_what() {
        let e = |cmd, a: &[&str]| p(cmd, a).unwrap_err();
        assert!(e("fwmode", &[]).contains("missing MODE"));
        assert!(e("fwmode", &["tree"]).contains("unknown mode \"tree\""));
        assert!(e("fwmode", &["clear"]).contains("needs ports= or vlan="));
        assert!(e("fwmode", &["keyflow", "vlan=5000"]).contains("over 4095"));
        assert!(e("fwmode", &["keyflow", "ports=1", "vlan=2"]).contains("not both"));
        assert!(e("fwmode", &["keyflow", "fallback=maybe"]).contains("fallback"));
        assert!(e("fwmode", &["keyflow", "colour=red"]).contains("unknown argument"));
        assert!(e("hypercube", &["neighbours=1:1"]).contains("missing addr="));
        assert!(e("hypercube", &["addr=1", "neighbours=12"]).contains("ADDR:PORT"));
        assert!(e("hypercube", &["addr=1", "addr=2"]).contains("twice"));
        assert!(e("keyflow", &["key=x"]).contains("bad key"));
    }
}
