//! Field identifiers and the presence bitmap of a [`FlowKey`](crate::FlowKey).
//!
//! [`Field`] is generated from the field registry ([`crate::registry`]):
//! every OpenFlow 1.3.5 OXM basic field with the same number as its
//! `oxm_field` (so `Field::IpProto as u8 == 10`), followed by a few packet
//! facts that are not OXM fields but that rewrites need (TTLs, the inner
//! VLAN tag, the fragment state). The registry also gives each field's
//! OXM identity; the OXM value codec is `ofp`'s.

use crate::key::Layer;
pub use crate::registry::Field;
use crate::registry::{FieldId, FIELD_DEFS, ROWS};

impl Field {
    /// The field with number `n`, if any.
    pub fn from_u8(n: u8) -> Option<Field> {
        Field::ALL.get(usize::from(n)).copied()
    }

    /// The OXM `oxm_field` number, for the OXM basic fields only.
    pub fn oxm_field(self) -> Option<u8> {
        self.oxm()
            .filter(|o| o.class == crate::registry::CLASS_BASIC)
            .map(|o| o.field)
    }

    /// Width in bytes of the field's value as OXM carries it (big-endian).
    #[inline]
    pub fn width(self) -> usize {
        FIELD_DEFS[self as usize].width
    }

    /// The layer of the parse that fills this field in a
    /// [`FlowKey`](crate::FlowKey) (`Layer::None`: a pipeline field the
    /// parser does not touch).
    #[inline]
    pub fn layer(self) -> Layer {
        FIELD_DEFS[self as usize].layer
    }

    /// A short snake-case name (`"eth_dst"`, `"ipv6_nd_sll"`, ...), as the
    /// test vectors and diagnostics use.
    pub fn name(self) -> &'static str {
        FIELD_DEFS[self as usize].name
    }

    /// The field called `name` (see [`Field::name`]).
    pub fn from_name(name: &str) -> Option<Field> {
        crate::registry::by_name(name).and_then(|d| d.field)
    }

    /// The field's registry row index (its bit in a [`FieldSet`]).
    #[inline]
    pub const fn id(self) -> FieldId {
        FieldId(self as u16)
    }

    /// Index of the word holding this field's bit in a [`FieldSet`].
    #[inline]
    pub const fn word(self) -> usize {
        self as usize / 64
    }

    /// This field's bit within its [`FieldSet`] word ([`Field::word`]).
    #[inline]
    pub const fn bit(self) -> u64 {
        1 << (self as usize % 64)
    }
}

/// Number of 64-bit words of a [`FieldSet`]: one bit per registry row.
pub const FIELD_SET_WORDS: usize = ROWS.div_ceil(64);

/// A set of fields as a bitmap with one bit per registry row (bit n of the
/// set = row n; a [`Field`]'s bit is its number). The flow key uses it to
/// say which fields the packet has: an absent field differs from a field
/// whose value is zero. Its size follows the registry: with up to 64 rows
/// it is one word, as cheap to store and test as a `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FieldSet(pub [u64; FIELD_SET_WORDS]);

impl FieldSet {
    /// The empty set.
    pub const EMPTY: FieldSet = FieldSet([0; FIELD_SET_WORDS]);

    /// Every field (and every bit a later field would take).
    pub const ALL: FieldSet = FieldSet([u64::MAX; FIELD_SET_WORDS]);

    /// Builds a set from a list of fields.
    pub const fn of(fields: &[Field]) -> FieldSet {
        let mut s = FieldSet::EMPTY;
        let mut i = 0;
        while i < fields.len() {
            s.0[fields[i].word()] |= fields[i].bit();
            i += 1;
        }
        s
    }

    /// The fields in either set.
    pub const fn union(self, other: FieldSet) -> FieldSet {
        let mut s = self;
        let mut i = 0;
        while i < FIELD_SET_WORDS {
            s.0[i] |= other.0[i];
            i += 1;
        }
        s
    }

    /// The fields in both sets.
    pub const fn intersection(self, other: FieldSet) -> FieldSet {
        let mut s = self;
        let mut i = 0;
        while i < FIELD_SET_WORDS {
            s.0[i] &= other.0[i];
            i += 1;
        }
        s
    }

    #[inline]
    pub fn contains(self, f: Field) -> bool {
        self.0[f.word()] & f.bit() != 0
    }

    /// Whether the set holds registry row `id` (a `module` row's field).
    #[inline]
    pub fn contains_id(self, id: FieldId) -> bool {
        let i = usize::from(id.0);
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Adds registry row `id` (ignored if the registry has no such row).
    #[inline]
    pub fn insert_id(&mut self, id: FieldId) {
        let i = usize::from(id.0);
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    #[inline]
    pub fn contains_all(self, other: FieldSet) -> bool {
        self.0.iter().zip(other.0).all(|(a, b)| a & b == b)
    }

    #[inline]
    pub fn insert(&mut self, f: Field) {
        self.0[f.word()] |= f.bit();
    }

    #[inline]
    pub fn insert_all(&mut self, other: FieldSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    #[inline]
    pub fn remove(&mut self, f: Field) {
        self.0[f.word()] &= !f.bit();
    }

    #[inline]
    pub fn remove_all(&mut self, other: FieldSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
    }

    #[inline]
    pub fn is_empty(self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// Whether the two sets have a field in common.
    #[inline]
    pub fn intersects(self, other: FieldSet) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
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
        assert_eq!(Field::from_u8(Field::ALL.len() as u8), None);
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
