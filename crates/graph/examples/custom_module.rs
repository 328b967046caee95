//! How to add a module: a `mac_filter` that drops frames from one source
//! address and counts them, registered under its name and used from a
//! configuration. Run with `cargo run -p graph --example custom_module`.
//! (The walkthrough is in this crate's README.)

use graph::batch::Batch;
use graph::module::{Ctx, Emit, Module};
use graph::{Args, Env, FakeClock, Meta, Registry, Runtime};
use packet::PacketBuf;

/// Step 1: the module's state.
struct MacFilter {
    blocked: [u8; 6],
    dropped: u64,
}

/// Step 2: a constructor from its arguments (`block = "02:00:00:00:00:01"`).
fn new(args: &Args, _env: &mut Env) -> Result<Box<dyn Module>, String> {
    let text = Args::need(args.str("block"), "block")?;
    let mut blocked = [0u8; 6];
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() != 6 {
        return Err(format!("`{text}` is not a MAC address"));
    }
    for (b, p) in blocked.iter_mut().zip(parts) {
        *b = u8::from_str_radix(p, 16).map_err(|_| format!("`{text}` is not a MAC address"))?;
    }
    Ok(Box::new(MacFilter {
        blocked,
        dropped: 0,
    }))
}

/// Step 3: the trait: gates, (attributes: none here), one batch call.
impl Module for MacFilter {
    fn kind(&self) -> &'static str {
        "mac_filter"
    }

    fn ogates(&self) -> usize {
        1
    }

    fn process(&mut self, _ctx: &Ctx, _igate: usize, batch: &mut Batch, out: &mut Emit) {
        for (buf, meta) in batch.drain() {
            if buf.data().get(6..12) == Some(&self.blocked[..]) {
                self.dropped += 1;
                out.drop_packet(buf);
            } else {
                out.emit(0, buf, meta);
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("dropped", self.dropped)]
    }
}

const CONFIG: &str = r#"
[[module]]
name = "filter"
kind = "mac_filter"
block = "02:00:00:00:00:01"

[[module]]
name = "count"
kind = "sink"

[[connect]]
from = "filter"
to = "count"
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Step 4: register the kind, then build graphs that use it.
    let mut reg = Registry::builtin();
    reg.register("mac_filter", new);
    let mut rt = Runtime::from_config(
        CONFIG,
        "example.toml",
        &reg,
        &mut Env::default(),
        FakeClock::default(),
    )?;

    // Push a batch in by hand (in a switch, a `port_inc` task makes it).
    let mut batch = Batch::new();
    for src in [1u8, 2, 1, 3] {
        let frame = [[0xff; 6], [2, 0, 0, 0, 0, src]].concat();
        let _ = batch.push(PacketBuf::from_slice(&frame), Meta::received(1));
    }
    let slot = rt.graph.slot("filter").ok_or("no filter")?;
    rt.graph.push(slot, 0, &mut batch, &Ctx::default());

    let passed = rt.graph.stats("count").map(|s| s.packets).unwrap_or(0);
    let dropped = rt.graph.stats("filter").map(|s| s.dropped).unwrap_or(0);
    println!("passed {passed}, dropped {dropped}");
    assert_eq!((passed, dropped), (2, 2));
    Ok(())
}
