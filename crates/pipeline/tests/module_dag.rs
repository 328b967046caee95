//! The shape of the crate's source, checked so that it cannot regress:
//! the files of `src` import one another without loops (the module
//! dependencies form a DAG), and no source file is longer than 800 lines
//! (test files excepted: `tests.rs`, `*_tests.rs`).
//!
//! An import is any path in a file's code (its test modules left out)
//! that names an item of another file: `crate::a::b::X`, `super::X`,
//! `self::a::X`, `use` groups `crate::{a::X, b::Y}` and paths that start
//! with one of the file's own child modules (`a::X` in the file that
//! declares `mod a;`). A path resolves to the file of the longest module
//! prefix it names: `crate::classifier::exact::Exact` to
//! `classifier/exact.rs`, `crate::classifier::Exact` (a re-export) to
//! `classifier/mod.rs`, `crate::Pipeline` to `lib.rs`. A `mod`
//! declaration is not an import. So the root `lib.rs`, which re-exports
//! its modules' items, may be imported by nothing, and a parent module
//! that re-exports a child's item may not be imported by that child.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Longest source file allowed.
const MAX_LINES: usize = 800;

/// Whether `name` is a file of tests (left out of both checks).
fn is_test_file(name: &str) -> bool {
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// Every source file under `dir`, with its module path (`lib.rs`: empty).
fn files(dir: &Path, base: &Path, out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read src dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, base, out);
            continue;
        }
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.ends_with(".rs") || is_test_file(name) {
            continue;
        }
        let rel = p.strip_prefix(base).expect("under src");
        let mut module: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let last = module.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs");
        if !(stem == "mod" || (stem == "lib" && module.is_empty())) {
            module.push(stem.to_string());
        }
        out.insert(module, p);
    }
}

/// `text` without comments and without inline `#[cfg(test)] mod x { .. }`
/// blocks (a block ends at the first `}` in column 0).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            if let Some(next) = lines.peek() {
                let n = next.trim_start();
                if n.starts_with("mod ") && n.ends_with('{') {
                    for l in lines.by_ref() {
                        if l == "}" {
                            break;
                        }
                    }
                    continue;
                }
            }
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths in `code` that start with `crate`, `super`, `self` or one of
/// `children`, as segment lists (use groups expanded one level).
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_ident_char(chars[i - 1]) || chars[i - 1] == ':');
        if !starts_word || !is_ident_char(chars[i]) {
            i += 1;
            continue;
        }
        // Read `ident(::ident)*` and maybe a `::{...}` group.
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let s = j;
            while j < chars.len() && is_ident_char(chars[j]) {
                j += 1;
            }
            segs.push(chars[s..j].iter().collect::<String>());
            if j + 2 < chars.len() && chars[j] == ':' && chars[j + 1] == ':' {
                if chars[j + 2] == '{' {
                    let end = chars[j + 2..]
                        .iter()
                        .position(|&c| c == '}')
                        .map_or(chars.len(), |p| j + 2 + p);
                    let group: String = chars[j + 3..end].iter().collect();
                    for item in group.split(',') {
                        let mut p = segs.clone();
                        p.extend(
                            item.split("::")
                                .map(|s| s.trim().split(' ').next().unwrap_or("").to_string())
                                .filter(|s| !s.is_empty()),
                        );
                        found.push(p);
                    }
                    j = end;
                    segs.clear();
                    break;
                }
                if is_ident_char(chars[j + 2]) {
                    j += 2;
                    continue;
                }
            }
            break;
        }
        let first = segs.first().map(String::as_str).unwrap_or("");
        let relevant = matches!(first, "crate" | "super" | "self") || children.contains(first);
        if segs.len() > 1 && relevant {
            found.push(segs);
        }
        i = j.max(i + 1);
    }
    found
        .into_iter()
        .filter(|p| {
            let f = p.first().map(String::as_str).unwrap_or("");
            matches!(f, "crate" | "super" | "self") || children.contains(f)
        })
        .collect()
}

/// The module a path in module `at` names an item of: the longest prefix
/// that is a file's module.
fn resolve(
    at: &[String],
    path: &[String],
    modules: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = at.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    let mut best = None;
    let mut m = base.clone();
    if modules.contains_key(&m) {
        best = Some(m.clone());
    }
    for seg in rest {
        m.push(seg.clone());
        if modules.contains_key(&m) {
            best = Some(m.clone());
        }
    }
    best
}

/// The import graph of the files of `modules`: module -> modules it imports.
fn graph(modules: &BTreeMap<Vec<String>, PathBuf>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut g = BTreeMap::new();
    for (m, path) in modules {
        let text = std::fs::read_to_string(path).expect("read source");
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .filter_map(|k| k.last().cloned())
            .collect();
        let mut deps = BTreeSet::new();
        for p in paths(&code_of(&text), &children) {
            if let Some(target) = resolve(m, &p, modules) {
                if &target != m {
                    deps.insert(target);
                }
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

/// A loop of `g` (its modules in order, the first repeated at the end),
/// if there is one.
fn find_loop(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        m: &Vec<String>,
        g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        mark: &mut BTreeMap<Vec<String>, Mark>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        mark.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for d in g.get(m).into_iter().flatten() {
            match mark.get(d).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let at = stack.iter().position(|s| s == d).unwrap_or(0);
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(d.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(d, g, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(m.clone(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for m in g.keys() {
        if mark.get(m).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(m, g, &mut mark, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "lib".to_string()
    } else {
        m.join("::")
    }
}

#[test]
fn source_files_import_one_another_without_loops() {
    let mut modules = BTreeMap::new();
    files(&src(), &src(), &mut modules);
    assert!(modules.len() > 20, "found only {} files", modules.len());
    let g = graph(&modules);
    // The executor depends on the tables, never the other way round.
    let exec = vec!["exec".to_string()];
    assert!(g[&exec].contains(&vec!["table_kind".to_string()]));
    if let Some(cycle) = find_loop(&g) {
        let names: Vec<String> = cycle.iter().map(|m| name(m)).collect();
        panic!("import loop between files: {}", names.join(" -> "));
    }
}

#[test]
fn no_source_file_is_longer_than_800_lines() {
    let mut modules = BTreeMap::new();
    files(&src(), &src(), &mut modules);
    let long: Vec<String> = modules
        .values()
        .filter_map(|p| {
            let n = std::fs::read_to_string(p).ok()?.lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "longer than {MAX_LINES} lines: {long:?}");
}

/// The checker itself finds loops: through `super`, through a parent's
/// re-export, and through the crate root.
#[test]
fn the_checker_finds_loops() {
    let dir = std::env::temp_dir().join(format!("module_dag_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).expect("temp dir");
    let write = |p: &str, t: &str| std::fs::write(dir.join(p), t).expect("write");
    write("lib.rs", "mod a;\nmod b;\npub use b::B;\n");
    write("a/mod.rs", "mod c;\npub use c::C;\n");
    write(
        "a/c.rs",
        "// use super::X; in a comment\nuse crate::b::B;\n",
    );
    write(
        "b.rs",
        "pub struct B;\n#[cfg(test)]\nmod tests {\n    use crate::B;\n}\n",
    );
    let mut modules = BTreeMap::new();
    files(&dir, &dir, &mut modules);
    assert_eq!(find_loop(&graph(&modules)), None);
    // A child naming its parent's item.
    write("a/c.rs", "use super::C as D;\n");
    let mut modules = BTreeMap::new();
    files(&dir, &dir, &mut modules);
    assert!(find_loop(&graph(&modules)).is_some());
    // A module naming an item the root re-exports, in a use group.
    write("a/c.rs", "pub struct C;\n");
    write("b.rs", "use crate::{a::C, B as _};\npub struct B;\n");
    let mut modules = BTreeMap::new();
    files(&dir, &dir, &mut modules);
    let cycle = find_loop(&graph(&modules)).expect("loop through lib");
    assert!(cycle.iter().any(|m| m.is_empty()), "{cycle:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
