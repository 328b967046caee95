#!/usr/bin/env bash
# Installs everything `make test` / `make demo` need on a fresh Debian machine.
# Idempotent and quiet when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*" >&2; }

# --- Rust toolchain -------------------------------------------------------
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    log "cargo not found: installing the stable Rust toolchain with rustup"
    if command -v rustup >/dev/null 2>&1; then
        rustup toolchain install stable --profile minimal -c clippy,rustfmt
    else
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs |
            sh -s -- -y --profile minimal -c clippy,rustfmt
    fi
    export PATH="$HOME/.cargo/bin:$PATH"
fi
for comp in clippy rustfmt; do
    if ! cargo "${comp/rustfmt/fmt}" --version >/dev/null 2>&1; then
        log "adding rustup component $comp"
        rustup component add "$comp"
    fi
done

# --- Debian packages ------------------------------------------------------
# tshark: decodes our OpenFlow vectors independently (cross-check).
# iproute2: network namespaces and veth pairs for integration tests.
# ethtool: turns off checksum offload on veth ends (a user-space switch would
#   otherwise forward frames whose checksums the kernel never filled in).
# iputils-ping: ping inside the host namespaces.
# openvswitch-switch/-common: the reference switch (ovs-vswitchd in user space,
#   netdev datapath, private instances) and ovs-ofctl, for cross-checks.
# clang/libelf-dev/zlib1g-dev/pkg-config/m4/libpcap-dev: build libbpf and libxdp
#   (xsk-rs) for the AF_XDP port backend (libxdp's configure wants m4 and pcap).
# iperf3, netsniff-ng (trafgen): TCP and line-rate traffic for tests and
#   `make bench` / `oxflow bench`.
# mininet: `OxflowSwitch` (python/oxflow/mininet_switch.py) and the data-centre
#   evaluation (`oxflow eval datacenter`): mnexec and the mininet Python module,
#   which scripts/setup-python.sh links into the venv.
APT_PKGS=(tshark iproute2 python3-venv ethtool iputils-ping openvswitch-switch openvswitch-common
    clang libelf-dev zlib1g-dev pkg-config m4 libpcap-dev iperf3 netsniff-ng mininet)
missing=()
for p in "${APT_PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    log "apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    # wireshark-common asks whether non-root users may capture: answer no.
    echo "wireshark-common wireshark-common/install-setuid boolean false" |
        $SUDO debconf-set-selections 2>/dev/null || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- Python venv (os-ken, scapy, pytest, pinned) --------------------------
bash scripts/setup-python.sh
