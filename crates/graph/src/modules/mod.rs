//! The built-in modules, one file each, and their registration.

pub mod hypercube;
pub mod keyflow;
pub mod l2_learning;
pub mod measure;
pub mod parse;
pub mod pass;
pub mod port_inc;
pub mod port_out;
pub mod queue;
pub mod rate_limit;
pub mod sink;
pub mod vlan;
pub mod vlan_split;

use crate::registry::Registry;

/// Registers every built-in kind.
pub fn register_all(r: &mut Registry) {
    r.register("pass", pass::new);
    r.register("sink", sink::new);
    r.register("port_inc", port_inc::new);
    r.register("port_out", port_out::new);
    r.register("queue", queue::new);
    r.register("rate_limit", rate_limit::new);
    r.register("measure", measure::new);
    r.register("parse", parse::new);
    r.register("vlan_split", vlan_split::new);
    r.register("vlan_push", vlan::new_push);
    r.register("vlan_pop", vlan::new_pop);
    r.register("l2_learning", l2_learning::new);
    r.register("hypercube", hypercube::new);
    r.register("keyflow", keyflow::new);
}

#[cfg(test)]
pub(crate) mod testing {
    //! Drives one module alone: a batch in, the per-gate batches out.
    use crate::batch::{Batch, Meta, Pool};
    use crate::module::{Ctx, Emit, Module};
    use packet::PacketBuf;

    /// What left each gate: (bytes, metadata) per packet.
    pub type Gates = Vec<Vec<(Vec<u8>, Meta)>>;

    pub fn run(m: &mut dyn Module, now: u64, pkts: &[(&[u8], Meta)]) -> (Gates, u64) {
        let mut b = Batch::new();
        for (d, meta) in pkts {
            let _ = b.push(PacketBuf::from_slice(d), *meta);
        }
        let mut gates: Vec<Batch> = (0..m.ogates()).map(|_| Batch::new()).collect();
        let mut pool = Pool::default();
        let mut dropped = 0;
        let ctx = Ctx { now, worker: 0 };
        m.process(
            &ctx,
            0,
            &mut b,
            &mut Emit::new(&mut gates, &mut pool, &mut dropped),
        );
        let out = gates
            .iter_mut()
            .map(|g| g.drain().map(|(p, m)| (p.data().to_vec(), m)).collect())
            .collect();
        (out, dropped)
    }
}
