"""Seeded generator of inputs/ and reference/ for case118-n1-redispatch: python3 generate.py --out DIR.

inputs/study_loads.csv       summer-peak load forecast per load of case118
inputs/generators.csv        unit statuses, limits, costs, day-ahead schedule, participation factors
inputs/branch_ratings.csv    normal (rate A) and emergency (rate B) ratings in MVA
inputs/contingencies.csv     the N-1 list of the planning criteria (incl. common-tower pairs)
reference/screening.json     the screening of the day-ahead schedule (study_model, pandapower)
reference/expected.json      canary, schedule cost, and the reference preventive redispatch: the
                             fixed point of the convex linearised N-1 SCOPF (scopf.py, LPs solved
                             exactly by HiGHS), verified N-1 secure in the AC model

The SCOPF iteration screens every contingency in AC several times (minutes on a loaded machine),
so its result is shipped in solution/reference_redispatch.csv: this script screens that dispatch
in full and stops unless it is N-1 secure with the slack unit within its limits.
`python3 generate.py --search` reruns the SCOPF from the schedule and rewrites that file (under
--out).
"""

import argparse
import csv
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "solution"))

import numpy as np  # noqa: E402
import study_model as sm  # noqa: E402

SEED = 118
CANARY = "01262d1f-6461-4788-b217-35e1db1ae4a7"
AREA_GROWTH = {"west": 1.13, "central": 1.05, "east": 1.09}
# Standard thermal ratings (MVA) by voltage class; rate B = rate A x the class's emergency factor.
MENU = {138.0: [110, 143, 175, 200, 239, 287, 335, 400, 478, 574],
        161.0: [130, 167, 205, 239, 287, 335, 400, 478, 574],
        345.0: [478, 574, 717, 797, 956, 1195, 1434, 1793]}
TRAFO_MENU = [150, 200, 250, 300, 400, 500, 600, 750, 900, 1100]
EMERGENCY = {"line": 1.15, "trafo": 1.25}
PEAKERS = (1, 40, 104, 113)
OUTAGE_UNIT = "G26"
REFERENCE_REDISPATCH = Path("solution") / "reference_redispatch.csv"  # unit_id, p_mw


def area(bus: int) -> str:
    if bus <= 32 or bus in (113, 114, 115, 117):
        return "west"
    return "central" if bus <= 68 or bus == 116 else "east"


def write_csv(path: Path, cols: list[str], rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r[c] for c in cols})


def make_loads(net, rng: random.Random) -> list[dict]:
    rows = []
    for i in sorted(net.load.index):
        bus = int(net.load.at[i, "bus"]) + 1
        f = AREA_GROWTH[area(bus)] * rng.uniform(0.95, 1.05)
        rows.append({"load_index": i, "bus": bus, "area": area(bus),
                     "p_mw": f"{net.load.at[i, 'p_mw'] * f:.1f}", "q_mvar": f"{net.load.at[i, 'q_mvar'] * f:.1f}"})
    return rows


def make_units(net, rng: random.Random) -> list[dict]:
    units = []
    for i in sorted(net.gen.index):
        bus = int(net.gen.at[i, "bus"]) + 1
        units.append({"unit_id": f"G{bus}", "element": "gen", "element_index": i, "bus": bus,
                      "case_pmax": float(net.gen.at[i, "max_p_mw"])})
    eg = net.ext_grid.index[0]
    units.append({"unit_id": f"G{int(net.ext_grid.at[eg, 'bus']) + 1}", "element": "ext_grid",
                  "element_index": int(eg), "bus": int(net.ext_grid.at[eg, "bus"]) + 1, "case_pmax": 805.2})
    for u in units:
        pmax = u["case_pmax"]
        if u["bus"] in PEAKERS:
            tech, pmax = "peaker", float(rng.choice([60, 80, 100]))
        elif pmax < 100.5:
            tech, pmax = "condenser", 0.0
        elif pmax >= 540 and u["element"] == "gen":
            tech = "nuclear"
        elif pmax >= 300:
            tech = "coal"
        else:
            tech = "ccgt"
        # Fossil units derated 3 % for summer ambient temperature.
        pmax = 0.0 if tech == "condenser" else round(pmax * (0.97 if tech in ("coal", "ccgt") else 1.0))
        c2 = 0.0
        if tech == "nuclear":
            c1, c2, pmin, alpha = rng.uniform(7, 10), rng.uniform(0.0008, 0.0015), 0.7 * pmax, 0.0
        elif tech == "coal":
            c1, c2, pmin, alpha = rng.uniform(21, 29), rng.uniform(0.004, 0.010), 0.4 * pmax, pmax * rng.uniform(0.9, 1.1)
        elif tech == "ccgt":
            c1, c2, pmin, alpha = rng.uniform(36, 50), rng.uniform(0.010, 0.030), 0.35 * pmax, pmax * rng.uniform(0.9, 1.1)
        elif tech == "peaker":
            c1, pmin, alpha = rng.uniform(110, 140), 0.0, 0.0
        else:
            c1, pmin, alpha = 0.0, 0.0, 0.0
        u.update(technology=tech, p_max_mw=float(pmax), p_min_mw=float(round(pmin)), c1=c1, c2=c2,
                 c0=0.0 if tech == "condenser" else round(pmax * rng.uniform(2, 4), 0),
                 participation_factor=round(alpha / 100, 2),
                 status="planned_outage" if u["unit_id"] == OUTAGE_UNIT else "in_service")
    return units


def economic_schedule(units: list[dict], demand: float) -> dict[str, float]:
    """Merit order at equal incremental cost (network ignored): the day-ahead market result."""
    live = [u for u in units if u["status"] == "in_service" and u["p_max_mw"] > 0]

    def output(u: dict, lam: float) -> float:
        p = u["p_max_mw"] if lam > u["c1"] else u["p_min_mw"]
        if u["c2"] > 0:
            p = (lam - u["c1"]) / (2 * u["c2"])
        return min(max(p, u["p_min_mw"]), u["p_max_mw"])

    lo, hi = 0.0, 500.0
    for _ in range(200):
        lam = (lo + hi) / 2
        if sum(output(u, lam) for u in live) > demand:
            hi = lam
        else:
            lo = lam
    return {u["unit_id"]: output(u, lam) for u in live}


def unit_rows(units: list[dict], sched: dict[str, float]) -> list[dict]:
    rows = []
    for u in units:
        rows.append({
            "unit_id": u["unit_id"], "element": u["element"], "element_index": u["element_index"],
            "bus": u["bus"], "technology": u["technology"], "status": u["status"],
            "p_min_mw": f"{u['p_min_mw']:.1f}", "p_max_mw": f"{u['p_max_mw']:.1f}",
            "scheduled_p_mw": f"{sched.get(u['unit_id'], 0.0):.1f}",
            "cost_c0_eur_per_h": f"{u['c0']:.1f}", "cost_c1_eur_per_mwh": f"{u['c1']:.3f}",
            "cost_c2_eur_per_mw2h": f"{u['c2']:.5f}", "participation_factor": f"{u['participation_factor']:.2f}",
        })
    return rows


def branch_list(net) -> list[dict]:
    rows = []
    seen: dict[tuple[int, int], int] = {}
    for i in sorted(net.line.index):
        fb, tb = int(net.line.at[i, "from_bus"]) + 1, int(net.line.at[i, "to_bus"]) + 1
        seen[(fb, tb)] = seen.get((fb, tb), 0) + 1
        rows.append({"branch_id": f"L{i}", "element": "line", "element_index": i, "from_bus": fb, "to_bus": tb,
                     "circuit": seen[(fb, tb)], "kv": float(net.bus.at[fb - 1, "vn_kv"])})
    for i in sorted(net.trafo.index):
        hb, lb = int(net.trafo.at[i, "hv_bus"]) + 1, int(net.trafo.at[i, "lv_bus"]) + 1
        rows.append({"branch_id": f"T{i}", "element": "trafo", "element_index": i, "from_bus": hb, "to_bus": lb,
                     "circuit": 1, "kv": None})
    return rows


def contingency_list(branches: list[dict], units: list[dict], sched: dict[str, float]) -> list[dict]:
    rows = []
    for b in branches:
        kind = "line" if b["element"] == "line" else "transformer"
        rows.append({"outaged_elements": b["branch_id"],
                     "description": f"{kind} {b['from_bus']}-{b['to_bus']} circuit {b['circuit']}"})
    pairs: dict[tuple[int, int], list[str]] = {}
    for b in branches:
        if b["element"] == "line":
            pairs.setdefault((b["from_bus"], b["to_bus"]), []).append(b["branch_id"])
    for (fb, tb), ids in sorted(pairs.items()):
        if len(ids) == 2:
            rows.append({"outaged_elements": ";".join(ids),
                         "description": f"double circuit {fb}-{tb} (common tower)"})
    for u in units:
        if u["status"] == "in_service" and u["p_max_mw"] >= 250:
            rows.append({"outaged_elements": u["unit_id"], "description": f"unit {u['unit_id']} trip"})
    for n, r in enumerate(rows, 1):
        r["contingency_id"] = f"C{n:03d}"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--search", action="store_true",
                        help=f"rerun the SCOPF for the reference redispatch and write OUT/{REFERENCE_REDISPATCH}")
    args = parser.parse_args()
    out = args.out
    rng = random.Random(SEED)
    inp, ref = out / "inputs", out / "reference"
    inp.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    net = sm.case118()  # read only: the study model copies it

    loads = make_loads(net, rng)
    write_csv(inp / "study_loads.csv", ["load_index", "bus", "area", "p_mw", "q_mvar"], loads)
    units = make_units(net, rng)
    total_load = sum(float(r["p_mw"]) for r in loads)
    branches = branch_list(net)
    # Provisional ratings, loose enough to measure the flows the real ratings are built from.
    for b in branches:
        b["rate_a_mva"], b["rate_b_mva"] = 9000.0, 9000.0
    rating_cols = ["branch_id", "element", "element_index", "from_bus", "to_bus", "circuit", "rate_a_mva", "rate_b_mva"]
    write_csv(inp / "branch_ratings.csv", rating_cols, branches)
    sched = economic_schedule(units, total_load * 1.035)
    write_csv(inp / "generators.csv", GEN_COLS, unit_rows(units, sched))
    conts = contingency_list(branches, units, sched)
    write_csv(inp / "contingencies.csv", ["contingency_id", "outaged_elements", "description"], conts)

    # Re-balance the schedule for the losses the AC base case shows, so the slack unit runs
    # near its own merit-order point.
    for _ in range(2):
        study = sm.load_study(inp)
        base, _ = sm.solve_base(study, sm.schedule(study))
        others = sum(p for uid, p in sched.items() if uid != study.slack["unit_id"])
        sched = economic_schedule(units, base.slack_p_mw + others)
        write_csv(inp / "generators.csv", GEN_COLS, unit_rows(units, sched))
    study = sm.load_study(inp)
    results = sm.screen(study, sm.schedule(study), detail=True)
    assign_ratings(study, results, branches, rng)
    write_csv(inp / "branch_ratings.csv", rating_cols, branches)

    import scopf

    # The ratings are all that changed: the schedule's screening holds, loaded against them.
    study = sm.load_study(inp)
    sched = sm.schedule(study)
    results = sm.rerate(study, results)
    rows = [{k: str(v) for k, v in sm.result_row(r).items()} for r in results]
    (ref / "screening.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    if args.search:
        dispatch, _ = scopf.redispatch(study, sched, first=results, log=lambda *a, **k: None)
        (out / REFERENCE_REDISPATCH).parent.mkdir(parents=True, exist_ok=True)
        write_csv(out / REFERENCE_REDISPATCH, ["unit_id", "p_mw"],
                  [{"unit_id": k, "p_mw": repr(dispatch[k])} for k in sorted(dispatch, key=lambda u: int(u[1:]))])
    dispatch = read_dispatch((out if args.search else HERE) / REFERENCE_REDISPATCH)
    check = sm.screen(study, dispatch)
    if not (scopf.thermally_secure(check) and scopf.slack_ok(study, check[0].slack_p_mw)):
        sys.exit(f"{REFERENCE_REDISPATCH} is not N-1 secure with the slack unit within its limits")
    base = results[0]
    expected = {
        "canary": CANARY,
        "schedule_slack_mw": round(base.slack_p_mw, 3),
        "schedule_cost_eur_h": round(sm.dispatch_cost(study, sched, base.slack_p_mw), 2),
        "reference_redispatch_cost_eur_h": round(sm.dispatch_cost(study, dispatch, check[0].slack_p_mw), 2),
        "reference_redispatch_slack_mw": round(check[0].slack_p_mw, 3),
        "reference_dispatch_mw": {k: dispatch[k] for k in sorted(dispatch)},
        "cost_premium_tolerance": 0.15,
        "schedule_base_overloads": base.overloads,
        "schedule_worst_contingency": sorted(results[1:], key=lambda r: (
            r.converged, -(r.max_loading[1] or 0.0), r.case_id))[0].case_id,
        "clear_maximum_cases": clear_maximum_cases(results),
    }
    (ref / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


def read_dispatch(path: Path) -> dict[str, float]:
    with open(path, newline="") as f:
        return {row["unit_id"]: float(row["p_mw"]) for row in csv.DictReader(f)}


def clear_maximum_cases(results) -> list[str]:
    """Cases whose maximum loading is at least 90 % and more than 0.5 points above the runner-up:
    the only ones where the branch holding the maximum is graded."""
    out = []
    for r in results:
        vals = sorted(r.loadings.values(), reverse=True)
        if r.converged and vals and vals[0] >= 90.0 and (len(vals) < 2 or vals[0] - vals[1] > 0.5):
            out.append(r.case_id)
    return out


def equivalent_mva(study, results) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Base and worst post-contingency flow of each branch as sqrt(3) x rated kV x current, from a
    screening run with the provisional 9000 MVA ratings; islanding contingencies excluded."""
    base = {k: v * 90.0 for k, v in results[0].loadings.items()}
    post: dict[str, float] = {}
    worst: dict[str, str] = {}
    for r in results[1:]:
        if r.converged and r.deenergised_buses == 0:
            for k, v in r.loadings.items():
                if v * 90.0 > post.get(k, 0.0):
                    post[k], worst[k] = v * 90.0, r.case_id
    return base, post, worst


def controllable(sens, results, branch: str, case_id: str) -> bool:
    """Whether some unit moves the branch's post-contingency flow by at least 0.15 MW per MW: a
    branch left feeding a radial pocket after its contingency cannot be relieved by redispatch."""
    case = next(r for r in results if r.case_id == case_id)
    row = sens.matrix(case)[sens.row[branch], :]
    return float(np.max(np.abs(row))) >= 0.15


def assign_ratings(study, results, branches: list[dict], rng: random.Random) -> None:
    """Comfortable standard ratings everywhere, then a seeded handful of contingency-critical
    branches rated so that the schedule is secure before but not after their contingency, and
    the radial 345 kV line 9-10 rated below the nuclear unit's full output."""
    base, post, worst = equivalent_mva(study, results)
    for b in branches:
        menu = TRAFO_MENU if b["element"] == "trafo" else MENU[b["kv"]]
        emerg = EMERGENCY[b["element"]]
        need = max(base.get(b["branch_id"], 0.0) / 0.75, post.get(b["branch_id"], 0.0) / emerg / 0.92)
        rate = next((m for m in menu if m >= need), menu[-1])
        b["rate_a_mva"], b["rate_b_mva"] = float(rate), round(rate * emerg, 1)
    candidates = sorted(k for k in post if post[k] >= 150 and post[k] >= 1.3 * base.get(k, 0.0)
                        and k not in RADIAL)
    rng.shuffle(candidates)
    import scopf

    _, net = sm.solve_base(study, sm.schedule(study))
    sens = scopf.Sensitivities(study, net)
    stressed = []
    for k in candidates:
        b = next(x for x in branches if x["branch_id"] == k)
        menu = TRAFO_MENU if b["element"] == "trafo" else MENU[b["kv"]]
        emerg = EMERGENCY[b["element"]]
        fits = [m for m in menu if m >= base.get(k, 0.0) / 0.92 and m * emerg < post[k] / 1.04]
        if fits and controllable(sens, results, k, worst[k]):
            b["rate_a_mva"], b["rate_b_mva"] = float(fits[-1]), round(fits[-1] * emerg, 1)
            stressed.append(k)
        if len(stressed) == N_STRESSED:
            break
    radial = next(x for x in branches if x["branch_id"] == "L7")
    menu = MENU[radial["kv"]]
    rate = max(m for m in menu if m < base["L7"] / 1.05)
    radial["rate_a_mva"], radial["rate_b_mva"] = float(rate), round(rate * EMERGENCY["line"], 1)
    print("stressed", sorted(stressed), file=sys.stderr)


N_STRESSED = 6
RADIAL = ("L6", "L7")
GEN_COLS = ["unit_id", "element", "element_index", "bus", "technology", "status", "p_min_mw", "p_max_mw",
            "scheduled_p_mw", "cost_c0_eur_per_h", "cost_c1_eur_per_mwh", "cost_c2_eur_per_mw2h",
            "participation_factor"]


if __name__ == "__main__":
    main()
