//! A private Open vSwitch instance for client tests.
//!
//! Everything lives in a fresh temporary directory (database, sockets, pid
//! and log files), passed through OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR/
//! OVS_SYSCONFDIR on each command only, so several instances (and a system
//! OVS) can coexist. The bridge uses the userspace `netdev` datapath (no
//! kernel module) and speaks only OpenFlow 1.3; clients reach it through its
//! management socket `unix:DIR/BRIDGE.mgmt`. The bridge name is unique per
//! test process because the netdev datapath creates a tap device of that
//! name for the LOCAL port. Drop stops both daemons (by the pids in their own
//! pid files) and removes the directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

pub struct Ovs {
    dir: PathBuf,
    pub bridge: String,
}

fn in_path(bin: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
        || Path::new("/usr/sbin").join(bin).is_file()
}

/// Whether this process runs as root (needed for `unshare -n`).
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

    /// Start ovsdb-server and ovs-vswitchd and create an OpenFlow 1.3 bridge.
    pub fn start() -> Result<Ovs, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}x{n}", std::process::id() % 1_000_000);
        let dir = std::env::temp_dir().join(format!("oxflow-ctl-ovs-{id}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let ovs = Ovs {
            dir,
            bridge: format!("ctl{id}"),
        };
        let db = ovs.path("conf.db");
        let sock = format!("unix:{}", ovs.path("db.sock"));
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
        // ovs-vswitchd runs in a network namespace of its own (`unshare -n`):
        // the netdev datapath creates tap devices ("ovs-netdev", the bridge)
        // that would clash between instances and outlive the daemon; in a
        // private namespace they vanish with it, even if a test crashes.
        ovs.run(
            "unshare",
            &[
                "-n",
                "ovs-vswitchd",
                &sock,
                &format!("--pidfile={}", ovs.path("ovs-vswitchd.pid")),
                &format!("--unixctl={}", ovs.path("ovs-vswitchd.ctl")),
                &format!("--log-file={}", ovs.path("ovs-vswitchd.log")),
                "--detach",
            ],
        )?;
        let br = ovs.bridge.clone();
        ovs.run(
            "ovs-vsctl",
            &[
                &format!("--db={sock}"),
                "--timeout=20",
                "add-br",
                &br,
                "--",
                "set",
                "bridge",
                &br,
                "datapath_type=netdev",
                "protocols=OpenFlow13",
                "fail-mode=secure",
            ],
        )?;
        let mgmt = ovs.dir.join(format!("{br}.mgmt"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while !mgmt.exists() {
            if Instant::now() > deadline {
                return Err(format!("{} did not appear", mgmt.display()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(ovs)
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
            // sockets are gone before the directory is removed.
            // A detached daemon is reparented; until that parent reaps it,
            // it stays a zombie ("Z" in /proc/PID/stat), which counts as gone.
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
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
