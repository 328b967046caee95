#!/usr/bin/env bash
# `make demo-stateful`: port knocking in the switch (BEBA/OpenState, docs/beba.md).
# Builds oxflow, then python/oxflow/demo_stateful.py: two hosts in network
# namespaces, the os-ken port-knocking app, knocks from h1, the states shown
# with `oxflow ctl beba-dump-states` and the STATE_CHANGED messages the
# controller received; port 22 opens after the right knocks and closes after a
# wrong one. Always cleans up. Exits non-zero if a step goes wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

bash scripts/setup.sh
cargo build -q --release -p oxflow

demo=(env "PYTHONPATH=$PWD/python" "OXFLOW_BIN=$PWD/target/release/oxflow"
      "$PWD/.venv/bin/python" -m oxflow.demo_stateful "$@")
if [ "$(id -u)" -ne 0 ]; then
    echo "Network namespaces need root: running the demo with sudo"
    exec sudo "${demo[@]}"
fi
exec "${demo[@]}"
