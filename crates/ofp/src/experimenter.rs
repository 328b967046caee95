//! oxflow's experimenter extensions: its experimenter id and the bodies of
//! the experimenter multipart messages it defines.
//!
//! OpenFlow 1.3.5 (7.2.5 and 7.3.5.15) lets a switch define messages of
//! its own under a 32-bit experimenter id: with a zero top byte, the other
//! three bytes are the experimenter's IEEE OUI. oxflow has no registered
//! OUI, so its id uses a *locally administered* one, `6f:78:66` ("oxf"):
//! the second-lowest bit of its first byte is set, which the IEEE never
//! assigns to an organisation, so no registered experimenter can clash.
//!
//! # Worker statistics (`exp_type` [`exp_type::WORKER_STATS`])
//!
//! The datapath's counterpart of Open vSwitch's `dpif-netdev/pmd-stats-show`:
//! how busy each forwarding worker is. The request is an
//! `ofp_experimenter_multipart_header` with no data; the reply's data is
//! one 56-byte record per worker (the control thread, which runs
//! packet-outs, is not a worker and has none):
//!
//! ```text
//!  0        4        8                16               24
//!  | worker | pad    | rx_packets     | rounds         |
//!  | busy_rounds     | busy_ns        | pipeline_ns    |
//!  | sleeps          |                                    (56 bytes)
//! ```
//!
//! - `rx_packets`: frames the worker received;
//! - `rounds`: turns of its loop (each polls every port it reads once);
//! - `busy_rounds`, `busy_ns`: the turns that received at least one frame,
//!   and the monotonic time they took from the first receive to the last
//!   transmit (the time spent forwarding; a turn that found nothing is
//!   idle polling);
//! - `pipeline_ns`: the part of `busy_ns` spent in the pipeline (parse,
//!   tables, actions), the rest being the ports' receive and transmit
//!   (system calls, copies, and on veth the peer's receive path, which
//!   the kernel runs in the sender's context);
//! - `sleeps`: times the worker blocked waiting for work (adaptive
//!   polling).
//!
//! `busy_ns / rx_packets` is the worker's cost per frame, whatever the
//! offered rate; `pipeline_ns / rx_packets` the pipeline's share of it;
//! `rx_packets / busy_rounds` the mean batch.

use crate::error::DecodeError;
use crate::multipart::ExperimenterMultipart;
use crate::wire::{Reader, Writer};

/// oxflow's experimenter id: `00` then the locally administered OUI
/// `6f:78:66` (module comment).
pub const OXFLOW_EXPERIMENTER: u32 = 0x006f_7866;

/// The `exp_type`s oxflow defines under [`OXFLOW_EXPERIMENTER`].
pub mod exp_type {
    /// Multipart: per-worker statistics ([`super::WorkerStats`]).
    pub const WORKER_STATS: u32 = 1;
    /// Multipart: the data-path graph with per-gate packet counts
    /// ([`crate::graph_desc`]).
    pub const DATAPATH_GRAPH: u32 = 2;
    /// Multipart: a run-time change of the data-path graph and its
    /// traffic classes ([`crate::graph_change`]).
    pub const GRAPH_CHANGE: u32 = 3;
}

/// One worker's record in a worker statistics reply (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkerStats {
    pub worker: u32,
    pub rx_packets: u64,
    pub rounds: u64,
    pub busy_rounds: u64,
    pub busy_ns: u64,
    pub pipeline_ns: u64,
    pub sleeps: u64,
}

/// Bytes of one [`WorkerStats`] record.
pub const WORKER_STATS_LEN: usize = 56;

impl WorkerStats {
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.worker);
        w.put_zeros(4);
        w.put_u64(self.rx_packets);
        w.put_u64(self.rounds);
        w.put_u64(self.busy_rounds);
        w.put_u64(self.busy_ns);
        w.put_u64(self.pipeline_ns);
        w.put_u64(self.sleeps);
    }

    pub fn decode(r: &mut Reader<'_>) -> Result<WorkerStats, DecodeError> {
        let worker = r.u32("worker stats: worker")?;
        r.pad(4)?;
        Ok(WorkerStats {
            worker,
            rx_packets: r.u64("worker stats: rx_packets")?,
            rounds: r.u64("worker stats: rounds")?,
            busy_rounds: r.u64("worker stats: busy_rounds")?,
            busy_ns: r.u64("worker stats: busy_ns")?,
            pipeline_ns: r.u64("worker stats: pipeline_ns")?,
            sleeps: r.u64("worker stats: sleeps")?,
        })
    }

    /// The request body (an experimenter multipart with no data).
    pub fn request() -> ExperimenterMultipart {
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::WORKER_STATS,
            data: Vec::new(),
        }
    }

    /// The reply body holding `stats`.
    pub fn reply(stats: &[WorkerStats]) -> ExperimenterMultipart {
        let mut data = Vec::with_capacity(stats.len() * WORKER_STATS_LEN);
        for s in stats {
            s.encode(&mut data);
        }
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: exp_type::WORKER_STATS,
            data,
        }
    }

    /// The records of a reply body; `None` if it is not oxflow's worker
    /// statistics. A body whose data is not whole records is
    /// `BAD_REQUEST/BAD_LEN`.
    pub fn parse_reply(
        body: &ExperimenterMultipart,
    ) -> Option<Result<Vec<WorkerStats>, DecodeError>> {
        if body.experimenter != OXFLOW_EXPERIMENTER || body.exp_type != exp_type::WORKER_STATS {
            return None;
        }
        let mut r = Reader::message(&body.data);
        let mut out = Vec::with_capacity(body.data.len() / WORKER_STATS_LEN);
        Some((|| {
            while !r.is_empty() {
                out.push(WorkerStats::decode(&mut r)?);
            }
            Ok(out)
        })())
    }
}

/// The totals of several workers' records (the switch's, summed).
pub fn total(stats: &[WorkerStats]) -> WorkerStats {
    stats
        .iter()
        .fold(WorkerStats::default(), |t, s| WorkerStats {
            worker: t.worker + 1,
            rx_packets: t.rx_packets + s.rx_packets,
            rounds: t.rounds + s.rounds,
            busy_rounds: t.busy_rounds + s.busy_rounds,
            busy_ns: t.busy_ns + s.busy_ns,
            pipeline_ns: t.pipeline_ns + s.pipeline_ns,
            sleeps: t.sleeps + s.sleeps,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{BadRequestCode, ErrorCode};

    fn sample(i: u32) -> WorkerStats {
        WorkerStats {
            worker: i,
            rx_packets: 1_000 + u64::from(i),
            rounds: 50,
            busy_rounds: 40,
            busy_ns: 123_456_789,
            pipeline_ns: 4_567,
            sleeps: 3,
        }
    }

    #[test]
    fn record_bytes() {
        let mut w = Vec::new();
        sample(1).encode(&mut w);
        assert_eq!(w.len(), WORKER_STATS_LEN);
        assert_eq!(&w[0..8], &[0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(&w[8..16], &1_001u64.to_be_bytes());
        assert_eq!(&w[32..40], &123_456_789u64.to_be_bytes());
        assert_eq!(&w[40..48], &4_567u64.to_be_bytes());
        assert_eq!(&w[48..56], &3u64.to_be_bytes());
    }

    #[test]
    fn reply_round_trip_and_total() {
        let stats = [sample(0), sample(1)];
        let body = WorkerStats::reply(&stats);
        assert_eq!(body.data.len(), 2 * WORKER_STATS_LEN);
        let back = WorkerStats::parse_reply(&body).unwrap().unwrap();
        assert_eq!(back, stats);
        let t = total(&back);
        assert_eq!(t.rx_packets, 2_001);
        assert_eq!(t.busy_ns, 2 * 123_456_789);
        assert_eq!(t.worker, 2, "total counts the workers");
    }

    #[test]
    fn other_bodies_and_short_records() {
        let mut other = WorkerStats::request();
        other.experimenter = 0x0000_2320;
        assert!(WorkerStats::parse_reply(&other).is_none());
        let mut body = WorkerStats::reply(&[sample(0)]);
        body.data.pop();
        let e = WorkerStats::parse_reply(&body).unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest(BadRequestCode::BadLen));
    }

    #[test]
    fn experimenter_id_is_a_locally_administered_oui() {
        assert_eq!(OXFLOW_EXPERIMENTER >> 24, 0);
        assert_ne!((OXFLOW_EXPERIMENTER >> 16) & 0x02, 0);
    }
}
