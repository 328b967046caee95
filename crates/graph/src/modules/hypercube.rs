//! `hypercube`: FlexForward's HyperCube forwarding mode (issue 32).
//!
//! Every switch is a node of a hypercube with a 32-bit address; the first
//! 32 bits of a frame's destination MAC (bytes 0..4, big endian) are the
//! destination node's address. `diff = dest ^ own`: zero means the frame
//! has reached its node (delivered to the configured local port); else the
//! frame goes to the neighbour whose address differs from the switch's in
//! one of the bits set in `diff`, trying the **lowest differing bit
//! first** (dimension-ordered "e-cube" routing, loop-free and the same
//! path every time) and, if the switch has no neighbour across that bit,
//! the next higher one. With no neighbour across any differing bit the
//! frame cannot be forwarded (its fate is the caller's: the OpenFlow table
//! or a drop).
//!
//! [`HyperCube`] is the decision alone, for the switch's workers to call;
//! [`HyperCubeModule`] is the graph module. Module arguments: `address`,
//! `neighbours` (their addresses) and `ports` (the port reaching each, same
//! order); gate i is neighbour i's port, gate n (n = number of
//! neighbours) the frames for this node, gate n + 1 those it cannot
//! forward. Each neighbour must differ from `address` in exactly one bit,
//! and no two in the same bit.

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

/// Where HyperCube sends a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// To the neighbour on this port.
    Port(u32),
    /// The frame is for this node.
    Local,
    /// No neighbour across any differing bit (or a runt frame).
    Unreachable,
}

/// Why a neighbour table is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableError {
    /// An address listed twice, or the node's own.
    Duplicate(u32),
    /// An address that does not differ from the node's in exactly one bit.
    NotNeighbour(u32),
}

/// A node's HyperCube state: its address and, per bit (dimension), the
/// port of the neighbour across it, 0 for none. Indexing by bit makes the
/// decision a few instructions: no search of the neighbour list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HyperCube {
    pub address: u32,
    by_bit: [u32; 32],
}

/// The destination node address a frame carries (first 32 bits of its
/// destination MAC).
#[inline]
pub fn dest_address(frame: &[u8]) -> Option<u32> {
    frame
        .get(0..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(u32::from_be_bytes)
}

impl HyperCube {
    /// The node `address` with `(neighbour address, port)` pairs; refused
    /// unless every neighbour differs in exactly one bit, once per bit.
    pub fn new(address: u32, neighbours: &[(u32, u32)]) -> Result<HyperCube, TableError> {
        let mut by_bit = [0u32; 32];
        let mut seen = 0u32;
        for &(a, port) in neighbours {
            let d = a ^ address;
            if d == 0 || seen & d != 0 {
                return Err(TableError::Duplicate(a));
            }
            if d.count_ones() != 1 {
                return Err(TableError::NotNeighbour(a));
            }
            seen |= d;
            by_bit[d.trailing_zeros() as usize] = port;
        }
        Ok(HyperCube { address, by_bit })
    }

    /// The next hop towards node `dest` (module comment: lowest differing
    /// bit first).
    #[inline]
    pub fn next_hop(&self, dest: u32) -> Hop {
        let mut diff = dest ^ self.address;
        if diff == 0 {
            return Hop::Local;
        }
        while diff != 0 {
            let bit = diff.trailing_zeros() as usize;
            match self.by_bit.get(bit) {
                Some(&p) if p != 0 => return Hop::Port(p),
                _ => diff &= diff - 1,
            }
        }
        Hop::Unreachable
    }

    /// The next hop of `frame`.
    #[inline]
    pub fn forward(&self, frame: &[u8]) -> Hop {
        dest_address(frame).map_or(Hop::Unreachable, |d| self.next_hop(d))
    }
}

/// The graph module (module comment).
pub struct HyperCubeModule {
    cube: HyperCube,
    /// Port of gate i.
    ports: Vec<u32>,
    pub forwarded: u64,
    pub local: u64,
    pub unreachable: u64,
}

pub fn new(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    let address = Args::need(args.u32("address"), "address")?;
    let addrs = args
        .u32_list("neighbours", u32::MAX as u64)?
        .unwrap_or_default();
    let ports = args.u32_list("ports", u32::MAX as u64)?.unwrap_or_default();
    if addrs.len() != ports.len() {
        return Err("`neighbours` and `ports` must have the same length".into());
    }
    let pairs: Vec<(u32, u32)> = addrs.into_iter().zip(ports.iter().copied()).collect();
    let cube = HyperCube::new(address, &pairs).map_err(|e| match e {
        TableError::Duplicate(a) => format!("neighbour address {a} listed twice or own"),
        TableError::NotNeighbour(a) => {
            format!("address {a} does not differ from {address} in exactly one bit")
        }
    })?;
    Ok(Box::new(HyperCubeModule {
        cube,
        ports,
        forwarded: 0,
        local: 0,
        unreachable: 0,
    }))
}

impl Module for HyperCubeModule {
    fn kind(&self) -> &'static str {
        "hypercube"
    }
    fn ogates(&self) -> usize {
        self.ports.len() + 2
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let n = self.ports.len();
        for (b, m) in batch.drain() {
            let gate = match self.cube.forward(b.data()) {
                Hop::Port(p) => {
                    self.forwarded += 1;
                    self.ports.iter().position(|x| *x == p).unwrap_or(n + 1)
                }
                Hop::Local => {
                    self.local += 1;
                    n
                }
                Hop::Unreachable => {
                    self.unreachable += 1;
                    n + 1
                }
            };
            out.emit(gate, b, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Meta;
    use crate::modules::testing::run;

    fn node5() -> HyperCube {
        // 5 = 101: neighbours 4 (bit 0), 7 (bit 1), 1 (bit 2).
        HyperCube::new(5, &[(4, 1), (7, 2), (1, 3)]).unwrap()
    }

    #[test]
    fn lowest_differing_bit_first() {
        let c = node5();
        assert_eq!(c.next_hop(5), Hop::Local);
        assert_eq!(c.next_hop(2), Hop::Port(1), "5^2 = 111: bit 0 first");
        assert_eq!(c.next_hop(3), Hop::Port(2), "5^3 = 110: bit 1");
        assert_eq!(c.next_hop(1), Hop::Port(3), "5^1 = 100: bit 2");
        assert_eq!(
            c.next_hop(0x14),
            Hop::Port(1),
            "5^0x14 = 0x11: bit 0 before bit 4"
        );
        assert_eq!(c.next_hop(0x25), Hop::Unreachable, "only bit 5 differs");
        assert_eq!(
            c.next_hop(0x35),
            Hop::Unreachable,
            "bits 4 and 5: no neighbours"
        );
    }

    #[test]
    fn missing_dimension_takes_the_next_bit() {
        let c = HyperCube::new(0, &[(2, 7)]).unwrap();
        assert_eq!(c.next_hop(3), Hop::Port(7));
        assert_eq!(c.next_hop(1), Hop::Unreachable);
    }

    #[test]
    fn bad_tables() {
        assert_eq!(
            HyperCube::new(5, &[(4, 1), (4, 2)]),
            Err(TableError::Duplicate(4))
        );
        assert_eq!(HyperCube::new(5, &[(5, 1)]), Err(TableError::Duplicate(5)));
        assert_eq!(
            HyperCube::new(5, &[(2, 1)]),
            Err(TableError::NotNeighbour(2))
        );
    }

    #[test]
    fn module_gates() {
        let args = Args::parse("address = 5\nneighbours = [4, 7, 1]\nports = [1, 2, 3]").unwrap();
        let mut env = Env::new(Default::default());
        let mut m = new(&args, &mut env).unwrap();
        let f = |addr: u32| {
            let mut v = addr.to_be_bytes().to_vec();
            v.extend_from_slice(&[0; 56]);
            v
        };
        let (a, b, c) = (f(3), f(5), f(0x25));
        let (gates, _) = run(
            m.as_mut(),
            0,
            &[
                (&a, Meta::received(9)),
                (&b, Meta::received(9)),
                (&c, Meta::received(9)),
                (&[1, 2], Meta::received(9)),
            ],
        );
        let counts: Vec<usize> = gates.iter().map(Vec::len).collect();
        assert_eq!(counts, [0, 1, 0, 1, 2]);
    }
}
