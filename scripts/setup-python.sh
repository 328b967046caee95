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

# Mininet (the Debian `mininet` package: mnexec plus the Python module in the
# system dist-packages) is made visible to the venv through a .pth file that
# names a directory holding only a link to that module, so no other system
# package leaks into the venv. Skipped quietly when Mininet is not installed
# (scripts/setup.sh installs it).
mn_src=""
for d in /usr/lib/python3/dist-packages /usr/local/lib/python3/dist-packages; do
    if [ -f "$d/mininet/net.py" ]; then mn_src="$d/mininet"; break; fi
done
if [ -n "$mn_src" ]; then
    site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
    mkdir -p "$venv/system-mininet"
    ln -sfn "$mn_src" "$venv/system-mininet/mininet"
    echo "$venv/system-mininet" > "$site/system-mininet.pth"
fi

want="$(sha256sum "$req" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "python deps installed into $venv"
