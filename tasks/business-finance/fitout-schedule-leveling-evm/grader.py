"""Grader for fitout-schedule-leveling-evm.

The CPM table and the earned-value figures have one answer each (reference). The levelled
schedule has many optimal answers, so it is checked on its own: every activity once, on
working days, unsplit, every link (with its lag and unit) and every crew limit respected,
then its finish against the proved optimum.
"""

from __future__ import annotations

import csv
import json
from datetime import date, timedelta

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    no_problems,
    rows_by,
)

EVM_KEYS = ["bac", "pv", "ev", "ac", "sv", "cv", "spi", "cpi", "eac", "vac", "tcpi"]
CPM_COLS = ["activity_id", "early_start", "early_finish", "late_start", "late_finish",
            "total_float", "free_float", "critical"]
MONEY_ABS = 1.0  # the instruction: money within USD 1
INDEX_ABS = 1e-3  # the instruction: indices within 0.001
# Coarse crux: a levelled finish this many working days past the optimum is no levelling
# effort (a serial chain of every activity is months late); a priority rule lands inside.
CRUX_SLIP = 10


def read_inputs(ctx: GradeContext) -> tuple[list[dict], list[dict], dict[str, int], set[date], date]:
    """The pristine inputs (trusted)."""
    def rows(name: str) -> list[dict]:
        with ctx.inputs.joinpath(name).open() as f:
            return list(csv.DictReader(f))
    project = json.loads(ctx.inputs.joinpath("project.json").read_text())
    caps = {r["resource"]: int(r["capacity"]) for r in rows("resources.csv")}
    holidays = {date.fromisoformat(r["date"]) for r in rows("holidays.csv")}
    return rows("activities.csv"), rows("links.csv"), caps, holidays, date.fromisoformat(project["start_no_earlier_than"])


def cpm_cell(field: str, value: object) -> object:
    """Dates as ISO days, the critical flag as true/false, floats as given."""
    if field == "critical":
        return str(value or "").strip().lower()
    if field.endswith(("_start", "_finish")):
        d = parse_day(value)
        return d.isoformat() if d else value
    return value


def parse_day(text: object) -> date | None:
    if not isinstance(text, str):
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def work_days(start: date, holidays: set[date]) -> list[date]:
    span = [start + timedelta(days=i) for i in range(900)]
    return [d for d in span if d.weekday() < 5 and d not in holidays]


def feasibility(rows: list[dict], acts: list[dict], links: list[dict], caps: dict[str, int],
                wdays: list[date]) -> Outcome:
    """Every activity once, on working days and unsplit, links, crews and the start date."""
    problems: list[str] = []
    index = {d: i for i, d in enumerate(wdays)}
    by_id = rows_by(rows, "activity_id")
    if by_id.duplicates or by_id.unkeyed:
        problems.append(f"repeated activities {sorted(set(by_id.duplicates))[:5]} or rows without an id")
    dur = {a["activity_id"]: int(a["duration_days"]) for a in acts}
    s: dict[str, int] = {}
    for k, d in dur.items():
        row = by_id.get(k)
        a, b = parse_day(row.get("start")) if row else None, parse_day(row.get("finish")) if row else None
        if a is None or b is None:
            problems.append(f"{k}: missing or unreadable dates")
        elif a not in index or b not in index:
            problems.append(f"{k}: starts or finishes on a non-working day or before the project start")
        elif index[b] - index[a] + 1 != d:
            problems.append(f"{k}: {index[b] - index[a] + 1} working days from start to finish, duration is {d}")
        else:
            s[k] = index[a]
    extra = sorted(set(by_id) - set(dur))
    if extra:
        problems.append(f"activities not in the network: {extra[:5]}")
    for lk in links:
        p, q, lag = lk["pred"], lk["succ"], int(lk["lag"])
        if p not in s or q not in s:
            continue
        if lk["lag_unit"] == "ed":
            low = wdays[s[p] + dur[p] - 1] + timedelta(days=1 + lag)
            ok = wdays[s[q]] >= low
        elif lk["type"] == "FS":
            ok = s[q] >= s[p] + dur[p] + lag
        elif lk["type"] == "SS":
            ok = s[q] >= s[p] + lag
        else:
            ok = s[q] + dur[q] >= s[p] + dur[p] + lag
        if not ok:
            problems.append(f"link {p}->{q} {lk['type']} {lag}{lk['lag_unit']} violated")
    for res, cap in sorted(caps.items()):
        load: dict[int, int] = {}
        for a in acts:
            k, need = a["activity_id"], int(a[res])
            if need and k in s:
                for i in range(s[k], s[k] + dur[k]):
                    load[i] = load.get(i, 0) + need
        over = sorted(wdays[i].isoformat() for i, n in load.items() if n > cap)
        if over:
            problems.append(f"{res}: more than {cap} on {len(over)} days from {over[0]}")
    return no_problems(problems, "every activity once, on working days, links and crews respected")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    acts, links, caps, holidays, start = read_inputs(ctx)
    cpm, cpm_ok = load_csv(ctx.out("cpm.csv"), required_columns=CPM_COLS)
    r.gate("cpm.csv has the required columns", cpm_ok)
    lev, lev_ok = load_csv(ctx.out("leveled.csv"), required_columns=["activity_id", "start", "finish"])
    r.gate("leveled.csv has the required columns", lev_ok)
    summary, s_ok = load_json(ctx.out("summary.json"))
    r.gate("summary.json parses as a JSON object", s_ok)
    # A missing figure is a missing deliverable, as a missing file would be.
    r.gate("summary.json holds both finish dates and every earned-value figure", no_problems(
        [f"{k}: not a date" for k in ("cpm_finish", "leveled_finish") if parse_day(get(summary, k)) is None]
        + [f"{k}: not a number" for k in EVM_KEYS if as_number(get(summary, k)) is None],
        "every figure present"))
    # Crux: a levelled schedule that breaks a link, a crew limit or the calendar is no schedule.
    wdays = work_days(start, holidays)
    r.gate("levelled schedule feasible: calendar, links with their lags, crew limits",
           feasibility(lev or [], acts, links, caps, wdays))
    finishes = [d for row in lev or [] if (d := parse_day(row.get("finish")))]
    last = max(finishes).isoformat() if finishes else None
    best = wdays.index(date.fromisoformat(ref["leveled_finish"]))
    slip = sum(1 for d in wdays if d.isoformat() <= last) - 1 - best if last else None
    r.gate(f"levelled finish within {CRUX_SLIP} working days of the optimum",
           Outcome(slip is not None and slip <= CRUX_SLIP, f"{slip} working days past the optimum",
                   f"<= {CRUX_SLIP}", slip))

    want = ref["cpm"]
    seen = {k: {f: cpm_cell(f, v.get(f)) for f in CPM_COLS[1:]}
            for k, v in rows_by(cpm or [], "activity_id").items()}
    want_txt = {k: {**v, "critical": "true" if v["critical"] else "false"} for k, v in want.items()}
    r.check("one CPM row per activity", 0.5, rows_by(cpm or [], "activity_id").coverage(want))
    r.check("early start and finish of every activity (calendar, lead, elapsed lag)", 2.0,
            match_rows(seen, want_txt, ["early_start", "early_finish"], exact=True))
    r.check("late start and finish of every activity", 1.5,
            match_rows(seen, want_txt, ["late_start", "late_finish"], exact=True))
    r.check("total float in working days", 1.0, match_rows(seen, want_txt, ["total_float"], exact=True))
    r.check("free float in working days", 1.0, match_rows(seen, want_txt, ["free_float"], exact=True))
    r.check("critical activities exactly", 1.0, match_rows(seen, want_txt, ["critical"], exact=True))
    r.check("CPM project finish", 0.5, equal(str(get(summary, "cpm_finish"))[:10], ref["cpm_finish"]))

    r.check("levelled finish is the optimum (no levelled schedule finishes earlier)", 2.5, all_of({
        "levelled schedule": equal(last, ref["leveled_finish"]),
        "summary": equal(str(get(summary, "leveled_finish"))[:10], ref["leveled_finish"])}))

    ev = ref["evm"]
    r.check("planned value from the baseline early dates", 1.0, near(get(summary, "pv"), ev["pv"], abs=MONEY_ABS))
    r.check("earned value and budget at completion", 0.5, all_of({
        k: near(get(summary, k), ev[k], abs=MONEY_ABS) for k in ("ev", "bac")}))
    r.check("actual cost to the status date (each invoice once)", 1.0,
            near(get(summary, "ac"), ev["ac"], abs=MONEY_ABS))
    r.check("variances SV, CV and VAC", 0.5, all_of({
        k: near(get(summary, k), ev[k], abs=MONEY_ABS) for k in ("sv", "cv", "vac")}))
    r.check("SPI, CPI and TCPI", 1.0, all_of({
        k: near(get(summary, k), ev[k], abs=INDEX_ABS) for k in ("spi", "cpi", "tcpi")}))
    r.check("EAC", 0.5, near(get(summary, "eac"), ev["eac"], abs=MONEY_ABS))
    return r
