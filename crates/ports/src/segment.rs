//! Software TCP segmentation, for ports that cannot send a frame larger
//! than their MTU (AF_XDP).
//!
//! A host with segmentation offload (a veth's default) hands the switch
//! TCP super-frames of up to 64 KB; an AF_PACKET port with
//! `PACKET_VNET_HDR` receives them whole and has the kernel cut them again
//! on the way out (`crate::vnet::tx_header`). An AF_XDP port has no such
//! help: a super-frame forwarded to it must be cut here, or it is lost
//! and the TCP connection stalls. [`Segments`] cuts one as the kernel's
//! GSO would:
//!
//! ```text
//!  super-frame  | L2 | IP | TCP | payload ............................ |
//!  segment i    | L2 | IP'| TCP'| payload[i*mss .. (i+1)*mss] |
//!    IP'   IPv4: total length, ID + i, header checksum; IPv6: payload length
//!    TCP'  sequence number + i*mss; CWR on the first segment only, FIN
//!          and PSH on the last only; checksum over the segment
//!  mss = MTU - IP header - TCP header
//! ```
//!
//! Only unfragmented TCP over IPv4 or IPv6 (without extension headers) is
//! cut; any other frame over the MTU stays as it is (the port drops it
//! and counts an error).

use crate::vnet::{pseudo_header, tcp_layout};
use packet::checksum;

/// TCP flag bits in the 14th byte of the header.
const FIN: u8 = 0x01;
const PSH: u8 = 0x08;
const CWR: u8 = 0x80;

/// One super-frame and how it is cut (module comment).
#[derive(Debug, Clone, Copy)]
pub struct Segments<'a> {
    frame: &'a [u8],
    /// Where the IP header starts (after Ethernet and tags).
    l2: usize,
    /// IP header length.
    l3: usize,
    /// TCP header length.
    tcp: usize,
    v6: bool,
    /// Payload bytes per segment.
    mss: usize,
    /// Number of segments.
    n: usize,
}

impl<'a> Segments<'a> {
    /// How `frame` is cut for a device of MTU `mtu`; `None` when it fits
    /// as it is or is not a TCP frame that can be cut.
    pub fn new(frame: &'a [u8], mtu: usize) -> Option<Segments<'a>> {
        let (l2, l3, tcp, v6) = tcp_layout(frame)?;
        // The IP length fields, not the frame, say where the data ends.
        let ip_len = if v6 {
            40 + usize::from(u16::from_be_bytes([frame[l2 + 4], frame[l2 + 5]]))
        } else {
            usize::from(u16::from_be_bytes([frame[l2 + 2], frame[l2 + 3]]))
        };
        // A super-frame's IPv4 total length may be 0 (over 64 KB) or
        // stale; the frame is what the sender's stack built, so trust
        // the frame when the field does not fit it.
        let ip_len = if ip_len < l3 + tcp || l2 + ip_len > frame.len() {
            frame.len() - l2
        } else {
            ip_len
        };
        if ip_len <= mtu || mtu <= l3 + tcp {
            return None;
        }
        let mss = mtu - l3 - tcp;
        let payload = ip_len - l3 - tcp;
        Some(Segments {
            frame: &frame[..l2 + ip_len],
            l2,
            l3,
            tcp,
            v6,
            mss,
            n: payload.div_ceil(mss),
        })
    }

    /// Number of segments.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there is no segment (never, for a `Segments` that `new`
    /// made).
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The length of segment `i`.
    pub fn segment_len(&self, i: usize) -> usize {
        let hdr = self.l2 + self.l3 + self.tcp;
        let payload = self.frame.len() - hdr;
        hdr + self.mss.min(payload.saturating_sub(i * self.mss))
    }

    /// Writes segment `i` into the start of `out`; returns its length, or
    /// `None` if `i` is past the end or `out` is too short.
    pub fn write(&self, i: usize, out: &mut [u8]) -> Option<usize> {
        if i >= self.n {
            return None;
        }
        let (l2, l3, tcp) = (self.l2, self.l3, self.tcp);
        let hdr = l2 + l3 + tcp;
        let len = self.segment_len(i);
        let chunk = len - hdr;
        let off = i * self.mss;
        let out = out.get_mut(..len)?;
        out[..hdr].copy_from_slice(&self.frame[..hdr]);
        out[hdr..].copy_from_slice(&self.frame[hdr + off..hdr + off + chunk]);
        let ip = l2;
        if self.v6 {
            out[ip + 4..ip + 6].copy_from_slice(&((tcp + chunk) as u16).to_be_bytes());
        } else {
            out[ip + 2..ip + 4].copy_from_slice(&((l3 + tcp + chunk) as u16).to_be_bytes());
            let id = u16::from_be_bytes([out[ip + 4], out[ip + 5]]).wrapping_add(i as u16);
            out[ip + 4..ip + 6].copy_from_slice(&id.to_be_bytes());
            out[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
            let c = checksum::checksum(0, &out[ip..ip + l3]);
            out[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
        }
        let t = l2 + l3;
        let seq = u32::from_be_bytes([out[t + 4], out[t + 5], out[t + 6], out[t + 7]]);
        out[t + 4..t + 8].copy_from_slice(&seq.wrapping_add(off as u32).to_be_bytes());
        if i > 0 {
            out[t + 13] &= !CWR;
        }
        if i + 1 < self.n {
            out[t + 13] &= !(FIN | PSH);
        }
        out[t + 16..t + 18].copy_from_slice(&[0, 0]);
        let seg_len = tcp + chunk;
        let pseudo = pseudo_header(out, ip, self.v6, 6, seg_len);
        let c = checksum::checksum(pseudo, &out[t..t + seg_len]);
        out[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ethernet (+ a VLAN tag) + IPv4 or IPv6 + TCP (`opts` option words)
    /// with `flags` + `payload` bytes; lengths filled in, checksums not.
    fn superframe(v6: bool, vlan: bool, opts: usize, flags: u8, payload: usize) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if vlan {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
        }
        let tcp = 20 + 4 * opts;
        if v6 {
            f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
            f.extend_from_slice(&((tcp + payload) as u16).to_be_bytes());
            f.extend_from_slice(&[6, 64]);
            f.extend((0..32).map(|i| i as u8));
        } else {
            f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
            f.extend_from_slice(&((20 + tcp + payload) as u16).to_be_bytes());
            f.extend_from_slice(&[0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        }
        f.extend_from_slice(&[0x30, 0x39, 0x14, 0x51, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 9]);
        f.extend_from_slice(&[((tcp / 4) as u8) << 4, flags, 0xff, 0xff, 0, 0, 0, 0]);
        f.extend(std::iter::repeat_n(1u8, tcp - 20));
        f.extend((0..payload).map(|i| (i * 13 + i / 251) as u8));
        f
    }

    fn sum_ok(initial: u64, data: &[u8]) -> bool {
        checksum::fold(checksum::sum_bytes(initial, data, false)) == 0xffff
    }

    /// Cuts `f` for `mtu` and checks every segment as the kernel's GSO
    /// would have made it; returns the number of segments.
    fn check(f: &[u8], v6: bool, vlan: bool, opts: usize, mtu: usize) -> usize {
        let l2 = 14 + 4 * usize::from(vlan);
        let l3 = if v6 { 40 } else { 20 };
        let tcp = 20 + 4 * opts;
        let hdr = l2 + l3 + tcp;
        let segs = Segments::new(f, mtu).expect("a super-frame");
        let mss = mtu - l3 - tcp;
        assert_eq!(segs.len(), (f.len() - hdr).div_ceil(mss));
        let mut payload = Vec::new();
        let flags = f[l2 + l3 + 13];
        for i in 0..segs.len() {
            let mut out = vec![0u8; segs.segment_len(i)];
            let n = segs.write(i, &mut out).expect("fits");
            assert_eq!(n, out.len());
            assert!(n - l2 <= mtu);
            assert_eq!(out[..l2], f[..l2]);
            let ip = &out[l2..l2 + l3];
            if v6 {
                assert_eq!(usize::from(u16::from_be_bytes([ip[4], ip[5]])), n - l2 - 40);
            } else {
                assert_eq!(usize::from(u16::from_be_bytes([ip[2], ip[3]])), n - l2);
                assert_eq!(u16::from_be_bytes([ip[4], ip[5]]), 0x1234 + i as u16);
                assert!(sum_ok(0, ip), "IPv4 header checksum of segment {i}");
            }
            let t = &out[l2 + l3..];
            let seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
            assert_eq!(seq, 0xffff_fff0u32.wrapping_add((i * mss) as u32));
            let last = i + 1 == segs.len();
            let mut want = flags;
            if i > 0 {
                want &= !CWR;
            }
            if !last {
                want &= !(FIN | PSH);
            }
            assert_eq!(t[13], want, "flags of segment {i}");
            let pseudo = if v6 {
                checksum::pseudo_v6(&out[l2 + 8..l2 + 24], &out[l2 + 24..l2 + 40], 6, t.len())
            } else {
                checksum::pseudo_v4(&out[l2 + 12..l2 + 16], &out[l2 + 16..l2 + 20], 6, t.len())
            };
            assert!(sum_ok(pseudo, t), "TCP checksum of segment {i}");
            assert_eq!(t[20..tcp], f[l2 + l3 + 20..hdr]);
            payload.extend_from_slice(&t[tcp..]);
        }
        assert_eq!(payload, f[hdr..]);
        assert!(segs.write(segs.len(), &mut vec![0; 2000]).is_none());
        segs.len()
    }

    #[test]
    fn super_frames_are_cut_as_gso_would() {
        let all = FIN | PSH | CWR | 0x10;
        for v6 in [false, true] {
            for vlan in [false, true] {
                for opts in [0, 3] {
                    let l3 = if v6 { 40 } else { 20 };
                    let mss = 1500 - l3 - 20 - 4 * opts;
                    for payload in [mss + 1, 3 * mss, 3 * mss + 7, 60_000] {
                        let f = superframe(v6, vlan, opts, all, payload);
                        let n = check(&f, v6, vlan, opts, 1500);
                        assert_eq!(n, payload.div_ceil(mss));
                    }
                }
            }
        }
    }

    #[test]
    fn frames_that_fit_or_are_not_tcp_are_not_cut() {
        let f = superframe(false, false, 0, 0x10, 1460);
        assert!(Segments::new(&f, 1500).is_none());
        assert!(Segments::new(&f, 1499).is_some());
        // UDP, a fragment, an MTU below the headers.
        let mut udp = superframe(false, false, 0, 0x10, 5000);
        udp[14 + 9] = 17;
        assert!(Segments::new(&udp, 1500).is_none());
        let mut frag = superframe(false, false, 0, 0x10, 5000);
        frag[14 + 6] = 0x20;
        assert!(Segments::new(&frag, 1500).is_none());
        assert!(Segments::new(&superframe(false, false, 0, 0x10, 5000), 40).is_none());
        // Too small an output buffer.
        let f = superframe(false, false, 0, 0x10, 5000);
        let segs = Segments::new(&f, 1500).unwrap();
        assert!(segs.write(0, &mut [0u8; 100]).is_none());
    }

    proptest! {
        #[test]
        fn any_size_and_mtu(
            v6 in any::<bool>(),
            vlan in any::<bool>(),
            opts in 0usize..10,
            flags in any::<u8>(),
            payload in 1usize..20_000,
            mtu in 100usize..9000,
        ) {
            let f = superframe(v6, vlan, opts, flags, payload);
            let l3 = if v6 { 40 } else { 20 };
            if l3 + 20 + 4 * opts + payload > mtu && mtu > l3 + 20 + 4 * opts {
                check(&f, v6, vlan, opts, mtu);
            } else {
                prop_assert!(Segments::new(&f, mtu).is_none());
            }
        }

        /// Any bytes: no panic, every segment written is within its length.
        #[test]
        fn arbitrary_bytes(
            mut f in proptest::collection::vec(any::<u8>(), 0..3000),
            v4 in any::<bool>(),
            mtu in 0usize..2000,
        ) {
            if f.len() > 24 && v4 {
                f[12] = 0x08;
                f[13] = 0x00;
                f[14] = 0x45;
                f[14 + 9] = 6;
                f[14 + 6] &= 0x40;
                f[14 + 7] = 0;
            }
            if let Some(segs) = Segments::new(&f, mtu) {
                let mut out = vec![0u8; 4000];
                for i in 0..segs.len().min(50) {
                    let n = segs.write(i, &mut out);
                    prop_assert_eq!(n, Some(segs.segment_len(i)));
                }
            }
        }
    }
}
