//! Header rewrites: set-field, push/pop of VLAN, MPLS and PBB headers, and
//! the TTL actions of OpenFlow 1.3.5.
//!
//! Every rewrite takes the packet buffer and its
//! [`FlowKey`](crate::FlowKey), uses the layer offsets in the key instead
//! of parsing again, and leaves the key describing the rewritten packet:
//! set-field updates the key in place; push/pop (which move headers) parse
//! the packet again up to the depth the key had. If the key was parsed
//! only partly (`parse_to`), a rewrite first continues the parse as far as
//! it needs.
//!
//! Checksums are updated incrementally (RFC 1624): the IPv4 header checksum,
//! TCP/UDP/ICMPv6 checksums including their pseudo-header when an address
//! changes, ICMPv4. A UDP checksum of 0 means "none" and stays 0. SCTP's
//! CRC32c is recomputed over the SCTP packet. A rewrite that fails leaves
//! the packet and the key unchanged.
//!
//! The modules: `set_field` (the action's value and its general
//! implementation), `fast_path` (the per-packet set-fields inlined into
//! the caller) and `frame` (their frame halves), `push_pop`, `ttl`,
//! `checksums` (patching bytes under checksums), `reparse` (keeping the
//! key in step) and `error`.

mod checksums;
mod error;
mod fast_path;
mod frame;
mod push_pop;
mod reparse;
mod set_field;
#[cfg(test)]
mod tests;
mod ttl;

pub use checksums::recompute_checksums;
pub use error::RewriteError;
pub use fast_path::{
    set_eth_dst, set_field, set_field_ref, set_ipv4_addr, set_ipv4_port, set_macs,
};
pub use frame::{
    ipv4_addr_at, ipv4_addr_offset, ipv4_ttl_down, l4_port_at, nat_ipv4_at, write_macs,
};
pub use push_pop::{pop_mpls, pop_pbb, pop_vlan, push_mpls, push_pbb, push_vlan, DEFAULT_MPLS_TTL};
pub use reparse::reparse;
pub use set_field::{set_field_general, SetField};
pub use ttl::{
    copy_ttl_in, copy_ttl_out, dec_mpls_ttl, dec_nw_ttl, dec_nw_ttl_general, set_mpls_ttl,
    set_nw_ttl,
};
