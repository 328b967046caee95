//! Field identifiers and the presence bitmap of a [`FlowKey`](crate::FlowKey).
//!
//! [`Field`] lists every OpenFlow 1.3.5 OXM basic field with the same number
//! as its `oxm_field` (so `Field::IpProto as u8 == 10`), followed by a few
//! packet facts that are not OXM fields but that rewrites need (TTLs, the
//! inner VLAN tag, the fragment state). This crate knows nothing of the OXM
//! wire encoding; the numbering only makes the mapping in `ofp`/`pipeline`
//! a cast.

use crate::key::Layer;

/// A field of the flow key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Field {
    InPort = 0,
    InPhyPort = 1,
    Metadata = 2,
    EthDst = 3,
    EthSrc = 4,
    EthType = 5,
    VlanVid = 6,
    VlanPcp = 7,
    IpDscp = 8,
    IpEcn = 9,
    IpProto = 10,
    Ipv4Src = 11,
    Ipv4Dst = 12,
    TcpSrc = 13,
    TcpDst = 14,
    UdpSrc = 15,
    UdpDst = 16,
    SctpSrc = 17,
    SctpDst = 18,
    Icmpv4Type = 19,
    Icmpv4Code = 20,
    ArpOp = 21,
    ArpSpa = 22,
    ArpTpa = 23,
    ArpSha = 24,
    ArpTha = 25,
    Ipv6Src = 26,
    Ipv6Dst = 27,
    Ipv6Flabel = 28,
    Icmpv6Type = 29,
    Icmpv6Code = 30,
    Ipv6NdTarget = 31,
    Ipv6NdSll = 32,
    Ipv6NdTll = 33,
    MplsLabel = 34,
    MplsTc = 35,
    MplsBos = 36,
    PbbIsid = 37,
    TunnelId = 38,
    Ipv6Exthdr = 39,
    // ---- not OXM fields: facts the rewrites and the pipeline use ----
    /// IPv4 TTL or IPv6 hop limit.
    IpTtl = 40,
    /// TTL of the outermost MPLS label stack entry.
    MplsTtl = 41,
    /// VID of the second (inner) VLAN tag, with the 0x1000 present bit.
    InnerVlanVid = 42,
    /// PCP of the second (inner) VLAN tag.
    InnerVlanPcp = 43,
    /// Fragment state ([`frag`] flags).
    IpFrag = 44,
}

impl Field {
    /// Every field, in numeric order.
    pub const ALL: [Field; 45] = [
        Field::InPort,
        Field::InPhyPort,
        Field::Metadata,
        Field::EthDst,
        Field::EthSrc,
        Field::EthType,
        Field::VlanVid,
        Field::VlanPcp,
        Field::IpDscp,
        Field::IpEcn,
        Field::IpProto,
        Field::Ipv4Src,
        Field::Ipv4Dst,
        Field::TcpSrc,
        Field::TcpDst,
        Field::UdpSrc,
        Field::UdpDst,
        Field::SctpSrc,
        Field::SctpDst,
        Field::Icmpv4Type,
        Field::Icmpv4Code,
        Field::ArpOp,
        Field::ArpSpa,
        Field::ArpTpa,
        Field::ArpSha,
        Field::ArpTha,
        Field::Ipv6Src,
        Field::Ipv6Dst,
        Field::Ipv6Flabel,
        Field::Icmpv6Type,
        Field::Icmpv6Code,
        Field::Ipv6NdTarget,
        Field::Ipv6NdSll,
        Field::Ipv6NdTll,
        Field::MplsLabel,
        Field::MplsTc,
        Field::MplsBos,
        Field::PbbIsid,
        Field::TunnelId,
        Field::Ipv6Exthdr,
        Field::IpTtl,
        Field::MplsTtl,
        Field::InnerVlanVid,
        Field::InnerVlanPcp,
        Field::IpFrag,
    ];

    /// The field with number `n`, if any.
    pub fn from_u8(n: u8) -> Option<Field> {
        Field::ALL.get(usize::from(n)).copied()
    }

    /// The OXM `oxm_field` number, for the OXM basic fields only.
    pub fn oxm_field(self) -> Option<u8> {
        let n = self as u8;
        (n <= Field::Ipv6Exthdr as u8).then_some(n)
    }

    /// Width in bytes of the field's value as OXM carries it (big-endian).
    pub fn width(self) -> usize {
        use Field::*;
        match self {
            InPort | InPhyPort | Ipv4Src | Ipv4Dst | ArpSpa | ArpTpa | Ipv6Flabel | MplsLabel => 4,
            Metadata | TunnelId => 8,
            EthDst | EthSrc | ArpSha | ArpTha | Ipv6NdSll | Ipv6NdTll => 6,
            EthType | VlanVid | TcpSrc | TcpDst | UdpSrc | UdpDst | SctpSrc | SctpDst | ArpOp
            | Ipv6Exthdr | InnerVlanVid => 2,
            Ipv6Src | Ipv6Dst | Ipv6NdTarget => 16,
            PbbIsid => 3,
            VlanPcp | IpDscp | IpEcn | IpProto | Icmpv4Type | Icmpv4Code | Icmpv6Type
            | Icmpv6Code | MplsTc | MplsBos | IpTtl | MplsTtl | InnerVlanPcp | IpFrag => 1,
        }
    }

    /// The layer of the parse that fills this field in a
    /// [`FlowKey`](crate::FlowKey) (`Layer::None`: a pipeline field the
    /// parser does not touch).
    pub fn layer(self) -> Layer {
        use Field::*;
        match self {
            EthDst | EthSrc | EthType | VlanVid | VlanPcp | MplsLabel | MplsTc | MplsBos
            | MplsTtl | PbbIsid | InnerVlanVid | InnerVlanPcp => Layer::L2,
            IpDscp | IpEcn | IpProto | Ipv4Src | Ipv4Dst | ArpOp | ArpSpa | ArpTpa | ArpSha
            | ArpTha | Ipv6Src | Ipv6Dst | Ipv6Flabel | Ipv6Exthdr | IpTtl | IpFrag => Layer::L3,
            TcpSrc | TcpDst | UdpSrc | UdpDst | SctpSrc | SctpDst | Icmpv4Type | Icmpv4Code
            | Icmpv6Type | Icmpv6Code | Ipv6NdTarget | Ipv6NdSll | Ipv6NdTll => Layer::L4,
            InPort | InPhyPort | Metadata | TunnelId => Layer::None,
        }
    }

    /// A short snake-case name (`"eth_dst"`, `"ipv6_nd_sll"`, ...), as the
    /// test vectors and diagnostics use.
    pub fn name(self) -> &'static str {
        FIELD_NAMES[self as usize]
    }

    /// The field called `name` (see [`Field::name`]).
    pub fn from_name(name: &str) -> Option<Field> {
        FIELD_NAMES
            .iter()
            .position(|n| *n == name)
            .and_then(|i| Field::from_u8(i as u8))
    }

    /// This field's bit in a [`FieldSet`].
    #[inline]
    pub const fn bit(self) -> u64 {
        1 << (self as u8)
    }
}

const FIELD_NAMES: [&str; 45] = [
    "in_port",
    "in_phy_port",
    "metadata",
    "eth_dst",
    "eth_src",
    "eth_type",
    "vlan_vid",
    "vlan_pcp",
    "ip_dscp",
    "ip_ecn",
    "ip_proto",
    "ipv4_src",
    "ipv4_dst",
    "tcp_src",
    "tcp_dst",
    "udp_src",
    "udp_dst",
    "sctp_src",
    "sctp_dst",
    "icmpv4_type",
    "icmpv4_code",
    "arp_op",
    "arp_spa",
    "arp_tpa",
    "arp_sha",
    "arp_tha",
    "ipv6_src",
    "ipv6_dst",
    "ipv6_flabel",
    "icmpv6_type",
    "icmpv6_code",
    "ipv6_nd_target",
    "ipv6_nd_sll",
    "ipv6_nd_tll",
    "mpls_label",
    "mpls_tc",
    "mpls_bos",
    "pbb_isid",
    "tunnel_id",
    "ipv6_exthdr",
    "ip_ttl",
    "mpls_ttl",
    "inner_vlan_vid",
    "inner_vlan_pcp",
    "ip_frag",
];

/// A set of [`Field`]s as a 64-bit bitmap (bit n = field number n). The flow
/// key uses it to say which fields the packet has: an absent field differs
/// from a field whose value is zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldSet(pub u64);

impl FieldSet {
    /// The empty set.
    pub const EMPTY: FieldSet = FieldSet(0);

    /// Every field (and every bit a later field would take).
    pub const ALL: FieldSet = FieldSet(u64::MAX);

    /// Builds a set from a list of fields.
    pub const fn of(fields: &[Field]) -> FieldSet {
        let mut bits = 0;
        let mut i = 0;
        while i < fields.len() {
            bits |= fields[i].bit();
            i += 1;
        }
        FieldSet(bits)
    }

    #[inline]
    pub fn contains(self, f: Field) -> bool {
        self.0 & f.bit() != 0
    }

    #[inline]
    pub fn contains_all(self, other: FieldSet) -> bool {
        self.0 & other.0 == other.0
    }

    #[inline]
    pub fn insert(&mut self, f: Field) {
        self.0 |= f.bit();
    }

    #[inline]
    pub fn insert_all(&mut self, other: FieldSet) {
        self.0 |= other.0;
    }

    #[inline]
    pub fn remove(&mut self, f: Field) {
        self.0 &= !f.bit();
    }

    #[inline]
    pub fn remove_all(&mut self, other: FieldSet) {
        self.0 &= !other.0;
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the two sets have a field in common.
    #[inline]
    pub fn intersects(self, other: FieldSet) -> bool {
        self.0 & other.0 != 0
    }

    /// The fields in the set, in numeric order.
    pub fn iter(self) -> impl Iterator<Item = Field> {
        Field::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

/// A field value in OXM byte order (big-endian, `len` bytes used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldValue {
    len: u8,
    bytes: [u8; 16],
}

impl FieldValue {
    /// Builds a value from big-endian bytes; at most 16 are kept.
    pub fn new(bytes: &[u8]) -> FieldValue {
        let mut v = FieldValue::default();
        let n = bytes.len().min(16);
        v.bytes[..n].copy_from_slice(&bytes[..n]);
        v.len = n as u8;
        v
    }

    /// The value's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The value as an unsigned integer (the low 128 bits).
    pub fn to_u128(&self) -> u128 {
        self.as_bytes()
            .iter()
            .fold(0u128, |acc, &b| (acc << 8) | u128::from(b))
    }
}

/// IPv6 extension header pseudo-field flags (OpenFlow 1.3.5 §7.2.3.8,
/// `enum ofp_ipv6exthdr_flags`).
pub mod exthdr {
    /// "No next header" encountered.
    pub const NONEXT: u16 = 1 << 0;
    /// Encrypted Security Payload header present.
    pub const ESP: u16 = 1 << 1;
    /// Authentication header present.
    pub const AUTH: u16 = 1 << 2;
    /// One or two destination options headers present.
    pub const DEST: u16 = 1 << 3;
    /// Fragment header present.
    pub const FRAG: u16 = 1 << 4;
    /// Routing header present.
    pub const ROUTER: u16 = 1 << 5;
    /// Hop-by-hop options header present.
    pub const HOP: u16 = 1 << 6;
    /// Unexpected repeats encountered.
    pub const UNREP: u16 = 1 << 7;
    /// Unexpected sequencing encountered.
    pub const UNSEQ: u16 = 1 << 8;
}

/// IP fragment state flags ([`Field::IpFrag`]).
pub mod frag {
    /// The packet is a fragment (IPv4 MF or offset != 0, or an IPv6
    /// fragment header).
    pub const FRAGMENT: u8 = 1 << 0;
    /// A fragment other than the first: it carries no L4 header.
    pub const LATER: u8 = 1 << 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_sets() {
        for (i, f) in Field::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i);
            assert_eq!(Field::from_u8(i as u8), Some(*f));
        }
        assert_eq!(Field::from_u8(45), None);
        assert_eq!(Field::Ipv6Exthdr.oxm_field(), Some(39));
        assert_eq!(Field::IpTtl.oxm_field(), None);
        for f in Field::ALL {
            assert_eq!(Field::from_name(f.name()), Some(f));
        }
        assert_eq!(Field::from_name("nope"), None);
        let mut s = FieldSet::of(&[Field::EthDst, Field::IpProto]);
        assert!(s.contains(Field::EthDst) && !s.contains(Field::EthSrc));
        s.remove(Field::EthDst);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![Field::IpProto]);
        let v = FieldValue::new(&[0x12, 0x34, 0x56]);
        assert_eq!(v.to_u128(), 0x123456);
        assert_eq!(v.as_bytes(), &[0x12, 0x34, 0x56]);
    }
}
