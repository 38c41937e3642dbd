"""Heterogeneous-fleet CVRPTW with OR-Tools routing: model, solve, schedule, cost."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from ortools.constraint_solver import pywrapcp, routing_enums_pb2

TIME_SCALE = 10  # solver time unit = 0.1 min, exact for the matrix (one decimal) and service
MONEY_SCALE = 1000  # solver money unit = 0.001 EUR


def load_instance(folder: Path) -> dict:
    folder = Path(folder)
    with open(folder / "customers.csv") as f:
        customers = list(csv.DictReader(f))
    with open(folder / "vehicles.csv") as f:
        vehicles = list(csv.DictReader(f))
    depot = json.loads((folder / "depot.json").read_text())
    ids = [depot["depot_id"]] + [c["customer_id"] for c in customers]
    pos = {x: i for i, x in enumerate(ids)}
    n = len(ids)
    km = [[0.0] * n for _ in range(n)]
    minutes = [[0.0] * n for _ in range(n)]
    with open(folder / "road_matrix.csv") as f:
        for row in csv.DictReader(f):
            i, j = pos[row["from_id"]], pos[row["to_id"]]
            km[i][j] = float(row["km"])
            minutes[i][j] = float(row["minutes"])
    return {"ids": ids, "customers": customers, "vehicles": vehicles, "depot": depot, "km": km,
            "minutes": minutes}


def solve(inst: dict, *, solution_limit: int | None, time_limit_s: float | None,
          ignore_service: bool = False, ignore_access: bool = False,
          latest_departure_post: bool = True) -> list[dict]:
    """Routes as [{vehicle_id, nodes (customer ids), depart_min}] for used vehicles only."""
    ids, customers, vehicles = inst["ids"], inst["customers"], inst["vehicles"]
    n, nv = len(ids), len(vehicles)
    tmin = [[round(m * TIME_SCALE) for m in row] for row in inst["minutes"]]
    service = [0] + [0 if ignore_service else int(c["service_min"]) * TIME_SCALE for c in customers]
    manager = pywrapcp.RoutingIndexManager(n, nv, 0)
    routing = pywrapcp.RoutingModel(manager)

    # Matrices and vectors are evaluated in C++: the same values as Python callbacks, so the same
    # search, several times faster.
    arc_cost_cache = {}
    for v, veh in enumerate(vehicles):
        rate = float(veh["cost_per_km_eur"])
        if rate not in arc_cost_cache:
            costs = [[round(inst["km"][i][j] * rate * MONEY_SCALE) for j in range(n)] for i in range(n)]
            arc_cost_cache[rate] = routing.RegisterTransitMatrix(costs)
        routing.SetArcCostEvaluatorOfVehicle(arc_cost_cache[rate], v)
        routing.SetFixedCostOfVehicle(round(float(veh["fixed_cost_eur"]) * MONEY_SCALE), v)

    t_cb = routing.RegisterTransitMatrix([[tmin[i][j] + service[i] for j in range(n)] for i in range(n)])
    open_, close = inst["depot"]["open_min"] * TIME_SCALE, inst["depot"]["close_min"] * TIME_SCALE
    routing.AddDimension(t_cb, 24 * 60 * TIME_SCALE, close, False, "Time")
    time_dim = routing.GetDimensionOrDie("Time")
    for k, c in enumerate(customers, start=1):
        time_dim.CumulVar(manager.NodeToIndex(k)).SetRange(
            int(c["tw_open_min"]) * TIME_SCALE, int(c["tw_close_min"]) * TIME_SCALE
        )
    for v, veh in enumerate(vehicles):
        time_dim.CumulVar(routing.Start(v)).SetRange(open_, close)
        time_dim.CumulVar(routing.End(v)).SetRange(open_, close)
        # EUR/h -> milli-EUR per 0.1 min
        time_dim.SetSpanCostCoefficientForVehicle(
            round(float(veh["cost_per_hour_eur"]) * MONEY_SCALE / (60 * TIME_SCALE)), v
        )
        time_dim.SetSpanUpperBoundForVehicle(int(veh["max_shift_min"]) * TIME_SCALE, v)
        routing.AddVariableMaximizedByFinalizer(time_dim.CumulVar(routing.Start(v)))
        routing.AddVariableMinimizedByFinalizer(time_dim.CumulVar(routing.End(v)))

    for field, cap in (("demand_kg", "capacity_kg"), ("demand_pallets", "capacity_pallets")):
        dem = [0] + [int(c[field]) for c in customers]
        cb = routing.RegisterUnaryTransitVector(dem)
        routing.AddDimensionWithVehicleCapacity(cb, 0, [int(v[cap]) for v in vehicles], True, field)

    if not ignore_access:
        banned = [v for v, veh in enumerate(vehicles) if veh["old_town_access"] != "1"]
        for k, c in enumerate(customers, start=1):
            if c["old_town"] == "1":
                routing.VehicleVar(manager.NodeToIndex(k)).RemoveValues(banned)

    params = pywrapcp.DefaultRoutingSearchParameters()
    params.first_solution_strategy = routing_enums_pb2.FirstSolutionStrategy.PARALLEL_CHEAPEST_INSERTION
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    # the insertion LNS sub-searches stop at lns_time_limit; made unreachable so that a run
    # bounded by solution_limit gives the same plan on a slow or loaded machine
    params.lns_time_limit.FromSeconds(600)
    if solution_limit is not None:
        params.solution_limit = solution_limit
    if time_limit_s is not None:
        params.time_limit.FromMilliseconds(int(time_limit_s * 1000))
    solution = routing.SolveWithParameters(params)
    if solution is None:
        raise RuntimeError("no feasible plan found")

    plan = []
    for v, veh in enumerate(vehicles):
        idx = routing.Start(v)
        solver_start = solution.Value(time_dim.CumulVar(idx)) / TIME_SCALE
        nodes = []
        idx = solution.Value(routing.NextVar(idx))
        while not routing.IsEnd(idx):
            nodes.append(ids[manager.IndexToNode(idx)])
            idx = solution.Value(routing.NextVar(idx))
        if nodes:
            depart = solver_start if not latest_departure_post else None
            plan.append(route_of(inst, veh["vehicle_id"], nodes, depart))
    return plan


def route_of(inst: dict, vehicle_id: str, nodes: list[str], depart_min: float | None = None) -> dict:
    """A route; without `depart_min`, leaving at the latest departure (on the 0.1 min grid)."""
    if depart_min is None:
        depart_min = math.floor(latest_departure(inst, nodes) * TIME_SCALE + 1e-6) / TIME_SCALE
    return {"vehicle_id": vehicle_id, "nodes": nodes, "depart_min": depart_min}


def plan_problems(inst: dict, plan: list[dict]) -> list[str]:
    """Every rule of the instruction a plan breaks (empty for a feasible plan)."""
    eps = 1e-6
    cust = {c["customer_id"]: c for c in inst["customers"]}
    veh = {v["vehicle_id"]: v for v in inst["vehicles"]}
    depot = inst["depot"]
    visits = [c for r in plan for c in r["nodes"]]
    problems = [f"customer {c} served {visits.count(c)} times" for c in sorted(cust) if visits.count(c) != 1]
    problems += [f"unknown customer {c}" for c in sorted(set(visits) - set(cust))]
    used = [r["vehicle_id"] for r in plan]
    problems += [f"vehicle {v} unknown or used twice" for v in sorted(set(used))
                 if v not in veh or used.count(v) > 1]
    if problems:
        return problems
    for r in plan:
        v, stops = veh[r["vehicle_id"]], schedule(inst, r)
        for field, cap in (("demand_kg", "capacity_kg"), ("demand_pallets", "capacity_pallets")):
            if sum(int(cust[c][field]) for c in r["nodes"]) > int(v[cap]):
                problems.append(f"{r['vehicle_id']}: {field} over {cap}")
        if v["old_town_access"] != "1" and any(cust[c]["old_town"] == "1" for c in r["nodes"]):
            problems.append(f"{r['vehicle_id']}: old-town customer without access")
        late = [s["location_id"] for s in stops[1:-1]
                if s["service_start_min"] > float(cust[s["location_id"]]["tw_close_min"]) + eps]
        problems += [f"{r['vehicle_id']}: service at {c} starts after its window" for c in late]
        depart, back = stops[0]["departure_min"], stops[-1]["arrival_min"]
        if depart < depot["open_min"] - eps or back > depot["close_min"] + eps \
                or back - depart > float(v["max_shift_min"]) + eps:
            problems.append(f"{r['vehicle_id']}: outside the depot hours or over its shift")
    return problems


def schedule(inst: dict, route: dict) -> list[dict]:
    """Stops with earliest service starts from the route's depot departure time."""
    pos = {x: i for i, x in enumerate(inst["ids"])}
    cust = {c["customer_id"]: c for c in inst["customers"]}
    t = route["depart_min"]
    prev = 0
    rows = [{"location_id": "DEPOT", "arrival_min": None, "service_start_min": None, "departure_min": t}]
    for cid in route["nodes"]:
        j = pos[cid]
        arrival = t + inst["minutes"][prev][j]
        start = max(arrival, float(cust[cid]["tw_open_min"]))
        t = start + float(cust[cid]["service_min"])
        rows.append({"location_id": cid, "arrival_min": arrival, "service_start_min": start, "departure_min": t})
        prev = j
    rows.append({"location_id": "DEPOT", "arrival_min": t + inst["minutes"][prev][0],
                 "service_start_min": None, "departure_min": None})
    return rows


def latest_departure(inst: dict, nodes: list[str]) -> float:
    """The latest depot departure that keeps every window and the depot closing time (backward
    pass). Paid time (return - departure) never grows when the departure moves later, so this
    departure gives the route its least paid time."""
    pos = {x: i for i, x in enumerate(inst["ids"])}
    cust = {c["customer_id"]: c for c in inst["customers"]}
    nxt, latest_next = 0, float(inst["depot"]["close_min"])  # the route ends at the depot
    for cid in reversed(nodes):
        k = pos[cid]
        latest_next = min(float(cust[cid]["tw_close_min"]),
                          latest_next - inst["minutes"][k][nxt] - float(cust[cid]["service_min"]))
        nxt = k
    return latest_next - inst["minutes"][0][nxt]


def plan_cost(inst: dict, plan: list[dict]) -> dict:
    veh = {v["vehicle_id"]: v for v in inst["vehicles"]}
    pos = {x: i for i, x in enumerate(inst["ids"])}
    out = {"fixed_cost_eur": 0.0, "distance_cost_eur": 0.0, "time_cost_eur": 0.0, "total_km": 0.0,
           "paid_hours": 0.0, "vehicles_used": 0}
    for route in plan:
        v = veh[route["vehicle_id"]]
        seq = [0] + [pos[c] for c in route["nodes"]] + [0]
        km = sum(inst["km"][a][b] for a, b in zip(seq, seq[1:], strict=False))
        rows = schedule(inst, route)
        hours = (rows[-1]["arrival_min"] - rows[0]["departure_min"]) / 60.0
        out["fixed_cost_eur"] += float(v["fixed_cost_eur"])
        out["distance_cost_eur"] += km * float(v["cost_per_km_eur"])
        out["time_cost_eur"] += hours * float(v["cost_per_hour_eur"])
        out["total_km"] += km
        out["paid_hours"] += hours
        out["vehicles_used"] += 1
    out["total_cost_eur"] = out["fixed_cost_eur"] + out["distance_cost_eur"] + out["time_cost_eur"]
    return out
