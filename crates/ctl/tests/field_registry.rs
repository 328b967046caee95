//! The field registry (`packet::registry`) walked row by row against the
//! three places that use it: the OXM codec (`ofp`), the data-path key
//! (`packet::Field`) and the ctl names. Each row must round-trip: OXM id ->
//! row -> `Field` -> ctl name -> parsed match -> the same OXM id on the wire.

use ctl::fields;
use ctl::flow::{format_match, parse_flow, FlowUsage};
use ofp::oxm::{class, FieldInfo, OxmField, Prerequisites};
use packet::registry::{self, module_field, Prereq, Syntax, CLASS_BASIC, CLASS_EXPERIMENTER};
use packet::{Field, FieldDef, OxmId, FIELD_DEFS};

/// ctl text that satisfies `p` (without the field itself).
fn prereq_text(p: &Prereq) -> String {
    let mut parts = Vec::new();
    if p.in_port {
        parts.push("in_port=1".to_string());
    }
    if p.vlan_present {
        parts.push("vlan_vid=0x1001".to_string());
    }
    let eth = p.eth_types.first().copied();
    let eth = match (eth, p.ip_proto, p.icmpv6_types.is_empty()) {
        (Some(t), _, _) => Some(t),
        (None, Some(_), _) => Some(0x0800),
        (None, None, false) => Some(0x86dd),
        (None, None, true) => None,
    };
    if let Some(t) = eth {
        parts.push(format!("eth_type={t:#06x}"));
    }
    if let Some(proto) = p.ip_proto {
        parts.push(format!("ip_proto={proto}"));
    }
    if let Some(t) = p.icmpv6_types.first() {
        parts.push(format!("ip_proto=58,icmpv6_type={t}"));
    }
    parts.join(",")
}

/// The registry identity of a decoded OXM field.
fn oxm_id(f: &OxmField) -> OxmId {
    match f {
        OxmField::Experimenter {
            experimenter,
            field,
            ..
        } => OxmId::experimenter(*experimenter, *field),
        other => OxmId {
            class: other.class(),
            experimenter: 0,
            field: other.field_id(),
        },
    }
}

/// The OXM field a row's ctl name with value 1 must parse to.
fn expected(d: &FieldDef, oxm: OxmId) -> OxmField {
    if oxm.class == CLASS_EXPERIMENTER {
        fields::make_experimenter_field(d, 1, None).expect(d.name)
    } else {
        OxmField::from_bits(oxm.field, 1, None).expect(d.name)
    }
}

#[test]
fn every_row_round_trips_through_ofp_packet_and_ctl() {
    let mut walked = 0;
    for d in FIELD_DEFS {
        let Some(oxm) = d.oxm else {
            assert!(d.ctl.is_empty(), "{}: ctl name without OXM field", d.name);
            continue;
        };
        // OXM id -> row -> Field.
        assert_eq!(registry::by_oxm(oxm), Some(d), "{}", d.name);
        assert_eq!(d.field.and_then(Field::oxm), d.field.map(|_| oxm));
        if let Some(f) = d.field {
            assert_eq!(Field::from_oxm(oxm), Some(f));
        }
        // Field -> ctl name -> parse.
        let name = d
            .ctl_name()
            .unwrap_or_else(|| panic!("{}: no ctl name", d.name));
        let pre = prereq_text(&d.prereq);
        let one = match d.syntax {
            Syntax::Mac => "00:00:00:00:00:01",
            Syntax::Ipv4 => "0.0.0.1",
            Syntax::Ipv6 => "::1",
            Syntax::Dec | Syntax::Hex | Syntax::Port | Syntax::Exthdr | Syntax::TcpFlags => "1",
        };
        let text = if pre.is_empty() {
            format!("{name}={one}")
        } else {
            format!("{pre},{name}={one}")
        };
        let spec =
            parse_flow(&text, FlowUsage::Filter).unwrap_or_else(|e| panic!("{}", e.render(&text)));
        let got: Vec<&OxmField> = spec
            .match_
            .fields
            .iter()
            .filter(|f| oxm_id(f) == oxm)
            .collect();
        assert_eq!(got, vec![&expected(d, oxm)], "{text}");
        // -> the same OXM header on the wire.
        let mut wire = Vec::new();
        got[0].encode(&mut wire);
        let header = u32::from_be_bytes([wire[0], wire[1], wire[2], wire[3]]);
        assert_eq!(header, oxm.header(d.width, false), "{text}");
        // ctl prints what it parses.
        let printed = format_match(&spec.match_, None);
        let again = parse_flow(&printed, FlowUsage::Filter)
            .unwrap_or_else(|e| panic!("{}", e.render(&printed)));
        assert_eq!(again.match_, spec.match_, "{text} printed as {printed}");
        walked += 1;
    }
    assert!(walked >= 42, "{walked} rows with an OXM identity");
}

#[test]
fn registry_agrees_with_the_ofp_codec() {
    let info = |d: &FieldDef| -> Option<FieldInfo> {
        let o = d.oxm.filter(|o| o.class == CLASS_BASIC)?;
        ofp::oxm::field::info(o.field)
    };
    for d in FIELD_DEFS
        .iter()
        .filter(|d| d.oxm.is_some_and(|o| o.class == CLASS_BASIC))
    {
        let i = info(d).unwrap_or_else(|| panic!("{}: ofp has no such field", d.name));
        assert_eq!((i.len, i.maskable), (d.width, d.maskable), "{}", d.name);
        assert_eq!(i.name.to_ascii_lowercase(), d.name);
    }
    for i in ofp::oxm::FIELD_INFO {
        assert!(
            registry::by_oxm(OxmId::basic(i.id)).is_some(),
            "{}: no registry row",
            i.name
        );
    }
    assert_eq!(CLASS_BASIC, class::OPENFLOW_BASIC);
    assert_eq!(CLASS_EXPERIMENTER, class::EXPERIMENTER);
}

/// The prerequisites in the table are the ones the codec enforces
/// (`ofp::oxm::Prerequisites`, what flow-mods are checked with).
#[test]
fn registry_prerequisites_are_the_codecs() {
    for d in FIELD_DEFS
        .iter()
        .filter(|d| d.oxm.is_some_and(|o| o.class == CLASS_BASIC))
    {
        let oxm = d.oxm.expect("filtered");
        let f = OxmField::from_bits(oxm.field, 0, None).expect(d.name);
        let p = &d.prereq;
        let met = Prerequisites {
            eth_type: p.eth_types.first().copied(),
            ip_proto: p.ip_proto,
            icmpv6_type: p.icmpv6_types.first().copied(),
            vlan_vid: p.vlan_present.then_some(0x1001),
            in_port: p.in_port,
        };
        assert!(
            met.allows(&f),
            "{}: {p:?} does not satisfy the codec",
            d.name
        );
        for t in p.eth_types {
            assert!(
                Prerequisites {
                    eth_type: Some(*t),
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
        assert_eq!(
            Prerequisites::default().allows(&f),
            p.is_none(),
            "{}: the codec and the table disagree on whether it has prerequisites",
            d.name
        );
        // Each listed requirement is needed.
        if !p.eth_types.is_empty() {
            assert!(
                !Prerequisites {
                    eth_type: Some(0x1234),
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
        if p.ip_proto.is_some() {
            assert!(
                !Prerequisites {
                    ip_proto: Some(255),
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
        if !p.icmpv6_types.is_empty() {
            assert!(
                !Prerequisites {
                    icmpv6_type: Some(1),
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
        if p.vlan_present {
            assert!(
                !Prerequisites {
                    vlan_vid: Some(0),
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
        if p.in_port {
            assert!(
                !Prerequisites {
                    in_port: false,
                    ..met
                }
                .allows(&f),
                "{}",
                d.name
            );
        }
    }
}

/// BEBA's experimenter fields are rows like any other: ctl parses and
/// prints them, and the BEBA codec reads what ctl builds.
#[test]
fn beba_state_has_a_row() {
    use ofp::beba::oxm::{field as beba_field, BebaField};
    let state = &FIELD_DEFS[usize::from(module_field::STATE.0)];
    assert_eq!(
        state.oxm,
        Some(OxmId::experimenter(
            ofp::beba::BEBA_EXPERIMENTER,
            beba_field::STATE
        ))
    );
    let global = &FIELD_DEFS[usize::from(module_field::GLOBAL_STATE.0)];
    assert_eq!(
        global.oxm,
        Some(OxmId::experimenter(
            ofp::beba::BEBA_EXPERIMENTER,
            beba_field::GLOBAL_STATE
        ))
    );
    let text = "in_phy_port=3,in_port=3,global_state=0x1/0x1,state=0x2a";
    let spec = parse_flow(text, FlowUsage::Filter).unwrap_or_else(|e| panic!("{}", e.render(text)));
    let beba: Vec<BebaField> = spec
        .match_
        .fields
        .iter()
        .filter_map(|f| BebaField::from_oxm(f).map(|r| r.expect("valid BEBA field")))
        .collect();
    assert_eq!(
        beba,
        vec![
            BebaField::GlobalState(1, Some(1)),
            BebaField::State(42, None)
        ]
    );
    assert_eq!(
        format_match(&spec.match_, None),
        "in_port=3,in_phy_port=3,global_state=0x1/0x1,state=0x2a"
    );
    // Bad input says what is wrong.
    for (bad, why) in [
        ("state=0x100000000", "out of range"),
        ("state=zz", "bad value"),
        ("state=0x1/0x100000000", "out of range"),
        ("state=1,state=2", "conflicts"),
    ] {
        let e = parse_flow(bad, FlowUsage::Filter).expect_err(bad);
        assert!(e.render(bad).contains(why), "{bad}: {}", e.render(bad));
    }
}
