//! Trunk ports in the configuration (docs/trunk.md): `--trunk IFACE=FIRST-LAST`
//! on the command line, `[[trunk]] interface = "eth1"`, `vlans = "101-110"`
//! in the file. Each VLAN id of the range becomes one logical OpenFlow port
//! named `IFACE.VID`, numbered after the `[[port]]`/`--port` ports, trunk
//! by trunk in the order given, in VLAN order within a trunk.
//!
//! Checked here: the syntax, VLAN ids within 1-4094, FIRST <= LAST, two
//! ranges of one interface that overlap, a trunk interface that is also a
//! port. The callers prefix the message with where the value came from
//! (`--trunk` or FILE:LINE:COLUMN).

use std::ops::RangeInclusive;
use std::str::FromStr;

/// Lowest and highest VLAN id an access VLAN may have (0 is "priority
/// tag only", 4095 reserved: IEEE 802.1Q table 9-2).
pub const MIN_VID: u16 = 1;
pub const MAX_VID: u16 = 4094;

/// One trunk: an interface and its contiguous range of access VLANs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrunkSpec {
    pub interface: String,
    pub first: u16,
    pub last: u16,
}

impl TrunkSpec {
    pub fn vids(&self) -> RangeInclusive<u16> {
        self.first..=self.last
    }

    /// Number of logical ports (VLANs) of the trunk.
    pub fn len(&self) -> usize {
        usize::from(self.last - self.first) + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Name of the logical port of VLAN `vid`.
    pub fn port_name(&self, vid: u16) -> String {
        format!("{}.{vid}", self.interface)
    }
}

/// One VLAN id in 1-4094.
fn vid(s: &str) -> Result<u16, String> {
    let s = s.trim();
    let v: u32 = s
        .parse()
        .map_err(|_| format!("\"{s}\" is not a VLAN id (a number from 1 to 4094)"))?;
    if !(u32::from(MIN_VID)..=u32::from(MAX_VID)).contains(&v) {
        return Err(format!("VLAN id {v} is outside 1-4094"));
    }
    Ok(v as u16)
}

/// `FIRST-LAST` (or a single `VID`) into an inclusive range.
pub fn parse_vlans(s: &str) -> Result<(u16, u16), String> {
    let (first, last) = match s.split_once('-') {
        Some((a, b)) => (vid(a)?, vid(b)?),
        None => {
            let v = vid(s)?;
            (v, v)
        }
    };
    if first > last {
        return Err(format!(
            "VLAN range {first}-{last} is empty (FIRST must not exceed LAST)"
        ));
    }
    Ok((first, last))
}

/// A Linux interface name as `add-port` accepts it.
fn check_interface(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 || name.contains(['/', ' ', '\0', '=']) {
        return Err(format!(
            "bad interface name \"{name}\" (1 to 15 characters, no '/', '=' or spaces)"
        ));
    }
    Ok(())
}

impl TrunkSpec {
    /// A trunk from an interface and a `FIRST-LAST` range.
    pub fn new(interface: &str, vlans: &str) -> Result<TrunkSpec, String> {
        check_interface(interface)?;
        let (first, last) = parse_vlans(vlans)?;
        Ok(TrunkSpec {
            interface: interface.to_string(),
            first,
            last,
        })
    }
}

/// `IFACE=FIRST-LAST`, the `--trunk` syntax.
impl FromStr for TrunkSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (iface, vlans) = s
            .split_once('=')
            .ok_or_else(|| format!("\"{s}\" is not IFACE=FIRST-LAST (e.g. eth1=101-110)"))?;
        TrunkSpec::new(iface.trim(), vlans)
    }
}

/// Checks `trunks[i]` against the trunks before it and against the port
/// interfaces; the message names both sides.
pub fn check_one(trunks: &[TrunkSpec], i: usize, ports: &[&str]) -> Result<(), String> {
    let Some(t) = trunks.get(i) else {
        return Ok(());
    };
    if ports.contains(&t.interface.as_str()) {
        return Err(format!(
            "interface \"{}\" is both a port and a trunk",
            t.interface
        ));
    }
    for o in trunks.iter().take(i) {
        if o.interface == t.interface && o.first <= t.last && t.first <= o.last {
            return Err(format!(
                "trunk {}={}-{} overlaps trunk {}={}-{} (VLAN {} in both)",
                t.interface,
                t.first,
                t.last,
                o.interface,
                o.first,
                o.last,
                t.first.max(o.first)
            ));
        }
    }
    Ok(())
}

/// [`check_one`] for every trunk.
pub fn check(trunks: &[TrunkSpec], ports: &[&str]) -> Result<(), String> {
    (0..trunks.len()).try_for_each(|i| check_one(trunks, i, ports))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_flag_syntax() {
        let t: TrunkSpec = "eth1=101-110".parse().unwrap();
        assert_eq!((t.interface.as_str(), t.first, t.last), ("eth1", 101, 110));
        assert_eq!(t.len(), 10);
        assert_eq!(t.port_name(105), "eth1.105");
        let one: TrunkSpec = "eth2=7".parse().unwrap();
        assert_eq!((one.first, one.last, one.len()), (7, 7, 1));
        let edges: TrunkSpec = "e=1-4094".parse().unwrap();
        assert_eq!(edges.len(), 4094);
    }

    #[test]
    fn refuses_malformed_specs() {
        let err = |s: &str| s.parse::<TrunkSpec>().unwrap_err();
        assert!(
            err("eth1").contains("not IFACE=FIRST-LAST"),
            "{}",
            err("eth1")
        );
        assert!(err("eth1=").contains("not a VLAN id"));
        assert!(err("eth1=a-b").contains("\"a\" is not a VLAN id"));
        assert!(err("=1-2").contains("bad interface name"));
        assert!(err("eth1=0-5").contains("VLAN id 0 is outside 1-4094"));
        assert!(err("eth1=10-4095").contains("VLAN id 4095 is outside 1-4094"));
        assert!(err("eth1=10-5").contains("empty"));
        assert!(err("eth1=1-2-3").contains("not a VLAN id"));
        assert!(err("averyveryverylongname=1-2").contains("bad interface name"));
    }

    #[test]
    fn refuses_overlaps_and_ports() {
        let t = |s: &str| s.parse::<TrunkSpec>().unwrap();
        let ok = [t("eth1=101-110"), t("eth1=111-120"), t("eth2=101-110")];
        assert_eq!(check(&ok, &["eth0"]), Ok(()));
        let bad = [t("eth1=101-110"), t("eth1=110-120")];
        let e = check(&bad, &[]).unwrap_err();
        assert!(
            e.contains("eth1=110-120 overlaps trunk eth1=101-110"),
            "{e}"
        );
        assert!(e.contains("VLAN 110 in both"), "{e}");
        let e = check(&[t("eth0=5-6")], &["eth0"]).unwrap_err();
        assert!(e.contains("\"eth0\" is both a port and a trunk"), "{e}");
    }
}
