//! `oxflow ctl` commands for ports and queues at run time:
//!
//! ```text
//! add-port TARGET IFACE [PORT_NO]        attach interface IFACE (the switch picks the
//!                                        number unless PORT_NO is given); prints it
//! del-port TARGET IFACE|PORT_NO          detach a port
//! set-queue TARGET PORT QUEUE [min_rate=R] [max_rate=R]
//!                                        add or change queue QUEUE of PORT (rates in
//!                                        bit/s with k/M/G: 10M, 1.5G)
//! del-queue TARGET PORT QUEUE            remove a queue
//! queue-get-config TARGET [PORT]         the queues' configuration (OFPT_QUEUE_GET_CONFIG)
//! queue-stats TARGET [PORT [QUEUE]]      queue statistics (OFPMP_QUEUE)
//! ```
//!
//! The first four are oxflow's experimenter requests (`ofp::port_admin`);
//! a refusal prints the switch's reason.

use std::io::Write;
use std::time::Duration;

use ofp::message::Message;
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};
use ofp::port::{port_no, OFPQ_ALL};
use ofp::port_admin::{self, PortAdmin};
use ofp::queue::{QueueGetConfigRequest, QueueProp};

use crate::client::{ClientError, Connection, Target};
use crate::fields::parse_port;
use crate::print::format_multipart_reply;

/// The commands this module runs.
pub const COMMANDS: &[&str] = &[
    "add-port",
    "del-port",
    "set-queue",
    "del-queue",
    "queue-get-config",
    "queue-stats",
];

/// Usage lines for the top usage text.
pub const USAGE: &str =
    "  add-port IFACE [PORT_NO] | del-port IFACE|PORT_NO   ports at run time (oxflow)
  set-queue PORT QUEUE [min_rate=R] [max_rate=R] | del-queue PORT QUEUE   queues (oxflow)
  queue-get-config [PORT] | queue-stats [PORT [QUEUE]]";

fn failure(e: ClientError) -> String {
    if let ClientError::Ofp { error, .. } = &e {
        if let Some(why) = port_admin::refusal_text(error) {
            return format!("refused by the switch: {why}");
        }
    }
    e.to_string()
}

fn port_arg(s: &str) -> Result<u32, String> {
    parse_port(s).ok_or_else(|| format!("bad port \"{s}\""))
}

fn queue_arg(s: &str) -> Result<u32, String> {
    s.parse().map_err(|_| format!("bad queue id \"{s}\""))
}

/// A rate in bit/s (`10M`, `1.5G`, `800k`, `2000000`), above 0 (0 means
/// "not set" on the wire).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    match ofp::port_admin::parse_rate(s)? {
        0 => Err(format!("bad rate \"{s}\" (must be above 0)")),
        r => Ok(r),
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
    let arg = |i: usize, what: &str| {
        args.get(i)
            .map(String::as_str)
            .ok_or_else(|| format!("{command}: missing {what}"))
    };
    // Check the arguments before connecting.
    let req = match command {
        "add-port" => {
            let interface = arg(0, "IFACE")?.to_string();
            let no = match args.get(1) {
                Some(n) => n
                    .parse::<u32>()
                    .ok()
                    .filter(|n| *n >= 1 && *n <= port_no::MAX)
                    .ok_or_else(|| format!("bad port number \"{n}\""))?,
                None => 0,
            };
            Some(PortAdmin::AddPort {
                port_no: no,
                interface,
            })
        }
        "del-port" => {
            let p = arg(0, "IFACE or PORT_NO")?;
            Some(match p.parse::<u32>() {
                Ok(n) if n >= 1 => PortAdmin::DelPort {
                    port_no: n,
                    name: String::new(),
                },
                _ => PortAdmin::DelPort {
                    port_no: 0,
                    name: p.to_string(),
                },
            })
        }
        "set-queue" => {
            let port = port_arg(arg(0, "PORT")?)?;
            let queue = queue_arg(arg(1, "QUEUE")?)?;
            let (mut min, mut max) = (0, 0);
            for kv in args.iter().skip(2) {
                match kv.split_once('=') {
                    Some(("min_rate", v)) => min = parse_rate(v)?,
                    Some(("max_rate", v)) => max = parse_rate(v)?,
                    _ => {
                        return Err(format!(
                        "set-queue: unknown argument \"{kv}\" (expected min_rate=R or max_rate=R)"
                    ))
                    }
                }
            }
            Some(PortAdmin::SetQueue {
                port_no: port,
                queue_id: queue,
                min_rate: min,
                max_rate: max,
            })
        }
        "del-queue" => Some(PortAdmin::DelQueue {
            port_no: port_arg(arg(0, "PORT")?)?,
            queue_id: queue_arg(arg(1, "QUEUE")?)?,
        }),
        _ => None,
    };
    let t = Target::parse(target)?;
    let mut c = Connection::connect(&t, timeout).map_err(|e| format!("{target}: {e}"))?;
    if let Some(req) = req {
        let (_, reply) = c
            .multipart(MultipartRequestBody::Experimenter(req.request()))
            .map_err(failure)?;
        let no = match &reply {
            MultipartReplyBody::Experimenter(e) => port_admin::reply_port(e),
            _ => None,
        };
        match (&req, no) {
            (PortAdmin::AddPort { interface, .. }, Some(n)) => {
                writeln!(out, "added port {n} ({interface})").map_err(|e| e.to_string())?
            }
            (PortAdmin::DelPort { .. }, Some(n)) => {
                writeln!(out, "removed port {n}").map_err(|e| e.to_string())?
            }
            _ => {}
        }
        return Ok(());
    }
    let opt_port = |i: usize| match args.get(i) {
        Some(p) => port_arg(p),
        None => Ok(port_no::ANY),
    };
    match command {
        "queue-get-config" => {
            let port = opt_port(0)?;
            let m = c
                .transact(Message::QueueGetConfigRequest(QueueGetConfigRequest {
                    port,
                }))
                .map_err(failure)?;
            let Message::QueueGetConfigReply(r) = m.body else {
                return Err("unexpected reply to OFPT_QUEUE_GET_CONFIG_REQUEST".into());
            };
            let mut text = format!(
                "OFPT_QUEUE_GET_CONFIG_REPLY (OF1.3) (xid={:#x}): port={}",
                m.xid,
                crate::fields::port_name(r.port)
            );
            for q in &r.queues {
                text.push_str(&format!(
                    "\nport {} queue {}:",
                    crate::fields::port_name(q.port),
                    q.queue_id
                ));
                for p in &q.properties {
                    match p {
                        QueueProp::MinRate(v) if *v <= 1000 => {
                            text.push_str(&format!(" min_rate:{:.1}%", f64::from(*v) / 10.0))
                        }
                        QueueProp::MaxRate(v) if *v <= 1000 => {
                            text.push_str(&format!(" max_rate:{:.1}%", f64::from(*v) / 10.0))
                        }
                        _ => {}
                    }
                }
            }
            writeln!(out, "{text}").map_err(|e| e.to_string())?;
        }
        _ => {
            let port = opt_port(0)?;
            let queue = match args.get(1) {
                Some(q) => queue_arg(q)?,
                None => OFPQ_ALL,
            };
            let (xid, reply) = c
                .multipart(MultipartRequestBody::Queue {
                    port_no: port,
                    queue_id: queue,
                })
                .map_err(failure)?;
            writeln!(out, "{}", format_multipart_reply(xid, &reply)).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("10M").unwrap(), 10_000_000);
        assert_eq!(parse_rate("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_rate("800k").unwrap(), 800_000);
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").unwrap_err().contains("bad rate"));
    }

    #[test]
    fn bad_arguments_fail_before_connecting() {
        let mut out = Vec::new();
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // The target is unreachable: these must fail on their arguments.
        let t = "tcp:127.0.0.1:1";
        let e = run(
            "set-queue",
            t,
            &args(&["1", "2", "rate=5M"]),
            None,
            &mut out,
        )
        .unwrap_err();
        assert!(e.contains("unknown argument \"rate=5M\""), "{e}");
        let e = run("set-queue", t, &args(&["1", "x"]), None, &mut out).unwrap_err();
        assert_eq!(e, "bad queue id \"x\"");
        let e = run("add-port", t, &args(&[]), None, &mut out).unwrap_err();
        assert_eq!(e, "add-port: missing IFACE");
        let e = run("add-port", t, &args(&["veth0", "0"]), None, &mut out).unwrap_err();
        assert_eq!(e, "bad port number \"0\"");
    }
}
