//! A run-time change set: a graph transaction and class changes, as TOML
//! text (what `oxflow ctl graph-change` sends, docs/graph.md).
//!
//! ```toml
//! [[disconnect]]            # output gate "module" or "module:gate"
//! from = "in2"
//! [[remove]]                # a module (its connections and leaves go too)
//! name = "m2"
//! [[module]]                # a new module: as in the configuration file
//! name = "m3"
//! kind = "measure"
//! [[connect]]
//! from = "in2"
//! to = "m3"
//! [[attach]]                # a new leaf running task module `task`
//! class = "in4"
//! parent = "root"
//! task = "in4"
//! share = 1                 # optional (weighted parent), default 1
//! priority = 0              # optional (priority parent), default 0
//! [[detach]]                # removes class `class` and what is under it
//! class = "in4"
//! [[set]]                   # a class's share, or a rate limit's limit and burst
//! class = "slow"
//! share = 2                 # or: limit = 100000, burst = 32
//! ```
//!
//! The graph part is applied as one transaction in the order disconnect,
//! remove, module, connect (so a gate can be moved: disconnect then
//! connect), then the class changes in the order attach, detach, set,
//! on a copy of the tree; every task module must end up attached to a
//! class. [`crate::Runtime::apply_set`] applies all of it or nothing:
//! a refusal names the line of the entry at fault.

use crate::graph::Change;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetToml {
    #[serde(default)]
    disconnect: Vec<Spanned<FromToml>>,
    #[serde(default)]
    remove: Vec<Spanned<NameToml>>,
    #[serde(default)]
    module: Vec<Spanned<toml::Table>>,
    #[serde(default)]
    connect: Vec<Spanned<ConnectToml>>,
    #[serde(default)]
    attach: Vec<Spanned<AttachToml>>,
    #[serde(default)]
    detach: Vec<Spanned<ClassToml>>,
    #[serde(default)]
    set: Vec<Spanned<SetClassToml>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FromToml {
    from: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameToml {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectToml {
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachToml {
    class: String,
    parent: String,
    task: String,
    #[serde(default)]
    priority: u32,
    #[serde(default = "one")]
    share: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassToml {
    class: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetClassToml {
    class: String,
    share: Option<u64>,
    limit: Option<u64>,
    burst: Option<u64>,
}

fn one() -> u64 {
    1
}

/// One change of the class tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassChange {
    Attach {
        class: String,
        parent: String,
        task: String,
        priority: u32,
        share: u64,
    },
    Detach {
        class: String,
    },
    Share {
        class: String,
        share: u64,
    },
    Limit {
        class: String,
        limit: u64,
        burst: u64,
    },
}

/// A parsed change set; see the module comment.
#[derive(Debug, Clone, Default)]
pub struct ChangeSet {
    pub graph: Vec<Change>,
    /// Line of each graph change.
    pub graph_lines: Vec<usize>,
    pub classes: Vec<(ClassChange, usize)>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).unwrap_or(text).matches('\n').count() + 1
}

impl ChangeSet {
    /// Parses `text`; the error starts with `line N: `.
    pub fn parse(text: &str) -> Result<ChangeSet, String> {
        let f: SetToml = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            format!("line {line}: {}", e.message().trim())
        })?;
        let mut s = ChangeSet::default();
        let line = |sp: std::ops::Range<usize>| line_of(text, sp.start);
        for d in f.disconnect {
            s.graph_lines.push(line(d.span()));
            s.graph.push(Change::Disconnect {
                from: d.into_inner().from,
            });
        }
        for r in f.remove {
            s.graph_lines.push(line(r.span()));
            s.graph.push(Change::RemoveModule {
                name: r.into_inner().name,
            });
        }
        for m in f.module {
            let l = line(m.span());
            let mut t = m.into_inner();
            let mut take = |k: &str| match t.remove(k) {
                Some(toml::Value::String(v)) => Ok(v),
                _ => Err(format!("line {l}: module needs a string `{k}`")),
            };
            let (name, kind) = (take("name")?, take("kind")?);
            s.graph_lines.push(l);
            s.graph.push(Change::AddModule {
                name,
                kind,
                args: t,
            });
        }
        for c in f.connect {
            s.graph_lines.push(line(c.span()));
            let c = c.into_inner();
            s.graph.push(Change::Connect {
                from: c.from,
                to: c.to,
            });
        }
        for a in f.attach {
            let l = line(a.span());
            let a = a.into_inner();
            s.classes.push((
                ClassChange::Attach {
                    class: a.class,
                    parent: a.parent,
                    task: a.task,
                    priority: a.priority,
                    share: a.share,
                },
                l,
            ));
        }
        for d in f.detach {
            let l = line(d.span());
            s.classes.push((
                ClassChange::Detach {
                    class: d.into_inner().class,
                },
                l,
            ));
        }
        for c in f.set {
            let l = line(c.span());
            let c = c.into_inner();
            let ch = match (c.share, c.limit, c.burst) {
                (Some(share), None, None) => ClassChange::Share {
                    class: c.class,
                    share,
                },
                (None, Some(limit), Some(burst)) => ClassChange::Limit {
                    class: c.class,
                    limit,
                    burst,
                },
                _ => {
                    return Err(format!(
                        "line {l}: set `share`, or `limit` and `burst`, of class `{}`",
                        c.class
                    ))
                }
            };
            s.classes.push((ch, l));
        }
        Ok(s)
    }

    pub fn is_empty(&self) -> bool {
        self.graph.is_empty() && self.classes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_in_application_order_with_lines() {
        let s = ChangeSet::parse(
            "[[connect]]\nfrom = \"a\"\nto = \"m\"\n[[module]]\nname = \"m\"\nkind = \"pass\"\n\
             [[disconnect]]\nfrom = \"a\"\n[[set]]\nclass = \"c\"\nlimit = 5\nburst = 2\n",
        )
        .unwrap();
        assert!(matches!(&s.graph[0], Change::Disconnect { from } if from == "a"));
        assert!(matches!(&s.graph[1], Change::AddModule { name, .. } if name == "m"));
        assert!(matches!(&s.graph[2], Change::Connect { .. }));
        assert_eq!(s.graph_lines, [7, 4, 1]);
        assert_eq!(
            s.classes,
            [(
                ClassChange::Limit {
                    class: "c".into(),
                    limit: 5,
                    burst: 2
                },
                9
            )]
        );
    }

    #[test]
    fn bad_sets_name_the_line() {
        for (t, want) in [
            ("[[remove]]\nnom = \"x\"\n", "line 2: unknown field `nom`"),
            ("[[set]]\nclass = \"c\"\n", "line 1: set `share`"),
            (
                "[[module]]\nkind = \"pass\"\n",
                "line 1: module needs a string `name`",
            ),
            ("[[frobnicate]]\n", "line 1: unknown field `frobnicate`"),
        ] {
            let e = ChangeSet::parse(t).unwrap_err();
            assert!(e.starts_with(want), "{t}: {e}");
        }
    }
}
