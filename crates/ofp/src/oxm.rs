//! OXM fields and `ofp_match` (spec §7.2.3).
//!
//! An OXM field is a TLV with a 4-byte header:
//!
//! ```text
//!  31            16 15        9  8  7          0
//! +----------------+-----------+---+------------+
//! |   oxm_class    | oxm_field | M | oxm_length |   then oxm_length payload bytes
//! +----------------+-----------+---+------------+
//! ```
//!
//! `M` (hasmask) says the payload is a value followed by a mask of the same
//! width, so `oxm_length` is twice the value width. The 40 fields of class
//! `OPENFLOW_BASIC` are typed variants of [`OxmField`]; experimenter OXMs and
//! other classes (e.g. Nicira NXM) are kept as raw payload so that they
//! round-trip unchanged and the pipeline can refuse them itself.
//!
//! An `ofp_match` is `type (=OFPMT_OXM), length, OXM fields..., padding to 8`,
//! where `length` counts the 4-byte head and the fields but not the padding.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::error::{BadMatchCode, DecodeError};
use crate::wire::{padding_to_8, Reader, Writer};

/// OXM classes (`enum ofp_oxm_class`).
pub mod class {
    /// Backward compatibility with NXM (Nicira extensible match).
    pub const NXM_0: u16 = 0x0000;
    /// Backward compatibility with NXM.
    pub const NXM_1: u16 = 0x0001;
    /// The basic class: the 40 fields of [`super::field`].
    pub const OPENFLOW_BASIC: u16 = 0x8000;
    /// Experimenter class: a 4-byte experimenter id follows the OXM header.
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// Match types (`enum ofp_match_type`).
pub mod match_type {
    /// The deprecated fixed OpenFlow 1.1 match; refused with BAD_MATCH/BAD_TYPE.
    pub const STANDARD: u16 = 0;
    /// The OXM TLV match, the only one OpenFlow 1.3 uses.
    pub const OXM: u16 = 1;
}

/// VLAN_VID special values (`enum ofp_vlan_id`).
pub mod vid {
    /// Bit set in VLAN_VID when a VLAN tag is present.
    pub const PRESENT: u16 = 0x1000;
    /// VLAN_VID value matching packets without a VLAN tag.
    pub const NONE: u16 = 0x0000;
}

/// IPV6_EXTHDR pseudo-field flags (`enum ofp_ipv6exthdr_flags`).
pub mod ipv6_exthdr {
    pub const NONEXT: u16 = 1 << 0;
    pub const ESP: u16 = 1 << 1;
    pub const AUTH: u16 = 1 << 2;
    pub const DEST: u16 = 1 << 3;
    pub const FRAG: u16 = 1 << 4;
    pub const ROUTER: u16 = 1 << 5;
    pub const HOP: u16 = 1 << 6;
    pub const UNREP: u16 = 1 << 7;
    pub const UNSEQ: u16 = 1 << 8;
}

/// How an OXM value is read, written and viewed as bits.
///
/// Each basic field names one codec. `bits` widens the value to a `u128`
/// (every OXM value is at most 16 bytes) so that value range checks and the
/// "value bit set where the mask is 0" check are one comparison for all types.
trait Codec {
    type V: Copy;
    /// Width of the value on the wire (the mask has the same width).
    const LEN: usize;
    fn get(r: &mut Reader<'_>) -> Result<Self::V, DecodeError>;
    fn put(v: Self::V, w: &mut Vec<u8>);
    fn bits(v: Self::V) -> u128;
    /// The value whose `bits` are the low `LEN * 8` bits of `b`.
    fn from_bits(b: u128) -> Self::V;
}

struct U8;
struct U16;
/// A 3-byte integer (PBB_ISID).
struct U24;
struct U32;
struct U64;
struct Mac;
struct V4;
struct V6;

impl Codec for U8 {
    type V = u8;
    const LEN: usize = 1;
    fn get(r: &mut Reader<'_>) -> Result<u8, DecodeError> {
        r.u8("oxm: value")
    }
    fn put(v: u8, w: &mut Vec<u8>) {
        w.put_u8(v)
    }
    fn bits(v: u8) -> u128 {
        v.into()
    }
    fn from_bits(b: u128) -> u8 {
        b as u8
    }
}

impl Codec for U16 {
    type V = u16;
    const LEN: usize = 2;
    fn get(r: &mut Reader<'_>) -> Result<u16, DecodeError> {
        r.u16("oxm: value")
    }
    fn put(v: u16, w: &mut Vec<u8>) {
        w.put_u16(v)
    }
    fn bits(v: u16) -> u128 {
        v.into()
    }
    fn from_bits(b: u128) -> u16 {
        b as u16
    }
}

impl Codec for U24 {
    type V = u32;
    const LEN: usize = 3;
    fn get(r: &mut Reader<'_>) -> Result<u32, DecodeError> {
        let [a, b, c] = r.array::<3>("oxm: value")?;
        Ok(u32::from_be_bytes([0, a, b, c]))
    }
    /// Values above 24 bits are cut (decode never produces them).
    fn put(v: u32, w: &mut Vec<u8>) {
        let [_, a, b, c] = v.to_be_bytes();
        w.put_bytes(&[a, b, c]);
    }
    fn bits(v: u32) -> u128 {
        v.into()
    }
    fn from_bits(b: u128) -> u32 {
        (b as u32) & 0x00ff_ffff
    }
}

impl Codec for U32 {
    type V = u32;
    const LEN: usize = 4;
    fn get(r: &mut Reader<'_>) -> Result<u32, DecodeError> {
        r.u32("oxm: value")
    }
    fn put(v: u32, w: &mut Vec<u8>) {
        w.put_u32(v)
    }
    fn bits(v: u32) -> u128 {
        v.into()
    }
    fn from_bits(b: u128) -> u32 {
        b as u32
    }
}

impl Codec for U64 {
    type V = u64;
    const LEN: usize = 8;
    fn get(r: &mut Reader<'_>) -> Result<u64, DecodeError> {
        r.u64("oxm: value")
    }
    fn put(v: u64, w: &mut Vec<u8>) {
        w.put_u64(v)
    }
    fn bits(v: u64) -> u128 {
        v.into()
    }
    fn from_bits(b: u128) -> u64 {
        b as u64
    }
}

impl Codec for Mac {
    type V = [u8; 6];
    const LEN: usize = 6;
    fn get(r: &mut Reader<'_>) -> Result<[u8; 6], DecodeError> {
        r.array("oxm: value")
    }
    fn put(v: [u8; 6], w: &mut Vec<u8>) {
        w.put_bytes(&v)
    }
    fn bits(v: [u8; 6]) -> u128 {
        let [a, b, c, d, e, f] = v;
        u64::from_be_bytes([0, 0, a, b, c, d, e, f]).into()
    }
    fn from_bits(b: u128) -> [u8; 6] {
        let [_, _, a, b, c, d, e, f] = (b as u64).to_be_bytes();
        [a, b, c, d, e, f]
    }
}

impl Codec for V4 {
    type V = Ipv4Addr;
    const LEN: usize = 4;
    fn get(r: &mut Reader<'_>) -> Result<Ipv4Addr, DecodeError> {
        Ok(Ipv4Addr::from(r.array::<4>("oxm: value")?))
    }
    fn put(v: Ipv4Addr, w: &mut Vec<u8>) {
        w.put_bytes(&v.octets())
    }
    fn bits(v: Ipv4Addr) -> u128 {
        u32::from(v).into()
    }
    fn from_bits(b: u128) -> Ipv4Addr {
        Ipv4Addr::from(b as u32)
    }
}

impl Codec for V6 {
    type V = Ipv6Addr;
    const LEN: usize = 16;
    fn get(r: &mut Reader<'_>) -> Result<Ipv6Addr, DecodeError> {
        Ok(Ipv6Addr::from(r.array::<16>("oxm: value")?))
    }
    fn put(v: Ipv6Addr, w: &mut Vec<u8>) {
        w.put_bytes(&v.octets())
    }
    fn bits(v: Ipv6Addr) -> u128 {
        u128::from(v)
    }
    fn from_bits(b: u128) -> Ipv6Addr {
        Ipv6Addr::from(b)
    }
}

/// "No limit beyond the field's width" for the value-range column below.
const FULL: u128 = u128::MAX;

fn bad_match(c: BadMatchCode, what: &'static str) -> DecodeError {
    DecodeError::bad_match(c, what)
}

/// Static facts about one OPENFLOW_BASIC field (see [`FIELD_INFO`] and [`field::info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldInfo {
    /// `OFPXMT_OFB_*` number.
    pub id: u8,
    /// Spec name without the `OFPXMT_OFB_` prefix, e.g. `"ETH_TYPE"`.
    pub name: &'static str,
    /// Width of the value (the mask, if any, has the same width).
    pub len: usize,
    /// Whether the spec allows a mask.
    pub maskable: bool,
    /// Largest valid value (e.g. 0x1fff for VLAN_VID); larger is BAD_VALUE.
    pub max: u128,
}

/// Declares the OPENFLOW_BASIC fields once and generates from that list: the
/// [`OxmField`] enum, the field-id constants, the per-field facts table, the
/// payload codec, and (in tests) the proptest strategies.
///
/// Each line reads `Variant(value type) = FIELD_CONST (id), codec, max value;`.
/// Fields under `exact` have no mask; fields under `masked` carry
/// `Option<mask>` as their second member.
macro_rules! basic_fields {
    (
        exact { $( $(#[$ed:meta])* $ev:ident($et:ty) = $eid:ident ($enu:expr), $ec:ident, $emax:expr; )* }
        masked { $( $(#[$md:meta])* $mv:ident($mt:ty) = $mid:ident ($mnum:expr), $mc:ident, $mmax:expr; )* }
    ) => {
        /// OPENFLOW_BASIC field numbers (`OFPXMT_OFB_*`).
        pub mod field {
            $( pub const $eid: u8 = $enu; )*
            $( pub const $mid: u8 = $mnum; )*
            /// Number of basic fields (ids 0..COUNT): OpenFlow 1.3.5's 40
            /// and BEBA's TCP_FLAGS (40).
            pub const COUNT: u8 = 41;

            /// Facts about basic field `id`, or `None` if 1.3.5 defines no such field.
            pub fn info(id: u8) -> Option<super::FieldInfo> {
                super::FIELD_INFO.iter().find(|f| f.id == id).copied()
            }
        }

        /// Every basic field, in declaration order (exact fields first).
        pub const FIELD_INFO: &[FieldInfo] = &[
            $( FieldInfo {
                id: field::$eid, name: stringify!($eid), len: $ec::LEN, maskable: false,
                max: $emax,
            }, )*
            $( FieldInfo {
                id: field::$mid, name: stringify!($mid), len: $mc::LEN, maskable: true,
                max: $mmax,
            }, )*
        ];

        /// One OXM TLV.
        ///
        /// Basic fields are typed; a maskable field carries `Option<mask>`
        /// (`None` = exact match). The decoder only produces values within the
        /// field's range and without value bits outside the mask; encoding a
        /// hand-built field that breaks those rules writes it as given.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum OxmField {
            $( $(#[$ed])* $ev($et), )*
            $( $(#[$md])* $mv($mt, Option<$mt>), )*
            /// Experimenter OXM (class 0xFFFF): `payload` is what follows the
            /// 4-byte experimenter id (value and mask, if any).
            Experimenter {
                field: u8,
                has_mask: bool,
                experimenter: u32,
                payload: Vec<u8>,
            },
            /// A field of another class (NXM_0, NXM_1, ...) kept verbatim.
            Other {
                class: u16,
                field: u8,
                has_mask: bool,
                payload: Vec<u8>,
            },
        }

        impl OxmField {
            /// The `oxm_field` number (7 bits).
            pub fn field_id(&self) -> u8 {
                match self {
                    $( OxmField::$ev(..) => field::$eid, )*
                    $( OxmField::$mv(..) => field::$mid, )*
                    OxmField::Experimenter { field, .. } | OxmField::Other { field, .. } => {
                        *field & 0x7f
                    }
                }
            }

            /// Whether the TLV carries a mask (the `oxm_hasmask` bit).
            pub fn has_mask(&self) -> bool {
                match self {
                    $( OxmField::$ev(..) => false, )*
                    $( OxmField::$mv(_, m) => m.is_some(), )*
                    OxmField::Experimenter { has_mask, .. } | OxmField::Other { has_mask, .. } => {
                        *has_mask
                    }
                }
            }

            /// Value (then mask) bytes of a basic field.
            fn put_basic_payload(&self, w: &mut Vec<u8>) {
                match self {
                    $( OxmField::$ev(v) => $ec::put(*v, w), )*
                    $( OxmField::$mv(v, m) => {
                        $mc::put(*v, w);
                        if let Some(m) = m {
                            $mc::put(*m, w);
                        }
                    } )*
                    OxmField::Experimenter { .. } | OxmField::Other { .. } => {}
                }
            }

            /// Value and mask of a basic field as right-aligned integers (an
            /// Ethernet address is a 48-bit number, an IPv6 address 128 bits),
            /// the generic view a classifier works with. `None` for
            /// experimenter and other-class fields.
            pub fn bits(&self) -> Option<(u128, Option<u128>)> {
                match self {
                    $( OxmField::$ev(v) => Some(($ec::bits(*v), None)), )*
                    $( OxmField::$mv(v, m) => Some(($mc::bits(*v), m.map($mc::bits))), )*
                    OxmField::Experimenter { .. } | OxmField::Other { .. } => None,
                }
            }

            /// Build basic field `id` from right-aligned value and mask bits
            /// (the inverse of [`OxmField::bits`]). `None` unless the result
            /// is a field the decoder would accept: known id, mask only on a
            /// maskable field, value and mask within the field's width, value
            /// within its range and without bits outside the mask.
            pub fn from_bits(id: u8, value: u128, mask: Option<u128>) -> Option<Self> {
                let fits = |b: u128, len: usize| len >= 16 || b >> (8 * len) == 0;
                match id {
                    $( field::$eid => {
                        if mask.is_some() || !fits(value, $ec::LEN) || value > $emax {
                            return None;
                        }
                        Some(OxmField::$ev($ec::from_bits(value)))
                    } )*
                    $( field::$mid => {
                        if !fits(value, $mc::LEN) || value > $mmax {
                            return None;
                        }
                        if let Some(m) = mask {
                            if !fits(m, $mc::LEN) || value & !m != 0 {
                                return None;
                            }
                        }
                        Some(OxmField::$mv($mc::from_bits(value), mask.map($mc::from_bits)))
                    } )*
                    _ => None,
                }
            }

            /// Decode the payload `r` (exactly `oxm_length` bytes) of basic field `id`.
            fn decode_basic(id: u8, has_mask: bool, r: &mut Reader<'_>) -> Result<Self, DecodeError> {
                match id {
                    $( field::$eid => {
                        if has_mask {
                            return Err(bad_match(BadMatchCode::BadMask, concat!("oxm ", stringify!($eid), ": not maskable")));
                        }
                        if r.remaining() != $ec::LEN {
                            return Err(bad_match(BadMatchCode::BadLen, concat!("oxm ", stringify!($eid), ": length")));
                        }
                        let v = $ec::get(r)?;
                        if $ec::bits(v) > $emax {
                            return Err(bad_match(BadMatchCode::BadValue, concat!("oxm ", stringify!($eid), ": value")));
                        }
                        Ok(OxmField::$ev(v))
                    } )*
                    $( field::$mid => {
                        let want = if has_mask { 2 * $mc::LEN } else { $mc::LEN };
                        if r.remaining() != want {
                            return Err(bad_match(BadMatchCode::BadLen, concat!("oxm ", stringify!($mid), ": length")));
                        }
                        let v = $mc::get(r)?;
                        if $mc::bits(v) > $mmax {
                            return Err(bad_match(BadMatchCode::BadValue, concat!("oxm ", stringify!($mid), ": value")));
                        }
                        let m = if has_mask {
                            let m = $mc::get(r)?;
                            if $mc::bits(v) & !$mc::bits(m) != 0 {
                                return Err(bad_match(BadMatchCode::BadWildcards, concat!("oxm ", stringify!($mid), ": value bits outside mask")));
                            }
                            Some(m)
                        } else {
                            None
                        };
                        Ok(OxmField::$mv(v, m))
                    } )*
                    _ => Err(bad_match(BadMatchCode::BadField, "oxm: unknown basic field")),
                }
            }
        }

        /// proptest strategies, one per basic field.
        #[cfg(test)]
        fn basic_field_strategies() -> Vec<proptest::strategy::BoxedStrategy<OxmField>> {
            use proptest::prelude::*;
            vec![
                $( any::<u128>()
                    .prop_map(|b| OxmField::$ev($ec::from_bits(b & $emax)))
                    .boxed(), )*
                $( (any::<u128>(), proptest::option::of(any::<u128>()))
                    .prop_map(|(b, m)| match m {
                        None => OxmField::$mv($mc::from_bits(b & $mmax), None),
                        Some(m) => {
                            let mask = $mc::from_bits(m);
                            OxmField::$mv($mc::from_bits(b & $mmax & $mc::bits(mask)), Some(mask))
                        }
                    })
                    .boxed(), )*
            ]
        }
    };
}

basic_fields! {
    exact {
        /// Switch input port.
        InPort(u32) = IN_PORT (0), U32, FULL;
        /// Switch physical input port.
        InPhyPort(u32) = IN_PHY_PORT (1), U32, FULL;
        /// Ethernet type of the innermost tag-less frame.
        EthType(u16) = ETH_TYPE (5), U16, FULL;
        /// VLAN priority (3 bits).
        VlanPcp(u8) = VLAN_PCP (7), U8, 7;
        /// IP DSCP (6 bits of the ToS field).
        IpDscp(u8) = IP_DSCP (8), U8, 63;
        /// IP ECN (2 bits of the ToS field).
        IpEcn(u8) = IP_ECN (9), U8, 3;
        /// IP protocol / IPv6 next header.
        IpProto(u8) = IP_PROTO (10), U8, FULL;
        TcpSrc(u16) = TCP_SRC (13), U16, FULL;
        TcpDst(u16) = TCP_DST (14), U16, FULL;
        UdpSrc(u16) = UDP_SRC (15), U16, FULL;
        UdpDst(u16) = UDP_DST (16), U16, FULL;
        SctpSrc(u16) = SCTP_SRC (17), U16, FULL;
        SctpDst(u16) = SCTP_DST (18), U16, FULL;
        Icmpv4Type(u8) = ICMPV4_TYPE (19), U8, FULL;
        Icmpv4Code(u8) = ICMPV4_CODE (20), U8, FULL;
        /// ARP opcode.
        ArpOp(u16) = ARP_OP (21), U16, FULL;
        Icmpv6Type(u8) = ICMPV6_TYPE (29), U8, FULL;
        Icmpv6Code(u8) = ICMPV6_CODE (30), U8, FULL;
        /// Target address of an IPv6 neighbor discovery message.
        Ipv6NdTarget(Ipv6Addr) = IPV6_ND_TARGET (31), V6, FULL;
        /// Source link-layer address option of a neighbor solicitation.
        Ipv6NdSll([u8; 6]) = IPV6_ND_SLL (32), Mac, FULL;
        /// Target link-layer address option of a neighbor advertisement.
        Ipv6NdTll([u8; 6]) = IPV6_ND_TLL (33), Mac, FULL;
        /// Label of the outermost MPLS shim (20 bits).
        MplsLabel(u32) = MPLS_LABEL (34), U32, 0xf_ffff;
        /// Traffic class of the outermost MPLS shim (3 bits).
        MplsTc(u8) = MPLS_TC (35), U8, 7;
        /// Bottom-of-stack bit of the outermost MPLS shim.
        MplsBos(u8) = MPLS_BOS (36), U8, 1;
    }
    masked {
        /// Table metadata passed between tables.
        Metadata(u64) = METADATA (2), U64, FULL;
        EthDst([u8; 6]) = ETH_DST (3), Mac, FULL;
        EthSrc([u8; 6]) = ETH_SRC (4), Mac, FULL;
        /// VLAN id (12 bits) plus the [`vid::PRESENT`] bit.
        VlanVid(u16) = VLAN_VID (6), U16, 0x1fff;
        Ipv4Src(Ipv4Addr) = IPV4_SRC (11), V4, FULL;
        Ipv4Dst(Ipv4Addr) = IPV4_DST (12), V4, FULL;
        /// ARP source IPv4 address.
        ArpSpa(Ipv4Addr) = ARP_SPA (22), V4, FULL;
        /// ARP target IPv4 address.
        ArpTpa(Ipv4Addr) = ARP_TPA (23), V4, FULL;
        /// ARP source hardware address.
        ArpSha([u8; 6]) = ARP_SHA (24), Mac, FULL;
        /// ARP target hardware address.
        ArpTha([u8; 6]) = ARP_THA (25), Mac, FULL;
        Ipv6Src(Ipv6Addr) = IPV6_SRC (26), V6, FULL;
        Ipv6Dst(Ipv6Addr) = IPV6_DST (27), V6, FULL;
        /// IPv6 flow label (20 bits).
        Ipv6Flabel(u32) = IPV6_FLABEL (28), U32, 0xf_ffff;
        /// PBB I-SID (24 bits, 3 bytes on the wire).
        PbbIsid(u32) = PBB_ISID (37), U24, 0xff_ffff;
        /// Logical port metadata (tunnel key).
        TunnelId(u64) = TUNNEL_ID (38), U64, FULL;
        /// IPv6 extension header pseudo-field (9 flag bits of [`ipv6_exthdr`]).
        Ipv6Exthdr(u16) = IPV6_EXTHDR (39), U16, 0x1ff;
        /// TCP flags (12 bits), BEBA's OpenFlow 1.3 extension: field 40
        /// here, 42 in OpenFlow 1.5.
        TcpFlags(u16) = TCP_FLAGS (40), U16, 0xfff;
    }
}

/// Length of an OXM header.
pub const OXM_HEADER_LEN: usize = 4;

/// Pack an OXM header word.
pub fn oxm_header(class: u16, field: u8, has_mask: bool, length: u8) -> u32 {
    (u32::from(class) << 16)
        | (u32::from(field & 0x7f) << 9)
        | (u32::from(has_mask) << 8)
        | u32::from(length)
}

impl OxmField {
    /// The `oxm_class`.
    pub fn class(&self) -> u16 {
        match self {
            OxmField::Experimenter { .. } => class::EXPERIMENTER,
            OxmField::Other { class, .. } => *class,
            _ => class::OPENFLOW_BASIC,
        }
    }

    /// The `oxm_length`: payload bytes after the header (for experimenter
    /// OXMs this includes the 4-byte experimenter id). Raw payloads longer
    /// than the 255 bytes the header can describe are cut on encode.
    pub fn payload_len(&self) -> usize {
        match self {
            OxmField::Experimenter { payload, .. } => (4 + payload.len()).min(255),
            OxmField::Other { payload, .. } => payload.len().min(255),
            basic => {
                let len = field::info(basic.field_id()).map_or(0, |f| f.len);
                if basic.has_mask() {
                    2 * len
                } else {
                    len
                }
            }
        }
    }

    /// Bytes of the whole TLV (header + payload).
    pub fn encoded_len(&self) -> usize {
        OXM_HEADER_LEN + self.payload_len()
    }

    /// The 32-bit OXM header (class, field, hasmask, length).
    pub fn header(&self) -> u32 {
        // payload_len() is at most 255 by construction.
        oxm_header(
            self.class(),
            self.field_id(),
            self.has_mask(),
            self.payload_len() as u8,
        )
    }

    /// Whether this is an OPENFLOW_BASIC field.
    pub fn is_basic(&self) -> bool {
        self.class() == class::OPENFLOW_BASIC
    }

    /// Decode one OXM TLV. Errors are BAD_MATCH codes whatever `r`'s own
    /// length error is (a set-field action re-maps them to BAD_ACTION codes).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if r.remaining() < OXM_HEADER_LEN {
            return Err(bad_match(BadMatchCode::BadLen, "oxm: header"));
        }
        let header = r.u32("oxm: header")?;
        let class = (header >> 16) as u16;
        let field = ((header >> 9) & 0x7f) as u8;
        let has_mask = header & 0x100 != 0;
        let length = oxm_length(header);
        if r.remaining() < length {
            return Err(bad_match(BadMatchCode::BadLen, "oxm: payload beyond match"));
        }
        let mut p = r.sub(length, "oxm: payload")?;
        match class {
            class::OPENFLOW_BASIC => Self::decode_basic(field, has_mask, &mut p),
            class::EXPERIMENTER => {
                if length < 4 {
                    return Err(bad_match(BadMatchCode::BadLen, "oxm experimenter: length"));
                }
                let experimenter = p.u32("oxm: experimenter")?;
                Ok(OxmField::Experimenter {
                    field,
                    has_mask,
                    experimenter,
                    payload: p.rest().to_vec(),
                })
            }
            _ => Ok(OxmField::Other {
                class,
                field,
                has_mask,
                payload: p.rest().to_vec(),
            }),
        }
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.header());
        match self {
            OxmField::Experimenter {
                experimenter,
                payload,
                ..
            } => {
                w.put_u32(*experimenter);
                w.put_bytes(&payload[..payload.len().min(251)]);
            }
            OxmField::Other { payload, .. } => w.put_bytes(&payload[..payload.len().min(255)]),
            basic => basic.put_basic_payload(w),
        }
    }

    /// Key under which a duplicate field is detected: the header without the
    /// hasmask bit and length, plus the experimenter id for experimenter OXMs.
    fn dup_key(&self) -> (u16, u8, u32) {
        let exp = match self {
            OxmField::Experimenter { experimenter, .. } => *experimenter,
            _ => 0,
        };
        (self.class(), self.field_id(), exp)
    }
}

/// Length of the `ofp_match` head (type + length).
pub const MATCH_HEADER_LEN: usize = 4;

/// `ofp_match` of type OFPMT_OXM: an ordered list of OXM fields.
///
/// The decoder guarantees no field appears twice; prerequisites are checked
/// separately by [`Match::check_prerequisites`] (a packet-in match need not
/// satisfy them, a flow-mod match must).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Match {
    pub fields: Vec<OxmField>,
}

/// Most fields `Match::decode` makes room for ahead (a valid match has
/// at most one of each of the 41 basic fields, and rarely experimenter
/// ones).
const MATCH_FIELDS_AHEAD: usize = 64;

/// The payload length an OXM header announces (its low 8 bits:
/// class 16, field 7, hasmask 1, length 8).
fn oxm_length(header: u32) -> usize {
    (header & 0xff) as usize
}

/// How many OXM TLVs the headers in `r` announce, each header's length
/// skipped to the next (at most one per 4 bytes; a header cut short ends
/// the count, and the decode says what is wrong).
fn count_tlvs(mut r: Reader<'_>) -> usize {
    let mut n = 0;
    while let Ok(header) = r.u32("") {
        n += 1;
        if r.bytes(oxm_length(header), "").is_err() {
            break;
        }
    }
    n
}

impl Match {
    pub fn new(fields: Vec<OxmField>) -> Self {
        Match { fields }
    }

    /// The `length` field: head plus fields, without the trailing padding.
    pub fn length(&self) -> usize {
        MATCH_HEADER_LEN + self.fields.iter().map(OxmField::encoded_len).sum::<usize>()
    }

    /// Bytes on the wire including the padding to 8.
    pub fn encoded_len(&self) -> usize {
        let l = self.length();
        l + padding_to_8(l)
    }

    /// The basic field with number `id`, if present.
    pub fn get(&self, id: u8) -> Option<&OxmField> {
        self.fields
            .iter()
            .find(|f| f.is_basic() && f.field_id() == id)
    }

    /// Decode an `ofp_match` including its trailing padding to 8 bytes.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let len_err = |what| bad_match(BadMatchCode::BadLen, what);
        if r.remaining() < MATCH_HEADER_LEN {
            return Err(len_err("match: header"));
        }
        let ty = r.u16("match: type")?;
        let length = usize::from(r.u16("match: length")?);
        if ty != match_type::OXM {
            return Err(bad_match(BadMatchCode::BadType, "match: type not OXM"));
        }
        if length < MATCH_HEADER_LEN {
            return Err(len_err("match: length < 4"));
        }
        let body = length - MATCH_HEADER_LEN;
        if r.remaining() < body + padding_to_8(length) {
            return Err(len_err("match: length beyond data"));
        }
        let mut fr = r.sub(body, "match: fields")?;
        r.pad(padding_to_8(length))?;

        // Sized to the fields the TLV headers announce: a flow entry keeps
        // the match as decoded (`pipeline`'s `flow_mod_taking`), and a
        // vector grown by pushes holds room for four fields at least (a
        // one-field L2 match would carry three empty ones per entry). At
        // most `MATCH_FIELDS_AHEAD` ahead, so that a malformed match cannot
        // make room for thousands before its first bad field is seen.
        let ahead = count_tlvs(fr.clone()).min(MATCH_FIELDS_AHEAD);
        let mut fields: Vec<OxmField> = Vec::with_capacity(ahead);
        // Basic field ids seen so far (ids < 64 fit one bitmap); other
        // classes are rare and checked by scanning.
        let mut seen_basic = 0u64;
        while !fr.is_empty() {
            let f = OxmField::decode(&mut fr)?;
            let dup = if f.is_basic() {
                let bit = 1u64 << f.field_id();
                let d = seen_basic & bit != 0;
                seen_basic |= bit;
                d
            } else {
                let k = f.dup_key();
                fields.iter().any(|g| g.dup_key() == k)
            };
            if dup {
                return Err(bad_match(BadMatchCode::DupField, "match: duplicate field"));
            }
            fields.push(f);
        }
        Ok(Match { fields })
    }

    /// Encode an `ofp_match` including its trailing padding to 8 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(match_type::OXM);
        w.put_u16(0);
        for f in &self.fields {
            f.encode(w);
        }
        let length = w.len() - start;
        // A match longer than 64 KiB cannot be described; it is not produced
        // by the decoder and would be refused by the peer.
        w.patch_u16(start + 2, length.min(usize::from(u16::MAX)) as u16);
        w.pad_to_8(start);
    }

    /// Check the prerequisites of every basic field (spec §7.2.3.6, Table 12):
    /// a field may only appear when the fields that make it meaningful are
    /// matched to the right values somewhere in the same match. Fails with
    /// BAD_MATCH/BAD_PREREQ.
    ///
    /// Prerequisites are transitive (TCP_SRC needs IP_PROTO=6, which itself
    /// needs ETH_TYPE=IPv4/IPv6); since every present field is checked, the
    /// chain is enforced one link at a time. In line with common switches,
    /// ICMPv4 additionally needs ETH_TYPE=0x0800 and ICMPv6 ETH_TYPE=0x86dd.
    pub fn check_prerequisites(&self) -> Result<(), DecodeError> {
        if Prerequisites::hold_for(self.fields.iter()) {
            Ok(())
        } else {
            Err(bad_match(
                BadMatchCode::BadPrereq,
                "match: field prerequisite missing",
            ))
        }
    }
}

/// The fields other fields' prerequisites depend on (spec Table 12, the
/// field registry's `prereq` column in `packet::registry`), as a
/// set of fields guarantees them: what [`Match::check_prerequisites`]
/// collects from a match, and what a flow entry's consistency check keeps
/// while it walks the entry's actions (`pipeline::consistency`), so both
/// apply the same rule without building a match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Prerequisites {
    pub eth_type: Option<u16>,
    pub ip_proto: Option<u8>,
    pub icmpv6_type: Option<u8>,
    /// VLAN_VID's value.
    pub vlan_vid: Option<u16>,
    pub in_port: bool,
}

impl Prerequisites {
    /// Whether every field of a match made of `fields` has its
    /// prerequisites in that match (the rule of
    /// [`Match::check_prerequisites`], without building the match).
    pub fn hold_for<'a>(mut fields: impl Iterator<Item = &'a OxmField> + Clone) -> bool {
        let mut known = Prerequisites::default();
        for f in fields.clone() {
            known.learn(f);
        }
        fields.all(|f| known.allows(f))
    }

    /// Takes `f` into account (a later value of a field replaces an
    /// earlier one).
    pub fn learn(&mut self, f: &OxmField) {
        match f {
            OxmField::EthType(t) => self.eth_type = Some(*t),
            OxmField::IpProto(p) => self.ip_proto = Some(*p),
            OxmField::Icmpv6Type(t) => self.icmpv6_type = Some(*t),
            OxmField::VlanVid(v, _) => self.vlan_vid = Some(*v),
            OxmField::InPort(_) => self.in_port = true,
            _ => {}
        }
    }

    /// Whether `f`'s prerequisites hold (module rules of
    /// [`Match::check_prerequisites`]).
    pub fn allows(&self, f: &OxmField) -> bool {
        // The rules are the field registry's `prereq` column; a basic field
        // is found by its number (the registry numbers `packet::Field` by
        // `oxm_field`).
        let Some(need) = f
            .is_basic()
            .then(|| packet::Field::from_u8(f.field_id()))
            .flatten()
            .filter(|fl| fl.oxm_field() == Some(f.field_id()))
            .map(|fl| fl.def().prereq)
        else {
            return true;
        };
        (!need.in_port || self.in_port)
            && (!need.vlan_present || self.vlan_vid.is_some_and(|v| v != vid::NONE))
            && (need.eth_types.is_empty()
                || self.eth_type.is_some_and(|t| need.eth_types.contains(&t)))
            && need.ip_proto.is_none_or(|p| self.ip_proto == Some(p))
            && (need.icmpv6_types.is_empty()
                || self
                    .icmpv6_type
                    .is_some_and(|t| need.icmpv6_types.contains(&t)))
    }
}

/// proptest strategies for OXM fields and matches, shared with the message
/// and multipart tests.
#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use proptest::prelude::*;
    use proptest::strategy::Union;

    /// A valid basic field: value in range, no value bits outside the mask.
    pub fn any_basic_field() -> impl Strategy<Value = OxmField> {
        Union::new(basic_field_strategies())
    }

    /// Any valid OXM field: mostly basic, sometimes experimenter or NXM.
    pub fn any_oxm_field() -> impl Strategy<Value = OxmField> {
        prop_oneof![
            8 => any_basic_field(),
            1 => (0u8..128, any::<bool>(), any::<u32>(), proptest::collection::vec(any::<u8>(), 0..12))
                .prop_map(|(field, has_mask, experimenter, payload)| OxmField::Experimenter {
                    field,
                    has_mask,
                    experimenter,
                    payload,
                }),
            1 => (0u16..2, 0u8..128, any::<bool>(), proptest::collection::vec(any::<u8>(), 0..12))
                .prop_map(|(class, field, has_mask, payload)| OxmField::Other {
                    class,
                    field,
                    has_mask,
                    payload,
                }),
        ]
    }

    /// A valid match: fields without duplicates (prerequisites not enforced).
    pub fn any_match() -> impl Strategy<Value = Match> {
        proptest::collection::vec(any_oxm_field(), 0..8).prop_map(|fs| {
            let mut fields: Vec<OxmField> = Vec::new();
            for f in fs {
                if !fields.iter().any(|g| g.dup_key() == f.dup_key()) {
                    fields.push(f);
                }
            }
            Match { fields }
        })
    }

    /// A valid match that also satisfies every prerequisite (for flow-mod
    /// tests): a random protocol stack (ETH_TYPE, IP_PROTO, ICMPV6_TYPE,
    /// IN_PORT) plus the random fields that the stack makes legal, in either
    /// order.
    pub fn any_flow_match() -> impl Strategy<Value = Match> {
        let eth = proptest::option::of(proptest::sample::select(vec![
            0x0800u16, 0x86dd, 0x0806, 0x8847, 0x8848, 0x88e7, 0x1234,
        ]));
        let proto = proptest::option::of(proptest::sample::select(vec![6u8, 17, 132, 1, 58, 47]));
        let icmp6 = proptest::option::of(proptest::sample::select(vec![135u8, 136, 128]));
        let in_port = proptest::option::of(any::<u32>());
        (eth, proto, icmp6, in_port, any_match(), any::<bool>()).prop_map(
            |(eth, proto, icmp6, in_port, extra, reverse)| {
                let mut fields = Vec::new();
                if let Some(p) = in_port {
                    fields.push(OxmField::InPort(p));
                }
                if let Some(e) = eth {
                    fields.push(OxmField::EthType(e));
                    if let (0x0800 | 0x86dd, Some(p)) = (e, proto) {
                        fields.push(OxmField::IpProto(p));
                        if let (0x86dd, 58, Some(t)) = (e, p, icmp6) {
                            fields.push(OxmField::Icmpv6Type(t));
                        }
                    }
                }
                for f in extra.fields {
                    if fields.iter().any(|g| g.dup_key() == f.dup_key()) {
                        continue;
                    }
                    fields.push(f);
                    if Match::new(fields.clone()).check_prerequisites().is_err() {
                        fields.pop();
                    }
                }
                if reverse {
                    fields.reverse();
                }
                Match { fields }
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::arb::*;
    use super::*;
    use crate::error::ErrorCode;
    use proptest::prelude::*;

    fn dec_match(b: &[u8]) -> Result<Match, DecodeError> {
        let mut r = Reader::message(b);
        let m = Match::decode(&mut r)?;
        assert!(r.is_empty(), "match decode left bytes");
        Ok(m)
    }

    fn enc_match(m: &Match) -> Vec<u8> {
        let mut w = Vec::new();
        m.encode(&mut w);
        w
    }

    fn code(e: DecodeError) -> BadMatchCode {
        match e.code {
            ErrorCode::BadMatch(c) => c,
            other => panic!("not a BAD_MATCH error: {other:?}"),
        }
    }

    /// Wrap OXM TLV bytes into an `ofp_match` with correct length and padding.
    fn wrap(oxms: &[u8]) -> Vec<u8> {
        let len = 4 + oxms.len();
        let mut v = vec![0, 1, (len >> 8) as u8, len as u8];
        v.extend_from_slice(oxms);
        v.resize(len + padding_to_8(len), 0);
        v
    }

    fn match_err(oxms: &[u8]) -> BadMatchCode {
        code(dec_match(&wrap(oxms)).unwrap_err())
    }

    #[test]
    fn field_table_is_complete() {
        assert_eq!(FIELD_INFO.len(), usize::from(field::COUNT));
        for id in 0..field::COUNT {
            assert!(field::info(id).is_some(), "field {id} missing");
        }
        assert!(field::info(field::COUNT).is_none());
        let vid = field::info(field::VLAN_VID).unwrap();
        assert_eq!((vid.len, vid.maskable, vid.name), (2, true, "VLAN_VID"));
        assert_eq!(field::info(field::PBB_ISID).unwrap().len, 3);
        assert!(!field::info(field::IPV6_ND_TARGET).unwrap().maskable);
        assert_eq!(field::IPV6_EXTHDR, 39);
    }

    /// os-ken: OFPMatch(in_port=1, eth_type=0x0800,
    ///   ipv4_dst=('10.0.0.0', '255.255.255.0')).serialize(buf, 0)
    #[test]
    fn match_in_port_eth_type_masked_ipv4_dst() {
        let bytes = [
            0x00, 0x01, 0x00, 0x1e, // type OXM, length 30
            0x80, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01, // in_port 1
            0x80, 0x00, 0x0a, 0x02, 0x08, 0x00, // eth_type 0x0800
            0x80, 0x00, 0x19, 0x08, 0x0a, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
            0x00, // ipv4_dst/mask
            0x00, 0x00, // pad
        ];
        let m = Match::new(vec![
            OxmField::InPort(1),
            OxmField::EthType(0x0800),
            OxmField::Ipv4Dst(
                Ipv4Addr::new(10, 0, 0, 0),
                Some(Ipv4Addr::new(255, 255, 255, 0)),
            ),
        ]);
        assert_eq!(dec_match(&bytes).unwrap(), m);
        assert_eq!(enc_match(&m), bytes);
        assert_eq!(m.length(), 30);
        assert_eq!(m.encoded_len(), 32);
        assert!(m.check_prerequisites().is_ok());
        assert_eq!(m.fields[2].header(), 0x8000_1908);
        assert_eq!(m.get(field::ETH_TYPE), Some(&OxmField::EthType(0x0800)));
    }

    #[test]
    fn empty_match() {
        let bytes = [0, 1, 0, 4, 0, 0, 0, 0];
        assert_eq!(dec_match(&bytes).unwrap(), Match::default());
        assert_eq!(enc_match(&Match::default()), bytes);
    }

    /// os-ken: OFPMatch(vlan_vid=(0x1000, 0x1000), pbb_isid=0x123456,
    ///   ipv6_exthdr=(0x1, 0x1), eth_src='00:11:22:33:44:55')
    #[test]
    fn odd_widths() {
        let bytes = [
            0x00, 0x01, 0x00, 0x25, // type OXM, length 37
            0x80, 0x00, 0x08, 0x06, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, // eth_src
            0x80, 0x00, 0x0d, 0x04, 0x10, 0x00, 0x10, 0x00, // vlan_vid/mask
            0x80, 0x00, 0x4a, 0x03, 0x12, 0x34, 0x56, // pbb_isid
            0x80, 0x00, 0x4f, 0x04, 0x00, 0x01, 0x00, 0x01, // ipv6_exthdr/mask
            0x00, 0x00, 0x00, // pad
        ];
        let m = Match::new(vec![
            OxmField::EthSrc([0, 0x11, 0x22, 0x33, 0x44, 0x55], None),
            OxmField::VlanVid(0x1000, Some(0x1000)),
            OxmField::PbbIsid(0x12_3456, None),
            OxmField::Ipv6Exthdr(1, Some(1)),
        ]);
        assert_eq!(dec_match(&bytes).unwrap(), m);
        assert_eq!(enc_match(&m), bytes);
    }

    #[test]
    fn experimenter_and_nxm_round_trip() {
        let oxms = [
            0xff, 0xff, 0x02, 0x06, 0x00, 0x00, 0x23, 0x20, 0xab, 0xcd, // exp field 1
            0x00, 0x01, 0x1e, 0x04, 0x00, 0x00, 0x00, 0x07, // NXM_1 field 15
        ];
        let m = dec_match(&wrap(&oxms)).unwrap();
        assert_eq!(
            m.fields,
            vec![
                OxmField::Experimenter {
                    field: 1,
                    has_mask: false,
                    experimenter: 0x2320,
                    payload: vec![0xab, 0xcd],
                },
                OxmField::Other {
                    class: 1,
                    field: 15,
                    has_mask: false,
                    payload: vec![0, 0, 0, 7],
                },
            ]
        );
        assert_eq!(enc_match(&m), wrap(&oxms));
        // experimenter OXM too short for its id
        assert_eq!(
            match_err(&[0xff, 0xff, 0x02, 0x02, 0, 0]),
            BadMatchCode::BadLen
        );
    }

    #[test]
    fn bad_type() {
        assert_eq!(
            code(dec_match(&[0, 0, 0, 4, 0, 0, 0, 0]).unwrap_err()),
            BadMatchCode::BadType
        );
        assert_eq!(
            code(dec_match(&[0, 2, 0, 4, 0, 0, 0, 0]).unwrap_err()),
            BadMatchCode::BadType
        );
    }

    #[test]
    fn bad_len() {
        // match length < 4
        assert_eq!(
            code(dec_match(&[0, 1, 0, 3, 0, 0, 0, 0]).unwrap_err()),
            BadMatchCode::BadLen
        );
        // match length beyond the data
        assert_eq!(
            code(dec_match(&[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 1]).unwrap_err()),
            BadMatchCode::BadLen
        );
        // padding missing
        assert_eq!(
            code(dec_match(&[0, 1, 0, 10, 0x80, 0, 0x0a, 0x02, 8, 0]).unwrap_err()),
            BadMatchCode::BadLen
        );
        // header missing
        assert_eq!(code(dec_match(&[0, 1]).unwrap_err()), BadMatchCode::BadLen);
        // OXM length wrong for the field
        assert_eq!(
            match_err(&[0x80, 0, 0x0a, 0x03, 8, 0, 0]),
            BadMatchCode::BadLen
        );
        // masked field with a single-width payload
        assert_eq!(
            match_err(&[0x80, 0, 0x19, 0x04, 10, 0, 0, 0]),
            BadMatchCode::BadLen
        );
        // OXM payload beyond the match
        assert_eq!(
            match_err(&[0x80, 0, 0, 0x08, 0, 0, 0, 1]),
            BadMatchCode::BadLen
        );
        // truncated OXM header
        assert_eq!(match_err(&[0x80, 0]), BadMatchCode::BadLen);
    }

    /// TCP_FLAGS as beba-ctrl sends it: basic field 40, 2 bytes, masked
    /// (header 0x80005104) or not (0x80005002).
    #[test]
    fn tcp_flags_is_beba_field_40() {
        let syn = [0x80, 0, 0x51, 0x04, 0, 0x02, 0, 0x12];
        let m = dec_match(&wrap(&syn)).unwrap();
        assert_eq!(m.fields, vec![OxmField::TcpFlags(0x2, Some(0x12))]);
        assert_eq!(enc_match(&m), wrap(&syn));
        let exact = [0x80, 0, 0x50, 0x02, 0x01, 0xff];
        let m = dec_match(&wrap(&exact)).unwrap();
        assert_eq!(m.fields, vec![OxmField::TcpFlags(0x1ff, None)]);
        assert_eq!(enc_match(&m), wrap(&exact));
        // Value bits outside the mask; bits beyond the 12 flag bits.
        assert_eq!(
            match_err(&[0x80, 0, 0x51, 0x04, 0, 0x03, 0, 0x02]),
            BadMatchCode::BadWildcards
        );
        assert_eq!(
            match_err(&[0x80, 0, 0x50, 0x02, 0x10, 0]),
            BadMatchCode::BadValue
        );
        assert!(!crate::action::is_settable_field(field::TCP_FLAGS));
    }

    #[test]
    fn bad_field_mask_value_wildcards_dup() {
        // field 41 does not exist in 1.3.5 (nor in BEBA's extension of it)
        assert_eq!(match_err(&[0x80, 0, 0x52, 0x01, 0]), BadMatchCode::BadField);
        // in_port with a mask
        assert_eq!(
            match_err(&[0x80, 0, 0x01, 0x08, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]),
            BadMatchCode::BadMask
        );
        let bad_values: [&[u8]; 10] = [
            &[0x80, 0, 0x0c, 0x02, 0x20, 0x00],             // vlan_vid 0x2000
            &[0x80, 0, 0x0e, 0x01, 8],                      // vlan_pcp 8
            &[0x80, 0, 0x10, 0x01, 64],                     // ip_dscp 64
            &[0x80, 0, 0x12, 0x01, 4],                      // ip_ecn 4
            &[0x80, 0, 0x38, 0x04, 0, 0x10, 0, 0],          // ipv6_flabel
            &[0x80, 0, 0x44, 0x04, 0, 0x10, 0, 0],          // mpls_label
            &[0x80, 0, 0x46, 0x01, 8],                      // mpls_tc
            &[0x80, 0, 0x48, 0x01, 2],                      // mpls_bos
            &[0x80, 0, 0x4e, 0x02, 0x02, 0x00],             // ipv6_exthdr
            &[0x80, 0, 0x0d, 0x04, 0x20, 0x00, 0xff, 0xff], // masked vlan_vid
        ];
        for b in bad_values {
            assert_eq!(match_err(b), BadMatchCode::BadValue, "{b:x?}");
        }
        // ipv4_src 10.0.0.1/255.255.255.0: a value bit outside the mask
        assert_eq!(
            match_err(&[0x80, 0, 0x17, 0x08, 10, 0, 0, 1, 255, 255, 255, 0]),
            BadMatchCode::BadWildcards
        );
        // eth_type twice
        assert_eq!(
            match_err(&[0x80, 0, 0x0a, 0x02, 8, 0, 0x80, 0, 0x0a, 0x02, 8, 6]),
            BadMatchCode::DupField
        );
        // the same field once masked, once exact is still a duplicate
        assert_eq!(
            match_err(&[
                0x80, 0, 0x06, 0x06, 0, 0, 0, 0, 0, 1, 0x80, 0, 0x07, 0x0c, 0, 0, 0, 0, 0, 1, 0, 0,
                0, 0, 0, 1
            ]),
            BadMatchCode::DupField
        );
        // the same experimenter field twice
        let exp = [0xff, 0xff, 0x02, 0x04, 0, 0, 0x23, 0x20];
        assert_eq!(match_err(&[exp, exp].concat()), BadMatchCode::DupField);
    }

    #[test]
    fn from_bits_refuses_invalid() {
        use OxmField as F;
        assert_eq!(
            F::from_bits(field::ETH_DST, 0x0011_2233_4455, Some(0xffff_ffff_ffff)),
            Some(F::EthDst(
                [0, 0x11, 0x22, 0x33, 0x44, 0x55],
                Some([0xff; 6])
            ))
        );
        assert_eq!(
            F::from_bits(field::IPV6_DST, 1, None),
            Some(F::Ipv6Dst(Ipv6Addr::LOCALHOST, None))
        );
        assert_eq!(F::from_bits(field::IN_PORT, 1, Some(1)), None);
        assert_eq!(F::from_bits(field::ETH_TYPE, 0x1_0000, None), None);
        assert_eq!(F::from_bits(field::VLAN_PCP, 8, None), None);
        assert_eq!(F::from_bits(field::IPV4_SRC, 3, Some(1)), None);
        assert_eq!(F::from_bits(field::IPV4_SRC, 1, Some(1 << 32)), None);
        assert_eq!(F::from_bits(field::COUNT, 0, None), None);
        assert_eq!(F::EthType(0x800).bits(), Some((0x800, None)));
        assert_eq!(
            F::Other {
                class: 1,
                field: 1,
                has_mask: false,
                payload: vec![]
            }
            .bits(),
            None
        );
    }

    fn prereq(fields: Vec<OxmField>) -> Result<(), BadMatchCode> {
        Match::new(fields).check_prerequisites().map_err(code)
    }

    #[test]
    fn prerequisites() {
        use OxmField::*;
        let v4 = EthType(0x0800);
        let v6 = EthType(0x86dd);
        let ok: Vec<Vec<OxmField>> = vec![
            vec![],
            vec![InPort(1), InPhyPort(1)],
            vec![VlanPcp(3), VlanVid(0x1005, None)],
            vec![VlanVid(0x1000, Some(0x1000)), VlanPcp(3)],
            vec![TcpDst(80), IpProto(6), v4.clone()],
            vec![v6.clone(), IpProto(17), UdpSrc(53), IpDscp(1), IpEcn(1)],
            vec![v4.clone(), IpProto(132), SctpSrc(1)],
            vec![v4.clone(), IpProto(1), Icmpv4Type(8), Icmpv4Code(0)],
            vec![EthType(0x0806), ArpOp(1), ArpSpa(Ipv4Addr::LOCALHOST, None)],
            vec![v6.clone(), IpProto(58), Icmpv6Type(135), Ipv6NdSll([1; 6])],
            vec![
                v6.clone(),
                IpProto(58),
                Icmpv6Type(136),
                Ipv6NdTll([1; 6]),
                Ipv6NdTarget(Ipv6Addr::LOCALHOST),
            ],
            vec![v6.clone(), Ipv6Flabel(1, None), Ipv6Exthdr(1, None)],
            vec![EthType(0x8848), MplsLabel(5), MplsTc(1), MplsBos(1)],
            vec![EthType(0x88e7), PbbIsid(5, None)],
            vec![Metadata(1, None), TunnelId(1, None), EthDst([1; 6], None)],
        ];
        for fs in ok {
            assert_eq!(prereq(fs.clone()), Ok(()), "{fs:?}");
        }
        let bad: Vec<Vec<OxmField>> = vec![
            vec![InPhyPort(1)],
            vec![VlanPcp(3)],
            vec![VlanVid(vid::NONE, None), VlanPcp(3)],
            vec![IpProto(6)],
            vec![EthType(0x0806), IpProto(6)],
            vec![v6.clone(), Ipv4Src(Ipv4Addr::LOCALHOST, None)],
            vec![v4.clone(), TcpSrc(1)],
            vec![v4.clone(), IpProto(17), TcpSrc(1)],
            vec![v4.clone(), IpProto(6), UdpSrc(1)],
            vec![v4.clone(), IpProto(6), SctpSrc(1)],
            vec![v6.clone(), IpProto(1), Icmpv4Type(1)],
            vec![v4.clone(), ArpOp(1)],
            vec![v4.clone(), Ipv6Src(Ipv6Addr::LOCALHOST, None)],
            vec![v4.clone(), IpProto(58), Icmpv6Type(1)],
            vec![
                v6.clone(),
                IpProto(58),
                Icmpv6Type(1),
                Ipv6NdTarget(Ipv6Addr::LOCALHOST),
            ],
            vec![v6.clone(), IpProto(58), Icmpv6Type(136), Ipv6NdSll([1; 6])],
            vec![v6.clone(), IpProto(58), Icmpv6Type(135), Ipv6NdTll([1; 6])],
            vec![v4.clone(), MplsLabel(1)],
            vec![v4.clone(), PbbIsid(1, None)],
            vec![v4.clone(), Ipv6Exthdr(1, None)],
        ];
        for fs in bad {
            assert_eq!(prereq(fs.clone()), Err(BadMatchCode::BadPrereq), "{fs:?}");
        }
    }

    proptest! {
        #[test]
        fn match_round_trip(m in any_match()) {
            let b = enc_match(&m);
            prop_assert_eq!(b.len() % 8, 0);
            prop_assert_eq!(b.len(), m.encoded_len());
            let d = dec_match(&b).unwrap();
            // Sized to its fields (a flow entry keeps the decoded match).
            prop_assert_eq!(d.fields.capacity(), d.fields.len());
            prop_assert_eq!(d, m);
        }

        #[test]
        fn flow_match_is_valid(m in any_flow_match()) {
            prop_assert!(m.check_prerequisites().is_ok());
            prop_assert_eq!(dec_match(&enc_match(&m)).unwrap(), m);
        }

        #[test]
        fn bits_round_trip(f in any_basic_field()) {
            let (v, m) = f.bits().unwrap();
            prop_assert_eq!(OxmField::from_bits(f.field_id(), v, m), Some(f));
        }

        #[test]
        fn field_round_trip(f in any_oxm_field()) {
            let mut b = Vec::new();
            f.encode(&mut b);
            prop_assert_eq!(b.len(), f.encoded_len());
            prop_assert_eq!(u32::from_be_bytes([b[0], b[1], b[2], b[3]]), f.header());
            let mut r = Reader::message(&b);
            prop_assert_eq!(OxmField::decode(&mut r).unwrap(), f);
            prop_assert!(r.is_empty());
        }

        /// Whatever decodes re-encodes to the same bytes (padding zeroed).
        #[test]
        fn canonical(oxms in proptest::collection::vec(any::<u8>(), 0..64)) {
            let b = wrap(&oxms);
            if let Ok(m) = dec_match(&b) {
                prop_assert_eq!(enc_match(&m), b);
            }
        }

        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..96)) {
            let mut r = Reader::message(&b);
            if let Ok(m) = Match::decode(&mut r) {
                let _ = m.check_prerequisites();
            }
            let _ = OxmField::decode(&mut Reader::message(&b));
        }

        /// Structured fuzz: valid headers with random basic fields/lengths.
        #[test]
        fn never_panics_basic(tlvs in proptest::collection::vec(
            (0u8..48, any::<bool>(), 0u8..40, proptest::collection::vec(any::<u8>(), 0..40)), 0..6)
        ) {
            let mut oxms = Vec::new();
            for (f, m, l, payload) in tlvs {
                oxms.extend_from_slice(&oxm_header(class::OPENFLOW_BASIC, f, m, l).to_be_bytes());
                oxms.extend_from_slice(&payload[..payload.len().min(usize::from(l))]);
            }
            let b = wrap(&oxms);
            if let Ok(m) = dec_match(&b) {
                prop_assert_eq!(enc_match(&m), b);
            }
        }
    }
}
