//! The batch path's unit of work: packets are classified, looked up and
//! run `CHUNK` at a time (their keys and per-packet arrays live on the
//! stack), so every stage is a short loop whose iterations overlap their
//! cache misses.

/// Packets per stage; longer batches are cut into chunks of this many.
pub const CHUNK: usize = 32;
