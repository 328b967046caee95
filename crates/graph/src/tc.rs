//! Traffic classes: the kinds of node of a worker's scheduling tree, the
//! resources they account, and the token bucket of a rate limit.
//!
//! - `priority`: runs its highest-priority child that can run.
//! - `weighted`: weighted fair sharing by stride scheduling: each child
//!   has a `pass`; the runnable child with the lowest pass runs and its
//!   pass grows by `STRIDE / share` times what it used of the class's
//!   resource, so over time each child gets resource in proportion to its
//!   share.
//! - `round_robin`: children take turns.
//! - `rate_limit`: one child, limited to `limit` units of its resource per
//!   second with bursts up to `burst` units (a token bucket that may go
//!   negative by one run's usage; while it has no tokens the class is
//!   skipped until the clock refills it).
//! - `leaf`: holds one task (a module slot of the graph).
//!
//! Resources: `count` (runs), `packets`, `bits`, `cycles` (the time a run
//! took in clock units).

use crate::module::Usage;

/// What a weighted or rate-limit class accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Count,
    Packets,
    Bits,
    Cycles,
}

impl Resource {
    pub fn parse(s: &str) -> Result<Resource, String> {
        Ok(match s {
            "count" => Resource::Count,
            "packets" => Resource::Packets,
            "bits" => Resource::Bits,
            "cycles" => Resource::Cycles,
            _ => {
                return Err(format!(
                    "unknown resource `{s}` (count, packets, bits, cycles)"
                ))
            }
        })
    }

    /// How much of this resource `u` used.
    #[inline]
    pub fn of(self, u: &Usage) -> u64 {
        match self {
            Resource::Count => 1,
            Resource::Packets => u.packets,
            Resource::Bits => u.bits,
            Resource::Cycles => u.cycles,
        }
    }
}

/// A token bucket in units of a resource, kept in nano-units so that the
/// refill of every elapsed nanosecond counts (no rounding drift).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Units per second.
    pub limit: u64,
    /// Most units saved up.
    pub burst: u64,
    /// Tokens in units x 1e9 (may go negative by one run).
    tokens: i128,
    last: u64,
}

const NANO: i128 = 1_000_000_000;

impl Bucket {
    /// A full bucket at time `now`.
    pub fn new(limit: u64, burst: u64, now: u64) -> Bucket {
        Bucket {
            limit,
            burst,
            tokens: burst as i128 * NANO,
            last: now,
        }
    }

    /// Adds the tokens earned since the last refill.
    #[inline]
    pub fn refill(&mut self, now: u64) {
        let dt = now.saturating_sub(self.last) as i128;
        self.last = now.max(self.last);
        self.tokens = (self.tokens + dt * self.limit as i128).min(self.burst as i128 * NANO);
    }

    /// Whether a run may start.
    #[inline]
    pub fn ready(&self) -> bool {
        self.tokens > 0
    }

    /// Takes `units` (after a run).
    #[inline]
    pub fn charge(&mut self, units: u64) {
        self.tokens -= units as i128 * NANO;
    }

    /// Takes `units` if there are that many (module form: drop otherwise).
    #[inline]
    pub fn take(&mut self, units: u64) -> bool {
        if self.tokens >= units as i128 * NANO {
            self.charge(units);
            true
        } else {
            false
        }
    }

    /// Changes the limit and burst (tokens kept, capped at the new burst).
    pub fn set(&mut self, limit: u64, burst: u64) {
        self.limit = limit;
        self.burst = burst;
        self.tokens = self.tokens.min(burst as i128 * NANO);
    }
}

/// A traffic class kind; see the module comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassKind {
    Priority,
    Weighted { resource: Resource },
    RoundRobin,
    RateLimit { resource: Resource, bucket: Bucket },
    Leaf { task: usize },
}

impl ClassKind {
    pub fn name(&self) -> &'static str {
        match self {
            ClassKind::Priority => "priority",
            ClassKind::Weighted { .. } => "weighted",
            ClassKind::RoundRobin => "round_robin",
            ClassKind::RateLimit { .. } => "rate_limit",
            ClassKind::Leaf { .. } => "leaf",
        }
    }
}

/// What a class and everything under it used (readable for `show-tc`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassUsage {
    pub runs: u64,
    pub packets: u64,
    pub bits: u64,
    pub cycles: u64,
    /// Times the class was skipped for want of tokens.
    pub throttled: u64,
}

impl ClassUsage {
    pub fn add(&mut self, u: &Usage) {
        self.runs += 1;
        self.packets += u.packets;
        self.bits += u.bits;
        self.cycles += u.cycles;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_refills_caps_and_blocks() {
        let mut b = Bucket::new(1000, 10, 0);
        assert!(b.ready());
        b.charge(32);
        assert!(!b.ready());
        b.refill(22_000_000); // 22 ms: +22 units -> -22 + 22 = 0
        assert!(!b.ready());
        b.refill(23_000_000);
        assert!(b.ready());
        b.refill(10_000_000_000);
        assert!(b.take(10));
        assert!(!b.take(1));
        assert_eq!(Resource::parse("bits"), Ok(Resource::Bits));
        assert!(Resource::parse("bytes").is_err());
    }
}
