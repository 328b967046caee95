//! Templates: code specialised for one common shape of pipeline, used by
//! [`Pipeline::process_batch`] in place of the general path for the
//! packets it fits, with exactly the same effect (ESwitch's idea: pick the
//! code from the shape of the tables, not from the traffic, so there is no
//! cache an attacker could fill).
//!
//! The general path serves any pipeline: it parses a frame into a
//! ~200-byte `FlowKey`, looks the key up through the table's classifier
//! (whatever its kind), then runs the matched entry's program op by op
//! with an action set, goto and metadata. For an L2 switch's table (MAC
//! -> port) most of that work is generality the packet does not need.
//!
//! # The Ethernet template
//!
//! It serves a batch when
//! - no rule needs more of a frame than its Ethernet header
//!   (`Pipeline::parse_layer` is L2: no match, action, meter or group
//!   installed needs L3), and
//! - table 0's entries other than match-everything ones all match on one
//!   set of fields (one shape) taken from the Ethernet header and the
//!   ingress port: in_port, eth_dst, eth_src, eth_type, vlan_vid,
//!   metadata (`Auto::ethernet_index`: the table's exact index);
//!
//! and within such a batch, a packet when
//! - its frame is at least an Ethernet header, without a VLAN tag, and
//!   not MPLS or PBB (the general parse reads more for those, and may
//!   find them malformed),
//! - the exact index's answer needs no tuple space lookup (no tie with a
//!   match-everything entry of the same priority; `Auto::answer_known`),
//! - and the matched entry's program is one output to a standard port
//!   (`Program::only_output`).
//!
//! For such a packet it reads the header fields straight from the frame
//! into the index's packed key (`Exact::pack_ethernet`: no `FlowKey`),
//! probes, counts the lookup and the entry's hit as `FlowTable::lookup`
//! and `HotEntry::hit` do, and outputs as the general path's lone standard
//! output does. Every other packet takes the general path from the start
//! (the template wrote nothing for it). Packets are handled in batch
//! order either way, so outputs and counters are those of
//! [`Pipeline::process`] packet by packet (`tests::template_props`
//! compares them).
//!
//! When the batch is warmed (big tables, see `batch`), the template
//! classifies a chunk in stages as the warm stages do: every packed key
//! and home slot first, then every probe (`Exact::get_many`), so the
//! cache misses of a chunk's packets overlap.
//!
//! # The route template
//!
//! An IPv4 router's pipeline: table 0 sends the port's packets to a
//! routing table (`in_port=1 -> goto:1`), or is the routing table itself;
//! the routing table holds prefixes of `ipv4_dst` under `eth_type=0x0800`
//! (and perhaps a table-miss entry), and each route's entry hands the
//! packet to its next hop: a group of one bucket that decrements the TTL,
//! rewrites both MACs and outputs (HARMLESS's L3 pipeline; the compiled
//! form of such a bucket is `Op::Route`), or those actions in the entry
//! itself.
//!
//! It serves a batch received on port P when
//! - the deepest layer any rule needs is L3 (`Pipeline::parse_layer`:
//!   no rule looks at L4 headers, so the general parse of a frame stops
//!   after its IP header, and whatever it accepts the template can
//!   check);
//! - either table 0 is a routing table, or table 0 matches on nothing but
//!   the ingress port (so every packet from P finds the same entry) and
//!   P's entry there is a goto to a routing table and nothing else
//!   (`Program::only_goto`);
//! - the routing table's classifier is a trie that alone answers for it
//!   (`Auto::ipv4_routes`: every entry but match-everything ones is an
//!   `ipv4_dst` prefix under `eth_type=0x0800`);
//!
//! and within such a batch, a packet when
//! - its frame is IPv4 without a VLAN tag, with a header the general
//!   parse accepts (version 4, header length at least 20 bytes, a total
//!   length between the header's and the frame's), not a fragment
//!   (`frag_drop` may drop those), with a TTL above 1 (the decrement of
//!   a lower one goes to the controller or nowhere: `invalid_ttl`);
//! - the best entry for its destination (the trie's answer or a
//!   match-everything entry, by rank) runs only apply-actions
//!   (`Program::apply_only`), which are a route (`Op::Route`) to a
//!   standard port, or a group of type INDIRECT or ALL with one bucket
//!   that is such a route.
//!
//! For such a packet it reads the destination straight from the frame,
//! walks the trie with it (`Lpm::lookup_v4_many`: no `FlowKey`, no parse,
//! no context probe), counts both tables' lookups and entries, the group
//! and its bucket, lowers the TTL with the checksum, writes the MACs and
//! outputs, as the general path does for it. A chunk is classified in
//! stages (every frame, every trie walk level by level, every entry),
//! then run in batch order, the template's packets and the others alike.

use crate::batch::CHUNK;
use crate::classifier::{Exact, Hit, Ref};
use crate::process::Output;
use crate::program::Op;
use crate::table::{FlowTable, Nanos};
use crate::Pipeline;
use ofp::group::group_type;
use ofp::port::port_no;
use packet::{ethertype, Field, FieldSet, FlowKey, PacketBuf};

/// A packet a template takes: how it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Forwarded by the Ethernet template.
    Ethernet(Forward),
    /// Routed by the route template (its next hop kept apart, in
    /// `Hops`: a `Fast` stays as small as a `Forward`, which the batch
    /// path copies around).
    Route,
}

/// A packet the template forwards: its entry's position in table 0 and
/// the standard port it goes out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forward {
    pos: u32,
    port: u32,
}

/// Table 0 and its exact index when the Ethernet template can serve a
/// batch of this pipeline (module comment; the caller checked the parse
/// layer).
#[inline(always)]
pub(crate) fn ethernet_table(tables: &[FlowTable]) -> Option<(&FlowTable, &Exact)> {
    let t = tables.first()?;
    Some((t, t.classifier().ethernet_index()?))
}

/// The packed key of an untagged, non-MPLS, non-PBB Ethernet frame
/// received on `in_port`; `None` for any other frame.
#[inline(always)]
fn frame_key(ex: &Exact, data: &[u8], in_port: u32) -> Option<u64> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    if ethertype::is_vlan(et)
        || matches!(et, ethertype::MPLS | ethertype::MPLS_MCAST | ethertype::PBB)
    {
        return None;
    }
    // Six bytes big-endian, as `packet::mac_bits` gives a MAC: one 8-byte
    // load each, the two bytes after the address shifted out.
    let word = |at: usize| {
        let b = eth.get(at..at + 8)?.first_chunk::<8>()?;
        Some(u64::from_be_bytes(*b) >> 16)
    };
    Some(ex.pack_ethernet(in_port, word(0)?, word(6)?, et))
}

/// What table 0 does with a packet whose probe found `hit`: `Some` when
/// the template can forward it.
#[inline(always)]
fn decide(table: &FlowTable, hit: Option<Hit>) -> Option<Forward> {
    let handle = table.classifier().answer_known(hit)??;
    let pos = table.pos_of_handle(handle)?;
    let port = table.hot(pos)?.program.only_output?;
    Some(Forward {
        pos: pos as u32,
        port,
    })
}

/// The template's decision for one frame (`table`, `ex`: from
/// `ethernet_table`).
#[inline(always)]
pub(crate) fn classify(
    table: &FlowTable,
    ex: &Exact,
    data: &[u8],
    in_port: u32,
) -> Option<Forward> {
    decide(table, ex.get(frame_key(ex, data, in_port)?))
}

/// `classify` for a chunk of frames (at most `CHUNK`), its probes staged
/// (module comment): `fwd[i]` for `bufs[i]`.
pub(crate) fn classify_chunk(
    table: &FlowTable,
    ex: &Exact,
    bufs: &[PacketBuf],
    in_port: u32,
    fwd: &mut [Option<Fast>],
) {
    let n = bufs.len().min(fwd.len()).min(CHUNK);
    let mut keys = [None; CHUNK];
    for (k, b) in keys.iter_mut().zip(&bufs[..n]) {
        *k = frame_key(ex, b.data(), in_port);
    }
    let mut hits = [None; CHUNK];
    ex.get_many(&keys[..n], &mut hits[..n]);
    for ((f, k), h) in fwd[..n].iter_mut().zip(&keys[..n]).zip(&hits[..n]) {
        *f = k.and_then(|_| decide(table, *h)).map(Fast::Ethernet);
    }
}

/// How the route template serves a batch from one port (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoutePlan {
    /// The position in table 0 of the entry every packet of the batch
    /// matches there (a goto to `table`); `None` when table 0 is the
    /// routing table.
    dispatch: Option<u32>,
    /// The routing table.
    table: u8,
}

/// A packet the route template routes: its routing entry's position,
/// the group it goes through (its slot in the group table, `NO_GROUP`
/// for a route in the entry itself) and the next hop's MACs and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hop {
    pos: u32,
    group: u32,
    dst: [u8; 6],
    src: [u8; 6],
    port: u32,
}

/// `Hop::group` of a route in the entry itself.
const NO_GROUP: u32 = u32::MAX;

/// The next hops the route template found for the packets of a chunk
/// (`0[i]` for packet i when it took it), kept in the pipeline between
/// batches (`Pipeline::route_hops`) so that no chunk initialises them.
#[derive(Debug, Clone)]
pub(crate) struct Hops([Hop; CHUNK]);

impl Default for Hops {
    fn default() -> Self {
        let none = Hop {
            pos: 0,
            group: NO_GROUP,
            dst: [0; 6],
            src: [0; 6],
            port: 0,
        };
        Hops([none; CHUNK])
    }
}

/// The fields a key made by `FlowKey::new(in_port)` holds as the packet's
/// own key does at table 0: a table matching on these alone gives every
/// packet from a port the answer of that key.
const PORT_FIELDS: FieldSet = FieldSet::of(&[Field::InPort, Field::InPhyPort, Field::Metadata]);

/// The route template's plan for a batch of this pipeline received on
/// `in_port` (module comment; the caller checked the parse layer and the
/// port).
pub(crate) fn route_plan(tables: &[FlowTable], in_port: u32) -> Option<RoutePlan> {
    let t0 = tables.first()?;
    if t0.classifier().ipv4_routes().is_some() {
        return Some(RoutePlan {
            dispatch: None,
            table: 0,
        });
    }
    if !PORT_FIELDS.contains_all(t0.match_fields()) {
        return None;
    }
    let pos = t0.find(&FlowKey::new(in_port))?;
    let table = t0.hot(pos)?.program.only_goto?;
    tables.get(usize::from(table))?.classifier().ipv4_routes()?;
    Some(RoutePlan {
        dispatch: Some(pos as u32),
        table,
    })
}

/// The destination address of a frame the route template may take
/// (module comment: untagged IPv4 whose header the general parse accepts,
/// no fragment, TTL above 1); `None` for any other frame.
#[inline(always)]
fn route_dst(data: &[u8]) -> Option<u32> {
    let f = data.first_chunk::<34>()?;
    if u16::from_be_bytes([f[12], f[13]]) != ethertype::IPV4 {
        return None;
    }
    // As `packet::parse` checks: it reads at most the first 64 KiB.
    let len = data.len().min(0xffff);
    let ihl = usize::from(f[14] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([f[16], f[17]]));
    let frag = u16::from_be_bytes([f[20], f[21]]) & 0x3fff;
    // (A total length within the frame and at least the header's puts
    // the header within the frame too.)
    let ok =
        f[14] >> 4 == 4 && ihl >= 20 && total >= ihl && 14 + total <= len && frag == 0 && f[22] > 1;
    ok.then(|| u32::from_be_bytes([f[30], f[31], f[32], f[33]]))
}

impl Pipeline {
    /// What the route template does with a packet whose trie walk in the
    /// routing table `table` gave `r`: `Some` when it can route it.
    #[inline(always)]
    fn route_hop(&self, table: &FlowTable, r: Ref) -> Option<Hop> {
        let handle = r.better(table.classifier().lookup_any()).some()?.handle;
        let pos = table.pos_of_handle(handle)?;
        let program = &table.hot(pos)?.program;
        if !program.apply_only {
            return None;
        }
        let (group, ops) = match program.apply.as_deref()? {
            &[Op::Group(g)] => {
                let slot = self.groups.slot(g)?;
                let grp = self.groups.at(slot)?;
                if !matches!(grp.group_type, group_type::INDIRECT | group_type::ALL)
                    || grp.buckets.len() != 1
                {
                    return None;
                }
                (slot as u32, grp.bucket(0)?)
            }
            ops => (NO_GROUP, ops),
        };
        match *ops {
            [Op::Route { dst, src, port }] if port < port_no::IN_PORT => Some(Hop {
                pos: pos as u32,
                group,
                dst,
                src,
                port,
            }),
            _ => None,
        }
    }

    /// The route template's decisions for a chunk of frames (at most
    /// `CHUNK`): `fast[i]` for `bufs[i]`, with the next hop of a routed
    /// one in `hops`, in stages (module comment).
    pub(crate) fn classify_route_chunk(
        &self,
        plan: RoutePlan,
        bufs: &[PacketBuf],
        hops: &mut Hops,
        fast: &mut [Option<Fast>],
    ) {
        let Some(table) = self.tables.get(usize::from(plan.table)) else {
            return;
        };
        let Some((lpm, start)) = table.classifier().ipv4_routes() else {
            return;
        };
        let n = bufs.len().min(fast.len()).min(CHUNK);
        let mut dsts = [None; CHUNK];
        for (d, b) in dsts.iter_mut().zip(&bufs[..n]) {
            *d = route_dst(b.data());
        }
        let mut refs = [Ref::NONE; CHUNK];
        lpm.lookup_v4_many(start, &dsts[..n], &mut refs[..n]);
        for (i, (d, r)) in dsts[..n].iter().zip(&refs[..n]).enumerate() {
            fast[i] = match d.and_then(|_| self.route_hop(table, *r)) {
                Some(hop) => {
                    hops.0[i] = hop;
                    Some(Fast::Route)
                }
                None => None,
            };
        }
    }

    /// Routes a packet the route template classified (`hop`, under
    /// `plan`) with the effect of the general path: both tables' lookups
    /// and entries counted, the group and its bucket counted, the TTL
    /// lowered with the checksum, the MACs written, and the output as to
    /// any standard port (`send_standard`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn route_template(
        &mut self,
        tables: &mut [FlowTable],
        plan: RoutePlan,
        pkt: &mut PacketBuf,
        hop: &Hop,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        let len = pkt.len();
        if let (Some(p0), Some(t0)) = (plan.dispatch, tables.first_mut()) {
            count(t0, p0, len, now);
        }
        if let Some(t) = tables.get_mut(usize::from(plan.table)) {
            count(t, hop.pos, len, now);
        }
        if hop.group != NO_GROUP {
            if let Some(g) = self.groups.at_mut(hop.group as usize) {
                g.count(&(0..1), len);
            }
        }
        let data = pkt.data_mut();
        if let Some(h) = data.get_mut(14..).and_then(|h| h.first_chunk_mut::<12>()) {
            packet::rewrite::ipv4_ttl_down(h, h[8]);
        }
        if let Some(h) = data.first_chunk_mut::<12>() {
            packet::rewrite::write_macs(h, &hop.dst, &hop.src);
        }
        self.send_standard(pkt, hop.port, in_port, None, out);
    }

    /// Runs packet `i` of a chunk, which a template took (`f`; `route`:
    /// the batch's route plan and the chunk's next hops, which a
    /// `Fast::Route` comes with).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_fast(
        &mut self,
        tables: &mut [FlowTable],
        route: Option<(RoutePlan, &Hops)>,
        i: usize,
        pkt: &mut PacketBuf,
        f: Fast,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        match (f, route) {
            (Fast::Ethernet(f), _) => {
                if let Some(t0) = tables.first_mut() {
                    self.forward(t0, pkt, f, in_port, now, out);
                }
            }
            (Fast::Route, Some((plan, hops))) => {
                if let Some(hop) = hops.0.get(i) {
                    self.route_template(tables, plan, pkt, hop, in_port, now, out);
                }
            }
            (Fast::Route, None) => {}
        }
    }
}

/// Counts a lookup of `table` that found the entry at `pos`, and the
/// entry's hit, as `FlowTable::lookup` and `HotEntry::hit` do.
#[inline(always)]
fn count(table: &mut FlowTable, pos: u32, len: usize, now: Nanos) {
    table.lookup_known(Some(pos as usize));
    if let Some(e) = table.hot_mut(pos as usize) {
        e.hit(len, now);
    }
}

impl Pipeline {
    /// Forwards a packet the template classified (`f`, from table 0 =
    /// `table`) with the effect of the general path: the lookup and the
    /// match counted, the entry's counters, then the output as to any
    /// standard port (`send_standard`).
    #[inline(always)]
    pub(crate) fn forward(
        &self,
        table: &mut FlowTable,
        pkt: &PacketBuf,
        f: Forward,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        count(table, f.pos, pkt.len(), now);
        self.send_standard(pkt, f.port, in_port, None, out);
    }
}
