#!/usr/bin/env bash
# `make demo`: install what oxflow needs, build it, then run the switch
# between three hosts in network namespaces -- first as a standalone
# learning switch, then under the os-ken learning-switch app -- pinging all
# pairs each time and showing flows and port counters with `oxflow ctl`.
# python/oxflow/demo.py does those steps and always cleans up (also on
# Ctrl-C). Exits non-zero if a ping fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing what the demo needs (scripts/setup.sh: Rust, iproute2, ping, Open vSwitch tools, Python venv with os-ken)"
bash scripts/setup.sh

say "Building oxflow: cargo build --release -p oxflow"
cargo build -q --release -p oxflow
echo "   binary: target/release/oxflow"

demo=(env "PYTHONPATH=$PWD/python" "OXFLOW_BIN=$PWD/target/release/oxflow"
      "$PWD/.venv/bin/python" -m oxflow.demo "$@")
if [ "$(id -u)" -ne 0 ]; then
    say "Network namespaces need root: running the demo with sudo"
    exec sudo "${demo[@]}"
fi
exec "${demo[@]}"
