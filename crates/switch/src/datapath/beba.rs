//! BEBA / OpenState (issue 31) on the control thread: the experimenter
//! messages STATE_MOD and PKTTMP_MOD, and the BEBA experimenter multiparts
//! (state statistics in their four forms, global state statistics).
//!
//! The state lives in the pipeline's [`stateful::Stateful`], BEBA's
//! executor hook (`pipeline::ext::beba::state`), one object behind an
//! `Arc` that every worker's replica shares: a STATE_MOD is
//! applied here, directly, and the next packet on any worker sees it. No
//! operation goes to the workers, so a barrier after a state-mod covers it
//! like a flow-mod (the barrier reply follows the write).
//!
//! A refusal is an OFPT_ERROR of type EXPERIMENTER with the BEBA code the
//! BEBA switch sends (`ofp::beba::BebaErrorCode`, the whole request as
//! data), or the standard error BEBA uses (a bad match in a statistics
//! request); the connection stays up. Slaves may read (statistics) but
//! not write (`crate::channel::role::forbidden_to_slave`).
//!
//! Notifications, as the BEBA switch sends them (`docs/beba.md`):
//! - STATE_CHANGED: a SET_STATE action that changed a state queues an
//!   event in the workers (`stateful::notify`, no lock, no allocation, a
//!   full queue drops and counts); [`Datapath::take_state_changes`] turns
//!   them into messages with the other asynchronous events, which go to
//!   masters and equals (`crate::channel::async_config::wants`).
//! - FLOW_NOTIFICATION: on a connection that has sent a BEBA message
//!   (a BEBA controller), every flow-mod that succeeds is acknowledged,
//!   with its xid ([`Datapath::flow_notification`]); other connections
//!   (plain OpenFlow controllers, `ovs-ofctl`, which takes any message
//!   carrying a flow-mod's xid for its failure) get none.
//!
//! Times: the state stores count microseconds (the wire's timeouts are
//! microseconds) on the datapath's clock, `Datapath::now() / 1000`, the
//! same clock the workers' packets carry.

use super::Datapath;
use ofp::beba::{BebaDecodeError, BebaMessage, BebaMultipartReply, BebaMultipartRequest};
use ofp::error::ErrorMsg;
use ofp::message::Experimenter;
use ofp::multipart::{ExperimenterMultipart, Multipart, MultipartReplyBody, OFPMPF_REPLY_MORE};
use ofp::{Message, OfpMessage};

/// How many state-table slots one tick's sweep visits per table (see
/// `stateful::StateTable::sweep`): a 65536-flow table is swept in about
/// 1.5 s of ticks, in short steps.
const SWEEP_BUDGET: usize = 4096;

impl Datapath {
    /// The pipeline's BEBA state; `None` only for a pipeline built
    /// without BEBA's row (not the switch's).
    fn beba_state(&self) -> Option<std::sync::Arc<stateful::Stateful>> {
        pipeline::ext::beba::state(&self.pipeline)
    }

    /// The datapath clock in the state stores' unit (microseconds).
    pub(crate) fn now_us(&self) -> u64 {
        self.now() / 1000
    }

    /// An OFPT_EXPERIMENTER under BEBA's id: applied, or refused with the
    /// BEBA error.
    pub(crate) fn beba_message(
        &mut self,
        xid: u32,
        e: &Experimenter,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        let error = |m: ErrorMsg| vec![OfpMessage::new(xid, Message::Error(m))];
        let m = match BebaMessage::from_experimenter(e) {
            Some(Ok(m)) => m,
            Some(Err(err)) => {
                tracing::info!("beba message refused: {err}");
                return error(err.error_msg(raw));
            }
            None => return Vec::new(),
        };
        let now = self.now_us();
        let Some(st) = self.beba_state() else {
            return error(ErrorMsg::from_request(
                ofp::ErrorCode::BadRequest(ofp::error::BadRequestCode::BadExperimenter),
                raw,
            ));
        };
        let result = match &m {
            BebaMessage::StateMod(sm) => st.apply_state_mod(sm, now).map(|_| ()),
            BebaMessage::PktTmpMod(p) => st.apply_pkttmp_mod(p),
            // Switch-to-controller messages are not requests.
            BebaMessage::StateChanged(_) | BebaMessage::FlowNotification(_) => {
                Err(ofp::beba::BebaErrorCode::BadExpMessage)
            }
        };
        match result {
            Ok(()) => Vec::new(),
            Err(code) => {
                tracing::info!("beba message refused: {code:?}");
                error(code.error_msg(raw))
            }
        }
    }

    /// An OFPMP_EXPERIMENTER request under BEBA's id: its replies (state
    /// records split [`stateful::RECORDS_PER_REPLY`] to a reply, every
    /// part but the last with REPLY_MORE) or the error.
    pub(crate) fn beba_multipart(
        &mut self,
        xid: u32,
        e: &ExperimenterMultipart,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        let refuse =
            |err: BebaDecodeError| vec![OfpMessage::new(xid, Message::Error(err.error_msg(raw)))];
        let req = match BebaMultipartRequest::from_experimenter(e) {
            Some(Ok(r)) => r,
            Some(Err(err)) => return refuse(err),
            None => return Vec::new(),
        };
        let Some(st) = self.beba_state() else {
            let code = ofp::ErrorCode::BadRequest(ofp::error::BadRequestCode::BadExperimenter);
            let m = ErrorMsg::from_request(code, raw);
            return vec![OfpMessage::new(xid, Message::Error(m))];
        };
        let bodies: Vec<BebaMultipartReply> = match req {
            BebaMultipartRequest::GlobalStateStats => vec![BebaMultipartReply::GlobalStateStats {
                global_state: st.global_state(),
            }],
            BebaMultipartRequest::StateStats(r) => match st.state_stats(&r, self.now_us()) {
                Ok(entries) if entries.is_empty() => vec![BebaMultipartReply::StateStats {
                    kind: r.kind,
                    entries,
                }],
                Ok(entries) => entries
                    .chunks(stateful::RECORDS_PER_REPLY)
                    .map(|c| BebaMultipartReply::StateStats {
                        kind: r.kind,
                        entries: c.to_vec(),
                    })
                    .collect(),
                Err(refusal) => {
                    return refuse(BebaDecodeError {
                        refusal,
                        what: "beba state statistics",
                    })
                }
            },
        };
        let n = bodies.len();
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let mut m = Multipart::new(MultipartReplyBody::Experimenter(b.to_experimenter()));
                if i + 1 < n {
                    m.flags |= OFPMPF_REPLY_MORE;
                }
                OfpMessage::new(xid, Message::MultipartReply(m))
            })
            .collect()
    }

    /// Moves the queued STATE_CHANGED events to the pending asynchronous
    /// events (module comment).
    pub(crate) fn take_state_changes(&mut self) {
        let Some(st) = self.beba_state() else {
            return;
        };
        st.notifications().drain(|ev| {
            let m = BebaMessage::StateChanged(ev.to_message());
            self.pending
                .push(super::DpEvent::Experimenter(m.to_experimenter()));
        });
    }

    /// STATE_CHANGED events dropped because their queue was full.
    pub fn state_change_drops(&self) -> u64 {
        self.beba_state()
            .map_or(0, |st| st.notifications().dropped())
    }

    /// The FLOW_NOTIFICATION acknowledging flow-mod `msg` from connection
    /// `conn` if it succeeds (module comment): `None` for other messages
    /// and for connections that never sent a BEBA message. The
    /// instructions are listed by type, in the flow-mod's order.
    pub(crate) fn flow_notification(
        &self,
        conn: crate::channel::hub::ConnId,
        xid: u32,
        msg: &Message,
    ) -> Option<OfpMessage> {
        let Message::FlowMod(fm) = msg else {
            return None;
        };
        if !self.beba_conns.contains(&conn) {
            return None;
        }
        let n = ofp::beba::FlowNotification {
            table_id: u32::from(fm.table_id),
            ntf_type: u32::from(ofp::header::msg_type::FLOW_MOD),
            match_: fm.match_.clone(),
            instructions: fm
                .instructions
                .iter()
                .map(|i| u32::from(i.instruction_type()))
                .collect(),
        };
        Some(OfpMessage::new(
            xid,
            Message::Experimenter(BebaMessage::FlowNotification(n).to_experimenter()),
        ))
    }

    /// Periodic state-table upkeep: timeouts of flows no packet looks at,
    /// entries back in DEFAULT reclaimed (a bounded step per tick).
    pub(crate) fn sweep_states(&self) {
        let Some(st) = self.beba_state() else {
            return;
        };
        if st.any_stateful() {
            st.sweep(self.now_us(), SWEEP_BUDGET);
        }
    }
}

/// Whether a BEBA experimenter message (`multipart` false) or multipart
/// request of type `exp_type` writes state, so that a slave may not send
/// it (its row's `writes` in `super::extensions`): every STATE_MOD and
/// PKTTMP_MOD, and the state statistics that delete what they report.
pub(crate) fn beba_writes(exp_type: u32, multipart: bool) -> bool {
    !multipart || ofp::beba::StateStatsKind::from_exp_type(exp_type).is_some_and(|k| k.deletes())
}

#[cfg(test)]
mod tests {
    use super::super::{Clock, DpConfig};
    use super::*;
    use ofp::beba::{
        BebaErrorCode, Extractor, SetFlowState, StateMod, StateStatsKind, StateStatsRequest,
    };
    use ofp::multipart::MultipartRequestBody;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    const SEC: u64 = 1_000_000_000;
    /// OXM header of `ipv4_src`.
    const IPV4_SRC: u32 = 0x8000_1604;

    fn dp() -> (Datapath, Arc<AtomicU64>) {
        let clock = Arc::new(AtomicU64::new(SEC));
        let dp = Datapath::start(DpConfig::default(), Vec::new(), Clock::Fake(clock.clone()));
        (dp, clock)
    }

    /// Sends a STATE_MOD; the BEBA error code if refused.
    fn state_mod(dp: &mut Datapath, m: StateMod) -> Option<u16> {
        let msg = OfpMessage::new(
            7,
            Message::Experimenter(BebaMessage::StateMod(m).to_experimenter()),
        );
        let raw = msg.encode();
        let Message::Experimenter(e) = &msg.body else {
            unreachable!()
        };
        let out = dp.beba_message(7, e, &raw);
        match out.as_slice() {
            [] => None,
            [OfpMessage {
                body:
                    Message::Error(ErrorMsg::Experimenter {
                        exp_type,
                        experimenter,
                        data,
                    }),
                ..
            }] => {
                assert_eq!(*experimenter, ofp::beba::BEBA_EXPERIMENTER);
                assert_eq!(data, &raw, "the whole request as data");
                Some(*exp_type)
            }
            other => panic!("unexpected answer {other:?}"),
        }
    }

    fn stats(dp: &mut Datapath, kind: StateStatsKind, table_id: u8) -> Vec<OfpMessage> {
        let req = BebaMultipartRequest::StateStats(StateStatsRequest {
            kind,
            table_id,
            state: None,
            match_: ofp::oxm::Match::default(),
        });
        let msg = OfpMessage::new(
            9,
            Message::MultipartRequest(Multipart::new(MultipartRequestBody::Experimenter(
                req.to_experimenter(),
            ))),
        );
        let raw = msg.encode();
        dp.handle_message(msg, &raw)
    }

    fn records(out: &[OfpMessage]) -> Vec<ofp::beba::StateEntryStats> {
        out.iter()
            .flat_map(|m| match &m.body {
                Message::MultipartReply(r) => match &r.body {
                    MultipartReplyBody::Experimenter(e) => {
                        match BebaMultipartReply::from_experimenter(e) {
                            Some(Ok(BebaMultipartReply::StateStats { entries, .. })) => entries,
                            other => panic!("not state stats: {other:?}"),
                        }
                    }
                    other => panic!("not experimenter: {other:?}"),
                },
                other => panic!("not a reply: {other:?}"),
            })
            .collect()
    }

    fn configure(dp: &mut Datapath) {
        let ext = || Extractor {
            table_id: 0,
            bit: false,
            fields: vec![IPV4_SRC],
        };
        assert_eq!(
            state_mod(
                dp,
                StateMod::StatefulTableConfig {
                    table_id: 0,
                    stateful: true
                }
            ),
            None
        );
        assert_eq!(state_mod(dp, StateMod::SetLookupExtractor(ext())), None);
        assert_eq!(state_mod(dp, StateMod::SetUpdateExtractor(ext())), None);
    }

    fn set_flow(table_id: u8, key: Vec<u8>, state: u32) -> StateMod {
        StateMod::SetFlowState(SetFlowState {
            table_id,
            key,
            state,
            state_mask: u32::MAX,
            hard_rollback: 0,
            idle_rollback: 0,
            hard_timeout: 0,
            idle_timeout: 2_000_000,
        })
    }

    #[test]
    fn state_mods_apply_and_refusals_carry_beba_codes() {
        let (mut dp, clock) = dp();
        // Not stateful yet: SET_FLOW_STATE is refused, the table untouched.
        assert_eq!(
            state_mod(&mut dp, set_flow(0, vec![10, 0, 0, 1], 4)),
            Some(BebaErrorCode::SetFlowState as u16)
        );
        configure(&mut dp);
        assert_eq!(state_mod(&mut dp, set_flow(0, vec![10, 0, 0, 1], 4)), None);
        // Key of the wrong length, a table beyond the pipeline.
        assert_eq!(
            state_mod(&mut dp, set_flow(0, vec![10, 0, 0], 4)),
            Some(BebaErrorCode::BadExpLen as u16)
        );
        assert_eq!(
            state_mod(&mut dp, set_flow(255, vec![10, 0, 0, 1], 4)),
            Some(BebaErrorCode::BadTableId as u16)
        );
        // The pipeline (and so every worker's replica) sees the state.
        let recs = records(&stats(&mut dp, StateStatsKind::Full, 0));
        let stored: Vec<_> = recs.iter().filter(|r| !r.key.is_empty()).collect();
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].key, vec![10, 0, 0, 1]);
        assert_eq!(stored[0].state, 4);
        assert_eq!(stored[0].idle_timeout, 2_000_000);
        // The idle timeout rolls it back to DEFAULT (seen by statistics).
        clock.fetch_add(3 * SEC, std::sync::atomic::Ordering::SeqCst);
        let recs = records(&stats(&mut dp, StateStatsKind::Short, 0));
        assert!(recs.iter().all(|r| r.state == 0), "{recs:?}");
        // Stats-and-delete forgets what it reports.
        assert_eq!(state_mod(&mut dp, set_flow(0, vec![10, 0, 0, 2], 5)), None);
        let recs = records(&stats(&mut dp, StateStatsKind::AndDelete, 0));
        assert!(recs.iter().any(|r| r.state == 5));
        let recs = records(&stats(&mut dp, StateStatsKind::Full, 0));
        assert!(recs.iter().all(|r| r.state != 5));
        // Unknown template deletion, a global state.
        let del = ofp::beba::PktTmpMod::Delete { pkttmp_id: 3 };
        let msg = OfpMessage::new(
            8,
            Message::Experimenter(BebaMessage::PktTmpMod(del).to_experimenter()),
        );
        let raw = msg.encode();
        let Message::Experimenter(e) = &msg.body else {
            unreachable!()
        };
        let out = dp.beba_message(8, e, &raw);
        assert!(matches!(
            &out[0].body,
            Message::Error(ErrorMsg::Experimenter { exp_type, .. })
                if *exp_type == BebaErrorCode::PktTmpModFailed as u16
        ));
        assert_eq!(
            state_mod(
                &mut dp,
                StateMod::SetGlobalState {
                    value: 0b1010,
                    mask: 0b1110
                }
            ),
            None
        );
        assert_eq!(dp.beba_state().map(|st| st.global_state()), Some(0b1010));
        dp.shutdown();
    }

    #[test]
    fn many_records_span_several_replies() {
        let (mut dp, _clock) = dp();
        configure(&mut dp);
        for i in 0..(stateful::RECORDS_PER_REPLY as u32 + 10) {
            assert_eq!(
                state_mod(&mut dp, set_flow(0, i.to_be_bytes().to_vec(), 1)),
                None
            );
        }
        let out = stats(&mut dp, StateStatsKind::Short, 0);
        assert_eq!(out.len(), 2);
        let more: Vec<bool> = out
            .iter()
            .map(|m| match &m.body {
                Message::MultipartReply(r) => r.flags & OFPMPF_REPLY_MORE != 0,
                _ => panic!("not a reply"),
            })
            .collect();
        assert_eq!(more, vec![true, false]);
        // Every stored flow plus the DEFAULT record.
        assert_eq!(records(&out).len(), stateful::RECORDS_PER_REPLY + 11);
        dp.shutdown();
    }

    #[test]
    fn slaves_may_read_but_not_write() {
        use crate::channel::role::forbidden_to_slave;
        let sm = BebaMessage::StateMod(StateMod::ResetGlobalState).to_experimenter();
        assert!(forbidden_to_slave(&Message::Experimenter(sm)));
        let req = |kind| {
            Message::MultipartRequest(Multipart::new(MultipartRequestBody::Experimenter(
                BebaMultipartRequest::StateStats(StateStatsRequest {
                    kind,
                    table_id: 0,
                    state: None,
                    match_: ofp::oxm::Match::default(),
                })
                .to_experimenter(),
            )))
        };
        assert!(!forbidden_to_slave(&req(StateStatsKind::Full)));
        assert!(!forbidden_to_slave(&req(StateStatsKind::Short)));
        assert!(forbidden_to_slave(&req(StateStatsKind::AndDelete)));
        assert!(forbidden_to_slave(&req(StateStatsKind::AndDeleteShort)));
    }
}
