use super::*;
use crate::matcher::FieldMatch;
use packet::Field;
use proptest::prelude::*;
use std::collections::HashMap;

/// An entry `in_port=port` with cookie `port` (one entry per port).
fn entry(port: u32) -> FlowEntry {
    let compiled = CompiledMatch::from_fields(vec![FieldMatch {
        field: Field::InPort,
        value: u128::from(port),
        mask: 0xffff_ffff,
    }]);
    FlowEntry::plain(10, compiled, u64::from(port))
}

/// A hot record is one cache line, and its program follows a MODIFY.
#[test]
fn hot_record_is_one_line_and_keeps_its_program() {
    assert_eq!(std::mem::size_of::<HotEntry>(), 64);
    let goto = Arc::new(Program::compile(
        &[Instruction::GotoTable(3)],
        &Default::default(),
    ));
    let out = Arc::new(Program::compile(
        &[Instruction::ApplyActions(vec![
            ofp::action::Action::Output {
                port: 2,
                max_len: 0,
            },
        ])],
        &Default::default(),
    ));
    let mut hot = HotEntry::new(goto.clone(), 0, 0, 0);
    assert_eq!(hot.program().goto, Some(3));
    hot.set_program(out);
    assert_eq!(hot.program().only_output, Some(2));
    hot.set_program(goto);
    assert_eq!(hot.program().goto, Some(3));
}

/// One step: add the entry of a port, send a packet of some length to
/// a port, or remove the entry of a port.
#[derive(Debug, Clone)]
enum Step {
    Add(u32),
    Hit(u32, usize),
    Remove(u32),
    /// `remove_where` of every entry (the delete-all path).
    Clear,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (0u32..24).prop_map(Step::Add),
        8 => (0u32..24, 60usize..1500).prop_map(|(p, l)| Step::Hit(p, l)),
        8 => (0u32..24).prop_map(Step::Remove),
        1 => Just(Step::Clear),
    ]
}

proptest! {
    /// Removals move the last entry into the hole (in both arrays):
    /// afterwards every lookup still finds its own entry, the hot and
    /// cold records of each position belong together, and counters
    /// (read back through `entries`, `entry` and removed entries) are
    /// what the hits added.
    #[test]
    fn relocations_keep_records_and_counters_together(
        steps in proptest::collection::vec(step(), 1..200),
    ) {
        let mut t = FlowTable::new(0);
        // Expected (packets, bytes, last hit) per installed port.
        let mut want: HashMap<u32, (u64, u64, u64)> = HashMap::new();
        for (now, s) in steps.iter().enumerate() {
            let now = now as u64;
            match *s {
                Step::Add(p) => {
                    if want.contains_key(&p) {
                        continue;
                    }
                    let mut e = entry(p);
                    e.hot.last_hit = now;
                    t.insert(e);
                    want.insert(p, (0, 0, now));
                }
                Step::Hit(p, len) => {
                    let pos = t.lookup(&FlowKey::new(p));
                    prop_assert_eq!(pos.is_some(), want.contains_key(&p));
                    if let Some(h) = pos.and_then(|i| t.hot_mut(i)) {
                        prop_assert_eq!(h.cookie, u64::from(p));
                        h.hit(len, now);
                    }
                    if let Some(w) = want.get_mut(&p) {
                        *w = (w.0 + 1, w.1 + len as u64, now);
                    }
                }
                Step::Remove(p) => {
                    let e = t
                        .find_strict(&entry(p).cold.compiled, 10)
                        .and_then(|i| t.remove(i));
                    let w = want.remove(&p);
                    prop_assert_eq!(
                        e.map(|e| (e.hot.cookie, e.hot.packet_count, e.hot.byte_count, e.hot.last_hit)),
                        w.map(|w| (u64::from(p), w.0, w.1, w.2))
                    );
                }
                Step::Clear => {
                    // Every entry, in priority order (one priority:
                    // installation order), with its counters.
                    let order: Vec<u64> = t.entries().map(|e| e.cookie()).collect();
                    let gone = t.remove_where(|_| true);
                    let got: Vec<u64> = gone.iter().map(|e| e.hot.cookie).collect();
                    prop_assert_eq!(got, order);
                    for e in &gone {
                        let w = want.remove(&(e.hot.cookie as u32));
                        prop_assert_eq!(
                            Some((e.hot.packet_count, e.hot.byte_count, e.hot.last_hit)),
                            w
                        );
                    }
                    prop_assert!(want.is_empty());
                }
            }
            prop_assert_eq!(t.len(), want.len());
            for i in 0..t.len() {
                let e = t.entry(i);
                prop_assert!(e.is_some());
                let Some(e) = e else { continue };
                prop_assert_eq!(e.hot.miss, e.is_table_miss());
                prop_assert_eq!(e.compiled.fields()[0].value, u128::from(e.cookie()));
            }
            for e in t.entries() {
                let w = want.get(&(e.cookie() as u32)).copied();
                prop_assert_eq!(Some((e.packet_count(), e.byte_count(), e.last_hit())), w);
            }
            for p in 0..24u32 {
                let found = t.peek(&FlowKey::new(p)).map(|e| e.hot.cookie);
                prop_assert_eq!(found, want.contains_key(&p).then_some(u64::from(p)));
            }
        }
    }
}

/// A delete-all empties the table in one pass (`take_all`) with the
/// result of removing entry by entry: the same entries in the same
/// order, an empty table that takes new entries, and the lookup-index
/// setting kept.
#[test]
fn delete_all_equals_removing_one_by_one() {
    let build = |exact: bool| {
        let mut t = FlowTable::new(0);
        t.set_lookup_indexes(exact);
        for p in 0..300 {
            t.insert(entry(p));
        }
        t
    };
    for exact in [true, false] {
        let mut fast = build(exact);
        let mut slow = build(exact);
        let gone: Vec<u64> = fast
            .remove_where(|_| true)
            .iter()
            .map(|e| e.hot.cookie)
            .collect();
        let order: Vec<(CompiledMatch, u16)> = slow
            .entries()
            .map(|e| (e.compiled.clone(), e.priority))
            .collect();
        let one_by_one: Vec<u64> = order
            .iter()
            .filter_map(|(m, p)| slow.remove_strict(m, *p))
            .map(|e| e.hot.cookie)
            .collect();
        assert_eq!(gone, one_by_one);
        assert_eq!((fast.len(), slow.len()), (0, 0));
        for t in [&mut fast, &mut slow] {
            for p in 0..300 {
                t.insert(entry(p));
            }
            assert_eq!(
                t.classifier().exact_index().is_some(),
                exact,
                "exact {exact}"
            );
            for p in [0, 150, 299] {
                assert_eq!(
                    t.peek(&FlowKey::new(p)).map(|e| e.hot.cookie),
                    Some(u64::from(p))
                );
            }
        }
    }
}

/// A field of the frames below, with the values entries pick from (a
/// few, so that packets hit entries), and whether it is masked.
const FRAME_TEST_FIELDS: [(Field, [u128; 3], bool); 6] = [
    (Field::InPort, [1, 2, 3], false),
    (Field::EthType, [0x0800, 0x0800, 0x86dd], false),
    (Field::IpProto, [17, 6, 17], false),
    (
        Field::Ipv4Src,
        [0x0a00_0001, 0x0a00_0002, 0x0a00_0100],
        true,
    ),
    (
        Field::Ipv4Dst,
        [0xc000_0201, 0xc000_0202, 0xc000_0300],
        true,
    ),
    (Field::UdpDst, [53, 80, 53], false),
];

/// A UDP or TCP frame of IPv4 from 10.0.0.`s` to 192.0.2.`d`, port
/// `dport`, tagged with VLAN 5 or not.
fn frame_of(s: u8, d: u8, dport: u16, tcp: bool, tagged: bool) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
    if tagged {
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    let l4 = if tcp { 20 } else { 8 };
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0, 0, 20 + l4, 0, 0, 0, 0, 64]);
    f.extend_from_slice(&[if tcp { 6 } else { 17 }, 0, 0, 10, 0, 0, s, 192, 0, 2, d]);
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend(std::iter::repeat_n(0, usize::from(l4) - 4));
    if tcp {
        // Data offset 5 words.
        let at = f.len() - 8;
        f[at] = 0x50;
    }
    f
}

proptest! {
    /// A table answers a packet read from its frame (`lookup_frame`,
    /// `find_frames`) as it answers the packet's parsed key (`find`),
    /// whatever structure the entries make it choose, and counts the
    /// lookup as `lookup` does.
    #[test]
    fn frame_lookups_equal_key_lookups(
        entries in proptest::collection::vec(
            (0u16..4, proptest::collection::vec((0usize..6, 0usize..3, 0u8..4), 0..4)),
            0..40,
        ),
        packets in proptest::collection::vec(
            (1u32..4, 0u8..3, 0u8..3, 0u16..3, any::<bool>(), any::<bool>()),
            1..=crate::chunk::CHUNK,
        ),
    ) {
        let mut t = FlowTable::new(0);
        for (i, (priority, fields)) in entries.iter().enumerate() {
            let mut ms: Vec<FieldMatch> = Vec::new();
            for &(f, v, m) in fields {
                let (field, values, masked) = FRAME_TEST_FIELDS[f];
                if ms.iter().any(|x| x.field == field) {
                    continue;
                }
                let full = crate::matcher::full_mask(field);
                let mask = if masked { full << (u32::from(m) * 4) & full } else { full };
                ms.push(FieldMatch { field, value: values[v] & mask, mask });
            }
            ms.sort_by_key(|m| m.field);
            let compiled = CompiledMatch::from_fields(ms);
            t.insert(FlowEntry::plain(*priority, compiled, i as u64));
        }
        prop_assume!(t.frames_answer());
        let mut frames = Vec::new();
        let mut want = Vec::new();
        for &(in_port, s, d, p, tcp, tagged) in &packets {
            let data = frame_of([1, 2, 0][usize::from(s)], [1, 2, 0][usize::from(d)], [53, 80, 9][usize::from(p)], tcp, tagged);
            let mut key = FlowKey::new(in_port);
            packet::parse(&data, &mut key).expect("a good frame");
            let mut fr = FrameFields::EMPTY;
            prop_assert!(crate::classifier::fields::read_frame(&data, in_port, packet::Layer::L4, &mut fr).is_some());
            want.push(t.find(&key));
            frames.push(fr);
        }
        for (fr, w) in frames.iter().zip(&want) {
            let before = t.counters.lookup_count;
            prop_assert_eq!(t.lookup_frame(fr), Some(*w));
            prop_assert_eq!(t.counters.lookup_count, before + 1);
        }
        let at: Vec<u8> = (0..frames.len() as u8).collect();
        let mut pos = vec![0u32; frames.len()];
        prop_assert!(t.find_frames(&frames, &at, &mut pos));
        let got: Vec<Option<usize>> =
            pos.iter().map(|&p| (p != u32::MAX).then_some(p as usize)).collect();
        prop_assert_eq!(got, want);
    }
}
