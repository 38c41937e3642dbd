"""Grader for fixed-asset-rollforward.

The agent's workbook is recalculated by LibreOffice (forced recalculation on load, so cached
values written by any tool are not trusted), then read twice with openpyxl: values from the
recalculated copy, formulas from the agent's file. The crux is a live model, checked by
dependency (together a gate): scaling each asset's cost, salvage and proceeds in the Register by a
factor of its own must scale its values alike, changing salvage and proceeds must move them where
the policy's move, and no key formula may type in its own result or a Register amount. A fourth
recalculation after raising two costs checks the values against the policy.

Tolerances: per-asset USD 0.01 (double-precision noise is ~1e-9; 0.01 also admits values
rounded to cents, as the instruction allows); category and total sums USD 0.10 (up to ~30
per-asset values each rounded by at most half a cent); footing checks on the agent's own
numbers USD 0.05 (the same rounding, on fewer terms).
"""

from __future__ import annotations

import re
from pathlib import Path

from openpyxl.formula.tokenizer import Token, Tokenizer

from lastexam.grading import (
    GradeContext,
    Outcome,
    Recalculated,
    Rubric,
    all_of,
    as_number,
    get,
    is_error_value,
    load_json,
    load_xlsx,
    match_rows,
    near,
)

WORKBOOK = "fixed_assets_fy2025.xlsx"
SCHEDULE_COLUMNS = ["asset_id", "category", "opening_cost", "additions", "disposals_cost",
                    "opening_accumulated", "fy_depreciation", "disposals_accumulated",
                    "closing_accumulated", "closing_nbv", "gain_loss"]
ROLLFORWARD_COLUMNS = ["category", "opening_cost", "additions", "disposals_cost", "closing_cost",
                       "opening_accumulated", "fy_depreciation", "disposals_accumulated",
                       "closing_accumulated", "closing_nbv"]
FORMULA_COLUMNS = ["opening_accumulated", "fy_depreciation", "closing_nbv", "gain_loss"]
# A formula made only of literals ("=1234.5", "=100*12") is a typed number in disguise.
CONSTANT_FORMULA = re.compile(r"^=\s*[-+(]*[\d.]+(\s*[-+*/^]\s*[-+(]*[\d.]+\)*)*\s*\)*$")
ASSET_TOL = 0.01
SUM_TOL = 0.10
FOOT_TOL = 0.05
# The dependency probe: every asset's cost, salvage and proceeds times a factor of its own.
SCALE_COLUMNS = ["cost", "salvage_value", "disposal_proceeds"]
SCALE_BASE, SCALE_STEP = 1.5, 0.0125
# Liveness, not precision, is judged here: a model that rounds (even each monthly charge, which
# the policy forbids and the value checks catch) is off by cents, a pasted value by at least
# half of itself (factors are 1.5 to 2.4).
SCALE_TOL = 1.0
# The crux is a live model: below these shares of asset values following their own Register row
# scaled, or moving as the policy's when salvage and proceeds change, the workbook is pasted numbers
# and nothing counts. Live but wrong methods move as the policy's for 77% (declining balance without
# the switch) and 94% (no mid-month convention) of the values, pasted ratios for 0-40%.
LIVE_SHARE_GATES = (0.9, 0.6)
MOVE_REL = 0.25  # how far a value's move may be from the policy's, relative to it


def header_map(ws) -> dict[str, int]:
    """Header name -> 0-based column index, from row 1."""
    if ws is None or ws.max_row < 1:
        return {}
    row = next(ws.iter_rows(min_row=1, max_row=1, values_only=True), ())
    return {str(v).strip(): i for i, v in enumerate(row) if v is not None}


def sheet(wb, name: str):
    return wb[name] if wb is not None and name in wb.sheetnames else None


def table(ws, columns: list[str], key: str) -> tuple[dict[str, dict], dict[str, tuple[int, int]]]:
    """Rows keyed by `key` (values) and where each key's row sits (row number, key column)."""
    cols = header_map(ws)
    if ws is None or any(c not in cols for c in columns):
        return {}, {}
    rows, where = {}, {}
    for n, row in enumerate(ws.iter_rows(min_row=2, values_only=True), start=2):
        k = row[cols[key]] if cols[key] < len(row) else None
        if k is None or str(k).strip() == "":
            continue
        rows[str(k).strip()] = {c: (row[cols[c]] if cols[c] < len(row) else None) for c in columns}
        where[str(k).strip()] = (n, cols[key])
    return rows, where


def assets(ref: dict, ids: list[str]) -> dict[str, dict]:
    return {i: ref["assets"][i] for i in ids}


def is_live_formula(v) -> bool:
    text = getattr(v, "text", v)  # openpyxl ArrayFormula keeps its formula in .text
    return isinstance(text, str) and text.startswith("=") and not CONSTANT_FORMULA.match(text.replace(" ", ""))


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    src = ctx.out(WORKBOOK)

    formulas_wb, readable = load_xlsx(src, data_only=False)
    r.gate(f"{WORKBOOK} is a readable XLSX workbook", readable)
    recalc_path, recalc_ok = (None, Outcome(False, "no workbook"))
    # The edited copies do not depend on the recalculated original: all four go to one LibreOffice run.
    edited: dict[str, Path | Outcome] = {}
    batch: Recalculated | None = None
    if formulas_wb is not None:
        edited = {"scaled": edited_copy(ctx, scale_edit(own_row_factors(ref)), "scaled"),
                  "salvage": edited_copy(ctx, scale_edit(ref["salvage_edit"]["factors"]), "salvage")}
        if "Register" in formulas_wb.sheetnames:
            edited["probe"] = edited_copy(ctx, probe_edit(ref), "probe")
        batch = Recalculated({"main": src, **{t: p for t, p in edited.items() if isinstance(p, Path)}},
                             ctx.scratch)
        recalc_path, recalc_ok = batch.get("main")
    r.gate("LibreOffice recalculates the workbook", recalc_ok)
    values_wb = load_xlsx(recalc_path, data_only=True).value if recalc_path else None

    sched_v, sched_f = sheet(values_wb, "Schedule"), sheet(formulas_wb, "Schedule")
    roll_v, roll_f = sheet(values_wb, "RollForward"), sheet(formulas_wb, "RollForward")
    reg_f = sheet(formulas_wb, "Register")
    expected_ids = sorted(ref["assets"])
    expected_cats = [*ref["categories"], "Total"]
    # Extra rows (a totals line, notes, checks) are allowed and ignored.
    rows, rows_at = table(sched_v, SCHEDULE_COLUMNS, "asset_id")
    rows = {k: v for k, v in rows.items() if k in ref["assets"]}
    roll, roll_at = table(roll_v, ROLLFORWARD_COLUMNS, "category")
    roll = {k: v for k, v in roll.items() if k in expected_cats}
    rows_at = {k: v for k, v in rows_at.items() if k in rows}
    roll_at = {k: v for k, v in roll_at.items() if k in roll}

    pasted = pasted_cells(sched_f, reg_f, rows, rows_at)
    live = ([own_row_dependency(ref, rows, pasted, read_recalculated(batch, "scaled", edited["scaled"])),
             salvage_dependency(ref, rows, pasted, read_recalculated(batch, "salvage", edited["salvage"]))]
            if recalc_ok.passed and rows else [(0.0, Outcome(False, "no Schedule rows to probe"))] * 2)
    follows, short = live[0][1], [(sh, o) for (sh, o), floor in zip(live, LIVE_SHARE_GATES, strict=True) if sh < floor]
    share, worst = short[0] if short else live[0]
    r.gate("live model: asset values follow their own Register row (90% scaled, 60% as salvage and proceeds change)",
           Outcome(not short, f"{share:.0%} follow; {worst.message}", expected=worst.expected, seen=worst.seen))

    # Structure.
    problems = []
    for name, ws, cols in (("Register", reg_f, ["asset_id", "cost"]), ("Schedule", sched_v, SCHEDULE_COLUMNS),
                           ("RollForward", roll_v, ROLLFORWARD_COLUMNS)):
        have = header_map(ws)
        if ws is None:
            problems.append(f"sheet {name} missing")
        elif any(c not in have for c in cols):
            problems.append(f"{name} lacks {[c for c in cols if c not in have]}")
    if sched_v is not None and sorted(rows) != expected_ids:
        problems.append(f"Schedule lacks assets {sorted(set(expected_ids) - set(rows))[:5]}")
    if roll_v is not None and sorted(roll) != sorted(expected_cats):
        problems.append(f"RollForward lacks rows {sorted(set(expected_cats) - set(roll))}")
    r.check("Register, Schedule and RollForward sheets with the required columns and rows", 1,
            Outcome(not problems, "; ".join(problems) or "all present",
                    expected="3 sheets, required headers, one row per asset / category + Total",
                    seen=problems or None))

    # No error values anywhere in the computed sheets.
    errors = []
    for name, ws in (("Schedule", sched_v), ("RollForward", roll_v)):
        for row in ws.iter_rows() if ws is not None else []:
            for c in row:
                if is_error_value(c.value):
                    errors.append(f"{name}!{c.coordinate}={c.value}")
    present = sched_v is not None and roll_v is not None
    r.check("no error values in Schedule and RollForward after recalculation", 1,
            Outcome(present and not errors,
                    "sheets missing" if not present else (f"{len(errors)} error cells" if errors else "none"),
                    expected="no #VALUE!/#NAME?/#REF!/... cells", seen=errors[:8] or None))

    g = ref["groups"]
    r.check("opening accumulated depreciation at 30 June 2024, every asset", 2,
            match_rows(rows, assets(ref, expected_ids), ["opening_cost", "opening_accumulated"], abs=ASSET_TOL, text=False))
    r.check("FY2025 depreciation of straight-line assets in service all year", 2,
            match_rows(rows, assets(ref, g["straight_line_full_year"]), ["fy_depreciation"], abs=ASSET_TOL, text=False))
    r.check("FY2025 depreciation of declining-balance assets (switch to straight line)", 2,
            match_rows(rows, assets(ref, g["declining_balance_full_year"]), ["fy_depreciation"], abs=ASSET_TOL, text=False))
    r.check("additions: cost and first month under the mid-month convention", 2,
            match_rows(rows, assets(ref, g["additions"]), ["additions", "fy_depreciation"], abs=ASSET_TOL, text=False))
    r.check("lives ending during or before FY2025 stop at salvage; land not depreciated", 2,
            match_rows(rows, assets(ref, g["life_ends_during_fy"] + g["fully_depreciated_before_fy"] + g["land"]),
                       ["fy_depreciation", "closing_accumulated"], abs=ASSET_TOL, text=False))
    r.check("disposals: depreciation to the disposal month, amounts removed, gain or loss", 2,
            match_rows(rows, assets(ref, g["disposals"]),
                       ["disposals_cost", "fy_depreciation", "disposals_accumulated", "closing_nbv", "gain_loss"],
                       abs=ASSET_TOL, text=False))
    r.check("closing accumulated depreciation and NBV at 30 June 2025, every asset", 1,
            match_rows(rows, assets(ref, expected_ids), ["closing_accumulated", "closing_nbv"], abs=ASSET_TOL,
                       text=False))

    # Roll-forward against the reference.
    ref_roll = {cat: {**v, "closing_cost": v["opening_cost"] + v["additions"] - v["disposals_cost"]}
                for cat, v in ref["rollforward"].items() if cat in expected_cats}
    r.check("RollForward by category and in total", 2,
            match_rows(roll, ref_roll, ROLLFORWARD_COLUMNS[1:], abs=SUM_TOL, text=False))

    # Footing and tie-out on the agent's own numbers.
    foot = []
    for cat, v in roll.items():
        x = {f: as_number(v.get(f), text=False) for f in ROLLFORWARD_COLUMNS[1:]}
        if any(val is None for val in x.values()):
            foot.append(f"{cat}: non-numeric cells")
            continue
        if abs(x["opening_cost"] + x["additions"] - x["disposals_cost"] - x["closing_cost"]) > FOOT_TOL:
            foot.append(f"{cat}: cost does not roll forward")
        if abs(x["opening_accumulated"] + x["fy_depreciation"] - x["disposals_accumulated"]
               - x["closing_accumulated"]) > FOOT_TOL:
            foot.append(f"{cat}: accumulated depreciation does not roll forward")
        if abs(x["closing_cost"] - x["closing_accumulated"] - x["closing_nbv"]) > FOOT_TOL:
            foot.append(f"{cat}: NBV != cost - accumulated")
    if roll and rows and "Total" in roll:
        for f in ["opening_cost", "additions", "disposals_cost", "fy_depreciation", "closing_nbv"]:
            s = sum(as_number(v.get(f), text=False) or 0.0 for v in rows.values())
            t = as_number(roll["Total"].get(f), text=False)
            if t is None or abs(s - t) > SUM_TOL:
                foot.append(f"Total {f} {t} != Schedule sum {round(s, 2)}")
    r.check("RollForward foots and ties to the Schedule", 1,
            Outcome(bool(roll) and bool(rows) and not foot, "; ".join(foot[:6]) or ("ties" if roll else "no RollForward"),
                    expected="opening + movements = closing; Total = sum of Schedule", seen=foot[:6] or None))

    # Formulas, read from the agent's own file.
    typed = []
    if sched_f is None or roll_f is None or not rows or not roll:
        typed.append("Schedule or RollForward missing")
    else:
        scols, rcols = header_map(sched_f), header_map(roll_f)
        for aid, (n, _) in sorted(rows_at.items()):
            for f in FORMULA_COLUMNS:
                v = sched_f.cell(row=n, column=scols[f] + 1).value
                if not is_live_formula(v):
                    typed.append(f"Schedule {aid}.{f} = {v!r}")
        for cat, (n, _) in sorted(roll_at.items()):
            for f in ROLLFORWARD_COLUMNS[1:]:
                v = roll_f.cell(row=n, column=rcols[f] + 1).value
                if not is_live_formula(v):
                    typed.append(f"RollForward {cat}.{f} = {v!r}")
    r.check("key Schedule and RollForward cells are live formulas", 2,
            Outcome(not typed, f"{len(typed)} cells are not formulas" if typed else "all formulas",
                    expected="formulas referencing cells", seen=typed[:8] or None))

    r.check("every asset's values follow its own Register row (cost, salvage and proceeds scaled)", 2, follows)
    r.check("live model: after raising two costs in Register, the recalculated values are right", 2,
            probe(ref, read_recalculated(batch, "probe", edited["probe"])
                  if formulas_wb is not None and reg_f is not None else None))

    summary, parsed = load_json(ctx.out("summary.json"))
    s_ref = ref["summary"]
    r.check("summary.json totals", 2, all_of(
        [(k, near(get(summary, k), v, abs=SUM_TOL)) for k, v in sorted(s_ref.items())]) if parsed.passed else parsed)
    r.check("summary.json by category", 1, all_of(
        [(f"{cat}.{f}", near(get(summary, f"by_category.{cat}.{f}"), ref["rollforward"][cat][rf], abs=SUM_TOL))
         for cat in ref["categories"]
         for f, rf in (("depreciation_expense", "fy_depreciation"), ("closing_nbv", "closing_nbv"))])
            if parsed.passed else parsed)
    return r


def edited_copy(ctx: GradeContext, edit, tag: str) -> Path | Outcome:
    """The agent's workbook with its Register edited (openpyxl keeps every formula), saved in
    scratch. edit(sheet, header map) returns None or the Outcome of a failed edit."""
    wb, ok = load_xlsx(ctx.out(WORKBOOK), data_only=False)
    if wb is None or "Register" not in wb.sheetnames:
        return Outcome(False, ok.message if wb is None else "no Register sheet")
    reg = wb["Register"]
    cols = header_map(reg)
    if "asset_id" not in cols or "cost" not in cols:
        return Outcome(False, "Register lacks asset_id or cost columns")
    if (failed := edit(reg, cols)) is not None:
        return failed
    edited = ctx.scratch / f"{tag}.xlsx"
    try:
        wb.save(edited)
    except Exception as e:  # openpyxl can fail to re-save exotic content
        return Outcome(False, f"could not write the edited workbook: {type(e).__name__}: {e}")
    return edited


def read_recalculated(batch: Recalculated | None, tag: str, edited: Path | Outcome) -> tuple[dict, dict] | Outcome:
    """Schedule and RollForward of an edited copy, recalculated."""
    if isinstance(edited, Outcome):
        return edited
    assert batch is not None  # an edited copy is made only where the batch is
    path, ok = batch.get(tag)
    if path is None:
        return ok
    vwb = load_xlsx(path, data_only=True).value
    rows, _ = table(sheet(vwb, "Schedule"), SCHEDULE_COLUMNS, "asset_id")
    roll, _ = table(sheet(vwb, "RollForward"), ROLLFORWARD_COLUMNS, "category")
    return rows, roll


def register_rows(reg, cols: dict[str, int]):
    """(asset id, row of cells) for each Register row keyed by an asset id."""
    for row in reg.iter_rows(min_row=2):
        aid = row[cols["asset_id"]].value if cols["asset_id"] < len(row) else None
        if isinstance(aid, str) and aid.strip():
            yield aid.strip(), row


def pasted_cells(sched_f, reg_f, rows: dict[str, dict], rows_at: dict[str, tuple[int, int]]) -> dict[str, list[float]]:
    """Key Schedule cells whose formula types in a number (abs >= 100) equal to the cell's own
    result or to an amount of the asset's own Register row: `=19038.2*Register!E5/351597.93`
    follows its own row when every amount of that row is scaled, yet it is a pasted value."""
    scols, rcols = header_map(sched_f), header_map(reg_f)
    if not scols or not rows_at or "asset_id" not in rcols:
        return {}
    amounts = {aid: [v for c in SCALE_COLUMNS if c in rcols and rcols[c] < len(row)
                     and (v := as_number(row[rcols[c]].value, text=False)) is not None]
               for aid, row in register_rows(reg_f, rcols)}
    found = {}
    for aid, (n, _) in rows_at.items():
        for f in FORMULA_COLUMNS:
            text = getattr(cell := sched_f.cell(row=n, column=scols[f] + 1).value, "text", cell)
            typed_in = [*amounts.get(aid, []), as_number(rows[aid].get(f), text=False)]
            try:
                tokens = Tokenizer(text).items if isinstance(text, str) and text.startswith("=") else []
            except Exception:  # openpyxl's tokenizer rejects some malformed formulas
                tokens = []
            literals = [x for t in tokens if t.type == Token.OPERAND and t.subtype == Token.NUMBER
                        and abs(x := float(t.value)) >= 100
                        and any(a is not None and abs(x - a) <= ASSET_TOL for a in typed_in)]
            if literals:
                found[f"{aid}.{f}"] = literals
    return found


def own_row_factors(ref: dict) -> dict[str, dict[str, float]]:
    return {aid: dict.fromkeys(SCALE_COLUMNS, SCALE_BASE + SCALE_STEP * i) for i, aid in enumerate(sorted(ref["assets"]))}


def own_row_dependency(ref: dict, base: dict[str, dict], pasted: dict[str, list[float]],
                       got: tuple[dict, dict] | Outcome) -> tuple[float, Outcome]:
    """Scale cost, salvage and proceeds of each asset by its own factor and recalculate. Every
    method the policy admits (and every usual mistake in it) is homogeneous of degree 1 in these
    three amounts, so each asset's values must scale by exactly its own factor: pasted numbers,
    numbers disguised as formulas (`=1234.5+0*Register!E2`) and cells computed from another
    asset's row do not (a factor of its own for each asset: a cell reading another row scales wrong)."""
    factors = own_row_factors(ref)

    def judge(aid: str, f: str, v0: float, v1: float) -> bool | str | None:
        k = factors[aid][SCALE_COLUMNS[0]]  # a zero that stays zero is no evidence either way
        return None if v0 == v1 == 0 else (abs(v1 - k * v0) <= SCALE_TOL * (1 + k)
                                           or f"{v0:.2f} x {k:.4f} = {k * v0:.2f} expected, {v1:.2f} seen")

    return dependency(base, pasted, factors, got, judge,
                      "follow their own Register row", "each asset's values x its own factor")


def salvage_dependency(ref: dict, base: dict[str, dict], pasted: dict[str, list[float]],
                       got: tuple[dict, dict] | Outcome) -> tuple[float, Outcome]:
    """Salvage and proceeds times factors of each asset's own, cost kept (factors and the policy's values
    in the reference): a value must move where the policy's moves, by about as much, and stay where it
    stays. A pasted value times a ratio of cost (or cost - salvage) follows the scaling, not this."""
    edit, policy = ref["salvage_edit"], ref["assets"]

    def judge(aid: str, f: str, v0: float, v1: float) -> bool | str | None:
        want, moved = edit["values"][aid][f] - policy[aid][f], v1 - v0
        if abs(want) <= SCALE_TOL and abs(moved) <= SCALE_TOL:  # staying where it should is no evidence
            return None
        return (abs(moved - want) <= max(SCALE_TOL, MOVE_REL * abs(want))
                or f"moved {moved:+.2f}, the policy's {want:+.2f}")

    return dependency(base, pasted, edit["factors"], got, judge, "move as the policy's",
                      "values moving where and about as much as the policy's")


def scale_edit(factors: dict[str, dict[str, float]]):
    """The edit for edited_copy: each asset's SCALE_COLUMNS amounts times factors[asset][column]."""
    def edit(reg, cols):
        for aid, row in register_rows(reg, cols):
            for col in SCALE_COLUMNS:
                cell = row[cols[col]] if col in cols and cols[col] < len(row) else None
                v = as_number(cell.value, text=False) if cell is not None else None
                if v is not None and aid in factors:
                    cell.value = v * factors[aid][col]
        return None
    return edit


def dependency(base: dict[str, dict], pasted: dict[str, list[float]], factors: dict[str, dict[str, float]],
               got: tuple[dict, dict] | Outcome, judge, verb: str, wanted: str) -> tuple[float, Outcome]:
    """got: the workbook recalculated after scale_edit(factors); judge(asset, field, before, after) says
    True (follows), None (no evidence) or why not. Returns the share that follow."""
    if isinstance(got, Outcome):
        return 0.0, got
    followed, stuck = 0, []
    for aid in sorted(factors):
        for f in FORMULA_COLUMNS:
            v0, v1 = (as_number(rows.get(aid, {}).get(f), text=False) for rows in (base, got[0]))
            verdict = ("formula types in " + str(pasted[f"{aid}.{f}"][:2]) if f"{aid}.{f}" in pasted
                       else "not a number" if v0 is None or v1 is None else judge(aid, f, v0, v1))
            followed += verdict is True
            stuck += [f"{aid}.{f}: {verdict}"] if verdict not in (True, None) else []
    share = followed / (followed + len(stuck)) if followed + len(stuck) else 0.0
    return share, Outcome(not stuck and followed > 0, f"{followed} values {verb}, {len(stuck)} do not",
                          expected=wanted, seen=stuck[:8] or None)


def probe_edit(ref: dict):
    """The edit for edited_copy: two costs raised in Register."""
    new_cost = ref["probe"]["new_cost"]

    def edit(reg, cols):
        done = set()
        for aid, row in register_rows(reg, cols):
            if aid in new_cost:
                reg.cell(row=row[0].row, column=cols["cost"] + 1, value=new_cost[aid])
                done.add(aid)
        return None if done == set(new_cost) else Outcome(False, f"Register rows not found for {sorted(set(new_cost) - done)}")
    return edit


def probe(ref: dict, got: tuple[dict, dict] | Outcome | None) -> Outcome:
    """got: the workbook recalculated after probe_edit (None: no workbook with a Register sheet);
    compared with the policy's values."""
    if got is None:
        return Outcome(False, "no workbook with a Register sheet")
    if isinstance(got, Outcome):
        return got
    rows, roll = got
    p = ref["probe"]
    expected = {**{f"{i}.fy_depreciation": v for i, v in p["fy_depreciation"].items()},
                "Total.fy_depreciation": p["total_fy_depreciation"], "Total.closing_nbv": p["total_closing_nbv"]}
    seen = {**{f"{i}.fy_depreciation": as_number(rows.get(i, {}).get("fy_depreciation"), text=False) for i in p["fy_depreciation"]},
            "Total.fy_depreciation": as_number(roll.get("Total", {}).get("fy_depreciation"), text=False),
            "Total.closing_nbv": as_number(roll.get("Total", {}).get("closing_nbv"), text=False)}
    return all_of([(k, near(seen[k], v, abs=ASSET_TOL if "Total" not in k else SUM_TOL)) for k, v in expected.items()])
