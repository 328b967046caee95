//! Packet buffer, parser into a [`FlowKey`], and header rewrites with
//! incremental checksums for the oxflow OpenFlow 1.3.5 switch.
//!
//! - [`PacketBuf`]: fixed-capacity storage with headroom; pushing headers
//!   never moves the payload.
//! - [`parse()`] / [`parse_to`] / [`continue_to`]: fill a [`FlowKey`] with every
//!   OXM-matchable field plus layer offsets; never panic on any bytes.
//! - [`rewrite`]: set-field, push/pop VLAN/MPLS/PBB, TTL actions; each keeps
//!   checksums and the key up to date.
//! - [`registry`]: the field registry, one table of every match field (OXM
//!   identity, width, prerequisites, key member, ctl names) from which
//!   [`Field`], [`FieldSet`]'s size and [`FlowKey::get`] are generated.
//!
//! This crate knows nothing of the OpenFlow wire format (beyond the
//! registry's OXM identities of the fields), threads, sockets or time. It
//! allocates nothing per packet.

pub mod buf;
pub mod checksum;
pub mod field;
pub mod key;
pub mod parse;
pub mod proto;
pub mod registry;
pub mod rewrite;

pub use buf::{BufError, PacketBuf};
pub use field::{exthdr, frag, Field, FieldSet, FieldValue, FIELD_SET_WORDS};
pub use key::{mac_bits, FlowKey, Layer, Offsets, VID_PRESENT};
pub use parse::{continue_to, parse, parse_to, ParseError, ParseResult, Reason};
pub use proto::{ethertype, ipproto};
pub use registry::{FieldDef, FieldId, OxmId, FIELD_DEFS};
pub use rewrite::{
    copy_ttl_in, copy_ttl_out, dec_mpls_ttl, dec_nw_ttl, dec_nw_ttl_general, pop_mpls, pop_pbb,
    pop_vlan, push_mpls, push_pbb, push_vlan, recompute_checksums, reparse, set_eth_dst, set_field,
    set_field_general, set_field_ref, set_ipv4_port, set_macs, set_mpls_ttl, set_nw_ttl,
    RewriteError, SetField,
};
