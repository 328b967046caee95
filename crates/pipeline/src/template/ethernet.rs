//! The Ethernet template (see the `template` module comment): an L2
//! switch's table 0 probed with a key packed straight from the frame.

use crate::chunk::CHUNK;
use crate::classifier::{Exact, Hit};
use crate::table::FlowTable;
use packet::{ethertype, PacketBuf};

/// A packet a template takes: how it goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fast {
    /// Forwarded by the Ethernet template.
    Ethernet(Forward),
    /// Taken by the chain template (its way kept apart, in `Chains`).
    Chain,
    /// Routed by the route template (its next hop kept apart, in
    /// `Hops`: a `Fast` stays as small as a `Forward`, which the batch
    /// path copies around).
    Route,
}

/// A packet the template forwards: its entry's position in table 0 and
/// the standard port it goes out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forward {
    pub(super) pos: u32,
    pub(super) port: u32,
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
pub(super) fn frame_key(ex: &Exact, data: &[u8], in_port: u32) -> Option<u64> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    if ethertype::is_vlan(et)
        || matches!(et, ethertype::MPLS | ethertype::MPLS_MCAST | ethertype::PBB)
    {
        return None;
    }
    let (dst, src) = macs(eth);
    Some(ex.pack_ethernet(in_port, dst, src, et))
}

/// The destination and source MACs of an Ethernet header as
/// `packet::mac_bits` gives them (six bytes big-endian): one 8-byte load
/// each, the two bytes after the address shifted out.
#[inline(always)]
pub(super) fn macs(eth: &[u8; 14]) -> (u64, u64) {
    let word = |b: [u8; 8]| u64::from_be_bytes(b) >> 16;
    let (d, s) = (eth.first_chunk::<8>(), eth.last_chunk::<8>());
    (d.map_or(0, |b| word(*b)), s.map_or(0, |b| word(*b)))
}

/// What table 0 does with a packet whose probe found `hit`: `Some` when
/// the template can forward it.
#[inline(always)]
pub(super) fn decide(table: &FlowTable, hit: Option<Hit>) -> Option<Forward> {
    let handle = table.classifier().answer_known(hit)??;
    let pos = table.pos_of_handle(handle)?;
    let port = table.hot(pos)?.program().only_output?;
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
    fwd: &mut [Option<Fast>],
) {
    let n = bufs.len().min(fwd.len()).min(CHUNK);
    let mut keys = [None; CHUNK];
    for (k, b) in keys.iter_mut().zip(&bufs[..n]) {
        *k = frame_key(ex, b.data(), in_port);
    }
    let mut hits = [None; CHUNK];
    ex.get_many(&keys[..n], &mut hits[..n]);
    for ((f, k), h) in fwd[..n].iter_mut().zip(&keys[..n]).zip(&hits[..n]) {
        *f = k.and_then(|_| decide(table, *h)).map(Fast::Ethernet);
    }
}
