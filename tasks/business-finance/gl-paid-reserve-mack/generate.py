"""Seeded generator for paid-loss-reserve-mack.

Simulates a general-liability book's claims (accident years 2016-2025) and writes the claims
department's payment extract, the earned premium and plan loss ratios (inputs/), and the
reference reserve figures computed from the simulated payments themselves (reference/).

Planted problems in the extract: salvage and subrogation recoveries stored as positive amounts
under their own codes, ALAE payments mixed in, payments booked after the valuation date (the
extract was pulled in February), and rows repeated by an overlap of two monthly loads.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "solution"))
import reserving  # noqa: E402

SEED = 1993
CANARY = "56f247e1-dcb3-412f-8235-8e337295232d"
YEARS = list(range(2016, 2026))
VALUATION = date(2025, 12, 31)
EXTRACT_END = date(2026, 2, 13)


def _day(rng: np.random.Generator, start: date, years: float) -> date:
    return start + timedelta(days=int(years * 365.25))


def simulate(rng: np.random.Generator):
    premium = {y: round(6.0e6 * 1.06 ** (y - 2016) * float(rng.uniform(0.95, 1.05)), -3) for y in YEARS}
    plan = {y: round(float(rng.uniform(0.64, 0.70)), 3) for y in YEARS}
    rows = []  # (claim_id, accident, report, paid_on, code, amount)
    n_claim = 0
    for y in YEARS:
        for _ in range(int(rng.poisson(premium[y] / 42000.0))):
            n_claim += 1
            cid = f"GL{y % 100:02d}-{n_claim:05d}"
            acc = date(y, 1, 1) + timedelta(days=int(rng.integers(0, 365)))
            rep = acc + timedelta(days=int(rng.exponential(120)))
            sev = float(rng.lognormal(np.log(16000.0), 1.0))
            k = int(rng.integers(1, 5))
            shares = rng.dirichlet(np.ones(k))
            lags = np.sort(rng.gamma(2.0, 1.0, size=k)) + (rep - acc).days / 365.25
            for s, lag in zip(shares, lags, strict=True):
                rows.append((cid, acc, rep, _day(rng, acc, float(lag)), "IND", round(sev * float(s), 2)))
            for _ in range(int(rng.integers(1, 3))):
                lag = float(rng.uniform(0.1, lags[-1] + 0.2))
                rows.append((cid, acc, rep, _day(rng, acc, lag), "ALAE", round(sev * float(rng.uniform(0.04, 0.09)), 2)))
            if rng.random() < 0.12:
                code = "SUB" if rng.random() < 0.6 else "SAL"
                lag = float(lags[-1] + rng.uniform(0.3, 1.5))
                rows.append((cid, acc, rep, _day(rng, acc, lag), code, round(sev * float(rng.uniform(0.15, 0.5)), 2)))
    return premium, plan, rows


def truth_triangle(rows) -> np.ndarray:
    n = len(YEARS)
    inc = np.zeros((n, n))
    for _, acc, _, paid, code, amt in rows:
        if paid > VALUATION or code == "ALAE":
            continue
        inc[acc.year - YEARS[0], paid.year - acc.year] += -amt if code in ("SAL", "SUB") else amt
    tri = np.cumsum(inc, axis=1)
    for i in range(n):
        tri[i, n - i:] = np.nan
    return tri


def write_inputs(rng: np.random.Generator, premium, plan, rows, inputs: Path) -> None:
    inputs.mkdir(parents=True, exist_ok=True)
    kept = [r for r in rows if r[3] <= EXTRACT_END]
    kept.sort(key=lambda r: (r[3], r[0], r[4], r[5]))
    out = []
    for n, r in enumerate(kept):
        out.append((f"P{700001 + n}",) + r)
        if rng.random() < 0.015:
            out.append((f"P{700001 + n}",) + r)
    with (inputs / "claim_payments.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["payment_id", "claim_id", "accident_date", "report_date", "payment_date", "transaction_code", "amount"])
        for pid, cid, acc, rep, paid, code, amt in out:
            w.writerow([pid, cid, acc.isoformat(), rep.isoformat(), paid.isoformat(), code, f"{amt:.2f}"])
    with (inputs / "premium.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["accident_year", "earned_premium", "plan_loss_ratio"])
        for y in YEARS:
            w.writerow([y, f"{premium[y]:.0f}", f"{plan[y]:.3f}"])


def reference(premium, plan, rows) -> dict:
    tri = truth_triangle(rows)
    f, s2, latest, ult, se, total_se = reserving.mack(tri)
    cdf = ult / latest
    ep = np.array([premium[y] for y in YEARS])
    elr = np.array([plan[y] for y in YEARS])
    bf_ult = reserving.bf(latest, cdf, ep, elr)
    cc_elr, cc_ult = reserving.cape_cod(latest, cdf, ep)
    n = len(YEARS)
    r8 = lambda v: round(float(v), 8)  # noqa: E731  (8 decimals: under every tolerance, over BLAS noise)
    return {
        "canary": CANARY,
        "triangle": [{"accident_year": YEARS[i], "dev_months": 12 * (j + 1), "cumulative_paid": round(float(tri[i, j]), 2)}
                     for i in range(n) for j in range(n - i)],
        "ldf": {f"{12 * (j + 1)}-{12 * (j + 2)}": r8(f[j]) for j in range(n - 1)},
        "sigma2": [r8(v) for v in s2],
        "origins": [{"accident_year": YEARS[i], "paid_to_date": round(float(latest[i]), 2), "cdf": r8(cdf[i]),
                     "cl_ultimate": r8(ult[i]), "cl_reserve": r8(ult[i] - latest[i]), "mack_se": r8(se[i]),
                     "bf_ultimate": r8(bf_ult[i]), "cc_ultimate": r8(cc_ult[i])} for i in range(n)],
        "total": {"paid_to_date": round(float(latest.sum()), 2), "cl_reserve": r8((ult - latest).sum()),
                  "mack_se": r8(total_se), "mack_cv": r8(total_se / (ult - latest).sum()),
                  "bf_reserve": r8((bf_ult - latest).sum()), "cc_reserve": r8((cc_ult - latest).sum()),
                  "cape_cod_elr": r8(cc_elr)},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=HERE)
    out = ap.parse_args().out
    rng = np.random.default_rng(SEED)
    premium, plan, rows = simulate(rng)
    write_inputs(rng, premium, plan, rows, out / "inputs")
    (out / "reference").mkdir(parents=True, exist_ok=True)
    ref = reference(premium, plan, rows)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
