//! The chain template's plan, ways and frame reading (see the
//! `template` module comment).

use super::ethernet::*;
use super::route::*;
use crate::chunk::CHUNK;
use crate::classifier::exact::{at, COMMON};
use crate::classifier::fields::{FrameFields, CHAIN_FIELDS, FRAME_FIELDS, TCP_PORTS, UDP_PORTS};
use crate::classifier::{Exact, Ref};
use crate::program::ChainStep;
use crate::table::FlowTable;
use packet::{ethertype, ipproto, Field, FieldSet, Layer};

/// Most entries a packet goes through in the chain template before the
/// one that ends its trip (a dispatch, a pop, a NAT: gateway's three
/// tables use two).
pub(super) const CHAIN_MAX: usize = 4;

/// Whether the chain template may serve a batch of this pipeline (module
/// comment; the caller checked the port and that the route template does
/// not serve it): the general parse reads L3 or L4, and table 0 is
/// answered by an exact index whose keys the template can make. (A NAT
/// step's L4 key needs the general parse to read L4, which the entry's
/// program makes it do, `Pipeline::parse_layer`.)
pub(crate) fn chain_serves(tables: &[FlowTable], layer: Layer) -> bool {
    matches!(layer, Layer::L3 | Layer::L4)
        && tables.first().is_some_and(|t| {
            t.classifier().exact_index().is_some_and(Exact::common_only) || by_fields(t)
        })
}

/// Whether the chain template looks packets up in `table` with their
/// `FrameFields` when it has no exact index for it: the table matches
/// on no field beyond `FRAME_FIELDS`, and every entry's program is one
/// the template can take (`FlowTable::unchained`), so the lookup it
/// makes is not thrown away for most packets (the general path would
/// look them up again).
#[inline]
pub(super) fn by_fields(table: &FlowTable) -> bool {
    table.unchained() == 0 && FRAME_FIELDS.contains_all(table.match_fields())
}

/// How a packet's trip through the chain template ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChainEnd {
    /// The entry at `pos` of table `table` outputs it to standard port
    /// `port` (`Program::only_output`).
    Output { table: u8, pos: u32, port: u32 },
    /// Routed by routing table `table` (`Pipeline::route_hop`).
    Route { table: u8, hop: Hop },
    /// Dropped by the entry at `pos` of table `table`
    /// (`Program::drops`).
    Drop { table: u8, pos: u32 },
    /// The entry at `pos` of table `table` hands it to a group
    /// (`Program::only_group`), at `slot` in the group table, which
    /// takes one bucket, `bucket`, that does `act`.
    Group {
        table: u8,
        pos: u32,
        slot: u32,
        bucket: u32,
        act: BucketAct,
    },
}

impl ChainEnd {
    /// The table and position of the entry that ends the trip.
    #[inline(always)]
    pub(super) fn entry(&self) -> (u8, u32) {
        match *self {
            ChainEnd::Output { table, pos, .. }
            | ChainEnd::Drop { table, pos }
            | ChainEnd::Group { table, pos, .. } => (table, pos),
            ChainEnd::Route { table, hop } => (table, hop.pos),
        }
    }
}

/// What the one bucket a group end takes does (its compiled actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BucketAct {
    /// `Op::Output` to standard port `port`.
    Output { port: u32 },
    /// `Op::SetIpv4EthDstOutput` (a load balancer's backend): the IPv4
    /// address at `a_off` in the IP header (12 source, 16 destination)
    /// set to `addr`, `eth_dst` to `dst`, then out of standard port
    /// `port`.
    Backend {
        addr: u32,
        a_off: u8,
        dst: [u8; 6],
        port: u32,
    },
}

/// A packet the chain template takes: the entries it goes through
/// (table, position, the step its program asks), in order, then its
/// end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chain {
    pub(super) steps: [(u8, u32, ChainStep); CHAIN_MAX],
    pub(super) n: u8,
    pub(super) end: ChainEnd,
}

/// The chains of a chunk's packets (`ways[i]` for packet i when the
/// chain template took it), kept in the pipeline between batches
/// (`Pipeline::chains`) as the route template's `Hops` are, with the
/// classification's working arrays (`scratch`): kept there too, so that
/// no chunk spends time clearing some 7 KB of them.
#[derive(Debug, Clone)]
pub(crate) struct Chains {
    pub(super) ways: [Chain; CHUNK],
    pub(super) scratch: Scratch,
}

/// What `Pipeline::classify_chain_chunk` works in. Nothing in it is read
/// before the chunk at hand wrote it, but for `waiting`, which every
/// classification leaves empty.
#[derive(Debug, Clone)]
pub(super) struct Scratch {
    pub(super) frames: Frames,
    pub(super) waiting: Waiting,
    /// Per packet of a round: the handle of the entry it found.
    pub(super) found: [Option<u32>; CHUNK],
    /// Per packet of a round: its packed key and home slot in its
    /// table's exact index.
    pub(super) keys: [(u64, usize); CHUNK],
    /// Per packet of a round looked up by its fields (`Way::Fields`),
    /// by its place among its table's packets: the best entry found.
    /// After the rounds, per packet: the routing table's answer.
    pub(super) refs: [Ref; CHUNK],
    /// The round's tables with packets, lowest first (`..r` of them):
    /// (table, how it is looked up, its packets).
    pub(super) round: [(u8, Way, Mask); CHUNK],
    /// `dsts[i]`: packet i is at the routing table with this
    /// destination (the frame's, or a NAT's), to be walked in its trie
    /// after the other tables.
    pub(super) dsts: [Option<u32>; CHUNK],
}

impl Default for Chains {
    fn default() -> Self {
        let none = Chain {
            steps: [(0, 0, ChainStep::Nothing); CHAIN_MAX],
            n: 0,
            end: ChainEnd::Output {
                table: 0,
                pos: 0,
                port: 0,
            },
        };
        Chains {
            ways: [none; CHUNK],
            scratch: Scratch {
                frames: Frames {
                    fields: [FrameFields {
                        common: [0; COMMON],
                        have: FieldSet::EMPTY,
                    }; CHUNK],
                    tagged: [false; CHUNK],
                    ttl: [0; CHUNK],
                },
                waiting: Waiting {
                    at: [0; 256],
                    busy: [0; 4],
                },
                found: [None; CHUNK],
                keys: [(0, 0); CHUNK],
                refs: [Ref::NONE; CHUNK],
                round: [(0, Way::Fields, 0); CHUNK],
                dsts: [None; CHUNK],
            },
        }
    }
}

/// The chunk's frames on their way through the chain template's
/// classification, one slot per packet, kept as arrays of one thing each
/// (a stage reads only what it needs of them), written for a packet
/// when it is read from its frame (`chain_frame`):
/// - `fields[i]`: the values packet i's key has of the common fields at
///   the table it is at (the frame's, then as the steps so far changed
///   them: a pop clears vlan_vid, a NAT writes its address and port), and
///   which fields it has (`CHAIN_FIELDS` and its protocol's ports);
/// - `tagged[i]`: an 802.1Q tag is still in the frame;
/// - `ttl[i]`: its IPv4 TTL.
///
/// Where the packets still on their way are is kept apart, by table
/// (`Waiting`).
#[derive(Debug, Clone)]
pub(super) struct Frames {
    pub(super) fields: [FrameFields; CHUNK],
    pub(super) tagged: [bool; CHUNK],
    pub(super) ttl: [u8; CHUNK],
}

/// The chunk's packets still on their way, by the table they are at:
/// bit i of `at[t]` for packet i at table t, and bit t of `busy` when
/// `at[t]` has any, so that the lowest table with packets is the first
/// set bit of four words (no scan of the packets).
#[derive(Debug, Clone)]
pub(super) struct Waiting {
    pub(super) at: [Mask; 256],
    pub(super) busy: [u64; 4],
}

impl Waiting {
    /// Packet `i` is at table `t`.
    #[inline(always)]
    pub(super) fn put(&mut self, t: u8, i: usize) {
        let t = usize::from(t);
        self.at[t] |= 1 << i;
        self.busy[t >> 6] |= 1 << (t & 63);
    }

    /// The lowest table with packets and those packets, taken out.
    #[inline(always)]
    pub(super) fn take_lowest(&mut self) -> Option<(u8, Mask)> {
        let w = self.busy.iter().position(|&b| b != 0)?;
        let bit = self.busy[w & 3].trailing_zeros() as usize;
        self.busy[w & 3] &= !(1 << bit);
        let t = (w & 3) << 6 | bit;
        Some((t as u8, std::mem::take(&mut self.at[t & 255])))
    }
}

/// A set of a chunk's packets: bit i for packet i.
pub(super) type Mask = u32;
const _: () = assert!(CHUNK <= Mask::BITS as usize && CHUNK.is_power_of_two());

/// The packets of `m`, lowest first (each below `CHUNK`: the mask keeps
/// the compiler from checking the index it is used as).
#[inline(always)]
pub(super) fn members(mut m: Mask) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i & (CHUNK - 1)
        })
    })
}

/// How the chain template looks the packets at a table up in a round
/// (`Pipeline::classify_chain_chunk`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Way {
    /// In the table's exact index (`Exact::common_only`).
    Exact,
    /// By their fields, through the trie and the tuple space (`by_fields`).
    Fields,
}

/// The exact index the chain template looks `table` up in (`Way::Exact`),
/// if it has one whose keys a frame's `FrameFields` make.
#[inline(always)]
pub(super) fn chain_exact(table: &FlowTable) -> Option<&Exact> {
    table
        .classifier()
        .exact_index()
        .filter(|ex| ex.common_only())
}

/// What the chain template reads of a frame received on `in_port`, into
/// `f`: whether it still has its 802.1Q tag and its TTL, or `None` (and
/// `f` not to be used) unless it is IPv4 with no VLAN tag or one 802.1Q
/// tag (TPID 0x8100), whose header the general parse accepts (as
/// `route_dst` checks), not a fragment, carrying a TCP or UDP header the
/// general parse accepts at L4 (TCP: 20 bytes at least and a data offset
/// within the datagram; UDP: 8 bytes).
#[inline(always)]
pub(crate) fn chain_frame(data: &[u8], in_port: u32, f: &mut FrameFields) -> Option<(bool, u8)> {
    let eth = data.first_chunk::<14>()?;
    let et = u16::from_be_bytes([eth[12], eth[13]]);
    let (l3, vid) = match et {
        ethertype::IPV4 => (14, 0),
        ethertype::VLAN => {
            let t = data.get(14..18)?;
            if u16::from_be_bytes([t[2], t[3]]) != ethertype::IPV4 {
                return None;
            }
            (
                18,
                packet::VID_PRESENT | (u16::from_be_bytes([t[0], t[1]]) & 0x0fff),
            )
        }
        _ => return None,
    };
    let (h, ihl, total) = ipv4_header(data, l3)?;
    let seg = data.get(l3 + ihl..l3 + total)?;
    let udp = match h[9] {
        ipproto::UDP if seg.len() >= 8 => true,
        ipproto::TCP => {
            let hlen = usize::from(*seg.get(12)? >> 4) * 4;
            if seg.len() < 20 || hlen < 20 || hlen > seg.len() {
                return None;
            }
            false
        }
        _ => return None,
    };
    let (dst, src) = macs(eth);
    let mut have = CHAIN_FIELDS;
    have.insert_all(if udp { UDP_PORTS } else { TCP_PORTS });
    f.have = have;
    let c = &mut f.common;
    c[at::IN_PORT] = u64::from(in_port);
    c[at::METADATA] = 0;
    c[at::ETH_DST] = dst;
    c[at::ETH_SRC] = src;
    c[at::ETH_TYPE] = u64::from(ethertype::IPV4);
    c[at::VLAN_VID] = u64::from(vid);
    c[at::IP_PROTO] = u64::from(h[9]);
    c[at::IPV4_SRC] = u64::from(u32::from_be_bytes([h[12], h[13], h[14], h[15]]));
    c[at::IPV4_DST] = u64::from(u32::from_be_bytes([h[16], h[17], h[18], h[19]]));
    c[at::TP_SRC] = u64::from(u16::from_be_bytes([seg[0], seg[1]]));
    c[at::TP_DST] = u64::from(u16::from_be_bytes([seg[2], seg[3]]));
    Some((vid != 0, h[8]))
}

/// The TCP/UDP port field a NAT step of a frame of this protocol may
/// write: (offset in the L4 header, the common position), or `None` for
/// a field of another protocol (the template then leaves the packet; an
/// entry whose match lets such a frame reach such a set-field is refused
/// as inconsistent, so this does not happen).
pub(super) fn nat_port(udp: bool, f: Field) -> Option<(usize, usize)> {
    match (udp, f) {
        (true, Field::UdpSrc) | (false, Field::TcpSrc) => Some((0, at::TP_SRC)),
        (true, Field::UdpDst) | (false, Field::TcpDst) => Some((2, at::TP_DST)),
        _ => None,
    }
}

/// Where the TCP or UDP header of a frame the chain template took starts,
/// its IPv4 header being at `l3`, and whether it is UDP (else TCP).
#[inline(always)]
pub(super) fn l4_of(data: &[u8], l3: usize) -> Option<(usize, bool)> {
    let (&vihl, &proto) = (data.get(l3)?, data.get(l3 + 9)?);
    Some((l3 + usize::from(vihl & 0x0f) * 4, proto == ipproto::UDP))
}

/// A backend's rewrite (`BucketAct::Backend`) of a frame the chain
/// template took, whose IPv4 header is at `l3`: the bytes
/// `set_ipv4_addr`'s and `set_eth_dst`'s fast paths write (the address
/// with both checksums, the L4 one through the pseudo-header; the
/// destination MAC).
#[inline(always)]
pub(super) fn backend_at(data: &mut [u8], l3: usize, addr: u32, a_off: usize, dst: &[u8; 6]) {
    let Some((l4, udp)) = l4_of(data, l3) else {
        return;
    };
    // (The frame's TCP or UDP header holds its checksum: `chain_frame`.)
    let ck = if udp {
        (l4 + 6, true)
    } else {
        (l4 + 16, false)
    };
    packet::rewrite::ipv4_addr_at(data, l3, a_off, addr, Some(ck));
    if let Some(h) = data.first_chunk_mut::<6>() {
        *h = *dst;
    }
}
