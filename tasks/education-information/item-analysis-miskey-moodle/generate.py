"""Seeded generator for item-analysis-miskey-moodle.

Simulates a 40-item multiple-choice algebra final taken on two forms (form B presents the items
in another order) and writes the LMS export, the form map, the item bank and the answer key
(inputs/), and the reference item statistics and scores computed from the simulated answers
with the true key (reference/).

Planted problems: one item keyed to a distractor in the answer key, form B's positions not in
item order, blank responses, and students who submitted twice (the last submission counts).
"""

from __future__ import annotations

import argparse
import csv
import json
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

SEED = 4040
CANARY = "2df21ad6-cb99-42f4-8913-6998279bc5d1"
N_ITEMS = 40
N_STUDENTS = 420
LETTERS = "ABCD"
MISKEYED = "Q23"


def items(rng: np.random.Generator):
    bank = []
    for i in range(N_ITEMS):
        a, x = int(rng.integers(2, 9)), int(rng.integers(2, 15))
        b = int(rng.integers(1, 30))
        c = a * x + b
        stem = f"Solve for x: {a}x + {b} = {c}"
        wrong = sorted({x + 1, x - 1, (c + b) // a if (c + b) % a == 0 else x + 2, c - b, x * 2} - {x})[:3]
        while len(wrong) < 3:
            wrong.append(x + 3 + len(wrong))
        opts = [x] + wrong[:3]
        assert len(set(opts)) == 4, stem
        order = rng.permutation(4)
        options = [str(opts[k]) for k in order]
        key = LETTERS[int(np.where(order == 0)[0][0])]
        bank.append({"item_id": f"Q{i + 1:02d}", "stem": stem, "options": options, "key": key,
                     "a": float(rng.uniform(0.7, 1.9)), "b": float(rng.normal(0.0, 0.9)),
                     "lure": int(rng.integers(1, 4))})
    return bank


def responses(rng: np.random.Generator, bank):
    theta = rng.normal(0.0, 1.0, N_STUDENTS)
    out = np.empty((N_STUDENTS, N_ITEMS), dtype=object)
    for j, it in enumerate(bank):
        p = 0.2 + 0.8 / (1.0 + np.exp(-1.7 * it["a"] * (theta - it["b"])))
        right = rng.random(N_STUDENTS) < p
        key_idx = LETTERS.index(it["key"])
        distract = [k for k in range(4) if k != key_idx]
        probs = np.full(3, 0.2)
        probs[it["lure"] - 1] = 0.6
        picks = rng.choice(3, size=N_STUDENTS, p=probs)
        for s in range(N_STUDENTS):
            out[s, j] = it["key"] if right[s] else LETTERS[distract[picks[s]]]
            if rng.random() < 0.012:
                out[s, j] = ""
    return out


def write_inputs(rng: np.random.Generator, bank, ans, inputs: Path):
    inputs.mkdir(parents=True, exist_ok=True)
    perm_b = [int(k) for k in rng.permutation(N_ITEMS)]
    forms = {"A": list(range(N_ITEMS)), "B": perm_b}
    with (inputs / "form_map.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["form", "position", "item_id"])
        for form in ("A", "B"):
            for pos, j in enumerate(forms[form]):
                w.writerow([form, pos + 1, bank[j]["item_id"]])
    with (inputs / "item_bank.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "stem", "option_a", "option_b", "option_c", "option_d"])
        for it in bank:
            w.writerow([it["item_id"], it["stem"], *it["options"]])
    with (inputs / "answer_key.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item_id", "key"])
        for it in bank:
            key = it["key"]
            if it["item_id"] == MISKEYED:
                distract = [k for k in range(4) if LETTERS[k] != it["key"]]
                key = LETTERS[distract[it["lure"] - 1]]
            w.writerow([it["item_id"], key])
    start = datetime(2026, 5, 18, 9, 0, 0)
    form_of = ["A" if rng.random() < 0.5 else "B" for _ in range(N_STUDENTS)]
    twice = set(int(k) for k in rng.choice(N_STUDENTS, size=9, replace=False))
    rows = []
    for s in range(N_STUDENTS):
        sid = f"S{24000 + s * 7}"
        when = start + timedelta(seconds=int(rng.integers(1800, 5400)))
        by_pos = [ans[s, j] for j in forms[form_of[s]]]
        if s in twice:
            early = [LETTERS[int(k)] if rng.random() < 0.5 else "" for k in rng.integers(0, 4, N_ITEMS)]
            rows.append((sid, form_of[s], when - timedelta(minutes=int(rng.integers(20, 40))), early))
        rows.append((sid, form_of[s], when, by_pos))
    rows.sort(key=lambda r: (r[2], r[0]))
    with (inputs / "responses.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "form", "submitted_at"] + [f"p{k + 1:02d}" for k in range(N_ITEMS)])
        for sid, form, when, by_pos in rows:
            w.writerow([sid, form, when.strftime("%Y-%m-%d %H:%M:%S")] + by_pos)
    return form_of


def reference(bank, ans, form_of) -> dict:
    key = np.array([it["key"] for it in bank])
    X = (ans == key).astype(float)
    total = X.sum(axis=1)
    n, k = X.shape
    p = X.mean(axis=0)
    var_total = total.var()  # population variance, as KR-20 uses
    kr20 = k / (k - 1) * (1 - (p * (1 - p)).sum() / var_total)
    rest = total[:, None] - X
    rpb = [float(np.corrcoef(X[:, j], rest[:, j])[0, 1]) for j in range(k)]
    sd = float(np.sqrt(var_total))
    r8 = lambda v: round(float(v), 8)  # noqa: E731
    return {
        "canary": CANARY,
        "items": [{"item_id": it["item_id"], "key": it["key"], "p_value": r8(p[j]), "r_pbis": r8(rpb[j]),
                   "correct_text": it["options"][LETTERS.index(it["key"])]} for j, it in enumerate(bank)],
        "scores": [{"student_id": f"S{24000 + s * 7}", "form": form_of[s], "raw_score": int(total[s])} for s in range(n)],
        "summary": {"n_students": n, "n_items": k, "mean": r8(total.mean()), "sd": r8(sd), "kr20": r8(kr20),
                    "sem": r8(sd * np.sqrt(1 - kr20)), "miskeyed_items": [MISKEYED]},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    out = ap.parse_args().out
    rng = np.random.default_rng(SEED)
    bank = items(rng)
    ans = responses(rng, bank)
    form_of = write_inputs(rng, bank, ans, out / "inputs")
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "reference" / "expected.json").write_text(json.dumps(reference(bank, ans, form_of), indent=1) + "\n")


if __name__ == "__main__":
    main()
