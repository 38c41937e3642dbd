"""Seeded generator of inputs/ and reference/ for dc-network-redesign: python3 generate.py --out DIR.

A US distribution network for one product family: 3 plants, 11 distribution centres
(3 leased today, 8 candidate sites), 90 customer ship-to zones around 30 metros. The
reference is the proven optimum of the single-sourcing location model (OR-Tools CP-SAT).
`--search` looks for a seed where each trap changes the answer (authoring only).

inputs/customers.csv      annual demand (mixed units of measure), service tier, location
inputs/dcs.csv            fixed cost, handling cost, capacity in pallets per week, lease
inputs/plants.csv         capacity and production cost
inputs/ltl_rates.csv      outbound LTL rates by mileage band, USD per hundredweight
inputs/network_terms.csv  the planning terms (units, circuity, service limits, plan year)
reference/expected.json   the optimal annual cost and its parts
"""

import argparse
import csv
import io
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "solution"))
import netmodel

SEED = 13
CANARY = "de4ddea1-d80f-4a0e-9772-1f6b72b0dc7e"
METROS = [("New York", 40.71, -74.01), ("Los Angeles", 34.05, -118.24), ("Chicago", 41.88, -87.63),
          ("Houston", 29.76, -95.37), ("Phoenix", 33.45, -112.07), ("Philadelphia", 39.95, -75.17),
          ("San Antonio", 29.42, -98.49), ("San Diego", 32.72, -117.16), ("Dallas", 32.78, -96.80),
          ("San Jose", 37.34, -121.89), ("Austin", 30.27, -97.74), ("Jacksonville", 30.33, -81.66),
          ("Columbus", 39.96, -83.00), ("Charlotte", 35.23, -80.84), ("Indianapolis", 39.77, -86.16),
          ("Seattle", 47.61, -122.33), ("Denver", 39.74, -104.99), ("Nashville", 36.16, -86.78),
          ("Atlanta", 33.75, -84.39), ("Kansas City", 39.10, -94.58), ("Minneapolis", 44.98, -93.27),
          ("St. Louis", 38.63, -90.20), ("Salt Lake City", 40.76, -111.89), ("Portland", 45.52, -122.68),
          ("Memphis", 35.15, -90.05), ("Detroit", 42.33, -83.05), ("Boston", 42.36, -71.06),
          ("Miami", 25.76, -80.19), ("Pittsburgh", 40.44, -80.00), ("Cincinnati", 39.10, -84.51)]
DCS = [("DC-CHI", "Chicago IL", 41.85, -87.65, "existing", 2027),
       ("DC-ATL", "Atlanta GA", 33.65, -84.42, "existing", 2026),
       ("DC-HBG", "Harrisburg PA", 40.27, -76.88, "candidate", ""),
       ("DC-ONT", "Ontario CA", 34.06, -117.65, "candidate", ""),
       ("DC-RNO", "Reno NV", 39.53, -119.81, "candidate", ""),
       ("DC-DEN", "Denver CO", 39.77, -104.87, "candidate", ""),
       ("DC-DFW", "Dallas TX", 32.90, -97.04, "candidate", ""),
       ("DC-CMH", "Columbus OH", 39.96, -82.99, "candidate", ""),
       ("DC-MEM", "Memphis TN", 35.04, -89.98, "existing", 2029),
       ("DC-MCI", "Kansas City MO", 39.10, -94.58, "candidate", ""),
       ("DC-SEA", "Kent WA", 47.38, -122.23, "candidate", "")]
PLANTS = [("PL-FRE", "Fresno CA", 36.74, -119.79), ("PL-IND", "Indianapolis IN", 39.77, -86.16),
          ("PL-ALN", "Allentown PA", 40.60, -75.49)]
LTL = [(0, 100, 4.10), (100, 250, 5.65), (250, 500, 7.40), (500, 1000, 9.95), (1000, 1500, 12.60),
       (1500, 99999, 15.85)]
TERMS = [("plan_year", "2027", "DCs whose lease ends after the plan year stay open"),
         ("cases_per_pallet", "60", "standard pallet: 5 layers of 12 cases"),
         ("case_weight_lb", "28", "gross shipping weight of one case"),
         ("pallets_per_truckload", "26", "inbound full truckloads, floor-loaded pallets"),
         ("truckload_usd_per_mile", "2.45", "inbound truckload rate per loaded mile"),
         ("dc_operating_weeks", "50", "DCs close two weeks a year (plant shutdown, inventory count)"),
         ("circuity", "1.17", "road miles per great-circle mile"),
         ("next_day_max_miles", "350", "road miles, next-day accounts"),
         ("two_day_max_miles", "800", "road miles, two-day accounts")]


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    path.write_text(buf.getvalue())


def make(seed: int, out: Path) -> None:
    rng = random.Random(seed)
    inp = out / "inputs"
    inp.mkdir(parents=True, exist_ok=True)
    dc_rows = []
    for dc_id, city, lat, lon, status, lease in DCS:
        fixed = rng.randrange(1_600_000, 3_600_000, 5_000) + (900_000 if dc_id == "DC-MEM" else 0)
        dc_rows.append([dc_id, city, lat, lon, status, lease, fixed, f"{rng.uniform(0.38, 0.62):.2f}",
                        rng.randrange(260, 620, 10)])
    write_csv(inp / "dcs.csv", ["dc_id", "location", "lat", "lon", "status", "lease_end_year", "annual_fixed_usd",
                                "handling_usd_per_case", "capacity_pallets_per_week"], dc_rows)
    pl_rows = [[p, city, lat, lon, cap, cost] for (p, city, lat, lon), cap, cost in
               zip(PLANTS, [2_300_000, 3_900_000, 3_400_000], ["11.40", "10.55", "11.95"], strict=True)]
    write_csv(inp / "plants.csv", ["plant_id", "location", "lat", "lon", "capacity_cases_per_year",
                                   "production_usd_per_case"], pl_rows)
    write_csv(inp / "ltl_rates.csv", ["min_miles", "max_miles", "usd_per_cwt"], [list(b) for b in LTL])
    write_csv(inp / "network_terms.csv", ["parameter", "value", "note"], [list(t) for t in TERMS])
    cust, k = [], 0
    circ = float(dict((t[0], t[1]) for t in TERMS)["circuity"])
    for name, lat, lon in METROS:
        for _ in range(3):
            k += 1
            while True:
                la, lo = round(lat + rng.uniform(-0.45, 0.45), 4), round(lon + rng.uniform(-0.45, 0.45), 4)
                miles = [netmodel.road_miles(la, lo, d[2], d[3], circ) for d in DCS]
                edges = [b[0] for b in LTL[1:]]
                if (all(min(abs(m - 350), abs(m - 800)) > 3 and min(abs(m - e) for e in edges) > 0.5 for m in miles)
                        and min(miles) < 800):
                    break
            tier = "next_day" if min(miles) < 300 and rng.random() < 0.35 else "two_day"
            cases = int(rng.lognormvariate(11.2, 0.55))
            uom, qty = ("PL", round(cases / 60)) if rng.random() < 0.09 else ("CS", cases)
            cust.append([f"C{k:03d}", f"{name} zone {k:03d}", la, lo, tier, qty, uom])
    write_csv(inp / "customers.csv", ["customer_id", "ship_to", "lat", "lon", "service_tier", "annual_demand", "uom"],
              cust)


def check_traps(out: Path) -> bool:
    data = netmodel.read(out / "inputs")
    true = netmodel.tables(data)
    best = netmodel.solve(true)
    ok = True
    for name, kw in [("52 weeks", {"weeks": 52}), ("lease", {"ignore_lease": True}),
                     ("per-case LTL", {"per_case_ltl": True})]:
        plan = netmodel.solve(netmodel.tables(data, **kw))
        c = netmodel.cost(true, plan)["total"]
        load = {j: sum(true["dem"][i] for i, jj in plan["assign"].items() if jj == j) for j in plan["open"]}
        over = [j for j in plan["open"] if load[j] > true["cap"][j]]
        closed_lease = [j for j in true["must"] if j not in plan["open"]]
        print(f"  {name}: cost x{c / best['objective']:.4f}, over capacity {over}, lease broken {closed_lease}")
        if name == "52 weeks":
            ok &= bool(over)
        elif name == "lease":
            ok &= bool(closed_lease)
        else:
            ok &= c > 1.003 * best["objective"]
    return ok


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--search", type=int, default=0, help="try this many seeds from SEED and report")
    args = parser.parse_args()
    out = args.out
    if args.search:
        for seed in range(SEED, SEED + args.search):
            make(seed, out)
            print(seed)
            if check_traps(out):
                print("all traps bite:", seed)
                return
        return
    make(SEED, out)
    data = netmodel.read(out / "inputs")
    true = netmodel.tables(data)
    best = netmodel.solve(true)
    parts = netmodel.cost(true, best)
    ref = out / "reference"
    ref.mkdir(parents=True, exist_ok=True)
    expected = {"canary": CANARY, "optimal_total_usd": round(best["objective"], 2),
                "optimal_parts_usd": {k: round(v, 2) for k, v in parts.items()},
                "total_demand_cases": sum(true["dem"].values())}
    (ref / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


if __name__ == "__main__":
    main()
