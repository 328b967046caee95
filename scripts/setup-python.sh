#!/usr/bin/env bash
# Create .venv in the repository root with the pinned Python dependencies
# (python/requirements.txt). Idempotent: pip runs only when the requirements
# changed since the last successful install (hash kept in .venv/.req-stamp).
# Usage: scripts/setup-python.sh   (PYTHON=python3.11 to choose the interpreter)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"
req="$root/python/requirements.txt"
stamp="$venv/.req-stamp"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "python deps installed into $venv"
