//! Match compilation (spec §7.2.3): an `ofp_match` from a flow-mod becomes a
//! [`CompiledMatch`], a list of (field, value, mask) triples over the
//! integer view of a [`FlowKey`].
//!
//! Every OXM value is at most 128 bits wide, so each field is kept as a
//! right-aligned `u128` value and mask (an Ethernet address is a 48-bit
//! number, as `OxmField::bits` gives it). An exact field gets the all-ones
//! mask of its width, and a field whose mask is zero is dropped (it matches
//! everything), so two matches that mean the same thing compile to the same
//! triples: strict comparison, overlap checks and "is more specific than"
//! tests are then simple integer operations.
//!
//! A packet matches when it has every field of the match (the `required`
//! presence bits, which also encode the prerequisites: a TCP port is only
//! present in a TCP packet) and `key & mask == value` for each field.

use crate::ext::registry::Extensions;
use ofp::error::{BadMatchCode, DecodeError, ErrorCode};
use ofp::oxm::{Match, OxmField};
use packet::{Field, FieldSet, FlowKey};
use std::sync::Arc;

/// One field of a compiled match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldMatch {
    pub field: Field,
    /// Value bits, always a subset of `mask`.
    pub value: u128,
    /// Non-zero mask, at most the field's width.
    pub mask: u128,
}

/// A match ready for lookup; see the module comment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CompiledMatch {
    /// Sorted by field number, one entry per field. Shared: the entry's
    /// copies in the worker replicas hold the authoritative copy's (a
    /// clone is a reference count).
    fields: Arc<[FieldMatch]>,
    /// Presence bits a packet must have.
    required: FieldSet,
    /// Extension fields (`crate::ext`) as the flow-mod gave them; they
    /// are also in `fields`, over the key slots the pipeline writes an
    /// extension's values to before a lookup (`ExtMatch::key_fields`).
    ext: crate::ext::api::ExtMatch,
}

/// All-ones mask of a field's width.
pub(crate) fn full_mask(f: Field) -> u128 {
    let bits = 8 * f.width() as u32;
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// A field's value in `key` as a right-aligned integer (the same view as
/// `OxmField::bits`). The caller checks the presence bit first.
#[inline]
pub fn key_bits(key: &FlowKey, f: Field) -> u128 {
    // Generated from the field registry (`packet::registry`).
    key.bits(f)
}

impl CompiledMatch {
    /// The match-everything match (a table-miss entry's).
    pub fn any() -> CompiledMatch {
        CompiledMatch::default()
    }

    /// Compiles a flow-mod match: prerequisites first (BAD_MATCH/BAD_PREREQ),
    /// then every field. Experimenter fields go to the extension of their
    /// experimenter id (`crate::ext`); other-class fields and unknown
    /// experimenters are refused with BAD_MATCH/BAD_FIELD.
    pub fn compile(m: &Match, exts: &Extensions) -> Result<CompiledMatch, DecodeError> {
        m.check_prerequisites()?;
        let mut fields = Vec::with_capacity(m.fields.len());
        let mut ext = crate::ext::api::ExtMatch::default();
        for f in &m.fields {
            if matches!(f, OxmField::Experimenter { .. }) {
                exts.match_field(f, &mut ext)
                    .map_err(|code| DecodeError::new(code, "match: experimenter field"))?;
                continue;
            }
            let bad_field = || {
                DecodeError::new(
                    ErrorCode::BadMatch(BadMatchCode::BadField),
                    "match: unsupported field",
                )
            };
            let (value, mask) = f.bits().ok_or_else(bad_field)?;
            let field = Field::from_u8(f.field_id())
                .filter(|fl| fl.oxm_field().is_some())
                .ok_or_else(bad_field)?;
            let full = full_mask(field);
            let mask = mask.unwrap_or(full) & full;
            if mask == 0 {
                continue;
            }
            fields.push(FieldMatch {
                field,
                value: value & mask,
                mask,
            });
        }
        // The extension fields are also triples over their key slots
        // (`ExtMatch::key_fields`): the classifiers index them.
        fields.extend(ext.key_fields().map(|(field, value, mask)| FieldMatch {
            field,
            value: value.into(),
            mask: mask.into(),
        }));
        let mut c = CompiledMatch::from_fields(fields);
        c.ext = ext;
        Ok(c)
    }

    /// The extension fields (`crate::ext`).
    #[inline]
    pub fn ext(&self) -> &crate::ext::api::ExtMatch {
        &self.ext
    }

    /// Builds a match from triples (normalised: zero masks dropped, values
    /// cut to their masks, sorted; on duplicates the last wins).
    pub fn from_fields(mut fields: Vec<FieldMatch>) -> CompiledMatch {
        for f in &mut fields {
            f.mask &= full_mask(f.field);
            f.value &= f.mask;
        }
        fields.retain(|f| f.mask != 0);
        fields.reverse();
        fields.sort_by_key(|f| f.field);
        fields.dedup_by_key(|f| f.field);
        let required = fields.iter().fold(FieldSet::EMPTY, |mut s, f| {
            s.insert(f.field);
            s
        });
        CompiledMatch {
            fields: fields.into(),
            required,
            ext: Default::default(),
        }
    }

    /// The compiled fields, sorted by field number.
    pub fn fields(&self) -> &[FieldMatch] {
        &self.fields
    }

    /// The deepest parse layer of the fields matched on.
    pub fn layer(&self) -> packet::Layer {
        self.fields
            .iter()
            .map(|f| f.field.layer())
            .max()
            .unwrap_or(packet::Layer::None)
    }

    /// The fields a packet must have.
    pub fn required(&self) -> FieldSet {
        self.required
    }

    /// True for the empty (match everything) match.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.ext.is_empty()
    }

    /// Whether the packet described by `key` matches.
    #[inline]
    pub fn matches(&self, key: &FlowKey) -> bool {
        key.present.contains_all(self.required)
            && self
                .fields
                .iter()
                .all(|f| key_bits(key, f.field) & f.mask == f.value)
    }

    fn get(&self, f: Field) -> Option<&FieldMatch> {
        self.fields
            .binary_search_by_key(&f, |m| m.field)
            .ok()
            .and_then(|i| self.fields.get(i))
    }

    /// Non-strict flow-mod selection (spec §6.4): `self` (an entry's match)
    /// is at least as specific as `filter` (the request's match), i.e. every
    /// packet `self` matches is matched by `filter`.
    pub fn is_subsumed_by(&self, filter: &CompiledMatch) -> bool {
        self.ext.is_subsumed_by(&filter.ext)
            && filter.fields.iter().all(|g| match self.get(g.field) {
                Some(f) => f.mask & g.mask == g.mask && f.value & g.mask == g.value,
                None => false,
            })
    }

    /// Whether some packet could match both (CHECK_OVERLAP): on every field
    /// both constrain, the values agree on the bits both masks cover.
    pub fn overlaps(&self, other: &CompiledMatch) -> bool {
        self.ext.overlaps(&other.ext)
            && self.fields.iter().all(|f| match other.get(f.field) {
                Some(g) => (f.value ^ g.value) & f.mask & g.mask == 0,
                None => true,
            })
    }

    /// Back to an `ofp_match` (for reports built from compiled state, e.g.
    /// tests), the extension fields by their extension in `exts`; flow
    /// entries keep the controller's original match.
    pub fn to_match(&self, exts: &Extensions) -> Match {
        let fields = self
            .fields
            .iter()
            .filter(|f| f.field.oxm_field().is_some())
            .filter_map(|f| {
                let full = full_mask(f.field);
                let mask = (f.mask != full).then_some(f.mask);
                OxmField::from_bits(f.field as u8, f.value, mask)
            })
            .chain(exts.to_oxm(&self.ext))
            .collect();
        Match::new(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ipv4_tcp() -> Match {
        Match::new(vec![
            OxmField::EthType(0x0800),
            OxmField::IpProto(6),
            OxmField::Ipv4Dst(
                Ipv4Addr::new(10, 0, 0, 0),
                Some(Ipv4Addr::new(255, 0, 0, 0)),
            ),
            OxmField::TcpDst(80),
        ])
    }

    #[test]
    fn compile_and_match() {
        let m = CompiledMatch::compile(&ipv4_tcp(), &Default::default()).unwrap();
        assert_eq!(m.fields().len(), 4);
        let mut k = FlowKey::new(1);
        k.present.insert_all(FieldSet::of(&[
            Field::EthType,
            Field::IpProto,
            Field::Ipv4Dst,
            Field::TcpDst,
        ]));
        k.eth_type = 0x0800;
        k.ip_proto = 6;
        k.ipv4_dst = u32::from(Ipv4Addr::new(10, 9, 8, 7));
        k.tp_dst = 80;
        assert!(m.matches(&k));
        k.ipv4_dst = u32::from(Ipv4Addr::new(11, 9, 8, 7));
        assert!(!m.matches(&k));
        k.ipv4_dst = u32::from(Ipv4Addr::new(10, 9, 8, 7));
        // Same port number in a UDP packet: the TCP bit is absent.
        k.present.remove(Field::TcpDst);
        k.present.insert(Field::UdpDst);
        assert!(!m.matches(&k));
    }

    #[test]
    fn prerequisites_and_bad_fields() {
        let e =
            CompiledMatch::compile(&Match::new(vec![OxmField::TcpDst(80)]), &Default::default())
                .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadMatch(BadMatchCode::BadPrereq));
        let e = CompiledMatch::compile(
            &Match::new(vec![OxmField::Experimenter {
                field: 1,
                has_mask: false,
                experimenter: 42,
                payload: vec![1, 2],
            }]),
            &Default::default(),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadMatch(BadMatchCode::BadField));
    }

    #[test]
    fn normalisation_subsume_overlap() {
        // Zero mask = wildcard; a full mask = exact.
        let a = CompiledMatch::compile(
            &Match::new(vec![
                OxmField::EthDst([1, 2, 3, 4, 5, 6], Some([0xff; 6])),
                OxmField::EthSrc([0; 6], Some([0; 6])),
            ]),
            &Default::default(),
        )
        .unwrap();
        let b = CompiledMatch::compile(
            &Match::new(vec![OxmField::EthDst([1, 2, 3, 4, 5, 6], None)]),
            &Default::default(),
        )
        .unwrap();
        assert_eq!(a, b);
        let any = CompiledMatch::any();
        assert!(a.is_subsumed_by(&any));
        assert!(!any.is_subsumed_by(&a));
        let tcp = CompiledMatch::compile(&ipv4_tcp(), &Default::default()).unwrap();
        let ip = CompiledMatch::compile(
            &Match::new(vec![OxmField::EthType(0x0800)]),
            &Default::default(),
        )
        .unwrap();
        assert!(tcp.is_subsumed_by(&ip) && !ip.is_subsumed_by(&tcp));
        assert!(tcp.overlaps(&ip) && ip.overlaps(&tcp) && any.overlaps(&tcp));
        let arp = CompiledMatch::compile(
            &Match::new(vec![OxmField::EthType(0x0806)]),
            &Default::default(),
        )
        .unwrap();
        assert!(!arp.overlaps(&tcp));
        assert_eq!(
            CompiledMatch::compile(&tcp.to_match(&Default::default()), &Default::default())
                .unwrap(),
            tcp
        );
    }
}
