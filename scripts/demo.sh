#!/usr/bin/env bash
# `make demo`: what oxflow can do today. The switch daemon arrives with the
# next milestone; until then the demo exercises its two foundations on
# embedded defaults: the OpenFlow 1.3.5 codec and the packet parser/rewriter.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Building oxflow (release)"
cargo build -q --release --workspace --examples

vec() { # vec CATEGORY NAME -> hex of a cross-check vector (serialized by os-ken)
    .venv/bin/python - "$1" "$2" <<'PY'
import json, sys
cat, name = sys.argv[1], sys.argv[2]
for v in json.load(open(f"tests/vectors/ofp/{cat}.json")):
    if v["name"] == name:
        print(v["hex"])
PY
}

decode=target/release/examples/decode
parse=target/release/examples/parse

say "1. A flow-mod serialized by os-ken (a real controller library), decoded by oxflow"
echo "   match eth_type=IPv4 + ipv4_dst=10.0.0.0/8; oxflow re-encodes it byte for byte."
$decode "$(vec oxm oxm_ipv4_dst_masked)"

say "2. A packet-in as oxflow would send it to a controller"
$decode "$(vec message packet_in_no_buffer)"

say "3. Bad input: the same flow-mod with a corrupted match type"
echo "   The switch refuses it with the exact OFPT_ERROR the spec prescribes."
fm=$(vec oxm oxm_ipv4_dst_masked)
# ofp_match.type is at byte 48 of a flow-mod: set OFPMT_STANDARD (0) instead of OXM (1)
bad="${fm:0:96}0000${fm:100}"
$decode "$bad"

say "4. A truncated message (the header announces 96 bytes, 16 arrive)"
$decode "${fm:0:32}"

say "5. Parsing a frame into the OpenFlow match fields, then rewriting it"
echo "   (UDP/IPv4 frame with DSCP/ECN set; set-field ipv4_src updates the IP and UDP checksums)"
$parse 020000000002020000000001080045b90024000100001111950d0a0000010a00000204d20035001029747061796c6f616421
echo "   QinQ (802.1ad outer + 802.1Q inner) frame:"
$parse "$(.venv/bin/python -c 'import json;print(next(v["hex"] for v in json.load(open("tests/vectors/packets/parse.json")) if v["name"]=="qinq_ipv4_udp"))')"

say "Done. Next: 'make test' runs every test; the switch itself ('oxflow run') is the next milestone."
