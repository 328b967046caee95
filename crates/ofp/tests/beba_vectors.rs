//! The BEBA vectors (tests/vectors/ofp/beba.json, written by
//! python/tools/gen_beba_vectors.py with `oxflow.beba` and os-ken): every
//! message decodes generically, its BEBA part decodes to the typed values
//! the vector records, and both re-encode to the same bytes.

use ofp::action::Action;
use ofp::beba::{
    BebaAction, BebaErrorCode, BebaField, BebaMessage, BebaMultipartReply, BebaMultipartRequest,
    Extractor, FlowNotification, InSwitchPktGen, PktTmpMod, SetFlowState, SetState, StateChanged,
    StateEntryStats, StateMod, StateStatsKind,
};
use ofp::instruction::Instruction;
use ofp::message::Message;
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};
use ofp::OfpMessage;
use serde_json::Value;
use std::path::Path;

fn load() -> Vec<Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp/beba.json");
    let text = std::fs::read_to_string(&p).expect("beba.json");
    match serde_json::from_str(&text).expect("valid JSON") {
        Value::Array(v) => v,
        _ => panic!("beba.json is not a list"),
    }
}

fn u(v: &Value, k: &str) -> u32 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
        .try_into()
        .expect("u32")
}

fn u8_(v: &Value, k: &str) -> u8 {
    u(v, k).try_into().expect("u8")
}

fn b(v: &Value, k: &str) -> bool {
    v[k].as_bool()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn bytes(v: &Value, k: &str) -> Vec<u8> {
    hex::decode(v[k].as_str().expect("hex string")).expect("hex")
}

fn expected_message(name: &str, t: &Value) -> BebaMessage {
    if name.starts_with("state_mod") {
        let s = match t["command"].as_str().expect("command") {
            "stateful_table_config" => StateMod::StatefulTableConfig {
                table_id: u8_(t, "table_id"),
                stateful: b(t, "stateful"),
            },
            c @ ("set_l_extractor" | "set_u_extractor") => {
                let e = Extractor {
                    table_id: u8_(t, "table_id"),
                    bit: b(t, "bit"),
                    fields: t["fields"]
                        .as_array()
                        .expect("fields")
                        .iter()
                        .map(|f| f.as_u64().expect("field") as u32)
                        .collect(),
                };
                if c == "set_l_extractor" {
                    StateMod::SetLookupExtractor(e)
                } else {
                    StateMod::SetUpdateExtractor(e)
                }
            }
            "set_flow_state" => StateMod::SetFlowState(SetFlowState {
                table_id: u8_(t, "table_id"),
                key: bytes(t, "key"),
                state: u(t, "state"),
                state_mask: u(t, "state_mask"),
                hard_rollback: u(t, "hard_rollback"),
                idle_rollback: u(t, "idle_rollback"),
                hard_timeout: u(t, "hard_timeout"),
                idle_timeout: u(t, "idle_timeout"),
            }),
            "del_flow_state" => StateMod::DelFlowState {
                table_id: u8_(t, "table_id"),
                key: bytes(t, "key"),
            },
            "set_global_state" => StateMod::SetGlobalState {
                value: u(t, "value"),
                mask: u(t, "mask"),
            },
            "reset_global_state" => StateMod::ResetGlobalState,
            other => panic!("unknown command {other}"),
        };
        BebaMessage::StateMod(s)
    } else if name.starts_with("pkttmp") {
        BebaMessage::PktTmpMod(match t["command"].as_str() {
            Some("add") => PktTmpMod::Add {
                pkttmp_id: u(t, "pkttmp_id"),
                data: bytes(t, "data"),
            },
            _ => PktTmpMod::Delete {
                pkttmp_id: u(t, "pkttmp_id"),
            },
        })
    } else if name.starts_with("state_changed") {
        BebaMessage::StateChanged(StateChanged {
            table_id: u(t, "table_id"),
            old_state: u(t, "old_state"),
            new_state: u(t, "new_state"),
            state_mask: u(t, "state_mask"),
            key: bytes(t, "key"),
        })
    } else {
        panic!("no expectation for {name}")
    }
}

fn check_message(name: &str, t: &Value, body: &Message) {
    let Message::Experimenter(e) = body else {
        panic!("{name}: not an experimenter message");
    };
    let m = BebaMessage::from_experimenter(e)
        .expect("BEBA id")
        .unwrap_or_else(|err| panic!("{name}: {err}"));
    if let BebaMessage::FlowNotification(FlowNotification {
        table_id,
        ntf_type,
        match_,
        instructions,
    }) = &m
    {
        assert_eq!(*table_id, u(t, "table_id"), "{name}");
        assert_eq!(*ntf_type, u(t, "ntf_type"), "{name}");
        assert_eq!(match_.length(), u(t, "match_len") as usize, "{name}");
        let want: Vec<u32> = t["instructions"]
            .as_array()
            .expect("instructions")
            .iter()
            .map(|x| x.as_u64().expect("u32") as u32)
            .collect();
        assert_eq!(*instructions, want, "{name}");
    } else {
        assert_eq!(m, expected_message(name, t), "{name}");
    }
    assert_eq!(&m.to_experimenter(), e, "{name}: re-encoded body");
}

fn check_flow_mod(name: &str, t: &Value, body: &Message) {
    let Message::FlowMod(fm) = body else {
        panic!("{name}: not a flow mod");
    };
    let fields: Vec<BebaField> = fm
        .match_
        .fields
        .iter()
        .filter_map(BebaField::from_oxm)
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect();
    let want: Vec<BebaField> = t["match"]
        .as_array()
        .expect("match")
        .iter()
        .map(|f| {
            let value = f[1].as_u64().expect("value") as u32;
            let mask = f[2].as_u64().map(|m| m as u32);
            match f[0].as_str() {
                Some("state") => BebaField::State(value, mask),
                _ => BebaField::GlobalState(value, mask),
            }
        })
        .collect();
    assert_eq!(fields, want, "{name}: match");
    for f in &fields {
        assert!(fm.match_.fields.contains(&f.to_oxm()), "{name}: to_oxm");
    }
    let mut actions = Vec::new();
    for i in &fm.instructions {
        match i {
            Instruction::ApplyActions(list) => {
                for a in list {
                    if let Some(r) = BebaAction::from_action(a) {
                        let ba = r.unwrap_or_else(|e| panic!("{name}: {e}"));
                        assert_eq!(&ba.to_action(), a, "{name}: action re-encoded");
                        actions.push(ba);
                    }
                }
            }
            Instruction::Experimenter { .. } => {
                let g = InSwitchPktGen::from_instruction(i)
                    .expect("BEBA id")
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let pg = &t["pkt_gen"];
                assert_eq!(g.pkttmp_id, u(pg, "pkttmp_id"), "{name}");
                assert_eq!(g.actions.len(), u(pg, "actions") as usize, "{name}");
                assert_eq!(&g.to_instruction(), i, "{name}: instruction re-encoded");
            }
            _ => {}
        }
    }
    if let Some(want) = t["actions"].as_array() {
        let want: Vec<BebaAction> = want
            .iter()
            .map(|a| match a["action"].as_str() {
                Some("set_state") => BebaAction::SetState(SetState {
                    state: u(a, "state"),
                    state_mask: u(a, "state_mask"),
                    table_id: u8_(a, "table_id"),
                    hard_rollback: u(a, "hard_rollback"),
                    idle_rollback: u(a, "idle_rollback"),
                    hard_timeout: u(a, "hard_timeout"),
                    idle_timeout: u(a, "idle_timeout"),
                    bit: b(a, "bit"),
                }),
                Some("set_global_state") => BebaAction::SetGlobalState {
                    value: u(a, "value"),
                    mask: u(a, "mask"),
                },
                _ => BebaAction::IncState {
                    table_id: u8_(a, "table_id"),
                },
            })
            .collect();
        assert_eq!(actions, want, "{name}: actions");
    }
}

fn kind_of(t: &Value) -> StateStatsKind {
    StateStatsKind::from_exp_type(u(t, "exp_type")).expect("state stats exp_type")
}

fn check_request(name: &str, t: &Value, body: &Message) {
    let Message::MultipartRequest(mp) = body else {
        panic!("{name}: not a multipart request");
    };
    let MultipartRequestBody::Experimenter(e) = &mp.body else {
        panic!("{name}: not an experimenter multipart");
    };
    let r = BebaMultipartRequest::from_experimenter(e)
        .expect("BEBA id")
        .unwrap_or_else(|err| panic!("{name}: {err}"));
    match &r {
        BebaMultipartRequest::GlobalStateStats => assert_eq!(u(t, "exp_type"), 1, "{name}"),
        BebaMultipartRequest::StateStats(s) => {
            assert_eq!(s.kind, kind_of(t), "{name}");
            assert_eq!(s.table_id, u8_(t, "table_id"), "{name}");
            assert_eq!(s.state, t["state"].as_u64().map(|x| x as u32), "{name}");
            assert_eq!(s.match_.length(), u(t, "match_len") as usize, "{name}");
        }
    }
    assert_eq!(&r.to_experimenter(), e, "{name}: re-encoded body");
}

fn check_reply(name: &str, t: &Value, body: &Message) {
    let Message::MultipartReply(mp) = body else {
        panic!("{name}: not a multipart reply");
    };
    let MultipartReplyBody::Experimenter(e) = &mp.body else {
        panic!("{name}: not an experimenter multipart");
    };
    let r = BebaMultipartReply::from_experimenter(e)
        .expect("BEBA id")
        .unwrap_or_else(|err| panic!("{name}: {err}"));
    let want = if t.get("global_state").is_some() {
        BebaMultipartReply::GlobalStateStats {
            global_state: u(t, "global_state"),
        }
    } else {
        let kind = kind_of(t);
        let entries = t["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|x| {
                let o = |k| x.get(k).and_then(Value::as_u64).unwrap_or(0) as u32;
                StateEntryStats {
                    table_id: u8_(x, "table_id"),
                    key: bytes(x, "key"),
                    duration_sec: o("duration_sec"),
                    duration_nsec: o("duration_nsec"),
                    hard_rollback: o("hard_rollback"),
                    idle_rollback: o("idle_rollback"),
                    hard_timeout: o("hard_timeout"),
                    idle_timeout: o("idle_timeout"),
                    state: u(x, "state"),
                }
            })
            .collect();
        BebaMultipartReply::StateStats { kind, entries }
    };
    assert_eq!(r, want, "{name}");
    assert_eq!(&r.to_experimenter(), e, "{name}: re-encoded body");
}

#[test]
fn beba_vectors_decode_to_their_values_and_reencode_identically() {
    let vectors = load();
    assert!(vectors.len() >= 50, "expected the BEBA vectors");
    let mut kinds = std::collections::BTreeSet::new();
    for v in &vectors {
        let name = v["name"].as_str().expect("name");
        let raw = hex::decode(v["hex"].as_str().expect("hex")).expect("hex");
        let m = OfpMessage::decode(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(m.encode(), raw, "{name}: generic re-encode");
        let t = &v["beba"];
        let kind = v["kind"].as_str().expect("kind");
        kinds.insert(kind.to_owned());
        match kind {
            "message" => check_message(name, t, &m.body),
            "flow_mod" => check_flow_mod(name, t, &m.body),
            "multipart_request" => check_request(name, t, &m.body),
            "multipart_reply" => check_reply(name, t, &m.body),
            "error" => {
                let Message::Error(e) = &m.body else {
                    panic!("{name}: not an error");
                };
                let code = BebaErrorCode::from_error_msg(e).expect("BEBA error");
                assert_eq!(code as u32, u(t, "code"), "{name}");
            }
            other => panic!("{name}: unknown kind {other}"),
        }
    }
    assert_eq!(kinds.len(), 5, "every kind of vector present");
}

/// The action list inside IN_SWITCH_PKT_GEN is the standard one.
#[test]
fn pkt_gen_actions_are_standard_actions() {
    let g = InSwitchPktGen {
        pkttmp_id: 3,
        actions: vec![Action::Output {
            port: 2,
            max_len: 0xffff,
        }],
    };
    let i = g.to_instruction();
    assert_eq!(
        InSwitchPktGen::from_instruction(&i)
            .expect("BEBA id")
            .expect("decodes"),
        g
    );
}
