"""Seeded generator of fitout-schedule-leveling-evm: an office fit-out network with mixed
links (a lead, SS/FF lags, an elapsed-day curing lag), a 2026 holiday calendar, crew limits,
progress and invoices at a status date. The reference comes from the oracle's plan.py (shared
code is allowed between generator and oracle; the grader re-checks on its own)."""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "solution"))
from plan import solve

SEED = 4417
CANARY = "71d400c3-10d8-45ea-93dd-54d31621a5dc"
START = "2026-01-19"  # Martin Luther King Jr. Day: the first working day is the 20th
STATUS = "2026-03-13"
LATE_DAYS = 5
HOLIDAYS = [("2026-01-01", "New Year's Day"), ("2026-01-19", "Martin Luther King Jr. Day"),
            ("2026-02-16", "Presidents' Day"), ("2026-04-03", "Company shutdown (Good Friday)"),
            ("2026-05-25", "Memorial Day"), ("2026-06-19", "Juneteenth"),
            ("2026-07-03", "Independence Day (observed)"), ("2026-09-07", "Labor Day")]
RESOURCES = {"electricians": 3, "carpenters": 4, "plumbers": 2}
RATE = {"electricians": 720.0, "carpenters": 640.0, "plumbers": 760.0}
# id, name, duration (working days), crews (electricians, carpenters, plumbers)
ACTS = [
    ("A01", "Site mobilisation and protection", 3, (0, 1, 0)),
    ("A02", "Strip-out of existing finishes", 6, (0, 3, 0)),
    ("A03", "Asbestos survey sign-off", 2, (0, 0, 0)),
    ("A04", "Set out partitions", 2, (0, 1, 0)),
    ("A05", "Floor screed, level 3", 4, (0, 2, 0)),
    ("A06", "Screed curing check and moisture test", 1, (0, 0, 0)),
    ("A07", "Metal stud partitions, zone A", 7, (0, 3, 0)),
    ("A08", "Metal stud partitions, zone B", 6, (0, 3, 0)),
    ("A09", "First-fix electrical, zone A", 6, (2, 0, 0)),
    ("A10", "First-fix electrical, zone B", 5, (2, 0, 0)),
    ("A11", "First-fix plumbing, kitchen and WCs", 6, (0, 0, 2)),
    ("A12", "HVAC ductwork and VAV boxes", 8, (1, 0, 1)),
    ("A13", "Fire alarm cabling", 4, (2, 0, 0)),
    ("A14", "Data cabling containment", 5, (2, 1, 0)),
    ("A15", "Board one side and insulate", 6, (0, 3, 0)),
    ("A16", "Close boarding and tape", 5, (0, 2, 0)),
    ("A17", "Suspended ceiling grid", 6, (1, 2, 0)),
    ("A18", "Second-fix electrical and lighting", 7, (2, 0, 0)),
    ("A19", "Second-fix plumbing and sanitaryware", 5, (0, 0, 2)),
    ("A20", "Kitchen joinery install", 4, (0, 2, 1)),
    ("A21", "Decoration, two coats", 8, (0, 2, 0)),
    ("A22", "Ceiling tiles", 4, (0, 2, 0)),
    ("A23", "Raised access floor", 5, (0, 3, 0)),
    ("A24", "Carpet and vinyl", 6, (0, 2, 0)),
    ("A25", "Door hanging and ironmongery", 4, (0, 2, 0)),
    ("A26", "Fire alarm commissioning", 2, (1, 0, 0)),
    ("A27", "HVAC commissioning and balancing", 3, (1, 0, 1)),
    ("A28", "Snagging", 5, (1, 2, 1)),
    ("A29", "Builder's clean and handover", 2, (0, 1, 0)),
]
# pred, succ, type, lag, unit (d working days, ed elapsed calendar days)
LINKS = [
    ("A01", "A02", "FS", 0, "d"), ("A01", "A03", "FS", 0, "d"), ("A02", "A04", "FS", -2, "d"),
    ("A03", "A04", "FS", 0, "d"), ("A02", "A05", "FS", 0, "d"), ("A05", "A06", "FS", 7, "ed"),
    ("A04", "A07", "FS", 0, "d"), ("A04", "A08", "SS", 3, "d"), ("A07", "A09", "SS", 2, "d"),
    ("A08", "A10", "SS", 2, "d"), ("A07", "A11", "SS", 3, "d"), ("A06", "A12", "FS", 0, "d"),
    ("A03", "A12", "FS", 0, "d"), ("A09", "A13", "FS", 0, "d"), ("A10", "A14", "FS", 0, "d"),
    ("A09", "A15", "FS", 0, "d"), ("A11", "A15", "FS", 0, "d"), ("A10", "A15", "FF", 2, "d"),
    ("A15", "A16", "SS", 2, "d"), ("A15", "A16", "FF", 1, "d"), ("A12", "A17", "FS", 0, "d"),
    ("A13", "A17", "FS", 0, "d"), ("A14", "A17", "FS", 0, "d"), ("A16", "A18", "FS", 0, "d"),
    ("A17", "A18", "SS", 3, "d"), ("A16", "A19", "FS", 0, "d"), ("A19", "A20", "FS", 0, "d"),
    ("A16", "A21", "FS", 0, "d"), ("A18", "A22", "FS", 0, "d"), ("A17", "A22", "FF", 2, "d"),
    ("A06", "A23", "FS", 0, "d"), ("A21", "A24", "FS", 0, "d"), ("A23", "A24", "FS", 0, "d"),
    ("A21", "A25", "FF", 1, "d"), ("A18", "A26", "FS", 0, "d"), ("A22", "A27", "FS", 0, "d"),
    ("A20", "A28", "FS", 0, "d"), ("A24", "A28", "FS", 0, "d"), ("A25", "A28", "FS", 0, "d"),
    ("A26", "A28", "FS", 0, "d"), ("A27", "A28", "FS", 0, "d"), ("A28", "A29", "FS", 0, "d"),
]


def write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    out = Path(ap.parse_args().out)
    rng = random.Random(SEED)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    acts = []
    for k, name, d, crew in ACTS:
        daily = sum(n * RATE[r] for n, r in zip(crew, RESOURCES, strict=True)) or 900.0
        budget = round(d * daily * rng.uniform(1.05, 1.25), -1)
        acts.append({"activity_id": k, "name": name, "duration_days": d, "budget": f"{budget:.2f}",
                     **dict(zip(RESOURCES, crew, strict=True))})
    links = [dict(zip(("pred", "succ", "type", "lag", "lag_unit"), lk, strict=True)) for lk in LINKS]
    links.append(dict(links[20]))  # the scheduler export repeats a link
    write(inputs / "activities.csv", acts)
    write(inputs / "links.csv", links)
    write(inputs / "resources.csv", [{"resource": r, "capacity": c} for r, c in RESOURCES.items()])
    write(inputs / "holidays.csv", [{"date": d, "name": n} for d, n in HOLIDAYS])
    (inputs / "project.json").write_text(json.dumps(
        {"project": "Level 3 office fit-out", "start_no_earlier_than": START, "status_date": STATUS,
         "workweek": "Monday to Friday", "currency": "USD"}, indent=1) + "\n")
    write(inputs / "progress.csv", [{"activity_id": "A01", "percent_complete": 1}])  # placeholder until the baseline is known
    write(inputs / "costs.csv", [{"invoice_id": "X", "activity_id": "A01", "date": START, "amount": "1"}])
    base = solve(inputs)
    cal, cpm = base["cal"], base["cpm"]
    status = date.fromisoformat(STATUS)
    progress, costs = [], []
    n = 0
    # The site runs about a week behind the baseline, in logical order: progress is the
    # baseline's as of LATE_DAYS working days before the status date, give or take 5 %.
    reached = cal.days[cal.last_on_or_before(status) - LATE_DAYS]
    for a in acts:
        k, r = a["activity_id"], cpm[a["activity_id"]]
        done = sum(1 for i in range(r["es"], r["ef"] + 1) if cal.days[i] <= reached)
        if not done:
            continue
        pct = 5 * round(20 * done / a["duration_days"])
        if pct < 100:
            pct = min(95, max(5, pct + rng.choice((-5, 0, 5))))
        progress.append({"activity_id": k, "percent_complete": pct})
        spent = float(a["budget"]) * pct / 100 * rng.uniform(0.95, 1.3)
        parts = rng.randint(1, 3)
        for j in range(parts):
            n += 1
            when = cal.days[min(r["es"] + j * 2, r["ef"])] + timedelta(days=5)
            costs.append({"invoice_id": f"INV-{2600 + 3 * n}", "activity_id": k,
                          "date": min(when, status).isoformat(), "amount": f"{spent / parts:.2f}"})
    costs.append(dict(costs[7]))  # re-exported invoice
    late = next(p for p in progress if p["percent_complete"] < 100)
    costs.append({"invoice_id": f"INV-{2600 + 3 * (n + 1)}", "activity_id": late["activity_id"],
                  "date": (status + timedelta(days=4)).isoformat(), "amount": "18450.00"})
    costs.sort(key=lambda c: (c["date"], c["invoice_id"]))
    write(inputs / "progress.csv", progress)
    write(inputs / "costs.csv", costs)
    res = solve(inputs)
    day = res["cal"].days
    (ref / "expected.json").write_text(json.dumps({
        "canary": CANARY,
        "cpm": {k: {"early_start": day[r["es"]].isoformat(), "early_finish": day[r["ef"]].isoformat(),
                    "late_start": day[r["ls"]].isoformat(), "late_finish": day[r["lf"]].isoformat(),
                    "total_float": r["total_float"], "free_float": r["free_float"],
                    "critical": r["total_float"] == 0} for k, r in sorted(res["cpm"].items())},
        "cpm_finish": day[max(r["ef"] for r in res["cpm"].values())].isoformat(),
        "leveled_finish": day[res["end"] - 1].isoformat(),
        "evm": {k: round(v, 6) for k, v in res["evm"].items()},
    }, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
