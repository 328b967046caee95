//! `l2_learning`: the learning switch of standalone mode and of NORMAL.
//!
//! Gate i is the switch port `ports[i]`. For each frame: the source MAC is
//! learned on the frame's logical in_port (`in_logical`, which is the
//! physical port unless a `vlan_split` set it) in a data-plane table
//! shared by every worker ([`crate::state`]); a unicast destination known
//! and younger than the aging time goes out of its port's gate (or is
//! dropped if that is the ingress port); anything else floods: a copy
//! (from the worker's buffer pool) to every gate but the ingress one.
//! No lock and no allocation per frame once the pool is warm.
//!
//! [`Learner`] is the part without gates, for the OpenFlow module's NORMAL
//! output to reuse. Learning is per module table: for one learning domain
//! per VLAN, split the trunk (`vlan_split`) into one `l2_learning` per
//! VLAN, each with its own `table`.
//!
//! Arguments: `ports` (list of port numbers, one gate each), `table`
//! (name of the shared table, default "mac"), `slots` (table size, default
//! 16384: 1 MiB, room for about 8000 addresses), `aging_s` (default 300).

use crate::batch::{Batch, Meta};
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};
use crate::state::{Key, StateTable, Update};
use packet::PacketBuf;
use std::sync::Arc;

/// Default aging: 300 s, as most bridges.
pub const DEFAULT_AGING_NS: u64 = 300_000_000_000;

/// Where a frame goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dest {
    /// To this known port.
    Port(u32),
    /// Everywhere but the ingress port.
    Flood,
    /// Nowhere (a runt, or its known port is the ingress).
    Drop,
}

/// Learning and look-up over a shared table.
#[derive(Debug, Clone)]
pub struct Learner {
    pub table: Arc<StateTable>,
    pub aging: u64,
}

fn is_multicast(mac: &[u8; 6]) -> bool {
    mac[0] & 1 != 0
}

impl Learner {
    /// Learns from `frame` received on `in_port` at `now`, and decides.
    #[inline]
    pub fn forward(&self, in_port: u32, frame: &[u8], now: u64) -> Dest {
        let (Some(dst), Some(src)) = (
            frame.get(0..6).and_then(|s| <[u8; 6]>::try_from(s).ok()),
            frame.get(6..12).and_then(|s| <[u8; 6]>::try_from(s).ok()),
        ) else {
            return Dest::Drop;
        };
        if !is_multicast(&src) {
            let _: Update = self
                .table
                .update(Key::mac(src, 0), in_port, now, self.aging);
        }
        if is_multicast(&dst) {
            return Dest::Flood;
        }
        match self.table.lookup(Key::mac(dst, 0), now, self.aging) {
            Some((p, _)) if p == in_port => Dest::Drop,
            Some((p, _)) => Dest::Port(p),
            None => Dest::Flood,
        }
    }

    /// Forgets the addresses learned on `port` (its link went down); walks
    /// the table, so it is for the control side, not the packet path.
    pub fn flush_port(&self, port: u32) -> usize {
        self.table.remove_where(|p| p == port)
    }
}

pub struct L2Learning {
    learner: Learner,
    ports: Vec<u32>,
    pub forwarded: u64,
    pub flooded: u64,
    pub dropped: u64,
}

pub fn new(args: &Args, env: &mut Env) -> Result<Box<dyn Module>, String> {
    let ports = Args::need(args.u32_list("ports", u32::MAX as u64), "ports")?;
    if ports.is_empty() {
        return Err("`ports` must list at least one port".into());
    }
    let table = args.str("table")?.unwrap_or("mac");
    let slots = args.u64("slots")?.unwrap_or(16384) as usize;
    if !(8..=1 << 24).contains(&slots) {
        return Err("argument `slots` must be 8..=16777216".into());
    }
    let aging = args
        .u64("aging_s")?
        .map_or(DEFAULT_AGING_NS, |s| s.saturating_mul(1_000_000_000));
    let learner = Learner {
        table: env.shared.table(table, slots),
        aging,
    };
    Ok(Box::new(L2Learning::new(learner, ports)))
}

impl L2Learning {
    pub fn new(learner: Learner, ports: Vec<u32>) -> L2Learning {
        L2Learning {
            learner,
            ports,
            forwarded: 0,
            flooded: 0,
            dropped: 0,
        }
    }

    fn gate(&self, port: u32) -> Option<usize> {
        self.ports.iter().position(|p| *p == port)
    }

    fn flood(&mut self, b: PacketBuf, m: Meta, out: &mut Emit) {
        self.flooded += 1;
        let skip = self.gate(m.in_logical);
        let gates: usize = self.ports.len();
        let last = (0..gates).rev().find(|g| Some(*g) != skip);
        for g in 0..gates {
            if Some(g) == skip {
                continue;
            }
            if Some(g) == last {
                out.emit(g, b, m);
                return;
            }
            if let Some(copy) = out.pool.copy_of(b.data()) {
                out.emit(g, copy, m);
            }
        }
        // No gate but the ingress one.
        out.drop_packet(b);
    }
}

impl Module for L2Learning {
    fn kind(&self) -> &'static str {
        "l2_learning"
    }
    fn ogates(&self) -> usize {
        self.ports.len()
    }
    fn process(&mut self, ctx: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, m) in batch.drain() {
            match self.learner.forward(m.in_logical, b.data(), ctx.now) {
                Dest::Port(p) => match self.gate(p) {
                    Some(g) => {
                        self.forwarded += 1;
                        out.emit(g, b, m);
                    }
                    None => self.flood(b, m, out),
                },
                Dest::Flood => self.flood(b, m, out),
                Dest::Drop => {
                    self.dropped += 1;
                    out.drop_packet(b);
                }
            }
        }
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("forwarded", self.forwarded),
            ("flooded", self.flooded),
            ("dropped", self.dropped),
            ("table_full", self.learner.table.full()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::testing::run;

    fn frame(dst: u8, src: u8) -> Vec<u8> {
        let mut f = vec![2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x08, 0x00];
        f.resize(60, 0);
        f
    }

    fn module(aging_s: u64) -> Box<dyn Module> {
        let args = Args::parse(&format!("ports = [1, 2, 3]\naging_s = {aging_s}")).unwrap();
        new(&args, &mut Env::default()).unwrap()
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn learns_forwards_floods_and_ages() {
        let mut m = module(10);
        // Unknown destination: flood to every port but the ingress.
        let (out, _) = run(&mut *m, S, &[(&frame(0xb, 0xa), Meta::received(1))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![0, 1, 1]);
        assert_eq!(out[1][0].0, frame(0xb, 0xa));
        // The reply goes only to port 1, where 0xa was learned; 0xb is learned on 3.
        let (out, _) = run(&mut *m, 2 * S, &[(&frame(0xa, 0xb), Meta::received(3))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 0, 0]);
        let (out, _) = run(&mut *m, 3 * S, &[(&frame(0xb, 0xa), Meta::received(1))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![0, 0, 1]);
        // To the ingress port: dropped.
        let (out, dropped) = run(&mut *m, 3 * S, &[(&frame(0xb, 0xc), Meta::received(3))]);
        assert_eq!((out.iter().map(Vec::len).sum::<usize>(), dropped), (0, 1));
        // Broadcast floods; a moved host is relearned.
        let mut bc = frame(0, 0xb);
        bc[..6].copy_from_slice(&[0xff; 6]);
        let (out, _) = run(&mut *m, 4 * S, &[(&bc, Meta::received(2))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 0, 1]);
        let (out, _) = run(&mut *m, 4 * S, &[(&frame(0xb, 0xa), Meta::received(1))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![0, 1, 0]);
        // 0xb last seen at 4 s: at 15 s it has aged out and floods again.
        let (out, _) = run(&mut *m, 15 * S, &[(&frame(0xb, 0xa), Meta::received(1))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![0, 1, 1]);
        // Runts are dropped.
        let (_, dropped) = run(&mut *m, 15 * S, &[(&[1, 2, 3], Meta::received(1))]);
        assert_eq!(dropped, 1);
    }

    #[test]
    fn a_port_going_down_is_forgotten() {
        let l = Learner {
            table: Arc::new(StateTable::new(64)),
            aging: u64::MAX,
        };
        l.forward(1, &frame(0xb, 0xa), S);
        l.forward(2, &frame(0xa, 0xb), S);
        assert_eq!(l.forward(1, &frame(0xb, 0xa), S), Dest::Port(2));
        assert_eq!(l.flush_port(2), 1);
        assert_eq!(l.forward(1, &frame(0xb, 0xa), S), Dest::Flood);
        assert_eq!(l.forward(2, &frame(0xa, 0xb), S), Dest::Port(1));
    }

    #[test]
    fn workers_share_what_they_learn() {
        let mut env = Env::default();
        let args = Args::parse("ports = [1, 2]").unwrap();
        let mut a = new(&args, &mut env).unwrap();
        let mut b = new(&Args::parse("ports = [1, 2]").unwrap(), &mut env).unwrap();
        run(&mut *a, S, &[(&frame(0xb, 0xa), Meta::received(1))]);
        let (out, _) = run(&mut *b, S, &[(&frame(0xa, 0xb), Meta::received(2))]);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![1, 0]);
    }
}
