//! A blocking OpenFlow 1.3 client connection.
//!
//! [`Connection::connect`] opens `tcp:IP[:PORT]`, `ssl:IP[:PORT]` or
//! `unix:PATH`, exchanges
//! HELLO and checks that the switch speaks OpenFlow 1.3. Requests get
//! increasing xids; [`Connection::recv`] answers ECHO_REQUEST itself so that
//! long waits (monitor) keep the channel up. Multipart replies spanning
//! several messages (REPLY_MORE) are merged with `ofp`'s assembler.
//! Modifications are followed by a BARRIER; every OFPT_ERROR that comes back
//! before the barrier reply is reported with the request it refers to.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use ofp::error::ErrorMsg;
use ofp::header::{frame_len, OFP_VERSION};
use ofp::message::{Echo, Hello, Message};
use ofp::multipart::{
    MultipartAssembler, MultipartReply, MultipartReplyBody, MultipartRequest, MultipartRequestBody,
};
use ofp::{DecodeError, OfpMessage};

/// Where the switch listens (ovs-ofctl's TARGET syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `tcp:HOST[:PORT]` (default port 6653).
    Tcp(String),
    /// `unix:PATH`.
    Unix(String),
    /// `ssl:HOST[:PORT]` (default port 6653): TLS over TCP with the
    /// command line's certificates (`crate::tls`).
    Ssl(String),
}

/// `HOST[:PORT]` with the default OpenFlow port added when none is given
/// (`IP`, `IP:PORT`, `[IPv6]:PORT`).
fn with_port(rest: &str) -> String {
    let has_port = match rest.rsplit_once(':') {
        Some((host, port)) => {
            port.parse::<u16>().is_ok() && (!host.contains(':') || host.ends_with(']'))
        }
        None => false,
    };
    if has_port {
        rest.to_string()
    } else {
        format!("{rest}:{}", ofp::header::OFP_TCP_PORT)
    }
}

impl Target {
    pub fn parse(s: &str) -> Result<Target, String> {
        if let Some(rest) = s.strip_prefix("ssl:") {
            if rest.is_empty() {
                return Err(format!("{s}: missing address"));
            }
            Ok(Target::Ssl(with_port(rest)))
        } else if let Some(rest) = s.strip_prefix("tcp:") {
            if rest.is_empty() {
                return Err(format!("{s}: missing address"));
            }
            // `tcp:IP` or `tcp:IP:PORT`; IPv6 as `tcp:[::1]:PORT`.
            Ok(Target::Tcp(with_port(rest)))
        } else if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("{s}: missing path"));
            }
            Ok(Target::Unix(path.to_string()))
        } else {
            Err(format!(
                "{s}: unknown target (expected tcp:IP[:PORT], ssl:IP[:PORT] or unix:PATH)"
            ))
        }
    }
}

/// Why a client operation failed.
#[derive(Debug)]
pub enum ClientError {
    Io(io::Error),
    /// The switch sent bytes we cannot decode.
    Decode(DecodeError),
    /// The switch closed the connection.
    Closed,
    /// HELLO exchange failed (no common version, or no HELLO).
    Negotiation(String),
    /// The switch answered a request with OFPT_ERROR.
    Ofp {
        xid: u32,
        error: ErrorMsg,
    },
    /// A reply of an unexpected kind.
    Unexpected(Box<OfpMessage>),
    /// TLS setup or handshake failed (`ssl:` targets).
    Tls(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Io(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                write!(f, "timed out waiting for the switch")
            }
            ClientError::Io(e) => write!(f, "connection error: {e}"),
            ClientError::Decode(e) => write!(f, "cannot decode message from switch: {e}"),
            ClientError::Closed => write!(f, "connection closed by switch"),
            ClientError::Negotiation(s) => write!(f, "version negotiation failed: {s}"),
            ClientError::Ofp { xid, error } => write!(
                f,
                "OFPT_ERROR: {} (xid={xid:#x})",
                crate::print::format_error_code(error)
            ),
            ClientError::Tls(e) => write!(f, "{e}"),
            ClientError::Unexpected(m) => {
                write!(f, "unexpected reply: {}", crate::print::format_message(m))
            }
        }
    }
}

impl std::error::Error for ClientError {}

impl From<io::Error> for ClientError {
    fn from(e: io::Error) -> Self {
        ClientError::Io(e)
    }
}

/// The byte stream under a connection.
enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    /// Boxed: the TLS state is large.
    Tls(Box<crate::tls::TlsStream>),
}

impl Stream {
    fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tls(s) => s.sock.set_read_timeout(t),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Largest merged multipart reply accepted (table features of 254 tables
/// from Open vSwitch exceed `ofp`'s 1 MiB default).
pub const MAX_REPLY_BYTES: usize = 64 << 20;

/// Default wait for a reply.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One OpenFlow 1.3 channel to a switch.
pub struct Connection {
    stream: Stream,
    /// Bytes received but not yet framed into a message.
    buf: Vec<u8>,
    next_xid: u32,
}

impl Connection {
    /// Connect and negotiate OpenFlow 1.3. `timeout` bounds the connect and
    /// every later wait for a reply (`None`: wait forever).
    pub fn connect(target: &Target, timeout: Option<Duration>) -> Result<Self, ClientError> {
        let tcp = |addr: &str| -> Result<TcpStream, ClientError> {
            let sa = addr.to_socket_addrs()?.next().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("{addr}: no address"))
            })?;
            let s = match timeout {
                Some(t) => TcpStream::connect_timeout(&sa, t)?,
                None => TcpStream::connect(sa)?,
            };
            s.set_nodelay(true)?;
            Ok(s)
        };
        let stream = match target {
            Target::Tcp(addr) => Stream::Tcp(tcp(addr)?),
            Target::Unix(path) => Stream::Unix(UnixStream::connect(path)?),
            Target::Ssl(addr) => {
                let cfg = crate::tls::configured().map_err(ClientError::Tls)?;
                let s = tcp(addr)?;
                // The handshake's reads are bounded by the timeout too.
                s.set_read_timeout(timeout)?;
                let host = addr.rsplit_once(':').map_or(addr.as_str(), |(h, _)| h);
                let tls = crate::tls::connect(cfg, s, host).map_err(ClientError::Tls)?;
                Stream::Tls(Box::new(tls))
            }
        };
        stream.set_read_timeout(timeout)?;
        let mut c = Connection {
            stream,
            buf: Vec::new(),
            next_xid: 1,
        };
        c.send(Message::Hello(Hello::ofp13()))?;
        match c.recv_raw()?.body {
            Message::Hello(h) if h.supports(OFP_VERSION) || h.version >= OFP_VERSION => Ok(c),
            Message::Hello(h) => Err(ClientError::Negotiation(format!(
                "switch offers version {:#x}, need 0x04 (OpenFlow 1.3)",
                h.version
            ))),
            other => Err(ClientError::Negotiation(format!(
                "expected HELLO, got message type {}",
                other.msg_type()
            ))),
        }
    }

    /// Change the reply timeout (`None`: wait forever, for `monitor`).
    pub fn set_timeout(&mut self, t: Option<Duration>) -> Result<(), ClientError> {
        Ok(self.stream.set_read_timeout(t)?)
    }

    /// The xid the next [`Self::send`] uses (a bundle add embeds it).
    pub fn peek_xid(&self) -> u32 {
        self.next_xid
    }

    /// Send a message with a fresh xid; returns the xid.
    pub fn send(&mut self, body: Message) -> Result<u32, ClientError> {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1).max(1);
        self.stream
            .write_all(&OfpMessage::new(xid, body).encode())?;
        Ok(xid)
    }

    /// Read one whole message (no echo handling).
    fn recv_raw(&mut self) -> Result<OfpMessage, ClientError> {
        loop {
            if let Some(len) = frame_len(&self.buf).map_err(ClientError::Decode)? {
                let frame: Vec<u8> = self.buf.drain(..len).collect();
                return OfpMessage::decode(&frame).map_err(ClientError::Decode);
            }
            let mut chunk = [0u8; 65536];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(ClientError::Closed);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Read the next message, answering echo requests on the way.
    pub fn recv(&mut self) -> Result<OfpMessage, ClientError> {
        loop {
            let m = self.recv_raw()?;
            if let Message::EchoRequest(Echo { data }) = &m.body {
                let reply = OfpMessage::new(m.xid, Message::EchoReply(Echo { data: data.clone() }));
                self.stream.write_all(&reply.encode())?;
                continue;
            }
            return Ok(m);
        }
    }

    /// Send a request and wait for the message answering it (same xid).
    /// An OFPT_ERROR for it becomes [`ClientError::Ofp`]; unrelated
    /// messages (async ones) are skipped.
    pub fn transact(&mut self, body: Message) -> Result<OfpMessage, ClientError> {
        let xid = self.send(body)?;
        loop {
            let m = self.recv()?;
            if m.xid != xid {
                continue;
            }
            if let Message::Error(error) = m.body {
                return Err(ClientError::Ofp { xid, error });
            }
            return Ok(m);
        }
    }

    /// Send a multipart request and collect the whole reply, merging parts
    /// flagged REPLY_MORE.
    pub fn multipart(
        &mut self,
        body: MultipartRequestBody,
    ) -> Result<(u32, MultipartReplyBody), ClientError> {
        let xid = self.send(Message::MultipartRequest(MultipartRequest::new(body)))?;
        let mut asm: MultipartAssembler<MultipartReply> = MultipartAssembler::new(MAX_REPLY_BYTES);
        loop {
            let m = self.recv()?;
            if m.xid != xid {
                continue;
            }
            match m.body {
                Message::MultipartReply(r) => {
                    if let Some(done) = asm.push(xid, r).map_err(ClientError::Decode)? {
                        return Ok((xid, done.body));
                    }
                }
                Message::Error(error) => return Err(ClientError::Ofp { xid, error }),
                other => {
                    return Err(ClientError::Unexpected(Box::new(OfpMessage::new(
                        xid, other,
                    ))))
                }
            }
        }
    }

    /// Send modifications, then a barrier; wait for the barrier reply and
    /// return every OFPT_ERROR that answered one of the modifications.
    pub fn send_mods(&mut self, mods: Vec<Message>) -> Result<Vec<(u32, ErrorMsg)>, ClientError> {
        let mut xids = Vec::with_capacity(mods.len());
        for m in mods {
            xids.push(self.send(m)?);
        }
        let barrier = self.send(Message::BarrierRequest)?;
        let mut errors = Vec::new();
        loop {
            let m = self.recv()?;
            match m.body {
                Message::BarrierReply if m.xid == barrier => return Ok(errors),
                Message::Error(e) if xids.contains(&m.xid) || m.xid == barrier => {
                    errors.push((m.xid, e))
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("tcp:127.0.0.1:6634").unwrap(),
            Target::Tcp("127.0.0.1:6634".into())
        );
        assert_eq!(
            Target::parse("tcp:127.0.0.1").unwrap(),
            Target::Tcp("127.0.0.1:6653".into())
        );
        assert_eq!(
            Target::parse("tcp:[::1]:99").unwrap(),
            Target::Tcp("[::1]:99".into())
        );
        assert_eq!(
            Target::parse("unix:/tmp/x").unwrap(),
            Target::Unix("/tmp/x".into())
        );
        assert_eq!(
            Target::parse("ssl:10.0.0.1").unwrap(),
            Target::Ssl("10.0.0.1:6653".into())
        );
        assert_eq!(
            Target::parse("ssl:[::1]:6634").unwrap(),
            Target::Ssl("[::1]:6634".into())
        );
        assert!(Target::parse("ssl:").is_err());
        assert!(Target::parse("br0").is_err());
        assert!(Target::parse("tcp:").is_err());
    }
}
