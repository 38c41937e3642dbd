"""Oracle: max-day fire-flow availability at 20 psi residual with WNTR's EPANET engine."""

import csv
import json
import sys
from pathlib import Path

import wntr

INPUTS, OUT = Path(sys.argv[1]), Path(sys.argv[2])
PSI_IN_M = 0.3048 / 0.4335275  # 1 psi of water in metres of head
GPM_IN_M3S = 0.003785411784 / 60
LPS_IN_GPM = 0.003785411784 / 60 * 1000


def build() -> wntr.network.WaterNetworkModel:
    wn = wntr.network.WaterNetworkModel(str(INPUTS / "Net3.inp"))
    wn.options.time.duration = 0
    for name in wn.junction_name_list:  # max day: every customer demand x 1.3, fire flow unscaled
        for demand in wn.get_node(name).demand_timeseries_list:
            demand.base_value *= 1.3
    wn.add_pattern("fire_flat", [1.0])
    return wn


def min_pressure_psi(wn: wntr.network.WaterNetworkModel, junctions: list[str]) -> dict[str, float]:
    result = wntr.sim.EpanetSimulator(wn).run_sim(file_prefix="scratch")
    row = result.node["pressure"].iloc[0]
    return {j: float(row[j]) / PSI_IN_M for j in junctions}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    wn = build()
    junctions = wn.junction_name_list
    base = min_pressure_psi(wn, junctions)
    served = [j for j in junctions if base[j] >= 20.0]  # suction-side nodes below 20 psi already
    rows, deficient = [], []
    with open(INPUTS / "hydrants.csv", newline="") as handle:
        sheet = list(csv.DictReader(handle))
    for item in sheet:
        node = item["hydrant_junction"]
        value = float(item["required_fire_flow"])
        required = value / LPS_IN_GPM if item["unit"] == "L/s" else value
        wn.get_node(node).add_demand(0.0, "fire_flat", category="fire")
        fire = wn.get_node(node).demand_timeseries_list[-1]
        low, high = 0.0, 5000.0
        while high - low > 1.0:
            mid = (low + high) / 2
            fire.base_value = mid * GPM_IN_M3S
            p = min_pressure_psi(wn, served)
            low, high = (mid, high) if min(p.values()) >= 20.0 else (low, mid)
        del wn.get_node(node).demand_timeseries_list[-1]
        meets = low >= required
        if not meets:
            deficient.append(node)
        rows.append([node, f"{required:.1f}", f"{low:.0f}", "yes" if meets else "no"])
    with open(OUT / "fireflow.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["hydrant", "required_gpm", "available_gpm", "meets_requirement"], *rows])
    summary = {"low_pressure_junctions": sorted(j for j in junctions if base[j] < 20.0),
               "deficient_hydrants": sorted(deficient)}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
