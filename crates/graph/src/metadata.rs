//! Module-declared metadata attributes and their offsets.
//!
//! A module declares the attributes it reads and writes ([`AttrDecl`]: a
//! name, a size in bytes, an [`Access`]). When the graph is built (and on
//! every run-time change) [`Layout::resolve`] gives each attribute name an
//! offset in [`Meta::attrs`](crate::batch::Meta), and the graph hands the
//! layout to every module ([`crate::module::Module::bind`]), which keeps
//! the [`Attr`] handles it needs: reading an attribute is then a slice at a
//! fixed offset, with no look-up per packet.
//!
//! Offsets: this version gives every attribute name its own offset, in the
//! order first seen, and never moves or reuses one while the graph lives
//! (a run-time change only appends): packets waiting in a queue across a
//! change keep valid metadata. BESS goes further and lets attributes whose
//! live ranges do not overlap share bytes; that would need the offsets to
//! be recomputed (and queued packets rewritten) on a change, so it is left
//! out while 64 bytes are plenty.
//!
//! Checks (done by [`crate::graph`] over the whole graph): two declarations
//! of one name must agree on its size, the attributes must fit in
//! [`ATTR_BYTES`], and a module that reads an attribute must have a writer
//! of it upstream on *every* path from a packet source (a task) to it: a
//! "must be written" data-flow over the graph.

use crate::batch::{Meta, ATTR_BYTES};
use std::collections::BTreeMap;

/// How a module uses an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// Reads then writes (needs an upstream writer like `Read`).
    Update,
}

impl Access {
    pub fn reads(self) -> bool {
        matches!(self, Access::Read | Access::Update)
    }
    pub fn writes(self) -> bool {
        matches!(self, Access::Write | Access::Update)
    }
}

/// One attribute a module declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrDecl {
    pub name: String,
    pub size: usize,
    pub access: Access,
}

impl AttrDecl {
    pub fn new(name: &str, size: usize, access: Access) -> AttrDecl {
        AttrDecl {
            name: name.to_string(),
            size,
            access,
        }
    }
}

/// A resolved attribute: where it lives in [`Meta::attrs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Attr {
    pub offset: usize,
    pub size: usize,
}

impl Attr {
    /// The attribute's bytes in `meta` (all zero if the handle is out of
    /// range, which a validated graph never produces).
    #[inline]
    pub fn get<'m>(&self, meta: &'m Meta) -> &'m [u8] {
        meta.attrs
            .get(self.offset..self.offset + self.size)
            .unwrap_or(&[])
    }

    #[inline]
    pub fn get_mut<'m>(&self, meta: &'m mut Meta) -> &'m mut [u8] {
        meta.attrs
            .get_mut(self.offset..self.offset + self.size)
            .unwrap_or(&mut [])
    }

    /// An 8-byte attribute as a little-endian u64 (0 if the size differs).
    #[inline]
    pub fn get_u64(&self, meta: &Meta) -> u64 {
        self.get(meta)
            .try_into()
            .map(u64::from_le_bytes)
            .unwrap_or(0)
    }

    #[inline]
    pub fn set_u64(&self, meta: &mut Meta, v: u64) {
        let dst = self.get_mut(meta);
        if dst.len() == 8 {
            dst.copy_from_slice(&v.to_le_bytes());
        }
    }

    /// A 2-byte attribute as a little-endian u16.
    #[inline]
    pub fn get_u16(&self, meta: &Meta) -> u16 {
        self.get(meta)
            .try_into()
            .map(u16::from_le_bytes)
            .unwrap_or(0)
    }

    #[inline]
    pub fn set_u16(&self, meta: &mut Meta, v: u16) {
        let dst = self.get_mut(meta);
        if dst.len() == 2 {
            dst.copy_from_slice(&v.to_le_bytes());
        }
    }

    /// A 4-byte attribute as a little-endian u32.
    #[inline]
    pub fn get_u32(&self, meta: &Meta) -> u32 {
        self.get(meta)
            .try_into()
            .map(u32::from_le_bytes)
            .unwrap_or(0)
    }

    #[inline]
    pub fn set_u32(&self, meta: &mut Meta, v: u32) {
        let dst = self.get_mut(meta);
        if dst.len() == 4 {
            dst.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// Attribute name -> offset and size; see the module comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    attrs: BTreeMap<String, Attr>,
    /// First free byte.
    end: usize,
}

impl Layout {
    /// Extends `self` with the attributes of `decls` not yet placed.
    /// Errors (and leaves `self` unchanged) when a size disagrees or the
    /// attributes do not fit.
    pub fn resolve<'a>(
        &mut self,
        decls: impl IntoIterator<Item = &'a AttrDecl>,
    ) -> Result<(), String> {
        let mut next = self.clone();
        for d in decls {
            if d.size == 0 {
                return Err(format!("attribute `{}` has size 0", d.name));
            }
            match next.attrs.get(&d.name) {
                Some(a) if a.size != d.size => {
                    return Err(format!(
                        "attribute `{}` declared with {} bytes here but {} bytes elsewhere",
                        d.name, d.size, a.size
                    ))
                }
                Some(_) => {}
                None => {
                    if next.end + d.size > ATTR_BYTES {
                        return Err(format!(
                            "attribute `{}` ({} bytes) does not fit: {} of {} metadata bytes used",
                            d.name, d.size, next.end, ATTR_BYTES
                        ));
                    }
                    next.attrs.insert(
                        d.name.clone(),
                        Attr {
                            offset: next.end,
                            size: d.size,
                        },
                    );
                    next.end += d.size;
                }
            }
        }
        *self = next;
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<Attr> {
        self.attrs.get(name).copied()
    }

    /// Bytes used.
    pub fn used(&self) -> usize {
        self.end
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, Attr)> {
        self.attrs.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_stable_and_checked() {
        let mut l = Layout::default();
        l.resolve(&[
            AttrDecl::new("ts", 8, Access::Write),
            AttrDecl::new("x", 2, Access::Read),
        ])
        .unwrap();
        assert_eq!(l.get("ts"), Some(Attr { offset: 0, size: 8 }));
        assert_eq!(l.get("x"), Some(Attr { offset: 8, size: 2 }));
        // A later change appends; existing offsets stay.
        l.resolve(&[
            AttrDecl::new("y", 4, Access::Write),
            AttrDecl::new("ts", 8, Access::Read),
        ])
        .unwrap();
        assert_eq!(
            l.get("y"),
            Some(Attr {
                offset: 10,
                size: 4
            })
        );
        assert_eq!(l.get("ts").map(|a| a.offset), Some(0));
        let before = l.clone();
        let e = l
            .resolve(&[AttrDecl::new("ts", 4, Access::Read)])
            .unwrap_err();
        assert!(e.contains("8 bytes elsewhere"), "{e}");
        let e = l
            .resolve(&[AttrDecl::new("big", 60, Access::Write)])
            .unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        assert_eq!(l, before);
    }

    #[test]
    fn attribute_access_is_a_fixed_offset() {
        let mut l = Layout::default();
        l.resolve(&[
            AttrDecl::new("a", 2, Access::Write),
            AttrDecl::new("t", 8, Access::Write),
        ])
        .unwrap();
        let (a, t) = (l.get("a").unwrap(), l.get("t").unwrap());
        let mut m = Meta::default();
        t.set_u64(&mut m, 0x0102_0304_0506_0708);
        a.set_u16(&mut m, 7);
        assert_eq!(t.get_u64(&m), 0x0102_0304_0506_0708);
        assert_eq!(a.get_u16(&m), 7);
        assert_eq!(&m.attrs[2..10], &0x0102_0304_0506_0708u64.to_le_bytes());
    }
}
