//! State snapshots: what a datapath saves re-creates the same state in a
//! fresh one, through the file format, and a snapshot that cannot be
//! applied changes nothing.

use super::*;
use ofp::group::{command as gcmd, group_type};
use ofp::meter::{command as mcmd, flags as mflags, MeterBand, MeterMod};

fn group(id: u32, actions: Vec<Action>) -> Message {
    Message::GroupMod(GroupMod {
        command: gcmd::ADD,
        group_type: group_type::ALL,
        group_id: id,
        buckets: vec![Bucket {
            weight: 0,
            watch_port: port_no::ANY,
            watch_group: group_id::ANY,
            actions,
        }],
    })
}

fn populate(r: &mut Rig) {
    r.ok(set_config(0, 300));
    r.ok(Message::MeterMod(MeterMod {
        command: mcmd::ADD,
        flags: mflags::PKTPS | mflags::BURST,
        meter_id: 3,
        bands: vec![MeterBand::Drop {
            rate: 100,
            burst_size: 10,
        }],
    }));
    // Group 2 forwards to group 1, which is added after it by id order.
    r.ok(group(1, vec![out(2)]));
    r.ok(group(2, vec![Action::Group(1)]));
    let mut a = fm(
        cmd::ADD,
        10,
        vec![OxmField::InPort(1)],
        vec![Action::Group(2)],
    );
    a.cookie = 0xc0ffee;
    a.idle_timeout = 60;
    a.hard_timeout = 600;
    a.flags = flow_mod_flags::SEND_FLOW_REM | flow_mod_flags::CHECK_OVERLAP;
    r.ok(Message::FlowMod(a));
    let mut b = fm(cmd::ADD, 5, vec![], vec![out(1)]);
    b.instructions.insert(0, Instruction::Meter(3));
    b.table_id = 1;
    r.ok(Message::FlowMod(b));
    r.ok(Message::FlowMod(fm(cmd::ADD, 0, vec![], vec![])));
    let hw = r.dp.ports[&2].hw_addr;
    r.ok(Message::PortMod(PortMod {
        port_no: 2,
        hw_addr: hw,
        config: config::NO_PACKET_IN,
        mask: config::NO_PACKET_IN,
        advertise: 0,
    }));
    r.barrier();
}

#[test]
fn a_snapshot_recreates_the_state() {
    let mut a = rig(2, 1);
    populate(&mut a);
    let saved = a.dp.state_messages();
    let bytes = ofp::snapshot::encode(&saved);
    let mut b = rig(2, 1);
    let n =
        b.dp.restore(ofp::snapshot::decode(&bytes).unwrap())
            .unwrap();
    assert_eq!(n, saved.len());
    assert_eq!(b.dp.state_messages(), saved);
    assert_eq!(b.flow_stats(all_flows()).len(), 3);
    assert_eq!(b.dp.switch_config.miss_send_len, 300);
    // The restored flags keep SEND_FLOW_REM, not CHECK_OVERLAP.
    let f = b
        .flow_stats(all_flows())
        .into_iter()
        .find(|f| f.cookie == 0xc0ffee)
        .unwrap();
    assert_eq!(f.flags, flow_mod_flags::SEND_FLOW_REM);
    assert_eq!((f.idle_timeout, f.hard_timeout), (60, 600));
    // The data plane has them too: in_port=1 -> group 2 -> group 1 -> port 2.
    let fr = frame(1, BCAST, 60);
    b.send(1, &fr);
    assert_eq!(b.recv(2), fr);
}

#[test]
fn a_snapshot_that_does_not_apply_changes_nothing() {
    let mut a = rig(2, 1);
    populate(&mut a);
    let mut saved = a.dp.state_messages();
    // A flow to a port the new switch does not have (one port fewer).
    saved.push(OfpMessage::new(
        0,
        Message::FlowMod(fm(cmd::ADD, 7, vec![], vec![out(2)])),
    ));
    let mut b = rig(1, 1);
    let e = b.dp.restore(saved).unwrap_err();
    assert!(e.contains("BadOutPort"), "{e}");
    assert!(b.flow_stats(all_flows()).is_empty());
    assert_eq!(b.dp.pipeline.groups.iter().count(), 0);
    assert_eq!(b.dp.switch_config.miss_send_len, 128);
}
