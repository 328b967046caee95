use crate::output::{Output, PacketInEvent, Unsupported};
use crate::tests::fm;
use crate::{Pipeline, PortInfo};
use ofp::action::Action;
use ofp::beba::{BebaAction, BebaField, SetState, StateMod};
use ofp::error::{BadMatchCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::message::flow_mod_command as cmd;
use ofp::message::FlowMod;
use ofp::oxm::OxmField;
use packet::PacketBuf;

const SEC: u64 = 1_000_000_000;
const IPV4_SRC: u32 = 0x8000_1604;

#[derive(Default)]
struct Ports(Vec<u32>);

impl Output for Ports {
    fn port(&mut self, port: u32, _data: &[u8], _queue: Option<u32>) {
        self.0.push(port);
    }
    fn packet_in(&mut self, _ev: PacketInEvent<'_>) {
        self.0.push(u32::MAX);
    }
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {}
}

/// Ethernet / IPv4 / UDP from 10.0.0.`src` to port `dport`.
fn udp(src: u8, dport: u16) -> Vec<u8> {
    let mut f = vec![
        0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0,
        10, 0, 0, src, 10, 0, 0, 99,
    ];
    f.extend_from_slice(&1000u16.to_be_bytes());
    f.extend_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&[0, 8, 0, 0]);
    let ck = packet::checksum::checksum(0, &f[14..34]);
    f[24..26].copy_from_slice(&ck.to_be_bytes());
    f
}

fn set_state(state: u32, idle_timeout_us: u32) -> Action {
    BebaAction::SetState(SetState {
        state,
        state_mask: u32::MAX,
        table_id: 0,
        idle_timeout: idle_timeout_us,
        ..SetState::default()
    })
    .to_action()
}

fn state(s: u32) -> OxmField {
    BebaField::State(s, None).to_oxm()
}

fn udp_dst(p: u16) -> Vec<OxmField> {
    vec![
        OxmField::EthType(0x0800),
        OxmField::IpProto(17),
        OxmField::UdpDst(p),
    ]
}

/// A pipeline knowing BEBA, as the switch builds it.
fn beba_pipeline() -> Pipeline {
    Pipeline::default().with_extensions(crate::ext::beba_only())
}

/// The BEBA state of a pipeline built knowing BEBA.
fn beba_state(p: &Pipeline) -> std::sync::Arc<stateful::Stateful> {
    crate::ext::beba::state(p).expect("a pipeline knowing BEBA")
}

/// `p` with ports 1 and 2 and, if it knows BEBA, table 0 stateful, keyed
/// by the IPv4 source.
fn knock_table(mut p: Pipeline) -> Pipeline {
    p.ports.insert(1, PortInfo::up());
    p.ports.insert(2, PortInfo::up());
    if let Some(st) = crate::ext::beba::state(&p) {
        for m in StateMod::stateful_table(0, vec![IPV4_SRC], vec![IPV4_SRC]) {
            st.apply_state_mod(&m, 0).expect("state mod");
        }
    }
    p
}

/// Port knocking on table 0 keyed by the IPv4 source: a knock on 10
/// (state 0 -> 1, idle 1 s) opens UDP port 22 (output 2) for that source.
fn knock_pipeline() -> Pipeline {
    let mut p = knock_table(beba_pipeline());
    let mut knock = udp_dst(10);
    knock.push(state(0));
    let mut open = udp_dst(22);
    open.push(state(1));
    let mut closed = udp_dst(22);
    closed.push(state(0));
    for f in [
        fm(
            cmd::ADD,
            0,
            10,
            knock,
            vec![Instruction::ApplyActions(vec![set_state(1, 1_000_000)])],
        ),
        fm(
            cmd::ADD,
            0,
            10,
            open,
            vec![Instruction::ApplyActions(vec![crate::tests::out(2)])],
        ),
        // Same standard match and priority as `open`: another entry.
        fm(cmd::ADD, 0, 10, closed, vec![]),
    ] {
        p.flow_mod(&f, 0).expect("flow mod");
    }
    assert_eq!(p.tables[0].len(), 3);
    p
}

fn send(p: &mut Pipeline, frame: Vec<u8>, now: u64) -> Vec<u32> {
    let mut out = Ports::default();
    let mut buf = PacketBuf::from_slice(&frame);
    p.process(&mut buf, 1, now, &mut out).expect("parse");
    out.0
}

fn send_batch(p: &mut Pipeline, frames: &[Vec<u8>], now: u64) -> Vec<u32> {
    let mut out = Ports::default();
    let mut bufs: Vec<PacketBuf> = frames.iter().map(|f| PacketBuf::from_slice(f)).collect();
    p.process_batch(&mut bufs, 1, now, &mut out, |_, _, _, _| {});
    out.0
}

#[test]
fn knock_opens_and_idle_timeout_closes() {
    let mut p = knock_pipeline();
    assert_eq!(send(&mut p, udp(1, 22), SEC), Vec::<u32>::new(), "closed");
    assert!(send(&mut p, udp(1, 10), SEC).is_empty(), "the knock");
    assert_eq!(send(&mut p, udp(1, 22), SEC + 1000), vec![2], "open");
    // Another source is still closed: the state is per source.
    assert!(send(&mut p, udp(2, 22), SEC + 2000).is_empty());
    // A replica (a worker) sees the same state.
    let mut r = p.clone();
    assert_eq!(send(&mut r, udp(1, 22), SEC + 3000), vec![2]);
    // Idle for longer than 1 s: back to DEFAULT.
    assert!(send(&mut p, udp(1, 22), 3 * SEC).is_empty(), "closed again");
}

#[test]
fn the_batch_path_takes_states_too() {
    let mut p = knock_pipeline();
    let frames = vec![udp(1, 22), udp(1, 10), udp(1, 22), udp(2, 22)];
    assert_eq!(send_batch(&mut p, &frames, SEC), vec![2]);
}

#[test]
fn state_entries_are_distinct_and_deleted_by_their_state() {
    let mut p = knock_pipeline();
    let mut open = udp_dst(22);
    open.push(state(1));
    // Strict delete of the `state=1` entry leaves the `state=0` one.
    p.flow_mod(&fm(cmd::DELETE_STRICT, 0, 10, open, vec![]), 0)
        .expect("delete");
    assert_eq!(p.tables[0].len(), 2);
    // Non-strict delete with `state=0` takes the two entries matching 0.
    p.flow_mod(&fm(cmd::DELETE, 0, 0, vec![state(0)], vec![]), 0)
        .expect("delete");
    assert_eq!(p.tables[0].len(), 0);
}

/// The three kinds of experimenter contents a flow-mod carries, as
/// flow-mods into table 0 of a pipeline made by `knock_table`, each with
/// the error a pipeline without BEBA answers: a `state` match (UDP 22 in
/// state 1 goes to port 2), a SET_STATE action (a knock on UDP 10 sets
/// state 1), a packet generation (UDP 9 sends template 5 to port 2).
fn experimenter_flow_mods() -> [(FlowMod, ErrorCode); 3] {
    use ofp::beba::InSwitchPktGen;
    use ofp::error::{BadActionCode, BadInstructionCode};
    let mut field = udp_dst(22);
    field.push(state(1));
    let open = Instruction::ApplyActions(vec![crate::tests::out(2)]);
    let gen = InSwitchPktGen {
        pkttmp_id: 5,
        actions: vec![crate::tests::out(2)],
    }
    .to_instruction();
    let action = Instruction::ApplyActions(vec![set_state(1, 1_000_000)]);
    [
        (
            fm(cmd::ADD, 0, 10, field, vec![open]),
            ErrorCode::BadMatch(BadMatchCode::BadField),
        ),
        (
            fm(cmd::ADD, 0, 10, udp_dst(10), vec![action]),
            ErrorCode::BadAction(BadActionCode::BadExperimenter),
        ),
        (
            fm(cmd::ADD, 0, 10, udp_dst(9), vec![gen]),
            ErrorCode::BadInstruction(BadInstructionCode::UnsupInst),
        ),
    ]
}

/// An experimenter the pipeline was not given is refused with the spec's
/// codes: BEBA's own field, action and instruction to a pipeline built
/// without extensions, and an id no extension has to one with BEBA. The
/// same flow-mods to a pipeline with BEBA reach the packet (the knock
/// opens the port).
#[test]
fn unregistered_experimenters_are_refused_and_registered_ones_run() {
    let mut bare = knock_table(Pipeline::default());
    assert!(bare
        .extensions()
        .by_id(ofp::beba::BEBA_EXPERIMENTER)
        .is_none());
    for (f, code) in experimenter_flow_mods() {
        assert_eq!(bare.flow_mod(&f, 0).err(), Some(code), "{f:?}");
    }
    assert_eq!(bare.tables[0].len(), 0);
    // A group's bucket is compiled through the same list.
    let group = ofp::group::GroupMod {
        command: ofp::group::command::ADD,
        group_type: ofp::group::group_type::ALL,
        group_id: 1,
        buckets: vec![ofp::group::Bucket {
            weight: 0,
            watch_port: ofp::port::port_no::ANY,
            watch_group: ofp::group::group_id::ANY,
            actions: vec![set_state(1, 0)],
        }],
    };
    assert_eq!(
        bare.group_mod(&group, 0).err(),
        Some(ErrorCode::BadAction(
            ofp::error::BadActionCode::BadExperimenter
        ))
    );

    // Id 42 is nobody's, BEBA's pipeline or not.
    let mut p = beba_pipeline();
    let other = OxmField::Experimenter {
        field: 1,
        has_mask: false,
        experimenter: 42,
        payload: vec![0; 4],
    };
    let act = Action::Experimenter {
        experimenter: 42,
        data: vec![0; 8],
    };
    let inst = Instruction::Experimenter {
        experimenter: 42,
        data: vec![0; 8],
    };
    for (f, code) in [
        (
            fm(cmd::ADD, 0, 1, vec![other], vec![]),
            ErrorCode::BadMatch(BadMatchCode::BadField),
        ),
        (
            fm(
                cmd::ADD,
                0,
                1,
                vec![],
                vec![Instruction::ApplyActions(vec![act])],
            ),
            ErrorCode::BadAction(ofp::error::BadActionCode::BadExperimenter),
        ),
        (
            fm(cmd::ADD, 0, 1, vec![], vec![inst]),
            ErrorCode::BadInstruction(ofp::error::BadInstructionCode::UnsupInst),
        ),
    ] {
        assert_eq!(p.flow_mod(&f, 0).err(), Some(code), "{f:?}");
    }
    // A stateless pipeline keeps the per-table way.
    assert!(!p.ext_in_use());

    // Registered: the same flow-mods are taken and run on the packet.
    let mut p = knock_table(beba_pipeline());
    for (f, _) in experimenter_flow_mods() {
        p.flow_mod(&f, 0).expect("BEBA's flow-mod");
    }
    let template = udp(77, 4242);
    beba_state(&p)
        .apply_pkttmp_mod(&ofp::beba::PktTmpMod::Add {
            pkttmp_id: 5,
            data: template,
        })
        .expect("template");
    assert!(send(&mut p, udp(1, 22), SEC).is_empty(), "closed");
    assert!(send(&mut p, udp(1, 10), SEC).is_empty(), "the knock");
    assert_eq!(send(&mut p, udp(1, 22), SEC + 1000), vec![2], "open");
    assert_eq!(send(&mut p, udp(1, 9), SEC + 2000), vec![2], "generated");
}

#[test]
fn global_state_is_matched_and_written() {
    let mut p = beba_pipeline();
    p.ports.insert(1, PortInfo::up());
    p.ports.insert(2, PortInfo::up());
    let set_g = BebaAction::SetGlobalState { value: 1, mask: 1 }.to_action();
    let mut m = udp_dst(7);
    m.push(BebaField::GlobalState(1, Some(1)).to_oxm());
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            5,
            m,
            vec![Instruction::ApplyActions(vec![crate::tests::out(2)])],
        ),
        0,
    )
    .expect("flow mod");
    p.flow_mod(
        &fm(
            cmd::ADD,
            0,
            1,
            udp_dst(8),
            vec![Instruction::ApplyActions(vec![set_g])],
        ),
        0,
    )
    .expect("flow mod");
    assert!(send(&mut p, udp(1, 7), SEC).is_empty());
    assert!(send(&mut p, udp(1, 8), SEC).is_empty());
    assert_eq!(beba_state(&p).global_state(), 1);
    assert_eq!(send(&mut p, udp(1, 7), SEC), vec![2]);
}

#[derive(Default)]
struct Frames(Vec<(u32, Vec<u8>)>, usize);

impl Output for Frames {
    fn port(&mut self, port: u32, data: &[u8], _queue: Option<u32>) {
        self.0.push((port, data.to_vec()));
    }
    fn packet_in(&mut self, _ev: PacketInEvent<'_>) {
        self.1 += 1;
    }
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {}
}

#[test]
fn in_switch_packet_generation_emits_the_template() {
    use ofp::beba::{InSwitchPktGen, PktTmpMod};
    let mut p = beba_pipeline();
    p.ports.insert(1, PortInfo::up());
    p.ports.insert(2, PortInfo::up());
    let template = udp(77, 4242);
    beba_state(&p)
        .apply_pkttmp_mod(&PktTmpMod::Add {
            pkttmp_id: 5,
            data: template.clone(),
        })
        .expect("template");
    let gen = |id| {
        InSwitchPktGen {
            pkttmp_id: id,
            actions: vec![
                crate::tests::out(2),
                crate::tests::out(ofp::port::port_no::CONTROLLER),
            ],
        }
        .to_instruction()
    };
    p.flow_mod(&fm(cmd::ADD, 0, 5, udp_dst(9), vec![gen(5)]), 0)
        .expect("flow mod");
    p.flow_mod(&fm(cmd::ADD, 0, 5, udp_dst(8), vec![gen(6)]), 0)
        .expect("flow mod");
    let mut out = Frames::default();
    let mut buf = PacketBuf::from_slice(&udp(1, 9));
    p.process(&mut buf, 1, SEC, &mut out).expect("parse");
    assert_eq!(out.0, vec![(2, template)], "the template, to port 2");
    assert_eq!(out.1, 0, "never a packet-in");
    // An unknown template generates nothing.
    let mut out = Frames::default();
    let mut buf = PacketBuf::from_slice(&udp(1, 8));
    p.process(&mut buf, 1, SEC, &mut out).expect("parse");
    assert!(out.0.is_empty());
    // Actions to a port that does not exist are refused.
    let bad = InSwitchPktGen {
        pkttmp_id: 5,
        actions: vec![crate::tests::out(9)],
    }
    .to_instruction();
    assert!(p
        .flow_mod(&fm(cmd::ADD, 0, 5, udp_dst(7), vec![bad]), 0)
        .is_err());
}

/// A bad BEBA action or instruction in a flow-mod is refused with the
/// BEBA switch's experimenter code (type 0xffff, experimenter 0xBEBABEBA),
/// as beba-ctrl's error test (cases 20, 28, 29, 30) expects.
#[test]
fn bad_beba_actions_and_instructions_get_beba_codes() {
    use ofp::beba::{BebaErrorCode, BEBA_EXPERIMENTER};
    let mut p = knock_pipeline();
    // `act_type` then the body, padded to the 8-byte action boundary.
    let beba_action = |act_type: u32, body: &[u8]| {
        let mut data = act_type.to_be_bytes().to_vec();
        data.extend_from_slice(&[0; 4]);
        data.extend_from_slice(body);
        data.resize(data.len().div_ceil(8) * 8, 0);
        Action::Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            data,
        }
    };
    let beyond = u8::try_from(p.tables.len()).expect("fewer than 256 tables");
    let mut refused = |i: Instruction| {
        p.flow_mod(&fm(cmd::ADD, 0, 100, udp_dst(7), vec![i]), 0)
            .err()
    };
    let apply = |a: Action| Instruction::ApplyActions(vec![a]);
    let beba = |c: BebaErrorCode| Some(c.code());
    // 20: an unknown action type.
    assert_eq!(
        refused(apply(beba_action(10, &[0]))),
        beba(BebaErrorCode::BadExpAction)
    );
    // 28, 29: SET_STATE and SET_GLOBAL_STATE too short.
    assert_eq!(
        refused(apply(beba_action(0, &[0]))),
        beba(BebaErrorCode::BadExpLen)
    );
    assert_eq!(
        refused(apply(beba_action(1, &[]))),
        beba(BebaErrorCode::BadExpLen)
    );
    // SET_STATE on a table the pipeline does not have.
    let far = BebaAction::SetState(SetState {
        table_id: beyond,
        ..SetState::default()
    });
    assert_eq!(
        refused(apply(far.to_action())),
        beba(BebaErrorCode::BadTableId)
    );
    // 30: an unknown instruction type.
    let mut data = 56u32.to_be_bytes().to_vec();
    data.extend_from_slice(&[0; 12]);
    assert_eq!(
        refused(Instruction::Experimenter {
            experimenter: BEBA_EXPERIMENTER,
            data,
        }),
        beba(BebaErrorCode::BadExpInstruction)
    );
    // A standard problem stays a standard error.
    assert_eq!(
        refused(Instruction::GotoTable(0)),
        Some(ErrorCode::BadInstruction(
            ofp::error::BadInstructionCode::BadTableId
        ))
    );
    // beba-ctrl's case 35: a masked `state` with value bits outside the
    // mask (value 1, mask 0).
    let mut payload = 1u32.to_be_bytes().to_vec();
    payload.extend_from_slice(&[0; 4]);
    let bad_state = OxmField::Experimenter {
        field: 1,
        has_mask: true,
        experimenter: BEBA_EXPERIMENTER,
        payload,
    };
    let mut m = udp_dst(7);
    m.push(bad_state);
    assert_eq!(
        p.flow_mod(&fm(cmd::ADD, 0, 100, m, vec![]), 0).err(),
        beba(BebaErrorCode::BadMatchWildcard)
    );
    // Nothing was added.
    assert_eq!(p.tables[0].len(), 3);
    // The code's wire form: OFPET_EXPERIMENTER with the BEBA code.
    assert_eq!(
        BebaErrorCode::BadExpLen.code().type_code(),
        (ofp::error::error_type::EXPERIMENTER, 7)
    );
}

/// `tcp_flags` (BEBA's OXM basic field 40) matches the TCP flags: an
/// entry for SYN without ACK takes a connection's first segment only.
#[test]
fn tcp_flags_syn_without_ack_is_matched() {
    let mut p = beba_pipeline();
    p.ports.insert(1, PortInfo::up());
    p.ports.insert(2, PortInfo::up());
    p.ports.insert(3, PortInfo::up());
    let tcp = |m: Vec<OxmField>| {
        let mut v = vec![OxmField::EthType(0x0800), OxmField::IpProto(6)];
        v.extend(m);
        v
    };
    for f in [
        fm(
            cmd::ADD,
            0,
            20,
            tcp(vec![OxmField::TcpFlags(0x002, Some(0x012))]),
            vec![Instruction::ApplyActions(vec![crate::tests::out(2)])],
        ),
        fm(
            cmd::ADD,
            0,
            10,
            tcp(vec![]),
            vec![Instruction::ApplyActions(vec![crate::tests::out(3)])],
        ),
    ] {
        p.flow_mod(&f, 0).expect("flow mod");
    }
    // Without ip_proto=6 the field's prerequisite is not met.
    assert_eq!(
        p.flow_mod(
            &fm(cmd::ADD, 0, 30, vec![OxmField::TcpFlags(2, None)], vec![]),
            0
        )
        .err(),
        Some(ErrorCode::BadMatch(BadMatchCode::BadPrereq))
    );
    // Ethernet / IPv4 / TCP 1000 -> 80 with `flags` (9 bits, NS..FIN).
    let segment = |flags: u16| {
        let mut f = vec![
            0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0,
            0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let ck = packet::checksum::checksum(0, &f[14..34]);
        f[24..26].copy_from_slice(&ck.to_be_bytes());
        f.extend_from_slice(&1000u16.to_be_bytes());
        f.extend_from_slice(&80u16.to_be_bytes());
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&(0x5000 | flags).to_be_bytes());
        f.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        f
    };
    assert_eq!(send(&mut p, segment(0x002), 0), [2], "SYN");
    assert_eq!(send(&mut p, segment(0x102), 0), [2], "SYN with NS");
    assert_eq!(send(&mut p, segment(0x012), 0), [3], "SYN+ACK");
    assert_eq!(send(&mut p, segment(0x010), 0), [3], "ACK");
}
