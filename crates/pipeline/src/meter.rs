//! The meter table (spec §5.7, §7.3.4.4): per-flow rate limiting with drop
//! and DSCP-remark bands, in kbps or packets per second, with optional burst
//! sizes, and meter / band statistics. Time is an argument.
//!
//! Each band is a token bucket. To stay in integers, tokens are counted in
//! "unit-nanoseconds": a band of rate `r` units per second gains `r` tokens
//! per elapsed nanosecond, and a packet costs `units * 1e9` tokens, where a
//! unit is one bit for kbps meters (rate `r` kbps = `1000 r` bits/s) or one
//! packet for pktps meters. A bucket holds at most the burst size (from the
//! band with OFPMF_BURST, otherwise one second of traffic at the band's
//! rate). A packet that finds a band's bucket short "exceeds" that band;
//! the meter applies, of the exceeded bands, the one with the highest rate
//! (spec: the band with the highest rate lower than the measured rate).
//! Every band whose bucket has the tokens takes them, whatever the verdict.

use crate::table::Nanos;
use ofp::error::{ErrorCode, MeterModFailedCode};
use ofp::meter::{command, flags, meter_id, MeterBand, MeterMod};
use packet::{FlowKey, PacketBuf, SetField};
use std::collections::BTreeMap;

const NS: u128 = 1_000_000_000;

/// One band with its bucket and counters.
#[derive(Debug, Clone)]
pub struct BandState {
    pub band: MeterBand,
    /// Tokens in unit-nanoseconds (module comment).
    tokens: u128,
    pub packet_count: u64,
    pub byte_count: u64,
}

/// One meter.
#[derive(Debug, Clone)]
pub struct Meter {
    pub id: u32,
    /// Bits of `ofp::meter::flags`.
    pub flags: u16,
    pub bands: Vec<BandState>,
    pub packet_in_count: u64,
    pub byte_in_count: u64,
    pub created_at: Nanos,
    last: Nanos,
}

/// What a meter decided for a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Drop,
}

fn rate_of(b: &MeterBand) -> u32 {
    match b {
        MeterBand::Drop { rate, .. }
        | MeterBand::DscpRemark { rate, .. }
        | MeterBand::Experimenter { rate, .. } => *rate,
    }
}

fn burst_of(b: &MeterBand) -> u32 {
    match b {
        MeterBand::Drop { burst_size, .. }
        | MeterBand::DscpRemark { burst_size, .. }
        | MeterBand::Experimenter { burst_size, .. } => *burst_size,
    }
}

impl Meter {
    fn pktps(&self) -> bool {
        self.flags & flags::PKTPS != 0
    }

    /// Tokens gained per nanosecond and bucket capacity of a band.
    fn bucket(&self, b: &MeterBand) -> (u128, u128) {
        let per_sec: u128 = if self.pktps() {
            u128::from(rate_of(b))
        } else {
            u128::from(rate_of(b)) * 1000
        };
        let cap = if self.flags & flags::BURST != 0 {
            let burst = u128::from(burst_of(b));
            if self.pktps() {
                burst * NS
            } else {
                burst * 1000 * NS
            }
        } else {
            per_sec * NS
        };
        (per_sec, cap)
    }

    /// Counts and meters one packet of `len` bytes at `now`.
    fn meter(&mut self, len: usize, now: Nanos) -> Option<usize> {
        self.packet_in_count += 1;
        self.byte_in_count += len as u64;
        let elapsed = u128::from(now.saturating_sub(self.last));
        self.last = self.last.max(now);
        let cost = if self.pktps() {
            NS
        } else {
            len as u128 * 8 * NS
        };
        let buckets: Vec<(u128, u128)> = self.bands.iter().map(|b| self.bucket(&b.band)).collect();
        // (index, rate) of the highest-rate band the packet exceeds.
        let mut exceeded: Option<(usize, u32)> = None;
        for (i, (b, (per_ns, cap))) in self.bands.iter_mut().zip(buckets).enumerate() {
            b.tokens = b
                .tokens
                .saturating_add(elapsed.saturating_mul(per_ns))
                .min(cap);
            let rate = rate_of(&b.band);
            if b.tokens >= cost {
                b.tokens -= cost;
            } else if exceeded.is_none_or(|(_, r)| rate > r) {
                exceeded = Some((i, rate));
            }
        }
        exceeded.map(|(i, _)| i)
    }
}

/// Raises the drop precedence of an AF DSCP (class 1..4, precedence 1..3)
/// by `prec`, saturating at 3; other codepoints are left alone.
pub fn remark_dscp(dscp: u8, prec: u8) -> u8 {
    let class = dscp >> 3;
    let dp = (dscp >> 1) & 3;
    if (1..=4).contains(&class) && dscp & 1 == 0 && dp >= 1 {
        (class << 3) | (dp.saturating_add(prec).min(3) << 1)
    } else {
        dscp
    }
}

#[derive(Debug, Clone, Default)]
pub struct MeterTable {
    meters: BTreeMap<u32, Meter>,
}

fn mm_err(c: MeterModFailedCode) -> ErrorCode {
    ErrorCode::MeterModFailed(c)
}

impl MeterTable {
    pub fn new() -> MeterTable {
        MeterTable::default()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.meters.contains_key(&id)
    }

    pub fn get(&self, id: u32) -> Option<&Meter> {
        self.meters.get(&id)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Meter> {
        self.meters.values()
    }

    /// Applies a meter-mod at `now`; returns the ids of deleted meters (the
    /// caller removes the flow entries that use them).
    pub fn apply(&mut self, mm: &MeterMod, now: Nanos) -> Result<Vec<u32>, ErrorCode> {
        use MeterModFailedCode as C;
        match mm.command {
            command::ADD | command::MODIFY => {
                if mm.meter_id == 0 || mm.meter_id > meter_id::MAX {
                    // The virtual SLOWPATH / CONTROLLER meters are not
                    // configurable here.
                    return Err(mm_err(C::InvalidMeter));
                }
                let exists = self.meters.contains_key(&mm.meter_id);
                if mm.command == command::ADD && exists {
                    return Err(mm_err(C::MeterExists));
                }
                if mm.command == command::MODIFY && !exists {
                    return Err(mm_err(C::UnknownMeter));
                }
                if mm.flags & flags::KBPS != 0 && mm.flags & flags::PKTPS != 0 {
                    return Err(mm_err(C::BadFlags));
                }
                for b in &mm.bands {
                    if matches!(b, MeterBand::Experimenter { .. }) {
                        return Err(mm_err(C::BadBand));
                    }
                    if rate_of(b) == 0 {
                        return Err(mm_err(C::BadRate));
                    }
                    if mm.flags & flags::BURST != 0 && burst_of(b) == 0 {
                        return Err(mm_err(C::BadBurst));
                    }
                    if let MeterBand::DscpRemark { prec_level, .. } = b {
                        if *prec_level == 0 || *prec_level > 3 {
                            return Err(mm_err(C::BadBandValue));
                        }
                    }
                }
                let old = self.meters.get(&mm.meter_id);
                let mut m = Meter {
                    id: mm.meter_id,
                    flags: mm.flags,
                    bands: Vec::new(),
                    packet_in_count: old.map_or(0, |o| o.packet_in_count),
                    byte_in_count: old.map_or(0, |o| o.byte_in_count),
                    created_at: old.map_or(now, |o| o.created_at),
                    last: now,
                };
                // Buckets start full.
                m.bands = mm
                    .bands
                    .iter()
                    .map(|b| BandState {
                        tokens: m.bucket(b).1,
                        band: b.clone(),
                        packet_count: 0,
                        byte_count: 0,
                    })
                    .collect();
                self.meters.insert(mm.meter_id, m);
                Ok(Vec::new())
            }
            command::DELETE => {
                if mm.meter_id == meter_id::ALL {
                    let ids = self.meters.keys().copied().collect();
                    self.meters.clear();
                    return Ok(ids);
                }
                Ok(self
                    .meters
                    .remove(&mm.meter_id)
                    .map(|m| vec![m.id])
                    .unwrap_or_default())
            }
            _ => Err(mm_err(C::BadCommand)),
        }
    }

    /// Meters a packet through meter `id` at `now`; a DSCP-remark band
    /// rewrites the packet. Unknown meters pass (flow-mod validation keeps
    /// them out of the tables).
    pub fn apply_to_packet(
        &mut self,
        id: u32,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        now: Nanos,
    ) -> Verdict {
        let len = pkt.len();
        let Some(m) = self.meters.get_mut(&id) else {
            return Verdict::Pass;
        };
        let Some(i) = m.meter(len, now) else {
            return Verdict::Pass;
        };
        let Some(b) = m.bands.get_mut(i) else {
            return Verdict::Pass;
        };
        b.packet_count += 1;
        b.byte_count += len as u64;
        match b.band {
            MeterBand::Drop { .. } => Verdict::Drop,
            MeterBand::DscpRemark { prec_level, .. } => {
                if key.has(packet::Field::IpDscp) {
                    let d = remark_dscp(key.ip_dscp, prec_level);
                    // Not an IP packet or no room: forwarded unchanged.
                    let _ = packet::set_field(pkt, key, SetField::IpDscp(d));
                }
                Verdict::Pass
            }
            MeterBand::Experimenter { .. } => Verdict::Pass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscp_remark_table() {
        assert_eq!(remark_dscp(10, 1), 12); // AF11 -> AF12
        assert_eq!(remark_dscp(10, 3), 14); // AF11 -> AF13
        assert_eq!(remark_dscp(14, 1), 14);
        assert_eq!(remark_dscp(46, 1), 46); // EF unchanged
        assert_eq!(remark_dscp(0, 1), 0);
    }
}
