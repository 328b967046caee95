//! What the datapath emits ([`Output`]): frames to ports, packet-ins and
//! the requests it cannot serve itself (NORMAL). The switch turns them
//! into I/O; tests record them.

use crate::port::PortTable;
use ofp::oxm::Match;
use packet::PacketBuf;

/// A packet-in the datapath wants sent to the controller(s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketInEvent<'a> {
    /// One of `packet_in_reason`.
    pub reason: u8,
    pub table_id: u8,
    /// Cookie of the entry that sent it (all ones when none, e.g. packet-out).
    pub cookie: u64,
    /// Pipeline fields: in_port, in_phy_port (if it differs), metadata (if
    /// not 0), tunnel_id (if set).
    pub match_: Match,
    /// The whole frame; the switch truncates to `max_len` and buffers.
    pub data: &'a [u8],
    /// From the output action (or the switch config for INVALID_TTL).
    pub max_len: u16,
}

/// Requests the datapath cannot serve itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// Output to OFPP_NORMAL (the switch may implement it outside OpenFlow).
    Normal { in_port: u32 },
}

/// Receives what the datapath emits.
pub trait Output {
    /// Send `data` out of `port` (a standard port or LOCAL) on `queue`.
    fn port(&mut self, port: u32, data: &[u8], queue: Option<u32>);
    /// Send `pkt` out of `port` on `queue` as the frame's last use: the
    /// pipeline neither reads nor changes `pkt` after this call, so the
    /// receiver may take the buffer itself (leaving any buffer in its
    /// place) instead of copying its bytes. Called for an output that is
    /// the last action a packet's tables execute (the executor's `tail`);
    /// every other output is [`Output::port`]. Default: `port`.
    fn port_final(&mut self, port: u32, pkt: &mut PacketBuf, queue: Option<u32>) {
        self.port(port, pkt.data(), queue);
    }
    /// Send a packet-in.
    fn packet_in(&mut self, ev: PacketInEvent<'_>);
    /// A request for something the pipeline does not do; default: drop.
    fn unsupported(&mut self, _what: Unsupported, _data: &[u8]) {}
    /// Output to OFPP_NORMAL of a packet received on `in_port`, with the
    /// port table (a learning switch needs it to flood) so the receiver can
    /// forward at once, without keeping a copy of the frame for later.
    /// Default: [`Output::unsupported`].
    fn normal(&mut self, in_port: u32, data: &[u8], _ports: &PortTable) {
        self.unsupported(Unsupported::Normal { in_port }, data);
    }
}
