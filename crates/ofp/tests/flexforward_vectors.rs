//! The FlexForward vectors (tests/vectors/ofp/flexforward.json, written by
//! python/tools/gen_flexforward_vectors.py with `oxflow.flexforward` and
//! os-ken): every message decodes generically, its FlexForward part
//! decodes to the typed values the vector records (or is refused with the
//! recorded code), and both re-encode to the same bytes.

use ofp::error::ErrorMsg;
use ofp::flexforward::{
    Fallback, FlexCounters, FlexErrorCode, FlexMessage, FwMode, FwModeReply, Override, Scope,
    SetFwMode, SetHyperCube, FLEX_EXPERIMENTER,
};
use ofp::message::Message;
use ofp::OfpMessage;
use serde_json::Value;
use std::path::Path;

fn load() -> Vec<Value> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp/flexforward.json");
    let text = std::fs::read_to_string(&p).expect("flexforward.json");
    match serde_json::from_str(&text).expect("valid JSON") {
        Value::Array(v) => v,
        _ => panic!("flexforward.json is not a list"),
    }
}

fn u(v: &Value) -> u32 {
    v.as_u64().expect("number").try_into().expect("u32")
}

fn mode(v: &Value) -> Option<FwMode> {
    let s = v.as_str().expect("mode");
    (s != "clear").then(|| FwMode::parse(s).expect("mode name"))
}

fn fallback(v: &Value) -> Fallback {
    match v.as_str().expect("fallback") {
        "openflow" => Fallback::OpenFlow,
        "drop" => Fallback::Drop,
        other => panic!("fallback {other}"),
    }
}

fn pairs(v: &Value) -> Vec<(u32, u32)> {
    v.as_array()
        .expect("pairs")
        .iter()
        .map(|p| (u(&p[0]), u(&p[1])))
        .collect()
}

fn hypercube(t: &Value) -> SetHyperCube {
    SetHyperCube {
        address: u(&t["address"]),
        local_port: u(&t["local_port"]),
        neighbours: pairs(&t["neighbours"]),
    }
}

fn expected(name: &str, t: &Value) -> FlexMessage {
    if name.starts_with("set_fwmode") {
        let scope = match t["scope"].as_str().expect("scope") {
            "switch" => Scope::Switch,
            "ports" => Scope::Ports(
                t["ports"]
                    .as_array()
                    .expect("ports")
                    .iter()
                    .map(u)
                    .collect(),
            ),
            "vlan" => Scope::Vlan(u(&t["vlan"]) as u16),
            other => panic!("scope {other}"),
        };
        FlexMessage::SetFwMode(SetFwMode {
            mode: mode(&t["mode"]),
            fallback: fallback(&t["fallback"]),
            scope,
        })
    } else if name.starts_with("set_hypercube") {
        FlexMessage::SetHyperCube(hypercube(t))
    } else if name == "set_keyflow" {
        FlexMessage::SetKeyFlow { key: u(&t["key"]) }
    } else if name == "get_fwmode" {
        FlexMessage::GetFwMode
    } else if name.starts_with("fwmode_reply") {
        let overrides = |v: &Value| -> Vec<(u32, FwMode, Fallback)> {
            v.as_array()
                .expect("overrides")
                .iter()
                .map(|o| (u(&o[0]), mode(&o[1]).expect("mode"), fallback(&o[2])))
                .collect()
        };
        let c: Vec<u64> = t["counters"]
            .as_array()
            .expect("counters")
            .iter()
            .map(|c| c.as_u64().expect("counter"))
            .collect();
        FlexMessage::FwModeReply(FwModeReply {
            mode: mode(&t["mode"]).expect("mode"),
            fallback: fallback(&t["fallback"]),
            hypercube: (!t["hypercube"].is_null()).then(|| hypercube(&t["hypercube"])),
            keyflow_key: t["keyflow_key"].as_u64().map(|k| k as u32),
            ports: overrides(&t["ports"])
                .into_iter()
                .map(|(key, mode, fallback)| Override {
                    key,
                    mode,
                    fallback,
                })
                .collect(),
            vlans: overrides(&t["vlans"])
                .into_iter()
                .map(|(key, mode, fallback)| Override {
                    key: key as u16,
                    mode,
                    fallback,
                })
                .collect(),
            counters: FlexCounters {
                hypercube_fwd: c[0],
                keyflow_fwd: c[1],
                fallback_table: c[2],
                fallback_drop: c[3],
            },
        })
    } else {
        panic!("{name}: no expectation")
    }
}

#[test]
fn flexforward_vectors_decode_to_their_values() {
    let vectors = load();
    assert!(vectors.len() >= 30, "too few vectors");
    let mut codes_seen = std::collections::BTreeSet::new();
    for v in &vectors {
        let name = v["name"].as_str().expect("name");
        let raw = hex::decode(v["hex"].as_str().expect("hex")).expect("hex");
        let msg = OfpMessage::decode(&raw).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(msg.encode(), raw, "{name}: generic re-encode");
        match &msg.body {
            Message::Experimenter(e) => {
                let got = FlexMessage::from_experimenter(e).expect("flex experimenter id");
                if let Some(code) = v["refused"].as_u64() {
                    let err = got.expect_err(name);
                    assert_eq!(err.code as u64, code, "{name}: refusal code");
                    continue;
                }
                let m = got.unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(m, expected(name, &v["flex"]), "{name}");
                assert_eq!(&m.to_experimenter(), e, "{name}: re-encoded body");
            }
            Message::Error(ErrorMsg::Experimenter {
                exp_type,
                experimenter,
                ..
            }) => {
                assert_eq!(*experimenter, FLEX_EXPERIMENTER, "{name}");
                let code = FlexErrorCode::from_u16(*exp_type).expect("known code");
                assert_eq!(
                    u64::from(*exp_type),
                    v["flex"]["code"].as_u64().expect("code")
                );
                assert_eq!(name, format!("error_{}", code.name().to_lowercase()));
                codes_seen.insert(*exp_type);
            }
            other => panic!("{name}: unexpected {other:?}"),
        }
    }
    assert_eq!(codes_seen.len(), FlexErrorCode::ALL.len(), "every code");
}
