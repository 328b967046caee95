//! Keeping the key in step with the packet: a rewrite first continues a
//! partial parse as far as it needs (`ensure`), and push/pop, which move
//! headers, parse again ([`reparse`]).

use crate::buf::PacketBuf;
use crate::key::{FlowKey, Layer};
use crate::parse::{continue_to, parse_to};

/// Makes sure the key was parsed at least up to `layer`.
#[inline]
pub(super) fn ensure(buf: &PacketBuf, key: &mut FlowKey, layer: Layer) {
    if key.depth < layer {
        // Errors are recorded by the missing present bits.
        let _ = continue_to(buf.data(), key, layer);
    }
}

/// Parses the packet again up to the depth the key had (at least L2),
/// keeping the pipeline fields. Push/pop actions call this.
pub fn reparse(buf: &PacketBuf, key: &mut FlowKey) {
    let depth = key.depth.max(Layer::L2);
    let _ = parse_to(buf.data(), key, depth);
}
