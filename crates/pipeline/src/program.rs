//! Compiled instructions and actions: what the packet path executes.
//!
//! A flow entry's instructions arrive as `ofp` values, shaped for the wire:
//! a list in any order, set-field values as OXM fields. Interpreting that
//! per packet means finding each instruction type and converting every
//! set-field value into the rewrite the `packet` crate applies, again and
//! again. So a flow-mod (and a group-mod) compiles them once:
//!
//! ```text
//!  Program  { meter, apply: [Op], clear, write: [Op], metadata, goto }
//!  Op       one action, set-field already a packet::SetField
//! ```
//!
//! - [`Program`] holds the instructions in the spec's execution order
//!   (meter, apply-actions, clear-actions, write-actions, write-metadata,
//!   goto-table), each present at most once (flow-mod validation refuses
//!   duplicates).
//! - [`Op`] mirrors `ofp::action::Action` with the set-field value
//!   converted; an action the packet path ignores (experimenter, or a
//!   set-field on a field that cannot be rewritten, which validation
//!   refuses anyway) becomes [`Op::Nop`].
//! - A group bucket's actions execute as an action set (spec §5.6.1); they
//!   are compiled into the set's order once, at group-mod
//!   ([`crate::action_set::bucket_ops`]).
//!
//! The controller's original instructions stay in the flow entry for stats
//! and flow-removed messages; the program is derived from them and never
//! reported.

use crate::ext::registry::Extensions;
use ofp::action::Action;
use ofp::instruction::Instruction;
use ofp::oxm::OxmField;
use ofp::port::port_no;
use packet::{Field, FieldSet, Layer, SetField};

/// One compiled action (module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Output {
        port: u32,
        max_len: u16,
    },
    Group(u32),
    SetQueue(u32),
    CopyTtlOut,
    CopyTtlIn,
    SetMplsTtl(u8),
    DecMplsTtl,
    PushVlan(u16),
    PopVlan,
    PushMpls(u16),
    PopMpls(u16),
    SetNwTtl(u8),
    DecNwTtl,
    SetField(SetField),
    PushPbb(u16),
    PopPbb,
    /// Ignored by the packet path (module comment).
    Nop,
    /// An extension's action (`crate::ext`), e.g. BEBA's SET_STATE.
    Ext(crate::ext::api::ExtOp),
    /// Fused (see [`fuse`]): set-field `eth_dst` and set-field `eth_src`,
    /// next to each other in a list, in either order.
    SetMacs {
        dst: [u8; 6],
        src: [u8; 6],
    },
    /// Fused (see [`fuse`]): a router's next hop: dec NW TTL, then
    /// [`Op::SetMacs`], then output to a standard port (whose `max_len`
    /// nothing reads).
    Route {
        dst: [u8; 6],
        src: [u8; 6],
        port: u32,
    },
    /// Fused (see [`fuse`]): set-field `eth_dst`, then output to a
    /// standard port (whose `max_len` nothing reads).
    SetEthDstOutput {
        dst: [u8; 6],
        port: u32,
    },
    /// Fused (see [`fuse`]): set-field of an IPv4 address (`addr_field`:
    /// `Ipv4Src` or `Ipv4Dst`), then of a TCP or UDP port (`port_field`),
    /// a NAT's rewrite.
    SetIpv4Port {
        addr: u32,
        port: u16,
        addr_field: Field,
        port_field: Field,
    },
    /// Fused (see [`fuse`]): set-field of an IPv4 address (`addr_field`:
    /// `Ipv4Src` or `Ipv4Dst`), set-field `eth_dst`, then output to a
    /// standard port (whose `max_len` nothing reads): a load balancer's
    /// backend, the address rewritten and the frame sent to the backend's
    /// MAC.
    SetIpv4EthDstOutput {
        addr: u32,
        addr_field: Field,
        dst: [u8; 6],
        port: u32,
    },
}

/// The rewrite a set-field OXM value asks for, if the field can be set.
pub fn to_set_field(f: &OxmField) -> Option<SetField> {
    let (value, _) = f.bits()?;
    let field = Field::from_u8(f.field_id())?;
    let bytes = value.to_be_bytes();
    let w = field.width();
    SetField::from_value(field, bytes.get(16usize.checked_sub(w)?..)?)
}

impl Op {
    /// Compiles an action; an experimenter action goes to the extension
    /// of its id in `exts` (one it does not know, which validation
    /// refuses, compiles to a no-op).
    pub fn compile(a: &Action, exts: &Extensions) -> Op {
        match a {
            Action::Output { port, max_len } => Op::Output {
                port: *port,
                max_len: *max_len,
            },
            Action::Group(g) => Op::Group(*g),
            Action::SetQueue(q) => Op::SetQueue(*q),
            Action::CopyTtlOut => Op::CopyTtlOut,
            Action::CopyTtlIn => Op::CopyTtlIn,
            Action::SetMplsTtl(t) => Op::SetMplsTtl(*t),
            Action::DecMplsTtl => Op::DecMplsTtl,
            Action::PushVlan(t) => Op::PushVlan(*t),
            Action::PopVlan => Op::PopVlan,
            Action::PushMpls(t) => Op::PushMpls(*t),
            Action::PopMpls(t) => Op::PopMpls(*t),
            Action::SetNwTtl(t) => Op::SetNwTtl(*t),
            Action::DecNwTtl => Op::DecNwTtl,
            Action::SetField(f) => to_set_field(f).map_or(Op::Nop, Op::SetField),
            Action::PushPbb(t) => Op::PushPbb(*t),
            Action::PopPbb => Op::PopPbb,
            Action::Experimenter { .. } => exts.compile_action(a).map_or(Op::Nop, Op::Ext),
        }
    }
}

impl Op {
    /// How deep the packet must have been parsed (and found well formed)
    /// for this action: the layers it reads or rewrites, checksums
    /// included. Conservative outside the common cases: everything but
    /// output, group, set-queue, an L2 set-field and the IP TTL actions
    /// asks for the whole packet (L4).
    pub fn layer(&self) -> Layer {
        match self {
            Op::Output { .. } | Op::Group(_) | Op::SetQueue(_) | Op::Nop | Op::Ext(_) => {
                Layer::None
            }
            Op::SetField(sf) if sf.field().layer() <= Layer::L2 => Layer::L2,
            Op::SetMacs { .. } | Op::SetEthDstOutput { .. } => Layer::L2,
            Op::DecNwTtl | Op::SetNwTtl(_) | Op::Route { .. } => Layer::L3,
            _ => Layer::L4,
        }
    }
}

impl Op {
    /// The key fields this op may change: none for output, group (a
    /// bucket that a table follows acts on a copy), set-queue; the field
    /// of a set-field and the fields sharing its place in the key (TCP,
    /// UDP and SCTP ports; ICMPv4 and ICMPv6 type and code), every field
    /// for a set-field of the ethertype or IP protocol; what the
    /// fused ops stand for; the VLAN fields for a pop-VLAN. The other ops
    /// that move headers (push, pop MPLS or PBB) or touch MPLS TTLs are
    /// said to change every field.
    #[inline]
    pub fn writes(&self) -> FieldSet {
        use Field::*;
        match self {
            Op::Output { .. } | Op::Group(_) | Op::SetQueue(_) | Op::Nop | Op::Ext(_) => {
                FieldSet::EMPTY
            }
            // A new ethertype or IP protocol changes how the rest of the
            // packet parses.
            Op::SetField(sf) if matches!(sf.field(), EthType | IpProto) => FieldSet::ALL,
            Op::SetField(sf) => with_aliases(sf.field()),
            Op::DecNwTtl | Op::SetNwTtl(_) => FieldSet::of(&[IpTtl]),
            Op::SetMacs { .. } => FieldSet::of(&[EthDst, EthSrc]),
            Op::SetEthDstOutput { .. } => FieldSet::of(&[EthDst]),
            Op::Route { .. } => FieldSet::of(&[EthDst, EthSrc, IpTtl]),
            Op::SetIpv4Port {
                addr_field,
                port_field,
                ..
            } => {
                let mut w = with_aliases(*addr_field);
                w.insert_all(with_aliases(*port_field));
                w
            }
            Op::SetIpv4EthDstOutput { addr_field, .. } => {
                let mut w = with_aliases(*addr_field);
                w.insert(EthDst);
                w
            }
            // The tags shift up; what follows the tags is the same (a
            // packet with more tags than the parser takes never gets to a
            // table).
            Op::PopVlan => FieldSet::of(&[VlanVid, VlanPcp, InnerVlanVid, InnerVlanPcp]),
            Op::CopyTtlOut
            | Op::CopyTtlIn
            | Op::SetMplsTtl(_)
            | Op::DecMplsTtl
            | Op::PushVlan(_)
            | Op::PushMpls(_)
            | Op::PopMpls(_)
            | Op::PushPbb(_)
            | Op::PopPbb => FieldSet::ALL,
        }
    }
}

/// `f` and the fields kept in the same place of the key (which a
/// set-field of `f` therefore changes too).
pub(crate) fn with_aliases(f: Field) -> FieldSet {
    use Field::*;
    match f {
        TcpSrc | UdpSrc | SctpSrc => FieldSet::of(&[TcpSrc, UdpSrc, SctpSrc]),
        TcpDst | UdpDst | SctpDst => FieldSet::of(&[TcpDst, UdpDst, SctpDst]),
        Icmpv4Type | Icmpv6Type => FieldSet::of(&[Icmpv4Type, Icmpv6Type]),
        Icmpv4Code | Icmpv6Code => FieldSet::of(&[Icmpv4Code, Icmpv6Code]),
        f => FieldSet::of(&[f]),
    }
}

/// The deepest [`Op::layer`] of an action list.
pub fn actions_layer(actions: &[Action], exts: &Extensions) -> Layer {
    actions
        .iter()
        .map(|a| Op::compile(a, exts).layer())
        .max()
        .unwrap_or(Layer::None)
}

/// An action list, compiled in order, one op per action (what an action
/// set is written with).
pub fn compile_actions(actions: &[Action], exts: &Extensions) -> Box<[Op]> {
    actions.iter().map(|a| Op::compile(a, exts)).collect()
}

/// An action list the packet path executes in order (apply-actions),
/// compiled and [`fuse`]d.
pub fn compile_apply(actions: &[Action], exts: &Extensions) -> Box<[Op]> {
    fuse(&compile_actions(actions, exts))
}

/// Replaces runs of ops that are executed one after the other by fused
/// ops with exactly the same effect on the packet, its key and what is
/// emitted (`process.rs` tests compare them): fewer ops to dispatch on
/// the packet path, where every op costs an indirect branch that
/// mispredicts as the op type changes. The runs, left to right:
///
/// ```text
///  dec_nw_ttl, set eth_src|eth_dst, set eth_dst|eth_src, output(std port)  ->  Route
///  set eth_src|eth_dst, set eth_dst|eth_src                                ->  SetMacs
///  set eth_dst, output(std port)                                           ->  SetEthDstOutput
///  set ipv4_src|ipv4_dst, set tcp|udp_src|dst                              ->  SetIpv4Port
///  set ipv4_src|ipv4_dst, set eth_dst, output(std port)                    ->  SetIpv4EthDstOutput
/// ```
///
/// Only lists executed straight through are fused (apply-actions, group
/// buckets); write-actions lists feed the action set, one slot per
/// action, and stay as they are.
pub fn fuse(ops: &[Op]) -> Box<[Op]> {
    let mut out = Vec::with_capacity(ops.len());
    let mut rest = ops;
    while let Some((op, n)) = fuse_at(rest) {
        out.push(op);
        rest = rest.get(n..).unwrap_or_default();
    }
    out.into_boxed_slice()
}

/// The op that starts `ops`, fused with those after it when a run of
/// [`fuse`] starts there, and how many ops it stands for; `None` for an
/// empty list.
fn fuse_at(ops: &[Op]) -> Option<(Op, usize)> {
    if let [Op::DecNwTtl, a, b, Op::Output { port, .. }, ..] = ops {
        if let (Some((dst, src)), true) = (macs(a, b), *port <= port_no::MAX) {
            let port = *port;
            return Some((Op::Route { dst, src, port }, 4));
        }
    }
    if let [Op::SetField(sa), Op::SetField(SetField::EthDst(dst)), Op::Output { port, .. }, ..] =
        ops
    {
        if let (SetField::Ipv4Src(addr) | SetField::Ipv4Dst(addr), true) =
            (sa, *port <= port_no::MAX)
        {
            let op = Op::SetIpv4EthDstOutput {
                addr: *addr,
                addr_field: sa.field(),
                dst: *dst,
                port: *port,
            };
            return Some((op, 3));
        }
    }
    if let [a, b, ..] = ops {
        if let Some(op) = fuse_two(a, b) {
            return Some((op, 2));
        }
    }
    ops.first().map(|op| (*op, 1))
}

/// The fused op of the two-op runs of [`fuse`], if `a`, `b` are one.
fn fuse_two(a: &Op, b: &Op) -> Option<Op> {
    if let Some((dst, src)) = macs(a, b) {
        return Some(Op::SetMacs { dst, src });
    }
    match (*a, *b) {
        (Op::SetField(SetField::EthDst(dst)), Op::Output { port, .. }) if port <= port_no::MAX => {
            Some(Op::SetEthDstOutput { dst, port })
        }
        (Op::SetField(sa), Op::SetField(sp)) => {
            let addr = match sa {
                SetField::Ipv4Src(x) | SetField::Ipv4Dst(x) => x,
                _ => return None,
            };
            let port = match sp {
                SetField::TcpSrc(x)
                | SetField::TcpDst(x)
                | SetField::UdpSrc(x)
                | SetField::UdpDst(x) => x,
                _ => return None,
            };
            Some(Op::SetIpv4Port {
                addr,
                port,
                addr_field: sa.field(),
                port_field: sp.field(),
            })
        }
        _ => None,
    }
}

/// `(eth_dst, eth_src)` if `a` and `b` set those two fields (either order).
fn macs(a: &Op, b: &Op) -> Option<([u8; 6], [u8; 6])> {
    match (a, b) {
        (Op::SetField(SetField::EthDst(d)), Op::SetField(SetField::EthSrc(s)))
        | (Op::SetField(SetField::EthSrc(s)), Op::SetField(SetField::EthDst(d))) => Some((*d, *s)),
        _ => None,
    }
}

/// A flow entry's instructions, compiled (module comment).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Program {
    pub meter: Option<u32>,
    pub apply: Option<Box<[Op]>>,
    pub clear: bool,
    pub write: Option<Box<[Op]>>,
    /// (value, mask)
    pub metadata: Option<(u64, u64)>,
    pub goto: Option<u8>,
    /// The key fields running this program may change before the next
    /// table looks the packet up: those its apply-actions write
    /// ([`Op::writes`]; a group's buckets act on copies while a table
    /// follows), DSCP with a meter (a band may remark it), metadata with
    /// a write-metadata. A lookup made ahead of time with the key
    /// (`crate::batch`) stays good for a later table that matches on
    /// none of the fields written on the way there.
    pub writes: FieldSet,
    /// [`Program::layer`], computed once by `compile` (every flow-mod
    /// asks for it).
    layer: Layer,
    /// The standard port, when the whole program is one apply-actions
    /// with one output to a standard port (an L2 table's entries, a port
    /// patch). Computed by `compile`.
    pub only_output: Option<u32>,
    /// Whether the whole program is its apply-actions (no meter, clear,
    /// write, metadata or goto). Computed by `compile`.
    pub apply_only: bool,
    /// The table, when the whole program is one goto-table (a dispatch
    /// entry: `in_port=1 -> goto:1`). Computed by `compile`.
    pub only_goto: Option<u8>,
    /// An extension's packet generation (BEBA's IN_SWITCH_PKT_GEN,
    /// `crate::ext`): the extension's index (as an `ExtOp`'s), the
    /// template id and the compiled action list the generated packet runs
    /// through, after apply-actions.
    pub pkt_gen: Option<(u8, u32, Box<[Op]>)>,
}

impl Program {
    /// Whether the program runs an extension action (`crate::ext`).
    pub fn uses_ext(&self) -> bool {
        let ext = |ops: &Option<Box<[Op]>>| {
            ops.as_deref()
                .unwrap_or_default()
                .iter()
                .any(|o| matches!(o, Op::Ext(_)))
        };
        ext(&self.apply) || ext(&self.write) || self.pkt_gen.is_some()
    }

    /// Whether the whole program does nothing to the packet (no
    /// instruction but, perhaps, an empty apply-actions): the packet is
    /// dropped after its counters unless its action set holds an output.
    #[inline]
    pub fn drops(&self) -> bool {
        self.apply_only && self.apply.as_deref().is_none_or(<[Op]>::is_empty)
    }

    /// The group, when the whole program is one apply-actions with one
    /// group action (a load balancer's VIP, a route to a next hop).
    #[inline]
    pub fn only_group(&self) -> Option<u32> {
        match self.apply.as_deref() {
            Some(&[Op::Group(g)]) if self.apply_only => Some(g),
            _ => None,
        }
    }

    /// Compiles validated instructions (experimenter instructions, which
    /// validation refuses, are ignored).
    pub fn compile(insts: &[Instruction], exts: &Extensions) -> Program {
        let mut p = Program::default();
        for i in insts {
            match i {
                Instruction::Meter(m) => p.meter = Some(*m),
                Instruction::ApplyActions(a) => p.apply = Some(compile_apply(a, exts)),
                Instruction::ClearActions => p.clear = true,
                Instruction::WriteActions(a) => p.write = Some(compile_actions(a, exts)),
                Instruction::WriteMetadata { metadata, mask } => {
                    p.metadata = Some((*metadata, *mask))
                }
                Instruction::GotoTable(t) => p.goto = Some(*t),
                Instruction::Experimenter { .. } => {
                    if let Ok((ext, (id, actions))) = exts.pkt_gen(i) {
                        p.pkt_gen = Some((ext, id, compile_actions(&actions, exts)));
                    }
                }
            }
        }
        for op in p.apply.as_deref().unwrap_or_default() {
            p.writes.insert_all(op.writes());
        }
        if p.meter.is_some() {
            p.writes.insert(Field::IpDscp);
        }
        if p.metadata.is_some() {
            p.writes.insert(Field::Metadata);
        }
        p.layer = p.deepest_layer();
        let only = p.meter.is_none()
            && !p.clear
            && p.write.is_none()
            && p.metadata.is_none()
            && p.pkt_gen.is_none();
        p.apply_only = only && p.goto.is_none();
        p.only_output = match p.apply.as_deref() {
            Some(&[Op::Output { port, .. }]) if port < port_no::IN_PORT && p.apply_only => {
                Some(port)
            }
            _ => None,
        };
        p.only_goto = p.goto.filter(|_| only && p.apply.is_none());
        p
    }

    /// The deepest layer this program needs (see [`Op::layer`]; a meter
    /// may remark DSCP: the whole packet).
    #[inline]
    pub fn layer(&self) -> Layer {
        self.layer
    }

    /// `layer`, worked out.
    fn deepest_layer(&self) -> Layer {
        if self.meter.is_some() {
            return Layer::L4;
        }
        let ops = [&self.apply, &self.write];
        ops.into_iter()
            .flatten()
            .flat_map(|ops| ops.iter().map(Op::layer))
            .max()
            .unwrap_or(Layer::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action_set::bucket_ops;

    #[test]
    fn compiles_in_spec_order_with_set_fields_converted() {
        let p = Program::compile(
            &[
                Instruction::GotoTable(3),
                Instruction::WriteActions(vec![Action::Group(5)]),
                Instruction::ApplyActions(vec![
                    Action::SetField(OxmField::Ipv4Src(
                        std::net::Ipv4Addr::new(10, 0, 0, 1),
                        None,
                    )),
                    Action::DecNwTtl,
                ]),
                Instruction::Meter(9),
            ],
            &Default::default(),
        );
        assert_eq!(p.meter, Some(9));
        assert_eq!(p.goto, Some(3));
        assert_eq!(p.write.as_deref(), Some(&[Op::Group(5)][..]));
        assert_eq!(
            p.apply.as_deref(),
            Some(&[Op::SetField(SetField::Ipv4Src(0x0a00_0001)), Op::DecNwTtl][..])
        );
        assert!(!p.clear && p.metadata.is_none());
    }

    #[test]
    fn bucket_actions_run_as_an_action_set() {
        let ops = bucket_ops(
            &[
                Action::Output {
                    port: 2,
                    max_len: 0,
                },
                Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 9], None)),
                Action::DecNwTtl,
            ],
            &Default::default(),
        );
        // In action-set order, then fused.
        assert_eq!(
            ops,
            fuse(&[
                Op::DecNwTtl,
                Op::SetField(SetField::EthDst([2, 0, 0, 0, 0, 9])),
                Op::Output {
                    port: 2,
                    max_len: 0
                },
            ])
        );
    }
}
