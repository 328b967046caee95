//! Every structure against a naive reference: random rule sets (random
//! priorities, masks, prefix lengths, overlapping and equal matches),
//! interleaved inserts and deletes, random packets. The reference reads
//! the key through `FlowKey::get` (not the classifiers' `key_bits`) and
//! picks the highest priority, earliest installed among equals.

use super::auto::triples;
use super::lpm::{Lpm, LpmForm};
use super::*;
use crate::matcher::CompiledMatch;
use crate::matcher::FieldMatch;
use crate::table::{FlowEntry, FlowTable};
use packet::FieldSet;
use packet::{Field, FlowKey};
use proptest::prelude::*;

/// The fields the generators use, with a few base values each.
const FIELDS: [(Field, [u128; 3]); 6] = [
    (Field::InPort, [1, 2, 3]),
    (
        Field::EthDst,
        [0x0000_0000_0001, 0x0a00_0000_0002, 0xffff_0000_0003],
    ),
    (Field::EthType, [0x0800, 0x86dd, 0x0806]),
    (Field::Ipv4Dst, [0x0a00_0000, 0x0a01_0200, 0xc0a8_0100]),
    (Field::IpProto, [6, 17, 1]),
    (
        Field::Ipv6Dst,
        [
            0x2001_0db8 << 96,
            (0x2001_0db8 << 96) | (0xab << 64),
            0xfe80 << 112,
        ],
    ),
];

fn full(f: Field) -> u128 {
    let bits = 8 * f.width() as u32;
    if bits >= 128 {
        u128::MAX
    } else {
        (1 << bits) - 1
    }
}

fn prefix(f: Field, len: u32) -> u128 {
    let bits = 8 * f.width() as u32;
    if len == 0 {
        0
    } else if len >= bits {
        full(f)
    } else {
        full(f) & !(full(f) >> len)
    }
}

/// Naive reference match.
fn reference_matches(m: &CompiledMatch, k: &FlowKey) -> bool {
    m.fields().iter().all(|f| match k.get(f.field) {
        Some(v) => v.to_u128() & f.mask == f.value,
        None => false,
    })
}

fn expected(live: &[(Ref, CompiledMatch)], k: &FlowKey) -> Option<Ref> {
    live.iter()
        .filter(|(_, m)| reference_matches(m, k))
        .map(|(r, _)| *r)
        .max_by_key(|r| r.rank)
}

/// One field constraint: field index, base value index, mask kind
/// (0 exact, 1 prefix, 2 arbitrary), prefix length / arbitrary mask bits.
fn field_match() -> impl Strategy<Value = FieldMatch> {
    (
        0usize..FIELDS.len(),
        0usize..3,
        0u8..3,
        0u32..=128,
        any::<u128>(),
    )
        .prop_map(|(fi, vi, kind, len, bits)| {
            let (field, bases) = FIELDS[fi];
            let mask = match kind {
                0 => full(field),
                1 => prefix(field, len % (8 * field.width() as u32 + 1)),
                _ => bits & full(field),
            };
            FieldMatch {
                field,
                value: bases[vi] & mask,
                mask,
            }
        })
}

fn general_match() -> impl Strategy<Value = CompiledMatch> {
    proptest::collection::vec(field_match(), 0..4).prop_map(CompiledMatch::from_fields)
}

/// Routing-table-like matches: context + a prefix of one address field,
/// with now and then a match-everything entry or (if `odd`) another shape.
/// `mode`: 0 = eth_type + ipv4_dst, 1 = in_port + eth_type + ipv4_dst
/// (several contexts), 2 = eth_type + ipv6_dst, 3 = as 1 with up to 39
/// contexts (more than the trie scans: it hashes them).
fn lpm_match(mode: u8, odd: bool) -> impl Strategy<Value = CompiledMatch> {
    (0u8..40, 0usize..3, 0u32..=128, 1u128..4).prop_map(move |(dice, vi, len, port)| {
        if dice == 0 {
            return CompiledMatch::any();
        }
        if odd && dice == 1 {
            return CompiledMatch::from_fields(vec![FieldMatch {
                field: Field::IpProto,
                value: 6,
                mask: 0xff,
            }]);
        }
        let (ty, f) = if mode == 2 {
            (0x86dd, Field::Ipv6Dst)
        } else {
            (0x0800, Field::Ipv4Dst)
        };
        let bases = FIELDS.iter().find(|(g, _)| *g == f).map_or([0; 3], |x| x.1);
        let mask = prefix(f, len % (8 * f.width() as u32 + 1));
        let mut v = vec![
            FieldMatch {
                field: Field::EthType,
                value: ty,
                mask: 0xffff,
            },
            FieldMatch {
                field: f,
                value: bases[vi] & mask,
                mask,
            },
        ];
        if mode == 1 || mode == 3 {
            v.push(FieldMatch {
                field: Field::InPort,
                value: if mode == 3 {
                    port * 10 + dice as u128 % 10
                } else {
                    port
                },
                mask: 0xffff_ffff,
            });
        }
        CompiledMatch::from_fields(v)
    })
}

/// Packets near the base values: each field present or not, the base with
/// some low bits flipped.
fn any_key() -> impl Strategy<Value = FlowKey> {
    proptest::collection::vec((any::<bool>(), 0usize..3, 0u32..=128, any::<u128>()), 6).prop_map(
        |spec| {
            let mut k = FlowKey::new(0);
            k.present = FieldSet::EMPTY;
            for ((field, bases), (present, vi, low, noise)) in FIELDS.iter().zip(spec) {
                if !present && *field != Field::EthType {
                    continue;
                }
                let lowmask = if low >= 128 {
                    u128::MAX
                } else {
                    (1 << low) - 1
                };
                let v = (bases[vi] ^ (noise & lowmask)) & full(*field);
                set(&mut k, *field, v);
            }
            k
        },
    )
}

/// Packets at the base values with the 3 low bits varied (every field
/// present 9 times out of 10).
fn near_key() -> impl Strategy<Value = FlowKey> {
    proptest::collection::vec((0u8..10, 0usize..3, 0u128..8), 6).prop_map(|spec| {
        let mut k = FlowKey::new(0);
        k.present = FieldSet::EMPTY;
        for ((field, bases), (dice, vi, noise)) in FIELDS.iter().zip(spec) {
            if dice > 0 {
                set(&mut k, *field, (bases[vi] ^ noise) & full(*field));
            }
        }
        k
    })
}

fn set(k: &mut FlowKey, f: Field, v: u128) {
    k.present.insert(f);
    match f {
        Field::InPort => k.in_port = v as u32,
        Field::EthDst => {
            let b = v.to_be_bytes();
            k.eth_dst.copy_from_slice(&b[10..16]);
        }
        Field::EthType => k.eth_type = v as u16,
        Field::Ipv4Dst => k.ipv4_dst = v as u32,
        Field::Ipv4Src => k.ipv4_src = v as u32,
        Field::IpProto => k.ip_proto = v as u8,
        Field::Ipv6Dst => k.ipv6_dst = v,
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u16, CompiledMatch),
    /// Removes the live entry at this index (modulo the count).
    Del(usize),
}

fn ops(m: impl Strategy<Value = CompiledMatch>, prios: u16) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (0..prios, m).prop_map(|(p, m)| Op::Add(p, m)),
        1 => any::<usize>().prop_map(Op::Del),
    ];
    proptest::collection::vec(op, 0..60)
}

/// A plugged structure for the checks below: the entries in a map by
/// rank, scanned from the best (`plugged::LookupStructure`).
#[derive(Clone, Default)]
struct ByRank(std::collections::BTreeMap<Rank, (Ref, CompiledMatch)>);

impl plugged::LookupStructure for ByRank {
    fn name(&self) -> &'static str {
        "by_rank"
    }
    fn insert(&mut self, r: Ref, m: &CompiledMatch) {
        self.0.insert(r.rank, (r, m.clone()));
    }
    fn remove(&mut self, r: Ref, _m: &CompiledMatch) {
        self.0.remove(&r.rank);
    }
    fn lookup(&self, key: &FlowKey) -> Option<Ref> {
        let mut best = self.0.values().rev();
        best.find(|(_, m)| fields::matches_fields(m, key))
            .map(|(r, _)| *r)
    }
    fn fresh(&self) -> Box<dyn LookupStructure> {
        Box::new(ByRank::default())
    }
    fn clone_box(&self) -> Box<dyn LookupStructure> {
        Box::new(self.clone())
    }
}

/// Runs `ops` on every structure and checks each against the reference
/// after every step.
fn check_structures(ops: &[Op], keys: &[FlowKey]) -> Result<(), TestCaseError> {
    let mut auto = Auto::default();
    // The same entries with the exact index and the LPM trie turned off
    // and on again now and then (`set_exact_index`, `set_lpm_index`): the
    // same answers throughout.
    let mut toggled = Auto::default();
    toggled.set_exact_index(false);
    toggled.set_lpm_index(false);
    let mut tss = tss::Tss::default();
    let mut lin = linear::Linear::default();
    // A plugged structure from the start, and one plugged in half-way
    // (filled from the entries then) and taken out again near the end.
    let mut plugged = Auto::default();
    plugged.set_plugged(Some(Box::new(ByRank::default())));
    let mut late = Auto::default();
    let mut live: Vec<(Ref, CompiledMatch)> = Vec::new();
    for (seq, op) in ops.iter().enumerate() {
        if seq == ops.len() / 2 {
            late.set_plugged(Some(Box::new(ByRank::default())));
        }
        if seq == ops.len() * 7 / 8 {
            late.set_plugged(None);
        }
        if seq % 5 == 4 {
            toggled.set_exact_index(!toggled.exact_on);
        }
        if seq % 7 == 6 {
            toggled.set_lpm_index(!toggled.lpm_on);
        }
        match op {
            Op::Add(p, m) => {
                let r = Ref {
                    rank: Rank::new(*p, seq as u64),
                    handle: seq as u32,
                };
                auto.insert(r, m);
                toggled.insert(r, m);
                plugged.insert(r, m);
                late.insert(r, m);
                tss.insert(r, m, false);
                lin.insert(r, m);
                live.push((r, m.clone()));
            }
            Op::Del(i) => {
                if live.is_empty() {
                    continue;
                }
                let (r, m) = live.remove(i % live.len());
                prop_assert!(auto.remove(r, &m));
                prop_assert!(toggled.remove(r, &m));
                prop_assert!(plugged.remove(r, &m));
                prop_assert!(late.remove(r, &m));
                prop_assert!(tss.remove(r, &m).is_some());
                prop_assert!(lin.remove(r));
            }
        }
        for k in keys {
            let want = expected(&live, k);
            prop_assert_eq!(
                auto.lookup(k),
                want.map(|r| r.handle),
                "auto ({:?})",
                auto.kind()
            );
            prop_assert_eq!(
                toggled.lookup(k),
                want.map(|r| r.handle),
                "exact index on: {}, trie on: {} ({:?})",
                toggled.exact_on,
                toggled.lpm_on,
                toggled.kind()
            );
            prop_assert_eq!(plugged.lookup(k), want.map(|r| r.handle), "plugged");
            prop_assert_eq!(plugged.kind_name(), "by_rank");
            prop_assert_eq!(late.lookup(k), want.map(|r| r.handle), "late plugged");
            prop_assert_eq!(tss.lookup(k), want, "tss");
            prop_assert_eq!(lin.lookup(k), want, "linear");
        }
        // The batched lookup agrees, every other key left out.
        for chunk in keys.chunks(crate::chunk::CHUNK) {
            let at: Vec<u8> = (0..chunk.len() as u8).filter(|i| i % 2 == 0).collect();
            let mut out = vec![Some(u32::MAX); at.len()];
            auto.lookup_many(chunk, &at, &mut out);
            let mut out_plugged = vec![Some(u32::MAX); at.len()];
            plugged.lookup_many(chunk, &at, &mut out_plugged);
            prop_assert_eq!(&out_plugged, &out, "plugged lookup_many");
            for (j, &i) in at.iter().enumerate() {
                let want = expected(&live, &chunk[usize::from(i)]);
                prop_assert_eq!(
                    out[j],
                    want.map(|r| r.handle),
                    "lookup_many ({:?})",
                    auto.kind()
                );
            }
        }
        for (r, m) in &live {
            let want = live
                .iter()
                .filter(|(q, n)| q.rank.priority() == r.rank.priority() && n == m)
                .map(|(q, _)| *q)
                .max_by_key(|q| q.rank);
            prop_assert_eq!(auto.find(m, r.rank.priority()), want);
        }
        // `match_fields` holds every field an entry matches on, so keys
        // that agree on those get the same answer; and a field outside it
        // (ipv4_src when no entry matches on it) does not matter.
        let fields = auto.match_fields();
        for (_, m) in &live {
            for f in m.fields() {
                prop_assert!(
                    fields.contains(f.field),
                    "{:?} not in match_fields",
                    f.field
                );
            }
        }
        let agree = |a: &FlowKey, b: &FlowKey| {
            fields.iter().all(|f| {
                a.present.contains(f) == b.present.contains(f)
                    && crate::matcher::key_bits(a, f) == crate::matcher::key_bits(b, f)
            })
        };
        for a in keys {
            for b in keys {
                if agree(a, b) {
                    prop_assert_eq!(auto.lookup(a), auto.lookup(b), "match_fields");
                }
            }
            if !fields.contains(Field::Ipv4Src) {
                let mut c = *a;
                c.ipv4_src ^= 0x0102_0304;
                c.present.insert(Field::Ipv4Src);
                prop_assert_eq!(auto.lookup(a), auto.lookup(&c));
            }
        }
        // The choice follows the rules of the module comment.
        let shapes: std::collections::BTreeSet<Vec<(Field, u128)>> = live
            .iter()
            .filter(|(_, m)| !m.is_empty())
            .map(|(_, m)| m.fields().iter().map(|f| (f.field, f.mask)).collect())
            .collect();
        prop_assert_eq!(auto.n_shapes(), shapes.len());
        // The exact index exists exactly for one shape that packs.
        let packs =
            shapes.len() == 1 && shapes.first().and_then(|s| exact::Exact::new(s)).is_some();
        prop_assert_eq!(auto.exact.is_some(), packs);
        prop_assert_eq!(toggled.exact.is_some(), packs && toggled.exact_on);
        if let Some(ex) = &auto.exact {
            let distinct: std::collections::HashSet<&CompiledMatch> = live
                .iter()
                .map(|(_, m)| m)
                .filter(|m| !m.is_empty())
                .collect();
            prop_assert_eq!(ex.len(), distinct.len());
        }
        let n = live.len();
        let want_linear = n < HASH_MIN_ENTRIES || (n <= LINEAR_MAX && shapes.len() != 1);
        prop_assert_eq!(auto.kind() == Kind::Linear, want_linear);
        if !want_linear {
            prop_assert_eq!(auto.kind() == Kind::Hash, shapes.len() == 1);
        }
    }
    Ok(())
}

/// The LPM trie alone, in a fixed form, against the reference over the
/// entries it holds.
fn check_lpm(form_of: (&Shape, &Shape), ops: &[Op], keys: &[FlowKey]) -> Result<(), TestCaseError> {
    let form = LpmForm::derive(form_of.0, form_of.1);
    prop_assert!(form.is_some());
    let Some(form) = form else { return Ok(()) };
    let mut lpm = Lpm::new(form.clone());
    let mut plain = Lpm::without_direct(form.clone());
    let mut listed = Lpm::with_list_scan(form.clone());
    let mut live: Vec<(Ref, CompiledMatch)> = Vec::new();
    for (seq, op) in ops.iter().enumerate() {
        match op {
            Op::Add(p, m) => {
                if !form.conforms(m.fields().iter().map(|f| (f.field, f.mask))) {
                    continue;
                }
                let r = Ref {
                    rank: Rank::new(*p, seq as u64),
                    handle: seq as u32,
                };
                lpm.insert(r, triples(m));
                plain.insert(r, triples(m));
                listed.insert(r, triples(m));
                live.push((r, m.clone()));
            }
            Op::Del(i) => {
                if live.is_empty() {
                    continue;
                }
                let (r, m) = live.remove(i % live.len());
                prop_assert!(lpm.remove(r, triples(&m)));
                prop_assert!(plain.remove(r, triples(&m)));
                prop_assert!(listed.remove(r, triples(&m)));
            }
        }
        prop_assert_eq!(lpm.is_empty(), live.is_empty());
        for k in keys {
            prop_assert_eq!(lpm.lookup(k).some(), expected(&live, k));
            prop_assert_eq!(plain.lookup(k).some(), expected(&live, k));
            prop_assert_eq!(listed.lookup(k).some(), expected(&live, k));
        }
        check_lpm_many(&lpm, keys)?;
        check_lpm_many(&plain, keys)?;
        check_lpm_many(&listed, keys)?;
    }
    Ok(())
}

/// `Lpm::lookup_many` agrees with `Lpm::lookup` key by key, every third
/// key left out.
fn check_lpm_many(lpm: &Lpm, keys: &[FlowKey]) -> Result<(), TestCaseError> {
    for chunk in keys.chunks(crate::chunk::CHUNK) {
        let at: Vec<u8> = (0..chunk.len() as u8).filter(|i| i % 3 != 1).collect();
        let mut out = vec![Ref::NONE; at.len()];
        lpm.lookup_many(chunk, &at, &mut out);
        for (j, &i) in at.iter().enumerate() {
            let want = lpm.lookup(&chunk[usize::from(i)]);
            prop_assert_eq!(out[j], want, "lookup_many, key {}", i);
        }
        // An IPv4 routing trie walks IPv4 packets' addresses alone.
        if let Some(start) = lpm.ipv4_start() {
            let dsts: Vec<Option<u32>> = chunk
                .iter()
                .map(|k| {
                    let v4 = k
                        .present
                        .contains_all(FieldSet::of(&[Field::EthType, Field::Ipv4Dst]))
                        && k.eth_type == 0x0800;
                    v4.then_some(k.ipv4_dst)
                })
                .collect();
            let mut out = vec![Ref::NONE; dsts.len()];
            lpm.lookup_v4_many(start, &dsts, &mut out);
            for (i, d) in dsts.iter().enumerate() {
                let want = if d.is_some() {
                    lpm.lookup(&chunk[i])
                } else {
                    Ref::NONE
                };
                prop_assert_eq!(out[i], want, "lookup_v4_many, key {}", i);
            }
        }
    }
    Ok(())
}

/// An IPv4 route `eth_type=0x0800, ipv4_dst=addr/len` (len 0: no
/// ipv4_dst).
fn route_match(len: u32, addr: u32) -> CompiledMatch {
    let mask = prefix(Field::Ipv4Dst, len);
    let mut v = vec![FieldMatch {
        field: Field::EthType,
        value: 0x0800,
        mask: 0xffff,
    }];
    if len > 0 {
        v.push(FieldMatch {
            field: Field::Ipv4Dst,
            value: u128::from(addr) & mask,
            mask,
        });
    }
    CompiledMatch::from_fields(v)
}

fn shape(fields: &[(Field, u128)]) -> Vec<(Field, u128)> {
    let mut v: Vec<(Field, u128)> = fields.iter().filter(|(_, m)| *m != 0).copied().collect();
    v.sort();
    v
}

proptest! {
    /// General masks: TSS, linear and the automatic choice.
    #[test]
    fn general_rules_equal_reference(
        ops in ops(general_match(), 6),
        keys in proptest::collection::vec(any_key(), 1..12),
    ) {
        check_structures(&ops, &keys)?;
    }

    /// Few shapes, many entries: the hash case (and equal matches at
    /// several priorities).
    #[test]
    fn one_shape_rules_equal_reference(
        fields in proptest::collection::vec(field_match(), 1..3),
        picks in proptest::collection::vec((0u16..4, 0usize..3, any::<bool>()), 0..40),
        dels in proptest::collection::vec(any::<usize>(), 0..10),
        keys in proptest::collection::vec(any_key(), 1..12),
    ) {
        let mut ops = Vec::new();
        for (p, vi, any) in picks {
            let m = if any {
                CompiledMatch::any()
            } else {
                CompiledMatch::from_fields(fields.iter().map(|f| {
                    let bases = FIELDS.iter().find(|(g, _)| *g == f.field).map_or([0; 3], |x| x.1);
                    FieldMatch { value: bases[vi] & f.mask, ..*f }
                }).collect())
            };
            ops.push(Op::Add(p, m));
        }
        ops.extend(dels.into_iter().map(Op::Del));
        check_structures(&ops, &keys)?;
    }

    /// One shape of up to three fields (exact, prefix or arbitrary masks;
    /// most pack in 64 bits, some do not), values near a few bases so that
    /// many distinct matches and equal matches at several priorities
    /// occur; adds, removes and table-miss entries interleaved, enough of
    /// them to grow the exact index several times. Keys near the same
    /// bases hit the entries.
    #[test]
    fn exact_rules_equal_reference(
        fields in proptest::collection::vec(field_match(), 1..4),
        steps in proptest::collection::vec((0u8..10, 0u16..4, 0usize..3, 0u128..8, any::<usize>()), 0..150),
        keys in proptest::collection::vec(near_key(), 1..16),
    ) {
        let ops: Vec<Op> = steps.into_iter().map(|(dice, p, vi, noise, del)| match dice {
            0..=2 => Op::Del(del),
            3 => Op::Add(p, CompiledMatch::any()),
            _ => Op::Add(p, CompiledMatch::from_fields(fields.iter().map(|f| {
                let bases = FIELDS.iter().find(|(g, _)| *g == f.field).map_or([0; 3], |x| x.1);
                FieldMatch { value: (bases[vi] ^ noise) & f.mask, ..*f }
            }).collect())),
        }).collect();
        check_structures(&ops, &keys)?;
    }

    /// Routing tables (priorities unrelated to prefix lengths, or equal to
    /// them), several contexts, IPv6, match-everything and odd entries.
    #[test]
    fn lpm_rules_equal_reference(
        follow in any::<bool>(),
        ops in (0u8..4, any::<bool>()).prop_flat_map(|(mode, odd)| ops(lpm_match(mode, odd), 50)),
        keys in proptest::collection::vec(any_key(), 1..12),
    ) {
        // Also packets with exactly the values of each added match (they
        // find their context, among many in mode 3).
        let keys: Vec<FlowKey> = keys.into_iter().chain(ops.iter().filter_map(|op| match op {
            Op::Add(_, m) if !m.is_empty() => {
                let mut k = FlowKey::new(0);
                k.present = FieldSet::EMPTY;
                for f in m.fields() {
                    set(&mut k, f.field, f.value);
                }
                Some(k)
            }
            _ => None,
        })).collect();
        let ops: Vec<Op> = if follow {
            // Priority = prefix length (the usual routing table).
            ops.into_iter().map(|op| match op {
                Op::Add(_, m) => {
                    let len = m.fields().iter()
                        .filter(|f| matches!(f.field, Field::Ipv4Dst | Field::Ipv6Dst))
                        .map(|f| f.mask.count_ones() as u16).sum();
                    Op::Add(len, m)
                }
                d => d,
            }).collect()
        } else {
            ops
        };
        check_structures(&ops, &keys)?;
        let v4 = |len| shape(&[(Field::EthType, 0xffff), (Field::Ipv4Dst, prefix(Field::Ipv4Dst, len))]);
        let v4p = |len| shape(&[(Field::InPort, 0xffff_ffff), (Field::EthType, 0xffff), (Field::Ipv4Dst, prefix(Field::Ipv4Dst, len))]);
        let v6 = |len| shape(&[(Field::EthType, 0xffff), (Field::Ipv6Dst, prefix(Field::Ipv6Dst, len))]);
        check_lpm((&v4(8), &v4(24)), &ops, &keys)?;
        check_lpm((&v4p(8), &v4p(0)), &ops, &keys)?;
        check_lpm((&v6(128), &v6(64)), &ops, &keys)?;
    }

    /// Many nested IPv4 routes of every length (0 to 32) around a few
    /// bases, inserted and removed, priorities following the lengths or
    /// not: the trie (with its direct table built, kept up to date and
    /// dropped as the route count moves around the thresholds) against
    /// the reference, single and batched lookups.
    #[test]
    fn lpm_nested_routes_equal_reference(
        follow in any::<bool>(),
        adds in proptest::collection::vec((0u32..=32, 0usize..4, any::<u32>(), 0u16..40), 1..160),
        dels in proptest::collection::vec((0usize..4, any::<usize>()), 0..160),
        probes in proptest::collection::vec((any::<bool>(), 0usize..4, any::<u32>(), 0u32..=32), 1..40),
    ) {
        // Bases that share their top 8 or 16 bits, so prefixes nest and
        // share direct-table slots and depth-4 nodes.
        const BASES: [u32; 4] = [0x0a01_0200, 0x0a01_ff00, 0x0a80_0000, 0xc0a8_0101];
        let v4 = |len| shape(&[(Field::EthType, 0xffff), (Field::Ipv4Dst, prefix(Field::Ipv4Dst, len))]);
        let form = LpmForm::derive(&v4(8), &v4(24));
        prop_assert!(form.is_some());
        let Some(form) = form else { return Ok(()) };
        let mut lpm = Lpm::new(form.clone());
        // The same routes without direct tables: walks from the root or
        // from the skip of a sparse top.
        let mut plain = Lpm::without_direct(form);
        let mut live: Vec<(Ref, CompiledMatch)> = Vec::new();
        let keys: Vec<FlowKey> = probes.iter().map(|&(has, b, noise, low)| {
            let mut k = FlowKey::new(0);
            k.present = FieldSet::EMPTY;
            set(&mut k, Field::EthType, 0x0800);
            if has {
                let lowmask = if low >= 32 { u32::MAX } else { (1u32 << low) - 1 };
                set(&mut k, Field::Ipv4Dst, u128::from(BASES[b] ^ (noise & lowmask)));
            }
            k
        }).collect();
        let mut dels = dels.into_iter();
        for (seq, &(len, b, noise, prio)) in adds.iter().enumerate() {
            // Now and then remove one or more routes (every fourth step
            // a burst, so the count falls below the thresholds too).
            if seq % 3 == 2 {
                for _ in 0..if seq % 4 == 0 { 6 } else { 1 } {
                    let Some((_, i)) = dels.next() else { break };
                    if live.is_empty() {
                        break;
                    }
                    let (r, m) = live.remove(i % live.len());
                    prop_assert!(lpm.remove(r, triples(&m)));
                    prop_assert!(plain.remove(r, triples(&m)));
                }
            }
            let addr = BASES[b] ^ (noise >> len.min(31));
            let m = route_match(len, addr);
            let r = Ref {
                rank: Rank::new(if follow { len as u16 } else { prio }, seq as u64),
                handle: seq as u32,
            };
            lpm.insert(r, triples(&m));
            plain.insert(r, triples(&m));
            live.push((r, m));
            prop_assert!(lpm.ipv4_start().is_some() && plain.ipv4_start().is_some());
            for k in &keys {
                prop_assert_eq!(lpm.lookup(k).some(), expected(&live, k));
                prop_assert_eq!(plain.lookup(k).some(), expected(&live, k));
            }
            check_lpm_many(&lpm, &keys)?;
            check_lpm_many(&plain, &keys)?;
            if live.len() >= lpm::DIRECT_MIN {
                prop_assert_eq!(lpm.n_directs(), 1);
            }
            if live.len() < lpm::DIRECT_MIN / 2 {
                prop_assert_eq!(lpm.n_directs(), 0);
            }
        }
        // Remove everything: the trie empties and frees its table.
        while let Some((r, m)) = live.pop() {
            prop_assert!(lpm.remove(r, triples(&m)));
            prop_assert!(plain.remove(r, triples(&m)));
            for k in &keys {
                prop_assert_eq!(lpm.lookup(k).some(), expected(&live, k));
                prop_assert_eq!(plain.lookup(k).some(), expected(&live, k));
            }
        }
        prop_assert!(lpm.is_empty() && plain.is_empty());
        prop_assert_eq!(lpm.n_directs(), 0);
    }

    /// Whole tables: positions, priority order, strict index, replicas.
    #[test]
    fn table_equals_reference_and_replicas_stay_in_step(
        ops in ops(prop_oneof![general_match(), lpm_match(0, true)], 6),
        clone_at in 0usize..60,
        keys in proptest::collection::vec(any_key(), 1..8),
    ) {
        let mut t = FlowTable::new(0);
        let mut replica: Option<FlowTable> = None;
        // (priority, seq, match, cookie)
        let mut live: Vec<(u16, u64, CompiledMatch, u64)> = Vec::new();
        let mut seq = 0u64;
        for (i, op) in ops.iter().enumerate() {
            if i == clone_at {
                replica = Some(t.clone());
            }
            // What the first table removed non-strictly: the replica
            // removes the same list strictly, one by one, as a worker
            // applies `Op::RemoveFlows` after the authoritative copy's
            // `expire`.
            let mut removed: Option<Vec<FlowEntry>> = None;
            for table in std::iter::once(&mut t).chain(replica.as_mut()) {
                match op {
                    // ADD: replaces an identical entry.
                    Op::Add(p, m) => {
                        table.remove_strict(m, *p);
                        table.insert(entry(*p, m.clone(), i as u64));
                    }
                    Op::Del(j) if j % 3 == 0 => match &removed {
                        None => {
                            // A non-strict delete of a few entries.
                            removed = Some(
                                table.remove_where(|e| e.cookie() % 4 == (j / 3 % 4) as u64),
                            );
                        }
                        Some(list) => {
                            for FlowEntry { cold, .. } in list {
                                prop_assert!(table.remove_strict(&cold.compiled, cold.priority).is_some());
                            }
                        }
                    },
                    Op::Del(j) => {
                        if let Some((p, _, m, _)) = live.get(j % live.len().max(1)) {
                            prop_assert!(table.remove_strict(m, *p).is_some());
                        }
                    }
                }
            }
            match op {
                Op::Add(p, m) => {
                    live.retain(|(q, _, n, _)| !(q == p && n == m));
                    live.push((*p, seq, m.clone(), i as u64));
                    seq += 1;
                }
                Op::Del(j) if j % 3 == 0 => live.retain(|e| e.3 % 4 != (j / 3 % 4) as u64),
                Op::Del(j) => {
                    if !live.is_empty() {
                        let n = live.len();
                        live.remove(j % n);
                    }
                }
            }
            prop_assert_eq!(t.len(), live.len());
            let mut sorted = live.clone();
            sorted.sort_by_key(|e| (std::cmp::Reverse(e.0), e.1));
            let order: Vec<u64> = t.entries().map(|e| e.cookie()).collect();
            prop_assert_eq!(order, sorted.iter().map(|e| e.3).collect::<Vec<_>>());
            for k in keys.iter() {
                let want = sorted.iter().find(|e| reference_matches(&e.2, k)).map(|e| e.3);
                prop_assert_eq!(t.peek(k).map(|e| e.cookie()), want);
                let pos = t.lookup(k);
                prop_assert_eq!(pos.and_then(|p| t.entry(p)).map(|e| e.cookie()), want);
            }
            for (p, _, m, c) in &live {
                let pos = t.find_strict(m, *p);
                prop_assert_eq!(pos.and_then(|i| t.entry(i)).map(|e| e.cookie()), Some(*c));
            }
            if let Some(r) = &replica {
                let a: Vec<u64> = (0..t.len()).filter_map(|i| t.entry(i)).map(|e| e.cookie()).collect();
                let b: Vec<u64> = (0..r.len()).filter_map(|i| r.entry(i)).map(|e| e.cookie()).collect();
                prop_assert_eq!(a, b);
            }
        }
    }
}

fn entry(priority: u16, m: CompiledMatch, cookie: u64) -> FlowEntry {
    FlowEntry::plain(priority, m, cookie)
}

/// The fields of `eth_type=0x0800, f=addr/len` (f an IPv4 address).
fn ipv4_prefix(f: Field, len: u32, addr: u32) -> Vec<FieldMatch> {
    let mask = prefix(f, len);
    vec![
        FieldMatch {
            field: Field::EthType,
            value: 0x0800,
            mask: 0xffff,
        },
        FieldMatch {
            field: f,
            value: u128::from(addr) & mask,
            mask,
        },
    ]
}

fn route(len: u32, addr: u32) -> CompiledMatch {
    CompiledMatch::from_fields(ipv4_prefix(Field::Ipv4Dst, len, addr))
}

fn ipv4_key(addr: u32) -> FlowKey {
    let mut k = FlowKey::new(1);
    set(&mut k, Field::EthType, 0x0800);
    set(&mut k, Field::Ipv4Dst, addr.into());
    k
}

/// A routing table uses the trie, also when a shorter prefix has the
/// higher priority, and keeps it through removals; a shape outside the
/// form is looked up in the tuple space next to the trie.
#[test]
fn routing_table_uses_lpm() {
    let mut t = FlowTable::new(0);
    for i in 0..16u32 {
        t.insert(entry(24, route(24, 0x0a00_0000 | i << 8), u64::from(i)));
    }
    assert_eq!(t.classifier_kind(), "hash");
    t.insert(entry(100, route(8, 0x0a00_0000), 100));
    t.insert(entry(0, CompiledMatch::any(), 999));
    assert_eq!(t.classifier_kind(), "lpm");
    // 10.0.3.7: the /8 outranks the /24.
    assert_eq!(
        t.peek(&ipv4_key(0x0a00_0307)).map(|e| e.cookie()),
        Some(100)
    );
    assert_eq!(
        t.peek(&ipv4_key(0x0b00_0307)).map(|e| e.cookie()),
        Some(999)
    );
    let odd = CompiledMatch::from_fields(vec![FieldMatch {
        field: Field::InPort,
        value: 1,
        mask: 0xffff_ffff,
    }]);
    // Another shape: its subtable is probed after the trie.
    t.insert(entry(200, odd.clone(), 200));
    assert_eq!(t.classifier_kind(), "lpm");
    assert_eq!(
        t.peek(&ipv4_key(0x0a00_0307)).map(|e| e.cookie()),
        Some(200)
    );
    let mut other_port = ipv4_key(0x0a00_0307);
    other_port.in_port = 2;
    assert_eq!(t.peek(&other_port).map(|e| e.cookie()), Some(100));
    assert!(t.remove_strict(&odd, 200).is_some());
    assert_eq!(t.classifier_kind(), "lpm");
    assert!(t.remove_strict(&route(8, 0x0a00_0000), 100).is_some());
    assert_eq!(t.peek(&ipv4_key(0x0a00_0307)).map(|e| e.cookie()), Some(3));
}

/// Sequence numbers renumbered near their limit keep the order and the
/// earliest-installed tie-break.
#[test]
fn renumbering_keeps_order() {
    let mut t = FlowTable::new(0);
    let m = |port: u128| {
        CompiledMatch::from_fields(vec![FieldMatch {
            field: Field::InPort,
            value: port,
            mask: 0xffff_ffff,
        }])
    };
    t.insert(entry(5, CompiledMatch::any(), 1));
    t.insert(entry(5, m(1), 2));
    t.skip_seq(SEQ_LIMIT - 4);
    for c in 3..10 {
        t.insert(entry(5, m(u128::from(c % 2)), c));
    }
    let order: Vec<u64> = t.entries().map(|e| e.cookie()).collect();
    assert_eq!(order, (1..10).collect::<Vec<_>>());
    let mut k = FlowKey::new(1);
    k.present.insert(Field::InPort);
    // Cookie 1 (match-all) was installed first.
    assert_eq!(t.peek(&k).map(|e| e.cookie()), Some(1));
    assert!(t.remove_strict(&CompiledMatch::any(), 5).is_some());
    assert_eq!(t.peek(&k).map(|e| e.cookie()), Some(2));
    k.in_port = 0;
    assert_eq!(t.peek(&k).map(|e| e.cookie()), Some(4));
}

/// A table with a plugged structure: it is filled when plugged, answers
/// after a renumbering, in a copy of the table (a replica) and after a
/// delete-all (an emptied structure of the same kind), and taking it out
/// brings the built-in choice back.
#[test]
fn plugged_table_lifecycle() {
    let mut t = FlowTable::new(0);
    for i in 0..16u32 {
        t.insert(entry(24, route(24, 0x0a00_0000 | i << 8), u64::from(i)));
    }
    t.insert(entry(100, route(8, 0x0a00_0000), 100));
    assert_eq!(t.classifier_kind(), "lpm");
    t.set_lookup(Some(Box::new(ByRank::default())));
    assert_eq!(t.classifier_kind(), "by_rank");
    assert!(t.classifier().exact_index().is_none());
    let cookie = |t: &FlowTable, addr| t.peek(&ipv4_key(addr)).map(|e| e.cookie());
    assert_eq!(cookie(&t, 0x0a00_0307), Some(100));
    assert_eq!(cookie(&t, 0x0b00_0307), None);
    t.skip_seq(SEQ_LIMIT - 20);
    t.insert(entry(0, CompiledMatch::any(), 999));
    t.insert(entry(200, route(24, 0x0a00_0300), 200));
    assert_eq!(t.classifier_kind(), "by_rank");
    let replica = t.clone();
    for t in [&t, &replica] {
        assert_eq!(cookie(t, 0x0a00_0307), Some(200));
        assert_eq!(cookie(t, 0x0a00_0407), Some(100));
        assert_eq!(cookie(t, 0x0b00_0307), Some(999));
    }
    assert_eq!(t.remove_where(|_| true).len(), 19);
    assert_eq!(t.classifier_kind(), "by_rank");
    assert_eq!(cookie(&t, 0x0a00_0307), None);
    t.insert(entry(1, route(16, 0x0a00_0000), 1));
    assert_eq!(cookie(&t, 0x0a00_0307), Some(1));
    t.set_lookup(None);
    assert_eq!(t.classifier_kind(), "linear");
    assert_eq!(cookie(&t, 0x0a00_0307), Some(1));
}

/// Tables whose shapes use more fields than a lookup reads up front
/// (`tss::UNION_MAX`) read the key per probe: same answers.
#[test]
fn many_fields_read_per_probe() {
    use Field::*;
    let fields = [
        InPort, InPhyPort, Metadata, EthDst, EthSrc, EthType, VlanVid, VlanPcp, IpDscp, IpEcn,
        IpProto, Ipv4Src, Ipv4Dst, TcpSrc, TcpDst, ArpOp, MplsLabel, MplsTc, TunnelId, Ipv6Src,
    ];
    // 3 fields: the union is read up front; 20: per probe.
    for n in [3, fields.len()] {
        let mut auto = Auto::default();
        let mut live = Vec::new();
        for (i, f) in fields.iter().take(n).enumerate() {
            for j in 0..3u64 {
                let r = Ref {
                    rank: Rank::new(i as u16, 3 * i as u64 + j),
                    handle: (3 * i as u64 + j) as u32,
                };
                let m = CompiledMatch::from_fields(vec![FieldMatch {
                    field: *f,
                    value: 1 + u128::from(j),
                    mask: full(*f),
                }]);
                auto.insert(r, &m);
                live.push((r, m));
            }
        }
        assert_eq!(auto.kind(), Kind::Tss);
        // Keys with every field present, each 1, 2 or 0 by a pattern.
        for pattern in 0..40u32 {
            let mut k = FlowKey::new(0);
            k.present = FieldSet::EMPTY;
            for (i, f) in fields.iter().enumerate() {
                let v = u128::from((pattern >> (i % 5)) % 3);
                k.present.insert(*f);
                match f {
                    InPort => k.in_port = v as u32,
                    InPhyPort => k.in_phy_port = v as u32,
                    Metadata => k.metadata = v as u64,
                    EthDst => k.eth_dst[5] = v as u8,
                    EthSrc => k.eth_src[5] = v as u8,
                    EthType => k.eth_type = v as u16,
                    VlanVid => k.vlan_vid = v as u16,
                    VlanPcp => k.vlan_pcp = v as u8,
                    IpDscp => k.ip_dscp = v as u8,
                    IpEcn => k.ip_ecn = v as u8,
                    IpProto => k.ip_proto = v as u8,
                    Ipv4Src => k.ipv4_src = v as u32,
                    Ipv4Dst => k.ipv4_dst = v as u32,
                    TcpSrc => k.tp_src = v as u16,
                    TcpDst => k.tp_dst = v as u16,
                    ArpOp => k.arp_op = v as u16,
                    MplsLabel => k.mpls_label = v as u32,
                    MplsTc => k.mpls_tc = v as u8,
                    TunnelId => k.tunnel_id = v as u64,
                    Ipv6Src => k.ipv6_src = v,
                    _ => {}
                }
            }
            assert_eq!(
                auto.lookup(&k),
                expected(&live, &k).map(|r| r.handle),
                "n {n} pattern {pattern}"
            );
        }
    }
}

/// The exact index keeps each key's best entry also when an equal match
/// of equal priority comes with an earlier sequence number (a table never
/// does this, `Auto` allows it): the tuple space's bucket decides.
#[test]
fn exact_equal_priority_takes_the_bucket_best() {
    let port = |p: u128| {
        CompiledMatch::from_fields(vec![FieldMatch {
            field: Field::InPort,
            value: p,
            mask: 0xffff_ffff,
        }])
    };
    let r = |seq: u64| Ref {
        rank: Rank::new(7, seq),
        handle: seq as u32,
    };
    let mut auto = Auto::default();
    for p in 10..20 {
        auto.insert(r(100 + p as u64), &port(p));
    }
    auto.insert(r(50), &port(1));
    auto.insert(r(20), &port(1));
    auto.insert(r(30), &port(1));
    assert_eq!(auto.kind(), Kind::Hash);
    assert!(auto.exact.is_some());
    let mut k = FlowKey::new(1);
    k.present.insert(Field::InPort);
    assert_eq!(auto.lookup(&k), Some(20));
    assert!(auto.remove(r(20), &port(1)));
    assert_eq!(auto.lookup(&k), Some(30));
    assert!(auto.remove(r(50), &port(1)));
    assert_eq!(auto.lookup(&k), Some(30));
    assert!(auto.remove(r(30), &port(1)));
    assert_eq!(auto.lookup(&k), None);
}

/// An ACL's trie of `SCAN_MAX` (16) destination contexts finds each
/// through the perfect hash of their packed values, and a packet of
/// another destination (which lands in some slot, perhaps a used one)
/// in none of them; the plain scan of the list answers the same.
#[test]
fn few_contexts_are_found_through_a_perfect_hash() {
    let acl = |vip: u32, src: u32, len: u32| {
        let mut v = ipv4_prefix(Field::Ipv4Src, len, src);
        v.push(FieldMatch {
            field: Field::Ipv4Dst,
            value: vip.into(),
            mask: 0xffff_ffff,
        });
        CompiledMatch::from_fields(v)
    };
    let shapes = |m: &CompiledMatch| {
        shape(
            &m.fields()
                .iter()
                .map(|f| (f.field, f.mask))
                .collect::<Vec<_>>(),
        )
    };
    let form = LpmForm::derive(&shapes(&acl(1, 0, 24)), &shapes(&acl(1, 0, 16)));
    let Some(form) = form else {
        panic!("an ACL's shapes share a form");
    };
    let mut hashed = Lpm::new(form.clone());
    let mut listed = Lpm::with_list_scan(form);
    let vips: Vec<u32> = (0..16).map(|v| 0xac10_0001 + v).collect();
    for (i, &vip) in vips.iter().enumerate() {
        let r = Ref {
            rank: Rank::new(100, i as u64),
            handle: i as u32,
        };
        let m = acl(vip, 0x4000_0000 + ((i as u32) << 8), 24);
        hashed.insert(r, triples(&m));
        listed.insert(r, triples(&m));
    }
    assert!(hashed.scans_by_hash());
    assert!(!listed.scans_by_hash());
    let key = |vip: u32, src: u32| {
        let mut k = FlowKey::new(1);
        set(&mut k, Field::EthType, 0x0800);
        set(&mut k, Field::Ipv4Src, src.into());
        set(&mut k, Field::Ipv4Dst, vip.into());
        k
    };
    for (i, &vip) in vips.iter().enumerate() {
        let inside = key(vip, 0x4000_0000 + ((i as u32) << 8) + 7);
        assert_eq!(
            hashed.lookup(&inside).some().map(|r| r.handle),
            Some(i as u32)
        );
        assert_eq!(listed.lookup(&inside), hashed.lookup(&inside));
        // Another VIP's block, at this VIP: no entry.
        let other = key(vip, 0x4000_0000 + (((i as u32) + 1) << 8) + 7);
        assert_eq!(hashed.lookup(&other).some(), None);
    }
    for vip in (0..256).map(|v| 0xac10_0100 + v) {
        let k = key(vip, 0x4000_0007);
        assert_eq!(hashed.lookup(&k).some(), None, "{vip:#x}");
        assert_eq!(listed.lookup(&k).some(), None, "{vip:#x}");
    }
}

/// `set_lpm_index(false)` drops a routing table's trie (the table is then
/// looked up through the tuple space, with the same answers) and keeps it
/// from coming back while entries are added; `set_lpm_index(true)` builds
/// it again from the entries.
#[test]
fn lpm_trie_is_dropped_and_rebuilt() {
    let route = |i: u32| {
        let len = 8 + i % 25;
        let mask = prefix(Field::Ipv4Dst, len);
        let m = CompiledMatch::from_fields(vec![
            FieldMatch {
                field: Field::EthType,
                value: 0x0800,
                mask: 0xffff,
            },
            FieldMatch {
                field: Field::Ipv4Dst,
                value: u128::from(i.wrapping_mul(0x9e37_79b9)) & mask,
                mask,
            },
        ]);
        let r = Ref {
            rank: Rank::new(len as u16, u64::from(i)),
            handle: i,
        };
        (r, m)
    };
    let keys: Vec<FlowKey> = (0..400u32)
        .map(|i| {
            let mut k = FlowKey::new(0);
            k.present = FieldSet::EMPTY;
            set(&mut k, Field::EthType, 0x0800);
            set(
                &mut k,
                Field::Ipv4Dst,
                u128::from(i.wrapping_mul(0x9e37_79b9) ^ (i % 7)),
            );
            k
        })
        .collect();
    let check = |auto: &Auto, live: &[(Ref, CompiledMatch)]| {
        for k in &keys {
            assert_eq!(
                auto.lookup(k),
                expected(live, k).map(|r| r.handle),
                "{:?}",
                auto.kind()
            );
        }
    };
    let mut auto = Auto::default();
    let mut live = Vec::new();
    for i in 0..200 {
        let (r, m) = route(i);
        auto.insert(r, &m);
        live.push((r, m));
    }
    assert_eq!(auto.kind(), Kind::Lpm);
    check(&auto, &live);
    auto.set_lpm_index(false);
    assert!(auto.lpm.is_none());
    assert_eq!(auto.kind(), Kind::Tss);
    check(&auto, &live);
    for i in 200..300 {
        let (r, m) = route(i);
        auto.insert(r, &m);
        live.push((r, m));
    }
    for (r, m) in live.drain(..50) {
        assert!(auto.remove(r, &m));
    }
    assert_eq!(auto.kind(), Kind::Tss);
    check(&auto, &live);
    // A delete-all's empty structure (`emptied`) keeps the setting.
    let mut empty = auto.emptied();
    for i in 0..200 {
        let (r, m) = route(i);
        empty.insert(r, &m);
    }
    assert_eq!(empty.kind(), Kind::Tss);
    auto.set_lpm_index(true);
    assert_eq!(auto.kind(), Kind::Lpm);
    check(&auto, &live);
}
