//! Datapath tests: in-memory ports, real worker threads, a fake clock.

use super::ops::Mode;
use super::*;
use ofp::action::Action;
use ofp::error::{BadRequestCode, ErrorCode, PortModFailedCode};
use ofp::group::{group_id, group_type, Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{
    flow_mod_command as cmd, flow_mod_flags, flow_removed_reason, FlowMod, Message, PacketOut,
    PortMod,
};
use ofp::multipart::{
    FlowStatsRequest, Multipart, MultipartReplyBody as R, MultipartRequestBody as Q,
};
use ofp::oxm::{Match, OxmField};
use ofp::port::{config, port_no, state};
use ofp::OfpMessage;
use packet::PacketBuf;
use ports::MemPort;

const SEC: u64 = 1_000_000_000;

struct Rig {
    dp: Datapath,
    /// Host ends, index = port number - 1.
    hosts: Vec<MemPort>,
    clock: Arc<AtomicU64>,
}

fn rig(n_ports: u32, n_workers: usize) -> Rig {
    rig_with(
        n_ports,
        DpConfig {
            n_workers,
            ..DpConfig::default()
        },
    )
}

fn rig_with(n_ports: u32, cfg: DpConfig) -> Rig {
    let clock = Arc::new(AtomicU64::new(SEC));
    let mut hosts = Vec::new();
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    for no in 1..=n_ports {
        let (sw, host) = MemPort::pair_named(&format!("sw{no}"), &format!("h{no}"), 256).unwrap();
        ports.push((no, Box::new(sw)));
        hosts.push(host);
    }
    let dp = Datapath::start(cfg, ports, Clock::Fake(clock.clone()));
    Rig { dp, hosts, clock }
}

fn frame(src: u8, dst: [u8; 6], len: usize) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&[0, 0, 0, 0, 0, src]);
    f.extend_from_slice(&[0x88, 0xb5]);
    f.resize(len, src);
    f
}

const BCAST: [u8; 6] = [0xff; 6];

impl Rig {
    fn send(&mut self, port: u32, f: &[u8]) {
        assert_eq!(self.hosts[port as usize - 1].tx_batch(&[f]).unwrap(), 1);
    }

    /// Waits (bounded, as a hang guard only) for one frame on host `port`.
    fn recv(&mut self, port: u32) -> Vec<u8> {
        let mut bufs = vec![PacketBuf::new(); 1];
        for _ in 0..20_000 {
            if self.hosts[port as usize - 1].rx_batch(&mut bufs).unwrap() == 1 {
                return bufs[0].data().to_vec();
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        panic!("no frame on port {port}");
    }

    fn pending(&self, port: u32) -> usize {
        self.hosts[port as usize - 1].pending()
    }

    fn req(&mut self, body: Message) -> Vec<OfpMessage> {
        let m = OfpMessage::new(7, body);
        let raw = m.encode();
        self.dp.handle_message(m, &raw)
    }

    fn ok(&mut self, body: Message) {
        let r = self.req(body);
        assert!(r.is_empty(), "unexpected reply {r:?}");
    }

    fn error(&mut self, body: Message) -> ErrorCode {
        match self.req(body).as_slice() {
            [OfpMessage {
                body: Message::Error(e),
                ..
            }] => e.typed().unwrap(),
            r => panic!("expected an error, got {r:?}"),
        }
    }

    fn barrier(&mut self) {
        let r = self.req(Message::BarrierRequest);
        assert!(matches!(
            r.as_slice(),
            [OfpMessage {
                body: Message::BarrierReply,
                ..
            }]
        ));
    }

    /// Installs `in_port=1 -> output:2` (priority 10) and waits for the
    /// barrier: every worker forwards with it.
    fn port1_to_2(&mut self) {
        self.ok(Message::FlowMod(fm(
            cmd::ADD,
            10,
            vec![OxmField::InPort(1)],
            vec![out(2)],
        )));
        self.barrier();
    }

    fn advance(&self, ns: u64) {
        self.clock.fetch_add(ns, Ordering::SeqCst);
    }

    /// Polls events until one matches.
    fn wait_event(&mut self, pred: impl Fn(&DpEvent) -> bool) -> DpEvent {
        for _ in 0..20_000 {
            if let Some(e) = self.dp.take_events().into_iter().find(|e| pred(e)) {
                return e;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        panic!("event never came");
    }

    fn flow_stats(&mut self, q: FlowStatsRequest) -> Vec<ofp::multipart::FlowStats> {
        let r = self.req(Message::MultipartRequest(Multipart::new(Q::Flow(q))));
        r.into_iter()
            .flat_map(|m| match m.body {
                Message::MultipartReply(Multipart {
                    body: R::Flow(v), ..
                }) => v,
                b => panic!("unexpected {b:?}"),
            })
            .collect()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.dp.shutdown();
    }
}

pub(super) fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

/// A flow-mod of `command` in table 0 with apply-actions `actions`.
pub(super) fn fm(command: u8, priority: u16, m: Vec<OxmField>, actions: Vec<Action>) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command,
        idle_timeout: 0,
        hard_timeout: 0,
        priority,
        buffer_id: ofp::message::NO_BUFFER,
        out_port: port_no::ANY,
        out_group: group_id::ANY,
        flags: 0,
        match_: Match::new(m),
        instructions: vec![Instruction::ApplyActions(actions)],
    }
}

fn all_flows() -> FlowStatsRequest {
    FlowStatsRequest {
        table_id: ofp::instruction::TABLE_ALL,
        out_port: port_no::ANY,
        out_group: group_id::ANY,
        cookie: 0,
        cookie_mask: 0,
        match_: Match::new(vec![]),
    }
}

#[test]
fn ops_reach_every_worker_and_barrier_makes_new_rule_visible() {
    let mut r = rig(2, 2);
    r.port1_to_2();
    for w in &r.dp.workers {
        assert_eq!(w.counters.acked.load(Ordering::SeqCst), r.dp.seq);
    }
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    // Replace the rule (same match and priority): back out of the ingress.
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![out(port_no::IN_PORT)],
    )));
    r.barrier();
    r.send(1, &f);
    assert_eq!(r.recv(1), f);
    assert_eq!(r.pending(2), 0);
    // Port 2 is on the other worker: its replica got the rules too.
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(2)],
        vec![out(1)],
    )));
    r.barrier();
    r.send(2, &f);
    assert_eq!(r.recv(1), f);
}

#[test]
fn packet_in_buffering_and_packet_out_by_buffer_id() {
    let mut r = rig(2, 1);
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        0,
        vec![],
        vec![Action::Output {
            port: port_no::CONTROLLER,
            max_len: 20,
        }],
    )));
    r.barrier();
    let f = frame(1, [0, 0, 0, 0, 0, 2], 60);
    r.send(1, &f);
    let DpEvent::PacketIn(pi) = r.wait_event(|e| matches!(e, DpEvent::PacketIn(_))) else {
        unreachable!()
    };
    assert_ne!(pi.buffer_id, ofp::message::NO_BUFFER);
    assert_eq!(pi.total_len, 60);
    assert_eq!(pi.data, f[..20]);
    let po = |buffer_id| {
        Message::PacketOut(PacketOut {
            buffer_id,
            in_port: 1,
            actions: vec![out(2)],
            data: vec![],
        })
    };
    r.ok(po(pi.buffer_id));
    assert_eq!(r.recv(2), f);
    assert_eq!(
        r.error(po(pi.buffer_id)),
        ErrorCode::BadRequest(BadRequestCode::BufferEmpty)
    );
    assert_eq!(
        r.error(po(0x1234)),
        ErrorCode::BadRequest(BadRequestCode::BufferUnknown)
    );
    // Without buffering (NO_BUFFER max_len) the whole frame comes up.
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        0,
        vec![],
        vec![Action::Output {
            port: port_no::CONTROLLER,
            max_len: ofp::message::cml::NO_BUFFER,
        }],
    )));
    r.barrier();
    r.send(1, &f);
    let DpEvent::PacketIn(pi) = r.wait_event(|e| matches!(e, DpEvent::PacketIn(_))) else {
        unreachable!()
    };
    assert_eq!(pi.buffer_id, ofp::message::NO_BUFFER);
    assert_eq!(pi.data, f);
}

#[test]
fn buffer_pool_ids_go_stale_and_expire() {
    let mut p = BufferPool::default();
    let b = buffers::Buffered {
        in_port: 1,
        data: vec![1, 2, 3],
    };
    let id = p.store(b.clone(), 0).unwrap();
    assert_eq!(p.take(id, 1).unwrap(), b);
    assert_eq!(
        p.take(id, 1),
        Err(ErrorCode::BadRequest(BadRequestCode::BufferEmpty))
    );
    let id2 = p.store(b.clone(), 0).unwrap();
    assert_ne!(id, id2);
    assert_eq!(
        p.take(id2, buffers::BUFFER_TIMEOUT),
        Err(ErrorCode::BadRequest(BadRequestCode::BufferEmpty))
    );
    for _ in 0..buffers::N_BUFFERS {
        assert!(p.store(b.clone(), 10).is_some());
    }
    assert!(p.store(b, 10).is_none());
}

#[test]
fn flow_stats_sum_workers_and_apply_filters() {
    let mut r = rig(2, 2);
    let mut a = fm(cmd::ADD, 10, vec![OxmField::InPort(1)], vec![out(2)]);
    a.cookie = 0x11;
    let mut b = fm(cmd::ADD, 10, vec![OxmField::InPort(2)], vec![out(1)]);
    b.cookie = 0x22;
    let mut c = fm(
        cmd::ADD,
        5,
        vec![OxmField::InPort(2), OxmField::EthType(0x88b5)],
        vec![],
    );
    c.cookie = 0x21;
    for m in [a, b, c] {
        r.ok(Message::FlowMod(m));
    }
    r.barrier();
    let f = frame(1, BCAST, 60);
    for _ in 0..3 {
        r.send(1, &f);
        r.recv(2);
    }
    r.send(2, &f);
    r.recv(1);
    let all = r.flow_stats(all_flows());
    assert_eq!(all.len(), 3);
    let p1 = all.iter().find(|s| s.cookie == 0x11).unwrap();
    assert_eq!((p1.packet_count, p1.byte_count), (3, 180));
    let p2 = all.iter().find(|s| s.cookie == 0x22).unwrap();
    assert_eq!(p2.packet_count, 1);
    // Cookie filter: high nibble 2.
    let by_cookie = r.flow_stats(FlowStatsRequest {
        cookie: 0x20,
        cookie_mask: 0xf0,
        ..all_flows()
    });
    assert_eq!(by_cookie.len(), 2);
    // out_port filter.
    let to1 = r.flow_stats(FlowStatsRequest {
        out_port: 1,
        ..all_flows()
    });
    assert_eq!(to1.iter().map(|s| s.cookie).collect::<Vec<_>>(), vec![0x22]);
    // Match filter: entries at least as specific as in_port=2.
    let m2 = r.flow_stats(FlowStatsRequest {
        match_: Match::new(vec![OxmField::InPort(2)]),
        ..all_flows()
    });
    assert_eq!(m2.len(), 2);
    // Aggregate over everything.
    let agg = r.req(Message::MultipartRequest(Multipart::new(Q::Aggregate(
        all_flows(),
    ))));
    match &agg[0].body {
        Message::MultipartReply(Multipart {
            body: R::Aggregate(a),
            ..
        }) => {
            assert_eq!((a.packet_count, a.flow_count), (4, 3));
        }
        b => panic!("{b:?}"),
    }
    // Counters are not counted twice by a second collect.
    let again = r.flow_stats(all_flows());
    assert_eq!(again.iter().map(|s| s.packet_count).sum::<u64>(), 4);
}

#[test]
fn port_mod_no_fwd_and_errors() {
    let mut r = rig(3, 2);
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![out(port_no::FLOOD)],
    )));
    let hw = r.dp.ports[&2].hw_addr;
    let pm = |port_no, hw_addr| {
        Message::PortMod(PortMod {
            port_no,
            hw_addr,
            config: config::NO_FWD,
            mask: config::NO_FWD,
            advertise: 0,
        })
    };
    r.ok(pm(2, hw));
    r.barrier();
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(3), f);
    // Outputs are flushed in port order: port 2 would have been first.
    assert_eq!(r.pending(2), 0);
    assert_eq!(
        r.error(pm(9, hw)),
        ErrorCode::PortModFailed(PortModFailedCode::BadPort)
    );
    assert_eq!(
        r.error(pm(2, [9; 6])),
        ErrorCode::PortModFailed(PortModFailedCode::BadHwAddr)
    );
    // Port desc shows the config bit.
    let d = r.dp.port_desc(2).unwrap();
    assert_eq!(d.config, config::NO_FWD);
}

#[test]
fn idle_timeout_uses_worker_hits_and_sends_flow_removed() {
    let mut r = rig(2, 2);
    let mut m = fm(cmd::ADD, 10, vec![OxmField::InPort(1)], vec![out(2)]);
    m.idle_timeout = 10;
    m.flags = flow_mod_flags::SEND_FLOW_REM;
    r.ok(Message::FlowMod(m));
    r.barrier();
    r.advance(5 * SEC);
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    r.recv(2);
    // 12 s after install but 7 s after the hit: still there.
    r.advance(7 * SEC);
    r.dp.expire();
    assert!(r.dp.take_events().is_empty());
    assert_eq!(r.flow_stats(all_flows()).len(), 1);
    r.advance(4 * SEC);
    r.dp.expire();
    let ev = r.dp.take_events();
    match ev.as_slice() {
        [DpEvent::FlowRemoved(fr)] => {
            assert_eq!(fr.reason, flow_removed_reason::IDLE_TIMEOUT);
            assert_eq!(fr.packet_count, 1);
        }
        e => panic!("{e:?}"),
    }
    assert!(r.flow_stats(all_flows()).is_empty());
    // The replicas dropped it too: the packet now misses (no table-miss
    // entry: dropped) and port 2 gets nothing more once a later rule works.
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        1,
        vec![OxmField::InPort(1)],
        vec![out(port_no::IN_PORT)],
    )));
    r.barrier();
    r.send(1, &f);
    assert_eq!(r.recv(1), f);
    assert_eq!(r.pending(2), 0);
}

#[test]
fn standalone_learning_floods_then_unicasts() {
    let mut r = rig(3, 2);
    r.dp.set_mode(Mode::Standalone);
    r.dp.barrier();
    let a = [0, 0, 0, 0, 0, 1];
    let b = [0, 0, 0, 0, 0, 2];
    let f1 = frame(1, b, 60); // a -> b, b unknown: flood
    r.send(1, &f1);
    assert_eq!(r.recv(2), f1);
    assert_eq!(r.recv(3), f1);
    let f2 = frame(2, a, 60); // b -> a: a learned on port 1
    r.send(2, &f2);
    assert_eq!(r.recv(1), f2);
    let f3 = frame(2, BCAST, 60);
    r.send(2, &f3);
    assert_eq!(r.recv(1), f3);
    // Port 3's next frame is the broadcast, not the unicast.
    assert_eq!(r.recv(3), f3);
    let _ = b;
}

/// Which worker received how many frames so far.
fn rx_per_worker(r: &Rig) -> Vec<u64> {
    r.dp.workers
        .iter()
        .map(|w| w.counters.rx_packets.load(Ordering::SeqCst))
        .collect()
}

/// The learning table is one for all workers: an address learned from a
/// frame one worker received serves the next frame another worker
/// receives (in-memory ports are dealt whole, round robin: port 1 to
/// worker 0, port 2 to worker 1, port 3 to worker 0).
#[test]
fn standalone_workers_share_the_learning_table() {
    let mut r = rig(3, 2);
    r.dp.set_mode(Mode::Standalone);
    r.dp.barrier();
    let a = [0, 0, 0, 0, 0, 1];
    let f1 = frame(1, [0, 0, 0, 0, 0, 2], 60); // a -> b, b unknown: flood
    r.send(1, &f1);
    assert_eq!(r.recv(2), f1);
    assert_eq!(r.recv(3), f1);
    let after_f1 = rx_per_worker(&r);
    let f2 = frame(2, a, 60); // b -> a, on the other worker
    r.send(2, &f2);
    assert_eq!(r.recv(1), f2);
    let after_f2 = rx_per_worker(&r);
    let took = |w: usize| after_f2[w] - after_f1[w];
    let first = after_f1.iter().position(|&n| n == 1);
    assert_eq!(
        first.map(|w| took(1 - w)),
        Some(1),
        "f1 and f2 on different workers: {after_f1:?} {after_f2:?}"
    );
    // a was a unicast, not flooded: port 3's next frame is this broadcast.
    let f3 = frame(2, BCAST, 60);
    r.send(2, &f3);
    assert_eq!(r.recv(1), f3);
    assert_eq!(r.recv(3), f3);
}

/// A flow's output to NORMAL runs the same learning switch: unknown and
/// broadcast destinations flood, a learned one is forwarded to its port,
/// a frame whose destination sits on its ingress port is dropped, and a
/// port whose link goes down is forgotten (its addresses flood again).
#[test]
fn normal_output_learns_floods_and_forgets_a_downed_port() {
    let mut r = rig(3, 2);
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        0,
        vec![],
        vec![out(port_no::NORMAL)],
    )));
    r.barrier();
    let (a, b) = ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2]);
    let f1 = frame(1, b, 60);
    r.send(1, &f1);
    assert_eq!(r.recv(2), f1);
    assert_eq!(r.recv(3), f1);
    let f2 = frame(2, a, 60);
    r.send(2, &f2);
    assert_eq!(r.recv(1), f2);
    // c on port 3 to a, then a frame to c from port 3 itself: dropped.
    let f3 = frame(3, a, 60);
    r.send(3, &f3);
    assert_eq!(r.recv(1), f3);
    let f4 = frame(1, [0, 0, 0, 0, 0, 3], 60);
    r.send(3, &f4);
    let bc = frame(3, BCAST, 60);
    r.send(3, &bc);
    assert_eq!(
        r.recv(1),
        bc,
        "the frame to its own ingress port was dropped"
    );
    assert_eq!(r.recv(2), bc);
    // Port 2's link goes down: b is forgotten, so a -> b floods to port 3
    // (and not to the downed port 2).
    r.hosts[1].set_link(false);
    r.dp.poll_links();
    let _ = r.dp.take_events();
    r.barrier();
    r.send(1, &f1);
    assert_eq!(r.recv(3), f1);
}

/// A port-mod setting PORT_DOWN forgets the port's learned addresses:
/// frames to them flood (to the ports still up) instead of going nowhere.
#[test]
fn standalone_port_mod_down_forgets_its_addresses() {
    let mut r = rig(3, 1);
    r.dp.set_mode(Mode::Standalone);
    r.dp.barrier();
    let (a, b) = ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2]);
    r.send(2, &frame(2, a, 60)); // b learned on port 2
    assert_eq!(r.recv(1), frame(2, a, 60));
    assert_eq!(r.recv(3), frame(2, a, 60));
    let hw = r.dp.ports[&2].hw_addr;
    r.ok(Message::PortMod(PortMod {
        port_no: 2,
        hw_addr: hw,
        config: config::PORT_DOWN,
        mask: config::PORT_DOWN,
        advertise: 0,
    }));
    r.barrier();
    let f = frame(1, b, 60);
    r.send(1, &f);
    assert_eq!(r.recv(3), f);
    assert_eq!(r.pending(2), 0);
}

#[test]
fn link_down_sends_port_status_and_fast_failover_switches() {
    let mut r = rig(3, 2);
    let bucket = |p| Bucket {
        weight: 0,
        watch_port: p,
        watch_group: group_id::ANY,
        actions: vec![out(p)],
    };
    r.ok(Message::GroupMod(GroupMod {
        command: ofp::group::command::ADD,
        group_type: group_type::FF,
        group_id: 1,
        buckets: vec![bucket(2), bucket(3)],
    }));
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![Action::Group(1)],
    )));
    r.barrier();
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    r.hosts[1].set_link(false);
    r.dp.poll_links();
    match r.dp.take_events().as_slice() {
        [DpEvent::PortStatus(ps)] => {
            assert_eq!(ps.desc.port_no, 2);
            assert_ne!(ps.desc.state & state::LINK_DOWN, 0);
        }
        e => panic!("{e:?}"),
    }
    r.barrier();
    r.send(1, &f);
    assert_eq!(r.recv(3), f);
}

/// `select_method = "round_robin"` reaches the groups: one flow's frames
/// through a SELECT group of two equal buckets alternate between them.
#[test]
fn select_method_round_robin_alternates_buckets() {
    let mut r = rig_with(
        3,
        DpConfig {
            n_workers: 1,
            select_method: pipeline::group::SelectMethod::RoundRobin,
            ..DpConfig::default()
        },
    );
    let bucket = |p| Bucket {
        weight: 1,
        watch_port: ofp::port::port_no::ANY,
        watch_group: group_id::ANY,
        actions: vec![out(p)],
    };
    r.ok(Message::GroupMod(GroupMod {
        command: ofp::group::command::ADD,
        group_type: group_type::SELECT,
        group_id: 1,
        buckets: vec![bucket(2), bucket(3)],
    }));
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![Action::Group(1)],
    )));
    r.barrier();
    let f = frame(1, BCAST, 60);
    for port in [2, 3, 2, 3] {
        r.send(1, &f);
        assert_eq!(r.recv(port), f);
    }
    assert_eq!((r.pending(2), r.pending(3)), (0, 0));
}

/// Waits (bounded, a hang guard only) until every worker blocked and the
/// loop counters stopped moving over a 20 ms window; a worker that spins
/// or sleep-polls never gets there.
fn wait_all_blocked(r: &Rig) {
    for _ in 0..250 {
        let before = loops(r);
        std::thread::sleep(std::time::Duration::from_millis(20));
        if loops(r) == before
            && r.dp
                .workers
                .iter()
                .all(|w| w.counters.sleeps.load(Ordering::SeqCst) > 0)
        {
            return;
        }
    }
    panic!("workers never blocked");
}

fn loops(r: &Rig) -> u64 {
    r.dp.workers
        .iter()
        .map(|w| w.counters.loops.load(Ordering::SeqCst))
        .sum()
}

#[test]
fn idle_workers_block_and_wake_for_frames_and_ops() {
    let mut r = rig(2, 2);
    r.port1_to_2();
    wait_all_blocked(&r);
    // Blocked in epoll: the loop counters do not move while nothing
    // happens (a spinning or sleep-polling worker would loop hundreds of
    // times in this window; a blocked one at most once, at the 1 s guard).
    let before = loops(&r);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let after = loops(&r);
    assert!(
        after - before <= 2,
        "idle workers kept looping: {before} -> {after}"
    );
    // A frame wakes the worker owning port 1 through the port's fd.
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    // An operation wakes blocked workers: the barrier returns.
    wait_all_blocked(&r);
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![out(port_no::IN_PORT)],
    )));
    r.barrier();
    r.send(1, &f);
    assert_eq!(r.recv(1), f);
}

#[test]
fn busy_poll_mode_forwards() {
    let mut r = rig_with(
        2,
        DpConfig {
            n_workers: 1,
            poll: PollMode::Busy,
            ..DpConfig::default()
        },
    );
    r.port1_to_2();
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    assert_eq!(r.dp.workers[0].counters.sleeps.load(Ordering::SeqCst), 0);
}

#[test]
fn transmit_is_lock_free_and_counted_on_the_port() {
    let mut r = rig(3, 2);
    // Every MemPort gives transmit clones: no port is reached by its lock.
    assert_eq!(r.dp.tx.lock_free(), 3);
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![],
        vec![out(port_no::ALL)],
    )));
    r.barrier();
    // Ports 1 and 3 belong to worker 0, port 2 to worker 1: both workers
    // transmit on every port through their own clones.
    for p in 1..=3 {
        r.send(p, &frame(p as u8, BCAST, 60));
    }
    for p in 1..=3 {
        for _ in 0..2 {
            r.recv(p);
        }
    }
    // Port stats count the transmissions of every clone.
    let msgs = r.req(Message::MultipartRequest(Multipart::new(Q::PortStats {
        port_no: port_no::ANY,
    })));
    let stats: Vec<_> = msgs
        .into_iter()
        .flat_map(|m| match m.body {
            Message::MultipartReply(Multipart {
                body: R::PortStats(v),
                ..
            }) => v,
            b => panic!("unexpected {b:?}"),
        })
        .collect();
    assert_eq!(stats.len(), 3);
    for s in stats {
        assert_eq!((s.rx_packets, s.tx_packets), (1, 2), "port {}", s.port_no);
    }
}

impl Rig {
    /// One multipart request, reply bodies of all parts.
    fn multipart(&mut self, q: Q) -> Vec<R> {
        self.req(Message::MultipartRequest(Multipart::new(q)))
            .into_iter()
            .map(|m| match m.body {
                Message::MultipartReply(Multipart { body, .. }) => body,
                b => panic!("unexpected {b:?}"),
            })
            .collect()
    }

    fn meter_stats(&mut self) -> Vec<ofp::multipart::MeterStats> {
        self.multipart(Q::Meter {
            meter_id: ofp::meter::meter_id::ALL,
        })
        .into_iter()
        .flat_map(|b| match b {
            R::Meter(v) => v,
            b => panic!("unexpected {b:?}"),
        })
        .collect()
    }
}

#[test]
fn a_meter_limits_the_switch_not_each_worker() {
    use ofp::meter::{command as mcmd, flags as mflags, MeterBand, MeterMod};
    // Ports 1 and 3 are received by worker 0, port 2 by worker 1.
    let mut r = rig(3, 2);
    r.ok(Message::MeterMod(MeterMod {
        command: mcmd::ADD,
        flags: mflags::PKTPS | mflags::BURST | mflags::STATS,
        meter_id: 1,
        bands: vec![MeterBand::Drop {
            rate: 1,
            burst_size: 4,
        }],
    }));
    let mut f = fm(cmd::ADD, 10, vec![], vec![out(3)]);
    f.instructions.insert(0, Instruction::Meter(1));
    r.ok(Message::FlowMod(f));
    r.barrier();
    // The fake clock stands still: no refill, so the burst of 4 is all
    // that may pass, whichever worker meters the packets.
    for i in 0..6 {
        r.send(1, &frame(1, [2, 0, 0, 0, 0, i], 60));
        r.send(2, &frame(2, [2, 0, 0, 0, 0, i], 60));
    }
    for _ in 0..20_000 {
        if r.meter_stats().first().map(|m| m.packet_in_count) == Some(12) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    r.barrier();
    let m = &r.meter_stats()[0];
    assert_eq!((m.meter_id, m.flow_count), (1, 1));
    assert_eq!((m.packet_in_count, m.byte_in_count), (12, 12 * 60));
    assert_eq!(m.band_stats[0].packet_band_count, 8);
    assert_eq!(r.pending(3), 4);
    // A modify keeps the counters and refills: 4 more pass.
    r.ok(Message::MeterMod(MeterMod {
        command: mcmd::MODIFY,
        flags: mflags::PKTPS | mflags::BURST | mflags::STATS,
        meter_id: 1,
        bands: vec![MeterBand::Drop {
            rate: 1,
            burst_size: 4,
        }],
    }));
    r.barrier();
    for i in 0..3 {
        r.send(1, &frame(1, [2, 0, 0, 0, 0, i], 60));
        r.send(2, &frame(2, [2, 0, 0, 0, 0, i], 60));
    }
    for _ in 0..20_000 {
        if r.meter_stats()[0].packet_in_count == 18 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    r.barrier();
    assert_eq!(r.pending(3), 8);
    assert_eq!(r.meter_stats()[0].band_stats[0].packet_band_count, 2);
}

#[test]
fn feature_multiparts_describe_the_switch() {
    use ofp::table_features::{OxmId, TableFeatureProp as P};
    let mut r = rig(1, 1);
    match r.multipart(Q::MeterFeatures).as_slice() {
        [R::MeterFeatures(f)] => {
            assert_eq!(f.band_types, 0b110);
            assert_eq!(f.max_meter, ofp::meter::meter_id::MAX);
        }
        b => panic!("unexpected {b:?}"),
    }
    match r.multipart(Q::GroupFeatures).as_slice() {
        [R::GroupFeatures(f)] => {
            assert_eq!(f.types, 0b1111);
            assert_ne!(f.actions[0] & (1 << ofp::action::action_type::SET_FIELD), 0);
        }
        b => panic!("unexpected {b:?}"),
    }
    let tables: Vec<_> = r
        .multipart(Q::TableFeatures(vec![]))
        .into_iter()
        .flat_map(|b| match b {
            R::TableFeatures(v) => v,
            b => panic!("unexpected {b:?}"),
        })
        .collect();
    assert_eq!(tables.len(), 255);
    // Split into messages that fit, and that decode back to the same.
    for m in r.req(Message::MultipartRequest(Multipart::new(Q::TableFeatures(
        vec![],
    )))) {
        let raw = m.encode();
        assert!(raw.len() <= 65535);
        assert_eq!(OfpMessage::decode(&raw).unwrap(), m);
    }
    let ids: Vec<u8> = tables.iter().map(|t| t.table_id).collect();
    assert_eq!(ids, (0..=254).collect::<Vec<u8>>());
    let t0 = &tables[0];
    assert_eq!(t0.metadata_match, u64::MAX);
    let next = t0.properties.iter().find_map(|p| match p {
        P::NextTables {
            miss: false,
            tables,
        } => Some(tables.clone()),
        _ => None,
    });
    assert_eq!(next, Some((1..=254).collect()));
    let header = |p: &P| match p {
        P::Match(v) => Some(v.clone()),
        _ => None,
    };
    let m = t0.properties.iter().find_map(header).unwrap();
    // eth_dst is maskable (6+6 bytes), in_port is not (4 bytes).
    assert!(m.contains(&OxmId::Standard(ofp::oxm::oxm_header(
        0x8000,
        ofp::oxm::field::ETH_DST,
        true,
        12
    ))));
    assert!(m.contains(&OxmId::Standard(ofp::oxm::oxm_header(
        0x8000,
        ofp::oxm::field::IN_PORT,
        false,
        4
    ))));
    // The last table has no goto_table and no next tables.
    let last = &tables[254];
    assert!(last.properties.iter().any(|p| matches!(
        p,
        P::NextTables { tables, .. } if tables.is_empty()
    )));
    // Setting table features is refused.
    let code = r.error(Message::MultipartRequest(Multipart::new(Q::TableFeatures(
        vec![t0.clone()],
    ))));
    assert_eq!(
        code,
        ErrorCode::TableFeaturesFailed(ofp::error::TableFeaturesFailedCode::Eperm)
    );
}

/// An Ethernet + IPv4 + UDP frame of 100 bytes with the given TTL and IP
/// flags/fragment-offset word (0x2000: more fragments).
fn ipv4_frame(ttl: u8, frag: u16) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    let total = 86u16;
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&total.to_be_bytes());
    f.extend_from_slice(&[0, 1]);
    f.extend_from_slice(&frag.to_be_bytes());
    f.extend_from_slice(&[ttl, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    let ck = packet::checksum::checksum(0, &f[14..34]);
    f[24..26].copy_from_slice(&ck.to_be_bytes());
    f.extend_from_slice(&[0x03, 0xe8, 0x00, 0x35, 0, 66, 0, 0]);
    f.resize(100, 0x5a);
    f
}

fn set_config(flags: u16, miss_send_len: u16) -> Message {
    Message::SetConfig(ofp::message::SwitchConfig {
        flags,
        miss_send_len,
    })
}

#[test]
fn frag_drop_drops_fragments_and_reasm_is_refused() {
    use ofp::message::config_flags as cf;
    let mut r = rig(2, 1);
    r.ok(Message::FlowMod(fm(cmd::ADD, 1, vec![], vec![out(2)])));
    r.ok(set_config(cf::FRAG_DROP, 128));
    r.barrier();
    let first_frag = ipv4_frame(64, 0x2000);
    let later_frag = ipv4_frame(64, 0x0010);
    let whole = ipv4_frame(64, 0);
    r.send(1, &first_frag);
    r.send(1, &later_frag);
    r.send(1, &whole);
    // Frames of one port are handled in order: once `whole` is out, the
    // fragments were handled (dropped) too.
    assert_eq!(r.recv(2), whole);
    assert_eq!(r.pending(2), 0);
    // Reassembly is not supported: refused, configuration unchanged.
    assert_eq!(
        r.error(set_config(cf::FRAG_REASM, 128)),
        ErrorCode::SwitchConfigFailed(ofp::error::SwitchConfigFailedCode::BadFlags)
    );
    match r.req(Message::GetConfigRequest).as_slice() {
        [OfpMessage {
            body: Message::GetConfigReply(c),
            ..
        }] => assert_eq!(c.flags, cf::FRAG_DROP),
        x => panic!("unexpected {x:?}"),
    }
    // FRAG_NORMAL: fragments are forwarded like other packets.
    r.ok(set_config(cf::FRAG_NORMAL, 128));
    r.barrier();
    r.send(1, &first_frag);
    r.send(1, &later_frag);
    assert_eq!(r.recv(2), first_frag);
    assert_eq!(r.recv(2), later_frag);
}

#[test]
fn miss_send_len_is_for_invalid_ttl_not_table_miss_entries() {
    use ofp::message::{cml, packet_in_reason as why};
    let mut r = rig(2, 1);
    // As os-ken does: miss_send_len 128, table-miss entry with NO_BUFFER.
    r.ok(set_config(0, 128));
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        0,
        vec![],
        vec![Action::Output {
            port: port_no::CONTROLLER,
            max_len: cml::NO_BUFFER,
        }],
    )));
    let mut big = frame(1, [0, 0, 0, 0, 0, 2], 300);
    big[12..14].copy_from_slice(&[0x88, 0xb5]);
    r.barrier();
    r.send(1, &big);
    let DpEvent::PacketIn(pi) = r.wait_event(|e| matches!(e, DpEvent::PacketIn(_))) else {
        unreachable!()
    };
    assert_eq!(pi.reason, why::NO_MATCH);
    assert_eq!(pi.buffer_id, ofp::message::NO_BUFFER);
    assert_eq!(pi.data, big);
    // INVALID_TTL packet-ins use miss_send_len: 0 sends no bytes (the
    // frame is buffered)...
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        5,
        vec![OxmField::EthType(0x0800)],
        vec![Action::DecNwTtl, out(2)],
    )));
    r.ok(set_config(0, 0));
    r.barrier();
    let ttl1 = ipv4_frame(1, 0);
    r.send(1, &ttl1);
    let DpEvent::PacketIn(pi) = r.wait_event(|e| matches!(e, DpEvent::PacketIn(_))) else {
        unreachable!()
    };
    assert_eq!(pi.reason, why::INVALID_TTL);
    assert!(pi.data.is_empty());
    assert_ne!(pi.buffer_id, ofp::message::NO_BUFFER);
    assert_eq!(pi.total_len, 100);
    // ... and NO_BUFFER the whole frame, unbuffered.
    r.ok(set_config(0, cml::NO_BUFFER));
    r.barrier();
    r.send(1, &ttl1);
    let DpEvent::PacketIn(pi) = r.wait_event(|e| matches!(e, DpEvent::PacketIn(_))) else {
        unreachable!()
    };
    assert_eq!(pi.reason, why::INVALID_TTL);
    assert_eq!(pi.data, ttl1);
    assert_eq!(pi.buffer_id, ofp::message::NO_BUFFER);
}

/// A network namespace for one test, deleted on drop (with its veths).
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("oxdp-{}-{tag}", std::process::id());
        let ip = |args: &[&str]| {
            let ok = std::process::Command::new("ip")
                .args(args)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "ip {args:?}");
        };
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &name])
            .output();
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        ip(&[
            "-n", &ns.0, "link", "add", "s1", "type", "veth", "peer", "name", "h1",
        ]);
        ip(&[
            "-n", &ns.0, "link", "add", "s2", "type", "veth", "peer", "name", "h2",
        ]);
        for i in ["s1", "h1", "s2", "h2"] {
            ip(&["-n", &ns.0, "link", "set", i, "up"]);
        }
        ns
    }

    fn ip(&self, args: &[&str]) {
        let mut v = vec!["-n", &self.0];
        v.extend_from_slice(args);
        let ok = std::process::Command::new("ip")
            .args(&v)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "ip {v:?}");
    }

    /// A datapath with two workers on AF_PACKET ports 1 (s1) and 2 (s2).
    fn two_worker_rig(&self) -> Rig {
        let ports: Vec<(u32, Box<dyn Port>)> = vec![
            (1, Box::new(self.open("s1"))),
            (2, Box::new(self.open("s2"))),
        ];
        let clock = Arc::new(AtomicU64::new(SEC));
        let cfg = DpConfig {
            n_workers: 2,
            ..DpConfig::default()
        };
        let dp = Datapath::start(cfg, ports, Clock::Fake(clock.clone()));
        Rig {
            dp,
            hosts: Vec::new(),
            clock,
        }
    }

    fn open(&self, ifname: &str) -> ports::AfPacket {
        let n = ifname.to_string();
        ports::netns::in_netns(&self.0, move || {
            ports::AfPacket::open(&n, &ports::AfPacketOpts::default())
        })
        .expect("enter netns")
        .expect("open AfPacket")
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .output();
    }
}

#[test]
fn af_packet_workers_block_again_after_a_link_flap() {
    let ns = Netns::new("flap");
    let mut r = ns.two_worker_rig();
    // Every port's transmit goes through a lock-free AF_PACKET clone.
    assert_eq!(r.dp.tx.lock_free(), 2);
    wait_all_blocked(&r);
    // The link-down leaves ENETDOWN on the socket, which polls POLLERR
    // until read: a worker that did not read it would never block again.
    ns.ip(&["link", "set", "s1", "down"]);
    ns.ip(&["link", "set", "s1", "up"]);
    std::thread::sleep(std::time::Duration::from_millis(20));
    wait_all_blocked(&r);
    r.barrier();
}

#[global_allocator]
static ALLOC: ports::alloc_count::Counting = ports::alloc_count::Counting;

/// An IPv4/UDP frame from h1 to h2 with source port `sport`.
fn udp_frame(sport: u16) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
    let ip_len: u16 = 20 + 8 + 18;
    f.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0]);
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&sport.to_be_bytes());
    f.extend_from_slice(&[0x30, 0x39, 0, 26, 0, 0]);
    f.resize(14 + usize::from(ip_len), 0xab);
    f
}

/// Two hosts on AF_PACKET veth pairs in `ns` (h1, h2) and the switch's
/// ends as ports 1 and 2, live in a fresh pipeline.
fn veth_rig(ns: &Netns) -> (Box<dyn Port>, Box<dyn Port>, SwitchPorts, Pipeline) {
    let h1: Box<dyn Port> = Box::new(ns.open("h1"));
    let h2: Box<dyn Port> = Box::new(ns.open("h2"));
    let mut map = BTreeMap::new();
    for (no, io) in [(1u32, ns.open("s1")), (2, ns.open("s2"))] {
        let sp = SwitchPort {
            no,
            name: io.name().to_string(),
            hw_addr: io.hw_addr(),
            io: Mutex::new(Box::new(io) as Box<dyn Port>),
            added_at: 0,
            rx_malformed: Default::default(),
        };
        map.insert(no, Arc::new(sp));
    }
    let mut p = Pipeline::default();
    for no in [1, 2] {
        p.ports.insert(
            no,
            PortInfo {
                config: 0,
                state: state::LIVE,
            },
        );
    }
    (h1, h2, Arc::new(map), p)
}

/// The far ends of a test worker's channels, kept alive with it.
type WorkerEnds = (
    mpsc::SyncSender<super::ops::Sequenced>,
    mpsc::Receiver<worker::WorkerPacketIn>,
);

/// A busy-polling worker over `ports` receiving from `rx` through the
/// default graph, driven by the test through `Worker::round`.
fn busy_worker(
    pipeline: Pipeline,
    ports: &SwitchPorts,
    rx: Vec<worker::RxSource>,
    mode: Mode,
    clock: Clock,
    learning: LearningTable,
) -> (worker::Worker, WorkerEnds) {
    let (ops_tx, ops) = mpsc::sync_channel(16);
    let (events, events_rx) = mpsc::sync_channel(16);
    let counters: Arc<super::ops::WorkerCounters> = Arc::default();
    let parts = super::graph_openflow::OpenFlowParts {
        pipeline,
        side: super::graph_openflow::Side {
            mode,
            events: worker::PacketInSender {
                tx: events,
                waker: Arc::default(),
            },
            counters: counters.clone(),
            learning,
            ports: ports.clone(),
            flex: None,
            clock: clock.clone(),
        },
    };
    let names: Vec<String> = rx
        .iter()
        .filter_map(|src| ports.get(&src.port_no()).map(|p| p.name.clone()))
        .collect();
    let spec = super::graph_run::default_spec(names.iter().map(String::as_str), []);
    let shared = graph::Shared::default();
    let (env, fds) = super::graph_run::GraphRun::env(rx, ports, &[], &shared, parts);
    let g = super::graph_run::GraphRun::build(
        &spec,
        true,
        0,
        env,
        fds,
        clock,
        packet::buf::DEFAULT_CAPACITY,
    )
    .expect("the default graph builds");
    let w = worker::Worker {
        pipeline: Pipeline::default(),
        ports: ports.clone(),
        ops,
        counters,
        stop: Arc::default(),
        poll_mode: worker::PollMode::Busy,
        poller: None,
        graph: Box::new(g),
    };
    (w, (ops_tx, events_rx))
}

/// The forwarding loop allocates nothing once warm: a real worker on real
/// AF_PACKET veth ports forwards frames through two tables, set-field,
/// write-actions and a SELECT group with TTL decrement, while a counting
/// allocator watches the thread that runs [`worker::Worker::round`].
#[test]
fn forwarding_loop_does_not_allocate() {
    use super::worker::{RxSource, Worker};
    let ns = Netns::new("alloc");
    let (mut h1, mut h2, ports, mut p) = veth_rig(&ns);
    let bucket = |dst: u8| Bucket {
        weight: 1,
        watch_port: port_no::ANY,
        watch_group: group_id::ANY,
        actions: vec![
            Action::DecNwTtl,
            Action::SetField(OxmField::EthDst([0x02, 0, 0, 0, 0, dst], None)),
            Action::Output {
                port: 2,
                max_len: 0,
            },
        ],
    };
    p.group_mod(
        &GroupMod {
            command: ofp::group::command::ADD,
            group_type: group_type::SELECT,
            group_id: 7,
            buckets: vec![bucket(0x12), bucket(0x13)],
        },
        0,
    )
    .expect("group");
    let mut t0 = fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1), OxmField::EthType(0x0800)],
        vec![Action::SetField(OxmField::IpDscp(10))],
    );
    t0.instructions.push(Instruction::GotoTable(1));
    p.flow_mod(&t0, 0).expect("table 0");
    let mut t1 = fm(
        cmd::ADD,
        10,
        vec![OxmField::EthType(0x0800), OxmField::IpProto(17)],
        vec![],
    );
    t1.table_id = 1;
    t1.instructions = vec![Instruction::WriteActions(vec![Action::Group(7)])];
    p.flow_mod(&t1, 0).expect("table 1");

    let (mut w, _keep) = busy_worker(
        p,
        &ports,
        vec![RxSource::Shared { no: 1 }],
        Mode::Pipeline,
        Clock::real(),
        LearningTable::default(),
    );
    let frames: Vec<Vec<u8>> = (0..ports::BATCH as u16).map(udp_frame).collect();
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let mut host_bufs = vec![PacketBuf::new(); 256];
    // One burst: send it and run the worker until h2 has seen all of it
    // (other frames, e.g. IPv6 neighbour discovery of the fresh links, are
    // not counted); the allocations counted inside `round` add to `counted`.
    // Returns the frames seen and a copy of the last one.
    let mut burst = |w: &mut Worker, counted: &mut u64| -> (usize, Vec<u8>) {
        assert_eq!(h1.tx_batch(&refs).unwrap(), refs.len());
        let mut seen = 0;
        let mut last = Vec::new();
        for _ in 0..10_000 {
            let (_, allocs) = ports::alloc_count::count(|| w.round());
            *counted += allocs;
            let n = h2.rx_batch(&mut host_bufs).unwrap();
            for b in host_bufs[..n]
                .iter()
                .filter(|b| b.data().get(23) == Some(&17))
            {
                seen += 1;
                last.clear();
                last.extend_from_slice(b.data());
            }
            if seen >= refs.len() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        (seen, last)
    };
    // Warm up: queues, scratch buffers and socket state reach their size.
    let mut warm = 0;
    for _ in 0..4 {
        burst(&mut w, &mut warm);
    }
    let mut allocs = 0;
    let mut seen = 0;
    let mut last = Vec::new();
    for _ in 0..32 {
        let (n, l) = burst(&mut w, &mut allocs);
        seen += n;
        last = l;
    }
    assert_eq!(seen, 32 * ports::BATCH, "every frame forwarded to h2");
    assert_eq!(
        &last[0..5],
        &[0x02, 0, 0, 0, 0],
        "eth_dst rewritten by a bucket"
    );
    assert!(last[5] == 0x12 || last[5] == 0x13);
    assert_eq!(last[22], 63, "TTL decremented");
    assert_eq!(last[15] >> 2, 10, "DSCP set in table 0");
    assert_eq!(allocs, 0, "heap allocations in the forwarding loop");

    // The standalone learning switch (flooding, as h2's address is never
    // learned) keeps the promise too.
    w.graph.set_mode(Mode::Standalone);
    let mut warm = 0;
    for _ in 0..4 {
        burst(&mut w, &mut warm);
    }
    let (mut allocs, mut seen) = (0, 0);
    for _ in 0..8 {
        seen += burst(&mut w, &mut allocs).0;
    }
    assert_eq!(seen, 8 * ports::BATCH, "every frame flooded to h2");
    assert_eq!(allocs, 0, "heap allocations in the standalone loop");
}

/// The learning switch allocates nothing per packet once warm, in
/// standalone mode and as a flow's output to NORMAL: a real worker
/// receiving from both AF_PACKET veth ports forwards h1's frames to h2,
/// whose address it learned from a frame h2 sent, while a counting
/// allocator watches the thread that runs [`worker::Worker::round`].
#[test]
fn learning_switch_does_not_allocate() {
    use super::worker::{RxSource, Worker};
    let ns = Netns::new("alloc-l2");
    let (mut h1, mut h2, ports, mut p) = veth_rig(&ns);
    // For the NORMAL phase (standalone mode bypasses the pipeline).
    p.flow_mod(&fm(cmd::ADD, 0, vec![], vec![out(port_no::NORMAL)]), 0)
        .expect("flow");
    let clock = Clock::real();
    let learning = LearningTable::default();
    let (mut w, _keep) = busy_worker(
        p,
        &ports,
        vec![RxSource::Shared { no: 1 }, RxSource::Shared { no: 2 }],
        Mode::Standalone,
        clock.clone(),
        learning.clone(),
    );
    let (mac1, mac2) = ([0x02, 0, 0, 0, 0, 1], [0x02, 0, 0, 0, 0, 2]);
    // h2 makes itself known: a frame from mac2 to mac1 on port 2.
    let mut hello = udp_frame(1);
    hello[0..6].copy_from_slice(&mac1);
    hello[6..12].copy_from_slice(&mac2);
    assert_eq!(h2.tx_batch(&[&hello]).unwrap(), 1);
    for _ in 0..10_000 {
        w.round();
        if learning.port_of(mac2, clock.now()).is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    assert_eq!(learning.port_of(mac2, clock.now()), Some(2), "h2 learned");
    let frames: Vec<Vec<u8>> = (0..ports::BATCH as u16).map(udp_frame).collect();
    let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
    let mut host_bufs = vec![PacketBuf::new(); 256];
    // One burst h1 -> h2, run until h2 has seen all of it; the allocations
    // counted inside `round` add to `counted`. Returns the frames seen.
    let mut burst = |w: &mut Worker, counted: &mut u64| -> usize {
        assert_eq!(h1.tx_batch(&refs).unwrap(), refs.len());
        let mut seen = 0;
        for _ in 0..10_000 {
            let (_, allocs) = ports::alloc_count::count(|| w.round());
            *counted += allocs;
            let n = h2.rx_batch(&mut host_bufs).unwrap();
            seen += host_bufs[..n]
                .iter()
                .filter(|b| b.data().get(23) == Some(&17) && b.data().get(6..12) == Some(&mac1))
                .count();
            if seen >= refs.len() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
        seen
    };
    for mode in [Mode::Standalone, Mode::Pipeline] {
        w.graph.set_mode(mode);
        let mut warm = 0;
        for _ in 0..4 {
            burst(&mut w, &mut warm);
        }
        let (mut allocs, mut seen) = (0, 0);
        for _ in 0..8 {
            seen += burst(&mut w, &mut allocs);
        }
        assert_eq!(seen, 8 * ports::BATCH, "{mode:?}: every frame reached h2");
        assert_eq!(allocs, 0, "{mode:?}: heap allocations per packet");
        assert_eq!(learning.port_of(mac1, clock.now()), Some(1), "h1 learned");
    }
}

/// With two workers, an AF_PACKET port's reception is split by flow hash:
/// both workers receive a share of many flows, and every frame is
/// forwarded exactly once.
#[test]
fn two_workers_share_a_port_by_flow_hash() {
    let ns = Netns::new("fanout");
    let mut h1 = ns.open("h1");
    let mut h2 = ns.open("h2");
    let mut r = ns.two_worker_rig();
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1), OxmField::EthType(0x0800)],
        vec![Action::Output {
            port: 2,
            max_len: 0,
        }],
    )));
    r.barrier();
    let frames: Vec<Vec<u8>> = (0..256u16).map(|i| udp_frame(1000 + i)).collect();
    for chunk in frames.chunks(ports::BATCH) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        assert_eq!(h1.tx_batch(&refs).unwrap(), refs.len());
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let mut bufs = vec![PacketBuf::new(); 64];
    let mut seen = 0;
    for _ in 0..2000 {
        let n = h2.rx_batch(&mut bufs).unwrap();
        seen += bufs[..n]
            .iter()
            .filter(|b| b.data().get(23) == Some(&17))
            .count();
        if seen >= frames.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // Nothing more arrives: no frame was forwarded twice.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let n = h2.rx_batch(&mut bufs).unwrap();
    seen += bufs[..n]
        .iter()
        .filter(|b| b.data().get(23) == Some(&17))
        .count();
    assert_eq!(seen, frames.len(), "each frame forwarded exactly once");
    let per_worker: Vec<u64> =
        r.dp.workers
            .iter()
            .map(|w| w.counters.rx_packets.load(Ordering::SeqCst))
            .collect();
    assert!(
        per_worker.iter().all(|&n| n >= 32),
        "both workers took a share: {per_worker:?}"
    );
}

impl Rig {
    /// The worker statistics experimenter multipart's records.
    fn worker_stats(&mut self) -> Vec<ofp::experimenter::WorkerStats> {
        use ofp::experimenter::WorkerStats;
        match self
            .multipart(Q::Experimenter(WorkerStats::request()))
            .as_slice()
        {
            [R::Experimenter(e)] => WorkerStats::parse_reply(e)
                .expect("oxflow's worker statistics")
                .expect("whole records"),
            b => panic!("unexpected {b:?}"),
        }
    }
}

/// The worker statistics experimenter multipart reports every worker, and
/// a worker's busy time and rounds grow with the frames it forwards (and
/// only then: its idle rounds are not busy). Other experimenter ids and
/// types get the spec's errors.
#[test]
fn worker_stats_count_busy_rounds_and_refuse_unknown_experimenters() {
    use ofp::experimenter::{exp_type, OXFLOW_EXPERIMENTER};
    let mut r = rig(2, 2);
    r.port1_to_2();
    wait_all_blocked(&r);
    let before = r.worker_stats();
    assert_eq!(before.len(), 2);
    assert_eq!(
        before.iter().map(|s| s.worker).collect::<Vec<_>>(),
        vec![0, 1]
    );
    let f = frame(1, BCAST, 60);
    for _ in 0..20 {
        r.send(1, &f);
        assert_eq!(r.recv(2), f);
    }
    let after = r.worker_stats();
    let (b, a) = (
        ofp::experimenter::total(&before),
        ofp::experimenter::total(&after),
    );
    assert_eq!(a.rx_packets - b.rx_packets, 20);
    let busy = a.busy_rounds - b.busy_rounds;
    assert!((1..=20).contains(&busy), "busy rounds {busy}");
    assert!(a.busy_ns > b.busy_ns, "busy time grew");
    let pipe = a.pipeline_ns - b.pipeline_ns;
    assert!(
        pipe > 0 && pipe <= a.busy_ns - b.busy_ns,
        "the pipeline's time {pipe} is a part of the busy time"
    );
    assert!(
        a.rounds - b.rounds > busy || a.sleeps > b.sleeps,
        "some rounds found nothing"
    );
    for s in &after {
        assert!(s.busy_rounds <= s.rounds, "worker {}", s.worker);
    }
    // Port 1 is worker 0's: worker 1 received nothing.
    assert_eq!(after[1].rx_packets, 0);
    assert_eq!(after[1].busy_ns, 0);

    let bad = |experimenter, exp_type, data: Vec<u8>| {
        Message::MultipartRequest(Multipart::new(Q::Experimenter(
            ofp::multipart::ExperimenterMultipart {
                experimenter,
                exp_type,
                data,
            },
        )))
    };
    assert_eq!(
        r.error(bad(0x0000_2320, exp_type::WORKER_STATS, vec![])),
        ErrorCode::BadRequest(BadRequestCode::BadExperimenter)
    );
    assert_eq!(
        r.error(bad(OXFLOW_EXPERIMENTER, 99, vec![])),
        ErrorCode::BadRequest(BadRequestCode::BadExpType)
    );
    assert_eq!(
        r.error(bad(OXFLOW_EXPERIMENTER, exp_type::WORKER_STATS, vec![0; 8])),
        ErrorCode::BadRequest(BadRequestCode::BadLen)
    );
    assert_eq!(
        r.error(Message::Experimenter(ofp::message::Experimenter {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: 1,
            data: vec![],
        })),
        ErrorCode::BadRequest(BadRequestCode::BadExperimenter)
    );
}

mod beba_errors;
mod beba_notify;
mod bundle;
mod snapshot;
