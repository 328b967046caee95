//! `oxflow harmless COMMAND [ARGS...]`: the hybrid legacy mode's tools that
//! live in the Python tooling, started from the binary.
//!
//! `oxflow harmless capex ARGS` replaces this process with
//! `PYTHON -m oxflow.harmless.capex ARGS` (docs/harmless-capex.md); see
//! [`crate::pyexec`] for PYTHON and how the repository is found.

/// Command name -> the Python module that runs it.
const COMMANDS: &[(&str, &str)] = &[("capex", "oxflow.harmless.capex")];

fn usage() -> String {
    let names: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
    format!(
        "usage: oxflow harmless COMMAND [ARGS...]   (commands: {}; \
         `oxflow harmless capex --help`)",
        names.join(", ")
    )
}

/// Runs the command; returns only on error (with the exit status).
pub fn main_with_args(words: Vec<String>) -> u8 {
    let Some((name, rest)) = words.split_first() else {
        eprintln!("{}", usage());
        return 2;
    };
    if name == "--help" || name == "-h" {
        println!("{}", usage());
        return 0;
    }
    let Some((_, module)) = COMMANDS.iter().find(|(n, _)| n == name) else {
        eprintln!("oxflow harmless: unknown command {name:?}\n{}", usage());
        return 2;
    };
    crate::pyexec::exec_module("oxflow harmless", module, rest)
}

#[cfg(test)]
mod tests {
    use super::main_with_args;

    #[test]
    fn unknown_or_missing_command_is_a_usage_error() {
        assert_eq!(main_with_args(vec![]), 2);
        assert_eq!(main_with_args(vec!["nosuch".into()]), 2);
        assert_eq!(main_with_args(vec!["--help".into()]), 0);
    }
}
