//! The packet-in buffer pool (spec §7.4.1, §7.3.7).
//!
//! [`N_BUFFERS`] slots. A buffer id is `generation << 8 | slot`: the slot
//! gives O(1) lookup and the generation (bumped at every reuse of the slot)
//! makes an id stale once its slot was reused, so an old id answers
//! BUFFER_UNKNOWN rather than releasing someone else's packet. A slot
//! remembers the id it last held after the packet was taken, so a second
//! use of the same id answers BUFFER_EMPTY. Packets not claimed within
//! [`BUFFER_TIMEOUT`] are freed when a slot is needed.

use ofp::error::{BadRequestCode, ErrorCode};
use pipeline::Nanos;

pub const N_BUFFERS: usize = 256;
/// How long an unclaimed buffered packet is kept.
pub const BUFFER_TIMEOUT: Nanos = 5_000_000_000;

/// A buffered packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffered {
    pub in_port: u32,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
struct Slot {
    /// Id last given out for this slot (0 before the first use).
    id: u32,
    generation: u32,
    /// The packet and when it was buffered; `None` once taken or expired.
    packet: Option<(Buffered, Nanos)>,
}

#[derive(Debug, Clone)]
pub struct BufferPool {
    slots: Vec<Slot>,
    /// Where the search for a free slot starts (round robin, so ids are
    /// reused as late as possible).
    next: usize,
}

impl Default for BufferPool {
    fn default() -> Self {
        BufferPool {
            slots: vec![Slot::default(); N_BUFFERS],
            next: 0,
        }
    }
}

impl BufferPool {
    /// Stores a packet; `None` when every slot holds a fresh packet (the
    /// caller then sends the whole packet with OFP_NO_BUFFER).
    pub fn store(&mut self, b: Buffered, now: Nanos) -> Option<u32> {
        for k in 0..N_BUFFERS {
            let i = (self.next + k) % N_BUFFERS;
            let slot = &mut self.slots[i];
            let free = match &slot.packet {
                None => true,
                Some((_, at)) => now.saturating_sub(*at) >= BUFFER_TIMEOUT,
            };
            if free {
                // Generations wrap within 23 bits so an id never equals
                // OFP_NO_BUFFER (0xffffffff).
                slot.generation = (slot.generation + 1) & 0x7f_ffff;
                slot.id = (slot.generation << 8) | i as u32;
                slot.packet = Some((b, now));
                self.next = (i + 1) % N_BUFFERS;
                return Some(slot.id);
            }
        }
        None
    }

    /// Takes the packet buffered under `id`.
    pub fn take(&mut self, id: u32, now: Nanos) -> Result<Buffered, ErrorCode> {
        let unknown = ErrorCode::BadRequest(BadRequestCode::BufferUnknown);
        let slot = self
            .slots
            .get_mut((id & 0xff) as usize)
            .filter(|s| s.id == id && id != 0)
            .ok_or(unknown)?;
        match slot.packet.take() {
            Some((b, at)) if now.saturating_sub(at) < BUFFER_TIMEOUT => Ok(b),
            _ => Err(ErrorCode::BadRequest(BadRequestCode::BufferEmpty)),
        }
    }

    /// Number of packets currently held (expired ones included until their
    /// slot is reused).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.packet.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
