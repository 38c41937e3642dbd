"""Oracle: CPM on a working-day calendar, optimal resource levelling with OR-Tools CP-SAT,
and earned value at the status date. Day indices are positions in the list of working days;
an activity of d days starting at index s works days s .. s+d-1 (its finish date)."""

from __future__ import annotations

import csv
import json
import sys
from datetime import date, timedelta
from pathlib import Path

from ortools.sat.python import cp_model

HORIZON_DAYS = 800  # calendar days of working-day list: far beyond any finish


class Calendar:
    def __init__(self, start: date, holidays: set[date]) -> None:
        self.days: list[date] = []
        d = start
        while len(self.days) < HORIZON_DAYS * 5 // 7:
            if d.weekday() < 5 and d not in holidays:
                self.days.append(d)
            d += timedelta(days=1)
        self.index = {d: i for i, d in enumerate(self.days)}

    def first_on_or_after(self, d: date) -> int:
        while d not in self.index:
            d += timedelta(days=1)
        return self.index[d]

    def last_on_or_before(self, d: date) -> int:
        while d not in self.index:
            d -= timedelta(days=1)
        return self.index[d]

    def elapsed_start(self, finish: int, lag: int) -> int:
        """Earliest start after a finish on working day `finish` and `lag` elapsed days."""
        return self.first_on_or_after(self.days[finish] + timedelta(days=1 + lag))

    def elapsed_latest_finish(self, start: int, lag: int) -> int:
        return self.last_on_or_before(self.days[start] - timedelta(days=1 + lag))


def read_csv(path: Path) -> list[dict]:
    with path.open() as f:
        return list(csv.DictReader(f))


def load(inputs: Path) -> tuple[dict, list[dict], list[dict], dict, Calendar]:
    project = json.loads((inputs / "project.json").read_text())
    holidays = {date.fromisoformat(r["date"]) for r in read_csv(inputs / "holidays.csv")}
    cal = Calendar(date.fromisoformat(project["start_no_earlier_than"]), holidays)
    acts = read_csv(inputs / "activities.csv")
    for a in acts:
        a["dur"] = int(a["duration_days"])
    links = {(r["pred"], r["succ"], r["type"], int(r["lag"]), r["lag_unit"]) for r in read_csv(inputs / "links.csv")}
    caps = {r["resource"]: int(r["capacity"]) for r in read_csv(inputs / "resources.csv")}
    return project, acts, [dict(zip(("pred", "succ", "type", "lag", "unit"), k, strict=True)) for k in sorted(links)], caps, cal


def earliest(link: dict, s_pred: int, d_pred: int, d_succ: int, cal: Calendar) -> int:
    """The earliest start index of the successor that the link allows."""
    lag, kind = link["lag"], link["type"]
    if link["unit"] == "ed":  # elapsed days, FS only
        return cal.elapsed_start(s_pred + d_pred - 1, lag)
    if kind == "FS":
        return s_pred + d_pred + lag
    if kind == "SS":
        return s_pred + lag
    return s_pred + d_pred + lag - d_succ  # FF


def latest(link: dict, ls_succ: int, d_pred: int, d_succ: int, cal: Calendar) -> int:
    """The latest start index of the predecessor that the link allows."""
    lag, kind = link["lag"], link["type"]
    if link["unit"] == "ed":
        return cal.elapsed_latest_finish(ls_succ, lag) - d_pred + 1
    if kind == "FS":
        return ls_succ - lag - d_pred
    if kind == "SS":
        return ls_succ - lag
    return ls_succ + d_succ - lag - d_pred  # FF


def topo(acts: list[dict], links: list[dict]) -> list[str]:
    preds = {a["activity_id"]: {lk["pred"] for lk in links if lk["succ"] == a["activity_id"]} for a in acts}
    order: list[str] = []
    while len(order) < len(acts):
        ready = sorted(k for k, p in preds.items() if k not in order and p <= set(order))
        order.extend(ready)
    return order


def cpm(acts: list[dict], links: list[dict], cal: Calendar) -> dict[str, dict]:
    dur = {a["activity_id"]: a["dur"] for a in acts}
    order = topo(acts, links)
    es: dict[str, int] = {}
    for k in order:
        es[k] = max([0] + [earliest(lk, es[lk["pred"]], dur[lk["pred"]], dur[k], cal)
                           for lk in links if lk["succ"] == k])
    end = max(es[k] + dur[k] for k in order)
    ls: dict[str, int] = {}
    for k in reversed(order):
        ls[k] = min([end - dur[k]] + [latest(lk, ls[lk["succ"]], dur[k], dur[lk["succ"]], cal)
                                      for lk in links if lk["pred"] == k])
    out = {}
    for k in order:
        free = 0
        while free < end - es[k] - dur[k] and all(
                earliest(lk, es[k] + free + 1, dur[k], dur[lk["succ"]], cal) <= es[lk["succ"]]
                for lk in links if lk["pred"] == k):
            free += 1
        out[k] = {"es": es[k], "ef": es[k] + dur[k] - 1, "ls": ls[k], "lf": ls[k] + dur[k] - 1,
                  "total_float": ls[k] - es[k], "free_float": free}
    return out


def level(acts: list[dict], links: list[dict], caps: dict, cal: Calendar, horizon: int) -> tuple[dict, int]:
    m = cp_model.CpModel()
    dur = {a["activity_id"]: a["dur"] for a in acts}
    start = {k: m.NewIntVar(0, horizon, f"s_{k}") for k in dur}
    ivs = {k: m.NewFixedSizeIntervalVar(start[k], dur[k], f"i_{k}") for k in dur}
    for lk in links:
        p, s = lk["pred"], lk["succ"]
        if lk["unit"] == "ed":
            table = [cal.elapsed_start(f, lk["lag"]) for f in range(horizon + dur[p] + 1)]
            fin = m.NewIntVar(0, horizon + dur[p], f"f_{p}_{s}")
            m.Add(fin == start[p] + dur[p] - 1)
            low = m.NewIntVar(0, max(table), f"g_{p}_{s}")
            m.AddElement(fin, table, low)
            m.Add(start[s] >= low)
        elif lk["type"] == "FS":
            m.Add(start[s] >= start[p] + dur[p] + lk["lag"])
        elif lk["type"] == "SS":
            m.Add(start[s] >= start[p] + lk["lag"])
        else:
            m.Add(start[s] + dur[s] >= start[p] + dur[p] + lk["lag"])
    for res, cap in sorted(caps.items()):
        use = [(ivs[a["activity_id"]], int(a[res])) for a in acts if int(a[res])]
        m.AddCumulative([u[0] for u in use], [u[1] for u in use], cap)
    end = m.NewIntVar(0, horizon + 100, "end")
    for k in dur:
        m.Add(end >= start[k] + dur[k])
    m.Minimize(end)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 7
    solver.parameters.max_time_in_seconds = 60
    if solver.Solve(m) != cp_model.OPTIMAL:
        raise SystemExit("levelling not proved optimal")
    return {k: solver.Value(v) for k, v in start.items()}, solver.Value(end)


def evm(project: dict, acts: list[dict], base: dict[str, dict], inputs: Path, cal: Calendar) -> dict:
    status = date.fromisoformat(project["status_date"])
    pct = {r["activity_id"]: float(r["percent_complete"]) for r in read_csv(inputs / "progress.csv")}
    invoices = {r["invoice_id"]: r for r in read_csv(inputs / "costs.csv")}
    ac = sum(float(r["amount"]) for r in invoices.values() if date.fromisoformat(r["date"]) <= status)
    bac = pv = ev = 0.0
    for a in acts:
        k, budget = a["activity_id"], float(a["budget"])
        done = sum(1 for i in range(base[k]["es"], base[k]["ef"] + 1) if cal.days[i] <= status)
        bac += budget
        pv += budget * done / a["dur"]
        ev += budget * pct.get(k, 0.0) / 100
    cpi = ev / ac
    return {"bac": bac, "pv": pv, "ev": ev, "ac": ac, "sv": ev - pv, "cv": ev - ac, "spi": ev / pv,
            "cpi": cpi, "eac": bac / cpi, "vac": bac - bac / cpi, "tcpi": (bac - ev) / (bac - ac)}


def solve(inputs: Path) -> dict:
    project, acts, links, caps, cal = load(inputs)
    base = cpm(acts, links, cal)
    horizon = sum(a["dur"] for a in acts) + 200
    starts, end = level(acts, links, caps, cal, horizon)
    return {"cal": cal, "acts": acts, "cpm": base, "starts": starts, "end": end,
            "evm": evm(project, acts, base, inputs, cal)}


def main(inputs: Path, out: Path) -> None:
    res = solve(inputs)
    cal, day = res["cal"], res["cal"].days
    with (out / "cpm.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["activity_id", "early_start", "early_finish", "late_start", "late_finish",
                    "total_float", "free_float", "critical"])
        for k, r in sorted(res["cpm"].items()):
            w.writerow([k, day[r["es"]], day[r["ef"]], day[r["ls"]], day[r["lf"]], r["total_float"],
                        r["free_float"], str(r["total_float"] == 0).lower()])
    dur = {a["activity_id"]: a["dur"] for a in res["acts"]}
    with (out / "leveled.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["activity_id", "start", "finish"])
        for k, s in sorted(res["starts"].items()):
            w.writerow([k, day[s], day[s + dur[k] - 1]])
    summary = {k: round(v, 4) for k, v in res["evm"].items()}
    summary["cpm_finish"] = day[max(r["ef"] for r in res["cpm"].values())].isoformat()
    summary["leveled_finish"] = day[res["end"] - 1].isoformat()
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    del cal


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
