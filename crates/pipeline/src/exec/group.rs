//! The group action (spec §5.6): the chosen buckets, each applied as an
//! action set to its own copy of the packet (or to the packet itself when
//! nothing reads it afterwards).

use super::*;

impl Pipeline {
    /// Runs group `g`: each chosen bucket's actions, applied as an action
    /// set (spec §5.6.1), act on their own copy of the packet, so neither
    /// the other buckets nor the actions after the group see what a
    /// bucket changed. With `tail` (nothing reads the packet after the
    /// group) the last chosen bucket acts on the packet itself instead:
    /// nobody could tell the difference, and the one bucket of an
    /// INDIRECT or SELECT group then costs no copy.
    pub(crate) fn execute_group(
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
        if tail {
            // A group of one op (`Group::one_op`: a next hop) runs it
            // with no choice to make, as the one bucket below would.
            if let Some(op) = self.groups.one_op_counted(slot, len) {
                self.execute_tail_op(pkt, key, op, ctx, out);
                return;
            }
        }
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
    /// general path's choice).
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
    pub(crate) fn execute_tail_bucket(
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
    pub(crate) fn execute_tail_op(
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
                self.route(pkt, key, dst, src, port, ctx, true, out);
            }
            Op::SetIpv4EthDstOutput {
                addr,
                addr_field,
                ref dst,
                port,
            } if port < port_no::IN_PORT => {
                self.set_ipv4_eth_dst_output(pkt, key, addr_field, addr, dst, port, ctx, true, out);
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
    pub(crate) fn execute_buckets(
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
