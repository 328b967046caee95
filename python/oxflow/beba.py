"""BEBA / OpenState stateful-forwarding messages for os-ken apps.

os-ken has no support for the BEBA experimenter extension (experimenter id
0xBEBABEBA). This module packs its messages, actions, instruction, match
fields and multipart requests, and parses what the switch sends back,
byte for byte as the BEBA switch and its controller speak them (the layouts
are in docs/beba.md). Two layers:

- `*_data(...)` functions return the bytes after an experimenter header
  (message, multipart body, action or instruction), with no os-ken
  involved: the reference encoder the tests compare with oxflow's Rust
  codec.
- builders returning os-ken objects for a datapath: `OFPExperimenter`
  messages, `OFPExperimenterStatsRequest`s, `OFPActionExperimenterUnknown`
  actions, an `InSwitchPktGen` instruction, and the `state` and
  `global_state` OXM fields, which `register_oxm_fields()` (run on import)
  adds to os-ken's OpenFlow 1.3 match, so that
  `parser.OFPMatch(state=3, global_state=(1, 1))` works.

Timeouts are microseconds, as on the wire (BEBA's own controller library
takes seconds and multiplies them).
"""

import struct

from os_ken.ofproto import ofproto_v1_3 as ofp
from os_ken.ofproto import ofproto_v1_3_parser as parser
from os_ken.ofproto import oxm_fields
from os_ken.lib import type_desc

BEBA_EXPERIMENTER = 0xBEBABEBA
MAX_KEY_LEN = 48
MAX_FIELD_COUNT = 6

# exp_type of the experimenter messages
EXP_STATE_MOD = 0
EXP_PKTTMP_MOD = 1
EXP_STATE_CHANGED = 2
EXP_FLOW_NOTIFICATION = 3

# STATE_MOD commands
SC_STATEFUL_TABLE_CONFIG = 0
SC_SET_L_EXTRACTOR = 1
SC_SET_U_EXTRACTOR = 2
SC_SET_FLOW_STATE = 3
SC_DEL_FLOW_STATE = 4
SC_SET_GLOBAL_STATE = 5
SC_RESET_GLOBAL_STATE = 6

# PKTTMP_MOD commands
PKTTMP_ADD = 0
PKTTMP_DEL = 1

# action and instruction types
AT_SET_STATE = 0
AT_SET_GLOBAL_STATE = 1
AT_INC_STATE = 2
IT_IN_SWITCH_PKT_GEN = 0

# multipart exp_types
MP_STATE_STATS = 0
MP_GLOBAL_STATE_STATS = 1
MP_STATE_STATS_AND_DELETE = 2
MP_STATE_STATS_SHORT = 3
MP_STATE_STATS_AND_DELETE_SHORT = 4

# OXM field numbers
OXM_GLOBAL_STATE = 0
OXM_STATE = 1

# error codes (exp_type of an OFPET_EXPERIMENTER error under BEBA's id)
ERRORS = [
    "STATE_MOD_FAILED", "STATE_MOD_BAD_COMMAND", "SET_EXTRACTOR",
    "SET_FLOW_STATE", "DEL_FLOW_STATE", "BAD_EXP_MESSAGE", "BAD_EXP_ACTION",
    "BAD_EXP_LEN", "BAD_TABLE_ID", "BAD_MATCH_WILDCARD", "BAD_EXP_INSTRUCTION",
    "PKTTMP_MOD_FAILED", "PKTTMP_MOD_BAD_COMMAND",
]

ALL32 = 0xFFFFFFFF


def _key(key):
    key = bytes(key)
    if not 1 <= len(key) <= MAX_KEY_LEN:
        raise ValueError("a flow key is 1 to %d bytes, not %d"
                         % (MAX_KEY_LEN, len(key)))
    return key


# --- STATE_MOD payloads ---------------------------------------------------

def stateful_table_config_data(table_id, stateful=True):
    return struct.pack("!BxBB", SC_STATEFUL_TABLE_CONFIG, table_id,
                       1 if stateful else 0)


def extractor_data(table_id, fields, update=False, bit=False):
    """Lookup (or `update`) extractor: `fields` are OXM headers (ints)."""
    if not 1 <= len(fields) <= MAX_FIELD_COUNT:
        raise ValueError("an extractor has 1 to %d fields, not %d"
                         % (MAX_FIELD_COUNT, len(fields)))
    cmd = SC_SET_U_EXTRACTOR if update else SC_SET_L_EXTRACTOR
    return (struct.pack("!BxB3xB3xI", cmd, table_id, 1 if bit else 0,
                        len(fields))
            + b"".join(struct.pack("!I", f) for f in fields))


def set_flow_state_data(table_id, key, state, state_mask=ALL32,
                        hard_rollback=0, idle_rollback=0,
                        hard_timeout_us=0, idle_timeout_us=0):
    key = _key(key)
    return struct.pack("!BxB3xIIIIIII", SC_SET_FLOW_STATE, table_id,
                       len(key), state, state_mask, hard_rollback,
                       idle_rollback, hard_timeout_us, idle_timeout_us) + key


def del_flow_state_data(table_id, key):
    key = _key(key)
    return struct.pack("!BxB3xI", SC_DEL_FLOW_STATE, table_id,
                       len(key)) + key


def set_global_state_data(value, mask=ALL32):
    return struct.pack("!BxII", SC_SET_GLOBAL_STATE, value, mask)


def reset_global_state_data():
    return struct.pack("!Bx", SC_RESET_GLOBAL_STATE)


# --- PKTTMP_MOD payloads --------------------------------------------------

def add_pkttmp_data(pkttmp_id, frame):
    return struct.pack("!BxI4x", PKTTMP_ADD,
                       pkttmp_id) + bytes(frame)


def del_pkttmp_data(pkttmp_id):
    return struct.pack("!BxI4x", PKTTMP_DEL, pkttmp_id)


# --- asynchronous messages (switch to controller) --------------------------

def state_changed_data(table_id, old_state, new_state, state_mask, key):
    key = bytes(key)
    return struct.pack("!IIIII", table_id, old_state, new_state, state_mask,
                       len(key)) + key


def parse_state_changed(data):
    """(table_id, old_state, new_state, state_mask, key) of STATE_CHANGED
    data (after the experimenter header)."""
    table_id, old, new, mask, key_len = struct.unpack_from("!IIIII", data)
    key = bytes(data[20:20 + key_len])
    if len(key) != key_len or key_len > MAX_KEY_LEN:
        raise ValueError("state_changed: bad key length %d" % key_len)
    return table_id, old, new, mask, key


def parse_flow_notification(data):
    """(table_id, ntf_type, match, instruction types) of FLOW_NOTIFICATION
    data (after the experimenter header); `match` an os-ken OFPMatch."""
    table_id, ntf_type = struct.unpack_from("!II", data)
    match = parser.OFPMatch.parser(bytes(data), 8)
    at = 8 + (match.length + 7) // 8 * 8
    (n,) = struct.unpack_from("!I", data, at)
    if len(data) < at + 4 + 4 * n:
        raise ValueError("flow_notification: %d instructions do not fit" % n)
    types = list(struct.unpack_from("!%dI" % n, data, at + 4))
    return table_id, ntf_type, match, types


def parse_experimenter(msg):
    """An os-ken OFPExperimenter message from the switch as
    ("state_changed", parse_state_changed(...)) or ("flow_notification",
    parse_flow_notification(...)); None if it is not one of BEBA's
    asynchronous messages."""
    if getattr(msg, "experimenter", None) != BEBA_EXPERIMENTER:
        return None
    if msg.exp_type == EXP_STATE_CHANGED:
        return "state_changed", parse_state_changed(msg.data)
    if msg.exp_type == EXP_FLOW_NOTIFICATION:
        return "flow_notification", parse_flow_notification(msg.data)
    return None


def flow_notification_data(table_id, ntf_type, match, instruction_types):
    """`match` an os-ken OFPMatch; `instruction_types` a list of ints."""
    buf = bytearray()
    match.serialize(buf, 0)
    body = struct.pack("!II", table_id, ntf_type) + bytes(buf)
    tail = struct.pack("!I", len(instruction_types)) + b"".join(
        struct.pack("!I", t) for t in instruction_types)
    tail += b"\0" * (-len(tail) % 8)
    return body + tail


# --- actions, instruction, match fields ------------------------------------

def set_state_action_data(state, table_id, state_mask=ALL32, bit=False,
                          hard_rollback=0, idle_rollback=0,
                          hard_timeout_us=0, idle_timeout_us=0):
    return struct.pack("!I4xIIB3xIIIIB3x", AT_SET_STATE, state, state_mask,
                       table_id, hard_rollback, idle_rollback,
                       hard_timeout_us, idle_timeout_us, 1 if bit else 0)


def set_global_state_action_data(value, mask=ALL32):
    return struct.pack("!I4xII", AT_SET_GLOBAL_STATE, value, mask)


def inc_state_action_data(table_id):
    return struct.pack("!I4xB7x", AT_INC_STATE, table_id)


def in_switch_pkt_gen_data(pkttmp_id, actions=()):
    """Instruction data after its experimenter id; `actions` os-ken
    actions."""
    buf = bytearray()
    for a in actions:
        a.serialize(buf, len(buf))
    return struct.pack("!I4xI4x", IT_IN_SWITCH_PKT_GEN, pkttmp_id) + bytes(buf)


def oxm_bytes(field, value, mask=None):
    """One BEBA OXM TLV (`field` OXM_STATE or OXM_GLOBAL_STATE)."""
    has_mask = mask is not None
    length = 4 + (8 if has_mask else 4)
    out = struct.pack("!HBBII", 0xFFFF, (field << 1) | int(has_mask), length,
                      BEBA_EXPERIMENTER, value)
    if has_mask:
        out += struct.pack("!I", mask)
    return out


# --- multipart bodies -----------------------------------------------------

def state_stats_request_data(table_id=ofp.OFPTT_ALL, state=None, match=None):
    """Data after experimenter/exp_type; `match` an os-ken OFPMatch."""
    buf = bytearray(struct.pack("!BB2xI", table_id, 0 if state is None else 1,
                                0 if state is None else state))
    (match or parser.OFPMatch()).serialize(buf, len(buf))
    return bytes(buf)


def parse_state_stats(data, short=False):
    """Entries of a state-stats reply's data: a list of dicts."""
    out, off = [], 0
    while off < len(data):
        length, table_id, key_len = struct.unpack_from("!HBB", data, off)
        e = {"table_id": table_id}
        if short:
            (e["state"],) = struct.unpack_from("!I", data, off + 4)
            fixed = 8
        else:
            (e["duration_sec"], e["duration_nsec"], e["hard_rollback"],
             e["idle_rollback"], e["hard_timeout"], e["idle_timeout"],
             e["state"]) = struct.unpack_from("!7I", data, off + 4)
            fixed = 32
        if length < fixed or length % 8 or off + length > len(data):
            raise ValueError("state stats: bad record length %d" % length)
        e["key"] = bytes(data[off + fixed:off + fixed + key_len])
        out.append(e)
        off += length
    return out


def parse_global_state_stats(data):
    (value,) = struct.unpack_from("!4xI", data)
    return value


# --- os-ken objects ---------------------------------------------------------

def message(datapath, exp_type, data):
    return parser.OFPExperimenter(datapath, experimenter=BEBA_EXPERIMENTER,
                                  exp_type=exp_type, data=data)


def state_mod(datapath, data):
    """A STATE_MOD message with one of the `*_data` STATE_MOD payloads."""
    return message(datapath, EXP_STATE_MOD, data)


def pkttmp_mod(datapath, data):
    return message(datapath, EXP_PKTTMP_MOD, data)


def stats_request(datapath, exp_type, data=b""):
    return parser.OFPExperimenterStatsRequest(
        datapath, 0, experimenter=BEBA_EXPERIMENTER, exp_type=exp_type,
        data=data)


def state_stats_request(datapath, table_id=ofp.OFPTT_ALL, state=None,
                        match=None, short=False, delete=False):
    exp_type = {(False, False): MP_STATE_STATS,
                (False, True): MP_STATE_STATS_AND_DELETE,
                (True, False): MP_STATE_STATS_SHORT,
                (True, True): MP_STATE_STATS_AND_DELETE_SHORT}[(short, delete)]
    return stats_request(datapath, exp_type,
                         state_stats_request_data(table_id, state, match))


def global_state_stats_request(datapath):
    return stats_request(datapath, MP_GLOBAL_STATE_STATS)


def action(data):
    return parser.OFPActionExperimenterUnknown(BEBA_EXPERIMENTER, data=data)


def set_state_action(*args, **kwargs):
    return action(set_state_action_data(*args, **kwargs))


def set_global_state_action(value, mask=ALL32):
    return action(set_global_state_action_data(value, mask))


def inc_state_action(table_id):
    return action(inc_state_action_data(table_id))


class InSwitchPktGen(parser.OFPInstruction):
    """The IN_SWITCH_PKT_GEN instruction (serialize only)."""

    def __init__(self, pkttmp_id, actions=()):
        super().__init__()
        self.type = ofp.OFPIT_EXPERIMENTER
        self.pkttmp_id = pkttmp_id
        self.actions = list(actions)
        self.len = 8 + len(in_switch_pkt_gen_data(pkttmp_id, self.actions))

    def serialize(self, buf, offset):
        body = struct.pack("!HHI", self.type, self.len, BEBA_EXPERIMENTER) + \
            in_switch_pkt_gen_data(self.pkttmp_id, self.actions)
        if len(buf) < offset:
            buf += bytearray(offset - len(buf))
        buf[offset:offset + len(body)] = body


class BebaExperimenter(oxm_fields._Experimenter):
    experimenter_id = BEBA_EXPERIMENTER


def register_oxm_fields():
    """Add `state` and `global_state` to os-ken's OpenFlow 1.3 OXM table
    (idempotent)."""
    names = {f.name for f in ofp.oxm_types}
    if "state" in names:
        return
    ofp.oxm_types.extend([
        BebaExperimenter("global_state", OXM_GLOBAL_STATE, type_desc.Int4),
        BebaExperimenter("state", OXM_STATE, type_desc.Int4),
    ])
    oxm_fields.generate(ofp.__name__)


register_oxm_fields()
