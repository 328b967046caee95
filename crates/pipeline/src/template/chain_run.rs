//! The chain template's classification of a chunk, in rounds, and its
//! run of a packet it took.

use super::chain::*;
use super::ethernet::*;
use super::run::*;
use crate::chunk::CHUNK;
use crate::classifier::exact::at;
use crate::classifier::fields::{Fields, FrameFields};
use crate::flow_hash::flow_hash_of;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::program::{ChainStep, Op};
use crate::table::{FlowTable, Nanos};
use ofp::port::port_no;
use packet::{ethertype, Field, PacketBuf};
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
    pub(super) fn chain_entry(
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
    pub(super) fn group_end(&self, g: u32, f: &FrameFields) -> Option<(u32, u32, BucketAct)> {
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
            ChainEnd::Output { port, .. } => {
                self.send_standard_final(pkt, port, in_port, None, out)
            }
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
                self.send_standard_final(pkt, port, in_port, None, out);
            }
        }
    }
}
