//! BEBA notifications on a running datapath: a packet whose SET_STATE
//! changes a state brings a STATE_CHANGED up from a worker; a flow-mod
//! from a BEBA controller is acknowledged with a FLOW_NOTIFICATION; slaves
//! get no STATE_CHANGED.

use super::*;
use crate::channel::async_config::{default_async_config, wants};
use crate::channel::datapath::Datapath as _;
use crate::channel::role::ControllerRole;
use ofp::beba::{BebaAction, BebaMessage, FlowNotification, SetState, StateChanged, StateMod};

/// OXM header of `eth_src`.
const ETH_SRC: u32 = 0x8000_0806;

fn conn_n(id: u64) -> crate::channel::hub::ConnInfo {
    let (tx, _rx) = tokio::sync::mpsc::channel(8);
    crate::channel::hub::ConnInfo {
        id,
        group: 0,
        auxiliary_id: 0,
        role: ControllerRole::Equal,
        peer: "127.0.0.1:1".parse().expect("address"),
        tx,
    }
}

/// `body` from connection `id` of an equal controller (xid 42): the
/// replies.
fn send_on(r: &mut Rig, id: u64, body: Message) -> Vec<OfpMessage> {
    let m = OfpMessage::new(42, body);
    let raw = m.encode();
    r.dp.handle(&conn_n(id), m, &raw)
}

fn send(r: &mut Rig, body: Message) -> Vec<OfpMessage> {
    send_on(r, 1, body)
}

fn beba(r: &mut Rig, m: StateMod) {
    let out = send(
        r,
        Message::Experimenter(BebaMessage::StateMod(m).to_experimenter()),
    );
    assert_eq!(out, []);
}

/// Table 0 keyed by eth_src; every frame from port 1 sets its source's
/// state to 7 and goes out of port 2.
fn knock_rig() -> Rig {
    let mut r = rig(2, 2);
    for m in StateMod::stateful_table(0, vec![ETH_SRC], vec![ETH_SRC]) {
        beba(&mut r, m);
    }
    let set = BebaAction::SetState(SetState {
        state: 7,
        state_mask: u32::MAX,
        table_id: 0,
        ..SetState::default()
    });
    r.ok(Message::FlowMod(fm(
        cmd::ADD,
        1,
        vec![OxmField::InPort(1)],
        vec![set.to_action(), out(2)],
    )));
    r.barrier();
    r
}

fn state_changed(e: &DpEvent) -> Option<StateChanged> {
    match e {
        DpEvent::Experimenter(x) => match BebaMessage::from_experimenter(x) {
            Some(Ok(BebaMessage::StateChanged(m))) => Some(m),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn a_packet_changing_a_state_sends_state_changed_once() {
    let mut r = knock_rig();
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    let ev = r.wait_event(|e| state_changed(e).is_some());
    let m = state_changed(&ev).expect("state changed");
    assert_eq!((m.table_id, m.old_state, m.new_state), (0, 0, 7));
    assert_eq!(m.key, [0, 0, 0, 0, 0, 1], "eth_src");
    // The same state again is no change: no notification.
    r.send(1, &f);
    assert_eq!(r.recv(2), f);
    r.barrier();
    assert!(
        r.dp.take_events()
            .iter()
            .all(|e| state_changed(e).is_none()),
        "no second notification"
    );
    assert_eq!(r.dp.state_change_drops(), 0);
}

/// More state changes than the queue holds before the control thread
/// drains it: the first [`stateful::notify::QUEUE_CAPACITY`] are sent, the
/// others dropped and counted; the states themselves are all written.
#[test]
fn a_full_notification_queue_drops_and_counts() {
    let mut r = knock_rig();
    let cap = stateful::notify::QUEUE_CAPACITY as u32;
    for i in 0..cap + 10 {
        let mut f = frame(1, BCAST, 60);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, (i >> 8) as u8, i as u8]);
        // Through the pipeline on the control thread (packet-out to
        // TABLE), as a received frame would go on a worker.
        r.ok(Message::PacketOut(PacketOut {
            buffer_id: ofp::message::NO_BUFFER,
            in_port: 1,
            actions: vec![out(port_no::TABLE)],
            data: f,
        }));
    }
    assert_eq!(r.dp.state_change_drops(), 10);
    let sent =
        r.dp.take_events()
            .iter()
            .filter(|e| state_changed(e).is_some())
            .count();
    assert_eq!(sent, cap as usize);
    let stored = pipeline::ext::beba::state(&r.dp.pipeline)
        .expect("the switch knows BEBA")
        .table(0)
        .and_then(|t| t.store())
        .map_or(0, |s| s.len());
    assert_eq!(stored, cap as usize + 10);
}

#[test]
fn state_changed_goes_to_masters_and_equals_only() {
    let c = default_async_config();
    let m =
        Message::Experimenter(BebaMessage::StateChanged(StateChanged::default()).to_experimenter());
    assert!(wants(&c, ControllerRole::Master, &m));
    assert!(wants(&c, ControllerRole::Equal, &m));
    assert!(!wants(&c, ControllerRole::Slave, &m));
    // Through the hub, as the daemon sends it: three controllers, one of
    // them slave.
    use ofp::message::{role, FeaturesReply, Role};
    let hub = crate::channel::hub::Hub::new(FeaturesReply::default());
    let mut rx = Vec::new();
    for id in 1..=3 {
        let (tx, r) = tokio::sync::mpsc::channel(8);
        hub.register(id, id, 0, true, tx);
        rx.push(r);
    }
    let req = |r| Role {
        role: r,
        generation_id: 1,
    };
    assert!(hub.role_request(1, req(role::MASTER)).is_ok());
    assert!(hub.role_request(3, req(role::SLAVE)).is_ok());
    assert_eq!(hub.send_async(&OfpMessage::new(0, m.clone())), 2);
    let got: Vec<bool> = rx.iter_mut().map(|r| r.try_recv().is_ok()).collect();
    assert_eq!(got, [true, true, false], "master, equal, slave");
}

#[test]
fn flow_mods_are_acknowledged_on_connections_speaking_beba() {
    let mut r = rig(2, 1);
    let add = || Message::FlowMod(fm(cmd::ADD, 5, vec![OxmField::InPort(1)], vec![out(2)]));
    // A connection that sent no BEBA message gets nothing.
    assert_eq!(send(&mut r, add()), []);
    let [config, ..] = StateMod::stateful_table(0, vec![ETH_SRC], vec![ETH_SRC]);
    beba(&mut r, config);
    let acked = send(&mut r, add());
    let [OfpMessage {
        xid: 42,
        body: Message::Experimenter(e),
    }] = acked.as_slice()
    else {
        panic!("expected one FLOW_NOTIFICATION, got {acked:?}");
    };
    let Some(Ok(BebaMessage::FlowNotification(n))) = BebaMessage::from_experimenter(e) else {
        panic!("not a flow notification: {e:?}");
    };
    assert_eq!(
        n,
        FlowNotification {
            table_id: 0,
            ntf_type: 14,
            match_: Match::new(vec![OxmField::InPort(1)]),
            instructions: vec![4],
        }
    );
    // Another connection, plain OpenFlow (e.g. ovs-ofctl), gets nothing.
    assert_eq!(send_on(&mut r, 2, add()), []);
    // A refused flow-mod gets its error only.
    let mut bad = fm(cmd::ADD, 5, vec![], vec![out(2)]);
    bad.table_id = ofp::instruction::TABLE_ALL;
    let refused = send(&mut r, Message::FlowMod(bad));
    assert!(
        matches!(
            refused.as_slice(),
            [OfpMessage {
                body: Message::Error(_),
                ..
            }]
        ),
        "{refused:?}"
    );
    // A closed connection is forgotten (ids are never reused; the set
    // does not grow).
    r.dp.connection_closed(1);
    assert_eq!(send(&mut r, add()), []);
}
