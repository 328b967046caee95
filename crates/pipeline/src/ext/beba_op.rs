//! BEBA's compiled actions (`crate::ext::beba`), apart so that the
//! shared types (`crate::ext::api`) can name them.

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
