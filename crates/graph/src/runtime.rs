//! A worker's graph and scheduler together: one round runs the task the
//! scheduler picks and charges what it used; run-time changes of either go
//! through here so the two stay consistent (a removed task module leaves
//! no leaf behind, a leaf only runs a task the graph has).

use crate::change::{ChangeSet, ClassChange};
use crate::config::{ConfigError, GraphConfig};
use crate::graph::{Change, Graph, GraphError};
use crate::module::Ctx;
use crate::registry::{Env, Registry};
use crate::scheduler::{spec, Clock, Scheduler};
use crate::tc::ClassKind;

/// One worker's data path; see the module comment.
pub struct Runtime<C: Clock> {
    pub graph: Graph,
    pub sched: Scheduler,
    pub clock: C,
    pub worker: usize,
}

impl<C: Clock> Runtime<C> {
    /// Builds from configuration text (`file` names it in errors).
    pub fn from_config(
        text: &str,
        file: &str,
        reg: &Registry,
        env: &mut Env,
        clock: C,
    ) -> Result<Runtime<C>, ConfigError> {
        let (graph, sched) = GraphConfig::parse(text, file)?.build(reg, env, clock.now())?;
        Ok(Runtime {
            graph,
            sched,
            clock,
            worker: 0,
        })
    }

    /// Runs one scheduling round; false if no class could run.
    pub fn round(&mut self) -> bool {
        self.step().is_some()
    }

    /// Runs one scheduling round and returns what the task used; `None` if
    /// no class could run (nothing attached, or every class over its limit).
    pub fn step(&mut self) -> Option<crate::module::Usage> {
        let now = self.clock.now();
        self.step_at(now).map(|(u, _)| u)
    }

    /// [`Runtime::step`] at `now`, a reading of the clock just taken (a
    /// caller running rounds back to back passes the previous round's
    /// end, saving a clock read per round); returns also the clock at the
    /// round's end.
    #[inline]
    pub fn step_at(&mut self, now: u64) -> Option<(crate::module::Usage, u64)> {
        let (leaf, task) = self.sched.next(now)?;
        let ctx = Ctx {
            now,
            worker: self.worker,
        };
        let mut u = self.graph.run_task(task, &ctx);
        let end = self.clock.now();
        u.cycles = end.saturating_sub(now);
        self.sched.charge(leaf, &u, end);
        Some((u, end))
    }

    /// Applies a graph transaction; the leaves of removed task modules go.
    pub fn apply(
        &mut self,
        changes: &[Change],
        reg: &Registry,
        env: &mut Env,
    ) -> Result<(), GraphError> {
        let removed: Vec<usize> = changes
            .iter()
            .filter_map(|c| match c {
                Change::RemoveModule { name } => self.graph.slot(name),
                _ => None,
            })
            .collect();
        self.graph.apply(changes, reg, env)?;
        for t in removed {
            self.sched.detach_task(t);
        }
        Ok(())
    }

    /// Applies a change set ([`crate::change`]): the graph transaction
    /// (all or nothing), then the class changes (all or nothing, on a copy
    /// of the tree). If only the class part is refused the graph keeps its
    /// change, so a caller that must stay unchanged on any refusal
    /// validates the set on a copy first (the switch's control thread
    /// does). The error starts with `line N: `.
    pub fn apply_set(
        &mut self,
        set: &ChangeSet,
        reg: &Registry,
        env: &mut Env,
    ) -> Result<(), String> {
        self.apply(&set.graph, reg, env).map_err(|e| {
            let line = e
                .origin
                .and_then(|o| set.graph_lines.get(o).copied())
                .unwrap_or(1);
            format!("line {line}: {}", e.reason)
        })?;
        let now = self.clock.now();
        let graph = &self.graph;
        let slot_of = |task: &str| {
            graph
                .slot(task)
                .filter(|s| graph.is_task(*s))
                .ok_or_else(|| format!("`{task}` is not a task module"))
        };
        let tasks = graph.tasks();
        self.sched.change(|s| {
            for (c, line) in &set.classes {
                let at = |e: String| format!("line {line}: {e}");
                match c {
                    ClassChange::Attach {
                        class,
                        parent,
                        task,
                        priority,
                        share,
                    } => {
                        let slot = slot_of(task).map_err(at)?;
                        s.add(
                            spec(
                                class,
                                ClassKind::Leaf { task: slot },
                                Some(parent),
                                *priority,
                                *share,
                            ),
                            now,
                        )
                        .map_err(at)?;
                    }
                    ClassChange::Detach { class } => s.remove(class).map_err(at)?,
                    ClassChange::Share { class, share } => {
                        s.set_share(class, *share).map_err(at)?
                    }
                    ClassChange::Limit {
                        class,
                        limit,
                        burst,
                    } => s.set_limit(class, *limit, *burst).map_err(at)?,
                }
            }
            let attached: Vec<usize> = s.tasks().collect();
            match tasks.iter().find(|(t, _)| !attached.contains(t)) {
                Some((_, name)) => Err(format!(
                    "task module `{name}` is attached to no class (add an [[attach]])"
                )),
                None => Ok(()),
            }
        })
    }

    /// Attaches task module `task` to a new leaf `leaf` under `parent`.
    pub fn attach(
        &mut self,
        leaf: &str,
        parent: &str,
        task: &str,
        priority: u32,
        share: u64,
    ) -> Result<(), String> {
        let slot = self
            .graph
            .slot(task)
            .filter(|s| self.graph.is_task(*s))
            .ok_or_else(|| format!("`{task}` is not a task module"))?;
        let now = self.clock.now();
        self.sched.change(|s| {
            s.add(
                spec(
                    leaf,
                    ClassKind::Leaf { task: slot },
                    Some(parent),
                    priority,
                    share,
                ),
                now,
            )
            .map(|_| ())
        })
    }
}
