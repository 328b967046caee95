//! The group table (spec §5.6, §7.3.4.2): groups ALL, SELECT, INDIRECT and
//! FAST_FAILOVER, group-mod add / modify / delete with the spec's errors,
//! and group / bucket counters.
//!
//! Groups live in a map by id (`GroupMap`: sorted, with a direct index
//! for small ids). Chaining (a bucket with a group
//! action) is allowed; a group-mod that would make a group reach itself is
//! refused with LOOP, found by a depth-first walk over the group actions of
//! the new buckets.
//!
//! # SELECT
//!
//! A SELECT group chooses one live bucket per packet, in proportion to
//! the bucket weights, by one of two methods ([`SelectMethod`], the
//! switch's `select_method`, taken by each group when it is added or
//! modified):
//! - `Hash` (the default): the hash of the fields that identify a flow
//!   (`process::flow_hash`: MACs, ethertype, IP protocol, IPv4 or ARP
//!   addresses, IPv6 addresses, L4 ports), scaled onto the total weight;
//!   every packet of a flow takes one bucket ("stickiness"), and over
//!   many flows each bucket gets its weight's share of the flows.
//! - `RoundRobin`: packet after packet, bucket 0 `weight_0` times, then
//!   bucket 1 `weight_1` times, and so on (the live buckets only); every
//!   bucket gets exactly its share of the packets, whatever the flows,
//!   and a flow's packets are spread over the buckets. The position is
//!   the group's own in each pipeline copy: each switch worker counts the
//!   packets it forwards, so the shares are exact per worker.

use crate::action_set::bucket_ops;
use crate::port::PortTable;
use crate::program::Op;
use ofp::action::Action;
use ofp::error::{ErrorCode, GroupModFailedCode};
use ofp::group::{command, group_id, group_type, Bucket, GroupMod};
use ofp::port::port_no;

/// Indices of the buckets a packet takes through a group: always a range
/// (ALL: every bucket; INDIRECT, FAST_FAILOVER, SELECT: at most one), so
/// choosing never allocates.
pub type Chosen = std::ops::Range<usize>;

/// Packet and byte counters (groups and buckets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub packet_count: u64,
    pub byte_count: u64,
}

impl Counters {
    pub fn add(&mut self, len: usize) {
        self.packet_count += 1;
        self.byte_count += len as u64;
    }
}

/// One group entry.
#[derive(Debug, Clone)]
pub struct Group {
    pub id: u32,
    /// One of `group_type`.
    pub group_type: u8,
    pub buckets: Vec<Bucket>,
    /// Each bucket's actions compiled in action-set order (spec §5.6.1: a
    /// bucket's actions execute as an action set; [`bucket_ops`]), built
    /// once here so the packet path only reads them. While a packet runs
    /// them the packet path takes them out (`None`) and puts them back
    /// after, so it can change the rest of the pipeline meanwhile: no
    /// reference count is touched per packet (with an `Arc` clone, the
    /// workers' replicas, which share it, would all write one cache
    /// line). Loops are refused at group-mod, so a group never runs
    /// inside itself.
    pub ops: Option<Box<[Box<[Op]>]>>,
    /// The op every packet through the group runs, when the group always
    /// takes one bucket (INDIRECT; ALL of one bucket) whose actions
    /// compile to one op (a router's next hop, [`Op::Route`]; a
    /// backend's rewrite): the group action runs it as the tail without
    /// choosing buckets or reading `ops` (`exec`'s `execute_group`,
    /// `group_on_frame`). Computed by each add and modify (`one_op`).
    pub one_op: Option<Op>,
    pub counters: Counters,
    /// One per bucket.
    pub bucket_counters: Vec<Counters>,
    /// Installation time (nanoseconds, the pipeline's clock).
    pub created_at: u64,
    /// SELECT groups whose buckets watch nothing (the usual load
    /// balancer): every bucket of non-zero weight is always live, so the
    /// total weight is fixed and computed here once. `None` when some
    /// bucket watches a port or group (liveness is then read per packet).
    pub fixed_weight: Option<u64>,
    /// With `fixed_weight` up to [`PICK_TABLE_MAX`]: the bucket of every
    /// point `0..total` of the weighted choice (bucket `i` fills
    /// `weight_i` entries, in bucket order), so a packet's SELECT choice
    /// is one read instead of a walk over the buckets. Empty otherwise.
    ///
    /// ```text
    ///  weights [2, 0, 1, 3]  ->  pick_table [0, 0, 2, 3, 3, 3]
    /// ```
    pub pick_table: Box<[u16]>,
    /// How this group chooses if it is SELECT.
    pub select: SelectMethod,
    /// Round-robin position: packets chosen for so far.
    rr_next: RrPosition,
}

/// A round-robin position, advanced through shared references (the
/// choice is made while the group is only borrowed). Each pipeline copy
/// has its own and one thread uses a copy, so a plain load and store
/// suffice (no read-modify-write instruction); a clone copies the value.
#[derive(Debug, Default)]
struct RrPosition(std::sync::atomic::AtomicU64);

impl Clone for RrPosition {
    fn clone(&self) -> Self {
        RrPosition(std::sync::atomic::AtomicU64::new(self.next_peek()))
    }
}

impl RrPosition {
    fn next_peek(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The position, moved on by one.
    fn advance(&self) -> u64 {
        let n = self.next_peek();
        self.0
            .store(n.wrapping_add(1), std::sync::atomic::Ordering::Relaxed);
        n
    }
}

/// How SELECT groups choose a bucket (module comment).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SelectMethod {
    #[default]
    Hash,
    RoundRobin,
}

impl std::str::FromStr for SelectMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hash" => Ok(SelectMethod::Hash),
            "round_robin" => Ok(SelectMethod::RoundRobin),
            _ => Err(format!(
                "unknown select method {s:?} (expected \"hash\" or \"round_robin\")"
            )),
        }
    }
}

/// Largest total weight that gets a `Group::pick_table`.
pub const PICK_TABLE_MAX: u64 = 4096;

/// The `Group::pick_table` of buckets with a fixed total weight.
fn pick_table(buckets: &[Bucket], fixed_weight: Option<u64>) -> Box<[u16]> {
    match fixed_weight {
        Some(t) if t <= PICK_TABLE_MAX && buckets.len() <= usize::from(u16::MAX) => buckets
            .iter()
            .enumerate()
            .flat_map(|(i, b)| std::iter::repeat_n(i as u16, usize::from(b.weight)))
            .collect(),
        _ => Box::default(),
    }
}

/// `Group::one_op` for a group of type `ty` with buckets compiled to
/// `ops`.
fn one_op(ty: u8, ops: &[Box<[Op]>]) -> Option<Op> {
    match (ty, ops) {
        (group_type::INDIRECT | group_type::ALL, [bucket]) => match **bucket {
            [op] => Some(op),
            _ => None,
        },
        _ => None,
    }
}

/// The point of a weighted choice among `total` for a flow hash: the
/// hash scaled to `0..total` by a multiply and a shift (its high bits; no
/// division per packet).
#[inline]
fn scale(hash: u64, total: u64) -> u64 {
    ((u128::from(hash) * u128::from(total)) >> 64) as u64
}

fn gm_err(c: GroupModFailedCode) -> ErrorCode {
    ErrorCode::GroupModFailed(c)
}

/// The group actions of a bucket list.
fn referenced_groups(buckets: &[Bucket]) -> impl Iterator<Item = u32> + '_ {
    buckets.iter().flat_map(|b| {
        b.actions.iter().filter_map(|a| match a {
            Action::Group(g) => Some(*g),
            _ => None,
        })
    })
}

/// Groups by id, for the packet path's two lookups per group action: the
/// groups sit in a `Vec` sorted by id (iteration in id order, as the
/// group stats reply lists them), and ids below [`DIRECT_IDS`] (what
/// controllers use in practice) find their position in one step through
/// `direct` (id -> position, `NIL` when absent); larger ids use a binary
/// search. Group-mods are rare: an insert or a removal rebuilds `direct`
/// (O(groups)).
#[derive(Debug, Clone, Default)]
struct GroupMap {
    sorted: Vec<Group>,
    direct: Vec<u32>,
}

/// Group ids below this are found through `GroupMap::direct`.
const DIRECT_IDS: u32 = 4096;

/// "No position" in `GroupMap::direct`.
const NIL: u32 = u32::MAX;

impl GroupMap {
    /// (The direct index inlined into the packet path, the search out
    /// of line.)
    #[inline(always)]
    fn position(&self, id: u32) -> Option<usize> {
        if id < DIRECT_IDS {
            match self.direct.get(id as usize) {
                Some(&p) if p != NIL => Some(p as usize),
                _ => None,
            }
        } else {
            self.search(id)
        }
    }

    #[inline(never)]
    fn search(&self, id: u32) -> Option<usize> {
        self.sorted.binary_search_by_key(&id, |g| g.id).ok()
    }

    #[inline]
    fn get(&self, id: &u32) -> Option<&Group> {
        self.position(*id).and_then(|p| self.sorted.get(p))
    }

    #[inline]
    fn get_mut(&mut self, id: &u32) -> Option<&mut Group> {
        self.position(*id).and_then(|p| self.sorted.get_mut(p))
    }

    fn contains_key(&self, id: &u32) -> bool {
        self.position(*id).is_some()
    }

    fn values(&self) -> impl Iterator<Item = &Group> {
        self.sorted.iter()
    }

    fn keys(&self) -> impl Iterator<Item = &u32> {
        self.sorted.iter().map(|g| &g.id)
    }

    /// Adds or replaces the group with id `id` (`g.id == id`).
    fn insert(&mut self, id: u32, g: Group) {
        match self.sorted.binary_search_by_key(&id, |g| g.id) {
            Ok(p) => self.sorted[p] = g,
            Err(p) => {
                self.sorted.insert(p, g);
                self.reindex();
            }
        }
    }

    fn remove(&mut self, id: &u32) -> Option<Group> {
        let p = self.sorted.binary_search_by_key(id, |g| g.id).ok()?;
        let g = self.sorted.remove(p);
        self.reindex();
        Some(g)
    }

    fn clear(&mut self) {
        self.sorted.clear();
        self.direct.clear();
    }

    /// Rebuilds `direct` from `sorted`.
    fn reindex(&mut self) {
        let top = self
            .sorted
            .iter()
            .map(|g| g.id)
            .filter(|id| *id < DIRECT_IDS)
            .max();
        self.direct.clear();
        if let Some(top) = top {
            self.direct.resize(top as usize + 1, NIL);
            for (p, g) in self.sorted.iter().enumerate() {
                if let Some(slot) = self.direct.get_mut(g.id as usize) {
                    *slot = p as u32;
                }
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct GroupTable {
    groups: GroupMap,
    /// The method SELECT groups added or modified from now on use.
    pub select_method: SelectMethod,
}

impl GroupTable {
    pub fn new() -> GroupTable {
        GroupTable::default()
    }

    #[inline]
    pub fn get(&self, id: u32) -> Option<&Group> {
        self.groups.get(&id)
    }

    /// (Inlined: the packet path calls it once per group action.)
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Group> {
        self.groups.get_mut(&id)
    }

    pub fn contains(&self, id: u32) -> bool {
        self.groups.contains_key(&id)
    }

    /// Where group `id` sits in the table, for [`GroupTable::at`] and
    /// [`GroupTable::at_mut`]: the packet path finds a group once per
    /// group action and reaches it again through this (no group-mod runs
    /// meanwhile, so the position stays good).
    #[inline(always)]
    pub fn slot(&self, id: u32) -> Option<usize> {
        self.groups.position(id)
    }

    /// The group at `slot` (see [`GroupTable::slot`]).
    #[inline]
    pub fn at(&self, slot: usize) -> Option<&Group> {
        self.groups.sorted.get(slot)
    }

    /// The group at `slot` (see [`GroupTable::slot`]).
    #[inline]
    pub fn at_mut(&mut self, slot: usize) -> Option<&mut Group> {
        self.groups.sorted.get_mut(slot)
    }

    /// The op of the group at `slot` when it has one (`Group::one_op`),
    /// with the group and its one bucket counted for a packet of `len`
    /// bytes: what the group action runs as the tail, with no bucket to
    /// choose (`exec`'s `execute_group` and `group_on_frame`).
    #[inline(always)]
    pub(crate) fn one_op_counted(&mut self, slot: usize, len: usize) -> Option<Op> {
        let group = self.at_mut(slot)?;
        let op = group.one_op?;
        group.count(&(0..1), len);
        Some(op)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Group> {
        self.groups.values()
    }

    /// Whether `from` reaches `target` through group actions, with
    /// `from`'s buckets replaced by `buckets`.
    fn reaches(&self, buckets: &[Bucket], target: u32) -> bool {
        let mut stack: Vec<u32> = referenced_groups(buckets).collect();
        let mut seen = std::collections::BTreeSet::new();
        while let Some(g) = stack.pop() {
            if g == target {
                return true;
            }
            if seen.insert(g) {
                if let Some(grp) = self.groups.get(&g) {
                    stack.extend(referenced_groups(&grp.buckets));
                }
            }
        }
        false
    }

    /// Checks the buckets of an add/modify for group `id` of type `ty`.
    /// Output ports and groups inside the bucket actions are checked by the
    /// caller with the same rules as flow-mod actions.
    fn check_buckets(
        &self,
        id: u32,
        ty: u8,
        buckets: &[Bucket],
        ports: &PortTable,
    ) -> Result<(), ErrorCode> {
        use GroupModFailedCode as C;
        if ty == group_type::INDIRECT && buckets.len() != 1 {
            return Err(gm_err(C::InvalidGroup));
        }
        for b in buckets {
            if ty == group_type::FF {
                if b.watch_port == port_no::ANY && b.watch_group == group_id::ANY {
                    return Err(gm_err(C::BadWatch));
                }
                if b.watch_port != port_no::ANY && !ports.contains(b.watch_port) {
                    return Err(gm_err(C::BadWatch));
                }
                if b.watch_group != group_id::ANY
                    && (b.watch_group == id || !self.groups.contains_key(&b.watch_group))
                {
                    return Err(gm_err(C::BadWatch));
                }
            }
            if ty != group_type::SELECT && b.weight != 0 {
                return Err(gm_err(C::WeightUnsupported));
            }
        }
        if ty == group_type::SELECT && !buckets.is_empty() && buckets.iter().all(|b| b.weight == 0)
        {
            return Err(gm_err(C::WeightUnsupported));
        }
        if self.reaches(buckets, id) {
            return Err(gm_err(C::Loop));
        }
        Ok(())
    }

    /// Applies a group-mod. Returns the ids of the groups deleted (so the
    /// caller removes the flow entries that forward to them, reason
    /// GROUP_DELETE). The caller has checked each bucket action (output
    /// port, group existence) with the flow-mod rules.
    pub fn apply(
        &mut self,
        gm: &GroupMod,
        ports: &PortTable,
        exts: &crate::ext::registry::Extensions,
        now: u64,
    ) -> Result<Vec<u32>, ErrorCode> {
        use GroupModFailedCode as C;
        match gm.command {
            command::ADD | command::MODIFY => {
                if gm.group_id > group_id::MAX {
                    return Err(gm_err(C::InvalidGroup));
                }
                if gm.group_type > group_type::FF {
                    return Err(gm_err(C::BadType));
                }
                let exists = self.groups.contains_key(&gm.group_id);
                if gm.command == command::ADD && exists {
                    return Err(gm_err(C::GroupExists));
                }
                if gm.command == command::MODIFY && !exists {
                    return Err(gm_err(C::UnknownGroup));
                }
                self.check_buckets(gm.group_id, gm.group_type, &gm.buckets, ports)?;
                let (counters, created_at) = match self.groups.get(&gm.group_id) {
                    Some(g) => (g.counters, g.created_at),
                    None => (Counters::default(), now),
                };
                let fixed_weight = gm
                    .buckets
                    .iter()
                    .all(|b| b.watch_port == port_no::ANY && b.watch_group == group_id::ANY)
                    .then(|| gm.buckets.iter().map(|b| u64::from(b.weight)).sum());
                let ops: Box<[Box<[Op]>]> = gm
                    .buckets
                    .iter()
                    .map(|b| bucket_ops(&b.actions, exts))
                    .collect();
                self.groups.insert(
                    gm.group_id,
                    Group {
                        id: gm.group_id,
                        group_type: gm.group_type,
                        bucket_counters: vec![Counters::default(); gm.buckets.len()],
                        buckets: gm.buckets.clone(),
                        one_op: one_op(gm.group_type, &ops),
                        ops: Some(ops),
                        counters,
                        created_at,
                        fixed_weight,
                        pick_table: pick_table(&gm.buckets, fixed_weight),
                        select: self.select_method,
                        rr_next: RrPosition::default(),
                    },
                );
                Ok(Vec::new())
            }
            command::DELETE => {
                if gm.group_id == group_id::ALL {
                    let ids = self.groups.keys().copied().collect();
                    self.groups.clear();
                    return Ok(ids);
                }
                if !self.groups.contains_key(&gm.group_id) {
                    return Ok(Vec::new());
                }
                let chained = self.groups.values().any(|g| {
                    g.id != gm.group_id
                        && (referenced_groups(&g.buckets).any(|r| r == gm.group_id)
                            || g.buckets.iter().any(|b| b.watch_group == gm.group_id))
                });
                if chained {
                    return Err(gm_err(C::ChainedGroup));
                }
                self.groups.remove(&gm.group_id);
                Ok(vec![gm.group_id])
            }
            _ => Err(gm_err(C::BadCommand)),
        }
    }

    /// Liveness of a group for fast-failover `watch_group`: it has a live
    /// bucket. Depth-limited against (refused, but defensive) cycles.
    pub fn is_live(&self, id: u32, ports: &PortTable) -> bool {
        self.is_live_depth(id, ports, 0)
    }

    fn is_live_depth(&self, id: u32, ports: &PortTable, depth: u32) -> bool {
        if depth > 16 {
            return false;
        }
        self.groups.get(&id).is_some_and(|g| {
            g.buckets
                .iter()
                .any(|b| self.bucket_live(b, ports, depth + 1))
        })
    }

    fn bucket_live(&self, b: &Bucket, ports: &PortTable, depth: u32) -> bool {
        (b.watch_port == port_no::ANY || ports.is_live(b.watch_port))
            && (b.watch_group == group_id::ANY || self.is_live_depth(b.watch_group, ports, depth))
    }

    /// The buckets a packet with flow hash `hash` takes through group `g`,
    /// as a range of indices into its bucket list. `hash` is called only
    /// for a SELECT group (hashing the flow costs more than the other
    /// choices).
    #[inline]
    pub fn select_buckets(
        &self,
        g: &Group,
        hash: impl FnOnce() -> u64,
        ports: &PortTable,
    ) -> Chosen {
        match g.group_type {
            group_type::FF => g
                .buckets
                .iter()
                .position(|b| self.bucket_live(b, ports, 0))
                .map_or(0..0, |i| i..i + 1),
            group_type::SELECT if g.fixed_weight.is_none() => {
                g.pick(hash, |b| self.bucket_live(b, ports, 0))
            }
            _ => g.fixed_choice(hash).unwrap_or(0..0),
        }
    }
}

impl Group {
    /// Bucket `i`'s compiled actions, while they are in the group.
    #[inline]
    pub fn bucket(&self, i: usize) -> Option<&[Op]> {
        self.ops.as_deref()?.get(i).map(|b| &**b)
    }

    /// Takes the compiled bucket actions out of the group while a packet
    /// runs them (see [`Group::ops`]); [`Group::put_back`] returns them.
    #[inline]
    pub fn lend_ops(&mut self) -> Option<Box<[Box<[Op]>]>> {
        self.ops.take()
    }

    /// Returns what [`Group::lend_ops`] took. The slot is empty then (a
    /// group never runs inside itself): writing into it has nothing to
    /// drop, which `get_or_insert` lets the compiler see.
    #[inline]
    pub fn put_back(&mut self, ops: Box<[Box<[Op]>]>) {
        self.ops.get_or_insert(ops);
    }

    /// Counts a packet of `len` bytes through the group and the `chosen`
    /// buckets.
    #[inline(always)]
    pub fn count(&mut self, chosen: &Chosen, len: usize) {
        self.counters.add(len);
        // The chosen buckets are the group's (one counter each): one
        // range check for them all, then a plain loop.
        if let Some(cs) = self.bucket_counters.get_mut(chosen.clone()) {
            cs.iter_mut().for_each(|c| c.add(len));
        }
    }

    /// The buckets a packet takes when that depends on nothing but the
    /// group (ALL, INDIRECT, SELECT without watches; see
    /// `GroupTable::select_buckets`); `None` when port or group liveness
    /// decides (FAST_FAILOVER, SELECT with watches).
    #[inline(always)]
    pub fn fixed_choice(&self, hash: impl FnOnce() -> u64) -> Option<Chosen> {
        match self.group_type {
            group_type::ALL => Some(0..self.buckets.len()),
            group_type::INDIRECT => Some(0..self.buckets.len().min(1)),
            group_type::SELECT if self.fixed_weight.is_some() => Some(self.pick(hash, |_| true)),
            group_type::SELECT | group_type::FF => None,
            _ => Some(0..0),
        }
    }

    /// SELECT: the bucket of weighted choice among the live buckets by the
    /// flow hash (one read of `pick_table` when there is one).
    fn pick(&self, hash: impl FnOnce() -> u64, live: impl Fn(&Bucket) -> bool) -> Chosen {
        let live = |b: &Bucket| b.weight > 0 && live(b);
        let total: u64 = match self.fixed_weight {
            Some(t) => t,
            None => self
                .buckets
                .iter()
                .filter(|b| live(b))
                .map(|b| u64::from(b.weight))
                .sum(),
        };
        if total == 0 {
            return 0..0;
        }
        let mut point = match self.select {
            SelectMethod::Hash => scale(hash(), total),
            SelectMethod::RoundRobin => self.rr_next.advance() % total,
        };
        if self.fixed_weight.is_some() {
            if let Some(&i) = self.pick_table.get(point as usize) {
                let i = usize::from(i);
                return i..i + 1;
            }
        }
        for (i, b) in self.buckets.iter().enumerate() {
            if !live(b) {
                continue;
            }
            let w = u64::from(b.weight);
            if point < w {
                return i..i + 1;
            }
            point -= w;
        }
        0..0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: u32) -> Group {
        Group {
            id,
            group_type: group_type::ALL,
            buckets: Vec::new(),
            ops: Some(Box::default()),
            one_op: None,
            counters: Counters::default(),
            bucket_counters: Vec::new(),
            created_at: 0,
            fixed_weight: None,
            pick_table: Box::default(),
            select: SelectMethod::Hash,
            rr_next: RrPosition::default(),
        }
    }

    /// SELECT with fixed weights: the table gives the bucket the walk over
    /// the weights gives, for any weights and hashes; with watches (no
    /// table) the live buckets share the points.
    #[test]
    fn pick_table_agrees_with_the_walk() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..300 {
            let n = (next() % 9) as usize;
            let buckets: Vec<Bucket> = (0..n)
                .map(|_| Bucket {
                    weight: (next() % 4) as u16,
                    watch_port: port_no::ANY,
                    watch_group: group_id::ANY,
                    actions: Vec::new(),
                })
                .collect();
            let total: u64 = buckets.iter().map(|b| u64::from(b.weight)).sum();
            let mut g = group(1);
            g.group_type = group_type::SELECT;
            g.fixed_weight = Some(total);
            g.pick_table = pick_table(&buckets, Some(total));
            g.buckets = buckets;
            assert_eq!(g.pick_table.len() as u64, total);
            let mut walk = g.clone();
            walk.pick_table = Box::default();
            for _ in 0..50 {
                let h = next();
                let got = g.pick(|| h, |_| true);
                assert_eq!(got, walk.pick(|| h, |_| true));
                if total > 0 {
                    assert_eq!(got.len(), 1);
                    assert!(g.buckets[got.start].weight > 0);
                } else {
                    assert!(got.is_empty());
                }
            }
        }
    }

    /// The map agrees with a `BTreeMap` through inserts, replaces and
    /// removals of small and large ids.
    #[test]
    fn group_map_is_a_map() {
        let mut m = GroupMap::default();
        let mut want = std::collections::BTreeMap::new();
        let ids = [7u32, 1, 4095, 4096, 100, 0xffff_ff00, 7, 2, 100_000];
        for (i, id) in ids.iter().enumerate() {
            let mut g = group(*id);
            g.created_at = i as u64;
            m.insert(*id, g);
            want.insert(*id, i as u64);
            if i % 3 == 2 {
                let gone = ids[i / 2];
                assert_eq!(
                    m.remove(&gone).map(|g| g.id),
                    want.remove(&gone).map(|_| gone)
                );
            }
            let got: Vec<(u32, u64)> = m.values().map(|g| (g.id, g.created_at)).collect();
            let exp: Vec<(u32, u64)> = want.iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(got, exp);
            for probe in ids.iter().chain(&[3, 4097, u32::MAX]) {
                assert_eq!(m.get(probe).map(|g| g.created_at), want.get(probe).copied());
                assert_eq!(m.contains_key(probe), want.contains_key(probe));
            }
        }
        m.clear();
        assert!(m.get(&7).is_none() && m.values().next().is_none());
    }
}
