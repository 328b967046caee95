//! Actions (spec §7.2.5).
//!
//! Every action is a TLV `type (u16), len (u16), body`, where `len` counts the
//! whole action and is a multiple of 8. All 1.3 actions have a fixed length
//! except SET_FIELD (one OXM padded to 8) and EXPERIMENTER (opaque data).
//!
//! Decoding validates what can be validated without switch state: lengths,
//! output ports, group ids, push ethertypes and set-field OXMs. Whether a
//! port, queue or group exists is the pipeline's business.

use crate::error::{BadActionCode, BadMatchCode, DecodeError, ErrorCode};
use crate::oxm::{self, OxmField};
use crate::port::port_no;
use crate::wire::{Reader, Writer};

/// Action type numbers (`enum ofp_action_type`).
pub mod action_type {
    pub const OUTPUT: u16 = 0;
    pub const COPY_TTL_OUT: u16 = 11;
    pub const COPY_TTL_IN: u16 = 12;
    pub const SET_MPLS_TTL: u16 = 15;
    pub const DEC_MPLS_TTL: u16 = 16;
    pub const PUSH_VLAN: u16 = 17;
    pub const POP_VLAN: u16 = 18;
    pub const PUSH_MPLS: u16 = 19;
    pub const POP_MPLS: u16 = 20;
    pub const SET_QUEUE: u16 = 21;
    pub const GROUP: u16 = 22;
    pub const SET_NW_TTL: u16 = 23;
    pub const DEC_NW_TTL: u16 = 24;
    pub const SET_FIELD: u16 = 25;
    pub const PUSH_PBB: u16 = 26;
    pub const POP_PBB: u16 = 27;
    pub const EXPERIMENTER: u16 = 0xffff;
}

pub use crate::group::group_id;

/// `max_len` values of an output action to the controller
/// (`enum ofp_controller_max_len`).
pub mod controller_max_len {
    /// Largest `max_len` that asks for buffering.
    pub const MAX: u16 = 0xffe5;
    /// Send the whole packet, do not buffer it.
    pub const NO_BUFFER: u16 = 0xffff;
}

/// Length of every fixed-size action except OUTPUT.
pub const ACTION_HEADER_LEN: usize = 8;
/// Length of `ofp_action_output`.
pub const OUTPUT_LEN: usize = 16;

/// One action. Field names follow the spec's structs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// Send to `port`; `max_len` bytes to the controller if the port is CONTROLLER.
    Output {
        port: u32,
        max_len: u16,
    },
    /// Copy TTL "outwards": from next-to-outermost to outermost header.
    CopyTtlOut,
    /// Copy TTL "inwards": from outermost to next-to-outermost header.
    CopyTtlIn,
    SetMplsTtl(u8),
    DecMplsTtl,
    /// Push a VLAN tag with this TPID (0x8100 or 0x88a8).
    PushVlan(u16),
    PopVlan,
    /// Push an MPLS shim with this ethertype (0x8847 or 0x8848).
    PushMpls(u16),
    /// Pop the outermost MPLS shim; the ethertype is the payload's.
    PopMpls(u16),
    SetQueue(u32),
    Group(u32),
    SetNwTtl(u8),
    DecNwTtl,
    /// Set one header field (an unmasked, settable OXM).
    SetField(OxmField),
    /// Push a PBB service tag with this ethertype (0x88e7).
    PushPbb(u16),
    PopPbb,
    /// Experimenter action: `data` follows the experimenter id. Encode pads
    /// it with zeros to a multiple of 8 bytes, so only data whose length is a
    /// multiple of 8 round-trips unchanged (decode keeps the padding).
    Experimenter {
        experimenter: u32,
        data: Vec<u8>,
    },
}

/// Whether basic OXM field `id` may be the target of a SET_FIELD action.
/// Everything but the pipeline fields (IN_PORT, IN_PHY_PORT, METADATA),
/// the IPV6_EXTHDR pseudo-field and TCP_FLAGS (match only, as in the BEBA
/// switch) can be rewritten.
pub fn is_settable_field(id: u8) -> bool {
    use oxm::field;
    id < field::COUNT
        && !matches!(
            id,
            field::IN_PORT
                | field::IN_PHY_PORT
                | field::METADATA
                | field::IPV6_EXTHDR
                | field::TCP_FLAGS
        )
}

fn bad(c: BadActionCode, what: &'static str) -> DecodeError {
    DecodeError::bad_action(c, what)
}

/// Translate a BAD_MATCH error from the OXM inside a SET_FIELD action into
/// the BAD_ACTION code the spec gives for it.
fn set_field_error(e: DecodeError) -> DecodeError {
    let c = match e.code {
        ErrorCode::BadMatch(BadMatchCode::BadLen) => BadActionCode::BadSetLen,
        ErrorCode::BadMatch(BadMatchCode::BadField) => BadActionCode::BadSetType,
        _ => BadActionCode::BadSetArgument,
    };
    bad(c, e.what)
}

impl Action {
    /// The action type number.
    pub fn action_type(&self) -> u16 {
        use action_type as t;
        match self {
            Action::Output { .. } => t::OUTPUT,
            Action::CopyTtlOut => t::COPY_TTL_OUT,
            Action::CopyTtlIn => t::COPY_TTL_IN,
            Action::SetMplsTtl(_) => t::SET_MPLS_TTL,
            Action::DecMplsTtl => t::DEC_MPLS_TTL,
            Action::PushVlan(_) => t::PUSH_VLAN,
            Action::PopVlan => t::POP_VLAN,
            Action::PushMpls(_) => t::PUSH_MPLS,
            Action::PopMpls(_) => t::POP_MPLS,
            Action::SetQueue(_) => t::SET_QUEUE,
            Action::Group(_) => t::GROUP,
            Action::SetNwTtl(_) => t::SET_NW_TTL,
            Action::DecNwTtl => t::DEC_NW_TTL,
            Action::SetField(_) => t::SET_FIELD,
            Action::PushPbb(_) => t::PUSH_PBB,
            Action::PopPbb => t::POP_PBB,
            Action::Experimenter { .. } => t::EXPERIMENTER,
        }
    }

    /// Bytes of the encoded action (a multiple of 8).
    pub fn encoded_len(&self) -> usize {
        let round8 = |n: usize| n.div_ceil(8) * 8;
        match self {
            Action::Output { .. } => OUTPUT_LEN,
            Action::SetField(f) => round8(4 + f.encoded_len()),
            Action::Experimenter { data, .. } => round8(8 + data.len()),
            _ => ACTION_HEADER_LEN,
        }
    }

    /// Decode one action from the front of `r`. The action must lie wholly
    /// within `r`; every refusal is a BAD_ACTION code.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use action_type as t;
        let len_err = ErrorCode::BadAction(BadActionCode::BadLen);
        if r.remaining() < 4 {
            return Err(bad(BadActionCode::BadLen, "action: header"));
        }
        let ty = r.peek_u16("action: type")?;
        let len = usize::from(r.peek_u16_at(2, "action: len")?);
        if len < ACTION_HEADER_LEN || !len.is_multiple_of(8) {
            return Err(bad(BadActionCode::BadLen, "action: len"));
        }
        if len > r.remaining() {
            return Err(bad(BadActionCode::BadLen, "action: len beyond list"));
        }
        let mut b = r.sub_with(len, len_err, "action")?;
        b.pad(4)?;
        // Most actions have a fixed length: check it before reading the body.
        let fixed = |want: usize, what: &'static str| {
            if len == want {
                Ok(())
            } else {
                Err(bad(BadActionCode::BadLen, what))
            }
        };
        let a = match ty {
            t::OUTPUT => {
                fixed(OUTPUT_LEN, "action output: len")?;
                let port = b.u32("action output: port")?;
                let max_len = b.u16("action output: max_len")?;
                if !port_no::is_valid_output(port) {
                    return Err(bad(BadActionCode::BadOutPort, "action output: port"));
                }
                Action::Output { port, max_len }
            }
            t::COPY_TTL_OUT => {
                fixed(8, "action copy_ttl_out: len")?;
                Action::CopyTtlOut
            }
            t::COPY_TTL_IN => {
                fixed(8, "action copy_ttl_in: len")?;
                Action::CopyTtlIn
            }
            t::SET_MPLS_TTL => {
                fixed(8, "action set_mpls_ttl: len")?;
                Action::SetMplsTtl(b.u8("action set_mpls_ttl: ttl")?)
            }
            t::DEC_MPLS_TTL => {
                fixed(8, "action dec_mpls_ttl: len")?;
                Action::DecMplsTtl
            }
            t::PUSH_VLAN => {
                fixed(8, "action push_vlan: len")?;
                let e = b.u16("action push_vlan: ethertype")?;
                if e != 0x8100 && e != 0x88a8 {
                    return Err(bad(
                        BadActionCode::BadArgument,
                        "action push_vlan: ethertype",
                    ));
                }
                Action::PushVlan(e)
            }
            t::POP_VLAN => {
                fixed(8, "action pop_vlan: len")?;
                Action::PopVlan
            }
            t::PUSH_MPLS => {
                fixed(8, "action push_mpls: len")?;
                let e = b.u16("action push_mpls: ethertype")?;
                if e != 0x8847 && e != 0x8848 {
                    return Err(bad(
                        BadActionCode::BadArgument,
                        "action push_mpls: ethertype",
                    ));
                }
                Action::PushMpls(e)
            }
            t::POP_MPLS => {
                fixed(8, "action pop_mpls: len")?;
                Action::PopMpls(b.u16("action pop_mpls: ethertype")?)
            }
            t::SET_QUEUE => {
                fixed(8, "action set_queue: len")?;
                Action::SetQueue(b.u32("action set_queue: queue_id")?)
            }
            t::GROUP => {
                fixed(8, "action group: len")?;
                let g = b.u32("action group: group_id")?;
                if g > group_id::MAX {
                    return Err(bad(BadActionCode::BadOutGroup, "action group: group_id"));
                }
                Action::Group(g)
            }
            t::SET_NW_TTL => {
                fixed(8, "action set_nw_ttl: len")?;
                Action::SetNwTtl(b.u8("action set_nw_ttl: ttl")?)
            }
            t::DEC_NW_TTL => {
                fixed(8, "action dec_nw_ttl: len")?;
                Action::DecNwTtl
            }
            t::SET_FIELD => Action::SetField(decode_set_field(&mut b)?),
            t::PUSH_PBB => {
                fixed(8, "action push_pbb: len")?;
                let e = b.u16("action push_pbb: ethertype")?;
                if e != 0x88e7 {
                    return Err(bad(
                        BadActionCode::BadArgument,
                        "action push_pbb: ethertype",
                    ));
                }
                Action::PushPbb(e)
            }
            t::POP_PBB => {
                fixed(8, "action pop_pbb: len")?;
                Action::PopPbb
            }
            t::EXPERIMENTER => Action::Experimenter {
                experimenter: b.u32("action experimenter: id")?,
                data: b.rest().to_vec(),
            },
            _ => return Err(bad(BadActionCode::BadType, "action: unknown type")),
        };
        Ok(a)
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(self.action_type());
        w.put_u16(0);
        match self {
            Action::Output { port, max_len } => {
                w.put_u32(*port);
                w.put_u16(*max_len);
                w.put_zeros(6);
            }
            Action::SetMplsTtl(ttl) | Action::SetNwTtl(ttl) => {
                w.put_u8(*ttl);
                w.put_zeros(3);
            }
            Action::PushVlan(e) | Action::PushMpls(e) | Action::PopMpls(e) | Action::PushPbb(e) => {
                w.put_u16(*e);
                w.put_zeros(2);
            }
            Action::SetQueue(v) | Action::Group(v) => w.put_u32(*v),
            Action::SetField(f) => f.encode(w),
            Action::Experimenter { experimenter, data } => {
                w.put_u32(*experimenter);
                w.put_bytes(data);
            }
            Action::CopyTtlOut
            | Action::CopyTtlIn
            | Action::DecMplsTtl
            | Action::PopVlan
            | Action::DecNwTtl
            | Action::PopPbb => w.put_zeros(4),
        }
        w.pad_to_8(start);
        // Only an absurd hand-built experimenter action exceeds 64 KiB.
        let len = (w.len() - start).min(usize::from(u16::MAX) & !7);
        w.patch_u16(start + 2, len as u16);
    }
}

/// Decode the body of a SET_FIELD action (everything after type and len):
/// one OXM TLV then zero padding up to the next multiple of 8.
fn decode_set_field(b: &mut Reader<'_>) -> Result<OxmField, DecodeError> {
    use BadActionCode::{BadSetArgument, BadSetLen, BadSetType};
    // The body is at least 4 bytes (len >= 8), so the OXM header is there.
    let class = b.peek_u16("action set_field: oxm class")?;
    let word = b.peek_u16_at(2, "action set_field: oxm header")?;
    let field = (word >> 9) as u8;
    let has_mask = word & 0x100 != 0;
    let length = usize::from(word & 0xff);
    if class == oxm::class::OPENFLOW_BASIC && !is_settable_field(field) {
        return Err(bad(BadSetType, "action set_field: field not settable"));
    }
    if has_mask {
        return Err(bad(BadSetArgument, "action set_field: masked oxm"));
    }
    if oxm::OXM_HEADER_LEN + length > b.remaining() {
        return Err(bad(BadSetLen, "action set_field: oxm beyond action"));
    }
    let f = OxmField::decode(b).map_err(set_field_error)?;
    // What is left is padding, and the action must be no longer than needed.
    if b.remaining() >= 8 {
        return Err(bad(BadSetLen, "action set_field: len exceeds oxm"));
    }
    Ok(f)
}

/// Decode a list of actions filling exactly `len` bytes of `r`.
///
/// If `r` holds fewer than `len` bytes the error is `r`'s own length error
/// (the enclosing structure is wrong); problems inside the list are
/// BAD_ACTION codes.
pub fn decode_actions(r: &mut Reader<'_>, len: usize) -> Result<Vec<Action>, DecodeError> {
    let mut ar = r.sub_with(len, ErrorCode::BadAction(BadActionCode::BadLen), "actions")?;
    let mut v = Vec::new();
    while !ar.is_empty() {
        v.push(Action::decode(&mut ar)?);
    }
    Ok(v)
}

pub fn encode_actions(actions: &[Action], w: &mut Vec<u8>) {
    for a in actions {
        a.encode(w);
    }
}

/// Bytes of an encoded action list.
pub fn actions_len(actions: &[Action]) -> usize {
    actions.iter().map(Action::encoded_len).sum()
}

/// proptest strategies for actions, shared with message/multipart tests.
#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use proptest::prelude::*;

    /// A port number an output action may use.
    pub fn any_output_port() -> impl Strategy<Value = u32> {
        prop_oneof![1..=port_no::MAX, port_no::IN_PORT..=port_no::LOCAL,]
    }

    /// An OXM a SET_FIELD action may carry: settable basic, unmasked.
    pub fn any_settable_field() -> impl Strategy<Value = OxmField> {
        crate::oxm::arb::any_basic_field().prop_filter("settable, unmasked", |f| {
            !f.has_mask() && is_settable_field(f.field_id())
        })
    }

    /// Any valid action.
    pub fn any_action() -> impl Strategy<Value = Action> {
        prop_oneof![
            (any_output_port(), any::<u16>())
                .prop_map(|(port, max_len)| Action::Output { port, max_len }),
            Just(Action::CopyTtlOut),
            Just(Action::CopyTtlIn),
            any::<u8>().prop_map(Action::SetMplsTtl),
            Just(Action::DecMplsTtl),
            prop_oneof![Just(0x8100u16), Just(0x88a8)].prop_map(Action::PushVlan),
            Just(Action::PopVlan),
            prop_oneof![Just(0x8847u16), Just(0x8848)].prop_map(Action::PushMpls),
            any::<u16>().prop_map(Action::PopMpls),
            any::<u32>().prop_map(Action::SetQueue),
            (0..=group_id::MAX).prop_map(Action::Group),
            any::<u8>().prop_map(Action::SetNwTtl),
            Just(Action::DecNwTtl),
            any_settable_field().prop_map(Action::SetField),
            Just(Action::PushPbb(0x88e7)),
            Just(Action::PopPbb),
            (
                any::<u32>(),
                (0usize..4).prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n * 8))
            )
                .prop_map(|(experimenter, data)| Action::Experimenter { experimenter, data }),
        ]
    }

    /// A list of valid actions.
    pub fn any_actions() -> impl Strategy<Value = Vec<Action>> {
        proptest::collection::vec(any_action(), 0..6)
    }
}

#[cfg(test)]
mod tests {
    use super::arb::*;
    use super::*;
    use proptest::prelude::*;
    use std::net::Ipv4Addr;

    fn dec(b: &[u8]) -> Result<Vec<Action>, DecodeError> {
        let mut r = Reader::message(b);
        let v = decode_actions(&mut r, b.len())?;
        assert!(r.is_empty());
        Ok(v)
    }

    fn enc(a: &Action) -> Vec<u8> {
        let mut w = Vec::new();
        a.encode(&mut w);
        assert_eq!(w.len(), a.encoded_len());
        w
    }

    fn err(b: &[u8]) -> BadActionCode {
        match dec(b).unwrap_err().code {
            ErrorCode::BadAction(c) => c,
            other => panic!("not BAD_ACTION: {other:?}"),
        }
    }

    /// Each vector is what os-ken's `OFPAction*.serialize` produces.
    #[test]
    fn os_ken_vectors() {
        let cases: Vec<(Action, &str)> = vec![
            (
                Action::Output {
                    port: 3,
                    max_len: 0xffe5,
                },
                "0000001000000003ffe5000000000000",
            ),
            (
                Action::Output {
                    port: port_no::CONTROLLER,
                    max_len: controller_max_len::NO_BUFFER,
                },
                "00000010fffffffdffff000000000000",
            ),
            (
                Action::SetField(OxmField::Ipv4Src(Ipv4Addr::new(192, 168, 1, 1), None)),
                "0019001080001604c0a8010100000000",
            ),
            (
                Action::SetField(OxmField::EthDst([0, 0x11, 0x22, 0x33, 0x44, 0x55], None)),
                "00190010800006060011223344550000",
            ),
            (
                Action::SetField(OxmField::VlanVid(0x1005, None)),
                "0019001080000c021005000000000000",
            ),
            (Action::PushVlan(0x8100), "0011000881000000"),
            (Action::Group(7), "0016000800000007"),
            (Action::SetQueue(2), "0015000800000002"),
            (Action::SetNwTtl(64), "0017000840000000"),
            (Action::SetMplsTtl(9), "000f000809000000"),
            (Action::PopMpls(0x0800), "0014000808000000"),
            (Action::DecNwTtl, "0018000800000000"),
            (
                Action::Experimenter {
                    experimenter: 0x2320,
                    data: (0..8).collect(),
                },
                "ffff0010000023200001020304050607",
            ),
        ];
        for (a, hex) in cases {
            let b = hex::decode(hex).unwrap();
            assert_eq!(enc(&a), b, "{a:?}");
            assert_eq!(dec(&b).unwrap(), vec![a]);
        }
    }

    #[test]
    fn simple_actions() {
        for (a, ty) in [
            (Action::CopyTtlOut, 11u8),
            (Action::CopyTtlIn, 12),
            (Action::DecMplsTtl, 16),
            (Action::PopVlan, 18),
            (Action::DecNwTtl, 24),
            (Action::PopPbb, 27),
        ] {
            assert_eq!(enc(&a), [0, ty, 0, 8, 0, 0, 0, 0]);
        }
        assert_eq!(
            enc(&Action::PushMpls(0x8847)),
            [0, 19, 0, 8, 0x88, 0x47, 0, 0]
        );
        assert_eq!(
            enc(&Action::PushPbb(0x88e7)),
            [0, 26, 0, 8, 0x88, 0xe7, 0, 0]
        );
    }

    #[test]
    fn bad_type_and_len() {
        assert_eq!(err(&[0, 2, 0, 8, 0, 0, 0, 0]), BadActionCode::BadType);
        assert_eq!(err(&[0xff, 0xfe, 0, 8, 0, 0, 0, 0]), BadActionCode::BadType);
        // len < 8
        assert_eq!(err(&[0, 18, 0, 4, 0, 0, 0, 0]), BadActionCode::BadLen);
        // len not a multiple of 8
        assert_eq!(
            err(&[0, 18, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0]),
            BadActionCode::BadLen
        );
        // len beyond the list
        assert_eq!(err(&[0, 18, 0, 16, 0, 0, 0, 0]), BadActionCode::BadLen);
        // len wrong for the type
        assert_eq!(err(&[0, 0, 0, 8, 0, 0, 0, 1]), BadActionCode::BadLen);
        assert_eq!(
            err(&[0, 18, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            BadActionCode::BadLen
        );
        // truncated header
        assert_eq!(err(&[0, 18]), BadActionCode::BadLen);
        // the list itself longer than the enclosing reader: the reader's error
        let e = decode_actions(&mut Reader::message(&[0, 18, 0, 8]), 8).unwrap_err();
        assert_eq!(e.code, DecodeError::bad_len("").code);
    }

    #[test]
    fn bad_arguments() {
        // output to port 0 and to ANY
        assert_eq!(
            err(&hex::decode("00000010000000000000000000000000").unwrap()),
            BadActionCode::BadOutPort
        );
        assert_eq!(
            err(&hex::decode("00000010ffffffff0000000000000000").unwrap()),
            BadActionCode::BadOutPort
        );
        assert_eq!(
            err(&hex::decode("0011000808000000").unwrap()),
            BadActionCode::BadArgument
        );
        assert_eq!(
            err(&hex::decode("0013000808000000").unwrap()),
            BadActionCode::BadArgument
        );
        assert_eq!(
            err(&hex::decode("001a000881000000").unwrap()),
            BadActionCode::BadArgument
        );
        // group ALL / ANY
        assert_eq!(
            err(&hex::decode("00160008fffffffc").unwrap()),
            BadActionCode::BadOutGroup
        );
        assert_eq!(
            err(&hex::decode("00160008ffffffff").unwrap()),
            BadActionCode::BadOutGroup
        );
        assert_eq!(
            dec(&hex::decode("00160008ffffff00").unwrap()).unwrap(),
            vec![Action::Group(group_id::MAX)]
        );
    }

    #[test]
    fn bad_set_field() {
        let e = |h: &str| err(&hex::decode(h.replace(' ', "")).unwrap());
        // in_port, in_phy_port, metadata, ipv6_exthdr, unknown field 40
        assert_eq!(
            e("00190010 80000004 00000001 00000000"),
            BadActionCode::BadSetType
        );
        assert_eq!(
            e("00190010 80000204 00000001 00000000"),
            BadActionCode::BadSetType
        );
        assert_eq!(
            e("00190010 80000408 00000000 00000001"),
            BadActionCode::BadSetType
        );
        assert_eq!(
            e("00190010 80004e02 00010000 00000000"),
            BadActionCode::BadSetType
        );
        assert_eq!(
            e("00190010 80005001 00000000 00000000"),
            BadActionCode::BadSetType
        );
        // masked ipv4_src
        assert_eq!(
            e("00190010 80001708 01020304 ffffffff"),
            BadActionCode::BadSetArgument
        );
        // vlan_pcp 9: invalid value
        assert_eq!(
            e("00190010 80000e01 09000000 00000000"),
            BadActionCode::BadSetArgument
        );
        // eth_type with a 3-byte payload: wrong OXM length
        assert_eq!(
            e("00190010 80000a03 08000000 00000000"),
            BadActionCode::BadSetLen
        );
        // ipv6_src longer than the action
        assert_eq!(
            e("00190010 80003410 00000000 00000000"),
            BadActionCode::BadSetLen
        );
        // action 8 bytes longer than the OXM needs
        assert_eq!(
            e("00190018 80001604 01020304 00000000 00000000 00000000"),
            BadActionCode::BadSetLen
        );
    }

    #[test]
    fn experimenter_set_field_kept() {
        let a = Action::SetField(OxmField::Experimenter {
            field: 3,
            has_mask: false,
            experimenter: 0x4f4e4600,
            payload: vec![1, 2],
        });
        let b = enc(&a);
        assert_eq!(b.len(), 16);
        assert_eq!(dec(&b).unwrap(), vec![a]);
    }

    proptest! {
        #[test]
        fn round_trip(actions in any_actions()) {
            let mut w = Vec::new();
            encode_actions(&actions, &mut w);
            prop_assert_eq!(w.len(), actions_len(&actions));
            prop_assert_eq!(w.len() % 8, 0);
            prop_assert_eq!(dec(&w).unwrap(), actions);
        }

        #[test]
        /// Whatever decodes re-encodes to the same bytes, padding aside
        /// (padding content is ignored on decode, so compare with it zeroed).
        fn canonical(b in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(actions) = dec(&b) {
                let mut w = Vec::new();
                encode_actions(&actions, &mut w);
                prop_assert_eq!(w.len(), b.len());
                prop_assert_eq!(dec(&w).unwrap(), actions);
            }
        }

        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..64), len in 0usize..72) {
            let _ = decode_actions(&mut Reader::message(&b), len);
        }

        /// Structured fuzz: plausible headers with random types and bodies.
        #[test]
        fn never_panics_structured(parts in proptest::collection::vec(
            (0u16..30, 0u16..5, proptest::collection::vec(any::<u8>(), 0..28)), 1..4)
        ) {
            let mut b = Vec::new();
            for (ty, len8, body) in parts {
                b.extend_from_slice(&ty.to_be_bytes());
                b.extend_from_slice(&(len8 * 8).to_be_bytes());
                b.extend_from_slice(&body);
            }
            let _ = dec(&b);
        }
    }
}
