//! The transmit side of the AF_XDP sockets: one socket's transmit half
//! ([`TxHalf`]: tx ring, completion ring and the free frames, super-frames
//! cut into segments) and the transmit clone given to a worker
//! ([`XdpTx`]).

use std::io;
use std::sync::Arc;

use xsk_rs::{CompQueue, FrameDesc, TxQueue, Umem};

use super::opts::RING_BATCH;
use crate::segment::Segments;
use crate::{PortTx, TxCounters};

/// The transmit half of one socket: tx ring, completion ring and the free
/// frames (`xdp` module comment).
pub(super) struct TxHalf {
    pub(super) umem: Umem,
    pub(super) tx: TxQueue,
    pub(super) comp: CompQueue,
    /// Frames we may write into.
    pub(super) free: Vec<FrameDesc>,
    /// Scratch for one batch (completion reads, tx writes).
    pub(super) descs: Vec<FrameDesc>,
    /// Largest frame a UMEM frame holds.
    pub(super) frame_room: usize,
    /// The device MTU (when the port was opened): super-frames are cut
    /// to it.
    pub(super) mtu: usize,
    /// One segment at a time, on its way into a UMEM frame.
    pub(super) scratch: Vec<u8>,
    pub(super) counters: Arc<TxCounters>,
}

impl TxHalf {
    /// Moves completed frames back to the free list.
    fn reclaim(&mut self) {
        loop {
            // SAFETY: completion entries name frames of this UMEM.
            let n = unsafe { self.comp.consume(&mut self.descs) };
            self.free.extend_from_slice(&self.descs[..n]);
            if n < self.descs.len() {
                break;
            }
        }
    }

    /// Transmits `pkts` in order (a TCP super-frame cut into segments,
    /// `crate::segment`); returns how many were handed to the kernel
    /// whole.
    pub(super) fn send(&mut self, pkts: &[&[u8]]) -> usize {
        self.reclaim();
        let mut sent = 0;
        let mut k = 0;
        for p in pkts {
            if p.len() <= self.frame_room {
                self.stage(p, &mut k);
                if k == RING_BATCH {
                    sent += self.flush(&mut k);
                }
                continue;
            }
            // A super-frame: what is staged goes first, then its segments.
            sent += self.flush(&mut k);
            let Some(segs) = Segments::new(p, self.mtu) else {
                self.counters.error();
                continue;
            };
            let mut scratch = std::mem::take(&mut self.scratch);
            let mut whole = true;
            for i in 0..segs.len() {
                scratch.resize(segs.segment_len(i), 0);
                match segs.write(i, &mut scratch) {
                    Some(n) => whole &= self.stage(&scratch[..n], &mut k),
                    None => whole = false,
                }
                if k == RING_BATCH {
                    whole &= self.flush(&mut k) == RING_BATCH;
                }
            }
            let staged = k;
            whole &= self.flush(&mut k) == staged;
            sent += usize::from(whole);
            self.scratch = scratch;
        }
        sent + self.flush(&mut k)
    }

    /// Copies `p` into a free frame as `descs[*k]`; false (and counted)
    /// when there is none or it does not fit.
    fn stage(&mut self, p: &[u8], k: &mut usize) -> bool {
        if p.len() > self.frame_room {
            self.counters.error();
            return false;
        }
        let Some(mut d) = self.free.pop() else {
            self.counters.dropped(1);
            return false;
        };
        // SAFETY: `d` is a free frame of this UMEM: not in any ring, so
        // neither the kernel nor another handle touches it.
        let mut data = unsafe { self.umem.data_mut(&mut d) };
        let mut cur = data.cursor();
        cur.set_pos(0);
        if io::Write::write_all(&mut cur, p).is_err() {
            self.free.push(d);
            self.counters.error();
            return false;
        }
        self.descs[*k] = d;
        *k += 1;
        true
    }

    /// Hands the staged frames `descs[..*k]` to the kernel (all or none:
    /// the ones the ring has no room for go back to the free list,
    /// counted as dropped) and empties the stage; returns how many went.
    fn flush(&mut self, k: &mut usize) -> usize {
        let n = std::mem::take(k);
        if n == 0 {
            return 0;
        }
        let room = self.tx.nb_free(n as u32) as usize;
        let put = if room >= n {
            // SAFETY: descs[..n] are frames of this UMEM we just filled;
            // they belong to the kernel until completed.
            unsafe { self.tx.produce(&self.descs[..n]) }
        } else {
            0
        };
        if put < n {
            self.free.extend_from_slice(&self.descs[put..n]);
            self.counters.dropped((n - put) as u64);
        }
        for d in &self.descs[..put] {
            self.counters.sent(d.lengths().data());
        }
        if put > 0 && self.tx.needs_wakeup() {
            let _ = self.tx.wakeup();
        }
        put
    }
}

/// A transmit clone of an [`XdpPort`](super::XdpPort)
/// ([`Port::tx_clone`](crate::Port::tx_clone)): the transmit half of one
/// device queue's socket.
pub struct XdpTx {
    pub(super) tx: TxHalf,
}

impl PortTx for XdpTx {
    fn tx_batch(&mut self, pkts: &[&[u8]]) -> io::Result<usize> {
        Ok(self.tx.send(pkts))
    }
}
