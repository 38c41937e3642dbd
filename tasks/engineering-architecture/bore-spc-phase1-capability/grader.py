"""Grader for bore-spc-phase1-capability.

The workbook is recalculated by LibreOffice and read by labels (Limits and Capability: name in
column A, value in column B; Data: a header row). The crux is gated twice: the study must be
live (every x1..x5 of the Data sheet mapped x -> 25 + 2 (x - 25) + 0.004 mm and recalculated, the
limits must follow the map and the sigmas double, so pasted numbers fail), and the final X̄
centre line must lie within 1 µm of the Phase-I reference (a study that keeps an inch
subgroup or skips the cleaning is off by far more). The precise comparisons are weighted checks.

Tolerances: limits and sigmas 2e-5 mm (5-decimal rounding is 5e-6, the 3-decimal constants
A2 = 0.577 vs 0.5768 move a limit by ~1e-6, inch readings converted with 0.001 mm rounding move
the centre line by < 4e-6); Cp-type indices 0.005 (the sigmas' tolerance is < 1 % of them, the
3-decimal rounding allowed is 5e-4); ppm 5 % or 2 ppm (the tail at z = 3.7 moves ~15 % per
1 % of sigma: the 5-decimal sigma and centre line allowed move it by up to ~4 %); measurements 6e-4 mm (an inch reading converted and rounded to the 0.001 mm of the
air gauge).
"""

from __future__ import annotations

from pathlib import Path

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
    recalculate_xlsx,
    same_set,
)

WORKBOOK = "spc_study.xlsx"
LIMIT_KEYS = ["xbar_CL", "xbar_UCL", "xbar_LCL", "R_CL", "R_UCL", "R_LCL"]
CAP_KEYS = ["sigma_within", "sigma_overall", "Cp", "Cpk", "Pp", "Ppk", "ppm_expected"]
X_COLS = ["x1", "x2", "x3", "x4", "x5"]
LIM_TOL, IDX_TOL, X_TOL, CL_GATE = 2e-5, 0.005, 6e-4, 1e-3
PPM_REL, PPM_ABS = 0.05, 2.0
# The liveness probe: x -> PIVOT + SCALE (x - PIVOT) + SHIFT.
PIVOT, SCALE, SHIFT = 25.0, 2.0, 0.004
# The map is exact in double precision, but a workbook may round its limits and sigmas to the
# 5 decimals accepted (5e-6 after the edit, twice 5e-6 before it); pasted values miss by > 2e-3.
PROBE_TOL = LIM_TOL


def sheet(wb, name: str):
    return wb[name] if wb is not None and name in wb.sheetnames else None


def named(ws) -> dict[str, object]:
    """Column A label -> column B value (labels stripped, first occurrence kept)."""
    out: dict[str, object] = {}
    for row in ws.iter_rows(values_only=True) if ws is not None else []:
        if row and isinstance(row[0], str) and row[0].strip() and row[0].strip() not in out:
            out[row[0].strip()] = row[1] if len(row) > 1 else None
    return out


def data_rows(ws) -> dict[str, dict[str, object]]:
    """Data sheet rows keyed by subgroup number (as text), from the header row 1."""
    if ws is None:
        return {}
    head = next(ws.iter_rows(min_row=1, max_row=1, values_only=True), ())
    cols = {str(v).strip(): i for i, v in enumerate(head) if v is not None}
    if any(c not in cols for c in ["subgroup", *X_COLS, "excluded"]):
        return {}
    out: dict[str, dict[str, object]] = {}
    for row in ws.iter_rows(min_row=2, values_only=True):
        k = as_number(row[cols["subgroup"]] if cols["subgroup"] < len(row) else None)
        if k is None or k != int(k):
            continue
        key = str(int(k))
        if key in out:
            out[key]["_dup"] = True
            continue
        out[key] = {c: (row[i] if i < len(row) else None) for c, i in cols.items()}
    return out


def values(wb) -> dict[str, float | None]:
    lim, cap = named(sheet(wb, "Limits")), named(sheet(wb, "Capability"))
    got = {k: as_number(lim.get(k), text=False) for k in LIMIT_KEYS}
    got.update({k: as_number(cap.get(k), text=False) for k in [*CAP_KEYS, "LSL", "USL"]})
    return got


def probe_copy(ctx: GradeContext, vals) -> tuple[Path | Outcome, int] | None:
    """The workbook with every Data measurement mapped (a formula's recalculated value in vals),
    saved in scratch, and how many were mapped. None when vals is None and a measurement is not
    a number: it needs the recalculated workbook."""
    wb, ok = load_xlsx(ctx.out(WORKBOOK), data_only=False)
    ws = sheet(wb, "Data")
    if ws is None:
        return Outcome(False, ok.message if wb is None else "no Data sheet"), 0
    head = next(ws.iter_rows(min_row=1, max_row=1, values_only=True), ())
    cols = [i for i, v in enumerate(head) if isinstance(v, str) and v.strip() in X_COLS]
    if len(cols) != len(X_COLS):
        return Outcome(False, "Data lacks the x1..x5 columns"), 0
    if vals is None and any(as_number(row[i].value, text=False) is None
                            for row in ws.iter_rows(min_row=2) for i in cols if i < len(row)):
        return None
    mapped = 0
    for row in ws.iter_rows(min_row=2):
        for i in cols:
            cell = row[i] if i < len(row) else None
            v = as_number(cell.value, text=False) if cell is not None else None
            if v is None and cell is not None and vals is not None:  # a formula: take its recalculated value
                v = as_number(vals["Data"].cell(row=cell.row, column=cell.column).value, text=False)
            if v is not None and cell is not None:
                cell.value = PIVOT + SCALE * (v - PIVOT) + SHIFT
                mapped += 1
    edited = ctx.scratch / "probe.xlsx"
    try:
        wb.save(edited)
    except Exception as e:  # openpyxl can fail to re-save exotic content
        return Outcome(False, f"could not write the edited workbook: {type(e).__name__}: {e}"), mapped
    return edited, mapped


def probe(ctx: GradeContext, base: dict[str, float | None], copy: tuple[Path | Outcome, int],
          batch: Recalculated | None) -> Outcome:
    """Recalculate probe_copy's workbook (in batch when it was made before the recalculation) and
    compare with what the map implies."""
    edited, mapped = copy
    if isinstance(edited, Outcome):
        return edited
    path, ok = batch.get("probe") if batch is not None else recalculate_xlsx(edited, ctx.scratch, "probe")
    if path is None:
        return ok
    after = values(load_xlsx(path, data_only=True).value)
    parts = []
    for k in LIMIT_KEYS:
        b = base.get(k)
        if b is None:
            parts.append((k, Outcome(False, "no value before the edit")))
            continue
        want = (PIVOT + SCALE * (b - PIVOT) + SHIFT) if k.startswith("xbar") else SCALE * b
        parts.append((k, near(after.get(k), want, abs=PROBE_TOL)))
    for k in ("sigma_within", "sigma_overall"):
        b = base.get(k)
        parts.append((k, near(after.get(k), None if b is None else SCALE * b, abs=PROBE_TOL)))
    for k in ("Cpk", "Ppk", "ppm_expected"):
        b, a = base.get(k), after.get(k)
        parts.append((k, Outcome(a is not None and b is not None and abs(a - b) > 1e-9,
                                 "moved" if a is not None and b is not None and a != b else "did not move",
                                 expected="a new value", seen=a)))
    if mapped < 100:
        parts.append(("measurements mapped", Outcome(False, f"only {mapped} numeric x cells", expected=">= 100")))
    return all_of(parts)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    src = ctx.out(WORKBOOK)
    formulas_wb, readable = load_xlsx(src, data_only=False)
    r.gate(f"{WORKBOOK} is a readable XLSX workbook", readable)
    recalc_path, recalc_ok = (None, Outcome(False, "no workbook"))
    # With numbers only in x1..x5 the edited copy needs no recalculated value: one LibreOffice run for both.
    early: tuple[Path | Outcome, int] | None = None
    batch: Recalculated | None = None
    if formulas_wb is not None:
        early = probe_copy(ctx, None)
        with_probe = {"probe": early[0]} if early is not None and isinstance(early[0], Path) else {}
        batch = Recalculated({"main": src, **with_probe}, ctx.scratch)
        recalc_path, recalc_ok = batch.get("main")
    r.gate("LibreOffice recalculates the workbook", recalc_ok)
    wb = load_xlsx(recalc_path, data_only=True).value if recalc_path else None
    got = values(wb)
    lim, cap = ref["limits"], ref["capability"]

    r.gate("the study is live: limits follow an edit of the Data measurements, sigmas double",
           probe(ctx, got, early or probe_copy(ctx, wb), batch if early else None) if wb is not None
           else Outcome(False, "no recalculated workbook"))
    # Crux: the Phase-I centre line, coarse (1 µm): cleaning skipped or an inch subgroup kept is far off.
    r.gate("Phase-I X̄ centre line within 1 µm of the reference", near(got["xbar_CL"], lim["xbar_CL"], abs=CL_GATE))

    rows = data_rows(sheet(wb, "Data"))
    dups = sorted(k for k, v in rows.items() if v.get("_dup"))
    expected_rows = {k: dict(zip(X_COLS, xs, strict=True)) for k, xs in ref["data"].items()}
    r.check("Data: one row per subgroup, every measurement in mm", 2, all_of([
        ("no subgroup twice", Outcome(not dups, f"repeated: {dups}" if dups else "none", expected=[], seen=dups)),
        ("rows", match_rows(rows, expected_rows, X_COLS, abs=X_TOL, text=False, only=True)),
    ]))
    flagged = sorted(int(k) for k, v in rows.items() if (as_number(v.get("excluded"), text=False) or 0) != 0)
    r.check("Phase I: the excluded subgroups (signal with an assignable cause, iterated)", 3,
            same_set(flagged, ref["excluded_subgroups"]) if rows else Outcome(False, "no Data rows"))
    r.check("X̄ chart limits", 3, all_of([(k, near(got[k], lim[k], abs=LIM_TOL)) for k in LIMIT_KEYS[:3]]))
    r.check("R chart limits", 2, all_of([(k, near(got[k], lim[k], abs=LIM_TOL)) for k in LIMIT_KEYS[3:]]))
    r.check("specification limits of Ø25 H7 (ISO 286)", 1, all_of(
        [(k, near(got[k], v, abs=1e-6)) for k, v in ref["spec"].items()]))
    r.check("within capability: sigma from R̄/d2, Cp, Cpk", 2, all_of([
        ("sigma_within", near(got["sigma_within"], cap["sigma_within"], abs=LIM_TOL)),
        ("Cp", near(got["Cp"], cap["Cp"], abs=IDX_TOL)), ("Cpk", near(got["Cpk"], cap["Cpk"], abs=IDX_TOL))]))
    r.check("overall performance: sigma from all retained readings, Pp, Ppk", 2, all_of([
        ("sigma_overall", near(got["sigma_overall"], cap["sigma_overall"], abs=LIM_TOL)),
        ("Pp", near(got["Pp"], cap["Pp"], abs=IDX_TOL)), ("Ppk", near(got["Ppk"], cap["Ppk"], abs=IDX_TOL))]))
    r.check("expected ppm out of specification (within sigma, normal)", 1,
            near(got["ppm_expected"], cap["ppm_expected"], rel=PPM_REL, abs=PPM_ABS))
    errors = [f"{ws.title}!{c.coordinate}" for ws in (wb.worksheets if wb is not None else [])
              for row in ws.iter_rows() for c in row if is_error_value(c.value)]
    r.check("no error values after recalculation", 1, Outcome(
        wb is not None and not errors, "no workbook" if wb is None else f"{len(errors)} error cells",
        expected="none", seen=errors[:8] or None))

    summary, parsed = load_json(ctx.out("summary.json"))
    r.check("summary.json: trial-chart signals", 2,
            same_set(get(summary, "trial_signals"), ref["trial_signals"]) if parsed.passed else parsed)
    r.check("summary.json: excluded subgroups and number of subgroups", 1, all_of([
        ("excluded_subgroups", same_set(get(summary, "excluded_subgroups"), ref["excluded_subgroups"])),
        ("n_subgroups", near(get(summary, "n_subgroups"), ref["n_subgroups"], abs=0))]) if parsed.passed else parsed)
    want = {**{f"xbar_chart.{k[5:]}": lim[k] for k in LIMIT_KEYS[:3]}, **{f"r_chart.{k[2:]}": lim[k] for k in LIMIT_KEYS[3:]},
            **{f"spec.{k}": v for k, v in ref["spec"].items()}}
    parts = [(k, near(get(summary, k), v, abs=LIM_TOL)) for k, v in want.items()]
    parts += [(k, near(get(summary, k), cap[k], abs=LIM_TOL if k.startswith("sigma") else IDX_TOL))
              for k in CAP_KEYS[:-1]]
    parts.append(("ppm_expected", near(get(summary, "ppm_expected"), cap["ppm_expected"], rel=PPM_REL, abs=PPM_ABS)))
    r.check("summary.json: limits, sigmas, indices and ppm", 1, all_of(parts) if parsed.passed else parsed)
    return r
