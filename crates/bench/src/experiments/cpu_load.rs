//! Switch CPU vs offered load (the BOFUSS paper's Fig. 5): a flow pair
//! forwards gen <-> cap; the generator offers 1, 10, 50, 100, 500, 1000
//! Mbit/s and its maximum; per level the switch's CPU (from /proc), the
//! rate actually sent (the generator's own limit is reported, not blamed on
//! the switch) and the rate received (interface counters). Each level is
//! measured `repeats` times: the table and scalars give the median, with the
//! standard deviation over the repeats beside it (`*_sd_*` columns,
//! `*_stddev` scalars). An unrecorded warm-up (`warmup` seconds at the first
//! level) comes before. Then iperf3 TCP throughput through the switch, with
//! its CPU.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::bail;
use crate::error::{BenchError, Result};
use crate::experiment::{Ctx, Experiment, ParamSpec};
use crate::flows;
use crate::frames::Probe;
use crate::results::Results;
use crate::sampler::CpuMark;
use crate::stats::summarize;
use crate::topology::Iface;

#[derive(Default)]
pub struct CpuLoad {
    res: Results,
}

/// rx_packets of `ifc` (from `ip -s -j link`, inside its namespace).
pub fn rx_packets(ifc: &Iface) -> Result<u64> {
    let mut c = Command::new("ip");
    if let Some(ns) = &ifc.netns {
        c.args(["-n", ns]);
    }
    let out = c
        .args(["-s", "-j", "link", "show", "dev", &ifc.name])
        .output()
        .map_err(|e| BenchError(format!("ip -s link: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| BenchError(format!("ip -s -j link show dev {}: {e}", ifc.name)))?;
    v.get(0)
        .and_then(|d| d.pointer("/stats64/rx/packets"))
        .and_then(|p| p.as_u64())
        .ok_or_else(|| BenchError(format!("no rx counter for {}", ifc.name)))
}

/// One measured run at one offered load.
struct Run {
    sent_mbps: f64,
    rx_mbps: f64,
    loss: f64,
    /// Switch CPU (% of one core) while sending; None without a switch pid.
    cpu: Option<f64>,
    generator_limited: bool,
    achieved_pps: f64,
}

/// Send `count` frames of `probe` at `pps` (0: as fast as the generator
/// goes) from "gen"; measure the switch's CPU meanwhile and what `cap`
/// received. `bits` is the wire size of one frame in bits.
fn run_once(
    ctx: &mut Ctx,
    probe: &Probe,
    pps: f64,
    count: u64,
    bits: f64,
    cap: &Iface,
) -> Result<Run> {
    let pid = ctx.switch_pid();
    let rx0 = rx_packets(cap)?;
    let mark = pid.and_then(CpuMark::now);
    let rep = ctx.send_at_rate("gen", pps, count, &mut |i| probe.build(i))?;
    let cpu = match (mark, pid) {
        (Some(m), Some(p)) => m.percent_since(p),
        _ => None,
    };
    std::thread::sleep(Duration::from_millis(100));
    let rx = rx_packets(cap)?.saturating_sub(rx0);
    let dur = (rep.last_ns.saturating_sub(rep.first_ns) as f64 / 1e9).max(1e-9);
    let loss = if rep.sent > 0 {
        1.0 - (rx as f64 / rep.sent as f64).min(1.0)
    } else {
        0.0
    };
    Ok(Run {
        sent_mbps: rep.sent as f64 * bits / dur / 1e6,
        rx_mbps: rx as f64 * bits / dur / 1e6,
        loss,
        cpu,
        generator_limited: rep.generator_limited,
        achieved_pps: rep.achieved_pps,
    })
}

/// Run iperf3 gen -> cap for `secs`; returns received bits/s.
fn iperf3(gen: &Iface, cap: &Iface, secs: f64) -> Result<f64> {
    let (Some(gns), Some(cns)) = (&gen.netns, &cap.netns) else {
        bail!("iperf3 needs the generator and capture interfaces in namespaces");
    };
    let mut server = Command::new("ip")
        .args(["netns", "exec", cns, "iperf3", "-s", "-1", "-p", "5299"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| BenchError(format!("iperf3 server: {e}")))?;
    std::thread::sleep(Duration::from_millis(300));
    let ip = cap.ip;
    let out = Command::new("ip")
        .args(["netns", "exec", gns, "iperf3", "-c"])
        .arg(format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]))
        .args(["-p", "5299", "-J", "-t"])
        .arg(format!("{secs}"))
        .output();
    let _ = server.kill();
    let _ = server.wait();
    let out = out.map_err(|e| BenchError(format!("iperf3 client: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| BenchError(format!("iperf3 output: {e}")))?;
    if let Some(e) = v.get("error").and_then(|e| e.as_str()) {
        bail!("iperf3: {e}");
    }
    v.pointer("/end/sum_received/bits_per_second")
        .and_then(|b| b.as_f64())
        .ok_or_else(|| BenchError("iperf3: no end.sum_received in its JSON".into()))
}

impl Experiment for CpuLoad {
    fn name(&self) -> &'static str {
        "cpu_load"
    }
    fn description(&self) -> &'static str {
        "switch CPU at 1..1000 Mbit/s and at the generator's maximum; iperf3 TCP throughput through the switch (BOFUSS Fig. 5)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new(
                "rates_mbps",
                "1,10,50,100,500,1000,max",
                "offered loads (Mbit/s, max = as fast as the generator goes)",
            ),
            ParamSpec::new("frame_size", "1500", "frame length in bytes"),
            ParamSpec::new("seconds", "2", "duration of each level"),
            ParamSpec::new(
                "repeats",
                "3",
                "measured runs per level (median and stddev reported)",
            ),
            ParamSpec::new(
                "warmup",
                "0.5",
                "seconds of unrecorded traffic at the first level before measuring",
            ),
            ParamSpec::new("iperf_seconds", "3", "iperf3 duration (0: skip iperf3)"),
        ]
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let levels: Vec<String> = ctx.params.list("rates_mbps")?;
        let size: usize = ctx.param("frame_size")?;
        let secs: f64 = ctx.param("seconds")?;
        let iperf_s: f64 = ctx.param("iperf_seconds")?;
        let reps: usize = ctx.param("repeats")?;
        let warm_s: f64 = ctx.param("warmup")?;
        if reps == 0 {
            bail!("cpu_load: repeats=0: must be at least 1");
        }
        if !(60..=1514).contains(&size) {
            bail!("cpu_load: frame_size={size}: must be in 60..=1514");
        }
        let gen = ctx.iface("gen")?.clone();
        let cap = ctx.iface("cap")?.clone();
        ctx.delete_all_flows()?;
        ctx.send(flows::add_msg(&format!(
            "priority=10,in_port={} actions=output:{}",
            gen.of_port, cap.of_port
        ))?)?;
        ctx.send(flows::add_msg(&format!(
            "priority=10,in_port={} actions=output:{}",
            cap.of_port, gen.of_port
        ))?)?;
        ctx.barrier(Duration::from_secs(10))?;
        let pid = ctx.switch_pid();
        if pid.is_none() {
            ctx.note(
                "no switch pid: CPU not sampled (--set switch_pid=PID for an external switch)",
            );
        }
        ctx.progress.set_total(levels.len() as u64 + 1);
        // Not addressed to the capture host: its stack drops the frames
        // silently (no ICMP back through the switch).
        let probe = Probe {
            ip_dst: [10, 77, 0, 99],
            len: size,
            ..Probe::default()
        };
        let bits = (size as f64 + 24.0) * 8.0; // + preamble, SFD, IFG, FCS
        let offer = |lv: &str| -> Result<(f64, f64)> {
            if lv == "max" {
                return Ok((0.0, f64::NAN));
            }
            let m: f64 = lv
                .parse()
                .map_err(|e| BenchError(format!("cpu_load: rates_mbps: {lv:?}: {e}")))?;
            Ok((m * 1e6 / bits, m))
        };
        let count_for = |pps: f64, secs: f64| {
            if pps > 0.0 {
                (pps * secs).ceil().max(1.0) as u64
            } else {
                (400_000.0 * secs).max(1.0) as u64
            }
        };
        // Warm-up: the first level for `warmup` seconds, not recorded.
        if let (Some(lv), true) = (levels.first(), warm_s > 0.0) {
            ctx.progress.message(format!("warm-up at {lv} Mbit/s"));
            let (pps, _) = offer(lv)?;
            run_once(ctx, &probe, pps, count_for(pps, warm_s), bits, &cap)?;
        }
        let (mut rows, mut s_cpu, mut s_rx) = (Vec::new(), Vec::new(), Vec::new());
        for lv in &levels {
            let (pps, offered) = offer(lv)?;
            let count = count_for(pps, secs);
            let mut runs = Vec::with_capacity(reps);
            for r in 0..reps {
                ctx.progress
                    .message(format!("{lv} Mbit/s repeat {}/{reps}", r + 1));
                runs.push(run_once(ctx, &probe, pps, count, bits, &cap)?);
            }
            let of = |f: fn(&Run) -> Option<f64>| {
                summarize(&runs.iter().filter_map(f).collect::<Vec<_>>())
            };
            let sent = of(|r| Some(r.sent_mbps));
            let rx = of(|r| Some(r.rx_mbps));
            let loss = of(|r| Some(r.loss));
            let cpu = of(|r| r.cpu);
            // CPU median and spread, None when no repeat could sample it.
            let (cpu_med, cpu_sd) = if cpu.n > 0 {
                (Some(cpu.median), Some(cpu.stddev))
            } else {
                (None, None)
            };
            let limited = runs.iter().filter(|r| r.generator_limited).count();
            if limited > 0 {
                let pps_med = of(|r| Some(r.achieved_pps)).median;
                ctx.note(format!(
                    "{lv} Mbit/s: generator limit in {limited} of {reps} repeats, sent {:.0} Mbit/s ({pps_med:.0} frames/s, medians); the switch was offered less",
                    sent.median
                ));
            }
            if let (Some(c), Some(sd)) = (cpu_med, cpu_sd) {
                self.res
                    .scalar(&format!("cpu_percent_at_{lv}_mbps"), c, "%");
                self.res
                    .scalar(&format!("cpu_percent_at_{lv}_mbps_stddev"), sd, "%");
            }
            self.res
                .scalar(&format!("received_mbps_at_{lv}_mbps"), rx.median, "Mbit/s");
            self.res.scalar(
                &format!("received_mbps_at_{lv}_mbps_stddev"),
                rx.stddev,
                "Mbit/s",
            );
            rows.push(vec![
                json!(lv),
                json!(sent.median),
                json!(rx.median),
                json!(loss.median),
                json!(cpu_med),
                json!(limited > 0),
                json!(sent.stddev),
                json!(rx.stddev),
                json!(loss.stddev),
                json!(cpu_sd),
                json!(reps),
            ]);
            if let Some(c) = cpu_med {
                s_cpu.push([sent.median, c]);
            }
            s_rx.push([sent.median, rx.median]);
            if lv == "max" {
                self.res.scalar("max_sent_mbps", sent.median, "Mbit/s");
                self.res.scalar("max_received_mbps", rx.median, "Mbit/s");
                if let Some(c) = cpu_med {
                    self.res.scalar("max_cpu_percent", c, "%");
                }
            } else if let (Some(c), true) = (cpu_med, offered == 100.0) {
                self.res.scalar("cpu_at_100mbps_percent", c, "%");
            }
            ctx.progress.inc(1);
        }
        if iperf_s > 0.0 {
            ctx.progress.message("iperf3");
            let mark = pid.and_then(CpuMark::now);
            match iperf3(&gen, &cap, iperf_s) {
                Ok(bps) => {
                    self.res.scalar("iperf3_tcp_mbps", bps / 1e6, "Mbit/s");
                    if let (Some(m), Some(p)) = (mark, pid) {
                        if let Some(c) = m.percent_since(p) {
                            self.res.scalar("iperf3_cpu_percent", c, "%");
                        }
                    }
                }
                Err(e) => ctx.note(format!("iperf3 failed: {e}")),
            }
        }
        ctx.progress.inc(1);
        if let Some(kib) = ctx.switch_rss_kib() {
            self.res.scalar("switch_rss_kib_at_end", kib as f64, "KiB");
        }
        let r = &mut self.res;
        r.table(
            "cpu_load",
            &[
                "offered_mbps",
                "sent_mbps",
                "received_mbps",
                "loss",
                "switch_cpu_percent",
                "generator_limited",
                "sent_sd_mbps",
                "received_sd_mbps",
                "loss_sd",
                "switch_cpu_sd_percent",
                "repeats",
            ],
            rows,
        );
        r.series(
            "switch_cpu_percent",
            "sent (Mbit/s)",
            "switch CPU (%)",
            s_cpu,
        );
        r.series("received_mbps", "sent (Mbit/s)", "received (Mbit/s)", s_rx);
        r.plot(
            "cpu_vs_load",
            "Switch CPU vs offered load",
            "offered (Mbit/s)",
            "CPU (% of one core)",
            true,
            false,
            &["switch_cpu_percent"],
        );
        r.plot(
            "received_vs_sent",
            "Forwarded vs offered load",
            "offered (Mbit/s)",
            "received (Mbit/s)",
            true,
            true,
            &["received_mbps"],
        );
        ctx.delete_all_flows()?;
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}
