"""BEBA / OpenState example apps for os-ken, on top of `oxflow.beba`.

Ported from the behaviour of BEBA's own controller apps
(beba-eu/beba-ctrl `ryu/app/beba/`); each module has a `configure(dp)`
that sends the switch its whole configuration when it connects (an app
class calls it from the switch-features handler), so the message sequence
can be built and checked without a switch:

- portknock: UDP port knocking (knock 10, 11, 12, 13 to open 22).
- maclearning: MAC learning in the data plane (no packet-in).
- forwarding_consistency: one-to-many load balancing with a SELECT group;
  the first packet of a TCP connection picks a replica, the connection's
  state keeps it there.
- ddos: DDoS detection with two stateful stages and a DSCP-remark meter.
- fast_failover: per-flow fast failover with a FAST_FAILOVER group, and a
  hard timeout that rolls a failed-over flow back to probing the primary
  path.

Run one with `python -m oxflow.controller --app oxflow.apps.beba.<name>`.
Timeouts are microseconds on the wire; the modules write them as
`seconds * SECOND`.
"""
