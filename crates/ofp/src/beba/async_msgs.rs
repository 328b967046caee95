//! The asynchronous BEBA messages, switch to controller.
//!
//! STATE_CHANGED (`exp_type` 2), after the experimenter header:
//! `table_id u32 | old_state u32 | new_state u32 | state_mask u32 |
//! key_len u32 | key` (the key unpadded, so the message need not be a
//! multiple of 8 bytes).
//!
//! FLOW_NOTIFICATION (`exp_type` 3): `table_id u32 | ntf_type u32 |
//! ofp_match (padded to 8) | instruction_num u32 | instruction type u32
//! ... | pad to 8`. The instructions are listed by type only.

use super::error::BebaDecodeError;
use super::MAX_KEY_LEN;
use crate::oxm::Match;
use crate::wire::{Reader, Writer};

/// A flow's state changed in a state table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StateChanged {
    pub table_id: u32,
    pub old_state: u32,
    pub new_state: u32,
    pub state_mask: u32,
    /// The flow key (at most [`MAX_KEY_LEN`] bytes).
    pub key: Vec<u8>,
}

impl StateChanged {
    pub fn decode(data: &[u8]) -> Result<StateChanged, BebaDecodeError> {
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let mut m = StateChanged {
            table_id: r.u32("state_changed: table_id").map_err(short)?,
            old_state: r.u32("state_changed: old_state").map_err(short)?,
            new_state: r.u32("state_changed: new_state").map_err(short)?,
            state_mask: r.u32("state_changed: state_mask").map_err(short)?,
            key: Vec::new(),
        };
        let key_len = r.u32("state_changed: key_len").map_err(short)? as usize;
        if key_len > MAX_KEY_LEN || key_len != r.remaining() {
            return Err(BebaDecodeError::bad_len("state_changed: key_len"));
        }
        m.key = r.rest().to_vec();
        Ok(m)
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.table_id);
        w.put_u32(self.old_state);
        w.put_u32(self.new_state);
        w.put_u32(self.state_mask);
        w.put_u32(self.key.len() as u32);
        w.put_bytes(&self.key);
    }
}

/// A flow entry was installed (`ntf_type` is the switch's own code).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlowNotification {
    pub table_id: u32,
    pub ntf_type: u32,
    pub match_: Match,
    /// The types of the entry's instructions.
    pub instructions: Vec<u32>,
}

impl FlowNotification {
    pub fn decode(data: &[u8]) -> Result<FlowNotification, BebaDecodeError> {
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let table_id = r.u32("flow_notification: table_id").map_err(short)?;
        let ntf_type = r.u32("flow_notification: ntf_type").map_err(short)?;
        let match_ = Match::decode(&mut r)?;
        let n = r.u32("flow_notification: instruction_num").map_err(short)? as usize;
        if r.remaining() / 4 < n {
            return Err(BebaDecodeError::bad_len(
                "flow_notification: instruction_num",
            ));
        }
        let mut instructions = Vec::with_capacity(n);
        for _ in 0..n {
            instructions.push(r.u32("flow_notification: instruction").map_err(short)?);
        }
        // The list is padded to 8 bytes: one u32 of zeros at most.
        let pad = if n.is_multiple_of(2) { 4 } else { 0 };
        if r.remaining() != pad {
            return Err(BebaDecodeError::bad_len("flow_notification: padding"));
        }
        Ok(FlowNotification {
            table_id,
            ntf_type,
            match_,
            instructions,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.table_id);
        w.put_u32(self.ntf_type);
        self.match_.encode(w);
        let start = w.len();
        w.put_u32(self.instructions.len() as u32);
        for i in &self.instructions {
            w.put_u32(*i);
        }
        w.pad_to_8(start);
    }
}
