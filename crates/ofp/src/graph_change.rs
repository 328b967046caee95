//! oxflow's run-time change of the data-path graph (`exp_type`
//! [`crate::experimenter::exp_type::GRAPH_CHANGE`], `oxflow ctl
//! graph-change / tc-set / tc-attach`, docs/graph.md): module graph
//! transactions and traffic-class changes for a switch whose workers run
//! a configured graph.
//!
//! The request is an experimenter multipart whose data is the change set
//! as UTF-8 TOML text (the `graph` crate's `change` format: `[[module]]`,
//! `[[remove]]`, `[[connect]]`, `[[disconnect]]`, `[[attach]]`,
//! `[[detach]]`, `[[set]]`). The reply, sent once every worker applied
//! the change, has the same type and no data. A change the switch refuses
//! (bad text, unknown module, dangling gate, ..., or a switch without a
//! graph) is answered by an OFPET_EXPERIMENTER error with this `exp_type`,
//! oxflow's experimenter id and the reason as UTF-8 text
//! ([`crate::port_admin::refusal`]); nothing changed on any worker.

use crate::error::{BadRequestCode, DecodeError, ErrorCode};
use crate::experimenter::{exp_type, OXFLOW_EXPERIMENTER};
use crate::multipart::ExperimenterMultipart;

/// A change set (module comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphChange {
    pub text: String,
}

impl GraphChange {
    pub fn request(&self) -> ExperimenterMultipart {
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::GRAPH_CHANGE,
            data: self.text.as_bytes().to_vec(),
        }
    }

    /// The (empty) reply.
    pub fn reply() -> ExperimenterMultipart {
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::GRAPH_CHANGE,
            data: Vec::new(),
        }
    }

    /// Decodes a request body: `None` if it is not one; text that is not
    /// UTF-8 is BAD_REQUEST/BAD_LEN.
    pub fn parse(body: &ExperimenterMultipart) -> Option<Result<GraphChange, DecodeError>> {
        if body.experimenter != OXFLOW_EXPERIMENTER || body.exp_type != exp_type::GRAPH_CHANGE {
            return None;
        }
        Some(
            String::from_utf8(body.data.clone())
                .map(|text| GraphChange { text })
                .map_err(|_| {
                    DecodeError::new(
                        ErrorCode::BadRequest(BadRequestCode::BadLen),
                        "graph change: text is not UTF-8",
                    )
                }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Message;
    use crate::multipart::{
        MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
    };
    use crate::OfpMessage;

    #[test]
    fn request_round_trips_through_the_wire() {
        let c = GraphChange {
            text: "[[remove]]\nname = \"m\"\n".into(),
        };
        let msg = OfpMessage::new(
            9,
            Message::MultipartRequest(MultipartRequest::new(MultipartRequestBody::Experimenter(
                c.request(),
            ))),
        );
        let bytes = msg.encode();
        let back = OfpMessage::decode(&bytes).unwrap();
        let Message::MultipartRequest(r) = back.body else {
            panic!("{back:?}")
        };
        let MultipartRequestBody::Experimenter(e) = r.body else {
            panic!()
        };
        // Vector: header 16 + experimenter 8, then the text.
        assert_eq!(&bytes[16..24], &[0, 0x6f, 0x78, 0x66, 0, 0, 0, 3]);
        assert_eq!(GraphChange::parse(&e), Some(Ok(c)));
        let reply = OfpMessage::new(
            9,
            Message::MultipartReply(MultipartReply::new(MultipartReplyBody::Experimenter(
                GraphChange::reply(),
            ))),
        );
        assert_eq!(OfpMessage::decode(&reply.encode()).unwrap(), reply);
    }

    #[test]
    fn other_bodies_and_bad_text() {
        let mut e = GraphChange {
            text: String::new(),
        }
        .request();
        e.exp_type = exp_type::DATAPATH_GRAPH;
        assert_eq!(GraphChange::parse(&e), None);
        e.exp_type = exp_type::GRAPH_CHANGE;
        e.data = vec![0xff, 0xfe];
        assert!(matches!(GraphChange::parse(&e), Some(Err(_))));
    }
}
