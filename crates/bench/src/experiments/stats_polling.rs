//! Statistics polling interaction (OFLOPS Fig. 5 and 6): with `flows` exact
//! flows installed, `updates` flow modifications (each closed by a barrier)
//! are timed while the controller polls flow statistics of all flows at a
//! given rate; per polling rate: update delay, statistics reply time and
//! switch CPU. Each rate is measured `repeats` times (flows reinstalled
//! each time): the table and scalars give the median over the repeats of
//! each repeat's median, with the standard deviation over the repeats
//! beside it (`*_repeat_sd_*` / `*_sd_*` columns, `*_stddev` scalars);
//! `update_sd_ms` and `update_p95_ms` describe all measured updates pooled.
//! `warmup` unrecorded repeats at the first rate come before.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use ofp::message::Message;
use ofp::multipart::{FlowStatsRequest, MultipartRequest, MultipartRequestBody};
use serde_json::json;

use crate::bail;
use crate::error::Result;
use crate::experiment::{now_ns, Ctx, Event, Experiment, ParamSpec};
use crate::flows;
use crate::results::Results;
use crate::sampler::CpuMark;
use crate::stats::summarize;

#[derive(Default)]
pub struct StatsPolling {
    res: Results,
}

fn flow_spec(i: usize, gp: u32, cp: u32, alt: bool) -> String {
    let act = if alt {
        "drop".to_string()
    } else {
        format!("output:{cp}")
    };
    format!(
        "priority=100,in_port={gp},udp,nw_dst=10.80.{}.{} actions={act}",
        (i / 256) % 256,
        i % 256
    )
}

fn flow_stats_all() -> Message {
    Message::MultipartRequest(MultipartRequest::new(MultipartRequestBody::Flow(
        FlowStatsRequest {
            table_id: ofp::message::table_id::ALL,
            out_port: ofp::port::port_no::ANY,
            out_group: ofp::group::group_id::ANY,
            cookie: 0,
            cookie_mask: 0,
            match_: ofp::oxm::Match::new(Vec::new()),
        },
    )))
}

/// One polling rate's measurements.
struct Level {
    update_ms: Vec<f64>,
    reply_ms: Vec<f64>,
    cpu: Option<f64>,
}

impl StatsPolling {
    fn level(
        &self,
        ctx: &mut Ctx,
        nflows: usize,
        updates: usize,
        rate: f64,
        gap: Duration,
    ) -> Result<Level> {
        let (gp, cp) = (ctx.iface("gen")?.of_port, ctx.iface("cap")?.of_port);
        ctx.delete_all_flows()?;
        let adds: Result<Vec<Message>> = (0..nflows)
            .map(|i| flows::add_msg(&flow_spec(i, gp, cp, false)))
            .collect();
        ctx.send_bulk(adds?)?;
        ctx.barrier(Duration::from_secs(60))?;
        ctx.clear_events();
        let pid = ctx.switch_pid();
        let mark = pid.and_then(CpuMark::now);
        let poll_gap = (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate));
        let start = Instant::now();
        let mut next_poll = start;
        let mut next_update = start;
        let mut done = 0usize;
        // xid of the barrier closing the pending update -> its send time.
        let mut pending_update: Option<(u32, u64)> = None;
        // xid of an outstanding stats request -> its send time.
        let mut polls: HashMap<u32, u64> = HashMap::new();
        let (mut update_ms, mut reply_ms) = (Vec::new(), Vec::new());
        while done < updates {
            if start.elapsed() > Duration::from_secs(120) {
                bail!("stats_polling: {done} of {updates} updates in 120 s at {rate} polls/s");
            }
            let now = Instant::now();
            if let Some(g) = poll_gap {
                if now >= next_poll {
                    let t = now_ns();
                    let x = ctx.send(flow_stats_all())?;
                    polls.insert(x, t);
                    next_poll += g;
                }
            }
            if pending_update.is_none() && now >= next_update {
                let i = done % nflows;
                let t = now_ns();
                let fm =
                    flows::modify_strict(&flow_spec(i, gp, cp, (done / nflows).is_multiple_of(2)))?;
                ctx.send(Message::FlowMod(fm))?;
                let bx = ctx.send(Message::BarrierRequest)?;
                pending_update = Some((bx, t));
                next_update = now + gap;
            }
            let mut wake = next_update;
            if poll_gap.is_some() {
                wake = wake.min(next_poll);
            }
            let wake = wake.max(Instant::now() + Duration::from_micros(20));
            let Some(ev) = ctx.wait_event(wake) else {
                continue;
            };
            match ev {
                Event::Control(m, ts) => {
                    if let Some((bx, t)) = pending_update {
                        if m.xid == bx {
                            update_ms.push(ts.saturating_sub(t) as f64 / 1e6);
                            pending_update = None;
                            done += 1;
                            continue;
                        }
                    }
                    match &m.body {
                        Message::MultipartReply(r)
                            if r.flags & ofp::multipart::OFPMPF_REPLY_MORE == 0 =>
                        {
                            if let Some(t) = polls.remove(&m.xid) {
                                reply_ms.push(ts.saturating_sub(t) as f64 / 1e6);
                            }
                        }
                        Message::Error(e) => bail!("stats_polling: switch error {e:?}"),
                        _ => {}
                    }
                }
                Event::ControlLost(w) => bail!("control connection lost: {w}"),
                Event::Packet(_) => {}
            }
        }
        let cpu = match (mark, pid) {
            (Some(m), Some(p)) => m.percent_since(p),
            _ => None,
        };
        // Let outstanding stats replies drain before the next level.
        let dl = Instant::now() + Duration::from_secs(5);
        while !polls.is_empty() {
            match ctx.wait_event(dl) {
                Some(Event::Control(m, _)) => {
                    if let Message::MultipartReply(r) = &m.body {
                        if r.flags & ofp::multipart::OFPMPF_REPLY_MORE == 0 {
                            polls.remove(&m.xid);
                        }
                    }
                }
                Some(_) => {}
                None => break,
            }
        }
        Ok(Level {
            update_ms,
            reply_ms,
            cpu,
        })
    }
}

impl Experiment for StatsPolling {
    fn name(&self) -> &'static str {
        "stats_polling"
    }
    fn description(&self) -> &'static str {
        "flow-stats polling rate vs flow update delay and switch CPU, 1,024 exact flows, 100 updates (OFLOPS Fig. 5, 6)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("flows", "1024", "exact flows installed"),
            ParamSpec::new(
                "updates",
                "100",
                "timed flow modifications per polling rate",
            ),
            ParamSpec::new(
                "poll_rates",
                "0,1,10,50,100",
                "flow-stats requests per second",
            ),
            ParamSpec::new("update_gap_ms", "5", "pause between updates"),
            ParamSpec::new(
                "repeats",
                "3",
                "measured runs per polling rate (median and stddev reported)",
            ),
            ParamSpec::new(
                "warmup",
                "1",
                "unrecorded runs at the first polling rate before measuring",
            ),
        ]
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let nflows: usize = ctx.param("flows")?;
        let updates: usize = ctx.param("updates")?;
        let rates: Vec<f64> = ctx.params.list("poll_rates")?;
        let gap = Duration::from_secs_f64(ctx.param::<f64>("update_gap_ms")? / 1000.0);
        let reps: usize = ctx.param("repeats")?;
        let warm: usize = ctx.param("warmup")?;
        if nflows == 0 || nflows > 65_536 {
            bail!("stats_polling: flows={nflows}: must be in 1..=65536");
        }
        if reps == 0 {
            bail!("stats_polling: repeats=0: must be at least 1");
        }
        ctx.progress.set_total((rates.len() * reps) as u64);
        if let Some(&first) = rates.first() {
            for _ in 0..warm {
                ctx.progress.message(format!("warm-up at {first} polls/s"));
                self.level(ctx, nflows, updates, first, gap)?;
            }
        }
        let (mut s_upd, mut s_cpu, mut s_rep, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &rate in &rates {
            let mut runs = Vec::with_capacity(reps);
            for r in 0..reps {
                ctx.progress
                    .message(format!("{rate} polls/s repeat {}/{reps}", r + 1));
                runs.push(self.level(ctx, nflows, updates, rate, gap)?);
                ctx.progress.inc(1);
            }
            // Per repeat: its median update delay and stats reply time
            // (NaN for a repeat without replies: ignored by summarize).
            let u = summarize(
                &runs
                    .iter()
                    .map(|l| summarize(&l.update_ms).median)
                    .collect::<Vec<_>>(),
            );
            let r = summarize(
                &runs
                    .iter()
                    .map(|l| summarize(&l.reply_ms).median)
                    .collect::<Vec<_>>(),
            );
            let cpu = summarize(&runs.iter().filter_map(|l| l.cpu).collect::<Vec<_>>());
            let all_updates: Vec<f64> = runs.iter().flat_map(|l| l.update_ms.clone()).collect();
            let pooled = summarize(&all_updates);
            let replies: usize = runs.iter().map(|l| l.reply_ms.len()).sum();
            // CPU median and spread, None when no repeat could sample it.
            let (cpu_med, cpu_sd) = if cpu.n > 0 {
                (Some(cpu.median), Some(cpu.stddev))
            } else {
                (None, None)
            };
            rows.push(vec![
                json!(rate),
                json!(u.median),
                json!(pooled.stddev),
                json!(pooled.p95),
                json!(r.median),
                json!(replies),
                json!(cpu_med),
                json!(u.stddev),
                json!(r.stddev),
                json!(cpu_sd),
                json!(reps),
            ]);
            s_upd.push([rate, u.median]);
            self.res
                .scalar(&format!("update_ms_at_{rate}_polls"), u.median, "ms");
            self.res
                .scalar(&format!("update_ms_at_{rate}_polls_stddev"), u.stddev, "ms");
            if let (Some(c), Some(sd)) = (cpu_med, cpu_sd) {
                self.res
                    .scalar(&format!("cpu_percent_at_{rate}_polls"), c, "%");
                self.res
                    .scalar(&format!("cpu_percent_at_{rate}_polls_stddev"), sd, "%");
                s_cpu.push([rate, c]);
            }
            if r.n > 0 {
                s_rep.push([rate, r.median]);
            }
        }
        let res = &mut self.res;
        res.table(
            "stats_polling",
            &[
                "poll_rate",
                "update_median_ms",
                "update_sd_ms",
                "update_p95_ms",
                "stats_reply_median_ms",
                "stats_replies",
                "switch_cpu_percent",
                "update_repeat_sd_ms",
                "stats_reply_sd_ms",
                "switch_cpu_sd_percent",
                "repeats",
            ],
            rows,
        );
        res.series("update_delay_ms", "polls/s", "update delay (ms)", s_upd);
        res.series(
            "stats_reply_ms",
            "polls/s",
            "flow-stats reply time (ms)",
            s_rep,
        );
        res.series("switch_cpu_percent", "polls/s", "switch CPU (%)", s_cpu);
        res.plot(
            "stats_polling_delay",
            "Flow update delay vs flow-stats polling rate",
            "flow-stats requests/s",
            "delay (ms)",
            false,
            false,
            &["update_delay_ms", "stats_reply_ms"],
        );
        res.plot(
            "stats_polling_cpu",
            "Switch CPU vs flow-stats polling rate",
            "flow-stats requests/s",
            "CPU (% of one core)",
            false,
            false,
            &["switch_cpu_percent"],
        );
        ctx.delete_all_flows()?;
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}
