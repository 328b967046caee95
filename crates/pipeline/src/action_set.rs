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
//! The set works on compiled actions ([`Op`], see [`crate::program`]) and
//! lives on the stack of one packet's trip through the tables, so it must
//! not allocate: the set-fields are kept inline (a packet rarely collects
//! more than [`INLINE_SET_FIELDS`]; more spill to the heap), and
//! [`ActionSet::for_each`] visits the actions in execution order without
//! building a list.

use crate::program::{compile_actions, fuse, Op};
use ofp::action::Action;
use packet::SetField;
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
    pub set_fields: SmallVec<[SetField; INLINE_SET_FIELDS]>,
    pub set_queue: Option<u32>,
    pub group: Option<u32>,
    /// (port, max_len)
    pub output: Option<(u32, u16)>,
    /// Extension actions (`crate::ext`), in the order written, run first
    /// of all: they see the packet as it entered the set (BEBA's
    /// SET_STATE in a group bucket keys the state by the packet before
    /// the bucket's set-fields, as the BEBA switch, which runs a bucket
    /// as a list, does for the apps that put it first).
    pub ext: SmallVec<[crate::ext::api::ExtOp; 1]>,
}

impl ActionSet {
    #[inline]
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

    /// Write-actions: merges `ops` into the set.
    pub fn write(&mut self, ops: &[Op]) {
        for op in ops {
            match *op {
                Op::Output { port, max_len } => self.output = Some((port, max_len)),
                Op::CopyTtlOut => self.copy_ttl_out = true,
                Op::CopyTtlIn => self.copy_ttl_in = true,
                Op::SetMplsTtl(t) => self.set_mpls_ttl = Some(t),
                Op::DecMplsTtl => self.dec_mpls_ttl = true,
                Op::PushVlan(t) => self.push_vlan = Some(t),
                Op::PopVlan => self.pop_vlan = true,
                Op::PushMpls(t) => self.push_mpls = Some(t),
                Op::PopMpls(t) => self.pop_mpls = Some(t),
                Op::SetQueue(q) => self.set_queue = Some(q),
                Op::Group(g) => self.group = Some(g),
                Op::SetNwTtl(t) => self.set_nw_ttl = Some(t),
                Op::DecNwTtl => self.dec_nw_ttl = true,
                Op::SetField(f) => {
                    let field = f.field();
                    match self.set_fields.iter_mut().find(|g| g.field() == field) {
                        Some(slot) => *slot = f,
                        None => self.set_fields.push(f),
                    }
                }
                Op::PushPbb(t) => self.push_pbb = Some(t),
                Op::PopPbb => self.pop_pbb = true,
                Op::Nop => {}
                Op::Ext(e) => self.ext.push(e),
                // Fused ops (`program::fuse`) are not written to sets;
                // should one be, it counts as the ops it stands for.
                Op::SetMacs { dst, src } => self.write(&[
                    Op::SetField(SetField::EthDst(dst)),
                    Op::SetField(SetField::EthSrc(src)),
                ]),
                Op::Route { dst, src, port } => self.write(&[
                    Op::DecNwTtl,
                    Op::SetField(SetField::EthSrc(src)),
                    Op::SetField(SetField::EthDst(dst)),
                    Op::Output { port, max_len: 0 },
                ]),
                Op::SetEthDstOutput { dst, port } => self.write(&[
                    Op::SetField(SetField::EthDst(dst)),
                    Op::Output { port, max_len: 0 },
                ]),
                Op::SetIpv4EthDstOutput {
                    addr,
                    addr_field,
                    dst,
                    port,
                } => {
                    let a = SetField::from_value(addr_field, &addr.to_be_bytes());
                    let ops = a.into_iter().map(Op::SetField).chain([
                        Op::SetField(SetField::EthDst(dst)),
                        Op::Output { port, max_len: 0 },
                    ]);
                    self.write(&ops.collect::<SmallVec<[Op; 3]>>())
                }
                Op::SetIpv4Port {
                    addr,
                    port,
                    addr_field,
                    port_field,
                } => {
                    let a = SetField::from_value(addr_field, &addr.to_be_bytes());
                    let p = SetField::from_value(port_field, &port.to_be_bytes());
                    let ops = [a, p].into_iter().flatten().map(Op::SetField);
                    self.write(&ops.collect::<SmallVec<[Op; 2]>>())
                }
            }
        }
    }

    /// Visits the set's actions in execution order until `f` returns
    /// false. Output is left out when a group is present (spec: the group's
    /// buckets decide).
    pub fn for_each(&self, mut f: impl FnMut(&Op) -> bool) {
        // Straight-line on purpose: this runs once per packet, and building
        // a list of candidate actions first costs more than the checks.
        macro_rules! emit {
            ($cond:expr, $op:expr) => {
                if $cond && !f(&$op) {
                    return;
                }
            };
        }
        for e in &self.ext {
            emit!(true, Op::Ext(*e));
        }
        emit!(self.copy_ttl_in, Op::CopyTtlIn);
        emit!(self.pop_vlan, Op::PopVlan);
        emit!(self.pop_pbb, Op::PopPbb);
        if let Some(t) = self.pop_mpls {
            emit!(true, Op::PopMpls(t));
        }
        if let Some(t) = self.push_mpls {
            emit!(true, Op::PushMpls(t));
        }
        if let Some(t) = self.push_pbb {
            emit!(true, Op::PushPbb(t));
        }
        if let Some(t) = self.push_vlan {
            emit!(true, Op::PushVlan(t));
        }
        emit!(self.copy_ttl_out, Op::CopyTtlOut);
        emit!(self.dec_mpls_ttl, Op::DecMplsTtl);
        emit!(self.dec_nw_ttl, Op::DecNwTtl);
        if let Some(t) = self.set_mpls_ttl {
            emit!(true, Op::SetMplsTtl(t));
        }
        if let Some(t) = self.set_nw_ttl {
            emit!(true, Op::SetNwTtl(t));
        }
        for sf in &self.set_fields {
            emit!(true, Op::SetField(*sf));
        }
        if let Some(q) = self.set_queue {
            emit!(true, Op::SetQueue(q));
        }
        match (self.group, self.output) {
            (Some(g), _) => emit!(true, Op::Group(g)),
            (None, Some((port, max_len))) => emit!(true, Op::Output { port, max_len }),
            (None, None) => {}
        }
    }

    /// The set as a list in execution order (see [`Self::for_each`]).
    pub fn to_ops(&self) -> Vec<Op> {
        let mut v = Vec::new();
        self.for_each(|op| {
            v.push(*op);
            true
        });
        v
    }
}

/// A group bucket's actions in action-set order (spec §5.6.1: a
/// bucket's actions execute as an action set), [`fuse`]d.
pub fn bucket_ops(actions: &[Action], exts: &crate::ext::registry::Extensions) -> Box<[Op]> {
    let mut set = ActionSet::new();
    set.write(&compile_actions(actions, exts));
    let mut ops = Vec::new();
    set.for_each(|op| {
        ops.push(*op);
        true
    });
    fuse(&ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::compile_actions;
    use ofp::action::Action;
    use ofp::oxm::OxmField;

    #[test]
    fn order_replace_and_group_wins() {
        let mut s = ActionSet::new();
        s.write(&compile_actions(
            &[
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
            ],
            &Default::default(),
        ));
        assert_eq!(
            s.to_ops(),
            vec![
                Op::CopyTtlIn,
                Op::PopMpls(0x0800),
                Op::PushVlan(0x8100),
                Op::DecNwTtl,
                Op::SetField(SetField::IpDscp(2)),
                Op::Output {
                    port: 2,
                    max_len: 0
                },
            ]
        );
        s.write(&[Op::Group(7)]);
        assert_eq!(s.to_ops().last(), Some(&Op::Group(7)));
        assert!(!s.to_ops().iter().any(|a| matches!(a, Op::Output { .. })));
        s.clear();
        assert!(s.is_empty() && s.to_ops().is_empty());
    }
}
