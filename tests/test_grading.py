"""The grading library: scoring rules, evidence, and loaders that never raise on bad output."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import pytest

from lastexam.grading import (
    MISSING,
    Rubric,
    all_near,
    contains_all,
    equal,
    get,
    inputs_untampered,
    load_csv,
    load_json,
    load_xlsx,
    near,
    pdf_text,
    read_text,
    same_set,
    sha256_file,
    within,
)


def test_score_is_weighted_fraction_and_gate_forces_zero() -> None:
    r = Rubric()
    r.gate("parses", True)
    r.check("a", 3, True)
    r.check("b", 1, False)
    assert r.score == 0.75
    assert not r.full_pass
    r.gate("schema", False)
    assert r.score == 0.0


def test_full_pass_needs_every_check_and_a_weighted_one() -> None:
    r = Rubric()
    r.gate("parses", True)
    assert not r.full_pass and r.score == 0.0  # gates alone grade nothing
    r.check("a", 2, True)
    assert r.full_pass and r.score == 1.0


def test_check_records_evidence_and_rejects_bad_rubrics() -> None:
    r = Rubric()
    r.check("npv", 2, near(101.0, 100.0, rel=0.001))
    c = r.checks[0]
    assert (c.passed, c.points, c.weight) == (False, 0.0, 2.0)
    assert c.evidence == {"expected": 100.0, "seen": 101.0}
    assert "tolerance" in c.message
    with pytest.raises(ValueError, match="used twice"):
        r.check("npv", 1, True)
    with pytest.raises(ValueError, match="weight"):
        r.check("negative", -1, True)


def test_evidence_is_json_safe_and_clipped() -> None:
    r = Rubric()
    r.check("nan", 1, near(float("nan"), 1.0, abs=1))
    r.check("huge", 1, equal("x" * 10_000, "y"))
    text = json.dumps(r.to_dict(), allow_nan=False)
    assert len(text) < 5_000
    assert r.checks[0].message.startswith("not a number")


def test_comparisons_handle_missing_and_wrong_types() -> None:
    data = {"a": {"b": [1, {"c": 2.5}]}}
    assert get(data, "a.b[1].c") == 2.5
    assert get(data, "a.x") is MISSING
    assert get(data, "a.b[9]") is MISSING
    assert not near(MISSING, 1.0, abs=1).passed
    assert not near("12%", 12.0, abs=1).passed
    assert near("12.0", 12.0, abs=0).passed
    assert not near(True, 1.0, abs=0).passed  # booleans are not numbers
    assert not equal(MISSING, None).passed
    assert within(5, 1, 10).passed and not within(11, 1, 10).passed
    assert same_set(["b", "a"], ["a", "b"]).passed
    miss = same_set(["a"], ["a", "b"])
    assert not miss.passed and "missing ['b']" in miss.message
    assert not same_set("a,b", ["a", "b"]).passed


def test_all_near_reports_the_worst_misses() -> None:
    ok = all_near([1.0, 2.0, 3.0], [1.0, 2.0, 3.0001], abs=1e-3)
    assert ok.passed
    bad = all_near([1.0, 2.5, 3.0], [1.0, 2.0, 3.0], abs=1e-3)
    assert not bad.passed and bad.seen[0]["index"] == 1
    assert not all_near([1.0], [1.0, 2.0], abs=1).passed
    assert not all_near(None, [1.0], abs=1).passed


def test_loaders_never_raise_on_bad_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    value, outcome = load_json(missing)
    assert value is None and not outcome.passed and "missing" in outcome.message

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert not load_json(bad).outcome.passed

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert not load_json(deep).outcome.passed  # RecursionError is caught

    array = tmp_path / "array.json"
    array.write_text("[1, 2]")
    assert "expected a dict" in load_json(array).outcome.message

    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert not read_text(binary).outcome.passed

    csv_file = tmp_path / "t.csv"
    csv_file.write_text("period, interest\n1,2.5\n2,3\n")
    rows, ok = load_csv(csv_file, required_columns=["period", "interest"])
    assert ok.passed and rows == [{"period": "1", "interest": "2.5"}, {"period": "2", "interest": "3"}]
    rows, ok = load_csv(csv_file, required_columns=["balance"])
    assert rows is None and "lacks columns" in ok.message

    not_pdf = tmp_path / "x.pdf"
    not_pdf.write_text("hello")
    assert not pdf_text(not_pdf).outcome.passed

    not_xlsx = tmp_path / "x.xlsx"
    not_xlsx.write_text("hello")
    assert not load_xlsx(not_xlsx).outcome.passed


def test_xlsx_zip_bomb_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("xl/worksheets/sheet1.xml", b"\0" * (300 * 1024 * 1024))
    assert bomb.stat().st_size < 2_000_000
    value, outcome = load_xlsx(bomb)
    assert value is None and "zip bomb" in outcome.message


def test_real_xlsx_loads(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    wb.active["A1"] = 2
    wb.active["A2"] = "=A1*3"
    path = tmp_path / "m.xlsx"
    wb.save(path)
    formulas, ok = load_xlsx(path, data_only=False)
    assert ok.passed and formulas.active["A2"].value == "=A1*3"


def test_contains_all_and_hashes(tmp_path: Path) -> None:
    assert contains_all("Net Present Value: 12", ["net present value"]).passed
    assert not contains_all(None, ["x"]).passed
    f = tmp_path / "a"
    f.write_bytes(b"abc")
    assert sha256_file(f) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_inputs_untampered(tmp_path: Path) -> None:
    pristine = tmp_path / "inputs"
    pristine.mkdir()
    (pristine / "d.csv").write_text("x\n1\n")
    digest = sha256_file(pristine / "d.csv")
    assert inputs_untampered({"d.csv": digest}, pristine).passed
    assert not inputs_untampered({"d.csv": "0" * 64}, pristine).passed
    assert not inputs_untampered({"d.csv": "not-regular"}, pristine).passed
    removed = inputs_untampered({}, pristine)
    assert removed.passed and "removed" in removed.message


def test_rubric_round_trips_through_json() -> None:
    r = Rubric()
    r.check("x", 1, near(math.pi, 3.14159, abs=1e-4))
    data = json.loads(json.dumps(r.to_dict()))
    assert data["score"] == 1.0 and data["checks"][0]["name"] == "x"
