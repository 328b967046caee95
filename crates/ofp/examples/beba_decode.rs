//! `beba_decode` — print the BEBA content of OpenFlow 1.3 messages given as
//! hex, one message per argument: one line per message with the decoded
//! BEBA values (`Debug` form), or the refusal the switch answers with.
//!
//! ```sh
//! cargo run -q -p ofp --example beba_decode -- 0404001abebabeba...
//! ```
//!
//! Messages: experimenter messages, experimenter multipart requests and
//! replies, BEBA errors, and flow mods (their BEBA match fields, actions
//! and instructions, space separated).

use ofp::beba::{
    BebaAction, BebaErrorCode, BebaField, BebaMessage, BebaMultipartReply, BebaMultipartRequest,
    InSwitchPktGen,
};
use ofp::instruction::Instruction;
use ofp::message::Message;
use ofp::multipart::{MultipartReplyBody, MultipartRequestBody};
use ofp::OfpMessage;
use std::fmt::Debug;

fn show<T: Debug, E: Debug>(r: Option<Result<T, E>>) -> String {
    match r {
        None => "not BEBA".to_owned(),
        Some(Ok(v)) => format!("{v:?}"),
        Some(Err(e)) => format!("refused: {e:?}"),
    }
}

fn line(hex_text: &str) -> String {
    let Ok(bytes) = hex::decode(hex_text.trim()) else {
        return "not hex".to_owned();
    };
    let m = match OfpMessage::decode(&bytes) {
        Ok(m) => m,
        Err(e) => return format!("refused: {e}"),
    };
    match &m.body {
        Message::Experimenter(e) => show(BebaMessage::from_experimenter(e)),
        Message::MultipartRequest(mp) => match &mp.body {
            MultipartRequestBody::Experimenter(e) => {
                show(BebaMultipartRequest::from_experimenter(e))
            }
            _ => "not BEBA".to_owned(),
        },
        Message::MultipartReply(mp) => match &mp.body {
            MultipartReplyBody::Experimenter(e) => show(BebaMultipartReply::from_experimenter(e)),
            _ => "not BEBA".to_owned(),
        },
        Message::Error(e) => format!("{:?}", BebaErrorCode::from_error_msg(e)),
        Message::FlowMod(fm) => {
            let mut parts: Vec<String> = fm
                .match_
                .fields
                .iter()
                .filter_map(|f| BebaField::from_oxm(f).map(|r| show(Some(r))))
                .collect();
            for i in &fm.instructions {
                match i {
                    Instruction::ApplyActions(list) | Instruction::WriteActions(list) => parts
                        .extend(
                            list.iter()
                                .filter_map(|a| BebaAction::from_action(a).map(|r| show(Some(r)))),
                        ),
                    Instruction::Experimenter { .. } => {
                        parts.push(show(InSwitchPktGen::from_instruction(i)))
                    }
                    _ => {}
                }
            }
            parts.join(" ")
        }
        _ => "not BEBA".to_owned(),
    }
}

fn main() {
    for a in std::env::args().skip(1) {
        println!("{}", line(&a));
    }
}
