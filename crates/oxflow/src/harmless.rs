//! `oxflow harmless COMMAND [ARGS...]`: the hybrid legacy mode's tools that
//! live in the Python tooling, started from the binary.
//!
//! `oxflow harmless capex ARGS` replaces this process with
//! `PYTHON -m oxflow.harmless.capex ARGS` (docs/harmless-capex.md); `up`,
//! `down` and `status` run the manager (`oxflow.harmless.manager`, through
//! one small module per command), `eval` the evaluation; see
//! [`crate::pyexec`] for PYTHON and how the repository is found.
//! (`oxflow harmless proxy` is Rust: [`crate::harmless_proxy`].)

use crate::pyexec::PyGroup;

/// Command name -> the Python module that runs it.
pub const HARMLESS: PyGroup = PyGroup {
    prog: "oxflow harmless",
    noun: "command",
    commands: &[
        ("capex", "oxflow.harmless.capex"),
        ("up", "oxflow.harmless.up"),
        ("down", "oxflow.harmless.down"),
        ("status", "oxflow.harmless.status"),
        ("eval", "oxflow.harmless.evaluate"),
    ],
};
