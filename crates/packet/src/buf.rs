//! A packet buffer with headroom.
//!
//! Layout of the one heap block a `PacketBuf` owns (allocated once, reused
//! for every packet the buffer carries):
//!
//! ```text
//!  0            start                    end                  storage.len()
//!  |  headroom  |  packet bytes (data)   |       tailroom       |
//! ```
//!
//! A fresh packet is placed at `start = headroom` (128 bytes by default).
//! Pushing a header (`push_front`) only moves `start` left, pulling one moves
//! it right: the payload never moves. Inserting bytes in the middle of the
//! headers (a VLAN tag after the MAC addresses, an MPLS shim after the tags)
//! moves the bytes *before* the insertion point left into the headroom, so
//! pushing a VLAN tag copies 12 bytes whatever the packet size. Removing
//! bytes does the reverse. Only when the headroom is exhausted do we fall
//! back to moving the tail into the tailroom.

use thiserror::Error;

/// Default headroom in bytes (room for PBB + MPLS + VLAN pushes).
pub const DEFAULT_HEADROOM: usize = 128;
/// Default room for packet bytes (a standard frame plus slack).
pub const DEFAULT_CAPACITY: usize = 2048;

/// Why a buffer operation could not be done. The buffer is unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum BufError {
    #[error("no room in the packet buffer for {0} more bytes")]
    NoRoom(usize),
    #[error("offset/length beyond the end of the packet")]
    OutOfRange,
}

/// Fixed-capacity packet storage with headroom; see the module comment.
#[derive(Clone)]
pub struct PacketBuf {
    storage: Box<[u8]>,
    start: usize,
    end: usize,
    /// The headroom a fresh packet gets (restored by `set`/`clear`).
    reserve: usize,
}

impl Default for PacketBuf {
    fn default() -> Self {
        PacketBuf::new()
    }
}

impl std::fmt::Debug for PacketBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketBuf")
            .field("len", &self.len())
            .field("headroom", &self.headroom())
            .field("data", &self.data())
            .finish()
    }
}

impl PartialEq for PacketBuf {
    fn eq(&self, other: &Self) -> bool {
        self.data() == other.data()
    }
}

impl PacketBuf {
    /// An empty buffer with the default headroom and capacity.
    pub fn new() -> PacketBuf {
        PacketBuf::with_capacity(DEFAULT_HEADROOM, DEFAULT_CAPACITY)
    }

    /// An empty buffer with `headroom` bytes in front and room for
    /// `capacity` packet bytes after it.
    pub fn with_capacity(headroom: usize, capacity: usize) -> PacketBuf {
        PacketBuf {
            storage: vec![0; headroom + capacity].into_boxed_slice(),
            start: headroom,
            end: headroom,
            reserve: headroom,
        }
    }

    /// A default-sized buffer holding a copy of `bytes` (a larger buffer if
    /// `bytes` does not fit the default capacity).
    pub fn from_slice(bytes: &[u8]) -> PacketBuf {
        let mut b = PacketBuf::with_capacity(DEFAULT_HEADROOM, DEFAULT_CAPACITY.max(bytes.len()));
        // Cannot fail: the capacity was chosen to fit.
        let _ = b.set(bytes);
        b
    }

    /// Replaces the contents with a copy of `bytes`, restoring the full
    /// headroom (reuse of a pooled buffer).
    pub fn set(&mut self, bytes: &[u8]) -> Result<(), BufError> {
        let start = self.reserve;
        let end = start + bytes.len();
        let dst = self
            .storage
            .get_mut(start..end)
            .ok_or(BufError::NoRoom(bytes.len()))?;
        dst.copy_from_slice(bytes);
        self.start = start;
        self.end = end;
        Ok(())
    }

    /// Empties the buffer and restores the full headroom.
    pub fn clear(&mut self) {
        self.start = self.reserve;
        self.end = self.reserve;
    }

    /// The packet bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.storage[self.start..self.end]
    }

    /// The packet bytes, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.end]
    }

    /// Packet length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Free bytes before the packet.
    #[inline]
    pub fn headroom(&self) -> usize {
        self.start
    }

    /// Free bytes after the packet.
    #[inline]
    pub fn tailroom(&self) -> usize {
        self.storage.len() - self.end
    }

    /// Grows the packet by `n` bytes at the front (into the headroom) and
    /// returns them; their content is unspecified.
    pub fn push_front(&mut self, n: usize) -> Result<&mut [u8], BufError> {
        if n > self.start {
            return Err(BufError::NoRoom(n));
        }
        self.start -= n;
        Ok(&mut self.storage[self.start..self.start + n])
    }

    /// Drops `n` bytes from the front.
    pub fn pull_front(&mut self, n: usize) -> Result<(), BufError> {
        if n > self.len() {
            return Err(BufError::OutOfRange);
        }
        self.start += n;
        Ok(())
    }

    /// Grows the packet by `n` bytes at the end (content unspecified).
    pub fn push_back(&mut self, n: usize) -> Result<&mut [u8], BufError> {
        if n > self.tailroom() {
            return Err(BufError::NoRoom(n));
        }
        self.end += n;
        Ok(&mut self.storage[self.end - n..self.end])
    }

    /// Shortens the packet to `len` bytes (no-op if already shorter).
    pub fn truncate(&mut self, len: usize) {
        if len < self.len() {
            self.end = self.start + len;
        }
    }

    /// Opens a gap of `n` zero bytes at offset `off` and returns it. The
    /// `off` bytes before the gap move left into the headroom; if there is
    /// not enough headroom the bytes after `off` move right instead.
    pub fn insert(&mut self, off: usize, n: usize) -> Result<&mut [u8], BufError> {
        if off > self.len() {
            return Err(BufError::OutOfRange);
        }
        if n <= self.start {
            let s = self.start;
            self.storage.copy_within(s..s + off, s - n);
            self.start -= n;
        } else if n <= self.tailroom() {
            let at = self.start + off;
            self.storage.copy_within(at..self.end, at + n);
            self.end += n;
        } else {
            return Err(BufError::NoRoom(n));
        }
        let at = self.start + off;
        let gap = &mut self.storage[at..at + n];
        gap.fill(0);
        Ok(gap)
    }

    /// Removes `n` bytes at offset `off` by moving the `off` bytes before
    /// them right (the payload stays in place). Inlined: with `off` and
    /// `n` known at the call (a tag after the MACs), the move is a
    /// fixed-size copy, not a `memmove` call.
    #[inline]
    pub fn remove(&mut self, off: usize, n: usize) -> Result<(), BufError> {
        if off.checked_add(n).is_none_or(|e| e > self.len()) {
            return Err(BufError::OutOfRange);
        }
        let s = self.start;
        self.storage.copy_within(s..s + off, s + n);
        self.start += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_pull_front() {
        let mut b = PacketBuf::from_slice(&[1, 2, 3]);
        assert_eq!(b.headroom(), DEFAULT_HEADROOM);
        b.push_front(2).unwrap().copy_from_slice(&[8, 9]);
        assert_eq!(b.data(), &[8, 9, 1, 2, 3]);
        b.pull_front(3).unwrap();
        assert_eq!(b.data(), &[2, 3]);
        assert_eq!(b.pull_front(3), Err(BufError::OutOfRange));
        assert!(b.push_front(1000).is_err());
    }

    #[test]
    fn insert_moves_only_the_front() {
        let mut b = PacketBuf::from_slice(&[1, 2, 3, 4, 5, 6]);
        let tail_addr = b.data()[4..].as_ptr() as usize;
        b.insert(2, 3).unwrap().copy_from_slice(&[7, 7, 7]);
        assert_eq!(b.data(), &[1, 2, 7, 7, 7, 3, 4, 5, 6]);
        // The bytes after the insertion point did not move.
        assert_eq!(b.data()[7..].as_ptr() as usize, tail_addr);
        b.remove(2, 3).unwrap();
        assert_eq!(b.data(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(b.remove(5, 2), Err(BufError::OutOfRange));
        assert_eq!(b.insert(7, 1).err(), Some(BufError::OutOfRange));
    }

    #[test]
    fn insert_without_headroom_uses_tailroom() {
        let mut b = PacketBuf::with_capacity(0, 8);
        b.set(&[1, 2, 3]).unwrap();
        b.insert(1, 2).unwrap();
        assert_eq!(b.data(), &[1, 0, 0, 2, 3]);
        assert_eq!(b.insert(0, 4).err(), Some(BufError::NoRoom(4)));
        b.truncate(2);
        assert_eq!(b.data(), &[1, 0]);
        b.push_back(1).unwrap()[0] = 9;
        assert_eq!(b.data(), &[1, 0, 9]);
        assert!(b.set(&[0; 9]).is_err());
        b.clear();
        assert!(b.is_empty());
    }
}
