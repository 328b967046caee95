//! Workers running a configured module graph (`graph_run`,
//! `graph_openflow`, `graph_tx`): in-memory ports, real worker threads,
//! flow-mods through the control side.

use super::graph_run::GraphSpec;
use super::*;
use ofp::message::{flow_mod_command as cmd, Message};
use ofp::oxm::OxmField;
use ofp::OfpMessage;
use packet::PacketBuf;
use ports::MemPort;

struct Rig {
    dp: Datapath,
    hosts: Vec<MemPort>,
}

/// `n` ports sw1.. (hosts h1..), `workers` workers running `graph`.
fn try_rig(graph: &str, n: u32, workers: usize) -> Result<Rig, String> {
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    let mut hosts = Vec::new();
    for no in 1..=n {
        let (sw, h) = MemPort::pair_named(&format!("sw{no}"), &format!("h{no}"), 1024)
            .map_err(|e| e.to_string())?;
        ports.push((no, Box::new(sw)));
        hosts.push(h);
    }
    let cfg = DpConfig {
        n_workers: workers,
        graph: Some(Arc::new(GraphSpec {
            text: graph.into(),
            file: "g.toml".into(),
        })),
        ..DpConfig::default()
    };
    let dp = Datapath::try_start_with_trunks(cfg, ports, Vec::new(), Clock::real())?;
    Ok(Rig { dp, hosts })
}

fn frame(payload: u8) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[2, 0, 0, 0, 0, payload, 0x88, 0xb5]);
    f.resize(60, payload);
    f
}

/// Every frame that arrives on `p` within a short while (stops at `want`).
fn drain(p: &mut MemPort, want: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut bufs = vec![PacketBuf::new(); 32];
    for _ in 0..5_000 {
        let n = p.rx_batch(&mut bufs).unwrap_or(0);
        out.extend(bufs[..n].iter().map(|b| b.data().to_vec()));
        if out.len() >= want {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    out
}

impl Rig {
    fn flow(&mut self, m: Vec<OxmField>, outs: &[u32]) {
        let acts = outs.iter().map(|o| super::tests::out(*o)).collect();
        let fm = super::tests::fm(cmd::ADD, 10, m, acts);
        let m = OfpMessage::new(7, Message::FlowMod(fm));
        let raw = m.encode();
        assert!(self.dp.handle_message(m, &raw).is_empty());
        self.dp.barrier();
    }
}

/// A graph change: port `sw3`'s `port_inc` into `of`, in a class of its
/// own under the root.
const IN3_JOINS: &str = r#"
[[module]]
name = "in3"
kind = "port_inc"
port = "sw3"
[[connect]]
from = "in3"
to = "of"
[[attach]]
class = "in3"
parent = "root"
task = "in3"
"#;

/// Port 1 through a `measure` module into the pipeline, port 2 straight
/// in; the pipeline's outputs to `tx`.
pub(super) const MEASURED: &str = r#"
[[module]]
name = "in1"
kind = "port_inc"
port = "sw1"
[[module]]
name = "in2"
kind = "port_inc"
port = "sw2"
[[module]]
name = "m"
kind = "measure"
[[module]]
name = "of"
kind = "openflow"
[[module]]
name = "out"
kind = "tx"
[[connect]]
from = "in1"
to = "m"
[[connect]]
from = "m"
to = "of"
[[connect]]
from = "in2"
to = "of"
[[connect]]
from = "of"
to = "out"
"#;

#[test]
fn graph_forwards_by_the_flow_table() {
    for workers in [1, 2] {
        let mut r = try_rig(MEASURED, 3, workers).unwrap();
        r.flow(vec![OxmField::InPort(1)], &[2]);
        r.flow(vec![OxmField::InPort(2)], &[1]);
        r.hosts[0].tx_batch(&[&frame(1), &frame(2)]).unwrap();
        assert_eq!(drain(&mut r.hosts[1], 2), [frame(1), frame(2)]);
        r.hosts[1].tx_batch(&[&frame(3)]).unwrap();
        assert_eq!(drain(&mut r.hosts[0], 1), [frame(3)]);
        // Nothing matched port 3's traffic: the table-miss drops it.
        assert!(drain(&mut r.hosts[2], 1).is_empty());
        // The flow entry counted what the workers forwarded.
        r.dp.collect();
        let t = r.dp.pipeline.table_mut(0).unwrap();
        let hits: u64 = (0..t.len())
            .filter_map(|i| t.hot_mut(i).map(|e| e.packet_count))
            .sum();
        assert_eq!(hits, 3, "{workers} workers");
        r.dp.shutdown();
    }
}

#[test]
fn replication_beyond_a_batch_is_not_dropped() {
    let mut r = try_rig(MEASURED, 3, 1).unwrap();
    r.flow(vec![OxmField::InPort(1)], &[2, 3]);
    let frames: Vec<Vec<u8>> = (0..32).map(frame).collect();
    let slices: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    r.hosts[0].tx_batch(&slices).unwrap();
    // 32 in, 64 out of the `openflow` module: both ports get all 32.
    assert_eq!(drain(&mut r.hosts[1], 32), frames);
    assert_eq!(drain(&mut r.hosts[2], 32), frames);
    r.dp.shutdown();
}

#[test]
fn standalone_mode_runs_the_learning_switch_in_the_module() {
    let mut r = try_rig(MEASURED, 3, 1).unwrap();
    r.dp.set_mode(ops::Mode::Standalone);
    r.dp.barrier();
    r.hosts[0].tx_batch(&[&frame(9)]).unwrap();
    // Broadcast: flooded to every other port.
    assert_eq!(drain(&mut r.hosts[1], 1), [frame(9)]);
    assert_eq!(drain(&mut r.hosts[2], 1), [frame(9)]);
    r.dp.shutdown();
}

#[test]
fn bad_graphs_are_refused_with_file_and_line() {
    let cases = [
        (
            "[[module]]\nname = \"a\"\nkind = \"nope\"\n",
            "g.toml:1: module `a`: unknown module kind `nope`",
        ),
        (
            "[[module]]\nname = \"a\"\nkind = \"port_inc\"\nport = \"sw9\"\n",
            "g.toml:1: module `a`: no port `sw9`",
        ),
        (
            "[[module]]\nname = \"a\"\nkind = \"openflow\"\n[[module]]\nname = \"b\"\nkind = \"openflow\"\n",
            "g.toml:4: module `b`: the worker's pipeline is already used",
        ),
        (
            "[[module]]\nname = \"of\"\nkind = \"openflow\"\n[[module]]\nname = \"t\"\nkind = \"tx\"\n",
            "g.toml:1: ",
        ),
    ];
    for (text, want) in cases {
        let e = try_rig(text, 2, 2).err().unwrap_or_default();
        assert!(e.starts_with(want), "{text}: {e}");
    }
}

#[test]
fn run_time_changes_apply_everywhere_or_nowhere() {
    let mut r = try_rig(MEASURED, 3, 2).unwrap();
    r.flow(vec![OxmField::InPort(2)], &[1]);
    r.flow(vec![OxmField::InPort(3)], &[1]);
    let pass = |r: &mut Rig, from: usize, p: u8| {
        r.hosts[from].tx_batch(&[&frame(p)]).unwrap();
        drain(&mut r.hosts[0], 1) == [frame(p)]
    };
    assert!(pass(&mut r, 1, 1));
    // Insert a module on port 2's path.
    r.dp.apply_graph_change(
        "[[disconnect]]\nfrom = \"in2\"\n[[module]]\nname = \"m2\"\nkind = \"measure\"\n\
         [[connect]]\nfrom = \"in2\"\nto = \"m2\"\n[[connect]]\nfrom = \"m2\"\nto = \"of\"\n",
    )
    .unwrap();
    assert!(pass(&mut r, 1, 2));
    // Refused: a dangling gate, a duplicate name, an unknown class, a task
    // in no class; nothing changes (port 2 still passes through m2).
    for (text, want) in [
        (
            "[[connect]]\nfrom = \"m2\"\nto = \"nothere\"\n",
            "line 1: dangling gate",
        ),
        (
            "[[module]]\nname = \"m2\"\nkind = \"pass\"\n",
            "line 1: duplicate module name `m2`",
        ),
        (
            "[[set]]\nclass = \"nope\"\nshare = 2\n",
            "line 1: no class `nope`",
        ),
        (
            "[[module]]\nname = \"in3\"\nkind = \"port_inc\"\nport = \"sw3\"\n\
             [[connect]]\nfrom = \"in3\"\nto = \"of\"\n",
            "task module `in3` is attached to no class",
        ),
    ] {
        let e = r.dp.apply_graph_change(text).unwrap_err();
        assert!(e.contains(want), "{text}: {e}");
    }
    assert!(pass(&mut r, 1, 3));
    let g = r.dp.graph_view();
    let m2 = g
        .edges
        .iter()
        .find(|e| e.from == "m2")
        .map(|e| (e.to.clone(), e.packets));
    assert_eq!(m2, Some(("of".into(), 2)), "{g:?}");
    // Port 3 joins with a task in the round robin; then m2 goes.
    assert!(!pass(&mut r, 2, 4), "no port_inc for port 3 yet");
    r.dp.apply_graph_change(IN3_JOINS).unwrap();
    // Frame 4 waited in port 3's receive queue.
    r.hosts[2].tx_batch(&[&frame(5)]).unwrap();
    assert_eq!(drain(&mut r.hosts[0], 2), [frame(4), frame(5)]);
    // Port 3 cannot split its reception, so `in3` reads it in the one
    // worker it was dealt to, though both run `in3`: a burst leaves in
    // the order it came.
    let burst: Vec<Vec<u8>> = (10..70).map(frame).collect();
    let refs: Vec<&[u8]> = burst.iter().map(|f| f.as_slice()).collect();
    r.hosts[2].tx_batch(&refs).unwrap();
    assert_eq!(drain(&mut r.hosts[0], burst.len()), burst);
    let readers: Vec<u32> = (r.dp.graph_view().classes.iter())
        .filter(|c| c.name == "in3" && c.packets > 0)
        .map(|c| c.worker)
        .collect();
    assert_eq!(readers.len(), 1, "in3 read port 3 in workers {readers:?}");
    r.dp.apply_graph_change(
        "[[disconnect]]\nfrom = \"in2\"\n[[remove]]\nname = \"m2\"\n\
         [[connect]]\nfrom = \"in2\"\nto = \"of\"\n[[set]]\nclass = \"in2\"\nshare = 3\n",
    )
    .unwrap();
    assert!(pass(&mut r, 1, 6));
    r.dp.shutdown();
}

/// Without a configured graph the workers run the default one, which
/// graph changes change like any other.
#[test]
fn a_switch_without_a_graph_changes_its_default_graph() {
    let mut dp = Datapath::start(DpConfig::default(), Vec::new(), Clock::real());
    let e = dp
        .apply_graph_change("[[remove]]\nname = \"x\"\n")
        .unwrap_err();
    assert!(e.contains("`x`"), "{e}");
    dp.apply_graph_change(
        "[[module]]\nname = \"m\"\nkind = \"measure\"\n[[connect]]\nfrom = \"m\"\nto = \"openflow\"\n",
    )
    .unwrap();
    let g = dp.graph_view();
    let kinds: Vec<(&str, &str)> = g
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), n.kind.as_str()))
        .collect();
    for want in [("openflow", "openflow"), ("tx", "tx"), ("m", "measure")] {
        assert!(kinds.contains(&want), "{kinds:?}");
    }
    dp.shutdown();
}

/// A 60-byte frame to HyperCube node `node` (the destination MAC's first
/// four bytes) with `mark` in its last byte.
fn to_node(node: u8, mark: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, node, 0, 0, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
    f.resize(60, mark);
    f
}

#[test]
fn flexforward_modes_forward_through_the_graph() {
    use ofp::flexforward::{FlexMessage, FwMode, SetFwMode, SetHyperCube};
    let mut r = try_rig(MEASURED, 3, 2).unwrap();
    let send = |dp: &mut Datapath, m: FlexMessage| {
        let e = m.to_experimenter();
        let raw = OfpMessage::new(9, Message::Experimenter(e.clone())).encode();
        let got = dp.flex_message(9, &e, &raw);
        assert!(got.is_empty(), "refused: {got:?}");
        dp.barrier();
    };
    // Node 5: node 4 behind port 1, node 7 behind port 2, itself at port 3.
    send(
        &mut r.dp,
        FlexMessage::SetHyperCube(SetHyperCube {
            address: 5,
            local_port: 3,
            neighbours: vec![(4, 1), (7, 2)],
        }),
    );
    // Only the tables so far: port 2's traffic goes to port 3.
    r.flow(vec![OxmField::InPort(2)], &[3]);
    r.hosts[1].tx_batch(&[&to_node(4, 1)]).unwrap();
    assert_eq!(drain(&mut r.hosts[2], 1), [to_node(4, 1)]);
    assert!(drain(&mut r.hosts[0], 1).is_empty());
    send(
        &mut r.dp,
        FlexMessage::SetFwMode(SetFwMode {
            mode: Some(FwMode::HyperCube),
            fallback: Default::default(),
            scope: ofp::flexforward::Scope::Switch,
        }),
    );
    // HyperCube now: by address, without a flow entry; a node it cannot
    // reach (0x25) falls back to the tables, in order.
    r.hosts[1]
        .tx_batch(&[&to_node(4, 2), &to_node(0x25, 3), &to_node(5, 4)])
        .unwrap();
    assert_eq!(drain(&mut r.hosts[0], 1), [to_node(4, 2)]);
    assert_eq!(drain(&mut r.hosts[2], 2), [to_node(0x25, 3), to_node(5, 4)]);
    // Port 1's traffic through the `measure` module too.
    r.hosts[0].tx_batch(&[&to_node(7, 5)]).unwrap();
    assert_eq!(drain(&mut r.hosts[1], 1), [to_node(7, 5)]);
    r.dp.barrier();
    let c = r.dp.flex.reply().counters;
    assert_eq!((c.hypercube_fwd, c.fallback_table), (3, 1));
    // Back to the tables: port 2's traffic goes to port 3 again.
    send(
        &mut r.dp,
        FlexMessage::SetFwMode(SetFwMode {
            mode: Some(FwMode::OpenFlow),
            fallback: Default::default(),
            scope: ofp::flexforward::Scope::Switch,
        }),
    );
    r.hosts[1].tx_batch(&[&to_node(4, 6)]).unwrap();
    assert_eq!(drain(&mut r.hosts[2], 1), [to_node(4, 6)]);
    assert!(drain(&mut r.hosts[0], 1).is_empty());
}

#[test]
fn ports_added_at_run_time_join_the_graph_and_leave_when_unused() {
    use super::ports_runtime::PortRef;
    use std::sync::Mutex;
    for workers in [1, 2] {
        let mut r = try_rig(MEASURED, 2, workers).unwrap();
        // The opener's host ends, newest last.
        let spare: Arc<Mutex<Vec<MemPort>>> = Arc::default();
        let slot = spare.clone();
        r.dp.set_port_opener(Box::new(move |name: &str| {
            let (sw, host) = MemPort::pair_named(name, "h", 256).map_err(|e| e.to_string())?;
            if let Ok(mut s) = slot.lock() {
                s.push(host);
            }
            Ok(Box::new(sw) as Box<dyn Port>)
        }));
        let host = |n: usize| spare.lock().unwrap().remove(n);
        let in3 = IN3_JOINS;
        let no = r.dp.add_port("sw3", None).unwrap();
        let mut h3 = host(0);
        r.flow(vec![OxmField::InPort(no)], &[1]);
        r.flow(vec![OxmField::InPort(1)], &[no]);
        // Transmitted to at once; received from once a `port_inc` reads it.
        r.hosts[0].tx_batch(&[&frame(1)]).unwrap();
        assert_eq!(drain(&mut h3, 1), [frame(1)]);
        h3.tx_batch(&[&frame(2)]).unwrap();
        assert!(drain(&mut r.hosts[0], 1).is_empty(), "no port_inc yet");
        r.dp.apply_graph_change(in3).unwrap();
        h3.tx_batch(&[&frame(3)]).unwrap();
        assert_eq!(drain(&mut r.hosts[0], 2), [frame(2), frame(3)]);
        // Not deleted while `in3` reads it; deleted once it is gone.
        let e = r.dp.del_port(&PortRef::Name("sw3".into())).unwrap_err();
        assert!(e.contains("used by module `in3`"), "{e}");
        r.dp.apply_graph_change("[[remove]]\nname = \"in3\"\n")
            .unwrap();
        assert_eq!(r.dp.del_port(&PortRef::No(no)), Ok(no));
        let e = r.dp.apply_graph_change(in3).unwrap_err();
        assert!(e.contains("no port `sw3`"), "{e}");
        // Added again (a new number): the same change now applies, and a
        // refused change (rebuilding the copy) still knows the port.
        let no = r.dp.add_port("sw3", None).unwrap();
        let mut h3 = host(0);
        r.flow(vec![OxmField::InPort(no)], &[2]);
        assert!(r
            .dp
            .apply_graph_change("[[set]]\nclass = \"nope\"\nshare = 2\n")
            .is_err());
        r.dp.apply_graph_change(in3).unwrap();
        h3.tx_batch(&[&frame(4)]).unwrap();
        assert_eq!(drain(&mut r.hosts[1], 1), [frame(4)]);
        r.dp.shutdown();
    }
}
