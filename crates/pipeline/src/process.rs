//! Packet processing (spec §5.1, §5.9, §5.10, §5.12): the tables from 0
//! on, the instructions of each matched entry in spec order, apply-actions
//! executed at once, the action set executed when no goto follows, and the
//! reserved ports.
//!
//! Everything the datapath emits goes through [`Output`]; the caller (the
//! switch) turns it into I/O and counts port rx/tx.

use crate::action_set::ActionSet;
use crate::meter::Verdict;
use crate::program::{Op, Program};
use crate::table::Nanos;
use crate::Pipeline;
use ofp::action::Action;
use ofp::message::packet_in_reason;
use ofp::oxm::{Match, OxmField};
use ofp::port::{config, port_no};
use packet::{Field, FlowKey, PacketBuf, RewriteError};

/// Lookups already made for a packet (by `Pipeline::process_batch`) with
/// the key the packet enters table 0 with: per table id, the position
/// found there (`u32::MAX`: no match). Used only while the packet's key
/// still agrees with that key on the fields the table matches on: when
/// none of the entries run so far may have written one of them
/// (`Program::writes`).
pub(crate) type Hint<'a> = Option<&'a [(u32, u32)]>;

/// How deep group chains and TABLE resubmits may nest.
const MAX_DEPTH: u8 = 16;

/// A packet-in the datapath wants sent to the controller(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketInEvent<'a> {
    /// One of `packet_in_reason`.
    pub reason: u8,
    pub table_id: u8,
    /// Cookie of the entry that sent it (all ones when none, e.g. packet-out).
    pub cookie: u64,
    /// Pipeline fields: in_port, in_phy_port (if it differs), metadata (if
    /// not 0), tunnel_id (if set).
    pub match_: Match,
    /// The whole frame; the switch truncates to `max_len` and buffers.
    pub data: &'a [u8],
    /// From the output action (or the switch config for INVALID_TTL).
    pub max_len: u16,
}

/// Requests the datapath cannot serve itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// Output to OFPP_NORMAL (the switch may implement it outside OpenFlow).
    Normal { in_port: u32 },
}

/// Receives what the datapath emits.
pub trait Output {
    /// Send `data` out of `port` (a standard port or LOCAL) on `queue`.
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>);
    /// Send a packet-in.
    fn packet_in(&mut self, ev: PacketInEvent<'_>);
    /// A request for something the pipeline does not do; default: drop.
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {}
    /// Output to OFPP_NORMAL of a packet received on `in_port`, with the
    /// port table (a learning switch needs it to flood) so the receiver can
    /// forward at once, without keeping a copy of the frame for later.
    /// Default: [`Output::unsupported`].
    fn normal(&mut self, in_port: u32, data: &[u8], _ports: &crate::PortTable) {
        self.unsupported(Unsupported::Normal { in_port }, data);
    }
}

/// State carried through one packet's trip.
#[derive(Debug, Clone, Copy)]
struct Ctx {
    in_port: u32,
    now: Nanos,
    queue: Option<u32>,
    table_id: u8,
    cookie: u64,
    /// Actions of a table-miss entry: controller output has reason NO_MATCH.
    miss: bool,
    packet_out: bool,
    depth: u8,
}

impl Ctx {
    /// The state of a packet entering table 0 from `in_port` (no entry
    /// matched yet: cookie all ones).
    #[inline(always)]
    fn received(in_port: u32, now: Nanos) -> Ctx {
        Ctx {
            in_port,
            now,
            queue: None,
            table_id: 0,
            cookie: u64::MAX,
            miss: false,
            packet_out: false,
            depth: 0,
        }
    }
}

/// Whether to go on after an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    /// The packet was dropped (invalid TTL).
    Stop,
}

/// A hash of the fields that identify a connection (SELECT groups): the
/// same flow always takes the same bucket. The fields are folded a 64-bit
/// word at a time (multiply and rotate), then finished with the splitmix64
/// mixer so every output bit depends on every input bit (SELECT groups take
/// the hash modulo the total weight, which needs good low bits).
///
/// For ARP the sender and target protocol addresses take the IPv4
/// addresses' place. Only the fields the packet can have are folded: the IPv6 addresses
/// (four words) only for an IPv6 packet, where the IPv4 ones are zero;
/// an IPv4 packet's IPv6 fields are always zero and would add nothing but
/// four dependent multiplies.
fn flow_hash(k: &FlowKey) -> u64 {
    let mac = packet::mac_bits;
    let ipv6 = (k.eth_type == packet::ethertype::IPV6).then_some([k.ipv6_src, k.ipv6_dst]);
    // An ARP packet's flow is its sender and target addresses (in the
    // IPv4 addresses' place, which are zero for it).
    let l3 = if k.eth_type == packet::ethertype::ARP {
        [k.arp_spa, k.arp_tpa]
    } else {
        [k.ipv4_src, k.ipv4_dst]
    };
    flow_hash_of(
        [mac(&k.eth_src), mac(&k.eth_dst)],
        k.eth_type,
        k.ip_proto,
        l3,
        ipv6,
        [k.tp_src, k.tp_dst],
    )
}

/// `flow_hash` of a packet with these fields (MACs as
/// `packet::mac_bits` gives them; `ipv6`: the addresses of an IPv6
/// packet, `None` for any other): the chain template's, which has no
/// `FlowKey`.
#[inline(always)]
pub(crate) fn flow_hash_of(
    macs: [u64; 2],
    eth_type: u16,
    ip_proto: u8,
    ipv4: [u32; 2],
    ipv6: Option<[u128; 2]>,
    tp: [u16; 2],
) -> u64 {
    const M: u64 = 0x9e37_79b9_7f4a_7c15;
    let fold = |h: u64, w: u64| (h ^ w).wrapping_mul(M).rotate_left(29);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    h = fold(h, macs[0] << 16 | u64::from(eth_type));
    h = fold(h, macs[1] << 8 | u64::from(ip_proto));
    h = fold(h, u64::from(ipv4[0]) << 32 | u64::from(ipv4[1]));
    // (Written out: a loop over the flattened `Option` cost an IPv4
    // packet about 25 instructions of 128-bit moves for nothing.)
    if let Some([src, dst]) = ipv6 {
        h = fold(h, (src >> 64) as u64);
        h = fold(h, src as u64);
        h = fold(h, (dst >> 64) as u64);
        h = fold(h, dst as u64);
    }
    h = fold(h, u64::from(tp[0]) << 16 | u64::from(tp[1]));
    crate::classifier::splitmix64(h)
}

/// The packet-in match: the pipeline fields of the packet.
fn pipeline_match(k: &FlowKey) -> Match {
    let mut f = vec![OxmField::InPort(k.in_port)];
    if k.in_phy_port != k.in_port {
        f.push(OxmField::InPhyPort(k.in_phy_port));
    }
    if k.metadata != 0 {
        f.push(OxmField::Metadata(k.metadata, None));
    }
    if k.has(Field::TunnelId) {
        f.push(OxmField::TunnelId(k.tunnel_id, None));
    }
    Match::new(f)
}

impl Pipeline {
    /// Runs a packet received on `in_port` through the tables at `now`.
    /// The packet is rewritten in place by the actions.
    ///
    /// The frame is parsed only as deep as the installed rules need
    /// ([`Pipeline::parse_layer`]: the deepest layer any match, action,
    /// meter or SELECT group uses, at least L2). A frame whose headers in
    /// those layers are truncated or lie about their lengths is dropped
    /// before table 0 (ND option lists excepted, see `admit`) and the
    /// parse error is returned, so the caller counts it against the
    /// ingress port (rx_errors): matching such a frame on the fields that
    /// happened to parse would let a garbage frame hit rules written for
    /// well-formed traffic. Damage in a layer no rule looks at does not
    /// matter to the switch: such a frame goes through the tables.
    pub fn process(
        &mut self,
        pkt: &mut PacketBuf,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) -> Result<(), packet::ParseError> {
        if self.refuses(in_port) {
            return Ok(());
        }
        let mut tables = std::mem::take(&mut self.tables);
        let r = self.process_in(&mut tables, pkt, in_port, now, out);
        self.put_tables_back(tables);
        r
    }

    /// `process` for a port that accepts frames, with the tables moved
    /// out of `self` by the caller (see `run_tables`).
    #[inline(never)]
    pub(crate) fn process_in(
        &mut self,
        tables: &mut [crate::table::FlowTable],
        pkt: &mut PacketBuf,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) -> Result<(), packet::ParseError> {
        // The same steps as `admit` + `run_from_table_0`, written out: the
        // per-packet path compiles measurably faster this way. Not inlined
        // into callers' loops (`process_batch`): inlined there, the key's
        // construction stalled on stores (l2/100 went from ~63 to ~80 ns
        // per packet in the pipeline experiment).
        let mut key = FlowKey::new(in_port);
        // A new key has nothing parsed: no reset needed (`parse_to`).
        if let Err(e) = packet::continue_to(pkt.data(), &mut key, self.parse_layer()) {
            if e.reason != packet::Reason::BadNdOption {
                return Err(e);
            }
        }
        if self.config.frag_drop && key.ip_frag & packet::frag::FRAGMENT != 0 {
            return Ok(());
        }
        let ctx = Ctx::received(in_port, now);
        self.run_tables_in(tables, pkt, &mut key, ctx, None, out);
        Ok(())
    }

    /// Parses a frame received on a port that accepts it into `key` (made
    /// by `FlowKey::new(in_port)`): `Ok(true)` if it goes to table 0,
    /// `Ok(false)` if it is dropped silently (fragment with `frag_drop`),
    /// the parse error if it is malformed.
    #[inline]
    pub(crate) fn admit(
        &self,
        pkt: &PacketBuf,
        key: &mut FlowKey,
    ) -> Result<bool, packet::ParseError> {
        debug_assert_eq!(key.depth, packet::Layer::None);
        if let Err(e) = packet::continue_to(pkt.data(), key, self.parse_layer()) {
            // A bad ND option list leaves the ICMPv6 header and the target
            // intact: keep such a frame (only the options after the bad one
            // are unknown), as other switches and hosts do.
            if e.reason != packet::Reason::BadNdOption {
                return Err(e);
            }
        }
        Ok(!(self.config.frag_drop && key.ip_frag & packet::frag::FRAGMENT != 0))
    }

    /// Whether frames received on `in_port` are dropped unseen (port
    /// config NO_RECV or PORT_DOWN).
    #[inline]
    pub(crate) fn refuses(&self, in_port: u32) -> bool {
        self.ports
            .get(in_port)
            .is_some_and(|p| p.config & (config::NO_RECV | config::PORT_DOWN) != 0)
    }

    /// Runs an admitted packet through the tables from table 0, with the
    /// lookups `hint` already made (see [`Hint`]).
    #[inline]
    pub(crate) fn run_from_table_0(
        &mut self,
        tables: &mut [crate::table::FlowTable],
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        now: Nanos,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        // A key made for table 0 holds the ingress port.
        let ctx = Ctx::received(key.in_port, now);
        self.run_tables_in(tables, pkt, key, ctx, hint, out);
    }

    /// Packet-out (spec §7.3.7): runs `actions` on the frame as if it came
    /// in on `in_port` (a standard port or CONTROLLER). Output to TABLE
    /// submits it to table 0. The caller validated `actions` with
    /// [`Pipeline::check_action`] (`in_packet_out = true`).
    pub fn packet_out(
        &mut self,
        pkt: &mut PacketBuf,
        in_port: u32,
        actions: &[Action],
        now: Nanos,
        out: &mut impl Output,
    ) {
        let mut key = FlowKey::new(in_port);
        let _ = packet::parse(pkt.data(), &mut key);
        let mut ctx = Ctx {
            packet_out: true,
            ..Ctx::received(in_port, now)
        };
        self.execute_actions(pkt, &mut key, actions, &mut ctx, out);
    }

    /// Runs the packet through the tables from table 0 on.
    ///
    /// The tables are moved out of `self` for the duration (a swap of the
    /// `Vec`'s three words, no copy), so the matched entry's program can be
    /// read in place while actions change the rest of the pipeline (meters,
    /// groups, scratch buffers) through `&mut self`: no reference count per
    /// packet. Nothing the actions do reaches the tables: output to TABLE
    /// only resubmits from packet-out, which does not run inside this.
    fn run_tables(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ctx: Ctx,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        let mut tables = std::mem::take(&mut self.tables);
        self.run_tables_in(&mut tables, pkt, key, ctx, hint, out);
        self.put_tables_back(tables);
    }

    #[inline(always)]
    fn run_tables_in(
        &mut self,
        tables: &mut [crate::table::FlowTable],
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        mut ctx: Ctx,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        // The action set, made when the first write-actions comes (most
        // packets never have one: no set to initialise for them). `None`
        // stands for the empty set.
        let mut set: Option<ActionSet> = None;
        // The key fields the entries run so far may have changed (since
        // the lookups of `hint` were made).
        let mut written = packet::FieldSet::EMPTY;
        let mut table_id = 0u8;
        loop {
            let len = pkt.len();
            let Some(table) = tables.get_mut(usize::from(table_id)) else {
                return;
            };
            // A lookup made beforehand for this table with a key that
            // agrees with this one on every field the table matches on
            // gives the same answer (tables do not change meanwhile).
            let known = hint.and_then(|at| {
                let (_, pos) = at.iter().find(|(t, _)| *t == u32::from(table_id))?;
                (written.is_empty() || !written.intersects(table.match_fields())).then_some(*pos)
            });
            let found = match known {
                Some(pos) => table.lookup_known((pos != u32::MAX).then_some(pos as usize)),
                None => table.lookup(key),
            };
            // Table miss without a table-miss entry: drop (1.3 default).
            let Some(idx) = found else {
                return;
            };
            let Some(entry) = table.hot_mut(idx) else {
                return;
            };
            entry.hit(len, ctx.now);
            let entry: &crate::table::HotEntry = entry;
            ctx.table_id = table_id;
            ctx.cookie = entry.cookie;
            ctx.miss = entry.miss;

            // Spec order: meter, apply-actions, clear-actions,
            // write-actions, write-metadata, goto-table (the program holds
            // them in that order).
            let Program {
                meter,
                apply,
                clear,
                write,
                metadata,
                goto,
                writes,
                ..
            } = &**entry.program();
            written.insert_all(*writes);
            if let Some(m) = *meter {
                if self.meters.apply_to_packet(m, pkt, key, ctx.now) == Verdict::Drop {
                    return;
                }
            }
            if let Some([Op::Output { port, max_len }]) = apply.as_deref() {
                // The commonest action list of all, one output (an L2
                // table's entries, a port-based patch): straight to the
                // output, as `execute_ops` would, without the op loop.
                self.output(pkt, key, *port, *max_len, &ctx, out);
            } else if let Some(ops) = apply {
                // Nothing looks at the packet after this list when no
                // table follows and the action set will be empty: its
                // last action may then change the packet for good (see
                // `execute_group`).
                let tail = goto.is_none() && write.is_none() && (*clear || set.is_none());
                if self.execute_ops(pkt, key, ops, &mut ctx, tail, out) == Flow::Stop {
                    return;
                }
            }
            if *clear {
                set = None;
            }
            if let Some(ops) = write {
                set.get_or_insert_with(ActionSet::new).write(ops);
            }
            if let Some((v, mask)) = *metadata {
                key.metadata = (key.metadata & !mask) | (v & mask);
            }
            match *goto {
                Some(next) if next > table_id => table_id = next,
                _ => break,
            }
        }
        let Some(set) = set else {
            return;
        };
        // The set's group comes last of all (its output is left out then):
        // each op may be treated as the tail.
        set.for_each(|op| {
            self.execute_ops(pkt, key, std::slice::from_ref(op), &mut ctx, true, out)
                == Flow::Continue
        });
    }

    /// Executes a wire-form action list in order, compiling each action
    /// as it goes (no allocation): for action lists that were not compiled
    /// ahead (packet-out).
    fn execute_actions(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        actions: &[Action],
        ctx: &mut Ctx,
        out: &mut impl Output,
    ) -> Flow {
        for a in actions {
            let op = Op::compile(a);
            if self.execute_ops(pkt, key, std::slice::from_ref(&op), ctx, false, out) == Flow::Stop
            {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// Executes compiled actions in order on the packet. `tail`: nothing
    /// reads the packet (or its key) after the last of `ops`, so a group
    /// there may run its bucket on the packet itself.
    ///
    /// The lists of one action that the tables of routers, load balancers
    /// and gateways apply (a group, a pop-VLAN, a NAT's rewrite) go
    /// straight to it here, inline in the caller; any other list goes to
    /// `execute_op_list`, out of line. (A group, a pop-VLAN or a NAT's
    /// rewrite never stops the packet; a rewrite that does not apply is
    /// skipped, as the op loop does.)
    #[inline(always)]
    fn execute_ops(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ops: &[Op],
        ctx: &mut Ctx,
        tail: bool,
        out: &mut impl Output,
    ) -> Flow {
        match *ops {
            [Op::Group(g)] => {
                self.execute_group(g, pkt, key, ctx, tail, out);
                Flow::Continue
            }
            [Op::PopVlan] => {
                let _ = packet::pop_vlan(pkt, key);
                Flow::Continue
            }
            [Op::SetIpv4Port {
                addr,
                port,
                addr_field,
                port_field,
            }] => {
                let _ = packet::set_ipv4_port(pkt, key, addr_field, addr, port_field, port);
                Flow::Continue
            }
            _ => self.execute_op_list(pkt, key, ops, ctx, tail, out),
        }
    }

    /// `execute_ops` of any other list: a next hop's one fused op
    /// straight to `route` (without the indirect branch of the op
    /// dispatch), else the op loop.
    #[inline(never)]
    fn execute_op_list(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ops: &[Op],
        ctx: &mut Ctx,
        tail: bool,
        out: &mut impl Output,
    ) -> Flow {
        if let [Op::Route {
            ref dst,
            ref src,
            port,
        }] = *ops
        {
            return self.route(pkt, key, dst, src, port, ctx, out);
        }
        let last = ops.len().wrapping_sub(1);
        for (i, op) in ops.iter().enumerate() {
            let r: Result<(), RewriteError> = match *op {
                Op::Output { port, max_len } => {
                    self.output(pkt, key, port, max_len, ctx, out);
                    Ok(())
                }
                Op::Group(g) => {
                    self.execute_group(g, pkt, key, ctx, tail && i == last, out);
                    Ok(())
                }
                Op::SetQueue(q) => {
                    ctx.queue = Some(q);
                    Ok(())
                }
                Op::CopyTtlOut => packet::copy_ttl_out(pkt, key),
                Op::CopyTtlIn => packet::copy_ttl_in(pkt, key),
                Op::SetMplsTtl(t) => packet::set_mpls_ttl(pkt, key, t),
                Op::DecMplsTtl => packet::dec_mpls_ttl(pkt, key),
                Op::PushVlan(t) => packet::push_vlan(pkt, key, t),
                Op::PopVlan => packet::pop_vlan(pkt, key),
                Op::PushMpls(t) => packet::push_mpls(pkt, key, t),
                Op::PopMpls(t) => packet::pop_mpls(pkt, key, t),
                Op::SetNwTtl(t) => packet::set_nw_ttl(pkt, key, t),
                Op::DecNwTtl => packet::dec_nw_ttl(pkt, key),
                Op::SetField(ref sf) => packet::set_field_ref(pkt, key, sf),
                Op::PushPbb(t) => packet::push_pbb(pkt, key, t),
                Op::PopPbb => packet::pop_pbb(pkt, key),
                Op::Nop => Ok(()),
                Op::SetMacs { ref dst, ref src } => packet::set_macs(pkt, key, dst, src),
                Op::Route {
                    ref dst,
                    ref src,
                    port,
                } => {
                    if self.route(pkt, key, dst, src, port, ctx, out) == Flow::Stop {
                        return Flow::Stop;
                    }
                    Ok(())
                }
                Op::SetEthDstOutput { ref dst, port } => {
                    let _ = packet::set_eth_dst(pkt, key, dst);
                    self.output(pkt, key, port, 0, ctx, out);
                    Ok(())
                }
                Op::SetIpv4Port {
                    addr,
                    port,
                    addr_field,
                    port_field,
                } => packet::set_ipv4_port(pkt, key, addr_field, addr, port_field, port),
                Op::SetIpv4EthDstOutput {
                    addr,
                    addr_field,
                    ref dst,
                    port,
                } => {
                    self.set_ipv4_eth_dst_output(pkt, key, addr_field, addr, dst, port, ctx, out);
                    Ok(())
                }
            };
            match r {
                Ok(()) => {}
                Err(RewriteError::TtlExpired(_)) => {
                    self.invalid_ttl(pkt, key, ctx, out);
                    return Flow::Stop;
                }
                // An action that does not apply to this packet (e.g. pop
                // of an absent tag) is skipped; the spec leaves it
                // undefined and flow-mod validation cannot see packets.
                Err(_) => {}
            }
        }
        Flow::Continue
    }

    /// [`Op::Route`]: dec NW TTL, set both MACs, output to `port`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn route(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        dst: &[u8; 6],
        src: &[u8; 6],
        port: u32,
        ctx: &Ctx,
        out: &mut impl Output,
    ) -> Flow {
        // As the three ops would: an expired TTL stops here, another
        // error of the decrement is skipped.
        if let Err(RewriteError::TtlExpired(_)) = packet::dec_nw_ttl(pkt, key) {
            self.invalid_ttl(pkt, key, ctx, out);
            return Flow::Stop;
        }
        let _ = packet::set_macs(pkt, key, dst, src);
        self.output(pkt, key, port, 0, ctx, out);
        Flow::Continue
    }

    /// [`Op::SetIpv4EthDstOutput`]: set the address, set `eth_dst`,
    /// output to `port`. As the three ops would: a set-field that fails
    /// (neither can fail for the TTL) is skipped.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn set_ipv4_eth_dst_output(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        addr_field: Field,
        addr: u32,
        dst: &[u8; 6],
        port: u32,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        let _ = packet::rewrite::set_ipv4_addr(pkt, key, addr_field, addr);
        let _ = packet::set_eth_dst(pkt, key, dst);
        self.output(pkt, key, port, 0, ctx, out);
    }

    fn invalid_ttl(&mut self, pkt: &PacketBuf, key: &FlowKey, ctx: &Ctx, out: &mut impl Output) {
        if self.config.invalid_ttl_to_controller && self.packet_in_allowed(ctx.in_port) {
            out.packet_in(PacketInEvent {
                reason: packet_in_reason::INVALID_TTL,
                table_id: ctx.table_id,
                cookie: ctx.cookie,
                match_: pipeline_match(key),
                data: pkt.data(),
                max_len: self.config.invalid_ttl_max_len,
            });
        }
    }

    fn packet_in_allowed(&self, in_port: u32) -> bool {
        self.ports
            .get(in_port)
            .is_none_or(|p| p.config & config::NO_PACKET_IN == 0)
    }

    /// Output to `port` (standard or reserved). A standard port, the
    /// common case, is served inline; the reserved ports out of line
    /// (`output_reserved`).
    #[inline(always)]
    fn output(
        &mut self,
        pkt: &mut PacketBuf,
        key: &FlowKey,
        port: u32,
        max_len: u16,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        if port < port_no::IN_PORT {
            self.output_standard(pkt, port, ctx, out);
        } else {
            self.output_reserved(pkt, key, port, max_len, ctx, out);
        }
    }

    /// `output` to a reserved port (`IN_PORT` and above).
    #[inline(never)]
    fn output_reserved(
        &mut self,
        pkt: &mut PacketBuf,
        key: &FlowKey,
        port: u32,
        max_len: u16,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        match port {
            port_no::IN_PORT => {
                if self.ports.get(ctx.in_port).is_some_and(|p| p.can_forward()) {
                    out.port(ctx.in_port, pkt.data(), ctx.queue);
                }
            }
            port_no::ALL | port_no::FLOOD => {
                for p in self.ports.flood_set(ctx.in_port, port == port_no::FLOOD) {
                    out.port(p, pkt.data(), ctx.queue);
                }
            }
            port_no::CONTROLLER => {
                if self.packet_in_allowed(ctx.in_port) {
                    out.packet_in(PacketInEvent {
                        reason: if ctx.miss {
                            packet_in_reason::NO_MATCH
                        } else {
                            packet_in_reason::ACTION
                        },
                        table_id: ctx.table_id,
                        cookie: ctx.cookie,
                        match_: pipeline_match(key),
                        data: pkt.data(),
                        max_len,
                    });
                }
            }
            port_no::TABLE => {
                // Only meaningful in packet-out: resubmit a copy at table 0.
                if ctx.packet_out && ctx.depth < MAX_DEPTH {
                    let mut copy = pkt.clone();
                    let mut k = *key;
                    let c = Ctx {
                        packet_out: false,
                        depth: ctx.depth + 1,
                        queue: None,
                        ..*ctx
                    };
                    self.run_tables(&mut copy, &mut k, c, None, out);
                }
            }
            port_no::NORMAL => out.normal(ctx.in_port, pkt.data(), &self.ports),
            port_no::LOCAL => {
                if self.ports.get(port).is_some_and(|p| p.can_forward()) {
                    out.port(port, pkt.data(), ctx.queue);
                }
            }
            p => self.output_standard(pkt, p, ctx, out),
        }
    }

    /// Output to a standard port (or a number that names no port).
    #[inline(always)]
    fn output_standard(&self, pkt: &PacketBuf, p: u32, ctx: &Ctx, out: &mut impl Output) {
        self.send_standard(pkt, p, ctx.in_port, ctx.queue, out);
    }

    /// Sends the packet of a packet received on `in_port` out of standard
    /// port `p` on `queue`, unless `p` is the ingress port (that needs
    /// OFPP_IN_PORT) or cannot forward (down, NO_FWD, or no such port).
    #[inline(always)]
    pub(crate) fn send_standard(
        &self,
        pkt: &PacketBuf,
        p: u32,
        in_port: u32,
        queue: Option<u32>,
        out: &mut impl Output,
    ) {
        if p != in_port && self.ports.get(p).is_some_and(|i| i.can_forward()) {
            out.port(p, pkt.data(), queue);
        }
    }

    /// Runs group `g`: each chosen bucket's actions, applied as an action
    /// set (spec §5.6.1), act on their own copy of the packet, so neither
    /// the other buckets nor the actions after the group see what a
    /// bucket changed. With `tail` (nothing reads the packet after the
    /// group) the last chosen bucket acts on the packet itself instead:
    /// nobody could tell the difference, and the one bucket of an
    /// INDIRECT or SELECT group then costs no copy.
    fn execute_group(
        &mut self,
        g: u32,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ctx: &Ctx,
        tail: bool,
        out: &mut impl Output,
    ) {
        if ctx.depth >= MAX_DEPTH {
            return;
        }
        let len = pkt.len();
        // The group is found once; its slot reaches it again below.
        let Some(slot) = self.groups.slot(g) else {
            return;
        };
        let Some(chosen) = self.choose_buckets(slot, || flow_hash(key)) else {
            return;
        };
        // The chosen buckets, counted, and the group's compiled actions,
        // taken out of the group table while they run (see `Group::ops`).
        let Some(group) = self.groups.at_mut(slot) else {
            return;
        };
        group.count(&chosen, len);
        let one = tail && chosen.len() == 1;
        if one {
            // The commonest group of all (INDIRECT, a load balancer's
            // SELECT): its one bucket as the tail, on the packet itself.
            // A bucket of one op (a next hop's route, a backend's
            // rewrite) runs from a copy of the op: nothing to lend out
            // of the group and put back (a group never runs inside
            // itself, so nothing could tell).
            if let Some(&[op]) = group.bucket(chosen.start) {
                self.execute_tail_op(pkt, key, op, ctx, out);
                return;
            }
        }
        let Some(ops) = group.lend_ops() else {
            return;
        };
        if one {
            if let Some(bucket) = ops.get(chosen.start) {
                self.execute_tail_bucket(pkt, key, bucket, ctx, out);
            }
        } else {
            self.execute_buckets(pkt, key, &ops, chosen, ctx, tail, out);
        }
        if let Some(group) = self.groups.at_mut(slot) {
            group.put_back(ops);
        }
    }

    /// The buckets a packet with flow hash `hash` (`flow_hash`, asked
    /// only for a SELECT group) takes through the group at `slot`:
    /// straight from the group when that depends on the group alone
    /// (`Group::fixed_choice`), else from port and group liveness (the
    /// general path's and the chain template's choice).
    #[inline(always)]
    pub(crate) fn choose_buckets(
        &self,
        slot: usize,
        hash: impl Fn() -> u64 + Copy,
    ) -> Option<crate::group::Chosen> {
        let group = self.groups.at(slot)?;
        Some(match group.fixed_choice(hash) {
            Some(c) => c,
            None => self.groups.select_buckets(group, hash, &self.ports),
        })
    }

    /// Runs one bucket as the tail, on the packet itself (see
    /// `execute_group`).
    #[inline(always)]
    fn execute_tail_bucket(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        bucket: &[Op],
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        if let [op] = *bucket {
            self.execute_tail_op(pkt, key, op, ctx, out);
            return;
        }
        let mut c = Ctx {
            depth: ctx.depth + 1,
            ..*ctx
        };
        self.execute_op_list(pkt, key, bucket, &mut c, true, out);
    }

    /// Runs a bucket of one op as the tail (see `execute_group`). An
    /// [`Op::Route`] (a router's next hop) or an
    /// [`Op::SetIpv4EthDstOutput`] (a load balancer's backend) to a
    /// standard port goes straight to its function, as `execute_ops`
    /// would: nothing there reads the nesting depth, so the bucket needs
    /// no context of its own.
    #[inline(always)]
    fn execute_tail_op(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        op: Op,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        match op {
            Op::Route {
                ref dst,
                ref src,
                port,
            } if port < port_no::IN_PORT => {
                self.route(pkt, key, dst, src, port, ctx, out);
            }
            Op::SetIpv4EthDstOutput {
                addr,
                addr_field,
                ref dst,
                port,
            } if port < port_no::IN_PORT => {
                self.set_ipv4_eth_dst_output(pkt, key, addr_field, addr, dst, port, ctx, out);
            }
            _ => {
                let mut c = Ctx {
                    depth: ctx.depth + 1,
                    ..*ctx
                };
                self.execute_op_list(pkt, key, std::slice::from_ref(&op), &mut c, true, out);
            }
        }
    }

    /// Runs the `chosen` buckets of a group in order, each on its own
    /// copy of the packet, but the last one with `tail` (see
    /// `execute_group`).
    #[allow(clippy::too_many_arguments)]
    fn execute_buckets(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        ops: &[Box<[Op]>],
        chosen: crate::group::Chosen,
        ctx: &Ctx,
        tail: bool,
        out: &mut impl Output,
    ) {
        let last = chosen.end.wrapping_sub(1);
        for i in chosen {
            let Some(bucket) = ops.get(i) else { continue };
            if tail && i == last {
                self.execute_tail_bucket(pkt, key, bucket, ctx, out);
                continue;
            }
            let mut c = Ctx {
                depth: ctx.depth + 1,
                ..*ctx
            };
            // Each other bucket works on its own copy, in a buffer reused
            // from the pipeline's scratch pool (no allocation once warm).
            let mut copy = self.scratch.pop().unwrap_or_default();
            if copy.set(pkt.data()).is_err() {
                copy = pkt.clone();
            }
            let mut k = *key;
            self.execute_op_list(&mut copy, &mut k, bucket, &mut c, true, out);
            self.scratch.push(copy);
        }
    }
}

/// Fused ops (`program::fuse`) against the ops they stand for, one by
/// one: same packet bytes, key, flow result and emitted events.
#[cfg(test)]
mod fuse_tests {
    use super::*;
    use crate::port::PortInfo;
    use crate::program::fuse;
    use packet::{Layer, SetField};
    use proptest::prelude::*;

    /// Everything emitted, in order.
    #[derive(Default, Debug, PartialEq, Eq)]
    struct Rec(Vec<(u8, u32, Vec<u8>)>);

    impl Output for Rec {
        fn port(&mut self, port: u32, data: &[u8], _queue: Option<u32>) {
            self.0.push((0, port, data.to_vec()));
        }
        fn packet_in(&mut self, ev: PacketInEvent<'_>) {
            self.0
                .push((ev.reason, ev.max_len.into(), ev.data.to_vec()));
        }
    }

    /// An Ethernet (maybe VLAN-tagged) / IPv4 / UDP or TCP frame with
    /// `ttl`, a few bytes overwritten, maybe truncated.
    fn frame() -> impl Strategy<Value = Vec<u8>> {
        (
            0u8..3,
            any::<bool>(),
            0u8..4,
            proptest::collection::vec((0usize..64, any::<u8>()), 0..3),
            proptest::option::weighted(0.2, 0usize..70),
        )
            .prop_map(|(tags, tcp, ttl, muts, cut)| {
                let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1];
                // None, one VLAN tag, or two (QinQ).
                for t in 0..tags {
                    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x07 + t]);
                }
                f.extend_from_slice(&[0x08, 0x00]);
                let l4_len: u16 = if tcp { 20 } else { 8 };
                let total = 20 + l4_len;
                f.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0, 0, ttl, if tcp { 6 } else { 17 }]);
                let at = f.len() - 8;
                f[at..at + 2].copy_from_slice(&total.to_be_bytes());
                f.extend_from_slice(&[0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
                f.extend_from_slice(&[0x03, 0xe8, 0x00, 0x35]);
                if tcp {
                    f.extend_from_slice(&[
                        0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0x12, 0x34, 0, 0,
                    ]);
                } else {
                    f.extend_from_slice(&[0, 8, 0x12, 0x34]);
                }
                for (at, b) in muts {
                    if let Some(x) = f.get_mut(at) {
                        *x = b;
                    }
                }
                if let Some(n) = cut {
                    f.truncate(n);
                }
                f
            })
    }

    fn mac_pair() -> impl Strategy<Value = Vec<Op>> {
        (any::<[u8; 6]>(), any::<[u8; 6]>(), any::<bool>()).prop_map(|(d, s, dst_first)| {
            let (d, s) = (
                Op::SetField(SetField::EthDst(d)),
                Op::SetField(SetField::EthSrc(s)),
            );
            if dst_first {
                vec![d, s]
            } else {
                vec![s, d]
            }
        })
    }

    fn output() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..5).prop_map(|port| Op::Output { port, max_len: 0 }),
            Just(Op::Output {
                port: port_no::CONTROLLER,
                max_len: 128
            }),
            Just(Op::Output {
                port: port_no::IN_PORT,
                max_len: 0
            }),
        ]
    }

    /// Op lists made of runs `fuse` may fuse and single ops around them.
    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let chunk = prop_oneof![
            3 => (mac_pair(), output()).prop_map(|(m, o)| {
                let mut v = vec![Op::DecNwTtl];
                v.extend(m);
                v.push(o);
                v
            }),
            2 => mac_pair(),
            1 => Just(vec![Op::DecNwTtl]),
            1 => output().prop_map(|o| vec![o]),
            1 => any::<u32>().prop_map(|a| vec![Op::SetField(SetField::Ipv4Dst(a))]),
            1 => any::<u16>().prop_map(|p| vec![Op::SetField(SetField::UdpSrc(p))]),
            1 => any::<u16>().prop_map(|p| vec![Op::SetField(SetField::TcpDst(p))]),
            1 => any::<[u8; 6]>().prop_map(|m| vec![Op::SetField(SetField::EthDst(m))]),
            1 => Just(vec![Op::PopVlan]),
            2 => (any::<[u8; 6]>(), output())
                .prop_map(|(m, o)| vec![Op::SetField(SetField::EthDst(m)), o]),
            3 => (any::<u32>(), any::<bool>(), any::<[u8; 6]>(), output()).prop_map(|(a, dst, m, o)| {
                let a = if dst { SetField::Ipv4Dst(a) } else { SetField::Ipv4Src(a) };
                vec![Op::SetField(a), Op::SetField(SetField::EthDst(m)), o]
            }),
            3 => (any::<u32>(), any::<bool>(), any::<u16>(), 0u8..4).prop_map(|(a, dst, p, k)| {
                let a = if dst { SetField::Ipv4Dst(a) } else { SetField::Ipv4Src(a) };
                let p = [SetField::TcpSrc, SetField::TcpDst, SetField::UdpSrc, SetField::UdpDst]
                    [usize::from(k)](p);
                vec![Op::SetField(a), Op::SetField(p)]
            }),
        ];
        proptest::collection::vec(chunk, 1..5).prop_map(|c| c.concat())
    }

    fn layer_of(i: u8) -> Layer {
        [Layer::None, Layer::L2, Layer::L3, Layer::L4][usize::from(i % 4)]
    }

    /// Runs `ops` on a copy of the packet: (bytes, key, flow, events).
    fn run(
        p: &mut Pipeline,
        pkt: &PacketBuf,
        key: &FlowKey,
        ops: &[Op],
    ) -> (Vec<u8>, FlowKey, Flow, Rec) {
        let (mut pkt, mut key) = (pkt.clone(), *key);
        let mut ctx = Ctx::received(1, 0);
        let mut rec = Rec::default();
        let flow = p.execute_ops(&mut pkt, &mut key, ops, &mut ctx, false, &mut rec);
        (pkt.data().to_vec(), key, flow, rec)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn fused_ops_equal_ops_one_by_one(f in frame(), depth in 0u8..4, ops in ops()) {
            let mut p = Pipeline::default();
            for i in 1..=3 {
                p.ports.insert(i, PortInfo::up());
            }
            let pkt = PacketBuf::from_slice(&f);
            let mut key = FlowKey::new(1);
            let _ = packet::parse_to(pkt.data(), &mut key, layer_of(depth));
            let fused = fuse(&ops);
            prop_assert!(fused.len() <= ops.len());
            let done = run(&mut p, &pkt, &key, &ops);
            let after = done.1;
            prop_assert_eq!(run(&mut p, &pkt, &key, &fused), done);
            // The ops change no key field outside what they say they
            // write (`Op::writes`, which the batch's lookups rely on),
            // fused or not, on a key parsed as deep as they need (as the
            // pipeline parses: `Pipeline::parse_layer`; on a shallower key
            // an op parses further first, which adds fields).
            let need = ops.iter().map(Op::layer).max().unwrap_or(Layer::None);
            let lists: &[&[Op]] = if key.depth >= need { &[&ops, &fused] } else { &[] };
            for &list in lists {
                let mut writes = packet::FieldSet::EMPTY;
                for op in list {
                    writes.insert_all(op.writes());
                }
                for f in packet::Field::ALL {
                    if !writes.contains(f) {
                        prop_assert_eq!(after.present.contains(f), key.present.contains(f), "{:?}", f);
                        prop_assert_eq!(
                            crate::matcher::key_bits(&after, f),
                            crate::matcher::key_bits(&key, f),
                            "{:?} changed, not in {:?}", f, writes
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn fuses_the_runs() {
        let (d, s) = ([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1]);
        let out = |port| Op::Output { port, max_len: 0 };
        let ops = [
            Op::DecNwTtl,
            Op::SetField(SetField::EthSrc(s)),
            Op::SetField(SetField::EthDst(d)),
            out(3),
            Op::SetField(SetField::EthDst(d)),
            Op::SetField(SetField::EthSrc(s)),
            Op::DecNwTtl,
            Op::SetField(SetField::EthSrc(s)),
            Op::SetField(SetField::EthDst(d)),
            out(port_no::CONTROLLER),
            Op::SetField(SetField::Ipv4Dst(7)),
            Op::SetField(SetField::EthDst(d)),
            out(2),
            Op::SetField(SetField::Ipv4Src(8)),
            Op::SetField(SetField::EthDst(d)),
            out(port_no::IN_PORT),
        ];
        assert_eq!(
            &*fuse(&ops),
            &[
                Op::Route {
                    dst: d,
                    src: s,
                    port: 3
                },
                Op::SetMacs { dst: d, src: s },
                Op::DecNwTtl,
                Op::SetMacs { dst: d, src: s },
                out(port_no::CONTROLLER),
                Op::SetIpv4EthDstOutput {
                    addr: 7,
                    addr_field: packet::Field::Ipv4Dst,
                    dst: d,
                    port: 2
                },
                Op::SetField(SetField::Ipv4Src(8)),
                Op::SetField(SetField::EthDst(d)),
                out(port_no::IN_PORT),
            ][..]
        );
    }
}

/// The one-action lists `execute_ops` runs straight (a group, a pop-VLAN,
/// a NAT's rewrite) against the same action run by the op loop (the list
/// with an [`Op::Nop`] in front, which the straight dispatch does not
/// take): same events, frames, results and counters, with a table, an
/// action set or nothing after the list.
#[cfg(test)]
mod direct_tests {
    use super::*;
    use crate::port::PortInfo;
    use ofp::group::{command as gcmd, group_type, Bucket, GroupMod};
    use ofp::instruction::Instruction;
    use ofp::message::{flow_mod_command, FlowMod};
    use proptest::prelude::*;
    use std::net::Ipv4Addr;
    use std::sync::Arc;

    /// Everything emitted, in order.
    #[derive(Default, Debug, PartialEq, Eq)]
    struct Rec(Vec<(u8, u32, Vec<u8>, Option<u32>)>);

    impl Output for Rec {
        fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>) {
            self.0.push((0, port, data.to_vec(), queue));
        }
        fn packet_in(&mut self, ev: PacketInEvent<'_>) {
            self.0
                .push((ev.reason, ev.max_len.into(), ev.data.to_vec(), None));
        }
    }

    fn flow(table_id: u8, m: Vec<OxmField>, instructions: Vec<Instruction>) -> FlowMod {
        crate::tests::fm(flow_mod_command::ADD, table_id, 1, m, instructions)
    }

    fn out(port: u32) -> Action {
        Action::Output { port, max_len: 0 }
    }

    /// Ethernet, maybe one VLAN tag, IPv4 with `ttl`, UDP or TCP.
    fn frame(tag: bool, tcp: bool, ttl: u8) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
        if tag {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x64]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let l4_len: u16 = if tcp { 20 } else { 8 };
        let ip = f.len();
        f.extend_from_slice(&[
            0x45,
            0,
            0,
            0,
            0,
            1,
            0,
            0,
            ttl,
            if tcp { 6 } else { 17 },
            0,
            0,
        ]);
        f[ip + 2..ip + 4].copy_from_slice(&(20 + l4_len).to_be_bytes());
        f.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x03, 0xe8, 0x00, 0x35]);
        if tcp {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0, 64, 0x12, 0x34, 0, 0]);
        } else {
            f.extend_from_slice(&[0, 8, 0x12, 0x34]);
        }
        let ck = packet::checksum::checksum(0, &f[ip..ip + 20]);
        f[ip + 10..ip + 12].copy_from_slice(&ck.to_be_bytes());
        f
    }

    /// A pipeline whose table 0 entry applies one action of `kind`
    /// (0: group, 1: pop-VLAN, 2: NAT rewrite), followed by `then` (0:
    /// nothing, 1: goto table 1, 2: write-actions output), and the op the
    /// list compiles to.
    fn pipeline(kind: u8, then: u8, all: bool) -> (Pipeline, Op) {
        let mut p = Pipeline::default();
        for i in 1..=3 {
            p.ports.insert(i, PortInfo::up());
        }
        let route = vec![
            Action::DecNwTtl,
            Action::SetField(OxmField::EthSrc([2, 0, 0, 0, 0, 0xa], None)),
            Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 0xb], None)),
            out(2),
        ];
        let bucket = |actions| Bucket {
            weight: 0,
            watch_port: port_no::ANY,
            watch_group: ofp::group::group_id::ANY,
            actions,
        };
        let (ty, buckets) = if all {
            (group_type::ALL, vec![bucket(route), bucket(vec![out(3)])])
        } else {
            (group_type::INDIRECT, vec![bucket(route)])
        };
        let gm = GroupMod {
            command: gcmd::ADD,
            group_type: ty,
            group_id: 1,
            buckets,
        };
        p.group_mod(&gm, 0).expect("valid group");
        let (m, actions) = match kind {
            0 => (vec![], vec![Action::Group(1)]),
            1 => (vec![], vec![Action::PopVlan]),
            _ => (
                vec![OxmField::EthType(0x0800), OxmField::IpProto(17)],
                vec![
                    Action::SetField(OxmField::Ipv4Src(Ipv4Addr::new(198, 18, 0, 7), None)),
                    Action::SetField(OxmField::UdpSrc(4321)),
                ],
            ),
        };
        let mut insts = vec![Instruction::ApplyActions(actions)];
        match then {
            1 => insts.push(Instruction::GotoTable(1)),
            2 => insts.push(Instruction::WriteActions(vec![out(3)])),
            _ => {}
        }
        p.flow_mod(&flow(0, m, insts), 0).expect("valid flow");
        p.flow_mod(
            &flow(1, vec![], vec![Instruction::ApplyActions(vec![out(3)])]),
            0,
        )
        .expect("valid flow");
        let op = match p.tables[0]
            .hot(0)
            .and_then(|e| e.program().apply.as_deref())
        {
            Some(&[op]) => op,
            other => panic!("one op expected, got {other:?}"),
        };
        (p, op)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        #[test]
        fn direct_lists_equal_execute_ops(
            kind in 0u8..3,
            then in 0u8..3,
            all in any::<bool>(),
            frames in proptest::collection::vec((any::<bool>(), any::<bool>(), 0u8..3), 1..6),
        ) {
            let (mut direct, op) = pipeline(kind, then, all);
            match (kind, op) {
                (0, Op::Group(1)) | (1, Op::PopVlan) | (2, Op::SetIpv4Port { .. }) => {}
                _ => prop_assert!(false, "kind {} compiled to {:?}", kind, op),
            }
            // The reference: the same entry with [Nop, op], run by the
            // op loop (the op stays the last: a group is the tail).
            let mut general = direct.clone();
            let Some(entry) = general.tables[0].hot_mut(0) else {
                return Err(TestCaseError::fail("no entry"));
            };
            let mut prog = Program::clone(entry.program());
            prog.apply = Some(Box::new([Op::Nop, op]));
            entry.set_program(Arc::new(prog));
            for &(tag, tcp, ttl) in &frames {
                let f = frame(tag, tcp, [1u8, 2, 64][usize::from(ttl)]);
                let (mut a, mut b) = (PacketBuf::from_slice(&f), PacketBuf::from_slice(&f));
                let (mut ra, mut rb) = (Rec::default(), Rec::default());
                let x = direct.process(&mut a, 1, 5, &mut ra).is_ok();
                let y = general.process(&mut b, 1, 5, &mut rb).is_ok();
                prop_assert_eq!(x, y);
                prop_assert_eq!(&ra, &rb);
                prop_assert_eq!(a.data(), b.data());
            }
            let counts = |p: &Pipeline| -> Vec<(u64, u64)> {
                let flows = p.tables().iter().flat_map(|t| {
                    t.entries().map(|e| (e.packet_count(), e.byte_count()))
                });
                let groups = p.groups.iter().flat_map(|g| {
                    std::iter::once(g.counters)
                        .chain(g.bucket_counters.iter().copied())
                        .map(|c| (c.packet_count, c.byte_count))
                });
                flows.chain(groups).collect()
            };
            prop_assert_eq!(counts(&direct), counts(&general));
        }
    }
}

/// `flow_hash_of` against its definition folded word by word (the SELECT
/// bucket a flow takes must not move when the code is reworded).
#[cfg(test)]
mod flow_hash_tests {
    use super::*;
    use proptest::prelude::*;

    /// The hash as first written: `words` (every 64-bit word of the
    /// fields, in order) folded one by one, then mixed.
    fn reference(words: &[u64]) -> u64 {
        let h = words.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &w| {
            (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
        });
        crate::classifier::splitmix64(h)
    }

    proptest! {
        #[test]
        fn flow_hash_of_is_the_word_by_word_fold(
            macs in any::<[u64; 2]>(), eth_type in any::<u16>(), ip_proto in any::<u8>(),
            ipv4 in any::<[u32; 2]>(), ipv6 in proptest::option::of(any::<[u128; 2]>()),
            tp in any::<[u16; 2]>(),
        ) {
            let macs = [macs[0] >> 16, macs[1] >> 16];
            // The words: MACs with eth_type and ip_proto, the IPv4
            // addresses, each IPv6 address (source, then destination)
            // high half first, the ports.
            let mut words = vec![
                macs[0] << 16 | u64::from(eth_type),
                macs[1] << 8 | u64::from(ip_proto),
                u64::from(ipv4[0]) << 32 | u64::from(ipv4[1]),
            ];
            for a in ipv6.into_iter().flatten() {
                words.extend([(a >> 64) as u64, a as u64]);
            }
            words.push(u64::from(tp[0]) << 16 | u64::from(tp[1]));
            prop_assert_eq!(
                flow_hash_of(macs, eth_type, ip_proto, ipv4, ipv6, tp),
                reference(&words)
            );
        }
    }
}
