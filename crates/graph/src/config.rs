//! The graph configuration file.
//!
//! ```toml
//! [[module]]              # one table per module
//! name = "in1"            # unique; no `:`
//! kind = "port_inc"       # a registered kind (crate::registry)
//! port = "eth0"           # every other key is an argument of the kind
//!
//! [[module]]
//! name = "out1"
//! kind = "port_out"
//! port = "eth1"
//!
//! [[connect]]             # output gate -> input gate
//! from = "in1"            # "module" (gate 0) or "module:gate"
//! to = "out1"             # "module" (gate 0) or "module:gate"
//!
//! [[class]]               # the worker's scheduler tree (crate::tc)
//! name = "root"
//! kind = "weighted"       # priority | weighted | round_robin | rate_limit | leaf
//! resource = "packets"    # weighted, rate_limit: count | packets | bits | cycles
//!
//! [[class]]
//! name = "in1"
//! kind = "leaf"
//! parent = "root"         # every class but the root has one
//! share = 2               # under a weighted parent (default 1)
//! priority = 0            # under a priority parent (higher first)
//! task = "in1"            # leaf: the task module it runs
//! # rate_limit takes: resource, limit (units/s), burst (units)
//! ```
//!
//! Without `[[class]]` tables the tree is a round-robin root with one leaf
//! per task module (named after it). Every task must hang from a leaf.
//!
//! Every error names the file, the line of the entry at fault and the
//! reason: a TOML syntax error, an unknown key, an unknown module kind or
//! argument, a duplicate name, a dangling gate (a connection to a module or
//! gate that does not exist, or an output gate left unconnected), a cycle
//! without a queue, an attribute read that no module writes upstream, a
//! malformed class tree.

use crate::graph::{Change, Graph};
use crate::registry::{Env, Registry};
use crate::scheduler::{spec, ClassSpec, Scheduler};
use crate::tc::{Bucket, ClassKind, Resource};
use serde::Deserialize;
use std::fmt;
use toml::Spanned;

/// A refused configuration: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.reason)
    }
}

impl std::error::Error for ConfigError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    #[serde(default)]
    module: Vec<Spanned<toml::Table>>,
    #[serde(default)]
    connect: Vec<Spanned<ConnectToml>>,
    #[serde(default)]
    class: Vec<Spanned<ClassToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectToml {
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassToml {
    name: String,
    kind: String,
    parent: Option<String>,
    #[serde(default)]
    priority: u32,
    #[serde(default = "one")]
    share: u64,
    resource: Option<String>,
    limit: Option<u64>,
    burst: Option<u64>,
    task: Option<String>,
}

fn one() -> u64 {
    1
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

/// A parsed configuration: the graph as a transaction of changes (one per
/// module and connection, each with its line) and the class tree.
pub struct GraphConfig {
    pub changes: Vec<Change>,
    lines: Vec<usize>,
    pub classes: Vec<(ClassSpec, usize)>,
    /// (class name, task module name, line) of each leaf.
    leaves: Vec<(String, String, usize)>,
    file: String,
}

impl GraphConfig {
    /// Parses `text` (the content of `file`).
    pub fn parse(text: &str, file: &str) -> Result<GraphConfig, ConfigError> {
        let at = |line: usize, reason: String| ConfigError {
            file: file.to_string(),
            line,
            reason,
        };
        let f: FileToml = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            at(line, e.message().trim().to_string())
        })?;
        let mut changes = Vec::new();
        let mut lines = Vec::new();
        for m in f.module {
            let line = line_of(text, m.span().start);
            let mut t = m.into_inner();
            let mut take = |k: &str| match t.remove(k) {
                Some(toml::Value::String(s)) => Ok(s),
                Some(_) => Err(at(line, format!("module `{k}` must be a string"))),
                None => Err(at(line, format!("module without `{k}`"))),
            };
            let name = take("name")?;
            let kind = take("kind")?;
            changes.push(Change::AddModule {
                name,
                kind,
                args: t,
            });
            lines.push(line);
        }
        for c in f.connect {
            let line = line_of(text, c.span().start);
            let c = c.into_inner();
            changes.push(Change::Connect {
                from: c.from,
                to: c.to,
            });
            lines.push(line);
        }
        let mut classes = Vec::new();
        let mut leaves = Vec::new();
        for c in f.class {
            let line = line_of(text, c.span().start);
            let c = c.into_inner();
            let resource = || {
                Resource::parse(c.resource.as_deref().unwrap_or("packets")).map_err(|e| at(line, e))
            };
            let kind = match c.kind.as_str() {
                "priority" => ClassKind::Priority,
                "round_robin" => ClassKind::RoundRobin,
                "weighted" => ClassKind::Weighted { resource: resource()? },
                "rate_limit" => {
                    let need = |v: Option<u64>, k: &str| v.ok_or_else(|| at(line, format!("rate_limit class `{}` needs `{k}`", c.name)));
                    ClassKind::RateLimit {
                        resource: resource()?,
                        bucket: Bucket::new(need(c.limit, "limit")?, need(c.burst, "burst")?, 0),
                    }
                }
                "leaf" => {
                    let task = c.task.clone().ok_or_else(|| at(line, format!("leaf class `{}` needs `task`", c.name)))?;
                    leaves.push((c.name.clone(), task, line));
                    ClassKind::Leaf { task: usize::MAX }
                }
                k => return Err(at(line, format!("unknown class kind `{k}` (priority, weighted, round_robin, rate_limit, leaf)"))),
            };
            classes.push((
                spec(&c.name, kind, c.parent.as_deref(), c.priority, c.share),
                line,
            ));
        }
        Ok(GraphConfig {
            changes,
            lines,
            classes,
            leaves,
            file: file.to_string(),
        })
    }

    fn at(&self, line: usize, reason: String) -> ConfigError {
        ConfigError {
            file: self.file.clone(),
            line,
            reason,
        }
    }

    /// Builds the graph and its scheduler (time `now` for the buckets).
    pub fn build(
        self,
        reg: &Registry,
        env: &mut Env,
        now: u64,
    ) -> Result<(Graph, Scheduler), ConfigError> {
        let mut g = Graph::new();
        g.apply(&self.changes, reg, env).map_err(|e| {
            let line = e
                .origin
                .and_then(|o| self.lines.get(o).copied())
                .unwrap_or(1);
            self.at(line, e.reason)
        })?;
        let mut s = Scheduler::new();
        if self.classes.is_empty() {
            s.add(spec("root", ClassKind::RoundRobin, None, 0, 1), now)
                .map_err(|e| self.at(1, e))?;
            for (slot, name) in g.tasks() {
                s.add(
                    spec(&name, ClassKind::Leaf { task: slot }, Some("root"), 0, 1),
                    now,
                )
                .map_err(|e| self.at(1, e))?;
            }
            return Ok((g, s));
        }
        for (mut cs, line) in self.classes.iter().cloned() {
            if let ClassKind::Leaf { task } = &mut cs.kind {
                let Some((_, tname, _)) = self.leaves.iter().find(|l| l.0 == cs.name) else {
                    return Err(self.at(line, "leaf without a task".into()));
                };
                *task = g.slot(tname).filter(|t| g.is_task(*t)).ok_or_else(|| {
                    self.at(
                        line,
                        format!("leaf `{}`: `{tname}` is not a task module", cs.name),
                    )
                })?;
            }
            s.change(|s| s.add(cs, now).map(|_| ()))
                .map_err(|e| self.at(line, e))?;
        }
        let attached: Vec<usize> = s.tasks().collect();
        if let Some((_, name)) = g.tasks().into_iter().find(|(t, _)| !attached.contains(t)) {
            let line = self
                .changes
                .iter()
                .position(|c| matches!(c, Change::AddModule { name: n, .. } if *n == name))
                .and_then(|i| self.lines.get(i).copied())
                .unwrap_or(1);
            return Err(self.at(
                line,
                format!("task module `{name}` is attached to no class"),
            ));
        }
        Ok((g, s))
    }
}
