//! PKTTMP_MOD (`exp_type` 1): install or remove a packet template, the
//! frame IN_SWITCH_PKT_GEN starts from.
//!
//! After the experimenter header: `command u8 | pad u8 | pkttmp_id u32 |
//! pad 4 | frame ...` (add) or `... | pkttmp_id u32 | pad 4` (delete).

use super::error::{BebaDecodeError, BebaErrorCode};
use crate::wire::{Reader, Writer};

/// `ofp_exp_msg_pkttmp_mod_commands`.
pub mod command {
    pub const ADD: u8 = 0;
    pub const DELETE: u8 = 1;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PktTmpMod {
    /// Template `pkttmp_id` is the frame `data` (possibly empty).
    Add {
        pkttmp_id: u32,
        data: Vec<u8>,
    },
    Delete {
        pkttmp_id: u32,
    },
}

impl PktTmpMod {
    /// Decode the bytes after the experimenter header.
    pub fn decode(data: &[u8]) -> Result<PktTmpMod, BebaDecodeError> {
        let short = BebaDecodeError::short;
        let mut r = Reader::message(data);
        let cmd = r.u8("pkttmp_mod: command").map_err(short)?;
        r.pad(1).map_err(short)?;
        match cmd {
            command::ADD | command::DELETE => {}
            _ => {
                return Err(BebaDecodeError::beba(
                    BebaErrorCode::PktTmpModBadCommand,
                    "pkttmp_mod: command",
                ))
            }
        }
        let pkttmp_id = r.u32("pkttmp_mod: pkttmp_id").map_err(short)?;
        r.pad(4).map_err(short)?;
        if cmd == command::ADD {
            Ok(PktTmpMod::Add {
                pkttmp_id,
                data: r.rest().to_vec(),
            })
        } else {
            r.finish("pkttmp_mod delete: trailing bytes")
                .map_err(short)?;
            Ok(PktTmpMod::Delete { pkttmp_id })
        }
    }

    /// Encode the bytes after the experimenter header.
    pub fn encode(&self, w: &mut Vec<u8>) {
        match self {
            PktTmpMod::Add { pkttmp_id, data } => {
                w.put_u8(command::ADD);
                w.put_zeros(1);
                w.put_u32(*pkttmp_id);
                w.put_zeros(4);
                w.put_bytes(data);
            }
            PktTmpMod::Delete { pkttmp_id } => {
                w.put_u8(command::DELETE);
                w.put_zeros(1);
                w.put_u32(*pkttmp_id);
                w.put_zeros(4);
            }
        }
    }
}
