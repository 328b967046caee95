//! Controller requests the datapath answers: modifications (validated on the
//! authoritative pipeline, then broadcast), packet-out, switch config,
//! barrier and the multipart statistics.

use super::ops::Op;
use super::Datapath;
use ofp::error::{BadRequestCode, ErrorCode, ErrorMsg, PortModFailedCode, TableModFailedCode};
use ofp::message::{flow_mod_command as cmd, FlowMod, Message, NO_BUFFER};
use ofp::multipart::{self as mp, FlowStatsRequest, MultipartReplyBody as R};
use ofp::multipart::{Multipart, MultipartRequestBody as Q};
use ofp::OfpMessage;
use pipeline::{outputs_to, CompiledMatch, EntryRef};
use std::sync::Arc;

/// Largest reply message (the split limit).
const MAX_REPLY: usize = 65535;

impl Datapath {
    /// Handles one message; returns the replies (errors included). `raw`
    /// is the request as received (error data). Messages the channel
    /// answers itself (hello, echo, role, async) give no reply here.
    pub fn handle_message(&mut self, msg: OfpMessage, raw: &[u8]) -> Vec<OfpMessage> {
        let xid = msg.xid;
        let err = |c: ErrorCode| {
            vec![OfpMessage::new(
                xid,
                Message::Error(ErrorMsg::from_request(c, raw)),
            )]
        };
        let one = |m: Message| vec![OfpMessage::new(xid, m)];
        match msg.body {
            Message::FeaturesRequest => one(Message::FeaturesReply(self.features())),
            Message::GetConfigRequest => one(Message::GetConfigReply(self.switch_config)),
            Message::SetConfig(c) => match self.set_config(c) {
                Ok(()) => Vec::new(),
                Err(c) => err(c),
            },
            Message::BarrierRequest => {
                self.barrier();
                one(Message::BarrierReply)
            }
            Message::FlowMod(fm) => match self.flow_mod(fm) {
                Ok(()) => Vec::new(),
                Err(c) => err(c),
            },
            Message::GroupMod(gm) => {
                let now = self.now();
                if gm.command == ofp::group::command::DELETE {
                    self.collect();
                }
                match self.pipeline.group_mod(&gm, now) {
                    Ok(removed) => {
                        self.broadcast(Op::GroupMod(Arc::new(gm), now));
                        self.flow_removed(&removed, now);
                        Vec::new()
                    }
                    Err(c) => err(c),
                }
            }
            Message::MeterMod(mm) => {
                let now = self.now();
                if mm.command == ofp::meter::command::DELETE {
                    self.collect();
                }
                match self.pipeline.meter_mod(&mm, now) {
                    Ok(removed) => {
                        let table = self.pipeline.meters.clone();
                        self.broadcast(Op::Meters(Arc::new(mm), now, table));
                        self.flow_removed(&removed, now);
                        Vec::new()
                    }
                    Err(c) => err(c),
                }
            }
            Message::PortMod(pm) => match self.port_mod(&pm) {
                Ok(()) => Vec::new(),
                Err(c) => err(c),
            },
            Message::TableMod(tm) => {
                if tm.table_id != ofp::instruction::TABLE_ALL
                    && usize::from(tm.table_id) >= self.pipeline.n_tables()
                {
                    err(ErrorCode::TableModFailed(TableModFailedCode::BadTable))
                } else if tm.config != 0 {
                    // The 1.3 deprecated bits (miss behaviour) are not
                    // supported: table-miss entries replace them.
                    err(ErrorCode::TableModFailed(TableModFailedCode::BadConfig))
                } else {
                    Vec::new()
                }
            }
            Message::PacketOut(po) => match self.packet_out(po) {
                Ok(()) => Vec::new(),
                Err(c) => err(c),
            },
            Message::QueueGetConfigRequest(q) => {
                let p = q.port;
                if p != ofp::port::port_no::ANY && !self.ports.contains_key(&p) {
                    return err(ErrorCode::QueueOpFailed(
                        ofp::error::QueueOpFailedCode::BadPort,
                    ));
                }
                one(Message::QueueGetConfigReply(self.queue_config(p)))
            }
            Message::MultipartRequest(req) => match req.body {
                // Experimenter requests: the extension that claims them
                // (`super::extensions`), else refused.
                Q::Experimenter(e) => match super::extensions::multipart_handler(&e) {
                    Some(answer) => answer(self, xid, &e, raw),
                    None => err(ErrorCode::BadRequest(super::extensions::refusal(
                        e.experimenter,
                        false,
                    ))),
                },
                body => match self.multipart(body) {
                    Ok(body) => mp::split_reply(Multipart::new(body), MAX_REPLY)
                        .into_iter()
                        .map(|r| OfpMessage::new(xid, Message::MultipartReply(r)))
                        .collect(),
                    Err(c) => err(c),
                },
            },
            // An experimenter message no extension claims (those they do
            // claim are taken before this, `super::extensions`).
            Message::Experimenter(e) => err(ErrorCode::BadRequest(super::extensions::refusal(
                e.experimenter,
                true,
            ))),
            _ => Vec::new(),
        }
    }

    /// OFPT_SET_CONFIG (module comment of `datapath`: "Switch config").
    /// OFPC_FRAG_REASM is refused with SWITCH_CONFIG_FAILED/BAD_FLAGS and
    /// the whole message ignored: the switch does not reassemble (and
    /// does not advertise OFPC_IP_REASM).
    fn set_config(&mut self, c: ofp::message::SwitchConfig) -> Result<(), ErrorCode> {
        use ofp::message::config_flags as cf;
        let frag = c.flags & cf::FRAG_MASK;
        if frag != cf::FRAG_NORMAL && frag != cf::FRAG_DROP {
            return Err(ErrorCode::SwitchConfigFailed(
                ofp::error::SwitchConfigFailedCode::BadFlags,
            ));
        }
        self.switch_config = c;
        let mut pc = self.pipeline.config;
        pc.invalid_ttl_max_len = c.miss_send_len;
        pc.frag_drop = frag == cf::FRAG_DROP;
        self.pipeline.config = pc;
        self.broadcast(Op::Config(pc));
        Ok(())
    }

    /// OFPT_FEATURES_REPLY body.
    pub fn features(&self) -> ofp::message::FeaturesReply {
        use ofp::message::capabilities as cap;
        ofp::message::FeaturesReply {
            datapath_id: self.config.datapath_id,
            n_buffers: super::buffers::N_BUFFERS as u32,
            n_tables: self.pipeline.n_tables().min(255) as u8,
            auxiliary_id: 0,
            capabilities: cap::FLOW_STATS
                | cap::TABLE_STATS
                | cap::PORT_STATS
                | cap::GROUP_STATS
                | cap::QUEUE_STATS,
            reserved: 0,
        }
    }

    fn flow_mod(&mut self, mut fm: FlowMod) -> Result<(), ErrorCode> {
        let now = self.now();
        if matches!(fm.command, cmd::DELETE | cmd::DELETE_STRICT)
            || fm.flags & ofp::message::flow_mod_flags::RESET_COUNTS != 0
        {
            // Fold worker counters first: flow-removed carries totals, and
            // a reset must not be undone by older deltas.
            self.collect();
        }
        let (removed, prepared) = self.pipeline.flow_mod_taking(&mut fm, now)?;
        let buffer_id = fm.buffer_id;
        let add_or_mod = !matches!(fm.command, cmd::DELETE | cmd::DELETE_STRICT);
        self.broadcast(Op::FlowMod(Arc::new(fm), prepared, now));
        self.flow_removed(&removed, now);
        if add_or_mod && buffer_id != NO_BUFFER {
            let b = self.buffers.take(buffer_id, now)?;
            self.run_on_control(&b.data, b.in_port, None);
        }
        Ok(())
    }

    fn packet_out(&mut self, po: ofp::message::PacketOut) -> Result<(), ErrorCode> {
        for a in &po.actions {
            self.pipeline.check_action(a, true)?;
        }
        let data = if po.buffer_id == NO_BUFFER {
            po.data
        } else {
            self.buffers.take(po.buffer_id, self.now())?.data
        };
        self.run_on_control(&data, po.in_port, Some(&po.actions));
        Ok(())
    }

    fn port_mod(&mut self, pm: &ofp::message::PortMod) -> Result<(), ErrorCode> {
        let bad = |c| Err(ErrorCode::PortModFailed(c));
        let Some(sp) = self.ports.get(&pm.port_no) else {
            return bad(PortModFailedCode::BadPort);
        };
        if sp.hw_addr != pm.hw_addr {
            return bad(PortModFailedCode::BadHwAddr);
        }
        let Some(mut info) = self.pipeline.ports.get(pm.port_no).copied() else {
            return bad(PortModFailedCode::BadPort);
        };
        let was_down = info.config & ofp::port::config::PORT_DOWN != 0;
        info.config = (info.config & !pm.mask) | (pm.config & pm.mask);
        self.pipeline.ports.insert(pm.port_no, info);
        self.broadcast(Op::Port(pm.port_no, info));
        if !was_down && info.config & ofp::port::config::PORT_DOWN != 0 {
            // Administratively down: forget its addresses, as on link down.
            self.learning.flush_port(pm.port_no);
        }
        Ok(())
    }

    /// The entries a flow / aggregate stats request selects, with tables.
    fn select<'a>(
        &'a self,
        q: &'a FlowStatsRequest,
    ) -> Result<impl Iterator<Item = (u8, EntryRef<'a>)> + 'a, ErrorCode> {
        let all = q.table_id == ofp::instruction::TABLE_ALL;
        if !all && usize::from(q.table_id) >= self.pipeline.n_tables() {
            return Err(ErrorCode::BadRequest(BadRequestCode::BadTableId));
        }
        let filter =
            CompiledMatch::compile(&q.match_, self.pipeline.extensions()).map_err(|e| e.code)?;
        Ok(self
            .pipeline
            .tables()
            .iter()
            .filter(move |t| all || t.id == q.table_id)
            .flat_map(|t| t.entries().map(move |e| (t.id, e)))
            .filter(move |(_, e)| {
                e.cookie() & q.cookie_mask == q.cookie & q.cookie_mask
                    && outputs_to(&e.instructions, q.out_port, q.out_group)
                    && e.compiled.is_subsumed_by(&filter)
            }))
    }

    fn multipart(&mut self, body: Q) -> Result<R, ErrorCode> {
        if matches!(
            body,
            Q::Flow(_) | Q::Aggregate(_) | Q::Table | Q::Group { .. }
        ) {
            self.collect();
        }
        self.stats_reply(body)
    }

    /// The reply to a multipart request from the counters as they are:
    /// flow, aggregate, table and group counters include the workers'
    /// only up to the last [`Datapath::collect`] (`multipart` collects
    /// first; the metrics endpoint collects once for several replies).
    pub(crate) fn stats_reply(&mut self, body: Q) -> Result<R, ErrorCode> {
        let now = self.now();
        Ok(match body {
            Q::Desc => R::Desc(self.config.desc.clone()),
            Q::Flow(q) => R::Flow(
                self.select(&q)?
                    .map(|(table_id, e)| {
                        let (duration_sec, duration_nsec) = e.duration(now);
                        mp::FlowStats {
                            table_id,
                            duration_sec,
                            duration_nsec,
                            priority: e.priority,
                            idle_timeout: e.idle_timeout,
                            hard_timeout: e.hard_timeout,
                            flags: e.flags(),
                            cookie: e.cookie(),
                            packet_count: e.packet_count(),
                            byte_count: e.byte_count(),
                            match_: ofp::oxm::Match::clone(&e.match_),
                            instructions: e.instructions.to_vec(),
                        }
                    })
                    .collect(),
            ),
            Q::Aggregate(q) => {
                let mut a = mp::AggregateStats::default();
                for (_, e) in self.select(&q)? {
                    a.packet_count += e.packet_count();
                    a.byte_count += e.byte_count();
                    a.flow_count += 1;
                }
                R::Aggregate(a)
            }
            Q::Table => R::Table(
                self.pipeline
                    .tables()
                    .iter()
                    .map(|t| mp::TableStats {
                        table_id: t.id,
                        active_count: t.len() as u32,
                        lookup_count: t.counters.lookup_count,
                        matched_count: t.counters.matched_count,
                    })
                    .collect(),
            ),
            Q::PortStats { port_no } => {
                if port_no != ofp::port::port_no::ANY && !self.ports.contains_key(&port_no) {
                    return Err(ErrorCode::BadRequest(BadRequestCode::BadPort));
                }
                R::PortStats(
                    self.ports
                        .values()
                        .filter(|p| port_no == ofp::port::port_no::ANY || p.no == port_no)
                        .map(|p| {
                            let s = p.io.lock().map(|io| io.stats()).unwrap_or_default();
                            let d = now.saturating_sub(p.added_at);
                            mp::PortStats {
                                port_no: p.no,
                                rx_packets: s.rx_packets,
                                tx_packets: s.tx_packets,
                                rx_bytes: s.rx_bytes,
                                tx_bytes: s.tx_bytes,
                                rx_dropped: s.rx_dropped,
                                tx_dropped: s.tx_dropped,
                                rx_errors: s.rx_errors
                                    + p.rx_malformed.load(std::sync::atomic::Ordering::Relaxed),
                                tx_errors: s.tx_errors,
                                duration_sec: (d / 1_000_000_000) as u32,
                                duration_nsec: (d % 1_000_000_000) as u32,
                                ..Default::default()
                            }
                        })
                        .collect(),
                )
            }
            Q::PortDesc => R::PortDesc(
                self.ports
                    .keys()
                    .filter_map(|n| self.port_desc(*n))
                    .collect(),
            ),
            Q::Queue { port_no, queue_id } => {
                if port_no != ofp::port::port_no::ANY && !self.ports.contains_key(&port_no) {
                    return Err(ErrorCode::QueueOpFailed(
                        ofp::error::QueueOpFailedCode::BadPort,
                    ));
                }
                R::Queue(self.queue_stats(port_no, queue_id, now)?)
            }
            Q::Group { group_id } => R::Group(
                self.pipeline
                    .groups
                    .iter()
                    .filter(|g| group_id == ofp::group::group_id::ALL || g.id == group_id)
                    .map(|g| {
                        let d = now.saturating_sub(g.created_at);
                        mp::GroupStats {
                            group_id: g.id,
                            ref_count: self.group_refs(g.id),
                            packet_count: g.counters.packet_count,
                            byte_count: g.counters.byte_count,
                            duration_sec: (d / 1_000_000_000) as u32,
                            duration_nsec: (d % 1_000_000_000) as u32,
                            bucket_stats: g
                                .bucket_counters
                                .iter()
                                .map(|c| mp::BucketCounter {
                                    packet_count: c.packet_count,
                                    byte_count: c.byte_count,
                                })
                                .collect(),
                        }
                    })
                    .collect(),
            ),
            Q::GroupDesc => R::GroupDesc(
                self.pipeline
                    .groups
                    .iter()
                    .map(|g| mp::GroupDesc {
                        group_type: g.group_type,
                        group_id: g.id,
                        buckets: g.buckets.clone(),
                    })
                    .collect(),
            ),
            Q::MeterConfig { meter_id } => R::MeterConfig(
                self.pipeline
                    .meters
                    .iter()
                    .filter(|m| meter_id == ofp::meter::meter_id::ALL || m.id == meter_id)
                    .map(|m| mp::MeterConfig {
                        flags: m.flags,
                        meter_id: m.id,
                        bands: m.bands.iter().map(|b| b.band.clone()).collect(),
                    })
                    .collect(),
            ),
            Q::Meter { meter_id } => R::Meter(
                self.pipeline
                    .meters
                    .iter()
                    .filter(|m| meter_id == ofp::meter::meter_id::ALL || m.id == meter_id)
                    .map(|m| {
                        let d = now.saturating_sub(m.created_at);
                        mp::MeterStats {
                            meter_id: m.id,
                            flow_count: self.meter_refs(m.id),
                            packet_in_count: m.packet_in_count(),
                            byte_in_count: m.byte_in_count(),
                            duration_sec: (d / 1_000_000_000) as u32,
                            duration_nsec: (d % 1_000_000_000) as u32,
                            band_stats: m
                                .bands
                                .iter()
                                .map(|b| mp::MeterBandStats {
                                    packet_band_count: b.packet_count(),
                                    byte_band_count: b.byte_count(),
                                })
                                .collect(),
                        }
                    })
                    .collect(),
            ),
            Q::MeterFeatures => R::MeterFeatures(super::features::meter_features()),
            Q::GroupFeatures => R::GroupFeatures(super::features::group_features()),
            Q::TableFeatures(set) => {
                // The tables are fixed: a request that tries to change
                // them is refused (spec: EPERM when the switch does not
                // allow it).
                if !set.is_empty() {
                    return Err(ErrorCode::TableFeaturesFailed(
                        ofp::error::TableFeaturesFailedCode::Eperm,
                    ));
                }
                let n = self.pipeline.n_tables();
                R::TableFeatures(
                    (0..n.min(255))
                        .map(|id| super::features::table_features(id as u8, n))
                        .collect(),
                )
            }
            Q::Experimenter(e) => self.experimenter_multipart(&e)?,
        })
    }

    /// oxflow's statistics requests (worker statistics, the data-path
    /// graph; `ofp::experimenter`) as OpenFlow messages: the reply split
    /// into parts, or the error (`super::extensions` routes them here).
    pub(crate) fn oxflow_stats(
        &mut self,
        xid: u32,
        e: &mp::ExperimenterMultipart,
        raw: &[u8],
    ) -> Vec<OfpMessage> {
        match self.experimenter_multipart(e) {
            Ok(body) => mp::split_reply(Multipart::new(body), MAX_REPLY)
                .into_iter()
                .map(|r| OfpMessage::new(xid, Message::MultipartReply(r)))
                .collect(),
            Err(c) => vec![OfpMessage::new(
                xid,
                Message::Error(ErrorMsg::from_request(c, raw)),
            )],
        }
    }

    /// An OFPMP_EXPERIMENTER request: oxflow's worker statistics
    /// (`ofp::experimenter`), else the spec's errors for an experimenter
    /// id or type the switch does not know.
    fn experimenter_multipart(&mut self, e: &mp::ExperimenterMultipart) -> Result<R, ErrorCode> {
        use ofp::experimenter::{exp_type, WorkerStats, OXFLOW_EXPERIMENTER};
        if e.experimenter != OXFLOW_EXPERIMENTER {
            return Err(ErrorCode::BadRequest(BadRequestCode::BadExperimenter));
        }
        match e.exp_type {
            exp_type::WORKER_STATS if e.data.is_empty() => {
                Ok(R::Experimenter(WorkerStats::reply(&self.worker_stats())))
            }
            exp_type::WORKER_STATS => Err(ErrorCode::BadRequest(BadRequestCode::BadLen)),
            exp_type::DATAPATH_GRAPH if e.data.is_empty() => {
                Ok(R::Experimenter(self.graph_view().reply()))
            }
            exp_type::DATAPATH_GRAPH => Err(ErrorCode::BadRequest(BadRequestCode::BadLen)),
            _ => Err(ErrorCode::BadRequest(BadRequestCode::BadExpType)),
        }
    }

    /// Flow entries that use meter `id`.
    fn meter_refs(&self, id: u32) -> u32 {
        self.pipeline
            .tables()
            .iter()
            .flat_map(|t| t.entries())
            .filter(|e| {
                e.instructions
                    .iter()
                    .any(|i| matches!(i, ofp::instruction::Instruction::Meter(m) if *m == id))
            })
            .count() as u32
    }

    /// Flow entries and groups that forward to group `id`.
    fn group_refs(&self, id: u32) -> u32 {
        let flows = self
            .pipeline
            .tables()
            .iter()
            .flat_map(|t| t.entries())
            .filter(|e| outputs_to(&e.instructions, ofp::port::port_no::ANY, id))
            .count();
        let groups = self
            .pipeline
            .groups
            .iter()
            .filter(|g| {
                g.buckets.iter().any(|b| {
                    b.actions
                        .iter()
                        .any(|a| matches!(a, ofp::action::Action::Group(x) if *x == id))
                })
            })
            .count();
        (flows + groups) as u32
    }
}
