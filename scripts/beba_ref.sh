#!/usr/bin/env bash
# Build the BEBA reference switch (beba-eu/beba-switch, an ofsoftswitch13
# fork built with CMake) into target/beba-ref, for comparing oxflow's BEBA
# replies with the reference's (docs/beba.md, "Reference switch").
#
#   scripts/beba_ref.sh [SOURCE_DIR]
#
# SOURCE_DIR: a checkout of beba-eu/beba-switch (default: clone it into
# target/beba-ref/src). Needs cmake, make, a C compiler. Built without
# libpcap (packet I/O through raw sockets is enough for control-plane
# comparisons), with -fcommon (the sources define the global `colors` in a
# header, which GCC 10 and later refuse to link without it), and with the
# control-plane relax factor 2^0: by default the switch serves its
# OpenFlow connections once every 2^10 loop iterations, and with no port
# traffic an iteration is a 100 ms poll, so a controller waited minutes
# for its HELLO.
#
# One fix is applied to the sources (lib/netdev.c, idempotent): a frame
# received with PACKET_AUXDATA (always, with today's glibc) was never
# copied into the switch's buffer (the copy length stayed 0), so every
# frame from a port was parsed as zeros and matched no entry, not even a
# match-all one; packet-outs were not affected.
#
# Result: target/beba-ref/bin/{ofdatapath,dpctl}. Run the switch with no
# ports, listening for a controller connection (oxflow ctl connects to it
# as to oxflow):
#   target/beba-ref/bin/ofdatapath --no-slicing ptcp:16634
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/beba-ref"
src="${1:-$out/src}"
mkdir -p "$out/bin" "$out/build"
if [ ! -f "$src/CMakeLists.txt" ]; then
    git clone --depth 1 https://github.com/beba-eu/beba-switch "$src"
fi
netdev="$src/lib/netdev.c"
if ! grep -q "oxflow: auxdata length" "$netdev"; then
    sed -i 's|^\( *\)n_bytes = recvmsg(netdev->tap_fd, &msg, 0);|&\n\1if (n_bytes > 0) sofar = n_bytes; /* oxflow: auxdata length */|' "$netdev"
fi
grep -q "oxflow: auxdata length" "$netdev" || { echo "could not patch $netdev" >&2; exit 1; }
cd "$out/build"
cmake "$src" -DWITH_LIBPCAP=OFF -DWITH_LIBPCAP_ZEROCOPY=OFF \
    -DCMAKE_BUILD_TYPE=Release -DWITH_CTRL_PLANE_RELAX=0 \
    -DCMAKE_C_FLAGS="-fcommon -DBEBA_CTRL_PLANE_RELAX=0" >cmake.log
make -j"${JOBS:-$(nproc)}" ofdatapath dpctl >make.log 2>&1 || {
    tail -30 make.log >&2
    exit 1
}
cp ofdatapath dpctl "$out/bin/"
echo "built $out/bin/ofdatapath and $out/bin/dpctl"
