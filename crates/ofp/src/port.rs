//! Ports (spec §7.2.1): reserved port numbers, `ofp_port` and its
//! config / state / feature bit words.

use crate::error::DecodeError;
use crate::wire::{get_fixed_str, put_fixed_str, Reader, Writer};

/// Reserved and limit port numbers (`enum ofp_port_no`).
pub mod port_no {
    /// Highest number of a physical or logical port.
    pub const MAX: u32 = 0xffff_ff00;
    pub const IN_PORT: u32 = 0xffff_fff8;
    pub const TABLE: u32 = 0xffff_fff9;
    pub const NORMAL: u32 = 0xffff_fffa;
    pub const FLOOD: u32 = 0xffff_fffb;
    pub const ALL: u32 = 0xffff_fffc;
    pub const CONTROLLER: u32 = 0xffff_fffd;
    pub const LOCAL: u32 = 0xffff_fffe;
    /// "Any port": a wildcard in requests, never a real port.
    pub const ANY: u32 = 0xffff_ffff;

    /// True for numbers a packet can actually be sent to by an output action:
    /// a regular port (1..=MAX) or one of the reserved output ports.
    pub fn is_valid_output(p: u32) -> bool {
        (p != 0 && p <= MAX) || (IN_PORT..=LOCAL).contains(&p)
    }
}

/// Queue id wildcard (`OFPQ_ALL`).
pub const OFPQ_ALL: u32 = 0xffff_ffff;
/// Length of `ofp_port`.
pub const PORT_LEN: usize = 64;
/// `OFP_MAX_PORT_NAME_LEN`.
pub const MAX_PORT_NAME_LEN: usize = 16;

/// `ofp_port_config` bits.
pub mod config {
    pub const PORT_DOWN: u32 = 1 << 0;
    pub const NO_RECV: u32 = 1 << 2;
    pub const NO_FWD: u32 = 1 << 5;
    pub const NO_PACKET_IN: u32 = 1 << 6;
}

/// `ofp_port_state` bits.
pub mod state {
    pub const LINK_DOWN: u32 = 1 << 0;
    pub const BLOCKED: u32 = 1 << 1;
    pub const LIVE: u32 = 1 << 2;
}

/// `ofp_port_features` bits.
pub mod features {
    pub const F10MB_HD: u32 = 1 << 0;
    pub const F10MB_FD: u32 = 1 << 1;
    pub const F100MB_HD: u32 = 1 << 2;
    pub const F100MB_FD: u32 = 1 << 3;
    pub const F1GB_HD: u32 = 1 << 4;
    pub const F1GB_FD: u32 = 1 << 5;
    pub const F10GB_FD: u32 = 1 << 6;
    pub const F40GB_FD: u32 = 1 << 7;
    pub const F100GB_FD: u32 = 1 << 8;
    pub const F1TB_FD: u32 = 1 << 9;
    pub const OTHER: u32 = 1 << 10;
    pub const COPPER: u32 = 1 << 11;
    pub const FIBER: u32 = 1 << 12;
    pub const AUTONEG: u32 = 1 << 13;
    pub const PAUSE: u32 = 1 << 14;
    pub const PAUSE_ASYM: u32 = 1 << 15;
}

/// `ofp_port`: description of one port, as in port-status and port-desc.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Port {
    pub port_no: u32,
    pub hw_addr: [u8; 6],
    /// Interface name, at most 15 bytes on the wire.
    pub name: String,
    pub config: u32,
    pub state: u32,
    pub curr: u32,
    pub advertised: u32,
    pub supported: u32,
    pub peer: u32,
    /// Current bit rate in kbps.
    pub curr_speed: u32,
    /// Maximum bit rate in kbps.
    pub max_speed: u32,
}

impl Port {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let port_no = r.u32("port: port_no")?;
        r.pad(4)?;
        let hw_addr = r.array("port: hw_addr")?;
        r.pad(2)?;
        let name = get_fixed_str(r, MAX_PORT_NAME_LEN, "port: name")?;
        Ok(Port {
            port_no,
            hw_addr,
            name,
            config: r.u32("port: config")?,
            state: r.u32("port: state")?,
            curr: r.u32("port: curr")?,
            advertised: r.u32("port: advertised")?,
            supported: r.u32("port: supported")?,
            peer: r.u32("port: peer")?,
            curr_speed: r.u32("port: curr_speed")?,
            max_speed: r.u32("port: max_speed")?,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port_no);
        w.put_zeros(4);
        w.put_bytes(&self.hw_addr);
        w.put_zeros(2);
        put_fixed_str(w, &self.name, MAX_PORT_NAME_LEN);
        for v in [
            self.config,
            self.state,
            self.curr,
            self.advertised,
            self.supported,
            self.peer,
            self.curr_speed,
            self.max_speed,
        ] {
            w.put_u32(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_round_trip() {
        let p = Port {
            port_no: 3,
            hw_addr: [2, 0, 0, 0, 0, 3],
            name: "veth3".into(),
            config: config::NO_FWD,
            state: state::LIVE,
            curr: features::F10GB_FD | features::COPPER,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: 10_000_000,
            max_speed: 10_000_000,
        };
        let mut w = Vec::new();
        p.encode(&mut w);
        assert_eq!(w.len(), PORT_LEN);
        assert_eq!(Port::decode(&mut Reader::message(&w)).unwrap(), p);
    }

    #[test]
    fn output_ports() {
        assert!(!port_no::is_valid_output(0));
        assert!(!port_no::is_valid_output(port_no::ANY));
        assert!(port_no::is_valid_output(port_no::CONTROLLER));
        assert!(port_no::is_valid_output(1));
        assert!(!port_no::is_valid_output(0xffff_ff01));
    }
}
