//! The proxy's port map: which access VLAN of the trunk is which logical
//! OpenFlow port the controller sees.
//!
//! VLANs FIRST..=LAST become logical ports `port_base`, `port_base + 1`, ...
//! in VLAN order; the switch behind the proxy has the trunk as port
//! `trunk`. Logical numbers live in the controller's view and the trunk
//! number in the switch's, so the two may coincide.

use ofp::oxm::vid;
use ofp::port::{port_no, Port, MAX_PORT_NAME_LEN};

/// VLAN range <-> logical port numbers, and the trunk's switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortMap {
    /// The trunk's port number on the switch behind the proxy.
    pub trunk: u32,
    /// First access VLAN id.
    pub first_vid: u16,
    /// Last access VLAN id (inclusive).
    pub last_vid: u16,
    /// Logical port number of `first_vid`.
    pub port_base: u32,
}

impl PortMap {
    /// Checks the ranges: VLAN ids 1..=4094 with FIRST <= LAST, trunk port
    /// 1..=OFPP_MAX, logical ports 1..=OFPP_MAX.
    pub fn new(trunk: u32, first_vid: u16, last_vid: u16, port_base: u32) -> Result<Self, String> {
        if !(1..=4094).contains(&first_vid) || !(1..=4094).contains(&last_vid) {
            return Err(format!(
                "--vlans {first_vid}-{last_vid}: VLAN ids must be 1..4094"
            ));
        }
        if first_vid > last_vid {
            return Err(format!(
                "--vlans {first_vid}-{last_vid}: the first VLAN is above the last"
            ));
        }
        if trunk == 0 || trunk > port_no::MAX {
            return Err(format!(
                "--trunk-port {trunk}: must be a switch port number 1..{}",
                port_no::MAX
            ));
        }
        let n = u32::from(last_vid - first_vid);
        if port_base == 0 || port_base.checked_add(n).is_none_or(|l| l > port_no::MAX) {
            return Err(format!(
                "--port-base {port_base}: logical ports {port_base}..{} must lie in 1..{}",
                u64::from(port_base) + u64::from(n),
                port_no::MAX
            ));
        }
        Ok(PortMap {
            trunk,
            first_vid,
            last_vid,
            port_base,
        })
    }

    /// Parses `FIRST-LAST` (or a single VLAN id) into (first, last).
    pub fn parse_vlans(text: &str) -> Result<(u16, u16), String> {
        let (a, b) = text.split_once('-').unwrap_or((text, text));
        let num = |s: &str| {
            s.trim()
                .parse::<u16>()
                .ok()
                .filter(|v| (1..=4094).contains(v))
                .ok_or_else(|| {
                    format!("--vlans {text:?}: {s:?} is not a VLAN id 1..4094 (want FIRST-LAST)")
                })
        };
        let (a, b) = (num(a)?, num(b)?);
        if a > b {
            return Err(format!(
                "--vlans {text:?}: the first VLAN is above the last"
            ));
        }
        Ok((a, b))
    }

    /// Number of logical ports.
    pub fn len(&self) -> u32 {
        u32::from(self.last_vid - self.first_vid) + 1
    }

    /// The VLAN id of logical port `port`, if it is one.
    pub fn vid_of(&self, port: u32) -> Option<u16> {
        let i = port.checked_sub(self.port_base)?;
        (i < self.len()).then(|| self.first_vid + i as u16)
    }

    /// The logical port of VLAN `vid`, if it is one of ours.
    pub fn port_of(&self, vid: u16) -> Option<u32> {
        (self.first_vid..=self.last_vid)
            .contains(&vid)
            .then(|| self.port_base + u32::from(vid - self.first_vid))
    }

    /// Every (logical port, VLAN id), in order.
    pub fn ports(&self) -> impl Iterator<Item = (u32, u16)> + '_ {
        (self.first_vid..=self.last_vid)
            .map(|v| (self.port_base + u32::from(v - self.first_vid), v))
    }

    /// The logical port of VLAN `v` as the controller sees it, derived from
    /// the trunk's description: number `port`, name `TRUNK.VID` (the trunk's
    /// name shortened to fit 15 bytes), a locally administered address made
    /// of the trunk's with the VLAN id in its last two bytes, and the
    /// trunk's config, state, features and speeds.
    pub fn logical_desc(&self, trunk: &Port, port: u32, v: u16) -> Port {
        let suffix = format!(".{v}");
        let room = (MAX_PORT_NAME_LEN - 1).saturating_sub(suffix.len());
        let mut base: String = trunk.name.clone();
        while base.len() > room {
            base.pop();
        }
        let mut hw = trunk.hw_addr;
        hw[0] = (hw[0] | 0x02) & !0x01;
        hw[4..6].copy_from_slice(&v.to_be_bytes());
        Port {
            port_no: port,
            hw_addr: hw,
            name: format!("{base}{suffix}"),
            ..trunk.clone()
        }
    }
}

/// The VLAN_VID match/set value of VLAN `v` (with OFPVID_PRESENT).
pub fn vid_value(v: u16) -> u16 {
    v | vid::PRESENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_follows_vlan_order() {
        let m = PortMap::new(7, 101, 110, 1).unwrap();
        assert_eq!(m.len(), 10);
        assert_eq!(m.vid_of(1), Some(101));
        assert_eq!(m.vid_of(10), Some(110));
        assert_eq!(m.vid_of(11), None);
        assert_eq!(m.vid_of(0), None);
        assert_eq!(m.port_of(105), Some(5));
        assert_eq!(m.port_of(100), None);
        let m = PortMap::new(1, 20, 22, 5).unwrap();
        assert_eq!(m.ports().collect::<Vec<_>>(), [(5, 20), (6, 21), (7, 22)]);
    }

    #[test]
    fn bad_ranges_say_what_is_wrong() {
        assert!(PortMap::parse_vlans("0-5").unwrap_err().contains("1..4094"));
        assert!(PortMap::parse_vlans("10-4095")
            .unwrap_err()
            .contains("4095"));
        assert!(PortMap::parse_vlans("12-10").unwrap_err().contains("above"));
        assert!(PortMap::parse_vlans("a-b").is_err());
        assert_eq!(PortMap::parse_vlans("101-110"), Ok((101, 110)));
        assert_eq!(PortMap::parse_vlans("7"), Ok((7, 7)));
        assert!(PortMap::new(0, 1, 2, 1)
            .unwrap_err()
            .contains("--trunk-port"));
        assert!(PortMap::new(1, 1, 2, 0)
            .unwrap_err()
            .contains("--port-base"));
        assert!(PortMap::new(1, 1, 2, port_no::MAX)
            .unwrap_err()
            .contains("--port-base"));
    }

    #[test]
    fn logical_desc_names_and_addresses() {
        let trunk = Port {
            port_no: 3,
            hw_addr: [0xaa, 1, 2, 3, 4, 5],
            name: "averyverylongname".into(),
            state: ofp::port::state::LIVE,
            curr_speed: 10_000_000,
            ..Port::default()
        };
        let m = PortMap::new(3, 101, 102, 1).unwrap();
        let d = m.logical_desc(&trunk, 2, 102);
        assert_eq!(d.port_no, 2);
        assert_eq!(d.name, "averyverylo.102");
        assert_eq!(d.hw_addr, [0xaa, 1, 2, 3, 0, 102]);
        assert_eq!(d.state, ofp::port::state::LIVE);
        assert_eq!(d.curr_speed, 10_000_000);
    }
}
