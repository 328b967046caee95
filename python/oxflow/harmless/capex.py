"""CAPEX of an SDN deployment built three ways, as a function of the number
of access ports (the comparison of the HARMLESS papers' Fig. 8):

- ``hardware``: turnkey OpenFlow hardware switches;
- ``software``: software switches on commodity servers, one NIC port per
  access port;
- ``harmless``: legacy 802.1Q switches whose access ports are tagged and
  aggregated onto trunk ports, each trunk ending on a NIC port of a server
  running the software switch.

Two scenarios:

- ``access`` (access gateway): only the access layer, N ports of the
  access speed;
- ``clos`` (L2 access + L3 spine): the access layer plus a spine layer built
  with the same technology at 10G, with one spine port per uplink of the
  access layer.

Every price and sizing figure is a field of `Params`. The defaults are
stated assumptions, not the paper's figures (the paper's price table was
not available; docs/harmless-capex.md says which facts were checked).

Formulas (ceil = round up; S = access speed in Gbit/s; N = access ports;
R = `oversubscription`, access bandwidth : processed bandwidth):

  load_gbps(N, S)     = N * S / R               traffic a switch must process
  cores(load)         = ceil(load / gbps_per_core)
  cpus(load)          = max(1, ceil(cores / cores_per_cpu))
  servers(nics, cpus) = max(1, ceil(nics / nic_slots_per_server),
                              ceil(cpus / cpus_per_server))
  server_cost(nics, cpus) = servers * price_server        (one CPU included)
                          + (cpus - servers)+ * price_cpu (the extra CPUs)
                          + nics * price_nic(S_nic)

  hardware(N, S) = ceil(N / switch_ports) * price_sdn_switch(S)
  software(N, S) = server_cost(nics = ceil(N / nic_ports(S)), cpus(load_gbps))
  harmless(N, S) = ceil(N / switch_ports) * price_legacy_switch(S)
                 + server_cost(nics = ceil(trunks / nic_ports(10G)),
                               cpus(load_gbps))
      trunks     = max(1, ceil(load_gbps / 10))   10G trunk ports, one per
                                                  10 Gbit/s of processed load
  uplinks(N, S)  = ceil(N * S / R / 10)           10G uplinks of the access
                                                  layer (at least 1)
  access(N, S)   = variant(N, S)
  clos(N, S)     = variant(N, S) + variant(uplinks(N, S), 10G)
"""

import argparse
import csv
import dataclasses
import math
import os
import sys

VARIANTS = ("hardware", "software", "harmless")
SCENARIOS = ("access", "clos")
SPEEDS = {"1G": 1, "10G": 10}
TRUNK_GBPS = 10


@dataclasses.dataclass
class Params:
    """Prices (USD) and sizing figures; defaults are assumptions (module
    doc). A field's CLI option is ``--`` + its name with ``-`` for ``_``."""
    # 48-port OpenFlow hardware switch, by access speed
    price_sdn_switch_1g: float = 6000.0
    price_sdn_switch_10g: float = 20000.0
    # 48-port legacy (non-SDN) 802.1Q switch with 10G uplinks, by speed
    price_legacy_switch_1g: float = 800.0
    price_legacy_switch_10g: float = 5000.0
    # commodity server with one CPU, and one more CPU for it
    price_server: float = 2500.0
    price_cpu: float = 1200.0
    # NICs: a quad-port 1G and a dual-port 10G card
    price_nic_1g: float = 150.0
    price_nic_10g: float = 400.0
    # sizing
    switch_ports: int = 48          # access ports of one hardware/legacy switch
    nic_ports_1g: int = 4
    nic_ports_10g: int = 2
    nic_slots_per_server: int = 4
    cpus_per_server: int = 2
    cores_per_cpu: int = 8
    gbps_per_core: float = 5.0      # software-switch throughput of one core
    oversubscription: float = 12.0  # access bandwidth : processed bandwidth

    def validate(self):
        """Raises ValueError naming the first bad field."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not math.isfinite(value):
                raise ValueError("%s must be a finite number, not %r"
                                 % (f.name, value))
            if f.name.startswith("price_"):
                if value < 0:
                    raise ValueError("%s must be >= 0, not %r"
                                     % (f.name, value))
            elif value <= 0:
                raise ValueError("%s must be > 0, not %r" % (f.name, value))
        return self


def _speed_gbps(speed):
    try:
        return SPEEDS[speed]
    except KeyError:
        raise ValueError("unknown speed %r (one of %s)"
                         % (speed, ", ".join(SPEEDS))) from None


def _check_ports(ports):
    if isinstance(ports, bool) or not isinstance(ports, int) or ports < 0:
        raise ValueError("port count must be a whole number >= 0, not %r"
                         % (ports,))


def _ceil_div(a, b):
    return int(math.ceil(a / b - 1e-12)) if a > 0 else 0


def load_gbps(ports, gbps, p):
    """Traffic a software switch must process for `ports` ports of `gbps`."""
    return ports * gbps / p.oversubscription


def cpus_needed(load, p):
    return max(1, _ceil_div(_ceil_div(load, p.gbps_per_core), p.cores_per_cpu))


def server_cost(nics, cpus, nic_price, p):
    """Servers holding `nics` NIC cards and `cpus` CPUs, the CPUs beyond one
    per server and the NICs."""
    servers = max(1, _ceil_div(nics, p.nic_slots_per_server),
                  _ceil_div(cpus, p.cpus_per_server))
    extra_cpus = max(0, cpus - servers)
    return servers * p.price_server + extra_cpus * p.price_cpu + \
        nics * nic_price


def hardware(ports, speed, p):
    _check_ports(ports)
    gbps = _speed_gbps(speed)
    price = p.price_sdn_switch_1g if gbps == 1 else p.price_sdn_switch_10g
    return _ceil_div(ports, p.switch_ports) * price


def software(ports, speed, p):
    _check_ports(ports)
    if ports == 0:
        return 0.0
    gbps = _speed_gbps(speed)
    nic_ports, nic_price = ((p.nic_ports_1g, p.price_nic_1g) if gbps == 1
                            else (p.nic_ports_10g, p.price_nic_10g))
    return server_cost(_ceil_div(ports, nic_ports),
                       cpus_needed(load_gbps(ports, gbps, p), p),
                       nic_price, p)


def trunks(ports, speed, p):
    """10G trunk ports between the legacy switches and the server."""
    _check_ports(ports)
    if ports == 0:
        return 0
    load = load_gbps(ports, _speed_gbps(speed), p)
    return max(1, _ceil_div(load, TRUNK_GBPS))


def harmless(ports, speed, p):
    _check_ports(ports)
    if ports == 0:
        return 0.0
    gbps = _speed_gbps(speed)
    price = p.price_legacy_switch_1g if gbps == 1 else \
        p.price_legacy_switch_10g
    legacy = _ceil_div(ports, p.switch_ports) * price
    nics = _ceil_div(trunks(ports, speed, p), p.nic_ports_10g)
    return legacy + server_cost(nics, cpus_needed(load_gbps(ports, gbps, p),
                                                  p), p.price_nic_10g, p)


VARIANT_FUNCS = {"hardware": hardware, "software": software,
                 "harmless": harmless}


def uplinks(ports, speed, p):
    """10G uplinks from the access layer to the spine (Clos scenario)."""
    _check_ports(ports)
    if ports == 0:
        return 0
    return max(1, _ceil_div(load_gbps(ports, _speed_gbps(speed), p),
                            TRUNK_GBPS))


def total(scenario, variant, ports, speed, p):
    """CAPEX of `variant` for `ports` access ports of `speed` in
    `scenario`."""
    if variant not in VARIANT_FUNCS:
        raise ValueError("unknown variant %r (one of %s)"
                         % (variant, ", ".join(VARIANTS)))
    func = VARIANT_FUNCS[variant]
    if scenario == "access":
        return func(ports, speed, p)
    if scenario == "clos":
        return func(ports, speed, p) + func(uplinks(ports, speed, p), "10G",
                                            p)
    raise ValueError("unknown scenario %r (one of %s)"
                     % (scenario, ", ".join(SCENARIOS)))


def table(port_counts, speed, p, scenarios=SCENARIOS):
    """Rows (dicts) of the CSV: one per scenario and port count."""
    rows = []
    for scenario in scenarios:
        for n in port_counts:
            row = {"scenario": scenario, "speed": speed, "ports": n}
            for v in VARIANTS:
                row[v] = round(total(scenario, v, n, speed, p), 2)
            rows.append(row)
    return rows


def crossovers(port_counts, speed, p, scenario):
    """Where the cheapest variant changes along `port_counts`: a list of
    (ports, previous cheapest, new cheapest); ties go to the earlier name
    in VARIANTS."""
    out = []
    prev = None
    for n in port_counts:
        if n == 0:
            continue
        costs = {v: total(scenario, v, n, speed, p) for v in VARIANTS}
        best = min(VARIANTS, key=lambda v: costs[v])
        if prev is not None and best != prev:
            out.append((n, prev, best))
        prev = best
    return out


# --- SVG plot ---------------------------------------------------------------

COLOURS = {"hardware": "#d62728", "software": "#1f77b4",
           "harmless": "#2ca02c"}


def _nice_step(span):
    raw = span / 5 if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def _panel(rows, scenario, x0, y0, w, h):
    """SVG elements of one panel (a scenario's three lines)."""
    pts = [r for r in rows if r["scenario"] == scenario]
    xs = [r["ports"] for r in pts]
    ymax = max([r[v] for r in pts for v in VARIANTS] + [1])
    xmin, xmax = min(xs), max(xs)
    xspan = (xmax - xmin) or 1
    ystep = _nice_step(ymax)
    ytop = ystep * math.ceil(ymax / ystep)

    def px(x):
        return x0 + (x - xmin) / xspan * w

    def py(y):
        return y0 + h - y / ytop * h

    title = {"access": "access gateway",
             "clos": "Clos (L2 access + L3 spine)"}[scenario]
    el = ['<text x="%.1f" y="%.1f" text-anchor="middle" font-size="14">%s, '
          '%s access</text>' % (x0 + w / 2, y0 - 10, title,
                                pts[0]["speed"])]
    el.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" '
              'fill="none" stroke="#444"/>' % (x0, y0, w, h))
    y = 0.0
    while y <= ytop + 1e-9:
        el.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                  'stroke="#ddd"/>' % (x0, py(y), x0 + w, py(y)))
        el.append('<text x="%.1f" y="%.1f" text-anchor="end" '
                  'font-size="11">%s</text>' % (x0 - 5, py(y) + 4,
                                                "{:,.0f}".format(y)))
        y += ystep
    xstep = _nice_step(xspan)
    x = xstep * math.ceil(xmin / xstep)
    while x <= xmax + 1e-9:
        el.append('<text x="%.1f" y="%.1f" text-anchor="middle" '
                  'font-size="11">%g</text>' % (px(x), y0 + h + 15, x))
        x += xstep
    el.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">'
              'access ports</text>' % (x0 + w / 2, y0 + h + 32))
    for v in VARIANTS:
        line = " ".join("%.1f,%.1f" % (px(r["ports"]), py(r[v])) for r in pts)
        el.append('<polyline fill="none" stroke="%s" stroke-width="2" '
                  'points="%s"><title>%s</title></polyline>'
                  % (COLOURS[v], line, v))
    return el


def svg(rows):
    """A self-contained SVG: one panel per scenario in `rows`, CAPEX (USD)
    against access ports, one line per variant."""
    scenarios = [s for s in SCENARIOS if any(r["scenario"] == s
                                             for r in rows)]
    pw, ph, ml, mt = 420, 300, 80, 50
    width = ml + len(scenarios) * (pw + ml) - ml + 40
    height = mt + ph + 90
    el = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
          'font-family="sans-serif">' % (width, height),
          '<rect width="100%" height="100%" fill="white"/>',
          '<text x="20" y="%d" font-size="12" transform="rotate(-90 20 %d)" '
          'text-anchor="middle">CAPEX (USD)</text>'
          % (mt + ph // 2, mt + ph // 2)]
    for i, s in enumerate(scenarios):
        el += _panel(rows, s, ml + i * (pw + ml), mt, pw, ph)
    lx = ml
    for v in VARIANTS:
        el.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                  'stroke-width="3"/>' % (lx, height - 15, lx + 25,
                                          height - 15, COLOURS[v]))
        el.append('<text x="%d" y="%d" font-size="12">%s</text>'
                  % (lx + 30, height - 11, v))
        lx += 130
    el.append("</svg>")
    return "\n".join(el) + "\n"


# --- command line -----------------------------------------------------------

def parse_ports(text):
    """'48', '24,48,96' or 'START:STOP:STEP' (STOP included)."""
    try:
        if ":" in text:
            parts = [int(x) for x in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0:
                raise ValueError
            start, stop, step = parts
            counts = list(range(start, stop + 1, step))
        else:
            counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            "%r is not N, N,M,... or START:STOP:STEP with STEP > 0"
            % text) from None
    bad = [n for n in counts if n < 0]
    if bad or not counts:
        raise argparse.ArgumentTypeError(
            "port counts must be >= 0 (got %s)"
            % (bad[0] if bad else "none"))
    return counts


def build_parser():
    ap = argparse.ArgumentParser(
        prog="oxflow harmless capex",
        description="CAPEX of hardware SDN, software SDN and HARMLESS "
        "deployments over access port counts (docs/harmless-capex.md). "
        "Prices are USD; the defaults are stated assumptions.")
    ap.add_argument("--ports", type=parse_ports, default=parse_ports(
        "12:480:12"), help="port counts: N, N,M,... or START:STOP:STEP "
        "(default 12:480:12)")
    ap.add_argument("--speed", choices=sorted(SPEEDS), default="1G",
                    help="access port speed (default 1G)")
    ap.add_argument("--scenario", choices=SCENARIOS + ("both",),
                    default="both", help="access gateway, Clos or both")
    ap.add_argument("--out", metavar="DIR", help="write DIR/capex.csv and "
                    "DIR/capex.svg")
    defaults = Params()
    for f in dataclasses.fields(Params):
        ap.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                        type=f.type if isinstance(f.type, type) else
                        {"float": float, "int": int}[f.type],
                        default=getattr(defaults, f.name), metavar="N",
                        help="default %s" % getattr(defaults, f.name))
    return ap


def main(argv=None):
    ap = build_parser()
    args = ap.parse_args(argv)
    p = Params(**{f.name: getattr(args, f.name)
                  for f in dataclasses.fields(Params)})
    try:
        p.validate()
    except ValueError as e:
        ap.error(str(e))
    scenarios = SCENARIOS if args.scenario == "both" else (args.scenario,)
    rows = table(args.ports, args.speed, p, scenarios)
    w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]),
                       lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    for s in scenarios:
        for n, old, new in crossovers(args.ports, args.speed, p, s):
            print("# %s %s: cheapest changes from %s to %s at %d ports"
                  % (s, args.speed, old, new, n))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "capex.csv"), "w") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]),
                               lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(args.out, "capex.svg"), "w") as fh:
            fh.write(svg(rows))
        print("# wrote %s and %s" % (os.path.join(args.out, "capex.csv"),
                                     os.path.join(args.out, "capex.svg")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
