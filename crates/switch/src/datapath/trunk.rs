//! Trunk ports (HARMLESS, docs/trunk.md): an interface that carries
//! 802.1Q-tagged traffic whose access VLANs are logical OpenFlow ports.
//!
//! # Data structures
//!
//! - [`Trunk`]: the physical interface (its [`ports::Port`] behind a
//!   mutex, like a [`super::SwitchPort`]'s), the VLAN range and the number
//!   of the first logical port; VLAN `first_vid + i` is port
//!   `first_no + i`. It is never an OpenFlow port itself.
//! - [`LogicalPort`]: a [`ports::Port`] backend for one VLAN, put into the
//!   port set like any other port, so port desc, port stats, port status,
//!   flooding, NORMAL and standalone mode see it as a port. It receives
//!   nothing itself (the workers receive from the trunk, see below); it
//!   transmits by pushing its access tag and sending on the trunk
//!   ([`LogicalTx`], one lock-free clone per thread like every port's); it
//!   is up when the trunk is; its counters are its own
//!   ([`LogicalCounters`]).
//!
//! # The packet path
//!
//! Workers receive from the trunk (an [`super::worker::RxSource::Trunk`],
//! split over workers by flow hash where the backend can, as other
//! ports). [`demux`] reads each frame's outer tag (which the AF_PACKET
//! backend re-inserts from the kernel's aux data), maps its VLAN id to the
//! logical port, removes the tag (`graph::modules::vlan::pop_tag`, the
//! `vlan_split` module's), and orders the batch by logical port so each
//! run of one ingress port goes through the pipeline as one batch with
//! that `in_port`. A frame already tagged inside the access VLAN keeps its
//! inner tag (QinQ: only the outer one is removed on ingress and added on
//! egress). Frames without one of the trunk's VLANs are dropped and
//! counted ([`Trunk::foreign`]).
//!
//! Trunks always use AF_PACKET: its receive path delivers the stripped
//! outer tag in aux data, which AF_XDP does not (with XDP the tag may be
//! in metadata the socket never sees).

use graph::modules::vlan::{outer_vid, pop_tag};
use packet::PacketBuf;
use ports::{Port, PortRx, PortStats, PortTx, TxCounters};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Counters of one logical port: receive sums added by the workers once
/// per run of frames, transmit counters shared by its [`LogicalTx`]
/// clones.
#[derive(Debug, Default)]
pub struct LogicalCounters {
    pub rx_packets: AtomicU64,
    pub rx_bytes: AtomicU64,
    pub tx: Arc<TxCounters>,
}

/// One trunk (module comment).
pub struct Trunk {
    pub interface: String,
    pub first_vid: u16,
    /// Logical port number of `first_vid`.
    pub first_no: u32,
    pub io: Mutex<Box<dyn Port>>,
    /// Per VLAN, index `vid - first_vid`.
    pub logical: Box<[LogicalCounters]>,
    /// Frames received without one of the trunk's VLANs (dropped).
    pub foreign: AtomicU64,
}

impl std::fmt::Debug for Trunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trunk")
            .field("interface", &self.interface)
            .field("first_vid", &self.first_vid)
            .field("vlans", &self.logical.len())
            .field("first_no", &self.first_no)
            .finish()
    }
}

impl Trunk {
    /// A trunk on `io` for VLANs `first_vid ..= last_vid`, the first one
    /// being port `first_no`.
    pub fn new(io: Box<dyn Port>, first_vid: u16, last_vid: u16, first_no: u32) -> Arc<Trunk> {
        let n = usize::from(last_vid.saturating_sub(first_vid)) + 1;
        Arc::new(Trunk {
            interface: io.name().to_string(),
            first_vid,
            first_no,
            io: Mutex::new(io),
            logical: (0..n).map(|_| LogicalCounters::default()).collect(),
            foreign: AtomicU64::new(0),
        })
    }

    /// Whether `no` is one of this trunk's logical ports.
    pub fn has_port(&self, no: u32) -> bool {
        no.checked_sub(self.first_no)
            .is_some_and(|i| (i as usize) < self.logical.len())
    }

    /// The logical ports, `(number, backend)`, in VLAN order.
    pub fn logical_ports(self: &Arc<Trunk>) -> Vec<(u32, Box<dyn Port>)> {
        (0..self.logical.len())
            .map(|i| {
                let vid = self.first_vid + i as u16;
                let p = LogicalPort {
                    trunk: self.clone(),
                    idx: i,
                    name: format!("{}.{vid}", self.interface),
                    tag: tag(vid),
                    scratch: Scratch::default(),
                };
                (self.first_no + i as u32, Box::new(p) as Box<dyn Port>)
            })
            .collect()
    }

    /// Logical port of VLAN `vid`, with its index.
    #[inline]
    fn port_of(&self, vid: u16) -> Option<(usize, u32)> {
        let i = usize::from(vid.checked_sub(self.first_vid)?);
        (i < self.logical.len()).then(|| (i, self.first_no + i as u32))
    }
}

/// The 802.1Q tag (TPID 0x8100, PCP 0) of `vid`.
fn tag(vid: u16) -> [u8; 4] {
    let v = vid.to_be_bytes();
    [0x81, 0x00, v[0] & 0x0f, v[1]]
}

/// Sort key of a frame [`demux`] drops (after every port number).
const DROP: u32 = u32::MAX;

/// Demultiplexes a received batch (module comment): removes each frame's
/// access tag, orders `bufs` by logical port (stable: a flow keeps its
/// order) with the dropped frames last, counts, and returns the runs as
/// `(port, start, end)` in `runs[..r]`; returns `r`.
pub fn demux(
    trunk: &Trunk,
    bufs: &mut [PacketBuf],
    keys: &mut [u32; ports::BATCH],
    runs: &mut [(u32, usize, usize); ports::BATCH],
) -> usize {
    let mut r = 0;
    let n = bufs.len().min(ports::BATCH);
    let mut foreign = 0;
    for (b, k) in bufs.iter_mut().zip(keys.iter_mut()) {
        *k = match outer_vid(b.data()).and_then(|v| trunk.port_of(v)) {
            Some((_, no)) if pop_tag(b) => no,
            _ => {
                foreign += 1;
                DROP
            }
        };
    }
    if foreign > 0 {
        trunk.foreign.fetch_add(foreign, Ordering::Relaxed);
    }
    // Insertion sort of at most 32 keys, moving the buffers along; a
    // batch from one VLAN (the common case) is already in order.
    for i in 1..n {
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            keys.swap(j - 1, j);
            bufs.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut start = 0;
    while start < n {
        let no = keys[start];
        if no == DROP {
            break;
        }
        let mut end = start + 1;
        while end < n && keys[end] == no {
            end += 1;
        }
        let bytes: usize = bufs[start..end].iter().map(|b| b.len()).sum();
        if let Some(c) = trunk.logical.get((no - trunk.first_no) as usize) {
            c.rx_packets
                .fetch_add((end - start) as u64, Ordering::Relaxed);
            c.rx_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        }
        if let Some(slot) = runs.get_mut(r) {
            *slot = (no, start, end);
            r += 1;
        }
        start = end;
    }
    r
}

/// Tagged copies of outgoing frames: buffers keep their capacity from
/// batch to batch, so a warm handle allocates nothing.
#[derive(Default)]
struct Scratch {
    frames: Vec<Vec<u8>>,
}

impl Scratch {
    /// Sends `pkts` with `tag` inserted after the MACs through `send`,
    /// counting in `c`; frames shorter than the MACs are errors.
    fn send(
        &mut self,
        tag: [u8; 4],
        pkts: &[&[u8]],
        c: &TxCounters,
        send: impl FnOnce(&[&[u8]]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let n = pkts.len().min(ports::BATCH);
        while self.frames.len() < n {
            self.frames.push(Vec::with_capacity(2048));
        }
        let mut slices: [&[u8]; ports::BATCH] = [&[]; ports::BATCH];
        let mut k = 0;
        for (p, f) in pkts.iter().take(n).zip(self.frames.iter_mut()) {
            f.clear();
            if p.len() < 12 {
                c.error();
                continue;
            }
            f.extend_from_slice(&p[..12]);
            f.extend_from_slice(&tag);
            f.extend_from_slice(&p[12..]);
        }
        for f in self.frames.iter().take(n) {
            if !f.is_empty() {
                slices[k] = f.as_slice();
                k += 1;
            }
        }
        let sent = send(&slices[..k]).unwrap_or(0).min(k);
        for s in &slices[..sent] {
            c.sent(s.len() - 4);
        }
        c.dropped((k - sent) as u64 + (pkts.len() - n) as u64);
        Ok(sent)
    }
}

/// One VLAN of a trunk as a port (module comment).
pub struct LogicalPort {
    trunk: Arc<Trunk>,
    idx: usize,
    name: String,
    tag: [u8; 4],
    scratch: Scratch,
}

/// A logical port's lock-free transmit handle: a clone of the trunk's.
pub struct LogicalTx {
    inner: Box<dyn PortTx>,
    tag: [u8; 4],
    counters: Arc<TxCounters>,
    scratch: Scratch,
}

impl PortTx for LogicalTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        let inner = &mut self.inner;
        self.scratch
            .send(self.tag, pkts, &self.counters, |s| inner.tx_batch(s))
    }
}

impl LogicalPort {
    fn counters(&self) -> Option<&LogicalCounters> {
        self.trunk.logical.get(self.idx)
    }

    fn with_trunk<T>(&self, f: impl FnOnce(&dyn Port) -> T) -> Option<T> {
        self.trunk.io.lock().ok().map(|io| f(&**io))
    }
}

impl Port for LogicalPort {
    fn name(&self) -> &str {
        &self.name
    }

    /// Frames of this VLAN are received from the trunk (module comment).
    fn rx_batch(&mut self, _: &mut [PacketBuf]) -> io::Result<usize> {
        Ok(0)
    }

    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        let Some(c) = self.trunk.logical.get(self.idx).map(|c| c.tx.clone()) else {
            return Ok(0);
        };
        let trunk = self.trunk.clone();
        self.scratch
            .send(self.tag, pkts, &c, |s| match trunk.io.lock() {
                Ok(mut io) => io.tx_batch(s),
                Err(_) => Ok(0),
            })
    }

    fn fd(&self) -> Option<RawFd> {
        None
    }

    fn hw_addr(&self) -> [u8; 6] {
        self.with_trunk(|t| t.hw_addr()).unwrap_or_default()
    }

    fn link_up(&self) -> bool {
        self.with_trunk(|t| t.link_up()).unwrap_or(false)
    }

    fn mtu(&self) -> io::Result<u32> {
        self.with_trunk(|t| t.mtu())
            .unwrap_or_else(|| Err(io::Error::other("trunk poisoned")))
    }

    fn stats(&self) -> PortStats {
        let mut s = PortStats::default();
        if let Some(c) = self.counters() {
            c.tx.fill(&mut s);
            s.rx_packets = c.rx_packets.load(Ordering::Relaxed);
            s.rx_bytes = c.rx_bytes.load(Ordering::Relaxed);
        }
        s
    }

    fn tx_clone(&self) -> io::Result<Box<dyn PortTx>> {
        let inner = self
            .with_trunk(|t| t.tx_clone())
            .unwrap_or_else(|| Err(io::Error::other("trunk poisoned")))?;
        let counters = self
            .counters()
            .map(|c| c.tx.clone())
            .ok_or_else(|| io::Error::other("no such VLAN"))?;
        Ok(Box::new(LogicalTx {
            inner,
            tag: self.tag,
            counters,
            scratch: Scratch::default(),
        }))
    }

    fn max_frame_len(&self) -> usize {
        self.with_trunk(|t| t.max_frame_len())
            .unwrap_or(packet::buf::DEFAULT_CAPACITY)
    }
}

/// Where a worker receives a trunk's frames: its own share of a split
/// trunk, or the whole trunk through its mutex.
pub struct TrunkRx {
    pub trunk: Arc<Trunk>,
    pub rx: Option<Box<dyn PortRx>>,
}

impl TrunkRx {
    pub fn rx_batch(&mut self, bufs: &mut [PacketBuf]) -> usize {
        match &mut self.rx {
            Some(rx) => rx.rx_batch(bufs).unwrap_or(0),
            None => match self.trunk.io.lock() {
                Ok(mut io) => io.rx_batch(bufs).unwrap_or(0),
                Err(_) => 0,
            },
        }
    }

    pub fn fd(&self) -> Option<RawFd> {
        match &self.rx {
            Some(rx) => rx.fd(),
            None => self.trunk.io.lock().ok().and_then(|io| io.fd()),
        }
    }

    pub fn take_error(&self) {
        match &self.rx {
            Some(rx) => drop(rx.take_error()),
            None => {
                if let Ok(io) = self.trunk.io.lock() {
                    drop(io.take_error());
                }
            }
        }
    }

    /// The receive sources of `trunk` for `n` workers: one per worker if
    /// the backend splits reception, else one shared.
    pub fn deal(trunk: &Arc<Trunk>, n: usize) -> Vec<TrunkRx> {
        let split = match trunk.io.lock() {
            Ok(mut io) if n > 1 => match io.rx_queues(n) {
                Ok(h) if h.len() == n => Some(h),
                Ok(_) => None,
                Err(e) => {
                    tracing::info!(trunk = %trunk.interface, "reception not split over workers: {e}");
                    None
                }
            },
            _ => None,
        };
        match split {
            Some(h) => h
                .into_iter()
                .map(|rx| TrunkRx {
                    trunk: trunk.clone(),
                    rx: Some(rx),
                })
                .collect(),
            None => vec![TrunkRx {
                trunk: trunk.clone(),
                rx: None,
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ports::MemPort;

    fn tagged(vids: &[u16], payload: u8) -> Vec<u8> {
        let mut f = vec![0xaa; 6];
        f.extend_from_slice(&[0xbb; 6]);
        for v in vids {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&v.to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00, payload, 1, 2, 3]);
        f
    }

    #[test]
    fn demux_pops_orders_and_counts() {
        let (a, _b) = MemPort::pair().unwrap();
        let t = Trunk::new(Box::new(a), 101, 103, 5);
        assert!(t.has_port(5) && t.has_port(7) && !t.has_port(8) && !t.has_port(4));
        let frames = [
            tagged(&[103], 1),
            tagged(&[101, 7], 2),
            tagged(&[999], 3),
            tagged(&[], 4),
            tagged(&[103], 5),
            tagged(&[101], 6),
        ];
        let mut bufs: Vec<PacketBuf> = frames.iter().map(|f| PacketBuf::from_slice(f)).collect();
        let mut keys = [0; ports::BATCH];
        let mut runs = [(0, 0, 0); ports::BATCH];
        let r = demux(&t, &mut bufs, &mut keys, &mut runs);
        assert_eq!(&runs[..r], &[(5, 0, 2), (7, 2, 4)]);
        // Stable order within a port; inner tag kept (QinQ).
        assert_eq!(bufs[0].data(), &tagged(&[7], 2)[..]);
        assert_eq!(bufs[1].data(), &tagged(&[], 6)[..]);
        assert_eq!(bufs[2].data(), &tagged(&[], 1)[..]);
        assert_eq!(bufs[3].data(), &tagged(&[], 5)[..]);
        assert_eq!(t.foreign.load(Ordering::Relaxed), 2);
        assert_eq!(t.logical[0].rx_packets.load(Ordering::Relaxed), 2);
        assert_eq!(t.logical[1].rx_packets.load(Ordering::Relaxed), 0);
        assert_eq!(t.logical[2].rx_packets.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn logical_ports_push_their_tag() {
        let (a, mut b) = MemPort::pair_named("tr", "peer", 16).unwrap();
        let t = Trunk::new(Box::new(a), 101, 102, 3);
        let mut ports = t.logical_ports();
        assert_eq!(ports.len(), 2);
        let (no, p) = &mut ports[1];
        assert_eq!((*no, p.name()), (4, "tr.102"));
        let mut tx = p.tx_clone().unwrap();
        assert_eq!(tx.tx_batch(&[&tagged(&[9], 1), &[1, 2]]).unwrap(), 1);
        assert_eq!(p.tx_batch(&[&tagged(&[], 2)]).unwrap(), 1);
        let mut bufs = vec![PacketBuf::new(); 4];
        assert_eq!(b.rx_batch(&mut bufs).unwrap(), 2);
        assert_eq!(bufs[0].data(), &tagged(&[102, 9], 1)[..]);
        assert_eq!(bufs[1].data(), &tagged(&[102], 2)[..]);
        let s = p.stats();
        assert_eq!((s.tx_packets, s.tx_errors), (2, 1));
        assert_eq!(
            s.tx_bytes,
            (tagged(&[9], 1).len() + tagged(&[], 2).len()) as u64
        );
        assert_eq!(ports[0].1.stats().tx_packets, 0);
        assert!(ports[0].1.link_up());
        assert_eq!(ports[0].1.fd(), None, "received through the trunk");
    }
}
