"""Grader for theophylline-nca.

Tolerances: the instruction asks for at least 5 significant digits, so a correct value is off
by at most 5e-5 relative; 1e-3 relative leaves room for that rounding and for summation order,
while the typical method errors (linear-down trapezoid, BLQ as zero, wrong lambda_z points,
dose not scaled by weight) move the affected values by well over 0.3 %.
%AUCextrap is a percentage near 10-40, so 0.05 percentage points is the same relative room."""

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, load_csv, match_rows, rows_by

SUBJECT_COLUMNS = [
    "SUBJID", "DOSE_MG", "CMAX", "TMAX", "TLAST", "CLAST", "AUCLAST", "LAMBDA_Z", "LZ_N",
    "LZ_TSTART", "LZ_ADJR2", "THALF", "AUCINF", "AUC_PCTEXTRAP", "CLF", "VZF", "FLAG",
]
SUMMARY_COLUMNS = ["PARAM", "N", "MEAN", "SD", "GEOMEAN", "GEOCV_PCT", "MEDIAN", "MIN", "MAX"]
REL = 1e-3


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    subjects_ref, summary_ref = ref["subjects"], ref["summary"]

    rows, ok = load_csv(ctx.out("nca_subject.csv"), required_columns=SUBJECT_COLUMNS)
    r.gate("nca_subject.csv has the required columns", ok)
    by_id = rows_by(rows, "SUBJID")
    r.check("one row per subject, every subject present", 1, by_id.coverage(subjects_ref))
    r.check("dose in mg is mg/kg times body weight", 1, match_rows(by_id, subjects_ref, ["DOSE_MG"], rel=REL))
    r.check("Cmax and Tmax", 1, match_rows(by_id, subjects_ref, ["CMAX", "TMAX"], rel=REL))
    r.check("Tlast and Clast are the last quantifiable sample", 1, match_rows(by_id, subjects_ref, ["TLAST", "CLAST"], rel=REL))
    r.check("AUC0-tlast by linear-up/log-down", 2, match_rows(by_id, subjects_ref, ["AUCLAST"], rel=REL))
    r.check(
        "lambda_z point selection (LZ_N, LZ_TSTART)",
        2,
        match_rows(by_id, subjects_ref, ["LZ_N", "LZ_TSTART"], rel=REL, abs=1e-6),
    )
    # Adjusted R^2 near 1: an absolute 1e-4 is the precision the selection rule itself uses.
    r.check("lambda_z, half-life and adjusted R2", 1, all_of([
        ("lambda_z and half-life", match_rows(by_id, subjects_ref, ["LAMBDA_Z", "THALF"], rel=REL)),
        ("adjusted R2", match_rows(by_id, subjects_ref, ["LZ_ADJR2"], rel=0.0, abs=1e-4)),
    ]))
    r.check("AUC0-inf", 1, match_rows(by_id, subjects_ref, ["AUCINF"], rel=REL))
    r.check("%AUC extrapolated", 1, match_rows(by_id, subjects_ref, ["AUC_PCTEXTRAP"], rel=0.0, abs=0.05))
    r.check("CL/F and Vz/F", 1, match_rows(by_id, subjects_ref, ["CLF", "VZF"], rel=REL))
    r.check("flag for %AUCextrap > 20 %", 1, match_rows(by_id, subjects_ref, ["FLAG"], exact=True))

    srows, sok = load_csv(ctx.out("nca_summary.csv"), required_columns=SUMMARY_COLUMNS)
    by_param = rows_by(srows, "PARAM")
    if not sok:
        missing = Outcome(False, sok.message, expected=SUMMARY_COLUMNS)
        for name, w in [
            ("summary N per parameter (flagged subjects excluded from AUCINF, CLF, VZF)", 1),
            ("summary arithmetic statistics", 1),
            ("summary geometric mean and geometric CV%", 2),
        ]:
            r.check(name, w, missing)
        return r
    r.check("summary N per parameter (flagged subjects excluded from AUCINF, CLF, VZF)", 1,
            match_rows(by_param, summary_ref, ["N"], exact=True))
    # Statistics of the per-subject values: the same relative room, 1e-9 for values near 0.
    r.check("summary arithmetic statistics", 1,
            match_rows(by_param, summary_ref, ["MEAN", "SD", "MEDIAN", "MIN", "MAX"], rel=REL, abs=1e-9))
    r.check("summary geometric mean and geometric CV%", 2,
            match_rows(by_param, {p: v for p, v in summary_ref.items() if p != "TMAX"}, ["GEOMEAN", "GEOCV_PCT"],
                       rel=REL, abs=1e-9))
    return r
