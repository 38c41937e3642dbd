"""Seeded generator of inputs/ and reference/ for credit-default-onnx-scorecard.

python3 generate.py --out DIR writes DIR/inputs/ and DIR/reference/.

A known data-generating process: the true probability of default within 12 months is a
fixed function of the application (no drift in P(default | x)); the application mix drifts.
Planted in the training extract: outcomes observed only up to the extract date (the last
twelve months of applications are immature), a post-outcome column (collections referral)
and a sequential identifier. The hidden test set is a later quarter with complete outcomes,
scored as at decision time (no collections referral yet) and with a purpose code the
training data never saw.
"""

from __future__ import annotations

import argparse
import json
from datetime import date, timedelta
from pathlib import Path

import numpy as np

SEED = 20240731
CANARY = "be7b87ce-7a1e-4997-9c14-862fb3e8f3c2"
EXTRACT = date(2024, 7, 31)
TRAIN_START, TRAIN_END = date(2022, 8, 1), date(2024, 7, 31)
TEST_START, TEST_END = date(2024, 10, 1), date(2024, 12, 31)
N_TRAIN, N_TEST = 10000, 5000
CHANNELS = ["branch", "online", "broker"]
HOMES = ["rent", "mortgage", "own"]
PURPOSES = ["debt_consolidation", "home_improvement", "car", "medical", "other"]
NEW_PURPOSE = "green_energy"
NUMERIC = ["application_id", "age", "annual_income", "months_employed", "debt_to_income", "credit_score",
           "loan_amount", "term_months", "n_delinquencies_2y", "revolving_utilization", "collections_flag"]
CATEGORICAL = ["channel", "home_ownership", "purpose"]
EFFECT = {"channel": {"branch": -0.15, "online": 0.1, "broker": 0.3},
          "home_ownership": {"rent": 0.25, "mortgage": -0.1, "own": -0.2},
          "purpose": {"debt_consolidation": 0.2, "home_improvement": -0.15, "car": -0.1, "medical": 0.35, "other": 0.1,
                      NEW_PURPOSE: -0.15}}
DICTIONARY = """# Data dictionary: consumer instalment loan applications

`applications_train.csv`: one row per funded application, extracted from the loan servicing
warehouse on 2024-07-31. Every funded loan originated from 2022-08-01 to 2024-07-31.

| column | meaning |
|---|---|
| application_id | sequential number given by the origination system |
| application_date | date the application was decided and funded |
| age | applicant age in years |
| annual_income | stated gross annual income, USD |
| months_employed | months with the current employer; empty when not stated |
| debt_to_income | monthly debt payments / monthly gross income, before the new loan |
| credit_score | bureau score at application (300-850) |
| loan_amount | principal, USD |
| term_months | 36 or 60 |
| n_delinquencies_2y | 30+ day delinquencies on the bureau file in the last two years |
| revolving_utilization | revolving balances / revolving limits (can exceed 1) |
| channel | branch, online or broker |
| home_ownership | rent, mortgage or own |
| purpose | loan purpose code; the product team adds codes from time to time |
| collections_flag | 1 if the account has been referred to the collections agency |
| default_12m | 1 if the loan reached default (90+ days past due or charged off) within 12 months of origination, as recorded in the servicing system at the extract date |
"""


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def applications(rng: np.random.Generator, n: int, start: date, end: date, test: bool) -> dict[str, np.ndarray]:
    days = (end - start).days + 1
    day = np.sort(rng.integers(0, days, n))
    t = day / days
    c = {}
    c["application_date"] = np.array([(start + timedelta(days=int(d))).isoformat() for d in day])
    c["age"] = np.clip(np.round(rng.normal(41, 12, n)), 21, 75)
    shift = 15.0 if test else 10.0 * t  # the applicant mix drifts towards lower scores
    c["credit_score"] = np.clip(np.round(rng.normal(690 - shift, 55, n)), 300, 850)
    c["annual_income"] = np.round(np.exp(rng.normal(np.log(62000), 0.45, n)) / 100) * 100
    me = np.round(rng.gamma(2.0, 30.0, n))
    me[rng.random(n) < 0.09] = np.nan
    c["months_employed"] = me
    c["debt_to_income"] = np.round(np.clip(rng.beta(2.2, 6.0, n) * 0.9, 0, 0.85), 3)
    c["loan_amount"] = np.round(np.clip(np.exp(rng.normal(np.log(14000), 0.6, n)), 1000, 60000) / 50) * 50
    c["term_months"] = np.where(rng.random(n) < 0.35, 60.0, 36.0)
    c["n_delinquencies_2y"] = rng.poisson(np.clip(0.25 + (700 - c["credit_score"]) / 400, 0.02, 2.0)).astype(float)
    c["revolving_utilization"] = np.round(np.clip(rng.gamma(2.5, 0.16, n), 0, 1.6), 3)
    online = 0.45 + (0.1 if test else 0.1 * t)
    u = rng.random(n)
    c["channel"] = np.where(u < online, "online", np.where(u < online + 0.2, "broker", "branch"))
    c["home_ownership"] = rng.choice(HOMES, n, p=[0.4, 0.4, 0.2])
    probs = [0.4, 0.15, 0.2, 0.08, 0.17]
    c["purpose"] = rng.choice(PURPOSES, n, p=probs)
    if test:
        c["purpose"] = np.where(rng.random(n) < 0.06, NEW_PURPOSE, c["purpose"])
    return c


def true_probability(c: dict[str, np.ndarray]) -> np.ndarray:
    me = c["months_employed"]
    z = (-2.35 - 0.011 * (c["credit_score"] - 690) + 3.2 * (c["debt_to_income"] - 0.25)
         + 0.38 * c["n_delinquencies_2y"] + 0.9 * c["revolving_utilization"]
         + 1.6 * np.maximum(c["revolving_utilization"] - 0.9, 0) + 0.35 * (c["term_months"] == 60)
         - 0.35 * np.log(c["annual_income"] / 62000) + 0.000012 * (c["loan_amount"] - 14000)
         + np.where(np.isnan(me), 0.3, np.where(me < 12, 0.35, 0.0)) - 0.012 * (c["age"] - 41)
         + 0.00012 * (c["age"] - 41) ** 2)
    for col, eff in EFFECT.items():
        z = z + np.vectorize(eff.get)(c[col])
    return sigmoid(z)


def fmt(v) -> str:
    if isinstance(v, str):
        return v
    if np.isnan(v):
        return ""
    return f"{v:.10g}"


def write_csv(path: Path, cols: list[str], c: dict[str, np.ndarray]) -> None:
    n = len(c[cols[0]])
    lines = [",".join(cols)]
    for i in range(n):
        lines.append(",".join(fmt(c[k][i]) for k in cols))
    path.write_text("\n".join(lines) + "\n")


def auc(score: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(score, kind="mergesort")
    s, yy = score[order], y[order]
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2 + 1
        i = j + 1
    npos = int(yy.sum())
    nneg = len(yy) - npos
    return float((ranks[yy == 1].sum() - npos * (npos + 1) / 2) / (npos * nneg))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = np.random.default_rng(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)

    tr = applications(rng, N_TRAIN, TRAIN_START, TRAIN_END, test=False)
    p = true_probability(tr)
    defaulted = rng.random(N_TRAIN) < p
    month = rng.integers(1, 13, N_TRAIN)  # month of default after origination
    age_days = np.array([(EXTRACT - date.fromisoformat(d)).days for d in tr["application_date"]])
    observed = defaulted & (month * 30.44 <= age_days)
    tr["default_12m"] = observed.astype(float)
    tr["collections_flag"] = np.where(observed, (rng.random(N_TRAIN) < 0.8).astype(float),
                                      (rng.random(N_TRAIN) < 0.01).astype(float))
    tr["application_id"] = np.arange(N_TRAIN, dtype=float) * 3 + 100_000 + rng.integers(0, 3, N_TRAIN)
    cols = ["application_id", "application_date"] + NUMERIC[1:-1] + CATEGORICAL + ["collections_flag", "default_12m"]
    write_csv(out / "inputs" / "applications_train.csv", cols, tr)
    (out / "inputs" / "data_dictionary.md").write_text(DICTIONARY)
    schema = {"inputs": [{"name": k, "type": "float" if k != "application_id" else "int64"} for k in NUMERIC]
              + [{"name": k, "type": "string"} for k in CATEGORICAL]}
    (out / "inputs" / "scoring_schema.json").write_text(json.dumps(schema, indent=2) + "\n")

    te = applications(rng, N_TEST, TEST_START, TEST_END, test=True)
    pt = true_probability(te)
    yt = (rng.random(N_TEST) < pt).astype(float)
    te["application_id"] = np.arange(N_TEST, dtype=float) * 3 + 100_000 + 3 * N_TRAIN + 6000 + rng.integers(0, 3, N_TEST)
    te["collections_flag"] = np.zeros(N_TEST)
    te["p_true"] = np.round(pt, 8)
    te["default_12m"] = yt
    write_csv(out / "reference" / "test.csv", ["application_id", "application_date"] + NUMERIC[1:] + CATEGORICAL
              + ["p_true", "default_12m"], te)
    bayes = {"canary": CANARY, "n": N_TEST, "base_rate": round(float(yt.mean()), 6),
             "mean_p_true": round(float(pt.mean()), 6), "auc_bayes": round(auc(pt, yt), 6),
             "brier_bayes": round(float(np.mean((pt - yt) ** 2)), 6),
             "outcome_mature_through": (EXTRACT - timedelta(days=366)).isoformat(),
             "train_immature_share": round(float((age_days < 366).mean()), 4)}
    (out / "reference" / "truth.json").write_text(json.dumps(bayes, indent=2) + "\n")


if __name__ == "__main__":
    main()
