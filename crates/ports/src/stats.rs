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

use std::sync::atomic::{AtomicU64, Ordering};

/// Transmit counters of one port shared by every transmit handle of that
/// port (the port itself and its [`crate::PortTx`] clones, one per worker
/// thread): each handle adds with relaxed atomics, the port's `stats()`
/// reads the sums.
#[derive(Debug, Default)]
pub struct TxCounters {
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
    pub dropped: AtomicU64,
    pub errors: AtomicU64,
}

impl TxCounters {
    pub fn sent(&self, bytes: usize) {
        self.packets.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub fn dropped(&self, n: u64) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
    }

    pub fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Copies the sums into the `tx_*` fields of `s`.
    pub fn fill(&self, s: &mut PortStats) {
        s.tx_packets = self.packets.load(Ordering::Relaxed);
        s.tx_bytes = self.bytes.load(Ordering::Relaxed);
        s.tx_dropped = self.dropped.load(Ordering::Relaxed);
        s.tx_errors = self.errors.load(Ordering::Relaxed);
    }
}

/// Receive counters of one receive handle ([`crate::PortRx`]) or of a
/// port's own receive path. Each has exactly one writer (the thread that
/// calls `rx_batch`), which adds once per batch; the port's `stats()` sums
/// the counters of all its handles. One allocation per handle keeps
/// workers from writing to a shared cache line.
#[derive(Debug, Default)]
pub struct RxCounters {
    pub packets: AtomicU64,
    pub bytes: AtomicU64,
    pub dropped: AtomicU64,
    pub errors: AtomicU64,
}

impl RxCounters {
    /// Adds one batch's worth (single writer: a load and a store, no
    /// atomic read-modify-write).
    pub fn add(&self, packets: u64, bytes: u64, dropped: u64, errors: u64) {
        for (c, n) in [
            (&self.packets, packets),
            (&self.bytes, bytes),
            (&self.dropped, dropped),
            (&self.errors, errors),
        ] {
            if n != 0 {
                c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
            }
        }
    }

    /// Adds these counters to the `rx_*` fields of `s`.
    pub fn add_to(&self, s: &mut PortStats) {
        s.rx_packets += self.packets.load(Ordering::Relaxed);
        s.rx_bytes += self.bytes.load(Ordering::Relaxed);
        s.rx_dropped += self.dropped.load(Ordering::Relaxed);
        s.rx_errors += self.errors.load(Ordering::Relaxed);
    }
}
