//! BEBA's compiled actions (`crate::ext::beba`), typed, and their
//! encoding as the shared `crate::ext::api::ExtOp` (the op list holds
//! that; BEBA's hook decodes it when it runs one).

use crate::ext::api::ExtOp;
use stateful::Transition;

/// A compiled BEBA action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BebaOp {
    SetState {
        table_id: u8,
        bit: bool,
        transition: Transition,
    },
    SetGlobalState {
        value: u32,
        mask: u32,
    },
    IncState {
        table_id: u8,
    },
}

/// [`BebaOp`] in an [`ExtOp`]: its `code`; `bytes` hold the table id
/// and the bit, `words` the transition or the value and mask (the
/// registry fills in `ext`).
mod code {
    pub const SET_STATE: u8 = 0;
    pub const SET_GLOBAL_STATE: u8 = 1;
    pub const INC_STATE: u8 = 2;
}

impl BebaOp {
    /// The op in the shared encoding of extension ops.
    pub fn encode(self) -> ExtOp {
        match self {
            BebaOp::SetState {
                table_id,
                bit,
                transition: t,
            } => ExtOp {
                code: code::SET_STATE,
                bytes: [table_id, u8::from(bit)],
                words: [
                    t.state,
                    t.mask,
                    t.hard_rollback,
                    t.idle_rollback,
                    t.hard_timeout,
                    t.idle_timeout,
                ],
                ..ExtOp::default()
            },
            BebaOp::SetGlobalState { value, mask } => ExtOp {
                code: code::SET_GLOBAL_STATE,
                words: [value, mask, 0, 0, 0, 0],
                ..ExtOp::default()
            },
            BebaOp::IncState { table_id } => ExtOp {
                code: code::INC_STATE,
                bytes: [table_id, 0],
                ..ExtOp::default()
            },
        }
    }

    /// The op `encode` made `e` from (`None`: not one of BEBA's).
    #[inline]
    pub fn decode(e: &ExtOp) -> Option<BebaOp> {
        let [table_id, bit] = e.bytes;
        let [w0, w1, w2, w3, w4, w5] = e.words;
        Some(match e.code {
            code::SET_STATE => BebaOp::SetState {
                table_id,
                bit: bit != 0,
                transition: Transition {
                    state: w0,
                    mask: w1,
                    hard_rollback: w2,
                    idle_rollback: w3,
                    hard_timeout: w4,
                    idle_timeout: w5,
                },
            },
            code::SET_GLOBAL_STATE => BebaOp::SetGlobalState {
                value: w0,
                mask: w1,
            },
            code::INC_STATE => BebaOp::IncState { table_id },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::BebaOp;
    use stateful::Transition;

    /// Every op comes back from its encoding as it was.
    #[test]
    fn ops_survive_their_encoding() {
        let transition = Transition {
            state: 1,
            mask: 2,
            hard_rollback: 3,
            idle_rollback: 4,
            hard_timeout: 5,
            idle_timeout: 6,
        };
        for op in [
            BebaOp::SetState {
                table_id: 7,
                bit: true,
                transition,
            },
            BebaOp::SetGlobalState { value: 9, mask: 10 },
            BebaOp::IncState { table_id: 11 },
        ] {
            assert_eq!(BebaOp::decode(&op.encode()), Some(op));
        }
    }
}
