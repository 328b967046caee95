//! Lookups in the trie: one key, many keys level by level, IPv4
//! destinations read straight from frames (see the `lpm` module comment).

use super::*;

impl Lpm {
    /// The start of the packet's context by `scan` (`None`: no such
    /// context, or no scan list): one compare through the perfect hash
    /// when there is one, else a scan.
    #[inline]
    pub(super) fn scan_start<K: Fields>(&self, key: &K) -> Option<Start> {
        let packed = key.pack(self.packer.as_ref()?)?;
        if self.scan_mult != 0 {
            let j = self.scan_at[Lpm::scan_slot(packed, self.scan_mult)];
            let (k, start) = self.scan.get(usize::from(j))?;
            return (*k == packed).then_some(*start);
        }
        self.scan
            .iter()
            .find(|(k, _)| *k == packed)
            .map(|(_, start)| *start)
    }

    /// What direct slot `v16` holds: the walk of the trie's first
    /// `DIRECT_DEPTH` levels for those 16 bits (module comment).
    pub(super) fn direct_slot(&self, root: u32, v16: usize) -> Nib {
        let (mut best, mut n) = (Ref::NONE, root);
        for d in 0..DIRECT_DEPTH {
            let Some(node) = self.nodes.get(n as usize) else {
                break;
            };
            let x = &node.nib[(v16 >> (12 - 4 * d)) & 15];
            best = best.better(x.best());
            n = x.child;
        }
        Nib {
            rank: best.rank,
            handle: best.handle,
            child: n,
        }
    }

    /// The first step of a walk: the best so far, the next node and F's
    /// value with the bits used so far shifted out (one read of the
    /// direct table when the context has one, none otherwise).
    #[inline(always)]
    pub(super) fn first<V: Nibbles>(&self, start: Start, v: V) -> (Ref, u32, V) {
        match self
            .directs
            .get(start.direct as usize)
            .and_then(|t| t.get(v.direct()))
        {
            Some(x) => (x.best(), x.child, v.shl(DIRECT_BITS)),
            None if start.skip_depth == 0 => (Ref::NONE, start.root, v),
            None => {
                let k = 4 * start.skip_depth;
                if v.agrees(start.skip_prefix, k) {
                    (Ref::NONE, start.skip_node, v.shl(k))
                } else {
                    (Ref::NONE, NIL, v)
                }
            }
        }
    }

    /// The best entry matching `key` (`Ref::NONE` if none), see the module
    /// comment.
    #[inline]
    pub fn lookup<K: Fields>(&self, key: &K) -> Ref {
        match self.begin(key) {
            Walk::Done(r) => r,
            Walk::From { start, v } => {
                let (mut best, mut n, mut v) = self.first(start, v);
                while let Some(node) = self.nodes.get(n as usize) {
                    let x = &node.nib[(v >> 124) as usize];
                    if x.rank > best.rank {
                        best = x.best();
                    }
                    n = x.child;
                    v <<= 4;
                }
                best
            }
        }
    }

    /// `lookup` for several keys at once (`out[j]` for `keys[at[j]]`).
    /// The walks advance one level at a time across all keys
    /// (`walk_many`), so the node reads of different keys, which do not
    /// depend on one another, overlap in memory.
    ///
    /// A field of 32 bits or fewer (an IPv4 address, a port) is walked
    /// in 32-bit values, as `lookup_v4_many` walks them: each 128-bit
    /// shift of the general walk costs several instructions.
    pub fn lookup_many<K: Fields>(&self, keys: &[K], at: &[u8], out: &mut [Ref]) {
        match self.form.width <= 32 {
            true => self.lookup_many_in::<K, u32>(keys, at, out),
            false => self.lookup_many_in::<K, u128>(keys, at, out),
        }
    }

    /// `lookup_many` with F's values as `V`s (wide enough for F).
    #[inline(always)]
    pub(super) fn lookup_many_in<K: Fields, V: Nibbles>(
        &self,
        keys: &[K],
        at: &[u8],
        out: &mut [Ref],
    ) {
        let mut node = [NIL; CHUNK];
        let mut val = [V::from_left(0); CHUNK];
        let n = at.len().min(CHUNK).min(out.len());
        for i in 0..n {
            out[i] = Ref::NONE;
            let Some(key) = keys.get(usize::from(at[i])) else {
                continue;
            };
            match self.begin(key) {
                Walk::Done(r) => out[i] = r,
                Walk::From { start, v } => {
                    (out[i], node[i], val[i]) = self.first(start, V::from_left(v))
                }
            }
        }
        self.walk_many(&mut node, &mut val, &mut out[..n]);
    }

    /// Where the walks of IPv4 packets start when this trie is an IPv4
    /// routing table's: F is `ipv4_dst`, the context is `eth_type` alone
    /// (exact), and the one context there is is `eth_type=0x0800`. Every
    /// IPv4 packet (which has both fields) then walks from here with its
    /// destination address, and `lookup_v4` / `lookup_v4_many` answer as
    /// `lookup` would for its key without one (`Auto::lookup_frame`: a
    /// routing table looked up from frames, no context probe). Kept up
    /// to date with the contexts (one read).
    #[inline]
    pub fn ipv4_start(&self) -> Option<Start> {
        self.ipv4
    }

    /// `ipv4_start`, worked out.
    pub(super) fn find_ipv4_start(&self) -> Option<Start> {
        let form = &self.form;
        let eth_type = [(Field::EthType, full_mask(Field::EthType))];
        if form.field != Field::Ipv4Dst || *form.context != eth_type {
            return None;
        }
        match &self.sole {
            Some((values, start)) if **values == [u128::from(packet::ethertype::IPV4)] => {
                Some(*start)
            }
            _ => None,
        }
    }

    /// `lookup` for the key of an IPv4 packet with destination `dst`
    /// from `start` (`ipv4_start`), walked in 32 bits.
    #[inline(always)]
    pub fn lookup_v4(&self, start: Start, dst: u32) -> Ref {
        let (mut best, mut at, mut v) = self.first(start, dst);
        while let Some(nd) = self.nodes.get(at as usize) {
            let x = nd.nib[v.top()];
            if x.rank > best.rank {
                best = x.best();
            }
            at = x.child;
            v = v.next();
        }
        best
    }

    /// `lookup` for the keys of IPv4 packets with destinations `dsts`
    /// (`None`: no packet, `Ref::NONE` for it) from `start`
    /// (`ipv4_start`): `out[i]` for `dsts[i]`, at most `CHUNK`. The walks
    /// carry the address in 32 bits (the `u128` of `lookup_many` costs
    /// several instructions per shift).
    pub fn lookup_v4_many(&self, start: Start, dsts: &[Option<u32>], out: &mut [Ref]) {
        let mut node = [NIL; CHUNK];
        let mut val = [0u32; CHUNK];
        let n = dsts.len().min(CHUNK).min(out.len());
        for i in 0..n {
            out[i] = Ref::NONE;
            if let Some(d) = dsts[i] {
                (out[i], node[i], val[i]) = self.first(start, d);
            }
        }
        self.walk_many(&mut node, &mut val, &mut out[..n]);
    }

    /// The trie walks of `lookup_many` after their first step, all keys
    /// one level at a time: per key the node to read next (`node[i]`,
    /// NIL: walk over), the value of F still to read (`val[i]`,
    /// left-aligned) and the best so far (`out[i]`).
    #[inline(always)]
    pub(super) fn walk_many<V: Nibbles>(
        &self,
        node: &mut [u32; CHUNK],
        val: &mut [V; CHUNK],
        out: &mut [Ref],
    ) {
        let n = out.len().min(CHUNK);
        if n == 1 {
            // One key (a batch of one packet): nothing to overlap its
            // reads with, so it walks to its end straight, without the
            // per-level array below (filling it cost more than the walk).
            let (mut at, mut v) = (node[0], val[0]);
            while let Some(nd) = self.nodes.get(at as usize) {
                let x = nd.nib[v.top()];
                if x.rank > out[0].rank {
                    out[0] = x.best();
                }
                at = x.child;
                v = v.next();
            }
            return;
        }
        loop {
            // Each level in two passes: first only the reads (a few
            // instructions per key, so the reads of many keys are in
            // flight at once: the CPU's window holds them all, where a
            // longer loop body filled it after a few misses), then the
            // bookkeeping. A finished walk reads nothing and gets
            // `Nib::EMPTY`, which changes nothing below.
            let mut x = [Nib::EMPTY; CHUNK];
            for i in 0..n {
                if let Some(nd) = self.nodes.get(node[i] as usize) {
                    x[i] = nd.nib[val[i].top()];
                }
            }
            let mut more = false;
            for i in 0..n {
                if x[i].rank > out[i].rank {
                    out[i] = x[i].best();
                }
                node[i] = x[i].child;
                val[i] = val[i].next();
                more |= x[i].child != NIL;
            }
            if !more {
                return;
            }
        }
    }

    /// The context part of a lookup: where the packet's walk starts and
    /// its value of F, or the answer when no walk is needed. (Always
    /// inlined: `lookup_many` has two bodies, and the compiler then made
    /// this a call, 20 instructions per packet more than it saved.)
    #[inline(always)]
    pub(super) fn begin<K: Fields>(&self, key: &K) -> Walk {
        let form = &self.form;
        let present = key.present();
        if !present.contains_all(form.required) {
            return Walk::Done(Ref::NONE);
        }
        let same = |values: &[u128]| {
            values
                .iter()
                .zip(form.context.iter())
                .all(|(v, (f, m))| key.bits_inline(*f) & m == *v)
        };
        let start = match &self.sole {
            // A packed key against a few packed contexts (one included:
            // cheaper than comparing field by field through `bits`).
            _ if !self.scan.is_empty() => match self.scan_start(key) {
                Some(start) => start,
                None => return Walk::Done(Ref::NONE),
            },
            Some((values, start)) if same(values) => *start,
            Some(_) => return Walk::Done(Ref::NONE),
            None => {
                let mut h = self.hasher.build_hasher();
                for (f, m) in form.context.iter() {
                    h.write_u128(key.bits_inline(*f) & m);
                }
                match self.contexts.find(h.finish(), |c| same(&c.values)) {
                    Some(c) => c.start,
                    None => return Walk::Done(Ref::NONE),
                }
            }
        };
        if !present.contains(form.field) {
            let r = self
                .cold
                .get(start.root as usize)
                .map_or(Ref::NONE, |n| list_best(&self.lists, n.slot[ZERO_SLOT]));
            return Walk::Done(r);
        }
        Walk::From {
            start,
            v: key.bits_inline(form.field) << (128 - form.width),
        }
    }

    /// Number of direct tables in use (tests).
    #[cfg(test)]
    pub fn n_directs(&self) -> usize {
        self.directs.len() - self.free_directs.len()
    }
}
