"""Seeded generator of inputs/ and reference/ for semester-gradebook: python3 generate.py --out DIR.

inputs/scores.csv is an LMS gradebook export (a Points Possible row, EX for excused work, 0 for
missing work). reference/expected.json holds the syllabus policy's results per student and two
edits the grader makes to the workbook's Scores sheet, with the results they must give.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

SEED = 20260312
CANARY = "335cc5a0-4482-4817-949e-4268dea20834"
N_STUDENTS = 56
HW = [f"hw{i}" for i in range(1, 9)]
QUIZ = [f"q{i}" for i in range(1, 11)]
COLUMNS = ["student_id", "student_name", *HW, *QUIZ, "midterm", "project", "final_exam"]
POINTS = {**dict.fromkeys(HW, 20), **dict.fromkeys(QUIZ, 10), "midterm": 100, "project": 50, "final_exam": 150}
WEIGHTS = {"homework_pct": 0.20, "quiz_pct": 0.15, "midterm_pct": 0.20, "project_pct": 0.15, "final_pct": 0.30}
BOUNDARIES = [(93, "A"), (90, "A-"), (87, "B+"), (83, "B"), (80, "B-"), (77, "C+"), (73, "C"), (70, "C-"),
              (67, "D+"), (63, "D"), (60, "D-")]
FINAL_FLOOR = 40.0
FIRST = ["Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Isla", "Jonas", "Kemi", "Liam", "Maya",
         "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tariq", "Uma", "Victor", "Wen", "Ximena", "Yusuf", "Zoe"]
LAST = ["Abbott", "Baptiste", "Castillo", "Dubois", "Eriksen", "Fontaine", "Gallagher", "Haddad", "Ibarra", "Jensen",
        "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov", "Quintero", "Rahman", "Schultz", "Tanaka",
        "Usman", "Varga", "Whitfield", "Xu", "Yilmaz", "Zeller"]


def drop_pct(scores: list, points: int, drop: int) -> float:
    """Percent of the scored (not excused) items after dropping the `drop` lowest."""
    kept = sorted(s for s in scores if s != "EX")[drop:]
    return 100.0 * sum(kept) / (points * len(kept))


def policy(row: dict) -> dict:
    """The syllabus: category percentages, the weighted course percentage and the letter."""
    final = 100.0 * row["final_exam"] / POINTS["final_exam"]
    mid = row["midterm"]
    out = {
        "homework_pct": drop_pct([row[c] for c in HW], 20, 2),
        "quiz_pct": drop_pct([row[c] for c in QUIZ], 10, 1),
        "midterm_pct": final if mid == "EX" else max(100.0 * mid / POINTS["midterm"], final),
        "project_pct": 100.0 * row["project"] / POINTS["project"],
        "final_pct": final,
    }
    out["course_pct"] = sum(WEIGHTS[k] * out[k] for k in WEIGHTS)
    out["letter"] = letter(out["course_pct"], final)
    return out


def letter(course: float, final: float) -> str:
    if final < FINAL_FLOOR:
        return "F"
    whole = math.floor(course + 0.5)
    return next((g for b, g in BOUNDARIES if whole >= b), "F")


def clean(result: dict) -> bool:
    """No course percentage within 0.02 of a rounding half and no final percentage at the floor:
    a valid model rounding its percentages to 2 decimals gets every letter right."""
    frac = result["course_pct"] - math.floor(result["course_pct"])
    return abs(frac - 0.5) > 0.02 and abs(result["final_pct"] - FINAL_FLOOR) > 0.02


def clip(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return min(hi, max(lo, x))


def student(rng: random.Random, ability: float, final_p: float | None = None, mid_ex: bool = False) -> dict:
    row: dict = {}
    hw_ex = quiz_ex = 0
    for c in HW:
        u = rng.random()
        if u < 0.05:
            row[c] = 0
        elif u < 0.09 and hw_ex < 2:
            row[c], hw_ex = "EX", hw_ex + 1
        else:
            row[c] = round(40 * clip(ability + rng.gauss(0.02, 0.09))) / 2
    for c in QUIZ:
        u = rng.random()
        if u < 0.04:
            row[c] = 0
        elif u < 0.07 and quiz_ex < 2:
            row[c], quiz_ex = "EX", quiz_ex + 1
        else:
            row[c] = round(10 * clip(ability + rng.gauss(0.0, 0.12)))
    row["midterm"] = "EX" if mid_ex else round(100 * clip(ability + rng.gauss(-0.03, 0.1)))
    row["project"] = round(50 * clip(ability + rng.gauss(0.04, 0.06)))
    p = final_p if final_p is not None else clip(ability + rng.gauss(0.0, 0.1))
    row["final_exam"] = round(150 * p)
    return row


def rounding_matters(res: dict) -> bool:
    c = res["course_pct"]
    return res["final_pct"] >= FINAL_FLOOR and letter(c, 100.0) != next(
        (g for b, g in BOUNDARIES if c >= b), "F")


def make_roster(rng: random.Random) -> list[dict]:
    """Students drawn at random, with the policy's traps guaranteed: letters that rounding lifts,
    the final-exam floor binding, excused midterms, finals replacing midterms."""
    kinds = ["round"] * 5 + ["floor"] * 2 + ["mid_ex"] * 2 + ["any"] * (N_STUDENTS - 9)
    rng.shuffle(kinds)
    roster = []
    for kind in kinds:
        while True:
            ability = rng.uniform(0.6, 0.98) if kind != "floor" else rng.uniform(0.8, 0.95)
            row = student(rng, ability, final_p=rng.uniform(0.28, 0.38) if kind == "floor" else None,
                          mid_ex=kind == "mid_ex")
            res = policy(row)
            ok = clean(res) and (kind != "round" or rounding_matters(res))
            ok = ok and (kind != "floor" or (res["final_pct"] < FINAL_FLOOR and res["course_pct"] >= 60.5))
            if ok:
                roster.append(row)
                break
    ids = rng.sample(range(1_000_000, 9_999_999), N_STUDENTS)
    names = sorted({(rng.choice(LAST), rng.choice(FIRST)) for _ in range(4 * N_STUDENTS)})
    names = rng.sample(names, N_STUDENTS)
    for row, sid, (last, first) in zip(roster, ids, names, strict=True):
        row["student_id"] = f"U{sid}"
        row["student_name"] = f"{last}, {first}"
    return sorted(roster, key=lambda r: r["student_name"])


def uniform_edit(rng: random.Random, row: dict, base: dict) -> dict:
    """Every score of a category set to one value: any drop rule and the replacement rule give the
    same category percentages, so the recalculated values test liveness whatever the method."""
    while True:
        h, q = rng.randrange(16, 41) / 2, rng.randrange(4, 11)
        m, pj = rng.randrange(45, 100), rng.randrange(25, 51)
        want = {"homework_pct": 5.0 * h, "quiz_pct": 10.0 * q, "midterm_pct": float(m), "project_pct": 2.0 * pj,
                "final_pct": float(m)}
        if all(abs(want[k] - base[k]) >= 5 for k in WEIGHTS):
            edit = {**dict.fromkeys(HW, h), **dict.fromkeys(QUIZ, q), "midterm": m, "project": pj,
                    "final_exam": 1.5 * m}
            return {"edit": edit, "expected": {**want, "course_pct": sum(WEIGHTS[k] * want[k] for k in WEIGHTS)}}


def policy_edit(rng: random.Random, row: dict, force_mid_ex: bool) -> dict:
    """An excused homework, a missed quiz and a new final exam score (an excused midterm for some):
    the recalculated course percentages and letters must be the policy's."""
    while True:
        hw = rng.choice([c for c in HW if row[c] != "EX"])
        quiz = rng.choice([c for c in QUIZ if row[c] != 0])
        edit = {hw: "EX", quiz: 0, "final_exam": rng.randrange(45, 151)}
        if force_mid_ex:
            edit["midterm"] = "EX"
        res = policy({**row, **edit})
        if clean(res):
            return {"edit": edit, "expected": {"course_pct": res["course_pct"], "letter": res["letter"]}}


def fmt(v) -> str:
    return v if isinstance(v, str) else (str(int(v)) if float(v).is_integer() else f"{v:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    roster = make_roster(rng)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    lines = [",".join(COLUMNS), ",".join(["Points Possible", "", *(str(POINTS[c]) for c in COLUMNS[2:])])]
    for row in roster:
        cells = [row["student_id"], f'"{row["student_name"]}"', *(fmt(row[c]) for c in COLUMNS[2:])]
        lines.append(",".join(cells))
    (out / "inputs" / "scores.csv").write_text("\n".join(lines) + "\n")

    results = {r["student_id"]: policy(r) for r in roster}
    mid_ex_probe = set(rng.sample(sorted(r["student_id"] for r in roster if r["midterm"] != "EX"), 3))
    uniform = {r["student_id"]: uniform_edit(rng, r, results[r["student_id"]]) for r in roster}
    probe = {r["student_id"]: policy_edit(rng, r, r["student_id"] in mid_ex_probe) for r in roster}
    ref = {
        "canary": CANARY,
        "score_columns": COLUMNS[2:],
        "students": {sid: {k: (round(v, 9) if isinstance(v, float) else v) for k, v in res.items()}
                     for sid, res in sorted(results.items())},
        "uniform_probe": {sid: {"edit": p["edit"], "expected": {k: round(v, 9) for k, v in p["expected"].items()}}
                          for sid, p in sorted(uniform.items())},
        "policy_probe": {sid: {"edit": p["edit"], "expected": {"course_pct": round(p["expected"]["course_pct"], 9),
                                                               "letter": p["expected"]["letter"]}}
                         for sid, p in sorted(probe.items())},
    }
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
