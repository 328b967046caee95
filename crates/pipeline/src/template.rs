//! Templates: code specialised for one common shape of pipeline, used by
//! [`Pipeline::process_batch`] in place of the general path for the
//! packets it fits, with exactly the same effect (ESwitch's idea: pick the
//! code from the shape of the tables, not from the traffic, so there is no
//! cache an attacker could fill).
//!
//! The general path serves any pipeline: it parses a frame into a
//! ~200-byte `FlowKey`, looks the key up through the table's classifier
//! (whatever its kind), then runs the matched entry's program op by op
//! with an action set, goto and metadata. For an L2 switch's table (MAC
//! -> port) most of that work is generality the packet does not need.
//!
//! # The Ethernet template
//!
//! It serves a batch when
//! - no rule needs more of a frame than its Ethernet header
//!   (`Pipeline::parse_layer` is L2: no match, action, meter or group
//!   installed needs L3), and
//! - table 0's entries other than match-everything ones all match on one
//!   set of fields (one shape) taken from the Ethernet header and the
//!   ingress port: in_port, eth_dst, eth_src, eth_type, vlan_vid,
//!   metadata (`Auto::ethernet_index`: the table's exact index);
//!
//! and within such a batch, a packet when
//! - its frame is at least an Ethernet header, without a VLAN tag, and
//!   not MPLS or PBB (the general parse reads more for those, and may
//!   find them malformed),
//! - the exact index's answer needs no tuple space lookup (no tie with a
//!   match-everything entry of the same priority; `Auto::answer_known`),
//! - and the matched entry's program is one output to a standard port
//!   (`Program::only_output`).
//!
//! For such a packet it reads the header fields straight from the frame
//! into the index's packed key (`Exact::pack_ethernet`: no `FlowKey`),
//! probes, counts the lookup and the entry's hit as `FlowTable::lookup`
//! and `HotEntry::hit` do, and outputs as the general path's lone standard
//! output does. Every other packet takes the general path from the start
//! (the template wrote nothing for it). Packets are handled in batch
//! order either way, so outputs and counters are those of
//! [`Pipeline::process`] packet by packet (`tests::template_props`
//! compares them).
//!
//! When the batch is warmed (big tables, see `batch`), the template
//! classifies a chunk in stages as the warm stages do: every packed key
//! and home slot first, then every probe (`Exact::get_many`), so the
//! cache misses of a chunk's packets overlap.

use crate::batch::CHUNK;
use crate::classifier::{Exact, Hit};
use crate::process::Output;
use crate::table::{FlowTable, Nanos};
use crate::Pipeline;
use packet::{ethertype, PacketBuf};

/// A packet the template forwards: its entry's position in table 0 and
/// the standard port it goes out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forward {
    pos: u32,
    port: u32,
}

/// Table 0 and its exact index when the Ethernet template can serve a
/// batch of this pipeline (module comment; the caller checked the parse
/// layer).
#[inline(always)]
pub(crate) fn ethernet_table(tables: &[FlowTable]) -> Option<(&FlowTable, &Exact)> {
    let t = tables.first()?;
    Some((t, t.classifier().ethernet_index()?))
}

/// The packed key of an untagged, non-MPLS, non-PBB Ethernet frame
/// received on `in_port`; `None` for any other frame.
#[inline(always)]
fn frame_key(ex: &Exact, data: &[u8], in_port: u32) -> Option<u64> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    if ethertype::is_vlan(et)
        || matches!(et, ethertype::MPLS | ethertype::MPLS_MCAST | ethertype::PBB)
    {
        return None;
    }
    // Six bytes big-endian, as `packet::mac_bits` gives a MAC: one 8-byte
    // load each, the two bytes after the address shifted out.
    let word = |at: usize| {
        let b = eth.get(at..at + 8)?.first_chunk::<8>()?;
        Some(u64::from_be_bytes(*b) >> 16)
    };
    Some(ex.pack_ethernet(in_port, word(0)?, word(6)?, et))
}

/// What table 0 does with a packet whose probe found `hit`: `Some` when
/// the template can forward it.
#[inline(always)]
fn decide(table: &FlowTable, hit: Option<Hit>) -> Option<Forward> {
    let handle = table.classifier().answer_known(hit)??;
    let pos = table.pos_of_handle(handle)?;
    let port = table.hot(pos)?.program.only_output?;
    Some(Forward {
        pos: pos as u32,
        port,
    })
}

/// The template's decision for one frame (`table`, `ex`: from
/// `ethernet_table`).
#[inline(always)]
pub(crate) fn classify(
    table: &FlowTable,
    ex: &Exact,
    data: &[u8],
    in_port: u32,
) -> Option<Forward> {
    decide(table, ex.get(frame_key(ex, data, in_port)?))
}

/// `classify` for a chunk of frames (at most `CHUNK`), its probes staged
/// (module comment): `fwd[i]` for `bufs[i]`.
pub(crate) fn classify_chunk(
    table: &FlowTable,
    ex: &Exact,
    bufs: &[PacketBuf],
    in_port: u32,
    fwd: &mut [Option<Forward>],
) {
    let n = bufs.len().min(fwd.len()).min(CHUNK);
    let mut keys = [None; CHUNK];
    for (k, b) in keys.iter_mut().zip(&bufs[..n]) {
        *k = frame_key(ex, b.data(), in_port);
    }
    let mut hits = [None; CHUNK];
    ex.get_many(&keys[..n], &mut hits[..n]);
    for ((f, k), h) in fwd[..n].iter_mut().zip(&keys[..n]).zip(&hits[..n]) {
        *f = k.and_then(|_| decide(table, *h));
    }
}

impl Pipeline {
    /// Forwards a packet the template classified (`f`, from table 0 =
    /// `table`) with the effect of the general path: the lookup and the
    /// match counted, the entry's counters, then the output as to any
    /// standard port (`send_standard`).
    #[inline(always)]
    pub(crate) fn forward(
        &self,
        table: &mut FlowTable,
        pkt: &PacketBuf,
        f: Forward,
        in_port: u32,
        now: Nanos,
        out: &mut impl Output,
    ) {
        table.lookup_known(Some(f.pos as usize));
        if let Some(e) = table.hot_mut(f.pos as usize) {
            e.hit(pkt.len(), now);
        }
        self.send_standard(pkt, f.port, in_port, None, out);
    }
}
