//! A worker's scheduler: a tree of traffic classes ([`crate::tc`]) that
//! picks which task runs next.
//!
//! [`Scheduler::next`] walks from the root: a priority class tries its
//! children from the highest priority down, a weighted class from the
//! lowest pass up, a round-robin class from the child after the last one
//! that ran, and a rate limit only if its bucket has tokens; the first leaf
//! reached is the answer. The caller runs the leaf's task and reports its
//! [`Usage`] to [`Scheduler::charge`], which walks back up: every class on
//! the path counts the usage, weighted parents advance the child's pass,
//! rate limits take tokens.
//!
//! A task that found nothing to do is charged as usual and its leaf then
//! rests for `idle_backoff` nanoseconds (skipped by `next`), so an idle
//! port cannot take the turns of a busy one under a weighted parent whose
//! resource it would not consume. A weighted child that could not run for
//! a while (throttled, resting) gets its pass raised to the parent's
//! current pass when it runs again, so it cannot make up for lost time in
//! one burst.
//!
//! Time comes from a [`Clock`] chosen by the caller (a fake one in tests).
//! Changes ([`Scheduler::change`]) are made on a copy, checked, and only
//! then swapped in.

use crate::module::Usage;
use crate::tc::{Bucket, ClassKind, ClassUsage, Resource};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Nanoseconds since some fixed moment.
pub trait Clock: Send {
    fn now(&self) -> u64;
}

/// The monotonic clock of the OS.
#[derive(Debug, Clone, Copy)]
pub struct MonoClock(Instant);

impl Default for MonoClock {
    fn default() -> Self {
        MonoClock(Instant::now())
    }
}

impl Clock for MonoClock {
    fn now(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

/// A clock tests move by hand (clones share the time).
#[derive(Debug, Clone, Default)]
pub struct FakeClock(pub Arc<AtomicU64>);

impl FakeClock {
    pub fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::Relaxed);
    }
    pub fn set(&self, ns: u64) {
        self.0.store(ns, Ordering::Relaxed);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Scale of a stride: `STRIDE / share` per unit used.
const STRIDE: u128 = 1 << 40;
/// Most children of a weighted class (`next` tracks them in a bit set).
pub const MAX_WEIGHTED: usize = 128;
/// Default rest of a leaf whose task found nothing (5 µs).
pub const IDLE_BACKOFF: u64 = 5_000;

/// One class of the tree.
#[derive(Debug, Clone)]
pub struct Class {
    pub name: String,
    pub kind: ClassKind,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Its priority under a priority parent (higher runs first).
    pub priority: u32,
    /// Its share under a weighted parent.
    pub share: u64,
    /// `STRIDE / share`, the pass one unit of use costs.
    stride: u128,
    pass: u128,
    /// Weighted: the pass of the child that ran last. Round robin: the
    /// position of the next child to try.
    cursor: u128,
    /// Leaf: not before this time.
    rest_until: u64,
    pub usage: ClassUsage,
}

/// Where a new class goes and what it is.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    pub name: String,
    pub kind: ClassKind,
    pub parent: Option<String>,
    pub priority: u32,
    pub share: u64,
}

/// A worker's class tree; see the module comment.
#[derive(Debug, Clone)]
pub struct Scheduler {
    classes: Vec<Option<Class>>,
    root: Option<usize>,
    pub idle_backoff: u64,
    /// Rounds where nothing could run.
    pub idle_rounds: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Scheduler {
            classes: Vec::new(),
            root: None,
            idle_backoff: IDLE_BACKOFF,
            idle_rounds: 0,
        }
    }
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Scheduler::default()
    }

    fn get(&self, i: usize) -> Option<&Class> {
        self.classes.get(i).and_then(Option::as_ref)
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut Class> {
        self.classes.get_mut(i).and_then(Option::as_mut)
    }

    /// The slot of class `name`.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.classes
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.name == name))
    }

    /// Applies `f` to a copy and swaps it in if `f` succeeds and the tree
    /// is well formed; otherwise nothing changes.
    pub fn change(
        &mut self,
        f: impl FnOnce(&mut Scheduler) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut copy = self.clone();
        f(&mut copy)?;
        copy.check()?;
        *self = copy;
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        for c in self.classes.iter().flatten() {
            match c.kind {
                ClassKind::RateLimit { .. } if c.children.len() > 1 => {
                    return Err(format!("rate_limit class `{}` may have one child", c.name))
                }
                ClassKind::Leaf { .. } if !c.children.is_empty() => {
                    return Err(format!("leaf class `{}` cannot have children", c.name))
                }
                ClassKind::Weighted { .. } if c.children.len() > MAX_WEIGHTED => {
                    return Err(format!(
                        "weighted class `{}` may have {MAX_WEIGHTED} children",
                        c.name
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Adds a class (the first class without a parent is the root; a
    /// second one is refused). Use through [`Scheduler::change`].
    pub fn add(&mut self, spec: ClassSpec, now: u64) -> Result<usize, String> {
        if self.find(&spec.name).is_some() {
            return Err(format!("duplicate class name `{}`", spec.name));
        }
        let parent = match &spec.parent {
            None if self.root.is_some() => {
                return Err(format!(
                    "class `{}` has no parent and there is already a root",
                    spec.name
                ))
            }
            None => None,
            Some(p) => Some(
                self.find(p)
                    .ok_or_else(|| format!("class `{}`: no parent class `{p}`", spec.name))?,
            ),
        };
        if let Some(p) = parent.and_then(|p| self.get(p)) {
            if let ClassKind::Weighted { .. } = p.kind {
                if spec.share == 0 {
                    return Err(format!("class `{}`: share must be at least 1", spec.name));
                }
            }
        }
        let mut kind = spec.kind;
        if let ClassKind::RateLimit { bucket, .. } = &mut kind {
            if bucket.limit == 0 || bucket.burst == 0 {
                return Err(format!(
                    "class `{}`: limit and burst must be at least 1",
                    spec.name
                ));
            }
            *bucket = Bucket::new(bucket.limit, bucket.burst, now);
        }
        // A new weighted child starts at its siblings' lowest pass.
        let pass = parent
            .and_then(|p| self.get(p))
            .map(|p| {
                p.children
                    .iter()
                    .filter_map(|c| self.get(*c))
                    .map(|c| c.pass)
                    .min()
                    .unwrap_or(p.cursor)
            })
            .unwrap_or(0);
        let slot = self.classes.len();
        self.classes.push(Some(Class {
            name: spec.name,
            kind,
            parent,
            children: Vec::new(),
            priority: spec.priority,
            share: spec.share.max(1),
            stride: STRIDE / u128::from(spec.share.max(1)),
            pass,
            cursor: 0,
            rest_until: 0,
            usage: ClassUsage::default(),
        }));
        match parent {
            None => self.root = Some(slot),
            Some(p) => {
                let prios: Vec<(usize, u32)> = {
                    let pc = self.get(p).map(|c| c.children.clone()).unwrap_or_default();
                    pc.into_iter()
                        .chain([slot])
                        .map(|c| (c, self.get(c).map_or(0, |c| c.priority)))
                        .collect()
                };
                let mut sorted = prios;
                // Highest priority first; ties keep insertion order.
                sorted.sort_by_key(|b| std::cmp::Reverse(b.1));
                if let Some(pc) = self.get_mut(p) {
                    pc.children = sorted.into_iter().map(|x| x.0).collect();
                }
            }
        }
        Ok(slot)
    }

    /// Removes a class and everything under it.
    pub fn remove(&mut self, name: &str) -> Result<(), String> {
        let slot = self
            .find(name)
            .ok_or_else(|| format!("no class `{name}`"))?;
        self.remove_slot(slot);
        Ok(())
    }

    fn remove_slot(&mut self, slot: usize) {
        let Some(c) = self.classes.get_mut(slot).and_then(Option::take) else {
            return;
        };
        for ch in c.children {
            self.remove_slot(ch);
        }
        match c.parent {
            Some(p) => {
                if let Some(pc) = self.get_mut(p) {
                    pc.children.retain(|x| *x != slot);
                }
            }
            None => self.root = None,
        }
    }

    /// Removes the leaves of task `task` (its module was removed).
    pub fn detach_task(&mut self, task: usize) {
        let leaves: Vec<usize> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Some(Class { kind: ClassKind::Leaf { task: t }, .. }) if *t == task))
            .map(|(i, _)| i)
            .collect();
        for l in leaves {
            self.remove_slot(l);
        }
    }

    /// Changes a class's share (weighted parent) or priority.
    pub fn set_share(&mut self, name: &str, share: u64) -> Result<(), String> {
        if share == 0 {
            return Err("share must be at least 1".into());
        }
        let slot = self
            .find(name)
            .ok_or_else(|| format!("no class `{name}`"))?;
        if let Some(c) = self.get_mut(slot) {
            c.share = share;
            c.stride = STRIDE / u128::from(share);
        }
        Ok(())
    }

    /// Changes a rate limit's limit and burst.
    pub fn set_limit(&mut self, name: &str, limit: u64, burst: u64) -> Result<(), String> {
        if limit == 0 || burst == 0 {
            return Err("limit and burst must be at least 1".into());
        }
        let slot = self
            .find(name)
            .ok_or_else(|| format!("no class `{name}`"))?;
        match self.get_mut(slot).map(|c| &mut c.kind) {
            Some(ClassKind::RateLimit { bucket, .. }) => {
                bucket.set(limit, burst);
                Ok(())
            }
            _ => Err(format!("class `{name}` is not a rate_limit")),
        }
    }

    /// The next leaf to run and its task, or `None` if nothing may run now.
    pub fn next(&mut self, now: u64) -> Option<(usize, usize)> {
        let r = self.root.and_then(|r| self.pick(r, now));
        if r.is_none() {
            self.idle_rounds += 1;
        }
        r
    }

    fn pick(&mut self, c: usize, now: u64) -> Option<(usize, usize)> {
        let class = self.classes.get_mut(c)?.as_mut()?;
        match &mut class.kind {
            ClassKind::Leaf { task } => (class.rest_until <= now).then_some((c, *task)),
            ClassKind::RateLimit { bucket, .. } => {
                bucket.refill(now);
                if !bucket.ready() {
                    class.usage.throttled += 1;
                    return None;
                }
                let child = *class.children.first()?;
                self.pick(child, now)
            }
            ClassKind::Priority => {
                let n = class.children.len();
                (0..n).find_map(|i| {
                    let ch = *self.get(c)?.children.get(i)?;
                    self.pick(ch, now)
                })
            }
            ClassKind::RoundRobin => {
                let n = class.children.len();
                let start = class.cursor as usize;
                for k in 0..n {
                    let i = (start + k) % n;
                    let Some(ch) = self.get(c).and_then(|p| p.children.get(i).copied()) else {
                        continue;
                    };
                    if let Some(r) = self.pick(ch, now) {
                        if let Some(p) = self.get_mut(c) {
                            p.cursor = ((i + 1) % n) as u128;
                        }
                        return Some(r);
                    }
                }
                None
            }
            ClassKind::Weighted { .. } => {
                let n = class.children.len().min(MAX_WEIGHTED);
                let mut tried: u128 = 0;
                for _ in 0..n {
                    let p = self.get(c)?;
                    let best = (0..n)
                        .filter(|i| tried & (1 << i) == 0)
                        .filter_map(|i| Some((i, self.get(*p.children.get(i)?)?.pass)))
                        .min_by_key(|x| x.1);
                    let (i, pass) = best?;
                    tried |= 1 << i;
                    let ch = *p.children.get(i)?;
                    if let Some(r) = self.pick(ch, now) {
                        let vt = self.get(c)?.cursor;
                        if let Some(child) = self.get_mut(ch) {
                            child.pass = pass.max(vt);
                        }
                        if let Some(p) = self.get_mut(c) {
                            p.cursor = pass.max(vt);
                        }
                        return Some(r);
                    }
                }
                None
            }
        }
    }

    /// Charges a run of `leaf`'s task (see the module comment).
    pub fn charge(&mut self, leaf: usize, u: &Usage, now: u64) {
        if u.packets == 0 {
            let backoff = self.idle_backoff;
            if let Some(l) = self.get_mut(leaf) {
                l.rest_until = now + backoff;
            }
        }
        let mut cur = Some(leaf);
        while let Some(c) = cur {
            let Some(class) = self.get_mut(c) else { break };
            class.usage.add(u);
            if let ClassKind::RateLimit { resource, bucket } = &mut class.kind {
                bucket.charge(resource.of(u));
            }
            let (parent, stride) = (class.parent, class.stride);
            if let Some(p) = parent {
                if let Some(Class {
                    kind: ClassKind::Weighted { resource },
                    ..
                }) = self.get(p)
                {
                    let units = u128::from(resource.of(u).max(1));
                    if let Some(class) = self.get_mut(c) {
                        class.pass += units * stride;
                    }
                }
            }
            cur = parent;
        }
    }

    /// Every class with its usage, in the order added.
    pub fn classes(&self) -> impl Iterator<Item = &Class> {
        self.classes.iter().flatten()
    }

    /// The usage of class `name`.
    pub fn usage(&self, name: &str) -> Option<ClassUsage> {
        self.find(name).and_then(|s| self.get(s)).map(|c| c.usage)
    }

    /// Task slots attached to leaves.
    pub fn tasks(&self) -> impl Iterator<Item = usize> + '_ {
        self.classes().filter_map(|c| match c.kind {
            ClassKind::Leaf { task } => Some(task),
            _ => None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }
}

/// A class spec in one call (tests and configuration).
pub fn spec(
    name: &str,
    kind: ClassKind,
    parent: Option<&str>,
    priority: u32,
    share: u64,
) -> ClassSpec {
    ClassSpec {
        name: name.to_string(),
        kind,
        parent: parent.map(str::to_string),
        priority,
        share,
    }
}

/// A rate-limit kind.
pub fn rate_limit(resource: Resource, limit: u64, burst: u64) -> ClassKind {
    ClassKind::RateLimit {
        resource,
        bucket: Bucket::new(limit, burst, 0),
    }
}
