//! `port_inc`: a task that receives a batch from one receive queue of a
//! port and emits it on gate 0, with `in_port` set to the port's number.
//!
//! Arguments: `port` (name in the worker's [`Env`]), `queue` (receive
//! queue, default 0), `timestamp` (write the receive time into the
//! `timestamp` attribute, 8 bytes, for `measure`; default false).
//!
//! The module keeps [`BATCH`] receive buffers, taken from the worker's pool
//! (so they hold the pool's frame length); the received ones leave with
//! their packets (the whole vector at once, `Emit::emit_first`) and the
//! next run tops the buffers up from the pool.

use crate::batch::{Batch, Meta, BATCH};
use crate::metadata::{Access, Attr, AttrDecl, Layout};
use crate::module::{Ctx, Emit, Module, Task, Usage};
use crate::registry::{Args, Env};
use packet::PacketBuf;
use ports::PortRx;

pub struct PortInc {
    no: u32,
    /// `None` once given back to the environment.
    rx: Option<Box<dyn PortRx>>,
    /// Where `rx` came from: (port name, queue).
    source: Option<(String, usize)>,
    bufs: Vec<PacketBuf>,
    stamp: Option<Attr>,
    want_stamp: bool,
    pub errors: u64,
}

pub fn new(args: &Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let port = Args::need(args.str("port"), "port")?;
    let queue = args.u64("queue")?.unwrap_or(0) as usize;
    let want_stamp = args.bool("timestamp")?.unwrap_or(false);
    let (no, rx) = env.take_rx(port, queue)?;
    let mut m = PortInc::new(no, rx, want_stamp);
    m.source = Some((port.to_string(), queue));
    Ok(Box::new(m))
}

impl PortInc {
    pub fn new(no: u32, rx: Box<dyn PortRx>, want_stamp: bool) -> PortInc {
        PortInc {
            no,
            rx: Some(rx),
            source: None,
            bufs: Vec::with_capacity(BATCH),
            stamp: None,
            want_stamp,
            errors: 0,
        }
    }
}

impl Module for PortInc {
    fn kind(&self) -> &'static str {
        "port_inc"
    }
    fn igates(&self) -> usize {
        0
    }
    fn ogates(&self) -> usize {
        1
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        if self.want_stamp {
            vec![AttrDecl::new("timestamp", 8, Access::Write)]
        } else {
            Vec::new()
        }
    }
    fn bind(&mut self, layout: &Layout) {
        self.stamp = if self.want_stamp {
            layout.get("timestamp")
        } else {
            None
        };
    }
    fn process(&mut self, _: &Ctx, _: usize, _: &mut Batch, _: &mut Emit) {}
    fn task(&mut self) -> Option<&mut dyn Task> {
        Some(self)
    }
    fn port(&self) -> Option<&str> {
        self.source.as_ref().map(|(name, _)| name.as_str())
    }

    fn release(&mut self, env: &mut Env) {
        if let (Some(rx), Some((port, queue))) = (self.rx.take(), self.source.as_ref()) {
            env.return_rx(port, *queue, rx);
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("errors", self.errors)]
    }
    fn take_error(&mut self) {
        if let Some(rx) = &self.rx {
            let _ = rx.take_error();
        }
    }
}

impl Task for PortInc {
    fn run(&mut self, ctx: &Ctx, out: &mut Emit) -> Usage {
        let Some(rx) = self.rx.as_mut() else {
            return Usage::default();
        };
        out.pool.fill(&mut self.bufs, BATCH);
        let n = match rx.rx_batch(&mut self.bufs) {
            Ok(n) => n.min(self.bufs.len()),
            Err(_) => {
                self.errors += 1;
                0
            }
        };
        let bytes: usize = self.bufs.iter().take(n).map(PacketBuf::len).sum();
        let u = Usage {
            packets: n as u64,
            bits: bytes as u64 * 8,
            cycles: 0,
        };
        let mut meta = Meta::received(self.no);
        if let Some(a) = self.stamp {
            a.set_u64(&mut meta, ctx.now);
        }
        out.emit_first(0, &mut self.bufs, n, meta);
        u
    }
}
