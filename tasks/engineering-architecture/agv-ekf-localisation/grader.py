"""Grader for agv-ekf-localisation.

The agent's pose track is compared with the hidden ground truth (position and heading errors,
NEES with its own covariances) and its rejected observations with the injected outliers. The
bounds are ratios to a reference EKF computed in generate.py in plain Python.
"""

from __future__ import annotations

import math

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    as_number,
    load_csv,
    no_problems,
    rows_by,
    within,
)

COLUMNS = ["t_s", "x_m", "y_m", "theta_rad", "p_xx", "p_xy", "p_xt", "p_yy", "p_yt", "p_tt"]
CRUX_RMSE_M = 0.10
RATIO = 1.3
NEES_BAND = (1.5, 5.0)
HEADING_NEES_BAND = (0.5, 1.67)
RECALL_MIN, PRECISION_MIN = 0.95, 0.90


def tenth(row: dict) -> int:
    t = as_number(row["t_s"])
    if t is None:
        raise ValueError(row["t_s"])
    return round(t * 10)


def wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


def nees(e: list[float], p: list[float]) -> float | None:
    """e^T P^-1 e for P given as xx, xy, xt, yy, yt, tt; None when P is singular."""
    a, b, c, d, f, g = p
    det = a * (d * g - f * f) - b * (b * g - f * c) + c * (b * f - d * c)
    if not det > 0:
        return None
    inv = [[d * g - f * f, c * f - b * g, b * f - c * d],
           [c * f - b * g, a * g - c * c, b * c - a * f],
           [b * f - c * d, b * c - a * f, a * d - b * b]]
    return sum(e[i] * inv[i][j] * e[j] for i in range(3) for j in range(3)) / det


def psd_problem(p: list[float]) -> str | None:
    """Covariance valid to the stated 4 significant digits: positive variances, correlations
    within 1 (+0.2 % for rounding), a non-negative determinant up to the same rounding."""
    a, b, c, d, f, g = p
    if min(a, d, g) <= 0:
        return "non-positive variance"
    sd = [math.sqrt(a), math.sqrt(d), math.sqrt(g)]  # apart: a product of tiny variances underflows
    if min(sd[0] * sd[1], sd[0] * sd[2], sd[1] * sd[2]) <= 0:
        return "variance too small to represent"
    corr = [abs(b) / (sd[0] * sd[1]), abs(c) / (sd[0] * sd[2]), abs(f) / (sd[1] * sd[2])]
    if max(corr) > 1.002:
        return f"correlation {max(corr):.4f} > 1"
    det = a * (d * g - f * f) - b * (b * g - f * c) + c * (b * f - d * c)
    if det < -1e-3 * a * d * g:
        return "negative determinant"
    return None


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    base = ref["reference_ekf"]
    truth_rows, _ = load_csv(ctx.ref("truth.csv"))
    truth = {tenth(t): (float(t["x_m"]), float(t["y_m"]), float(t["theta_rad"])) for t in truth_rows}

    rows, ok = load_csv(ctx.out("trajectory.csv"), required_columns=COLUMNS)
    r.gate("trajectory.csv has the required columns", ok)
    keyed = rows_by(rows or [], tenth)
    r.gate("one pose per odometry timestamp", keyed.coverage(sorted(truth)))

    errs, herrs, nees_vals, hnees_vals, bad_rows, cov_problems = [], [], [], [], [], []
    for key in sorted(truth):
        row = keyed.get(key) if keyed else None
        vals = [as_number(row.get(c)) for c in COLUMNS[1:]] if row else [None]
        if any(v is None for v in vals):
            bad_rows.append(f"t={key / 10:.1f}: missing or non-numeric values")
            continue
        x, y, th, *p = vals
        tx, ty, tth = truth[key]
        e = [x - tx, y - ty, wrap(th - tth)]
        errs.append(math.hypot(e[0], e[1]))
        herrs.append(abs(e[2]))
        problem = psd_problem(p)
        if problem:
            cov_problems.append(f"t={key / 10:.1f}: {problem}")
        value = nees(e, p)
        nees_vals.append(value if value is not None else math.inf)
        hnees_vals.append(e[2] ** 2 / p[5] if p[5] > 0 else math.inf)
    r.gate("every pose row is numeric", no_problems(bad_rows, "all numeric"))

    n = len(errs)
    rmse = math.sqrt(sum(v * v for v in errs) / n) if n else math.inf
    hrmse = math.sqrt(sum(v * v for v in herrs) / n) if n else math.inf
    p95 = sorted(errs)[int(0.95 * n)] if n else math.inf
    mean_nees = sum(nees_vals) / n if n else math.inf
    mean_hnees = sum(hnees_vals) / n if n else math.inf
    r.gate(f"position RMSE under {CRUX_RMSE_M} m: the filter localises", within(rmse, 0, CRUX_RMSE_M))
    # Bounds: 1.3x the reference EKF, room for another valid filter design and for rounding.
    r.check(f"position RMSE within {RATIO}x the reference EKF", 3, within(rmse, 0, RATIO * base["pos_rmse_m"]))
    r.check(f"heading RMSE within {RATIO}x the reference EKF", 2, within(hrmse, 0, RATIO * base["heading_rmse_rad"]))
    r.check(f"95th-percentile position error within {RATIO}x the reference EKF", 1,
            within(p95, 0, RATIO * base["pos_p95_m"]))
    # NEES bands: about 1/2 to 5/3 of the degrees of freedom. The errors are strongly
    # correlated in time, so the effective sample is small and the chi-square band of an
    # independent sample would be far too tight.
    r.check(f"consistent: mean pose NEES (3 dof) in [{NEES_BAND[0]}, {NEES_BAND[1]}]", 2, within(mean_nees, *NEES_BAND))
    r.check(f"consistent heading: mean heading NEES (1 dof) in [{HEADING_NEES_BAND[0]}, {HEADING_NEES_BAND[1]}]", 1,
            within(mean_hnees, *HEADING_NEES_BAND))
    r.check("every covariance is a valid covariance", 1, no_problems(cov_problems, "symmetric positive semi-definite"))

    rej_rows, rej_ok = load_csv(ctx.out("rejected.csv"), required_columns=["obs_id"])
    ids = {as_number(v.get("obs_id")) for v in rej_rows or []}
    outliers = {float(i) for i in ref["outliers"]}
    hits = len(ids & outliers)
    recall = hits / len(outliers)
    precision = hits / len(ids) if ids else 0.0
    r.check("rejected observations match the outliers (recall >= 0.95, precision >= 0.90)", 2, Outcome(
        bool(rej_ok) and recall >= RECALL_MIN and precision >= PRECISION_MIN,
        f"recall {recall:.3f}, precision {precision:.3f}" if rej_ok else rej_ok.message,
        expected=f"{len(outliers)} injected outliers", seen=f"{len(ids)} rejected, {hits} of them outliers"))
    return r
