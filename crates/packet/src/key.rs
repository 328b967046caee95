//! The flow key: every OXM-matchable field of a packet, plus where each
//! layer starts so rewrites need not parse again.

use crate::field::{Field, FieldSet};

/// OFPVID_PRESENT: set in [`FlowKey::vlan_vid`] when the packet has a tag.
pub const VID_PRESENT: u16 = 0x1000;

/// Byte offsets of the layers of the parsed packet, from the start of the
/// frame. Offset 0 means "absent" for every field except the Ethernet
/// header, which is always at 0 (no layer but L2 can start at 0).
///
/// ```text
///  0     12        eth_type   l3 (also mpls/pbb)  l4         payload   l3_end
///  | DA SA | tags... | type |  IP/ARP header    | L4 header | data... | eth padding
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offsets {
    /// Number of VLAN tags (802.1Q / 802.1ad) between the MAC addresses and
    /// `eth_type`; the outermost starts at 12.
    pub vlan_tags: u8,
    /// Offset of the ethertype that names the layer after the tags.
    pub eth_type: u16,
    /// Outermost MPLS label stack entry.
    pub mpls: u16,
    /// PBB I-TAG (the 4 bytes after ethertype 0x88e7).
    pub pbb: u16,
    /// IPv4/IPv6/ARP header.
    pub l3: u16,
    /// End of the IP datagram (from its length field; excludes Ethernet
    /// padding). 0 if no IP header.
    pub l3_end: u16,
    /// TCP/UDP/SCTP/ICMP header.
    pub l4: u16,
    /// First byte after the L4 header.
    pub payload: u16,
    /// Data of the IPv6 ND source link-layer address option.
    pub nd_sll: u16,
    /// Data of the IPv6 ND target link-layer address option.
    pub nd_tll: u16,
}

/// How far a packet has been parsed into its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum Layer {
    /// Nothing parsed yet.
    #[default]
    None,
    /// Ethernet, VLAN tags, MPLS, PBB.
    L2,
    /// IPv4/IPv6 (with extension headers)/ARP.
    L3,
    /// TCP/UDP/SCTP/ICMP/ND.
    L4,
}

/// Every OXM-matchable field of a packet, in host byte order.
///
/// Fields come in three groups:
/// - pipeline fields (`in_port`, `in_phy_port`, `metadata`, `tunnel_id`)
///   that the pipeline sets; parsing keeps them;
/// - parsed fields, reset to zero at each parse and valid when their bit is
///   in `present` (an absent field is zero, but zero does not mean absent);
/// - `offsets` of the layers and `depth`, how far the packet was parsed.
///
/// Storage shared between OXM fields of different protocols: `tp_src` /
/// `tp_dst` hold TCP, UDP or SCTP ports (the present bit says which), and
/// `icmp_type` / `icmp_code` hold ICMPv4 or ICMPv6 values.
///
/// How the parser stores fields matters to code that reads them right
/// after it (a load spanning several stores still in flight waits for
/// them): each MAC is stored as 4 + 2 bytes (read it with [`mac_bits`]),
/// `ipv4_src` + `ipv4_dst` as one 8-byte word, `tp_src` + `tp_dst` as one
/// 4-byte word, `present` as one 8-byte word per 64 registry rows (one
/// today), other fields one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowKey {
    /// Which fields the packet has.
    pub present: FieldSet,
    /// How far the packet was parsed.
    pub depth: Layer,

    pub in_port: u32,
    pub in_phy_port: u32,
    pub metadata: u64,
    pub tunnel_id: u64,

    pub eth_dst: [u8; 6],
    pub eth_src: [u8; 6],
    /// Ethertype after the VLAN tags.
    pub eth_type: u16,
    /// Outermost VLAN tag: VID | [`VID_PRESENT`], or 0 (OFPVID_NONE) when
    /// the packet has no tag.
    pub vlan_vid: u16,
    pub vlan_pcp: u8,
    /// Second VLAN tag (QinQ), same convention as `vlan_vid`.
    pub inner_vlan_vid: u16,
    pub inner_vlan_pcp: u8,

    pub mpls_label: u32,
    pub mpls_tc: u8,
    pub mpls_bos: u8,
    pub mpls_ttl: u8,
    pub pbb_isid: u32,

    pub ip_dscp: u8,
    pub ip_ecn: u8,
    /// Upper-layer protocol (for IPv6: after the extension headers).
    pub ip_proto: u8,
    /// IPv4 TTL or IPv6 hop limit.
    pub ip_ttl: u8,
    /// [`frag`](crate::frag) flags.
    pub ip_frag: u8,
    pub ipv4_src: u32,
    pub ipv4_dst: u32,
    pub ipv6_src: u128,
    pub ipv6_dst: u128,
    pub ipv6_flabel: u32,
    /// [`exthdr`](crate::exthdr) flags.
    pub ipv6_exthdr: u16,

    pub arp_op: u16,
    pub arp_spa: u32,
    pub arp_tpa: u32,
    pub arp_sha: [u8; 6],
    pub arp_tha: [u8; 6],

    pub tp_src: u16,
    pub tp_dst: u16,
    /// TCP flags (9 bits).
    pub tcp_flags: u16,
    pub icmp_type: u8,
    pub icmp_code: u8,
    pub nd_target: u128,
    pub nd_sll: [u8; 6],
    pub nd_tll: [u8; 6],

    /// The module fields' values for the table being looked up
    /// ([`Field::ModState`], [`Field::ModGlobalState`]; the pipeline
    /// writes them).
    pub mod_state: u32,
    pub mod_global_state: u32,

    pub offsets: Offsets,
}

/// The fields the pipeline owns; parsing leaves them alone.
pub const PIPELINE_FIELDS: FieldSet = FieldSet::of(&[
    Field::InPort,
    Field::InPhyPort,
    Field::Metadata,
    Field::TunnelId,
]);

/// A MAC address of a key as a number (the address's 48 bits, first
/// byte highest), for hashing and packing.
///
/// The parser stores a MAC field as four bytes then two; the value is read
/// back the same way. One load spanning both stores cannot take its value
/// from them while they are still in flight (store-to-load forwarding
/// fails and the load waits for them to reach the cache: measured ~6 ns
/// per packet in an L2 table's lookup).
#[inline(always)]
pub fn mac_bits(m: &[u8; 6]) -> u64 {
    let [a, b, c, d, e, f] = *m;
    u64::from(u32::from_be_bytes([a, b, c, d])) << 16 | u64::from(u16::from_be_bytes([e, f]))
}

impl FlowKey {
    /// An empty key for a packet received on `in_port` (also the physical
    /// port), metadata 0.
    #[inline]
    pub fn new(in_port: u32) -> FlowKey {
        let mut k = FlowKey {
            in_port,
            in_phy_port: in_port,
            ..FlowKey::default()
        };
        k.present.insert_all(FieldSet::of(&[
            Field::InPort,
            Field::InPhyPort,
            Field::Metadata,
        ]));
        k
    }

    /// Sets the tunnel id (a logical port's metadata) and marks it present.
    pub fn set_tunnel_id(&mut self, id: u64) {
        self.tunnel_id = id;
        self.present.insert(Field::TunnelId);
    }

    /// Clears every parsed field, keeping the pipeline fields.
    #[inline]
    pub fn reset_packet_fields(&mut self) {
        *self = FlowKey {
            present: self.present.intersection(PIPELINE_FIELDS),
            in_port: self.in_port,
            in_phy_port: self.in_phy_port,
            metadata: self.metadata,
            tunnel_id: self.tunnel_id,
            ..FlowKey::default()
        };
    }

    /// Whether the packet has field `f`.
    #[inline]
    pub fn has(&self, f: Field) -> bool {
        self.present.contains(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_keeps_pipeline_fields() {
        let mut k = FlowKey::new(7);
        k.metadata = 99;
        k.set_tunnel_id(5);
        k.eth_type = 0x800;
        k.present.insert(Field::EthType);
        k.reset_packet_fields();
        assert_eq!(
            (k.in_port, k.metadata, k.tunnel_id, k.eth_type),
            (7, 99, 5, 0)
        );
        assert!(k.has(Field::TunnelId) && k.has(Field::InPort) && !k.has(Field::EthType));
        assert_eq!(k.get(Field::InPort).unwrap().as_bytes(), &[0, 0, 0, 7]);
        assert_eq!(k.get(Field::EthType), None);
    }
}
