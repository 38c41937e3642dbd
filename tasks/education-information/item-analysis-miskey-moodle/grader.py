"""Grader for item-analysis-miskey-moodle: scores, item statistics, reliability, the key review
and the Moodle XML export, against the reference computed from the simulated answers with the
true key.

Tolerances (and why): statistics are asked to 4 decimals, so within 2e-4 (rounding plus the
summation order of a correlation); raw scores are counts, exact. The crux gate is coarse: KR-20
within 0.01 and 98 % of the scores exact (a form B left unmapped, the first submission kept or
the miskey left in all break it).
"""

from __future__ import annotations

import html
import re

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    load_xml,
    match_rows,
    near,
    rows_by,
    same_set,
)

STAT = 2e-4
CRUX_KR20 = 0.01
CRUX_SCORED = 0.98


def _scores_exact(seen: dict, want: dict) -> tuple[float, Outcome]:
    exact = sum(1 for k, row in want.items() if k in seen and as_number(seen[k].get("raw_score")) == row["raw_score"])
    share = exact / len(want)
    return share, Outcome(share >= CRUX_SCORED, f"{exact} of {len(want)} scores exact", expected=f">= {CRUX_SCORED:.0%}",
                          seen=round(share, 4))


def _plain(text: str | None) -> str:
    """The text of a Moodle <text> element: HTML tags dropped and entities decoded, as an
    answer in format="html" is stored (`<p>3</p>`)."""
    return html.unescape(re.sub(r"<[^>]*>", "", text or "")).strip()


def _quiz(root: object, items: list[dict], bank: dict) -> Outcome:
    """Each item once, multichoice, the stem, its four options, the right one alone at 100."""
    if root is None or getattr(root, "tag", None) != "quiz":
        return Outcome(False, "no <quiz> root")
    problems = []
    found = {}
    for q in root.findall("question"):
        if q.get("type") != "multichoice":
            continue
        name = (q.findtext("name/text") or "").strip()
        found.setdefault(name, q)
    for it in items:
        q = found.get(it["item_id"])
        if q is None:
            problems.append(f"{it['item_id']}: no multichoice question")
            continue
        stem = _plain(q.findtext("questiontext/text"))
        if bank[it["item_id"]]["stem"] not in stem:
            problems.append(f"{it['item_id']}: stem missing")
        answers = [(_plain(a.findtext("text")), as_number(a.get("fraction"))) for a in q.findall("answer")]
        texts = sorted(t for t, _ in answers)
        right = [t for t, f in answers if f == 100]
        others = [f for _, f in answers if f != 100]
        if texts != sorted(bank[it["item_id"]]["options"]) or right != [it["correct_text"]] or any(f != 0 for f in others):
            problems.append(f"{it['item_id']}: options {texts}, right {right}")
    return Outcome(not problems, "; ".join(problems[:6]) or "every item exported with its right answer",
                   expected="40 multichoice questions, right option at 100", seen=problems[:6])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    items_rows, items_ok = load_csv(ctx.out("item_analysis.csv"), required_columns=["item_id", "key", "p_value", "r_pbis"])
    score_rows, scores_ok = load_csv(ctx.out("scores.csv"), required_columns=["student_id", "form", "raw_score"])
    summary, summary_ok = load_json(ctx.out("summary.json"))
    r.gate("item_analysis.csv and scores.csv have the required columns and summary.json is a JSON object",
           all_of([items_ok, scores_ok, summary_ok]))
    want_scores = {s["student_id"]: s for s in ref["scores"]}
    scores = rows_by(score_rows, lambda row: row["student_id"].strip())
    _, scored = _scores_exact(scores, want_scores)
    truth = ref["summary"]
    r.gate("KR-20 within 0.01 and at least 98 % of the raw scores exact",
           all_of([("kr20", near(get(summary, "kr20"), truth["kr20"], abs=CRUX_KR20)), ("scores", scored)]))

    r.check("one row per student, last submission, form B mapped to items: every raw score exact", 3, all_of([
        ("coverage", scores.coverage(want_scores)),
        ("scores", match_rows(scores, want_scores, ["raw_score"], exact=True)),
        ("form", match_rows(scores, want_scores, ["form"], exact=True)),
    ]))
    want_items = {i["item_id"]: i for i in ref["items"]}
    items = rows_by(items_rows, lambda row: row["item_id"].strip())
    r.check("one row per item with the final key", 1,
            all_of([items.coverage(want_items), match_rows(items, want_items, ["key"], exact=True)]))
    listed = get(summary, "miskeyed_items")
    r.check("miskeyed item found and rekeyed", 3,
            same_set(listed, truth["miskeyed_items"]) if isinstance(listed, list) and all(isinstance(v, str) for v in listed)
            else Outcome(False, "miskeyed_items is not a list of item ids", expected=truth["miskeyed_items"], seen=str(listed)[:200]))
    r.check("item difficulty (p-value) on the final key", 1, match_rows(items, want_items, ["p_value"], abs=STAT))
    r.check("corrected item-total point-biserial on the final key", 2, match_rows(items, want_items, ["r_pbis"], abs=STAT))
    r.check("KR-20 and SEM", 2, all_of([
        ("kr20", near(get(summary, "kr20"), truth["kr20"], abs=STAT)),
        ("sem", near(get(summary, "sem"), truth["sem"], abs=STAT)),
    ]))
    r.check("number of students, mean and SD (population)", 1, all_of([
        ("n_students", near(get(summary, "n_students"), truth["n_students"], abs=0)),
        ("mean", near(get(summary, "mean"), truth["mean"], abs=STAT)),
        ("sd", near(get(summary, "sd"), truth["sd"], abs=STAT)),
    ]))
    bank_rows, _ = load_csv(ctx.inputs / "item_bank.csv")
    bank = {row["item_id"]: {"stem": row["stem"], "options": [row[f"option_{c}"] for c in "abcd"]} for row in bank_rows}
    root, xml_ok = load_xml(ctx.out("quiz.xml"), root="quiz", kind="Moodle XML")
    r.check("quiz.xml: every item a Moodle multichoice question with its stem, options and the right answer at 100", 3,
            all_of([("parse", xml_ok), ("questions", _quiz(root, ref["items"], bank))]))
    return r
