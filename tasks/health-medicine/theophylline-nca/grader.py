"""Grader for theophylline-nca.

Tolerances: the instruction asks for at least 5 significant digits, so a correct value is off
by at most 5e-5 relative; 1e-3 relative leaves room for that rounding and for summation order,
while the typical method errors (linear-down trapezoid, BLQ as zero, wrong lambda_z points,
dose not scaled by weight) move the affected values by well over 0.3 %.
%AUCextrap is a percentage near 10-40, so 0.05 percentage points is the same relative room."""

from lastexam.grading import GradeContext, Outcome, Rubric, as_number, load_csv

SUBJECT_COLUMNS = [
    "SUBJID", "DOSE_MG", "CMAX", "TMAX", "TLAST", "CLAST", "AUCLAST", "LAMBDA_Z", "LZ_N",
    "LZ_TSTART", "LZ_ADJR2", "THALF", "AUCINF", "AUC_PCTEXTRAP", "CLF", "VZF", "FLAG",
]
SUMMARY_COLUMNS = ["PARAM", "N", "MEAN", "SD", "GEOMEAN", "GEOCV_PCT", "MEDIAN", "MIN", "MAX"]
REL = 1e-3


def _close(seen, expected: float, rel: float = REL, abs_tol: float = 0.0) -> bool:
    value = as_number(seen)
    return value is not None and abs(value - expected) <= max(abs_tol, rel * abs(expected))


def _per_subject(rows: dict, ref: dict, columns: list[str], *, rel=REL, abs_tol=0.0, exact=False) -> Outcome:
    """Every subject's value of each column against the reference; evidence lists the misses."""
    misses = []
    for sid in sorted(ref):
        row = rows.get(sid)
        for col in columns:
            want = ref[sid][col]
            got = None if row is None else row.get(col)
            if exact:
                ok = got is not None and str(got).strip() == str(want)
            else:
                ok = _close(got, want, rel, abs_tol)
            if not ok:
                misses.append({"subject": sid, "column": col, "expected": want, "seen": got})
    n = len(ref) * len(columns)
    if not misses:
        return Outcome(True, f"all {n} values match")
    return Outcome(False, f"{len(misses)} of {n} values differ", expected="reference values", seen=misses[:6])


def _per_param(rows: dict, ref: dict, stats: list[str], params=None) -> Outcome:
    misses = []
    for p in sorted(params or ref):
        for stat in stats:
            if stat not in ref[p]:
                continue
            got = rows.get(p, {}).get(stat)
            if not _close(got, ref[p][stat], abs_tol=1e-9):
                misses.append({"param": p, "stat": stat, "expected": ref[p][stat], "seen": got})
    if not misses:
        return Outcome(True, "all summary values match")
    return Outcome(False, f"{len(misses)} summary values differ", expected="reference values", seen=misses[:6])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    subjects_ref, summary_ref = ref["subjects"], ref["summary"]

    rows, ok = load_csv(ctx.out("nca_subject.csv"), required_columns=SUBJECT_COLUMNS)
    r.gate("nca_subject.csv has the required columns", ok)
    by_id = {row.get("SUBJID"): row for row in rows or []}

    seen_ids = sorted(k for k in by_id if k)
    r.check(
        "one row per subject, every subject present",
        1,
        Outcome(
            seen_ids == sorted(subjects_ref) and len(rows or []) == len(subjects_ref),
            f"{len(rows or [])} rows",
            expected=sorted(subjects_ref),
            seen=seen_ids,
        ),
    )
    r.check("dose in mg is mg/kg times body weight", 1, _per_subject(by_id, subjects_ref, ["DOSE_MG"]))
    r.check("Cmax and Tmax", 1, _per_subject(by_id, subjects_ref, ["CMAX", "TMAX"]))
    r.check("Tlast and Clast are the last quantifiable sample", 1, _per_subject(by_id, subjects_ref, ["TLAST", "CLAST"]))
    r.check("AUC0-tlast by linear-up/log-down", 2, _per_subject(by_id, subjects_ref, ["AUCLAST"]))
    r.check(
        "lambda_z point selection (LZ_N, LZ_TSTART)",
        2,
        _per_subject(by_id, subjects_ref, ["LZ_N", "LZ_TSTART"], abs_tol=1e-6),
    )
    # Adjusted R^2 near 1: an absolute 1e-4 is the precision the selection rule itself uses.
    lz = _per_subject(by_id, subjects_ref, ["LAMBDA_Z", "THALF"])
    adj = _per_subject(by_id, subjects_ref, ["LZ_ADJR2"], rel=0.0, abs_tol=1e-4)
    r.check(
        "lambda_z, half-life and adjusted R2",
        1,
        Outcome(lz.passed and adj.passed, f"{lz.message}; adjusted R2: {adj.message}", lz.expected or adj.expected, lz.seen or adj.seen),
    )
    r.check("AUC0-inf", 1, _per_subject(by_id, subjects_ref, ["AUCINF"]))
    r.check("%AUC extrapolated", 1, _per_subject(by_id, subjects_ref, ["AUC_PCTEXTRAP"], rel=0.0, abs_tol=0.05))
    r.check("CL/F and Vz/F", 1, _per_subject(by_id, subjects_ref, ["CLF", "VZF"]))
    r.check("flag for %AUCextrap > 20 %", 1, _per_subject(by_id, subjects_ref, ["FLAG"], exact=True))

    srows, sok = load_csv(ctx.out("nca_summary.csv"), required_columns=SUMMARY_COLUMNS)
    by_param = {row.get("PARAM"): row for row in srows or []}
    if not sok:
        missing = Outcome(False, sok.message, expected=SUMMARY_COLUMNS)
        for name, w in [
            ("summary N per parameter (flagged subjects excluded from AUCINF, CLF, VZF)", 1),
            ("summary arithmetic statistics", 1),
            ("summary geometric mean and geometric CV%", 2),
        ]:
            r.check(name, w, missing)
        return r
    n_miss = [
        {"param": p, "expected": summary_ref[p]["N"], "seen": by_param.get(p, {}).get("N")}
        for p in sorted(summary_ref)
        if not _close(by_param.get(p, {}).get("N"), summary_ref[p]["N"], rel=0.0, abs_tol=0.0)
    ]
    r.check(
        "summary N per parameter (flagged subjects excluded from AUCINF, CLF, VZF)",
        1,
        Outcome(not n_miss, "N as expected" if not n_miss else f"{len(n_miss)} parameters differ", "reference N", n_miss or None),
    )
    r.check("summary arithmetic statistics", 1, _per_param(by_param, summary_ref, ["MEAN", "SD", "MEDIAN", "MIN", "MAX"]))
    r.check(
        "summary geometric mean and geometric CV%",
        2,
        _per_param(by_param, summary_ref, ["GEOMEAN", "GEOCV_PCT"], [p for p in summary_ref if p != "TMAX"]),
    )
    return r
