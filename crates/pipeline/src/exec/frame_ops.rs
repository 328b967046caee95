//! The ops that run on a packet's frame while its key is not made
//! ([`LazyKey`]): each one changes the frame's bytes as the general path's
//! op would (the same rewrites: `packet::rewrite`'s frame halves), and the
//! frame's fields (`FrameFields`) as the key would change, so later tables
//! are still looked up from the frame and a SELECT group hashes the
//! frame's fields.

use super::lazy::{FrameAt, LazyKey};
use super::*;
use crate::classifier::exact::at;
use crate::flow_hash::frame_flow_hash;
use packet::{FieldSet, Layer};

/// The TCP/UDP port field `f` of a frame of this protocol: its offset in
/// the L4 header and its place in `FrameFields`, `None` for a field of
/// another protocol (or no port).
#[inline(always)]
fn port_of(udp: bool, f: Field) -> Option<(usize, usize)> {
    match (udp, f) {
        (true, Field::UdpSrc) | (false, Field::TcpSrc) => Some((0, at::TP_SRC)),
        (true, Field::UdpDst) | (false, Field::TcpDst) => Some((2, at::TP_DST)),
        _ => None,
    }
}

/// The IPv4 address field `f`: its offset in the IPv4 header and its
/// place in `FrameFields`.
#[inline(always)]
fn addr_of(f: Field) -> Option<(usize, usize)> {
    match f {
        Field::Ipv4Src => Some((12, at::IPV4_SRC)),
        Field::Ipv4Dst => Some((16, at::IPV4_DST)),
        _ => None,
    }
}

impl LazyKey<'_> {
    /// Pop-VLAN on the frame: the tag removed as `packet::pop_vlan`
    /// removes the only one; a frame without a tag is left alone (the
    /// general path's pop fails there and is skipped).
    #[inline(always)]
    fn pop_vlan(&mut self, pkt: &mut PacketBuf) -> bool {
        let Some(f) = self.fields() else {
            return false;
        };
        if f.common[at::VLAN_VID] != 0 {
            if pkt.remove(12, 4).is_err() {
                return false;
            }
            if let Some(f) = self.fields_mut(Op::PopVlan.writes()) {
                f.common[at::VLAN_VID] = 0;
            }
        }
        self.deepen(Layer::L2);
        true
    }

    /// A MAC address (`off` 0: eth_dst, 6: eth_src) set on the frame
    /// (and in its fields with `keep`: something may read them after).
    #[inline(always)]
    fn set_mac(&mut self, pkt: &mut PacketBuf, off: usize, m: &[u8; 6], keep: bool) -> bool {
        let (field, i) = if off == 0 {
            (Field::EthDst, at::ETH_DST)
        } else {
            (Field::EthSrc, at::ETH_SRC)
        };
        let Some(h) = pkt.data_mut().get_mut(off..off + 6) else {
            return false;
        };
        h.copy_from_slice(m);
        if !keep {
            return true;
        }
        if let Some(f) = self.fields_mut(FieldSet::of(&[field])) {
            f.common[i] = packet::mac_bits(m);
        }
        self.deepen(Layer::L2);
        true
    }

    /// An IPv4 address (`af`) set on the frame with both checksums
    /// (`set_ipv4_addr`'s fast path's bytes), and in its fields with
    /// `keep`.
    #[inline(always)]
    fn set_ipv4(
        &mut self,
        pkt: &mut PacketBuf,
        fa: FrameAt,
        af: Field,
        a: u32,
        keep: bool,
    ) -> bool {
        let Some((off, i)) = addr_of(af) else {
            return false;
        };
        let ck = Some(fa.l4_checksum());
        if !packet::rewrite::ipv4_addr_at(pkt.data_mut(), fa.l3, off, a, ck) {
            return false;
        }
        self.deepen(Layer::L3);
        if !keep {
            return true;
        }
        if let Some(f) = self.fields_mut(crate::program::with_aliases(af)) {
            f.common[i] = u64::from(a);
        }
        true
    }

    /// A TCP or UDP port (`pf`, of the frame's protocol) set on the frame
    /// with its checksum.
    #[inline(always)]
    fn set_port(&mut self, pkt: &mut PacketBuf, fa: FrameAt, pf: Field, p: u16) -> bool {
        let Some((off, i)) = port_of(fa.udp, pf) else {
            return false;
        };
        if !packet::rewrite::l4_port_at(pkt.data_mut(), fa.l4, fa.udp, off, p) {
            return false;
        }
        self.port_written(pf, i, p);
        true
    }

    /// The fields after port `pf` (at `i` in `FrameFields`) became `p`.
    #[inline(always)]
    fn port_written(&mut self, pf: Field, i: usize, p: u16) {
        if let Some(f) = self.fields_mut(crate::program::with_aliases(pf)) {
            f.common[i] = u64::from(p);
        }
        self.deepen(Layer::L4);
    }

    /// A NAT's rewrite ([`Op::SetIpv4Port`]) on the frame: both fields
    /// and the checksums in one pass (`set_ipv4_port`'s fast path's
    /// bytes). A port of the other protocol is left to the general path.
    #[inline(always)]
    fn nat(
        &mut self,
        pkt: &mut PacketBuf,
        fa: FrameAt,
        af: Field,
        a: u32,
        pf: Field,
        p: u16,
    ) -> bool {
        let (Some((a_off, ai)), Some((p_off, pi))) = (addr_of(af), port_of(fa.udp, pf)) else {
            return false;
        };
        if !packet::rewrite::nat_ipv4_at(pkt.data_mut(), fa.l3, fa.l4, fa.udp, a_off, a, p_off, p) {
            return false;
        }
        if let Some(f) = self.fields_mut(crate::program::with_aliases(af)) {
            f.common[ai] = u64::from(a);
        }
        self.port_written(pf, pi, p);
        true
    }

    /// Dec NW TTL on the frame (`dec_nw_ttl`'s fast path), for a TTL
    /// above 1 (a lower one is left to the general path, which may send
    /// the packet to the controller).
    #[inline(always)]
    fn dec_ttl(&mut self, pkt: &mut PacketBuf, fa: FrameAt) -> bool {
        if !ttl_down_at(pkt.data_mut(), fa.l3) {
            return false;
        }
        self.deepen(Layer::L3);
        true
    }
}

/// Lowers the TTL of the IPv4 header at `l3` of `data`, with the header
/// checksum, when it is above 1; false, with nothing changed, otherwise.
#[inline(always)]
fn ttl_down_at(data: &mut [u8], l3: usize) -> bool {
    let Some(h) = data.get_mut(l3..).and_then(|h| h.first_chunk_mut::<12>()) else {
        return false;
    };
    let ttl = h[8];
    if ttl <= 1 {
        return false;
    }
    packet::rewrite::ipv4_ttl_down(h, ttl);
    true
}

impl Pipeline {
    /// Runs the ops of `ops` (an action list; `tail`: nothing reads the
    /// packet after it) in order on the frame while they are ones the
    /// frame path can do and the key is not made (`lazy`), with the
    /// general path's effect. Returns how many ran: the others are left
    /// to `execute_ops` with the key made. `key` holds the pipeline
    /// fields only (an output to a standard port reads nothing else).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ops_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        lazy: &mut LazyKey<'_>,
        ops: &[Op],
        ctx: &Ctx,
        tail: bool,
        out: &mut impl Output,
    ) -> usize {
        if lazy.fields().is_none() {
            return 0;
        }
        match (tail, ops) {
            (true, &[Op::Group(g)]) => {
                return usize::from(self.group_on_frame(pkt, key, lazy, g, ctx, out));
            }
            (true, [op]) if self.tail_on_frame(pkt, lazy, op, ctx, out) => return 1,
            _ => {}
        }
        let last = ops.len().wrapping_sub(1);
        for (i, op) in ops.iter().enumerate() {
            let fin = tail && i == last;
            let done = match *op {
                Op::Group(g) if fin => self.group_on_frame(pkt, key, lazy, g, ctx, out),
                _ => self.op_on_frame(pkt, key, lazy, op, ctx, fin, out),
            };
            if !done {
                return i;
            }
        }
        ops.len()
    }

    /// The packet's last op on the frame when it is a next hop
    /// ([`Op::Route`], a TTL above 1), a backend's rewrite
    /// ([`Op::SetIpv4EthDstOutput`]) or an output, to a standard port:
    /// the bytes `op_on_frame` writes, without the frame's fields (nothing
    /// reads them after) and with the output as the buffer's last use.
    /// False, with nothing done, for any other op. (A straight path for
    /// the commonest tails, beside `op_on_frame`'s: a one-op list or
    /// bucket skips the op loop and `bucket_on_frame`.)
    #[inline(always)]
    fn tail_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        lazy: &LazyKey<'_>,
        op: &Op,
        ctx: &Ctx,
        out: &mut impl Output,
    ) -> bool {
        let Some(l3) = lazy.l3() else {
            return false;
        };
        let data = pkt.data_mut();
        let port = match *op {
            Op::Route {
                ref dst,
                ref src,
                port,
            } if port < port_no::IN_PORT => {
                if !ttl_down_at(data, l3) {
                    return false;
                }
                if let Some(h) = data.first_chunk_mut::<12>() {
                    packet::rewrite::write_macs(h, dst, src);
                }
                port
            }
            Op::SetIpv4EthDstOutput {
                addr,
                addr_field,
                ref dst,
                port,
            } if port < port_no::IN_PORT => {
                let (Some((off, _)), Some(fa)) = (addr_of(addr_field), lazy.frame_at(data)) else {
                    return false;
                };
                let ck = Some(fa.l4_checksum());
                if !packet::rewrite::ipv4_addr_at(data, fa.l3, off, addr, ck) {
                    return false;
                }
                if let Some(h) = data.first_chunk_mut::<6>() {
                    *h = *dst;
                }
                port
            }
            Op::Output { port, .. } if port < port_no::IN_PORT => port,
            _ => return false,
        };
        self.send_standard_final(pkt, port, ctx.in_port, ctx.queue, out);
        true
    }

    /// One op on the frame (see `ops_on_frame`); false, with nothing
    /// done, when the frame path cannot do it. `fin`: the op is the
    /// packet's last use.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn op_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        lazy: &mut LazyKey<'_>,
        op: &Op,
        ctx: &Ctx,
        fin: bool,
        out: &mut impl Output,
    ) -> bool {
        use packet::SetField as S;
        let Some(fa) = lazy.frame_at(pkt.data()) else {
            return false;
        };
        let std = |port: u32| port < port_no::IN_PORT;
        // Nothing reads the frame's fields after the packet's last use.
        let keep = !fin;
        match *op {
            Op::Output { port, max_len } if std(port) => {
                self.output_as(fin, pkt, key, port, max_len, ctx, out);
                true
            }
            Op::PopVlan => lazy.pop_vlan(pkt),
            Op::SetField(ref sf) => match *sf {
                S::EthDst(ref m) => lazy.set_mac(pkt, 0, m, keep),
                S::EthSrc(ref m) => lazy.set_mac(pkt, 6, m, keep),
                S::Ipv4Src(a) => lazy.set_ipv4(pkt, fa, Field::Ipv4Src, a, keep),
                S::Ipv4Dst(a) => lazy.set_ipv4(pkt, fa, Field::Ipv4Dst, a, keep),
                S::TcpSrc(p) | S::UdpSrc(p) | S::TcpDst(p) | S::UdpDst(p) => {
                    lazy.set_port(pkt, fa, sf.field(), p)
                }
                _ => false,
            },
            Op::SetMacs { ref dst, ref src } => {
                lazy.set_mac(pkt, 0, dst, keep) && lazy.set_mac(pkt, 6, src, keep)
            }
            Op::SetIpv4Port {
                addr,
                port,
                addr_field,
                port_field,
            } => lazy.nat(pkt, fa, addr_field, addr, port_field, port),
            Op::SetEthDstOutput { ref dst, port } if std(port) => {
                let done = lazy.set_mac(pkt, 0, dst, keep);
                if done {
                    self.output_as(fin, pkt, key, port, 0, ctx, out);
                }
                done
            }
            Op::SetIpv4EthDstOutput {
                addr,
                addr_field,
                ref dst,
                port,
            } if std(port) => {
                let done = lazy.set_ipv4(pkt, fa, addr_field, addr, keep)
                    && lazy.set_mac(pkt, 0, dst, keep);
                if done {
                    self.output_as(fin, pkt, key, port, 0, ctx, out);
                }
                done
            }
            Op::Route {
                ref dst,
                ref src,
                port,
            } if std(port) => {
                if !lazy.dec_ttl(pkt, fa) {
                    return false;
                }
                if keep {
                    lazy.set_mac(pkt, 0, dst, keep);
                    lazy.set_mac(pkt, 6, src, keep);
                } else if let Some(h) = pkt.data_mut().first_chunk_mut::<12>() {
                    packet::rewrite::write_macs(h, dst, src);
                }
                self.output_as(fin, pkt, key, port, 0, ctx, out);
                true
            }
            _ => false,
        }
    }

    /// Group `g` as the packet's last use, on the frame: when it takes
    /// one bucket (as `execute_group` chooses it: a SELECT group by the
    /// flow hash of the frame's fields, `frame_flow_hash`, which is the
    /// key's), counted, that bucket's ops run on the frame as far as the
    /// frame path can do them and the rest on the key (`execute_op_list`
    /// at the bucket's depth, as `execute_tail_bucket`). False, with
    /// nothing done, for a group it does not take so.
    #[inline(always)]
    fn group_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        lazy: &mut LazyKey<'_>,
        g: u32,
        ctx: &Ctx,
        out: &mut impl Output,
    ) -> bool {
        let (Some(f), Some(slot)) = (lazy.fields(), self.groups.slot(g)) else {
            return false;
        };
        if ctx.depth >= MAX_DEPTH || lazy.depth < Layer::L3 {
            return false;
        }
        let len = pkt.len();
        // A group of one op (`Group::one_op`: a next hop) runs it with
        // no choice to make.
        if let Some(op) = self.groups.one_op_counted(slot, len) {
            self.one_op_on_frame(pkt, key, lazy, op, ctx, out);
            return true;
        }
        let depth = lazy.depth;
        let Some(chosen) = self.choose_buckets(slot, || frame_flow_hash(f, depth)) else {
            return false;
        };
        let Some(group) = self.groups.at_mut(slot) else {
            return false;
        };
        if chosen.len() != 1 {
            return false;
        }
        group.count(&chosen, len);
        // A bucket of one op (a backend's rewrite) runs from a copy of
        // the op, as in `execute_group`; a longer one is lent out.
        if let Some(&[op]) = group.bucket(chosen.start) {
            self.one_op_on_frame(pkt, key, lazy, op, ctx, out);
        } else if let Some(ops) = group.lend_ops() {
            if let Some(bucket) = ops.get(chosen.start) {
                self.bucket_on_frame(pkt, key, lazy, bucket, ctx, out);
            }
            if let Some(group) = self.groups.at_mut(slot) {
                group.put_back(ops);
            }
        }
        true
    }

    /// A group's chosen bucket of one op `op` as the packet's last use
    /// (`group_on_frame`): straight on the frame for the commonest
    /// (`tail_on_frame`), else as a bucket.
    #[inline(always)]
    fn one_op_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        lazy: &mut LazyKey<'_>,
        op: Op,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        if !self.tail_on_frame(pkt, lazy, &op, ctx, out) {
            self.bucket_on_frame(pkt, key, lazy, std::slice::from_ref(&op), ctx, out);
        }
    }

    /// A group's chosen bucket as the packet's last use (`group_on_frame`):
    /// its ops on the frame as far as the frame path can do them, the
    /// rest with the key made, at the bucket's depth.
    #[inline(always)]
    fn bucket_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        lazy: &mut LazyKey<'_>,
        bucket: &[Op],
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        let mut c = Ctx {
            depth: ctx.depth + 1,
            ..*ctx
        };
        let done = self.ops_on_frame(pkt, key, lazy, bucket, &c, true, out);
        if let Some(rest) = bucket.get(done..).filter(|r| !r.is_empty()) {
            parse_lazy(pkt, key, lazy);
            self.execute_op_list(pkt, key, rest, &mut c, true, out);
        }
    }
}
