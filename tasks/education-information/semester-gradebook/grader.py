"""Grader for semester-gradebook.

The agent's Gnumeric workbook is recalculated by Gnumeric itself (ssconvert --recalc, exported to
XLSX so that openpyxl reads each cell's value and formula at its own address). The crux is a live
model, a gate: the grader rewrites the Scores sheet in the workbook's XML so that every score of a
category is one value per student (any drop rule and the replacement rule then agree), recalculates,
and at least 90% of the students' category and course percentages must land on the values those
scores give. A second edit (an excused homework, a missed quiz, a new final, some excused midterms)
checks that the live model applies the syllabus.

Tolerances: 0.01 percentage points per category percentage (the instruction allows rounding to 2
decimals, 0.005, plus double-precision noise); 0.015 for the course percentage (it may be computed
from category percentages already rounded to 2 decimals); the liveness gate takes 0.5 points (it
asks whether values follow their scores, not whether they are precise). Letters are exact: the
generator keeps every course percentage at least 0.02 from a rounding half.
"""

from __future__ import annotations

import copy
import gzip
import io
import os
import re
import subprocess
import xml.etree.ElementTree as ET

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    as_number,
    is_error_value,
    load_csv,
    load_xlsx,
    match_rows,
    no_problems,
)

WORKBOOK = "gradebook.gnumeric"
GNM = "http://www.gnumeric.org/v10.dtd"
GRADE_COLUMNS = ["student_id", "homework_pct", "quiz_pct", "midterm_pct", "project_pct", "final_pct",
                 "course_pct", "letter"]
CATEGORIES = ["homework_pct", "quiz_pct", "midterm_pct", "project_pct", "final_pct"]
COMPUTED = [*CATEGORIES, "course_pct", "letter"]
MAX_BYTES = 32 * 1024 * 1024  # compressed or not; a class gradebook is a few dozen KB
MAX_XML = 128 * 1024 * 1024
PCT_TOL, COURSE_TOL, LIVE_TOL = 0.01, 0.015, 0.5
LIVE_SHARE = 0.9
# A formula made only of literals ("=87.5", "=80+7.5") is a typed number in disguise.
CONSTANT_FORMULA = re.compile(r'^=\s*([-+(]*[\d.]+(\s*[-+*/^]\s*[-+(]*[\d.]+\)*)*|"[^"]*")\s*\)*$')


def read_workbook(path) -> tuple[ET.Element | None, Outcome]:
    """The Gnumeric XML tree (gzipped, as Gnumeric saves it, or plain)."""
    if not path.is_file():
        return None, Outcome(False, f"{WORKBOOK} is missing or not a file", expected=WORKBOOK)
    if path.stat().st_size > MAX_BYTES:
        return None, Outcome(False, f"{WORKBOOK} is over {MAX_BYTES} bytes")
    raw = path.read_bytes()
    try:
        if raw[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
                raw = f.read(MAX_XML + 1)
            if len(raw) > MAX_XML:
                return None, Outcome(False, f"{WORKBOOK} unpacks to over {MAX_XML} bytes")
        root = ET.fromstring(raw)
        for _, (prefix, uri) in ET.iterparse(io.BytesIO(raw), events=["start-ns"]):
            if prefix and not re.fullmatch(r"ns\d+", prefix):
                ET.register_namespace(prefix, uri)  # so that the rewritten XML keeps gnm: and its kin
    except Exception as e:  # gzip, zlib, expat: any of them rejects garbage
        return None, Outcome(False, f"{WORKBOOK} is not Gnumeric XML: {type(e).__name__}: {str(e)[:200]}")
    if root.tag != f"{{{GNM}}}Workbook":
        return None, Outcome(False, f"{WORKBOOK} holds <{root.tag}>, not a Gnumeric workbook",
                             expected=f"{{{GNM}}}Workbook", seen=root.tag)
    return root, Outcome(True, f"Gnumeric workbook with {len(sheets(root))} sheets")


def sheets(root: ET.Element) -> dict[str, ET.Element]:
    return {(s.findtext(f"{{{GNM}}}Name") or "").strip(): s for s in root.iter(f"{{{GNM}}}Sheet")}


def recalculated(ctx: GradeContext, root: ET.Element, tag: str) -> tuple[tuple | None, Outcome]:
    """Write the tree as a .gnumeric, have Gnumeric recalculate it into an XLSX, read it twice."""
    src, dst = ctx.scratch / f"{tag}.gnumeric", ctx.scratch / f"{tag}.xlsx"
    src.write_bytes(gzip.compress(ET.tostring(root, encoding="utf-8", xml_declaration=True), mtime=0))
    home = ctx.scratch / "home"
    home.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["ssconvert", "--recalc", "-I", "Gnumeric_XmlIO:sax", "-T", "Gnumeric_Excel:xlsx2",
                               str(src), str(dst)], capture_output=True, text=True, timeout=150,
                              env={**os.environ, "HOME": str(home)})
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, Outcome(False, f"ssconvert failed: {type(e).__name__}")
    if done.returncode != 0 or not dst.is_file():
        return None, Outcome(False, f"Gnumeric could not recalculate the workbook: {done.stderr.strip()[-300:]}")
    values, ok = load_xlsx(dst, data_only=True)
    formulas = load_xlsx(dst, data_only=False).value
    if values is None or formulas is None:
        return None, ok
    return (values, formulas), Outcome(True, "recalculated by Gnumeric")


def header_map(ws) -> dict[str, int]:
    row = next(ws.iter_rows(min_row=1, max_row=1, values_only=True), ()) if ws is not None else ()
    return {str(v).strip(): i for i, v in enumerate(row) if v is not None}


def grades_table(wb, students: dict) -> tuple[dict[str, dict], dict[str, int]]:
    """Grades rows of the expected students: values by column, and the row number of each."""
    ws = wb["Grades"] if wb is not None and "Grades" in wb.sheetnames else None
    cols = header_map(ws)
    if ws is None or "student_id" not in cols:
        return {}, {}
    rows, where = {}, {}
    for n, row in enumerate(ws.iter_rows(min_row=2, values_only=True), start=2):
        sid = row[cols["student_id"]] if cols["student_id"] < len(row) else None
        sid = str(sid).strip() if sid is not None else ""
        if sid in students and sid not in rows:
            rows[sid] = {c: (row[cols[c]] if c in cols and cols[c] < len(row) else None) for c in GRADE_COLUMNS}
            where[sid] = n
    return rows, where


def edited(root: ET.Element, edits: dict[str, dict]) -> tuple[ET.Element | None, Outcome]:
    """A copy of the workbook whose Scores cells hold the edited scores."""
    tree = copy.deepcopy(root)
    scores = sheets(tree).get("Scores")
    cells = scores.find(f"{{{GNM}}}Cells") if scores is not None else None
    if cells is None:
        return None, Outcome(False, "no Scores sheet to edit")
    at = {(int(c.get("Row", -1)), int(c.get("Col", -1))): c for c in cells.findall(f"{{{GNM}}}Cell")
          if (c.get("Row") or "").isdigit() and (c.get("Col") or "").isdigit()}
    header = {(c.text or "").strip(): col for (row, col), c in at.items() if row == 0}
    if "student_id" not in header:
        return None, Outcome(False, "Scores has no student_id header in row 1")
    rows = {(c.text or "").strip(): row for (row, col), c in at.items() if col == header["student_id"] and row > 0}
    missing = sorted(set(edits) - set(rows)) + sorted({k for e in edits.values() for k in e} - set(header))
    if missing:
        return None, Outcome(False, f"Scores lacks rows or columns to edit: {missing[:6]}")
    for sid, edit in edits.items():
        for col, value in edit.items():
            key = (rows[sid], header[col])
            cell = at.get(key)
            if cell is None:
                cell = ET.SubElement(cells, f"{{{GNM}}}Cell", {"Row": str(key[0]), "Col": str(key[1])})
            for attr in ("ExprID", "ValueFormat"):
                cell.attrib.pop(attr, None)
            cell.set("ValueType", "60" if isinstance(value, str) else "40")
            cell.text = value if isinstance(value, str) else repr(float(value))
    return tree, Outcome(True, "edited")


def probe(ctx: GradeContext, root: ET.Element, spec: dict, tag: str) -> tuple[dict, Outcome]:
    tree, ok = edited(root, {sid: p["edit"] for sid, p in spec.items()})
    if tree is None:
        return {}, ok
    got, ok = recalculated(ctx, tree, tag)
    if got is None:
        return {}, ok
    return grades_table(got[0], spec)[0], Outcome(True, "recalculated after the edit")


def liveness(ctx: GradeContext, root: ET.Element, spec: dict) -> Outcome:
    rows, ok = probe(ctx, root, spec, "uniform")
    if not ok.passed:
        return ok
    stuck = []
    for sid, p in sorted(spec.items()):
        seen = rows.get(sid, {})
        off = [f"{k} {as_number(seen.get(k), text=False)} (scores give {v:.2f})" for k, v in p["expected"].items()
               if (x := as_number(seen.get(k), text=False)) is None or abs(x - v) > LIVE_TOL]
        if off:
            stuck.append(f"{sid}: " + "; ".join(off[:3]))
    share = 1 - len(stuck) / len(spec)
    return Outcome(share >= LIVE_SHARE, f"{share:.0%} of students follow their edited scores",
                   expected=f"at least {LIVE_SHARE:.0%}", seen=stuck[:6] or None)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    students = ref["students"]

    root, readable = read_workbook(ctx.out(WORKBOOK))
    r.gate(f"{WORKBOOK} is a Gnumeric workbook (gzipped Gnumeric XML)", readable)
    got, recalc_ok = recalculated(ctx, root, "main") if root is not None else (None, Outcome(False, "no workbook"))
    r.gate("Gnumeric recalculates the workbook", recalc_ok)
    values, formulas = got if got is not None else (None, None)
    rows, rows_at = grades_table(values, students)

    live = liveness(ctx, root, ref["uniform_probe"]) if rows else Outcome(False, "no Grades rows to probe")
    r.gate("live model: with every score of a category set to one value, 90% of the students' percentages follow",
           live)

    # Structure: the export kept as given, the Grades table complete.
    problems = []
    names = values.sheetnames if values is not None else []
    for name in ("Scores", "Grades"):
        if name not in names:
            problems.append(f"no sheet named {name}")
    have = header_map(values["Grades"]) if "Grades" in names else {}
    if "Grades" in names and any(c not in have for c in GRADE_COLUMNS):
        problems.append(f"Grades lacks columns {[c for c in GRADE_COLUMNS if c not in have]}")
    if "Grades" in names and len(rows) < len(students):
        problems.append(f"Grades lacks students {sorted(set(students) - set(rows))[:5]}")
    if "Scores" in names:
        problems += scores_problems(ctx, values["Scores"], ref["score_columns"])
    r.check("Scores holds the export as given; Grades has the required columns and one row per student", 1,
            no_problems(problems, "all present", expected="Scores = scores.csv; Grades columns and students"))

    errors = [f"Grades!{c.coordinate}={c.value}" for row in (values["Grades"].iter_rows() if "Grades" in names else [])
              for c in row if is_error_value(c.value)]
    r.check("no error values in Grades after recalculation", 1,
            Outcome("Grades" in names and not errors, f"{len(errors)} error cells" if errors else "none",
                    expected="no #VALUE!/#DIV/0!/#N/A/... cells", seen=errors[:8] or None))

    def values_of(fields, tol):
        return match_rows(rows, students, fields, abs=tol, text=False)

    r.check("homework: excused left out, two lowest dropped", 2, values_of(["homework_pct"], PCT_TOL))
    r.check("quizzes: excused left out, lowest dropped", 2, values_of(["quiz_pct"], PCT_TOL))
    r.check("midterm after the final-exam replacement (and for excused midterms)", 2,
            values_of(["midterm_pct"], PCT_TOL))
    r.check("project and final exam percentages", 1, values_of(["project_pct", "final_pct"], PCT_TOL))
    r.check("weighted course percentage", 2, values_of(["course_pct"], COURSE_TOL))
    r.check("letter grades (rounded percentage, final-exam floor)", 2, values_of(["letter"], 0))

    typed = []
    gws = formulas["Grades"] if formulas is not None and "Grades" in formulas.sheetnames else None
    if gws is None or not rows_at:
        typed.append("no Grades table")
    else:
        cols = header_map(gws)
        for sid, n in sorted(rows_at.items()):
            for f in COMPUTED:
                v = gws.cell(row=n, column=cols[f] + 1).value if f in cols else None
                text = getattr(v, "text", v)
                if not (isinstance(text, str) and text.startswith("=") and not CONSTANT_FORMULA.match(text)):
                    typed.append(f"{sid}.{f} = {v!r}")
    r.check("Grades percentages and letters are formulas", 1,
            Outcome(not typed, f"{len(typed)} cells are not formulas" if typed else "all formulas",
                    expected="formulas referencing the scores", seen=typed[:8] or None))

    spec = ref["policy_probe"]
    after, ok = probe(ctx, root, spec, "policy") if rows else ({}, Outcome(False, "no Grades rows"))
    want = {sid: p["expected"] for sid, p in spec.items()}
    r.check("after excusing a homework, zeroing a quiz and changing the final, course percentages and letters "
            "follow the syllabus", 2,
            match_rows(after, want, ["course_pct", "letter"], abs=COURSE_TOL, text=False) if ok.passed else ok)
    return r


def scores_problems(ctx: GradeContext, ws, score_columns: list[str]) -> list[str]:
    """Differences between the Scores sheet and the export (header row, Points Possible, students)."""
    given, ok = load_csv(ctx.inputs / "scores.csv")
    if given is None:
        raise RuntimeError(f"the task's scores.csv does not load: {ok.message}")
    cols = header_map(ws)
    lacking = [c for c in ["student_id", *score_columns] if c not in cols]
    if lacking:
        return [f"Scores lacks columns {lacking[:5]}"]
    sheet = {}
    for row in ws.iter_rows(min_row=2, values_only=True):
        sid = row[cols["student_id"]] if cols["student_id"] < len(row) else None
        if sid is not None:
            sheet.setdefault(str(sid).strip(), row)
    problems = []
    for g in given:
        row = sheet.get(g["student_id"])
        if row is None:
            problems.append(f"Scores lacks the row {g['student_id']}")
            continue
        for c in score_columns:
            v, want = row[cols[c]] if cols[c] < len(row) else None, g[c]
            same = (str(v).strip() == want) if want == "EX" else (
                (x := as_number(v, text=False)) is not None and abs(x - float(want)) < 1e-9)
            if not same:
                problems.append(f"Scores {g['student_id']}.{c} = {v!r}, the export has {want!r}")
    return problems
