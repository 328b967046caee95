//! Running a module of the repository's Python tooling in place of this
//! process (`oxflow eval ...`, `oxflow harmless ...`).
//!
//! PYTHON is the repository's `.venv/bin/python` (else `python3`), with
//! `python/` put on PYTHONPATH and `OXFLOW_REPO` set. The repository is
//! `$OXFLOW_REPO`, else the nearest ancestor of the executable (then of the
//! working directory) holding `python/oxflow/__init__.py`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn is_repo(dir: &Path) -> bool {
    dir.join("python/oxflow/__init__.py").is_file()
}

fn find_repo() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("OXFLOW_REPO") {
        let dir = PathBuf::from(dir);
        return is_repo(&dir).then_some(dir);
    }
    let starts = [std::env::current_exe().ok(), std::env::current_dir().ok()];
    starts.into_iter().flatten().find_map(|start| {
        start
            .ancestors()
            .find(|d| is_repo(d))
            .map(Path::to_path_buf)
    })
}

/// Replaces this process with `PYTHON -m MODULE ARGS...`; returns only on
/// error, with the exit status (messages are prefixed with `prog`).
pub fn exec_module(prog: &str, module: &str, args: &[String]) -> u8 {
    let Some(repo) = find_repo() else {
        eprintln!(
            "{prog}: cannot find the oxflow repository (python/oxflow) \
             above the executable or the working directory; set OXFLOW_REPO"
        );
        return 1;
    };
    let venv = repo.join(".venv/bin/python");
    let python = if venv.is_file() {
        venv
    } else {
        PathBuf::from("python3")
    };
    let mut pythonpath = repo.join("python").into_os_string();
    if let Some(old) = std::env::var_os("PYTHONPATH") {
        pythonpath.push(":");
        pythonpath.push(old);
    }
    let err = Command::new(&python)
        .arg("-m")
        .arg(module)
        .args(args)
        .env("PYTHONPATH", pythonpath)
        .env("OXFLOW_REPO", &repo)
        .exec();
    eprintln!("{prog}: cannot run {}: {err}", python.display());
    1
}

/// A subcommand of the binary whose commands are Python modules
/// (`oxflow eval`, `oxflow harmless`): its name, what it calls a command,
/// and command name -> module.
pub struct PyGroup {
    pub prog: &'static str,
    pub noun: &'static str,
    pub commands: &'static [(&'static str, &'static str)],
}

impl PyGroup {
    fn usage(&self) -> String {
        let names: Vec<&str> = self.commands.iter().map(|(n, _)| *n).collect();
        let first = names.first().copied().unwrap_or("");
        format!(
            "usage: {} {} [ARGS...]   ({}s: {}; `{} {first} --help`)",
            self.prog,
            self.noun.to_uppercase(),
            self.noun,
            names.join(", "),
            self.prog
        )
    }

    /// Runs the command `words` name; returns only on error or help (with
    /// the exit status).
    pub fn main_with_args(&self, words: Vec<String>) -> u8 {
        let Some((name, rest)) = words.split_first() else {
            eprintln!("{}", self.usage());
            return 2;
        };
        if name == "--help" || name == "-h" {
            println!("{}", self.usage());
            return 0;
        }
        let Some((_, module)) = self.commands.iter().find(|(n, _)| n == name) else {
            eprintln!(
                "{}: unknown {} {name:?}\n{}",
                self.prog,
                self.noun,
                self.usage()
            );
            return 2;
        };
        exec_module(self.prog, module, rest)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unknown_or_missing_command_is_a_usage_error() {
        for group in [&crate::eval::EVAL, &crate::harmless::HARMLESS] {
            assert_eq!(group.main_with_args(vec![]), 2);
            assert_eq!(group.main_with_args(vec!["nosuch".into()]), 2);
            assert_eq!(group.main_with_args(vec!["--help".into()]), 0);
        }
    }
}
