//! `sink`: drops every packet, counting them (the buffers go back to the
//! worker's pool).

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

#[derive(Default)]
pub struct Sink {
    pub packets: u64,
    pub bytes: u64,
}

pub fn new(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Sink::default()))
}

impl Module for Sink {
    fn kind(&self) -> &'static str {
        "sink"
    }
    fn ogates(&self) -> usize {
        0
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, _) in batch.drain() {
            self.packets += 1;
            self.bytes += b.len() as u64;
            out.recycle(b);
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("packets", self.packets), ("bytes", self.bytes)]
    }
}
