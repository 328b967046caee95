//! A private Open vSwitch instance (used by `--switch ovs` and by the
//! `ctl` crate's tests, which include this file with `#[path]`, so it uses
//! only `std`).
//!
//! Everything lives in one directory (database, sockets, pid and log
//! files), passed through OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR/OVS_SYSCONFDIR on
//! each command only, so several instances (and a system OVS) can coexist.
//! The bridge uses the userspace `netdev` datapath (no kernel module),
//! speaks only OpenFlow 1.3 and is fail-secure; clients reach it through
//! its management socket `unix:DIR/BRIDGE.mgmt`. ovs-vswitchd runs either
//! inside a given network namespace (the bench: the namespace holding the
//! switch-side veths) or in a private one of its own (`unshare -n`, the
//! ctl tests): the netdev datapath creates tap devices ("ovs-netdev", the
//! bridge) that would clash between instances and outlive the daemon; in a
//! private namespace they vanish with it. Drop stops both daemons (by the
//! pids in their own pid files) and removes the directory if it was a
//! temporary one.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

pub struct Ovs {
    dir: PathBuf,
    pub bridge: String,
    /// Remove `dir` on drop (it was made for this instance only).
    temp: bool,
}

fn in_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        || Path::new("/usr/sbin").join(bin).is_file()
}

/// Whether this process runs as root (needed for namespaces).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

/// Whether the OVS programs this launcher needs are installed and we may
/// run them (root).
pub fn available() -> bool {
    is_root()
        && [
            "ovsdb-tool",
            "ovsdb-server",
            "ovs-vswitchd",
            "ovs-vsctl",
            "unshare",
        ]
        .iter()
        .all(|b| in_path(b))
        && Path::new(SCHEMA).is_file()
}

impl Ovs {
    fn cmd(&self, prog: &str) -> Command {
        let mut c = Command::new(prog);
        for v in ["OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR"] {
            c.env(v, &self.dir);
        }
        c.stdin(Stdio::null());
        c
    }

    fn run(&self, prog: &str, args: &[&str]) -> Result<(), String> {
        let out = self
            .cmd(prog)
            .args(args)
            .output()
            .map_err(|e| format!("{prog}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "{prog} {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    fn db_sock(&self) -> String {
        format!("unix:{}", self.path("db.sock"))
    }

    /// `ovs-vsctl` on this instance's database.
    pub fn vsctl(&self, args: &[&str]) -> Result<(), String> {
        let db = format!("--db={}", self.db_sock());
        let mut all = vec![db.as_str(), "--timeout=20"];
        all.extend_from_slice(args);
        self.run("ovs-vsctl", &all)
    }

    /// Start ovsdb-server and ovs-vswitchd (in a private namespace) in a
    /// fresh temporary directory and create an OpenFlow 1.3 bridge.
    pub fn start() -> Result<Ovs, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}x{n}", std::process::id() % 1_000_000);
        let dir = std::env::temp_dir().join(format!("oxflow-ctl-ovs-{id}"));
        let mut ovs = Ovs::start_in(&dir, &format!("ctl{id}"), None, false)?;
        ovs.temp = true;
        Ok(ovs)
    }

    /// Start the daemons with state in `dir` (created, emptied) and create
    /// bridge `bridge`. `netns`: run ovs-vswitchd in that namespace
    /// (None: a private one). `pin`: ovs-vswitchd on core 1.
    pub fn start_in(
        dir: &Path,
        bridge: &str,
        netns: Option<&str>,
        pin: bool,
    ) -> Result<Ovs, String> {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let ovs = Ovs {
            dir: dir.to_path_buf(),
            bridge: bridge.to_string(),
            temp: false,
        };
        let db = ovs.path("conf.db");
        let sock = ovs.db_sock();
        let remote = format!("--remote=p{sock}");
        ovs.run("ovsdb-tool", &["create", &db, SCHEMA])?;
        ovs.run(
            "ovsdb-server",
            &[
                &db,
                &remote,
                &format!("--pidfile={}", ovs.path("ovsdb-server.pid")),
                &format!("--unixctl={}", ovs.path("ovsdb-server.ctl")),
                &format!("--log-file={}", ovs.path("ovsdb-server.log")),
                "--detach",
            ],
        )?;
        ovs.run("ovs-vsctl", &[&format!("--db={sock}"), "--no-wait", "init"])?;
        let mut argv: Vec<String> = match netns {
            Some(ns) => vec!["netns".into(), "exec".into(), ns.into()],
            None => vec!["-n".into()],
        };
        if pin {
            argv.extend(["taskset".into(), "-c".into(), "1".into()]);
        }
        argv.extend([
            "ovs-vswitchd".to_string(),
            sock.clone(),
            format!("--pidfile={}", ovs.path("ovs-vswitchd.pid")),
            format!("--unixctl={}", ovs.path("ovs-vswitchd.ctl")),
            format!("--log-file={}", ovs.path("ovs-vswitchd.log")),
            "--detach".to_string(),
        ]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        ovs.run(if netns.is_some() { "ip" } else { "unshare" }, &argv)?;
        ovs.vsctl(&[
            "add-br",
            bridge,
            "--",
            "set",
            "bridge",
            bridge,
            "datapath_type=netdev",
            "protocols=OpenFlow13",
            "fail-mode=secure",
        ])?;
        let mgmt = ovs.dir.join(format!("{bridge}.mgmt"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while !mgmt.exists() {
            if Instant::now() > deadline {
                return Err(format!("{} did not appear", mgmt.display()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(ovs)
    }

    /// Add interfaces as OpenFlow ports with the given numbers.
    pub fn add_ports(&self, ports: &[(String, u32)]) -> Result<(), String> {
        for (name, no) in ports {
            let req = format!("ofport_request={no}");
            self.vsctl(&[
                "add-port",
                &self.bridge,
                name,
                "--",
                "set",
                "Interface",
                name,
                &req,
            ])?;
        }
        Ok(())
    }

    /// Point the bridge at a controller (out of band, no probes that could
    /// disturb a measurement).
    pub fn set_controller(&self, target: &str) -> Result<(), String> {
        self.vsctl(&["set-controller", &self.bridge, target])?;
        self.vsctl(&[
            "set",
            "controller",
            &self.bridge,
            "connection-mode=out-of-band",
            "inactivity_probe=0",
        ])
    }

    /// Pid of ovs-vswitchd (from its pid file).
    pub fn vswitchd_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.dir.join("ovs-vswitchd.pid"))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The ovs-ofctl style target of the bridge.
    pub fn target(&self) -> String {
        format!(
            "unix:{}",
            self.dir.join(format!("{}.mgmt", self.bridge)).display()
        )
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for name in ["ovs-vswitchd.pid", "ovsdb-server.pid"] {
            let Ok(pid) = std::fs::read_to_string(self.dir.join(name)) else {
                continue;
            };
            let pid = pid.trim();
            if pid.parse::<u32>().is_err() {
                continue;
            }
            let _ = Command::new("kill").arg(pid).status();
            // Wait (bounded) for the daemon to exit so its tap device and
            // sockets are gone before the directory is removed. A detached
            // daemon is reparented; until that parent reaps it, it stays a
            // zombie ("Z" in /proc/PID/stat), which counts as gone.
            let stat = PathBuf::from(format!("/proc/{pid}/stat"));
            let alive = || {
                std::fs::read_to_string(&stat).is_ok_and(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
                })
            };
            let deadline = Instant::now() + Duration::from_secs(5);
            while alive() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if self.temp {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
