//! The route template's classification of a chunk and its run of a
//! packet it took.

use super::ethernet::*;
use super::route::*;
use super::run::*;
use crate::chunk::CHUNK;
use crate::classifier::Ref;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::program::Op;
use crate::table::{FlowTable, Nanos};
use ofp::group::group_type;
use ofp::port::port_no;
use packet::PacketBuf;
impl Pipeline {
    /// What the route template does with a packet whose trie walk in the
    /// routing table `table` gave `r`: `Some` when it can route it.
    #[inline(always)]
    pub(super) fn route_hop(&self, table: &FlowTable, r: Ref) -> Option<Hop> {
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
    pub(super) fn touch_routes(&self, table: &FlowTable, refs: &[Ref]) {
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
    /// any standard port, as the packet's last use (`send_standard_final`).
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
    /// the output as to any standard port, as the packet's last use (`send_standard_final`).
    #[inline(always)]
    pub(super) fn next_hop(
        &mut self,
        pkt: &mut PacketBuf,
        hop: &Hop,
        in_port: u32,
        out: &mut impl Output,
    ) {
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
        self.send_standard_final(pkt, hop.port, in_port, None, out);
    }
}
