//! The batch path's per-table lookups from the frames, with the key made
//! only when a step needs it.
//!
//! A packet's trip on the general path starts with the general
//! parse into a ~200-byte `FlowKey`, whatever the tables look at. Here a
//! chunk of a batch whose table 0 can answer from frames goes as follows:
//!
//! ```text
//!  read every frame's common fields (`read_frame` into `FrameFields`:
//!     IPv4 with TCP or UDP, untagged or one 802.1Q tag, a header the
//!     general parse accepts, the values of the layers down to the
//!     pipeline's parse depth; any other frame is parsed as before)
//!  big pipelines (`batch`'s warm stages): walk, table by table along the
//!     gotos, the packets read so, each table answering a chunk from the
//!     frames if its lookup structure can (`TableKind::find_frames`),
//!     else the packet's walk stops there
//!  run every packet through the one executor (`crate::exec`) in batch
//!     order with those answers as hints and its key lazy (`exec::Lazy`):
//!     a trip of goto-only entries ending in one output or one action
//!     list takes the executor's short way (`Pipeline::run_framed`: no
//!     key, no action set); in any other, a table without a hint is
//!     looked up from the frame if it can answer so
//!     (`TableKind::lookup_frame`), and the key is parsed only when a
//!     step reads a packet field
//! ```
//!
//! A table answers from the frame when every field its entries match is
//! one a `FrameFields` holds, through the structure it uses for keys
//! (exact index, linear list, trie, tuple space), whatever the shape of
//! the pipeline around it (an ACL in front of a routing table, a VLAN
//! dispatch, any table of those fields). A packet whose trip needs no
//! field beyond its lookups and the ops the frame path can do (goto,
//! write-metadata, a drop, outputs to standard ports, pop-VLAN, set-fields
//! of MACs, IPv4 addresses and TCP/UDP ports, a next hop, a group of one
//! bucket at the tail, SELECT hashed from the frame: `exec::frame_ops`)
//! is never parsed.
//!
//! Exactness: a frame `read_frame` reads is one the general parse
//! accepts at every layer (so it is admitted, and is no fragment), and a
//! `FrameFields`' presence bits, and its values down to the parse depth
//! (all that any step reads), are those its key would have at table 0 on
//! the fields `FRAME_FIELDS` names; a table whose every match field is
//! among those gives the same answer for both. A lookup
//! from the frame is used only while no entry on the way wrote a field
//! the table matches on (the executor's rule for hints,
//! `Program::writes`, write-metadata included), and the lazy key is
//! parsed before the first step that may change the frame, so it is the
//! key parsed on arrival. `tests::batches_equal_process` (the router,
//! gateway and balancer properties) and `tests::l2_props` compare this
//! way with `process` packet by packet.

use crate::batch::{Seen, NONE, WARM_DEPTH};
use crate::chunk::CHUNK;
use crate::classifier::fields::{read_frame, ChunkFrames};
use crate::exec::Ctx;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::port::PortTable;
use crate::table::Nanos;
use crate::table_kind::TableKind;
use packet::{Field, FieldSet, FlowKey, Layer, PacketBuf, ParseError};

/// The fields a key made by `FlowKey::new(in_port)` holds as a received
/// packet's own key does at table 0: a table matching on these alone
/// gives every packet from a port the answer of that key.
const PORT_FIELDS: FieldSet = FieldSet::of(&[Field::InPort, Field::InPhyPort, Field::Metadata]);

/// Reads the frames of `chunk` (at most `CHUNK`) received on `in_port`
/// into `frames` (`read_frame`), their fields' values down to `depth`
/// only, the pipeline's parse depth: no step reads deeper ones. Bit i of
/// the answer: packet i was read.
#[inline(always)]
fn read_chunk(chunk: &[PacketBuf], in_port: u32, depth: Layer, frames: &mut ChunkFrames) -> u32 {
    let mut framed = 0u32;
    for (i, (buf, fr)) in chunk.iter().zip(frames.iter_mut()).enumerate() {
        if read_frame(buf.data(), in_port, depth, fr).is_some() {
            framed |= 1 << i;
        }
    }
    framed
}

impl Pipeline {
    /// Whether the batch path looks packets up from their frames (module
    /// comment): no extension in use (they read keys) and table 0 can
    /// answer from frames.
    #[inline]
    pub(crate) fn per_table_serves(&self) -> bool {
        !self.ext_in_use() && self.tables.first().is_some_and(|t| t.frames_answer())
    }

    /// One chunk (at most `CHUNK` packets, the first at `base` in the
    /// batch) received on `in_port`, which accepts frames, the per-table
    /// way (module comment). `warm`: the chunk's lookups are made in
    /// stages first (`Pipeline::walk`: from the frames for the packets
    /// read so, with their keys for the others, parsed first); else each
    /// packet is looked up when its turn comes, a packet not read from
    /// its frame parsed then (`process_in`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_per_table<O: Output>(
        &mut self,
        chunk: &mut [PacketBuf],
        base: usize,
        in_port: u32,
        now: Nanos,
        out: &mut O,
        warm: bool,
        done: &mut impl FnMut(&PortTable, &mut O, usize, Result<(), ParseError>),
    ) {
        let n = chunk.len().min(CHUNK);
        let Some(frames) = self.frames.take() else {
            return;
        };
        let mut frames = frames;
        let layer = self.parse_layer();
        let framed = read_chunk(&chunk[..n], in_port, layer, &mut frames);
        if warm {
            self.run_warmed(chunk, base, in_port, now, out, &frames, framed, done);
        } else {
            let port = self.port_answer(in_port);
            let hint = port.as_ref().map(|h| &h[..]);
            let mut tables = std::mem::take(&mut self.tables);
            // One key for the chunk's short trips (`run_framed`).
            let mut key = FlowKey::new(in_port);
            for (i, (buf, fr)) in chunk[..n].iter_mut().zip(frames.iter()).enumerate() {
                let res = if framed & (1 << i) != 0 {
                    let key = &mut key;
                    self.run_framed(&mut tables, buf, key, fr, layer, in_port, now, hint, out);
                    Ok(())
                } else {
                    self.process_in(&mut tables, buf, in_port, now, out)
                };
                done(&self.ports, out, base + i, res);
            }
            self.put_tables_back(tables);
        }
        self.frames = Some(frames);
    }

    /// Table 0's answer for every packet received on `in_port` (as a
    /// hint, `exec::Hint`), when table 0 matches on nothing but the
    /// fields a packet's key has from its port at table 0 (`PORT_FIELDS`:
    /// a dispatch table, `in_port=1 -> goto:1`, or a port patch): one
    /// lookup per chunk instead of one per packet.
    fn port_answer(&self, in_port: u32) -> Option<[(u32, u32); 1]> {
        let t = self.tables.first()?;
        if t.has_ext() || self.ext_table_active(0) || !PORT_FIELDS.contains_all(t.match_fields()) {
            return None;
        }
        let pos = t.find(&FlowKey::new(in_port));
        Some([(0, pos.map_or(NONE, |p| p as u32))])
    }

    /// `run_per_table` for a warmed pipeline: the packets not `framed`
    /// (bit i for packet i) parsed (`admit`), every packet's lookups
    /// made in stages into `seen` (from `frames` or the keys), then every
    /// packet run in order.
    #[allow(clippy::too_many_arguments)]
    fn run_warmed<O: Output>(
        &mut self,
        chunk: &mut [PacketBuf],
        base: usize,
        in_port: u32,
        now: Nanos,
        out: &mut O,
        frames: &ChunkFrames,
        framed: u32,
        done: &mut impl FnMut(&PortTable, &mut O, usize, Result<(), ParseError>),
    ) {
        let n = chunk.len().min(CHUNK);
        let Some(mut keys) = self.keys.take() else {
            return;
        };
        // Per packet: `Ok(true)` to table 0, `Ok(false)` dropped
        // silently, the parse error of a malformed one.
        let mut admit = [Ok(true); CHUNK];
        // `by_frame[..f]`, `by_key[..r]`: the packets admitted to table
        // 0 of each kind.
        let (mut by_frame, mut f) = ([0u8; CHUNK], 0);
        let (mut by_key, mut r) = ([0u8; CHUNK], 0);
        for (i, (buf, key)) in chunk[..n].iter().zip(keys.iter_mut()).enumerate() {
            if framed & (1 << i) != 0 {
                by_frame[f] = i as u8;
                f += 1;
                continue;
            }
            *key = FlowKey::new(in_port);
            admit[i] = self.admit(buf, key);
            if admit[i] == Ok(true) {
                by_key[r] = i as u8;
                r += 1;
            }
        }
        let mut seen: Seen = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
        // A port-keyed table 0 (`port_answer`) whose answer is a goto:
        // the frames' walks start at the goto's table.
        let from = match self.port_answer(in_port) {
            Some([(0, pos)]) => self
                .tables
                .first()
                .and_then(|t| t.program_at(pos as usize))
                .and_then(|p| p.only_goto)
                .filter(|&next| next > 0)
                .map(|next| (pos, next)),
            _ => None,
        };
        let start = match from {
            Some((pos, next)) => {
                for &j in &by_frame[..f] {
                    seen[usize::from(j)][0] = (0, pos);
                }
                (next, 1)
            }
            None => (0, 0),
        };
        let fs = &frames[..n];
        self.walk(&by_frame[..f], start, &mut seen, |t, order, found| {
            TableKind::find_frames(t, fs, order, found)
        });
        let ks = &keys[..n];
        self.walk(&by_key[..r], (0, 0), &mut seen, |t, order, found| {
            TableKind::find_many(t, ks, order, found);
            true
        });
        let layer = self.parse_layer();
        let mut tables = std::mem::take(&mut self.tables);
        // One key for the chunk's short trips (`run_framed`; `keys` holds
        // the others').
        let mut framed_key = FlowKey::new(in_port);
        for (i, (((buf, key), a), fr)) in chunk[..n]
            .iter_mut()
            .zip(keys.iter_mut())
            .zip(admit)
            .zip(frames.iter())
            .enumerate()
        {
            let hint = Some(&seen[i][..]);
            if framed & (1 << i) != 0 {
                let key = &mut framed_key;
                self.run_framed(&mut tables, buf, key, fr, layer, in_port, now, hint, out);
            } else if a == Ok(true) {
                let ctx = Ctx::received(in_port, now);
                self.run_tables_in(&mut tables, buf, key, ctx, hint, None, out);
            }
            done(&self.ports, out, base + i, a.map(|_| ()));
        }
        self.put_tables_back(tables);
        self.keys = Some(keys);
    }
}
