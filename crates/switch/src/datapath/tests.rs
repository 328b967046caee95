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
    let clock = Arc::new(AtomicU64::new(SEC));
    let mut hosts = Vec::new();
    let mut ports: Vec<(u32, Box<dyn Port>)> = Vec::new();
    for no in 1..=n_ports {
        let (sw, host) = MemPort::pair_named(&format!("sw{no}"), &format!("h{no}"), 256).unwrap();
        ports.push((no, Box::new(sw)));
        hosts.push(host);
    }
    let cfg = DpConfig {
        n_workers,
        ..DpConfig::default()
    };
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

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn fm(command: u8, priority: u16, m: Vec<OxmField>, actions: Vec<Action>) -> FlowMod {
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
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![out(2)],
    )));
    r.barrier();
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
