//! BEBA's compiled actions (`crate::ext::beba`), typed, and their
//! encoding as the shared `crate::ext::api::ExtOp` (the op list holds
//! that; BEBA's hook decodes it when it runs one).

/// A compiled BEBA action (`Copy` and hashable, as every op).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BebaOp {
    SetState {
        table_id: u8,
        bit: bool,
        state: u32,
        mask: u32,
        hard_rollback: u32,
        idle_rollback: u32,
        hard_timeout: u32,
        idle_timeout: u32,
    },
    SetGlobalState {
        value: u32,
        mask: u32,
    },
    IncState {
        table_id: u8,
    },
}

/// [`BebaOp`] in an [`ExtOp`](crate::ext::api::ExtOp) (its `code`,
/// `bytes` and `words`; the registry fills in `ext`).
mod code {
    pub const SET_STATE: u8 = 0;
    pub const SET_GLOBAL_STATE: u8 = 1;
    pub const INC_STATE: u8 = 2;
}

impl BebaOp {
    /// The op in the shared encoding of extension ops.
    pub fn encode(self) -> crate::ext::api::ExtOp {
        use crate::ext::api::ExtOp;
        match self {
            BebaOp::SetState {
                table_id,
                bit,
                state,
                mask,
                hard_rollback,
                idle_rollback,
                hard_timeout,
                idle_timeout,
            } => ExtOp {
                code: code::SET_STATE,
                bytes: [table_id, u8::from(bit)],
                words: [
                    state,
                    mask,
                    hard_rollback,
                    idle_rollback,
                    hard_timeout,
                    idle_timeout,
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
    pub fn decode(e: &crate::ext::api::ExtOp) -> Option<BebaOp> {
        let [table_id, bit] = e.bytes;
        let w = e.words;
        Some(match e.code {
            code::SET_STATE => BebaOp::SetState {
                table_id,
                bit: bit != 0,
                state: w[0],
                mask: w[1],
                hard_rollback: w[2],
                idle_rollback: w[3],
                hard_timeout: w[4],
                idle_timeout: w[5],
            },
            code::SET_GLOBAL_STATE => BebaOp::SetGlobalState {
                value: w[0],
                mask: w[1],
            },
            code::INC_STATE => BebaOp::IncState { table_id },
            _ => return None,
        })
    }
}
