//! A table looked up with `in_port_array` forwards as one with the
//! built-in classifier: the same flows, installed, modified and deleted
//! through the flow-mod path, and the same frames, one by one and in
//! batches, come out of the same ports in both pipelines.

use ofp::action::Action;
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod};
use ofp::oxm::{Match, OxmField};
use ofp::port::{port_no, state};
use packet::PacketBuf;
use pipeline::{Output, PacketInEvent, Pipeline, PortInfo};
use std::net::Ipv4Addr;
use std::sync::atomic::Ordering;
use table_kind_example::{register, LOOKUPS, NAME};

/// What a pipeline sent: (port, frame) in order, and packet-ins.
#[derive(Default, Debug, PartialEq, Eq)]
struct Rec(Vec<(u32, Vec<u8>)>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], _queue: Option<u32>) {
        self.0.push((port, data.to_vec()));
    }
    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.0.push((port_no::CONTROLLER, ev.data.to_vec()));
    }
}

const PORTS: u32 = 6;

fn flow(command: u8, priority: u16, m: Vec<OxmField>, out: u32) -> FlowMod {
    FlowMod {
        cookie: u64::from(out),
        cookie_mask: 0,
        table_id: 0,
        command,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: u32::MAX,
        out_port: port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(m),
        instructions: vec![Instruction::ApplyActions(vec![Action::Output {
            port: out,
            max_len: 0,
        }])],
    }
}

/// IPv4/UDP to 10.0.`b`.1 (11.0.7.1 for `b` = 7), destination port
/// `dport`.
fn frame(b: u8, dport: u16) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1]);
    f.extend_from_slice(&[if b == 7 { 11 } else { 10 }, 0, b, 1]);
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]);
    f
}

/// The flow-mods: rules per in_port (alone, with a UDP port, with a
/// prefix), rules on other fields only, equal priorities (the earlier
/// installed wins), a table-miss, then a modify and strict deletes.
fn flow_mods() -> Vec<FlowMod> {
    let net = |b: u8, len: u32| {
        let mask = u32::MAX << (32 - len);
        vec![
            OxmField::EthType(0x0800),
            OxmField::Ipv4Dst(
                Ipv4Addr::from(u32::from(Ipv4Addr::new(10, 0, b, 0)) & mask),
                Some(Ipv4Addr::from(mask)),
            ),
        ]
    };
    // The same priority as the in_port rules, installed before them: it
    // wins where both match.
    let mut v = vec![
        flow(cmd::ADD, 0, vec![], port_no::CONTROLLER),
        flow(cmd::ADD, 100, net(6, 24), 6),
    ];
    for p in 1..=PORTS {
        v.push(flow(
            cmd::ADD,
            100,
            vec![OxmField::InPort(p)],
            p % PORTS + 1,
        ));
        let mut udp = vec![
            OxmField::InPort(p),
            OxmField::EthType(0x0800),
            OxmField::IpProto(17),
        ];
        udp.push(OxmField::UdpDst(53));
        v.push(flow(cmd::ADD, 200, udp, 1));
        let mut m = vec![OxmField::InPort(p)];
        m.extend(net(p as u8, 24));
        v.push(flow(cmd::ADD, 150, m, 2));
    }
    // Same priority as the in_port rules: installed later, so they lose
    // to them where both match.
    v.push(flow(cmd::ADD, 100, net(3, 16), 4));
    v.push(flow(cmd::ADD, 300, net(4, 24), 4));
    v.push(flow(cmd::ADD, 50, net(0, 8), 5));
    // Above every in_port rule.
    v.push(flow(cmd::ADD, 250, net(5, 24), 3));
    v.push(flow(cmd::ADD, 100, vec![OxmField::InPort(70_000)], 6));
    v.push(flow(cmd::MODIFY_STRICT, 100, vec![OxmField::InPort(2)], 5));
    v.push(flow(cmd::DELETE_STRICT, 100, vec![OxmField::InPort(3)], 0));
    v.push(flow(cmd::DELETE_STRICT, 300, net(4, 24), 0));
    v
}

fn pipeline(lookup: &str) -> Pipeline {
    let mut p = Pipeline::default();
    for no in 1..=PORTS {
        let info = PortInfo {
            config: 0,
            state: state::LIVE,
        };
        p.ports.insert(no, info);
    }
    pipeline::table_kinds::plug(&mut p, 0, lookup).expect("a registered lookup");
    for fm in flow_mods() {
        p.flow_mod(&fm, 0).expect("a valid flow-mod");
    }
    p
}

#[test]
fn forwards_as_the_builtin_classifier() {
    register();
    let mut plugged = pipeline(NAME);
    let mut builtin = pipeline("auto");
    assert_eq!(plugged.table(0).map(|t| t.classifier_kind()), Some(NAME));
    assert_ne!(builtin.table(0).map(|t| t.classifier_kind()), Some(NAME));
    let frames: Vec<Vec<u8>> = (0..8u8)
        .flat_map(|b| [53, 80].map(|d| frame(b, d)))
        .collect();
    let before = LOOKUPS.load(Ordering::Relaxed);
    let (mut a, mut b) = (Rec::default(), Rec::default());
    for in_port in 1..=PORTS {
        // One at a time, then all in one batch.
        for f in &frames {
            for (p, rec) in [(&mut plugged, &mut a), (&mut builtin, &mut b)] {
                p.process(&mut PacketBuf::from_slice(f), in_port, 0, rec)
                    .expect("a frame that parses");
            }
        }
        for (p, rec) in [(&mut plugged, &mut a), (&mut builtin, &mut b)] {
            let mut bufs: Vec<PacketBuf> =
                frames.iter().map(|f| PacketBuf::from_slice(f)).collect();
            p.process_batch(&mut bufs, in_port, 0, rec, |_, _, _, r| {
                assert!(r.is_ok(), "a frame that parses");
            });
        }
    }
    assert_eq!(a, b);
    // The structure answered (every packet of the plugged pipeline), and
    // the rules sent packets to every port and to the controller: the
    // comparison above saw different answers.
    let n = (2 * frames.len()) as u64 * u64::from(PORTS);
    assert!(LOOKUPS.load(Ordering::Relaxed) - before >= n);
    let mut outs: Vec<u32> = a.0.iter().map(|(p, _)| *p).collect();
    outs.sort_unstable();
    outs.dedup();
    assert_eq!(outs, [1, 2, 3, 4, 5, 6, port_no::CONTROLLER]);
}

/// A name nobody registered is refused, and so is a table that does not
/// exist.
#[test]
fn unknown_name_and_table_are_refused() {
    register();
    let mut p = Pipeline::new(4);
    let e = pipeline::table_kinds::plug(&mut p, 0, "no_such").unwrap_err();
    assert!(
        e.contains("unknown table lookup `no_such`") && e.contains(NAME),
        "{e}"
    );
    let e = pipeline::table_kinds::plug(&mut p, 4, NAME).unwrap_err();
    assert_eq!(e, "table 4 does not exist (tables 0..=3)");
}
