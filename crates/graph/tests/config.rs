//! Building graphs from configuration files, and the errors a bad one
//! gets: file, line and reason.

mod common;

use graph::{FakeClock, Registry, Runtime};

fn build(text: &str) -> Result<Runtime<FakeClock>, String> {
    let (mut env, _ours) = common::mem_env(&["p1", "p2", "p3"]);
    Runtime::from_config(
        text,
        "g.toml",
        &Registry::builtin(),
        &mut env,
        FakeClock::default(),
    )
    .map_err(|e| e.to_string())
}

const GOOD: &str = r#"
[[module]]
name = "in1"
kind = "port_inc"
port = "p1"
timestamp = true

[[module]]
name = "m"
kind = "measure"
latency = true

[[module]]
name = "out2"
kind = "port_out"
port = "p2"

[[connect]]
from = "in1"
to = "m"

[[connect]]
from = "m:0"
to = "out2:0"
"#;

#[test]
fn a_good_file_builds_with_the_default_classes() {
    let rt = build(GOOD).unwrap();
    assert_eq!(rt.graph.names(), vec!["in1", "m", "out2"]);
    assert_eq!(rt.graph.layout().get("timestamp").map(|a| a.size), Some(8));
    let classes: Vec<_> = rt
        .sched
        .classes()
        .map(|c| (c.name.clone(), c.kind.name()))
        .collect();
    assert_eq!(
        classes,
        vec![
            ("root".to_string(), "round_robin"),
            ("in1".to_string(), "leaf")
        ]
    );
}

/// Asserts that `text` is refused at `line` with a reason containing `why`.
fn refused(text: &str, line: usize, why: &str) {
    let e = build(text).err().expect("refused");
    assert!(e.starts_with(&format!("g.toml:{line}: ")), "{e}");
    assert!(e.contains(why), "{e}");
}

#[test]
fn an_unknown_kind_is_refused_at_its_line() {
    refused(
        &GOOD.replace("kind = \"measure\"", "kind = \"mesure\""),
        8,
        "unknown module kind `mesure`",
    );
}

#[test]
fn an_unknown_argument_is_refused() {
    refused(
        &GOOD.replace("latency = true", "latenc = true"),
        8,
        "unknown argument `latenc`",
    );
}

#[test]
fn dangling_gates_are_refused() {
    // A connection to a module that does not exist.
    refused(
        &GOOD.replace("to = \"out2:0\"", "to = \"out3\""),
        22,
        "no module `out3`",
    );
    // To a gate that does not exist.
    refused(
        &GOOD.replace("from = \"m:0\"", "from = \"m:1\""),
        22,
        "has 1 output gate(s), no gate 1",
    );
    // An input gate of a module that has none.
    refused(
        &GOOD.replace("to = \"out2:0\"", "to = \"in1\""),
        22,
        "has 0 input gate(s)",
    );
    // An output gate left unconnected.
    let cut = GOOD.split("[[connect]]\nfrom = \"m:0\"").next().unwrap();
    refused(cut, 8, "output gate 0 of `m` (measure) is not connected");
}

#[test]
fn a_duplicate_name_is_refused() {
    refused(
        &GOOD.replace("name = \"m\"", "name = \"in1\""),
        8,
        "duplicate module name `in1`",
    );
}

#[test]
fn a_read_with_no_writer_is_refused() {
    refused(
        &GOOD.replace("timestamp = true", "timestamp = false"),
        8,
        "reads attribute `timestamp`",
    );
}

#[test]
fn a_read_written_on_one_path_only_is_refused() {
    let text = r#"
[[module]]
name = "a"
kind = "port_inc"
port = "p1"
timestamp = true

[[module]]
name = "b"
kind = "port_inc"
port = "p2"

[[module]]
name = "m"
kind = "measure"
latency = true

[[module]]
name = "s"
kind = "sink"

[[connect]]
from = "a"
to = "m"

[[connect]]
from = "b"
to = "m"

[[connect]]
from = "m"
to = "s"
"#;
    refused(text, 13, "no module writes it on every path");
    assert!(build(&text.replace("port = \"p2\"", "port = \"p2\"\ntimestamp = true")).is_ok());
}

const LOOP: &str = r#"
[[module]]
name = "in"
kind = "port_inc"
port = "p1"

[[module]]
name = "a"
kind = "pass"

[[module]]
name = "split"
kind = "vlan_split"
vlans = [10]

[[connect]]
from = "in"
to = "a"

[[connect]]
from = "a"
to = "split"

[[connect]]
from = "split:0"
to = "a"

[[module]]
name = "s"
kind = "sink"

[[connect]]
from = "split:1"
to = "s"
"#;

#[test]
fn a_cycle_needs_a_queue() {
    refused(LOOP, 24, "cycle without a queue");
    let with_queue = LOOP.replace(
        "from = \"split:0\"\nto = \"a\"",
        "from = \"split:0\"\nto = \"q\"",
    )
        + "\n[[module]]\nname = \"q\"\nkind = \"queue\"\n\n[[connect]]\nfrom = \"q\"\nto = \"a\"\n";
    let rt = build(&with_queue).unwrap();
    assert_eq!(rt.graph.tasks().len(), 2);
}

#[test]
fn syntax_and_unknown_keys_are_refused_at_their_line() {
    refused("[[module]]\nname = \"x\"\nkind = \n", 3, "");
    refused("[[modules]]\nname = \"x\"\n", 1, "unknown field `modules`");
    refused(
        "[[connect]]\nfrom = \"a\"\nto = \"b\"\nvia = 1\n",
        4,
        "unknown field `via`",
    );
    refused("[[module]]\nkind = \"sink\"\n", 1, "module without `name`");
}

const CLASSES: &str = r#"
[[class]]
name = "root"
kind = "weighted"
resource = "packets"

[[class]]
name = "slow"
kind = "rate_limit"
parent = "root"
share = 2
limit = 1000
burst = 32

[[class]]
name = "in1"
kind = "leaf"
parent = "slow"
task = "in1"
"#;

#[test]
fn classes_are_built_and_checked() {
    let rt = build(&format!("{GOOD}{CLASSES}")).unwrap();
    let kinds: Vec<_> = rt.sched.classes().map(|c| c.kind.name()).collect();
    assert_eq!(kinds, vec!["weighted", "rate_limit", "leaf"]);
    refused(
        &format!(
            "{GOOD}{}",
            CLASSES.replace("task = \"in1\"", "task = \"m\"")
        ),
        39,
        "`m` is not a task module",
    );
    refused(
        &format!(
            "{GOOD}{}",
            CLASSES.replace("parent = \"slow\"", "parent = \"fast\"")
        ),
        39,
        "no parent class `fast`",
    );
    refused(
        &format!("{GOOD}{}", CLASSES.replace("burst = 32\n", "")),
        31,
        "needs `burst`",
    );
    refused(
        &format!(
            "{GOOD}{}",
            CLASSES.replace("kind = \"weighted\"", "kind = \"fair\"")
        ),
        26,
        "unknown class kind",
    );
    let base = format!("{GOOD}{CLASSES}");
    let extra = "[[class]]\nname = \"x\"\nkind = \"round_robin\"\nparent = \"slow\"\n";
    refused(
        &format!("{base}{extra}"),
        base.lines().count() + 1,
        "rate_limit class `slow` may have one child",
    );
    let extra = "[[class]]\nname = \"y\"\nkind = \"priority\"\n";
    refused(
        &format!("{base}{extra}"),
        base.lines().count() + 1,
        "already a root",
    );
    let unattached = format!(
        "{GOOD}{}",
        CLASSES.split("[[class]]\nname = \"in1\"").next().unwrap()
    );
    refused(&unattached, 2, "task module `in1` is attached to no class");
}
