//! `port_out`: transmits every packet on one port (a transmit handle of
//! its own, no lock); what the device does not take is counted by the port.
//!
//! Argument: `port` (name in the worker's [`Env`]).

use crate::batch::{Batch, BATCH};
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};
use ports::PortTx;

pub struct PortOut {
    tx: Box<dyn PortTx>,
    /// The port's name in the environment (`None`: built directly).
    name: Option<String>,
    pub sent: u64,
    pub errors: u64,
}

pub fn new(args: &Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let port = Args::need(args.str("port"), "port")?;
    let (_, tx) = env.tx(port)?;
    let mut m = PortOut::new(tx);
    m.name = Some(port.to_string());
    Ok(Box::new(m))
}

impl PortOut {
    pub fn new(tx: Box<dyn PortTx>) -> PortOut {
        PortOut {
            tx,
            name: None,
            sent: 0,
            errors: 0,
        }
    }
}

impl Module for PortOut {
    fn kind(&self) -> &'static str {
        "port_out"
    }
    fn port(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn ogates(&self) -> usize {
        0
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        {
            let mut slices: [&[u8]; BATCH] = [&[]; BATCH];
            for (s, b) in slices.iter_mut().zip(batch.bufs()) {
                *s = b.data();
            }
            let n = batch.len().min(BATCH);
            match self.tx.tx_batch(&slices[..n]) {
                Ok(k) => self.sent += k as u64,
                Err(_) => self.errors += 1,
            }
        }
        out.recycle_all(batch);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("sent", self.sent), ("errors", self.errors)]
    }
}
