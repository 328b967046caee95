//! The `oxflow` binary: one executable for every oxflow command.
//!
//! - `oxflow run ...`: the switch daemon in the foreground (config file +
//!   flags -> [`switch::config::Config`] -> [`switch::daemon::run`]); logs to
//!   stderr, stops cleanly on SIGTERM/SIGINT.
//! - `oxflow ctl COMMAND TARGET [ARGS...]`: the ovs-ofctl-like client; the
//!   words after `ctl` go unchanged to [`ctl::main_with_args`].
//! - `oxflow bench list|params|run|compare ...`: the evaluation framework;
//!   the words after `bench` go unchanged to [`bench::main_with_args`].
//! - `oxflow eval datacenter ...`: the Mininet data-centre evaluation, run by
//!   the Python tooling ([`eval`]).
//! - `oxflow harmless capex ...`: the HARMLESS CAPEX calculator, run by the
//!   Python tooling ([`harmless`]); `oxflow harmless proxy ...`: the
//!   HARMLESS translating OpenFlow proxy ([`harmless_proxy`]).
//!
//! Exit status: 0 on success (including a signalled stop), 1 when the switch
//! cannot start (bad config, missing interface, busy listener; the message
//! says which), 2 for bad command-line arguments; `ctl` exits with its own
//! status.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod eval;
mod harmless;
mod harmless_proxy;
mod pyexec;

/// mimalloc instead of the system allocator: the control plane allocates
/// per flow entry (matches, instructions, index nodes), and installing
/// 100,000 flows with glibc's malloc spent a fifth of its time there. (The
/// packet path does not allocate at all.) `ports::mimalloc` rather than the
/// `mimalloc` crate's wrapper, which takes mimalloc's slow aligned path for
/// ordinary allocations (see that module).
#[global_allocator]
static ALLOCATOR: ports::mimalloc::Mimalloc = ports::mimalloc::Mimalloc;
use switch::config::{Config, Overrides};

#[derive(Debug, Parser)]
#[command(
    name = "oxflow",
    version,
    about = "oxflow: a user-space OpenFlow 1.3 switch and its management client"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the switch in the foreground (logs to stderr; SIGTERM/SIGINT stop it,
    /// SIGHUP re-reads the config file's ports).
    Run(Box<RunArgs>),
    /// OpenFlow 1.3 client for any switch: `oxflow ctl COMMAND TARGET [ARGS...]`
    /// (e.g. `oxflow ctl dump-flows tcp:127.0.0.1:6634`; `oxflow ctl --help`).
    #[command(disable_help_flag = true)]
    Ctl {
        /// COMMAND TARGET [ARGS...], passed on unchanged.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        words: Vec<String>,
    },
    /// Measure an OpenFlow 1.3 switch: `oxflow bench list`, `oxflow bench run
    /// EXPERIMENT --switch oxflow|ovs|external --out DIR [--set K=V]`,
    /// `oxflow bench compare A B --out DIR` (`oxflow bench --help`).
    #[command(disable_help_flag = true)]
    Bench {
        /// Words passed on unchanged to the bench's own command line.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        words: Vec<String>,
    },
    /// Evaluations run by the Python tooling: `oxflow eval datacenter
    /// [--full] [--out DIR] ...` (Spine-Leaf in Mininet, oxflow vs Open
    /// vSwitch; `oxflow eval datacenter --help`, docs/datacenter.md).
    #[command(disable_help_flag = true)]
    Eval {
        /// EXPERIMENT [ARGS...], passed on unchanged.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        words: Vec<String>,
    },
    /// Hybrid legacy mode (HARMLESS) tools run by the Python tooling:
    /// `oxflow harmless capex [--ports ...] [--speed 1G|10G] [--out DIR]`
    /// (docs/harmless-capex.md; `oxflow harmless capex --help`);
    /// `oxflow harmless up|down|status --config FILE` (the manager);
    /// `oxflow harmless proxy --listen HOST:PORT --controller HOST:PORT
    /// --trunk-port N --vlans FIRST-LAST` (the translating proxy, in Rust;
    /// docs/harmless.md).
    #[command(disable_help_flag = true)]
    Harmless {
        /// COMMAND [ARGS...], passed on unchanged.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        words: Vec<String>,
    },
}

/// Flags of `oxflow run`; each overrides the config file.
#[derive(Debug, Args)]
struct RunArgs {
    /// TOML configuration file (see the `switch::config` docs).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Datapath id: a number, 0xHEX or 16 hex digits.
    #[arg(long, value_name = "ID")]
    dpid: Option<String>,
    /// Interface to attach; repeat: OpenFlow ports 1, 2, 3 ... in this order.
    #[arg(long = "port", value_name = "IFACE")]
    ports: Vec<String>,
    /// Trunk interface whose VLANs FIRST..LAST become logical ports named
    /// IFACE.VID, numbered after the --port ports (repeatable; docs/trunk.md),
    /// e.g. --trunk eth1=101-110.
    #[arg(long = "trunk", value_name = "IFACE=FIRST-LAST")]
    trunks: Vec<String>,
    /// Active controller endpoint tcp:IP:PORT or tls:IP:PORT (repeatable).
    #[arg(long = "controller", value_name = "ENDPOINT")]
    controllers: Vec<String>,
    /// Passive listener ptcp:PORT[:IP] or ptls:PORT[:IP] (ptcp:IP:PORT is
    /// accepted too; repeatable; default ptcp:6634:127.0.0.1).
    #[arg(long = "listen", value_name = "ENDPOINT")]
    listeners: Vec<String>,
    /// What to do while no controller is connected.
    #[arg(long, value_name = "MODE", value_parser = ["secure", "standalone"])]
    fail_mode: Option<String>,
    /// Worker threads.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    workers: Option<u16>,
    /// error, warn, info, debug or trace (RUST_LOG, if set, wins).
    #[arg(long, value_name = "LEVEL", value_parser = ["error", "warn", "info", "debug", "trace"])]
    log_level: Option<String>,
    /// Create tap device NAME (at most 15 characters, must not exist yet) as
    /// the OpenFlow LOCAL port (the switch's own network stack); it is
    /// removed when the switch exits. Off by default.
    #[arg(long, value_name = "NAME")]
    local_port: Option<String>,
    /// Serve Prometheus metrics (GET /metrics) on IP:PORT, e.g.
    /// 127.0.0.1:9464 (docs/metrics.md). Off by default.
    #[arg(long, value_name = "IP:PORT", value_parser = parse_metrics_addr)]
    metrics: Option<String>,
    /// Keep flows, groups, meters and config in DIR across restarts and
    /// crashes (docs/persistence.md). Off by default.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Run this module graph in the workers instead of ports -> OpenFlow ->
    /// ports (docs/graph.md; config key `graph`).
    #[arg(long, value_name = "FILE")]
    graph: Option<PathBuf>,
    /// Microseconds an idle worker keeps polling after its last frame
    /// before blocking in poll(2) (poll_spin_us; 0: block at once, least
    /// CPU; default 25).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    poll_spin_us: Option<u32>,
    /// Flows each BEBA state table holds (state_capacity; default 65536,
    /// docs/beba.md).
    #[arg(long, value_name = "N")]
    state_capacity: Option<u64>,
    /// Look table ID up with the structure registered as NAME ("auto": the
    /// built-in choice; repeatable; config `[[table]]`; docs/ARCHITECTURE.md,
    /// "Add a table kind").
    #[arg(long = "table-lookup", value_name = "ID=NAME")]
    table_lookups: Vec<String>,
}

/// `--metrics`: checked by the config's own parser (so both say the same
/// when wrong) while clap parses, kept as written.
fn parse_metrics_addr(s: &str) -> Result<String, String> {
    s.parse::<switch::config::MetricsAddr>()?;
    Ok(s.to_string())
}

impl RunArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            datapath_id: self.dpid.clone(),
            ports: self.ports.clone(),
            trunks: self.trunks.clone(),
            controllers: self.controllers.clone(),
            listeners: self
                .listeners
                .iter()
                .map(|l| passive_port_first(l))
                .collect(),
            fail_mode: self.fail_mode.clone(),
            workers: self.workers.map(usize::from),
            log_level: self.log_level.clone(),
            poll_spin_us: self.poll_spin_us,
            state_capacity: self.state_capacity,
            table_lookups: self.table_lookups.clone(),
        }
    }

    /// The config file (or the embedded defaults) with the flags applied.
    fn config(&self) -> Result<Config, String> {
        let mut cfg = match &self.config {
            Some(path) => Config::load(path).map_err(|e| e.to_string())?,
            None => Config::default(),
        };
        cfg.apply(&self.overrides()).map_err(|e| e.to_string())?;
        if let Some(name) = &self.local_port {
            cfg.local_port = Some(name.clone());
        }
        if let Some(addr) = &self.metrics {
            cfg.metrics = Some(addr.parse::<switch::config::MetricsAddr>()?.0);
        }
        if let Some(dir) = &self.state_dir {
            cfg.state_dir = Some(dir.clone());
        }
        if let Some(g) = &self.graph {
            cfg.graph = Some(g.clone());
        }
        Ok(cfg)
    }
}

/// Passive endpoints are `ptcp:PORT[:IP]` (as in Open vSwitch); issue 3's
/// contract also writes `ptcp:IP:PORT`. An IPv4 address can never be a port
/// number, so that order is unambiguous and is rewritten to the canonical
/// one here; anything else is passed on for the endpoint parser to judge.
fn passive_port_first(ep: &str) -> String {
    let mut parts = ep.splitn(3, ':');
    if let (Some(kind @ ("ptcp" | "ptls")), Some(ip), Some(port)) =
        (parts.next(), parts.next(), parts.next())
    {
        if ip.parse::<std::net::Ipv4Addr>().is_ok() && port.parse::<u16>().is_ok() {
            return format!("{kind}:{port}:{ip}");
        }
    }
    ep.to_string()
}

/// Logs to stderr; RUST_LOG (if set and valid) overrides `level`.
fn init_logging(level: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn run(args: &RunArgs) -> ExitCode {
    let cfg = match args.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oxflow run: {e}");
            return ExitCode::from(1);
        }
    };
    init_logging(cfg.log_level.as_str());
    if cfg.ports.is_empty() {
        tracing::warn!("no ports configured (--port IFACE or [[port]] in the config file)");
    }
    match switch::daemon::run(cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oxflow run: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(args) => {
            // Lookup structures from outside the pipeline that tables may
            // be configured with (`--table-lookup`, `[[table]]`): the
            // worked example of docs/ARCHITECTURE.md, "Add a table kind".
            table_kind_example::register();
            run(&args)
        }
        Command::Ctl { words } => {
            let status = ctl::main_with_args(words);
            ExitCode::from(u8::try_from(status).unwrap_or(1))
        }
        Command::Bench { words } => {
            let status = bench::main_with_args(words);
            ExitCode::from(u8::try_from(status).unwrap_or(1))
        }
        Command::Eval { words } => ExitCode::from(eval::EVAL.main_with_args(words)),
        Command::Harmless { words } if words.first().map(String::as_str) == Some("proxy") => {
            ExitCode::from(harmless_proxy::main_with_args(&words[1..]))
        }
        Command::Harmless { words } => {
            let help = words.first().map(String::as_str);
            let status = harmless::HARMLESS.main_with_args(words.clone());
            let also = "also: oxflow harmless proxy --help (the translating OpenFlow proxy)";
            match help {
                Some("--help" | "-h") => println!("{also}"),
                None => eprintln!("{also}"),
                _ => {}
            }
            ExitCode::from(status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{passive_port_first, Cli, Command};
    use clap::Parser;

    fn run_config(args: &[&str]) -> switch::config::Config {
        let cli = Cli::try_parse_from(["oxflow", "run"].iter().chain(args)).unwrap();
        let Command::Run(run) = cli.command else {
            panic!("not run")
        };
        run.config().unwrap()
    }

    #[test]
    fn local_port_flag_overrides_the_file() {
        let path = std::env::temp_dir().join(format!("oxflow-local-{}.toml", std::process::id()));
        std::fs::write(&path, "local_port = \"fromfile\"\n").unwrap();
        let file = path.to_str().unwrap();
        assert_eq!(run_config(&[]).local_port, None);
        assert_eq!(
            run_config(&["--config", file]).local_port.as_deref(),
            Some("fromfile")
        );
        assert_eq!(
            run_config(&["--config", file, "--local-port", "fromflag"])
                .local_port
                .as_deref(),
            Some("fromflag")
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn metrics_flag_overrides_the_file_and_is_checked() {
        let path = std::env::temp_dir().join(format!("oxflow-metrics-{}.toml", std::process::id()));
        std::fs::write(&path, "metrics = \"127.0.0.1:9000\"\n").unwrap();
        let file = path.to_str().unwrap();
        assert_eq!(run_config(&[]).metrics, None);
        assert_eq!(
            run_config(&["--config", file]).metrics,
            Some("127.0.0.1:9000".parse().unwrap())
        );
        assert_eq!(
            run_config(&["--config", file, "--metrics", "[::1]:9464"]).metrics,
            Some("[::1]:9464".parse().unwrap())
        );
        std::fs::remove_file(&path).unwrap();
        let e = Cli::try_parse_from(["oxflow", "run", "--metrics", "nope"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad metrics address \"nope\""), "{e}");
    }

    #[test]
    fn passive_endpoints_accept_both_orders() {
        assert_eq!(
            passive_port_first("ptcp:127.0.0.1:6640"),
            "ptcp:6640:127.0.0.1"
        );
        assert_eq!(
            passive_port_first("ptls:10.0.0.1:6653"),
            "ptls:6653:10.0.0.1"
        );
        assert_eq!(
            passive_port_first("ptcp:6640:127.0.0.1"),
            "ptcp:6640:127.0.0.1"
        );
        assert_eq!(passive_port_first("ptcp:6640"), "ptcp:6640");
        assert_eq!(
            passive_port_first("tcp:127.0.0.1:6640"),
            "tcp:127.0.0.1:6640"
        );
    }
}
