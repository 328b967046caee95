//! What the three receive paths share: the outcome of taking one frame
//! ([`Frame`]), the TPID of a VLAN tag the kernel stripped without saying
//! which, and completing a frame from its `virtio_net_hdr` (`afpacket`
//! module comment, "Segmentation offload").

use packet::PacketBuf;

use crate::vnet::{self, VnetHdr};

/// TPID of a stripped tag whose TPID the kernel does not report
/// (no `TP_STATUS_VLAN_TPID_VALID`).
pub(super) const ETH_P_8021Q: u16 = 0x8100;

/// What the ring walk found at one frame.
pub(super) enum Frame {
    /// Copied into the buffer.
    Got(usize),
    /// Skipped (outgoing) or dropped (too big, truncated, corrupt).
    Skipped,
    Dropped,
    /// Frame with a bad `virtio_net_hdr` (counted as an error).
    Invalid,
    /// Ring structure broken: give up on the block.
    Corrupt,
}

/// Completes a received frame from its `virtio_net_hdr` (`afpacket`
/// module comment); `shift`: bytes inserted before the L4 header since (a
/// VLAN tag). False if the header is bad.
pub(super) fn complete_vnet(h: &VnetHdr, buf: &mut PacketBuf, shift: usize) -> bool {
    if h.flags & vnet::F_NEEDS_CSUM != 0 {
        vnet::complete_rx(buf.data_mut(), h, shift)
    } else {
        if h.gso_type != vnet::GSO_NONE {
            vnet::fix_tcp_checksum(buf.data_mut());
        }
        true
    }
}
