//! BEBA refusals inside a flow-mod: an OFPT_ERROR of type EXPERIMENTER
//! with the BEBA switch's code and the whole flow-mod as data, as
//! beba-ctrl's error test expects; a standard problem in the same
//! flow-mod keeps its standard error (the first 64 bytes).

use super::*;
use ofp::beba::{BebaErrorCode, BEBA_EXPERIMENTER};
use ofp::error::ErrorMsg;

/// The single reply to `m` (xid 7), and the request's bytes.
fn refuse(r: &mut Rig, m: FlowMod) -> (ErrorMsg, Vec<u8>) {
    let msg = OfpMessage::new(7, Message::FlowMod(m));
    let raw = msg.encode();
    match r.dp.handle_message(msg, &raw).as_slice() {
        [OfpMessage {
            xid: 7,
            body: Message::Error(e),
            ..
        }] => (e.clone(), raw),
        other => panic!("expected one error, got {other:?}"),
    }
}

/// A flow-mod (more than 64 bytes) whose one action is the BEBA action
/// `act_type` with `body`.
fn with_beba_action(act_type: u32, body: &[u8]) -> FlowMod {
    let mut data = act_type.to_be_bytes().to_vec();
    data.extend_from_slice(&[0; 4]);
    data.extend_from_slice(body);
    data.resize(data.len().div_ceil(8) * 8, 0);
    let ip = vec![
        OxmField::InPort(5),
        OxmField::EthType(0x0800),
        OxmField::IpProto(1),
    ];
    fm(
        cmd::ADD,
        100,
        ip,
        vec![
            out(1),
            Action::Experimenter {
                experimenter: BEBA_EXPERIMENTER,
                data,
            },
        ],
    )
}

#[test]
fn bad_beba_actions_and_instructions_get_beba_errors_with_the_whole_message() {
    let mut r = rig(2, 1);
    let beba = |code: BebaErrorCode, raw: &[u8]| ErrorMsg::Experimenter {
        exp_type: code as u16,
        experimenter: BEBA_EXPERIMENTER,
        data: raw.to_vec(),
    };
    // An unknown action type (beba-ctrl's case 20).
    let (e, raw) = refuse(&mut r, with_beba_action(10, &[0]));
    assert!(raw.len() > 64);
    assert_eq!(e, beba(BebaErrorCode::BadExpAction, &raw));
    // SET_STATE too short (case 28).
    let (e, raw) = refuse(&mut r, with_beba_action(0, &[0]));
    assert_eq!(e, beba(BebaErrorCode::BadExpLen, &raw));
    // On the wire: type 0xffff, exp_type 7, experimenter, the message.
    let mut body = Vec::new();
    e.encode(&mut body);
    assert_eq!(body[..8], [0xff, 0xff, 0, 7, 0xbe, 0xba, 0xbe, 0xba]);
    assert_eq!(body[8..], raw[..]);
    // An unknown BEBA instruction type (case 30).
    let mut m = fm(cmd::ADD, 100, vec![], vec![]);
    let mut data = 56u32.to_be_bytes().to_vec();
    data.extend_from_slice(&[0; 12]);
    m.instructions = vec![Instruction::Experimenter {
        experimenter: BEBA_EXPERIMENTER,
        data,
    }];
    let (e, raw) = refuse(&mut r, m);
    assert_eq!(e, beba(BebaErrorCode::BadExpInstruction, &raw));
    // A standard problem: the standard error and 64 bytes.
    let mut m = with_beba_action(1, &[0; 8]);
    m.instructions.push(Instruction::GotoTable(0));
    let (e, raw) = refuse(&mut r, m);
    assert_eq!(
        e,
        ErrorMsg::from_request(
            ErrorCode::BadInstruction(ofp::error::BadInstructionCode::BadTableId),
            &raw
        )
    );
    assert!(matches!(e, ErrorMsg::Standard { ref data, .. } if data.len() == 64));
    // Nothing was added; the datapath goes on.
    r.barrier();
    assert!(r.flow_stats(all_flows()).is_empty());
}
