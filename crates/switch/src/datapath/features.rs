//! What the datapath supports, as the feature multiparts describe it
//! (OFPMP_TABLE_FEATURES, OFPMP_GROUP_FEATURES, OFPMP_METER_FEATURES).
//!
//! Everything is derived from what the code really does rather than
//! written down separately: the match fields are the OXM fields the packet
//! parser extracts (`packet::Field`), the set-fields those
//! `packet::SetField` can rewrite, and the action / instruction lists are
//! the ones the pipeline executes. Every table is the same: any field may
//! be matched (with a mask where OXM allows one) or wildcarded, every
//! instruction is allowed, `goto_table` may go to any higher table, all 64
//! metadata bits can be matched and written, and a table has no fixed size
//! (reported as `u32::MAX` entries).

use ofp::action::action_type as at;
use ofp::instruction::instruction_type as it;
use ofp::multipart::{GroupFeatures, MeterFeatures};
use ofp::oxm::{class as oxm_class, field, oxm_header};
use ofp::table_features::{ActionId, InstructionId, OxmId, TableFeatureProp, TableFeatures};

/// Every action type the pipeline executes (group buckets included).
pub const ACTIONS: [u16; 16] = [
    at::OUTPUT,
    at::COPY_TTL_OUT,
    at::COPY_TTL_IN,
    at::SET_MPLS_TTL,
    at::DEC_MPLS_TTL,
    at::PUSH_VLAN,
    at::POP_VLAN,
    at::PUSH_MPLS,
    at::POP_MPLS,
    at::SET_QUEUE,
    at::GROUP,
    at::SET_NW_TTL,
    at::DEC_NW_TTL,
    at::SET_FIELD,
    at::PUSH_PBB,
    at::POP_PBB,
];

const INSTRUCTIONS: [u16; 6] = [
    it::GOTO_TABLE,
    it::WRITE_METADATA,
    it::WRITE_ACTIONS,
    it::APPLY_ACTIONS,
    it::CLEAR_ACTIONS,
    it::METER,
];

fn action_ids() -> Vec<ActionId> {
    ACTIONS.iter().map(|a| ActionId::Standard(*a)).collect()
}

/// `1 << OFPAT_*` of every supported action (group features).
fn action_bitmap() -> u32 {
    ACTIONS.iter().fold(0, |m, a| m | (1u32 << a))
}

/// OXM field ids the parser extracts (matchable).
fn matchable() -> Vec<u8> {
    (0..field::COUNT)
        .filter(|id| field::info(*id).is_some() && packet::Field::from_u8(*id).is_some())
        .collect()
}

/// OXM field ids a set-field action can rewrite.
fn settable() -> Vec<u8> {
    matchable()
        .into_iter()
        .filter(|id| {
            packet::Field::from_u8(*id)
                .is_some_and(|f| packet::SetField::from_value(f, &vec![0u8; f.width()]).is_some())
        })
        .collect()
}

fn oxm_ids(ids: &[u8], with_mask: bool) -> Vec<OxmId> {
    ids.iter()
        .filter_map(|id| {
            let info = field::info(*id)?;
            let mask = with_mask && info.maskable;
            let len = if mask { info.len * 2 } else { info.len };
            Some(OxmId::Standard(oxm_header(
                oxm_class::OPENFLOW_BASIC,
                *id,
                mask,
                len as u8,
            )))
        })
        .collect()
}

/// The features of table `id` of a pipeline with `n_tables` tables.
pub fn table_features(id: u8, n_tables: usize) -> TableFeatures {
    let insts: Vec<InstructionId> = INSTRUCTIONS
        .iter()
        .filter(|i| **i != it::GOTO_TABLE || usize::from(id) + 1 < n_tables)
        .map(|i| InstructionId::Standard(*i))
        .collect();
    let next: Vec<u8> = (u16::from(id) + 1..n_tables.min(255) as u16)
        .map(|t| t as u8)
        .collect();
    let m = matchable();
    let s = settable();
    let mut properties = Vec::new();
    for miss in [false, true] {
        properties.push(TableFeatureProp::Instructions {
            miss,
            ids: insts.clone(),
        });
        properties.push(TableFeatureProp::NextTables {
            miss,
            tables: next.clone(),
        });
        properties.push(TableFeatureProp::WriteActions {
            miss,
            ids: action_ids(),
        });
        properties.push(TableFeatureProp::ApplyActions {
            miss,
            ids: action_ids(),
        });
        properties.push(TableFeatureProp::WriteSetfield {
            miss,
            ids: oxm_ids(&s, false),
        });
        properties.push(TableFeatureProp::ApplySetfield {
            miss,
            ids: oxm_ids(&s, false),
        });
    }
    properties.push(TableFeatureProp::Match(oxm_ids(&m, true)));
    properties.push(TableFeatureProp::Wildcards(oxm_ids(&m, false)));
    TableFeatures {
        table_id: id,
        name: format!("table{id}"),
        metadata_match: u64::MAX,
        metadata_write: u64::MAX,
        config: 0,
        max_entries: u32::MAX,
        properties,
    }
}

/// OFPMP_GROUP_FEATURES: all four types, weights, liveness and chaining
/// (with loop checks), no fixed limit on the number of groups.
pub fn group_features() -> GroupFeatures {
    use ofp::group::group_type as gt;
    const SELECT_WEIGHT: u32 = 1 << 0;
    const SELECT_LIVENESS: u32 = 1 << 1;
    const CHAINING: u32 = 1 << 2;
    const CHAINING_CHECKS: u32 = 1 << 3;
    let types = [gt::ALL, gt::SELECT, gt::INDIRECT, gt::FF]
        .iter()
        .fold(0u32, |m, t| m | (1 << t));
    GroupFeatures {
        types,
        capabilities: SELECT_WEIGHT | SELECT_LIVENESS | CHAINING | CHAINING_CHECKS,
        max_groups: [ofp::group::group_id::MAX; 4],
        actions: [action_bitmap(); 4],
    }
}

/// OFPMP_METER_FEATURES: drop and DSCP-remark bands, kbps / pktps, burst
/// and stats, any number of meters and bands.
pub fn meter_features() -> MeterFeatures {
    use ofp::meter::{band_type, flags};
    MeterFeatures {
        max_meter: ofp::meter::meter_id::MAX,
        band_types: (1 << band_type::DROP) | (1 << band_type::DSCP_REMARK),
        capabilities: u32::from(flags::KBPS | flags::PKTPS | flags::BURST | flags::STATS),
        max_bands: u8::MAX,
        max_color: 0,
    }
}
