//! Packet modification latency per action (OFLOPS Table 2): for each action
//! one flow `in_port=gen -> ACTION, output:cap`, then numbered probes at a
//! modest rate; one-way latency (kernel stamps on both sides) median,
//! standard deviation and loss per action.

use std::time::Duration;

use serde_json::json;

use crate::error::Result;
use crate::experiment::{Ctx, Experiment, ParamSpec};
use crate::experiments::common::probe_run;
use crate::flows;
use crate::frames::Probe;
use crate::results::Results;
use crate::stats::summarize;

/// (name, needs a VLAN-tagged probe, ovs-ofctl actions before the output).
const ACTIONS: &[(&str, bool, &str)] = &[
    ("forward", false, ""),
    ("mac_src", false, "set_field:02:aa:00:00:00:01->eth_src,"),
    ("mac_dst", false, "set_field:02:aa:00:00:00:02->eth_dst,"),
    ("ip_src", false, "set_field:10.99.0.1->ip_src,"),
    ("ip_dst", false, "set_field:10.99.0.2->ip_dst,"),
    ("ip_tos", false, "set_field:8->ip_dscp,"),
    ("l4_port", false, "set_field:7777->udp_dst,"),
    ("vlan_pcp", true, "set_field:5->vlan_pcp,"),
    ("vlan_id", true, "set_field:4116->vlan_vid,"),
    ("vlan_strip", true, "pop_vlan,"),
];

/// Whether a received (untagged) frame shows the effect of action `name`;
/// None where the capture cannot tell (the kernel strips 802.1Q tags into
/// metadata before an AF_PACKET socket sees the frame).
pub fn modified(name: &str, f: &[u8]) -> Option<bool> {
    use crate::topology::{CAP_MAC, GEN_MAC};
    let get = |r: std::ops::Range<usize>| f.get(r).unwrap_or(&[]);
    Some(match name {
        "forward" => get(0..6) == CAP_MAC && get(6..12) == GEN_MAC,
        "mac_src" => get(6..12) == [2, 0xaa, 0, 0, 0, 1],
        "mac_dst" => get(0..6) == [2, 0xaa, 0, 0, 0, 2],
        "ip_src" => get(26..30) == [10, 99, 0, 1],
        "ip_dst" => get(30..34) == [10, 99, 0, 2],
        "ip_tos" => f.get(15).map(|t| t >> 2) == Some(8),
        "l4_port" => get(36..38) == 7777u16.to_be_bytes(),
        _ => return None,
    })
}

#[derive(Default)]
pub struct PktModLatency {
    res: Results,
}

/// The flow for action `i` from `gen_port` to `cap_port`.
pub fn flow_for(i: usize, gen_port: u32, cap_port: u32) -> String {
    let (_, tagged, act) = ACTIONS[i];
    let m = if tagged {
        format!("in_port={gen_port},dl_vlan=10")
    } else {
        format!("in_port={gen_port},udp")
    };
    format!("priority=100,{m} actions={act}output:{cap_port}")
}

impl Experiment for PktModLatency {
    fn name(&self) -> &'static str {
        "pkt_mod_latency"
    }
    fn description(&self) -> &'static str {
        "one-way latency per action (forward, set MAC/IP/ToS/L4, VLAN pcp/id/strip): median, stddev, loss (OFLOPS Table 2)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::new("count", "1000", "probes measured per action"),
            ParamSpec::new(
                "warmup",
                "50",
                "probes per action sent first and not counted",
            ),
            ParamSpec::new("rate_pps", "1000", "probe rate (frames/s)"),
            ParamSpec::new(
                "actions",
                "all",
                "comma-separated subset of the actions, or all",
            ),
        ]
    }
    fn start(&mut self, ctx: &mut Ctx) -> Result<()> {
        let count: u64 = ctx.param("count")?;
        let warmup: u64 = ctx.param("warmup")?;
        let pps: f64 = ctx.param("rate_pps")?;
        let sel: String = ctx.param("actions")?;
        let chosen: Vec<usize> = (0..ACTIONS.len())
            .filter(|i| sel == "all" || sel.split(',').any(|s| s.trim() == ACTIONS[*i].0))
            .collect();
        if chosen.is_empty() {
            crate::bail!(
                "pkt_mod_latency: actions={sel}: none of {:?}",
                ACTIONS.iter().map(|a| a.0).collect::<Vec<_>>()
            );
        }
        let (gp, cp) = (ctx.iface("gen")?.of_port, ctx.iface("cap")?.of_port);
        ctx.progress.set_total(chosen.len() as u64);
        let mut rows = Vec::new();
        let mut med = Vec::new();
        let mut seq = 0u64;
        for (k, &i) in chosen.iter().enumerate() {
            let (name, tagged, _) = ACTIONS[i];
            ctx.progress.message(name);
            ctx.delete_all_flows()?;
            ctx.send(flows::add_msg(&flow_for(i, gp, cp))?)?;
            ctx.barrier(Duration::from_secs(10))?;
            let probe = Probe {
                vlan: tagged.then_some(10),
                ..Probe::default()
            };
            let run = probe_run(ctx, &probe, seq, warmup, count, pps, Duration::from_secs(2))?;
            seq += warmup + count + 1;
            let s = summarize(&run.latencies_us());
            let checks: Vec<bool> = run
                .samples
                .iter()
                .filter_map(|f| modified(name, f))
                .collect();
            let ok = (!checks.is_empty())
                .then(|| checks.iter().filter(|c| **c).count() as f64 / checks.len() as f64);
            if ok.is_some_and(|f| f < 1.0) {
                ctx.note(format!(
                    "{name}: the switch forwarded probes without the expected modification"
                ));
            }
            rows.push(vec![
                json!(name),
                json!(s.median),
                json!(s.stddev),
                json!(run.loss()),
                json!(s.n),
                json!(ok),
            ]);
            self.res
                .scalar(&format!("{name}_median_us"), s.median, "us");
            self.res
                .scalar(&format!("{name}_loss"), run.loss(), "fraction");
            med.push([k as f64, s.median]);
            if run.rate.generator_limited {
                ctx.note(format!(
                    "{name}: generator limit, {:.0} of {pps} frames/s",
                    run.rate.achieved_pps
                ));
            }
            ctx.progress.inc(1);
        }
        self.res.table(
            "latency_per_action",
            &["action", "median_us", "stddev_us", "loss", "n", "modified"],
            rows,
        );
        self.res.series(
            "median_latency_per_action",
            "action index (see table)",
            "median latency (us)",
            med,
        );
        self.res.plot(
            "latency_per_action",
            "Packet modification latency per action",
            "action index (see table)",
            "median one-way latency (us)",
            false,
            false,
            &["median_latency_per_action"],
        );
        ctx.delete_all_flows()?;
        ctx.done();
        Ok(())
    }
    fn finish(&mut self, _ctx: &mut Ctx) -> Result<Results> {
        Ok(std::mem::take(&mut self.res))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modification_checks_read_the_right_bytes() {
        let p = crate::frames::Probe::default().build(1);
        assert_eq!(modified("forward", &p), Some(true));
        for a in [
            "mac_src", "mac_dst", "ip_src", "ip_dst", "ip_tos", "l4_port",
        ] {
            assert_eq!(modified(a, &p), Some(false), "{a} on an unmodified probe");
        }
        let q = crate::frames::Probe {
            src: [2, 0xaa, 0, 0, 0, 1],
            dst: [2, 0xaa, 0, 0, 0, 2],
            ip_src: [10, 99, 0, 1],
            ip_dst: [10, 99, 0, 2],
            tos: 8 << 2,
            dport: 7777,
            ..Default::default()
        }
        .build(1);
        for a in [
            "mac_src", "mac_dst", "ip_src", "ip_dst", "ip_tos", "l4_port",
        ] {
            assert_eq!(modified(a, &q), Some(true), "{a}");
        }
        assert_eq!(modified("vlan_id", &q), None);
    }

    #[test]
    fn every_action_flow_parses() {
        for i in 0..ACTIONS.len() {
            let f = flow_for(i, 1, 2);
            flows::add(&f).unwrap_or_else(|e| panic!("{f}: {e}"));
        }
    }
}
