//! `pass`: forwards every packet unchanged out of gate 0 (a chain of them
//! measures what the framework itself costs per packet and module).

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

pub struct Pass;

pub fn new(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Pass))
}

impl Module for Pass {
    fn kind(&self) -> &'static str {
        "pass"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        out.emit_all(0, batch);
    }
}
