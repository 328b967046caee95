//! Instructions (spec §7.2.4).
//!
//! An instruction is a TLV `type (u16), len (u16), body` whose `len` counts
//! the whole instruction and is a multiple of 8. A flow entry's instruction
//! set holds each instruction type at most once; WRITE_ACTIONS and
//! APPLY_ACTIONS carry an action list (see [`crate::action`]).

use crate::action::{self, Action};
use crate::error::{BadInstructionCode, DecodeError, ErrorCode};
use crate::wire::{Reader, Writer};

/// Instruction type numbers (`enum ofp_instruction_type`).
pub mod instruction_type {
    pub const GOTO_TABLE: u16 = 1;
    pub const WRITE_METADATA: u16 = 2;
    pub const WRITE_ACTIONS: u16 = 3;
    pub const APPLY_ACTIONS: u16 = 4;
    pub const CLEAR_ACTIONS: u16 = 5;
    pub const METER: u16 = 6;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// `OFPTT_MAX`: the last usable table number.
pub const TABLE_MAX: u8 = 0xfe;
/// `OFPTT_ALL`: wildcard table in requests, never a goto target.
pub const TABLE_ALL: u8 = 0xff;

/// Length of the fixed part shared by most instructions.
pub const INSTRUCTION_HEADER_LEN: usize = 8;
/// Length of `ofp_instruction_write_metadata`.
pub const WRITE_METADATA_LEN: usize = 24;

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instruction {
    /// Continue processing at this table (must be greater than the current one).
    GotoTable(u8),
    /// Update the metadata register: `new = (old & !mask) | (metadata & mask)`.
    WriteMetadata { metadata: u64, mask: u64 },
    /// Merge these actions into the action set.
    WriteActions(Vec<Action>),
    /// Apply these actions immediately, in order.
    ApplyActions(Vec<Action>),
    /// Empty the action set.
    ClearActions,
    /// Send the packet through this meter.
    Meter(u32),
    /// Experimenter instruction: `data` follows the experimenter id (encode
    /// pads it to a multiple of 8 bytes).
    Experimenter { experimenter: u32, data: Vec<u8> },
}

fn bad(c: BadInstructionCode, what: &'static str) -> DecodeError {
    DecodeError::bad_instruction(c, what)
}

impl Instruction {
    /// The instruction type number.
    pub fn instruction_type(&self) -> u16 {
        use instruction_type as t;
        match self {
            Instruction::GotoTable(_) => t::GOTO_TABLE,
            Instruction::WriteMetadata { .. } => t::WRITE_METADATA,
            Instruction::WriteActions(_) => t::WRITE_ACTIONS,
            Instruction::ApplyActions(_) => t::APPLY_ACTIONS,
            Instruction::ClearActions => t::CLEAR_ACTIONS,
            Instruction::Meter(_) => t::METER,
            Instruction::Experimenter { .. } => t::EXPERIMENTER,
        }
    }

    /// Bytes of the encoded instruction (a multiple of 8).
    pub fn encoded_len(&self) -> usize {
        match self {
            Instruction::WriteMetadata { .. } => WRITE_METADATA_LEN,
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => {
                INSTRUCTION_HEADER_LEN + action::actions_len(a)
            }
            Instruction::Experimenter { data, .. } => (8 + data.len()).div_ceil(8) * 8,
            _ => INSTRUCTION_HEADER_LEN,
        }
    }

    /// Decode one instruction from the front of `r`. Refusals are
    /// BAD_INSTRUCTION codes, except that errors in a nested action list keep
    /// their BAD_ACTION codes.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use instruction_type as t;
        use BadInstructionCode::BadLen;
        if r.remaining() < 4 {
            return Err(bad(BadLen, "instruction: header"));
        }
        let ty = r.peek_u16("instruction: type")?;
        let len = usize::from(r.peek_u16_at(2, "instruction: len")?);
        if len < INSTRUCTION_HEADER_LEN || !len.is_multiple_of(8) {
            return Err(bad(BadLen, "instruction: len"));
        }
        if len > r.remaining() {
            return Err(bad(BadLen, "instruction: len beyond list"));
        }
        let mut b = r.sub_with(len, ErrorCode::BadInstruction(BadLen), "instruction")?;
        b.pad(4)?;
        let fixed = |want: usize, what: &'static str| {
            if len == want {
                Ok(())
            } else {
                Err(bad(BadLen, what))
            }
        };
        let i = match ty {
            t::GOTO_TABLE => {
                fixed(8, "instruction goto_table: len")?;
                let table = b.u8("instruction goto_table: table_id")?;
                if table == TABLE_ALL {
                    return Err(bad(
                        BadInstructionCode::BadTableId,
                        "instruction goto_table: table_id",
                    ));
                }
                Instruction::GotoTable(table)
            }
            t::WRITE_METADATA => {
                fixed(WRITE_METADATA_LEN, "instruction write_metadata: len")?;
                b.pad(4)?;
                Instruction::WriteMetadata {
                    metadata: b.u64("instruction write_metadata: metadata")?,
                    mask: b.u64("instruction write_metadata: mask")?,
                }
            }
            t::WRITE_ACTIONS | t::APPLY_ACTIONS => {
                b.pad(4)?;
                let n = b.remaining();
                let actions = action::decode_actions(&mut b, n)?;
                if ty == t::WRITE_ACTIONS {
                    Instruction::WriteActions(actions)
                } else {
                    Instruction::ApplyActions(actions)
                }
            }
            t::CLEAR_ACTIONS => {
                fixed(8, "instruction clear_actions: len")?;
                Instruction::ClearActions
            }
            t::METER => {
                fixed(8, "instruction meter: len")?;
                Instruction::Meter(b.u32("instruction meter: meter_id")?)
            }
            t::EXPERIMENTER => Instruction::Experimenter {
                experimenter: b.u32("instruction experimenter: id")?,
                data: b.rest().to_vec(),
            },
            _ => {
                return Err(bad(
                    BadInstructionCode::UnknownInst,
                    "instruction: unknown type",
                ))
            }
        };
        Ok(i)
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(self.instruction_type());
        w.put_u16(0);
        match self {
            Instruction::GotoTable(t) => {
                w.put_u8(*t);
                w.put_zeros(3);
            }
            Instruction::WriteMetadata { metadata, mask } => {
                w.put_zeros(4);
                w.put_u64(*metadata);
                w.put_u64(*mask);
            }
            Instruction::WriteActions(a) | Instruction::ApplyActions(a) => {
                w.put_zeros(4);
                action::encode_actions(a, w);
            }
            Instruction::ClearActions => w.put_zeros(4),
            Instruction::Meter(m) => w.put_u32(*m),
            Instruction::Experimenter { experimenter, data } => {
                w.put_u32(*experimenter);
                w.put_bytes(data);
            }
        }
        w.pad_to_8(start);
        // Only an absurd hand-built instruction exceeds 64 KiB.
        let len = (w.len() - start).min(usize::from(u16::MAX) & !7);
        w.patch_u16(start + 2, len as u16);
    }
}

/// Decode instructions until `r` is exhausted.
///
/// Each standard instruction type may appear once. OpenFlow 1.3 has no error
/// code for a repeated instruction (OFPBIC_DUP_INST appeared in 1.4), so a
/// repeat is refused with BAD_INSTRUCTION/UNSUP_INST, as the closest 1.3 code:
/// the switch does not support that instruction combination. Experimenter
/// instructions are not checked for repeats.
pub fn decode_instructions(r: &mut Reader<'_>) -> Result<Vec<Instruction>, DecodeError> {
    let rest = r.rest();
    let mut ir = Reader::new(rest, ErrorCode::BadInstruction(BadInstructionCode::BadLen));
    let mut v: Vec<Instruction> = Vec::new();
    // Bit n set when instruction type n (1..=6) has been seen.
    let mut seen = 0u8;
    while !ir.is_empty() {
        let i = Instruction::decode(&mut ir)?;
        let ty = i.instruction_type();
        if ty != instruction_type::EXPERIMENTER {
            let bit = 1u8 << ty;
            if seen & bit != 0 {
                return Err(bad(
                    BadInstructionCode::UnsupInst,
                    "instructions: type repeated",
                ));
            }
            seen |= bit;
        }
        v.push(i);
    }
    Ok(v)
}

pub fn encode_instructions(insts: &[Instruction], w: &mut Vec<u8>) {
    for i in insts {
        i.encode(w);
    }
}

/// Bytes of an encoded instruction list.
pub fn instructions_len(insts: &[Instruction]) -> usize {
    insts.iter().map(Instruction::encoded_len).sum()
}

/// proptest strategies for instructions, shared with message/multipart tests.
#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use crate::action::arb::any_actions;
    use proptest::prelude::*;

    /// Any valid instruction.
    pub fn any_instruction() -> impl Strategy<Value = Instruction> {
        prop_oneof![
            (0..=TABLE_MAX).prop_map(Instruction::GotoTable),
            (any::<u64>(), any::<u64>())
                .prop_map(|(metadata, mask)| Instruction::WriteMetadata { metadata, mask }),
            any_actions().prop_map(Instruction::WriteActions),
            any_actions().prop_map(Instruction::ApplyActions),
            Just(Instruction::ClearActions),
            any::<u32>().prop_map(Instruction::Meter),
            (
                any::<u32>(),
                (0usize..3).prop_flat_map(|n| proptest::collection::vec(any::<u8>(), n * 8))
            )
                .prop_map(|(experimenter, data)| Instruction::Experimenter { experimenter, data }),
        ]
    }

    /// A valid instruction list: each standard type at most once.
    pub fn any_instructions() -> impl Strategy<Value = Vec<Instruction>> {
        proptest::collection::vec(any_instruction(), 0..5).prop_map(|is| {
            let mut v: Vec<Instruction> = Vec::new();
            for i in is {
                let ty = i.instruction_type();
                if ty == instruction_type::EXPERIMENTER
                    || !v.iter().any(|j| j.instruction_type() == ty)
                {
                    v.push(i);
                }
            }
            v
        })
    }
}

#[cfg(test)]
mod tests {
    use super::arb::*;
    use super::*;
    use crate::error::BadActionCode;
    use proptest::prelude::*;

    fn dec(b: &[u8]) -> Result<Vec<Instruction>, DecodeError> {
        let mut r = Reader::message(b);
        let v = decode_instructions(&mut r)?;
        assert!(r.is_empty());
        Ok(v)
    }

    fn enc(insts: &[Instruction]) -> Vec<u8> {
        let mut w = Vec::new();
        encode_instructions(insts, &mut w);
        assert_eq!(w.len(), instructions_len(insts));
        w
    }

    fn err(h: &str) -> ErrorCode {
        dec(&hex::decode(h.replace(' ', "")).unwrap())
            .unwrap_err()
            .code
    }

    fn bic(c: BadInstructionCode) -> ErrorCode {
        ErrorCode::BadInstruction(c)
    }

    /// Each vector is what os-ken's `OFPInstruction*.serialize` produces.
    #[test]
    fn os_ken_vectors() {
        let cases: Vec<(Instruction, &str)> = vec![
            (Instruction::GotoTable(3), "0001000803000000"),
            (
                Instruction::WriteMetadata {
                    metadata: 0x1122_3344_5566_7788,
                    mask: 0xff00_ff00_ff00_ff00,
                },
                "00020018000000001122334455667788ff00ff00ff00ff00",
            ),
            (
                Instruction::ApplyActions(vec![
                    Action::Output {
                        port: 1,
                        max_len: 0,
                    },
                    Action::PopVlan,
                ]),
                "0004002000000000000000100000000100000000000000000012000800000000",
            ),
            (
                Instruction::WriteActions(vec![Action::Group(1)]),
                "00030010000000000016000800000001",
            ),
            (Instruction::ClearActions, "0005000800000000"),
            (Instruction::Meter(5), "0006000800000005"),
        ];
        for (i, h) in cases {
            let b = hex::decode(h).unwrap();
            assert_eq!(enc(std::slice::from_ref(&i)), b, "{i:?}");
            assert_eq!(dec(&b).unwrap(), vec![i]);
        }
    }

    #[test]
    fn list_and_experimenter() {
        let insts = vec![
            Instruction::Meter(1),
            Instruction::ApplyActions(vec![]),
            Instruction::Experimenter {
                experimenter: 0x2320,
                data: vec![9; 8],
            },
            Instruction::GotoTable(TABLE_MAX),
        ];
        let b = enc(&insts);
        assert_eq!(b.len(), 8 + 8 + 16 + 8);
        assert_eq!(&b[16..24], [0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20]);
        assert_eq!(dec(&b).unwrap(), insts);
        assert_eq!(dec(&[]).unwrap(), vec![]);
    }

    #[test]
    fn errors() {
        use BadInstructionCode::*;
        assert_eq!(err("0007000800000000"), bic(UnknownInst));
        assert_eq!(err("fffe000800000000"), bic(UnknownInst));
        // len < 8, not a multiple of 8, beyond the list, wrong for the type
        assert_eq!(err("0005000400000000"), bic(BadLen));
        assert_eq!(err("0005000c00000000 00000000"), bic(BadLen));
        assert_eq!(err("0005001000000000"), bic(BadLen));
        assert_eq!(err("0002001000000000 0000000000000000"), bic(BadLen));
        assert_eq!(err("0001001003000000 0000000000000000"), bic(BadLen));
        assert_eq!(err("0005"), bic(BadLen));
        // goto OFPTT_ALL
        assert_eq!(err("00010008ff000000"), bic(BadTableId));
        // the same type twice
        assert_eq!(err("0005000800000000 0005000800000000"), bic(UnsupInst));
        assert_eq!(
            err("0001000801000000 0006000800000001 0001000802000000"),
            bic(UnsupInst)
        );
        // two experimenter instructions are fine
        assert!(dec(&hex::decode("ffff000800000001ffff000800000002").unwrap()).is_ok());
        // an error inside the action list keeps its BAD_ACTION code
        assert_eq!(
            err("0004001000000000 0000000800000001"),
            ErrorCode::BadAction(BadActionCode::BadLen)
        );
        assert_eq!(
            err("0003001000000000 00160008ffffffff"),
            ErrorCode::BadAction(BadActionCode::BadOutGroup)
        );
    }

    proptest! {
        #[test]
        fn round_trip(insts in any_instructions()) {
            let b = enc(&insts);
            prop_assert_eq!(b.len() % 8, 0);
            prop_assert_eq!(dec(&b).unwrap(), insts);
        }

        /// Whatever decodes re-encodes to as many bytes and the same value
        /// (padding content is ignored on decode).
        #[test]
        fn canonical(b in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(insts) = dec(&b) {
                let w = enc(&insts);
                prop_assert_eq!(w.len(), b.len());
                prop_assert_eq!(dec(&w).unwrap(), insts);
            }
        }

        #[test]
        fn never_panics(b in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = dec(&b);
        }

        /// Structured fuzz: plausible headers with random types and bodies.
        #[test]
        fn never_panics_structured(parts in proptest::collection::vec(
            (0u16..8, 1u16..5, proptest::collection::vec(any::<u8>(), 0..32)), 1..4)
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
