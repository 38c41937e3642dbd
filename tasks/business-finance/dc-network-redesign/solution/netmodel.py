"""The network model shared by generate.py and the oracle: read the inputs, build the
per-case cost tables, and solve the single-sourcing facility-location MILP with OR-Tools
CP-SAT to proven optimality. Options reproduce professional mistakes (fixtures only)."""

import csv
import math
from pathlib import Path

from ortools.sat.python import cp_model

SCALE = 10_000  # objective in 1/100 cent


def read(inputs: Path) -> dict:
    def rows(name):
        with open(inputs / name, newline="") as fh:
            return list(csv.DictReader(fh))
    terms = {r["parameter"]: float(r["value"]) for r in rows("network_terms.csv")}
    return {"customers": rows("customers.csv"), "dcs": rows("dcs.csv"), "plants": rows("plants.csv"),
            "ltl": rows("ltl_rates.csv"), "terms": terms}


def road_miles(lat1, lon1, lat2, lon2, circuity):
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 3958.8 * math.asin(math.sqrt(a)) * circuity


def tables(data: dict, *, ignore_uom=False, weeks=None, per_case_ltl=False, ignore_lease=False,
           no_production=False) -> dict:
    t = data["terms"]
    cpp = t["cases_per_pallet"]
    wk = t["dc_operating_weeks"] if weeks is None else weeks
    cust = [c["customer_id"] for c in data["customers"]]
    dem = {c["customer_id"]: round(float(c["annual_demand"]) * (cpp if c["uom"] == "PL" and not ignore_uom else 1))
           for c in data["customers"]}
    dcs = [d["dc_id"] for d in data["dcs"]]
    plants = [p["plant_id"] for p in data["plants"]]
    D = {d["dc_id"]: d for d in data["dcs"]}
    P = {p["plant_id"]: p for p in data["plants"]}
    C = {c["customer_id"]: c for c in data["customers"]}
    limit = {"next_day": t["next_day_max_miles"], "two_day": t["two_day_max_miles"]}
    bands = sorted((float(b["min_miles"]), float(b["max_miles"]), float(b["usd_per_cwt"])) for b in data["ltl"])
    cwt = 1.0 if per_case_ltl else t["case_weight_lb"] / 100.0
    out, ok, miles = {}, {}, {}
    for i in cust:
        for j in dcs:
            m = road_miles(float(C[i]["lat"]), float(C[i]["lon"]), float(D[j]["lat"]), float(D[j]["lon"]), t["circuity"])
            miles[i, j] = m
            rate = next(r for lo, hi, r in bands if lo <= m < hi)
            out[i, j] = rate * cwt
            ok[i, j] = m <= limit[C[i]["service_tier"]]
    inb = {}
    per_truck = t["pallets_per_truckload"] * cpp
    for p in plants:
        for j in dcs:
            m = road_miles(float(P[p]["lat"]), float(P[p]["lon"]), float(D[j]["lat"]), float(D[j]["lon"]), t["circuity"])
            inb[p, j] = t["truckload_usd_per_mile"] * m / per_truck
    must = [j for j in dcs if D[j]["status"] == "existing" and not ignore_lease
            and int(D[j]["lease_end_year"]) > int(t["plan_year"])]
    return {"cust": cust, "dcs": dcs, "plants": plants, "dem": dem, "out": out, "ok": ok, "inb": inb, "miles": miles,
            "fixed": {j: float(D[j]["annual_fixed_usd"]) for j in dcs},
            "handling": {j: float(D[j]["handling_usd_per_case"]) for j in dcs},
            "prod": {p: 0.0 if no_production else float(P[p]["production_usd_per_case"]) for p in plants},
            "cap": {j: float(D[j]["capacity_pallets_per_week"]) * cpp * wk for j in dcs},
            "pcap": {p: float(P[p]["capacity_cases_per_year"]) for p in plants}, "must": must}


def solve(tb: dict, time_limit: float = 120.0, gap: float = 0.0) -> dict:
    m = cp_model.CpModel()
    y = {j: m.new_bool_var(f"y_{j}") for j in tb["dcs"]}
    x = {(i, j): m.new_bool_var(f"x_{i}_{j}") for i in tb["cust"] for j in tb["dcs"] if tb["ok"][i, j]}
    f = {(p, j): m.new_int_var(0, int(tb["pcap"][p]), f"f_{p}_{j}") for p in tb["plants"] for j in tb["dcs"]}
    for i in tb["cust"]:
        m.add_exactly_one(x[i, j] for j in tb["dcs"] if (i, j) in x)
    for j in tb["dcs"]:
        load = sum(tb["dem"][i] * x[i, j] for i in tb["cust"] if (i, j) in x)
        m.add(load <= int(tb["cap"][j]) * y[j])
        m.add(sum(f[p, j] for p in tb["plants"]) == load)
        for i in tb["cust"]:
            if (i, j) in x:
                m.add_implication(x[i, j], y[j])
    for p in tb["plants"]:
        m.add(sum(f[p, j] for j in tb["dcs"]) <= int(tb["pcap"][p]))
    for j in tb["must"]:
        m.add(y[j] == 1)
    obj = [round(SCALE * tb["fixed"][j]) * y[j] for j in tb["dcs"]]
    obj += [round(SCALE * tb["dem"][i] * (tb["out"][i, j] + tb["handling"][j])) * v for (i, j), v in x.items()]
    obj += [round(SCALE * (tb["inb"][p, j] + tb["prod"][p])) * v for (p, j), v in f.items()]
    m.minimize(sum(obj))
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = 1
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.relative_gap_limit = gap
    status = s.solve(m)
    if status != cp_model.OPTIMAL:
        raise SystemExit(f"CP-SAT did not prove optimality: {s.status_name(status)}")
    return {"open": [j for j in tb["dcs"] if s.value(y[j])],
            "assign": {i: j for (i, j), v in x.items() if s.value(v)},
            "flows": {(p, j): s.value(v) for (p, j), v in f.items() if s.value(v)},
            "objective": s.objective_value / SCALE, "wall": s.wall_time}


def cost(tb: dict, plan: dict) -> dict:
    """Cost of a plan (open DCs, assignments, plant flows) under the tables tb."""
    parts = {
        "dc_fixed": sum(tb["fixed"][j] for j in plan["open"]),
        "dc_handling": sum(tb["dem"][i] * tb["handling"][j] for i, j in plan["assign"].items()),
        "outbound_freight": sum(tb["dem"][i] * tb["out"][i, j] for i, j in plan["assign"].items()),
        "inbound_freight": sum(v * tb["inb"][p, j] for (p, j), v in plan["flows"].items()),
        "production": sum(v * tb["prod"][p] for (p, j), v in plan["flows"].items()),
    }
    parts["total"] = sum(parts.values())
    return parts
