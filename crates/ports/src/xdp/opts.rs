//! Options of an AF_XDP port ([`XdpOpts`]), the ways its sockets attach
//! ([`XdpMode`]), and its frame and ring batch limits.

use crate::BATCH;

/// How the sockets of an [`XdpPort`](super::XdpPort) are attached (see
/// the `xdp` module comment, "Modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpMode {
    /// Driver XDP hook, frames DMA'd straight into the UMEM.
    NativeZeroCopy,
    /// Driver XDP hook, frames copied into the UMEM by the kernel.
    NativeCopy,
    /// Generic XDP after the kernel built an skb (works on any device).
    Generic,
}

impl std::fmt::Display for XdpMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            XdpMode::NativeZeroCopy => "native zero-copy",
            XdpMode::NativeCopy => "native copy",
            XdpMode::Generic => "generic (skb) copy",
        })
    }
}

/// Options of [`XdpPort::open`](super::XdpPort::open).
#[derive(Debug, Clone)]
pub struct XdpOpts {
    /// Frames per receive half and per transmit half of each socket (also
    /// the size of each ring); a power of two.
    pub ring_size: u32,
    /// Bytes per UMEM frame (2048 or 4096); a frame holds up to
    /// `frame_size - 256` bytes of packet.
    pub frame_size: u32,
    /// The modes to try, in order (default: zero-copy, native copy,
    /// generic).
    pub modes: Vec<XdpMode>,
}

impl Default for XdpOpts {
    fn default() -> Self {
        XdpOpts {
            ring_size: 2048,
            frame_size: 2048,
            modes: vec![
                XdpMode::NativeZeroCopy,
                XdpMode::NativeCopy,
                XdpMode::Generic,
            ],
        }
    }
}

/// Largest frame an [`XdpPort`](super::XdpPort) carries: 2048-byte UMEM
/// frames less the XDP headroom (`xdp` module comment, "Frame size").
pub const MAX_XDP_FRAME: usize = 2048 - 256;

/// Frames per `consume`/`produce` call on the rings.
pub(super) const RING_BATCH: usize = BATCH;
