//! Longest-prefix-match structure for tables whose non-empty shapes are
//! all "context fields S + a prefix of one field F" (parent module
//! comment): a hash of the context values, each leading to a multibit
//! trie over F.
//!
//! # The trie (stride 4)
//!
//! F's value is left-aligned in a `u128`, so a prefix of length `L` is
//! its top `L` bits. Node `n` at depth `d` stands for one 4d-bit prefix.
//! A prefix of length `L` lives in the node at depth `L / 4`, in one of
//! its 15 *slots*: `rel = L % 4` more bits `b` name slot
//! `(1 << rel) - 1 + b` (slot 0: length 4d exactly; slots 1-2: one more
//! bit; 3-6: two; 7-14: three). A slot holds the list of entries with
//! that context and prefix (equal matches, best first).
//!
//! ```text
//!  node (depth d)
//!   slot[15]         -> list of entries (Same)   prefixes of length 4d..4d+3
//!   nib[16].child    -> node at depth d+1        by the next 4 bits (nibble)
//!   nib[16].best     best entry among the slots covering that nibble value
//! ```
//!
//! `nib[v].best` is the slot contents pre-expanded to the 16 nibble values
//! (controlled prefix expansion kept inside one node): slot `(rel, b)`
//! covers the nibbles whose top `rel` bits are `b`. It is recomputed from
//! the 15 slots (a fixed 64 steps) whenever a slot of that node changes,
//! so an insert or remove touches only the nodes on one path.
//!
//! A lookup reads the packet's nibbles from the top, and at each node
//! keeps the better of its best so far and `nib[nibble].best`, then
//! follows `nib[nibble].child` until there is none (one cache line per
//! node). Every prefix that matches the
//! packet lies in a slot on that path and covers the packet's nibble, so
//! the result is the best-ranked matching prefix, whether or not
//! priorities follow prefix lengths. At most `width / 4 + 1` nodes (9 for
//! an IPv4 address). A packet without F matches only the length-0 prefix
//! (root slot 0).
//!
//! Nodes and lists live in arenas (`Vec` + free list) named by `u32`;
//! a removal frees the nodes of its path that end up with no slot and no
//! child, and the context when its root is empty.

use super::{Rank, Ref, Same, Shape};
use crate::matcher::key_bits;
use hashbrown::{DefaultHashBuilder, HashTable};
use packet::{Field, FieldSet, FlowKey};
use std::hash::{BuildHasher, Hasher};

const NIL: u32 = u32::MAX;

/// Whether `m` is a non-empty prefix mask within `full`.
fn is_prefix(m: u128, full: u128) -> bool {
    let inv = full & !m;
    m != 0 && m & !full == 0 && inv & inv.wrapping_add(1) == 0
}

fn full_mask(f: Field) -> u128 {
    let bits = 8 * f.width() as u32;
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// The form a table's shapes must have: see the module comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LpmForm {
    /// S: the shape without F.
    context: Box<Shape>,
    required: FieldSet,
    /// F.
    field: Field,
    /// Width of F in bits.
    width: u32,
    full: u128,
}

impl LpmForm {
    /// The form two distinct non-empty shapes share, if any: they differ in
    /// the mask of exactly one field, a prefix mask (or absent) in both,
    /// and shorter than the field in at least one.
    pub fn derive(a: &Shape, b: &Shape) -> Option<LpmForm> {
        let mut diff: Option<Field> = None;
        let mut note = |f: Field| -> Option<()> {
            if diff.is_some_and(|d| d != f) {
                return None;
            }
            diff = Some(f);
            Some(())
        };
        let (mut i, mut j) = (0, 0);
        loop {
            let (x, y) = (a.get(i), b.get(j));
            let from_a = match (x, y) {
                (None, None) => break,
                (Some(x), Some(y)) if x.0 == y.0 => {
                    if x.1 != y.1 {
                        note(x.0)?;
                    }
                    i += 1;
                    j += 1;
                    continue;
                }
                (Some(x), Some(y)) => x.0 < y.0,
                (Some(_), None) => true,
                (None, Some(_)) => false,
            };
            let f = if from_a { x } else { y };
            if let Some((f, _)) = f {
                note(*f)?;
            }
            if from_a {
                i += 1;
            } else {
                j += 1;
            }
        }
        let field = diff?;
        let context: Box<Shape> = a.iter().filter(|(f, _)| *f != field).copied().collect();
        let required = context.iter().fold(FieldSet::EMPTY, |mut s, (f, _)| {
            s.insert(*f);
            s
        });
        let form = LpmForm {
            context,
            required,
            field,
            width: 8 * field.width() as u32,
            full: full_mask(field),
        };
        // A real prefix (not the whole field) on one side: otherwise the
        // two shapes are "exact F" and "no F", which the tuple space's two
        // probes handle without a trie per context value.
        let partial = |s: &Shape| {
            s.iter()
                .any(|(f, m)| *f == field && *m != form.full && *m != 0)
        };
        ((partial(a) || partial(b))
            && form.conforms(a.iter().copied())
            && form.conforms(b.iter().copied()))
        .then_some(form)
    }

    /// Whether a shape (sorted `(field, mask)` pairs) is in this form: not
    /// empty, S exactly, plus F with a prefix mask or without F.
    pub fn conforms(&self, shape: impl Iterator<Item = (Field, u128)>) -> bool {
        let mut ctx = self.context.iter();
        let mut nonempty = false;
        for (f, m) in shape {
            nonempty = true;
            if f == self.field {
                if !is_prefix(m, self.full) {
                    return false;
                }
            } else if ctx.next() != Some(&(f, m)) {
                return false;
            }
        }
        nonempty && ctx.next().is_none()
    }

    /// The prefix field.
    pub fn field(&self) -> Field {
        self.field
    }
}

/// What a lookup reads for one nibble value: kept together so that one
/// node costs one cache line per packet.
#[derive(Debug, Clone, Copy)]
struct Nib {
    /// Best of the slots covering this nibble value.
    rank: Rank,
    handle: u32,
    child: u32,
}

#[derive(Debug, Clone)]
struct Node {
    nib: [Nib; 16],
    slot: [u32; 15],
    /// Slots and children in use.
    used: u8,
}

impl Node {
    fn new() -> Node {
        Node {
            nib: [Nib {
                rank: Rank::NONE,
                handle: NIL,
                child: NIL,
            }; 16],
            slot: [NIL; 15],
            used: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Context {
    values: Box<[u128]>,
    hash: u64,
    root: u32,
}

/// See the module comment.
#[derive(Debug, Clone)]
pub struct Lpm {
    form: LpmForm,
    hasher: DefaultHashBuilder,
    contexts: HashTable<Context>,
    /// The context values and root when there is exactly one context (the
    /// usual routing table: no hashing per packet then).
    sole: Option<(Box<[u128]>, u32)>,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    lists: Vec<Option<Same>>,
    free_lists: Vec<u32>,
    len: usize,
}

/// A lookup after its context step.
enum Walk {
    Done(Ref),
    /// Walk the trie from `root` with F's value `v` (left-aligned).
    From {
        root: u32,
        v: u128,
    },
}

/// The 4 bits of the left-aligned `v` below depth `d` (0 past the end).
#[inline]
fn nibble(v: u128, d: u32) -> usize {
    if d < 32 {
        ((v >> (124 - 4 * d)) & 15) as usize
    } else {
        0
    }
}

/// Where a prefix lives: context values, depth, slot, aligned value.
struct Place {
    context: Vec<u128>,
    depth: u32,
    slot: usize,
    aligned: u128,
}

impl Lpm {
    pub fn new(form: LpmForm) -> Lpm {
        Lpm {
            form,
            hasher: DefaultHashBuilder::default(),
            contexts: HashTable::new(),
            sole: None,
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            lists: Vec::new(),
            free_lists: Vec::new(),
            len: 0,
        }
    }

    pub fn form(&self) -> &LpmForm {
        &self.form
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn context_hash(&self, values: impl Iterator<Item = u128>) -> u64 {
        let mut h = self.hasher.build_hasher();
        for v in values {
            h.write_u128(v);
        }
        h.finish()
    }

    /// Splits a conforming match (`(field, mask, value)` triples).
    fn place(&self, fields: impl Iterator<Item = (Field, u128, u128)>) -> Place {
        let mut context = Vec::with_capacity(self.form.context.len());
        let (mut len, mut aligned) = (0u32, 0u128);
        for (f, m, v) in fields {
            if f == self.form.field {
                len = m.count_ones();
                aligned = v << (128 - self.form.width);
            } else {
                context.push(v);
            }
        }
        let (depth, rel) = (len / 4, len % 4);
        let bits = if rel == 0 {
            0
        } else {
            ((aligned >> (128 - 4 * depth - rel)) & ((1 << rel) - 1)) as usize
        };
        Place {
            context,
            depth,
            slot: (1 << rel) - 1 + bits,
            aligned,
        }
    }

    fn refresh_sole(&mut self) {
        self.sole = match self.contexts.len() {
            1 => self
                .contexts
                .iter()
                .next()
                .map(|c| (c.values.clone(), c.root)),
            _ => None,
        };
    }

    fn alloc_node(&mut self) -> u32 {
        match self.free_nodes.pop() {
            Some(i) => {
                self.nodes[i as usize] = Node::new();
                i
            }
            None => {
                self.nodes.push(Node::new());
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Recomputes a node's per-nibble best from its slots.
    fn refresh(&mut self, n: u32) {
        let mut best = [Ref::NONE; 16];
        let node = &self.nodes[n as usize];
        for (nib, b) in best.iter_mut().enumerate() {
            for rel in 0..4 {
                let s = (1 << rel) - 1 + (nib >> (4 - rel));
                if let Some(Some(l)) = self.lists.get(node.slot[s] as usize) {
                    *b = b.better(l.best());
                }
            }
        }
        let node = &mut self.nodes[n as usize];
        for (x, b) in node.nib.iter_mut().zip(best) {
            x.rank = b.rank;
            x.handle = b.handle;
        }
    }

    /// Adds an entry whose shape conforms (`(field, mask, value)` triples).
    pub fn insert(&mut self, r: Ref, fields: impl Iterator<Item = (Field, u128, u128)>) {
        let p = self.place(fields);
        let hash = self.context_hash(p.context.iter().copied());
        let root = match self.contexts.find(hash, |c| *c.values == *p.context) {
            Some(c) => c.root,
            None => {
                let root = self.alloc_node();
                self.contexts.insert_unique(
                    hash,
                    Context {
                        values: p.context.into(),
                        hash,
                        root,
                    },
                    |c| c.hash,
                );
                self.refresh_sole();
                root
            }
        };
        let mut n = root;
        for d in 0..p.depth {
            let nib = nibble(p.aligned, d);
            let c = self.nodes[n as usize].nib[nib].child;
            n = if c == NIL {
                let c = self.alloc_node();
                let node = &mut self.nodes[n as usize];
                node.nib[nib].child = c;
                node.used += 1;
                c
            } else {
                c
            };
        }
        let l = self.nodes[n as usize].slot[p.slot];
        match self.lists.get_mut(l as usize) {
            Some(Some(same)) => same.add(r),
            _ => {
                let same = Some(Same::new(r));
                let l = match self.free_lists.pop() {
                    Some(l) => {
                        self.lists[l as usize] = same;
                        l
                    }
                    None => {
                        self.lists.push(same);
                        (self.lists.len() - 1) as u32
                    }
                };
                let node = &mut self.nodes[n as usize];
                node.slot[p.slot] = l;
                node.used += 1;
            }
        }
        self.refresh(n);
        self.len += 1;
    }

    /// Removes an entry inserted with the same triples; false if absent.
    pub fn remove(&mut self, r: Ref, fields: impl Iterator<Item = (Field, u128, u128)>) -> bool {
        let p = self.place(fields);
        let hash = self.context_hash(p.context.iter().copied());
        let Some(root) = self
            .contexts
            .find(hash, |c| *c.values == *p.context)
            .map(|c| c.root)
        else {
            return false;
        };
        let mut path = Vec::with_capacity(p.depth as usize);
        let mut n = root;
        for d in 0..p.depth {
            let nib = nibble(p.aligned, d);
            let c = self.nodes[n as usize].nib[nib].child;
            if c == NIL {
                return false;
            }
            path.push((n, nib));
            n = c;
        }
        let l = self.nodes[n as usize].slot[p.slot];
        let Some(Some(same)) = self.lists.get_mut(l as usize) else {
            return false;
        };
        match same.remove(r) {
            None => return false,
            Some(false) => {}
            Some(true) => {
                self.lists[l as usize] = None;
                self.free_lists.push(l);
                let node = &mut self.nodes[n as usize];
                node.slot[p.slot] = NIL;
                node.used -= 1;
            }
        }
        self.refresh(n);
        self.len -= 1;
        // Prune the emptied tail of the path, then the context.
        while self.nodes[n as usize].used == 0 {
            let Some((parent, nib)) = path.pop() else {
                self.free_nodes.push(n);
                if let Ok(e) = self.contexts.find_entry(hash, |c| c.root == root) {
                    e.remove();
                }
                self.refresh_sole();
                break;
            };
            self.free_nodes.push(n);
            let pn = &mut self.nodes[parent as usize];
            pn.nib[nib].child = NIL;
            pn.used -= 1;
            n = parent;
        }
        true
    }

    /// The best entry matching `key` (`Ref::NONE` if none), see the module
    /// comment.
    #[inline]
    pub fn lookup(&self, key: &FlowKey) -> Ref {
        match self.begin(key) {
            Walk::Done(r) => r,
            Walk::From { root, v } => {
                let mut n = &self.nodes[root as usize];
                let mut best = Ref::NONE;
                let mut d = 0;
                loop {
                    let x = &n.nib[nibble(v, d)];
                    if x.rank > best.rank {
                        best = Ref {
                            rank: x.rank,
                            handle: x.handle,
                        };
                    }
                    match x.child {
                        NIL => return best,
                        c => n = &self.nodes[c as usize],
                    }
                    d += 1;
                }
            }
        }
    }

    /// `lookup` for several keys at once (`out[i]` for `keys[i]`; keys
    /// with `live[i]` false get `Ref::NONE`). The walks advance one level
    /// at a time across all keys, so the node reads of different keys,
    /// which do not depend on one another, overlap in memory.
    pub fn lookup_many(&self, keys: &[FlowKey], live: &[bool], out: &mut [Ref]) {
        const N: usize = crate::batch::CHUNK;
        // Per key: the node to read next (NIL: walk over) and the
        // left-aligned value of F.
        let mut node = [NIL; N];
        let mut val = [0u128; N];
        let n = keys.len().min(N).min(out.len()).min(live.len());
        for i in 0..n {
            out[i] = Ref::NONE;
            if !live[i] {
                continue;
            }
            match self.begin(&keys[i]) {
                Walk::Done(r) => out[i] = r,
                Walk::From { root, v } => {
                    node[i] = root;
                    val[i] = v;
                }
            }
        }
        let mut d = 0;
        loop {
            let mut more = false;
            for i in 0..n {
                let Some(x) = self
                    .nodes
                    .get(node[i] as usize)
                    .map(|nd| &nd.nib[nibble(val[i], d)])
                else {
                    continue;
                };
                if x.rank > out[i].rank {
                    out[i] = Ref {
                        rank: x.rank,
                        handle: x.handle,
                    };
                }
                node[i] = x.child;
                more |= x.child != NIL;
            }
            if !more {
                return;
            }
            d += 1;
        }
    }

    /// The context part of a lookup: the root of the packet's trie and
    /// its value of F, or the answer when no walk is needed.
    #[inline]
    fn begin(&self, key: &FlowKey) -> Walk {
        let form = &self.form;
        if !key.present.contains_all(form.required) {
            return Walk::Done(Ref::NONE);
        }
        let same = |values: &[u128]| {
            values
                .iter()
                .zip(form.context.iter())
                .all(|(v, (f, m))| key_bits(key, *f) & m == *v)
        };
        let root = match &self.sole {
            Some((values, root)) if same(values) => *root,
            Some(_) => return Walk::Done(Ref::NONE),
            None => {
                let mut h = self.hasher.build_hasher();
                for (f, m) in form.context.iter() {
                    h.write_u128(key_bits(key, *f) & m);
                }
                match self.contexts.find(h.finish(), |c| same(&c.values)) {
                    Some(c) => c.root,
                    None => return Walk::Done(Ref::NONE),
                }
            }
        };
        if !key.present.contains(form.field) {
            let r = self
                .nodes
                .get(root as usize)
                .and_then(|n| self.lists.get(n.slot[0] as usize))
                .and_then(Option::as_ref)
                .map_or(Ref::NONE, Same::best);
            return Walk::Done(r);
        }
        Walk::From {
            root,
            v: key_bits(key, form.field) << (128 - form.width),
        }
    }
}
