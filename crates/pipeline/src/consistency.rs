//! Action / match consistency of a flow entry (spec §7.2.5 set-field,
//! §7.4.? BAD_ACTION/MATCH_INCONSISTENT): an action that needs a header
//! must only be used where the entry's match (as changed by the actions
//! before it) guarantees that header.
//!
//! # How
//!
//! `Known` is what the entry guarantees about the packet, kept as the
//! handful of OXM fields that other fields' prerequisites depend on
//! (ETH_TYPE, IP_PROTO, ICMPV6_TYPE, VLAN_VID). It starts from the match
//! and is updated by each action in execution order: push/pop of VLAN,
//! MPLS and PBB headers change or forget these fields, and a set-field of
//! one of them replaces it. A set-field is accepted when a match made of
//! the known fields plus the field being set would satisfy the match
//! prerequisites of OXM (`ofp::oxm::Match::check_prerequisites`, spec
//! Table 12) — the same rule a controller already follows when it writes a
//! match; `ofp::oxm::Prerequisites` applies it without building the
//! match. Apply-actions are walked in list order; write-actions then in
//! action-set execution order, starting from what the apply-actions left.
//!
//! Only set-field has prerequisites in the spec. Header actions (pop_vlan,
//! pop_mpls, set/dec_mpls_ttl, pop_pbb, the IP TTL actions) are accepted
//! whatever the match and do nothing to a packet without the header:
//! `ovs-ofctl -O OpenFlow13` refuses e.g. pop_vlan without a VLAN match,
//! but controllers and tests commonly install `dl_src=...,actions=pop_vlan`
//! for traffic they know is tagged, and the spec gives no rule to refuse
//! it. Group buckets have no match and are not checked. Set-field of a field
//! the switch cannot set (IN_PORT, IN_PHY_PORT, METADATA, experimenter
//! fields) is BAD_ACTION/BAD_SET_TYPE. ETH_TYPE and IP_PROTO are
//! settable (`packet::SetField::EthType`, `IpProto`): a set-field of
//! ETH_TYPE forgets IP_PROTO and ICMPV6_TYPE, one of IP_PROTO forgets
//! ICMPV6_TYPE, so a later set-field of a field that depended on them
//! needs them set again.

use ofp::action::Action;
use ofp::error::{BadActionCode, ErrorCode};
use ofp::instruction::Instruction;
use ofp::oxm::{vid, Match, OxmField, Prerequisites};

const MPLS: [u16; 2] = [0x8847, 0x8848];
/// Ethertype of a PBB I-TAG.
const PBB: u16 = 0x88e7;

/// What a flow entry guarantees about the packet at some point of its
/// actions (module comment).
#[derive(Debug, Clone, Default)]
struct Known {
    eth_type: Option<u16>,
    ip_proto: Option<u8>,
    icmpv6_type: Option<u8>,
    /// VLAN_VID value and mask as matched (or set by push_vlan).
    vlan: Option<(u16, Option<u16>)>,
}

fn inconsistent() -> ErrorCode {
    ErrorCode::BadAction(BadActionCode::MatchInconsistent)
}

impl Known {
    fn from_match(m: &Match) -> Known {
        let mut k = Known::default();
        for f in &m.fields {
            k.learn(f);
        }
        k
    }

    fn learn(&mut self, f: &OxmField) {
        match f {
            OxmField::EthType(t) => self.eth_type = Some(*t),
            OxmField::IpProto(p) => self.ip_proto = Some(*p),
            OxmField::Icmpv6Type(t) => self.icmpv6_type = Some(*t),
            OxmField::VlanVid(v, m) => self.vlan = Some((*v, *m)),
            _ => {}
        }
    }

    /// The known fields as OXM fields (absent ones `None`).
    fn fields(&self) -> [Option<OxmField>; 4] {
        [
            self.eth_type.map(OxmField::EthType),
            self.ip_proto.map(OxmField::IpProto),
            self.icmpv6_type.map(OxmField::Icmpv6Type),
            self.vlan.map(|(x, m)| OxmField::VlanVid(x, m)),
        ]
    }

    fn eth_is(&self, types: &[u16]) -> bool {
        self.eth_type.is_some_and(|t| types.contains(&t))
    }

    /// A new outer header: the L3/L4 facts no longer hold.
    fn new_ethertype(&mut self, t: Option<u16>) {
        self.eth_type = t;
        self.ip_proto = None;
        self.icmpv6_type = None;
    }

    /// Forgets what a set-field of `f` makes untrue: the ethertype and
    /// all after it for ETH_TYPE, the IP protocol and ICMPv6 type for
    /// IP_PROTO.
    fn forget_after(&mut self, f: &OxmField) {
        match f {
            OxmField::EthType(_) => self.new_ethertype(None),
            OxmField::IpProto(_) => {
                self.ip_proto = None;
                self.icmpv6_type = None;
            }
            _ => {}
        }
    }

    /// Checks `a` against what is known, then applies its effect.
    fn step(&mut self, a: &Action) -> Result<(), ErrorCode> {
        match a {
            Action::SetField(f) => {
                if !settable(f) {
                    return Err(ErrorCode::BadAction(BadActionCode::BadSetType));
                }
                // A new ethertype or IP protocol: what depended on the old
                // one no longer holds (and does not constrain `f`).
                self.forget_after(f);
                // The prerequisites of a match made of the known fields
                // plus `f` (`Match::check_prerequisites`), without building
                // one.
                let fields = self.fields();
                if !Prerequisites::hold_for(fields.iter().flatten().chain([f])) {
                    return Err(inconsistent());
                }
                self.learn(f);
            }
            Action::PushVlan(_) => self.vlan = Some((vid::PRESENT, Some(vid::PRESENT))),
            // An inner tag may or may not follow.
            Action::PopVlan => self.vlan = None,
            Action::PushMpls(t) => self.new_ethertype(Some(*t)),
            // The new ethertype holds only if there was an MPLS header.
            Action::PopMpls(t) => {
                let t = self.eth_is(&MPLS).then_some(*t);
                self.new_ethertype(t);
            }
            Action::PushPbb(_) => {
                self.new_ethertype(Some(PBB));
                self.vlan = None;
            }
            Action::PopPbb => {
                self.new_ethertype(None);
                self.vlan = None;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Whether the switch can rewrite field `f` (spec: IN_PORT, IN_PHY_PORT
/// and METADATA are not settable).
fn settable(f: &OxmField) -> bool {
    packet::Field::from_u8(f.field_id()).is_some_and(|field| {
        !matches!(
            f,
            OxmField::InPort(_) | OxmField::InPhyPort(_) | OxmField::Metadata(..)
        ) && f.class() == ofp::oxm::class::OPENFLOW_BASIC
            && ZEROS
                .get(..field.width())
                .is_some_and(|zeros| packet::SetField::from_value(field, zeros).is_some())
    })
}

/// A zero value of any field's width (16 bytes at most: IPv6 addresses),
/// for asking `SetField::from_value` whether a field can be set without
/// allocating one per set-field action.
const ZEROS: [u8; 16] = [0; 16];

/// Execution rank of an action in the action set (spec §5.10).
fn set_rank(a: &Action) -> u8 {
    match a {
        Action::CopyTtlIn => 0,
        Action::PopVlan | Action::PopMpls(_) | Action::PopPbb => 1,
        Action::PushMpls(_) => 2,
        Action::PushPbb(_) => 3,
        Action::PushVlan(_) => 4,
        Action::CopyTtlOut => 5,
        Action::DecMplsTtl | Action::DecNwTtl => 6,
        Action::SetField(_) | Action::SetMplsTtl(_) | Action::SetNwTtl(_) => 7,
        Action::SetQueue(_) => 8,
        Action::Group(_) => 9,
        _ => 10,
    }
}

/// Checks the actions of a flow entry's instructions against its match
/// (module comment).
pub fn check(m: &Match, insts: &[Instruction]) -> Result<(), ErrorCode> {
    let mut k = Known::from_match(m);
    for i in insts {
        if let Instruction::ApplyActions(acts) = i {
            for a in acts {
                k.step(a)?;
            }
        }
    }
    for i in insts {
        if let Instruction::WriteActions(acts) = i {
            let mut sorted: Vec<&Action> = acts.iter().collect();
            sorted.sort_by_key(|a| set_rank(a));
            let mut k = k.clone();
            for a in sorted {
                k.step(a)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ofp::instruction::Instruction as I;

    fn chk(m: Vec<OxmField>, apply: Vec<Action>, write: Vec<Action>) -> Result<(), ErrorCode> {
        check(
            &Match::new(m),
            &[I::ApplyActions(apply), I::WriteActions(write)],
        )
    }

    const MI: ErrorCode = ErrorCode::BadAction(BadActionCode::MatchInconsistent);

    fn ipv4_src() -> Action {
        Action::SetField(OxmField::Ipv4Src([10, 0, 0, 1].into(), None))
    }

    /// `settable` asks with a zero value of the field's width out of
    /// `ZEROS`: every field fits (else it would read as not settable).
    #[test]
    fn every_field_fits_the_zero_value() {
        assert!(packet::Field::ALL.iter().all(|f| f.width() <= ZEROS.len()));
        let v6 = Action::SetField(OxmField::Ipv6Src([0; 16].into(), None));
        let Action::SetField(f) = &v6 else { return };
        assert!(settable(f));
    }

    #[test]
    fn set_field_needs_the_match_prerequisites() {
        assert_eq!(chk(vec![], vec![ipv4_src()], vec![]), Err(MI));
        assert_eq!(chk(vec![], vec![], vec![ipv4_src()]), Err(MI));
        assert_eq!(
            chk(vec![OxmField::EthType(0x86dd)], vec![ipv4_src()], vec![]),
            Err(MI)
        );
        assert!(chk(vec![OxmField::EthType(0x0800)], vec![ipv4_src()], vec![]).is_ok());
        let tcp = Action::SetField(OxmField::TcpDst(80));
        assert_eq!(
            chk(vec![OxmField::EthType(0x0800)], vec![tcp.clone()], vec![]),
            Err(MI)
        );
        assert!(chk(
            vec![OxmField::EthType(0x0800), OxmField::IpProto(6)],
            vec![tcp],
            vec![]
        )
        .is_ok());
        // L2 rewrites need nothing (the learning-switch / router cases).
        let mac = Action::SetField(OxmField::EthDst([2, 0, 0, 0, 0, 1], None));
        assert!(chk(vec![], vec![mac.clone()], vec![mac]).is_ok());
        let vid_ = Action::SetField(OxmField::VlanVid(vid::PRESENT | 5, None));
        assert!(chk(vec![], vec![vid_], vec![]).is_ok());
    }

    #[test]
    fn actions_change_what_is_known() {
        let pcp = Action::SetField(OxmField::VlanPcp(3));
        assert_eq!(chk(vec![], vec![pcp.clone()], vec![]), Err(MI));
        assert!(chk(vec![], vec![Action::PushVlan(0x8100), pcp.clone()], vec![]).is_ok());
        // The action set pushes before it sets, whatever the write order.
        assert!(chk(vec![], vec![], vec![pcp, Action::PushVlan(0x8100)]).is_ok());
        // After push_mpls the IP facts are gone.
        let m = vec![OxmField::EthType(0x0800)];
        assert_eq!(
            chk(
                m.clone(),
                vec![Action::PushMpls(0x8847), ipv4_src()],
                vec![]
            ),
            Err(MI)
        );
        assert!(chk(
            m,
            vec![Action::PushMpls(0x8847), Action::SetMplsTtl(3)],
            vec![]
        )
        .is_ok());
        // Pops are accepted without their header in the match...
        assert!(chk(
            vec![],
            vec![Action::PopVlan, Action::PopMpls(0x0800)],
            vec![]
        )
        .is_ok());
        // ... but what they leave is only known if the header was.
        assert_eq!(
            chk(vec![], vec![Action::PopMpls(0x0800), ipv4_src()], vec![]),
            Err(MI)
        );
        assert!(chk(
            vec![OxmField::EthType(0x8847)],
            vec![Action::PopMpls(0x0800), ipv4_src()],
            vec![]
        )
        .is_ok());
        let pcp = Action::SetField(OxmField::VlanPcp(1));
        assert_eq!(
            chk(
                vec![OxmField::VlanVid(vid::PRESENT, Some(vid::PRESENT))],
                vec![Action::PopVlan, pcp],
                vec![]
            ),
            Err(MI)
        );
    }

    #[test]
    fn eth_type_and_ip_proto_are_settable() {
        let eth = |t| Action::SetField(OxmField::EthType(t));
        let proto = |p| Action::SetField(OxmField::IpProto(p));
        // ETH_TYPE has no prerequisite, whatever is known.
        assert!(chk(vec![], vec![eth(0x86dd)], vec![]).is_ok());
        let tcp4 = vec![OxmField::EthType(0x0800), OxmField::IpProto(6)];
        assert!(chk(tcp4.clone(), vec![eth(0x0806)], vec![]).is_ok());
        // What followed the old ethertype is forgotten...
        let tcp = Action::SetField(OxmField::TcpDst(80));
        assert_eq!(
            chk(tcp4.clone(), vec![eth(0x86dd), tcp.clone()], vec![]),
            Err(MI)
        );
        // ... and what the new one allows is known.
        assert!(chk(vec![], vec![eth(0x0800), ipv4_src()], vec![]).is_ok());
        // IP_PROTO needs IPv4 or IPv6, and replaces the protocol.
        assert_eq!(chk(vec![], vec![proto(17)], vec![]), Err(MI));
        assert!(chk(tcp4.clone(), vec![proto(17)], vec![]).is_ok());
        assert_eq!(
            chk(tcp4.clone(), vec![proto(17), tcp.clone()], vec![]),
            Err(MI)
        );
        assert!(chk(
            vec![OxmField::EthType(0x0800)],
            vec![proto(6), tcp.clone()],
            vec![]
        )
        .is_ok());
        // In the action set the set-fields keep their written order.
        assert!(chk(vec![OxmField::EthType(0x0800)], vec![], vec![proto(6), tcp]).is_ok());
    }

    #[test]
    fn unsettable_fields_are_bad_set_type() {
        let e = chk(vec![], vec![Action::SetField(OxmField::InPort(1))], vec![]);
        assert_eq!(e, Err(ErrorCode::BadAction(BadActionCode::BadSetType)));
    }

    /// A set-field of a settable field is decided as a match of the known
    /// fields plus the field would be (what `step` did by building that
    /// match before it used `Prerequisites`), for every combination of
    /// the values the prerequisites read and a field of every
    /// prerequisite class.
    #[test]
    fn set_field_decision_is_the_matchs() {
        use proptest::prelude::*;
        let eth = prop::option::of(prop::sample::select(vec![
            0x0800u16, 0x86dd, 0x0806, 0x8847, 0x8848, 0x88e7, 0x1234,
        ]));
        let proto = prop::option::of(prop::sample::select(vec![1u8, 6, 17, 58, 132, 99]));
        let icmp6 = prop::option::of(prop::sample::select(vec![135u8, 136, 1]));
        let vlan = prop::option::of(prop::sample::select(vec![
            (vid::NONE, None),
            (vid::PRESENT | 7, None),
            (vid::PRESENT, Some(vid::PRESENT)),
        ]));
        let field = prop::sample::select(vec![
            OxmField::EthType(0x0800),
            OxmField::EthType(0x0806),
            OxmField::IpProto(6),
            OxmField::IpDscp(1),
            OxmField::Ipv4Dst([1, 2, 3, 4].into(), None),
            OxmField::TcpSrc(1),
            OxmField::UdpDst(1),
            OxmField::SctpSrc(1),
            OxmField::Icmpv4Code(0),
            OxmField::ArpOp(1),
            OxmField::Ipv6Flabel(1, None),
            OxmField::Icmpv6Type(135),
            OxmField::Ipv6NdTarget([0; 16].into()),
            OxmField::Ipv6NdSll([0; 6]),
            OxmField::Ipv6NdTll([0; 6]),
            OxmField::MplsLabel(1),
            OxmField::PbbIsid(1, None),
            OxmField::VlanPcp(1),
            OxmField::VlanVid(vid::PRESENT | 3, None),
            OxmField::EthDst([2, 0, 0, 0, 0, 1], None),
        ]);
        proptest!(|(eth_type in eth, ip_proto in proto, icmpv6_type in icmp6,
                    vlan in vlan, f in field)| {
            let mut k = Known { eth_type, ip_proto, icmpv6_type, vlan };
            let mut after = k.clone();
            after.forget_after(&f);
            let mut fields: Vec<OxmField> = after.fields().into_iter().flatten().collect();
            fields.push(f.clone());
            let want = settable(&f) && Match::new(fields).check_prerequisites().is_ok();
            prop_assert_eq!(k.step(&Action::SetField(f)).is_ok(), want);
        });
    }
}
