//! The route template's plan, next hops and frame checks (see the
//! `template` module comment).

use crate::chunk::CHUNK;
use crate::classifier::Ref;
use crate::table::FlowTable;
use packet::{ethertype, Field, FieldSet, FlowKey};
/// How the route template serves a batch from one port (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RoutePlan {
    /// The position in table 0 of the entry every packet of the batch
    /// matches there (a goto to `table`); `None` when table 0 is the
    /// routing table.
    pub(super) dispatch: Option<u32>,
    /// The routing table.
    pub(super) table: u8,
}

/// A packet the route template routes: its routing entry's position,
/// the group it goes through (its slot in the group table, `NO_GROUP`
/// for a route in the entry itself) and the next hop's MACs and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hop {
    pub(super) pos: u32,
    pub(super) group: u32,
    pub(super) dst: [u8; 6],
    pub(super) src: [u8; 6],
    pub(super) port: u32,
}

/// `Hop::group` of a route in the entry itself.
pub(super) const NO_GROUP: u32 = u32::MAX;

/// The next hops the route template found for the packets of a chunk
/// (`hops[i]` for packet i when it took it), with the classification's
/// working arrays (per packet: its destination, `None` for a frame the
/// template does not take, and its trie walk's answer), kept in the
/// pipeline between batches (`Pipeline::route_hops`) so that no chunk
/// initialises them (a batch of one packet paid more for that than for
/// its walk). Nothing in them is read before the chunk at hand wrote it.
#[derive(Debug, Clone)]
pub(crate) struct Hops {
    pub(super) hops: [Hop; CHUNK],
    pub(super) dsts: [Option<u32>; CHUNK],
    pub(super) refs: [Ref; CHUNK],
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
pub(super) const PORT_FIELDS: FieldSet =
    FieldSet::of(&[Field::InPort, Field::InPhyPort, Field::Metadata]);

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
pub(super) fn route_dst(data: &[u8]) -> Option<u32> {
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
pub(super) fn ipv4_header(data: &[u8], l3: usize) -> Option<(&[u8; 20], usize, usize)> {
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
