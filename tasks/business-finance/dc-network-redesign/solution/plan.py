"""Oracle for dc-network-redesign: build the model from the inputs, solve it with OR-Tools
CP-SAT to proven optimality, write the plan and its costs. Flags reproduce mistakes."""

import argparse
import csv
import json
from pathlib import Path

import netmodel


def nearest_plan(tb: dict) -> dict:
    """Naive: every DC open, each customer to its nearest DC, plants filled cheapest first."""
    assign = {i: min((j for j in tb["dcs"] if tb["ok"][i, j]), key=lambda j: tb["miles"][i, j]) for i in tb["cust"]}
    need = {j: sum(tb["dem"][i] for i, jj in assign.items() if jj == j) for j in tb["dcs"]}
    left = dict(tb["pcap"])
    flows = {}
    for j in tb["dcs"]:
        for p in sorted(tb["plants"], key=lambda p: tb["inb"][p, j] + tb["prod"][p]):
            q = min(need[j], left[p])
            if q:
                flows[p, j] = flows.get((p, j), 0) + q
                need[j] -= q
                left[p] -= q
    return {"open": list(tb["dcs"]), "assign": assign, "flows": flows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--gap", type=float, default=0.0)
    ap.add_argument("--naive", action="store_true")
    ap.add_argument("--mistake", choices=["ignore_uom", "per_case_ltl", "ignore_lease"], default=None)
    ap.add_argument("--weeks", type=float, default=None)
    a = ap.parse_args()
    data = netmodel.read(a.inputs)
    kw = {a.mistake: True} if a.mistake else {}
    tb = netmodel.tables(data, weeks=a.weeks, **kw)
    plan = nearest_plan(tb) if a.naive else netmodel.solve(tb, gap=a.gap)
    costs = netmodel.cost(tb, plan)
    a.out.mkdir(parents=True, exist_ok=True)
    with open(a.out / "assignments.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["customer_id", "dc_id", "annual_cases", "road_miles"])
        for i in tb["cust"]:
            j = plan["assign"][i]
            w.writerow([i, j, tb["dem"][i], f"{tb['miles'][i, j]:.1f}"])
    with open(a.out / "plant_flows.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["plant_id", "dc_id", "annual_cases"])
        for (p, j), v in sorted(plan["flows"].items()):
            w.writerow([p, j, int(v)])
    summary = {"open_dcs": sorted(plan["open"]),
               "annual_cost_usd": {k: round(v, 2) for k, v in costs.items()}}
    (a.out / "network_summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
