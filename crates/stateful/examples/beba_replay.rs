//! `beba_replay` — decode OpenFlow 1.3 messages given as hex (one per
//! argument, in the order a controller sent them) and replay their BEBA
//! content through the `stateful` semantics of a 64-table datapath, the
//! BEBA switch's pipeline size. One line per message:
//!
//! - `state_mod OK <command>` / `pkttmp_mod OK`, or `... ERROR <BEBA code>`
//!   with the error the switch would answer;
//! - `flow_mod table=T beba=<N>` (N: BEBA match fields, actions and
//!   instructions), `group_mod beba=<N>`, or the message type for others;
//! - `refused: <why>` for anything the codec or the semantics refuse
//!   (including a BEBA action naming a table beyond the pipeline).
//!
//! Exit status 1 if any line is an ERROR or a refusal.
//!
//! ```sh
//! cargo run -q -p stateful --example beba_replay -- 040400145b7c5899bebabeba0000000000000001
//! ```

use ofp::action::Action;
use ofp::beba::{BebaAction, BebaField, BebaMessage, InSwitchPktGen};
use ofp::instruction::Instruction;
use ofp::message::Message;
use ofp::OfpMessage;
use stateful::Stateful;

/// The BEBA actions of `list` checked against the datapath: their count,
/// or why one is refused.
fn actions(dp: &Stateful, list: &[Action]) -> Result<usize, String> {
    let mut n = 0;
    for a in list {
        match BebaAction::from_action(a) {
            None => {}
            Some(Err(e)) => return Err(format!("{e}")),
            Some(Ok(b)) => {
                dp.check_action(&b).map_err(|c| format!("{c:?}"))?;
                n += 1;
            }
        }
    }
    Ok(n)
}

fn line(dp: &Stateful, hex_text: &str) -> Result<String, String> {
    let bytes = (0..hex_text.len())
        .step_by(2)
        .map(|i| {
            hex_text
                .get(i..i + 2)
                .and_then(|b| u8::from_str_radix(b, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or("not hex")?;
    let m = OfpMessage::decode(&bytes).map_err(|e| format!("{e}"))?;
    Ok(match &m.body {
        Message::Experimenter(e) => match BebaMessage::from_experimenter(e) {
            None => "experimenter (not BEBA)".into(),
            Some(Err(e)) => return Err(format!("{e}")),
            Some(Ok(BebaMessage::StateMod(sm))) => match dp.apply_state_mod(&sm, 0) {
                Ok(_) => format!("state_mod OK {sm:?}"),
                Err(c) => format!("state_mod ERROR {c:?} {sm:?}"),
            },
            Some(Ok(BebaMessage::PktTmpMod(p))) => match dp.apply_pkttmp_mod(&p) {
                Ok(()) => "pkttmp_mod OK".into(),
                Err(c) => format!("pkttmp_mod ERROR {c:?}"),
            },
            Some(Ok(other)) => format!("{other:?}"),
        },
        Message::FlowMod(fm) => {
            let mut n = 0;
            for f in &fm.match_.fields {
                if let Some(r) = BebaField::from_oxm(f) {
                    r.map_err(|e| format!("{e}"))?;
                    n += 1;
                }
            }
            for i in &fm.instructions {
                match i {
                    Instruction::ApplyActions(l) | Instruction::WriteActions(l) => {
                        n += actions(dp, l)?
                    }
                    Instruction::Experimenter { .. } => {
                        if let Some(r) = InSwitchPktGen::from_instruction(i) {
                            let g = r.map_err(|e| format!("{e}"))?;
                            n += 1 + actions(dp, &g.actions)?;
                        }
                    }
                    _ => {}
                }
            }
            format!("flow_mod table={} beba={n}", fm.table_id)
        }
        Message::GroupMod(g) => {
            let mut n = 0;
            for b in &g.buckets {
                n += actions(dp, &b.actions)?;
            }
            format!("group_mod beba={n}")
        }
        Message::MeterMod(_) => "meter_mod".into(),
        other => format!("{other:?}").chars().take(40).collect(),
    })
}

fn main() {
    let dp = Stateful::new(64, 1024);
    let mut failed = false;
    for a in std::env::args().skip(1) {
        let l = line(&dp, &a).unwrap_or_else(|e| format!("refused: {e}"));
        failed |= l.starts_with("refused") || l.contains(" ERROR ");
        println!("{l}");
    }
    std::process::exit(i32::from(failed));
}
