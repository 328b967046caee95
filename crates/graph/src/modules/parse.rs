//! `parse`: decodes the Ethernet header and any 802.1Q/802.1ad tags and
//! writes what it found: the `ethertype` attribute (2 bytes: the type
//! after the tags) and the `l3_offset` attribute (2 bytes: where the
//! network header starts), and sets `parse_depth` to 1. A frame too short
//! for its headers gets `parse_depth` 0 and is still forwarded (gate 0):
//! modules after it decide what to do with unparsed frames.

use crate::batch::Batch;
use crate::metadata::{Access, Attr, AttrDecl, Layout};
use crate::module::{Ctx, Emit, Module};
use crate::registry::{Args, Env};

#[derive(Default)]
pub struct Parse {
    ethertype: Attr,
    l3: Attr,
    pub short: u64,
}

pub fn new(_: &Args, _: &mut Env) -> Result<Box<dyn Module>, String> {
    Ok(Box::new(Parse::default()))
}

/// The type after the VLAN tags and the offset of the header after it.
pub fn ethertype(frame: &[u8]) -> Option<(u16, usize)> {
    let mut off = 12;
    loop {
        let t = u16::from_be_bytes(frame.get(off..off + 2)?.try_into().ok()?);
        if t == 0x8100 || t == 0x88a8 {
            frame.get(off + 2..off + 4)?;
            off += 4;
            continue;
        }
        return Some((t, off + 2));
    }
}

impl Module for Parse {
    fn kind(&self) -> &'static str {
        "parse"
    }
    fn ogates(&self) -> usize {
        1
    }
    fn attrs(&self) -> Vec<AttrDecl> {
        vec![
            AttrDecl::new("ethertype", 2, Access::Write),
            AttrDecl::new("l3_offset", 2, Access::Write),
        ]
    }
    fn bind(&mut self, layout: &Layout) {
        self.ethertype = layout.get("ethertype").unwrap_or_default();
        self.l3 = layout.get("l3_offset").unwrap_or_default();
    }
    fn process(&mut self, _: &Ctx, _: usize, batch: &mut Batch, out: &mut Emit) {
        for (b, m) in batch.iter_mut() {
            match ethertype(b.data()) {
                Some((t, off)) => {
                    self.ethertype.set_u16(m, t);
                    self.l3.set_u16(m, off as u16);
                    m.parse_depth = 1;
                }
                None => {
                    self.short += 1;
                    m.parse_depth = 0;
                }
            }
        }
        out.emit_all(0, batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_type_after_tags() {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0, 10, 0x88, 0xa8]);
        assert_eq!(ethertype(&f), None);
        f.extend_from_slice(&[0, 20, 0x08, 0x00, 0x45]);
        assert_eq!(ethertype(&f), Some((0x0800, 22)));
        assert_eq!(ethertype(&[0; 13]), None);
    }
}
