#!/usr/bin/env bash
# `make demo-harmless`: HARMLESS in one command -- an emulated legacy switch
# with N hosts, `oxflow harmless up` (backup, access VLANs + trunk, the
# software side), the os-ken learning switch seeing N ports, every host
# pinging every other one, then `oxflow harmless down --restore` with a
# byte-identical restore. python/oxflow/harmless/demo.py does the steps and
# always cleans up. The software side is `oxflow run --trunk` (oxflow's
# trunk ports, one process); MODE=proxy uses a trunk-only Open vSwitch and
# `oxflow harmless proxy` instead; HOSTS=N sets the number of hosts. Exits
# non-zero if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing what the demo needs (scripts/setup.sh)"
bash scripts/setup.sh

say "Building oxflow: cargo build --release -p oxflow"
cargo build -q --release -p oxflow

demo=(env "PYTHONPATH=$PWD/python" "OXFLOW_BIN=$PWD/target/release/oxflow"
      "$PWD/.venv/bin/python" -m oxflow.harmless.demo
      --mode "${MODE:-trunk}" --hosts "${HOSTS:-4}" "$@")
if [ "$(id -u)" -ne 0 ]; then
    say "Network namespaces need root: running the demo with sudo"
    exec sudo "${demo[@]}"
fi
exec "${demo[@]}"
