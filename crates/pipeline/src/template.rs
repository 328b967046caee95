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
//!
//! # The chain template
//!
//! A pipeline that moves packets from table to table with little on the
//! way: an access gateway (HARMLESS's: table 0 maps `in_port, vlan_vid`
//! to a pop-VLAN and a customer's NAT table, which rewrites the source
//! address and port and goes to a routing table), a load balancer behind
//! an ACL (HARMLESS's `lb_acl`: table 0 allows source blocks to a virtual
//! IP and denies some hosts' ports, table 1 hands each VIP to a SELECT
//! group of backends), or exact tables that end in an output.
//!
//! It serves a batch when the deepest layer any rule needs is L3 or L4,
//! the route template does not serve the batch, and table 0 is a table
//! it can look packets up in (below). Within such a batch, it takes a
//! packet when
//! - its frame is IPv4 with no VLAN tag or one 802.1Q tag (TPID 0x8100),
//!   a header the general parse accepts, not a fragment, carrying TCP or
//!   UDP with a header the general parse accepts at L4 (`chain_frame`);
//! - from table 0 on, each table it reaches either
//!   - is one it looks packets up in: with an exact index whose shape
//!     reads only the fields it reads of a frame (`Exact::common_only`:
//!     in_port, metadata, the MACs, eth_type, vlan_vid, ip_proto, the
//!     IPv4 addresses, the L4 ports), all of which the packet has, and
//!     whose answer needs no tuple space lookup (`Auto::answer_known`);
//!     or without one, when the table matches on those fields alone and
//!     every entry's program is one it can take (`by_fields`,
//!     `Program::chainable`), through the trie and the tuple space
//!     (`Auto::lookup_fields_many`: the same probes as a key's, with the
//!     values read from the frame, `FrameFields`);
//!
//!     where the entry found (there must be one) either ends the trip:
//!     an output to a standard port (`Program::only_output`), nothing at
//!     all (`Program::drops`: a drop), or one group (`Program::only_group`)
//!     whose one bucket for the packet (chosen as the general path
//!     chooses: by the flow hash of the packet's fields there for
//!     SELECT, by liveness for fast-failover) is one output to a standard
//!     port or a backend's rewrite (`Op::SetIpv4EthDstOutput`); or runs at
//!     most one step and a goto (`Program::chain`): nothing, a pop-VLAN of
//!     the frame's tag, or a NAT rewrite (`Op::SetIpv4Port`) of its
//!     protocol's port (at most `CHAIN_MAX` such entries);
//!   - or is a routing table the route template could use
//!     (`Auto::ipv4_routes`), reached without a tag, with a TTL above 1,
//!     whose best entry for the destination (after any NAT on the way)
//!     is a route as the route template takes them: the trip ends.
//!
//! It reads the fields a key would have straight from the frame into the
//! exact indexes' common values (`Exact::pack_common`: no `FlowKey`, no
//! parse), applies each step's change to them (a pop sets vlan_vid to 0,
//! a NAT writes its address and port), and looks the chunk's packets up
//! in rounds, each taking every packet one table further whatever table
//! it is at (every exact probe of the round, their home slots all read
//! before any probe so that their cache misses overlap; then the lookups
//! by fields, all of a table's packets together; then every entry found),
//! the trie walks of the routing table last, together. Then it runs each packet it took in
//! its place in the batch: every table's lookup and entry counted with
//! the frame's length at that table, the tag removed, the NAT written
//! with the checksums (`packet::rewrite::nat_ipv4_at`, the bytes
//! `set_ipv4_port` writes), and the end: the output, the drop (counters
//! only), the group's bucket counted and its rewrite written
//! (`packet::rewrite::ipv4_addr_at`, the bytes `set_ipv4_addr` writes,
//! and the MAC) before the output, or the next hop as the general path
//! does them (`tests::chain_props` and `tests::balancer_props` compare
//! them).
//!
//! Why `by_fields` asks every entry to be one the template can take: the
//! general path looks a packet the template leaves up again from the
//! start, so a table whose entries mostly send packets elsewhere (to the
//! controller, through write-actions) would pay for two lookups. The
//! count of such entries is kept per table (`FlowTable::unchained`), so
//! the choice depends on the rules only, never on the traffic.

use crate::batch::CHUNK;
use crate::classifier::exact::{at, COMMON};
use crate::classifier::fields::{Fields, FrameFields};
use crate::classifier::{Exact, Hit, Ref};
use crate::process::{flow_hash_of, Output};
use crate::program::{ChainStep, Op};
use crate::table::{FlowTable, Nanos};
use crate::Pipeline;
use ofp::group::group_type;
use ofp::port::port_no;
use packet::{ethertype, ipproto, Field, FieldSet, FlowKey, Layer, PacketBuf};

/// A packet a template takes: how it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Forwarded by the Ethernet template.
    Ethernet(Forward),
    /// Taken by the chain template (its way kept apart, in `Chains`).
    Chain,
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
    let (dst, src) = macs(eth);
    Some(ex.pack_ethernet(in_port, dst, src, et))
}

/// The destination and source MACs of an Ethernet header as
/// `packet::mac_bits` gives them (six bytes big-endian): one 8-byte load
/// each, the two bytes after the address shifted out.
#[inline(always)]
fn macs(eth: &[u8; 14]) -> (u64, u64) {
    let word = |b: [u8; 8]| u64::from_be_bytes(b) >> 16;
    let (d, s) = (eth.first_chunk::<8>(), eth.last_chunk::<8>());
    (d.map_or(0, |b| word(*b)), s.map_or(0, |b| word(*b)))
}

/// What table 0 does with a packet whose probe found `hit`: `Some` when
/// the template can forward it.
#[inline(always)]
fn decide(table: &FlowTable, hit: Option<Hit>) -> Option<Forward> {
    let handle = table.classifier().answer_known(hit)??;
    let pos = table.pos_of_handle(handle)?;
    let port = table.hot(pos)?.program().only_output?;
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

/// Which templates serve a batch (`Pipeline::process_batch`): the
/// Ethernet one, the route one under its plan, or the chain one
/// (`chain_serves`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plans {
    pub ethernet: bool,
    pub route: Option<RoutePlan>,
    pub chain: bool,
}

/// What the route or the chain template kept for a chunk's packets
/// (`Pipeline::run_fast` reads the one its `Fast` names).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ways<'a> {
    None,
    Route(RoutePlan, &'a Hops),
    Chain(&'a Chains),
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
/// (`hops[i]` for packet i when it took it), with the classification's
/// working arrays (per packet: its destination, `None` for a frame the
/// template does not take, and its trie walk's answer), kept in the
/// pipeline between batches (`Pipeline::route_hops`) so that no chunk
/// initialises them (a batch of one packet paid more for that than for
/// its walk). Nothing in them is read before the chunk at hand wrote it.
#[derive(Debug, Clone)]
pub(crate) struct Hops {
    hops: [Hop; CHUNK],
    dsts: [Option<u32>; CHUNK],
    refs: [Ref; CHUNK],
}

impl Default for Hops {
    fn default() -> Self {
        let none = Hop {
            pos: 0,
            group: NO_GROUP,
            dst: [0; 6],
            src: [0; 6],
            port: 0,
        };
        Hops {
            hops: [none; CHUNK],
            dsts: [None; CHUNK],
            refs: [Ref::NONE; CHUNK],
        }
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
    let table = t0.hot(pos)?.program().only_goto?;
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
    let (h, _, _) = ipv4_header(data, 14)?;
    (h[8] > 1).then(|| u32::from_be_bytes([h[16], h[17], h[18], h[19]]))
}

/// The IPv4 header at `l3` of a frame, with its length and the
/// datagram's total length, when the general parse accepts it (version
/// 4, header length at least 20 bytes, a total length between the
/// header's and the frame's) and it is no fragment (`frag_drop` may drop
/// those, and a later one has no L4 header); `None` otherwise.
#[inline(always)]
fn ipv4_header(data: &[u8], l3: usize) -> Option<(&[u8; 20], usize, usize)> {
    let h = data.get(l3..)?.first_chunk::<20>()?;
    // As `packet::parse` checks: it reads at most the first 64 KiB.
    let len = data.len().min(0xffff);
    let ihl = usize::from(h[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
    let frag = u16::from_be_bytes([h[6], h[7]]) & 0x3fff;
    // (A total length within the frame and at least the header's puts
    // the header within the frame too.)
    let ok = h[0] >> 4 == 4 && ihl >= 20 && total >= ihl && l3 + total <= len && frag == 0;
    ok.then_some((h, ihl, total))
}

impl Pipeline {
    /// What the route template does with a packet whose trie walk in the
    /// routing table `table` gave `r`: `Some` when it can route it.
    #[inline(always)]
    fn route_hop(&self, table: &FlowTable, r: Ref) -> Option<Hop> {
        let handle = r.better(table.classifier().lookup_any()).some()?.handle;
        let pos = table.pos_of_handle(handle)?;
        let program = table.hot(pos)?.program();
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

    /// Reads the hot record of the entry each trie answer in `refs` (or
    /// the table's match-everything entry) leads to, before `route_hop`
    /// uses any, in pipelines big enough to be warmed (`batch`): with
    /// 100K routes hit in random order each is a cache miss, and
    /// `route_hop`'s body is too long for the CPU to have many packets'
    /// misses in flight at once, where this loop's is short. A/B
    /// (`scripts/ab_pipeline.py --order random`, 4 sessions): l3/100000
    /// with the routes hit in random order 0.71x the time; in the order
    /// of the entries, whose records the hardware prefetches, 1.09x.
    #[inline(always)]
    fn touch_routes(&self, table: &FlowTable, refs: &[Ref]) {
        let any = table.classifier().lookup_any();
        let mut sink = 0u64;
        for r in refs {
            if let Some(r) = r.better(any).some() {
                sink ^= table.touch_handle(r.handle);
            }
        }
        std::hint::black_box(sink);
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
        warm: bool,
    ) {
        let Some(table) = self.tables.get(usize::from(plan.table)) else {
            return;
        };
        let Some((lpm, start)) = table.classifier().ipv4_routes() else {
            return;
        };
        let n = bufs.len().min(fast.len()).min(CHUNK);
        let Hops { hops, dsts, refs } = hops;
        for (d, b) in dsts.iter_mut().zip(&bufs[..n]) {
            *d = route_dst(b.data());
        }
        lpm.lookup_v4_many(start, &dsts[..n], &mut refs[..n]);
        if warm {
            self.touch_routes(table, &refs[..n]);
        }
        for (i, (d, r)) in dsts[..n].iter().zip(&refs[..n]).enumerate() {
            fast[i] = match d.and_then(|_| self.route_hop(table, *r)) {
                Some(hop) => {
                    hops[i] = hop;
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
        if let Some(p0) = plan.dispatch {
            count_in(tables, 0, p0, len, now);
        }
        count_in(tables, plan.table, hop.pos, len, now);
        self.next_hop(pkt, hop, in_port, out);
    }

    /// What a route entry does to an untagged IPv4 frame (the route
    /// template's and the chain template's): the group and its bucket
    /// counted, the TTL lowered with the checksum, the MACs written, and
    /// the output as to any standard port (`send_standard`).
    #[inline(always)]
    fn next_hop(&mut self, pkt: &mut PacketBuf, hop: &Hop, in_port: u32, out: &mut impl Output) {
        if hop.group != NO_GROUP {
            let len = pkt.len();
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

    /// Runs packet `i` of a chunk, which a template took (`f`; `ways`:
    /// what the route template (the batch's plan and the chunk's next
    /// hops) or the chain template (the chunk's ways) kept for it).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_fast(
        &mut self,
        tables: &mut [FlowTable],
        ways: Ways<'_>,
        i: usize,
        pkt: &mut PacketBuf,
        f: Fast,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        match (f, ways) {
            (Fast::Ethernet(f), _) => {
                if let Some(t0) = tables.first_mut() {
                    self.forward(t0, pkt, f, in_port, now, out);
                }
            }
            (Fast::Route, Ways::Route(plan, hops)) => {
                if let Some(hop) = hops.hops.get(i) {
                    self.route_template(tables, plan, pkt, hop, in_port, now, out);
                }
            }
            (Fast::Chain, Ways::Chain(chains)) => {
                if let Some(c) = chains.ways.get(i) {
                    self.chain_template(tables, pkt, c, in_port, now, out);
                }
            }
            // (A `Fast` comes with its template's ways.)
            (Fast::Route | Fast::Chain, _) => {}
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

/// `count` of table `t` of `tables` (if there is one).
#[inline(always)]
fn count_in(tables: &mut [FlowTable], t: u8, pos: u32, len: usize, now: Nanos) {
    if let Some(table) = tables.get_mut(usize::from(t)) {
        count(table, pos, len, now);
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

/// Most entries a packet goes through in the chain template before the
/// one that ends its trip (a dispatch, a pop, a NAT: gateway's three
/// tables use two).
const CHAIN_MAX: usize = 4;

/// The fields the chain template's frames (IPv4 with TCP or UDP) have
/// at every table, among those `Exact::pack_common` reads, besides the
/// L4 ports of their protocol (`UDP_PORTS`, `TCP_PORTS`).
const CHAIN_FIELDS: FieldSet = FieldSet::of(&[
    Field::InPort,
    Field::Metadata,
    Field::EthDst,
    Field::EthSrc,
    Field::EthType,
    Field::VlanVid,
    Field::IpProto,
    Field::Ipv4Src,
    Field::Ipv4Dst,
]);
const UDP_PORTS: FieldSet = FieldSet::of(&[Field::UdpSrc, Field::UdpDst]);
const TCP_PORTS: FieldSet = FieldSet::of(&[Field::TcpSrc, Field::TcpDst]);

/// Every field the chain template knows of a frame (`CHAIN_FIELDS` and
/// both protocols' ports): a table matching on these alone can be looked
/// up with a frame's `FrameFields`.
const FRAME_FIELDS: FieldSet = CHAIN_FIELDS.union(UDP_PORTS).union(TCP_PORTS);

/// Whether the chain template may serve a batch of this pipeline (module
/// comment; the caller checked the port and that the route template does
/// not serve it): the general parse reads L3 or L4, and table 0 is
/// answered by an exact index whose keys the template can make. (A NAT
/// step's L4 key needs the general parse to read L4, which the entry's
/// program makes it do, `Pipeline::parse_layer`.)
pub(crate) fn chain_serves(tables: &[FlowTable], layer: Layer) -> bool {
    matches!(layer, Layer::L3 | Layer::L4)
        && tables.first().is_some_and(|t| {
            t.classifier().exact_index().is_some_and(Exact::common_only) || by_fields(t)
        })
}

/// Whether the chain template looks packets up in `table` with their
/// `FrameFields` when it has no exact index for it: the table matches
/// on no field beyond `FRAME_FIELDS`, and every entry's program is one
/// the template can take (`FlowTable::unchained`), so the lookup it
/// makes is not thrown away for most packets (the general path would
/// look them up again).
#[inline]
fn by_fields(table: &FlowTable) -> bool {
    table.unchained() == 0 && FRAME_FIELDS.contains_all(table.match_fields())
}

/// How a packet's trip through the chain template ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChainEnd {
    /// The entry at `pos` of table `table` outputs it to standard port
    /// `port` (`Program::only_output`).
    Output { table: u8, pos: u32, port: u32 },
    /// Routed by routing table `table` (`Pipeline::route_hop`).
    Route { table: u8, hop: Hop },
    /// Dropped by the entry at `pos` of table `table`
    /// (`Program::drops`).
    Drop { table: u8, pos: u32 },
    /// The entry at `pos` of table `table` hands it to a group
    /// (`Program::only_group`), at `slot` in the group table, which
    /// takes one bucket, `bucket`, that does `act`.
    Group {
        table: u8,
        pos: u32,
        slot: u32,
        bucket: u32,
        act: BucketAct,
    },
}

impl ChainEnd {
    /// The table and position of the entry that ends the trip.
    #[inline(always)]
    fn entry(&self) -> (u8, u32) {
        match *self {
            ChainEnd::Output { table, pos, .. }
            | ChainEnd::Drop { table, pos }
            | ChainEnd::Group { table, pos, .. } => (table, pos),
            ChainEnd::Route { table, hop } => (table, hop.pos),
        }
    }
}

/// What the one bucket a group end takes does (its compiled actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BucketAct {
    /// `Op::Output` to standard port `port`.
    Output { port: u32 },
    /// `Op::SetIpv4EthDstOutput` (a load balancer's backend): the IPv4
    /// address at `a_off` in the IP header (12 source, 16 destination)
    /// set to `addr`, `eth_dst` to `dst`, then out of standard port
    /// `port`.
    Backend {
        addr: u32,
        a_off: u8,
        dst: [u8; 6],
        port: u32,
    },
}

/// A packet the chain template takes: the entries it goes through
/// (table, position, the step its program asks), in order, then its
/// end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chain {
    steps: [(u8, u32, ChainStep); CHAIN_MAX],
    n: u8,
    end: ChainEnd,
}

/// The chains of a chunk's packets (`ways[i]` for packet i when the
/// chain template took it), kept in the pipeline between batches
/// (`Pipeline::chains`) as the route template's `Hops` are, with the
/// classification's working arrays (`scratch`): kept there too, so that
/// no chunk spends time clearing some 7 KB of them.
#[derive(Debug, Clone)]
pub(crate) struct Chains {
    ways: [Chain; CHUNK],
    scratch: Scratch,
}

/// What `Pipeline::classify_chain_chunk` works in. Nothing in it is read
/// before the chunk at hand wrote it, but for `waiting`, which every
/// classification leaves empty.
#[derive(Debug, Clone)]
struct Scratch {
    frames: Frames,
    waiting: Waiting,
    /// Per packet of a round: the handle of the entry it found.
    found: [Option<u32>; CHUNK],
    /// Per packet of a round: its packed key and home slot in its
    /// table's exact index.
    keys: [(u64, usize); CHUNK],
    /// Per packet of a round looked up by its fields (`Way::Fields`),
    /// by its place among its table's packets: the best entry found.
    /// After the rounds, per packet: the routing table's answer.
    refs: [Ref; CHUNK],
    /// The round's tables with packets, lowest first (`..r` of them):
    /// (table, how it is looked up, its packets).
    round: [(u8, Way, Mask); CHUNK],
    /// `dsts[i]`: packet i is at the routing table with this
    /// destination (the frame's, or a NAT's), to be walked in its trie
    /// after the other tables.
    dsts: [Option<u32>; CHUNK],
}

impl Default for Chains {
    fn default() -> Self {
        let none = Chain {
            steps: [(0, 0, ChainStep::Nothing); CHAIN_MAX],
            n: 0,
            end: ChainEnd::Output {
                table: 0,
                pos: 0,
                port: 0,
            },
        };
        Chains {
            ways: [none; CHUNK],
            scratch: Scratch {
                frames: Frames {
                    fields: [FrameFields {
                        common: [0; COMMON],
                        have: FieldSet::EMPTY,
                    }; CHUNK],
                    tagged: [false; CHUNK],
                    ttl: [0; CHUNK],
                },
                waiting: Waiting {
                    at: [0; 256],
                    busy: [0; 4],
                },
                found: [None; CHUNK],
                keys: [(0, 0); CHUNK],
                refs: [Ref::NONE; CHUNK],
                round: [(0, Way::Fields, 0); CHUNK],
                dsts: [None; CHUNK],
            },
        }
    }
}

/// The chunk's frames on their way through the chain template's
/// classification, one slot per packet, kept as arrays of one thing each
/// (a stage reads only what it needs of them), written for a packet
/// when it is read from its frame (`chain_frame`):
/// - `fields[i]`: the values packet i's key has of the common fields at
///   the table it is at (the frame's, then as the steps so far changed
///   them: a pop clears vlan_vid, a NAT writes its address and port), and
///   which fields it has (`CHAIN_FIELDS` and its protocol's ports);
/// - `tagged[i]`: an 802.1Q tag is still in the frame;
/// - `ttl[i]`: its IPv4 TTL.
///
/// Where the packets still on their way are is kept apart, by table
/// (`Waiting`).
#[derive(Debug, Clone)]
struct Frames {
    fields: [FrameFields; CHUNK],
    tagged: [bool; CHUNK],
    ttl: [u8; CHUNK],
}

/// The chunk's packets still on their way, by the table they are at:
/// bit i of `at[t]` for packet i at table t, and bit t of `busy` when
/// `at[t]` has any, so that the lowest table with packets is the first
/// set bit of four words (no scan of the packets).
#[derive(Debug, Clone)]
struct Waiting {
    at: [Mask; 256],
    busy: [u64; 4],
}

impl Waiting {
    /// Packet `i` is at table `t`.
    #[inline(always)]
    fn put(&mut self, t: u8, i: usize) {
        let t = usize::from(t);
        self.at[t] |= 1 << i;
        self.busy[t >> 6] |= 1 << (t & 63);
    }

    /// The lowest table with packets and those packets, taken out.
    #[inline(always)]
    fn take_lowest(&mut self) -> Option<(u8, Mask)> {
        let w = self.busy.iter().position(|&b| b != 0)?;
        let bit = self.busy[w & 3].trailing_zeros() as usize;
        self.busy[w & 3] &= !(1 << bit);
        let t = (w & 3) << 6 | bit;
        Some((t as u8, std::mem::take(&mut self.at[t & 255])))
    }
}

/// A set of a chunk's packets: bit i for packet i.
type Mask = u32;
const _: () = assert!(CHUNK <= Mask::BITS as usize && CHUNK.is_power_of_two());

/// The packets of `m`, lowest first (each below `CHUNK`: the mask keeps
/// the compiler from checking the index it is used as).
#[inline(always)]
fn members(mut m: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i & (CHUNK - 1)
        })
    })
}

/// How the chain template looks the packets at a table up in a round
/// (`Pipeline::classify_chain_chunk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// In the table's exact index (`Exact::common_only`).
    Exact,
    /// By their fields, through the trie and the tuple space (`by_fields`).
    Fields,
}

/// The exact index the chain template looks `table` up in (`Way::Exact`),
/// if it has one whose keys a frame's `FrameFields` make.
#[inline(always)]
fn chain_exact(table: &FlowTable) -> Option<&Exact> {
    table
        .classifier()
        .exact_index()
        .filter(|ex| ex.common_only())
}

/// What the chain template reads of a frame received on `in_port`, into
/// `f`: whether it still has its 802.1Q tag and its TTL, or `None` (and
/// `f` not to be used) unless it is IPv4 with no VLAN tag or one 802.1Q
/// tag (TPID 0x8100), whose header the general parse accepts (as
/// `route_dst` checks), not a fragment, carrying a TCP or UDP header the
/// general parse accepts at L4 (TCP: 20 bytes at least and a data offset
/// within the datagram; UDP: 8 bytes).
#[inline(always)]
fn chain_frame(data: &[u8], in_port: u32, f: &mut FrameFields) -> Option<(bool, u8)> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    let (l3, vid) = match et {
        ethertype::IPV4 => (14, 0),
        ethertype::VLAN => {
            let t = data.get(14..18)?;
            if u16::from_be_bytes([t[2], t[3]]) != ethertype::IPV4 {
                return None;
            }
            (
                18,
                packet::VID_PRESENT | (u16::from_be_bytes([t[0], t[1]]) & 0x0fff),
            )
        }
        _ => return None,
    };
    let (h, ihl, total) = ipv4_header(data, l3)?;
    let seg = data.get(l3 + ihl..l3 + total)?;
    let udp = match h[9] {
        ipproto::UDP if seg.len() >= 8 => true,
        ipproto::TCP => {
            let hlen = usize::from(*seg.get(12)? >> 4) * 4;
            if seg.len() < 20 || hlen < 20 || hlen > seg.len() {
                return None;
            }
            false
        }
        _ => return None,
    };
    let (dst, src) = macs(eth);
    let mut have = CHAIN_FIELDS;
    have.insert_all(if udp { UDP_PORTS } else { TCP_PORTS });
    f.have = have;
    let c = &mut f.common;
    c[at::IN_PORT] = u64::from(in_port);
    c[at::METADATA] = 0;
    c[at::ETH_DST] = dst;
    c[at::ETH_SRC] = src;
    c[at::ETH_TYPE] = u64::from(ethertype::IPV4);
    c[at::VLAN_VID] = u64::from(vid);
    c[at::IP_PROTO] = u64::from(h[9]);
    c[at::IPV4_SRC] = u64::from(u32::from_be_bytes([h[12], h[13], h[14], h[15]]));
    c[at::IPV4_DST] = u64::from(u32::from_be_bytes([h[16], h[17], h[18], h[19]]));
    c[at::TP_SRC] = u64::from(u16::from_be_bytes([seg[0], seg[1]]));
    c[at::TP_DST] = u64::from(u16::from_be_bytes([seg[2], seg[3]]));
    Some((vid != 0, h[8]))
}

/// The TCP/UDP port field a NAT step of a frame of this protocol may
/// write: (offset in the L4 header, the common position), or `None` for
/// a field of another protocol (the template then leaves the packet; an
/// entry whose match lets such a frame reach such a set-field is refused
/// as inconsistent, so this does not happen).
fn nat_port(udp: bool, f: Field) -> Option<(usize, usize)> {
    match (udp, f) {
        (true, Field::UdpSrc) | (false, Field::TcpSrc) => Some((0, at::TP_SRC)),
        (true, Field::UdpDst) | (false, Field::TcpDst) => Some((2, at::TP_DST)),
        _ => None,
    }
}

/// Where the TCP or UDP header of a frame the chain template took starts,
/// its IPv4 header being at `l3`, and whether it is UDP (else TCP).
#[inline(always)]
fn l4_of(data: &[u8], l3: usize) -> Option<(usize, bool)> {
    let (&vihl, &proto) = (data.get(l3)?, data.get(l3 + 9)?);
    Some((l3 + usize::from(vihl & 0x0f) * 4, proto == ipproto::UDP))
}

/// A backend's rewrite (`BucketAct::Backend`) of a frame the chain
/// template took, whose IPv4 header is at `l3`: the bytes
/// `set_ipv4_addr`'s and `set_eth_dst`'s fast paths write (the address
/// with both checksums, the L4 one through the pseudo-header; the
/// destination MAC).
#[inline(always)]
fn backend_at(data: &mut [u8], l3: usize, addr: u32, a_off: usize, dst: &[u8; 6]) {
    let Some((l4, udp)) = l4_of(data, l3) else {
        return;
    };
    // (The frame's TCP or UDP header holds its checksum: `chain_frame`.)
    let ck = if udp {
        (l4 + 6, true)
    } else {
        (l4 + 16, false)
    };
    packet::rewrite::ipv4_addr_at(data, l3, a_off, addr, Some(ck));
    if let Some(h) = data.first_chunk_mut::<6>() {
        *h = *dst;
    }
}

impl Pipeline {
    /// The chain template's decisions for a chunk of frames (at most
    /// `CHUNK`): `fast[i]` for `bufs[i]`, with the way of a taken one in
    /// `chains`. Reads only.
    ///
    /// It goes in rounds, each taking every packet still on its way one
    /// table further, in stages over all of them so that the cache misses
    /// of the chunk's packets overlap, whatever tables they are at (an
    /// access gateway's packets spread over ten NAT tables in the second
    /// round):
    /// 1. per table with packets (`Waiting`), what kind of table it is,
    ///    worked out once for all of its packets; for an exact index,
    ///    every packet's key and home slot;
    /// 2. every home slot read, then every exact probe;
    /// 3. the lookups by fields, a table at a time (trie and tuple space
    ///    for all of its packets);
    /// 4. every entry found: where the packet goes on (to the next round
    ///    at the entry's goto table, or to its end).
    ///
    /// The routing table's trie walks come last, together.
    pub(crate) fn classify_chain_chunk(
        &self,
        bufs: &[PacketBuf],
        in_port: u32,
        chains: &mut Chains,
        fast: &mut [Option<Fast>],
        warm: bool,
    ) {
        let n = bufs.len().min(fast.len()).min(CHUNK);
        let Chains { ways, scratch } = chains;
        let Scratch {
            frames: fr,
            waiting,
            found,
            keys,
            refs,
            round,
            dsts,
        } = scratch;
        for (i, b) in bufs[..n].iter().enumerate() {
            fast[i] = None;
            ways[i].n = 0;
            dsts[i] = None;
            if let Some((tagged, ttl)) = chain_frame(b.data(), in_port, &mut fr.fields[i]) {
                fr.tagged[i] = tagged;
                fr.ttl[i] = ttl;
                waiting.put(0, i);
            }
        }
        // The routing table (`dsts`).
        let mut route_at = None;
        for _ in 0..=CHAIN_MAX {
            // Stage 1.
            let mut r = 0;
            while let Some((t, group)) = waiting.take_lowest() {
                let Some(table) = self.tables.get(usize::from(t)) else {
                    continue;
                };
                let cl = table.classifier();
                let how = if cl.ipv4_routes().is_some() {
                    // A routing table (checked first: a table of one
                    // prefix length also has an exact index).
                    for i in members(group) {
                        if route_at.is_none_or(|rt| rt == t) && !fr.tagged[i] && fr.ttl[i] > 1 {
                            route_at = Some(t);
                            dsts[i] = Some(fr.fields[i].common[at::IPV4_DST] as u32);
                        }
                    }
                    continue;
                } else if let Some(ex) = chain_exact(table) {
                    Some(ex)
                } else if by_fields(table) {
                    None
                } else {
                    continue;
                };
                let mut group = group;
                if let Some(ex) = how {
                    // (A shape's fields beyond the packet's would need a
                    // match OpenFlow's prerequisites refuse; checked as
                    // `pack_key` does all the same: such a packet leaves.)
                    for i in members(group) {
                        match fr.fields[i].pack(ex) {
                            Some(key) => keys[i] = (key, ex.home(key)),
                            None => group &= !(1 << i),
                        }
                    }
                }
                let way = match how {
                    Some(_) => Way::Exact,
                    None => Way::Fields,
                };
                round[r & (CHUNK - 1)] = (t, way, group);
                r += 1;
            }
            let round = &round[..r.min(CHUNK)];
            if round.is_empty() {
                break;
            }
            // Every home slot read before any probe (a loop of loads and
            // nothing else: as many misses under way at once as the core
            // allows).
            let mut sink = 0u64;
            for &(t, way, group) in round {
                if way != Way::Exact {
                    continue;
                }
                if let Some(ex) = self.tables.get(usize::from(t)).and_then(chain_exact) {
                    for i in members(group) {
                        sink ^= ex.touch(keys[i].1);
                    }
                }
            }
            std::hint::black_box(sink);
            // Stages 2 and 3.
            for &(t, way, group) in round {
                let Some(table) = self.tables.get(usize::from(t)) else {
                    continue;
                };
                match way {
                    Way::Exact => {
                        let Some(ex) = chain_exact(table) else {
                            continue;
                        };
                        for i in members(group) {
                            let (key, home) = keys[i];
                            found[i] = table
                                .classifier()
                                .answer_known(ex.get_from(key, home))
                                .flatten();
                        }
                    }
                    Way::Fields => {
                        let mut here = [0u8; CHUNK];
                        let mut m = 0;
                        for i in members(group) {
                            here[m & (CHUNK - 1)] = i as u8;
                            m += 1;
                        }
                        let m = m.min(CHUNK);
                        table.classifier().lookup_fields_many(
                            &fr.fields[..n],
                            &here[..m],
                            &mut refs[..m],
                        );
                        for (&i, r) in here[..m].iter().zip(&refs[..m]) {
                            found[usize::from(i) & (CHUNK - 1)] = r.some().map(|r| r.handle);
                        }
                    }
                }
            }
            // Every entry found read before any is used (its position,
            // then the first word of its hot record), as the home slots
            // above, when the pipeline is big enough to be warmed: at
            // 100K entries hit in random order both are cache misses, and
            // stage 4's body is too long for the CPU to have many
            // packets' misses in flight at once. A/B, 4 sessions, random
            // order: lb_acl/100000 0.89x the time, gateway/100000 0.84x;
            // in the entries' order (prefetched anyway) 1.005x and 0.985x,
            // gateway/10000 1.05x.
            if warm {
                let mut sink = 0u64;
                for &(t, _, group) in round {
                    let Some(table) = self.tables.get(usize::from(t)) else {
                        continue;
                    };
                    for i in members(group) {
                        if let Some(h) = found[i] {
                            sink ^= table.touch_handle(h);
                        }
                    }
                }
                std::hint::black_box(sink);
            }
            // Stage 4.
            for &(t, _, group) in round {
                let Some(table) = self.tables.get(usize::from(t)) else {
                    continue;
                };
                for i in members(group) {
                    self.chain_entry(table, t, i, found[i], fr, ways, fast, waiting);
                }
            }
        }
        // (Empty already: a packet has taken at most `CHAIN_MAX` steps by
        // the last round, so none was put back in it. The next chunk
        // starts from an empty one whatever happens.)
        while waiting.take_lowest().is_some() {}
        // The routing table's trie walks, all at once.
        let Some(rt) = route_at else { return };
        let Some(table) = self.tables.get(usize::from(rt)) else {
            return;
        };
        let Some((lpm, start)) = table.classifier().ipv4_routes() else {
            return;
        };
        lpm.lookup_v4_many(start, &dsts[..n], &mut refs[..n]);
        if warm {
            self.touch_routes(table, &refs[..n]);
        }
        for i in 0..n {
            if dsts[i].is_none() {
                continue;
            }
            if let Some(hop) = self.route_hop(table, refs[i]) {
                ways[i].end = ChainEnd::Route { table: rt, hop };
                fast[i] = Some(Fast::Chain);
            }
        }
    }

    /// Stage 4 of `classify_chain_chunk` for packet `i` at table `t`
    /// (`table`), whose lookup found the entry of handle `found`: the
    /// end of its trip (in `chains` and `fast`), or its step and the
    /// table it goes on to (in `waiting`). A packet the template cannot
    /// take any further is left out of both.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn chain_entry(
        &self,
        table: &FlowTable,
        t: u8,
        i: usize,
        found: Option<u32>,
        fr: &mut Frames,
        ways: &mut [Chain; CHUNK],
        fast: &mut [Option<Fast>],
        waiting: &mut Waiting,
    ) {
        let Some((pos, hot)) = found
            .and_then(|h| table.pos_of_handle(h))
            .and_then(|pos| Some((pos as u32, table.hot(pos)?)))
        else {
            return;
        };
        let c = &mut ways[i];
        // A step and a goto (checked first: the commonest on the
        // way; no program has both a goto and one of the ends;
        // the entry's copy, so that the program is read only at
        // the end).
        let Some((step, next)) = hot.chain else {
            let program = hot.program();
            let end = if let Some(port) = program.only_output {
                Some(ChainEnd::Output {
                    table: t,
                    pos,
                    port,
                })
            } else if program.drops() {
                Some(ChainEnd::Drop { table: t, pos })
            } else if let Some(g) = program.only_group() {
                // Taken if the group's one bucket for it is one
                // the template does.
                self.group_end(g, &fr.fields[i])
                    .map(|(slot, bucket, act)| ChainEnd::Group {
                        table: t,
                        pos,
                        slot,
                        bucket,
                        act,
                    })
            } else {
                None
            };
            if let Some(end) = end {
                c.end = end;
                fast[i] = Some(Fast::Chain);
            }
            return;
        };
        let f = &mut fr.fields[i];
        let ok = match step {
            ChainStep::Nothing => true,
            ChainStep::PopVlan if fr.tagged[i] => {
                fr.tagged[i] = false;
                f.common[at::VLAN_VID] = 0;
                true
            }
            ChainStep::PopVlan => false,
            ChainStep::Nat(nat) => {
                let a = match nat.addr_field {
                    Field::Ipv4Src => Some(at::IPV4_SRC),
                    Field::Ipv4Dst => Some(at::IPV4_DST),
                    _ => None,
                };
                let udp = f.have.contains(Field::UdpSrc);
                match (a, nat_port(udp, nat.port_field)) {
                    (Some(a), Some((_, p))) => {
                        f.common[a] = u64::from(nat.addr);
                        f.common[p] = u64::from(nat.port);
                        true
                    }
                    _ => false,
                }
            }
        };
        if !ok || usize::from(c.n) == CHAIN_MAX {
            return;
        }
        c.steps[usize::from(c.n)] = (t, pos, step);
        c.n += 1;
        waiting.put(next, i);
    }

    /// What group `g` does with a frame whose fields are `f` at the
    /// group, when the chain template can do it: the group's slot, the
    /// one bucket it takes (as `execute_group` chooses: by the flow hash
    /// of those fields for SELECT, by liveness for FF), and that bucket's
    /// one op, an output to a standard port or a backend's rewrite and
    /// output (`BucketAct`). `None` for anything else.
    fn group_end(&self, g: u32, f: &FrameFields) -> Option<(u32, u32, BucketAct)> {
        let slot = self.groups.slot(g)?;
        let group = self.groups.at(slot)?;
        let c = &f.common;
        let hash = || {
            flow_hash_of(
                [c[at::ETH_SRC], c[at::ETH_DST]],
                c[at::ETH_TYPE] as u16,
                c[at::IP_PROTO] as u8,
                [c[at::IPV4_SRC] as u32, c[at::IPV4_DST] as u32],
                None,
                [c[at::TP_SRC] as u16, c[at::TP_DST] as u16],
            )
        };
        let chosen = self.choose_buckets(slot, hash)?;
        if chosen.len() != 1 {
            return None;
        }
        let act = match *group.bucket(chosen.start)? {
            [Op::Output { port, .. }] if port < port_no::IN_PORT => BucketAct::Output { port },
            [Op::SetIpv4EthDstOutput {
                addr,
                addr_field,
                dst,
                port,
            }] if port < port_no::IN_PORT => BucketAct::Backend {
                addr,
                a_off: packet::rewrite::ipv4_addr_offset(addr_field)? as u8,
                dst,
                port,
            },
            _ => return None,
        };
        Some((slot as u32, chosen.start as u32, act))
    }

    /// Runs a packet the chain template classified (`c`) with the effect
    /// of the general path: each table's lookup and entry counted with
    /// the packet's length there, each step done to the frame (the tag
    /// removed as `packet::rewrite::pop_vlan` removes it, the NAT's
    /// rewrite as `set_ipv4_port`'s fast path writes it), then the end:
    /// the output, or the route as the route template does it.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn chain_template(
        &mut self,
        tables: &mut [FlowTable],
        pkt: &mut PacketBuf,
        c: &Chain,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        let mut l3 = 14;
        if pkt.data().get(12..14) == Some(&ethertype::VLAN.to_be_bytes()[..]) {
            l3 = 18;
        }
        for &(t, pos, step) in &c.steps[..usize::from(c.n)] {
            count_in(tables, t, pos, pkt.len(), now);
            match step {
                ChainStep::Nothing => {}
                ChainStep::PopVlan => {
                    if pkt.remove(12, 4).is_ok() {
                        l3 = 14;
                    }
                }
                ChainStep::Nat(nat) => {
                    let data = pkt.data_mut();
                    let Some((l4, udp)) = l4_of(data, l3) else {
                        continue;
                    };
                    let a_off = packet::rewrite::ipv4_addr_offset(nat.addr_field);
                    if let (Some(a_off), Some((p_off, _))) = (a_off, nat_port(udp, nat.port_field))
                    {
                        let (a, p) = (nat.addr, nat.port);
                        packet::rewrite::nat_ipv4_at(data, l3, l4, udp, a_off, a, p_off, p);
                    }
                }
            }
        }
        let len = pkt.len();
        let (t, pos) = c.end.entry();
        count_in(tables, t, pos, len, now);
        match c.end {
            ChainEnd::Output { port, .. } => self.send_standard(pkt, port, in_port, None, out),
            ChainEnd::Route { hop, .. } => self.next_hop(pkt, &hop, in_port, out),
            ChainEnd::Drop { .. } => {}
            ChainEnd::Group {
                slot, bucket, act, ..
            } => {
                if let Some(g) = self.groups.at_mut(slot as usize) {
                    let b = bucket as usize;
                    g.count(&(b..b + 1), len);
                }
                let port = match act {
                    BucketAct::Output { port } => port,
                    BucketAct::Backend {
                        addr,
                        a_off,
                        dst,
                        port,
                    } => {
                        let data = pkt.data_mut();
                        backend_at(data, l3, addr, usize::from(a_off), &dst);
                        port
                    }
                };
                self.send_standard(pkt, port, in_port, None, out);
            }
        }
    }
}
