//! `oxflow eval EXPERIMENT [ARGS...]`: evaluations that live in the Python
//! tooling (Mininet, os-ken), started from the binary.
//!
//! `oxflow eval datacenter ARGS` replaces this process with
//! `PYTHON -m oxflow.datacenter ARGS` (docs/datacenter.md); see
//! [`crate::pyexec`] for PYTHON and how the repository is found.

/// Experiment name -> the Python module that runs it.
const EXPERIMENTS: &[(&str, &str)] = &[("datacenter", "oxflow.datacenter")];

fn usage() -> String {
    let names: Vec<&str> = EXPERIMENTS.iter().map(|(n, _)| *n).collect();
    format!(
        "usage: oxflow eval EXPERIMENT [ARGS...]   (experiments: {}; \
         `oxflow eval datacenter --help`)",
        names.join(", ")
    )
}

/// Runs the evaluation; returns only on error (with the exit status).
pub fn main_with_args(words: Vec<String>) -> u8 {
    let Some((name, rest)) = words.split_first() else {
        eprintln!("{}", usage());
        return 2;
    };
    if name == "--help" || name == "-h" {
        println!("{}", usage());
        return 0;
    }
    let Some((_, module)) = EXPERIMENTS.iter().find(|(n, _)| n == name) else {
        eprintln!("oxflow eval: unknown experiment {name:?}\n{}", usage());
        return 2;
    };
    crate::pyexec::exec_module("oxflow eval", module, rest)
}

#[cfg(test)]
mod tests {
    use super::main_with_args;

    #[test]
    fn unknown_or_missing_experiment_is_a_usage_error() {
        assert_eq!(main_with_args(vec![]), 2);
        assert_eq!(main_with_args(vec!["nosuch".into()]), 2);
        assert_eq!(main_with_args(vec!["--help".into()]), 0);
    }
}
