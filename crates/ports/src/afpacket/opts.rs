//! Options of an AF_PACKET port ([`AfPacketOpts`]) and the ways it can
//! receive ([`RxMode`], compared in the `afpacket` module comment,
//! "Receive").

/// Options of [`AfPacket::open`](super::AfPacket::open).
#[derive(Debug, Clone)]
pub struct AfPacketOpts {
    /// Bytes per ring block (a multiple of the page size).
    pub block_size: u32,
    /// Number of ring blocks.
    pub block_nr: u32,
    /// Slot size of the frame ring (frames up to about `frame_size - 80`
    /// bytes fit a slot; larger ones take the socket queue). The block ring
    /// packs frames tightly and uses it only for the kernel's frame count
    /// check.
    pub frame_size: u32,
    /// Block ring only: milliseconds after which the kernel hands over a
    /// partly filled block.
    pub block_timeout_ms: u32,
    /// Put the interface in promiscuous mode (for as long as the socket
    /// lives) with `PACKET_ADD_MEMBERSHIP`.
    pub promisc: bool,
    /// Join `PACKET_FANOUT` group `id` in hash mode (flows spread over the
    /// sockets of the group, one per worker).
    pub fanout: Option<u16>,
    /// Segmentation offload aware mode (`PACKET_VNET_HDR`,
    /// `afpacket` module comment): frames up to [`VNET_MAX_FRAME`] bytes.
    pub vnet_hdr: bool,
    /// How the socket receives (`afpacket` module comment).
    pub rx: RxMode,
    /// Socket receive buffer in bytes without the ring (`SO_RCVBUFFORCE`,
    /// else `SO_RCVBUF` as far as the system allows).
    pub rcvbuf: u32,
}

/// How an [`AfPacket`](super::AfPacket) socket receives (`afpacket`
/// module comment, "Receive").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RxMode {
    /// TPACKET_V2 ring of `frame_size` slots; larger frames through the
    /// socket queue (`PACKET_COPY_THRESH`). No system call per batch, each
    /// frame at once.
    #[default]
    FrameRing,
    /// TPACKET_V3 ring of `block_size` blocks: frames packed tightly, but a
    /// block is handed over when full or after `block_timeout_ms`.
    BlockRing,
    /// `recvmmsg` into the caller's buffers: one system call per batch.
    Recvmmsg,
}

/// Largest frame a `vnet_hdr` port delivers: a 64 KiB IP packet behind an
/// Ethernet header with two VLAN tags, rounded up.
pub const VNET_MAX_FRAME: usize = 65_600;

impl Default for AfPacketOpts {
    fn default() -> Self {
        AfPacketOpts {
            block_size: 1 << 18,
            block_nr: 16,
            frame_size: 2048,
            block_timeout_ms: 1,
            promisc: true,
            fanout: None,
            vnet_hdr: false,
            rx: RxMode::FrameRing,
            rcvbuf: 8 << 20,
        }
    }
}
