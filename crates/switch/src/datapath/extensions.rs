//! The switch's experimenter extensions, in one table.
//!
//! [`EXTENSIONS`] is the one list of extensions the switch has: adding
//! one is a row here plus its module(s) (docs/ARCHITECTURE.md, "Add an
//! experimenter extension"). A row holds both sides of an extension:
//!
//! - **Messages and multiparts.** Every OFPT_EXPERIMENTER message and
//!   every OFPMP_EXPERIMENTER request the switch understands is claimed
//!   by exactly one row: the row says which bodies it takes (an
//!   experimenter id, and for an id shared by several extensions the
//!   types it owns) and the `Datapath` method that answers them.
//!   `Datapath::handle` and the multipart dispatch in `requests` consult
//!   this table and nothing else. A body no row claims gets the spec's
//!   BAD_EXPERIMENTER (no extension answers that kind of body under its
//!   id) or BAD_EXP_TYPE (one does, but not that type). The row also says
//!   which of its bodies change the switch's state, which a slave
//!   controller may not send (`crate::channel::role::forbidden_to_slave`).
//! - **Data-path side** (`flow`, optional): the extension's experimenter
//!   match fields, actions and instructions, as
//!   `pipeline::ext::api::Extension` entry points, and the constructor of
//!   its executor hook (`pipeline::ext::api::Hook`: the state its packets
//!   read and write, and what the executor asks of it per packet). The
//!   switch builds its pipeline with the `flow` parts of the rows
//!   ([`flow_extensions`]), which makes one hook per row; the pipeline
//!   looks the entry points up by experimenter id when it compiles a
//!   flow-mod, group-mod or packet-out, and calls a hook by index per
//!   packet. An experimenter field, action or instruction no row's `flow`
//!   takes gets BAD_MATCH/BAD_FIELD, BAD_ACTION/BAD_EXPERIMENTER or
//!   BAD_INSTRUCTION/UNSUP_INST.
//!
//! Order matters only where two rows could claim the same body; none do
//! (the tests check every row's claims against the others'), so the table
//! reads as a list.

use super::Datapath;
use crate::channel::hub::ConnInfo;
use ofp::experimenter::{exp_type, OXFLOW_EXPERIMENTER};
use ofp::message::Experimenter;
use ofp::multipart::ExperimenterMultipart;
use ofp::OfpMessage;

/// Answers an OFPT_EXPERIMENTER message: (datapath, connection, xid,
/// body, raw message) -> replies.
pub(crate) type MessageFn =
    fn(&mut Datapath, &ConnInfo, u32, &Experimenter, &[u8]) -> Vec<OfpMessage>;

/// Answers an OFPMP_EXPERIMENTER request: (datapath, xid, body, raw
/// message) -> replies (multipart replies or an error).
pub(crate) type MultipartFn =
    fn(&mut Datapath, u32, &ExperimenterMultipart, &[u8]) -> Vec<OfpMessage>;

/// One extension's control-side entry points (module comment).
pub(crate) struct Extension {
    /// What it is, for logs and docs.
    pub name: &'static str,
    /// Its experimenter id.
    pub experimenter: u32,
    /// The experimenter types it owns under that id; `None`: all of them.
    pub types: Option<std::ops::RangeInclusive<u32>>,
    pub message: Option<MessageFn>,
    pub multipart: Option<MultipartFn>,
    /// Whether a body it claims, of type `exp_type`, a multipart request
    /// if `multipart`, else a message, changes the switch's state: a
    /// slave may not send it (spec §6.3.6, BAD_REQUEST/IS_SLAVE). `None`:
    /// none does.
    pub writes: Option<fn(exp_type: u32, multipart: bool) -> bool>,
    /// Its data-path side (module comment), under the same experimenter
    /// id; `None`: it has no match field, action or instruction.
    pub flow: Option<&'static pipeline::ext::api::Extension>,
}

impl Extension {
    fn claims(&self, experimenter: u32, exp_type: u32) -> bool {
        self.experimenter == experimenter
            && self.types.as_ref().is_none_or(|t| t.contains(&exp_type))
    }
}

/// Every extension the switch speaks (module comment).
pub(crate) const EXTENSIONS: &[Extension] = &[
    Extension {
        name: "ONF bundles (OpenFlow 1.3 extension 230)",
        experimenter: ofp::bundle::ONF_EXPERIMENTER,
        types: Some(ofp::bundle::exp_type::CONTROL..=ofp::bundle::exp_type::ADD_MESSAGE),
        message: Some(|dp, conn, xid, e, raw| {
            let out = dp.bundle_message(conn, xid, e, raw);
            // A commit reply acknowledges a written state.
            dp.save_if_dirty();
            out
        }),
        multipart: None,
        writes: None,
        flow: None,
    },
    Extension {
        name: "FlexForward forwarding modes",
        experimenter: ofp::flexforward::FLEX_EXPERIMENTER,
        types: None,
        message: Some(|dp, _, xid, e, raw| dp.flex_message(xid, e, raw)),
        multipart: None,
        // Every message but the one that reads the forwarding mode.
        writes: Some(|t, multipart| !multipart && t != ofp::flexforward::exp_type::GET_FWMODE),
        flow: None,
    },
    Extension {
        name: "BEBA (OpenState, InSP)",
        experimenter: ofp::beba::BEBA_EXPERIMENTER,
        types: None,
        message: Some(|dp, conn, xid, e, raw| {
            // Its flow-mods are acknowledged from now on (`beba`).
            dp.beba_conns.insert(conn.id);
            dp.beba_message(xid, e, raw)
        }),
        multipart: Some(|dp, xid, e, raw| dp.beba_multipart(xid, e, raw)),
        writes: Some(super::beba::beba_writes),
        flow: Some(&pipeline::ext::beba::EXTENSION),
    },
    Extension {
        name: "oxflow statistics (workers, data-path graph)",
        experimenter: OXFLOW_EXPERIMENTER,
        types: Some(exp_type::WORKER_STATS..=exp_type::DATAPATH_GRAPH),
        message: None,
        multipart: Some(|dp, xid, e, raw| dp.oxflow_stats(xid, e, raw)),
        writes: None,
        flow: None,
    },
    Extension {
        name: "oxflow data-path graph changes",
        experimenter: OXFLOW_EXPERIMENTER,
        types: Some(exp_type::GRAPH_CHANGE..=exp_type::GRAPH_CHANGE),
        message: None,
        multipart: Some(|dp, xid, e, raw| dp.graph_change(xid, e, raw)),
        writes: None,
        flow: None,
    },
    Extension {
        name: "oxflow port and queue administration",
        experimenter: OXFLOW_EXPERIMENTER,
        types: Some(ofp::port_admin::exp_type::ADD_PORT..=ofp::port_admin::exp_type::DEL_QUEUE),
        message: None,
        multipart: Some(|dp, xid, e, raw| dp.port_admin(xid, e, raw)),
        writes: None,
        flow: None,
    },
];

/// The data-path sides of the rows (module comment): what the switch's
/// pipeline is built with.
pub(crate) fn flow_extensions() -> pipeline::ext::registry::Extensions {
    EXTENSIONS.iter().filter_map(|x| x.flow).collect()
}

/// The row that claims a body (`experimenter`, `exp_type`), if any;
/// `what` names the kind of body for the trace.
fn claimant(experimenter: u32, exp_type: u32, what: &str) -> Option<&'static Extension> {
    let x = EXTENSIONS
        .iter()
        .find(|x| x.claims(experimenter, exp_type))?;
    tracing::trace!(extension = x.name, exp_type, what, "experimenter body");
    Some(x)
}

/// Whether an experimenter body (a multipart request if `multipart`)
/// changes the switch's state, by the row that claims it (`writes`); a
/// body no row claims changes nothing (it is refused).
pub(crate) fn writes(experimenter: u32, exp_type: u32, multipart: bool) -> bool {
    EXTENSIONS
        .iter()
        .find(|x| x.claims(experimenter, exp_type))
        .and_then(|x| x.writes)
        .is_some_and(|w| w(exp_type, multipart))
}

/// The handler of an OFPT_EXPERIMENTER body, if an extension takes it.
pub(crate) fn message_handler(e: &Experimenter) -> Option<MessageFn> {
    claimant(e.experimenter, e.exp_type, "message")?.message
}

/// The handler of an OFPMP_EXPERIMENTER request, if an extension takes it.
pub(crate) fn multipart_handler(e: &ExperimenterMultipart) -> Option<MultipartFn> {
    claimant(e.experimenter, e.exp_type, "multipart")?.multipart
}

/// Why no extension took a body: an id under which no extension answers
/// this kind of body (messages if `message`, else multipart requests), or
/// a type the id's extensions do not define.
pub(crate) fn refusal(experimenter: u32, message: bool) -> ofp::error::BadRequestCode {
    use ofp::error::BadRequestCode;
    let answers = |x: &Extension| {
        if message {
            x.message.is_some()
        } else {
            x.multipart.is_some()
        }
    };
    if EXTENSIONS
        .iter()
        .any(|x| x.experimenter == experimenter && answers(x))
    {
        BadRequestCode::BadExpType
    } else {
        BadRequestCode::BadExperimenter
    }
}

#[cfg(test)]
mod tests {
    use super::EXTENSIONS;

    /// No body is claimed by two rows (module comment).
    #[test]
    fn claims_do_not_overlap() {
        for (i, a) in EXTENSIONS.iter().enumerate() {
            for b in EXTENSIONS.iter().skip(i + 1) {
                if a.experimenter != b.experimenter {
                    continue;
                }
                let (Some(ta), Some(tb)) = (&a.types, &b.types) else {
                    panic!("{} and {} both claim every type", a.name, b.name);
                };
                assert!(
                    ta.end() < tb.start() || tb.end() < ta.start(),
                    "{} and {} overlap",
                    a.name,
                    b.name
                );
            }
        }
    }

    /// Every row answers something.
    #[test]
    fn every_row_has_a_handler() {
        for x in EXTENSIONS {
            assert!(
                x.message.is_some() || x.multipart.is_some() || x.flow.is_some(),
                "{}",
                x.name
            );
        }
    }

    /// A row's flow-mod side is under the row's own experimenter id, and
    /// at most one row has one per id (the pipeline takes the first).
    #[test]
    fn flow_parts_are_under_their_rows_id_and_one_per_id() {
        for (i, a) in EXTENSIONS.iter().enumerate() {
            let Some(f) = a.flow else { continue };
            assert_eq!(f.experimenter, a.experimenter, "{}", a.name);
            for b in EXTENSIONS.iter().skip(i + 1) {
                assert!(
                    b.flow.is_none() || b.experimenter != a.experimenter,
                    "{} and {} both have a flow-mod side",
                    a.name,
                    b.name
                );
            }
        }
    }

    /// The switch's pipeline knows BEBA's flow-mod contents through its
    /// row, and nothing else's.
    #[test]
    fn the_pipeline_gets_the_rows_flow_parts() {
        let exts = super::flow_extensions();
        let ids: Vec<u32> = exts.iter().map(|e| e.experimenter).collect();
        assert_eq!(ids, vec![ofp::beba::BEBA_EXPERIMENTER]);
    }
}
