//! `oxflow eval EXPERIMENT [ARGS...]`: evaluations that live in the Python
//! tooling (Mininet, os-ken), started from the binary.
//!
//! `oxflow eval datacenter ARGS` replaces this process with
//! `PYTHON -m oxflow.datacenter ARGS` (docs/datacenter.md), where PYTHON is
//! the repository's `.venv/bin/python` (else `python3`) and `python/` is put
//! on PYTHONPATH. The repository is `$OXFLOW_REPO`, else the nearest
//! ancestor of the executable (then of the working directory) holding
//! `python/oxflow/datacenter.py`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Experiment name -> the Python module that runs it.
const EXPERIMENTS: &[(&str, &str)] = &[("datacenter", "oxflow.datacenter")];

fn is_repo(dir: &Path) -> bool {
    dir.join("python/oxflow/datacenter.py").is_file()
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
    let Some(repo) = find_repo() else {
        eprintln!(
            "oxflow eval: cannot find the oxflow repository (python/oxflow/datacenter.py) \
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
        .args(rest)
        .env("PYTHONPATH", pythonpath)
        .env("OXFLOW_REPO", &repo)
        .exec();
    eprintln!("oxflow eval: cannot run {}: {err}", python.display());
    1
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
