"""Grader for delivery-routing-vrptw.

The plan is rebuilt from routes.csv (vehicle, customer order, depot departure) and every rule is
re-checked against the input files; the cost is recomputed, never read from the agent.

Tolerances:
- schedule feasibility, 0.001 min: the matrix has one decimal and windows are integers, so an
  exact schedule meets them exactly; the slack only absorbs float summation.
- reported times vs the recomputed schedule, 0.05 min: one-decimal reporting is asked.
- KPIs vs the recomputed plan, relative 0.2 %: cents and one-decimal times in the agent's sums.
- cost <= 1.03 x reference for full credit: the reference is a deterministic OR-Tools guided
  local search run (2000 solutions, see generate.py; the best plan known, not a proven optimum);
  a careful model solved for a few minutes reaches it, and the common modelling errors land far
  above it (ignoring the paid driver time in the objective costs about 15 % more; ignoring fixed
  costs adds vehicles). <= 1.10 x reference earns partial credit for a correct but briefly
  searched model.

Cost is the crux: the two cost checks carry 20 of the 38 points, so a feasible plan with exact
KPIs but a cost above 1.10 x the reference (a greedy insertion heuristic lands at 1.28-1.41 x)
scores at most 18/38 = 0.47.
"""

import csv
import json
import math

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    match_rows,
)

ROUTE_COLUMNS = ["vehicle_id", "stop_seq", "location_id", "arrival_min", "service_start_min", "departure_min"]
EPS = 1e-3
REPORT_TOL = 0.05
KPI_REL = 2e-3


def _instance(folder):
    with open(folder / "customers.csv") as f:
        customers = {r["customer_id"]: r for r in csv.DictReader(f)}
    with open(folder / "vehicles.csv") as f:
        vehicles = {r["vehicle_id"]: r for r in csv.DictReader(f)}
    km, minutes = {}, {}
    with open(folder / "road_matrix.csv") as f:
        for r in csv.DictReader(f):
            km[(r["from_id"], r["to_id"])] = float(r["km"])
            minutes[(r["from_id"], r["to_id"])] = float(r["minutes"])
    depot = json.loads((folder / "depot.json").read_text())
    return customers, vehicles, km, minutes, depot


def _routes(rows):
    """vehicle -> list of rows sorted by stop_seq; structural problems as strings."""
    by_vehicle, problems = {}, []
    for row in rows:
        seq = as_number(row.get("stop_seq"))
        if seq is None or seq != int(seq):
            problems.append(f"bad stop_seq {row.get('stop_seq')!r} for {row.get('vehicle_id')!r}")
            continue
        by_vehicle.setdefault(row.get("vehicle_id", ""), []).append((int(seq), row))
    routes = {}
    for vid in sorted(by_vehicle):
        stops = sorted(by_vehicle[vid], key=lambda x: x[0])
        seqs = [s for s, _ in stops]
        if seqs != list(range(len(stops))):
            problems.append(f"{vid}: stop_seq not 0..n without gaps or repeats")
        routes[vid] = [row for _, row in stops]
    return routes, problems


def _simulate(route_rows, customers, minutes, depot_id):
    """Earliest-start schedule from the reported depot departure; None if unusable."""
    depart = as_number(route_rows[0].get("departure_min"))
    if depart is None:
        return None
    t, prev, stops = depart, depot_id, []
    for row in route_rows[1:-1]:
        cid = row.get("location_id")
        if cid not in customers or (prev, cid) not in minutes:
            return None
        arrival = t + minutes[(prev, cid)]
        start = max(arrival, float(customers[cid]["tw_open_min"]))
        t = start + float(customers[cid]["service_min"])
        stops.append({"id": cid, "arrival": arrival, "start": start, "departure": t})
        prev = cid
    if (prev, depot_id) not in minutes:
        return None
    return {"depart": depart, "stops": stops, "return": t + minutes[(prev, depot_id)]}


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    customers, vehicles, km, minutes, depot = _instance(ctx.inputs)
    depot_id = depot["depot_id"]

    rows, ok = load_csv(ctx.out("routes.csv"), required_columns=ROUTE_COLUMNS)
    r.gate("routes.csv has the required columns", ok)
    routes, problems = _routes(rows or [])

    # structure: known vehicles, depot at both ends, at least one customer
    for vid, rr in routes.items():
        if vid not in vehicles:
            problems.append(f"unknown vehicle {vid!r}")
        elif len(rr) < 3 or rr[0].get("location_id") != depot_id or rr[-1].get("location_id") != depot_id:
            problems.append(f"{vid}: route must start and end at {depot_id} with customers between")
    valid = {vid: rr for vid, rr in routes.items() if vid in vehicles and len(rr) >= 3}
    r.check(
        "routes are well formed: known vehicles, one route each, depot at both ends",
        1,
        Outcome(bool(rows) and not problems, f"{len(problems)} problems" if problems else f"{len(routes)} routes",
                expected="no structural problems", seen=problems[:6] or None),
    )

    visits = [row.get("location_id") for rr in valid.values() for row in rr[1:-1]]
    unknown = sorted({v for v in visits if v not in customers})
    dup = sorted({v for v in visits if visits.count(v) > 1})
    missing = sorted(set(customers) - set(visits))
    served_ok = bool(valid) and not unknown and not dup and not missing
    r.check(
        "every customer served exactly once",
        3,
        Outcome(served_ok, f"{len(set(visits) & set(customers))} of {len(customers)} served",
                expected=len(customers), seen={"missing": missing[:10], "duplicated": dup[:10], "unknown": unknown[:10]}),
    )

    cap_bad, access_bad, tw_bad, shift_bad = [], [], [], []
    plan = {}
    # reported times against the recomputed schedule, keyed (vehicle, position in the route)
    reported, stop_times, return_times = {}, {}, {}
    for vid, rr in valid.items():
        v = vehicles[vid]
        custs = [row.get("location_id") for row in rr[1:-1] if row.get("location_id") in customers]
        kg = sum(int(customers[c]["demand_kg"]) for c in custs)
        pal = sum(int(customers[c]["demand_pallets"]) for c in custs)
        if kg > int(v["capacity_kg"]) or pal > int(v["capacity_pallets"]):
            cap_bad.append({"vehicle": vid, "kg": kg, "pallets": pal})
        for c in custs:
            if customers[c]["old_town"] == "1" and v["old_town_access"] != "1":
                access_bad.append({"vehicle": vid, "customer": c})
        sim = _simulate(rr, customers, minutes, depot_id)
        if sim is None:
            tw_bad.append({"vehicle": vid, "problem": "no usable departure time or unknown location"})
            continue
        plan[vid] = (sim, custs)
        for s in sim["stops"]:
            if s["start"] > float(customers[s["id"]]["tw_close_min"]) + EPS:
                tw_bad.append({"vehicle": vid, "customer": s["id"], "start": round(s["start"], 2),
                               "close": float(customers[s["id"]]["tw_close_min"])})
        duration = sim["return"] - sim["depart"]
        if (sim["depart"] < depot["open_min"] - EPS or sim["return"] > depot["close_min"] + EPS
                or duration > float(v["max_shift_min"]) + EPS):
            shift_bad.append({"vehicle": vid, "depart": sim["depart"], "return": round(sim["return"], 2),
                              "max_shift": float(v["max_shift_min"])})
        reported.update({(vid, i): row for i, row in enumerate(rr)})
        return_times[(vid, len(rr) - 1)] = {"arrival_min": sim["return"]}
        for i, s in enumerate(sim["stops"], start=1):
            stop_times[(vid, i)] = {"arrival_min": s["arrival"], "service_start_min": s["start"],
                                    "departure_min": s["departure"]}

    nonempty = bool(valid)
    r.check("weight and pallet capacities respected", 2,
            Outcome(nonempty and not cap_bad, f"{len(cap_bad)} overloaded routes", "none", cap_bad[:5] or None))
    r.check("service starts within every customer's time window (recomputed schedule)", 3,
            Outcome(nonempty and not tw_bad, f"{len(tw_bad)} violations", "none", tw_bad[:5] or None))
    r.check("depot opening hours and maximum shift length respected", 2,
            Outcome(nonempty and not shift_bad, f"{len(shift_bad)} violations", "none", shift_bad[:5] or None))
    r.check("old-town customers served only by vehicles with access", 2,
            Outcome(nonempty and not access_bad, f"{len(access_bad)} violations", "none", access_bad[:5] or None))
    r.check("reported arrival, service start and departure times match the schedule", 1, all_of([
        ("routes to check", nonempty),
        ("customer stops", match_rows(reported, stop_times, ["arrival_min", "service_start_min", "departure_min"],
                                      abs=REPORT_TOL)),
        ("return to the depot", match_rows(reported, return_times, "arrival_min", abs=REPORT_TOL)),
    ]))

    # recomputed KPIs of the plan as delivered
    k = {"fixed_cost_eur": 0.0, "distance_cost_eur": 0.0, "driver_cost_eur": 0.0, "total_km": 0.0,
         "paid_driver_hours": 0.0, "total_waiting_min": 0.0, "kg": 0.0, "cap": 0.0}
    by_type = {"van": 0, "medium": 0, "rigid": 0}
    for vid, (sim, custs) in plan.items():
        v = vehicles[vid]
        legs = [depot_id, *custs, depot_id]
        dist = sum(km.get((a, b), math.inf) for a, b in zip(legs, legs[1:], strict=False))
        hours = (sim["return"] - sim["depart"]) / 60.0
        k["fixed_cost_eur"] += float(v["fixed_cost_eur"])
        k["distance_cost_eur"] += dist * float(v["cost_per_km_eur"])
        k["driver_cost_eur"] += hours * float(v["cost_per_hour_eur"])
        k["total_km"] += dist
        k["paid_driver_hours"] += hours
        k["total_waiting_min"] += sum(s["start"] - s["arrival"] for s in sim["stops"])
        k["kg"] += sum(float(customers[c]["demand_kg"]) for c in custs)
        k["cap"] += float(v["capacity_kg"])
        by_type[v["type"]] = by_type.get(v["type"], 0) + 1
    total = k["fixed_cost_eur"] + k["distance_cost_eur"] + k["driver_cost_eur"]

    feasible = served_ok and not problems and not (cap_bad or tw_bad or shift_bad or access_bad)
    ratio = total / ref["reference_total_cost_eur"] if feasible else None
    shown = {"plan_cost_eur": round(total, 2), "reference_eur": ref["reference_total_cost_eur"],
             "ratio": None if ratio is None else round(ratio, 4), "feasible": feasible}
    r.check("feasible plan with total cost <= 1.10 x reference", 8,
            Outcome(feasible and ratio <= 1.10, "cost ratio" if feasible else "plan infeasible: no cost credit",
                    "<= 1.10", shown))
    r.check("feasible plan with total cost <= 1.03 x reference", 12,
            Outcome(feasible and ratio <= 1.03, "cost ratio" if feasible else "plan infeasible: no cost credit",
                    "<= 1.03", shown))

    kpis, kok = load_json(ctx.out("kpis.json"))
    seen_kpis = {"kpis.json": kpis} if isinstance(kpis, dict) else {}
    want_cost = {"total_cost_eur": total, **{f: k[f] for f in ["fixed_cost_eur", "distance_cost_eur", "driver_cost_eur"]}}
    r.check("KPI costs agree with the recomputed plan", 2, all_of([
        ("kpis.json", kok), ("plan to price", bool(plan)),
        ("costs", match_rows(seen_kpis, {"kpis.json": want_cost}, list(want_cost), rel=KPI_REL, abs=0.01)),
    ]))
    other = {
        "total_km": k["total_km"], "paid_driver_hours": k["paid_driver_hours"],
        "total_waiting_min": k["total_waiting_min"],
        "kg_utilisation_pct": 100.0 * k["kg"] / k["cap"] if k["cap"] else math.nan,
    }
    counts = {"vehicles_used": len(plan), "customers_served": len(set(visits) & set(customers))}
    seen_types = get(kpis, "vehicles_by_type", {})
    seen_types = {"vehicles_by_type": seen_types} if isinstance(seen_types, dict) else {}
    r.check("KPI km, hours, waiting, utilisation and counts agree with the plan", 2, all_of([
        ("kpis.json", kok), ("plan to measure", bool(plan)),
        ("km, hours, waiting, utilisation", match_rows(seen_kpis, {"kpis.json": other}, list(other),
                                                       rel=KPI_REL, abs=0.01)),
        ("counts", match_rows(seen_kpis, {"kpis.json": counts}, list(counts), exact=True)),
        ("vehicles_by_type", match_rows(seen_types, {"vehicles_by_type": by_type}, list(by_type), exact=True)),
    ]))
    return r
