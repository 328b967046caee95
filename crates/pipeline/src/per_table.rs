//! The batch path's per-table lookups from the frames, with the key made
//! only when a step needs it.
//!
//! A packet's trip on the general path used to start with the general
//! parse into a ~200-byte `FlowKey`, whatever the tables look at. Here a
//! chunk of a batch that no template takes goes as follows:
//!
//! ```text
//!  read every frame's common fields (`chain_frame` into `FrameFields`:
//!     IPv4 with TCP or UDP, untagged or one 802.1Q tag, a header the
//!     general parse accepts; any other frame is parsed as before)
//!  walk, table by table along the gotos, the packets read so: each
//!     table answers from the frames if its lookup structure can
//!     (`TableKind::find_frames`: a table matching only fields a
//!     `FrameFields` holds, through its trie and tuple space), else the
//!     packet's walk stops there
//!  run every packet through the one executor (`crate::exec`) in batch
//!     order with those answers as hints, its key lazy (`exec::Lazy`):
//!     parsed only when a step reads a packet field
//! ```
//!
//! So a table is looked up from the frame when its own lookup structure
//! allows it, whatever the shape of the pipeline around it (an ACL in
//! front of a routing table, a table no template knows), and a packet
//! whose trip needs no field beyond its lookups (goto, write-metadata,
//! an output to a standard port, a drop) is never parsed.
//!
//! Exactness: a frame `chain_frame` reads is one the general parse
//! accepts at every layer (so it is admitted, and is no fragment), and a
//! `FrameFields`' values and presence bits are those its key would have
//! at table 0 on the fields `FRAME_FIELDS` names; a table whose every
//! match field is among those gives the same answer for both. A hint is
//! used only while no entry on the way wrote a field the table matches
//! on (the executor's rule, `Program::writes`, write-metadata included),
//! and the lazy key is parsed before the first step that may change the
//! frame, so it is the key parsed on arrival (`tests::per_table_props`
//! compares the batch path with `process`).

use crate::batch::{Seen, NONE, WARM_DEPTH};
use crate::chunk::CHUNK;
use crate::classifier::exact::COMMON;
use crate::classifier::fields::FrameFields;
use crate::exec::Ctx;
use crate::output::Output;
use crate::pipeline::Pipeline;
use crate::port::PortTable;
use crate::table::Nanos;
use crate::table_kind::TableKind;
use crate::template::chain::chain_frame;
use packet::{FieldSet, FlowKey, PacketBuf, ParseError};

/// A packet of a chunk before its run (`run_per_table`).
#[derive(Debug, Clone, Copy)]
enum Admit {
    /// Read from its frame: goes to table 0 with a lazy key.
    Framed,
    /// Parsed: goes to table 0.
    Parsed,
    /// Dropped silently (fragment with `frag_drop`).
    Drop,
    /// Malformed (dropped; the caller counts it).
    Bad(ParseError),
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
    /// way (module comment); `warm`: the parsed packets are warmed with
    /// their keys as `batch` does.
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
        let layer = self.parse_layer();
        let mut frames = [FrameFields {
            common: [0; COMMON],
            have: FieldSet::EMPTY,
        }; CHUNK];
        let mut keys = [FlowKey::new(in_port); CHUNK];
        let mut admit = [Admit::Drop; CHUNK];
        // `framed[..f]`, `parsed[..r]`: the indices of the packets of
        // each kind admitted to table 0.
        let (mut framed, mut f) = ([0u8; CHUNK], 0);
        let (mut parsed, mut r) = ([0u8; CHUNK], 0);
        for (i, buf) in chunk[..n].iter().enumerate() {
            admit[i] = if chain_frame(buf.data(), in_port, &mut frames[i]).is_some() {
                framed[f] = i as u8;
                f += 1;
                Admit::Framed
            } else {
                match self.admit(buf, &mut keys[i]) {
                    Ok(true) => {
                        parsed[r] = i as u8;
                        r += 1;
                        Admit::Parsed
                    }
                    Ok(false) => Admit::Drop,
                    Err(e) => Admit::Bad(e),
                }
            };
        }
        let mut seen: Seen = [[(NONE, NONE); WARM_DEPTH]; CHUNK];
        self.walk(&framed[..f], &mut seen, |t, order, found| {
            TableKind::find_frames(t, &frames[..n], order, found)
        });
        if warm {
            let keys = &keys[..n];
            self.walk(&parsed[..r], &mut seen, |t, order, found| {
                TableKind::find_many(t, keys, order, found);
                true
            });
        }
        let mut tables = std::mem::take(&mut self.tables);
        for (i, ((buf, key), a)) in chunk[..n].iter_mut().zip(&mut keys).zip(admit).enumerate() {
            let ctx = Ctx::received(in_port, now);
            let hint = Some(&seen[i][..]);
            let res = match a {
                Admit::Framed => {
                    self.run_tables_in(&mut tables, buf, key, ctx, hint, Some(layer), out);
                    Ok(())
                }
                Admit::Parsed => {
                    let hint = if warm { hint } else { None };
                    self.run_tables_in(&mut tables, buf, key, ctx, hint, None, out);
                    Ok(())
                }
                Admit::Drop => Ok(()),
                Admit::Bad(e) => Err(e),
            };
            done(&self.ports, out, base + i, res);
        }
        self.put_tables_back(tables);
    }
}
