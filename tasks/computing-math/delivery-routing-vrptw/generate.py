"""Seeded generator of inputs/ and reference/ for delivery-routing-vrptw: python3 generate.py --out DIR.

The instance is a food-service distributor's next-day plan: 110 customers with time windows,
weight and pallet demand, an old-town access restriction, a heterogeneous fleet and an
asymmetric road matrix. The reference cost is the cost of the best plan a deterministic OR-Tools
guided local search finds (stopped by a solution count, not by wall time, so it reproduces byte
for byte). That search takes minutes on a loaded machine, so its plan is shipped in
solution/reference_plan.csv: this script checks the plan against every rule and prices it.
`python3 generate.py --search` reruns the search and rewrites that file (under --out).
"""

import argparse
import csv
import json
import math
import random
import sys
from pathlib import Path

SEED = 20240611
CANARY = "7ade68c4-738b-45f4-9820-ca2c0ca49a75"
N_CUSTOMERS = 110
DEPOT = (12.0, 8.0)
CITY = (20.0, 20.0)
OLD_TOWN_RADIUS_KM = 2.4
TOWNS = [(5.0, 31.0), (35.0, 33.0), (39.0, 11.0), (9.0, -3.0)]
DEPOT_OPEN, DEPOT_CLOSE = 300, 1080  # 05:00 and 18:00, minutes after midnight

# type: (share, windows as (open, close) choices, kg range)
PROFILES = {
    "restaurant": (0.30, [(540, 690), (570, 720), (510, 660)], (30, 200)),
    "retail": (0.22, [(360, 570), (390, 600), (360, 540)], (80, 420)),
    "bakery_cafe": (0.14, [(390, 480), (360, 450), (420, 510)], (20, 110)),
    "institution": (0.20, [(420, 840), (450, 780), (480, 900)], (100, 520)),
    "evening_venue": (0.14, [(780, 960), (810, 990), (750, 930)], (30, 180)),
}

FLEET = [
    # prefix, count, type, kg, pallets, fixed EUR, EUR/km, EUR/h, max shift min, old-town access
    ("V", 9, "van", 1100, 6, 55.0, 0.30, 24.0, 600, 1),
    ("M", 5, "medium", 2800, 14, 85.0, 0.42, 30.0, 600, 1),
    ("R", 6, "rigid", 7000, 22, 120.0, 0.60, 30.0, 540, 0),
]

REFERENCE_SOLUTION_LIMIT = 2000
REFERENCE_PLAN = Path("solution") / "reference_plan.csv"  # vehicle_id, its customers in order


def build_instance(rng: random.Random):
    customers = []
    names = sorted(PROFILES)
    weights = [PROFILES[n][0] for n in names]
    for i in range(N_CUSTOMERS):
        u = rng.random()
        if u < 0.40:
            x, y = rng.gauss(CITY[0], 2.3), rng.gauss(CITY[1], 2.3)
        elif u < 0.78:
            tx, ty = TOWNS[rng.randrange(len(TOWNS))]
            x, y = rng.gauss(tx, 1.6), rng.gauss(ty, 1.6)
        else:
            x, y = rng.uniform(-6.0, 46.0), rng.uniform(-9.0, 43.0)
        kind = rng.choices(names, weights)[0]
        _, windows, (lo, hi) = PROFILES[kind]
        open_, close = windows[rng.randrange(len(windows))]
        shift = 15 * rng.randint(-1, 1)
        kg = int(round(rng.uniform(lo, hi) / 5.0) * 5)
        pallets = max(1, math.ceil(kg / rng.choice([240, 280, 320])))
        restricted = 1 if math.hypot(x - CITY[0], y - CITY[1]) <= OLD_TOWN_RADIUS_KM else 0
        service = 6 + 4 * pallets + (4 if restricted else 0)
        customers.append(
            {
                "customer_id": f"C{i + 1:03d}",
                "type": kind,
                "x_km": round(x, 2),
                "y_km": round(y, 2),
                "demand_kg": kg,
                "demand_pallets": pallets,
                "tw_open_min": open_ + shift,
                "tw_close_min": close + shift,
                "service_min": service,
                "old_town": restricted,
            }
        )
    return customers


def zone_speed(p) -> float:
    d_city = math.hypot(p[0] - CITY[0], p[1] - CITY[1])
    if d_city <= 3.5:
        return 19.0
    if d_city <= 8.0 or any(math.hypot(p[0] - tx, p[1] - ty) <= 2.5 for tx, ty in TOWNS):
        return 36.0
    return 58.0


def build_matrix(rng: random.Random, points):
    """Road km and minutes: a symmetric detour factor per pair, then a per-direction one-way
    factor, so the matrix is asymmetric as real road networks are."""
    n = len(points)
    km = [[0.0] * n for _ in range(n)]
    minutes = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            base = math.dist(points[i], points[j]) * rng.uniform(1.22, 1.48) + 0.3
            for a, b in ((i, j), (j, i)):
                d = base * rng.uniform(0.95, 1.07)
                v = 2.0 / (1.0 / zone_speed(points[a]) + 1.0 / zone_speed(points[b]))
                if d > 12.0:
                    v = max(v, 0.5 * v + 0.5 * 70.0)  # long legs use the main roads
                km[a][b] = round(d, 3)
                minutes[a][b] = round(d / v * 60.0 + 1.5, 1)
    return km, minutes


def fleet_rows():
    rows = []
    for prefix, count, kind, kg, pal, fixed, per_km, per_h, shift, access in FLEET:
        for k in range(count):
            rows.append(
                {
                    "vehicle_id": f"{prefix}{k + 1:02d}",
                    "type": kind,
                    "capacity_kg": kg,
                    "capacity_pallets": pal,
                    "fixed_cost_eur": f"{fixed:.2f}",
                    "cost_per_km_eur": f"{per_km:.2f}",
                    "cost_per_hour_eur": f"{per_h:.2f}",
                    "max_shift_min": shift,
                    "old_town_access": access,
                }
            )
    return rows


def write_csv(path: Path, rows, columns):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: row[c] for c in columns})


def write_plan(path: Path, plan) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(path, [{"vehicle_id": r["vehicle_id"], "customers": " ".join(r["nodes"])} for r in plan],
              ["vehicle_id", "customers"])


def read_plan(inst, path: Path):
    """Routes leaving the depot at their latest feasible departure, as the search's plan does."""
    from vrp_solver import route_of

    with open(path, newline="") as f:
        return [route_of(inst, row["vehicle_id"], row["customers"].split()) for row in csv.DictReader(f)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--skip-reference", action="store_true", help="inputs only (no solve)")
    parser.add_argument("--search", action="store_true",
                        help=f"rerun the reference search and write OUT/{REFERENCE_PLAN}")
    args = parser.parse_args()
    out = args.out
    rng = random.Random(SEED)
    customers = build_instance(rng)
    ids = ["DEPOT"] + [c["customer_id"] for c in customers]
    points = [DEPOT] + [(c["x_km"], c["y_km"]) for c in customers]
    km, minutes = build_matrix(rng, points)
    vehicles = fleet_rows()

    inputs = out / "inputs"
    inputs.mkdir(parents=True, exist_ok=True)
    write_csv(
        inputs / "customers.csv",
        customers,
        ["customer_id", "type", "x_km", "y_km", "demand_kg", "demand_pallets", "tw_open_min",
         "tw_close_min", "service_min", "old_town"],
    )
    write_csv(
        inputs / "vehicles.csv",
        vehicles,
        ["vehicle_id", "type", "capacity_kg", "capacity_pallets", "fixed_cost_eur",
         "cost_per_km_eur", "cost_per_hour_eur", "max_shift_min", "old_town_access"],
    )
    with open(inputs / "road_matrix.csv", "w", newline="") as f:
        f.write("from_id,to_id,km,minutes\n")
        for i in range(len(ids)):
            for j in range(len(ids)):
                if i != j:
                    f.write(f"{ids[i]},{ids[j]},{km[i][j]:.3f},{minutes[i][j]:.1f}\n")
    (inputs / "depot.json").write_text(
        json.dumps(
            {"depot_id": "DEPOT", "x_km": DEPOT[0], "y_km": DEPOT[1], "open_min": DEPOT_OPEN,
             "close_min": DEPOT_CLOSE},
            indent=2,
        )
        + "\n"
    )
    if args.skip_reference:
        return
    sys.path.insert(0, str(Path(__file__).parent / "solution"))
    from vrp_solver import load_instance, plan_cost, plan_problems

    inst = load_instance(inputs)
    if args.search:
        from vrp_solver import solve

        plan = solve(inst, solution_limit=REFERENCE_SOLUTION_LIMIT, time_limit_s=None)
        write_plan(out / REFERENCE_PLAN, plan)
    plan = read_plan(inst, (out if args.search else Path(__file__).parent) / REFERENCE_PLAN)
    if problems := plan_problems(inst, plan):
        sys.exit(f"{REFERENCE_PLAN} is not a feasible plan: {'; '.join(problems[:5])}")
    cost = plan_cost(inst, plan)
    ref = out / "reference"
    ref.mkdir(parents=True, exist_ok=True)
    (ref / "expected.json").write_text(
        json.dumps(
            {
                "canary": CANARY,
                "reference_total_cost_eur": round(cost["total_cost_eur"], 2),
                "reference_vehicles_used": cost["vehicles_used"],
                "reference_total_km": round(cost["total_km"], 3),
                "total_demand_kg": sum(c["demand_kg"] for c in customers),
                "total_demand_pallets": sum(c["demand_pallets"] for c in customers),
                "n_customers": len(customers),
            },
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
