//! The arguments of `monitor`, as ovs-ofctl takes them:
//! `monitor TARGET [MISS_LEN] [invalid_ttl] [watch:...]`.
//!
//! - `MISS_LEN`: the miss_send_len the monitor's connection asks for
//!   (OFPT_SET_CONFIG), i.e. how many bytes of a packet a table-miss
//!   packet-in carries.
//! - `invalid_ttl`: also receive packet-ins with reason INVALID_TTL.
//!   OpenFlow 1.3 asks for them per connection with the asynchronous
//!   configuration (the switch-config flag of 1.1/1.2 is gone): the
//!   monitor reads its connection's configuration (OFPT_GET_ASYNC) and
//!   sets the INVALID_TTL bit of the master/equal packet-in mask
//!   (OFPT_SET_ASYNC).
//! - `watch:[...]`: flow monitoring is an OpenFlow 1.4 message
//!   (OFPMP_FLOW_MONITOR; Open vSwitch offers it to 1.3 as a Nicira
//!   extension), which an OpenFlow 1.3 switch does not have: refused with
//!   that reason rather than ignored.

use ofp::message::{packet_in_reason, AsyncConfig};

use crate::fields::parse_int;

/// What `monitor` was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MonitorArgs {
    pub miss_len: Option<u16>,
    pub invalid_ttl: bool,
}

/// Parses the words after the target.
pub fn parse_monitor_args(args: &[String]) -> Result<MonitorArgs, String> {
    let mut m = MonitorArgs::default();
    for a in args {
        if a.eq_ignore_ascii_case("invalid_ttl") {
            m.invalid_ttl = true;
        } else if a.starts_with("watch:") {
            return Err(format!(
                "monitor: {a}: flow monitoring (watch:) is an OpenFlow 1.4 feature \
                 (OFPMP_FLOW_MONITOR) that OpenFlow 1.3 switches do not have"
            ));
        } else if let Some(n) = parse_int(a) {
            if m.miss_len.is_some() {
                return Err(format!("monitor: miss length given twice (\"{a}\")"));
            }
            m.miss_len = Some(
                u16::try_from(n).map_err(|_| format!("monitor: miss length {a} is above 65535"))?,
            );
        } else {
            return Err(format!(
                "monitor: unknown argument \"{a}\" (expected MISS_LEN, invalid_ttl or watch:)"
            ));
        }
    }
    Ok(m)
}

/// The asynchronous configuration `cfg` with INVALID_TTL packet-ins on
/// for master/equal connections.
pub fn with_invalid_ttl(mut cfg: AsyncConfig) -> AsyncConfig {
    cfg.packet_in_mask[0] |= 1 << packet_in_reason::INVALID_TTL;
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[&str]) -> Result<MonitorArgs, String> {
        parse_monitor_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn arguments() {
        assert_eq!(p(&[]).unwrap(), MonitorArgs::default());
        assert_eq!(
            p(&["128", "invalid_ttl"]).unwrap(),
            MonitorArgs {
                miss_len: Some(128),
                invalid_ttl: true
            }
        );
        assert_eq!(p(&["0xffff"]).unwrap().miss_len, Some(0xffff));
        assert!(p(&["65536"]).unwrap_err().contains("above 65535"));
        assert!(p(&["1", "2"]).unwrap_err().contains("twice"));
        assert!(p(&["watch:"]).unwrap_err().contains("OpenFlow 1.4"));
        assert!(p(&["bogus"]).unwrap_err().contains("unknown argument"));
        let c = with_invalid_ttl(AsyncConfig {
            packet_in_mask: [0b11, 0],
            ..AsyncConfig::default()
        });
        assert_eq!(c.packet_in_mask, [0b111, 0]);
    }
}
