//! Port counters (the fields of `ofp_port_stats` that a backend can know).

/// Counters of one port since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Frames lost on receive: ring full in the kernel, or too big for a
    /// buffer.
    pub rx_dropped: u64,
    pub rx_errors: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Frames not sent because the device queue was full or the link down.
    pub tx_dropped: u64,
    /// Frames the kernel refused (e.g. larger than the MTU).
    pub tx_errors: u64,
}
