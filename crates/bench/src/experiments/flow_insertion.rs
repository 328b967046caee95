//! Flow insertion (OFLOPS Fig. 3 and 4): N new flows (or modifications of N
//! existing flows) sent in bulk, followed by a barrier, while probes for the
//! *last* flow stream from the generator.
//!
//! Per N and repeat it records, from the start of the bulk write:
//! - `tx`: the transmission time of the flow-mods (last byte written);
//! - `barrier`: when the barrier reply was read;
//! - `dp_seen`: when the first probe of the last flow arrived on the
//!   capture side (kernel stamp);
//! - `dp_effective`: the transmit stamp of that first forwarded probe, i.e.
//!   the moment the data plane demonstrably had the rule (probes are sent
//!   every `probe_gap_us`, which bounds the resolution).
//!
//! A repeat is flagged *barrier before data plane* when probes sent after
//! the barrier reply (plus two probe gaps of slack) were still not
//! forwarded: the switch answered the barrier before its data plane used
//! the new rules.
//!
//! Then (OFLOPS Fig. 4) `activation_flows` flows are added in one bulk
//! while probes cycle round robin over all of them, skipping flows already
//! seen: the curve "flows forwarding vs time" against the barrier reply.
//! Its resolution is one probe cycle (unseen flows x `probe_gap_us`).

use std::time::{Duration, Instant};

use ofp::message::Message;
use serde_json::json;

use crate::bail;
use crate::error::Result;
use crate::experiment::{Ctx, Dir, Event, Experiment, ParamSpec};
use crate::flows;
use crate::frames::{find_probe, Probe};
use crate::results::Results;
use crate::stats::summarize;

#[derive(Default)]
pub struct FlowInsertion {
    res: Results,
}

/// Destination address of flow `i` (10.78.x.y).
fn dst(i: usize) -> [u8; 4] {
    [10, 78, (i / 256) as u8, (i % 256) as u8]
}

fn spec(i: usize, gp: u32, cp: u32, out: bool) -> String {
    let d = dst(i);
    let act = if out {
        format!("output:{cp}")
    } else {
        "drop".into()
    };
    format!(
        "priority=100,in_port={gp},udp,nw_dst={}.{}.{}.{} actions={act}",
        d[0], d[1], d[2], d[3]
    )
}

/// One measured repeat, ns after the bulk write started.
#[derive(Debug, Clone, Copy)]
struct Repeat {
    tx: f64,
    barrier: f64,
    dp_seen: f64,
    dp_effective: f64,
    barrier_first: bool,
}

impl FlowInsertion {
    #[allow(clippy::too_many_arguments)]
    fn one(
        &self,
        ctx: &mut Ctx,
        n: usize,
        modify: bool,
        gap: Duration,
        timeout: Duration,
        seq0: &mut u64,
    ) -> Result<Repeat> {
        let (gp, cp) = (ctx.iface("gen")?.of_port, ctx.iface("cap")?.of_port);
        ctx.delete_all_flows()?;
        if modify {
            let pre: Result<Vec<Message>> = (0..n)
                .map(|i| flows::add_msg(&spec(i, gp, cp, false)))
                .collect();
            ctx.send_bulk(pre?)?;
            ctx.barrier(Duration::from_secs(60))?;
        }
        let mut mods = Vec::with_capacity(n + 1);
        for i in 0..n {
            let s = spec(i, gp, cp, true);
            mods.push(Message::FlowMod(if modify {
                flows::modify_strict(&s)?
            } else {
                flows::add(&s)?
            }));
        }
        mods.push(Message::BarrierRequest);
        let probe = Probe {
            ip_dst: dst(n - 1),
            ..Probe::default()
        };
        ctx.clear_events();
        let first_seq = *seq0;
        let bulk = ctx.send_bulk(mods)?;
        let bxid = *bulk.xids.last().expect("barrier appended");
        let (mut barrier_ts, mut seen): (Option<u64>, Option<(u64, u64)>) = (None, None);
        let mut tx_of: std::collections::HashMap<u64, u64> = Default::default();
        let start = Instant::now();
        let mut next_send = Instant::now();
        while barrier_ts.is_none() || seen.is_none() {
            if start.elapsed() > timeout {
                bail!(
                    "N={n}: no {} within {timeout:?}",
                    if barrier_ts.is_none() {
                        "barrier reply"
                    } else {
                        "probe of the last flow on the capture side"
                    }
                );
            }
            if seen.is_none() && Instant::now() >= next_send {
                ctx.send_frame("gen", &probe.build(*seq0))?;
                *seq0 += 1;
                next_send += gap;
            }
            let Some(ev) = ctx.wait_event(next_send.max(Instant::now() + Duration::from_micros(5)))
            else {
                continue;
            };
            match ev {
                Event::Control(m, ts) if m.xid == bxid => barrier_ts = Some(ts),
                Event::Control(m, _) => {
                    if let Message::Error(e) = m.body {
                        bail!("N={n}: switch refused a flow-mod (xid {:#x}): {e:?}", m.xid);
                    }
                }
                Event::ControlLost(w) => bail!("control connection lost: {w}"),
                Event::Packet(p) => {
                    let Some(s) = find_probe(&p.data) else {
                        continue;
                    };
                    if s < first_seq {
                        continue;
                    }
                    match (p.role, p.dir) {
                        ("gen", Dir::Tx) => {
                            tx_of.insert(s, p.ts_ns);
                        }
                        ("cap", Dir::Rx) if seen.is_none() => seen = Some((s, p.ts_ns)),
                        _ => {}
                    }
                }
            }
        }
        let (seq, rx_ts) = seen.expect("loop ends when seen");
        // The transmit stamp of the first forwarded probe may still be in
        // the channel: wait for it briefly.
        let dl = Instant::now() + Duration::from_millis(200);
        while !tx_of.contains_key(&seq) {
            match ctx.wait_event(dl) {
                Some(Event::Packet(p)) if p.role == "gen" && p.dir == Dir::Tx => {
                    if let Some(s) = find_probe(&p.data) {
                        tx_of.insert(s, p.ts_ns);
                    }
                }
                Some(_) => {}
                None => break,
            }
        }
        let eff = tx_of.get(&seq).copied().unwrap_or(rx_ts);
        let b = barrier_ts.expect("loop ends when barrier seen");
        let t0 = bulk.start_ns as f64;
        let slack = 2 * gap.as_nanos() as u64 + 50_000;
        ctx.clear_events();
        Ok(Repeat {
            tx: bulk.end_ns as f64 - t0,
            barrier: b as f64 - t0,
            dp_seen: rx_ts as f64 - t0,
            dp_effective: eff as f64 - t0,
            barrier_first: eff > b + slack,
        })
    }
}

impl FlowInsertion {
    /// OFLOPS Fig. 4: add `n` flows in bulk while probes cycle over all of
    /// them; returns, per flow, when its first probe arrived (ms after the
    /// bulk write started; NaN if never within `timeout`) and the barrier
    /// reply time.
    fn activation(
        &self,
        ctx: &mut Ctx,
        n: usize,
        gap: Duration,
        timeout: Duration,
        seq0: &mut u64,
    ) -> Result<(Vec<f64>, f64)> {
        let (gp, cp) = (ctx.iface("gen")?.of_port, ctx.iface("cap")?.of_port);
        ctx.delete_all_flows()?;
        let mut mods: Vec<Message> = (0..n)
            .map(|i| flows::add_msg(&spec(i, gp, cp, true)))
            .collect::<Result<_>>()?;
        mods.push(Message::BarrierRequest);
        let probes: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                Probe {
                    ip_dst: dst(i),
                    ..Probe::default()
                }
                .build(0)
            })
            .collect();
        ctx.clear_events();
        let bulk = ctx.send_bulk(mods)?;
        let bxid = *bulk.xids.last().expect("barrier appended");
        let mut first: Vec<Option<u64>> = vec![None; n];
        let mut seen = 0usize;
        let mut barrier = None;
        let start = Instant::now();
        let mut next_send = Instant::now();
        let mut k = 0usize;
        while (seen < n || barrier.is_none()) && start.elapsed() < timeout {
            if seen < n && Instant::now() >= next_send {
                // Next flow not yet seen, round robin.
                for _ in 0..n {
                    k = (k + 1) % n;
                    if first[k].is_none() {
                        break;
                    }
                }
                ctx.send_frame("gen", &probes[k])?;
                *seq0 += 1;
                next_send += gap;
            }
            let wake = next_send.max(Instant::now() + Duration::from_micros(5));
            match ctx.wait_event(wake) {
                Some(Event::Control(m, ts)) if m.xid == bxid => barrier = Some(ts),
                Some(Event::Packet(p)) if p.role == "cap" && p.dir == Dir::Rx => {
                    // The probe's IPv4 destination names its flow.
                    if let Some(&[10, 78, hi, lo]) = p.data.get(30..34) {
                        let f = usize::from(hi) * 256 + usize::from(lo);
                        if f < n && first[f].is_none() {
                            first[f] = Some(p.ts_ns);
                            seen += 1;
                        }
                    }
                }
                Some(Event::ControlLost(w)) => bail!("control connection lost: {w}"),
                _ => {}
            }
        }
        ctx.clear_events();
        let t0 = bulk.start_ns as f64;
        let act = first
            .iter()
            .map(|f| f.map(|t| (t as f64 - t0) / 1e6).unwrap_or(f64::NAN))
            .collect();
        let b = barrier.map(|t| (t as f64 - t0) / 1e6).unwrap_or(f64::NAN);
        Ok((act, b))
    }
}

impl Experiment for FlowInsertion {
    fn name(&self) -> &'static str {
        "flow_insertion"
    }
    fn description(&self) -> &'static str {
        "N new/modified flows: flow-mod transmission, barrier reply, first packet of the last flow; flags barrier-before-dataplane (OFLOPS Fig. 3, 4)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("n_list", "1,10,100,1000,10000", "numbers of flows inserted"),
            ParamSpec::new("repeats", "3", "repeats per N (median and spread reported)"),
            ParamSpec::new(
                "modes",
                "add,modify",
                "add (new flows) and/or modify (existing flows)",
            ),
            ParamSpec::new(
                "probe_gap_us",
                "50",
                "gap between probes of the last flow (resolution)",
            ),
            ParamSpec::new("timeout_s", "30", "give up on one repeat after this long"),
            ParamSpec::new(
                "warmup",
                "1",
                "unrecorded repeats (N = first of n_list) before measuring",
            ),
            ParamSpec::new(
                "activation_flows",
                "1000",
                "then add this many flows while probing all of them round robin: when each became active, resolution flows x probe_gap (OFLOPS Fig. 4; 0: skip)",
            ),
        ]
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let ns: Vec<usize> = ctx.params.list("n_list")?;
        let reps: usize = ctx.param("repeats")?;
        let modes: Vec<String> = ctx.params.list("modes")?;
        let gap = Duration::from_micros(ctx.param("probe_gap_us")?);
        let timeout = Duration::from_secs_f64(ctx.param("timeout_s")?);
        if ns.iter().any(|&n| n == 0 || n > 65_536) {
            bail!("flow_insertion: n_list values must be in 1..=65536");
        }
        for m in &modes {
            if m != "add" && m != "modify" {
                bail!("flow_insertion: modes: {m:?} is neither add nor modify");
            }
        }
        ctx.capture("gen")?;
        ctx.capture("cap")?;
        ctx.progress
            .set_total((ns.len() * reps * modes.len()) as u64);
        let mut seq = 1u64;
        let warm: usize = ctx.param("warmup")?;
        for _ in 0..warm {
            ctx.progress.message("warm-up");
            self.one(ctx, ns[0], false, gap, timeout, &mut seq)?;
        }
        let mut rows = Vec::new();
        let mut flagged_total = 0usize;
        for mode in &modes {
            let (mut s_tx, mut s_bar, mut s_dp) = (Vec::new(), Vec::new(), Vec::new());
            for &n in &ns {
                let mut rs = Vec::new();
                for r in 0..reps {
                    ctx.progress
                        .message(format!("{mode} N={n} repeat {}/{reps}", r + 1));
                    rs.push(self.one(ctx, n, mode == "modify", gap, timeout, &mut seq)?);
                    ctx.progress.inc(1);
                }
                let ms = |f: fn(&Repeat) -> f64| {
                    summarize(&rs.iter().map(|r| f(r) / 1e6).collect::<Vec<_>>())
                };
                let (tx, bar, dp, eff) = (
                    ms(|r| r.tx),
                    ms(|r| r.barrier),
                    ms(|r| r.dp_seen),
                    ms(|r| r.dp_effective),
                );
                let flagged = rs.iter().filter(|r| r.barrier_first).count();
                flagged_total += flagged;
                rows.push(vec![
                    json!(mode),
                    json!(n),
                    json!(tx.median),
                    json!(bar.median),
                    json!(bar.stddev),
                    json!(dp.median),
                    json!(dp.stddev),
                    json!(eff.median),
                    json!(flagged),
                    json!(reps),
                ]);
                s_tx.push([n as f64, tx.median]);
                self.res
                    .scalar(&format!("{mode}_{n}_barrier_ms"), bar.median, "ms");
                self.res
                    .scalar(&format!("{mode}_{n}_dataplane_ms"), dp.median, "ms");
                s_bar.push([n as f64, bar.median]);
                s_dp.push([n as f64, dp.median]);
            }
            let names = [
                format!("{mode}_flowmod_tx_ms"),
                format!("{mode}_barrier_ms"),
                format!("{mode}_dataplane_ms"),
            ];
            self.res
                .series(&names[0], "flows", "flow-mod transmission (ms)", s_tx);
            self.res
                .series(&names[1], "flows", "barrier reply (ms)", s_bar);
            self.res
                .series(&names[2], "flows", "first packet of last flow (ms)", s_dp);
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            self.res.plot(
                &format!("flow_insertion_{mode}"),
                &format!("Flow insertion ({mode}): delay vs number of flows"),
                "flows",
                "delay from first flow-mod (ms)",
                true,
                true,
                &refs,
            );
        }
        self.res.table(
            "flow_insertion",
            &[
                "mode",
                "flows",
                "tx_ms",
                "barrier_ms",
                "barrier_sd_ms",
                "dataplane_ms",
                "dataplane_sd_ms",
                "dataplane_effective_ms",
                "barrier_before_dataplane",
                "repeats",
            ],
            rows,
        );
        self.res.scalar(
            "barrier_before_dataplane_repeats",
            flagged_total as f64,
            "count",
        );
        if flagged_total > 0 {
            self.res.note(format!(
                "{flagged_total} repeat(s): the barrier reply came before the data plane forwarded with the new flows"
            ));
        }
        let n: usize = ctx.param("activation_flows")?;
        if n > 65_536 {
            bail!("flow_insertion: activation_flows={n}: at most 65536");
        }
        if n > 0 {
            ctx.progress.message(format!("activation of {n} flows"));
            let (act, bar) = self.activation(ctx, n, gap, timeout, &mut seq)?;
            let active = act.iter().filter(|a| a.is_finite()).count();
            let mut sorted: Vec<f64> = act.iter().copied().filter(|a| a.is_finite()).collect();
            sorted.sort_by(|a, b| a.total_cmp(b));
            let curve: Vec<[f64; 2]> = sorted
                .iter()
                .enumerate()
                .map(|(i, t)| [*t, (i + 1) as f64])
                .collect();
            self.res.series(
                "activation_per_flow",
                "flow",
                "first packet (ms)",
                act.iter()
                    .enumerate()
                    .map(|(i, a)| [i as f64, *a])
                    .collect(),
            );
            self.res.series(
                "flows_active",
                "ms after first flow-mod",
                "flows forwarding",
                curve,
            );
            self.res.series(
                "barrier_reply",
                "ms after first flow-mod",
                "flows forwarding",
                vec![[bar, 0.0], [bar, n as f64]],
            );
            self.res.plot(
                "flow_activation",
                &format!("Flows forwarding vs time, {n} flows added in bulk"),
                "ms after the first flow-mod",
                "flows forwarding",
                false,
                false,
                &["flows_active", "barrier_reply"],
            );
            self.res
                .scalar("activation_flows_active", active as f64, "count");
            self.res.scalar("activation_barrier_ms", bar, "ms");
            if let Some(last) = sorted.last() {
                self.res.scalar("activation_last_flow_ms", *last, "ms");
            }
        }
        ctx.delete_all_flows()?;
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}
