//! Probe frames: Ethernet / optional 802.1Q / IPv4 / UDP with a payload
//! that starts with [`MAGIC`] and a 64-bit sequence number, so a captured
//! frame is recognised (and its sequence read) whatever the switch did to
//! its headers, and wherever a tag moved the payload.

/// Marks a bench probe payload.
pub const MAGIC: &[u8; 8] = b"OXBENCH1";

/// Header fields of a probe.
#[derive(Debug, Clone)]
pub struct Probe {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    /// 802.1Q TCI (PCP << 13 | VID) when tagged.
    pub vlan: Option<u16>,
    pub ip_src: [u8; 4],
    pub ip_dst: [u8; 4],
    pub tos: u8,
    pub sport: u16,
    pub dport: u16,
    /// Whole frame length without FCS (at least 60 is padded to).
    pub len: usize,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            dst: crate::topology::CAP_MAC,
            src: crate::topology::GEN_MAC,
            vlan: None,
            ip_src: crate::topology::GEN_IP,
            // Not the capture host's own address: its stack drops the
            // probe silently (no ICMP port unreachable quoting the probe
            // back onto the wire).
            ip_dst: [10, 77, 0, 99],
            tos: 0,
            sport: 5000,
            dport: 6000,
            len: 64,
        }
    }
}

fn ip_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Probe {
    /// The frame carrying sequence number `seq`.
    pub fn build(&self, seq: u64) -> Vec<u8> {
        let mut f = Vec::with_capacity(self.len.max(64));
        f.extend_from_slice(&self.dst);
        f.extend_from_slice(&self.src);
        if let Some(tci) = self.vlan {
            f.extend_from_slice(&0x8100u16.to_be_bytes());
            f.extend_from_slice(&tci.to_be_bytes());
        }
        f.extend_from_slice(&0x0800u16.to_be_bytes());
        let l2 = f.len();
        let payload_len = self.len.saturating_sub(l2 + 28).max(16);
        let ip_len = (20 + 8 + payload_len) as u16;
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = self.tos;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&self.ip_src);
        ip[16..20].copy_from_slice(&self.ip_dst);
        let c = ip_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&ip);
        f.extend_from_slice(&self.sport.to_be_bytes());
        f.extend_from_slice(&self.dport.to_be_bytes());
        f.extend_from_slice(&((8 + payload_len) as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0]); // no UDP checksum
        f.extend_from_slice(MAGIC);
        f.extend_from_slice(&seq.to_be_bytes());
        f.resize(l2 + 28 + payload_len, 0);
        f
    }
}

/// The sequence number of a probe frame, if `data` is one.
pub fn find_probe(data: &[u8]) -> Option<u64> {
    let pos = data.windows(MAGIC.len()).position(|w| w == MAGIC)?;
    let s = data.get(pos + 8..pos + 16)?;
    Some(u64::from_be_bytes(s.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_carry_their_sequence_and_parse_as_udp() {
        let p = Probe::default();
        let f = p.build(42);
        assert_eq!(f.len(), 64);
        assert_eq!(find_probe(&f), Some(42));
        let tagged = Probe {
            vlan: Some(0x2005),
            ..Probe::default()
        }
        .build(7);
        assert_eq!(&tagged[12..14], &[0x81, 0x00]);
        assert_eq!(find_probe(&tagged), Some(7));
        assert_eq!(find_probe(&[0u8; 60]), None);
        // The IPv4 header checksum verifies to zero.
        assert_eq!(ip_checksum(&f[14..34]), 0);
    }
}
