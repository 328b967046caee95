//! Bundles on a running datapath: commit applies all or nothing, the
//! workers see a committed bundle at once, errors name the failing message.

use super::*;
use crate::channel::datapath::Datapath as _;
use crate::channel::hub::ConnInfo;
use crate::channel::role::ControllerRole;
use ofp::bundle::{ctrl_type, flags, BundleAdd, BundleCtrl, BundleFailedCode};

fn conn(id: u64, role: ControllerRole) -> ConnInfo {
    let (tx, _rx) = tokio::sync::mpsc::channel(8);
    ConnInfo {
        id,
        group: 0,
        auxiliary_id: 0,
        role,
        peer: "127.0.0.1:1".parse().unwrap(),
        tx,
    }
}

fn send(r: &mut Rig, c: &ConnInfo, m: OfpMessage) -> Vec<OfpMessage> {
    let raw = m.encode();
    r.dp.handle(c, m, &raw)
}

fn ctrl(r: &mut Rig, c: &ConnInfo, xid: u32, id: u32, ty: u16, fl: u16) -> Vec<OfpMessage> {
    let e = BundleCtrl::new(id, ty, fl).to_experimenter();
    send(r, c, OfpMessage::new(xid, Message::Experimenter(e)))
}

fn add(r: &mut Rig, c: &ConnInfo, xid: u32, id: u32, fl: u16, body: Message) -> Vec<OfpMessage> {
    let e = BundleAdd {
        bundle_id: id,
        flags: fl,
        message: OfpMessage::new(xid, body).encode(),
        properties: Vec::new(),
    }
    .to_experimenter();
    send(r, c, OfpMessage::new(xid, Message::Experimenter(e)))
}

fn reply_type(r: &[OfpMessage]) -> u16 {
    match r {
        [OfpMessage {
            body: Message::Experimenter(e),
            ..
        }] => BundleCtrl::decode(&e.data).unwrap().ctrl_type,
        _ => panic!("expected one bundle reply, got {r:?}"),
    }
}

fn bundle_error(m: &OfpMessage) -> BundleFailedCode {
    match &m.body {
        Message::Error(e) => BundleFailedCode::of_error(e).expect("a bundle error"),
        b => panic!("expected an error, got {b:?}"),
    }
}

fn flow(prio: u16, in_port: u32, to: u32) -> Message {
    Message::FlowMod(fm(
        cmd::ADD,
        prio,
        vec![OxmField::InPort(in_port)],
        vec![out(to)],
    ))
}

#[test]
fn commit_applies_everything_at_once_and_the_data_plane_follows() {
    let mut r = rig(2, 2);
    let c = conn(1, ControllerRole::Equal);
    let fl = flags::ATOMIC | flags::ORDERED;
    assert_eq!(
        reply_type(&ctrl(&mut r, &c, 1, 5, ctrl_type::OPEN_REQUEST, fl)),
        ctrl_type::OPEN_REPLY
    );
    assert!(add(&mut r, &c, 2, 5, fl, flow(10, 1, 2)).is_empty());
    assert!(add(&mut r, &c, 3, 5, fl, flow(10, 2, 1)).is_empty());
    // Ordered: the third replaces the first.
    assert!(add(&mut r, &c, 4, 5, fl, flow(10, 1, port_no::IN_PORT)).is_empty());
    assert!(
        r.flow_stats(all_flows()).is_empty(),
        "nothing before the commit"
    );
    assert_eq!(
        reply_type(&ctrl(&mut r, &c, 5, 5, ctrl_type::CLOSE_REQUEST, fl)),
        ctrl_type::CLOSE_REPLY
    );
    let seq = r.dp.seq;
    assert_eq!(
        reply_type(&ctrl(&mut r, &c, 6, 5, ctrl_type::COMMIT_REQUEST, fl)),
        ctrl_type::COMMIT_REPLY
    );
    assert_eq!(
        r.dp.seq,
        seq + 2,
        "a collect, then the bundle as one operation"
    );
    assert_eq!(r.flow_stats(all_flows()).len(), 2);
    // The commit reply means the workers forward with the bundle's rules.
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(1), f);
    r.send(2, &f);
    assert_eq!(r.recv(1), f);
    // The bundle is gone after its commit.
    let e = ctrl(&mut r, &c, 7, 5, ctrl_type::COMMIT_REQUEST, fl);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::BadId);
}

#[test]
fn a_failing_message_commits_nothing() {
    let mut r = rig(2, 1);
    let c = conn(1, ControllerRole::Equal);
    r.port1_to_2();
    let before = r.flow_stats(all_flows());
    let seq = r.dp.seq;
    let fl = flags::ATOMIC;
    // Delete the existing rule, add two, then a flow-mod to a group that
    // does not exist.
    let del = Message::FlowMod(fm(cmd::DELETE, 0, vec![], vec![]));
    assert!(add(&mut r, &c, 10, 9, fl, del).is_empty());
    assert!(add(&mut r, &c, 11, 9, fl, flow(20, 2, 1)).is_empty());
    let mut bad = fm(
        cmd::ADD,
        30,
        vec![OxmField::InPort(2)],
        vec![Action::Group(77)],
    );
    bad.cookie = 0xbad;
    assert!(add(&mut r, &c, 12, 9, fl, Message::FlowMod(bad)).is_empty());
    assert!(add(&mut r, &c, 13, 9, fl, flow(40, 1, 1)).is_empty());
    let out = ctrl(&mut r, &c, 14, 9, ctrl_type::COMMIT_REQUEST, fl);
    assert_eq!(out.len(), 2, "{out:?}");
    // First the failing message's own error, with its xid and bytes...
    assert_eq!(out[0].xid, 12);
    match &out[0].body {
        Message::Error(e) => {
            assert_eq!(
                e.typed(),
                Some(ErrorCode::BadAction(ofp::error::BadActionCode::BadOutGroup))
            );
        }
        b => panic!("{b:?}"),
    }
    // ... then the commit's.
    assert_eq!(out[1].xid, 14);
    assert_eq!(bundle_error(&out[1]), BundleFailedCode::MsgFailed);
    assert_eq!(
        r.flow_stats(all_flows()),
        before,
        "the delete was rolled back"
    );
    assert_eq!(
        r.dp.seq,
        seq + 1 + 1,
        "the commit's collect and the stats' only"
    );
    assert!(
        r.dp.take_events().is_empty(),
        "no flow-removed from a rolled back delete"
    );
    let f = frame(1, BCAST, 60);
    r.send(1, &f);
    assert_eq!(r.recv(2), f, "the data plane still has the old rule");
}

#[test]
fn bad_requests_get_bundle_errors_and_slaves_are_refused() {
    let mut r = rig(1, 1);
    let c = conn(1, ControllerRole::Equal);
    let e = ctrl(&mut r, &c, 1, 3, ctrl_type::CLOSE_REQUEST, 0);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::BadId);
    assert_eq!(e[0].xid, 1);
    let e = ctrl(&mut r, &c, 2, 3, ctrl_type::OPEN_REPLY, 0);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::BadType);
    let e = ctrl(&mut r, &c, 2, 3, ctrl_type::OPEN_REQUEST, 0x10);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::BadFlags);
    // Only state changes may be bundled.
    let e = add(&mut r, &c, 4, 3, 0, Message::BarrierRequest);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::MsgUnsup);
    // An embedded message that does not decode gets its own error.
    let mut bad = fm(cmd::ADD, 1, vec![], vec![]);
    bad.command = 9;
    let e = add(&mut r, &c, 5, 3, 0, Message::FlowMod(bad));
    assert!(matches!(&e[0].body, Message::Error(m)
        if m.typed() == Some(ErrorCode::FlowModFailed(ofp::error::FlowModFailedCode::BadCommand))));
    // Discard on disconnect.
    assert!(add(&mut r, &c, 6, 4, 0, flow(1, 1, 1)).is_empty());
    r.dp.connection_closed(1);
    let e = ctrl(&mut r, &c, 7, 4, ctrl_type::COMMIT_REQUEST, 0);
    assert_eq!(bundle_error(&e[0]), BundleFailedCode::BadId);
    let s = conn(2, ControllerRole::Slave);
    let e = ctrl(&mut r, &s, 8, 1, ctrl_type::OPEN_REQUEST, 0);
    assert!(matches!(&e[0].body, Message::Error(m)
        if m.typed() == Some(ErrorCode::BadRequest(BadRequestCode::IsSlave))));
}
