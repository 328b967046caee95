//! `keyflow`: FlexForward's KeyFlow forwarding mode (issue 32).
//!
//! The controller gives every switch a local key (keys pairwise coprime)
//! and encodes a route as one global path id: the 48-bit destination MAC
//! read as a big-endian integer. A switch forwards to port
//! `path_id mod key`; by the Chinese remainder theorem one path id holds
//! every switch's port on the path. A remainder that is not a port of the
//! switch (0 is never one) cannot be forwarded: its fate is the caller's
//! (the OpenFlow table or a drop).
//!
//! [`output_port`] is the decision alone, for the switch's workers to
//! call; [`KeyFlowModule`] is the graph module. Module arguments: `key`
//! (>= 2) and `ports`; gate i is port `ports[i]`, gate n (n = number of
//! ports) the frames whose remainder is none of them.

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

/// The path id a frame carries (its destination MAC as an integer).
#[inline]
pub fn path_id(frame: &[u8]) -> Option<u64> {
    let mac = frame.get(0..6)?;
    Some(mac.iter().fold(0u64, |a, b| a << 8 | u64::from(*b)))
}

/// The remainder of the frame's path id by `key` (the output port, if the
/// switch has it); `None` for a runt frame or a key of 0.
#[inline]
pub fn output_port(frame: &[u8], key: u32) -> Option<u32> {
    let id = path_id(frame)?;
    id.checked_rem(u64::from(key)).map(|r| r as u32)
}

/// The graph module (module comment).
pub struct KeyFlowModule {
    key: u32,
    ports: Vec<u32>,
    pub forwarded: u64,
    pub not_a_port: u64,
}

pub fn new(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    let key = Args::need(args.u32("key"), "key")?;
    if key < 2 {
        return Err("argument `key` must be at least 2".into());
    }
    let ports = Args::need(args.u32_list("ports", u32::MAX as u64), "ports")?;
    if !ports.iter().any(|p| *p != 0 && *p < key) {
        return Err(format!("no port in `ports` is below the key {key}"));
    }
    Ok(Box::new(KeyFlowModule {
        key,
        ports,
        forwarded: 0,
        not_a_port: 0,
    }))
}

impl Module for KeyFlowModule {
    fn kind(&self) -> &'static str {
        "keyflow"
    }
    fn ogates(&self) -> usize {
        self.ports.len() + 1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        let n = self.ports.len();
        for (b, m) in batch.drain() {
            let gate = output_port(b.data(), self.key)
                .filter(|p| *p != 0)
                .and_then(|p| self.ports.iter().position(|x| *x == p));
            match gate {
                Some(g) => {
                    self.forwarded += 1;
                    out.emit(g, b, m);
                }
                None => {
                    self.not_a_port += 1;
                    out.emit(n, b, m);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::Meta;
    use crate::modules::testing::run;

    #[test]
    fn remainder_is_the_port() {
        // Path id 52: 52 mod 5 = 2, 52 mod 7 = 3, 52 mod 9 = 7.
        let mut f = vec![0, 0, 0, 0, 0, 52];
        f.extend_from_slice(&[0; 54]);
        assert_eq!(path_id(&f), Some(52));
        assert_eq!(output_port(&f, 5), Some(2));
        assert_eq!(output_port(&f, 7), Some(3));
        assert_eq!(output_port(&f, 9), Some(7));
        assert_eq!(output_port(&f, 0), None);
        assert_eq!(output_port(&f[..5], 5), None);
        let big = [0xff; 6];
        assert_eq!(path_id(&big), Some((1 << 48) - 1));
    }

    #[test]
    fn module_gates() {
        let args = Args::parse("key = 7\nports = [1, 2, 3]").unwrap();
        let mut env = Env::new(Default::default());
        let mut m = new(&args, &mut env).unwrap();
        let f = |id: u8| [0, 0, 0, 0, 0, id, 8, 0];
        let (a, b, c) = (f(9), f(14), f(13));
        let (gates, _) = run(
            m.as_mut(),
            0,
            &[
                (&a, Meta::received(1)),
                (&b, Meta::received(1)),
                (&c, Meta::received(1)),
            ],
        );
        let counts: Vec<usize> = gates.iter().map(Vec::len).collect();
        assert_eq!(
            counts,
            [0, 1, 0, 2],
            "9 -> 2; 14 -> 0 and 13 -> 6: not ports"
        );
        assert!(new(&Args::parse("key = 1\nports = [1]").unwrap(), &mut env).is_err());
        assert!(new(&Args::parse("key = 3\nports = [3, 4]").unwrap(), &mut env).is_err());
    }
}
