#!/usr/bin/env bash
# Prepare a Python 2.7 environment in which BEBA's own controller
# (beba-eu/beba-ctrl, a Ryu 3.29 fork of the Python 2 era) runs against
# oxflow, for tests/python/test_beba_ctrl_compat.py and docs/beba.md
# ("Running BEBA's own controller").
#
#   scripts/setup-beba-ctrl.sh BEBA_CTRL_CHECKOUT
#
# BEBA_CTRL_CHECKOUT: a checkout of beba-eu/beba-ctrl (this script does not
# download it). It is not installed: ryu-manager runs from it with
# PYTHONPATH=BEBA_CTRL_CHECKOUT, so the checkout is used as it is.
#
# Result, under target/beba-ctrl/:
#   env/     a virtualenv of Python 2.7 with Ryu 3.29's dependencies from
#            PyPI (eventlet 0.30.2: later ones dropped the wsgi
#            ALREADY_HANDLED that this Ryu imports; oslo.config <= 3.0.0
#            as its pip-requires says)
#   src      a symlink to BEBA_CTRL_CHECKOUT
# The test finds both there (or through $BEBA_CTRL_ENV and $BEBA_CTRL_SRC).
#
# Python 2.7: $PYTHON2, else pyenv's newest 2.7, else python2.7 on PATH.
# Takes about 30 s with a reachable package index. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/beba-ctrl"
log() { printf '[setup-beba-ctrl] %s\n' "$*" >&2; }

src="${1:-}"
if [ -z "$src" ] && [ -e "$out/src" ]; then
    src="$out/src"
fi
if [ -z "$src" ] || [ ! -f "$src/ryu/ofproto/beba_v1_0_parser.py" ]; then
    log "usage: $0 BEBA_CTRL_CHECKOUT (a checkout of beba-eu/beba-ctrl;" \
        "'${src:-}' has no ryu/ofproto/beba_v1_0_parser.py)"
    exit 2
fi
src="$(cd "$src" && pwd -P)"

py2="${PYTHON2:-}"
if [ -z "$py2" ] && command -v pyenv >/dev/null 2>&1; then
    v="$(ls -d "$(pyenv root)"/versions/2.7.* 2>/dev/null | sort -V | tail -1 || true)"
    [ -n "$v" ] && [ -x "$v/bin/python" ] && py2="$v/bin/python"
fi
if [ -z "$py2" ] && [ -x "$HOME/.pyenv/versions/2.7.18/bin/python" ]; then
    py2="$HOME/.pyenv/versions/2.7.18/bin/python"
fi
[ -z "$py2" ] && py2="$(command -v python2.7 || true)"
if [ -z "$py2" ]; then
    log "no Python 2.7 found (set PYTHON2, or install 2.7 with pyenv)"
    exit 2
fi

# Ryu 3.29's tools/pip-requires, plus scapy (beba-ctrl's error test imports
# it) and ipaddr (its ddos_mitigation apps do), pinned to versions that
# still support Python 2.7 and that this Ryu works with.
REQS=(eventlet==0.30.2 greenlet==2.0.2 dnspython==1.16.0 msgpack-python==0.5.6
    netaddr==0.10.1 oslo.config==3.0.0 Routes==2.5.1 six==1.17.0 webob==1.8.11
    scapy==2.4.5 ipaddr==2.2.0)

mkdir -p "$out"
if [ ! -x "$out/env/bin/python" ]; then
    log "creating a Python 2.7 virtualenv in $out/env ($py2)"
    # Python 2.7 has no venv module: virtualenv 20.15 (one that still runs
    # on 2.7) is installed into a private directory just for this.
    "$py2" -m pip install -q --disable-pip-version-check --target "$out/virtualenv" \
        virtualenv==20.15.1 2>&1 | grep -v DEPRECATION >&2 || true
    PYTHONPATH="$out/virtualenv" "$py2" -m virtualenv -q "$out/env"
fi
if ! "$out/env/bin/python" -m pip install -q --disable-pip-version-check "${REQS[@]}" \
    >"$out/pip.log" 2>&1; then
    grep -v DEPRECATION "$out/pip.log" >&2
    exit 1
fi
ln -sfn "$src" "$out/src"
if ! PYTHONPATH="$src" "$out/env/bin/python" -c 'import ryu.cmd.manager, ryu.ofproto.beba_v1_0_parser' \
    2>"$out/import.log"; then
    log "beba-ctrl does not import:"
    cat "$out/import.log" >&2
    exit 1
fi
log "ready: PYTHONPATH=$src $out/env/bin/python $src/bin/ryu-manager APP"
