//! Unfinished TCP/UDP checksums on frames that arrive without a word
//! about them (AF_XDP).
//!
//! A host that sends through a device claiming checksum offload (a veth
//! does, by default) leaves the TCP or UDP checksum to the device: the
//! kernel writes the folded sum of the pseudo-header into the checksum
//! field and marks the buffer CHECKSUM_PARTIAL. Over a veth no device
//! ever finishes it; the receiving end learns of it from the buffer's
//! mark, and an AF_PACKET socket with `PACKET_VNET_HDR` from the
//! `virtio_net_hdr` (`crate::vnet::complete_rx`). An AF_XDP socket gets
//! the bytes alone: forwarded as they are, such frames reach the next
//! host with a wrong checksum and are dropped there, so TCP through the
//! switch would not work with the hosts' default settings.
//!
//! [`complete_unmarked`] recognises such a frame by its checksum field
//! and finishes the checksum:
//!
//! ```text
//!  field == fold(pseudo-header sum)     (one compare: the usual frame
//!                                        stops here)
//!  and the checksum does not verify     (a complete checksum that equals
//!                                        that value by chance stays)
//!  -> field = ~fold(sum of the segment, the field included)
//! ```
//!
//! which is what the device would have written. A frame corrupted on
//! the way keeps its wrong checksum unless its field happens to hold
//! exactly the pseudo-header sum (one chance in 65,535). UDP over IPv4
//! with checksum 0 (none) is left alone, and so are fragments and
//! anything but TCP and UDP over IPv4 and IPv6 (without extension
//! headers), which no sender leaves partial here.

use crate::vnet::{finish_partial, l4_layout, pseudo_header, L4};
use packet::checksum;

/// Offset of the checksum field in the TCP and UDP headers.
const fn check_at(proto: u8) -> usize {
    if proto == 6 {
        16
    } else {
        6
    }
}

/// Finishes the TCP or UDP checksum of `frame` if a sender left it
/// unfinished (module comment); true if it did.
pub fn complete_unmarked(frame: &mut [u8]) -> bool {
    let Some(L4 { l2, l3, proto, v6 }) = l4_layout(frame) else {
        return false;
    };
    let ip = l2;
    let l4 = l2 + l3;
    let at = check_at(proto);
    // The segment's length from the IP header (a short frame may be
    // padded to 60 bytes).
    let len = if v6 {
        usize::from(u16::from_be_bytes([frame[ip + 4], frame[ip + 5]]))
    } else {
        let total = usize::from(u16::from_be_bytes([frame[ip + 2], frame[ip + 3]]));
        total.saturating_sub(l3)
    };
    if len < at + 2 || l4 + len > frame.len() {
        return false;
    }
    let field = u16::from_be_bytes([frame[l4 + at], frame[l4 + at + 1]]);
    if field == 0 && proto == 17 && !v6 {
        return false;
    }
    let pseudo = pseudo_header(frame, ip, v6, proto, len);
    if field != checksum::fold(pseudo) {
        return false;
    }
    let seg = &mut frame[l4..l4 + len];
    // A complete checksum equal to the pseudo-header sum by chance.
    if checksum::fold(checksum::sum_bytes(pseudo, seg, false)) == 0xffff {
        return false;
    }
    finish_partial(seg, at);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ethernet (+ a VLAN tag) + IPv4 or IPv6 + a TCP (20-byte) or UDP
    /// header + `payload` bytes, the L4 checksum valid.
    fn frame(v6: bool, proto: u8, vlan: bool, payload: usize) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if vlan {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
        }
        let hdr = if proto == 6 { 20 } else { 8 };
        let l4_len = hdr + payload;
        if v6 {
            f.extend_from_slice(&[0x86, 0xdd, 0x60, 0, 0, 0]);
            f.extend_from_slice(&(l4_len as u16).to_be_bytes());
            f.extend_from_slice(&[proto, 64]);
            f.extend((0..16).map(|i| 0x20 + i as u8));
            f.extend((0..16).map(|i| 0x40 + i as u8));
        } else {
            let tot = (20 + l4_len) as u16;
            f.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
            f.extend_from_slice(&tot.to_be_bytes());
            f.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        }
        let l4 = f.len();
        if proto == 6 {
            f.extend_from_slice(&[0x30, 0x39, 0x14, 0x51, 0, 0, 0, 1, 0, 0, 0, 0]);
            f.extend_from_slice(&[0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        } else {
            f.extend_from_slice(&[0x30, 0x39, 0x00, 0x35]);
            f.extend_from_slice(&(l4_len as u16).to_be_bytes());
            f.extend_from_slice(&[0, 0]);
        }
        f.extend((0..payload).map(|i| (i * 7 + 3) as u8));
        let p = pseudo(&f, l4, v6, proto);
        let c = checksum::checksum(p, &f[l4..]);
        let at = l4 + check_at(proto);
        f[at..at + 2].copy_from_slice(&c.to_be_bytes());
        f
    }

    fn pseudo(f: &[u8], l4: usize, v6: bool, proto: u8) -> u64 {
        let len = f.len() - l4;
        if v6 {
            checksum::pseudo_v6(&f[l4 - 32..l4 - 16], &f[l4 - 16..l4], proto, len)
        } else {
            checksum::pseudo_v4(&f[l4 - 8..l4 - 4], &f[l4 - 4..l4], proto, len)
        }
    }

    /// Where the L4 header of a `frame` is.
    fn l4_of(v6: bool, vlan: bool) -> usize {
        14 + usize::from(vlan) * 4 + if v6 { 40 } else { 20 }
    }

    fn verifies(f: &[u8], v6: bool, proto: u8, vlan: bool) -> bool {
        let l4 = l4_of(v6, vlan);
        checksum::fold(checksum::sum_bytes(
            pseudo(f, l4, v6, proto),
            &f[l4..],
            false,
        )) == 0xffff
    }

    /// As a sender with checksum offload leaves it: the pseudo-header sum
    /// in the field.
    fn make_partial(f: &mut [u8], v6: bool, proto: u8, vlan: bool) {
        let l4 = l4_of(v6, vlan);
        let p = checksum::fold(pseudo(f, l4, v6, proto));
        let at = l4 + check_at(proto);
        f[at..at + 2].copy_from_slice(&p.to_be_bytes());
    }

    #[test]
    fn partial_checksums_are_finished_as_the_device_would() {
        for v6 in [false, true] {
            for proto in [6u8, 17] {
                for vlan in [false, true] {
                    for payload in [0, 1, 18, 1400] {
                        let good = frame(v6, proto, vlan, payload);
                        assert!(verifies(&good, v6, proto, vlan));
                        let mut f = good.clone();
                        make_partial(&mut f, v6, proto, vlan);
                        assert!(!verifies(&f, v6, proto, vlan));
                        let what = format!("v6 {v6} proto {proto} vlan {vlan} payload {payload}");
                        assert!(complete_unmarked(&mut f), "{what}");
                        assert_eq!(f, good, "{what}");
                        // Complete frames are left alone.
                        assert!(!complete_unmarked(&mut f), "{what}");
                        assert_eq!(f, good, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn other_frames_are_left_alone() {
        // A wrong checksum that is not the pseudo-header sum stays wrong.
        let mut f = frame(false, 6, false, 30);
        f[14 + 20 + 16] ^= 0x5a;
        let before = f.clone();
        assert!(!complete_unmarked(&mut f));
        assert_eq!(f, before);
        // UDP over IPv4 without a checksum.
        let mut f = frame(false, 17, false, 30);
        f[14 + 20 + 6..14 + 20 + 8].copy_from_slice(&[0, 0]);
        let before = f.clone();
        assert!(!complete_unmarked(&mut f));
        assert_eq!(f, before);
        // A fragment, even with the pseudo-header sum in place.
        let mut f = frame(false, 17, false, 30);
        make_partial(&mut f, false, 17, false);
        f[14 + 6] = 0x20;
        let before = f.clone();
        assert!(!complete_unmarked(&mut f));
        assert_eq!(f, before);
        // ICMP, ARP, a total length past the frame.
        let mut f = frame(false, 6, false, 30);
        make_partial(&mut f, false, 6, false);
        f[14 + 9] = 1;
        assert!(!complete_unmarked(&mut f));
        let mut f = frame(false, 6, false, 30);
        make_partial(&mut f, false, 6, false);
        f[14 + 3] += 1;
        let before = f.clone();
        assert!(!complete_unmarked(&mut f));
        assert_eq!(f, before);
        let mut f = frame(false, 6, false, 30);
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(!complete_unmarked(&mut f));
    }

    #[test]
    fn padding_after_the_segment_is_not_summed() {
        let good = frame(false, 17, false, 2);
        let mut padded = good.clone();
        padded.resize(60, 0xee);
        let mut f = good.clone();
        make_partial(&mut f, false, 17, false);
        f.resize(60, 0xee);
        assert!(complete_unmarked(&mut f));
        assert_eq!(f, padded);
        assert_eq!(f[..good.len()], good[..]);
    }

    proptest! {
        /// Any bytes: no panic, and a frame is only ever changed into one
        /// whose checksum verifies, by its checksum field alone.
        #[test]
        fn arbitrary_frames(
            v6 in any::<bool>(),
            tcp in any::<bool>(),
            vlan in any::<bool>(),
            payload in 0usize..64,
            flips in proptest::collection::vec((0usize..200, any::<u8>()), 0..4),
            partial in any::<bool>(),
            cut in 0usize..200,
        ) {
            let proto = if tcp { 6 } else { 17 };
            let mut f = frame(v6, proto, vlan, payload);
            if partial {
                make_partial(&mut f, v6, proto, vlan);
            }
            for (at, x) in flips {
                let n = f.len();
                f[at % n] ^= x;
            }
            f.truncate(cut.max(1));
            let before = f.clone();
            if complete_unmarked(&mut f) {
                let l4 = l4_of(v6, vlan);
                let at = l4 + check_at(proto);
                prop_assert!(verifies(&f, v6, proto, vlan));
                prop_assert_eq!(&f[..at], &before[..at]);
                prop_assert_eq!(&f[at + 2..], &before[at + 2..]);
            } else {
                prop_assert_eq!(f, before);
            }
        }
    }
}
