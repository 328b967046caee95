//! Changes to the tuple space: inserting and removing an entry, keeping
//! the subtables in order of their best priority.

use super::*;

impl Tss {
    /// Moves subtable `i` to its place in `order` after its max priority
    /// changed (or to add it).
    pub(super) fn reorder(&mut self, i: u32) {
        for list in [&mut self.order, &mut self.order_odd] {
            if let Some(pos) = list.iter().position(|o| o.sub == i) {
                list.remove(pos);
            }
        }
        if let Some(s) = self.sub(i) {
            let slot = Slot {
                max: s.max_priority(),
                in_lpm: s.in_lpm,
                sub: i,
            };
            let pos = self.order.partition_point(|o| o.max >= slot.max);
            self.order.insert(pos, slot);
            if !slot.in_lpm {
                let pos = self.order_odd.partition_point(|o| o.max >= slot.max);
                self.order_odd.insert(pos, slot);
            }
        }
    }

    /// Adds an entry; true if its shape got a new subtable.
    /// `in_lpm` marks the subtable if this creates it.
    pub fn insert(&mut self, r: Ref, m: &CompiledMatch, in_lpm: bool) -> bool {
        let fields = m.fields();
        if fields.is_empty() {
            match &mut self.any {
                Some(s) => s.add(r),
                None => self.any = Some(Same::new(r)),
            }
            return false;
        }
        let shape_hash = self.shape_hash(fields);
        let (i, created) = match self.find_sub(fields, shape_hash) {
            Some(i) => (i, false),
            None => {
                let shape: Box<Shape> = fields.iter().map(|f| (f.field, f.mask)).collect();
                let filter_at = filter_field(&shape);
                let sub = Subtable {
                    spans: spans(&shape),
                    shape,
                    shape_hash,
                    required: m.required(),
                    buckets: HashTable::new(),
                    prios: BTreeMap::new(),
                    in_lpm,
                    at: Box::default(),
                    filter_at,
                    filter: None,
                };
                let i = match self.free.pop() {
                    Some(i) => {
                        if let Some(slot) = self.subtables.get_mut(i as usize) {
                            *slot = Some(sub);
                        }
                        i
                    }
                    None => {
                        self.subtables.push(Some(sub));
                        (self.subtables.len() - 1) as u32
                    }
                };
                let subtables = &self.subtables;
                self.by_shape.insert_unique(shape_hash, i, |j| {
                    subtables
                        .get(*j as usize)
                        .and_then(Option::as_ref)
                        .map_or(0, |s| s.shape_hash)
                });
                (i, true)
            }
        };
        let hasher = &self.hasher;
        let Some(sub) = self.subtables.get_mut(i as usize).and_then(Option::as_mut) else {
            return created;
        };
        let (hash, packed) = sub.match_hash(hasher, fields);
        let old_max = sub.max_priority();
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        match sub.buckets.find_mut(hash, eq) {
            Some(b) => b.same.add(r),
            None => {
                let b = sub.new_bucket(fields, hash, packed, r);
                sub.buckets.insert_unique(hash, b, |b| b.hash);
                sub.filter_added(hasher, fields);
            }
        }
        *sub.prios.entry(r.rank.priority()).or_insert(0) += 1;
        if created || sub.max_priority() != old_max {
            self.reorder(i);
        }
        if created {
            self.refresh_union();
        }
        created
    }

    /// Recomputes `union` and every subtable's positions in it (when a
    /// shape comes or goes: O(shapes x fields)).
    pub(super) fn refresh_union(&mut self) {
        let mut union: Vec<Field> = self
            .subtables
            .iter()
            .flatten()
            .flat_map(|s| s.shape.iter().map(|(f, _)| *f))
            .collect();
        union.sort();
        union.dedup();
        for sub in self.subtables.iter_mut().flatten() {
            sub.at = sub
                .shape
                .iter()
                .map(|(f, m)| {
                    let p = union.binary_search(f).map_or(UNION_MAX - 1, |p| p);
                    (p.min(UNION_MAX - 1) as u8, *m)
                })
                .collect();
        }
        self.union_set = FieldSet::of(&union);
        self.union = union;
    }

    /// Removes an entry: `None` if absent, else whether its subtable went
    /// away with it.
    pub fn remove(&mut self, r: Ref, m: &CompiledMatch) -> Option<bool> {
        self.remove_get_best(r, m).map(|(destroyed, _)| destroyed)
    }

    /// `remove`, also giving the best entry left with the same match
    /// (`None` if none, or for the empty match).
    pub fn remove_get_best(&mut self, r: Ref, m: &CompiledMatch) -> Option<(bool, Option<Ref>)> {
        let fields = m.fields();
        if fields.is_empty() {
            let any = self.any.as_mut()?;
            if any.remove(r)? {
                self.any = None;
            }
            return Some((false, None));
        }
        let shape_hash = self.shape_hash(fields);
        let i = self.find_sub(fields, shape_hash)?;
        let hasher = &self.hasher;
        let sub = self
            .subtables
            .get_mut(i as usize)
            .and_then(Option::as_mut)?;
        let (hash, packed) = sub.match_hash(hasher, fields);
        let old_max = sub.max_priority();
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        let mut entry = sub.buckets.find_entry(hash, eq).ok()?;
        let left = if entry.get_mut().same.remove(r)? {
            entry.remove();
            None
        } else {
            Some(entry.get().same.best())
        };
        let p = r.rank.priority();
        if let Some(c) = sub.prios.get_mut(&p) {
            *c -= 1;
            if *c == 0 {
                sub.prios.remove(&p);
            }
        }
        if sub.buckets.is_empty() {
            self.subtables[i as usize] = None;
            self.free.push(i);
            if let Ok(e) = self.by_shape.find_entry(shape_hash, |j| *j == i) {
                e.remove();
            }
            self.reorder(i);
            self.refresh_union();
            return Some((true, left));
        }
        if sub.max_priority() != old_max {
            self.reorder(i);
        }
        Some((false, left))
    }

    /// Marks the subtables an LPM trie stands for.
    pub fn mark_lpm(&mut self, f: impl Fn(&Shape) -> bool) {
        for sub in self.subtables.iter_mut().flatten() {
            sub.in_lpm = f(&sub.shape);
        }
        for o in &mut self.order {
            if let Some(Some(sub)) = self.subtables.get(o.sub as usize) {
                o.in_lpm = sub.in_lpm;
            }
        }
        self.order_odd = self.order.iter().filter(|o| !o.in_lpm).copied().collect();
    }
}
