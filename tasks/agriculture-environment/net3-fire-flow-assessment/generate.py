"""Inputs and reference for net3-fire-flow-assessment: python3 generate.py --out DIR.

The network is EPANET's Net3 as WNTR ships it; the hydrant sheet is fixed below. The
reference fire flows come from bisection on EPANET runs (pressure falls monotonically with
the added demand in this steady-state snapshot), to 2.5 gpm.
"""

import argparse
import csv
import io
import json
import shutil
import tempfile
from pathlib import Path

import wntr

CANARY = "838d23c3-299a-4e76-946e-1e2860a09115"
NET3 = Path(wntr.__file__).parent / "library" / "networks" / "Net3.inp"
MAX_DAY_FACTOR = 1.3
RESIDUAL_PSI = 20.0
M_PER_PSI = 0.703070
GPM = 6.309020e-5  # m3/s per US gpm
SEARCH_CAP_GPM = 5000.0
# hydrant junction, required fire flow, unit, district (as the fire marshal's sheet has them)
HYDRANTS = [
    ("15", 1000, "gpm", "river pump station"),
    ("101", 2500, "gpm", "downtown"),
    ("139", 94.6, "L/s", "residential north"),
    ("147", 2000, "gpm", "hospital"),
    ("151", 157.7, "L/s", "industrial park"),
    ("225", 3000, "gpm", "warehouse district"),
    ("231", 126.2, "L/s", "school campus"),
    ("253", 1500, "gpm", "residential east"),
]
LPS_PER_GPM = 0.0630902


def network() -> wntr.network.WaterNetworkModel:
    wn = wntr.network.WaterNetworkModel(str(NET3))
    wn.options.time.duration = 0
    wn.options.hydraulic.demand_multiplier = MAX_DAY_FACTOR
    return wn


def pressures_psi(hydrant: str | None, gpm: float) -> dict[str, float]:
    wn = network()
    if hydrant is not None:
        wn.add_pattern("fire", [1.0])
        wn.get_node(hydrant).add_demand(gpm * GPM / MAX_DAY_FACTOR, "fire")
    with tempfile.TemporaryDirectory() as scratch:
        result = wntr.sim.EpanetSimulator(wn).run_sim(file_prefix=str(Path(scratch) / "net3ff"))
    row = result.node["pressure"].iloc[0]
    return {j: float(row[j]) / M_PER_PSI for j in wn.junction_name_list}


def fire_flow(hydrant: str, served: list[str]) -> float:
    low, high = 0.0, SEARCH_CAP_GPM
    while high - low > 2.5:
        mid = (low + high) / 2
        p = pressures_psi(hydrant, mid)
        if min(p[j] for j in served) >= RESIDUAL_PSI:
            low = mid
        else:
            high = mid
    return low


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(NET3, out / "inputs" / "Net3.inp")
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["hydrant_junction", "required_fire_flow", "unit", "district"])
    writer.writerows(HYDRANTS)
    (out / "inputs" / "hydrants.csv").write_text(buffer.getvalue())

    base = pressures_psi(None, 0.0)
    low = sorted(j for j, p in base.items() if p < RESIDUAL_PSI)
    served = sorted(j for j, p in base.items() if p >= RESIDUAL_PSI)
    hydrants = {}
    for junction, required, unit, _ in HYDRANTS:
        required_gpm = required / LPS_PER_GPM if unit == "L/s" else float(required)
        available = fire_flow(junction, served)
        hydrants[junction] = {"required_gpm": round(required_gpm, 1), "available_gpm": available,
                              "meets": available >= required_gpm}
    reference = {"canary": CANARY, "low_pressure_junctions": low, "served_junctions": served,
                 "hydrants": hydrants, "max_day_factor": MAX_DAY_FACTOR, "search_cap_gpm": SEARCH_CAP_GPM}
    (out / "reference" / "expected.json").write_text(json.dumps(reference, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
