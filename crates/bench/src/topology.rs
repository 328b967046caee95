//! The namespace topology the bench measures on.
//!
//! ```text
//!  netns PREFIXg            netns PREFIXs (switch)           netns PREFIXc
//!  PREFIXg0 (gen) ------ veth ------ PREFIXs1   PREFIXs2 ------ veth ------ PREFIXc0 (cap)
//!  02:00:00:00:00:01                 OF port 1  OF port 2                   02:00:00:00:00:02
//!  10.77.0.1/24                                                             10.77.0.2/24
//! ```
//!
//! Without a switch (the timestamp floor) `PREFIXg0` and `PREFIXc0` are the
//! two ends of one veth pair. PREFIX is `obh` + the bench's pid, so names
//! stay within 15 characters, never clash with other users of the machine,
//! and namespaces of a run that died are recognised and reaped
//! ([`reap_stale`]). IPv6 is off in the namespaces (no router solicitations or
//! MLD reports in the measurements), transmit checksum offload is off on the
//! host ends (a user-space switch forwards what it reads; iperf3's TCP needs
//! complete checksums), and static ARP entries let IP traffic flow without
//! the switch having to flood ARP. Dropping the [`Topology`] deletes the
//! namespaces it created, and with them the veth pairs.

use std::process::Command;

use crate::bail;
use crate::error::{BenchError, Result};

/// One data-plane interface the experiment uses.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Iface {
    /// "gen" (generator side) or "cap" (capture side).
    pub role: &'static str,
    /// Interface name (inside `netns`).
    pub name: String,
    /// Namespace holding it (None: the bench's own).
    pub netns: Option<String>,
    /// OpenFlow port number of the switch port it is wired to.
    pub of_port: u32,
    /// Name of the switch-side interface (in the switch namespace).
    pub switch_side: Option<String>,
    pub mac: [u8; 6],
    pub ip: [u8; 4],
}

/// The interfaces and namespaces of one run.
#[derive(Debug, serde::Serialize)]
pub struct Topology {
    pub ifaces: Vec<Iface>,
    /// Namespace the switch runs in (None for `external`).
    pub switch_netns: Option<String>,
    /// Namespaces created by the bench (deleted on drop).
    #[serde(skip)]
    owned: Vec<String>,
}

pub const GEN_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const CAP_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
pub const GEN_IP: [u8; 4] = [10, 77, 0, 1];
pub const CAP_IP: [u8; 4] = [10, 77, 0, 2];

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| BenchError(format!("running ip: {e}")))?;
    if !out.status.success() {
        bail!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Run a command inside namespace `ns`, ignoring failure (optional tuning).
fn in_ns_quiet(ns: &str, args: &[&str]) {
    let _ = Command::new("ip")
        .args(["netns", "exec", ns])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

pub fn mac_str(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn ip_str(a: &[u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// The run-unique prefix `obh` + the bench's pid (at most 7 digits, so
/// `obhPIDg0` stays within the 15 characters of an interface name).
pub fn run_prefix() -> String {
    format!("obh{}", std::process::id())
}

/// Delete namespaces `obhPID[gcs]` left behind by bench runs that died
/// without cleaning up (killed, crashed): those whose PID no longer exists.
pub fn reap_stale() {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("obh") else {
            continue;
        };
        let (digits, role) = rest.split_at(rest.len().saturating_sub(1));
        if !matches!(role, "g" | "c" | "s") || digits.is_empty() {
            continue;
        }
        let Ok(pid) = digits.parse::<u32>() else {
            continue;
        };
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

impl Topology {
    /// Build the namespaces and veths. `with_switch`: via a switch
    /// namespace (see the module docs) or straight gen <-> cap.
    pub fn build(prefix: &str, with_switch: bool) -> Result<Topology> {
        reap_stale();
        let g = format!("{prefix}g");
        let c = format!("{prefix}c");
        let s = format!("{prefix}s");
        let mut topo = Topology {
            ifaces: Vec::new(),
            switch_netns: with_switch.then(|| s.clone()),
            owned: Vec::new(),
        };
        let mut nss = vec![g.clone(), c.clone()];
        if with_switch {
            nss.push(s.clone());
        }
        for ns in &nss {
            // A namespace left by a crashed run with the same pid: remove it.
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(std::process::Stdio::null())
                .status();
            ip(&["netns", "add", ns])?;
            topo.owned.push(ns.clone());
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            in_ns_quiet(ns, &["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
            in_ns_quiet(
                ns,
                &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"],
            );
        }
        let gi = format!("{prefix}g0");
        let ci = format!("{prefix}c0");
        let s1 = format!("{prefix}s1");
        let s2 = format!("{prefix}s2");
        if with_switch {
            ip(&[
                "link", "add", &gi, "netns", &g, "type", "veth", "peer", "name", &s1, "netns", &s,
            ])?;
            ip(&[
                "link", "add", &ci, "netns", &c, "type", "veth", "peer", "name", &s2, "netns", &s,
            ])?;
            for i in [&s1, &s2] {
                ip(&["-n", &s, "link", "set", i, "up"])?;
                in_ns_quiet(&s, &["ethtool", "-K", i, "tx", "off", "gro", "off"]);
            }
        } else {
            ip(&[
                "link", "add", &gi, "netns", &g, "type", "veth", "peer", "name", &ci, "netns", &c,
            ])?;
        }
        for (ns, ifn, mac, addr, peer_ip, peer_mac) in [
            (&g, &gi, GEN_MAC, GEN_IP, CAP_IP, CAP_MAC),
            (&c, &ci, CAP_MAC, CAP_IP, GEN_IP, GEN_MAC),
        ] {
            ip(&["-n", ns, "link", "set", ifn, "address", &mac_str(&mac)])?;
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{}/24", ip_str(&addr)),
                "dev",
                ifn,
            ])?;
            ip(&["-n", ns, "link", "set", ifn, "up"])?;
            ip(&[
                "-n",
                ns,
                "neigh",
                "replace",
                &ip_str(&peer_ip),
                "lladdr",
                &mac_str(&peer_mac),
                "dev",
                ifn,
                "nud",
                "permanent",
            ])?;
            in_ns_quiet(ns, &["ethtool", "-K", ifn, "tx", "off"]);
        }
        topo.ifaces.push(Iface {
            role: "gen",
            name: gi,
            netns: Some(g),
            of_port: 1,
            switch_side: with_switch.then_some(s1),
            mac: GEN_MAC,
            ip: GEN_IP,
        });
        topo.ifaces.push(Iface {
            role: "cap",
            name: ci,
            netns: Some(c),
            of_port: 2,
            switch_side: with_switch.then_some(s2),
            mac: CAP_MAC,
            ip: CAP_IP,
        });
        Ok(topo)
    }

    /// A topology of interfaces the user already wired to an external
    /// switch (nothing is created or deleted).
    pub fn external(ifaces: Vec<Iface>) -> Topology {
        Topology {
            ifaces,
            switch_netns: None,
            owned: Vec::new(),
        }
    }

    pub fn iface(&self, role: &str) -> Result<&Iface> {
        self.ifaces
            .iter()
            .find(|i| i.role == role)
            .ok_or_else(|| BenchError(format!("topology has no {role:?} interface")))
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for ns in self.owned.drain(..) {
            let _ = Command::new("ip").args(["netns", "del", &ns]).status();
        }
    }
}
