//! oxflow's experimenter requests that change the switch's ports and
//! queues at run time (`oxflow ctl add-port / del-port / set-queue /
//! del-queue`), under [`crate::experimenter::OXFLOW_EXPERIMENTER`].
//!
//! Each is an `ofp_experimenter_multipart_header` request (so it has a
//! reply that says what was done) with one of the [`exp_type`]s below;
//! all numbers big-endian:
//!
//! ```text
//! ADD_PORT   request: port_no u32 (0: the switch picks), interface name (UTF-8, rest)
//!            reply:   port_no u32, 4 pad
//! DEL_PORT   request: port_no u32 (0: by name), port name (UTF-8, rest; empty with a number)
//!            reply:   port_no u32, 4 pad
//! SET_QUEUE  request: port_no u32, queue_id u32, min_rate u64, max_rate u64
//!            (bit/s; 0: not set)                            reply: empty
//! DEL_QUEUE  request: port_no u32, queue_id u32             reply: empty
//! ```
//!
//! A request the switch refuses (no such interface, a rate above the
//! port's speed, ...) is answered by an OFPET_EXPERIMENTER error with the
//! request's `exp_type`, oxflow's experimenter id and the reason as UTF-8
//! text in its data ([`refusal`], [`refusal_text`]).

use crate::error::{BadRequestCode, DecodeError, ErrorCode, ErrorMsg};
use crate::experimenter::OXFLOW_EXPERIMENTER;
use crate::multipart::ExperimenterMultipart;
use crate::wire::{Reader, Writer};

/// The `exp_type`s of these requests.
pub mod exp_type {
    pub const ADD_PORT: u32 = 0x10;
    pub const DEL_PORT: u32 = 0x11;
    pub const SET_QUEUE: u32 = 0x12;
    pub const DEL_QUEUE: u32 = 0x13;
}

/// One request (module comment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortAdmin {
    AddPort {
        port_no: u32,
        interface: String,
    },
    DelPort {
        port_no: u32,
        name: String,
    },
    SetQueue {
        port_no: u32,
        queue_id: u32,
        min_rate: u64,
        max_rate: u64,
    },
    DelQueue {
        port_no: u32,
        queue_id: u32,
    },
}

impl PortAdmin {
    pub fn exp_type(&self) -> u32 {
        match self {
            PortAdmin::AddPort { .. } => exp_type::ADD_PORT,
            PortAdmin::DelPort { .. } => exp_type::DEL_PORT,
            PortAdmin::SetQueue { .. } => exp_type::SET_QUEUE,
            PortAdmin::DelQueue { .. } => exp_type::DEL_QUEUE,
        }
    }

    /// The request body.
    pub fn request(&self) -> ExperimenterMultipart {
        let mut data = Vec::new();
        match self {
            PortAdmin::AddPort { port_no, interface } => {
                data.put_u32(*port_no);
                data.put_bytes(interface.as_bytes());
            }
            PortAdmin::DelPort { port_no, name } => {
                data.put_u32(*port_no);
                data.put_bytes(name.as_bytes());
            }
            PortAdmin::SetQueue {
                port_no,
                queue_id,
                min_rate,
                max_rate,
            } => {
                data.put_u32(*port_no);
                data.put_u32(*queue_id);
                data.put_u64(*min_rate);
                data.put_u64(*max_rate);
            }
            PortAdmin::DelQueue { port_no, queue_id } => {
                data.put_u32(*port_no);
                data.put_u32(*queue_id);
            }
        }
        ExperimenterMultipart {
            experimenter: OXFLOW_EXPERIMENTER,
            exp_type: self.exp_type(),
            data,
        }
    }

    /// Decodes a request body: `None` if it is not one of these requests;
    /// a malformed one is BAD_REQUEST/BAD_LEN.
    pub fn parse(body: &ExperimenterMultipart) -> Option<Result<PortAdmin, DecodeError>> {
        if body.experimenter != OXFLOW_EXPERIMENTER {
            return None;
        }
        let t = body.exp_type;
        if !(exp_type::ADD_PORT..=exp_type::DEL_QUEUE).contains(&t) {
            return None;
        }
        let mut r = Reader::message(&body.data);
        let text = |b: &[u8]| {
            String::from_utf8(b.to_vec()).map_err(|_| {
                DecodeError::new(
                    ErrorCode::BadRequest(BadRequestCode::BadLen),
                    "port admin: name is not UTF-8",
                )
            })
        };
        Some((|| {
            Ok(match t {
                exp_type::ADD_PORT => PortAdmin::AddPort {
                    port_no: r.u32("add port: port_no")?,
                    interface: text(r.rest())?,
                },
                exp_type::DEL_PORT => PortAdmin::DelPort {
                    port_no: r.u32("del port: port_no")?,
                    name: text(r.rest())?,
                },
                exp_type::SET_QUEUE => {
                    let q = PortAdmin::SetQueue {
                        port_no: r.u32("set queue: port_no")?,
                        queue_id: r.u32("set queue: queue_id")?,
                        min_rate: r.u64("set queue: min_rate")?,
                        max_rate: r.u64("set queue: max_rate")?,
                    };
                    r.finish("set queue: len")?;
                    q
                }
                _ => {
                    let q = PortAdmin::DelQueue {
                        port_no: r.u32("del queue: port_no")?,
                        queue_id: r.u32("del queue: queue_id")?,
                    };
                    r.finish("del queue: len")?;
                    q
                }
            })
        })())
    }
}

/// The reply to `exp_type` carrying port number `port_no` (ADD_PORT,
/// DEL_PORT) or nothing (`None`: the queue requests).
pub fn reply(exp_type: u32, port_no: Option<u32>) -> ExperimenterMultipart {
    let mut data = Vec::new();
    if let Some(n) = port_no {
        data.put_u32(n);
        data.put_zeros(4);
    }
    ExperimenterMultipart {
        experimenter: OXFLOW_EXPERIMENTER,
        exp_type,
        data,
    }
}

/// The port number in an ADD_PORT / DEL_PORT reply.
pub fn reply_port(body: &ExperimenterMultipart) -> Option<u32> {
    let b = body.data.get(..4)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The error refusing a request of `exp_type`, with `why` as its text.
pub fn refusal(exp_type: u32, why: &str) -> ErrorMsg {
    ErrorMsg::Experimenter {
        exp_type: exp_type as u16,
        experimenter: OXFLOW_EXPERIMENTER,
        data: why.as_bytes().to_vec(),
    }
}

/// The text of a refusal made by [`refusal`], if `e` is one.
pub fn refusal_text(e: &ErrorMsg) -> Option<String> {
    match e {
        ErrorMsg::Experimenter {
            experimenter, data, ..
        } if *experimenter == OXFLOW_EXPERIMENTER => {
            Some(String::from_utf8_lossy(data).into_owned())
        }
        _ => None,
    }
}

/// Parses a rate in bit/s: a number with an optional decimal suffix k, M
/// or G (`"10M"`, `"1.5G"`, `"800k"`, `"2000000"`), optionally followed by
/// `bit` or `bps` (`"10Mbit"`).
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let bad = || {
        format!("bad rate \"{s}\" (expected bits per second: a number with an optional k, M or G suffix, e.g. \"10M\")")
    };
    let t = s.trim();
    let t = t
        .strip_suffix("bit")
        .or_else(|| t.strip_suffix("bps"))
        .unwrap_or(t);
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 || v * mult > 1e15 {
        return Err(bad());
    }
    Ok((v * mult).round() as u64)
}

/// A rate as people write it (`10M`, `1.5G`, `800k`).
pub fn format_rate(r: u64) -> String {
    let f = |v: f64, s: &str| {
        let t = format!("{v:.3}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        format!("{t}{s}")
    };
    if r >= 1_000_000_000 {
        f(r as f64 / 1e9, "G")
    } else if r >= 1_000_000 {
        f(r as f64 / 1e6, "M")
    } else if r >= 1_000 {
        f(r as f64 / 1e3, "k")
    } else {
        r.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        assert_eq!(parse_rate("10M").unwrap(), 10_000_000);
        assert_eq!(parse_rate("1.5G").unwrap(), 1_500_000_000);
        assert_eq!(parse_rate("800k").unwrap(), 800_000);
        assert_eq!(parse_rate("20Mbit").unwrap(), 20_000_000);
        assert_eq!(parse_rate("123").unwrap(), 123);
        for bad in ["", "M", "ten", "-1M", "1T", "1e30"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("bad rate"), "{bad}: {e}");
        }
        assert_eq!(format_rate(20_000_000), "20M");
        assert_eq!(format_rate(1_500_000_000), "1.5G");
        assert_eq!(format_rate(999), "999");
    }

    #[test]
    fn requests_round_trip() {
        for req in [
            PortAdmin::AddPort {
                port_no: 0,
                interface: "veth-h3".into(),
            },
            PortAdmin::DelPort {
                port_no: 7,
                name: String::new(),
            },
            PortAdmin::SetQueue {
                port_no: 2,
                queue_id: 1,
                min_rate: 10_000_000,
                max_rate: 0,
            },
            PortAdmin::DelQueue {
                port_no: 2,
                queue_id: 1,
            },
        ] {
            let body = req.request();
            assert_eq!(PortAdmin::parse(&body).unwrap().unwrap(), req);
        }
        let r = reply(exp_type::ADD_PORT, Some(9));
        assert_eq!(reply_port(&r), Some(9));
    }

    #[test]
    fn other_bodies_and_bad_lengths() {
        let mut w = crate::experimenter::WorkerStats::request();
        assert!(PortAdmin::parse(&w).is_none());
        w.exp_type = exp_type::SET_QUEUE;
        w.data = vec![0; 5];
        let e = PortAdmin::parse(&w).unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest(BadRequestCode::BadLen));
        let e = refusal(exp_type::ADD_PORT, "no such network interface \"x\"");
        assert_eq!(refusal_text(&e).unwrap(), "no such network interface \"x\"");
    }
}
