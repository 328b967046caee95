"""What the experimenter vector generators (gen_beba_vectors.py,
gen_flexforward_vectors.py) share: xids derived from vector names, os-ken
serialization, hand-packed messages, and writing one sorted JSON file."""

import json
import os
import struct
import sys
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))


def xid_of(name):
    """A vector's xid: a CRC of its name (stable across regenerations)."""
    return zlib.crc32(name.encode()) & 0xFFFFFFFF


def osken_bytes(msg, xid):
    """The bytes os-ken serializes `msg` to, with `xid`."""
    msg.xid = xid
    msg.serialize()
    return bytes(msg.buf)


def raw_message(msg_type, body, xid):
    """An OpenFlow 1.3 message packed by hand (header + `body`)."""
    return struct.pack("!BBHI", 4, msg_type, 8 + len(body), xid) + body


def write(argv, filename, items):
    """Writes `items` sorted by name to OUT_DIR/`filename` (OUT_DIR is
    argv[1], default tests/vectors/ofp); names must be unique."""
    out_dir = argv[1] if len(argv) > 1 else os.path.join(
        REPO, "tests", "vectors", "ofp")
    items = sorted(items, key=lambda x: x["name"])
    names = [x["name"] for x in items]
    assert len(names) == len(set(names)), "duplicate vector names"
    with open(os.path.join(out_dir, filename), "w") as f:
        json.dump(items, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%-12s %3d vectors" % (filename[:-len(".json")], len(items)))
