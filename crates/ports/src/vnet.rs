//! The `virtio_net_hdr` that an AF_PACKET socket with `PACKET_VNET_HDR`
//! puts before every received frame and expects before every transmitted
//! one, and the two things the switch does with it (see
//! [`crate::afpacket`], "Segmentation offload"):
//!
//! - on receive, [`complete_rx`] turns a frame the kernel left with an
//!   unfinished L4 checksum (`VIRTIO_NET_HDR_F_NEEDS_CSUM`, typical of a
//!   local TCP sender with checksum offload) into a frame with a valid
//!   checksum, so the pipeline and every later hop see an ordinary frame,
//!   only possibly larger than the MTU (a TSO/GRO super-frame);
//! - on transmit, [`tx_header`] asks the kernel to segment a TCP frame that
//!   is larger than the device MTU (`gso_type` TCPV4/TCPV6, `gso_size` =
//!   the MSS the MTU allows), and sends every other frame as is.
//!
//! ```text
//!  struct virtio_net_hdr {        // 10 bytes, host byte order (legacy)
//!      u8  flags;                 // NEEDS_CSUM = 1, DATA_VALID = 2
//!      u8  gso_type;              // NONE 0, TCPV4 1, UDP 3, TCPV6 4, ECN 0x80
//!      u16 hdr_len;               // bytes of headers (Ethernet to TCP)
//!      u16 gso_size;              // payload bytes per segment
//!      u16 csum_start;            // where the L4 checksum coverage starts
//!      u16 csum_offset;           // checksum field, from csum_start
//!  }
//! ```

use packet::checksum;

/// Size of `struct virtio_net_hdr`.
pub const VNET_HDR_LEN: usize = 10;
pub const F_NEEDS_CSUM: u8 = 1;
pub const GSO_NONE: u8 = 0;
pub const GSO_TCPV4: u8 = 1;
pub const GSO_TCPV6: u8 = 4;
pub const GSO_ECN: u8 = 0x80;
/// `csum_offset` of SCTP's checksum field.
const SCTP_CSUM_OFFSET: u16 = 8;

/// A decoded `virtio_net_hdr`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

impl VnetHdr {
    pub fn parse(b: &[u8; VNET_HDR_LEN]) -> VnetHdr {
        let u = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u(2),
            gso_size: u(4),
            csum_start: u(6),
            csum_offset: u(8),
        }
    }

    pub fn to_bytes(self) -> [u8; VNET_HDR_LEN] {
        let mut b = [0u8; VNET_HDR_LEN];
        b[0] = self.flags;
        b[1] = self.gso_type;
        b[2..4].copy_from_slice(&self.hdr_len.to_ne_bytes());
        b[4..6].copy_from_slice(&self.gso_size.to_ne_bytes());
        b[6..8].copy_from_slice(&self.csum_start.to_ne_bytes());
        b[8..10].copy_from_slice(&self.csum_offset.to_ne_bytes());
        b
    }
}

/// Completes the partial L4 checksum of a received `frame` as `h` asks
/// (`shift`: bytes inserted before `csum_start` since the kernel wrote the
/// header, i.e. a re-inserted VLAN tag). Returns false if the header
/// points outside the frame (the frame is then dropped as an error).
pub fn complete_rx(frame: &mut [u8], h: &VnetHdr, shift: usize) -> bool {
    if h.flags & F_NEEDS_CSUM == 0 {
        return true;
    }
    let start = usize::from(h.csum_start) + shift;
    let field = start + usize::from(h.csum_offset);
    // SCTP's CRC32c (the only common checksum 8 bytes into its header; the
    // kernel marks it partial the same way when the device claims SCTP CRC
    // offload): computed whole, stored little-endian.
    if h.csum_offset == SCTP_CSUM_OFFSET {
        let Some(crc) = frame.get(start..).and_then(checksum::sctp_crc) else {
            return false;
        };
        frame[field..field + 4].copy_from_slice(&crc.to_le_bytes());
        return true;
    }
    if field + 2 > frame.len() {
        return false;
    }
    finish_partial(&mut frame[start..], usize::from(h.csum_offset));
    true
}

/// Finishes the unfinished L4 checksum of `region` (the L4 header and
/// payload), whose field at `at` holds the folded pseudo-header sum (what
/// a sender with checksum offload leaves): summing the region with it in
/// place gives the final checksum. As the kernel does (CSUM_MANGLED_0),
/// 0 is written as 0xffff (the same in one's complement; 0 means "no
/// checksum" for UDP). `at + 2` must be within `region`.
pub(crate) fn finish_partial(region: &mut [u8], at: usize) {
    let c = checksum::checksum(0, region);
    let c = if c == 0 { 0xffff } else { c };
    region[at..at + 2].copy_from_slice(&c.to_be_bytes());
}

/// The pseudo-header sum of an L4 segment of `len` bytes and protocol
/// `proto` under the IPv4 or IPv6 (`v6`) header at `ip` in `frame` (its
/// addresses; the caller checked that the header is within `frame`).
pub(crate) fn pseudo_header(frame: &[u8], ip: usize, v6: bool, proto: u8, len: usize) -> u64 {
    if v6 {
        checksum::pseudo_v6(
            &frame[ip + 8..ip + 24],
            &frame[ip + 24..ip + 40],
            proto,
            len,
        )
    } else {
        checksum::pseudo_v4(
            &frame[ip + 12..ip + 16],
            &frame[ip + 16..ip + 20],
            proto,
            len,
        )
    }
}

/// Where the L4 header of an unfragmented TCP or UDP frame over IPv4 or
/// IPv6 (IPv6 without extension headers) is, after any 802.1Q/802.1ad
/// tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct L4 {
    /// Length of the Ethernet header and tags: where the IP header starts.
    pub l2: usize,
    /// Length of the IP header.
    pub l3: usize,
    /// 6 (TCP) or 17 (UDP).
    pub proto: u8,
    pub v6: bool,
}

/// `frame`'s [`L4`], or `None` for any other frame (the L4 header itself
/// is not looked at).
pub(crate) fn l4_layout(frame: &[u8]) -> Option<L4> {
    let mut l2 = 12;
    let ethertype = loop {
        let t = u16::from_be_bytes([*frame.get(l2)?, *frame.get(l2 + 1)?]);
        if t == 0x8100 || t == 0x88a8 {
            l2 += 4;
        } else {
            l2 += 2;
            break t;
        }
    };
    let ip = frame.get(l2..)?;
    let (l3, proto, v6) = match ethertype {
        0x0800 => {
            let ihl = usize::from(*ip.first()? & 0x0f) * 4;
            let frag = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]);
            // More fragments set or a fragment offset: no whole L4 header.
            if ip[0] >> 4 != 4 || ihl < 20 || frag & 0x3fff != 0 {
                return None;
            }
            (ihl, *ip.get(9)?, false)
        }
        0x86dd => {
            if *ip.first()? >> 4 != 6 {
                return None;
            }
            (40, *ip.get(6)?, true)
        }
        _ => return None,
    };
    matches!(proto, 6 | 17).then_some(L4 { l2, l3, proto, v6 })
}

/// Where the TCP header of `frame` is: (L2 length, L3 header length,
/// TCP header length, IPv6?), or `None` if `frame` is not an unfragmented
/// TCP over IPv4/IPv6 (IPv6 without extension headers) frame.
pub(crate) fn tcp_layout(frame: &[u8]) -> Option<(usize, usize, usize, bool)> {
    let L4 { l2, l3, proto, v6 } = l4_layout(frame)?;
    if proto != 6 {
        return None;
    }
    let tcp_len = usize::from(*frame.get(l2 + l3 + 12)? >> 4) * 4;
    if tcp_len < 20 || l2 + l3 + tcp_len > frame.len() {
        return None;
    }
    Some((l2, l3, tcp_len, v6))
}

/// The header to send `frame` with on a device of MTU `mtu`: a GSO request
/// for a TCP frame whose L3 part is larger than the MTU, all zero for
/// everything else.
pub fn tx_header(frame: &[u8], mtu: u32) -> VnetHdr {
    let mtu = mtu as usize;
    // Cheap test first: nothing at or under MTU + Ethernet header needs
    // segmentation (tags only make that test conservative).
    if frame.len() <= mtu + 14 {
        return VnetHdr::default();
    }
    let Some((l2, l3, tcp, v6)) = tcp_layout(frame) else {
        return VnetHdr::default();
    };
    if frame.len() - l2 <= mtu || mtu <= l3 + tcp {
        return VnetHdr::default();
    }
    let mss = mtu - l3 - tcp;
    let cwr = frame[l2 + l3 + 13] & 0x80 != 0;
    VnetHdr {
        flags: 0,
        gso_type: if v6 { GSO_TCPV6 } else { GSO_TCPV4 } | if cwr { GSO_ECN } else { 0 },
        hdr_len: (l2 + l3 + tcp) as u16,
        gso_size: mss.min(usize::from(u16::MAX)) as u16,
        csum_start: 0,
        csum_offset: 0,
    }
}

/// Recomputes the TCP checksum of a received super-frame that came without
/// `NEEDS_CSUM` (GRO'd by a NIC: its checksum field is the first
/// segment's), so the frame is valid as it stands. Frames that are not
/// TCP are left alone.
pub fn fix_tcp_checksum(frame: &mut [u8]) {
    let Some((l2, l3, _, v6)) = tcp_layout(frame) else {
        return;
    };
    let ip = l2;
    let tcp = l2 + l3;
    let len = frame.len() - tcp;
    let pseudo = pseudo_header(frame, ip, v6, 6, len);
    frame[tcp + 16..tcp + 18].copy_from_slice(&[0, 0]);
    let c = checksum::checksum(pseudo, &frame[tcp..]);
    frame[tcp + 16..tcp + 18].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ethernet + IPv4 (tot_len filled) + TCP (data offset 5 or 8 words)
    /// + `payload` bytes.
    fn tcp4(payload: usize, tcp_words: u8, vlan: bool) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if vlan {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let tcp_len = usize::from(tcp_words) * 4;
        let tot = (20 + tcp_len + payload) as u16;
        f.extend_from_slice(&[
            0x45,
            0,
            (tot >> 8) as u8,
            tot as u8,
            0,
            1,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0x30, 0x39, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 0]);
        f.extend_from_slice(&[tcp_words << 4, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        f.extend(std::iter::repeat_n(1u8, tcp_len - 20));
        f.extend((0..payload).map(|i| (i * 7) as u8));
        f
    }

    /// The TCP checksum over the whole segment verifies (sums to 0xffff).
    fn tcp_ok(f: &[u8], l2: usize) -> bool {
        let ip = l2;
        let tcp = l2 + usize::from(f[ip] & 0xf) * 4;
        let p = checksum::pseudo_v4(&f[ip + 12..ip + 16], &f[ip + 16..ip + 20], 6, f.len() - tcp);
        checksum::fold(checksum::sum_bytes(p, &f[tcp..], false)) == 0xffff
    }

    #[test]
    fn header_bytes_round_trip() {
        let h = VnetHdr {
            flags: 1,
            gso_type: GSO_TCPV6,
            hdr_len: 74,
            gso_size: 1428,
            csum_start: 54,
            csum_offset: 16,
        };
        assert_eq!(VnetHdr::parse(&h.to_bytes()), h);
    }

    #[test]
    fn needs_csum_is_completed_like_the_kernel_would() {
        for vlan in [false, true] {
            let l2 = if vlan { 18 } else { 14 };
            let mut f = tcp4(3000, 5, vlan);
            let tcp = l2 + 20;
            // What a sender with checksum offload leaves: the folded
            // pseudo-header sum in the field.
            let p =
                checksum::pseudo_v4(&f[l2 + 12..l2 + 16], &f[l2 + 16..l2 + 20], 6, f.len() - tcp);
            f[tcp + 16..tcp + 18].copy_from_slice(&checksum::fold(p).to_be_bytes());
            assert!(!tcp_ok(&f, l2));
            // The kernel counts csum_start without the tag it stripped.
            let h = VnetHdr {
                flags: F_NEEDS_CSUM,
                csum_start: 34,
                csum_offset: 16,
                ..VnetHdr::default()
            };
            assert!(complete_rx(&mut f, &h, if vlan { 4 } else { 0 }));
            assert!(tcp_ok(&f, l2), "vlan {vlan}");
        }
        // Pointing past the end: refused, frame untouched.
        let mut f = tcp4(0, 5, false);
        let before = f.clone();
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: 50,
            csum_offset: 16,
            ..VnetHdr::default()
        };
        assert!(!complete_rx(&mut f, &h, 0));
        assert_eq!(f, before);
        // No flag: nothing to do.
        assert!(complete_rx(&mut f, &VnetHdr::default(), 0));
        assert_eq!(f, before);
    }

    #[test]
    fn partial_sctp_checksum_is_a_crc32c() {
        // Ethernet + IPv4 (proto 132) + SCTP common header + a chunk.
        let mut f = vec![0u8; 14 + 20];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 9] = 132;
        let sctp_at = f.len();
        f.extend_from_slice(&[0x13, 0x88, 0x13, 0x89, 1, 2, 3, 4, 0xaa, 0xbb, 0xcc, 0xdd]);
        f.extend_from_slice(&[0, 0, 0, 8, 9, 9, 9, 9]);
        let h = VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: sctp_at as u16,
            csum_offset: 8,
            ..VnetHdr::default()
        };
        assert!(complete_rx(&mut f, &h, 0));
        let want = checksum::sctp_crc(&f[sctp_at..]).unwrap();
        assert_eq!(f[sctp_at + 8..sctp_at + 12], want.to_le_bytes());
        assert!(!complete_rx(&mut f[..sctp_at + 10], &h, 0));
    }

    #[test]
    fn gro_super_frame_gets_a_valid_checksum() {
        let mut f = tcp4(20000, 8, false);
        f[34 + 16] = 0x12;
        assert!(!tcp_ok(&f, 14));
        fix_tcp_checksum(&mut f);
        assert!(tcp_ok(&f, 14));
    }

    #[test]
    fn tx_asks_for_segmentation_only_for_tcp_over_the_mtu() {
        // 1500-byte MTU, 20-byte IP and 32-byte TCP headers: MSS 1448.
        let big = tcp4(10000, 8, false);
        let h = tx_header(&big, 1500);
        assert_eq!(h.gso_type, GSO_TCPV4);
        assert_eq!(h.gso_size, 1448);
        assert_eq!(h.hdr_len, 14 + 20 + 32);
        assert_eq!(h.flags, 0);
        // Tagged: the tag is not part of the MTU.
        let h = tx_header(&tcp4(10000, 5, true), 1500);
        assert_eq!(
            (h.gso_type, h.gso_size, h.hdr_len),
            (GSO_TCPV4, 1460, 18 + 40)
        );
        // Exactly MTU-sized (L3 = 1500), with or without a tag: as is.
        assert_eq!(tx_header(&tcp4(1460, 5, false), 1500), VnetHdr::default());
        assert_eq!(tx_header(&tcp4(1460, 5, true), 1500), VnetHdr::default());
        // Small MTU: smaller segments.
        assert_eq!(tx_header(&big, 1000).gso_size, 948);
        // Not TCP: as is (the kernel refuses it if it is too big).
        let mut udp = big.clone();
        udp[14 + 9] = 17;
        assert_eq!(tx_header(&udp, 1500), VnetHdr::default());
        // A fragment: as is.
        let mut frag = big.clone();
        frag[14 + 6] = 0x20;
        assert_eq!(tx_header(&frag, 1500), VnetHdr::default());
        // Truncated garbage never panics.
        for n in 0..80 {
            let _ = tx_header(&big[..n], 10);
            let mut g = big[..n].to_vec();
            fix_tcp_checksum(&mut g);
        }
        // CWR set: ECN flag as the kernel's TSO expects.
        let mut cwr = big.clone();
        cwr[14 + 20 + 13] |= 0x80;
        assert_eq!(tx_header(&cwr, 1500).gso_type, GSO_TCPV4 | GSO_ECN);
    }

    #[test]
    fn tx_header_for_ipv6() {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd];
        let payload = 5000usize;
        let plen = (20 + payload) as u16;
        f.extend_from_slice(&[0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8, 6, 64]);
        f.extend(std::iter::repeat_n(0xfe, 32));
        f.extend_from_slice(&[0, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff]);
        f.extend_from_slice(&[0, 0, 0, 0]);
        f.extend(std::iter::repeat_n(9u8, payload));
        let h = tx_header(&f, 1500);
        assert_eq!((h.gso_type, h.gso_size, h.hdr_len), (GSO_TCPV6, 1440, 74));
    }
}
