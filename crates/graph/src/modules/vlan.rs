//! `vlan_push` and `vlan_pop`: add an 802.1Q tag after the MAC addresses,
//! or remove the outer 802.1Q/802.1ad tag if there is one. The buffer's
//! headroom takes the 12 bytes that move, so the payload never moves.
//!
//! `vlan_push` arguments: `vid` (0..4095), `pcp` (0..7, default 0),
//! `tpid` (default 0x8100; 0x88a8 for a service tag).

use crate::batch::Batch;
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};
use packet::PacketBuf;

pub struct VlanPush {
    tag: [u8; 4],
    pub failed: u64,
}

pub struct VlanPop {
    pub popped: u64,
}

pub fn new_push(args: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    let vid = Args::need(args.u64("vid"), "vid")?;
    let pcp = args.u64("pcp")?.unwrap_or(0);
    let tpid = args.u64("tpid")?.unwrap_or(0x8100);
    if vid > 4095 || pcp > 7 || (tpid != 0x8100 && tpid != 0x88a8) {
        return Err("need vid 0..4095, pcp 0..7, tpid 0x8100 or 0x88a8".into());
    }
    Ok(Box::new(VlanPush::new(
        tpid as u16,
        (pcp << 13 | vid) as u16,
    )))
}

pub fn new_pop(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(VlanPop { popped: 0 }))
}

impl VlanPush {
    pub fn new(tpid: u16, tci: u16) -> VlanPush {
        let (t, c) = (tpid.to_be_bytes(), tci.to_be_bytes());
        VlanPush {
            tag: [t[0], t[1], c[0], c[1]],
            failed: 0,
        }
    }
}

/// Inserts `tag` after the MAC addresses.
pub fn push_tag(b: &mut PacketBuf, tag: [u8; 4]) -> bool {
    if b.len() < 12 {
        return false;
    }
    b.insert(12, 4).map(|g| g.copy_from_slice(&tag)).is_ok()
}

/// The outer tag's VLAN id, if the frame has one.
pub fn outer_vid(frame: &[u8]) -> Option<u16> {
    match frame.get(12..16)? {
        [0x81, 0x00, hi, lo] | [0x88, 0xa8, hi, lo] => {
            Some(u16::from_be_bytes([*hi, *lo]) & 0x0fff)
        }
        _ => None,
    }
}

/// Removes the outer tag; false if there is none.
pub fn pop_tag(b: &mut PacketBuf) -> bool {
    outer_vid(b.data()).is_some() && b.remove(12, 4).is_ok()
}

impl Module for VlanPush {
    fn kind(&self) -> &'static str {
        "vlan_push"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (mut b, m) in batch.drain() {
            if push_tag(&mut b, self.tag) {
                out.emit(0, b, m);
            } else {
                self.failed += 1;
                out.drop_packet(b);
            }
        }
    }
}

impl Module for VlanPop {
    fn kind(&self) -> &'static str {
        "vlan_pop"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, _) in batch.iter_mut() {
            if pop_tag(b) {
                self.popped += 1;
            }
        }
        out.emit_all(0, batch);
    }
}

#[cfg(test)]
mod tests {
    use crate::batch::Meta;
    use crate::modules::testing::run;
    use crate::registry::{Args, Env};

    #[test]
    fn push_then_pop() {
        let frame: Vec<u8> = (0..20).collect();
        let mut push = super::new_push(
            &Args::parse("vid = 10\npcp = 3").unwrap(),
            &mut Env::default(),
        )
        .unwrap();
        let (out, _) = run(
            &mut *push,
            0,
            &[(&frame, Meta::default()), (&[1, 2], Meta::default())],
        );
        assert_eq!(out[0].len(), 1);
        let tagged = &out[0][0].0;
        assert_eq!(&tagged[12..16], &[0x81, 0x00, 0x60, 10]);
        assert_eq!(&tagged[..12], &frame[..12]);
        assert_eq!(&tagged[16..], &frame[12..]);
        let mut pop = super::new_pop(&Args::default(), &mut Env::default()).unwrap();
        let (out, _) = run(
            &mut *pop,
            0,
            &[(tagged, Meta::default()), (&frame, Meta::default())],
        );
        assert_eq!(out[0][0].0, frame);
        assert_eq!(out[0][1].0, frame, "an untagged frame passes unchanged");
        assert!(super::new_push(&Args::parse("vid = 4096").unwrap(), &mut Env::default()).is_err());
    }
}
