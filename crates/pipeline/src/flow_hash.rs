//! The flow hash SELECT groups choose a bucket by (spec §5.6.1 leaves the
//! selection to the switch): the same connection always takes the same
//! bucket.

use crate::classifier::exact::at;
use crate::classifier::fields::FrameFields;
use packet::{FlowKey, Layer};

/// A hash of the fields that identify a connection (SELECT groups): the
/// same flow always takes the same bucket. The fields are folded a 64-bit
/// word at a time (multiply and rotate), then finished with the splitmix64
/// mixer so every output bit depends on every input bit (SELECT groups take
/// the hash modulo the total weight, which needs good low bits).
///
/// For ARP the sender and target protocol addresses take the IPv4
/// addresses' place. Only the fields the packet can have are folded: the IPv6 addresses
/// (four words) only for an IPv6 packet, where the IPv4 ones are zero;
/// an IPv4 packet's IPv6 fields are always zero and would add nothing but
/// four dependent multiplies.
pub(crate) fn flow_hash(k: &FlowKey) -> u64 {
    let mac = packet::mac_bits;
    let ipv6 = (k.eth_type == packet::ethertype::IPV6).then_some([k.ipv6_src, k.ipv6_dst]);
    // An ARP packet's flow is its sender and target addresses (in the
    // IPv4 addresses' place, which are zero for it).
    let l3 = if k.eth_type == packet::ethertype::ARP {
        [k.arp_spa, k.arp_tpa]
    } else {
        [k.ipv4_src, k.ipv4_dst]
    };
    flow_hash_of(
        [mac(&k.eth_src), mac(&k.eth_dst)],
        k.eth_type,
        k.ip_proto,
        l3,
        ipv6,
        [k.tp_src, k.tp_dst],
    )
}

/// `flow_hash` of a packet with these fields (MACs as
/// `packet::mac_bits` gives them; `ipv6`: the addresses of an IPv6
/// packet, `None` for any other): a key's (`flow_hash`) or a frame's
/// fields' (`frame_flow_hash`).
#[inline(always)]
pub(crate) fn flow_hash_of(
    macs: [u64; 2],
    eth_type: u16,
    ip_proto: u8,
    ipv4: [u32; 2],
    ipv6: Option<[u128; 2]>,
    tp: [u16; 2],
) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let fold = |h: u64, w: u64| (h ^ w).wrapping_mul(M).rotate_left(29);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    h = fold(h, macs[0] << 16 | u64::from(eth_type));
    h = fold(h, macs[1] << 8 | u64::from(ip_proto));
    h = fold(h, u64::from(ipv4[0]) << 32 | u64::from(ipv4[1]));
    // (Written out: a loop over the flattened `Option` cost an IPv4
    // packet about 25 instructions of 128-bit moves for nothing.)
    if let Some([src, dst]) = ipv6 {
        h = fold(h, (src >> 64) as u64);
        h = fold(h, src as u64);
        h = fold(h, (dst >> 64) as u64);
        h = fold(h, dst as u64);
    }
    h = fold(h, u64::from(tp[0]) << 16 | u64::from(tp[1]));
    crate::classifier::splitmix64(h)
}

/// `flow_hash` of the key a frame whose fields are `f` has, parsed to
/// `depth` (at least L3): the key of an IPv4 frame holds its ports only
/// from L4 on (0 before).
#[inline(always)]
pub(crate) fn frame_flow_hash(f: &FrameFields, depth: Layer) -> u64 {
    let c = &f.common;
    let tp = if depth >= Layer::L4 {
        [c[at::TP_SRC] as u16, c[at::TP_DST] as u16]
    } else {
        [0, 0]
    };
    flow_hash_of(
        [c[at::ETH_SRC], c[at::ETH_DST]],
        c[at::ETH_TYPE] as u16,
        c[at::IP_PROTO] as u8,
        [c[at::IPV4_SRC] as u32, c[at::IPV4_DST] as u32],
        None,
        tp,
    )
}

#[cfg(test)]
mod flow_hash_tests {
    use super::*;
    use proptest::prelude::*;

    /// The hash as first written: `words` (every 64-bit word of the
    /// fields, in order) folded one by one, then mixed.
    fn reference(words: &[u64]) -> u64 {
        let h = words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
            (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
        });
        crate::classifier::splitmix64(h)
    }

    proptest! {
        #[test]
        fn flow_hash_of_is_the_word_by_word_fold(
            macs in any::<[u64; 2]>(), eth_type in any::<u16>(), ip_proto in any::<u8>(),
            ipv4 in any::<[u32; 2]>(), ipv6 in proptest::option::of(any::<[u128; 2]>()),
            tp in any::<[u16; 2]>(),
        ) {
            let macs = [macs[0] >> 16, macs[1] >> 16];
            // The words: MACs with eth_type and ip_proto, the IPv4
            // addresses, each IPv6 address (source, then destination)
            // high half first, the ports.
            let mut words = vec![
                macs[0] << 16 | u64::from(eth_type),
                macs[1] << 8 | u64::from(ip_proto),
                u64::from(ipv4[0]) << 32 | u64::from(ipv4[1]),
            ];
            for a in ipv6.into_iter().flatten() {
                words.extend([(a >> 64) as u64, a as u64]);
            }
            words.push(u64::from(tp[0]) << 16 | u64::from(tp[1]));
            prop_assert_eq!(
                flow_hash_of(macs, eth_type, ip_proto, ipv4, ipv6, tp),
                reference(&words)
            );
        }

        /// The hash of a frame's fields (`frame_flow_hash`, the SELECT
        /// groups' on the per-table way) is the hash of its key
        /// (`flow_hash`), parsed to L4 or L3, whatever the frame:
        /// untagged or tagged, TCP or UDP, any addresses and ports.
        #[test]
        fn frame_flow_hash_is_the_keys(
            macs in any::<[[u8; 6]; 2]>(),
            tag in proptest::option::of(0u16..0x1000),
            tcp in any::<bool>(),
            ips in any::<[[u8; 4]; 2]>(),
            ports in any::<[u16; 2]>(),
            in_port in 1u32..100,
        ) {
            let mut f = macs[0].to_vec();
            f.extend_from_slice(&macs[1]);
            if let Some(v) = tag {
                f.extend_from_slice(&[0x81, 0x00]);
                f.extend_from_slice(&v.to_be_bytes());
            }
            f.extend_from_slice(&[0x08, 0x00]);
            let l4_len: u16 = if tcp { 20 } else { 8 };
            f.extend_from_slice(&[0x45, 0]);
            f.extend_from_slice(&(20 + l4_len).to_be_bytes());
            f.extend_from_slice(&[0, 1, 0, 0, 64, if tcp { 6 } else { 17 }, 0, 0]);
            f.extend_from_slice(&ips[0]);
            f.extend_from_slice(&ips[1]);
            f.extend_from_slice(&ports[0].to_be_bytes());
            f.extend_from_slice(&ports[1].to_be_bytes());
            if tcp {
                f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0, 0, 0, 0]);
            } else {
                f.extend_from_slice(&[0, 8, 0, 0]);
            }
            let mut fr = FrameFields::EMPTY;
            prop_assert!(crate::classifier::fields::read_frame(&f, in_port, Layer::L4, &mut fr).is_some());
            for layer in [Layer::L3, Layer::L4] {
                let mut k = FlowKey::new(in_port);
                prop_assert!(packet::parse_to(&f, &mut k, layer).is_ok());
                prop_assert_eq!(frame_flow_hash(&fr, layer), flow_hash(&k));
            }
        }
    }
}
