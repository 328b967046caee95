//! Why a rewrite was not done ([`RewriteError`]).

use crate::buf::BufError;
use crate::field::Field;
use thiserror::Error;

/// Why a rewrite was not done. The packet and key are unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RewriteError {
    #[error("the packet has no {0:?} field")]
    MissingField(Field),
    #[error("value out of range for {0:?}")]
    BadValue(Field),
    #[error("no VLAN tag to pop")]
    NoVlan,
    #[error("no MPLS label stack entry")]
    NoMpls,
    #[error("no PBB I-TAG to pop")]
    NoPbb,
    #[error("no IP header")]
    NoIp,
    #[error("no inner MPLS or IP header to copy the TTL to or from")]
    NoInnerTtl,
    /// Decrementing a TTL of 0 or 1: the packet must not be forwarded (the
    /// pipeline may send it to the controller with reason INVALID_TTL).
    #[error("TTL expired (was {0})")]
    TtlExpired(u8),
    #[error("ethertype {0:#06x} is not valid for this push")]
    BadEthertype(u16),
    #[error("cannot recompute the SCTP checksum of a fragment")]
    SctpFragment,
    #[error("header extends past the end of the packet")]
    Truncated,
    #[error("packet buffer: {0}")]
    Buf(#[from] BufError),
}
