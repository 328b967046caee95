//! Controller channel endpoints, written as Open vSwitch writes them:
//! - active (the switch connects): `tcp:IP:PORT`, `tls:IP:PORT`;
//! - passive (the switch listens): `ptcp:[PORT][:IP]`, `ptls:[PORT][:IP]`.
//!
//! The port defaults to 6653 (`OFP_TCP_PORT`); a passive endpoint without an
//! address listens on 127.0.0.1 only, never on a public address unless one is
//! written out. IPv6 addresses go in brackets: `tcp:[::1]:6653`,
//! `ptcp:6653:[::1]`.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;

use ofp::header::OFP_TCP_PORT;

/// Plain TCP or TLS over TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Tcp,
    Tls,
}

/// Which side opens the TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The switch connects to a controller.
    Active,
    /// The switch listens; controllers or `oxflow ctl` connect.
    Passive,
}

/// One parsed endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub transport: Transport,
    pub direction: Direction,
    pub addr: SocketAddr,
}

/// Why an endpoint string was refused; the message quotes the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad endpoint \"{input}\": {reason}")]
pub struct EndpointError {
    pub input: String,
    pub reason: String,
}

fn err(input: &str, reason: impl Into<String>) -> EndpointError {
    EndpointError {
        input: input.to_string(),
        reason: reason.into(),
    }
}

/// Split `HOST:PORT` where HOST may be `[v6]`.
fn split_host_port(s: &str) -> Option<(&str, &str)> {
    if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &rest[..end];
        let port = rest[end + 1..].strip_prefix(':')?;
        Some((host, port))
    } else {
        s.rsplit_once(':')
    }
}

fn parse_ip(input: &str, s: &str) -> Result<IpAddr, EndpointError> {
    let s = s
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .unwrap_or(s);
    IpAddr::from_str(s).map_err(|_| err(input, format!("\"{s}\" is not an IP address")))
}

fn parse_port(input: &str, s: &str) -> Result<u16, EndpointError> {
    s.parse::<u16>()
        .map_err(|_| err(input, format!("\"{s}\" is not a port number (0-65535)")))
}

impl Endpoint {
    pub fn is_passive(&self) -> bool {
        self.direction == Direction::Passive
    }
}

impl FromStr for Endpoint {
    type Err = EndpointError;

    fn from_str(input: &str) -> Result<Self, EndpointError> {
        let (scheme, rest) = input
            .split_once(':')
            .ok_or_else(|| err(input, "expected tcp:, tls:, ptcp: or ptls:"))?;
        let (transport, direction) = match scheme {
            "tcp" => (Transport::Tcp, Direction::Active),
            "tls" | "ssl" => (Transport::Tls, Direction::Active),
            "ptcp" => (Transport::Tcp, Direction::Passive),
            "ptls" | "pssl" => (Transport::Tls, Direction::Passive),
            other => {
                return Err(err(
                    input,
                    format!("unknown scheme \"{other}\" (expected tcp, tls, ptcp or ptls)"),
                ))
            }
        };
        let addr = match direction {
            Direction::Active => {
                // tcp:IP[:PORT]
                let (host, port) = match split_host_port(rest) {
                    Some((h, p)) if !h.contains(':') || rest.starts_with('[') => {
                        (h, parse_port(input, p)?)
                    }
                    _ => (rest, OFP_TCP_PORT),
                };
                if host.is_empty() {
                    return Err(err(input, "missing controller IP address"));
                }
                SocketAddr::new(parse_ip(input, host)?, port)
            }
            Direction::Passive => {
                // ptcp:[PORT][:IP]
                let (port, ip) = match rest.split_once(':') {
                    Some((p, ip)) => (p, Some(ip)),
                    None => (rest, None),
                };
                let port = if port.is_empty() {
                    OFP_TCP_PORT
                } else {
                    parse_port(input, port)?
                };
                let ip = match ip {
                    Some(ip) => parse_ip(input, ip)?,
                    None => IpAddr::V4(Ipv4Addr::LOCALHOST),
                };
                SocketAddr::new(ip, port)
            }
        };
        Ok(Endpoint {
            transport,
            direction,
            addr,
        })
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = match (self.direction, self.transport) {
            (Direction::Active, Transport::Tcp) => "tcp",
            (Direction::Active, Transport::Tls) => "tls",
            (Direction::Passive, Transport::Tcp) => "ptcp",
            (Direction::Passive, Transport::Tls) => "ptls",
        };
        let ip = match self.addr.ip() {
            IpAddr::V4(a) => a.to_string(),
            IpAddr::V6(a) => format!("[{a}]"),
        };
        match self.direction {
            Direction::Active => write!(f, "{scheme}:{ip}:{}", self.addr.port()),
            Direction::Passive => write!(f, "{scheme}:{}:{ip}", self.addr.port()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Endpoint {
        s.parse().unwrap()
    }

    #[test]
    fn active() {
        let e = p("tcp:10.0.0.1:6633");
        assert_eq!(e.transport, Transport::Tcp);
        assert_eq!(e.direction, Direction::Active);
        assert_eq!(e.addr, "10.0.0.1:6633".parse().unwrap());
        assert_eq!(p("tls:10.0.0.1").addr.port(), 6653);
        assert_eq!(p("tcp:[::1]:7").addr, "[::1]:7".parse().unwrap());
        assert_eq!(p("tcp:10.0.0.1:6633").to_string(), "tcp:10.0.0.1:6633");
    }

    #[test]
    fn passive() {
        let e = p("ptcp:6634:127.0.0.1");
        assert!(e.is_passive());
        assert_eq!(e.addr, "127.0.0.1:6634".parse().unwrap());
        // No address: loopback only.
        assert_eq!(p("ptcp:6634").addr, "127.0.0.1:6634".parse().unwrap());
        assert_eq!(p("ptcp:").addr, "127.0.0.1:6653".parse().unwrap());
        assert_eq!(p("ptls:6653:0.0.0.0").transport, Transport::Tls);
        assert_eq!(p("ptcp:1:[::1]").addr, "[::1]:1".parse().unwrap());
        assert_eq!(p("ptcp:6634:127.0.0.1").to_string(), "ptcp:6634:127.0.0.1");
    }

    #[test]
    fn errors() {
        let e = "udp:1.2.3.4:5".parse::<Endpoint>().unwrap_err();
        assert!(e.to_string().contains("unknown scheme \"udp\""), "{e}");
        let e = "tcp:1.2.3.4:99999".parse::<Endpoint>().unwrap_err();
        assert!(e.to_string().contains("\"99999\" is not a port"), "{e}");
        let e = "tcp:host.example:1".parse::<Endpoint>().unwrap_err();
        assert!(e.to_string().contains("not an IP address"), "{e}");
        assert!("ptcp:x".parse::<Endpoint>().is_err());
        assert!("6653".parse::<Endpoint>().is_err());
        assert!("tcp::1".parse::<Endpoint>().is_err());
    }
}
