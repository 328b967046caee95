//! BEBA semantics against the behaviour of the BEBA switch
//! (`udatapath/pipeline.c`, `oflib-exp/ofl-exp-beba.c`): look-ups, state
//! transitions with masks and timeouts, the bi-flow scope, statistics,
//! global state and the error codes of every bad STATE_MOD.

use std::sync::Arc;

use ofp::beba::{
    BebaAction, BebaErrorCode, BebaMessage, Extractor, Refusal, SetFlowState, SetState, StateMod,
    StateStatsKind, StateStatsRequest,
};
use ofp::message::Experimenter;
use ofp::oxm::{class, oxm_header, Match, OxmField};
use packet::{Field, FlowKey};
use stateful::{Stateful, Transition, STATE_DEFAULT, STATE_NULL};

fn h(f: Field) -> u32 {
    oxm_header(class::OPENFLOW_BASIC, f as u8, false, f.width() as u8)
}

/// A TCP packet's fields.
fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> FlowKey {
    let mut k = FlowKey::new(1);
    k.ipv4_src = u32::from_be_bytes(src);
    k.ipv4_dst = u32::from_be_bytes(dst);
    k.tp_src = sport;
    k.tp_dst = dport;
    k.eth_type = 0x0800;
    k.ip_proto = 6;
    for f in [
        Field::EthType,
        Field::IpProto,
        Field::Ipv4Src,
        Field::Ipv4Dst,
        Field::TcpSrc,
        Field::TcpDst,
    ] {
        k.present.insert(f);
    }
    k
}

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

fn sm(dp: &Stateful, m: StateMod) -> Result<(), BebaErrorCode> {
    dp.apply_state_mod(&m, 0).map(|_| ())
}

/// Table 0 stateful, both scopes `fields` (bi-flow scope `bit_fields`).
fn configured(fields: &[Field], bit_fields: &[Field]) -> Stateful {
    let dp = Stateful::new(4, 1024);
    let ext = |fs: &[Field]| Extractor {
        table_id: 0,
        bit: false,
        fields: fs.iter().map(|f| h(*f)).collect(),
    };
    assert_eq!(
        sm(
            &dp,
            StateMod::StatefulTableConfig {
                table_id: 0,
                stateful: true
            }
        ),
        Ok(())
    );
    assert_eq!(sm(&dp, StateMod::SetLookupExtractor(ext(fields))), Ok(()));
    assert_eq!(sm(&dp, StateMod::SetUpdateExtractor(ext(fields))), Ok(()));
    if !bit_fields.is_empty() {
        let mut e = ext(bit_fields);
        e.bit = true;
        assert_eq!(sm(&dp, StateMod::SetUpdateExtractor(e)), Ok(()));
    }
    dp
}

fn set(state: u32) -> SetState {
    SetState {
        state,
        state_mask: u32::MAX,
        table_id: 0,
        ..SetState::default()
    }
}

#[test]
fn unknown_flow_is_default_missing_field_is_null_stateless_has_none() {
    let dp = Stateful::new(2, 64);
    let k = tcp(A, B, 1, 2);
    let t = dp.table(0).expect("table 0");
    assert_eq!(t.lookup(&k, 0), None, "not stateful: no state field");
    let dp = configured(&[Field::Ipv4Src], &[]);
    let t = dp.table(0).expect("table 0");
    assert_eq!(t.lookup(&k, 0), Some(STATE_DEFAULT));
    let mut arp = FlowKey::new(1);
    arp.eth_type = 0x0806;
    arp.present.insert(Field::EthType);
    assert_eq!(t.lookup(&arp, 0), Some(STATE_NULL));
    assert!(dp.any_stateful());
    assert!(!Stateful::new(2, 64).any_stateful());
}

#[test]
fn set_state_is_seen_by_the_next_packet_and_masks_apply() {
    let dp = configured(&[Field::Ipv4Src], &[]);
    let t = dp.table(0).expect("table 0");
    let k = tcp(A, B, 1, 2);
    let ch = dp.apply_action(&BebaAction::SetState(set(0xf0)), &k, 10);
    let ch = ch.expect("changed");
    assert_eq!(
        (ch.old_state, ch.new_state, ch.key.as_bytes()),
        (0, 0xf0, &A[..])
    );
    assert_eq!(t.lookup(&k, 11), Some(0xf0));
    let masked = SetState {
        state: 0x0f,
        state_mask: 0x0c,
        ..set(0)
    };
    dp.apply_action(&BebaAction::SetState(masked), &k, 12);
    assert_eq!(
        t.lookup(&k, 13),
        Some(0xfc),
        "(0xf0 & !0x0c) | (0x0f & 0x0c)"
    );
    assert_eq!(
        dp.apply_action(&BebaAction::SetState(set(0xfc)), &k, 14),
        None,
        "no change, no notification"
    );
    // Another flow is untouched.
    assert_eq!(t.lookup(&tcp(B, A, 2, 1), 15), Some(STATE_DEFAULT));
}

#[test]
fn state_is_visible_across_threads() {
    let dp = Arc::new(configured(&[Field::Ipv4Src, Field::TcpDst], &[]));
    let writer = {
        let dp = Arc::clone(&dp);
        std::thread::spawn(move || {
            for p in 0..1000u16 {
                dp.apply_action(
                    &BebaAction::SetState(set(u32::from(p) + 1)),
                    &tcp(A, B, 0, p),
                    1,
                );
            }
        })
    };
    assert!(writer.join().is_ok());
    let t = dp.table(0).expect("table 0");
    for p in 0..1000u16 {
        assert_eq!(t.lookup(&tcp(A, B, 0, p), 2), Some(u32::from(p) + 1));
    }
}

#[test]
fn hard_and_idle_timeouts_roll_back() {
    let dp = configured(&[Field::Ipv4Src], &[]);
    let t = dp.table(0).expect("table 0");
    let k = tcp(A, B, 1, 2);
    let hard = SetState {
        hard_timeout: 100,
        hard_rollback: 7,
        ..set(1)
    };
    dp.apply_action(&BebaAction::SetState(hard), &k, 1000);
    assert_eq!(t.lookup(&k, 1100), Some(1), "now == remove_at: not yet");
    assert_eq!(t.lookup(&k, 1101), Some(7));
    let idle = SetState {
        idle_timeout: 50,
        idle_rollback: 3,
        ..set(2)
    };
    dp.apply_action(&BebaAction::SetState(idle), &k, 2000);
    // Packets keep it alive.
    for now in (2040..2400).step_by(40) {
        assert_eq!(t.lookup(&k, now), Some(2), "at {now}");
    }
    assert_eq!(t.lookup(&k, 2500), Some(3), "idle for 100 > 50");
    // A timeout whose rollback is the new state itself is not set.
    let same = SetState {
        hard_timeout: 10,
        hard_rollback: 4,
        ..set(4)
    };
    dp.apply_action(&BebaAction::SetState(same), &k, 3000);
    assert_eq!(t.lookup(&k, 9000), Some(4));
}

#[test]
fn entries_back_to_default_are_reclaimed_by_the_sweep() {
    let dp = configured(&[Field::Ipv4Src, Field::TcpSrc], &[]);
    let t = dp.table(0).expect("table 0");
    let store = || t.store().expect("store");
    for p in 0..100 {
        let to_default = SetState {
            hard_timeout: 10,
            hard_rollback: STATE_DEFAULT,
            ..set(5)
        };
        dp.apply_action(&BebaAction::SetState(to_default), &tcp(A, B, p, 0), 0);
    }
    // A transition to DEFAULT with no timer of an unknown flow stores nothing.
    dp.apply_action(&BebaAction::SetState(set(0)), &tcp(B, B, 1, 1), 0);
    assert_eq!(store().len(), 100);
    // Not yet expired: the sweep keeps them.
    for _ in 0..4 {
        dp.sweep(5, 1 << 20);
    }
    assert_eq!(store().len(), 100);
    // Expired to DEFAULT: reclaimed, in bounded steps.
    let mut steps = 0;
    while !store().is_empty() && steps < 10_000 {
        t.sweep(20, 64);
        steps += 1;
    }
    assert_eq!(store().len(), 0);
    assert!(steps > 1, "the sweep is incremental");
    // A flow set back to DEFAULT without timer is reclaimed too.
    dp.apply_action(&BebaAction::SetState(set(9)), &tcp(A, B, 1, 1), 30);
    dp.apply_action(&BebaAction::SetState(set(0)), &tcp(A, B, 1, 1), 31);
    assert_eq!(store().len(), 1);
    dp.sweep(32, 1 << 20);
    assert_eq!(store().len(), 0);
}

/// The bi-flow scope: SET_STATE with `bit` writes the flow its second
/// update scope extracts (here the reverse direction), which the lookup
/// scope then finds for packets of the other direction.
#[test]
fn bi_flow_bit_uses_the_second_update_scope() {
    let dp = configured(
        &[Field::Ipv4Src, Field::Ipv4Dst],
        &[Field::Ipv4Dst, Field::Ipv4Src],
    );
    let t = dp.table(0).expect("table 0");
    let ab = tcp(A, B, 1, 2);
    let ba = tcp(B, A, 2, 1);
    let bit = SetState {
        bit: true,
        ..set(6)
    };
    dp.apply_action(&BebaAction::SetState(bit.clone()), &ab, 0);
    assert_eq!(t.lookup(&ab, 1), Some(STATE_DEFAULT));
    assert_eq!(t.lookup(&ba, 1), Some(6));
    // Without a bi-flow scope, a `bit` SET_STATE writes nothing.
    let dp = configured(&[Field::Ipv4Src], &[]);
    dp.apply_action(&BebaAction::SetState(bit), &ab, 0);
    assert_eq!(
        dp.table(0).and_then(|t| t.store()).map(|s| s.len()),
        Some(0)
    );
}

#[test]
fn inc_state_counts_from_one() {
    let dp = configured(&[Field::Ipv4Src], &[]);
    let t = dp.table(0).expect("table 0");
    let k = tcp(A, B, 1, 2);
    for _ in 0..3 {
        dp.apply_action(&BebaAction::IncState { table_id: 0 }, &k, 0);
    }
    assert_eq!(t.lookup(&k, 1), Some(3));
}

#[test]
fn global_state_with_mask_and_reset() {
    let dp = Stateful::new(1, 16);
    assert_eq!(
        sm(
            &dp,
            StateMod::SetGlobalState {
                value: 0xaaaa_aaaa,
                mask: u32::MAX
            }
        ),
        Ok(())
    );
    dp.apply_action(
        &BebaAction::SetGlobalState {
            value: 0x0000_00ff,
            mask: 0x0000_000f,
        },
        &FlowKey::new(1),
        0,
    );
    assert_eq!(dp.global_state(), 0xaaaa_aaaf);
    assert_eq!(sm(&dp, StateMod::ResetGlobalState), Ok(()));
    assert_eq!(dp.global_state(), 0);
}

/// Every refusal of the semantics, with the code the BEBA switch sends.
#[test]
fn bad_state_mods_get_the_reference_codes() {
    use BebaErrorCode as E;
    let dp = Stateful::new(4, 16);
    let ext = |table_id, fields: Vec<u32>| Extractor {
        table_id,
        bit: false,
        fields,
    };
    let fs = |key: Vec<u8>, table_id| SetFlowState {
        table_id,
        key,
        state: 88,
        state_mask: u32::MAX,
        ..SetFlowState::default()
    };
    // Tables beyond the pipeline.
    assert_eq!(
        sm(
            &dp,
            StateMod::StatefulTableConfig {
                table_id: 4,
                stateful: true
            }
        ),
        Err(E::BadTableId)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetLookupExtractor(ext(250, vec![h(Field::EthSrc)]))
        ),
        Err(E::BadTableId)
    );
    assert_eq!(
        sm(&dp, StateMod::SetFlowState(fs(vec![0; 6], 200))),
        Err(E::BadTableId)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::DelFlowState {
                table_id: 250,
                key: vec![0; 6]
            }
        ),
        Err(E::BadTableId)
    );
    // Scopes of a stateless table; flow states of a table not configured.
    assert_eq!(
        sm(
            &dp,
            StateMod::SetLookupExtractor(ext(0, vec![h(Field::EthSrc)]))
        ),
        Err(E::SetExtractor)
    );
    assert_eq!(
        sm(&dp, StateMod::SetFlowState(fs(vec![0; 6], 0))),
        Err(E::SetFlowState)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::DelFlowState {
                table_id: 0,
                key: vec![0; 6]
            }
        ),
        Err(E::DelFlowState)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::StatefulTableConfig {
                table_id: 0,
                stateful: true
            }
        ),
        Ok(())
    );
    assert_eq!(
        sm(&dp, StateMod::SetFlowState(fs(vec![0; 6], 0))),
        Err(E::SetFlowState),
        "no scopes yet"
    );
    // Zero or too many fields.
    assert_eq!(
        sm(&dp, StateMod::SetLookupExtractor(ext(0, vec![]))),
        Err(E::BadExpLen)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetLookupExtractor(ext(0, vec![h(Field::EthSrc); 7]))
        ),
        Err(E::BadExpLen)
    );
    // Scopes of different key lengths.
    assert_eq!(
        sm(
            &dp,
            StateMod::SetLookupExtractor(ext(0, vec![h(Field::EthSrc), h(Field::EthDst)]))
        ),
        Ok(())
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetUpdateExtractor(ext(0, vec![h(Field::EthSrc)]))
        ),
        Err(E::BadExpLen)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetUpdateExtractor(ext(0, vec![h(Field::EthSrc), h(Field::EthDst)]))
        ),
        Ok(())
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetLookupExtractor(ext(0, vec![h(Field::EthSrc)]))
        ),
        Err(E::BadExpLen)
    );
    // Keys not of the update scope's length.
    assert_eq!(
        sm(&dp, StateMod::SetFlowState(fs(vec![10, 0, 0, 5], 0))),
        Err(E::BadExpLen)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::DelFlowState {
                table_id: 0,
                key: vec![0; 13]
            }
        ),
        Err(E::BadExpLen)
    );
    // Unknown flow.
    assert_eq!(
        sm(
            &dp,
            StateMod::DelFlowState {
                table_id: 0,
                key: vec![0; 12]
            }
        ),
        Err(E::DelFlowState)
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::SetFlowState(fs(vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 4], 0))
        ),
        Ok(())
    );
    assert_eq!(
        sm(
            &dp,
            StateMod::DelFlowState {
                table_id: 0,
                key: vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 4]
            }
        ),
        Ok(())
    );
    // Action table ids.
    assert_eq!(
        dp.check_action(&BebaAction::SetState(SetState {
            table_id: 10,
            ..set(1)
        })),
        Err(E::BadTableId)
    );
    assert_eq!(
        dp.check_action(&BebaAction::IncState { table_id: 3 }),
        Ok(())
    );
}

/// Malformed bytes are refused by the codec before the semantics, with
/// the codes the BEBA switch's decoder sends.
#[test]
fn malformed_state_mod_bytes_are_refused_by_the_codec() {
    let decode = |data: Vec<u8>| {
        BebaMessage::from_experimenter(&Experimenter {
            experimenter: ofp::beba::BEBA_EXPERIMENTER,
            exp_type: 0,
            data,
        })
        .map(|r| r.map_err(|e| e.refusal))
    };
    let beba = |c| Some(Err(Refusal::Beba(c)));
    // Extractor with zero fields.
    assert_eq!(
        decode(vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
        beba(BebaErrorCode::BadExpLen)
    );
    // Unknown command.
    assert_eq!(decode(vec![9, 0]), beba(BebaErrorCode::StateModBadCommand));
    // SET_FLOW_STATE announcing 4 key bytes, carrying 3.
    let mut m = vec![3, 0, 0, 0, 0, 0, 0, 0, 0, 4];
    m.extend([0; 24]);
    m.extend([1, 2, 3]);
    assert_eq!(decode(m), beba(BebaErrorCode::BadExpLen));
}

#[test]
fn state_stats_filter_delete_and_default_record() {
    let dp = configured(&[Field::Ipv4Src, Field::TcpDst], &[]);
    for (src, port, state) in [(A, 22, 1), (A, 80, 2), (B, 22, 2)] {
        let hard = SetState {
            hard_timeout: 5_000_000,
            hard_rollback: 9,
            ..set(state)
        };
        dp.apply_action(
            &BebaAction::SetState(hard),
            &tcp(src, B, 0, port),
            1_000_000,
        );
    }
    let req = |kind, state, fields| StateStatsRequest {
        kind,
        table_id: 0,
        state,
        match_: Match::new(fields),
    };
    let now = 3_500_000;
    let all = dp
        .state_stats(&req(StateStatsKind::Full, None, vec![]), now)
        .expect("ok");
    assert_eq!(all.len(), 4, "three flows and the DEFAULT record");
    let last = all.last().expect("default");
    assert_eq!((last.key.len(), last.state, last.table_id), (0, 0, 0));
    let a22 = all
        .iter()
        .find(|r| r.key == [10, 0, 0, 1, 22, 0])
        .expect("A:22, port little-endian");
    assert_eq!(
        (a22.state, a22.hard_timeout, a22.hard_rollback),
        (1, 5_000_000, 9)
    );
    assert_eq!((a22.duration_sec, a22.duration_nsec), (2, 500_000_000));
    // Match on a scope field, by value.
    let port22 = dp
        .state_stats(
            &req(StateStatsKind::Full, None, vec![OxmField::TcpDst(22)]),
            now,
        )
        .expect("ok");
    assert_eq!(port22.len(), 3, "two flows + DEFAULT");
    // A field outside the scope selects nothing, not even DEFAULT.
    let none = dp
        .state_stats(
            &req(StateStatsKind::Full, None, vec![OxmField::UdpDst(22)]),
            now,
        )
        .expect("ok");
    assert!(none.is_empty());
    // get_from_state.
    let in2 = dp
        .state_stats(&req(StateStatsKind::Short, Some(2), vec![]), now)
        .expect("ok");
    assert_eq!(in2.len(), 2);
    // Timeouts are applied before reporting.
    let later = dp
        .state_stats(&req(StateStatsKind::Short, Some(9), vec![]), 7_000_000)
        .expect("ok");
    assert_eq!(later.len(), 3);
    // Stats-and-delete forgets what it reports.
    let del = dp
        .state_stats(
            &req(
                StateStatsKind::AndDelete,
                None,
                vec![OxmField::Ipv4Src(A.into(), None)],
            ),
            now,
        )
        .expect("ok");
    assert_eq!(del.len(), 3);
    let rest = dp
        .state_stats(&req(StateStatsKind::Full, None, vec![]), now)
        .expect("ok");
    assert_eq!(rest.len(), 2);
    // Bad table.
    let mut bad = req(StateStatsKind::Full, None, vec![]);
    bad.table_id = 9;
    assert!(dp.state_stats(&bad, now).is_err());
    bad.table_id = 0xff;
    assert_eq!(dp.state_stats(&bad, now).map(|r| r.len()), Ok(2));
}

#[test]
fn set_flow_state_message_and_timeouts_in_microseconds() {
    let dp = configured(&[Field::Ipv4Src], &[]);
    let t = dp.table(0).expect("table 0");
    let m = StateMod::SetFlowState(SetFlowState {
        table_id: 0,
        key: A.to_vec(),
        state: 5,
        state_mask: u32::MAX,
        idle_timeout: 2_000_000,
        idle_rollback: 1,
        ..SetFlowState::default()
    });
    let ch = dp
        .apply_state_mod(&m, 10_000_000)
        .expect("ok")
        .expect("changed");
    assert_eq!((ch.table_id, ch.new_state), (0, 5));
    let k = tcp(A, B, 0, 0);
    assert_eq!(t.lookup(&k, 11_999_000), Some(5));
    assert_eq!(t.lookup(&k, 14_000_000), Some(1), "2 s idle");
    let tr = Transition {
        state: 3,
        mask: 1,
        ..Transition::default()
    };
    assert_eq!(
        t.set_flow_state(&A, &tr, 15_000_000)
            .map(|c| c.map(|c| c.new_state)),
        Ok(None),
        "1 & !1 | 3 & 1 = 1"
    );
}

/// STATE_CHANGED is queued for a SET_STATE that changes a state, as the
/// BEBA switch sends it (`udatapath/dp_exp.c`); not for one that leaves
/// the state as it was, nor for SET_FLOW_STATE, INC_STATE or a timeout.
#[test]
fn set_state_changes_queue_notifications() {
    let dp = configured(&[Field::Ipv4Src], &[]);
    let k = tcp(A, B, 1, 2);
    let queued = |dp: &Stateful| {
        let mut v = Vec::new();
        dp.notifications().drain(|e| v.push(e));
        v
    };
    let hard = SetState {
        hard_timeout: 1000,
        hard_rollback: 0,
        ..set(3)
    };
    dp.apply_action(&BebaAction::SetState(hard.clone()), &k, 10);
    dp.apply_action(&BebaAction::SetState(hard), &k, 11);
    let got = queued(&dp);
    assert_eq!(got.len(), 1, "{got:?}");
    let m = got[0].to_message();
    assert_eq!(
        (m.table_id, m.old_state, m.new_state, m.state_mask),
        (0, 0, 3, u32::MAX)
    );
    assert_eq!(m.key, A, "the update-scope key");
    // The hard timeout rolls it back: no notification.
    assert_eq!(dp.table(0).and_then(|t| t.lookup(&k, 2000)), Some(0));
    dp.apply_action(&BebaAction::IncState { table_id: 0 }, &k, 2001);
    let m = StateMod::SetFlowState(SetFlowState {
        table_id: 0,
        key: B.to_vec(),
        state: 5,
        state_mask: u32::MAX,
        ..SetFlowState::default()
    });
    assert!(matches!(dp.apply_state_mod(&m, 2002), Ok(Some(_))));
    assert_eq!(queued(&dp), []);
    assert_eq!(dp.notifications().dropped(), 0);
}
