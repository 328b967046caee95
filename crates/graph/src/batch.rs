//! A batch of up to [`BATCH`] packets with their metadata.
//!
//! Layout: two parallel vectors allocated once and never grown: `bufs`
//! (capacity [`BATCH`]) holds the packets' [`PacketBuf`]s, `bufs[i]` the
//! i-th packet's (moved in and out, never copied: a move is the buffer's
//! pointer and three indices); `meta` always holds [`BATCH`] [`Meta`]
//! blocks, of which `meta[i]` for `i < bufs.len()` is the i-th packet's and
//! the rest are spare slots, so a packet's metadata is written in place
//! into its slot (no block built elsewhere and copied in). A [`Meta`] is a
//! fixed 96-byte block:
//!
//! ```text
//!  offset  size  field
//!   0       4    in_port      physical ingress port (written by port input)
//!   4       4    in_logical   logical ingress port (VLAN split; else = in_port)
//!   8       8    metadata     OpenFlow metadata register
//!  16       8    tunnel_id    OpenFlow tunnel id
//!  24       1    parse_depth  how many layers `parse` decoded (0 = none)
//!  25      64    attrs        module-declared attributes, at offsets the
//!                             graph resolves when it is built ([`crate::metadata`])
//!  89       7    (padding to the 8-byte alignment)
//! ```
//!
//! The fixed fields are always present; attributes are read and written at
//! an offset a module learns when it is bound ([`crate::metadata::Attr`]),
//! so an access is one bounds-checked slice at a known offset. An emptied
//! batch keeps its capacity, so passing batches around allocates nothing.

use packet::PacketBuf;

/// Packets per batch.
pub const BATCH: usize = 32;
/// Bytes of module-declared attributes per packet.
pub const ATTR_BYTES: usize = 64;

/// Per-packet metadata; see the module comment for the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Meta {
    pub in_port: u32,
    pub in_logical: u32,
    pub metadata: u64,
    pub tunnel_id: u64,
    pub parse_depth: u8,
    pub attrs: [u8; ATTR_BYTES],
}

impl Default for Meta {
    fn default() -> Self {
        Meta {
            in_port: 0,
            in_logical: 0,
            metadata: 0,
            tunnel_id: 0,
            parse_depth: 0,
            attrs: [0; ATTR_BYTES],
        }
    }
}

impl Meta {
    /// Fresh metadata of a packet received on `port`.
    pub fn received(port: u32) -> Meta {
        Meta {
            in_port: port,
            in_logical: port,
            ..Meta::default()
        }
    }
}

/// Up to [`BATCH`] packets and their metadata; see the module comment.
/// Invariant: `bufs.len() <= meta.len()`, and `meta.len()` is [`BATCH`]
/// (0 for the placeholder of [`Batch::default`], which takes no packet).
#[derive(Debug)]
pub struct Batch {
    bufs: Vec<PacketBuf>,
    meta: Vec<Meta>,
}

/// An empty batch *without* capacity (allocates nothing: a placeholder
/// while a batch is lent out; it is full, so it takes no packet);
/// [`Batch::new`] makes a usable one.
impl Default for Batch {
    fn default() -> Self {
        Batch {
            bufs: Vec::new(),
            meta: Vec::new(),
        }
    }
}

impl Batch {
    /// An empty batch with room for [`BATCH`] packets (the only allocation).
    pub fn new() -> Batch {
        Batch {
            bufs: Vec::with_capacity(BATCH),
            meta: vec![Meta::default(); BATCH],
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.bufs.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    #[inline]
    pub fn is_full(&self) -> bool {
        self.bufs.len() >= self.meta.len()
    }

    /// Appends a packet; a full batch gives it back.
    #[inline]
    pub fn push(&mut self, buf: PacketBuf, meta: Meta) -> Result<(), PacketBuf> {
        self.push_with(buf, |m| *m = meta)
    }

    /// Appends a packet whose metadata `init` writes in place, into the
    /// packet's slot (which holds an earlier packet's block: `init` sets
    /// every field it does not want kept, e.g. `*m = Meta::received(p)`);
    /// a full batch gives the packet back.
    #[inline(always)]
    pub fn push_with(
        &mut self,
        buf: PacketBuf,
        init: impl FnOnce(&mut Meta),
    ) -> Result<(), PacketBuf> {
        match self.meta.get_mut(self.bufs.len()) {
            Some(m) if self.bufs.len() < BATCH => {
                init(m);
                self.bufs.push(buf);
                Ok(())
            }
            _ => Err(buf),
        }
    }

    /// Moves the first `n` buffers of `bufs` into this empty batch, each
    /// with a copy of `meta`, leaving the others in `bufs`: when `bufs`
    /// has room for [`BATCH`] buffers the two vectors are exchanged
    /// (constant time) and the rest moved back. Returns false, changing
    /// nothing, when the batch is not empty or cannot take `n` packets.
    #[inline]
    pub fn fill_from(&mut self, bufs: &mut Vec<PacketBuf>, n: usize, meta: Meta) -> bool {
        if !self.bufs.is_empty() || n > self.meta.len().min(BATCH) || n > bufs.len() {
            return false;
        }
        if bufs.capacity() >= BATCH {
            std::mem::swap(&mut self.bufs, bufs);
            bufs.extend(self.bufs.drain(n..));
        } else {
            self.bufs.extend(bufs.drain(..n));
        }
        if let Some(m) = self.meta.get_mut(..n) {
            m.fill(meta);
        }
        true
    }

    /// Takes the last packet out.
    #[inline]
    pub fn pop(&mut self) -> Option<(PacketBuf, Meta)> {
        let b = self.bufs.pop()?;
        let m = self.meta.get(self.bufs.len()).copied().unwrap_or_default();
        Some((b, m))
    }

    /// Moves every packet out, in order (the batch keeps its capacity).
    #[inline]
    pub fn drain(&mut self) -> impl Iterator<Item = (PacketBuf, Meta)> + '_ {
        self.bufs.drain(..).zip(self.meta.iter().copied())
    }

    /// Moves every buffer out, in order, dropping the metadata (the batch
    /// keeps its capacity): for a module that is done with the packets.
    #[inline]
    pub fn drain_bufs(&mut self) -> impl Iterator<Item = PacketBuf> + '_ {
        self.bufs.drain(..)
    }

    /// The packets and their metadata, for in-place work.
    #[inline]
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&mut PacketBuf, &mut Meta)> {
        self.bufs.iter_mut().zip(self.meta.iter_mut())
    }

    #[inline]
    pub fn iter(&self) -> impl Iterator<Item = (&PacketBuf, &Meta)> {
        self.bufs.iter().zip(self.meta.iter())
    }

    /// The packet buffers (e.g. to gather slices for a transmit).
    #[inline]
    pub fn bufs(&self) -> &[PacketBuf] {
        &self.bufs
    }

    /// The packet buffers, for in-place work on the whole batch (a module
    /// that hands them to a batch function such as the OpenFlow pipeline's).
    #[inline]
    pub fn bufs_mut(&mut self) -> &mut [PacketBuf] {
        &mut self.bufs
    }

    #[inline]
    pub fn meta(&self) -> &[Meta] {
        self.meta.get(..self.bufs.len()).unwrap_or(&[])
    }

    /// The packets' metadata, for in-place work.
    #[inline]
    pub fn meta_mut(&mut self) -> &mut [Meta] {
        self.meta.get_mut(..self.bufs.len()).unwrap_or(&mut [])
    }
}

/// A per-worker stack of spare packet buffers: received packets take one,
/// transmitted or dropped ones give it back, so a warm worker allocates
/// nothing. It holds at most `cap` buffers (more are freed); a buffer it
/// allocates holds frames of up to `frame_len` bytes (the longest frame a
/// worker's ports deliver: GSO frames need more than the default).
#[derive(Debug)]
pub struct Pool {
    spare: Vec<PacketBuf>,
    cap: usize,
    frame_len: usize,
    /// Buffers allocated because the pool was empty.
    pub allocated: u64,
}

/// Default most buffers a [`Pool`] keeps.
pub const POOL_CAP: usize = 4096;

impl Default for Pool {
    fn default() -> Self {
        Pool::new(POOL_CAP)
    }
}

impl Pool {
    pub fn new(cap: usize) -> Pool {
        Pool {
            spare: Vec::with_capacity(cap),
            cap,
            frame_len: packet::buf::DEFAULT_CAPACITY,
            allocated: 0,
        }
    }

    /// Makes the buffers allocated from now on hold frames of up to
    /// `frame_len` bytes (at least the default); spare buffers that are
    /// smaller are freed.
    pub fn set_frame_len(&mut self, frame_len: usize) {
        self.frame_len = frame_len.max(packet::buf::DEFAULT_CAPACITY);
        let want = self.frame_len;
        self.spare.retain(|b| {
            b.headroom() + b.len() + b.tailroom() >= want + packet::buf::DEFAULT_HEADROOM
        });
    }

    /// The longest frame a buffer of the pool holds.
    pub fn frame_len(&self) -> usize {
        self.frame_len
    }

    /// A spare buffer (allocated if there is none).
    #[inline]
    pub fn get(&mut self) -> PacketBuf {
        match self.spare.pop() {
            Some(b) => b,
            None => {
                self.allocated += 1;
                PacketBuf::with_capacity(packet::buf::DEFAULT_HEADROOM, self.frame_len)
            }
        }
    }

    /// A spare buffer holding a copy of `bytes` (flooding), `None` if it
    /// does not fit a buffer.
    #[inline]
    pub fn copy_of(&mut self, bytes: &[u8]) -> Option<PacketBuf> {
        let mut b = self.get();
        match b.set(bytes) {
            Ok(()) => Some(b),
            Err(_) => {
                self.put(b);
                None
            }
        }
    }

    /// Gives a buffer back.
    #[inline]
    pub fn put(&mut self, buf: PacketBuf) {
        if self.spare.len() < self.cap {
            self.spare.push(buf);
        }
    }

    /// Gives every buffer of `bufs` back (those beyond the cap are freed).
    #[inline]
    pub fn put_all(&mut self, bufs: impl Iterator<Item = PacketBuf>) {
        let room = self.cap.saturating_sub(self.spare.len());
        self.spare.extend(bufs.take(room));
    }

    /// Tops `bufs` up to `want` buffers: spare ones moved over in one
    /// block, then new ones if the pool runs out.
    #[inline]
    pub fn fill(&mut self, bufs: &mut Vec<PacketBuf>, want: usize) {
        let k = want.saturating_sub(bufs.len()).min(self.spare.len());
        bufs.extend(self.spare.drain(self.spare.len() - k..));
        while bufs.len() < want {
            bufs.push(self.get());
        }
    }

    /// Spare buffers held.
    pub fn len(&self) -> usize {
        self.spare.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spare.is_empty()
    }

    /// Fills the pool with `n` buffers (warm-up before traffic).
    pub fn prefill(&mut self, n: usize) {
        while self.spare.len() < n.min(self.cap) {
            let b = PacketBuf::with_capacity(packet::buf::DEFAULT_HEADROOM, self.frame_len);
            self.spare.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_moves_buffers_and_keeps_capacity() {
        let mut b = Batch::new();
        for i in 0..BATCH {
            assert!(b
                .push(PacketBuf::from_slice(&[i as u8]), Meta::received(i as u32))
                .is_ok());
        }
        assert!(b.is_full());
        assert!(b.push(PacketBuf::new(), Meta::default()).is_err());
        let got: Vec<(u8, u32)> = b.drain().map(|(p, m)| (p.data()[0], m.in_port)).collect();
        assert_eq!(got.len(), BATCH);
        assert_eq!(got[5], (5, 5));
        assert!(b.is_empty());
        assert_eq!(b.bufs.capacity(), BATCH);
        assert_eq!(std::mem::size_of::<Meta>(), 96);
    }

    #[test]
    fn pool_reuses_and_caps() {
        let mut p = Pool::new(2);
        let a = p.get();
        assert_eq!(p.allocated, 1);
        p.put(a);
        let _ = p.get();
        assert_eq!(p.allocated, 1);
        p.prefill(5);
        assert_eq!(p.len(), 2);
        assert!(p.copy_of(&[0; 5000]).is_none());
        assert_eq!(p.copy_of(&[1, 2]).map(|b| b.len()), Some(2));
    }
}
