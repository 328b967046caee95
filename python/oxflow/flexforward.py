"""FlexForward forwarding-mode messages for os-ken apps.

oxflow's FlexForward extension (experimenter id 0x4F58464C, ASCII "OXFL";
layouts in docs/flexforward.md and crates/ofp/src/flexforward.rs) lets a
controller switch a datapath between OpenFlow table forwarding, HyperCube
and KeyFlow at run time, for the whole switch, a set of ingress ports or a
VLAN. Two layers, as in `oxflow.beba`:

- `*_data(...)` functions return the bytes after the experimenter header,
  with no os-ken involved (the reference encoder the vectors come from);
- builders returning os-ken `OFPExperimenter` messages for a datapath.

`parse_reply(data)` reads a FWMODE_REPLY's bytes into a dict.

The address helpers encode the destination MAC the modes read:
`hypercube_mac(addr)` puts the node address in the first 32 bits, and
`dual_mac(addr, residues)` finds, by the Chinese remainder theorem, a
KeyFlow path id whose first 32 bits are also that HyperCube address, so one
destination MAC is forwarded the same way in both modes (possible when the
product of the path's keys is at most 2**16).
"""

import struct

from os_ken.ofproto import ofproto_v1_3_parser as parser

FLEX_EXPERIMENTER = 0x4F58464C

# exp_type
SET_FWMODE = 1
SET_HYPERCUBE = 2
SET_KEYFLOW = 3
GET_FWMODE = 4
FWMODE_REPLY = 5

MODES = {"openflow": 0, "hypercube": 1, "keyflow": 2}
MODE_NAMES = {v: k for k, v in MODES.items()}
MODE_CLEAR = 0xFF
FALLBACKS = {"openflow": 0, "drop": 1}
FALLBACK_NAMES = {v: k for k, v in FALLBACKS.items()}

SCOPE_SWITCH = 0
SCOPE_PORTS = 1
SCOPE_VLAN = 2

# experimenter error codes (exp_type of an OFPET_EXPERIMENTER error)
ERRORS = ["BAD_MESSAGE", "BAD_LEN", "UNKNOWN_MODE", "BAD_SCOPE",
          "BAD_FALLBACK", "HC_DUP_ADDRESS", "HC_NOT_NEIGHBOUR", "HC_BAD_PORT",
          "KF_BAD_KEY", "KF_NO_PORT", "MODE_UNCONFIGURED"]
ERROR_CODES = {name: i for i, name in enumerate(ERRORS)}


def _mode(mode):
    if mode is None or mode == "clear":
        return MODE_CLEAR
    return MODES[mode] if isinstance(mode, str) else int(mode)


def set_fwmode_data(mode, ports=None, vlan=None, fallback="openflow"):
    """SET_FWMODE: `mode` a name, number, or None/"clear" (remove a port
    or VLAN override); scope the whole switch unless `ports` or `vlan`."""
    fb = FALLBACKS[fallback] if isinstance(fallback, str) else int(fallback)
    if ports:
        ports = list(ports)
        return struct.pack("!BBBxHH", _mode(mode), fb, SCOPE_PORTS,
                           len(ports), 0) + b"".join(
                               struct.pack("!I", p) for p in ports)
    if vlan is not None:
        return struct.pack("!BBBxHH", _mode(mode), fb, SCOPE_VLAN, 0, vlan)
    return struct.pack("!BBBxHH", _mode(mode), fb, SCOPE_SWITCH, 0, 0)


def set_hypercube_data(address, neighbours, local_port=0):
    """SET_HYPERCUBE: own node address, {neighbour address: port} (or a
    list of pairs), the port of the switch's own node (0: fallback)."""
    pairs = list(neighbours.items()) if isinstance(neighbours, dict) \
        else list(neighbours)
    return struct.pack("!IIH6x", address, local_port, len(pairs)) + b"".join(
        struct.pack("!II", a, p) for a, p in pairs)


def set_keyflow_data(key):
    return struct.pack("!I4x", key)


def get_fwmode_data():
    return b""


def fwmode_reply_data(mode="openflow", fallback="openflow", hypercube=None,
                      keyflow_key=None, ports=(), vlans=(), counters=(0,) * 4):
    """FWMODE_REPLY bytes (the switch sends these; used for vectors).
    `hypercube` is (address, local_port, [(addr, port)]) or None; `ports`
    and `vlans` are (key, mode, fallback) triples."""
    flags = (1 if hypercube is not None else 0) | \
        (2 if keyflow_key is not None else 0)
    addr, local, nbrs = hypercube if hypercube is not None else (0, 0, [])
    out = struct.pack("!BBBxIIIHHH2x", MODES[mode], FALLBACKS[fallback],
                      flags, addr, local, keyflow_key or 0, len(ports),
                      len(vlans), len(nbrs))
    out += struct.pack("!4Q", *counters)
    for port, m, fb in ports:
        out += struct.pack("!IBB2x", port, MODES[m], FALLBACKS[fb])
    for vid, m, fb in vlans:
        out += struct.pack("!HBB4x", vid, MODES[m], FALLBACKS[fb])
    for a, p in nbrs:
        out += struct.pack("!II", a, p)
    return out


def parse_reply(data):
    """A FWMODE_REPLY body as a dict (the inverse of fwmode_reply_data)."""
    (mode, fb, flags, addr, local, key, n_ports, n_vlans,
     n_nbrs) = struct.unpack_from("!BBBxIIIHHH2x", data, 0)
    counters = struct.unpack_from("!4Q", data, 24)
    off = 56
    ports, vlans, nbrs = [], [], []
    for _ in range(n_ports):
        p, m, f = struct.unpack_from("!IBB2x", data, off)
        ports.append((p, MODE_NAMES[m], FALLBACK_NAMES[f]))
        off += 8
    for _ in range(n_vlans):
        v, m, f = struct.unpack_from("!HBB4x", data, off)
        vlans.append((v, MODE_NAMES[m], FALLBACK_NAMES[f]))
        off += 8
    for _ in range(n_nbrs):
        nbrs.append(struct.unpack_from("!II", data, off))
        off += 8
    return {
        "mode": MODE_NAMES[mode], "fallback": FALLBACK_NAMES[fb],
        "hypercube": (addr, local, nbrs) if flags & 1 else None,
        "keyflow_key": key if flags & 2 else None,
        "ports": ports, "vlans": vlans,
        "counters": dict(zip(["hypercube_fwd", "keyflow_fwd",
                              "fallback_table", "fallback_drop"], counters)),
    }


# --- os-ken builders

def message(datapath, exp_type, data):
    return parser.OFPExperimenter(datapath, experimenter=FLEX_EXPERIMENTER,
                                  exp_type=exp_type, data=data)


def set_fwmode(datapath, mode, ports=None, vlan=None, fallback="openflow"):
    return message(datapath, SET_FWMODE,
                   set_fwmode_data(mode, ports, vlan, fallback))


def set_hypercube(datapath, address, neighbours, local_port=0):
    return message(datapath, SET_HYPERCUBE,
                   set_hypercube_data(address, neighbours, local_port))


def set_keyflow(datapath, key):
    return message(datapath, SET_KEYFLOW, set_keyflow_data(key))


def get_fwmode(datapath):
    return message(datapath, GET_FWMODE, b"")


# --- addresses

def mac_str(value):
    """A 48-bit integer as aa:bb:cc:dd:ee:ff."""
    return ":".join("%02x" % b for b in value.to_bytes(6, "big"))


def hypercube_mac(address, low=0):
    """The destination MAC carrying HyperCube node `address`."""
    return mac_str((address << 16) | (low & 0xFFFF))


def crt(residues):
    """The least x with x = r (mod k) for every (r, k) in `residues`
    (keys pairwise coprime), and the product of the keys."""
    x, m = 0, 1
    for r, k in residues:
        # x + m*t = r (mod k)
        t = ((r - x) * pow(m, -1, k)) % k
        x += m * t
        m *= k
    return x, m


def keyflow_path_id(residues, base=0):
    """The least KeyFlow path id >= `base` with path_id mod key = port for
    every (port, key) of the path."""
    x, m = crt(residues)
    if x < base:
        x += ((base - x + m - 1) // m) * m
    return x


def dual_mac(address, residues):
    """A destination MAC whose first 32 bits are HyperCube `address` and
    whose 48-bit value is a KeyFlow path id for `residues` ((port, key)
    pairs); raises ValueError if the keys' product exceeds 2**16."""
    pid = keyflow_path_id(residues, base=address << 16)
    if pid >> 16 != address:
        raise ValueError("product of the path's keys exceeds 2**16")
    return mac_str(pid)
