//! The executor's lazy key: a packet's `FlowKey` made only when a step
//! needs it, the lookups from the frame meanwhile, and the ops that run on
//! the frame alone (`frame_ops`).

use super::*;
use crate::classifier::exact::at;
use crate::classifier::fields::FrameFields;
use packet::{FieldSet, Layer};

/// A key not made yet: `Some((layer, frame))` while the executor's key
/// holds only the pipeline fields (in_port, in_phy_port, metadata,
/// tunnel_id) of a packet whose frame the caller read into `frame`
/// (`crate::per_table`: a frame the general parse accepts to `layer`).
/// The executor keeps it as a [`LazyKey`].
pub(crate) type Lazy<'a> = Option<(Layer, &'a FrameFields)>;

/// The executor's state of a lazy key (see [`Lazy`]) through a packet's
/// trip.
///
/// Tables that can answer from the frame are looked up with its fields
/// (`TableKind::lookup_frame`) while those are the packet's on the fields
/// the table matches: no entry run so far may have written one of them
/// (the rule of [`Hint`]), but by the ops run on the frame (`changed`),
/// whose effect the fields hold. The ops the frame path can do run on the
/// frame (`frame_ops`: pop-VLAN, set-field of MACs, IPv4 addresses and
/// TCP/UDP ports with their checksums, an output to a standard port, a
/// next hop, a group with one bucket at the tail). The executor parses
/// the frame into the key (`parse_lazy`) before any other step that reads
/// a packet field: a lookup the frame cannot answer, an extension's, a
/// meter, an op the frame path cannot do, the action set. Every step
/// before that either leaves the frame alone (lookups, counters, goto,
/// write-metadata) or changes it as the general path would have changed
/// the packet, so the key parsed then from the frame as it is, as deep as
/// the general path's key would be by then (`depth`), is the general
/// path's key at that point, with the metadata written since.
#[derive(Debug)]
pub(crate) struct LazyKey<'a> {
    /// `Some((layer, fields))` while the key is not made: the layer the
    /// pipeline parses to, and the frame's fields as read.
    at: Lazy<'a>,
    /// The frame's fields as the ops run on the frame left them; `None`
    /// while no op changed one (`at`'s then).
    own: Option<FrameFields>,
    /// How deep the general path's key would be parsed by now: the
    /// pipeline's layer, or deeper when a rewrite done on the frame would
    /// have continued the key's parse (`packet::rewrite`'s `ensure`).
    pub(super) depth: Layer,
    /// The key fields the ops run on the frame changed (`own` holds their
    /// values).
    changed: FieldSet,
}

impl<'a> LazyKey<'a> {
    #[inline(always)]
    pub(crate) fn new(lazy: Lazy<'a>) -> LazyKey<'a> {
        LazyKey {
            at: lazy,
            own: None,
            depth: lazy.map_or(Layer::None, |(layer, _)| layer),
            changed: FieldSet::EMPTY,
        }
    }

    /// The frame's fields as they are now, while the key is not made.
    #[inline(always)]
    pub(super) fn fields(&self) -> Option<&FrameFields> {
        let (_, f) = self.at?;
        Some(self.own.as_ref().unwrap_or(f))
    }

    /// The frame's fields to look a table matching `m` up with, when
    /// they are the packet's on those (type comment): `written`, the
    /// fields the entries run so far may have written.
    #[inline(always)]
    pub(super) fn for_lookup(&self, written: FieldSet, m: FieldSet) -> Option<&FrameFields> {
        if !written.is_empty() {
            let mut w = written;
            w.remove_all(self.changed);
            if w.intersects(m) {
                return None;
            }
        }
        self.fields()
    }

    /// The frame's fields for an op about to change `changes` of them,
    /// recorded as changed (copied out of the caller's array the first
    /// time).
    #[inline(always)]
    pub(super) fn fields_mut(&mut self, changes: FieldSet) -> Option<&mut FrameFields> {
        let (_, f) = self.at?;
        self.changed.insert_all(changes);
        // (Copied only here, in place: `get_or_insert(*f)` would copy
        // every time, and `self.own = Some(*f)` copies twice, through a
        // temporary.)
        #[allow(clippy::unnecessary_lazy_evaluations)]
        Some(self.own.get_or_insert_with(|| *f))
    }

    /// The key's parse deepened to `layer` (a rewrite's `ensure`).
    #[inline(always)]
    pub(super) fn deepen(&mut self, layer: Layer) {
        self.depth = self.depth.max(layer);
    }

    /// The frame's layout now (`FrameAt`), while the key is not made.
    #[inline(always)]
    pub(super) fn frame_at(&self, data: &[u8]) -> Option<FrameAt> {
        let l3 = self.l3()?;
        let ihl = usize::from(data.get(l3)? & 0x0f) * 4;
        Some(FrameAt {
            l3,
            l4: l3 + ihl,
            udp: self.fields()?.have.contains(Field::UdpSrc),
        })
    }

    /// Where the frame's IPv4 header starts now, while the key is not
    /// made: after its one 802.1Q tag if it still has it (`read_frame`,
    /// and a pop clears vlan_vid).
    #[inline(always)]
    pub(super) fn l3(&self) -> Option<usize> {
        let f = self.fields()?;
        Some(if f.common[at::VLAN_VID] != 0 { 18 } else { 14 })
    }
}

/// Where a lazy key's frame (IPv4 with TCP or UDP, its TCP header of 20
/// bytes at least or its UDP header of 8 within the datagram:
/// `read_frame`) has its headers now.
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameAt {
    pub(super) l3: usize,
    pub(super) l4: usize,
    /// UDP, else TCP.
    pub(super) udp: bool,
}

impl FrameAt {
    /// Where the L4 checksum is and whether it is UDP's (which has 0 for
    /// "none"), as `packet::rewrite::ipv4_addr_at` takes it.
    #[inline(always)]
    pub(super) fn l4_checksum(&self) -> (usize, bool) {
        if self.udp {
            (self.l4 + 6, true)
        } else {
            (self.l4 + 16, false)
        }
    }
}

/// Makes a lazy key (see [`LazyKey`]); nothing for a made one.
#[inline(always)]
pub(super) fn parse_lazy(pkt: &PacketBuf, key: &mut FlowKey, lazy: &mut LazyKey<'_>) {
    if lazy.at.take().is_some() {
        // (The caller checked the frame parses to its layer, and the ops
        // run on it leave it so.)
        let _ = packet::continue_to(pkt.data(), key, lazy.depth);
    }
}
