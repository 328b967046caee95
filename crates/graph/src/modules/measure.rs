//! `measure`: counts the packets and bytes that pass (out of gate 0) and,
//! with `latency = true`, the time since the `timestamp` attribute an
//! upstream module wrote (`port_inc` with `timestamp = true`): count, sum,
//! min, max and a histogram in powers of two of nanoseconds.

use crate::batch::Batch;
use crate::metadata::{Access, Attr, AttrDecl, Layout};
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

/// Histogram buckets: bucket i counts latencies in [2^i, 2^(i+1)) ns.
pub const BUCKETS: usize = 40;

pub struct Measure {
    latency: bool,
    stamp: Option<Attr>,
    pub packets: u64,
    pub bytes: u64,
    pub lat_sum: u64,
    pub lat_min: u64,
    pub lat_max: u64,
    pub hist: [u64; BUCKETS],
}

pub fn new(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Measure {
        latency: args.bool("latency")?.unwrap_or(false),
        stamp: None,
        packets: 0,
        bytes: 0,
        lat_sum: 0,
        lat_min: u64::MAX,
        lat_max: 0,
        hist: [0; BUCKETS],
    }))
}

impl Module for Measure {
    fn kind(&self) -> &'static str {
        "measure"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        if self.latency {
            vec![AttrDecl::new("timestamp", 8, Access::Read)]
        } else {
            Vec::new()
        }
    }
    fn bind(&mut self, layout: &Layout) {
        self.stamp = if self.latency {
            layout.get("timestamp")
        } else {
            None
        };
    }
    fn process(&mut self, ctx: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, m) in batch.iter() {
            self.packets += 1;
            self.bytes += b.len() as u64;
            if let Some(a) = self.stamp {
                let lat = ctx.now.saturating_sub(a.get_u64(m));
                self.lat_sum += lat;
                self.lat_min = self.lat_min.min(lat);
                self.lat_max = self.lat_max.max(lat);
                let i = (63 - lat.max(1).leading_zeros() as usize).min(BUCKETS - 1);
                self.hist[i] += 1;
            }
        }
        out.emit_all(0, batch);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("packets", self.packets),
            ("bytes", self.bytes),
            ("latency_sum_ns", self.lat_sum),
            (
                "latency_min_ns",
                if self.packets > 0 && self.stamp.is_some() {
                    self.lat_min
                } else {
                    0
                },
            ),
            ("latency_max_ns", self.lat_max),
        ]
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::Meta;
    use crate::metadata::{Access, AttrDecl, Layout};
    use crate::modules::testing::run;
    use crate::registry::{Args, Env};

    #[test]
    fn counts_and_measures_latency() {
        let mut m =
            super::new(&Args::parse("latency = true").unwrap(), &mut Env::default()).unwrap();
        assert_eq!(m.attrs(), vec![AttrDecl::new("timestamp", 8, Access::Read)]);
        let mut l = Layout::default();
        l.resolve(&[
            AttrDecl::new("other", 4, Access::Write),
            AttrDecl::new("timestamp", 8, Access::Write),
        ])
        .unwrap();
        m.bind(&l);
        let ts = l.get("timestamp").unwrap();
        let mut a = Meta::default();
        ts.set_u64(&mut a, 1000);
        let mut b = Meta::default();
        ts.set_u64(&mut b, 1900);
        let (out, _) = run(&mut *m, 2000, &[(&[0; 60], a), (&[0; 100], b)]);
        assert_eq!(out[0].len(), 2);
        let c: std::collections::HashMap<_, _> = m.counters().into_iter().collect();
        assert_eq!(c["packets"], 2);
        assert_eq!(c["bytes"], 160);
        assert_eq!(c["latency_sum_ns"], 1100);
        assert_eq!((c["latency_min_ns"], c["latency_max_ns"]), (100, 1000));
    }
}
