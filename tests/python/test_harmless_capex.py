"""The HARMLESS CAPEX calculator (python/oxflow/harmless/capex.py): formula
values for hand-computed cases, monotonicity, where the cheapest variant
changes, the command line's table/CSV/SVG and its bad-input errors (also
through `oxflow harmless capex` when the binary is built)."""

import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from oxflow.harmless import capex
from oxflow.harmless.capex import Params, total

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BINARY = os.path.join(ROOT, "target", "release", "oxflow")


def run_cli(*args, binary=False):
    if binary:
        argv = [BINARY, "harmless", "capex"] + list(args)
    else:
        argv = [sys.executable, "-m", "oxflow.harmless.capex"] + list(args)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
               OXFLOW_REPO=ROOT)
    return subprocess.run(argv, capture_output=True, text=True, env=env,
                          timeout=60)


def test_hand_computed_values():
    p = Params()
    # one 48-port OpenFlow switch; a 49th port needs a second one
    assert capex.hardware(48, "1G", p) == 6000
    assert capex.hardware(49, "1G", p) == 12000
    # 12 quad-port NICs in 3 servers (4 slots each); 4 Gbit/s -> 1 core
    assert capex.software(48, "1G", p) == 3 * 2500 + 12 * 150
    # a legacy switch + one server with one dual-port 10G NIC (1 trunk)
    assert capex.harmless(48, "1G", p) == 800 + 2500 + 400
    # 480 x 10G: 10 legacy switches; 400 Gbit/s processed -> 40 trunks,
    # 20 NICs, 80 cores = 10 CPUs in 5 servers (5 extra CPUs)
    assert capex.trunks(480, "10G", p) == 40
    assert capex.harmless(480, "10G", p) == \
        10 * 5000 + 5 * 2500 + 5 * 1200 + 20 * 400
    # Clos: the access layer plus one 10G spine port per uplink
    assert capex.uplinks(48, "1G", p) == 1
    assert total("clos", "harmless", 48, "1G", p) == \
        3700 + (5000 + 2500 + 400)
    assert total("access", "software", 0, "10G", p) == 0


def test_prices_are_parameters():
    p = Params(price_legacy_switch_1g=0, price_server=1000, price_nic_10g=0)
    assert capex.harmless(48, "1G", p) == 1000
    assert capex.hardware(48, "10G", Params(price_sdn_switch_10g=1)) == 1


@pytest.mark.parametrize("speed", ["1G", "10G"])
@pytest.mark.parametrize("scenario", ["access", "clos"])
def test_costs_never_fall_as_ports_grow(speed, scenario):
    p = Params()
    for v in capex.VARIANTS:
        costs = [total(scenario, v, n, speed, p) for n in range(0, 600)]
        assert all(a <= b for a, b in zip(costs, costs[1:])), v
        assert costs[-1] > costs[1] > 0
        # 10G ports never cost less than 1G ones, Clos never less than access
        assert total(scenario, v, 500, "10G", p) >= \
            total(scenario, v, 500, "1G", p)
        assert total("clos", v, 500, speed, p) > \
            total("access", v, 500, speed, p)


def test_crossover_points():
    p = Params()
    # software is cheapest while every NIC fits in one server (16 x 1G on 4
    # quad-port NICs); the 17th port needs a second server
    assert capex.software(16, "1G", p) < capex.harmless(16, "1G", p)
    assert capex.software(17, "1G", p) > capex.harmless(17, "1G", p)
    assert capex.crossovers(range(1, 1001), "1G", p, "access") == \
        [(17, "software", "harmless")]
    assert capex.crossovers(range(1, 1001), "1G", p, "clos") == \
        [(33, "software", "harmless")]
    assert capex.crossovers(range(1, 1001), "10G", p, "access") == \
        [(15, "software", "harmless")]
    # with legacy switches as dear as OpenFlow ones, hardware wins at scale
    dear = Params(price_legacy_switch_10g=20000)
    points = capex.crossovers(range(1, 1001), "10G", dear, "access")
    assert points and points[-1][2] == "hardware"


def test_bad_values_raise():
    p = Params()
    with pytest.raises(ValueError, match="port count"):
        capex.hardware(-1, "1G", p)
    with pytest.raises(ValueError, match="unknown speed"):
        capex.harmless(48, "40G", p)
    with pytest.raises(ValueError, match="unknown scenario"):
        total("ring", "hardware", 48, "1G", p)
    with pytest.raises(ValueError, match="price_cpu"):
        Params(price_cpu=-5).validate()
    with pytest.raises(ValueError, match="switch_ports"):
        Params(switch_ports=0).validate()


def test_cli_writes_table_csv_and_svg(tmp_path):
    out = tmp_path / "o"
    proc = run_cli("--ports", "12:96:12", "--speed", "10G",
                   "--price-server", "3000", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "scenario,speed,ports,hardware,software,harmless"
    assert "# access 10G: cheapest changes from software to harmless at 24 " \
        "ports" in lines
    with open(out / "capex.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 16
    p = Params(price_server=3000)
    for r in rows:
        for v in capex.VARIANTS:
            assert float(r[v]) == total(r["scenario"], v, int(r["ports"]),
                                        "10G", p)
    root = ET.parse(out / "capex.svg").getroot()
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(lines) == 6      # three variants in two panels
    assert all(len(pl.get("points").split()) == 8 for pl in lines)


@pytest.mark.parametrize("args,msg", [
    (["--ports", "-4"], "port counts must be >= 0"),
    (["--ports", "1:x:2"], "is not N"),
    (["--speed", "40G"], "invalid choice: '40G'"),
    (["--price-cpu", "-1"], "price_cpu must be >= 0"),
])
def test_cli_bad_input_exits_2(args, msg):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert msg in proc.stderr
    assert proc.stdout == ""


@pytest.mark.skipif(not os.access(BINARY, os.X_OK),
                    reason="target/release/oxflow not built")
def test_oxflow_harmless_capex_subcommand():
    proc = run_cli("--ports", "48", binary=True)
    assert proc.returncode == 0, proc.stderr
    assert "access,1G,48,6000.0,9300.0,3700.0" in proc.stdout.splitlines()
    bad = run_cli("--speed", "2G", binary=True)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
