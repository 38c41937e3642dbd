"""Grader for gnumeric-cell (a harness GUI test task): cell A1 of the saved workbook."""

import gzip
import xml.etree.ElementTree as ET

from lastexam.grading import GradeContext, Outcome, Rubric, near

MAX_XML = 16 * 1024 * 1024
NS = "{http://www.gnumeric.org/v10.dtd}"


def cell_a1(path):
    """(value of A1 or None, Outcome of reading the workbook)."""
    if not path.is_file() or path.stat().st_size > MAX_XML:
        return None, Outcome(False, f"{path.name} is missing or too large")
    try:
        with gzip.open(path) as f:
            xml = f.read(MAX_XML + 1)
        if len(xml) > MAX_XML:
            return None, Outcome(False, "the workbook unpacks to more than 16 MB")
        root = ET.fromstring(xml)
    except (OSError, EOFError, ET.ParseError) as e:
        return None, Outcome(False, f"not a Gnumeric workbook: {e}")
    for cell in root.iter(f"{NS}Cell"):
        if cell.get("Row") == "0" and cell.get("Col") == "0":
            return cell.text, Outcome(True, "a Gnumeric workbook")
    return None, Outcome(True, "a Gnumeric workbook, A1 empty")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    value, read = cell_a1(ctx.out("answer.gnumeric"))
    r.gate("answer.gnumeric is a Gnumeric workbook", read)
    r.check("A1 holds the value", 1, near(value, ref["value"], abs=1e-9))
    return r
