"""Oracle: score the final from the LMS export (last submission, form B mapped to item ids),
review the key with the item statistics and the stems, rescore, and export the bank to Moodle XML."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

LETTERS = "ABCD"


def solve_stem(stem: str) -> str:
    a, b, c = (int(v) for v in re.match(r"Solve for x: (\d+)x \+ (\d+) = (\d+)", stem).groups())
    return str((c - b) // a)


def item_stats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = X.sum(axis=1)
    rpb = np.array([np.corrcoef(X[:, j], total - X[:, j])[0, 1] for j in range(X.shape[1])])
    return X.mean(axis=0), rpb


def main(inputs: Path, out: Path) -> None:
    resp = pd.read_csv(inputs / "responses.csv", dtype=str, keep_default_na=False)
    resp = resp.sort_values(["student_id", "submitted_at"]).groupby("student_id").tail(1)
    fmap = pd.read_csv(inputs / "form_map.csv", dtype={"form": str, "position": int, "item_id": str})
    bank = pd.read_csv(inputs / "item_bank.csv", dtype=str).set_index("item_id")
    key = pd.read_csv(inputs / "answer_key.csv", dtype=str).set_index("item_id")["key"]
    items = list(bank.index)
    answers = pd.DataFrame(index=resp.student_id, columns=items, dtype=object)
    for form, group in resp.groupby("form"):
        m = fmap[fmap.form == form].set_index("position")["item_id"]
        for pos, item in m.items():
            answers.loc[group.student_id.to_numpy(), item] = group[f"p{pos:02d}"].to_numpy()
    answers = answers.sort_index()

    _, rpb_given = item_stats((answers.to_numpy() == key[items].to_numpy()).astype(float))
    corrected = key.copy()
    miskeyed = []
    for j, item in enumerate(items):
        right = LETTERS[list(bank.loc[item, ["option_a", "option_b", "option_c", "option_d"]]).index(solve_stem(bank.loc[item, "stem"]))]
        if rpb_given[j] < 0 and right != key[item]:
            corrected[item] = right
            miskeyed.append(item)

    X = (answers.to_numpy() == corrected[items].to_numpy()).astype(float)
    p, rpb = item_stats(X)
    total = X.sum(axis=1)
    var = total.var()
    kr20 = len(items) / (len(items) - 1) * (1 - (p * (1 - p)).sum() / var)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"item_id": items, "key": corrected[items].to_numpy(), "p_value": p.round(4), "r_pbis": rpb.round(4)}
                 ).to_csv(out / "item_analysis.csv", index=False)
    forms = resp.set_index("student_id")["form"]
    pd.DataFrame({"student_id": answers.index, "form": forms[answers.index].to_numpy(), "raw_score": total.astype(int)}
                 ).to_csv(out / "scores.csv", index=False)
    sd = float(np.sqrt(var))
    (out / "summary.json").write_text(json.dumps({
        "n_students": int(len(total)), "mean": round(float(total.mean()), 4), "sd": round(sd, 4),
        "kr20": round(float(kr20), 4), "sem": round(sd * float(np.sqrt(1 - kr20)), 4), "miskeyed_items": miskeyed}, indent=2) + "\n")

    quiz = ET.Element("quiz")
    for item in items:
        q = ET.SubElement(quiz, "question", type="multichoice")
        ET.SubElement(ET.SubElement(q, "name"), "text").text = item
        qt = ET.SubElement(q, "questiontext", format="html")
        ET.SubElement(qt, "text").text = bank.loc[item, "stem"]
        ET.SubElement(q, "single").text = "true"
        ET.SubElement(q, "shuffleanswers").text = "true"
        ET.SubElement(q, "answernumbering").text = "abc"
        for letter, col in zip(LETTERS, ["option_a", "option_b", "option_c", "option_d"], strict=True):
            a = ET.SubElement(q, "answer", fraction="100" if letter == corrected[item] else "0", format="html")
            ET.SubElement(a, "text").text = bank.loc[item, col]
    ET.indent(quiz)
    ET.ElementTree(quiz).write(out / "quiz.xml", encoding="UTF-8", xml_declaration=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
