//! Whole-graph validation: the checks a configuration and every run-time
//! change must pass before the graph they describe may run.
//!
//! It works on a [`Shape`]: each module's declarations ([`Decl`]) and the
//! connections, without the modules themselves, so a change can be checked
//! on a copy while the running graph keeps running. Checks, in order:
//! every connection names existing modules and gates, no output gate is
//! connected twice, every output gate is connected (a dangling gate would
//! lose packets), no cycle avoids a queue, attribute sizes agree and fit,
//! and every attribute a module reads is written upstream on every path
//! from a task to it (a "must be written" data-flow: the in-set of a module
//! is the intersection of its predecessors' out-sets, solved to a fixpoint
//! from "everything"; a module without input connections, where packets
//! enter, starts from nothing).
//!
//! Each element carries the change (or configuration entry) that made it,
//! so an error can point at a line of the file.

use crate::metadata::{AttrDecl, Layout};
use std::collections::HashMap;

/// What the checks need to know about a module.
#[derive(Debug, Clone)]
pub struct Decl {
    pub name: String,
    pub kind: String,
    pub igates: usize,
    pub ogates: usize,
    pub attrs: Vec<AttrDecl>,
    pub breaks_cycles: bool,
    pub is_task: bool,
    /// The change that added it (None: it was already there).
    pub origin: Option<usize>,
}

/// One connection: (module slot, output gate) -> (module slot, input gate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub from: (usize, usize),
    pub to: (usize, usize),
    pub origin: Option<usize>,
}

/// A graph without its modules; see the module comment.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// Module slots (a removed module leaves `None`: slot numbers are stable).
    pub decls: Vec<Option<Decl>>,
    pub edges: Vec<Edge>,
}

/// Why a graph is refused, and which change (configuration entry) caused it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub origin: Option<usize>,
    pub reason: String,
}

fn refuse(origin: Option<usize>, reason: String) -> Refusal {
    Refusal { origin, reason }
}

impl Shape {
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.decls
            .iter()
            .position(|d| d.as_ref().is_some_and(|d| d.name == name))
    }

    fn decl(&self, i: usize) -> Option<&Decl> {
        self.decls.get(i).and_then(Option::as_ref)
    }

    /// Runs every check; on success returns `base` extended with the
    /// attributes of the graph (see [`crate::metadata`]).
    pub fn check(&self, base: &Layout) -> Result<Layout, Refusal> {
        self.check_gates()?;
        self.check_cycles()?;
        let mut layout = base.clone();
        for d in self.decls.iter().flatten() {
            layout
                .resolve(&d.attrs)
                .map_err(|e| refuse(d.origin, format!("module `{}`: {e}", d.name)))?;
        }
        self.check_reads(&layout)?;
        Ok(layout)
    }

    fn check_gates(&self) -> Result<(), Refusal> {
        let mut used: HashMap<(usize, usize), Option<usize>> = HashMap::new();
        for e in &self.edges {
            let (Some(f), Some(t)) = (self.decl(e.from.0), self.decl(e.to.0)) else {
                return Err(refuse(e.origin, "connection to a removed module".into()));
            };
            if e.from.1 >= f.ogates {
                return Err(refuse(
                    e.origin,
                    format!(
                        "dangling gate: `{}` ({}) has {} output gate(s), no gate {}",
                        f.name, f.kind, f.ogates, e.from.1
                    ),
                ));
            }
            if e.to.1 >= t.igates {
                return Err(refuse(
                    e.origin,
                    format!(
                        "dangling gate: `{}` ({}) has {} input gate(s), no gate {}",
                        t.name, t.kind, t.igates, e.to.1
                    ),
                ));
            }
            if used.insert(e.from, e.origin).is_some() {
                return Err(refuse(
                    e.origin,
                    format!(
                        "output gate {} of `{}` is connected twice",
                        e.from.1, f.name
                    ),
                ));
            }
        }
        for (i, d) in self.decls.iter().enumerate() {
            let Some(d) = d else { continue };
            if let Some(g) = (0..d.ogates).find(|g| !used.contains_key(&(i, *g))) {
                return Err(refuse(
                    d.origin,
                    format!(
                        "dangling gate: output gate {g} of `{}` ({}) is not connected",
                        d.name, d.kind
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Depth-first search for a cycle over edges that do not leave a queue.
    fn check_cycles(&self) -> Result<(), Refusal> {
        #[derive(Clone, Copy, PartialEq)]
        enum Color {
            White,
            Grey,
            Black,
        }
        let n = self.decls.len();
        let mut out: Vec<Vec<&Edge>> = vec![Vec::new(); n];
        for e in &self.edges {
            if self.decl(e.from.0).is_some_and(|d| !d.breaks_cycles) {
                if let Some(v) = out.get_mut(e.from.0) {
                    v.push(e);
                }
            }
        }
        let mut color = vec![Color::White; n];
        for start in 0..n {
            if color[start] != Color::White {
                continue;
            }
            // Iterative DFS: (node, next edge index).
            let mut stack = vec![(start, 0usize)];
            color[start] = Color::Grey;
            while let Some(&mut (u, ref mut k)) = stack.last_mut() {
                if let Some(e) = out[u].get(*k) {
                    *k += 1;
                    let v = e.to.0;
                    match color.get(v).copied() {
                        Some(Color::White) => {
                            color[v] = Color::Grey;
                            stack.push((v, 0));
                        }
                        Some(Color::Grey) => {
                            let name =
                                |i: usize| self.decl(i).map(|d| d.name.as_str()).unwrap_or("?");
                            return Err(refuse(
                                e.origin,
                                format!(
                                    "cycle without a queue: `{}` -> `{}` closes a loop; put a queue module in it",
                                    name(u),
                                    name(v)
                                ),
                            ));
                        }
                        _ => {}
                    }
                } else {
                    color[u] = Color::Black;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    fn check_reads(&self, layout: &Layout) -> Result<(), Refusal> {
        let index: HashMap<&str, usize> = layout
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n, i))
            .collect();
        let bits = |d: &Decl, f: fn(&AttrDecl) -> bool| -> u64 {
            d.attrs
                .iter()
                .filter(|a| f(a))
                .filter_map(|a| index.get(a.name.as_str()))
                .fold(0u64, |m, i| m | 1u64 << i)
        };
        let n = self.decls.len();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in &self.edges {
            if let Some(p) = preds.get_mut(e.to.0) {
                p.push(e.from.0);
            }
        }
        let writes: Vec<u64> = self
            .decls
            .iter()
            .map(|d| d.as_ref().map_or(0, |d| bits(d, |a| a.access.writes())))
            .collect();
        let mut out_set = vec![u64::MAX; n];
        let in_of = |i: usize, out_set: &[u64]| -> u64 {
            if preds[i].is_empty() {
                0
            } else {
                preds[i].iter().fold(u64::MAX, |m, p| m & out_set[*p])
            }
        };
        loop {
            let mut changed = false;
            for i in 0..n {
                let o = in_of(i, &out_set) | writes[i];
                if o != out_set[i] {
                    out_set[i] = o;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (i, d) in self.decls.iter().enumerate() {
            let Some(d) = d else { continue };
            let have = in_of(i, &out_set);
            for a in d.attrs.iter().filter(|a| a.access.reads()) {
                let bit = index.get(a.name.as_str()).map_or(0, |i| 1u64 << i);
                if have & bit == 0 {
                    return Err(refuse(
                        d.origin,
                        format!(
                            "module `{}` reads attribute `{}` but no module writes it on every path to it",
                            d.name, a.name
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
