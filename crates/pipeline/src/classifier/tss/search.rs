//! Searches of the tuple space: by match (flow-mods), by key, by many
//! keys at once, and walks over every entry.

use super::*;

impl Tss {
    /// The entry with exactly this match and priority.
    pub fn find(&self, m: &CompiledMatch, priority: u16) -> Option<Ref> {
        let fields = m.fields();
        let same = if fields.is_empty() {
            self.any.as_ref()?
        } else {
            let sub = self.sub(self.find_sub(fields, self.shape_hash(fields))?)?;
            let (hash, packed) = sub.match_hash(&self.hasher, fields);
            let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
            &sub.buckets.find(hash, eq)?.same
        };
        same.iter().find(|r| r.rank.priority() == priority)
    }

    /// The best entry with exactly this (non-empty) match, any priority.
    pub fn best(&self, m: &CompiledMatch) -> Option<Ref> {
        let fields = m.fields();
        let sub = self.sub(self.find_sub(fields, self.shape_hash(fields))?)?;
        let (hash, packed) = sub.match_hash(&self.hasher, fields);
        let eq = |b: &Bucket| Subtable::is_bucket_of(b, fields, packed);
        sub.buckets.find(hash, eq).map(|b| b.same.best())
    }

    /// The best match-everything entry (or `Ref::NONE`).
    #[inline]
    pub fn lookup_any(&self) -> Ref {
        self.any.as_ref().map_or(Ref::NONE, Same::best)
    }

    /// The best entry matching `key` (module comment).
    pub fn lookup(&self, key: &FlowKey) -> Option<Ref> {
        self.lookup_with(key, Ref::NONE, false).some()
    }

    /// The better of `start` and the best entry matching `key`, skipping
    /// the subtables an LPM trie stands for if `skip_lpm` (the caller
    /// looked those up in the trie and passes the result as `start`).
    #[inline]
    pub fn lookup_with<K: Fields>(&self, key: &K, start: Ref, skip_lpm: bool) -> Ref {
        let mut best = start.better(self.lookup_any());
        let order = if skip_lpm {
            &self.order_odd
        } else {
            &self.order
        };
        if order.len() > 1 && self.union.len() <= UNION_MAX {
            // Several probes: read the packet's fields once.
            let mut vals = [0u128; UNION_MAX];
            let present = key.present();
            for (v, f) in vals.iter_mut().zip(&self.union) {
                if present.contains(*f) {
                    *v = key.bits(*f);
                }
            }
            for o in order {
                if o.max < best.rank.priority() {
                    break;
                }
                let Some(sub) = self.sub(o.sub) else { continue };
                if let Some(r) = sub.probe_vals(&self.hasher, present, &vals) {
                    best = best.better(r);
                }
            }
            return best;
        }
        for o in order {
            if o.max < best.rank.priority() {
                break;
            }
            let Some(sub) = self.sub(o.sub) else { continue };
            if let Some(r) = sub.probe(&self.hasher, key) {
                best = best.better(r);
            }
        }
        best
    }

    /// `lookup_with` for several keys: `best[j]` becomes
    /// `lookup_with(&keys[at[j]], best[j], skip_lpm)`.
    ///
    /// Subtable by subtable rather than key by key (the same probes, the
    /// same answers): for each subtable in the order, every key still
    /// able to do better there (the priority cut-off of `lookup_with`
    /// holds per key) is hashed, then every key's candidate bucket is
    /// located (the control bytes only: an `eq` that accepts any
    /// candidate reads no bucket), then one word of every candidate is
    /// read, then the real probes run. A probe is two dependent cache
    /// misses (control bytes, bucket); none of these loops makes a load
    /// depend on another key's, so the CPU has the misses of all keys in
    /// flight at once and the probes hit. (Fetching ahead without
    /// prefetch instructions: there is no `unsafe` here.)
    pub fn lookup_many<K: Fields>(&self, keys: &[K], at: &[u8], best: &mut [Ref], skip_lpm: bool) {
        const N: usize = crate::chunk::CHUNK;
        let n = at.len().min(best.len()).min(N);
        // The keys by their place in `at` (`None` past the end of `keys`:
        // looked up as nothing).
        let key = |i: usize| keys.get(usize::from(at[i]));
        let any = self.lookup_any();
        for (i, b) in best[..n].iter_mut().enumerate() {
            if key(i).is_some() {
                *b = b.better(any);
            }
        }
        let order = if skip_lpm {
            &self.order_odd
        } else {
            &self.order
        };
        for o in order {
            let Some(sub) = self.sub(o.sub) else { continue };
            let mut hash = [None; N];
            let mut todo = false;
            for i in 0..n {
                let Some(k) = key(i) else { continue };
                if o.max >= best[i].rank.priority()
                    && k.present().contains_all(sub.required)
                    && sub.may_hold(k)
                {
                    hash[i] = Some(sub.key_hash(&self.hasher, k));
                    todo = true;
                }
            }
            if !todo {
                // The order is by max priority: no key does better later.
                if (0..n).all(|i| key(i).is_none() || o.max < best[i].rank.priority()) {
                    break;
                }
                continue;
            }
            let mut cand: [Option<&Bucket>; N] = [None; N];
            for i in 0..n {
                cand[i] = hash[i].and_then(|h| sub.buckets.find(h, |_| true));
            }
            let mut sink = 0u64;
            for c in cand.iter().take(n).flatten() {
                // The word the probe compares first.
                sink ^= c.key as u64;
            }
            std::hint::black_box(sink);
            for i in 0..n {
                let (Some(h), Some(k)) = (hash[i], key(i)) else {
                    continue;
                };
                if let Some(b) = sub.buckets.find(h, |b| sub.holds(b, k)) {
                    best[i] = best[i].better(b.same.best());
                }
            }
        }
    }

    /// Calls `f` for every bucket (every distinct non-empty match) with
    /// its best entry (in no particular order).
    pub fn for_each_bucket(&self, mut f: impl FnMut(BucketFields<'_>, Ref)) {
        for o in &self.order {
            let Some(sub) = self.sub(o.sub) else { continue };
            for b in sub.buckets.iter() {
                let fields = BucketFields {
                    shape: &sub.shape,
                    values: sub.values(b),
                };
                f(fields, b.same.best());
            }
        }
    }

    /// Calls `f` for every entry with its match (in no particular order).
    pub fn for_each(&self, mut f: impl FnMut(Ref, BucketFields<'_>)) {
        if let Some(any) = &self.any {
            for r in any.iter() {
                f(
                    r,
                    BucketFields {
                        shape: &[],
                        values: SmallVec::new(),
                    },
                );
            }
        }
        for o in &self.order {
            let Some(sub) = self.sub(o.sub) else { continue };
            for b in sub.buckets.iter() {
                for r in b.same.iter() {
                    f(
                        r,
                        BucketFields {
                            shape: &sub.shape,
                            values: sub.values(b),
                        },
                    );
                }
            }
        }
    }
}
