//! The meter table (spec §5.7, §7.3.4.4): per-flow rate limiting with drop
//! and DSCP-remark bands, in kbps or packets per second, with optional burst
//! sizes, and meter / band statistics. Time is an argument.
//!
//! # Shared state
//!
//! A meter limits the whole switch, not one worker: the [`MeterTable`]
//! holds each [`Meter`] behind an `Arc`, and every mutable part of a meter
//! (token buckets, the refill stamp, counters) is an atomic. Cloning a
//! pipeline (a worker replica) clones the `Arc`s, so every replica meters
//! against the same buckets; the switch hands the authoritative table to
//! the replicas after each meter-mod ([`MeterTable::clone`] is cheap) rather
//! than letting each replica build its own.
//!
//! # Token buckets
//!
//! Each band is a token bucket in integer "tokens": a band of rate `r`
//! (kbps or pktps) gains `r` tokens per elapsed nanosecond; a packet costs
//! `len * 8 * 10^6` tokens in a kbps meter (one token is 10^-6 bit) or
//! `10^9` in a pktps meter (one token is 10^-9 packet). A bucket holds at
//! most the burst size (`burst * 10^9` tokens, burst in kilobits or
//! packets, with OFPMF_BURST) or else one second of traffic (`r * 10^9`);
//! both fit a `u64` for any 32-bit rate or burst.
//!
//! Refill is lock-free: the meter's `last` stamp advances with
//! `fetch_max(now)`, so each elapsed nanosecond is credited to exactly one
//! packet whichever worker meters it; each band then adds that credit and
//! takes the packet's cost in one compare-and-swap on its `tokens`.
//!
//! A packet that finds a band's bucket short "exceeds" that band; the meter
//! applies, of the exceeded bands, the one with the highest rate (spec: the
//! band with the highest rate lower than the measured rate). Every band
//! whose bucket has the tokens takes them, whatever the verdict.

use crate::table::Nanos;
use ofp::error::{ErrorCode, MeterModFailedCode};
use ofp::meter::{command, flags, meter_id, MeterBand, MeterMod};
use packet::{FlowKey, PacketBuf, SetField};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const NS: u64 = 1_000_000_000;

/// One band with its (shared) bucket and counters.
#[derive(Debug)]
pub struct BandState {
    pub band: MeterBand,
    /// Tokens gained per nanosecond (the band's rate).
    per_ns: u64,
    /// Bucket capacity in tokens.
    cap: u64,
    /// Tokens (module comment).
    tokens: AtomicU64,
    packet_count: AtomicU64,
    byte_count: AtomicU64,
}

impl BandState {
    /// Packets this band applied to.
    pub fn packet_count(&self) -> u64 {
        self.packet_count.load(Ordering::Relaxed)
    }

    pub fn byte_count(&self) -> u64 {
        self.byte_count.load(Ordering::Relaxed)
    }

    /// Credits `elapsed` ns and takes `cost` tokens if the bucket has them;
    /// false if the packet exceeds the band.
    fn take(&self, elapsed: u64, cost: u64) -> bool {
        let refill = |t: u64| {
            t.saturating_add(elapsed.saturating_mul(self.per_ns))
                .min(self.cap)
        };
        let old = self
            .tokens
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| {
                let t = refill(t);
                Some(if t >= cost { t - cost } else { t })
            })
            .unwrap_or_else(|v| v);
        refill(old) >= cost
    }
}

/// One meter; shared by the replicas (module comment).
#[derive(Debug)]
pub struct Meter {
    pub id: u32,
    /// Bits of `ofp::meter::flags`.
    pub flags: u16,
    pub bands: Vec<BandState>,
    packet_in_count: AtomicU64,
    byte_in_count: AtomicU64,
    pub created_at: Nanos,
    /// Refill stamp (module comment).
    last: AtomicU64,
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

    /// Packets that reached the meter.
    pub fn packet_in_count(&self) -> u64 {
        self.packet_in_count.load(Ordering::Relaxed)
    }

    pub fn byte_in_count(&self) -> u64 {
        self.byte_in_count.load(Ordering::Relaxed)
    }

    /// A band with a full bucket.
    fn band_state(flags_: u16, b: &MeterBand) -> BandState {
        let per_ns = u64::from(rate_of(b));
        let cap = if flags_ & flags::BURST != 0 {
            u64::from(burst_of(b)) * NS
        } else {
            per_ns * NS
        };
        BandState {
            band: b.clone(),
            per_ns,
            cap,
            tokens: AtomicU64::new(cap),
            packet_count: AtomicU64::new(0),
            byte_count: AtomicU64::new(0),
        }
    }

    /// Counts and meters one packet of `len` bytes at `now`; the index of
    /// the band that applies, if any.
    fn meter(&self, len: usize, now: Nanos) -> Option<usize> {
        self.packet_in_count.fetch_add(1, Ordering::Relaxed);
        self.byte_in_count.fetch_add(len as u64, Ordering::Relaxed);
        let prev = self.last.fetch_max(now, Ordering::AcqRel);
        let elapsed = now.saturating_sub(prev);
        let cost = if self.pktps() {
            NS
        } else {
            (len as u64).saturating_mul(8_000_000)
        };
        // (index, rate) of the highest-rate band the packet exceeds.
        let mut exceeded: Option<(usize, u32)> = None;
        for (i, b) in self.bands.iter().enumerate() {
            let rate = rate_of(&b.band);
            if !b.take(elapsed, cost) && exceeded.is_none_or(|(_, r)| rate > r) {
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

/// The meters by id; `Clone` shares them (module comment).
#[derive(Debug, Clone, Default)]
pub struct MeterTable {
    meters: BTreeMap<u32, Arc<Meter>>,
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
        self.meters.get(&id).map(|m| &**m)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Meter> {
        self.meters.values().map(|m| &**m)
    }

    /// Whether both tables hold the very same (shared) meters.
    pub fn shares_with(&self, other: &MeterTable) -> bool {
        self.meters.len() == other.meters.len()
            && self
                .meters
                .iter()
                .zip(other.meters.iter())
                .all(|((a, ma), (b, mb))| a == b && Arc::ptr_eq(ma, mb))
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
                // Buckets start full; a modify keeps the meter's counters.
                let m = Meter {
                    id: mm.meter_id,
                    flags: mm.flags,
                    bands: mm
                        .bands
                        .iter()
                        .map(|b| Meter::band_state(mm.flags, b))
                        .collect(),
                    packet_in_count: AtomicU64::new(old.map_or(0, |o| o.packet_in_count())),
                    byte_in_count: AtomicU64::new(old.map_or(0, |o| o.byte_in_count())),
                    created_at: old.map_or(now, |o| o.created_at),
                    last: AtomicU64::new(now),
                };
                self.meters.insert(mm.meter_id, Arc::new(m));
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
        &self,
        id: u32,
        pkt: &mut PacketBuf,
        key: &mut FlowKey,
        now: Nanos,
    ) -> Verdict {
        let len = pkt.len();
        let Some(m) = self.meters.get(&id) else {
            return Verdict::Pass;
        };
        let Some(i) = m.meter(len, now) else {
            return Verdict::Pass;
        };
        let Some(b) = m.bands.get(i) else {
            return Verdict::Pass;
        };
        b.packet_count.fetch_add(1, Ordering::Relaxed);
        b.byte_count.fetch_add(len as u64, Ordering::Relaxed);
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
