//! Requests about run-time ports and queues: the queue configuration
//! reply (OFPT_QUEUE_GET_CONFIG, OpenFlow 1.3.5 §7.3.6), queue statistics
//! (OFPMP_QUEUE, §7.3.5.8) and oxflow's port / queue administration
//! requests (`ofp::port_admin`).

use super::queues::QueueSpec;
use super::Datapath;
use ofp::error::{ErrorCode, ErrorMsg, QueueOpFailedCode};
use ofp::message::Message;
use ofp::multipart::{ExperimenterMultipart, Multipart, MultipartReplyBody, QueueStats};
use ofp::port::{port_no, OFPQ_ALL};
use ofp::port_admin::{self, PortAdmin};
use ofp::OfpMessage;
use pipeline::Nanos;

use super::ports_runtime::PortRef;

impl Datapath {
    /// The queues of `port` (or of every port for OFPP_ANY); the caller
    /// checked that the port exists.
    pub(crate) fn queue_config(&self, port: u32) -> ofp::queue::QueueGetConfigReply {
        let queues = self
            .ports_with_queues()
            .filter(|(no, _)| port == port_no::ANY || *no == port)
            .flat_map(|(no, q)| q.describe(no))
            .collect();
        ofp::queue::QueueGetConfigReply { port, queues }
    }

    /// Queue statistics of `port` / `queue_id` (OFPP_ANY / OFPQ_ALL for
    /// all); a queue id a named port does not have is
    /// QUEUE_OP_FAILED/BAD_QUEUE.
    pub(crate) fn queue_stats(
        &self,
        port: u32,
        queue_id: u32,
        now: Nanos,
    ) -> Result<Vec<QueueStats>, ErrorCode> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut out = Vec::new();
        for (no, pq) in self.ports_with_queues() {
            if port != port_no::ANY && no != port {
                continue;
            }
            for q in &pq.queues {
                if queue_id != OFPQ_ALL && q.spec.id != queue_id {
                    continue;
                }
                let d = now.saturating_sub(q.added_at);
                out.push(QueueStats {
                    port_no: no,
                    queue_id: q.spec.id,
                    tx_bytes: q.counters.tx_bytes.load(Relaxed),
                    tx_packets: q.counters.tx_packets.load(Relaxed),
                    tx_errors: q.counters.tx_errors.load(Relaxed),
                    duration_sec: (d / 1_000_000_000) as u32,
                    duration_nsec: (d % 1_000_000_000) as u32,
                });
            }
        }
        if out.is_empty() && queue_id != OFPQ_ALL && port != port_no::ANY {
            return Err(ErrorCode::QueueOpFailed(QueueOpFailedCode::BadQueue));
        }
        Ok(out)
    }

    /// One of oxflow's port / queue administration requests: its reply,
    /// or an experimenter error whose text says why it was refused.
    pub(crate) fn port_admin(
        &mut self,
        xid: u32,
        e: &ExperimenterMultipart,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        let req = match PortAdmin::parse(e) {
            Some(Ok(r)) => r,
            Some(Err(d)) => {
                return vec![OfpMessage::new(
                    xid,
                    Message::Error(ErrorMsg::from_request(d.code, raw)),
                )]
            }
            None => return Vec::new(),
        };
        let t = req.exp_type();
        let result = match req {
            PortAdmin::AddPort { port_no, interface } => self
                .add_port(&interface, (port_no != 0).then_some(port_no))
                .map(Some),
            PortAdmin::DelPort { port_no, name } => {
                let which = if port_no != 0 {
                    PortRef::No(port_no)
                } else {
                    PortRef::Name(name)
                };
                self.del_port(&which).map(Some)
            }
            PortAdmin::SetQueue {
                port_no,
                queue_id,
                min_rate,
                max_rate,
            } => {
                let spec = QueueSpec {
                    id: queue_id,
                    min_rate: (min_rate != 0).then_some(min_rate),
                    max_rate: (max_rate != 0).then_some(max_rate),
                };
                let mut specs = self.queue_specs(port_no);
                specs.retain(|q| q.id != queue_id);
                specs.push(spec);
                self.set_port_queues(port_no, None, &specs).map(|()| None)
            }
            PortAdmin::DelQueue { port_no, .. } if !self.ports.contains_key(&port_no) => {
                Err(format!("no port {port_no}"))
            }
            PortAdmin::DelQueue { port_no, queue_id } => {
                let mut specs = self.queue_specs(port_no);
                let before = specs.len();
                specs.retain(|q| q.id != queue_id);
                if specs.len() == before {
                    Err(format!("port {port_no} has no queue {queue_id}"))
                } else {
                    self.set_port_queues(port_no, None, &specs).map(|()| None)
                }
            }
        };
        let body = match result {
            Ok(no) => Message::MultipartReply(Multipart::new(MultipartReplyBody::Experimenter(
                port_admin::reply(t, no),
            ))),
            Err(why) => Message::Error(port_admin::refusal(t, &why)),
        };
        vec![OfpMessage::new(xid, body)]
    }

    /// Port `no`'s queue configuration (empty without queues).
    pub fn queue_specs(&self, no: u32) -> Vec<QueueSpec> {
        self.port_queues(no)
            .map(|q| q.queues.iter().map(|x| x.spec).collect())
            .unwrap_or_default()
    }
}
