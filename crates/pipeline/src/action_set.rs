//! The action set (spec §5.10): the actions a packet accumulates through
//! write-actions instructions, executed when the pipeline ends.
//!
//! The set holds at most one action of each type, and one set-field per
//! field; writing an action of a type already present replaces it. Each type
//! has its own slot below, in the order the spec executes them, so the
//! execution order is the struct's field order and needs no sorting:
//! copy TTL in, pops, push MPLS, push PBB, push VLAN, copy TTL out,
//! decrement TTL, set (set-field, set TTL), set queue, group, output.
//!
//! The set lives on the stack of one packet's trip through the tables, so
//! it must not allocate: the set-fields are kept inline (a packet rarely
//! collects more than [`INLINE_SET_FIELDS`]; more spill to the heap), and
//! [`ActionSet::for_each`] visits the actions in execution order without
//! building a list.

use ofp::action::Action;
use ofp::oxm::OxmField;
use smallvec::SmallVec;

/// Set-field actions held without a heap allocation.
pub const INLINE_SET_FIELDS: usize = 4;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActionSet {
    pub copy_ttl_in: bool,
    pub pop_vlan: bool,
    pub pop_pbb: bool,
    pub pop_mpls: Option<u16>,
    pub push_mpls: Option<u16>,
    pub push_pbb: Option<u16>,
    pub push_vlan: Option<u16>,
    pub copy_ttl_out: bool,
    pub dec_mpls_ttl: bool,
    pub dec_nw_ttl: bool,
    pub set_mpls_ttl: Option<u8>,
    pub set_nw_ttl: Option<u8>,
    /// At most one per field, in the order first written.
    pub set_fields: SmallVec<[OxmField; INLINE_SET_FIELDS]>,
    pub set_queue: Option<u32>,
    pub group: Option<u32>,
    /// (port, max_len)
    pub output: Option<(u32, u16)>,
}

impl ActionSet {
    pub fn new() -> ActionSet {
        ActionSet::default()
    }

    /// Clear-actions.
    pub fn clear(&mut self) {
        *self = ActionSet::default();
    }

    pub fn is_empty(&self) -> bool {
        *self == ActionSet::default()
    }

    /// Write-actions: merges `actions` into the set. Experimenter actions
    /// are refused by flow-mod validation and ignored here.
    pub fn write(&mut self, actions: &[Action]) {
        for a in actions {
            match a {
                Action::Output { port, max_len } => self.output = Some((*port, *max_len)),
                Action::CopyTtlOut => self.copy_ttl_out = true,
                Action::CopyTtlIn => self.copy_ttl_in = true,
                Action::SetMplsTtl(t) => self.set_mpls_ttl = Some(*t),
                Action::DecMplsTtl => self.dec_mpls_ttl = true,
                Action::PushVlan(t) => self.push_vlan = Some(*t),
                Action::PopVlan => self.pop_vlan = true,
                Action::PushMpls(t) => self.push_mpls = Some(*t),
                Action::PopMpls(t) => self.pop_mpls = Some(*t),
                Action::SetQueue(q) => self.set_queue = Some(*q),
                Action::Group(g) => self.group = Some(*g),
                Action::SetNwTtl(t) => self.set_nw_ttl = Some(*t),
                Action::DecNwTtl => self.dec_nw_ttl = true,
                Action::SetField(f) => {
                    let id = f.field_id();
                    match self.set_fields.iter_mut().find(|g| g.field_id() == id) {
                        Some(slot) => *slot = f.clone(),
                        None => self.set_fields.push(f.clone()),
                    }
                }
                Action::PushPbb(t) => self.push_pbb = Some(*t),
                Action::PopPbb => self.pop_pbb = true,
                Action::Experimenter { .. } => {}
            }
        }
    }

    /// Visits the set's actions in execution order until `f` returns
    /// false. Output is left out when a group is present (spec: the group's
    /// buckets decide).
    pub fn for_each(&self, mut f: impl FnMut(&Action) -> bool) {
        // Straight-line on purpose: this runs once per packet, and building
        // a list of candidate actions first costs more than the checks.
        macro_rules! emit {
            ($cond:expr, $action:expr) => {
                if $cond && !f(&$action) {
                    return;
                }
            };
        }
        emit!(self.copy_ttl_in, Action::CopyTtlIn);
        emit!(self.pop_vlan, Action::PopVlan);
        emit!(self.pop_pbb, Action::PopPbb);
        if let Some(t) = self.pop_mpls {
            emit!(true, Action::PopMpls(t));
        }
        if let Some(t) = self.push_mpls {
            emit!(true, Action::PushMpls(t));
        }
        if let Some(t) = self.push_pbb {
            emit!(true, Action::PushPbb(t));
        }
        if let Some(t) = self.push_vlan {
            emit!(true, Action::PushVlan(t));
        }
        emit!(self.copy_ttl_out, Action::CopyTtlOut);
        emit!(self.dec_mpls_ttl, Action::DecMplsTtl);
        emit!(self.dec_nw_ttl, Action::DecNwTtl);
        if let Some(t) = self.set_mpls_ttl {
            emit!(true, Action::SetMplsTtl(t));
        }
        if let Some(t) = self.set_nw_ttl {
            emit!(true, Action::SetNwTtl(t));
        }
        for sf in &self.set_fields {
            emit!(true, Action::SetField(sf.clone()));
        }
        if let Some(q) = self.set_queue {
            emit!(true, Action::SetQueue(q));
        }
        match (self.group, self.output) {
            (Some(g), _) => emit!(true, Action::Group(g)),
            (None, Some((port, max_len))) => emit!(true, Action::Output { port, max_len }),
            (None, None) => {}
        }
    }

    /// The set as an action list in execution order (see [`Self::for_each`]).
    pub fn to_actions(&self) -> Vec<Action> {
        let mut v = Vec::new();
        self.for_each(|a| {
            v.push(a.clone());
            true
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_replace_and_group_wins() {
        let mut s = ActionSet::new();
        s.write(&[
            Action::Output {
                port: 1,
                max_len: 0,
            },
            Action::SetField(OxmField::IpDscp(1)),
            Action::DecNwTtl,
            Action::PushVlan(0x8100),
            Action::PopMpls(0x0800),
            Action::CopyTtlIn,
            Action::SetField(OxmField::IpDscp(2)),
            Action::Output {
                port: 2,
                max_len: 0,
            },
        ]);
        assert_eq!(
            s.to_actions(),
            vec![
                Action::CopyTtlIn,
                Action::PopMpls(0x0800),
                Action::PushVlan(0x8100),
                Action::DecNwTtl,
                Action::SetField(OxmField::IpDscp(2)),
                Action::Output {
                    port: 2,
                    max_len: 0
                },
            ]
        );
        s.write(&[Action::Group(7)]);
        assert_eq!(s.to_actions().last(), Some(&Action::Group(7)));
        assert!(!s
            .to_actions()
            .iter()
            .any(|a| matches!(a, Action::Output { .. })));
        s.clear();
        assert!(s.is_empty() && s.to_actions().is_empty());
    }
}
