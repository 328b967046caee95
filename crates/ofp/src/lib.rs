//! `ofp` — the OpenFlow 1.3.5 wire codec.
//!
//! Every message of the spec, both directions, encode and decode, with strict
//! validation: a decoder never panics, and every refusal is a [`DecodeError`]
//! carrying the exact OFPT_ERROR (type, code) the switch answers with.
//! Encoding is canonical: zeroed padding, 8-byte alignment where the spec asks
//! for it, and length fields computed from content.
//!
//! Layout (one spec concept per module):
//! - [`wire`]: bounds-checked reader, big-endian writer.
//! - [`error`]: every error type and code; the OFPT_ERROR body.
//! - [`header`]: `ofp_header`, message type numbers, protocol version.
//! - [`port`]: port numbers, `ofp_port` and its flag words.
//! - [`oxm`]: OXM fields and `ofp_match`.
//! - [`action`], [`instruction`]: actions and instructions.
//! - [`message`]: the [`Message`] enum and every non-multipart body.
//! - [`group`], [`meter`], [`queue`]: buckets, meter bands, queue properties
//!   and the mod/config messages built from them.
//! - [`multipart`], [`table_features`]: multipart requests and replies.
//! - [`experimenter`]: oxflow's experimenter id and the bodies of its
//!   experimenter messages (worker statistics).
//! - [`snapshot`]: a switch's state as a checksummed file of OpenFlow messages.
//! - [`bundle`]: the ONF bundle extension of OpenFlow 1.3 (EXT-230).
//! - [`beba`]: the BEBA / OpenState stateful-forwarding experimenter extension.
//! - [`flexforward`]: FlexForward, the forwarding-mode experimenter messages.

pub mod action;
pub mod beba;
pub mod bundle;
pub mod error;
pub mod experimenter;
pub mod flexforward;
pub mod graph_change;
pub mod graph_desc;
pub mod group;
pub mod header;
pub mod instruction;
pub mod message;
pub mod meter;
pub mod multipart;
pub mod oxm;
pub mod port;
pub mod port_admin;
pub mod queue;
pub mod snapshot;
pub mod table_features;
pub mod wire;

pub use error::{DecodeError, ErrorCode};
pub use message::{Message, OfpMessage};
