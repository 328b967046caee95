//! STATE_MOD (`exp_type` 0): configure state tables, extractors and
//! states.
//!
//! After the experimenter header: `command u8 | pad u8 | payload`, the
//! payload's layout chosen by the command (`docs/beba.md` has the tables).
//! The payload is not padded: its length must be exactly what its fields
//! announce, as the BEBA switch checks.

use super::error::{BebaDecodeError, BebaErrorCode};
use super::{MAX_FIELD_COUNT, MAX_KEY_LEN};
use crate::wire::{Reader, Writer};

/// `ofp_exp_msg_state_mod_commands`.
pub mod command {
    pub const STATEFUL_TABLE_CONFIG: u8 = 0;
    pub const SET_L_EXTRACTOR: u8 = 1;
    pub const SET_U_EXTRACTOR: u8 = 2;
    pub const SET_FLOW_STATE: u8 = 3;
    pub const DEL_FLOW_STATE: u8 = 4;
    pub const SET_GLOBAL_STATE: u8 = 5;
    pub const RESET_GLOBAL_STATE: u8 = 6;
}

/// A key extractor: the header fields, as OXM headers (class, field,
/// hasmask 0, length), whose values are concatenated into a flow key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extractor {
    pub table_id: u8,
    /// The bi-flow bit: an update extractor with it set writes the state
    /// of the reverse flow (source and destination swapped).
    pub bit: bool,
    /// 1 to [`MAX_FIELD_COUNT`] OXM headers.
    pub fields: Vec<u32>,
}

/// SET_FLOW_STATE's payload: write `state` (under `state_mask`) for the
/// flow whose key is `key`. Timeouts are microseconds; on expiry the
/// state becomes the matching rollback state.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SetFlowState {
    pub table_id: u8,
    /// 1 to [`MAX_KEY_LEN`] bytes.
    pub key: Vec<u8>,
    pub state: u32,
    pub state_mask: u32,
    pub hard_rollback: u32,
    pub idle_rollback: u32,
    pub hard_timeout: u32,
    pub idle_timeout: u32,
}

/// A STATE_MOD command and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateMod {
    /// Make a flow table stateful (or stateless again).
    StatefulTableConfig {
        table_id: u8,
        stateful: bool,
    },
    /// The extractor whose key looks the state up.
    SetLookupExtractor(Extractor),
    /// The extractor whose key SET_STATE writes.
    SetUpdateExtractor(Extractor),
    SetFlowState(SetFlowState),
    /// Forget the state of the flow whose key is `key` (1 to
    /// [`MAX_KEY_LEN`] bytes).
    DelFlowState {
        table_id: u8,
        key: Vec<u8>,
    },
    /// `global = (global & !mask) | (value & mask)`.
    SetGlobalState {
        value: u32,
        mask: u32,
    },
    /// Global state back to 0; no payload.
    ResetGlobalState,
}

/// The key-length check both flow-state commands share.
fn check_key(len: usize, what: &'static str) -> Result<(), BebaDecodeError> {
    if len == 0 || len > MAX_KEY_LEN {
        return Err(BebaDecodeError::bad_len(what));
    }
    Ok(())
}

impl StateMod {
    /// The three state-mods that make table `table_id` stateful with the
    /// lookup scope `lookup` and the update scope `update` (OXM headers,
    /// no bi-flow bit), in the order a controller sends them.
    pub fn stateful_table(table_id: u8, lookup: Vec<u32>, update: Vec<u32>) -> [StateMod; 3] {
        [
            StateMod::StatefulTableConfig {
                table_id,
                stateful: true,
            },
            StateMod::SetLookupExtractor(Extractor {
                table_id,
                bit: false,
                fields: lookup,
            }),
            StateMod::SetUpdateExtractor(Extractor {
                table_id,
                bit: false,
                fields: update,
            }),
        ]
    }

    pub fn command(&self) -> u8 {
        use command as c;
        match self {
            StateMod::StatefulTableConfig { .. } => c::STATEFUL_TABLE_CONFIG,
            StateMod::SetLookupExtractor(_) => c::SET_L_EXTRACTOR,
            StateMod::SetUpdateExtractor(_) => c::SET_U_EXTRACTOR,
            StateMod::SetFlowState(_) => c::SET_FLOW_STATE,
            StateMod::DelFlowState { .. } => c::DEL_FLOW_STATE,
            StateMod::SetGlobalState { .. } => c::SET_GLOBAL_STATE,
            StateMod::ResetGlobalState => c::RESET_GLOBAL_STATE,
        }
    }

    /// Decode the bytes after the experimenter header.
    pub fn decode(data: &[u8]) -> Result<StateMod, BebaDecodeError> {
        use command as c;
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let cmd = r.u8("state_mod: command").map_err(short)?;
        r.pad(1).map_err(short)?;
        let payload = r.remaining();
        let m = match cmd {
            c::STATEFUL_TABLE_CONFIG => {
                if payload != 2 {
                    return Err(BebaDecodeError::bad_len("state_mod table config: length"));
                }
                StateMod::StatefulTableConfig {
                    table_id: r.u8("state_mod: table_id").map_err(short)?,
                    stateful: r.u8("state_mod: stateful").map_err(short)? != 0,
                }
            }
            c::SET_L_EXTRACTOR | c::SET_U_EXTRACTOR => {
                let table_id = r.u8("extractor: table_id").map_err(short)?;
                r.pad(3).map_err(short)?;
                let bit = r.u8("extractor: bit").map_err(short)? != 0;
                r.pad(3).map_err(short)?;
                let count = r.u32("extractor: field_count").map_err(short)? as usize;
                if count == 0 || count > MAX_FIELD_COUNT || payload != 12 + 4 * count {
                    return Err(BebaDecodeError::bad_len("extractor: field_count"));
                }
                let mut fields = Vec::with_capacity(count);
                for _ in 0..count {
                    fields.push(r.u32("extractor: field").map_err(short)?);
                }
                let e = Extractor {
                    table_id,
                    bit,
                    fields,
                };
                if cmd == c::SET_L_EXTRACTOR {
                    StateMod::SetLookupExtractor(e)
                } else {
                    StateMod::SetUpdateExtractor(e)
                }
            }
            c::SET_FLOW_STATE => {
                let table_id = r.u8("set_flow_state: table_id").map_err(short)?;
                r.pad(3).map_err(short)?;
                let key_len = r.u32("set_flow_state: key_len").map_err(short)? as usize;
                check_key(key_len, "set_flow_state: key_len")?;
                if payload != 32 + key_len {
                    return Err(BebaDecodeError::bad_len("set_flow_state: length"));
                }
                let mut s = SetFlowState {
                    table_id,
                    state: r.u32("set_flow_state: state").map_err(short)?,
                    state_mask: r.u32("set_flow_state: state_mask").map_err(short)?,
                    hard_rollback: r.u32("set_flow_state: hard_rollback").map_err(short)?,
                    idle_rollback: r.u32("set_flow_state: idle_rollback").map_err(short)?,
                    hard_timeout: r.u32("set_flow_state: hard_timeout").map_err(short)?,
                    idle_timeout: r.u32("set_flow_state: idle_timeout").map_err(short)?,
                    key: Vec::new(),
                };
                s.key = r
                    .bytes(key_len, "set_flow_state: key")
                    .map_err(short)?
                    .to_vec();
                StateMod::SetFlowState(s)
            }
            c::DEL_FLOW_STATE => {
                let table_id = r.u8("del_flow_state: table_id").map_err(short)?;
                r.pad(3).map_err(short)?;
                let key_len = r.u32("del_flow_state: key_len").map_err(short)? as usize;
                check_key(key_len, "del_flow_state: key_len")?;
                if payload != 8 + key_len {
                    return Err(BebaDecodeError::bad_len("del_flow_state: length"));
                }
                let key = r
                    .bytes(key_len, "del_flow_state: key")
                    .map_err(short)?
                    .to_vec();
                StateMod::DelFlowState { table_id, key }
            }
            c::SET_GLOBAL_STATE => {
                if payload != 8 {
                    return Err(BebaDecodeError::bad_len("set_global_state: length"));
                }
                StateMod::SetGlobalState {
                    value: r.u32("set_global_state: value").map_err(short)?,
                    mask: r.u32("set_global_state: mask").map_err(short)?,
                }
            }
            c::RESET_GLOBAL_STATE => {
                if payload != 0 {
                    return Err(BebaDecodeError::bad_len("reset_global_state: length"));
                }
                StateMod::ResetGlobalState
            }
            _ => {
                return Err(BebaDecodeError::beba(
                    BebaErrorCode::StateModBadCommand,
                    "state_mod: command",
                ))
            }
        };
        r.finish("state_mod: trailing bytes").map_err(short)?;
        Ok(m)
    }

    /// Encode the bytes after the experimenter header.
    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u8(self.command());
        w.put_zeros(1);
        match self {
            StateMod::StatefulTableConfig { table_id, stateful } => {
                w.put_u8(*table_id);
                w.put_u8(u8::from(*stateful));
            }
            StateMod::SetLookupExtractor(e) | StateMod::SetUpdateExtractor(e) => {
                w.put_u8(e.table_id);
                w.put_zeros(3);
                w.put_u8(u8::from(e.bit));
                w.put_zeros(3);
                w.put_u32(e.fields.len() as u32);
                for f in &e.fields {
                    w.put_u32(*f);
                }
            }
            StateMod::SetFlowState(s) => {
                w.put_u8(s.table_id);
                w.put_zeros(3);
                w.put_u32(s.key.len() as u32);
                w.put_u32(s.state);
                w.put_u32(s.state_mask);
                w.put_u32(s.hard_rollback);
                w.put_u32(s.idle_rollback);
                w.put_u32(s.hard_timeout);
                w.put_u32(s.idle_timeout);
                w.put_bytes(&s.key);
            }
            StateMod::DelFlowState { table_id, key } => {
                w.put_u8(*table_id);
                w.put_zeros(3);
                w.put_u32(key.len() as u32);
                w.put_bytes(key);
            }
            StateMod::SetGlobalState { value, mask } => {
                w.put_u32(*value);
                w.put_u32(*mask);
            }
            StateMod::ResetGlobalState => {}
        }
    }
}
