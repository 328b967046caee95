//! Groups (spec §7.3.4.2): group types and commands, `ofp_bucket`, and the
//! OFPT_GROUP_MOD body.
//!
//! A bucket is a TLV-like record: its `len` field covers the 16-byte bucket
//! header plus the action list. The same bucket codec serves GROUP_MOD and the
//! group-desc multipart reply.

use crate::action::{decode_actions, encode_actions, Action};
use crate::error::{DecodeError, ErrorCode, GroupModFailedCode};
use crate::wire::{Reader, Writer};

/// `ofp_group_mod_command`.
pub mod command {
    pub const ADD: u16 = 0;
    pub const MODIFY: u16 = 1;
    pub const DELETE: u16 = 2;
}

/// `ofp_group_type`.
pub mod group_type {
    /// All buckets are executed (multicast / broadcast).
    pub const ALL: u8 = 0;
    /// One bucket is executed (switch-chosen, e.g. hashed, weighted).
    pub const SELECT: u8 = 1;
    /// The single bucket is executed.
    pub const INDIRECT: u8 = 2;
    /// The first live bucket is executed.
    pub const FF: u8 = 3;
}

/// Group numbers (`ofp_group`).
pub mod group_id {
    /// Last usable group number.
    pub const MAX: u32 = 0xffff_ff00;
    /// All groups, for group delete and group stats requests.
    pub const ALL: u32 = 0xffff_fffc;
    /// Wildcard group, for flow stats requests and `watch_group`.
    pub const ANY: u32 = 0xffff_ffff;
}

/// Size of `ofp_bucket` without actions.
pub const BUCKET_LEN: usize = 16;
/// Size of the fixed part of the GROUP_MOD body (after `ofp_header`).
pub const GROUP_MOD_LEN: usize = 8;

fn bad_bucket(what: &'static str) -> DecodeError {
    DecodeError::new(
        ErrorCode::GroupModFailed(GroupModFailedCode::BadBucket),
        what,
    )
}

/// `ofp_bucket`: one action list of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// Relative weight, only meaningful for select groups.
    pub weight: u16,
    /// Port whose liveness decides this bucket's liveness (fast failover).
    pub watch_port: u32,
    /// Group whose liveness decides this bucket's liveness (fast failover).
    pub watch_group: u32,
    pub actions: Vec<Action>,
}

impl Bucket {
    /// Decode one bucket. A bucket whose length is below 16 or runs past the
    /// end of the input is GROUP_MOD_FAILED/BAD_BUCKET; errors inside the
    /// action list are passed on unchanged.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        if r.remaining() < BUCKET_LEN {
            return Err(bad_bucket("bucket: truncated header"));
        }
        let len = r.peek_u16("bucket: len")? as usize;
        if len < BUCKET_LEN {
            return Err(bad_bucket("bucket: len below 16"));
        }
        if len > r.remaining() {
            return Err(bad_bucket("bucket: len past end"));
        }
        let mut b = r.sub_with(
            len,
            ErrorCode::GroupModFailed(GroupModFailedCode::BadBucket),
            "bucket",
        )?;
        b.u16("bucket: len")?;
        let weight = b.u16("bucket: weight")?;
        let watch_port = b.u32("bucket: watch_port")?;
        let watch_group = b.u32("bucket: watch_group")?;
        b.pad(4)?;
        let actions = decode_actions(&mut b, len - BUCKET_LEN)?;
        b.finish("bucket: trailing bytes")?;
        Ok(Bucket {
            weight,
            watch_port,
            watch_group,
            actions,
        })
    }

    /// Encode with a computed, 8-aligned length.
    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(0);
        w.put_u16(self.weight);
        w.put_u32(self.watch_port);
        w.put_u32(self.watch_group);
        w.put_zeros(4);
        encode_actions(&self.actions, w);
        w.pad_to_8(start);
        let len = (w.len() - start) as u16;
        w.patch_u16(start, len);
    }
}

/// Decode buckets until `r` is exhausted.
pub fn decode_buckets(r: &mut Reader<'_>) -> Result<Vec<Bucket>, DecodeError> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(Bucket::decode(r)?);
    }
    Ok(v)
}

pub fn encode_buckets(buckets: &[Bucket], w: &mut Vec<u8>) {
    for b in buckets {
        b.encode(w);
    }
}

/// OFPT_GROUP_MOD body (`ofp_group_mod` after the header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMod {
    /// One of [`command`].
    pub command: u16,
    /// One of [`group_type`].
    pub group_type: u8,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}

impl GroupMod {
    /// Decode and validate the bytes after `ofp_header`.
    ///
    /// Checks, in order: unknown command (BAD_COMMAND), unknown type
    /// (BAD_TYPE), group id above OFPG_MAX for add/modify (INVALID_GROUP;
    /// deleting OFPG_ALL or a non-existent id is allowed by the spec), then the
    /// buckets (BAD_BUCKET for a bad bucket length).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let cmd = r.u16("group_mod: command")?;
        let group_type = r.u8("group_mod: type")?;
        r.pad(1)?;
        let group_id = r.u32("group_mod: group_id")?;
        let fail = |c, what| DecodeError::new(ErrorCode::GroupModFailed(c), what);
        if cmd > command::DELETE {
            return Err(fail(GroupModFailedCode::BadCommand, "group_mod: command"));
        }
        if group_type > group_type::FF {
            return Err(fail(GroupModFailedCode::BadType, "group_mod: type"));
        }
        if cmd != command::DELETE && group_id > group_id::MAX {
            return Err(fail(
                GroupModFailedCode::InvalidGroup,
                "group_mod: group_id",
            ));
        }
        let buckets = decode_buckets(r)?;
        Ok(GroupMod {
            command: cmd,
            group_type,
            group_id,
            buckets,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u16(self.command);
        w.put_u8(self.group_type);
        w.put_zeros(1);
        w.put_u32(self.group_id);
        encode_buckets(&self.buckets, w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(bytes: &[u8]) -> ErrorCode {
        GroupMod::decode(&mut Reader::message(bytes))
            .unwrap_err()
            .code
    }

    #[test]
    fn empty_bucket_bytes() {
        let b = Bucket {
            weight: 3,
            watch_port: 0xffff_ffff,
            watch_group: 0xffff_ffff,
            actions: vec![],
        };
        let mut w = Vec::new();
        b.encode(&mut w);
        assert_eq!(
            w,
            [0, 16, 0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(Bucket::decode(&mut Reader::message(&w)).unwrap(), b);
    }

    #[test]
    fn group_mod_bytes() {
        let g = GroupMod {
            command: command::MODIFY,
            group_type: group_type::SELECT,
            group_id: 7,
            buckets: vec![],
        };
        let mut w = Vec::new();
        g.encode(&mut w);
        assert_eq!(w, [0, 1, 1, 0, 0, 0, 0, 7]);
        assert_eq!(GroupMod::decode(&mut Reader::message(&w)).unwrap(), g);
    }

    #[test]
    fn bad_command() {
        assert_eq!(
            code(&[0, 3, 0, 0, 0, 0, 0, 1]),
            ErrorCode::GroupModFailed(GroupModFailedCode::BadCommand)
        );
    }

    #[test]
    fn bad_type() {
        assert_eq!(
            code(&[0, 0, 4, 0, 0, 0, 0, 1]),
            ErrorCode::GroupModFailed(GroupModFailedCode::BadType)
        );
    }

    #[test]
    fn invalid_group() {
        assert_eq!(
            code(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc]),
            ErrorCode::GroupModFailed(GroupModFailedCode::InvalidGroup)
        );
        // delete of OFPG_ALL is fine
        assert!(
            GroupMod::decode(&mut Reader::message(&[0, 2, 0, 0, 0xff, 0xff, 0xff, 0xfc])).is_ok()
        );
    }

    #[test]
    fn bad_bucket() {
        let bb = ErrorCode::GroupModFailed(GroupModFailedCode::BadBucket);
        // len 8 < 16
        let mut m = vec![0, 0, 0, 0, 0, 0, 0, 1];
        m.extend_from_slice(&[0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(code(&m), bb);
        // len 24 past the end
        m[9] = 24;
        assert_eq!(code(&m), bb);
        // truncated bucket header
        assert_eq!(code(&m[..12]), bb);
    }
}
