//! The example extension's COUNT action goes from a flow-mod (or a
//! group-mod) to the packet: compiled by its row, run by its hook, in an
//! apply-actions list, an action set and a group's bucket, one packet at
//! a time and in batches, on two replicas sharing its counters. It sits
//! second in the pipeline's extensions (after BEBA), so its ops must be
//! dispatched by their own index. Bad COUNT actions get the codes its
//! module comment gives and install nothing.

use extension_example::{count_action, Counters, EXPERIMENTER, EXTENSION};
use ofp::action::Action;
use ofp::error::{BadActionCode, ErrorCode};
use ofp::group::{Bucket, GroupMod};
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command as cmd, FlowMod};
use ofp::oxm::{Match, OxmField};
use ofp::port::port_no;
use packet::PacketBuf;
use pipeline::{Output, PacketInEvent, Pipeline, PortInfo};

/// What a pipeline sent: (port, frame) in order, and packet-ins.
#[derive(Default, Debug)]
struct Rec(Vec<(u32, Vec<u8>)>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], _queue: Option<u32>) {
        self.0.push((port, data.to_vec()));
    }
    fn packet_in(&mut self, ev: PacketInEvent<'_>) {
        self.0.push((port_no::CONTROLLER, ev.data.to_vec()));
    }
}

fn flow(in_port: u32, instructions: Vec<Instruction>) -> FlowMod {
    FlowMod {
        cookie: 0,
        cookie_mask: 0,
        table_id: 0,
        command: cmd::ADD,
        idle_timeout: 0,
        hard_timeout: 0,
        priority: 10,
        buffer_id: u32::MAX,
        out_port: port_no::ANY,
        out_group: ofp::group::group_id::ANY,
        flags: 0,
        match_: Match::new(vec![OxmField::InPort(in_port)]),
        instructions,
    }
}

fn output(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

fn group(id: u32, actions: Vec<Action>) -> GroupMod {
    GroupMod {
        command: ofp::group::command::ADD,
        group_type: ofp::group::group_type::ALL,
        group_id: id,
        buckets: vec![Bucket {
            weight: 0,
            watch_port: port_no::ANY,
            watch_group: ofp::group::group_id::ANY,
            actions,
        }],
    }
}

/// An IPv4/UDP frame from host `h`.
fn frame(h: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, h, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, h]);
    f.extend_from_slice(&[10, 0, 0, 2, 0x13, 0x88, 0x13, 0x89, 0, 8, 0, 0]);
    f
}

/// A pipeline knowing BEBA and the example, in that order, with ports 1
/// to 3.
fn pipeline() -> Pipeline {
    let exts = [&pipeline::ext::beba::EXTENSION, &EXTENSION]
        .into_iter()
        .collect();
    let mut p = Pipeline::default().with_extensions(exts);
    for port in 1..=3 {
        p.ports.insert(port, PortInfo::up());
    }
    p
}

fn counters(p: &Pipeline) -> std::sync::Arc<Counters> {
    p.hook::<Counters>(EXPERIMENTER)
        .expect("the pipeline knows the example")
}

#[test]
fn count_runs_from_apply_write_and_bucket_on_every_replica() {
    let mut p = pipeline();
    p.group_mod(&group(7, vec![count_action(2), output(1)]), 0)
        .expect("a bucket with COUNT");
    for fm in [
        flow(
            1,
            vec![Instruction::ApplyActions(vec![count_action(0), output(2)])],
        ),
        flow(
            2,
            vec![Instruction::WriteActions(vec![count_action(1), output(3)])],
        ),
        flow(3, vec![Instruction::ApplyActions(vec![Action::Group(7)])]),
    ] {
        p.flow_mod(&fm, 0).expect("a flow with COUNT");
    }
    // A replica made now shares the hook, as a worker's does.
    let mut replica = p.clone();
    let (n_one, n_batch) = (5u64, 7u64);
    let mut rec = Rec::default();
    for in_port in 1..=3u32 {
        for _ in 0..n_one {
            let mut pkt = PacketBuf::from_slice(&frame(in_port as u8));
            p.process(&mut pkt, in_port, 1, &mut rec).expect("parses");
        }
        let mut bufs: Vec<PacketBuf> = (0..n_batch)
            .map(|_| PacketBuf::from_slice(&frame(in_port as u8)))
            .collect();
        replica.process_batch(&mut bufs, in_port, 2, &mut rec, |_, _, _, r| {
            r.expect("parses")
        });
    }
    let c = counters(&p);
    for i in 0..3 {
        assert_eq!(c.get(i), n_one + n_batch, "counter {i}");
    }
    assert_eq!(c.get(3), 0);
    // Every packet also went where its flow sends it.
    let sent = |port: u32| rec.0.iter().filter(|(p, _)| *p == port).count() as u64;
    for port in 1..=3 {
        assert_eq!(sent(port), n_one + n_batch, "port {port}");
    }
}

#[test]
fn bad_count_actions_are_refused_and_install_nothing() {
    let mut p = pipeline();
    let bad_type = Action::Experimenter {
        experimenter: EXPERIMENTER,
        data: vec![0, 9, 0, 0, 0, 0, 0, 0],
    };
    for (a, code) in [
        (count_action(99), BadActionCode::BadArgument),
        (bad_type, BadActionCode::BadExpType),
    ] {
        let fm = flow(1, vec![Instruction::ApplyActions(vec![a.clone()])]);
        assert_eq!(p.flow_mod(&fm, 0).err(), Some(ErrorCode::BadAction(code)));
        assert_eq!(
            p.group_mod(&group(1, vec![a]), 0).err(),
            Some(ErrorCode::BadAction(code))
        );
    }
    assert_eq!(p.tables()[0].len(), 0);
    // A pipeline not given the example does not know its id.
    let mut bare = Pipeline::default();
    let fm = flow(1, vec![Instruction::ApplyActions(vec![count_action(0)])]);
    assert_eq!(
        bare.flow_mod(&fm, 0).err(),
        Some(ErrorCode::BadAction(BadActionCode::BadExperimenter))
    );
    assert!(bare.hook::<Counters>(EXPERIMENTER).is_none());
}
