//! The state table against a model written from the BEBA switch's
//! behaviour (a hash map of entries, timeouts applied on look-up), over
//! arbitrary sequences of transitions, deletions, look-ups and sweeps.

use std::collections::HashMap;

use proptest::prelude::*;
use stateful::{StateTable, Transition, STATE_DEFAULT};

use ofp::oxm::{class, oxm_header};
use packet::{Field, FlowKey};

#[derive(Debug, Clone, Copy, Default)]
struct M {
    state: u32,
    hard: u32,
    idle: u32,
    hard_rb: u32,
    idle_rb: u32,
    remove_at: u64,
    last_used: u64,
}

fn expire(e: &mut M, now: u64) {
    if e.hard != 0 && now > e.remove_at {
        *e = M {
            state: e.hard_rb,
            ..M::default()
        };
    } else if e.idle != 0 && now > e.last_used + u64::from(e.idle) {
        *e = M {
            state: e.idle_rb,
            ..M::default()
        };
    }
}

#[derive(Debug, Clone)]
enum Op {
    Set(u8, Transition),
    Del(u8),
    Lookup(u8),
    Sweep,
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    // Idle timeouts under 128 µs: the store refreshes `last_used` at
    // 1/64 of the timeout, i.e. every microsecond, like the model.
    let tr = (
        0u32..4,
        prop_oneof![Just(u32::MAX), 0u32..4],
        0u32..3,
        0u32..3,
        0u32..100,
        0u32..100,
    )
        .prop_map(
            |(state, mask, hard_rollback, idle_rollback, hard_timeout, idle_timeout)| Transition {
                state,
                mask,
                hard_rollback,
                idle_rollback,
                hard_timeout,
                idle_timeout,
            },
        );
    prop_oneof![
        3 => (0u8..6, tr).prop_map(|(k, t)| Op::Set(k, t)),
        1 => (0u8..6).prop_map(Op::Del),
        4 => (0u8..6).prop_map(Op::Lookup),
        1 => Just(Op::Sweep),
        2 => (0u64..80).prop_map(Op::Wait),
    ]
}

fn packet(k: u8) -> FlowKey {
    let mut p = FlowKey::new(1);
    p.ipv4_src = u32::from_be_bytes([10, 0, 0, k]);
    p.present.insert(Field::Ipv4Src);
    p
}

proptest! {
    #[test]
    fn matches_the_reference_model(ops in proptest::collection::vec(op(), 1..120)) {
        let t = StateTable::new(0, 64);
        t.set_stateful(true);
        let h = oxm_header(class::OPENFLOW_BASIC, Field::Ipv4Src as u8, false, 4);
        prop_assert!(t.set_scope(&[h], false, false).is_ok());
        prop_assert!(t.set_scope(&[h], true, false).is_ok());
        let mut model: HashMap<u8, M> = HashMap::new();
        let mut now = 1u64;
        for op in ops {
            match op {
                Op::Set(k, tr) => {
                    let key = [10, 0, 0, k];
                    let old = model.get(&k).copied();
                    let new = match old {
                        Some(e) => (e.state & !tr.mask) | (tr.state & tr.mask),
                        None => tr.state & tr.mask,
                    };
                    let create = old.is_some()
                        || new != STATE_DEFAULT
                        || (tr.hard_timeout > 0 && tr.hard_rollback != STATE_DEFAULT)
                        || (tr.idle_timeout > 0 && tr.idle_rollback != STATE_DEFAULT);
                    if create {
                        let mut e = old.unwrap_or_default();
                        e.state = new;
                        if tr.hard_timeout > 0 && tr.hard_rollback != new {
                            e.hard = tr.hard_timeout;
                            e.hard_rb = tr.hard_rollback;
                            e.remove_at = now + u64::from(tr.hard_timeout);
                        } else {
                            e.hard = 0;
                            e.hard_rb = 0;
                        }
                        if tr.idle_timeout > 0 && tr.idle_rollback != new {
                            e.idle = tr.idle_timeout;
                            e.idle_rb = tr.idle_rollback;
                            e.last_used = now;
                        } else {
                            e.idle = 0;
                            e.idle_rb = 0;
                        }
                        model.insert(k, e);
                    }
                    let ch = t.set_flow_state(&key, &tr, now);
                    prop_assert!(ch.is_ok());
                    let changed = create && old.map_or(STATE_DEFAULT, |e| e.state) != new;
                    prop_assert_eq!(ch.ok().flatten().is_some(), changed);
                }
                Op::Del(k) => {
                    let r = t.del_flow_state(&[10, 0, 0, k]);
                    prop_assert_eq!(r.is_ok(), model.remove(&k).is_some());
                }
                Op::Lookup(k) => {
                    let want = match model.get_mut(&k) {
                        Some(e) => {
                            expire(e, now);
                            e.last_used = now;
                            e.state
                        }
                        None => STATE_DEFAULT,
                    };
                    prop_assert_eq!(t.lookup(&packet(k), now), Some(want), "key {} at {}", k, now);
                }
                Op::Sweep => {
                    t.sweep(now, 1 << 10);
                    for e in model.values_mut() {
                        expire(e, now);
                    }
                    model.retain(|_, e| !(e.state == STATE_DEFAULT && e.hard == 0 && e.idle == 0));
                    prop_assert_eq!(t.store().map(|s| s.len()), Some(model.len()));
                }
                Op::Wait(d) => now += d,
            }
        }
    }
}
