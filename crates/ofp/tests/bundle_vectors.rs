//! Cross-check of the ONF bundle codec (`ofp::bundle`) against os-ken:
//! every vector in tests/vectors/ofp/bundle.json (made by os-ken's
//! ONFBundleCtrlMsg / ONFBundleAddMsg, python/tools/gen_ofp_vectors.py)
//! decodes to the fields os-ken recorded, and re-encodes byte-identically
//! from the typed value.

use std::path::Path;

use ofp::bundle::{self, BundleMsg};
use ofp::{Message, OfpMessage};
use serde_json::Value;

#[test]
fn os_ken_bundle_messages_decode_to_their_fields_and_reencode() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/ofp/bundle.json");
    let text = std::fs::read_to_string(&path).expect("bundle.json (run gen_ofp_vectors.py)");
    let items: Vec<Value> = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(items.len(), 10);
    for v in items {
        let name = v["name"].as_str().unwrap();
        let bytes = hex::decode(v["hex"].as_str().unwrap()).unwrap();
        let m = OfpMessage::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let Message::Experimenter(e) = &m.body else {
            panic!("{name}: not an experimenter message")
        };
        let b = bundle::decode(e, m.xid)
            .unwrap_or_else(|| panic!("{name}: not a bundle message"))
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let (exp, fields) = match &b {
            BundleMsg::Ctrl(c) => {
                let f = &v["fields"]["ONFBundleCtrlMsg"];
                assert_eq!(u64::from(c.bundle_id), f["bundle_id"], "{name}");
                assert_eq!(u64::from(c.ctrl_type), f["type"], "{name}");
                assert_eq!(u64::from(c.flags), f["flags"], "{name}");
                (c.to_experimenter(), f)
            }
            BundleMsg::Add(a) => {
                let f = &v["fields"]["ONFBundleAddMsg"];
                assert_eq!(u64::from(a.bundle_id), f["bundle_id"], "{name}");
                assert_eq!(u64::from(a.flags), f["flags"], "{name}");
                let inner = OfpMessage::decode(&a.message)
                    .unwrap_or_else(|e| panic!("{name}: embedded: {e}"));
                assert_eq!(inner.xid, m.xid, "{name}: embedded xid");
                let (cls, _) = f["message"]
                    .as_object()
                    .and_then(|o| o.iter().next())
                    .expect("embedded message fields");
                let want = match cls.as_str() {
                    "OFPFlowMod" => ofp::header::msg_type::FLOW_MOD,
                    "OFPGroupMod" => ofp::header::msg_type::GROUP_MOD,
                    "OFPMeterMod" => ofp::header::msg_type::METER_MOD,
                    "OFPPortMod" => ofp::header::msg_type::PORT_MOD,
                    other => panic!("{name}: {other}"),
                };
                assert_eq!(inner.body.msg_type(), want, "{name}");
                (a.to_experimenter(), f)
            }
        };
        assert!(fields.is_object(), "{name}");
        let again = OfpMessage::new(m.xid, Message::Experimenter(exp)).encode();
        assert_eq!(again, bytes, "{name}: re-encoded bytes differ");
    }
}
