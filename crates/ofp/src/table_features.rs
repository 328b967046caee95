//! Table features (spec §7.3.5.5): `ofp_table_features` and its properties,
//! carried by OFPMP_TABLE_FEATURES requests (to set) and replies (to report).
//!
//! Layout of one `ofp_table_features` (64 fixed bytes, then properties):
//! ```text
//!  0  length u16 | table_id u8 | pad[5]
//!  8  name[32]
//! 40  metadata_match u64
//! 48  metadata_write u64
//! 56  config u32 | max_entries u32
//! 64  properties...            (length covers the whole structure)
//! ```
//! Each property is a TLV `type u16 | length u16 | payload`, where `length`
//! counts the 4-byte header and the payload but *not* the zero padding that
//! follows to the next multiple of 8. The payload depends on the type:
//! instruction ids, next-table ids (one byte each), action ids, OXM headers,
//! or experimenter data.
//!
//! Errors: every length problem inside a table-features structure (its own
//! length field or a property's) is `TABLE_FEATURES_FAILED/BAD_LEN`, an unknown
//! property type is `TABLE_FEATURES_FAILED/BAD_TYPE`, and table id 0xff
//! (`OFPTT_ALL`, not a table) is `TABLE_FEATURES_FAILED/BAD_TABLE`. This is
//! what Open vSwitch answers too.

use crate::error::{DecodeError, ErrorCode, TableFeaturesFailedCode};
use crate::wire::{get_fixed_str, padding_to_8, put_fixed_str, Reader, Writer};

/// Size of the fixed part of `ofp_table_features`.
pub const TABLE_FEATURES_LEN: usize = 64;
/// `OFP_MAX_TABLE_NAME_LEN`.
pub const MAX_TABLE_NAME_LEN: usize = 32;
/// `OFPTT_ALL`: "all tables", never the id of one table.
pub const OFPTT_ALL: u8 = 0xff;

/// OFPTFPT_* property types.
pub mod prop_type {
    pub const INSTRUCTIONS: u16 = 0;
    pub const INSTRUCTIONS_MISS: u16 = 1;
    pub const NEXT_TABLES: u16 = 2;
    pub const NEXT_TABLES_MISS: u16 = 3;
    pub const WRITE_ACTIONS: u16 = 4;
    pub const WRITE_ACTIONS_MISS: u16 = 5;
    pub const APPLY_ACTIONS: u16 = 6;
    pub const APPLY_ACTIONS_MISS: u16 = 7;
    pub const MATCH: u16 = 8;
    pub const WILDCARDS: u16 = 10;
    pub const WRITE_SETFIELD: u16 = 12;
    pub const WRITE_SETFIELD_MISS: u16 = 13;
    pub const APPLY_SETFIELD: u16 = 14;
    pub const APPLY_SETFIELD_MISS: u16 = 15;
    pub const EXPERIMENTER: u16 = 0xfffe;
    pub const EXPERIMENTER_MISS: u16 = 0xffff;
}

/// Instruction/action type value of experimenter ids (`OFPIT_EXPERIMENTER`,
/// `OFPAT_EXPERIMENTER`).
const EXPERIMENTER_TYPE: u16 = 0xffff;
/// OXM class of experimenter OXM ids (`OFPXMC_EXPERIMENTER`).
const OXM_CLASS_EXPERIMENTER: u16 = 0xffff;

fn tff(code: TableFeaturesFailedCode, what: &'static str) -> DecodeError {
    DecodeError::new(ErrorCode::TableFeaturesFailed(code), what)
}

fn tff_len(what: &'static str) -> DecodeError {
    tff(TableFeaturesFailedCode::BadLen, what)
}

/// The error table-features readers report when input runs short.
const TFF_BAD_LEN: ErrorCode = ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadLen);

/// One element of an OFPTFPT_INSTRUCTIONS(_MISS) list: an instruction type,
/// without the instruction's body.
///
/// On the wire an id is `type u16 | len u16` (len 4), or for experimenter
/// instructions `0xffff | len 8 | experimenter u32`. Longer `len` values are
/// accepted and the extra bytes skipped; encoding always writes the minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstructionId {
    /// A standard instruction type (OFPIT_*, never 0xffff).
    Standard(u16),
    /// An experimenter instruction, by experimenter id.
    Experimenter(u32),
}

/// One element of an OFPTFPT_*_ACTIONS(_MISS) list: an action type. Same wire
/// shape as [`InstructionId`]: `type | len 4`, or `0xffff | len 8 |
/// experimenter` (some switches pad standard ids to 8, as the spec's
/// `ofp_action_header` suggests; that is accepted on decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionId {
    /// A standard action type (OFPAT_*, never 0xffff).
    Standard(u16),
    /// An experimenter action, by experimenter id.
    Experimenter(u32),
}

/// Decoded `(type, experimenter)` of one instruction or action id.
fn decode_id(r: &mut Reader<'_>, what: &'static str) -> Result<(u16, Option<u32>), DecodeError> {
    let typ = r.u16(what)?;
    let len = r.u16(what)? as usize;
    if typ == EXPERIMENTER_TYPE {
        if len < 8 {
            return Err(tff_len(what));
        }
        let exp = r.u32(what)?;
        r.pad(len - 8)?;
        Ok((typ, Some(exp)))
    } else {
        if len < 4 {
            return Err(tff_len(what));
        }
        r.pad(len - 4)?;
        Ok((typ, None))
    }
}

fn encode_id(w: &mut Vec<u8>, typ: u16, experimenter: Option<u32>) {
    match experimenter {
        Some(exp) => {
            w.put_u16(EXPERIMENTER_TYPE);
            w.put_u16(8);
            w.put_u32(exp);
        }
        None => {
            w.put_u16(typ);
            w.put_u16(4);
        }
    }
}

impl InstructionId {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match decode_id(r, "table features: instruction id")? {
            (_, Some(exp)) => InstructionId::Experimenter(exp),
            (typ, None) => InstructionId::Standard(typ),
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        match *self {
            InstructionId::Standard(t) => encode_id(w, t, None),
            InstructionId::Experimenter(e) => encode_id(w, EXPERIMENTER_TYPE, Some(e)),
        }
    }
}

impl ActionId {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(match decode_id(r, "table features: action id")? {
            (_, Some(exp)) => ActionId::Experimenter(exp),
            (typ, None) => ActionId::Standard(typ),
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        match *self {
            ActionId::Standard(t) => encode_id(w, t, None),
            ActionId::Experimenter(e) => encode_id(w, EXPERIMENTER_TYPE, Some(e)),
        }
    }
}

/// One element of an OXM-list property (MATCH, WILDCARDS, *_SETFIELD*): an
/// OXM header `class u16 | field u7 | hasmask u1 | length u8` with no value.
/// Experimenter OXMs (class 0xffff) are followed by their experimenter id.
///
/// Invariant: `Standard` headers never have class 0xffff and `Experimenter`
/// headers always do (decode guarantees it; encode trusts it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OxmId {
    Standard(u32),
    Experimenter { header: u32, experimenter: u32 },
}

impl OxmId {
    /// The 32-bit OXM header.
    pub fn header(&self) -> u32 {
        match *self {
            OxmId::Standard(h) | OxmId::Experimenter { header: h, .. } => h,
        }
    }
    pub fn class(&self) -> u16 {
        (self.header() >> 16) as u16
    }
    pub fn field(&self) -> u8 {
        ((self.header() >> 9) & 0x7f) as u8
    }
    pub fn has_mask(&self) -> bool {
        self.header() & 0x100 != 0
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let header = r.u32("table features: oxm id")?;
        if (header >> 16) as u16 == OXM_CLASS_EXPERIMENTER {
            let experimenter = r.u32("table features: oxm experimenter id")?;
            Ok(OxmId::Experimenter {
                header,
                experimenter,
            })
        } else {
            Ok(OxmId::Standard(header))
        }
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        match *self {
            OxmId::Standard(h) => w.put_u32(h),
            OxmId::Experimenter {
                header,
                experimenter,
            } => {
                w.put_u32(header);
                w.put_u32(experimenter);
            }
        }
    }
}

/// One table-feature property. Each spec type pair "X / X_MISS" shares a
/// variant with a `miss` flag: `miss == true` describes the table-miss flow
/// entry, `false` the regular entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableFeatureProp {
    /// OFPTFPT_INSTRUCTIONS(_MISS).
    Instructions { miss: bool, ids: Vec<InstructionId> },
    /// OFPTFPT_NEXT_TABLES(_MISS): tables reachable by goto-table.
    NextTables { miss: bool, tables: Vec<u8> },
    /// OFPTFPT_WRITE_ACTIONS(_MISS).
    WriteActions { miss: bool, ids: Vec<ActionId> },
    /// OFPTFPT_APPLY_ACTIONS(_MISS).
    ApplyActions { miss: bool, ids: Vec<ActionId> },
    /// OFPTFPT_MATCH: fields the table can match on.
    Match(Vec<OxmId>),
    /// OFPTFPT_WILDCARDS: fields that may be wildcarded.
    Wildcards(Vec<OxmId>),
    /// OFPTFPT_WRITE_SETFIELD(_MISS).
    WriteSetfield { miss: bool, ids: Vec<OxmId> },
    /// OFPTFPT_APPLY_SETFIELD(_MISS).
    ApplySetfield { miss: bool, ids: Vec<OxmId> },
    /// OFPTFPT_EXPERIMENTER(_MISS).
    Experimenter {
        miss: bool,
        experimenter: u32,
        exp_type: u32,
        data: Vec<u32>,
    },
}

impl TableFeatureProp {
    /// The OFPTFPT_* wire type.
    pub fn prop_type(&self) -> u16 {
        use prop_type as t;
        let pick = |miss: bool, hit: u16, m: u16| if miss { m } else { hit };
        match self {
            TableFeatureProp::Instructions { miss, .. } => {
                pick(*miss, t::INSTRUCTIONS, t::INSTRUCTIONS_MISS)
            }
            TableFeatureProp::NextTables { miss, .. } => {
                pick(*miss, t::NEXT_TABLES, t::NEXT_TABLES_MISS)
            }
            TableFeatureProp::WriteActions { miss, .. } => {
                pick(*miss, t::WRITE_ACTIONS, t::WRITE_ACTIONS_MISS)
            }
            TableFeatureProp::ApplyActions { miss, .. } => {
                pick(*miss, t::APPLY_ACTIONS, t::APPLY_ACTIONS_MISS)
            }
            TableFeatureProp::Match(_) => t::MATCH,
            TableFeatureProp::Wildcards(_) => t::WILDCARDS,
            TableFeatureProp::WriteSetfield { miss, .. } => {
                pick(*miss, t::WRITE_SETFIELD, t::WRITE_SETFIELD_MISS)
            }
            TableFeatureProp::ApplySetfield { miss, .. } => {
                pick(*miss, t::APPLY_SETFIELD, t::APPLY_SETFIELD_MISS)
            }
            TableFeatureProp::Experimenter { miss, .. } => {
                pick(*miss, t::EXPERIMENTER, t::EXPERIMENTER_MISS)
            }
        }
    }

    /// Decode one property and the padding after it.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use prop_type as t;
        if r.remaining() < 4 {
            return Err(tff_len("table features: property header"));
        }
        let typ = r.peek_u16("table features: property type")?;
        let len = r.peek_u16_at(2, "table features: property length")? as usize;
        if len < 4 {
            return Err(tff_len("table features: property length below 4"));
        }
        let padded = len + padding_to_8(len);
        if padded > r.remaining() {
            return Err(tff_len("table features: property overruns its table"));
        }
        let mut p = r.sub_with(len, TFF_BAD_LEN, "table features: property")?;
        r.pad(padded - len)?;
        p.pad(4)?;
        let miss = typ & 1 == 1;
        let prop = match typ {
            t::INSTRUCTIONS | t::INSTRUCTIONS_MISS => TableFeatureProp::Instructions {
                miss,
                ids: list(&mut p, InstructionId::decode)?,
            },
            t::NEXT_TABLES | t::NEXT_TABLES_MISS => TableFeatureProp::NextTables {
                miss,
                tables: p.rest().to_vec(),
            },
            t::WRITE_ACTIONS | t::WRITE_ACTIONS_MISS => TableFeatureProp::WriteActions {
                miss,
                ids: list(&mut p, ActionId::decode)?,
            },
            t::APPLY_ACTIONS | t::APPLY_ACTIONS_MISS => TableFeatureProp::ApplyActions {
                miss,
                ids: list(&mut p, ActionId::decode)?,
            },
            t::MATCH => TableFeatureProp::Match(list(&mut p, OxmId::decode)?),
            t::WILDCARDS => TableFeatureProp::Wildcards(list(&mut p, OxmId::decode)?),
            t::WRITE_SETFIELD | t::WRITE_SETFIELD_MISS => TableFeatureProp::WriteSetfield {
                miss,
                ids: list(&mut p, OxmId::decode)?,
            },
            t::APPLY_SETFIELD | t::APPLY_SETFIELD_MISS => TableFeatureProp::ApplySetfield {
                miss,
                ids: list(&mut p, OxmId::decode)?,
            },
            t::EXPERIMENTER | t::EXPERIMENTER_MISS => {
                let experimenter = p.u32("table features: experimenter")?;
                let exp_type = p.u32("table features: exp_type")?;
                if !p.remaining().is_multiple_of(4) {
                    return Err(tff_len("table features: experimenter data"));
                }
                TableFeatureProp::Experimenter {
                    miss,
                    experimenter,
                    exp_type,
                    data: list(&mut p, |r| r.u32("table features: experimenter data"))?,
                }
            }
            _ => {
                return Err(tff(
                    TableFeaturesFailedCode::BadType,
                    "table features: unknown property type",
                ))
            }
        };
        Ok(prop)
    }

    /// Encode the property followed by its padding to 8 bytes.
    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(self.prop_type());
        w.put_u16(0);
        match self {
            TableFeatureProp::Instructions { ids, .. } => ids.iter().for_each(|i| i.encode(w)),
            TableFeatureProp::NextTables { tables, .. } => w.put_bytes(tables),
            TableFeatureProp::WriteActions { ids, .. }
            | TableFeatureProp::ApplyActions { ids, .. } => ids.iter().for_each(|a| a.encode(w)),
            TableFeatureProp::Match(ids)
            | TableFeatureProp::Wildcards(ids)
            | TableFeatureProp::WriteSetfield { ids, .. }
            | TableFeatureProp::ApplySetfield { ids, .. } => ids.iter().for_each(|o| o.encode(w)),
            TableFeatureProp::Experimenter {
                experimenter,
                exp_type,
                data,
                ..
            } => {
                w.put_u32(*experimenter);
                w.put_u32(*exp_type);
                data.iter().for_each(|d| w.put_u32(*d));
            }
        }
        let len = w.len() - start;
        w.patch_u16(start + 2, len as u16);
        w.pad_to_8(start);
    }
}

/// Decode elements with `f` until `r` is exhausted.
fn list<'a, T>(
    r: &mut Reader<'a>,
    f: impl Fn(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(f(r)?);
    }
    Ok(v)
}

/// `ofp_table_features`: what one flow table can do (reply) or should be
/// configured to do (request).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableFeatures {
    pub table_id: u8,
    /// At most 31 bytes on the wire.
    pub name: String,
    /// Bits of metadata the table can match on.
    pub metadata_match: u64,
    /// Bits of metadata the table can write.
    pub metadata_write: u64,
    /// OFPTC_* bits (deprecated in 1.3; kept raw).
    pub config: u32,
    pub max_entries: u32,
    pub properties: Vec<TableFeatureProp>,
}

impl TableFeatures {
    /// Decode one `ofp_table_features`, properties included.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if r.remaining() < TABLE_FEATURES_LEN {
            return Err(tff_len("table features: short structure"));
        }
        let len = r.peek_u16("table features: length")? as usize;
        if len < TABLE_FEATURES_LEN || !len.is_multiple_of(8) || len > r.remaining() {
            return Err(tff_len("table features: bad length"));
        }
        let mut t = r.sub_with(len, TFF_BAD_LEN, "table features")?;
        t.pad(2)?;
        let table_id = t.u8("table features: table_id")?;
        if table_id == OFPTT_ALL {
            return Err(tff(
                TableFeaturesFailedCode::BadTable,
                "table features: table id 0xff",
            ));
        }
        t.pad(5)?;
        let name = get_fixed_str(&mut t, MAX_TABLE_NAME_LEN, "table features: name")?;
        let metadata_match = t.u64("table features: metadata_match")?;
        let metadata_write = t.u64("table features: metadata_write")?;
        let config = t.u32("table features: config")?;
        let max_entries = t.u32("table features: max_entries")?;
        let properties = list(&mut t, TableFeatureProp::decode)?;
        Ok(TableFeatures {
            table_id,
            name,
            metadata_match,
            metadata_write,
            config,
            max_entries,
            properties,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_u8(self.table_id);
        w.put_zeros(5);
        put_fixed_str(w, &self.name, MAX_TABLE_NAME_LEN);
        w.put_u64(self.metadata_match);
        w.put_u64(self.metadata_write);
        w.put_u32(self.config);
        w.put_u32(self.max_entries);
        for p in &self.properties {
            p.encode(w);
        }
        let len = w.len() - start;
        w.patch_u16(start, len as u16);
    }
}

/// Decode `ofp_table_features` structures until `r` is exhausted.
pub fn decode_table_features(r: &mut Reader<'_>) -> Result<Vec<TableFeatures>, DecodeError> {
    list(r, TableFeatures::decode)
}

#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn instruction_id() -> impl Strategy<Value = InstructionId> {
        prop_oneof![
            (0u16..0xffff).prop_map(InstructionId::Standard),
            any::<u32>().prop_map(InstructionId::Experimenter),
        ]
    }

    fn action_id() -> impl Strategy<Value = ActionId> {
        prop_oneof![
            (0u16..0xffff).prop_map(ActionId::Standard),
            any::<u32>().prop_map(ActionId::Experimenter),
        ]
    }

    fn oxm_id() -> impl Strategy<Value = OxmId> {
        prop_oneof![
            (0u32..0xffff_0000).prop_map(OxmId::Standard),
            (any::<u16>(), any::<u32>()).prop_map(|(low, experimenter)| OxmId::Experimenter {
                header: 0xffff_0000 | u32::from(low),
                experimenter,
            }),
        ]
    }

    pub fn any_table_feature_prop() -> impl Strategy<Value = TableFeatureProp> {
        prop_oneof![
            (any::<bool>(), vec(instruction_id(), 0..6))
                .prop_map(|(miss, ids)| TableFeatureProp::Instructions { miss, ids }),
            (any::<bool>(), vec(0u8..0xff, 0..10))
                .prop_map(|(miss, tables)| TableFeatureProp::NextTables { miss, tables }),
            (any::<bool>(), vec(action_id(), 0..6))
                .prop_map(|(miss, ids)| TableFeatureProp::WriteActions { miss, ids }),
            (any::<bool>(), vec(action_id(), 0..6))
                .prop_map(|(miss, ids)| TableFeatureProp::ApplyActions { miss, ids }),
            vec(oxm_id(), 0..6).prop_map(TableFeatureProp::Match),
            vec(oxm_id(), 0..6).prop_map(TableFeatureProp::Wildcards),
            (any::<bool>(), vec(oxm_id(), 0..6))
                .prop_map(|(miss, ids)| TableFeatureProp::WriteSetfield { miss, ids }),
            (any::<bool>(), vec(oxm_id(), 0..6))
                .prop_map(|(miss, ids)| TableFeatureProp::ApplySetfield { miss, ids }),
            (
                any::<bool>(),
                any::<u32>(),
                any::<u32>(),
                vec(any::<u32>(), 0..4)
            )
                .prop_map(|(miss, experimenter, exp_type, data)| {
                    TableFeatureProp::Experimenter {
                        miss,
                        experimenter,
                        exp_type,
                        data,
                    }
                }),
        ]
    }

    pub fn any_table_features() -> impl Strategy<Value = TableFeatures> {
        (
            0u8..0xff,
            "[a-zA-Z0-9 _-]{0,31}",
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            any::<u32>(),
            vec(any_table_feature_prop(), 0..5),
        )
            .prop_map(
                |(
                    table_id,
                    name,
                    metadata_match,
                    metadata_write,
                    config,
                    max_entries,
                    properties,
                )| TableFeatures {
                    table_id,
                    name,
                    metadata_match,
                    metadata_write,
                    config,
                    max_entries,
                    properties,
                },
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{BadRequestCode, ErrorCode};
    use proptest::prelude::*;

    fn decode(b: &[u8]) -> Result<Vec<TableFeatures>, DecodeError> {
        decode_table_features(&mut Reader::message(b))
    }

    fn code(e: DecodeError) -> ErrorCode {
        e.code
    }

    /// Fixed part of a table features structure for table 1 named "t1",
    /// with the given total length.
    fn fixed(len: u16, table_id: u8) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&len.to_be_bytes());
        b.push(table_id);
        b.extend_from_slice(&[0; 5]);
        let mut name = [0u8; 32];
        name[..2].copy_from_slice(b"t1");
        b.extend_from_slice(&name);
        b.extend_from_slice(&0xffff_ffff_ffff_ffffu64.to_be_bytes()); // metadata_match
        b.extend_from_slice(&0x0000_0000_0000_00ffu64.to_be_bytes()); // metadata_write
        b.extend_from_slice(&3u32.to_be_bytes()); // config
        b.extend_from_slice(&1000u32.to_be_bytes()); // max_entries
        b
    }

    /// Every property type once, bytes written by hand from the spec.
    #[rustfmt::skip]
    const PROPS: &[u8] = &[
        // INSTRUCTIONS: goto_table(1), apply_actions(4), experimenter 0x2320 -> len 4+4+4+8 = 20, pad 4
        0x00, 0x00, 0x00, 0x14,
        0x00, 0x01, 0x00, 0x04,  0x00, 0x04, 0x00, 0x04,  0xff, 0xff, 0x00, 0x08, 0x00, 0x00, 0x23, 0x20,
        0, 0, 0, 0,
        // INSTRUCTIONS_MISS: empty -> len 4, pad 4
        0x00, 0x01, 0x00, 0x04, 0, 0, 0, 0,
        // NEXT_TABLES: 2, 3, 4 -> len 7, pad 1
        0x00, 0x02, 0x00, 0x07, 2, 3, 4, 0,
        // NEXT_TABLES_MISS: 9 -> len 5, pad 3
        0x00, 0x03, 0x00, 0x05, 9, 0, 0, 0,
        // WRITE_ACTIONS: output(0) -> len 8
        0x00, 0x04, 0x00, 0x08, 0x00, 0x00, 0x00, 0x04,
        // WRITE_ACTIONS_MISS: group(22) -> len 8
        0x00, 0x05, 0x00, 0x08, 0x00, 0x16, 0x00, 0x04,
        // APPLY_ACTIONS: set_field(25), experimenter 0x00d0f0 -> len 16
        0x00, 0x06, 0x00, 0x10, 0x00, 0x19, 0x00, 0x04, 0xff, 0xff, 0x00, 0x08, 0x00, 0xd0, 0xf0, 0x00,
        // APPLY_ACTIONS_MISS: empty
        0x00, 0x07, 0x00, 0x04, 0, 0, 0, 0,
        // MATCH: in_port (0x80000004), eth_dst/mask (0x8000070c) -> len 12, pad 4
        0x00, 0x08, 0x00, 0x0c, 0x80, 0x00, 0x00, 0x04, 0x80, 0x00, 0x07, 0x0c, 0, 0, 0, 0,
        // WILDCARDS: eth_dst (0x80000606) -> len 8
        0x00, 0x0a, 0x00, 0x08, 0x80, 0x00, 0x06, 0x06,
        // WRITE_SETFIELD: experimenter oxm 0xffff0204 + exp id 0x4f4e4600 -> len 12, pad 4
        0x00, 0x0c, 0x00, 0x0c, 0xff, 0xff, 0x02, 0x04, 0x4f, 0x4e, 0x46, 0x00, 0, 0, 0, 0,
        // WRITE_SETFIELD_MISS: vlan_vid (0x80000c02) -> len 8
        0x00, 0x0d, 0x00, 0x08, 0x80, 0x00, 0x0c, 0x02,
        // APPLY_SETFIELD: ip_dscp (0x80001001) -> len 8
        0x00, 0x0e, 0x00, 0x08, 0x80, 0x00, 0x10, 0x01,
        // APPLY_SETFIELD_MISS: empty
        0x00, 0x0f, 0x00, 0x04, 0, 0, 0, 0,
        // EXPERIMENTER: exp 0x2320, exp_type 7, data [1] -> len 16
        0xff, 0xfe, 0x00, 0x10, 0x00, 0x00, 0x23, 0x20, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01,
        // EXPERIMENTER_MISS: exp 1, exp_type 2, no data -> len 12, pad 4
        0xff, 0xff, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0, 0, 0, 0,
    ];

    fn all_props() -> Vec<TableFeatureProp> {
        use TableFeatureProp as P;
        vec![
            P::Instructions {
                miss: false,
                ids: vec![
                    InstructionId::Standard(1),
                    InstructionId::Standard(4),
                    InstructionId::Experimenter(0x2320),
                ],
            },
            P::Instructions {
                miss: true,
                ids: vec![],
            },
            P::NextTables {
                miss: false,
                tables: vec![2, 3, 4],
            },
            P::NextTables {
                miss: true,
                tables: vec![9],
            },
            P::WriteActions {
                miss: false,
                ids: vec![ActionId::Standard(0)],
            },
            P::WriteActions {
                miss: true,
                ids: vec![ActionId::Standard(22)],
            },
            P::ApplyActions {
                miss: false,
                ids: vec![ActionId::Standard(25), ActionId::Experimenter(0x00d0f000)],
            },
            P::ApplyActions {
                miss: true,
                ids: vec![],
            },
            P::Match(vec![
                OxmId::Standard(0x8000_0004),
                OxmId::Standard(0x8000_070c),
            ]),
            P::Wildcards(vec![OxmId::Standard(0x8000_0606)]),
            P::WriteSetfield {
                miss: false,
                ids: vec![OxmId::Experimenter {
                    header: 0xffff_0204,
                    experimenter: 0x4f4e_4600,
                }],
            },
            P::WriteSetfield {
                miss: true,
                ids: vec![OxmId::Standard(0x8000_0c02)],
            },
            P::ApplySetfield {
                miss: false,
                ids: vec![OxmId::Standard(0x8000_1001)],
            },
            P::ApplySetfield {
                miss: true,
                ids: vec![],
            },
            P::Experimenter {
                miss: false,
                experimenter: 0x2320,
                exp_type: 7,
                data: vec![1],
            },
            P::Experimenter {
                miss: true,
                experimenter: 1,
                exp_type: 2,
                data: vec![],
            },
        ]
    }

    fn full_bytes() -> Vec<u8> {
        let mut b = fixed((64 + PROPS.len()) as u16, 1);
        b.extend_from_slice(PROPS);
        b
    }

    fn full_value() -> TableFeatures {
        TableFeatures {
            table_id: 1,
            name: "t1".into(),
            metadata_match: u64::MAX,
            metadata_write: 0xff,
            config: 3,
            max_entries: 1000,
            properties: all_props(),
        }
    }

    #[test]
    fn every_property_type_both_directions() {
        let b = full_bytes();
        assert_eq!(decode(&b).unwrap(), vec![full_value()]);
        let mut w = Vec::new();
        full_value().encode(&mut w);
        assert_eq!(w, b);
    }

    #[test]
    fn oxm_id_accessors() {
        let o = OxmId::Standard(0x8000_070c);
        assert_eq!(o.class(), 0x8000);
        assert_eq!(o.field(), 3);
        assert!(o.has_mask());
        assert!(!OxmId::Standard(0x8000_0606).has_mask());
    }

    #[test]
    fn matches_os_ken_serializer() {
        // os_ken OFPTableFeaturesStats(table_id=0, name=b"x", metadata_match=1,
        // metadata_write=2, config=0, max_entries=16, properties=[
        //   OFPTableFeaturePropInstructions(type_=0, instruction_ids=[OFPInstructionId(1)]),
        //   OFPTableFeaturePropNextTables(type_=2, table_ids=[1, 2]),
        //   OFPTableFeaturePropActions(type_=6, action_ids=[OFPActionId(0)]),
        //   OFPTableFeaturePropOxm(type_=8, oxm_ids=[OFPOxmId('in_port')])]).serialize()
        let hex = "006000000000000078000000000000000000000000000000000000000000000000000000\
                   000000000000000000000001000000000000000200000000000000100000000800010004\
                   000200060102000000060008000000040008000880000000";
        let b = hex::decode(hex.replace(' ', "")).unwrap();
        let expect = TableFeatures {
            table_id: 0,
            name: "x".into(),
            metadata_match: 1,
            metadata_write: 2,
            config: 0,
            max_entries: 16,
            properties: vec![
                TableFeatureProp::Instructions {
                    miss: false,
                    ids: vec![InstructionId::Standard(1)],
                },
                TableFeatureProp::NextTables {
                    miss: false,
                    tables: vec![1, 2],
                },
                TableFeatureProp::ApplyActions {
                    miss: false,
                    ids: vec![ActionId::Standard(0)],
                },
                // os-ken writes oxm_length 0 in ids
                TableFeatureProp::Match(vec![OxmId::Standard(0x8000_0000)]),
            ],
        };
        assert_eq!(decode(&b).unwrap(), vec![expect.clone()]);
        let mut w = Vec::new();
        expect.encode(&mut w);
        assert_eq!(w, b);
    }

    #[test]
    fn padded_standard_ids_are_accepted() {
        // an action id with len 8 (ofp_action_header with its pad)
        let mut b = fixed(64 + 16, 2);
        b.extend_from_slice(&[0, 6, 0, 12, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
        let t = decode(&b).unwrap();
        assert_eq!(
            t[0].properties,
            vec![TableFeatureProp::ApplyActions {
                miss: false,
                ids: vec![ActionId::Standard(0)]
            }]
        );
    }

    #[test]
    fn empty_list() {
        assert_eq!(decode(&[]).unwrap(), vec![]);
    }

    #[test]
    fn error_bad_type() {
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 9, 0, 4, 0, 0, 0, 0]); // type 9 is not defined
        assert_eq!(
            code(decode(&b).unwrap_err()),
            ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadType)
        );
    }

    #[test]
    fn error_bad_table() {
        let b = fixed(64, 0xff);
        assert_eq!(
            code(decode(&b).unwrap_err()),
            ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadTable)
        );
    }

    #[test]
    fn error_bad_len() {
        let bad_len = ErrorCode::TableFeaturesFailed(TableFeaturesFailedCode::BadLen);
        // property length below 4
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 0]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // property running past the structure (its padding missing)
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 2, 0, 9, 1, 2, 3, 4]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // truncated instruction id
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 0, 0, 6, 0, 1, 0, 0]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // instruction id with len below 4
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 0, 0, 8, 0, 1, 0, 2]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // experimenter instruction id with len 4
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 0, 0, 8, 0xff, 0xff, 0, 4]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // OXM list not a multiple of 4
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 8, 0, 6, 0x80, 0, 0, 0]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // experimenter OXM id missing its experimenter
        let mut b = fixed(72, 1);
        b.extend_from_slice(&[0, 8, 0, 8, 0xff, 0xff, 0, 0]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // experimenter property with data not in u32 units
        let mut b = fixed(80, 1);
        b.extend_from_slice(&[0xff, 0xfe, 0, 14, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // structure length: below 64, not a multiple of 8, longer than the input
        for len in [56u16, 68, 72] {
            let b = fixed(len, 1);
            assert_eq!(code(decode(&b).unwrap_err()), bad_len, "len {len}");
        }
        // trailing garbage shorter than a structure
        let mut b = fixed(64, 1);
        b.extend_from_slice(&[0; 8]);
        assert_eq!(code(decode(&b).unwrap_err()), bad_len);
        // not BAD_REQUEST: table features report their own length errors
        assert_ne!(bad_len, ErrorCode::BadRequest(BadRequestCode::BadLen));
    }

    proptest! {
        #[test]
        fn round_trip(t in arb::any_table_features()) {
            let mut w = Vec::new();
            t.encode(&mut w);
            prop_assert_eq!(w.len() % 8, 0);
            prop_assert_eq!(decode(&w).unwrap(), vec![t]);
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode(&b);
        }

        #[test]
        fn mutated_valid_input_never_panics(i in 0usize..400, v in any::<u8>()) {
            let mut b = full_bytes();
            let n = b.len();
            b[i % n] = v;
            let _ = decode(&b);
        }
    }
}
