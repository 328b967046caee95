//! The field registry: one declarative table of every match field.
//!
//! Each row of [`field_table!`]'s invocation below says everything the
//! switch knows about a field: the name `oxflow ctl` and ovs-ofctl print,
//! its OXM identity (OPENFLOW_BASIC class and field number, or the
//! experimenter class 0xFFFF with an experimenter id), its width, whether
//! OXM allows a mask, its prerequisites (OpenFlow 1.3.5 Table 12), the
//! parse layer that extracts it and the [`FlowKey`] member that holds it.
//!
//! From the table the macro generates:
//! - [`Field`] (one variant per `key` row, numbered in row order, so a
//!   basic field's number is its `oxm_field`), `Field::ALL`, and the
//!   per-field facts (`width`, `layer`, `name`);
//! - [`FIELD_DEFS`]: the rows as data (for `ofp`/`ctl` mappings, the
//!   prerequisite check and tests), with each row's key offset and size
//!   computed by the compiler (`offset_of!`/`size_of`), never by hand;
//! - [`FlowKey::get`], the generic accessor reading each field's member;
//! - the size of [`FieldSet`](crate::FieldSet), which has one bit per row.
//!
//! Two kinds of rows:
//! - `key` rows are fields of the packet's [`FlowKey`] (parsed, or set by
//!   the pipeline); each becomes a [`Field`] variant.
//! - `module` rows are experimenter fields whose value a data-path module
//!   supplies at lookup time (BEBA's `state` comes from the state table,
//!   `global_state` from the switch); they have an OXM identity, a ctl name
//!   and a [`FieldSet`](crate::FieldSet) bit ([`FieldId`]); the value
//!   itself lives in a `key` row of its own (see below).
//!
//! Rows after `ipv6_exthdr` without an OXM identity are packet facts that
//! rewrites need (TTLs, the inner VLAN tag, the fragment state), and the
//! key slots of the `module` rows (`mod_state`, `mod_global_state`): the
//! pipeline writes a module field's value there before looking a table up,
//! so a match on `state` is a (field, value, mask) triple like any other.

use crate::key::{FlowKey, Layer};

/// OXM class of the OpenFlow basic fields (`OFPXMC_OPENFLOW_BASIC`).
pub const CLASS_BASIC: u16 = 0x8000;
/// OXM experimenter class (`OFPXMC_EXPERIMENTER`): a 4-byte experimenter
/// id follows the OXM header.
pub const CLASS_EXPERIMENTER: u16 = 0xffff;
/// The BEBA (OpenState) experimenter id.
pub const BEBA_EXPERIMENTER: u32 = 0xBEBA_BEBA;

/// The OXM identity of a field: what its TLV header (and, for the
/// experimenter class, the experimenter id after it) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OxmId {
    /// `oxm_class`.
    pub class: u16,
    /// Experimenter id (class [`CLASS_EXPERIMENTER`]); 0 otherwise.
    pub experimenter: u32,
    /// `oxm_field` (7 bits).
    pub field: u8,
}

impl OxmId {
    /// An OPENFLOW_BASIC field.
    pub const fn basic(field: u8) -> OxmId {
        OxmId {
            class: CLASS_BASIC,
            experimenter: 0,
            field,
        }
    }

    /// An experimenter field.
    pub const fn experimenter(experimenter: u32, field: u8) -> OxmId {
        OxmId {
            class: CLASS_EXPERIMENTER,
            experimenter,
            field,
        }
    }

    /// The 32-bit OXM header for a value of `len` bytes, with or without a
    /// mask (an experimenter header's length counts the experimenter id).
    pub const fn header(self, len: usize, has_mask: bool) -> u32 {
        let payload = if has_mask { 2 * len } else { len };
        let exp = if self.class == CLASS_EXPERIMENTER {
            4
        } else {
            0
        };
        ((self.class as u32) << 16)
            | (((self.field & 0x7f) as u32) << 9)
            | ((has_mask as u32) << 8)
            | ((payload + exp) as u32 & 0xff)
    }
}

/// How ctl and ovs-ofctl write a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Integer printed in decimal (masks in hex).
    Dec,
    /// Integer printed in hex.
    Hex,
    /// A port number or reserved port name.
    Port,
    /// `aa:bb:cc:dd:ee:ff`.
    Mac,
    /// Dotted quad, with a prefix length or mask.
    Ipv4,
    /// IPv6 address, with a prefix length or mask.
    Ipv6,
    /// IPV6_EXTHDR flags: an integer or `+flag-flag...`.
    Exthdr,
    /// TCP flags: an integer (`0x2/0x12`) or `+flag-flag...`.
    TcpFlags,
}

/// A field's prerequisites (OpenFlow 1.3.5 §7.2.3.6, Table 12): what the
/// same match must say about other fields. Each is the field's direct
/// requirement; a requirement of a requirement (TCP_SRC needs IP_PROTO=6,
/// which needs ETH_TYPE IPv4 or IPv6) is on that field's own row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prereq {
    /// IN_PORT must be matched.
    pub in_port: bool,
    /// VLAN_VID must be matched to a value other than OFPVID_NONE.
    pub vlan_present: bool,
    /// ETH_TYPE must be one of these (empty: no requirement).
    pub eth_types: &'static [u16],
    /// IP_PROTO must be this.
    pub ip_proto: Option<u8>,
    /// ICMPV6_TYPE must be one of these (empty: no requirement).
    pub icmpv6_types: &'static [u8],
}

/// Prerequisite rows used by the table.
pub mod prereq {
    use super::Prereq;

    const fn eth(types: &'static [u16]) -> Prereq {
        Prereq {
            eth_types: types,
            ..NONE
        }
    }
    const fn proto(eth_types: &'static [u16], p: u8) -> Prereq {
        Prereq {
            eth_types,
            ip_proto: Some(p),
            ..NONE
        }
    }

    pub const NONE: Prereq = Prereq {
        in_port: false,
        vlan_present: false,
        eth_types: &[],
        ip_proto: None,
        icmpv6_types: &[],
    };
    pub const IN_PORT: Prereq = Prereq {
        in_port: true,
        ..NONE
    };
    pub const VLAN: Prereq = Prereq {
        vlan_present: true,
        ..NONE
    };
    pub const IP: Prereq = eth(&[0x0800, 0x86dd]);
    pub const IPV4: Prereq = eth(&[0x0800]);
    pub const IPV6: Prereq = eth(&[0x86dd]);
    pub const ARP: Prereq = eth(&[0x0806]);
    pub const MPLS: Prereq = eth(&[0x8847, 0x8848]);
    pub const PBB: Prereq = eth(&[0x88e7]);
    pub const TCP: Prereq = proto(&[], 6);
    pub const UDP: Prereq = proto(&[], 17);
    pub const SCTP: Prereq = proto(&[], 132);
    pub const ICMPV4: Prereq = proto(&[0x0800], 1);
    pub const ICMPV6: Prereq = proto(&[0x86dd], 58);
    pub const ND: Prereq = Prereq {
        icmpv6_types: &[135, 136],
        ..NONE
    };
    pub const ND_NS: Prereq = Prereq {
        icmpv6_types: &[135],
        ..NONE
    };
    pub const ND_NA: Prereq = Prereq {
        icmpv6_types: &[136],
        ..NONE
    };
}

impl Prereq {
    /// Whether the field has no prerequisite.
    pub const fn is_none(&self) -> bool {
        !self.in_port
            && !self.vlan_present
            && self.eth_types.is_empty()
            && self.ip_proto.is_none()
            && self.icmpv6_types.is_empty()
    }

    /// Whether no packet can satisfy both `self` and `other` (two fields
    /// sharing key storage must be exclusive this way).
    pub fn excludes(&self, other: &Prereq) -> bool {
        let disjoint_eth = !self.eth_types.is_empty()
            && !other.eth_types.is_empty()
            && !self.eth_types.iter().any(|t| other.eth_types.contains(t));
        let disjoint_proto =
            matches!((self.ip_proto, other.ip_proto), (Some(a), Some(b)) if a != b);
        disjoint_eth || disjoint_proto
    }
}

/// Where a `key` row lives in the [`FlowKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySlot {
    /// The member's name.
    pub member: &'static str,
    /// Byte offset of the member in `FlowKey`.
    pub offset: usize,
    /// Size of the member in bytes (the OXM width may be smaller: PBB_ISID
    /// is 3 bytes held in a `u32`).
    pub size: usize,
}

/// A row's index in [`FIELD_DEFS`]: the bit it takes in a
/// [`FieldSet`](crate::FieldSet). For `key` rows it equals `Field as u16`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldId(pub u16);

/// One row of the registry (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// The row's index in [`FIELD_DEFS`].
    pub id: FieldId,
    /// The [`Field`] of a `key` row.
    pub field: Option<Field>,
    /// The snake-case name (test vectors, diagnostics; `Field::name`).
    pub name: &'static str,
    /// OXM identity; `None` for packet facts no OXM field carries.
    pub oxm: Option<OxmId>,
    /// Width in bytes of the value as OXM carries it (big-endian).
    pub width: usize,
    /// Whether OXM allows a mask.
    pub maskable: bool,
    pub prereq: Prereq,
    /// The parse layer that extracts the field (`Layer::None`: set by the
    /// pipeline or a module, never by the parser).
    pub layer: Layer,
    /// The `FlowKey` member holding a `key` row's value.
    pub key: Option<KeySlot>,
    /// Names `oxflow ctl` accepts; the first is the one it prints. Empty
    /// for packet facts.
    pub ctl: &'static [&'static str],
    /// How ctl writes the value.
    pub syntax: Syntax,
}

impl FieldDef {
    /// The name ctl prints for the field, if it has one.
    pub fn ctl_name(&self) -> Option<&'static str> {
        self.ctl.first().copied()
    }
}

/// Big-endian bytes of a `FlowKey` member, for the generated
/// [`FlowKey::get`].
trait KeyBytes {
    const SIZE: usize;
    fn put_be(&self, out: &mut [u8; 16]);
    /// The value as a right-aligned integer.
    fn bits(&self) -> u128;
}

macro_rules! key_bytes_int {
    ($($t:ty),*) => {$(
        impl KeyBytes for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline]
            fn put_be(&self, out: &mut [u8; 16]) {
                out[..Self::SIZE].copy_from_slice(&self.to_be_bytes());
            }
            #[inline(always)]
            fn bits(&self) -> u128 {
                u128::from(*self)
            }
        }
    )*};
}
key_bytes_int!(u8, u16, u32, u64, u128);

impl KeyBytes for [u8; 6] {
    const SIZE: usize = 6;
    #[inline]
    fn put_be(&self, out: &mut [u8; 16]) {
        out[..6].copy_from_slice(self);
    }
    #[inline(always)]
    fn bits(&self) -> u128 {
        u128::from(crate::key::mac_bits(self))
    }
}

/// Declares the registry; see the module comment. Row syntax:
///
/// ```text
/// key    { Variant "name" oxm(OXM) width W mask(M) prereq(P) layer(L) key(member: type) ctl["a", "b"] Syntax; }
/// module { ConstName "name" oxm(OXM) width W mask(M) prereq(P) ctl["a"] Syntax; }
/// ```
///
/// `OXM` is `basic(N)`, `exp(EXPERIMENTER, N)` or `none`.
macro_rules! field_table {
    (
        key { $( $(#[$doc:meta])* $v:ident $name:literal oxm($($oxm:tt)*) width $w:literal
                 mask($m:literal) prereq($p:ident) layer($l:ident) key($member:ident : $t:ty)
                 ctl[$($ctl:literal),*] $syn:ident; )* }
        module { $( $(#[$mdoc:meta])* $mc:ident $mname:literal oxm($($moxm:tt)*) width $mw:literal
                 mask($mm:literal) prereq($mp:ident) ctl[$($mctl:literal),*] $msyn:ident; )* }
    ) => {
        /// A field of the flow key, one per `key` row of the registry
        /// ([`FIELD_DEFS`]), numbered in row order: a basic OXM field's
        /// number is its `oxm_field` (`Field::IpProto as u8 == 10`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Field {
            $( $(#[$doc])* $v, )*
        }

        /// Number of `key` rows (fields of the flow key).
        pub const KEY_FIELDS: usize = [$(Field::$v),*].len();

        impl Field {
            /// Every field, in numeric order.
            pub const ALL: [Field; KEY_FIELDS] = [$(Field::$v),*];
        }

        /// Number of rows, hence of bits a [`FieldSet`](crate::FieldSet)
        /// needs (counted from the names: the key layout, which
        /// [`FIELD_DEFS`] reads, depends on it).
        pub const ROWS: usize = KEY_FIELDS + [$(stringify!($mc)),*].len();

        /// [`FieldId`]s of the `module` rows.
        pub mod module_field {
            use super::{FieldId, KEY_FIELDS};
            field_table!(@ids KEY_FIELDS; $($mc)*);
        }

        /// Every row of the registry: the `key` rows (row `i` is
        /// `Field::ALL[i]`), then the `module` rows.
        pub const FIELD_DEFS: &[FieldDef] = &[
            $( FieldDef {
                id: FieldId(Field::$v as u16),
                field: Some(Field::$v),
                name: $name,
                oxm: field_table!(@oxm $($oxm)*),
                width: $w,
                maskable: $m,
                prereq: prereq::$p,
                layer: Layer::$l,
                key: Some(KeySlot {
                    member: stringify!($member),
                    offset: core::mem::offset_of!(FlowKey, $member),
                    size: <$t as KeyBytes>::SIZE,
                }),
                ctl: &[$($ctl),*],
                syntax: Syntax::$syn,
            }, )*
            $( FieldDef {
                id: module_field::$mc,
                field: None,
                name: $mname,
                oxm: field_table!(@oxm $($moxm)*),
                width: $mw,
                maskable: $mm,
                prereq: prereq::$mp,
                layer: Layer::None,
                key: None,
                ctl: &[$($mctl),*],
                syntax: Syntax::$msyn,
            }, )*
        ];

        impl FlowKey {
            /// The value of field `f` in OXM byte order, or `None` if the
            /// packet does not have it. This is the generic accessor for
            /// the field registry; hot code reads the members directly.
            pub fn get(&self, f: Field) -> Option<FieldValue> {
                if !self.has(f) {
                    return None;
                }
                let mut b = [0u8; 16];
                let size = match f {
                    $( Field::$v => {
                        let m: &$t = &self.$member;
                        m.put_be(&mut b);
                        <$t as KeyBytes>::SIZE
                    } )*
                };
                let w = f.width();
                b.get(size.saturating_sub(w)..size).map(FieldValue::new)
            }

            /// Field `f`'s member as a right-aligned integer (the view of
            /// `OxmField::bits`: a MAC is 48 bits, first byte highest),
            /// whether or not the packet has the field: the caller checks
            /// the presence bit.
            #[inline]
            pub fn bits(&self, f: Field) -> u128 {
                match f {
                    $( Field::$v => KeyBytes::bits(&self.$member), )*
                }
            }
        }
    };
    (@oxm basic($n:expr)) => { Some(OxmId::basic($n)) };
    (@oxm exp($e:expr, $n:expr)) => { Some(OxmId::experimenter($e, $n)) };
    (@oxm none) => { None };
    (@ids $at:expr; ) => {};
    (@ids $at:expr; $first:ident $($rest:ident)*) => {
        pub const $first: FieldId = FieldId($at as u16);
        field_table!(@ids $at + 1; $($rest)*);
    };
}

use crate::field::FieldValue;

field_table! {
    key {
        InPort "in_port" oxm(basic(0)) width 4 mask(false) prereq(NONE) layer(None)
            key(in_port: u32) ctl["in_port"] Port;
        InPhyPort "in_phy_port" oxm(basic(1)) width 4 mask(false) prereq(IN_PORT) layer(None)
            key(in_phy_port: u32) ctl["in_phy_port"] Port;
        Metadata "metadata" oxm(basic(2)) width 8 mask(true) prereq(NONE) layer(None)
            key(metadata: u64) ctl["metadata"] Hex;
        EthDst "eth_dst" oxm(basic(3)) width 6 mask(true) prereq(NONE) layer(L2)
            key(eth_dst: [u8; 6]) ctl["dl_dst", "eth_dst"] Mac;
        EthSrc "eth_src" oxm(basic(4)) width 6 mask(true) prereq(NONE) layer(L2)
            key(eth_src: [u8; 6]) ctl["dl_src", "eth_src"] Mac;
        EthType "eth_type" oxm(basic(5)) width 2 mask(false) prereq(NONE) layer(L2)
            key(eth_type: u16) ctl["dl_type", "eth_type"] Hex;
        VlanVid "vlan_vid" oxm(basic(6)) width 2 mask(true) prereq(NONE) layer(L2)
            key(vlan_vid: u16) ctl["vlan_vid"] Hex;
        VlanPcp "vlan_pcp" oxm(basic(7)) width 1 mask(false) prereq(VLAN) layer(L2)
            key(vlan_pcp: u8) ctl["dl_vlan_pcp", "vlan_pcp"] Dec;
        IpDscp "ip_dscp" oxm(basic(8)) width 1 mask(false) prereq(IP) layer(L3)
            key(ip_dscp: u8) ctl["ip_dscp"] Dec;
        IpEcn "ip_ecn" oxm(basic(9)) width 1 mask(false) prereq(IP) layer(L3)
            key(ip_ecn: u8) ctl["nw_ecn", "ip_ecn"] Dec;
        IpProto "ip_proto" oxm(basic(10)) width 1 mask(false) prereq(IP) layer(L3)
            key(ip_proto: u8) ctl["ip_proto"] Dec;
        Ipv4Src "ipv4_src" oxm(basic(11)) width 4 mask(true) prereq(IPV4) layer(L3)
            key(ipv4_src: u32) ctl["ip_src", "ipv4_src"] Ipv4;
        Ipv4Dst "ipv4_dst" oxm(basic(12)) width 4 mask(true) prereq(IPV4) layer(L3)
            key(ipv4_dst: u32) ctl["ip_dst", "ipv4_dst"] Ipv4;
        TcpSrc "tcp_src" oxm(basic(13)) width 2 mask(false) prereq(TCP) layer(L4)
            key(tp_src: u16) ctl["tcp_src"] Dec;
        TcpDst "tcp_dst" oxm(basic(14)) width 2 mask(false) prereq(TCP) layer(L4)
            key(tp_dst: u16) ctl["tcp_dst"] Dec;
        UdpSrc "udp_src" oxm(basic(15)) width 2 mask(false) prereq(UDP) layer(L4)
            key(tp_src: u16) ctl["udp_src"] Dec;
        UdpDst "udp_dst" oxm(basic(16)) width 2 mask(false) prereq(UDP) layer(L4)
            key(tp_dst: u16) ctl["udp_dst"] Dec;
        SctpSrc "sctp_src" oxm(basic(17)) width 2 mask(false) prereq(SCTP) layer(L4)
            key(tp_src: u16) ctl["sctp_src"] Dec;
        SctpDst "sctp_dst" oxm(basic(18)) width 2 mask(false) prereq(SCTP) layer(L4)
            key(tp_dst: u16) ctl["sctp_dst"] Dec;
        Icmpv4Type "icmpv4_type" oxm(basic(19)) width 1 mask(false) prereq(ICMPV4) layer(L4)
            key(icmp_type: u8) ctl["icmpv4_type"] Dec;
        Icmpv4Code "icmpv4_code" oxm(basic(20)) width 1 mask(false) prereq(ICMPV4) layer(L4)
            key(icmp_code: u8) ctl["icmpv4_code"] Dec;
        ArpOp "arp_op" oxm(basic(21)) width 2 mask(false) prereq(ARP) layer(L3)
            key(arp_op: u16) ctl["arp_op"] Dec;
        ArpSpa "arp_spa" oxm(basic(22)) width 4 mask(true) prereq(ARP) layer(L3)
            key(arp_spa: u32) ctl["arp_spa"] Ipv4;
        ArpTpa "arp_tpa" oxm(basic(23)) width 4 mask(true) prereq(ARP) layer(L3)
            key(arp_tpa: u32) ctl["arp_tpa"] Ipv4;
        ArpSha "arp_sha" oxm(basic(24)) width 6 mask(true) prereq(ARP) layer(L3)
            key(arp_sha: [u8; 6]) ctl["arp_sha"] Mac;
        ArpTha "arp_tha" oxm(basic(25)) width 6 mask(true) prereq(ARP) layer(L3)
            key(arp_tha: [u8; 6]) ctl["arp_tha"] Mac;
        Ipv6Src "ipv6_src" oxm(basic(26)) width 16 mask(true) prereq(IPV6) layer(L3)
            key(ipv6_src: u128) ctl["ipv6_src"] Ipv6;
        Ipv6Dst "ipv6_dst" oxm(basic(27)) width 16 mask(true) prereq(IPV6) layer(L3)
            key(ipv6_dst: u128) ctl["ipv6_dst"] Ipv6;
        Ipv6Flabel "ipv6_flabel" oxm(basic(28)) width 4 mask(true) prereq(IPV6) layer(L3)
            key(ipv6_flabel: u32) ctl["ipv6_label", "ipv6_flabel"] Hex;
        Icmpv6Type "icmpv6_type" oxm(basic(29)) width 1 mask(false) prereq(ICMPV6) layer(L4)
            key(icmp_type: u8) ctl["icmpv6_type"] Dec;
        Icmpv6Code "icmpv6_code" oxm(basic(30)) width 1 mask(false) prereq(ICMPV6) layer(L4)
            key(icmp_code: u8) ctl["icmpv6_code"] Dec;
        Ipv6NdTarget "ipv6_nd_target" oxm(basic(31)) width 16 mask(false) prereq(ND) layer(L4)
            key(nd_target: u128) ctl["nd_target", "ipv6_nd_target"] Ipv6;
        Ipv6NdSll "ipv6_nd_sll" oxm(basic(32)) width 6 mask(false) prereq(ND_NS) layer(L4)
            key(nd_sll: [u8; 6]) ctl["nd_sll", "ipv6_nd_sll"] Mac;
        Ipv6NdTll "ipv6_nd_tll" oxm(basic(33)) width 6 mask(false) prereq(ND_NA) layer(L4)
            key(nd_tll: [u8; 6]) ctl["nd_tll", "ipv6_nd_tll"] Mac;
        MplsLabel "mpls_label" oxm(basic(34)) width 4 mask(false) prereq(MPLS) layer(L2)
            key(mpls_label: u32) ctl["mpls_label"] Dec;
        MplsTc "mpls_tc" oxm(basic(35)) width 1 mask(false) prereq(MPLS) layer(L2)
            key(mpls_tc: u8) ctl["mpls_tc"] Dec;
        MplsBos "mpls_bos" oxm(basic(36)) width 1 mask(false) prereq(MPLS) layer(L2)
            key(mpls_bos: u8) ctl["mpls_bos"] Dec;
        PbbIsid "pbb_isid" oxm(basic(37)) width 3 mask(true) prereq(PBB) layer(L2)
            key(pbb_isid: u32) ctl["pbb_isid"] Dec;
        TunnelId "tunnel_id" oxm(basic(38)) width 8 mask(true) prereq(NONE) layer(None)
            key(tunnel_id: u64) ctl["tun_id", "tunnel_id"] Hex;
        Ipv6Exthdr "ipv6_exthdr" oxm(basic(39)) width 2 mask(true) prereq(IPV6) layer(L3)
            key(ipv6_exthdr: u16) ctl["ipv6_exthdr"] Exthdr;
        /// TCP flags, the 9 bits after the data offset (BEBA's OpenFlow
        /// 1.3 field 40; OpenFlow 1.5 numbers it 42).
        TcpFlags "tcp_flags" oxm(basic(40)) width 2 mask(true) prereq(TCP) layer(L4)
            key(tcp_flags: u16) ctl["tcp_flags"] TcpFlags;
        /// IPv4 TTL or IPv6 hop limit.
        IpTtl "ip_ttl" oxm(none) width 1 mask(false) prereq(NONE) layer(L3)
            key(ip_ttl: u8) ctl[] Dec;
        /// TTL of the outermost MPLS label stack entry.
        MplsTtl "mpls_ttl" oxm(none) width 1 mask(false) prereq(NONE) layer(L2)
            key(mpls_ttl: u8) ctl[] Dec;
        /// VID of the second (inner) VLAN tag, with the 0x1000 present bit.
        InnerVlanVid "inner_vlan_vid" oxm(none) width 2 mask(false) prereq(NONE) layer(L2)
            key(inner_vlan_vid: u16) ctl[] Hex;
        /// PCP of the second (inner) VLAN tag.
        InnerVlanPcp "inner_vlan_pcp" oxm(none) width 1 mask(false) prereq(NONE) layer(L2)
            key(inner_vlan_pcp: u8) ctl[] Dec;
        /// Fragment state ([`frag`](crate::frag) flags).
        IpFrag "ip_frag" oxm(none) width 1 mask(false) prereq(NONE) layer(L3)
            key(ip_frag: u8) ctl[] Hex;
        /// The `state` module row's value for the table being looked up,
        /// written by the pipeline before the lookup (absent: the packet
        /// has no state there), so the classifiers index it as any field.
        ModState "mod_state" oxm(none) width 4 mask(true) prereq(NONE) layer(None)
            key(mod_state: u32) ctl[] Hex;
        /// The `global_state` module row's value, likewise.
        ModGlobalState "mod_global_state" oxm(none) width 4 mask(true) prereq(NONE) layer(None)
            key(mod_global_state: u32) ctl[] Hex;
    }
    module {
        /// BEBA: the switch's global state.
        GLOBAL_STATE "global_state" oxm(exp(BEBA_EXPERIMENTER, 0)) width 4 mask(true)
            prereq(NONE) ctl["global_state"] Hex;
        /// BEBA: the packet's flow state in the stateful table.
        STATE "state" oxm(exp(BEBA_EXPERIMENTER, 1)) width 4 mask(true)
            prereq(NONE) ctl["state"] Hex;
    }
}

/// The row of `f`.
#[inline]
pub fn def(f: Field) -> &'static FieldDef {
    &FIELD_DEFS[f as usize]
}

/// The row with OXM identity `oxm`, if any.
pub fn by_oxm(oxm: OxmId) -> Option<&'static FieldDef> {
    FIELD_DEFS.iter().find(|d| d.oxm == Some(oxm))
}

/// The row ctl calls `name` (any of its accepted names).
pub fn by_ctl_name(name: &str) -> Option<&'static FieldDef> {
    FIELD_DEFS.iter().find(|d| d.ctl.contains(&name))
}

/// The row called `name` ([`FieldDef::name`]).
pub fn by_name(name: &str) -> Option<&'static FieldDef> {
    FIELD_DEFS.iter().find(|d| d.name == name)
}

impl Field {
    /// The registry row of the field.
    #[inline]
    pub fn def(self) -> &'static FieldDef {
        def(self)
    }

    /// The field whose OXM identity is `oxm` (a `key` row's).
    pub fn from_oxm(oxm: OxmId) -> Option<Field> {
        by_oxm(oxm).and_then(|d| d.field)
    }

    /// The field's OXM identity, if OXM carries it.
    pub fn oxm(self) -> Option<OxmId> {
        def(self).oxm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_numbered_in_order() {
        assert_eq!(ROWS, FIELD_DEFS.len());
        for (i, d) in FIELD_DEFS.iter().enumerate() {
            assert_eq!(usize::from(d.id.0), i, "{}", d.name);
            if let Some(f) = d.field {
                assert_eq!(f as usize, i);
                assert_eq!(f.def(), d);
            }
        }
        assert!(FIELD_DEFS[..KEY_FIELDS].iter().all(|d| d.key.is_some()));
        assert!(FIELD_DEFS[KEY_FIELDS..].iter().all(|d| d.key.is_none()));
    }

    #[test]
    fn basic_field_number_is_its_oxm_field() {
        for d in FIELD_DEFS {
            if let (Some(f), Some(o)) = (d.field, d.oxm) {
                if o.class == CLASS_BASIC {
                    assert_eq!(f as u8, o.field, "{}", d.name);
                }
            }
        }
    }

    /// Key slots: inside the key, wide enough for the OXM value, and two
    /// rows share bytes only when they name the same member and no packet
    /// can have both (their prerequisites exclude each other).
    #[test]
    fn key_slots_do_not_overlap() {
        let rows: Vec<(&FieldDef, KeySlot)> = FIELD_DEFS
            .iter()
            .filter_map(|d| Some((d, d.key?)))
            .collect();
        for (d, k) in &rows {
            assert!(k.offset + k.size <= core::mem::size_of::<FlowKey>());
            assert!(d.width <= k.size, "{}", d.name);
        }
        for (i, (a, ka)) in rows.iter().enumerate() {
            for (b, kb) in &rows[i + 1..] {
                let overlap = ka.offset < kb.offset + kb.size && kb.offset < ka.offset + ka.size;
                if !overlap {
                    continue;
                }
                assert_eq!(ka, kb, "{} and {} overlap partially", a.name, b.name);
                assert!(
                    a.prereq.excludes(&b.prereq),
                    "{} and {} share {} but can both be present",
                    a.name,
                    b.name,
                    ka.member
                );
            }
        }
    }

    #[test]
    fn experimenter_rows() {
        let state = by_ctl_name("state").expect("BEBA state has a row");
        assert_eq!(state.oxm, Some(OxmId::experimenter(BEBA_EXPERIMENTER, 1)));
        assert_eq!(state.id, module_field::STATE);
        assert_eq!(
            by_oxm(OxmId::experimenter(BEBA_EXPERIMENTER, 0)).map(|d| d.id),
            Some(module_field::GLOBAL_STATE)
        );
        assert_eq!(state.field, None);
        // The header a BEBA switch sends for an exact `state` match.
        assert_eq!(state.oxm.map(|o| o.header(4, false)), Some(0xffff_0208));
        assert_eq!(
            OxmId::basic(Field::Ipv4Src as u8).header(4, true),
            0x8000_1708
        );
    }

    /// `get` and `bits` read the same member.
    #[test]
    fn get_and_bits_agree() {
        let mut k = FlowKey::new(3);
        k.present = crate::FieldSet::ALL;
        k.eth_dst = [1, 2, 3, 4, 5, 6];
        k.pbb_isid = 0x00ab_cdef;
        k.ipv6_src = 0x2001_0db8 << 96 | 1;
        k.tp_dst = 80;
        for f in Field::ALL {
            let v = k.get(f).expect("present");
            assert_eq!(v.as_bytes().len(), f.width(), "{}", f.name());
            assert_eq!(v.to_u128(), k.bits(f), "{}", f.name());
        }
        assert_eq!(k.bits(Field::EthDst), 0x0102_0304_0506);
        assert_eq!(k.get(Field::PbbIsid).map(|v| v.to_u128()), Some(0xab_cdef));
    }

    #[test]
    fn names_and_oxm_lookups_agree() {
        for f in Field::ALL {
            assert_eq!(by_name(f.name()).and_then(|d| d.field), Some(f));
            if let Some(o) = f.oxm() {
                assert_eq!(Field::from_oxm(o), Some(f));
            }
            for n in f.def().ctl {
                assert_eq!(by_ctl_name(n).and_then(|d| d.field), Some(f), "{n}");
            }
        }
    }
}
