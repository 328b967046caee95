//! What the field registry knows about a field, and what adding one
//! touches (docs/walkthroughs/add-a-match-field.md).
//!
//! ```text
//! cargo run -p packet --example add_field            # every row
//! cargo run -p packet --example add_field -- tcp_dst # rows named tcp_dst
//! ```
//!
//! Each line is one row of `packet::registry`: the name ctl prints, the
//! OXM identity and the 32-bit OXM header of an exact match, the width,
//! whether a mask is allowed, the prerequisites, the parse layer and where
//! the value lives in the `FlowKey` (offset and size are computed by the
//! compiler from the table). Adding a match field is adding one such row
//! plus the code only a person can write: the key member it is stored in,
//! the parser lines that fill it, the OXM codec line in `ofp` and the
//! pipeline's value reader; the example checks the invariants that make
//! those places agree.

use packet::registry::{Prereq, CLASS_EXPERIMENTER};
use packet::{FieldDef, FlowKey, FIELD_DEFS};

fn prereq(p: &Prereq) -> String {
    let mut s = Vec::new();
    if p.in_port {
        s.push("in_port".to_string());
    }
    if p.vlan_present {
        s.push("vlan_vid!=none".to_string());
    }
    if !p.eth_types.is_empty() {
        let t: Vec<String> = p.eth_types.iter().map(|t| format!("{t:#06x}")).collect();
        s.push(format!("eth_type={}", t.join("|")));
    }
    if let Some(proto) = p.ip_proto {
        s.push(format!("ip_proto={proto}"));
    }
    if !p.icmpv6_types.is_empty() {
        let t: Vec<String> = p.icmpv6_types.iter().map(u8::to_string).collect();
        s.push(format!("icmpv6_type={}", t.join("|")));
    }
    if s.is_empty() {
        "-".into()
    } else {
        s.join(",")
    }
}

fn row(d: &FieldDef) -> String {
    let oxm = match d.oxm {
        None => "not an OXM field".to_string(),
        Some(o) if o.class == CLASS_EXPERIMENTER => format!(
            "exp {:#010x} field {:>2} header {:#010x}",
            o.experimenter,
            o.field,
            o.header(d.width, false)
        ),
        Some(o) => format!(
            "class {:#06x} field {:>2} header {:#010x}",
            o.class,
            o.field,
            o.header(d.width, false)
        ),
    };
    let key = match d.key {
        Some(k) => format!("key {}@{}+{}", k.member, k.offset, k.size),
        None => "no key member (a module supplies it)".into(),
    };
    format!(
        "{:>3} {:<16} {:<14} {oxm:<42} {:>2}B {:<6} {:<5} {:<28} {key}",
        d.id.0,
        d.name,
        d.ctl_name().unwrap_or("-"),
        d.width,
        if d.maskable { "mask" } else { "exact" },
        format!("{:?}", d.layer),
        prereq(&d.prereq),
    )
}

fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let mut shown = 0;
    for d in FIELD_DEFS {
        if wanted.is_empty()
            || wanted
                .iter()
                .any(|w| w == d.name || d.ctl.contains(&w.as_str()))
        {
            println!("{}", row(d));
            shown += 1;
        }
    }
    if shown == 0 {
        eprintln!("no registry row is called {}", wanted.join(" or "));
        std::process::exit(2);
    }
    // The invariants a new row must keep (the unit tests check them too).
    for d in FIELD_DEFS {
        if let Some(k) = d.key {
            assert!(
                k.offset + k.size <= std::mem::size_of::<FlowKey>() && d.width <= k.size,
                "{}: the key member cannot hold the value",
                d.name
            );
        }
        assert!(
            d.oxm.is_none() || !d.ctl.is_empty(),
            "{}: an OXM field needs a ctl name",
            d.name
        );
    }
}
