//! The executor's lazy key: a packet's `FlowKey` made only when a step
//! needs it, and the tail steps that run on the frame alone.

use super::*;
use crate::classifier::exact::at;
use crate::classifier::fields::FrameFields;
use ofp::group::group_type;

/// A key not made yet: `Some((layer, frame))` while the executor's key
/// holds only the pipeline fields (in_port, in_phy_port, metadata,
/// tunnel_id) of a packet whose frame the caller read into `frame`
/// (`crate::per_table`: a frame the general parse accepts to `layer`).
/// Tables that can answer from the frame are looked up with it
/// (`TableKind::lookup_frame`) while the packet's fields are still the
/// frame's on the fields they match (the rule of [`Hint`]). A tail that
/// is a next hop runs on the frame (`tail_on_frame`). The executor
/// parses the frame into the key (`parse_lazy`) before any other step
/// that reads a packet field: a lookup the frame cannot answer, an
/// extension's, a meter, an action list other than one output to a
/// standard port, the action set. Every step before that (lookups,
/// counters, goto, write-metadata, that output) leaves the frame as it
/// came, so the key parsed then is the one parsed on arrival, with the
/// metadata written since.
pub(crate) type Lazy<'a> = Option<(packet::Layer, &'a FrameFields)>;

/// Makes a lazy key (see [`Lazy`]); nothing for a made one.
#[inline(always)]
pub(super) fn parse_lazy(pkt: &PacketBuf, key: &mut FlowKey, lazy: &mut Lazy<'_>) {
    if let Some((layer, _)) = lazy.take() {
        // (The caller checked the frame parses to `layer`.)
        let _ = packet::continue_to(pkt.data(), key, layer);
    }
}

impl Pipeline {
    /// Runs the action list `ops`, the tail of the packet's trip (nothing
    /// reads the packet or its key after it), on the frame alone when it
    /// is a next hop: an [`Op::Route`] to a standard port, or a group of
    /// type INDIRECT whose bucket is one. `(layer, frame)`: the packet as
    /// it came (its key not made, [`Lazy`]). Returns whether it did; if not,
    /// nothing happened.
    ///
    /// The effect is `execute_ops`': the group and its bucket counted,
    /// the TTL lowered with the header checksum (`dec_nw_ttl`'s fast
    /// path, taken for an IPv4 frame with a TTL above 1; a lower one is
    /// left to the general path, which may send it to the controller),
    /// both MACs written (`set_macs`' fast path) and the output to the
    /// standard port.
    #[inline(always)]
    pub(super) fn tail_on_frame(
        &mut self,
        pkt: &mut PacketBuf,
        (layer, frame): (packet::Layer, &FrameFields),
        ops: &[Op],
        ctx: &Ctx,
        out: &mut impl Output,
    ) -> bool {
        let (slot, op) = match *ops {
            [op @ Op::Route { .. }] => (None, op),
            [Op::Group(g)] => {
                let Some(slot) = self.groups.slot(g) else {
                    return false;
                };
                match self.groups.at(slot) {
                    Some(group) if group.group_type == group_type::INDIRECT => {
                        match group.bucket(0) {
                            Some(&[op @ Op::Route { .. }]) => (Some(slot), op),
                            _ => return false,
                        }
                    }
                    _ => return false,
                }
            }
            _ => return false,
        };
        let Op::Route { dst, src, port } = op else {
            return false;
        };
        // The IPv4 header: after the frame's one 802.1Q tag if it has one
        // (`read_frame`).
        let l3 = if frame.common[at::VLAN_VID] != 0 {
            18
        } else {
            14
        };
        let ttl = pkt.data().get(l3 + 8).copied().unwrap_or(0);
        // (A pipeline parsed to less than L3 has no TTL in its keys:
        // `dec_nw_ttl` fails there, which is the general path's.)
        if port >= ofp::port::port_no::IN_PORT || ttl <= 1 || layer < packet::Layer::L3 {
            return false;
        }
        if let Some(group) = slot.and_then(|s| self.groups.at_mut(s)) {
            group.count(&(0..1), pkt.len());
        }
        let data = pkt.data_mut();
        if let Some(h) = data.get_mut(l3..).and_then(|h| h.first_chunk_mut::<12>()) {
            packet::rewrite::ipv4_ttl_down(h, ttl);
        }
        if let Some(h) = data.first_chunk_mut::<12>() {
            packet::rewrite::write_macs(h, &dst, &src);
        }
        // The packet's last use: the buffer itself may go.
        self.send_standard_final(pkt, port, ctx.in_port, ctx.queue, out);
        true
    }
}
