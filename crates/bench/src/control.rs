//! The controller endpoint the switch under test talks to.
//!
//! The bench plays the controller: it listens (or connects to a passive
//! switch), exchanges HELLO (OpenFlow 1.3 only) and FEATURES, then hands the
//! connection to a reader thread. The reader frames and decodes messages,
//! stamps each with the time it was read, answers ECHO_REQUEST itself and
//! pushes everything else into the run's event channel. Writes go through a
//! mutex shared with the reader (for echo replies) so frames never
//! interleave.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ofp::header::frame_len;
use ofp::message::{Echo, FeaturesReply, Hello, Message};
use ofp::OfpMessage;

use crate::bail;
use crate::error::{BenchError, Context, Result};
use crate::experiment::{now_ns, BulkSend, Event};

/// An established OpenFlow connection to the switch under test.
pub struct ControlConn {
    writer: Arc<Mutex<TcpStream>>,
    next_xid: u32,
    pub features: FeaturesReply,
    reader: Option<JoinHandle<()>>,
}

/// Read one whole OpenFlow message (blocking, with the stream's timeout).
fn read_msg(s: &mut TcpStream, buf: &mut Vec<u8>) -> Result<OfpMessage> {
    loop {
        if let Some(n) = frame_len(buf).map_err(|e| BenchError(format!("bad frame: {e}")))? {
            if buf.len() >= n {
                let frame: Vec<u8> = buf.drain(..n).collect();
                return OfpMessage::decode(&frame).ctx("cannot decode message from switch");
            }
        }
        let mut tmp = [0u8; 65536];
        let k = s.read(&mut tmp).ctx("reading from switch")?;
        if k == 0 {
            bail!("switch closed the control connection");
        }
        buf.extend_from_slice(&tmp[..k]);
    }
}

fn write_msg(s: &mut TcpStream, m: &OfpMessage) -> Result<()> {
    s.write_all(&m.encode()).ctx("writing to switch")
}

/// Accept one switch connection on `listener` within `timeout`.
pub fn accept(listener: &TcpListener, timeout: Duration) -> Result<TcpStream> {
    listener.set_nonblocking(true)?;
    let deadline = Instant::now() + timeout;
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false)?;
                return Ok(s);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() > deadline {
                    bail!(
                        "the switch did not connect to the bench controller at {} within {timeout:?}",
                        listener.local_addr().map(|a| a.to_string()).unwrap_or_default()
                    );
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

impl ControlConn {
    /// HELLO + FEATURES on a fresh stream, then start the reader thread.
    pub fn establish(mut s: TcpStream, events: Sender<Event>) -> Result<ControlConn> {
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        write_msg(&mut s, &OfpMessage::new(1, Message::Hello(Hello::ofp13())))?;
        let mut buf = Vec::new();
        let hello = read_msg(&mut s, &mut buf)?;
        match &hello.body {
            Message::Hello(h) if h.version >= 4 || h.supports(4) => {}
            other => bail!("switch did not answer HELLO with OpenFlow 1.3 (got {other:?})"),
        }
        write_msg(&mut s, &OfpMessage::new(2, Message::FeaturesRequest))?;
        let features = loop {
            let m = read_msg(&mut s, &mut buf)?;
            match m.body {
                Message::FeaturesReply(f) => break f,
                Message::EchoRequest(e) => {
                    write_msg(&mut s, &OfpMessage::new(m.xid, Message::EchoReply(e)))?
                }
                Message::Error(e) => bail!("switch answered FEATURES_REQUEST with {e:?}"),
                _ => {}
            }
        };
        s.set_read_timeout(None)?;
        let writer = Arc::new(Mutex::new(s.try_clone()?));
        let w2 = Arc::clone(&writer);
        let reader = std::thread::Builder::new()
            .name("bench-ctl-rx".into())
            .spawn(move || reader_loop(s, buf, w2, events))?;
        Ok(ControlConn {
            writer,
            next_xid: 0x100,
            features,
            reader: Some(reader),
        })
    }

    fn xid(&mut self) -> u32 {
        self.next_xid = self.next_xid.wrapping_add(1).max(0x100);
        self.next_xid
    }

    pub fn send(&mut self, body: Message) -> Result<u32> {
        let xid = self.xid();
        let bytes = OfpMessage::new(xid, body).encode();
        let mut w = self
            .writer
            .lock()
            .map_err(|_| BenchError::new("writer poisoned"))?;
        w.write_all(&bytes).ctx("writing to switch")?;
        Ok(xid)
    }

    /// Encode all, write in chunks of about 64 KiB.
    pub fn send_bulk(&mut self, bodies: Vec<Message>) -> Result<BulkSend> {
        let mut xids = Vec::with_capacity(bodies.len());
        let mut chunks: Vec<Vec<u8>> = vec![Vec::with_capacity(1 << 16)];
        for b in bodies {
            let xid = self.xid();
            xids.push(xid);
            let bytes = OfpMessage::new(xid, b).encode();
            let last = chunks.last_mut().expect("never empty");
            if last.len() + bytes.len() > 1 << 16 {
                chunks.push(bytes);
            } else {
                last.extend_from_slice(&bytes);
            }
        }
        let mut w = self
            .writer
            .lock()
            .map_err(|_| BenchError::new("writer poisoned"))?;
        let start_ns = now_ns();
        for c in &chunks {
            w.write_all(c).ctx("writing to switch")?;
        }
        let end_ns = now_ns();
        Ok(BulkSend {
            xids,
            start_ns,
            end_ns,
        })
    }
}

impl Drop for ControlConn {
    fn drop(&mut self) {
        if let Ok(w) = self.writer.lock() {
            let _ = w.shutdown(std::net::Shutdown::Both);
        }
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
    }
}

fn reader_loop(
    mut s: TcpStream,
    mut buf: Vec<u8>,
    writer: Arc<Mutex<TcpStream>>,
    events: Sender<Event>,
) {
    loop {
        match read_msg(&mut s, &mut buf) {
            Ok(m) => {
                let ts = now_ns();
                if let Message::EchoRequest(Echo { data }) = &m.body {
                    let reply =
                        OfpMessage::new(m.xid, Message::EchoReply(Echo { data: data.clone() }));
                    if let Ok(mut w) = writer.lock() {
                        let _ = w.write_all(&reply.encode());
                    }
                    continue;
                }
                if events.send(Event::Control(m, ts)).is_err() {
                    return;
                }
            }
            Err(e) => {
                let _ = events.send(Event::ControlLost(e.0));
                return;
            }
        }
    }
}
