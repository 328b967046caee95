//! Control channel: echo round trip time, sustained flow-mod rate (bulk
//! adds closed by a barrier) and packet-in rate and latency at several
//! offered rates (table-miss -> CONTROLLER).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ofp::message::Message;
use serde_json::json;

use crate::bail;
use crate::error::Result;
use crate::experiment::{Ctx, Dir, Event, Experiment, ParamSpec};
use crate::experiments::common::cdf;
use crate::flows;
use crate::frames::{find_probe, Probe};
use crate::results::Results;
use crate::stats::summarize;

#[derive(Default)]
pub struct ControlChannel {
    res: Results,
}

impl ControlChannel {
    fn echo(&mut self, ctx: &mut Ctx, n: usize) -> Result<()> {
        let mut rtts = Vec::with_capacity(n);
        for _ in 0..n {
            rtts.push(ctx.echo(Duration::from_secs(5))? as f64 / 1000.0);
        }
        // The first round trips warm the connection up.
        let skip = (n / 10).min(10);
        let rtts = &rtts[skip..];
        self.res.summary("echo_rtt_us", rtts, "us");
        self.res
            .series("echo_rtt_cdf", "echo RTT (us)", "fraction", cdf(rtts));
        Ok(())
    }

    fn flowmod_rate(&mut self, ctx: &mut Ctx, n: usize, repeats: usize) -> Result<()> {
        let gp = ctx.iface("gen")?.of_port;
        let cp = ctx.iface("cap")?.of_port;
        let mut rates = Vec::new();
        for _ in 0..repeats {
            ctx.delete_all_flows()?;
            let mut mods = Vec::with_capacity(n + 1);
            for i in 0..n {
                mods.push(flows::add_msg(&format!(
                    "priority=100,in_port={gp},udp,nw_dst=10.79.{}.{},tp_dst={} actions=output:{cp}",
                    (i / 256) % 256,
                    i % 256,
                    1000 + i / 65536
                ))?);
            }
            mods.push(Message::BarrierRequest);
            let bulk = ctx.send_bulk(mods)?;
            let bxid = *bulk.xids.last().expect("barrier appended");
            let (_, ts) = ctx.wait_xid(bxid, Duration::from_secs(120))?;
            let secs = ts.saturating_sub(bulk.start_ns) as f64 / 1e9;
            rates.push(n as f64 / secs.max(1e-9));
        }
        self.res.summary("flowmod_rate", &rates, "flow-mods/s");
        ctx.delete_all_flows()?;
        Ok(())
    }

    fn packet_in(&mut self, ctx: &mut Ctx, rates: &[f64], count: u64) -> Result<()> {
        ctx.delete_all_flows()?;
        ctx.send(flows::add_msg("priority=0 actions=CONTROLLER:128")?)?;
        ctx.barrier(Duration::from_secs(10))?;
        ctx.capture("gen")?;
        let mut rows = Vec::new();
        let (mut s_rate, mut s_lat) = (Vec::new(), Vec::new());
        let mut seq0 = 1u64;
        for &pps in rates {
            ctx.progress.message(format!("packet-in at {pps} frames/s"));
            ctx.clear_events();
            let p = Probe::default();
            let first = seq0;
            let rep = ctx.send_at_rate("gen", pps, count, &mut |i| p.build(first + i))?;
            seq0 += count;
            let (mut tx, mut pin): (HashMap<u64, u64>, HashMap<u64, u64>) = Default::default();
            let dl = Instant::now() + Duration::from_secs(2);
            while let Some(ev) = ctx.wait_event(dl) {
                match ev {
                    Event::Control(m, ts) => {
                        if let Message::PacketIn(pi) = &m.body {
                            if let Some(s) =
                                find_probe(&pi.data).filter(|s| (first..seq0).contains(s))
                            {
                                pin.entry(s).or_insert(ts);
                            }
                        }
                    }
                    Event::Packet(pk) if pk.dir == Dir::Tx => {
                        if let Some(s) = find_probe(&pk.data).filter(|s| (first..seq0).contains(s))
                        {
                            tx.entry(s).or_insert(pk.ts_ns);
                        }
                    }
                    Event::ControlLost(w) => bail!("control connection lost: {w}"),
                    _ => {}
                }
                if pin.len() as u64 == count && tx.len() as u64 == count {
                    break;
                }
            }
            let lat: Vec<f64> = pin
                .iter()
                .filter_map(|(s, t)| tx.get(s).map(|x| t.saturating_sub(*x) as f64 / 1000.0))
                .collect();
            let span = {
                let lo = pin.values().min().copied().unwrap_or(0);
                let hi = pin.values().max().copied().unwrap_or(0);
                (hi.saturating_sub(lo) as f64 / 1e9).max(1e-9)
            };
            let got_rate = if pin.len() > 1 {
                pin.len() as f64 / span
            } else {
                0.0
            };
            let s = summarize(&lat);
            let loss = 1.0 - pin.len() as f64 / count as f64;
            rows.push(vec![
                json!(pps),
                json!(rep.achieved_pps),
                json!(pin.len()),
                json!(got_rate),
                json!(s.median),
                json!(s.stddev),
                json!(loss),
            ]);
            s_rate.push([rep.achieved_pps, got_rate]);
            s_lat.push([rep.achieved_pps, s.median]);
            if rep.generator_limited {
                ctx.note(format!(
                    "packet-in: generator limit at {pps} frames/s (achieved {:.0})",
                    rep.achieved_pps
                ));
            }
            ctx.progress.inc(1);
        }
        self.res.table(
            "packet_in",
            &[
                "offered_pps",
                "sent_pps",
                "packet_ins",
                "packet_in_rate",
                "latency_median_us",
                "latency_sd_us",
                "loss",
            ],
            rows,
        );
        if let Some(l) = s_lat.first() {
            self.res.scalar("packet_in_latency_median_us", l[1], "us");
        }
        self.res.series(
            "packet_in_rate",
            "offered (frames/s)",
            "packet-ins/s",
            s_rate,
        );
        self.res.series(
            "packet_in_latency",
            "offered (frames/s)",
            "median latency (us)",
            s_lat,
        );
        ctx.delete_all_flows()?;
        Ok(())
    }
}

impl Experiment for ControlChannel {
    fn name(&self) -> &'static str {
        "control_channel"
    }
    fn description(&self) -> &'static str {
        "echo RTT, sustained flow-mod rate, packet-in rate and latency vs offered load"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("echo_count", "200", "echo round trips"),
            ParamSpec::new("flowmods", "5000", "flow-mods per rate measurement"),
            ParamSpec::new("repeats", "3", "flow-mod rate repeats"),
            ParamSpec::new(
                "pktin_rates",
                "100,1000,5000",
                "offered table-miss rates (frames/s)",
            ),
            ParamSpec::new("pktin_count", "1000", "frames per packet-in rate"),
        ]
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let rates: Vec<f64> = ctx.params.list("pktin_rates")?;
        ctx.progress.set_total(2 + rates.len() as u64);
        ctx.progress.message("echo");
        self.echo(ctx, ctx.param("echo_count")?)?;
        ctx.progress.inc(1);
        ctx.progress.message("flow-mod rate");
        self.flowmod_rate(ctx, ctx.param("flowmods")?, ctx.param("repeats")?)?;
        ctx.progress.inc(1);
        self.packet_in(ctx, &rates, ctx.param("pktin_count")?)?;
        let r = &mut self.res;
        r.plot(
            "echo_rtt_cdf",
            "Echo round trip time",
            "RTT (us)",
            "fraction",
            true,
            false,
            &["echo_rtt_cdf"],
        );
        r.plot(
            "packet_in_rate",
            "Packet-in rate vs offered table-miss rate",
            "offered (frames/s)",
            "packet-ins/s",
            true,
            true,
            &["packet_in_rate"],
        );
        r.plot(
            "packet_in_latency",
            "Packet-in latency vs offered rate",
            "offered (frames/s)",
            "median latency (us)",
            true,
            true,
            &["packet_in_latency"],
        );
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}
