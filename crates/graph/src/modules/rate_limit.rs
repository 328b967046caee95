//! `rate_limit`: a token bucket on what passes; packets beyond the limit
//! are dropped (policing; to delay instead, put a queue under a
//! rate-limited traffic class).
//!
//! Arguments: `pps` or `bps` (exactly one: packets or bits per second),
//! `burst` (packets or bits; default one batch: 32 packets or 32 x 1500
//! bytes).

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};
use crate::tc::Bucket;

pub struct RateLimit {
    bucket: Option<Bucket>,
    limit: u64,
    burst: u64,
    bits: bool,
    pub passed: u64,
    pub dropped: u64,
}

pub fn new(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    let (limit, bits) = match (args.u64("pps")?, args.u64("bps")?) {
        (Some(p), None) => (p, false),
        (None, Some(b)) => (b, true),
        _ => return Err("give exactly one of `pps` and `bps`".into()),
    };
    let burst = args
        .u64("burst")?
        .unwrap_or(if bits { 32 * 1500 * 8 } else { 32 });
    if limit == 0 || burst == 0 {
        return Err("rate and `burst` must be at least 1".into());
    }
    Ok(Box::new(RateLimit {
        bucket: None,
        limit,
        burst,
        bits,
        passed: 0,
        dropped: 0,
    }))
}

impl Module for RateLimit {
    fn kind(&self) -> &'static str {
        "rate_limit"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, ctx: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let bucket = self
            .bucket
            .get_or_insert_with(|| Bucket::new(self.limit, self.burst, ctx.now));
        bucket.refill(ctx.now);
        for (b, m) in batch.drain() {
            let units = if self.bits { b.len() as u64 * 8 } else { 1 };
            if bucket.take(units) {
                self.passed += 1;
                out.emit(0, b, m);
            } else {
                self.dropped += 1;
                out.drop_packet(b);
            }
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("passed", self.passed), ("dropped", self.dropped)]
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::Meta;
    use crate::modules::testing::run;
    use crate::registry::{Args, Env};

    #[test]
    fn polices_to_the_rate() {
        let mut m = super::new(
            &Args::parse("pps = 1000\nburst = 10").unwrap(),
            &mut Env::default(),
        )
        .unwrap();
        let p = [0u8; 60];
        let batch: Vec<(&[u8], Meta)> = vec![(&p[..], Meta::default()); 32];
        let (out, dropped) = run(&mut *m, 0, &batch);
        assert_eq!((out[0].len(), dropped), (10, 22));
        // 5 ms later: 5 more tokens.
        let (out, _) = run(&mut *m, 5_000_000, &batch);
        assert_eq!(out[0].len(), 5);
        assert!(super::new(
            &Args::parse("pps = 1\nbps = 1").unwrap(),
            &mut Env::default()
        )
        .is_err());
    }
}
