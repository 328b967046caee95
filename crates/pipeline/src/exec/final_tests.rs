//! `Output::port_final` is called exactly for an output that is the
//! packet's last use (the executor's `tail`), `Output::port` for every
//! other, and the frames are the bytes each output must send. The
//! recorder takes the buffer on `port_final` (leaving an empty one), as
//! the switch's graph does: a later read of the packet would show.

use super::*;
use crate::port::PortInfo;
use ofp::instruction::Instruction;
use ofp::message::{flow_mod_command, FlowMod};

/// One output: (final?, port, frame).
type Sent = (bool, u32, Vec<u8>);

/// Every output, in order.
#[derive(Default, Debug)]
struct Rec(Vec<Sent>);

impl Output for Rec {
    fn port(&mut self, port: u32, data: &[u8], _: Option<u32>) {
        self.0.push((false, port, data.to_vec()));
    }
    fn port_final(&mut self, port: u32, pkt: &mut PacketBuf, _: Option<u32>) {
        let taken = std::mem::replace(pkt, PacketBuf::from_slice(&[]));
        self.0.push((true, port, taken.data().to_vec()));
    }
    fn packet_in(&mut self, _: PacketInEvent<'_>) {}
}

fn flow(table_id: u8, instructions: Vec<Instruction>) -> FlowMod {
    crate::tests::fm(flow_mod_command::ADD, table_id, 1, vec![], instructions)
}

fn out(port: u32) -> Action {
    Action::Output { port, max_len: 0 }
}

const DST: [u8; 6] = [2, 0, 0, 0, 0, 9];

fn set_dst() -> Action {
    Action::SetField(OxmField::EthDst(DST, None))
}

/// An Ethernet frame (IPv4 ethertype, 46 bytes of payload) from port 1.
fn frame() -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5];
    f.resize(60, 0xab);
    f
}

/// What a pipeline of `flows` (table id, instructions) emits for one
/// frame from port 1, and the frame with the rewrite.
fn run(flows: Vec<(u8, Vec<Instruction>)>) -> (Vec<Sent>, Vec<u8>) {
    let mut p = Pipeline::default();
    for i in 1..=3 {
        p.ports.insert(i, PortInfo::up());
    }
    for (t, insts) in flows {
        p.flow_mod(&flow(t, insts), 0).expect("valid flow");
    }
    let mut rec = Rec::default();
    let mut pkt = PacketBuf::from_slice(&frame());
    p.process(&mut pkt, 1, 0, &mut rec).expect("parses");
    let mut rewritten = frame();
    rewritten[..6].copy_from_slice(&DST);
    (rec.0, rewritten)
}

#[test]
fn one_output_is_final() {
    let (got, _) = run(vec![(0, vec![Instruction::ApplyActions(vec![out(2)])])]);
    assert_eq!(got, vec![(true, 2, frame())]);
}

#[test]
fn only_the_last_output_of_a_list_is_final() {
    let (got, rewritten) = run(vec![(
        0,
        vec![Instruction::ApplyActions(vec![out(2), set_dst(), out(3)])],
    )]);
    assert_eq!(got, vec![(false, 2, frame()), (true, 3, rewritten)]);
}

#[test]
fn an_output_before_a_goto_or_an_action_set_is_not_final() {
    let (got, _) = run(vec![
        (
            0,
            vec![
                Instruction::ApplyActions(vec![out(2)]),
                Instruction::GotoTable(1),
            ],
        ),
        (1, vec![Instruction::ApplyActions(vec![out(3)])]),
    ]);
    assert_eq!(got, vec![(false, 2, frame()), (true, 3, frame())]);
    let (got, rewritten) = run(vec![(
        0,
        vec![
            Instruction::ApplyActions(vec![out(2)]),
            Instruction::WriteActions(vec![set_dst(), out(3)]),
        ],
    )]);
    // The action set's output is the packet's last use.
    assert_eq!(got, vec![(false, 2, frame()), (true, 3, rewritten)]);
}

#[test]
fn flooding_and_a_last_action_that_is_no_output_are_not_final() {
    let flood = Action::Output {
        port: port_no::FLOOD,
        max_len: 0,
    };
    let (got, _) = run(vec![(0, vec![Instruction::ApplyActions(vec![flood])])]);
    assert_eq!(got, vec![(false, 2, frame()), (false, 3, frame())]);
    let (got, _) = run(vec![(
        0,
        vec![Instruction::ApplyActions(vec![out(2), set_dst()])],
    )]);
    assert_eq!(got, vec![(false, 2, frame())]);
}
