//! Port queues (OpenFlow 1.3.5 §7.2.2, `set_queue` §5.12): each port may
//! have queues besides its default queue 0, each with a minimum
//! (guaranteed) and a maximum rate.
//!
//! # How frames are queued and shaped
//!
//! The kernel does the queueing, as Open vSwitch's `linux-htb` QoS does:
//! a port with queues gets an htb qdisc on its interface ([`Htb`]):
//!
//! ```text
//! 1:      htb qdisc, default class 1:1
//! 1:fffe  parent class: rate = ceil = the port's speed (shared by all)
//! 1:1     queue 0 (the default queue)   rate = min_rate, ceil = max_rate
//! 1:N+1   queue N                       rate = min_rate, ceil = max_rate
//! ```
//!
//! A queue's min rate is the htb class's `rate` (guaranteed while the
//! parent has it), its max rate the class's `ceil`; a missing min rate is
//! 1 kbit/s (no guarantee), a missing max rate the port's speed. Each
//! worker transmits a queue's frames on a socket of its own whose
//! `SO_PRIORITY` is the class id ([`priority`],
//! `ports::Port::tx_clone_priority`), so htb classifies them without a
//! filter; frames without set-queue, or set to a queue this port does not
//! have, go to queue 0's class (as in Open vSwitch). A frame the class's
//! queue cannot take is dropped by the kernel and counted in the queue's
//! `tx_errors`.
//!
//! Only backends whose transmit passes the kernel's qdiscs can have
//! queues: AF_PACKET (which does not set `PACKET_QDISC_BYPASS`). AF_XDP
//! transmit bypasses qdiscs, so queues on an XDP port are refused with an
//! error naming the port (configure `backend = "afpacket"` for it).
//!
//! The shaping lives in the kernel and the switch's share is choosing the
//! socket, so this module is small on purpose: when the datapath becomes
//! a module graph (DESIGN.md), a queue becomes a transmit module chosen
//! by the queue id, and the htb set-up stays as it is.
//!
//! # Counters
//!
//! [`QueueCounters`] are shared atomics, one set per queue, added to by
//! every worker once per transmitted batch (frames the socket accepted,
//! their bytes, frames it refused): the queue statistics reply reads them.

use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ofp::port_admin::{format_rate, parse_rate};
use pipeline::Nanos;

/// Largest queue id: its htb class minor (`id + 1`) must stay below the
/// parent class `0xfffe`.
pub const MAX_QUEUE_ID: u32 = 0xfffc;
/// Minor number of the htb parent class.
const PARENT_MINOR: u32 = 0xfffe;
/// The htb rate of a queue without a min rate (htb needs one above 0).
const NO_MIN_RATE: u64 = 1_000;
/// Port speed assumed when the configuration gives none and the
/// interface reports none (bit/s).
pub const DEFAULT_SPEED: u64 = 10_000_000_000;

/// A rate in bit/s as the configuration writes it ([`parse_rate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate(pub u64);

impl std::str::FromStr for Rate {
    type Err = String;
    fn from_str(s: &str) -> Result<Rate, String> {
        parse_rate(s).map(Rate)
    }
}

impl<'de> serde::Deserialize<'de> for Rate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Rate, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Rate;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a rate in bit/s (\"10M\", \"1.5G\", or a number)")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Rate, E> {
                Ok(Rate(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Rate, E> {
                u64::try_from(v)
                    .map(Rate)
                    .map_err(|_| E::custom("a rate must not be negative"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Rate, E> {
                parse_rate(v).map(Rate).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// One entry of a `[[port]]`'s `queues` list in the configuration file
/// (`crate::config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    pub id: u32,
    #[serde(default)]
    pub min_rate: Option<Rate>,
    #[serde(default)]
    pub max_rate: Option<Rate>,
}

impl QueueConfig {
    pub fn spec(&self) -> QueueSpec {
        QueueSpec {
            id: self.id,
            min_rate: self.min_rate.map(|r| r.0),
            max_rate: self.max_rate.map(|r| r.0),
        }
    }
}

/// One queue's configured rates, in bit/s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSpec {
    pub id: u32,
    pub min_rate: Option<u64>,
    pub max_rate: Option<u64>,
}

/// Frames sent through one queue (module comment: "Counters").
#[derive(Debug, Default)]
pub struct QueueCounters {
    pub tx_packets: AtomicU64,
    pub tx_bytes: AtomicU64,
    pub tx_errors: AtomicU64,
}

impl QueueCounters {
    /// Counts one batch: `sent` of `frames` accepted, `bytes` of them.
    pub fn count(&self, sent: usize, frames: usize, bytes: u64) {
        self.tx_packets.fetch_add(sent as u64, Ordering::Relaxed);
        self.tx_bytes.fetch_add(bytes, Ordering::Relaxed);
        let refused = frames.saturating_sub(sent) as u64;
        if refused > 0 {
            self.tx_errors.fetch_add(refused, Ordering::Relaxed);
        }
    }
}

/// One queue of a port: its rates, its counters and when it was created
/// (queue stats duration).
#[derive(Debug, Clone)]
pub struct Queue {
    pub spec: QueueSpec,
    pub counters: Arc<QueueCounters>,
    pub added_at: Nanos,
}

/// A port's queues, by id (ascending), and the speed their rates are
/// relative to.
#[derive(Debug, Clone, Default)]
pub struct PortQueues {
    /// bit/s.
    pub speed: u64,
    pub queues: Vec<Queue>,
}

impl PortQueues {
    pub fn get(&self, id: u32) -> Option<&Queue> {
        self.queues.iter().find(|q| q.spec.id == id)
    }

    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// `ofp_packet_queue` records of this port (rates in tenths of a
    /// percent of the port speed, spec §7.2.2; an unset rate is left out).
    pub fn describe(&self, port: u32) -> Vec<ofp::queue::PacketQueue> {
        use ofp::queue::QueueProp;
        self.queues
            .iter()
            .map(|q| {
                let mut properties = Vec::new();
                if let Some(r) = q.spec.min_rate {
                    properties.push(QueueProp::MinRate(per_mille(r, self.speed)));
                }
                if let Some(r) = q.spec.max_rate {
                    properties.push(QueueProp::MaxRate(per_mille(r, self.speed)));
                }
                ofp::queue::PacketQueue {
                    queue_id: q.spec.id,
                    port,
                    properties,
                }
            })
            .collect()
    }
}

/// `rate` in tenths of a percent of `speed` (at most 1000).
pub fn per_mille(rate: u64, speed: u64) -> u16 {
    if speed == 0 {
        return 1000;
    }
    let v = u128::from(rate) * 1000 / u128::from(speed);
    v.min(1000) as u16
}

/// The skb priority that selects queue `id`'s htb class `1:id+1`.
pub fn priority(id: u32) -> u32 {
    0x0001_0000 | (id + 1)
}

/// Checks a port's queues against its speed; the error says which queue
/// and why.
pub fn check(specs: &[QueueSpec], speed: u64) -> Result<(), String> {
    let mut ids = std::collections::BTreeSet::new();
    let mut min_sum: u64 = 0;
    for q in specs {
        if q.id > MAX_QUEUE_ID {
            return Err(format!(
                "queue {}: queue ids go from 0 to {MAX_QUEUE_ID}",
                q.id
            ));
        }
        if !ids.insert(q.id) {
            return Err(format!("queue {}: configured twice", q.id));
        }
        for (what, r) in [("min_rate", q.min_rate), ("max_rate", q.max_rate)] {
            match r {
                Some(0) => return Err(format!("queue {}: {what} must be above 0", q.id)),
                Some(r) if r > speed => {
                    return Err(format!(
                        "queue {}: {what} {} is above the port's speed {}",
                        q.id,
                        format_rate(r),
                        format_rate(speed)
                    ))
                }
                _ => {}
            }
        }
        if let (Some(lo), Some(hi)) = (q.min_rate, q.max_rate) {
            if lo > hi {
                return Err(format!(
                    "queue {}: min_rate {} is above its max_rate {}",
                    q.id,
                    format_rate(lo),
                    format_rate(hi)
                ));
            }
        }
        min_sum = min_sum.saturating_add(q.min_rate.unwrap_or(0));
    }
    if min_sum > speed {
        return Err(format!(
            "the queues' min rates add up to {}, above the port's speed {}",
            format_rate(min_sum),
            format_rate(speed)
        ));
    }
    Ok(())
}

/// The speed of interface `name` from sysfs (Mbit/s there), if it reports
/// one.
pub fn interface_speed(name: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{name}/speed")).ok()?;
    let mbit: i64 = s.trim().parse().ok()?;
    u64::try_from(mbit)
        .ok()
        .filter(|m| *m > 0)
        .map(|m| m * 1_000_000)
}

/// The htb qdisc of one interface (module comment), removed when dropped.
#[derive(Debug)]
pub struct Htb {
    interface: String,
}

fn tc(args: &[&str]) -> Result<(), String> {
    let out = Command::new("tc")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run tc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "tc {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Htb {
    /// Replaces the root qdisc of `interface` by an htb with one class per
    /// queue (queue 0's class is always there).
    pub fn install(interface: &str, speed: u64, specs: &[QueueSpec]) -> Result<Htb, String> {
        let dev = interface;
        tc(&[
            "qdisc", "replace", "dev", dev, "root", "handle", "1:", "htb", "default", "1",
        ])?;
        let guard = Htb {
            interface: interface.to_string(),
        };
        let speed_s = format!("{speed}bit");
        let parent = format!("1:{PARENT_MINOR:x}");
        tc(&[
            "class", "replace", "dev", dev, "parent", "1:", "classid", &parent, "htb", "rate",
            &speed_s, "ceil", &speed_s,
        ])?;
        let default = QueueSpec {
            id: 0,
            min_rate: None,
            max_rate: None,
        };
        let q0 = specs.iter().find(|q| q.id == 0).copied().unwrap_or(default);
        for q in std::iter::once(&q0).chain(specs.iter().filter(|q| q.id != 0)) {
            let rate = format!("{}bit", q.min_rate.unwrap_or(NO_MIN_RATE));
            let ceil = format!("{}bit", q.max_rate.unwrap_or(speed));
            let class = format!("1:{:x}", q.id + 1);
            tc(&[
                "class", "replace", "dev", dev, "parent", &parent, "classid", &class, "htb",
                "rate", &rate, "ceil", &ceil,
            ])?;
        }
        Ok(guard)
    }
}

impl Drop for Htb {
    fn drop(&mut self) {
        // The interface may be gone already (then so is the qdisc).
        let _ = tc(&["qdisc", "del", "dev", &self.interface, "root"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(id: u32, min: Option<u64>, max: Option<u64>) -> QueueSpec {
        QueueSpec {
            id,
            min_rate: min,
            max_rate: max,
        }
    }

    #[test]
    fn check_refuses_rates_above_the_speed_and_duplicates() {
        let g = 1_000_000_000;
        check(&[q(1, Some(10_000_000), Some(50_000_000))], g).unwrap();
        let e = check(&[q(1, None, Some(2 * g))], g).unwrap_err();
        assert_eq!(e, "queue 1: max_rate 2G is above the port's speed 1G");
        let e = check(&[q(2, Some(60), Some(50))], g).unwrap_err();
        assert!(e.contains("min_rate 60 is above its max_rate 50"), "{e}");
        let e = check(&[q(1, None, None), q(1, None, None)], g).unwrap_err();
        assert_eq!(e, "queue 1: configured twice");
        let e = check(&[q(MAX_QUEUE_ID + 1, None, None)], g).unwrap_err();
        assert!(e.contains("queue ids go from 0"), "{e}");
        let e = check(&[q(1, Some(g), None), q(2, Some(1), None)], g).unwrap_err();
        assert!(e.contains("add up to"), "{e}");
        let e = check(&[q(1, Some(0), None)], g).unwrap_err();
        assert!(e.contains("above 0"), "{e}");
    }

    #[test]
    fn config_reply_rates_are_tenths_of_a_percent() {
        use ofp::queue::QueueProp;
        let pq = PortQueues {
            speed: 100_000_000,
            queues: vec![Queue {
                spec: q(3, Some(10_000_000), Some(50_000_000)),
                counters: Arc::default(),
                added_at: 0,
            }],
        };
        let d = pq.describe(7);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].queue_id, 3);
        assert_eq!(d[0].port, 7);
        assert_eq!(
            d[0].properties,
            vec![QueueProp::MinRate(100), QueueProp::MaxRate(500)]
        );
        assert_eq!(priority(0), 0x1_0001);
        assert_eq!(priority(3), 0x1_0004);
    }
}
