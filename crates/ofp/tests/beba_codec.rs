//! The BEBA codec against byte layouts written out from BEBA's
//! `beba-ext.h`, the refusals the BEBA switch answers with, round trips of
//! arbitrary values and arbitrary bytes that must never panic.

use ofp::action::Action;
use ofp::beba::*;
use ofp::error::{BadMatchCode, BadRequestCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::message::{Experimenter, Message};
use ofp::multipart::ExperimenterMultipart;
use ofp::oxm::{Match, OxmField};
use ofp::wire::Reader;
use ofp::OfpMessage;
use proptest::prelude::*;

fn state_mod(data: &[u8]) -> Result<StateMod, BebaDecodeError> {
    StateMod::decode(data)
}

fn enc_state_mod(m: &StateMod) -> Vec<u8> {
    let mut w = Vec::new();
    m.encode(&mut w);
    w
}

fn beba(code: BebaErrorCode) -> Refusal {
    Refusal::Beba(code)
}

// --- byte layouts -----------------------------------------------------------

#[test]
fn state_mod_layouts() {
    let cases: Vec<(StateMod, Vec<u8>)> = vec![
        (
            StateMod::StatefulTableConfig {
                table_id: 2,
                stateful: true,
            },
            vec![0, 0, 2, 1],
        ),
        (
            StateMod::SetLookupExtractor(Extractor {
                table_id: 0,
                bit: false,
                fields: vec![0x8000_1604],
            }),
            vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0x16, 4],
        ),
        (
            StateMod::SetUpdateExtractor(Extractor {
                table_id: 1,
                bit: true,
                fields: vec![0x8000_1604, 0x8000_1804],
            }),
            vec![
                2, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0x80, 0, 0x16, 4, 0x80, 0, 0x18, 4,
            ],
        ),
        (
            StateMod::SetFlowState(SetFlowState {
                table_id: 5,
                key: vec![0xaa, 0xbb],
                state: 7,
                state_mask: 0xffff_ffff,
                hard_rollback: 1,
                idle_rollback: 2,
                hard_timeout: 3,
                idle_timeout: 4,
            }),
            vec![
                3, 0, 5, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0,
                0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0xaa, 0xbb,
            ],
        ),
        (
            StateMod::DelFlowState {
                table_id: 5,
                key: vec![0xaa],
            },
            vec![4, 0, 5, 0, 0, 0, 0, 0, 0, 1, 0xaa],
        ),
        (
            StateMod::SetGlobalState { value: 1, mask: 3 },
            vec![5, 0, 0, 0, 0, 1, 0, 0, 0, 3],
        ),
        (StateMod::ResetGlobalState, vec![6, 0]),
    ];
    for (m, bytes) in cases {
        assert_eq!(enc_state_mod(&m), bytes, "{m:?}");
        assert_eq!(state_mod(&bytes).unwrap(), m);
    }
}

#[test]
fn pkttmp_and_async_layouts() {
    let add = PktTmpMod::Add {
        pkttmp_id: 9,
        data: vec![0xde, 0xad],
    };
    let mut w = Vec::new();
    add.encode(&mut w);
    assert_eq!(w, [0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0xde, 0xad]);
    assert_eq!(PktTmpMod::decode(&w).unwrap(), add);
    let del = PktTmpMod::Delete { pkttmp_id: 9 };
    let mut w = Vec::new();
    del.encode(&mut w);
    assert_eq!(w, [1, 0, 0, 0, 0, 9, 0, 0, 0, 0]);
    assert_eq!(PktTmpMod::decode(&w).unwrap(), del);

    let sc = StateChanged {
        table_id: 1,
        old_state: 2,
        new_state: 3,
        state_mask: 0xff,
        key: vec![0x42],
    };
    let mut w = Vec::new();
    sc.encode(&mut w);
    assert_eq!(
        w,
        [0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0xff, 0, 0, 0, 1, 0x42]
    );
    assert_eq!(StateChanged::decode(&w).unwrap(), sc);

    let fnt = FlowNotification {
        table_id: 1,
        ntf_type: 0,
        match_: Match::default(),
        instructions: vec![4],
    };
    let mut w = Vec::new();
    fnt.encode(&mut w);
    // table, ntf_type, empty match (4 + pad 4), count 1, type 4
    assert_eq!(
        w,
        [0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 4]
    );
    assert_eq!(FlowNotification::decode(&w).unwrap(), fnt);
    let two = FlowNotification {
        instructions: vec![4, 1],
        ..fnt
    };
    let mut w = Vec::new();
    two.encode(&mut w);
    assert_eq!(w.len(), 32, "count + 2 types padded to 16");
    assert_eq!(FlowNotification::decode(&w).unwrap(), two);
}

fn action_bytes(a: &BebaAction) -> Vec<u8> {
    let mut w = Vec::new();
    a.to_action().encode(&mut w);
    w
}

#[test]
fn action_instruction_oxm_layouts() {
    let set = BebaAction::SetState(SetState {
        state: 5,
        state_mask: 0xffff_ffff,
        table_id: 1,
        hard_rollback: 2,
        idle_rollback: 3,
        hard_timeout: 4,
        idle_timeout: 5,
        bit: true,
    });
    let want: Vec<u8> = [
        &[
            0xff, 0xff, 0, 48, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 0, 0, 0, 0, 0,
        ][..],
        &[0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0],
        &[0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 1, 0, 0, 0],
    ]
    .concat();
    assert_eq!(action_bytes(&set), want);
    let glob = BebaAction::SetGlobalState {
        value: 7,
        mask: 0xf,
    };
    assert_eq!(
        action_bytes(&glob),
        [
            0xff, 0xff, 0, 24, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0,
            0xf
        ]
    );
    let inc = BebaAction::IncState { table_id: 3 };
    assert_eq!(
        action_bytes(&inc),
        [
            0xff, 0xff, 0, 24, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0,
            0
        ]
    );
    for a in [set, glob, inc] {
        let bytes = action_bytes(&a);
        let generic = Action::decode(&mut Reader::message(&bytes)).unwrap();
        assert_eq!(BebaAction::from_action(&generic).unwrap().unwrap(), a);
    }

    let g = InSwitchPktGen {
        pkttmp_id: 9,
        actions: vec![],
    };
    let mut w = Vec::new();
    g.to_instruction().encode(&mut w);
    assert_eq!(
        w,
        [
            0xff, 0xff, 0, 24, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0,
            0
        ]
    );
    let generic = Instruction::decode(&mut Reader::message(&w)).unwrap();
    assert_eq!(
        InSwitchPktGen::from_instruction(&generic).unwrap().unwrap(),
        g
    );

    let mut w = Vec::new();
    BebaField::State(5, None).to_oxm().encode(&mut w);
    assert_eq!(w, [0xff, 0xff, 2, 8, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 5]);
    let mut w = Vec::new();
    BebaField::GlobalState(1, Some(3)).to_oxm().encode(&mut w);
    assert_eq!(
        w,
        [0xff, 0xff, 1, 12, 0xbe, 0xba, 0xbe, 0xba, 0, 0, 0, 1, 0, 0, 0, 3]
    );
    let generic = OxmField::decode(&mut Reader::message(&w)).unwrap();
    assert_eq!(
        BebaField::from_oxm(&generic).unwrap().unwrap(),
        BebaField::GlobalState(1, Some(3))
    );
}

#[test]
fn multipart_layouts() {
    let r = BebaMultipartReply::GlobalStateStats { global_state: 0xa5 };
    let e = r.to_experimenter();
    assert_eq!((e.experimenter, e.exp_type), (BEBA_EXPERIMENTER, 1));
    assert_eq!(e.data, [0, 0, 0, 0, 0, 0, 0, 0xa5]);
    let short = BebaMultipartReply::StateStats {
        kind: StateStatsKind::Short,
        entries: vec![StateEntryStats {
            table_id: 2,
            key: vec![1, 2, 3],
            state: 9,
            ..Default::default()
        }],
    };
    let e = short.to_experimenter();
    assert_eq!(e.exp_type, 3);
    assert_eq!(e.data, [0, 16, 2, 3, 0, 0, 0, 9, 1, 2, 3, 0, 0, 0, 0, 0]);
    assert_eq!(
        BebaMultipartReply::from_experimenter(&e).unwrap().unwrap(),
        short
    );
    let full = BebaMultipartReply::StateStats {
        kind: StateStatsKind::AndDelete,
        entries: vec![StateEntryStats {
            table_id: 0,
            key: vec![7],
            duration_sec: 1,
            duration_nsec: 2,
            hard_rollback: 3,
            idle_rollback: 4,
            hard_timeout: 5,
            idle_timeout: 6,
            state: 8,
        }],
    };
    let e = full.to_experimenter();
    assert_eq!(e.exp_type, 2);
    let mut want = vec![0, 40, 0, 1];
    for x in [1u32, 2, 3, 4, 5, 6, 8] {
        want.extend_from_slice(&x.to_be_bytes());
    }
    want.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(e.data, want);
    let req = BebaMultipartRequest::StateStats(StateStatsRequest {
        kind: StateStatsKind::Full,
        table_id: 0xff,
        state: Some(4),
        match_: Match::default(),
    });
    let e = req.to_experimenter();
    assert_eq!(e.data, [0xff, 1, 0, 0, 0, 0, 0, 4, 0, 1, 0, 4, 0, 0, 0, 0]);
    assert_eq!(
        BebaMultipartRequest::from_experimenter(&e)
            .unwrap()
            .unwrap(),
        req
    );
    let g = BebaMultipartRequest::GlobalStateStats.to_experimenter();
    assert_eq!((g.exp_type, g.data.len()), (1, 0));
}

// --- refusals ----------------------------------------------------------------

#[test]
fn refusals_match_the_beba_switch() {
    use BebaErrorCode::*;
    let r = |data: &[u8]| state_mod(data).unwrap_err().refusal;
    assert_eq!(r(&[9, 0]), beba(StateModBadCommand));
    assert_eq!(r(&[0]), beba(BadExpLen));
    assert_eq!(r(&[0, 0, 1]), beba(BadExpLen), "table config needs 2 bytes");
    assert_eq!(r(&[0, 0, 1, 1, 0]), beba(BadExpLen));
    // extractor with 0 and with 7 fields
    assert_eq!(
        r(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        beba(BadExpLen)
    );
    let mut seven = vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7];
    seven.extend(std::iter::repeat_n(0x80, 28));
    assert_eq!(r(&seven), beba(BadExpLen));
    // field_count 2 but one field present
    assert_eq!(
        r(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x80, 0, 0x16, 4]),
        beba(BadExpLen)
    );
    // key_len 49, key_len 0, key shorter than key_len
    let mut set = vec![3, 0, 0, 0, 0, 0, 0, 0, 0, 49];
    set.extend(std::iter::repeat_n(0, 24 + 49));
    assert_eq!(r(&set), beba(BadExpLen));
    assert_eq!(r(&[4, 0, 0, 0, 0, 0, 0, 0, 0, 0]), beba(BadExpLen));
    assert_eq!(r(&[4, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1]), beba(BadExpLen));
    assert_eq!(r(&[5, 0, 0, 0, 0, 1]), beba(BadExpLen));
    assert_eq!(r(&[6, 0, 0]), beba(BadExpLen));

    let p = |d: &[u8]| PktTmpMod::decode(d).unwrap_err().refusal;
    assert_eq!(
        p(&[2, 0, 0, 0, 0, 1, 0, 0, 0, 0]),
        beba(PktTmpModBadCommand)
    );
    assert_eq!(p(&[0, 0, 0, 0, 0, 1]), beba(BadExpLen));
    assert_eq!(p(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 9]), beba(BadExpLen));

    let unknown = Experimenter {
        experimenter: BEBA_EXPERIMENTER,
        exp_type: 9,
        data: vec![],
    };
    assert_eq!(
        BebaMessage::from_experimenter(&unknown)
            .unwrap()
            .unwrap_err()
            .refusal,
        beba(BadExpMessage)
    );
    let other = Experimenter {
        experimenter: 0x2320,
        ..unknown
    };
    assert!(BebaMessage::from_experimenter(&other).is_none());

    // state_changed: key_len beyond the data
    assert_eq!(
        StateChanged::decode(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1])
            .unwrap_err()
            .refusal,
        beba(BadExpLen)
    );

    let a = |d: &[u8]| BebaAction::decode(d).unwrap_err().refusal;
    assert_eq!(
        a(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        beba(BadExpAction)
    );
    assert_eq!(a(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]), beba(BadExpLen));
    assert_eq!(
        InSwitchPktGen::decode(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
            .unwrap_err()
            .refusal,
        beba(BadExpInstruction)
    );

    let oxm = |has_mask, payload: Vec<u8>| OxmField::Experimenter {
        field: 1,
        has_mask,
        experimenter: BEBA_EXPERIMENTER,
        payload,
    };
    assert_eq!(
        BebaField::from_oxm(&oxm(true, vec![0, 0, 0, 3, 0, 0, 0, 1]))
            .unwrap()
            .unwrap_err()
            .refusal,
        beba(BadMatchWildcard)
    );
    assert_eq!(
        BebaField::from_oxm(&oxm(false, vec![0, 0, 3]))
            .unwrap()
            .unwrap_err()
            .refusal,
        Refusal::Standard(ErrorCode::BadMatch(BadMatchCode::BadLen))
    );

    let mp = |exp_type, data: Vec<u8>| ExperimenterMultipart {
        experimenter: BEBA_EXPERIMENTER,
        exp_type,
        data,
    };
    assert_eq!(
        BebaMultipartRequest::from_experimenter(&mp(7, vec![]))
            .unwrap()
            .unwrap_err()
            .refusal,
        Refusal::Standard(ErrorCode::BadRequest(BadRequestCode::BadExpType))
    );
    // a record whose length is not a multiple of 8
    assert_eq!(
        BebaMultipartReply::from_experimenter(&mp(3, vec![0, 9, 0, 0, 0, 0, 0, 0, 0]))
            .unwrap()
            .unwrap_err()
            .refusal,
        Refusal::Standard(ErrorCode::BadRequest(BadRequestCode::BadLen))
    );
    // key_len disagreeing with the record length
    assert_eq!(
        BebaMultipartReply::from_experimenter(&mp(3, vec![0, 8, 0, 1, 0, 0, 0, 0]))
            .unwrap()
            .unwrap_err()
            .refusal,
        Refusal::Standard(ErrorCode::BadRequest(BadRequestCode::BadLen))
    );

    // the error body answering a refusal
    let e = state_mod(&[9, 0]).unwrap_err().error_msg(&[4, 4, 0, 18]);
    assert_eq!(BebaErrorCode::from_error_msg(&e), Some(StateModBadCommand));
}

// --- round trips and arbitrary bytes ------------------------------------

fn key(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 1..=max)
}

fn extractor() -> impl Strategy<Value = Extractor> {
    (
        any::<u8>(),
        any::<bool>(),
        proptest::collection::vec(any::<u32>(), 1..=MAX_FIELD_COUNT),
    )
        .prop_map(|(table_id, bit, fields)| Extractor {
            table_id,
            bit,
            fields,
        })
}

fn state_mod_s() -> impl Strategy<Value = StateMod> {
    prop_oneof![
        (any::<u8>(), any::<bool>())
            .prop_map(|(table_id, stateful)| StateMod::StatefulTableConfig { table_id, stateful }),
        extractor().prop_map(StateMod::SetLookupExtractor),
        extractor().prop_map(StateMod::SetUpdateExtractor),
        (any::<u8>(), key(MAX_KEY_LEN), any::<[u32; 6]>()).prop_map(|(table_id, key, x)| {
            StateMod::SetFlowState(SetFlowState {
                table_id,
                key,
                state: x[0],
                state_mask: x[1],
                hard_rollback: x[2],
                idle_rollback: x[3],
                hard_timeout: x[4],
                idle_timeout: x[5],
            })
        }),
        (any::<u8>(), key(MAX_KEY_LEN))
            .prop_map(|(table_id, key)| StateMod::DelFlowState { table_id, key }),
        (any::<u32>(), any::<u32>())
            .prop_map(|(value, mask)| StateMod::SetGlobalState { value, mask }),
        Just(StateMod::ResetGlobalState),
    ]
}

fn beba_field() -> impl Strategy<Value = BebaField> {
    (
        any::<bool>(),
        any::<u32>(),
        proptest::option::of(any::<u32>()),
    )
        .prop_map(|(s, v, m)| {
            let v = m.map_or(v, |m| v & m);
            if s {
                BebaField::State(v, m)
            } else {
                BebaField::GlobalState(v, m)
            }
        })
}

fn message_s() -> impl Strategy<Value = BebaMessage> {
    prop_oneof![
        state_mod_s().prop_map(BebaMessage::StateMod),
        (any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)).prop_map(
            |(pkttmp_id, data)| BebaMessage::PktTmpMod(PktTmpMod::Add { pkttmp_id, data })
        ),
        any::<u32>().prop_map(|pkttmp_id| BebaMessage::PktTmpMod(PktTmpMod::Delete { pkttmp_id })),
        (
            any::<[u32; 4]>(),
            proptest::collection::vec(any::<u8>(), 0..=MAX_KEY_LEN)
        )
            .prop_map(|(x, key)| BebaMessage::StateChanged(StateChanged {
                table_id: x[0],
                old_state: x[1],
                new_state: x[2],
                state_mask: x[3],
                key,
            })),
        (
            any::<u32>(),
            any::<u32>(),
            proptest::option::of(beba_field()),
            proptest::collection::vec(any::<u32>(), 0..6)
        )
            .prop_map(|(table_id, ntf_type, f, instructions)| {
                BebaMessage::FlowNotification(FlowNotification {
                    table_id,
                    ntf_type,
                    match_: Match::new(f.iter().map(BebaField::to_oxm).collect()),
                    instructions,
                })
            }),
    ]
}

fn action_s() -> impl Strategy<Value = BebaAction> {
    prop_oneof![
        (any::<[u32; 6]>(), any::<u8>(), any::<bool>()).prop_map(|(x, table_id, bit)| {
            BebaAction::SetState(SetState {
                state: x[0],
                state_mask: x[1],
                table_id,
                hard_rollback: x[2],
                idle_rollback: x[3],
                hard_timeout: x[4],
                idle_timeout: x[5],
                bit,
            })
        }),
        (any::<u32>(), any::<u32>())
            .prop_map(|(value, mask)| BebaAction::SetGlobalState { value, mask }),
        any::<u8>().prop_map(|table_id| BebaAction::IncState { table_id }),
    ]
}

fn kind_s() -> impl Strategy<Value = StateStatsKind> {
    prop_oneof![
        Just(StateStatsKind::Full),
        Just(StateStatsKind::AndDelete),
        Just(StateStatsKind::Short),
        Just(StateStatsKind::AndDeleteShort),
    ]
}

fn reply_s() -> impl Strategy<Value = BebaMultipartReply> {
    let entry = (any::<u8>(), key(255), any::<[u32; 7]>());
    prop_oneof![
        any::<u32>().prop_map(|global_state| BebaMultipartReply::GlobalStateStats { global_state }),
        (kind_s(), proptest::collection::vec(entry, 0..4)).prop_map(|(kind, es)| {
            let entries = es
                .into_iter()
                .map(|(table_id, key, x)| {
                    let full = !kind.short();
                    let f = |v: u32| if full { v } else { 0 };
                    StateEntryStats {
                        table_id,
                        key,
                        duration_sec: f(x[0]),
                        duration_nsec: f(x[1]),
                        hard_rollback: f(x[2]),
                        idle_rollback: f(x[3]),
                        hard_timeout: f(x[4]),
                        idle_timeout: f(x[5]),
                        state: x[6],
                    }
                })
                .collect();
            BebaMultipartReply::StateStats { kind, entries }
        }),
    ]
}

fn request_s() -> impl Strategy<Value = BebaMultipartRequest> {
    prop_oneof![
        Just(BebaMultipartRequest::GlobalStateStats),
        (
            kind_s(),
            any::<u8>(),
            proptest::option::of(any::<u32>()),
            proptest::option::of(beba_field())
        )
            .prop_map(|(kind, table_id, state, f)| {
                BebaMultipartRequest::StateStats(StateStatsRequest {
                    kind,
                    table_id,
                    state,
                    match_: Match::new(f.iter().map(BebaField::to_oxm).collect()),
                })
            }),
    ]
}

proptest! {
    /// A BEBA message goes out as a whole OpenFlow message and comes back.
    #[test]
    fn messages_round_trip(m in message_s()) {
        let wire = OfpMessage::new(7, Message::Experimenter(m.to_experimenter())).encode();
        let back = OfpMessage::decode(&wire).unwrap();
        let Message::Experimenter(e) = back.body else { panic!("not experimenter") };
        prop_assert_eq!(BebaMessage::from_experimenter(&e).unwrap().unwrap(), m);
    }

    #[test]
    fn actions_fields_instructions_round_trip(
        a in action_s(), f in beba_field(), id in any::<u32>(), n in 0usize..3,
    ) {
        let mut w = Vec::new();
        a.to_action().encode(&mut w);
        let g = Action::decode(&mut Reader::message(&w)).unwrap();
        prop_assert_eq!(BebaAction::from_action(&g).unwrap().unwrap(), a.clone());

        let mut w = Vec::new();
        f.to_oxm().encode(&mut w);
        let g = OxmField::decode(&mut Reader::message(&w)).unwrap();
        prop_assert_eq!(BebaField::from_oxm(&g).unwrap().unwrap(), f);

        let pg = InSwitchPktGen { pkttmp_id: id, actions: vec![a.to_action(); n] };
        let mut w = Vec::new();
        pg.to_instruction().encode(&mut w);
        let g = Instruction::decode(&mut Reader::message(&w)).unwrap();
        prop_assert_eq!(InSwitchPktGen::from_instruction(&g).unwrap().unwrap(), pg);
    }

    #[test]
    fn multiparts_round_trip(q in request_s(), r in reply_s()) {
        prop_assert_eq!(
            BebaMultipartRequest::from_experimenter(&q.to_experimenter()).unwrap().unwrap(), q);
        prop_assert_eq!(
            BebaMultipartReply::from_experimenter(&r.to_experimenter()).unwrap().unwrap(), r);
    }

    /// Arbitrary bytes into every BEBA decoder: an error or a value that
    /// re-encodes to a value decoding to itself, never a panic.
    #[test]
    fn arbitrary_bytes_never_panic(
        data in proptest::collection::vec(any::<u8>(), 0..96),
        exp_type in 0u32..6, field in 0u8..3, has_mask in any::<bool>(),
    ) {
        let e = Experimenter { experimenter: BEBA_EXPERIMENTER, exp_type, data: data.clone() };
        if let Some(Ok(m)) = BebaMessage::from_experimenter(&e) {
            let again = BebaMessage::from_experimenter(&m.to_experimenter()).unwrap().unwrap();
            prop_assert_eq!(again, m);
        }
        if let Ok(a) = BebaAction::decode(&data) {
            let mut w = Vec::new();
            a.encode(&mut w);
            prop_assert_eq!(BebaAction::decode(&w).unwrap(), a);
        }
        if let Ok(i) = InSwitchPktGen::decode(&data) {
            let mut w = Vec::new();
            i.encode(&mut w);
            prop_assert_eq!(InSwitchPktGen::decode(&w).unwrap(), i);
        }
        let oxm = OxmField::Experimenter {
            field, has_mask, experimenter: BEBA_EXPERIMENTER, payload: data.clone(),
        };
        if let Some(Ok(f)) = BebaField::from_oxm(&oxm) {
            prop_assert_eq!(f.to_oxm(), oxm);
        }
        let mp = ExperimenterMultipart { experimenter: BEBA_EXPERIMENTER, exp_type, data };
        if let Some(Ok(q)) = BebaMultipartRequest::from_experimenter(&mp) {
            prop_assert_eq!(
                BebaMultipartRequest::from_experimenter(&q.to_experimenter()).unwrap().unwrap(), q);
        }
        if let Some(Ok(r)) = BebaMultipartReply::from_experimenter(&mp) {
            prop_assert_eq!(
                BebaMultipartReply::from_experimenter(&r.to_experimenter()).unwrap().unwrap(), r);
        }
    }
}

// --- mutated vectors -------------------------------------------------------

/// Run every BEBA decoder on the BEBA parts of a generically decoded
/// message; whatever decodes must re-encode to a value decoding to itself.
fn check_beba_parts(m: &Message) {
    match m {
        Message::Experimenter(e) => {
            if let Some(Ok(b)) = BebaMessage::from_experimenter(e) {
                let again = BebaMessage::from_experimenter(&b.to_experimenter());
                assert_eq!(again, Some(Ok(b)));
            }
        }
        Message::MultipartRequest(mp) => {
            if let ofp::multipart::MultipartRequestBody::Experimenter(e) = &mp.body {
                if let Some(Ok(q)) = BebaMultipartRequest::from_experimenter(e) {
                    let again = BebaMultipartRequest::from_experimenter(&q.to_experimenter());
                    assert_eq!(again, Some(Ok(q)));
                }
            }
        }
        Message::MultipartReply(mp) => {
            if let ofp::multipart::MultipartReplyBody::Experimenter(e) = &mp.body {
                if let Some(Ok(r)) = BebaMultipartReply::from_experimenter(e) {
                    let again = BebaMultipartReply::from_experimenter(&r.to_experimenter());
                    assert_eq!(again, Some(Ok(r)));
                }
            }
        }
        Message::FlowMod(fm) => {
            for f in &fm.match_.fields {
                if let Some(Ok(b)) = BebaField::from_oxm(f) {
                    assert_eq!(BebaField::from_oxm(&b.to_oxm()), Some(Ok(b)));
                }
            }
            for i in &fm.instructions {
                if let Instruction::ApplyActions(list) = i {
                    for a in list {
                        if let Some(Ok(b)) = BebaAction::from_action(a) {
                            let again = BebaAction::from_action(&b.to_action());
                            assert_eq!(again, Some(Ok(b)));
                        }
                    }
                }
                if let Some(Ok(g)) = InSwitchPktGen::from_instruction(i) {
                    let again = InSwitchPktGen::from_instruction(&g.to_instruction());
                    assert_eq!(again, Some(Ok(g)));
                }
            }
        }
        _ => {}
    }
}

/// Every BEBA vector truncated at every length (with an honest length
/// field) and with every byte flipped: the BEBA decoders never panic and
/// whatever they accept re-encodes to a value decoding to itself (padding
/// and flag bytes are not checked on input, so the bytes may differ).
#[test]
fn mutated_vectors_never_panic() {
    let p =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp/beba.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut decoded = 0usize;
    for item in v.as_array().unwrap() {
        let raw = hex::decode(item["hex"].as_str().unwrap()).unwrap();
        let mut variants = Vec::new();
        for n in 8..raw.len() {
            let mut t = raw[..n].to_vec();
            t[2..4].copy_from_slice(&(n as u16).to_be_bytes());
            variants.push(t);
        }
        for at in 8..raw.len() {
            for xor in [0x01, 0x80, 0xff] {
                let mut t = raw.clone();
                t[at] ^= xor;
                variants.push(t);
            }
        }
        for t in variants {
            if let Ok(m) = OfpMessage::decode(&t) {
                decoded += 1;
                check_beba_parts(&m.body);
            }
        }
    }
    assert!(decoded > 1000, "the mutations reach the BEBA decoders");
}
