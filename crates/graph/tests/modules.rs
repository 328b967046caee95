//! The module trait through a graph: a module splitting a batch over two
//! gates, attributes written by one module and read by another at the
//! offsets the graph resolved, whole-batch forwarding, drops counted.

use graph::batch::Batch;
use graph::metadata::{Access, Attr, AttrDecl, Layout};
use graph::module::{Ctx, Emit, Module};
use graph::{Args, Env, FakeClock, Meta, Registry, Runtime};
use packet::PacketBuf;

/// Writes the first payload byte into the `tag` attribute (2 bytes), then
/// sends even tags out of gate 0 and odd ones out of gate 1.
#[derive(Default)]
struct Split {
    tag: Attr,
}

/// Reads `tag`, records it, and forwards the whole batch.
#[derive(Default)]
struct Check {
    tag: Attr,
    seen: Vec<u16>,
}

fn split(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Split::default()))
}

fn check(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Check::default()))
}

impl Module for Split {
    fn kind(&self) -> &'static str {
        "split"
    }
    fn ogates(&self) -> usize {
        2
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        vec![AttrDecl::new("tag", 2, Access::Write)]
    }
    fn bind(&mut self, l: &Layout) {
        self.tag = l.get("tag").unwrap_or_default();
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, mut m) in batch.drain() {
            let t = b.data().first().copied().unwrap_or(0);
            self.tag.set_u16(&mut m, u16::from(t));
            out.emit(usize::from(t % 2), b, m);
        }
    }
}

impl Module for Check {
    fn kind(&self) -> &'static str {
        "check"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        vec![AttrDecl::new("tag", 2, Access::Read)]
    }
    fn bind(&mut self, l: &Layout) {
        self.tag = l.get("tag").unwrap_or_default();
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (_, m) in batch.iter() {
            self.seen.push(self.tag.get_u16(m));
        }
        out.emit_all(0, batch);
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.seen.iter().map(|t| ("tag", u64::from(*t))).collect()
    }
}

const GRAPH: &str = r#"
[[module]]
name = "pad"
kind = "parse"
[[module]]
name = "split"
kind = "split"
[[module]]
name = "even"
kind = "check"
[[module]]
name = "odd"
kind = "pass"
[[module]]
name = "s0"
kind = "sink"
[[module]]
name = "s1"
kind = "sink"
[[connect]]
from = "pad"
to = "split"
[[connect]]
from = "split:0"
to = "even"
[[connect]]
from = "split:1"
to = "odd"
[[connect]]
from = "even"
to = "s0"
[[connect]]
from = "odd"
to = "s1"
"#;

#[test]
fn a_batch_splits_over_gates_and_attributes_travel_with_packets() {
    let mut reg = Registry::builtin();
    reg.register("split", split);
    reg.register("check", check);
    let mut rt = Runtime::from_config(
        GRAPH,
        "m.toml",
        &reg,
        &mut Env::default(),
        FakeClock::default(),
    )
    .unwrap();
    // `parse` writes two attributes first: `tag` lands after them.
    assert_eq!(rt.graph.layout().get("tag").map(|a| a.offset), Some(4));
    let slot = rt.graph.slot("pad").unwrap();
    let mut b = Batch::new();
    for i in 0..32u8 {
        b.push(PacketBuf::from_slice(&[i; 20]), Meta::received(1))
            .unwrap();
    }
    rt.graph.push(slot, 0, &mut b, &graph::Ctx::default());
    assert!(b.is_empty());
    let stats = |n: &str| rt.graph.stats(n).unwrap().packets;
    assert_eq!(
        (
            stats("split"),
            stats("even"),
            stats("odd"),
            stats("s0"),
            stats("s1")
        ),
        (32, 16, 16, 16, 16)
    );
    let tags: Vec<u64> = rt
        .graph
        .module("even")
        .unwrap()
        .counters()
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(tags, (0..32).step_by(2).collect::<Vec<u64>>());
    // The same read on a path where nothing writes `tag` is refused at
    // run time and leaves the graph as it was.
    let before = rt.graph.names();
    let add = |name: &str, kind: &str| graph::Change::AddModule {
        name: name.into(),
        kind: kind.into(),
        args: toml::Table::new(),
    };
    let connect = |from: &str, to: &str| graph::Change::Connect {
        from: from.into(),
        to: to.into(),
    };
    let disconnect = graph::Change::Disconnect { from: "pad".into() };
    let e = rt
        .apply(
            &[
                add("c2", "check"),
                disconnect.clone(),
                connect("pad", "c2"),
                connect("c2", "split"),
            ],
            &reg,
            &mut Env::default(),
        )
        .unwrap_err();
    assert!(
        e.reason.contains("module `c2` reads attribute `tag`"),
        "{e}"
    );
    assert_eq!(rt.graph.names(), before);
    // Behind a writer it is accepted.
    rt.apply(
        &[
            add("split2", "split"),
            add("c2", "check"),
            disconnect,
            connect("pad", "split2"),
            connect("split2:0", "c2"),
            connect("split2:1", "s1"),
            connect("c2", "split"),
        ],
        &reg,
        &mut Env::default(),
    )
    .unwrap();
    assert!(rt.graph.names().contains(&"c2".to_string()));
}
