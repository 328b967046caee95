//! The commands of `oxflow ctl COMMAND TARGET [ARGS...]`, as ovs-ofctl has
//! them. [`run`] parses the arguments, talks to the switch and prints;
//! output goes to `out`, diagnostics to `err`, and the exit status is 0 on
//! success, 1 on any syntax, connection or OFPT_ERROR failure, 2 on bad usage.

use std::io::{BufRead, Write};
use std::time::Duration;

use ofp::group::{command as group_command, group_id};
use ofp::message::{flow_mod_command, role, Message, PacketOut, Role, SwitchConfig, NO_BUFFER};
use ofp::meter::command as meter_command;
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};
use ofp::port::port_no;

use crate::actions::{parse_action_list, ActionContext};
use crate::client::{ClientError, Connection, Target, DEFAULT_TIMEOUT};
use crate::fields::{parse_int, parse_port};
use crate::flow::{parse_flow, FlowUsage};
use crate::group::{parse_group, GroupUsage};
use crate::lex::{find_actions, tokenize};
use crate::meter::{parse_meter, MeterUsage};
use crate::print::{format_message, format_multipart_reply};
use crate::syntax_error::SyntaxError;

/// Usage text.
pub const USAGE: &str = "\
usage: oxflow ctl [OPTIONS] COMMAND TARGET [ARGS...]
TARGET: tcp:IP[:PORT] | ssl:IP[:PORT] (with -p KEY -c CERT -C CACERT) | unix:PATH
PORT names (in_port=NAME, output:NAME, watch_port=NAME) are looked up in the switch's port descriptions
commands:
  show                       features, port descriptions, config
  dump-desc                  switch description
  dump-flows [FLOW]          flows (FLOW filters: table, cookie=V/M, out_port, match)
  dump-aggregate [FLOW]      aggregate flow statistics
  add-flow FLOW              add a flow
  add-flows FILE             add flows from FILE (one per line, - for stdin; a line may
                             start with add, modify, modify_strict, delete, delete_strict)
  mod-flows FLOW             modify flows (--strict: exact match and priority)
  del-flows [FLOW]           delete flows (--strict)
  dump-ports [PORT]          port statistics
  dump-ports-desc            port descriptions
  dump-tables                table statistics
  dump-table-features        table features
  dump-worker-stats          oxflow's per-worker forwarding statistics (experimenter)
  show-pipeline [--dot]      oxflow's data-path graph with packets per gate (experimenter;
                             --dot: Graphviz DOT)
  show-tc                    oxflow's workers: the class that picks their tasks, and each
                             task's usage (experimenter)
  add-group GROUP | mod-group GROUP | del-groups [GROUP]
  dump-groups [GROUP] | dump-group-stats [GROUP] | dump-group-features
  add-meter METER | mod-meter METER | del-meters [METER]
  dump-meters [METER] | meter-stats [METER] | meter-features
  packet-out \"in_port=N packet=HEX actions=...\" | packet-out IN_PORT ACTIONS HEX
  monitor [MISS_LEN] [invalid_ttl]  print asynchronous messages (--count=N to stop)
  role [equal|master|slave|nochange] [GENERATION_ID]
  save FILE                  flows, groups, meters, config to FILE (docs/persistence.md)
  restore FILE               send them back (--bundle: meters, groups, flows atomically)
options: --strict, --bundle (modifications as one atomic bundle), --sort / --rsort (dump-flows, by priority), --timeout=SECS, -O OpenFlow13 (accepted, only 1.3 is spoken),
  --private-key=FILE (-p), --certificate=FILE (-c), --ca-cert=FILE (-C): PEM files for ssl: targets";

/// Why a command failed, already formatted for stderr.
struct Failure(String);

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure(format!("output error: {e}"))
    }
}

fn syntax(input: &str, e: SyntaxError) -> Failure {
    Failure(e.render(input))
}

/// dump-flows ordering (`--sort` / `--rsort`, by priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Ascending,
    Descending,
}

/// Parsed command line.
struct Invocation {
    sort: Sort,
    command: String,
    target: String,
    args: Vec<String>,
    strict: bool,
    /// Send modifications as one atomic bundle (`crate::bundle`).
    bundle: bool,
    timeout: Option<Duration>,
    /// monitor: stop after this many messages.
    count: Option<u64>,
    /// show-pipeline: Graphviz DOT instead of text.
    dot: bool,
}

/// ovs-ofctl's TLS file options: `--private-key=FILE` / `-p FILE`,
/// `--certificate=FILE` / `-c FILE`, `--ca-cert=FILE` / `-C FILE` (also
/// `--opt FILE` and `-pFILE`): which one ('p', 'c', 'C') and the file.
fn tls_option<'a>(
    a: &'a str,
    rest: &mut std::slice::Iter<'a, String>,
) -> Result<Option<(char, &'a str)>, String> {
    for (long, short, which) in [
        ("--private-key", "-p", 'p'),
        ("--certificate", "-c", 'c'),
        ("--ca-cert", "-C", 'C'),
    ] {
        let inline = a
            .strip_prefix(long)
            .and_then(|v| v.strip_prefix('='))
            .or_else(|| a.strip_prefix(short).filter(|v| !v.is_empty()));
        if let Some(v) = inline {
            return Ok(Some((which, v)));
        }
        if a == long || a == short {
            let v = rest.next().ok_or(format!("{a} needs a FILE"))?;
            return Ok(Some((which, v.as_str())));
        }
    }
    Ok(None)
}

fn parse_args(args: &[String]) -> Result<Invocation, String> {
    let mut pos = Vec::new();
    let mut strict = false;
    let mut dot = false;
    let mut bundle = false;
    let mut timeout = Some(DEFAULT_TIMEOUT);
    let mut count = None;
    let mut sort = Sort::None;
    let mut tls = crate::tls::TlsFiles::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--strict" {
            strict = true;
        } else if a == "--dot" {
            dot = true;
        } else if a == "--bundle" {
            bundle = true;
        } else if a == "--sort" || a == "--sort=priority" {
            sort = Sort::Ascending;
        } else if a == "--rsort" || a == "--rsort=priority" {
            sort = Sort::Descending;
        } else if a == "-O" || a == "--protocols" {
            let v = it.next().ok_or("-O needs a value")?;
            if !v.split(',').any(|p| p.eq_ignore_ascii_case("OpenFlow13")) {
                return Err(format!("{v}: only OpenFlow13 is supported"));
            }
        } else if let Some(v) = a
            .strip_prefix("-O")
            .or_else(|| a.strip_prefix("--protocols="))
        {
            if !v.split(',').any(|p| p.eq_ignore_ascii_case("OpenFlow13")) {
                return Err(format!("{v}: only OpenFlow13 is supported"));
            }
        } else if let Some(v) = a.strip_prefix("--timeout=") {
            let secs: u64 = v.parse().map_err(|_| format!("bad timeout \"{v}\""))?;
            timeout = (secs > 0).then(|| Duration::from_secs(secs));
        } else if let Some((option, file)) = tls_option(a, &mut it)? {
            let file = Some(std::path::PathBuf::from(file));
            match option {
                'p' => tls.private_key = file,
                'c' => tls.certificate = file,
                _ => tls.ca_cert = file,
            }
        } else if let Some(v) = a.strip_prefix("--count=") {
            count = Some(v.parse().map_err(|_| format!("bad count \"{v}\""))?);
        } else if a.starts_with("--") {
            return Err(format!("unknown option {a}"));
        } else {
            pos.push(a.clone());
        }
    }
    if pos.len() < 2 {
        return Err("missing COMMAND or TARGET".into());
    }
    crate::tls::set_files(tls);
    let args = pos.split_off(2);
    Ok(Invocation {
        sort,
        command: pos[0].clone(),
        target: pos[1].clone(),
        args,
        strict,
        bundle,
        timeout,
        count,
        dot,
    })
}

/// Entry point for the `oxflow ctl` subcommand: `args` are the words after
/// `ctl`. Prints to stdout/stderr and returns the exit status.
pub fn main_with_args(args: Vec<String>) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(&args, &mut stdout.lock(), &mut stderr.lock())
}

/// [`main_with_args`] with explicit output streams (for tests).
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        let _ = writeln!(
            out,
            "{USAGE}\n{}\n{}\n{}\n{}",
            crate::port_admin::USAGE,
            crate::graph_change::USAGE,
            crate::beba::USAGE,
            crate::flexforward::USAGE
        );
        return 0;
    }
    let inv = match parse_args(args) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(err, "oxflow ctl: {e}\n{USAGE}");
            return 2;
        }
    };
    match execute(&inv, out) {
        Ok(()) => 0,
        Err(Failure(msg)) => {
            let _ = out.flush();
            let _ = writeln!(err, "{msg}");
            1
        }
    }
}

fn arg<'a>(inv: &'a Invocation, i: usize, what: &str) -> Result<&'a str, Failure> {
    inv.args
        .get(i)
        .map(String::as_str)
        .ok_or_else(|| Failure(format!("{}: missing {what}", inv.command)))
}

fn opt_arg(inv: &Invocation, i: usize) -> &str {
    inv.args.get(i).map_or("", String::as_str)
}

fn connect(inv: &Invocation) -> Result<Connection, Failure> {
    let target = Target::parse(&inv.target).map_err(Failure)?;
    Connection::connect(&target, inv.timeout).map_err(|e| Failure(format!("{}: {e}", inv.target)))
}

/// Send modifications with a barrier and turn OFPT_ERRORs into a failure.
fn modify(inv: &Invocation, mods: Vec<Message>) -> Result<(), Failure> {
    let mut c = connect(inv)?;
    let errors = if inv.bundle {
        crate::bundle::send_bundle(&mut c, 1, mods)?
    } else {
        c.send_mods(mods)?
    };
    if errors.is_empty() {
        return Ok(());
    }
    Err(Failure(
        errors
            .iter()
            .map(|(xid, e)| {
                format!(
                    "OFPT_ERROR: {} (xid={xid:#x})",
                    crate::print::format_error_code(e)
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

fn dump(
    inv: &Invocation,
    out: &mut dyn Write,
    body: MultipartRequestBody,
    keep: impl Fn(&mut MultipartReplyBody),
) -> Result<(), Failure> {
    let mut c = connect(inv)?;
    let (xid, mut reply) = c.multipart(body)?;
    keep(&mut reply);
    writeln!(out, "{}", format_multipart_reply(xid, &reply))?;
    Ok(())
}

/// `parse()`, with the switch's port names if the input needs them
/// ([`crate::port_names`]).
fn named<T>(
    inv: &Invocation,
    parse: impl Fn() -> Result<T, SyntaxError>,
) -> Result<T, SyntaxError> {
    crate::port_names::resolving(&inv.target, inv.timeout, parse)
}

fn flow_command(inv: &Invocation) -> u8 {
    match (inv.command.as_str(), inv.strict) {
        ("mod-flows", false) => flow_mod_command::MODIFY,
        ("mod-flows", true) => flow_mod_command::MODIFY_STRICT,
        ("del-flows", false) => flow_mod_command::DELETE,
        ("del-flows", true) => flow_mod_command::DELETE_STRICT,
        _ => flow_mod_command::ADD,
    }
}

/// Read flows for add-flows: one per line, `#` comments and blank lines
/// skipped; a line may start with add/modify/delete words
/// ([`crate::flow_file`]).
fn read_flow_file(inv: &Invocation, path: &str) -> Result<Vec<Message>, Failure> {
    let reader: Box<dyn BufRead> = if path == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        let f = std::fs::File::open(path).map_err(|e| Failure(format!("{path}: {e}")))?;
        Box::new(std::io::BufReader::new(f))
    };
    let mut mods = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Failure(format!("{path}: {e}")))?;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let fm = named(inv, || crate::flow_file::parse_flow_line(t))
            .map_err(|e| Failure(format!("{path}:{}: {}", n + 1, e.render(t))))?;
        mods.push(Message::FlowMod(fm));
    }
    Ok(mods)
}

/// Parse `in_port=N packet=HEX actions=...` into a PACKET_OUT.
pub fn parse_packet_out(s: &str) -> Result<PacketOut, SyntaxError> {
    let (head, acts) = match find_actions(s) {
        Some((kw, at)) => (&s[..kw], Some(at)),
        None => (s, None),
    };
    let mut po = PacketOut {
        buffer_id: NO_BUFFER,
        in_port: port_no::CONTROLLER,
        actions: Vec::new(),
        data: Vec::new(),
    };
    for t in tokenize(head, 0)? {
        match t.key {
            "in_port" => {
                let v = t.need_value()?;
                po.in_port =
                    parse_port(v).ok_or_else(|| t.value_err(format!("bad port \"{v}\"")))?;
            }
            "packet" => {
                let v = t.need_value()?;
                po.data = parse_hex(v).ok_or_else(|| t.value_err("bad hex packet"))?;
            }
            "buffer_id" | "buffer" => {
                let v = t.need_value()?;
                po.buffer_id = parse_int(v)
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| t.value_err(format!("bad buffer id \"{v}\"")))?;
            }
            _ => return Err(t.key_err(format!("unknown packet-out keyword \"{}\"", t.key))),
        }
    }
    if let Some(at) = acts {
        po.actions = parse_action_list(&s[at..], at, ActionContext::default())?;
    }
    if po.data.is_empty() && po.buffer_id == NO_BUFFER {
        return Err(SyntaxError::new(
            "packet-out needs packet=HEX or buffer_id=N",
            0,
            s.len(),
        ));
    }
    Ok(po)
}

/// Hex bytes, optionally with `:`, `.` or spaces between them.
fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| !matches!(b, b':' | b'.' | b' '))
        .collect();
    if digits.len() & 1 == 1 {
        return None;
    }
    digits
        .chunks(2)
        .map(|p| {
            let h = (p[0] as char).to_digit(16)?;
            let l = (p[1] as char).to_digit(16)?;
            Some((h * 16 + l) as u8)
        })
        .collect()
}

fn execute(inv: &Invocation, out: &mut dyn Write) -> Result<(), Failure> {
    if crate::graph_change::COMMANDS.contains(&inv.command.as_str()) {
        return crate::graph_change::run(&inv.command, &inv.target, &inv.args, inv.timeout, out)
            .map_err(Failure);
    }
    if crate::port_admin::COMMANDS.contains(&inv.command.as_str()) {
        return crate::port_admin::run(&inv.command, &inv.target, &inv.args, inv.timeout, out)
            .map_err(Failure);
    }
    if crate::flexforward::COMMANDS.contains(&inv.command.as_str()) {
        return crate::flexforward::run(&inv.command, &inv.target, &inv.args, inv.timeout, out)
            .map_err(Failure);
    }
    match inv.command.as_str() {
        "show" => {
            let mut c = connect(inv)?;
            let f = c.transact(Message::FeaturesRequest)?;
            writeln!(out, "{}", format_message(&f))?;
            let (xid, ports) = c.multipart(MultipartRequestBody::PortDesc)?;
            writeln!(out, "{}", format_multipart_reply(xid, &ports))?;
            let cfg = c.transact(Message::GetConfigRequest)?;
            writeln!(out, "{}", format_message(&cfg))?;
        }
        "dump-desc" => dump(inv, out, MultipartRequestBody::Desc, |_| {})?,
        "save" => {
            crate::state::save(&mut connect(inv)?, arg(inv, 0, "FILE")?, out).map_err(Failure)?
        }
        "restore" => {
            let errors =
                crate::state::restore(&mut connect(inv)?, arg(inv, 0, "FILE")?, inv.bundle, out)
                    .map_err(Failure)?;
            if let Some((xid, e)) = errors.first() {
                return Err(Failure(format!(
                    "OFPT_ERROR: {} (xid={xid:#x}){}",
                    crate::print::format_error_code(e),
                    if errors.len() > 1 {
                        format!(" and {} more", errors.len() - 1)
                    } else {
                        String::new()
                    }
                )));
            }
        }
        "dump-flows" | "dump-aggregate" => {
            let s = opt_arg(inv, 0);
            let spec = named(inv, || parse_flow(s, FlowUsage::Filter)).map_err(|e| syntax(s, e))?;
            let req = spec.to_stats_request();
            let body = if inv.command == "dump-flows" {
                MultipartRequestBody::Flow(req)
            } else {
                MultipartRequestBody::Aggregate(req)
            };
            let strict_priority = (inv.strict).then_some(spec.priority);
            let want_match = spec.match_.clone();
            let sort = inv.sort;
            dump(inv, out, body, |r| {
                if let MultipartReplyBody::Flow(v) = r {
                    if let Some(p) = strict_priority {
                        v.retain(|f| f.priority == p && f.match_ == want_match);
                    }
                    // Stable sorts: equal priorities keep the switch's order.
                    match sort {
                        Sort::None => {}
                        Sort::Ascending => v.sort_by_key(|f| f.priority),
                        Sort::Descending => v.sort_by_key(|f| std::cmp::Reverse(f.priority)),
                    }
                }
            })?;
        }
        "add-flow" | "mod-flows" => {
            let s = arg(inv, 0, "FLOW")?;
            let usage = if inv.command == "add-flow" {
                FlowUsage::Add
            } else {
                FlowUsage::Modify
            };
            let spec = named(inv, || parse_flow(s, usage)).map_err(|e| syntax(s, e))?;
            modify(
                inv,
                vec![Message::FlowMod(spec.to_flow_mod(flow_command(inv)))],
            )?;
        }
        "add-flows" => {
            let mods = read_flow_file(inv, arg(inv, 0, "FILE")?)?;
            modify(inv, mods)?;
        }
        "del-flows" => {
            let s = opt_arg(inv, 0);
            let spec = named(inv, || parse_flow(s, FlowUsage::Filter)).map_err(|e| syntax(s, e))?;
            modify(
                inv,
                vec![Message::FlowMod(spec.to_flow_mod(flow_command(inv)))],
            )?;
        }
        "dump-ports" => {
            let p = opt_arg(inv, 0);
            let port_no = if p.is_empty() {
                port_no::ANY
            } else {
                named(inv, || {
                    parse_port(p).ok_or_else(|| SyntaxError::new("bad port", 0, p.len()))
                })
                .map_err(|_| Failure(format!("bad port \"{p}\"")))?
            };
            dump(
                inv,
                out,
                MultipartRequestBody::PortStats { port_no },
                |_| {},
            )?;
        }
        "dump-ports-desc" => dump(inv, out, MultipartRequestBody::PortDesc, |_| {})?,
        "dump-tables" => dump(inv, out, MultipartRequestBody::Table, |_| {})?,
        "dump-table-features" => dump(
            inv,
            out,
            MultipartRequestBody::TableFeatures(Vec::new()),
            |_| {},
        )?,
        "dump-worker-stats" => dump(
            inv,
            out,
            MultipartRequestBody::Experimenter(ofp::experimenter::WorkerStats::request()),
            |_| {},
        )?,
        "show-pipeline" | "show-tc" => {
            let mut c = connect(inv)?;
            let (_, reply) = c.multipart(MultipartRequestBody::Experimenter(
                ofp::graph_desc::DatapathGraph::request(),
            ))?;
            let g = match &reply {
                ofp::multipart::MultipartReplyBody::Experimenter(e) => {
                    ofp::graph_desc::DatapathGraph::parse_reply(e)
                }
                _ => None,
            }
            .ok_or_else(|| Failure("the switch sent no data-path graph".into()))?;
            let text = match (inv.command.as_str(), inv.dot) {
                ("show-tc", _) => g.to_tc_text(),
                (_, true) => g.to_dot(),
                _ => g.to_text(),
            };
            write!(out, "{text}")?;
        }
        "add-group" | "mod-group" => {
            let s = arg(inv, 0, "GROUP")?;
            let mut g = named(inv, || parse_group(s, GroupUsage::Add)).map_err(|e| syntax(s, e))?;
            if inv.command == "mod-group" {
                g.command = group_command::MODIFY;
            }
            modify(inv, vec![Message::GroupMod(g)])?;
        }
        "del-groups" => {
            let s = opt_arg(inv, 0);
            let g = parse_group(s, GroupUsage::Delete).map_err(|e| syntax(s, e))?;
            modify(inv, vec![Message::GroupMod(g)])?;
        }
        "dump-groups" => {
            let s = opt_arg(inv, 0);
            let id = parse_group(s, GroupUsage::Delete)
                .map_err(|e| syntax(s, e))?
                .group_id;
            dump(inv, out, MultipartRequestBody::GroupDesc, |r| {
                if let MultipartReplyBody::GroupDesc(v) = r {
                    v.retain(|g| id == group_id::ALL || g.group_id == id);
                }
            })?;
        }
        "dump-group-stats" => {
            let s = opt_arg(inv, 0);
            let group_id = parse_group(s, GroupUsage::Delete)
                .map_err(|e| syntax(s, e))?
                .group_id;
            dump(inv, out, MultipartRequestBody::Group { group_id }, |_| {})?;
        }
        "dump-group-features" => dump(inv, out, MultipartRequestBody::GroupFeatures, |_| {})?,
        "add-meter" | "mod-meter" => {
            let s = arg(inv, 0, "METER")?;
            let mut m = parse_meter(s, MeterUsage::Add).map_err(|e| syntax(s, e))?;
            if inv.command == "mod-meter" {
                m.command = meter_command::MODIFY;
            }
            modify(inv, vec![Message::MeterMod(m)])?;
        }
        "del-meters" | "del-meter" => {
            let s = opt_arg(inv, 0);
            let m = parse_meter(s, MeterUsage::Select).map_err(|e| syntax(s, e))?;
            modify(inv, vec![Message::MeterMod(m)])?;
        }
        "dump-meters" | "dump-meter" | "meter-stats" => {
            let s = opt_arg(inv, 0);
            let id = parse_meter(s, MeterUsage::Select)
                .map_err(|e| syntax(s, e))?
                .meter_id;
            let body = if inv.command == "meter-stats" {
                MultipartRequestBody::Meter { meter_id: id }
            } else {
                MultipartRequestBody::MeterConfig { meter_id: id }
            };
            dump(inv, out, body, |_| {})?;
        }
        "meter-features" => dump(inv, out, MultipartRequestBody::MeterFeatures, |_| {})?,
        "packet-out" => {
            // Old form: packet-out TARGET IN_PORT ACTIONS PACKET.
            let s = match inv.args.as_slice() {
                [port, acts, pkt] if !port.contains('=') => {
                    format!("in_port={port} packet={pkt} actions={acts}")
                }
                _ => inv.args.join(" "),
            };
            let po = named(inv, || parse_packet_out(&s)).map_err(|e| syntax(&s, e))?;
            modify(inv, vec![Message::PacketOut(po)])?;
        }
        "monitor" => {
            let args = crate::monitor::parse_monitor_args(&inv.args).map_err(Failure)?;
            let mut c = connect(inv)?;
            if let Some(miss_send_len) = args.miss_len {
                c.send(Message::SetConfig(SwitchConfig {
                    flags: 0,
                    miss_send_len,
                }))?;
            }
            if args.invalid_ttl {
                let cfg = match c.transact(Message::GetAsyncRequest)?.body {
                    Message::GetAsyncReply(cfg) => cfg,
                    other => {
                        return Err(ClientError::Unexpected(Box::new(ofp::OfpMessage::new(
                            0, other,
                        )))
                        .into())
                    }
                };
                let cfg = crate::monitor::with_invalid_ttl(cfg);
                c.send(Message::SetAsync(cfg))?;
            }
            c.set_timeout(None)?;
            let mut seen = 0u64;
            while inv.count.is_none_or(|n| seen < n) {
                let m = match c.recv() {
                    Ok(m) => m,
                    Err(ClientError::Decode(e)) => {
                        writeln!(out, "(undecodable message: {e})")?;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                writeln!(out, "{}", format_message(&m))?;
                out.flush()?;
                seen += 1;
            }
        }
        "role" => {
            let r = match opt_arg(inv, 0) {
                "" | "nochange" => role::NOCHANGE,
                "equal" | "other" => role::EQUAL,
                "master" => role::MASTER,
                "slave" => role::SLAVE,
                other => return Err(Failure(format!("unknown role \"{other}\""))),
            };
            let g = opt_arg(inv, 1);
            let generation_id = if g.is_empty() {
                0
            } else {
                parse_int(g)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| Failure(format!("bad generation id \"{g}\"")))?
            };
            let mut c = connect(inv)?;
            let reply = c.transact(Message::RoleRequest(Role {
                role: r,
                generation_id,
            }))?;
            writeln!(out, "{}", format_message(&reply))?;
        }
        cmd if crate::beba::COMMANDS.contains(&cmd) => {
            match crate::beba::parse(cmd, &inv.args).unwrap_or_else(|| Err(cmd.to_string())) {
                Err(e) => return Err(Failure(e)),
                Ok(crate::beba::Request::Mods(mods)) => modify(inv, mods)?,
                Ok(crate::beba::Request::Dump(body)) => {
                    let mut c = connect(inv)?;
                    let (xid, reply) = c.multipart(body)?;
                    writeln!(out, "{}", crate::beba::format_reply(xid, &reply))?;
                }
            }
        }
        other => return Err(Failure(format!("unknown command \"{other}\"; see --help"))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn packet_out_syntax() {
        let po = parse_packet_out("in_port=1 packet=0102:03ff actions=output:2,ALL").unwrap();
        assert_eq!(po.in_port, 1);
        assert_eq!(po.data, vec![1, 2, 3, 0xff]);
        assert_eq!(po.actions.len(), 2);
        let e = parse_packet_out("in_port=1 packet=0g actions=drop").unwrap_err();
        assert_eq!(e.offset, 17);
        assert!(parse_packet_out("in_port=1").is_err());
    }

    #[test]
    fn usage_errors() {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        assert_eq!(run(&args(&["show"]), &mut o, &mut e), 2);
        assert_eq!(
            run(&args(&["--bogus", "show", "tcp:1.2.3.4"]), &mut o, &mut e),
            2
        );
        assert_eq!(
            run(
                &args(&["-O", "OpenFlow10", "show", "tcp:x"]),
                &mut o,
                &mut e
            ),
            2
        );
        assert_eq!(run(&args(&["--help"]), &mut o, &mut e), 0);
    }

    #[test]
    fn syntax_error_before_connecting() {
        // The target does not exist: the syntax error must come first.
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let code = run(
            &args(&[
                "add-flow",
                "unix:/nonexistent",
                "ip,nw_srcc=1.2.3.4,actions=drop",
            ]),
            &mut o,
            &mut e,
        );
        assert_eq!(code, 1);
        let e = String::from_utf8(e).unwrap();
        assert_eq!(
            e,
            "error: unknown field \"nw_srcc\" at column 4\n  ip,nw_srcc=1.2.3.4,actions=drop\n     ^^^^^^^\n"
        );
    }

    #[test]
    fn unknown_command() {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        assert_eq!(
            run(&args(&["frob", "unix:/nonexistent"]), &mut o, &mut e),
            1
        );
    }
}
