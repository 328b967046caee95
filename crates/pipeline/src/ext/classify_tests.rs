//! Extension fields through the classifiers (`crate::ext`): a table's
//! lookup with the extension values written into the key gives the entry
//! a priority-order scan finds with the extension match read apart from
//! the key (`ExtMatch::matches`, the definition), whatever structure the
//! table picked (linear, exact hash, tuple space).

use crate::ext::api::ExtValues;
use crate::matcher::CompiledMatch;
use crate::table::{FlowEntry, FlowTable};
use ofp::beba::BebaField;
use ofp::oxm::{Match, OxmField};
use packet::{Field, FlowKey};
use proptest::prelude::*;

/// One random entry: in_port (exact, maybe), state and global_state
/// (value, mask; maybe; BEBA's key slots 0 and 1), priority.
type Spec = (Option<u32>, Option<(u32, u32)>, Option<(u32, u32)>, u16);

fn compile(s: &Spec) -> CompiledMatch {
    let (port, state, global, _) = *s;
    let mask = |m: u32| (m != u32::MAX).then_some(m);
    let fields: Vec<OxmField> = port
        .map(OxmField::InPort)
        .into_iter()
        .chain(state.map(|(v, m)| BebaField::State(v & m, mask(m)).to_oxm()))
        .chain(global.map(|(v, m)| BebaField::GlobalState(v & m, mask(m)).to_oxm()))
        .collect();
    CompiledMatch::compile(&Match::new(fields), &crate::ext::beba_only()).expect("valid match")
}

/// The reference: the first entry in rank order (priority, then
/// installation) whose standard fields match the key and whose extension
/// match holds for `v`.
fn scan(entries: &[(Spec, CompiledMatch)], key: &FlowKey, v: &ExtValues) -> Option<u64> {
    let standard = |c: &CompiledMatch| {
        c.fields()
            .iter()
            .filter(|f| !matches!(f.field, Field::ModState | Field::ModGlobalState))
            .all(|f| key.has(f.field) && crate::matcher::key_bits(key, f.field) & f.mask == f.value)
    };
    entries
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| standard(c) && c.ext().matches(v))
        .max_by_key(|(i, (s, _))| (s.3, std::cmp::Reverse(*i)))
        .map(|(i, _)| i as u64)
}

fn masked() -> impl Strategy<Value = Option<(u32, u32)>> {
    let mask = prop_oneof![Just(u32::MAX), Just(1u32), Just(2), Just(3), Just(0xf0)];
    proptest::option::of((0u32..4, mask))
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        proptest::option::of(1u32..4),
        masked(),
        masked(),
        prop_oneof![Just(0u16), 1u16..4],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn classifier_equals_scan(
        specs in proptest::collection::vec(spec(), 0..40),
        packets in proptest::collection::vec(
            (1u32..4, proptest::option::of(0u32..0x100), proptest::option::of(0u32..4)),
            1..24,
        ),
    ) {
        let mut t = FlowTable::new(0);
        let mut entries: Vec<(Spec, CompiledMatch)> = Vec::new();
        for s in &specs {
            let c = compile(s);
            // An equal match at an equal priority replaces (flow-mod ADD);
            // here the first one stays.
            if t.find_strict(&c, s.3).is_some() {
                continue;
            }
            t.insert(FlowEntry::plain(s.3, c.clone(), entries.len() as u64));
            entries.push((*s, c));
        }
        for (port, state, global) in &packets {
            let v = ExtValues { slots: [*state, *global] };
            let mut key = FlowKey::new(*port);
            v.write(&mut key);
            let found = t
                .lookup(&key)
                .and_then(|p| t.entry(p))
                .map(|e| e.cookie());
            prop_assert_eq!(found, scan(&entries, &key, &v), "{} {:?}", t.classifier_kind(), v);
        }
    }
}

/// The table's lookup structure follows its entries as for standard
/// fields: one shape (in_port + state, MAC learning's) is an exact hash.
#[test]
fn state_entries_of_one_shape_use_the_exact_hash() {
    let mut t = FlowTable::new(0);
    for i in 0..64u32 {
        let s: Spec = (Some(1), Some((i, u32::MAX)), None, 1);
        t.insert(FlowEntry::plain(1, compile(&s), u64::from(i)));
    }
    assert_eq!(t.classifier_kind(), "hash");
    let mut key = FlowKey::new(1);
    ExtValues {
        slots: [Some(42), Some(0)],
    }
    .write(&mut key);
    assert_eq!(
        t.lookup(&key).and_then(|p| t.entry(p)).map(|e| e.cookie()),
        Some(42)
    );
    // No state in this table: the state entries match nothing.
    ExtValues::default().write(&mut key);
    assert_eq!(t.lookup(&key), None);
}
