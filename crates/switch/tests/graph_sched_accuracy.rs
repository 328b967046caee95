//! Scheduler accuracy measured in the switch (docs/bench/graph-switch-2026-11-28.md):
//! a `Datapath` whose worker runs a configured graph with two `port_inc`
//! tasks, both feeding the `openflow` module (no flows: the table-miss
//! drops). Their ports are always backlogged ([`Backlog`]: every receive
//! fills the whole batch, as a port with a queue that never drains would),
//! so every class always has work and what each gets is the scheduler's
//! choice. The class usage comes from the live graph (`show-tc`'s source).
//!
//! Ignored (it measures for seconds); run it with
//! `cargo test --release -p switch --test graph_sched_accuracy -- --ignored --nocapture`.

use packet::PacketBuf;
use ports::{Port, PortRx, PortStats, PortTx};
use std::io;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switch::datapath::graph_run::GraphSpec;
use switch::datapath::{Clock, Datapath, DpConfig};

const MODULES: &str = r#"
[[module]]
name = "in1"
kind = "port_inc"
port = "sw1"
[[module]]
name = "in2"
kind = "port_inc"
port = "sw2"
[[module]]
name = "of"
kind = "openflow"
[[module]]
name = "out"
kind = "tx"
[[connect]]
from = "in1"
to = "of"
[[connect]]
from = "in2"
to = "of"
[[connect]]
from = "of"
to = "out"
"#;

/// A port whose receive queue never drains (module comment); what is
/// sent to it is discarded.
struct Backlog(String);

struct Discard;

impl PortTx for Discard {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(pkts.len())
    }
}

impl PortRx for Backlog {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        Port::rx_batch(self, bufs)
    }
    fn fd(&self) -> Option<RawFd> {
        None
    }
}

impl Port for Backlog {
    fn name(&self) -> &str {
        &self.0
    }
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize> {
        let frame = [0x02u8; 64];
        for b in bufs.iter_mut() {
            let _ = b.set(&frame);
        }
        Ok(bufs.len())
    }
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(pkts.len())
    }
    fn fd(&self) -> Option<RawFd> {
        None
    }
    fn hw_addr(&self) -> [u8; 6] {
        [2, 0, 0, 0, 0, 1]
    }
    fn link_up(&self) -> bool {
        true
    }
    fn mtu(&self) -> io::Result<u32> {
        Ok(1500)
    }
    fn stats(&self) -> PortStats {
        PortStats::default()
    }
    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        Ok(Box::new(Discard))
    }
}

struct Rig {
    dp: Datapath,
}

/// One worker running MODULES with `classes` on two backlogged ports.
fn rig(classes: &str) -> Rig {
    let ports: Vec<(u32, Box<dyn Port>)> = (1..=2u32)
        .map(|no| (no, Box::new(Backlog(format!("sw{no}"))) as Box<dyn Port>))
        .collect();
    let cfg = DpConfig {
        n_workers: 1,
        graph: Some(Arc::new(GraphSpec {
            text: format!("{MODULES}{classes}"),
            file: "accuracy.toml".into(),
        })),
        ..DpConfig::default()
    };
    let dp = Datapath::try_start_with_trunks(cfg, ports, Vec::new(), Clock::real()).unwrap();
    Rig { dp }
}

impl Rig {
    /// Packets of each class over `d` (after a warm-up).
    fn measure(&mut self, d: Duration) -> (Vec<(String, u64)>, f64) {
        std::thread::sleep(Duration::from_millis(300));
        let packets = |dp: &mut Datapath| -> Vec<(String, u64)> {
            dp.graph_view()
                .classes
                .iter()
                .map(|c| (c.name.clone(), c.packets))
                .collect()
        };
        let a = packets(&mut self.dp);
        let t = Instant::now();
        std::thread::sleep(d);
        let b = packets(&mut self.dp);
        let secs = t.elapsed().as_secs_f64();
        let diff = b
            .iter()
            .map(|(n, p)| {
                let before = a.iter().find(|x| &x.0 == n).map_or(0, |x| x.1);
                (n.clone(), p - before)
            })
            .collect();
        (diff, secs)
    }

    fn stop(mut self) {
        self.dp.shutdown();
    }
}

fn get(v: &[(String, u64)], name: &str) -> u64 {
    v.iter().find(|x| x.0 == name).map_or(0, |x| x.1)
}

#[test]
#[ignore]
fn weighted_1_to_2() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"weighted\"\nresource = \"packets\"\n\
         [[class]]\nname = \"c1\"\nkind = \"leaf\"\nparent = \"root\"\nshare = 1\ntask = \"in1\"\n\
         [[class]]\nname = \"c2\"\nkind = \"leaf\"\nparent = \"root\"\nshare = 2\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let (a, b) = (get(&v, "c1"), get(&v, "c2"));
    let ratio = b as f64 / a.max(1) as f64;
    println!(
        "weighted 1:2: c1 {a} c2 {b} packets in {secs:.2} s ({:.0} pps total), c2/c1 = {ratio:.4} (error {:+.2} %)",
        (a + b) as f64 / secs,
        (ratio / 2.0 - 1.0) * 100.0
    );
    assert!((ratio / 2.0 - 1.0).abs() < 0.05, "{ratio}");
}

#[test]
#[ignore]
fn rate_limit_100_kpps() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"round_robin\"\n\
         [[class]]\nname = \"lim\"\nkind = \"rate_limit\"\nparent = \"root\"\nresource = \"packets\"\nlimit = 100000\nburst = 1024\n\
         [[class]]\nname = \"c1\"\nkind = \"leaf\"\nparent = \"lim\"\ntask = \"in1\"\n\
         [[class]]\nname = \"lim2\"\nkind = \"rate_limit\"\nparent = \"root\"\nresource = \"packets\"\nlimit = 1\nburst = 1\n\
         [[class]]\nname = \"c2\"\nkind = \"leaf\"\nparent = \"lim2\"\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let pps = get(&v, "c1") as f64 / secs;
    println!(
        "rate limit 100 kpps: c1 {} packets in {secs:.2} s = {pps:.0} pps (error {:+.2} %)",
        get(&v, "c1"),
        (pps / 100_000.0 - 1.0) * 100.0
    );
    assert!((pps / 100_000.0 - 1.0).abs() < 0.02, "{pps}");
}

#[test]
#[ignore]
fn priority_starves_the_lower_class() {
    let mut r = rig(
        "[[class]]\nname = \"root\"\nkind = \"priority\"\n\
         [[class]]\nname = \"hi\"\nkind = \"leaf\"\nparent = \"root\"\npriority = 1\ntask = \"in1\"\n\
         [[class]]\nname = \"lo\"\nkind = \"leaf\"\nparent = \"root\"\npriority = 0\ntask = \"in2\"\n",
    );
    let (v, secs) = r.measure(Duration::from_secs(3));
    r.stop();
    let (hi, lo) = (get(&v, "hi"), get(&v, "lo"));
    println!("priority: hi {hi} lo {lo} packets in {secs:.2} s");
    assert!(hi > 100_000 && lo == 0, "hi {hi} lo {lo}");
}

/// The fixed path (no graph) forwarding a backlogged port 1 to port 2 by a
/// flow: frames per second of one worker, to compare the default path
/// before and after a change (docs/bench/graph-switch-2026-11-28.md).
#[test]
#[ignore]
fn fixed_path_forwarding_rate() {
    forwarding_rate(None);
}

/// The same through the graph `in1 -> of -> out`, `in2 -> of` (port 2 is
/// backlogged too in both probes; its frames match no flow and are dropped).
#[test]
#[ignore]
fn graph_path_forwarding_rate() {
    forwarding_rate(Some(Arc::new(GraphSpec {
        text: MODULES.into(),
        file: "rate.toml".into(),
    })));
}

fn forwarding_rate(graph: Option<Arc<GraphSpec>>) {
    use ofp::action::Action;
    use ofp::instruction::Instruction;
    use ofp::message::{FlowMod, Message, NO_BUFFER};
    use ofp::oxm::{Match, OxmField};
    let ports: Vec<(u32, Box<dyn Port>)> = (1..=2u32)
        .map(|no| (no, Box::new(Backlog(format!("sw{no}"))) as Box<dyn Port>))
        .collect();
    let what = if graph.is_some() { "graph" } else { "fixed" };
    let cfg = DpConfig {
        n_workers: 1,
        graph,
        ..DpConfig::default()
    };
    let mut dp = Datapath::start(cfg, ports, Clock::real());
    let fm = FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: ofp::message::flow_mod_command::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 1,
        buffer_id: NO_BUFFER,
        out_port: ofp::port::port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(vec![OxmField::InPort(1)]),
        instructions: vec![Instruction::ApplyActions(vec![Action::Output {
            port: 2,
            max_len: 0,
        }])],
    };
    let m = ofp::OfpMessage::new(1, Message::FlowMod(fm));
    let raw = m.encode();
    assert!(dp.handle_message(m, &raw).is_empty());
    dp.barrier();
    // Frames matched by the flow (port 1's), collected from the workers.
    let rx = |dp: &mut Datapath| {
        dp.collect();
        let t = dp.pipeline.table_mut(0).expect("table 0");
        (0..t.len())
            .filter_map(|i| t.hot_mut(i).map(|e| e.packet_count))
            .sum::<u64>()
    };
    std::thread::sleep(Duration::from_millis(300));
    let (a, t) = (rx(&mut dp), Instant::now());
    std::thread::sleep(Duration::from_secs(3));
    let n = rx(&mut dp) - a;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{what} path: {n} frames forwarded in {secs:.2} s = {:.3} Mpps",
        n as f64 / secs / 1e6
    );
    dp.shutdown();
    assert!(n > 0);
}
