//! `oxflow eval EXPERIMENT [ARGS...]`: evaluations that live in the Python
//! tooling (Mininet, os-ken), started from the binary.
//!
//! `oxflow eval datacenter ARGS` replaces this process with
//! `PYTHON -m oxflow.datacenter ARGS` (docs/datacenter.md); see
//! [`crate::pyexec`] for PYTHON and how the repository is found.

use crate::pyexec::PyGroup;

/// Experiment name -> the Python module that runs it.
pub const EVAL: PyGroup = PyGroup {
    prog: "oxflow eval",
    noun: "experiment",
    commands: &[("datacenter", "oxflow.datacenter")],
};
