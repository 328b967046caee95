//! Actions (spec §5.12) executed in order on a packet: the op dispatch of
//! an apply-actions list, a packet-out's list, an action set's entries and
//! a bucket's list, with the fused ops of `program::fuse`.

use super::*;

impl Pipeline {
    /// Executes a wire-form action list in order, compiling each action
    /// as it goes (no allocation): for action lists that were not compiled
    /// ahead (packet-out).
    pub(crate) fn execute_actions(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        actions: &[Action],
        ctx: &mut Ctx,
        out: &mut impl Output,
    ) -> Flow {
        for a in actions {
            let op = Op::compile(a, &self.exts);
            if self.execute_ops(pkt, key, std::slice::from_ref(&op), ctx, false, out) == Flow::Stop
            {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }

    /// Executes compiled actions in order on the packet. `tail`: nothing
    /// reads the packet (or its key) after the last of `ops`, so a group
    /// there may run its bucket on the packet itself, and an output there
    /// hands the buffer over (`Output::port_final`).
    ///
    /// The lists of one action that the tables of routers, load balancers
    /// and gateways apply (a group, a pop-VLAN, a NAT's rewrite) go
    /// straight to it here, inline in the caller; any other list goes to
    /// `execute_op_list`, out of line. (A group, a pop-VLAN or a NAT's
    /// rewrite never stops the packet; a rewrite that does not apply is
    /// skipped, as the op loop does.)
    #[inline(always)]
    pub(crate) fn execute_ops(
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
    pub(crate) fn execute_op_list(
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
            return self.route(pkt, key, dst, src, port, ctx, tail, out);
        }
        let last = ops.len().wrapping_sub(1);
        for (i, op) in ops.iter().enumerate() {
            let r: Result<(), RewriteError> = match *op {
                Op::Output { port, max_len } => {
                    self.output_as(tail && i == last, pkt, key, port, max_len, ctx, out);
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
                Op::Ext(ref e) => {
                    self.execute_ext(e, key, ctx.now);
                    Ok(())
                }
                Op::SetMacs { ref dst, ref src } => packet::set_macs(pkt, key, dst, src),
                Op::Route {
                    ref dst,
                    ref src,
                    port,
                } => {
                    let fin = tail && i == last;
                    if self.route(pkt, key, dst, src, port, ctx, fin, out) == Flow::Stop {
                        return Flow::Stop;
                    }
                    Ok(())
                }
                Op::SetEthDstOutput { ref dst, port } => {
                    let _ = packet::set_eth_dst(pkt, key, dst);
                    self.output_as(tail && i == last, pkt, key, port, 0, ctx, out);
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
                    let fin = tail && i == last;
                    self.set_ipv4_eth_dst_output(
                        pkt, key, addr_field, addr, dst, port, ctx, fin, out,
                    );
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

    /// [`Op::Route`]: dec NW TTL, set both MACs, output to `port` (the
    /// packet's last use with `fin`, see `output_as`).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn route(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        dst: &[u8; 6],
        src: &[u8; 6],
        port: u32,
        ctx: &Ctx,
        fin: bool,
        out: &mut impl Output,
    ) -> Flow {
        // As the three ops would: an expired TTL stops here, another
        // error of the decrement is skipped.
        if let Err(RewriteError::TtlExpired(_)) = packet::dec_nw_ttl(pkt, key) {
            self.invalid_ttl(pkt, key, ctx, out);
            return Flow::Stop;
        }
        let _ = packet::set_macs(pkt, key, dst, src);
        self.output_as(fin, pkt, key, port, 0, ctx, out);
        Flow::Continue
    }

    /// [`Op::SetIpv4EthDstOutput`]: set the address, set `eth_dst`,
    /// output to `port` (the packet's last use with `fin`). As the three
    /// ops would: a set-field that fails (neither can fail for the TTL) is
    /// skipped.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn set_ipv4_eth_dst_output(
        &mut self,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        addr_field: Field,
        addr: u32,
        dst: &[u8; 6],
        port: u32,
        ctx: &Ctx,
        fin: bool,
        out: &mut impl Output,
    ) {
        let _ = packet::rewrite::set_ipv4_addr(pkt, key, addr_field, addr);
        let _ = packet::set_eth_dst(pkt, key, dst);
        self.output_as(fin, pkt, key, port, 0, ctx, out);
    }

    pub(crate) fn invalid_ttl(
        &mut self,
        pkt: &PacketBuf,
        key: &FlowKey,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
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
}
