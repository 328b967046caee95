//! Changes to the trie: inserting and removing a prefix, and the upkeep
//! of the direct tables and skips they cause (see the `lpm` module comment).

use super::*;

impl Lpm {
    pub(super) fn alloc_node(&mut self) -> u32 {
        match self.free_nodes.pop() {
            Some(i) => {
                self.nodes[i as usize] = Node::EMPTY;
                self.cold[i as usize] = Cold::EMPTY;
                i
            }
            None => {
                self.nodes.push(Node::EMPTY);
                self.cold.push(Cold::EMPTY);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// Recomputes a node's per-nibble best from its slots.
    pub(super) fn refresh(&mut self, n: u32) {
        let Some(node) = self.cold.get(n as usize) else {
            return;
        };
        let mut best = [Ref::NONE; 16];
        let zero = list_best(&self.lists, node.slot[ZERO_SLOT]);
        for (nib, b) in best.iter_mut().enumerate() {
            *b = zero;
            for rel in 1..=4 {
                let s = (1 << rel) - 2 + (nib >> (4 - rel));
                *b = b.better(list_best(&self.lists, node.slot[s]));
            }
        }
        let node = &mut self.nodes[n as usize];
        for (x, b) in node.nib.iter_mut().zip(best) {
            x.rank = b.rank;
            x.handle = b.handle;
        }
    }

    /// The context with these values, if any.
    pub(super) fn context_mut(&mut self, hash: u64, values: &[u128]) -> Option<&mut Context> {
        self.contexts.find_mut(hash, |c| *c.values == *values)
    }

    /// Adds an entry whose shape conforms (`(field, mask, value)` triples).
    pub fn insert(&mut self, r: Ref, fields: impl Iterator<Item = (Field, u128, u128)>) {
        let p = self.place(fields);
        let hash = self.context_hash(p.context.iter().copied());
        let start = match self.context_mut(hash, &p.context) {
            Some(c) => {
                c.len += 1;
                c.start
            }
            None => {
                let root = self.alloc_node();
                let start = Start::at(root);
                self.contexts.insert_unique(
                    hash,
                    Context {
                        values: p.context.clone().into(),
                        hash,
                        start,
                        len: 1,
                    },
                    |c| c.hash,
                );
                self.refresh_sole();
                start
            }
        };
        let mut n = start.root;
        for d in 0..p.depth {
            let nib = nibble(p.aligned, d);
            let c = self.nodes[n as usize].nib[nib].child;
            n = if c == NIL {
                let c = self.alloc_node();
                self.nodes[n as usize].nib[nib].child = c;
                self.cold[n as usize].used += 1;
                c
            } else {
                c
            };
        }
        let l = self.cold[n as usize].slot[p.slot];
        match self.lists.get_mut(l as usize) {
            Some(Some(same)) => same.add(r),
            _ => {
                let l = reuse_or_push(&mut self.lists, &mut self.free_lists, Some(Same::new(r)));
                let cold = &mut self.cold[n as usize];
                cold.slot[p.slot] = l;
                cold.used += 1;
            }
        }
        self.refresh(n);
        self.len += 1;
        self.after_change(hash, &p);
    }

    /// Removes an entry inserted with the same triples; false if absent.
    pub fn remove(&mut self, r: Ref, fields: impl Iterator<Item = (Field, u128, u128)>) -> bool {
        let p = self.place(fields);
        let hash = self.context_hash(p.context.iter().copied());
        let Some(start) = self.context_mut(hash, &p.context).map(|c| c.start) else {
            return false;
        };
        let mut path = Vec::with_capacity(p.depth as usize);
        let mut n = start.root;
        for d in 0..p.depth {
            let nib = nibble(p.aligned, d);
            let c = self.nodes[n as usize].nib[nib].child;
            if c == NIL {
                return false;
            }
            path.push((n, nib));
            n = c;
        }
        let l = self.cold[n as usize].slot[p.slot];
        let Some(Some(same)) = self.lists.get_mut(l as usize) else {
            return false;
        };
        match same.remove(r) {
            None => return false,
            Some(false) => {}
            Some(true) => {
                self.lists[l as usize] = None;
                self.free_lists.push(l);
                let cold = &mut self.cold[n as usize];
                cold.slot[p.slot] = NIL;
                cold.used -= 1;
            }
        }
        self.refresh(n);
        self.len -= 1;
        if let Some(c) = self.context_mut(hash, &p.context) {
            c.len -= 1;
        }
        // Prune the emptied tail of the path, then the context.
        while self.cold[n as usize].used == 0 {
            let Some((parent, nib)) = path.pop() else {
                self.free_nodes.push(n);
                if let Ok(e) = self.contexts.find_entry(hash, |c| c.start == start) {
                    e.remove();
                }
                self.free_direct(start.direct);
                self.refresh_sole();
                return true;
            };
            self.free_nodes.push(n);
            self.nodes[parent as usize].nib[nib].child = NIL;
            self.cold[parent as usize].used -= 1;
            n = parent;
        }
        self.after_change(hash, &p);
        true
    }

    /// Brings the direct table of `p`'s context up to date after an
    /// insert or remove at `p` (module comment: the slots under the
    /// prefix's top 16 bits), or builds or drops the table when the
    /// context's size crossed a threshold.
    pub(super) fn after_change(&mut self, hash: u64, p: &Place) {
        let Some(root) = self.context_mut(hash, &p.context).map(|c| c.start.root) else {
            return;
        };
        let skip = self.skip_of(root);
        let Some(c) = self.context_mut(hash, &p.context) else {
            return;
        };
        let moved = (c.start.skip_depth, c.start.skip_node, c.start.skip_prefix) != skip;
        (c.start.skip_depth, c.start.skip_node, c.start.skip_prefix) = skip;
        let (start, len) = (c.start, c.len);
        if moved {
            self.refresh_sole();
        }
        let live = self.directs.len() - self.free_directs.len();
        if start.direct == NIL {
            if len >= self.direct_min && self.form.width >= DIRECT_BITS && live < DIRECT_MAX {
                self.build_direct(hash, p);
            }
        } else if len < self.direct_min / 2 {
            if let Some(c) = self.context_mut(hash, &p.context) {
                c.start.direct = NIL;
            }
            self.free_direct(start.direct);
            self.refresh_sole();
        } else {
            let k = p.len.min(DIRECT_BITS);
            let first =
                ((p.aligned >> (128 - DIRECT_BITS)) as usize) & !((1 << (DIRECT_BITS - k)) - 1);
            self.fill_direct(start, first..first + (1 << (DIRECT_BITS - k)));
        }
    }

    /// The skip of the trie at `root` (see `Start`): how far down from the
    /// root the nodes have one child and no slot, the node there and the
    /// nibbles on the way. O(depth) reads.
    pub(super) fn skip_of(&self, root: u32) -> (u32, u32, u128) {
        let (mut depth, mut n, mut prefix) = (0u32, root, 0u128);
        while self.cold.get(n as usize).is_some_and(|c| c.used == 1) {
            let Some((nib, x)) = self
                .nodes
                .get(n as usize)
                .and_then(|node| node.nib.iter().enumerate().find(|(_, x)| x.child != NIL))
            else {
                // The one thing in use is a slot.
                break;
            };
            prefix |= (nib as u128) << (124 - 4 * depth);
            n = x.child;
            depth += 1;
        }
        (depth, n, prefix)
    }

    /// Gives `p`'s context a direct table, filled from its trie.
    pub(super) fn build_direct(&mut self, hash: u64, p: &Place) {
        let table = vec![Nib::EMPTY; 1 << DIRECT_BITS].into_boxed_slice();
        let d = reuse_or_push(&mut self.directs, &mut self.free_directs, table);
        let Some(c) = self.context_mut(hash, &p.context) else {
            return;
        };
        c.start.direct = d;
        let start = c.start;
        self.fill_direct(start, 0..1 << DIRECT_BITS);
        self.refresh_sole();
    }

    /// Releases direct table `d` (`NIL`: none).
    pub(super) fn free_direct(&mut self, d: u32) {
        if let Some(t) = self.directs.get_mut(d as usize) {
            *t = Box::default();
            self.free_directs.push(d);
        }
    }

    /// Recomputes the slots `range` of `start`'s direct table from its
    /// trie.
    pub(super) fn fill_direct(&mut self, start: Start, range: std::ops::Range<usize>) {
        let Some(mut table) = self
            .directs
            .get_mut(start.direct as usize)
            .map(std::mem::take)
        else {
            return;
        };
        for v16 in range {
            if let Some(x) = table.get_mut(v16) {
                *x = self.direct_slot(start.root, v16);
            }
        }
        self.directs[start.direct as usize] = table;
    }
}
