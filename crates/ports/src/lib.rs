//! Packet I/O backends behind one batch [`Port`] trait.
//!
//! This is the only crate of oxflow that talks to the kernel's packet
//! interfaces, and the only one allowed `unsafe` (ring buffers, mmap, ioctl,
//! netlink sockets); every unsafe block carries a `// SAFETY:` line.
//!
//! Backends:
//! - [`AfPacket`]: any Linux interface through an `AF_PACKET` socket with a
//!   TPACKET_V2 frame ring (or V3 block ring, or `recvmmsg`) for receive and
//!   `sendmmsg` for transmit, segmentation-offload aware with `vnet_hdr`
//!   ([`afpacket`], [`vnet`]).
//! - [`XdpPort`]: any Linux interface through AF_XDP sockets, native or
//!   generic XDP, copy or zero-copy ([`xdp`]).
//! - [`TapPort`]: a tap device, used for the OpenFlow LOCAL port ([`tap`]).
//! - [`MemPort`]: two connected in-memory ends, for tests of higher layers
//!   ([`mem`]).
//!
//! [`LinkMonitor`] reports link up/down from rtnetlink ([`netlink`]), and
//! [`netns::in_netns`] runs a closure inside a network namespace (sockets
//! stay bound to the namespace they were created in).
//!
//! # Why a batch trait
//!
//! The switch's workers run to completion: receive up to [`BATCH`] packets
//! from a port, push them through the pipeline, queue the outputs per port and
//! transmit each queue as one batch. Amortising one system call (or one ring
//! walk) over a batch is where most of the I/O speed comes from, so the trait
//! only has batch calls:
//!
//! - [`Port::rx_batch`] *copies* received frames into caller-owned
//!   [`PacketBuf`]s. The worker allocates its `BATCH` buffers once and reuses
//!   them, so there is no heap allocation per packet. A copy (64..1500 bytes,
//!   from a ring that is hot in cache) is cheaper than the alternatives:
//!   borrowing ring memory would pin kernel blocks across the whole pipeline,
//!   and the pipeline needs headroom to push VLAN/MPLS headers in place.
//! - [`Port::tx_batch`] takes borrowed byte slices (usually `PacketBuf::data()`
//!   of the worker's buffers). It never blocks: whatever the device cannot
//!   take right now is dropped and counted in `tx_dropped`, as a hardware
//!   switch drops on a full egress queue. The return value is the number of
//!   frames handed to the device.
//! - Every port is non-blocking; [`Port::fd`] gives a file descriptor to
//!   `poll`/`epoll` for readability so an idle worker can sleep
//!   ([`poll::Poller`]).
//! - [`Port::tx_clone`] gives an independent transmit handle ([`PortTx`])
//!   so each worker thread transmits on every port without a lock; the
//!   handles of one port share its [`TxCounters`].
//! - [`Port::rx_queues`] splits reception into receive handles
//!   ([`PortRx`]), one per worker, that share the port's traffic by flow
//!   hash (as RSS queues of a NIC would), so each flow stays on one worker
//!   and keeps its order.
//!
//! Frames are whole Ethernet frames as on the wire, without FCS, including
//! any 802.1Q/802.1ad tags (the AF_PACKET backend re-inserts tags that the
//! kernel stripped into packet metadata).

pub mod afpacket;
pub mod alloc_count;
pub mod mem;
pub mod mimalloc;
pub mod netlink;
pub mod netns;
pub mod partial;
pub mod poll;
pub mod segment;
pub mod stats;
pub mod sys;
pub mod tap;
pub mod vnet;
pub mod xdp;

use std::io;
use std::os::fd::RawFd;

pub use afpacket::{AfPacket, AfPacketOpts, AfPacketRx, RxMode, VNET_MAX_FRAME};
pub use mem::MemPort;
pub use netlink::{LinkEvent, LinkMonitor};
pub use packet::PacketBuf;
pub use poll::{Poller, Waker};
pub use stats::{PortStats, RxCounters, TxCounters};
pub use tap::TapPort;
pub use xdp::{XdpMode, XdpOpts, XdpPort, XdpRx, XdpTx};

/// Default number of packets per batch.
pub const BATCH: usize = 32;

/// One packet I/O backend; see the crate comment for the batch design.
pub trait Port: Send {
    /// Interface name (or a label for in-memory ports).
    fn name(&self) -> &str;

    /// Receives up to `bufs.len()` frames into `bufs[0..n]` and returns `n`
    /// (0 when nothing is waiting; never blocks). Each buffer is overwritten
    /// with full headroom restored. Frames that do not fit a buffer are
    /// dropped and counted in `rx_dropped`.
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize>;

    /// Transmits `pkts` in order, returns how many were handed to the device;
    /// the others were dropped (and counted). Never blocks.
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize>;

    /// A descriptor that polls readable when `rx_batch` has something to
    /// return (`None` if the backend has none).
    fn fd(&self) -> Option<RawFd>;

    /// The port's Ethernet address.
    fn hw_addr(&self) -> [u8; 6];

    /// Whether the link is usable (administratively up and carrier present).
    fn link_up(&self) -> bool;

    /// The device MTU (payload bytes after the Ethernet header).
    fn mtu(&self) -> io::Result<u32>;

    /// Counters since the port was opened (transmit counters include
    /// every [`PortTx`] clone).
    fn stats(&self) -> PortStats;

    /// Reads and clears a pending asynchronous error of the backend's
    /// descriptor (for AF_PACKET: the `ENETDOWN` a link-down leaves on the
    /// socket, which makes the descriptor poll `POLLERR` until read). A
    /// poller that sees an error event on [`Port::fd`] calls this, or it
    /// would wake up forever.
    fn take_error(&self) -> Option<io::Error> {
        None
    }

    /// A transmit-only handle on the same device that another thread can
    /// use concurrently with this port and with other clones, without
    /// locking. Backends without one return `Unsupported` (the caller then
    /// shares the port itself).
    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: no transmit clone", self.name()),
        ))
    }

    /// Like [`Port::tx_clone`], on a socket of its own whose frames carry
    /// the kernel packet priority `priority` (`SO_PRIORITY`), so that a
    /// classful qdisc on the interface (htb: a priority `MAJOR:MINOR` equal
    /// to one of its class ids) puts them in that class; the switch's
    /// queues use it. Counters are shared with the port like a clone's.
    /// Backends whose transmit bypasses the kernel's qdiscs (AF_XDP, tap)
    /// return `Unsupported`.
    fn tx_clone_priority(&self, priority: u32) -> io::Result<Box<dyn PortTx>> {
        let _ = priority;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "{}: this backend's transmit bypasses the kernel's queueing disciplines",
                self.name()
            ),
        ))
    }

    /// Splits reception into `n` handles that share the load by flow hash
    /// (AF_PACKET: a `PACKET_FANOUT_HASH` group of `n` sockets; AF_XDP: one
    /// socket per queue where the device has `n` queues), one per worker.
    /// After a successful call the caller no longer uses the port's own
    /// `rx_batch` (it returns nothing). Counters ([`Port::stats`]) still
    /// cover every handle. Backends that cannot split return `Unsupported`.
    fn rx_queues(&mut self, n: usize) -> io::Result<Vec<Box<dyn PortRx>>> {
        let _ = n;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: reception cannot be split", self.name()),
        ))
    }

    /// The largest frame `rx_batch` may deliver: the caller sizes its
    /// [`PacketBuf`]s for it (frames larger than a buffer are dropped and
    /// counted). The default is what `PacketBuf::new()` holds.
    fn max_frame_len(&self) -> usize {
        packet::buf::DEFAULT_CAPACITY
    }
}

/// A receive-only handle from [`Port::rx_queues`] (one per worker); same
/// contract as [`Port::rx_batch`], [`Port::fd`] and [`Port::take_error`].
pub trait PortRx: Send {
    fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> io::Result<usize>;

    fn fd(&self) -> Option<RawFd>;

    fn take_error(&self) -> Option<io::Error> {
        None
    }
}

/// A transmit-only handle from [`Port::tx_clone`]; same contract as
/// [`Port::tx_batch`] (never blocks, drops and counts what the device
/// cannot take).
pub trait PortTx: Send {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_work_as_trait_objects() {
        let (a, b) = MemPort::pair().unwrap();
        let mut ports: Vec<Box<dyn Port>> = vec![Box::new(a), Box::new(b)];
        assert_eq!(ports[0].tx_batch(&[&[0u8; 60]]).unwrap(), 1);
        let mut bufs = vec![PacketBuf::new(); BATCH];
        assert_eq!(ports[1].rx_batch(&mut bufs).unwrap(), 1);
        assert_eq!(bufs[0].data(), &[0u8; 60][..]);
        assert_eq!(ports[1].stats().rx_packets, 1);
    }

    #[test]
    fn mem_ports_cannot_split_reception() {
        let (mut a, _b) = MemPort::pair().unwrap();
        let e = a.rx_queues(2).err().expect("unsupported");
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert_eq!(a.max_frame_len(), PacketBuf::new().tailroom());
    }
}
