//! Switch recipes: how the switch under test is started, wired to the
//! topology and pointed at the bench's controller endpoint.
//!
//! - `oxflow`: the oxflow binary (`oxflow_bin=`, default: this executable
//!   when it is oxflow, else `target/release/oxflow`, else `oxflow` on
//!   PATH) runs in the switch namespace with ports 1 and 2, one worker,
//!   fail mode secure, and `--controller tcp:127.0.0.1:PORT`.
//! - `ovs`: a private Open vSwitch ([`crate::ovs::Ovs`]): ovsdb-server with
//!   its own database/run/log directory, ovs-vswitchd inside the switch
//!   namespace, a bridge on the userspace `netdev` datapath speaking only
//!   OpenFlow 1.3, fail mode secure, ports 1 and 2 (`ofport_request`),
//!   controller tcp:127.0.0.1:PORT out of band.
//! - `external`: nothing is started; the user names the interfaces the bench
//!   drives and how the switch reaches the bench (see [`EXTERNAL_KEYS`]).
//!
//! With two or more cores the switch is pinned to core 1 (`taskset`) and the
//! bench (generator and capture threads) to core 0.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::bail;
use crate::error::{BenchError, Context, Result};
use crate::ovs::Ovs;
use crate::topology::Topology;

/// Which switch is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchKind {
    Oxflow,
    Ovs,
    External,
}

impl std::str::FromStr for SwitchKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "oxflow" => Ok(SwitchKind::Oxflow),
            "ovs" => Ok(SwitchKind::Ovs),
            "external" => Ok(SwitchKind::External),
            _ => Err(format!(
                "unknown switch {s:?} (expected oxflow, ovs or external)"
            )),
        }
    }
}

impl SwitchKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            SwitchKind::Oxflow => "oxflow",
            SwitchKind::Ovs => "ovs",
            SwitchKind::External => "external",
        }
    }
}

/// Settings of the recipes (`--set KEY=VALUE` like experiment parameters).
pub const SWITCH_KEYS: &[(&str, &str, &str)] = &[
    (
        "oxflow_bin",
        "",
        "oxflow binary for --switch oxflow (default: this executable / target/release/oxflow)",
    ),
    ("workers", "1", "oxflow worker threads (--switch oxflow)"),
    (
        "pin",
        "true",
        "pin the switch to core 1 and the bench to core 0 when there are 2+ cores",
    ),
];

/// Settings of `--switch external`.
pub const EXTERNAL_KEYS: &[(&str, &str, &str)] = &[
    ("controller", "listen:0.0.0.0:6653", "listen:IP:PORT (the switch connects to the bench) or tcp:IP:PORT (the bench connects to the switch)"),
    ("gen_iface", "", "interface the bench sends from (wired to the switch)"),
    ("gen_netns", "", "namespace of gen_iface (empty: the bench's own)"),
    ("gen_port", "1", "OpenFlow port number of the switch port gen_iface is wired to"),
    ("cap_iface", "", "interface the bench captures on"),
    ("cap_netns", "", "namespace of cap_iface"),
    ("cap_port", "2", "OpenFlow port number of the switch port cap_iface is wired to"),
    ("switch_pid", "0", "pid of the switch process for CPU/memory sampling (0: none)"),
];

/// A started switch; dropping it stops it.
pub struct RunningSwitch {
    pub kind: SwitchKind,
    pub pid: Option<u32>,
    pub version: String,
    child: Option<Child>,
    _ovs: Option<Ovs>,
}

impl Drop for RunningSwitch {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(c.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            for _ in 0..100 {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Cores online on the machine (not the affinity mask of this process,
/// which the bench narrows to core 0 when it pins itself).
pub fn cores() -> usize {
    nix::unistd::sysconf(nix::unistd::SysconfVar::_NPROCESSORS_ONLN)
        .ok()
        .flatten()
        .map(|n| n.max(1) as usize)
        .unwrap_or(1)
}

/// Pin the calling thread (and threads it spawns later) to `core`.
pub fn pin_self(core: usize) {
    let mut set = nix::sched::CpuSet::new();
    if set.set(core).is_ok() {
        let _ = nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set);
    }
}

/// The oxflow binary to start.
fn oxflow_bin(given: &str) -> Result<PathBuf> {
    if !given.is_empty() {
        let p = PathBuf::from(given);
        if !p.is_file() {
            bail!("oxflow_bin={given}: no such file");
        }
        return Ok(p);
    }
    if let Ok(me) = std::env::current_exe() {
        if me.file_name().is_some_and(|n| n == "oxflow") {
            return Ok(me);
        }
    }
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/release/oxflow");
    if ws.is_file() {
        return Ok(ws);
    }
    Ok(PathBuf::from("oxflow"))
}

fn first_line(prog: &Path, arg: &str) -> String {
    Command::new(prog)
        .arg(arg)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// Start oxflow in the switch namespace, connecting to 127.0.0.1:`ctl_port`.
pub fn start_oxflow(
    topo: &Topology,
    ctl_port: u16,
    bin: &str,
    workers: u32,
    pin: bool,
    log: &Path,
) -> Result<RunningSwitch> {
    let bin = oxflow_bin(bin)?;
    let ns = topo
        .switch_netns
        .clone()
        .ok_or_else(|| BenchError::new("no switch namespace"))?;
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &ns]);
    if pin && cores() >= 2 {
        cmd.args(["taskset", "-c", "1"]);
    }
    cmd.arg(&bin).arg("run");
    for i in &topo.ifaces {
        if let Some(s) = &i.switch_side {
            cmd.args(["--port", s]);
        }
    }
    cmd.args([
        "--controller",
        &format!("tcp:127.0.0.1:{ctl_port}"),
        "--fail-mode",
        "secure",
        "--workers",
        &workers.to_string(),
        "--log-level",
        "warn",
    ]);
    let logf = std::fs::File::create(log).ctx(format!("creating {}", log.display()))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(logf));
    let child = cmd
        .spawn()
        .ctx(format!("starting {} in namespace {ns}", bin.display()))?;
    // `ip netns exec` and `taskset` exec the next program: the child's pid
    // is oxflow's.
    let pid = child.id();
    Ok(RunningSwitch {
        kind: SwitchKind::Oxflow,
        pid: Some(pid),
        version: first_line(&bin, "--version"),
        child: Some(child),
        _ovs: None,
    })
}

/// Start a private OVS whose bridge has the topology's switch-side ports.
pub fn start_ovs(topo: &Topology, ctl_port: u16, pin: bool, dir: &Path) -> Result<RunningSwitch> {
    if !crate::ovs::available() {
        bail!("--switch ovs needs root and ovsdb-tool, ovsdb-server, ovs-vswitchd, ovs-vsctl (apt install openvswitch-switch)");
    }
    let ns = topo
        .switch_netns
        .clone()
        .ok_or_else(|| BenchError::new("no switch namespace"))?;
    let prefix = format!("{}br", ns.trim_end_matches('s'));
    let ovs = Ovs::start_in(dir, &prefix, Some(&ns), pin && cores() >= 2).map_err(BenchError)?;
    let mut ports = Vec::new();
    for i in &topo.ifaces {
        if let Some(s) = &i.switch_side {
            ports.push((s.clone(), i.of_port));
        }
    }
    ovs.add_ports(&ports).map_err(BenchError)?;
    ovs.set_controller(&format!("tcp:127.0.0.1:{ctl_port}"))
        .map_err(BenchError)?;
    let pid = ovs.vswitchd_pid();
    let version = first_line(Path::new("ovs-vswitchd"), "--version");
    Ok(RunningSwitch {
        kind: SwitchKind::Ovs,
        pid,
        version,
        child: None,
        _ovs: Some(ovs),
    })
}

/// An external switch: nothing to start.
pub fn external(pid: Option<u32>) -> RunningSwitch {
    RunningSwitch {
        kind: SwitchKind::External,
        pid,
        version: "external".into(),
        child: None,
        _ovs: None,
    }
}
