//! InSP (in-switch packet generation): packet templates installed by
//! PKTTMP_MOD and the frame an IN_SWITCH_PKT_GEN instruction emits.
//!
//! The templates are a map from id to frame behind a read-write lock:
//! PKTTMP_MOD (control thread) takes it for writing, packet generation for
//! reading. Generation is not per forwarded packet but per triggering
//! packet of an IN_SWITCH_PKT_GEN flow (e.g. an ARP request to answer), and
//! clones the frame (an `Arc`) out of the lock at once.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use ofp::action::Action;
use ofp::beba::{BebaErrorCode, PktTmpMod};

/// The port a generated packet comes from (the BEBA switch uses 0).
pub const GENERATED_IN_PORT: u32 = 0;

/// A packet to run through an action list: the template's frame, received
/// on [`GENERATED_IN_PORT`]; its actions never send a packet-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated<'a> {
    pub frame: Vec<u8>,
    pub in_port: u32,
    pub actions: &'a [Action],
}

#[derive(Debug, Default)]
pub struct Templates {
    map: RwLock<HashMap<u32, Arc<[u8]>>>,
}

impl Templates {
    /// PKTTMP_MOD. ADD installs (or replaces) a template; DELETE of an
    /// unknown template is `PKTTMP_MOD_FAILED`.
    pub fn apply(&self, m: &PktTmpMod) -> Result<(), BebaErrorCode> {
        let mut map = self
            .map
            .write()
            .map_err(|_| BebaErrorCode::PktTmpModFailed)?;
        match m {
            PktTmpMod::Add { pkttmp_id, data } => {
                map.insert(*pkttmp_id, Arc::from(data.as_slice()));
                Ok(())
            }
            PktTmpMod::Delete { pkttmp_id } => map
                .remove(pkttmp_id)
                .map(|_| ())
                .ok_or(BebaErrorCode::PktTmpModFailed),
        }
    }

    /// The frame of template `id`, if installed.
    pub fn get(&self, id: u32) -> Option<Arc<[u8]>> {
        self.map.read().ok()?.get(&id).cloned()
    }

    pub fn len(&self) -> usize {
        self.map.read().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What IN_SWITCH_PKT_GEN with template `id` and `actions` emits:
    /// `None` for an unknown template or an empty one (the BEBA switch
    /// logs and emits nothing in both cases).
    pub fn generate<'a>(&self, id: u32, actions: &'a [Action]) -> Option<Generated<'a>> {
        let frame = self.get(id).filter(|f| !f.is_empty())?;
        Some(Generated {
            frame: frame.to_vec(),
            in_port: GENERATED_IN_PORT,
            actions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_generate_delete() {
        let t = Templates::default();
        let actions = [Action::Output {
            port: 2,
            max_len: 0,
        }];
        assert_eq!(t.generate(7, &actions), None);
        assert!(t
            .apply(&PktTmpMod::Add {
                pkttmp_id: 7,
                data: vec![1, 2, 3]
            })
            .is_ok());
        let g = t.generate(7, &actions).expect("installed");
        assert_eq!(g.frame, [1, 2, 3]);
        assert_eq!(g.in_port, 0);
        assert_eq!(g.actions, &actions);
        assert!(t.apply(&PktTmpMod::Delete { pkttmp_id: 7 }).is_ok());
        assert_eq!(
            t.apply(&PktTmpMod::Delete { pkttmp_id: 7 }),
            Err(BebaErrorCode::PktTmpModFailed)
        );
        assert!(t
            .apply(&PktTmpMod::Add {
                pkttmp_id: 8,
                data: vec![]
            })
            .is_ok());
        assert_eq!(t.generate(8, &actions), None, "empty template");
    }
}
