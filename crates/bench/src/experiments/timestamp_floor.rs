//! Timestamp floor (OFLOPS Fig. 2): generator -> capture over one veth pair,
//! no switch. The one-way "latency" measured here is the cost and jitter of
//! the measuring setup itself (kernel transmit stamp on the generator side,
//! kernel receive stamp on the capture side); read every other latency
//! figure against it.

use std::time::Duration;

use crate::error::Result;
use crate::experiment::{Ctx, Experiment, ParamSpec};
use crate::experiments::common::{cdf, probe_run};
use crate::frames::Probe;
use crate::results::Results;

#[derive(Default)]
pub struct TimestampFloor {
    res: Results,
}

impl Experiment for TimestampFloor {
    fn name(&self) -> &'static str {
        "timestamp_floor"
    }
    fn description(&self) -> &'static str {
        "generator -> capture over a veth pair, no switch: the precision floor of every latency (OFLOPS Fig. 2)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("count", "2000", "probes measured"),
            ParamSpec::new("warmup", "100", "probes sent first and not counted"),
            ParamSpec::new("rate_pps", "2000", "probe rate (frames/s)"),
            ParamSpec::new("frame_size", "64", "frame length in bytes"),
        ]
    }
    fn needs_switch(&self) -> bool {
        false
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let count: u64 = ctx.param("count")?;
        let probe = Probe {
            len: ctx.param("frame_size")?,
            ..Probe::default()
        };
        ctx.progress.set_total(1);
        ctx.progress.message("probing");
        let run = probe_run(
            ctx,
            &probe,
            0,
            ctx.param("warmup")?,
            count,
            ctx.param("rate_pps")?,
            Duration::from_secs(2),
        )?;
        ctx.progress.inc(1);
        let us = run.latencies_us();
        let r = &mut self.res;
        r.summary("floor_us", &us, "us");
        r.scalar("loss", run.loss(), "fraction");
        r.scalar("generator_achieved_pps", run.rate.achieved_pps, "frames/s");
        if run.rate.generator_limited {
            r.note(format!(
                "generator limit: asked {} frames/s, achieved {:.0}",
                run.rate.requested_pps, run.rate.achieved_pps
            ));
        }
        let seq0 = run.lat_ns.first().map(|x| x.0).unwrap_or(0);
        r.series(
            "floor_per_probe",
            "probe",
            "one-way latency (us)",
            run.lat_ns
                .iter()
                .map(|(s, l)| [(s - seq0) as f64, l / 1000.0])
                .collect(),
        );
        r.series("floor_cdf", "latency (us)", "fraction", cdf(&us));
        r.plot(
            "floor_cdf",
            "Timestamp floor: CDF of one-way latency",
            "latency (us)",
            "fraction of probes",
            true,
            false,
            &["floor_cdf"],
        );
        r.plot(
            "floor_per_probe",
            "Timestamp floor per probe",
            "probe",
            "latency (us)",
            false,
            true,
            &["floor_per_probe"],
        );
        if let Some(p) = r.plots.last_mut() {
            p.points_only = true;
        }
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}
