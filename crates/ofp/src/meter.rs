//! Meters (spec §7.3.4.4): meter ids, flags and commands, meter bands, and
//! the OFPT_METER_MOD body.
//!
//! A meter band is a TLV: `type`, `len`, `rate`, `burst_size`, then 4 bytes
//! that depend on the type (padding, DSCP precedence, experimenter id) and,
//! for experimenter bands only, experimenter data. The same band codec serves
//! METER_MOD and the meter-config multipart reply.

use crate::error::{DecodeError, ErrorCode, MeterModFailedCode};
use crate::wire::{Reader, Writer};

/// Meter numbers (`ofp_meter`).
pub mod meter_id {
    /// Last usable meter.
    pub const MAX: u32 = 0xffff_0000;
    /// Virtual meter for the slow datapath.
    pub const SLOWPATH: u32 = 0xffff_fffd;
    /// Virtual meter for the controller connection.
    pub const CONTROLLER: u32 = 0xffff_fffe;
    /// All meters (stats requests, and delete of every meter).
    pub const ALL: u32 = 0xffff_ffff;
}

/// `ofp_meter_mod_command`.
pub mod command {
    pub const ADD: u16 = 0;
    pub const MODIFY: u16 = 1;
    pub const DELETE: u16 = 2;
}

/// `ofp_meter_flags`.
pub mod flags {
    /// Rates in kb/s.
    pub const KBPS: u16 = 1 << 0;
    /// Rates in packets/s.
    pub const PKTPS: u16 = 1 << 1;
    /// Use the burst size.
    pub const BURST: u16 = 1 << 2;
    /// Collect statistics.
    pub const STATS: u16 = 1 << 3;
    /// Every flag the spec defines.
    pub const ALL: u16 = KBPS | PKTPS | BURST | STATS;
}

/// `ofp_meter_band_type`.
pub mod band_type {
    pub const DROP: u16 = 1;
    pub const DSCP_REMARK: u16 = 2;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// Size of every standard band, and of the fixed part of an experimenter band.
pub const BAND_LEN: usize = 16;
/// Size of the fixed part of the METER_MOD body (after `ofp_header`).
pub const METER_MOD_LEN: usize = 8;

fn fail(c: MeterModFailedCode, what: &'static str) -> DecodeError {
    DecodeError::new(ErrorCode::MeterModFailed(c), what)
}

/// One meter band (`ofp_meter_band_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeterBand {
    /// Drop packets above `rate`.
    Drop { rate: u32, burst_size: u32 },
    /// Raise the drop precedence of the DSCP field by `prec_level`.
    DscpRemark {
        rate: u32,
        burst_size: u32,
        prec_level: u8,
    },
    /// Experimenter band. `data` follows the 16-byte fixed part; bands are
    /// 8-byte aligned, so encode pads `data` with zeros to a multiple of 8.
    Experimenter {
        rate: u32,
        burst_size: u32,
        experimenter: u32,
        data: Vec<u8>,
    },
}

impl MeterBand {
    pub fn band_type(&self) -> u16 {
        match self {
            MeterBand::Drop { .. } => band_type::DROP,
            MeterBand::DscpRemark { .. } => band_type::DSCP_REMARK,
            MeterBand::Experimenter { .. } => band_type::EXPERIMENTER,
        }
    }

    /// Decode one band. Unknown types, a wrong length for the type, a length
    /// that is not a multiple of 8, or a band running past the end of the
    /// input are METER_MOD_FAILED/BAD_BAND.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use MeterModFailedCode::BadBand;
        if r.remaining() < BAND_LEN {
            return Err(fail(BadBand, "meter band: truncated"));
        }
        let ty = r.peek_u16("meter band: type")?;
        let len = r.peek_u16_at(2, "meter band: len")? as usize;
        match ty {
            band_type::DROP | band_type::DSCP_REMARK if len != BAND_LEN => {
                return Err(fail(BadBand, "meter band: len"))
            }
            band_type::EXPERIMENTER if len < BAND_LEN || !len.is_multiple_of(8) => {
                return Err(fail(BadBand, "meter band: experimenter len"))
            }
            band_type::DROP | band_type::DSCP_REMARK | band_type::EXPERIMENTER => {}
            _ => return Err(fail(BadBand, "meter band: unknown type")),
        }
        if len > r.remaining() {
            return Err(fail(BadBand, "meter band: len past end"));
        }
        let mut b = r.sub_with(len, ErrorCode::MeterModFailed(BadBand), "meter band")?;
        b.pad(4)?; // type and len, already read
        let rate = b.u32("meter band: rate")?;
        let burst_size = b.u32("meter band: burst_size")?;
        Ok(match ty {
            band_type::DROP => {
                b.pad(4)?;
                MeterBand::Drop { rate, burst_size }
            }
            band_type::DSCP_REMARK => {
                let prec_level = b.u8("meter band: prec_level")?;
                b.pad(3)?;
                MeterBand::DscpRemark {
                    rate,
                    burst_size,
                    prec_level,
                }
            }
            _ => MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter: b.u32("meter band: experimenter")?,
                data: b.rest().to_vec(),
            },
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u16(self.band_type());
        w.put_u16(0);
        match self {
            MeterBand::Drop { rate, burst_size } => {
                w.put_u32(*rate);
                w.put_u32(*burst_size);
                w.put_zeros(4);
            }
            MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level,
            } => {
                w.put_u32(*rate);
                w.put_u32(*burst_size);
                w.put_u8(*prec_level);
                w.put_zeros(3);
            }
            MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter,
                data,
            } => {
                w.put_u32(*rate);
                w.put_u32(*burst_size);
                w.put_u32(*experimenter);
                w.put_bytes(data);
                w.pad_to_8(start);
            }
        }
        let len = (w.len() - start) as u16;
        w.patch_u16(start + 2, len);
    }
}

/// Decode bands until `r` is exhausted.
pub fn decode_bands(r: &mut Reader<'_>) -> Result<Vec<MeterBand>, DecodeError> {
    let mut v = Vec::new();
    while !r.is_empty() {
        v.push(MeterBand::decode(r)?);
    }
    Ok(v)
}

pub fn encode_bands(bands: &[MeterBand], w: &mut Vec<u8>) {
    for b in bands {
        b.encode(w);
    }
}

/// True for meter ids a METER_MOD may name: 1..=OFPM_MAX and the virtual
/// meters SLOWPATH and CONTROLLER; OFPM_ALL only with DELETE (delete every
/// meter).
pub fn is_valid_mod_id(command: u16, id: u32) -> bool {
    (1..=meter_id::MAX).contains(&id)
        || id == meter_id::SLOWPATH
        || id == meter_id::CONTROLLER
        || (id == meter_id::ALL && command == command::DELETE)
}

/// OFPT_METER_MOD body (`ofp_meter_mod` after the header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeterMod {
    /// One of [`command`].
    pub command: u16,
    /// Bits of [`flags`].
    pub flags: u16,
    pub meter_id: u32,
    pub bands: Vec<MeterBand>,
}

impl MeterMod {
    /// Decode and validate the bytes after `ofp_header`.
    ///
    /// Checks, in order: unknown command (BAD_COMMAND), undefined flag bits
    /// or both KBPS and PKTPS (BAD_FLAGS), meter id (INVALID_METER, see
    /// [`is_valid_mod_id`]), then the bands (BAD_BAND).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        use MeterModFailedCode as C;
        let cmd = r.u16("meter_mod: command")?;
        let fl = r.u16("meter_mod: flags")?;
        let id = r.u32("meter_mod: meter_id")?;
        if cmd > command::DELETE {
            return Err(fail(C::BadCommand, "meter_mod: command"));
        }
        if fl & !flags::ALL != 0 {
            return Err(fail(C::BadFlags, "meter_mod: unknown flags"));
        }
        if fl & flags::KBPS != 0 && fl & flags::PKTPS != 0 {
            return Err(fail(C::BadFlags, "meter_mod: both KBPS and PKTPS"));
        }
        if !is_valid_mod_id(cmd, id) {
            return Err(fail(C::InvalidMeter, "meter_mod: meter_id"));
        }
        let bands = decode_bands(r)?;
        Ok(MeterMod {
            command: cmd,
            flags: fl,
            meter_id: id,
            bands,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u16(self.command);
        w.put_u16(self.flags);
        w.put_u32(self.meter_id);
        encode_bands(&self.bands, w);
    }
}

#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use proptest::prelude::*;

    pub fn any_band() -> impl Strategy<Value = MeterBand> {
        prop_oneof![
            (any::<u32>(), any::<u32>())
                .prop_map(|(rate, burst_size)| MeterBand::Drop { rate, burst_size }),
            (any::<u32>(), any::<u32>(), any::<u8>()).prop_map(|(rate, burst_size, prec_level)| {
                MeterBand::DscpRemark {
                    rate,
                    burst_size,
                    prec_level,
                }
            }),
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                prop::collection::vec(any::<[u8; 8]>(), 0..3)
            )
                .prop_map(|(rate, burst_size, experimenter, d)| {
                    MeterBand::Experimenter {
                        rate,
                        burst_size,
                        experimenter,
                        data: d.concat(),
                    }
                }),
        ]
    }

    pub fn any_meter_mod() -> impl Strategy<Value = MeterMod> {
        (
            0..=command::DELETE,
            prop_oneof![
                Just(flags::KBPS),
                Just(flags::PKTPS | flags::BURST | flags::STATS)
            ],
            prop_oneof![1..=meter_id::MAX, Just(meter_id::CONTROLLER)],
            prop::collection::vec(any_band(), 0..4),
        )
            .prop_map(|(command, flags, meter_id, bands)| MeterMod {
                command,
                flags,
                meter_id,
                bands,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn code(bytes: &[u8]) -> ErrorCode {
        MeterMod::decode(&mut Reader::message(bytes))
            .unwrap_err()
            .code
    }

    #[test]
    fn meter_mod_bytes() {
        let m = MeterMod {
            command: command::ADD,
            flags: flags::KBPS | flags::BURST,
            meter_id: 1,
            bands: vec![
                MeterBand::Drop {
                    rate: 1000,
                    burst_size: 100,
                },
                MeterBand::DscpRemark {
                    rate: 2000,
                    burst_size: 200,
                    prec_level: 1,
                },
            ],
        };
        let mut w = Vec::new();
        m.encode(&mut w);
        #[rustfmt::skip]
        let want = [
            0, 0, 0, 5, 0, 0, 0, 1,
            0, 1, 0, 16, 0, 0, 0x03, 0xe8, 0, 0, 0, 100, 0, 0, 0, 0,
            0, 2, 0, 16, 0, 0, 0x07, 0xd0, 0, 0, 0, 200, 1, 0, 0, 0,
        ];
        assert_eq!(w, want);
        assert_eq!(MeterMod::decode(&mut Reader::message(&w)).unwrap(), m);
    }

    #[test]
    fn bad_command() {
        assert_eq!(
            code(&[0, 3, 0, 1, 0, 0, 0, 1]),
            ErrorCode::MeterModFailed(MeterModFailedCode::BadCommand)
        );
    }

    #[test]
    fn bad_flags() {
        let bf = ErrorCode::MeterModFailed(MeterModFailedCode::BadFlags);
        assert_eq!(code(&[0, 0, 0, 0x10, 0, 0, 0, 1]), bf);
        assert_eq!(code(&[0, 0, 0, 0x03, 0, 0, 0, 1]), bf);
    }

    #[test]
    fn invalid_meter() {
        let im = ErrorCode::MeterModFailed(MeterModFailedCode::InvalidMeter);
        assert_eq!(code(&[0, 0, 0, 1, 0, 0, 0, 0]), im);
        assert_eq!(code(&[0, 0, 0, 1, 0xff, 0xff, 0, 1]), im);
        assert_eq!(code(&[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]), im);
        for ok in [
            [0, 0, 0, 1, 0xff, 0xff, 0, 0],
            [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfd],
            [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe],
            [0, 2, 0, 0, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert!(MeterMod::decode(&mut Reader::message(&ok)).is_ok());
        }
    }

    #[test]
    fn bad_band() {
        let bb = ErrorCode::MeterModFailed(MeterModFailedCode::BadBand);
        let head = [0u8, 0, 0, 1, 0, 0, 0, 1];
        let band = |ty: u16, len: u16| {
            let mut v = head.to_vec();
            v.extend_from_slice(&ty.to_be_bytes());
            v.extend_from_slice(&len.to_be_bytes());
            v.extend_from_slice(&[0; 12]);
            v
        };
        // unknown type
        assert_eq!(code(&band(3, 16)), bb);
        // wrong length for drop
        assert_eq!(code(&band(1, 24)), bb);
        // experimenter past the end
        assert_eq!(code(&band(0xffff, 24)), bb);
        // experimenter not aligned
        assert_eq!(code(&band(0xffff, 20)), bb);
        // truncated band
        assert_eq!(code(&band(1, 16)[..20]), bb);
        assert!(MeterMod::decode(&mut Reader::message(&band(0xffff, 16))).is_ok());
    }

    proptest! {
        #[test]
        fn meter_mod_round_trip(m in arb::any_meter_mod()) {
            let mut w = Vec::new();
            m.encode(&mut w);
            prop_assert_eq!(MeterMod::decode(&mut Reader::message(&w)).unwrap(), m);
        }
    }
}
