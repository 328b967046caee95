//! Switch state snapshots: a switch's flows, groups, meters and
//! configuration as a file of the OpenFlow messages that re-create them.
//! The switch's `--state-dir` and `oxflow ctl save` / `restore` both use
//! this format; this module only turns messages into bytes and back (no
//! I/O).
//!
//! # Layout
//!
//! ```text
//!  0        8        12       16                24
//!  | magic  | version| count  | body length     | body ...    | crc32 |
//!  "OXFSTATE" u32 = 1  u32      u64               messages      u32
//! ```
//!
//! The body is `count` OpenFlow 1.3 messages back to back, each framed by
//! its own header length, in the order that re-creates the state:
//! SET_CONFIG, port-mods, meter-mods, group-mods (a group after the groups
//! its buckets forward to), flow-mods (per table, in the switch's entry
//! order). The trailing CRC-32 (IEEE) covers every byte before it.
//!
//! A file that is cut short, has bytes after the checksum, or whose
//! checksum, magic or version is wrong is refused as a whole with a
//! [`SnapshotError`] saying which: a torn write never loads half a table.

use std::collections::{BTreeMap, BTreeSet};

use crate::action::Action;
use crate::group::GroupMod;
use crate::header::{frame_len, HEADER_LEN};
use crate::message::{flow_mod_command, flow_mod_flags, FlowMod, NO_BUFFER};
use crate::multipart::FlowStats;
use crate::{DecodeError, OfpMessage};

/// The first bytes of a snapshot.
pub const MAGIC: &[u8; 8] = b"OXFSTATE";
/// The format version this code writes and reads.
pub const VERSION: u32 = 1;
/// Bytes before the body.
pub const PREFIX_LEN: usize = 24;
/// Bytes after the body.
pub const TRAILER_LEN: usize = 4;

/// Why a snapshot was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("not an oxflow state file (no OXFSTATE magic)")]
    Magic,
    #[error("state file format version {0}, this oxflow reads version {VERSION}")]
    Version(u32),
    #[error("truncated: {have} bytes, the header announces {want} (an interrupted write?)")]
    Truncated { have: u64, want: u64 },
    #[error("{0} bytes after the end announced by the header")]
    Trailing(u64),
    #[error(
        "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is corrupt"
    )]
    Checksum { stored: u32, computed: u32 },
    #[error("message {index} at body offset {offset}: {what}")]
    Message {
        index: usize,
        offset: usize,
        what: String,
    },
    #[error("the header announces {want} messages, the body holds {have}")]
    Count { want: u32, have: usize },
}

/// The snapshot bytes of `msgs` (module comment).
pub fn encode(msgs: &[OfpMessage]) -> Vec<u8> {
    let mut body = Vec::new();
    for m in msgs {
        body.extend_from_slice(&m.encode());
    }
    let mut out = Vec::with_capacity(PREFIX_LEN + body.len() + TRAILER_LEN);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&(msgs.len() as u32).to_be_bytes());
    out.extend_from_slice(&(body.len() as u64).to_be_bytes());
    out.extend_from_slice(&body);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

fn be_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    u32::from_be_bytes(a)
}

fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        a.copy_from_slice(s);
    }
    u64::from_be_bytes(a)
}

/// The messages of a snapshot, or why it is refused (module comment).
pub fn decode(bytes: &[u8]) -> Result<Vec<OfpMessage>, SnapshotError> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(SnapshotError::Magic);
    }
    let have = bytes.len() as u64;
    if bytes.len() < PREFIX_LEN {
        return Err(SnapshotError::Truncated {
            have,
            want: (PREFIX_LEN + TRAILER_LEN) as u64,
        });
    }
    let version = be_u32(bytes, 8);
    if version != VERSION {
        return Err(SnapshotError::Version(version));
    }
    let count = be_u32(bytes, 12);
    let body_len = be_u64(bytes, 16);
    let want = body_len.saturating_add((PREFIX_LEN + TRAILER_LEN) as u64);
    if have < want {
        return Err(SnapshotError::Truncated { have, want });
    }
    if have > want {
        return Err(SnapshotError::Trailing(have - want));
    }
    let end = bytes.len() - TRAILER_LEN;
    let stored = be_u32(bytes, end);
    let computed = crc32fast::hash(&bytes[..end]);
    if stored != computed {
        return Err(SnapshotError::Checksum { stored, computed });
    }
    let body = &bytes[PREFIX_LEN..end];
    let mut msgs = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let bad = |what: String| SnapshotError::Message {
            index: msgs.len(),
            offset: at,
            what,
        };
        let rest = &body[at..];
        let n = match frame_len(rest) {
            Ok(Some(n)) if n >= HEADER_LEN => n,
            Ok(_) => return Err(bad("cut short".into())),
            Err(e) => return Err(bad(e.to_string())),
        };
        let m = OfpMessage::decode(&rest[..n]).map_err(|e: DecodeError| bad(e.to_string()))?;
        msgs.push(m);
        at += n;
    }
    if msgs.len() != count as usize {
        return Err(SnapshotError::Count {
            want: count,
            have: msgs.len(),
        });
    }
    Ok(msgs)
}

/// The flow-mod (ADD) that re-creates a flow entry described by its flow
/// stats. CHECK_OVERLAP and RESET_COUNTS are dropped: the entries were
/// accepted once, and a restored entry's counters start at zero anyway.
pub fn flow_mod_of(s: &FlowStats) -> FlowMod {
    FlowMod {
        cookie: s.cookie,
        cookie_mask: 0,
        table_id: s.table_id,
        command: flow_mod_command::ADD,
        idle_timeout: s.idle_timeout,
        hard_timeout: s.hard_timeout,
        priority: s.priority,
        buffer_id: NO_BUFFER,
        out_port: crate::port::port_no::ANY,
        out_group: crate::group::group_id::ANY,
        flags: s.flags & !(flow_mod_flags::CHECK_OVERLAP | flow_mod_flags::RESET_COUNTS),
        match_: s.match_.clone(),
        instructions: s.instructions.clone(),
    }
}

/// Orders group-mods so that a group comes after every group its buckets
/// forward to (`group` actions), as adding them requires; groups in a
/// cycle (which a switch should not hold) keep their relative order at the
/// end.
pub fn order_groups(groups: Vec<GroupMod>) -> Vec<GroupMod> {
    let ids: BTreeSet<u32> = groups.iter().map(|g| g.group_id).collect();
    let deps: BTreeMap<u32, BTreeSet<u32>> = groups
        .iter()
        .map(|g| {
            let d = g
                .buckets
                .iter()
                .flat_map(|b| b.actions.iter())
                .filter_map(|a| match a {
                    Action::Group(x) if *x != g.group_id && ids.contains(x) => Some(*x),
                    _ => None,
                })
                .collect();
            (g.group_id, d)
        })
        .collect();
    let mut placed = BTreeSet::new();
    let mut left = groups;
    let mut out = Vec::with_capacity(left.len());
    loop {
        let (ready, rest): (Vec<GroupMod>, Vec<GroupMod>) = left.into_iter().partition(|g| {
            deps.get(&g.group_id)
                .is_none_or(|d| d.iter().all(|x| placed.contains(x)))
        });
        left = rest;
        if ready.is_empty() {
            out.extend(left);
            return out;
        }
        for g in ready {
            placed.insert(g.group_id);
            out.push(g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::{command, group_type, Bucket};
    use crate::message::{Message, SwitchConfig};

    fn sample() -> Vec<OfpMessage> {
        vec![
            OfpMessage::new(
                0,
                Message::SetConfig(SwitchConfig {
                    flags: 0,
                    miss_send_len: 200,
                }),
            ),
            OfpMessage::new(0, Message::BarrierRequest),
            OfpMessage::new(0, Message::EchoRequest(Default::default())),
        ]
    }

    #[test]
    fn round_trip_and_layout() {
        let b = encode(&sample());
        assert_eq!(&b[..8], b"OXFSTATE");
        assert_eq!(&b[8..16], &[0, 0, 0, 1, 0, 0, 0, 3]);
        assert_eq!(be_u64(&b, 16), (b.len() - 28) as u64);
        assert_eq!(decode(&b).unwrap(), sample());
        assert_eq!(decode(&encode(&[])).unwrap(), vec![]);
    }

    #[test]
    fn every_torn_prefix_and_every_flipped_bit_is_refused() {
        let b = encode(&sample());
        for cut in 0..b.len() {
            assert!(decode(&b[..cut]).is_err(), "prefix of {cut} bytes loaded");
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut c = b.clone();
                c[i] ^= 1 << bit;
                assert!(decode(&c).is_err(), "bit {bit} of byte {i} flipped loaded");
            }
        }
        let mut long = b.clone();
        long.push(0);
        assert_eq!(decode(&long), Err(SnapshotError::Trailing(1)));
        assert!(matches!(
            decode(&b[..b.len() - 1]),
            Err(SnapshotError::Truncated { .. })
        ));
        let mut v = b.clone();
        v[11] = 2;
        assert_eq!(decode(&v), Err(SnapshotError::Version(2)));
        assert_eq!(decode(b"hello"), Err(SnapshotError::Magic));
    }

    #[test]
    fn a_body_that_does_not_decode_is_refused_even_with_a_good_checksum() {
        let mut b = encode(&sample());
        b.truncate(b.len() - 4);
        b[PREFIX_LEN + 1] = 99; // first message's type
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_be_bytes());
        assert!(matches!(
            decode(&b),
            Err(SnapshotError::Message { index: 0, .. })
        ));
    }

    fn g(id: u32, to: &[u32]) -> GroupMod {
        GroupMod {
            command: command::ADD,
            group_type: group_type::ALL,
            group_id: id,
            buckets: to
                .iter()
                .map(|t| Bucket {
                    weight: 0,
                    watch_port: crate::port::port_no::ANY,
                    watch_group: crate::group::group_id::ANY,
                    actions: vec![Action::Group(*t)],
                })
                .collect(),
        }
    }

    #[test]
    fn groups_come_after_the_groups_they_use() {
        let order: Vec<u32> = order_groups(vec![g(1, &[2, 3]), g(2, &[3]), g(3, &[]), g(4, &[])])
            .iter()
            .map(|g| g.group_id)
            .collect();
        assert_eq!(order, vec![3, 4, 2, 1]);
        let cyc: Vec<u32> = order_groups(vec![g(1, &[2]), g(2, &[1]), g(5, &[9])])
            .iter()
            .map(|g| g.group_id)
            .collect();
        assert_eq!(cyc, vec![5, 1, 2]);
    }
}
