"""Oracle: solve the plan with OR-Tools and write routes.csv and kpis.json."""

import csv
import json
import sys
from pathlib import Path

from vrp_solver import load_instance, plan_cost, schedule, solve

ORACLE_SOLUTION_LIMIT = int(sys.argv[3]) if len(sys.argv) > 3 else 1000


def main() -> None:
    inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
    inst = load_instance(inputs)
    # a solution count, not a wall-time limit, keeps the oracle's plan identical on any machine
    plan = solve(inst, solution_limit=ORACLE_SOLUTION_LIMIT, time_limit_s=None)
    write(inst, plan, output)


def write(inst, plan, output: Path) -> None:
    cust = {c["customer_id"]: c for c in inst["customers"]}
    veh = {v["vehicle_id"]: v for v in inst["vehicles"]}
    waiting = 0.0
    with open(output / "routes.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["vehicle_id", "stop_seq", "location_id", "arrival_min", "service_start_min", "departure_min"])
        for route in plan:
            for seq, stop in enumerate(schedule(inst, route)):
                if stop["arrival_min"] is not None and stop["service_start_min"] is not None:
                    waiting += stop["service_start_min"] - stop["arrival_min"]
                w.writerow([route["vehicle_id"], seq, stop["location_id"],
                            *("" if stop[k] is None else f"{stop[k]:.2f}"
                              for k in ("arrival_min", "service_start_min", "departure_min"))])
    cost = plan_cost(inst, plan)
    by_type = {"van": 0, "medium": 0, "rigid": 0}
    kg = cap = 0.0
    for route in plan:
        v = veh[route["vehicle_id"]]
        by_type[v["type"]] += 1
        cap += float(v["capacity_kg"])
        kg += sum(float(cust[c]["demand_kg"]) for c in route["nodes"])
    kpis = {
        "total_cost_eur": round(cost["total_cost_eur"], 2),
        "fixed_cost_eur": round(cost["fixed_cost_eur"], 2),
        "distance_cost_eur": round(cost["distance_cost_eur"], 2),
        "driver_cost_eur": round(cost["time_cost_eur"], 2),
        "total_km": round(cost["total_km"], 3),
        "paid_driver_hours": round(cost["paid_hours"], 3),
        "vehicles_used": cost["vehicles_used"],
        "vehicles_by_type": by_type,
        "customers_served": sum(len(r["nodes"]) for r in plan),
        "total_waiting_min": round(waiting, 2),
        "kg_utilisation_pct": round(100.0 * kg / cap, 3),
    }
    (output / "kpis.json").write_text(json.dumps(kpis, indent=2) + "\n")


if __name__ == "__main__":
    main()
