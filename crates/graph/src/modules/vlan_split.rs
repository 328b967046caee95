//! `vlan_split`: a trunk into logical ports by VLAN id. A frame whose
//! outer tag carries the i-th VLAN of `vlans` leaves on gate i with its
//! tag removed (unless `pop = false`) and `in_logical` set to the i-th
//! entry of `logical` (default: the VLAN id itself); every other frame
//! (untagged, or another VLAN) leaves on the last gate, `vlans.len()`,
//! unchanged.
//!
//! Arguments: `vlans` (list of VLAN ids), `logical` (list of port
//! numbers, same length), `pop` (default true).

use super::vlan::{outer_vid, pop_tag};
use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

pub struct VlanSplit {
    /// VLAN id -> gate (u16::MAX: none).
    gate_of: Box<[u16; 4096]>,
    logical: Vec<u32>,
    pop: bool,
}

pub fn new(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    let vlans = Args::need(args.u32_list("vlans", 4096), "vlans")?;
    let logical = args
        .u32_list("logical", u32::MAX as u64)?
        .unwrap_or_else(|| vlans.clone());
    if logical.len() != vlans.len() {
        return Err("`logical` must have one entry per VLAN of `vlans`".into());
    }
    let mut gate_of = Box::new([u16::MAX; 4096]);
    for (g, v) in vlans.iter().enumerate() {
        let slot = &mut gate_of[*v as usize];
        if *slot != u16::MAX {
            return Err(format!("VLAN {v} listed twice"));
        }
        *slot = g as u16;
    }
    Ok(Box::new(VlanSplit {
        gate_of,
        logical,
        pop: args.bool("pop")?.unwrap_or(true),
    }))
}

impl Module for VlanSplit {
    fn kind(&self) -> &'static str {
        "vlan_split"
    }
    fn ogates(&self) -> usize {
        self.logical.len() + 1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let other = self.logical.len();
        for (mut b, mut m) in batch.drain() {
            let gate = outer_vid(b.data())
                .and_then(|v| self.gate_of.get(v as usize).copied())
                .filter(|g| *g != u16::MAX)
                .map(usize::from);
            match gate {
                Some(g) => {
                    if self.pop {
                        pop_tag(&mut b);
                    }
                    m.in_logical = self.logical.get(g).copied().unwrap_or(m.in_port);
                    out.emit(g, b, m);
                }
                None => out.emit(other, b, m),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::Meta;
    use crate::modules::testing::run;
    use crate::registry::{Args, Env};

    fn tagged(vid: u8) -> Vec<u8> {
        let mut f = vec![0xaa; 12];
        f.extend_from_slice(&[0x81, 0x00, 0, vid, 0x08, 0x00, 1, 2]);
        f
    }

    #[test]
    fn splits_by_vlan_and_sets_the_logical_port() {
        let args = Args::parse("vlans = [10, 20]\nlogical = [101, 102]").unwrap();
        let mut m = super::new(&args, &mut Env::default()).unwrap();
        assert_eq!(m.ogates(), 3);
        let untagged = vec![0u8; 20];
        let (out, _) = run(
            &mut *m,
            0,
            &[
                (&tagged(20), Meta::received(1)),
                (&tagged(10), Meta::received(1)),
                (&tagged(30), Meta::received(1)),
                (&untagged, Meta::received(1)),
            ],
        );
        assert_eq!(out[0].len(), 1);
        assert_eq!(out[0][0].1.in_logical, 101);
        assert_eq!(out[0][0].1.in_port, 1);
        assert_eq!(out[0][0].0.len(), 16, "tag popped");
        assert_eq!(out[1][0].1.in_logical, 102);
        assert_eq!(out[2].len(), 2, "other VLAN and untagged on the last gate");
        assert_eq!(out[2][0].0, tagged(30));
        assert!(super::new(&Args::parse("vlans = [1, 1]").unwrap(), &mut Env::default()).is_err());
        assert!(super::new(
            &Args::parse("vlans = [1]\nlogical = []").unwrap(),
            &mut Env::default()
        )
        .is_err());
    }
}
