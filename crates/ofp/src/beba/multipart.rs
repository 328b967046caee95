//! The BEBA experimenter multiparts (`ofp_stats_extension_commands`, the
//! `exp_type` of an OFPMP_EXPERIMENTER body under BEBA's id).
//!
//! State statistics (four kinds: full or short records, with or without
//! deleting the entries they report), the request's data after
//! experimenter and `exp_type`:
//! `table_id u8 | get_from_state u8 | pad 2 | state u32 | ofp_match`
//! (padded to 8); only entries in `state` are reported when
//! `get_from_state` is 1, only entries whose key matches `ofp_match`.
//! Reply data: records, each padded to 8 bytes:
//!
//! ```text
//! full (32 + key): length u16 | table_id u8 | key_len u8 | duration_sec u32 |
//!     duration_nsec u32 | hard_rollback u32 | idle_rollback u32 |
//!     hard_timeout u32 | idle_timeout u32 | state u32 | key | pad
//! short (8 + key): length u16 | table_id u8 | key_len u8 | state u32 | key | pad
//! ```
//!
//! Global state statistics: the request has no data; the reply's data is
//! `pad 4 | global_state u32`.
//!
//! Refusals are BAD_REQUEST/BAD_LEN (the match's own are BAD_MATCH), as
//! the BEBA switch answers them.

use super::error::BebaDecodeError;
use super::BEBA_EXPERIMENTER;
use crate::error::DecodeError;
use crate::multipart::ExperimenterMultipart;
use crate::oxm::Match;
use crate::wire::{Reader, Writer};

/// `ofp_stats_extension_commands`.
pub mod exp_type {
    pub const STATE_STATS: u32 = 0;
    pub const GLOBAL_STATE_STATS: u32 = 1;
    pub const STATE_STATS_AND_DELETE: u32 = 2;
    pub const STATE_STATS_SHORT: u32 = 3;
    pub const STATE_STATS_AND_DELETE_SHORT: u32 = 4;
}

/// Which of the four state-statistics multiparts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateStatsKind {
    Full,
    AndDelete,
    Short,
    AndDeleteShort,
}

impl StateStatsKind {
    pub fn exp_type(self) -> u32 {
        match self {
            StateStatsKind::Full => exp_type::STATE_STATS,
            StateStatsKind::AndDelete => exp_type::STATE_STATS_AND_DELETE,
            StateStatsKind::Short => exp_type::STATE_STATS_SHORT,
            StateStatsKind::AndDeleteShort => exp_type::STATE_STATS_AND_DELETE_SHORT,
        }
    }

    pub fn from_exp_type(t: u32) -> Option<Self> {
        match t {
            exp_type::STATE_STATS => Some(StateStatsKind::Full),
            exp_type::STATE_STATS_AND_DELETE => Some(StateStatsKind::AndDelete),
            exp_type::STATE_STATS_SHORT => Some(StateStatsKind::Short),
            exp_type::STATE_STATS_AND_DELETE_SHORT => Some(StateStatsKind::AndDeleteShort),
            _ => None,
        }
    }

    /// Whether replies carry short records.
    pub fn short(self) -> bool {
        matches!(self, StateStatsKind::Short | StateStatsKind::AndDeleteShort)
    }

    /// Whether the reported entries are deleted.
    pub fn deletes(self) -> bool {
        matches!(
            self,
            StateStatsKind::AndDelete | StateStatsKind::AndDeleteShort
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateStatsRequest {
    pub kind: StateStatsKind,
    /// A table, or OFPTT_ALL (0xff).
    pub table_id: u8,
    /// Only entries in this state (`get_from_state` 1), or all.
    pub state: Option<u32>,
    pub match_: Match,
}

/// One state-table entry in a reply. Short records carry only
/// `table_id`, `key` and `state`; the other fields decode as 0.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateEntryStats {
    pub table_id: u8,
    /// At most 255 bytes (the key length is one byte).
    pub key: Vec<u8>,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub hard_rollback: u32,
    pub idle_rollback: u32,
    pub hard_timeout: u32,
    pub idle_timeout: u32,
    pub state: u32,
}

/// Bytes of a full / short record before its key.
const FULL_LEN: usize = 32;
const SHORT_LEN: usize = 8;

impl StateEntryStats {
    fn decode(r: &mut Reader<'_>, short: bool) -> Result<StateEntryStats, DecodeError> {
        let fixed = if short { SHORT_LEN } else { FULL_LEN };
        let length = usize::from(r.peek_u16("state stats: length")?);
        if length < fixed || !length.is_multiple_of(8) {
            return Err(DecodeError::bad_len("state stats: length"));
        }
        let mut e = r.sub(length, "state stats: record")?;
        e.pad(2)?;
        let table_id = e.u8("state stats: table_id")?;
        let key_len = usize::from(e.u8("state stats: key_len")?);
        if (fixed + key_len).div_ceil(8) * 8 != length {
            return Err(DecodeError::bad_len("state stats: key_len"));
        }
        let mut s = StateEntryStats {
            table_id,
            ..Default::default()
        };
        if !short {
            s.duration_sec = e.u32("state stats: duration_sec")?;
            s.duration_nsec = e.u32("state stats: duration_nsec")?;
            s.hard_rollback = e.u32("state stats: hard_rollback")?;
            s.idle_rollback = e.u32("state stats: idle_rollback")?;
            s.hard_timeout = e.u32("state stats: hard_timeout")?;
            s.idle_timeout = e.u32("state stats: idle_timeout")?;
        }
        s.state = e.u32("state stats: state")?;
        s.key = e.bytes(key_len, "state stats: key")?.to_vec();
        Ok(s)
    }

    fn encode(&self, w: &mut Vec<u8>, short: bool) {
        let start = w.len();
        let key = &self.key[..self.key.len().min(usize::from(u8::MAX))];
        w.put_u16(0);
        w.put_u8(self.table_id);
        w.put_u8(key.len() as u8);
        if !short {
            w.put_u32(self.duration_sec);
            w.put_u32(self.duration_nsec);
            w.put_u32(self.hard_rollback);
            w.put_u32(self.idle_rollback);
            w.put_u32(self.hard_timeout);
            w.put_u32(self.idle_timeout);
        }
        w.put_u32(self.state);
        w.put_bytes(key);
        w.pad_to_8(start);
        let len = w.len() - start;
        w.patch_u16(start, len as u16);
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BebaMultipartRequest {
    StateStats(StateStatsRequest),
    GlobalStateStats,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BebaMultipartReply {
    StateStats {
        kind: StateStatsKind,
        entries: Vec<StateEntryStats>,
    },
    GlobalStateStats {
        global_state: u32,
    },
}

/// `None` unless `body` is under BEBA's id; a known `exp_type` is decoded
/// by `f`, an unknown one is BAD_REQUEST/BAD_EXP_TYPE.
fn beba_body<T>(
    body: &ExperimenterMultipart,
    f: impl FnOnce(u32, &mut Reader<'_>) -> Option<Result<T, DecodeError>>,
) -> Option<Result<T, BebaDecodeError>> {
    if body.experimenter != BEBA_EXPERIMENTER {
        return None;
    }
    let mut r = Reader::message(&body.data);
    Some(match f(body.exp_type, &mut r) {
        Some(res) => res.map_err(BebaDecodeError::from),
        None => Err(DecodeError::bad_request(
            crate::error::BadRequestCode::BadExpType,
            "beba multipart: exp_type",
        )
        .into()),
    })
}

impl BebaMultipartRequest {
    pub fn from_experimenter(
        body: &ExperimenterMultipart,
    ) -> Option<Result<BebaMultipartRequest, BebaDecodeError>> {
        beba_body(body, |t, r| {
            if t == exp_type::GLOBAL_STATE_STATS {
                return Some(
                    r.finish("global state stats request: data")
                        .map(|_| BebaMultipartRequest::GlobalStateStats),
                );
            }
            let kind = StateStatsKind::from_exp_type(t)?;
            Some((|| {
                let table_id = r.u8("state stats request: table_id")?;
                let from_state = r.u8("state stats request: get_from_state")?;
                r.pad(2)?;
                let state = r.u32("state stats request: state")?;
                let match_ = Match::decode(r)?;
                r.finish("state stats request: trailing bytes")?;
                Ok(BebaMultipartRequest::StateStats(StateStatsRequest {
                    kind,
                    table_id,
                    state: (from_state != 0).then_some(state),
                    match_,
                }))
            })())
        })
    }

    pub fn to_experimenter(&self) -> ExperimenterMultipart {
        let mut data = Vec::new();
        let exp_type = match self {
            BebaMultipartRequest::GlobalStateStats => exp_type::GLOBAL_STATE_STATS,
            BebaMultipartRequest::StateStats(s) => {
                data.put_u8(s.table_id);
                data.put_u8(u8::from(s.state.is_some()));
                data.put_zeros(2);
                data.put_u32(s.state.unwrap_or(0));
                s.match_.encode(&mut data);
                s.kind.exp_type()
            }
        };
        ExperimenterMultipart {
            experimenter: BEBA_EXPERIMENTER,
            exp_type,
            data,
        }
    }
}

impl BebaMultipartReply {
    pub fn from_experimenter(
        body: &ExperimenterMultipart,
    ) -> Option<Result<BebaMultipartReply, BebaDecodeError>> {
        beba_body(body, |t, r| {
            if t == exp_type::GLOBAL_STATE_STATS {
                return Some((|| {
                    r.pad(4)?;
                    let global_state = r.u32("global state stats: global_state")?;
                    r.finish("global state stats: trailing bytes")?;
                    Ok(BebaMultipartReply::GlobalStateStats { global_state })
                })());
            }
            let kind = StateStatsKind::from_exp_type(t)?;
            Some((|| {
                let mut entries = Vec::with_capacity(r.remaining() / SHORT_LEN);
                while !r.is_empty() {
                    entries.push(StateEntryStats::decode(r, kind.short())?);
                }
                Ok(BebaMultipartReply::StateStats { kind, entries })
            })())
        })
    }

    pub fn to_experimenter(&self) -> ExperimenterMultipart {
        let mut data = Vec::new();
        let exp_type = match self {
            BebaMultipartReply::GlobalStateStats { global_state } => {
                data.put_zeros(4);
                data.put_u32(*global_state);
                exp_type::GLOBAL_STATE_STATS
            }
            BebaMultipartReply::StateStats { kind, entries } => {
                for e in entries {
                    e.encode(&mut data, kind.short());
                }
                kind.exp_type()
            }
        };
        ExperimenterMultipart {
            experimenter: BEBA_EXPERIMENTER,
            exp_type,
            data,
        }
    }
}
