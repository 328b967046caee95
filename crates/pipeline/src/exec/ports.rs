//! The output action (spec §5.12, §4.5): standard ports and the reserved
//! ones (IN_PORT, ALL, FLOOD, CONTROLLER, TABLE, NORMAL, LOCAL).

use super::*;

impl Pipeline {
    pub(crate) fn packet_in_allowed(&self, in_port: u32) -> bool {
        self.ports
            .get(in_port)
            .is_none_or(|p| p.config & config::NO_PACKET_IN == 0)
    }

    /// Output to `port` (standard or reserved). A standard port, the
    /// common case, is served inline; the reserved ports out of line
    /// (`output_reserved`). `fin`: the output is the packet's last use
    /// (the executor's `tail`), so a standard port gets the buffer itself
    /// ([`Output::port_final`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn output_as(
        &mut self,
        fin: bool,
        pkt: &mut PacketBuf,
        key: &FlowKey,
        port: u32,
        max_len: u16,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        if port >= port_no::IN_PORT {
            self.output_reserved(pkt, key, port, max_len, ctx, out);
        } else if fin {
            self.send_standard_final(pkt, port, ctx.in_port, ctx.queue, out);
        } else {
            self.output_standard(pkt, port, ctx, out);
        }
    }

    /// `output_as` to a reserved port (`IN_PORT` and above).
    #[inline(never)]
    pub(crate) fn output_reserved(
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
    pub(crate) fn output_standard(
        &self,
        pkt: &PacketBuf,
        p: u32,
        ctx: &Ctx,
        out: &mut impl Output,
    ) {
        self.send_standard(pkt, p, ctx.in_port, ctx.queue, out);
    }

    /// `send_standard` as the packet's last use ([`Output::port_final`]):
    /// the outputs that end their packets' trips (the executor's tail).
    #[inline(always)]
    pub(crate) fn send_standard_final(
        &self,
        pkt: &mut PacketBuf,
        p: u32,
        in_port: u32,
        queue: Option<u32>,
        out: &mut impl Output,
    ) {
        if p != in_port && self.ports.get(p).is_some_and(|i| i.can_forward()) {
            out.port_final(p, pkt, queue);
        }
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
}
