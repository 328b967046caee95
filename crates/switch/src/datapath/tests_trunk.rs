//! Trunk ports in the datapath (`trunk`, `trunk_start`, `graph_view`):
//! in-memory ports, real worker threads. Port 1 is a plain port; the
//! trunk carries VLANs 10-12 as ports 2-4.

use super::ops::Mode;
use super::ports_runtime::PortRef;
use super::*;
use ofp::message::{flow_mod_command as cmd, Message};
use ofp::oxm::OxmField;
use ofp::OfpMessage;
use packet::PacketBuf;
use ports::MemPort;

struct Rig {
    dp: Datapath,
    host: MemPort,
    trunk: MemPort,
}

fn rig(workers: usize) -> Rig {
    rig_with(workers, None)
}

/// [`rig`] whose workers run `graph` (`graph_run`, `graph_trunk`).
fn rig_with(workers: usize, graph: Option<&str>) -> Rig {
    let (sw, host) = MemPort::pair_named("sw1", "h1", 256).unwrap();
    let (tsw, trunk) = MemPort::pair_named("tr", "far", 256).unwrap();
    let cfg = DpConfig {
        n_workers: workers,
        graph: graph.map(|text| {
            Arc::new(super::graph_run::GraphSpec {
                text: text.into(),
                file: "g.toml".into(),
            })
        }),
        ..DpConfig::default()
    };
    let trunks = vec![trunk_start::TrunkOpen {
        io: Box::new(tsw),
        first_vid: 10,
        last_vid: 12,
        first_no: 2,
    }];
    let dp = Datapath::try_start_with_trunks(cfg, vec![(1, Box::new(sw))], trunks, Clock::real())
        .unwrap();
    Rig { dp, host, trunk }
}

fn frame(tags: &[u16], payload: u8) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, payload]);
    for t in tags {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&t.to_be_bytes());
    }
    f.extend_from_slice(&[0x88, 0xb5]);
    f.resize(f.len() + 46, payload);
    f
}

/// Every frame that arrives on `p` within a short while.
fn drain(p: &mut MemPort, want: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut bufs = vec![PacketBuf::new(); 8];
    for _ in 0..20_000 {
        let n = p.rx_batch(&mut bufs).unwrap();
        out.extend(bufs[..n].iter().map(|b| b.data().to_vec()));
        if out.len() >= want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    out
}

impl Rig {
    fn flow(&mut self, m: Vec<OxmField>, out: u32) {
        let fm = super::tests::fm(cmd::ADD, 10, m, vec![super::tests::out(out)]);
        let m = OfpMessage::new(7, Message::FlowMod(fm));
        let raw = m.encode();
        assert!(self.dp.handle_message(m, &raw).is_empty());
        self.dp.barrier();
    }
}

#[test]
fn logical_ports_are_ports_to_the_pipeline() {
    let mut r = rig(2);
    let names: Vec<String> = r.dp.ports.values().map(|p| p.name.clone()).collect();
    assert_eq!(names, ["sw1", "tr.10", "tr.11", "tr.12"]);
    r.flow(vec![OxmField::InPort(3)], 1);
    r.flow(vec![OxmField::InPort(1)], 4);
    r.trunk
        .tx_batch(&[&frame(&[11, 5], 1), &frame(&[10], 2)])
        .unwrap();
    assert_eq!(
        drain(&mut r.host, 1),
        [frame(&[5], 1)],
        "VLAN 11 popped, inner kept"
    );
    r.host.tx_batch(&[&frame(&[], 3)]).unwrap();
    assert_eq!(drain(&mut r.trunk, 1), [frame(&[12], 3)]);
    let s = r.dp.port_desc(3).unwrap();
    assert_eq!((s.name.as_str(), s.hw_addr), ("tr.11", [2, 0, 0, 0, 0, 1]));
    let g = r.dp.graph_view();
    let edge = |from: &str, gate: &str| {
        g.edges
            .iter()
            .find(|e| e.from == from && e.gate == gate)
            .map(|e| (e.to.clone(), e.packets))
    };
    // The default graph: the trunk's and the plain port's inputs feed
    // `openflow`, which hands the two outputs to `tx` (VLAN 10's frame
    // matches no flow).
    assert_eq!(edge("in_tr", "0"), Some(("openflow".into(), 2)));
    assert_eq!(edge("in_sw1", "0"), Some(("openflow".into(), 1)));
    assert_eq!(edge("openflow", "0"), Some(("tx".into(), 2)));
    // show-tc: each worker a round robin over its inputs; the trunk (not
    // split: in-memory ports cannot) on one of them, with its 2 frames.
    assert_eq!(g.workers.len(), 2);
    assert!(g.workers.iter().all(|w| w.class == "round_robin"));
    let leaves: Vec<(&str, u64)> = g
        .classes
        .iter()
        .filter(|c| c.kind == "leaf")
        .map(|c| (c.name.as_str(), c.packets))
        .collect();
    assert!(leaves.contains(&("in_tr", 2)), "{leaves:?}");
    assert!(leaves.contains(&("in_sw1", 1)), "{leaves:?}");
    assert_eq!(leaves.len(), 2, "logical ports are no receive sources");
    assert!(r
        .dp
        .del_port(&PortRef::No(3))
        .unwrap_err()
        .contains("trunk tr"));
}

#[test]
fn flooding_and_standalone_send_one_copy_per_vlan() {
    let mut r = rig(1);
    r.dp.set_mode(Mode::Standalone);
    r.dp.barrier();
    r.host.tx_batch(&[&frame(&[], 7)]).unwrap();
    let mut got = drain(&mut r.trunk, 3);
    got.sort();
    assert_eq!(got, [frame(&[10], 7), frame(&[11], 7), frame(&[12], 7)]);
    // From VLAN 11: the other VLANs and the plain port, not VLAN 11.
    r.trunk.tx_batch(&[&frame(&[11], 8)]).unwrap();
    assert_eq!(drain(&mut r.host, 1), [frame(&[], 8)]);
    let mut got = drain(&mut r.trunk, 2);
    got.sort();
    assert_eq!(got, [frame(&[10], 8), frame(&[12], 8)]);
    // The `openflow` module runs the learning switch in standalone mode.
    let g = r.dp.graph_view();
    let outputs = g
        .counters
        .iter()
        .find(|c| c.node == "openflow" && c.name == "outputs")
        .map(|c| c.value);
    assert_eq!(outputs, Some(6));
}

#[test]
fn the_trunk_link_drives_every_logical_port() {
    let mut r = rig(1);
    r.dp.take_events();
    r.trunk.set_link(false);
    r.dp.poll_links();
    let down: Vec<u32> =
        r.dp.take_events()
            .into_iter()
            .filter_map(|e| match e {
                DpEvent::PortStatus(s) if s.desc.state & ofp::port::state::LINK_DOWN != 0 => {
                    Some(s.desc.port_no)
                }
                _ => None,
            })
            .collect();
    assert_eq!(down, [2, 3, 4]);
    r.trunk.set_link(true);
    r.dp.poll_links();
    assert_eq!(r.dp.take_events().len(), 3);
}

/// The trunk's receive side as a `trunk_inc` task, the logical ports'
/// transmission through `tx`.
const GRAPH: &str = r#"
[[module]]
name = "in_sw1"
kind = "port_inc"
port = "sw1"
[[module]]
name = "in_tr"
kind = "trunk_inc"
trunk = "tr"
[[module]]
name = "of"
kind = "openflow"
[[module]]
name = "out"
kind = "tx"
[[connect]]
from = "in_sw1"
to = "of"
[[connect]]
from = "in_tr"
to = "of"
[[connect]]
from = "of"
to = "out"
"#;

#[test]
fn a_graph_receives_and_transmits_on_logical_ports() {
    for workers in [1, 2] {
        let mut r = rig_with(workers, Some(GRAPH));
        r.flow(vec![OxmField::InPort(3)], 1);
        r.flow(vec![OxmField::InPort(1)], 4);
        r.flow(vec![OxmField::InPort(2)], ofp::port::port_no::FLOOD);
        r.trunk
            .tx_batch(&[&frame(&[11, 5], 1), &frame(&[13], 2), &frame(&[], 3)])
            .unwrap();
        assert_eq!(
            drain(&mut r.host, 1),
            [frame(&[5], 1)],
            "VLAN 11 popped, inner kept; foreign and untagged dropped"
        );
        r.host.tx_batch(&[&frame(&[7], 4)]).unwrap();
        assert_eq!(drain(&mut r.trunk, 1), [frame(&[12, 7], 4)]);
        // FLOOD from VLAN 10: the plain port and the other VLANs.
        r.trunk.tx_batch(&[&frame(&[10], 5)]).unwrap();
        assert_eq!(drain(&mut r.host, 1), [frame(&[], 5)]);
        let mut got = drain(&mut r.trunk, 2);
        got.sort();
        assert_eq!(got, [frame(&[11], 5), frame(&[12], 5)]);
        let stats = |no: u32| {
            let s = r.dp.ports[&no].io.lock().unwrap().stats();
            (s.rx_packets, s.tx_packets)
        };
        assert_eq!([stats(2), stats(3), stats(4)], [(1, 0), (1, 1), (0, 2)]);
        assert_eq!(r.dp.trunks[0].foreign.load(Ordering::Relaxed), 2);
    }
    let refused = |text: &str| match Datapath::try_start_with_trunks(
        DpConfig {
            graph: Some(Arc::new(super::graph_run::GraphSpec {
                text: text.into(),
                file: "g.toml".into(),
            })),
            ..DpConfig::default()
        },
        Vec::new(),
        Vec::new(),
        Clock::real(),
    ) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    };
    let e = refused("[[module]]\nname = \"t\"\nkind = \"trunk_inc\"\ntrunk = \"tr\"\n");
    assert!(e.contains("g.toml:") && e.contains("trunk"), "{e}");
}
