//! Packet processing entry points (spec §5.1, §7.3.7): a received packet
//! (parsed as deep as the rules need, admitted or dropped) and a
//! packet-out. Both hand the packet to the one executor (`crate::exec`).

use crate::exec::{Ctx, Hint};
use crate::pipeline::Pipeline;
use crate::table::{FlowTable, Nanos};
use ofp::action::Action;
use ofp::port::config;
use packet::{FlowKey, PacketBuf};

pub use crate::output::{Output, PacketInEvent, Unsupported};

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
        tables: &mut [FlowTable],
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
        self.run_tables_in(tables, pkt, &mut key, ctx, None, None, out);
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
        tables: &mut [FlowTable],
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        now: Nanos,
        hint: Hint<'_>,
        out: &mut impl Output,
    ) {
        // A key made for table 0 holds the ingress port.
        let ctx = Ctx::received(key.in_port, now);
        self.run_tables_in(tables, pkt, key, ctx, hint, None, out);
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
}
