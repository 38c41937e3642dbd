"""The grading library: scoring rules, evidence, and loaders that never raise on bad output."""

from __future__ import annotations

import json
import math
import shutil
import zipfile
from pathlib import Path

import pytest

from lastexam.grading import (
    MISSING,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    inputs_untampered,
    load_csv,
    load_json,
    load_xlsx,
    load_xml,
    match_rows,
    near,
    no_problems,
    read_text,
    rows_by,
    same_set,
    within,
)
from lastexam.grading.files import sha256_file
from lastexam.task.hygiene import solution_uses


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
    assert near("12%", 12.0, abs=0).passed  # the number as written, the % sign dropped
    assert near("12.0", 12.0, abs=0).passed
    assert not near(True, 1.0, abs=0).passed  # booleans are not numbers
    assert not equal(MISSING, None).passed
    assert within(5, 1, 10).passed and not within(11, 1, 10).passed
    assert same_set(["b", "a"], ["a", "b"]).passed
    miss = same_set(["a"], ["a", "b"])
    assert not miss.passed and "missing ['b']" in miss.message
    assert not same_set("a,b", ["a", "b"]).passed


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


def test_sha256_file(tmp_path: Path) -> None:
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


@pytest.mark.parametrize(
    ("text", "number"),
    [("1,234.5", 1234.5), (" 12.5% ", 12.5), ("1 234", 1234.0), ("\u22123", -3.0),
     ("-1,234,567", -1234567.0), ("7", 7.0), (3, 3.0), ("2e3", 2000.0)],
)
def test_as_number_reads_numbers_as_people_write_them(text: object, number: float) -> None:
    assert as_number(text) == number


@pytest.mark.parametrize(
    "bad",
    ["", "  ", "1,5", "1,23,456", "12,5%", "abc", "nan", "inf", "1e999", "%", "1 2", "0x10",
     "9" * 500, 10**400, True, None, MISSING, b"1", [1], {"a": 1}, object(), float("nan")],
)
def test_as_number_never_raises_on_agent_text(bad: object) -> None:
    assert as_number(bad) is None


def test_as_number_text_false_takes_only_real_numbers() -> None:
    assert as_number("12", text=False) is None
    assert as_number(12, text=False) == 12.0


def test_near_with_no_expected_value_wants_an_empty_cell() -> None:
    for empty in (None, "", " NA ", "null", float("nan"), MISSING):
        assert near(empty, None).passed
    assert not near(0, None).passed


def test_near_shows_the_distance_whether_it_passes_or_not() -> None:
    assert near(100.25, 100.0, abs=0.5).message == "off by 0.25 (within tolerance 0.5)"
    assert near(101.0, 100.0, rel=0.001).message == "off by 1 (outside tolerance 0.1)"


def test_all_of_combines_labelled_and_plain_outcomes() -> None:
    ok = all_of([("a", near(1.0, 1.0)), True, Outcome(True, "fine")])
    assert ok.passed and "all 3" in ok.message
    bad = all_of({"a": near(2.0, 1.0, abs=0.5), "b": near(1.0, 1.0), "c": False})
    assert not bad.passed and bad.message.startswith("2 of 3 failed: a: off by 1")
    assert bad.expected == {"a": 1.0, "c": None} and bad.seen == {"a": 2.0, "c": None}
    assert not all_of([]).passed  # nothing to compare is a missing table, not a pass


def test_no_problems() -> None:
    assert no_problems([], "all right").passed
    bad = no_problems(list(range(10)), "all right", expected="none")
    assert not bad.passed and bad.seen == [0, 1, 2, 3, 4, 5] and bad.message == "10 problem(s)"


def test_rows_by_reports_duplicates_and_rows_without_a_key() -> None:
    rows = [{"id": " a ", "x": "1"}, {"id": "a", "x": "2"}, {"id": "", "x": "3"}, {"x": "4"},
            {"id": "b", "x": "5"}, "not a row"]
    keyed = rows_by(rows, "id")
    assert list(keyed) == ["a", "b"] and keyed["a"]["x"] == "1"  # the first row of a key wins
    assert keyed.duplicates == ["a"] and keyed.unkeyed == 3
    cover = keyed.coverage(["a", "b", "c"])
    assert not cover.passed
    assert cover.seen == {"missing": ["c"], "unexpected": [], "repeated": ["a"]}
    assert rows_by([{"id": "a"}, {"id": "b"}], "id").coverage(["b", "a"]).passed
    assert not rows_by([{"id": "a"}, {"id": ""}], "id").coverage(["a"]).passed
    assert rows_by(None, "id") == {}


def test_rows_by_tuple_and_function_keys() -> None:
    rows = [{"m": "OLS", "t": "x"}, {"m": "ols", "t": "y"}, {"m": None, "t": "z"}]
    by_pair = rows_by(rows, ("m", "t"))
    assert set(by_pair) == {("OLS", "x"), ("ols", "y"), (None, "z")}
    lowered = rows_by(rows, lambda r: (r["m"].lower(), r["t"]))  # None.lower() raises: unkeyed
    assert set(lowered) == {("ols", "x"), ("ols", "y")} and lowered.unkeyed == 1


def test_rows_by_never_raises_on_what_an_agent_can_write() -> None:
    """A key function overflowing (int of "inf") and keys from JSON that are lists or objects
    leave their rows unkeyed; the grader goes on."""
    rows = [{"m": "inf"}, {"m": "2"}, {"m": ["a"]}, {"m": {"b": 1}}, {"m": "3", "t": [1]}]
    by_int = rows_by(rows, lambda r: int(float(r["m"])))
    assert set(by_int) == {2, 3} and by_int.unkeyed == 3
    assert set(rows_by(rows, "m")) == {"inf", "2", "3"}
    assert set(rows_by(rows, ("m", "t"))) == {("inf", None), ("2", None)}


def test_loaders_take_a_path_too_long_for_the_file_system(tmp_path: Path) -> None:
    """A grader may build a path from the agent's text (a Bates number, say): one longer than a
    file name may be is missing, not an OSError."""
    from lastexam.grading import is_file, load_xlsx

    long = tmp_path / ("X" * 300 + ".txt")
    assert not is_file(long) and not is_file(tmp_path / "a\0b")
    for loaded in (read_text(long), load_json(long), load_xlsx(long)):
        assert loaded.value is None and "missing" in loaded.outcome.message


def test_match_rows_passes_within_tolerance_and_reads_empty_cells() -> None:
    seen = {"p1": {"v": "1,000.4", "flag": " high ", "ratio": "NA"}, "p2": {"v": "2000", "flag": "ok", "ratio": "0.5"}}
    ref = {"p1": {"v": 1000.0, "flag": "high", "ratio": None}, "p2": {"v": 2001.0, "flag": "ok", "ratio": 0.5}}
    assert match_rows(seen, ref, ["v", "flag", "ratio"], abs=1.0).passed
    assert not match_rows(seen, ref, "v", abs=0.1).passed
    assert match_rows(seen, ref, "v", rel=1e-3).passed
    assert not match_rows(seen, ref, "v", abs=1.0, text=False).passed  # text is not a number here
    with pytest.raises(ValueError, match="exact"):
        match_rows(seen, ref, "v", exact=True, rel=0.1)


def test_match_rows_lists_the_worst_misses_first() -> None:
    ref = {k: {"v": 100.0} for k in "abcdef"}
    seen = {"a": {"v": "100.5"}, "b": {"v": "103"}, "c": {"v": "x"}, "e": {"v": "110"}, "f": {"v": "100"}}
    out = match_rows(seen, ref, "v", abs=1.0)
    assert not out.passed and out.message == "4 of 6 values differ (rel 0, abs 1); 1 rows missing"
    order = [(m["key"], m.get("seen")) for m in out.seen]
    # the missing row, then the value that is not a number, then by how far off: 10, then 3
    assert order == [("d", "no row"), ("c", "x"), ("e", "110"), ("b", "103")]
    assert len(match_rows({}, {k: {"v": 1} for k in range(20)}, "v", show=6).seen) == 6


def test_match_rows_only_also_fails_rows_not_in_the_reference() -> None:
    seen = {"a": {"s": "x"}, "z": {"s": "y"}}
    ref = {"a": {"s": "x"}}
    assert match_rows(seen, ref, "s", exact=True).passed
    only = match_rows(seen, ref, "s", exact=True, only=True)
    assert not only.passed and only.seen == [{"key": "z", "seen": "row not in the reference"}]


def test_match_rows_counts_a_row_that_is_no_mapping_as_missing() -> None:
    # agent output such as {"a": [1, 2]} or {"a": "x"}: graded, never raised on
    out = match_rows({"a": [1, 2], "b": "x", "c": {"v": 1}}, {k: {"v": 1} for k in "abc"}, "v", exact=True)
    assert not out.passed and out.message.endswith("2 rows missing")
    assert [m["seen"] for m in out.seen] == ["not a row", "not a row"]


def test_match_rows_evidence_survives_a_rubric() -> None:
    r = Rubric()
    r.check("rows", 1, match_rows({("a", 1): {"v": "nan"}}, {("a", 1): {"v": 2.0}, ("b", 2): {"v": 1.0}}, "v"))
    text = json.dumps(r.to_dict(), allow_nan=False)
    assert r.checks[0].evidence["seen"][0]["seen"] == "no row" and "nan" in text


def _task(tmp_path: Path, grader: str) -> Path:
    (tmp_path / "solution").mkdir()
    (tmp_path / "solution" / "model.py").write_text("X = 1\n")
    (tmp_path / "generate.py").write_text("from solution import model\n")  # the generator may
    (tmp_path / "grader.py").write_text(grader)
    return tmp_path


@pytest.mark.parametrize(
    "grader",
    ["import model\n", "from solution.model import X\n", "import solution\n",
     "import importlib\nm = importlib.import_module('model')\n",
     "import sys\nsys.path.insert(0, str(ctx.task / 'solution'))\n",
     "p = '/task/solution/model.py'\n", "m = __import__('model')\n"],
)
def test_a_grader_that_reaches_into_solution_is_refused(tmp_path: Path, grader: str) -> None:
    assert solution_uses(_task(tmp_path, grader))


def test_a_grader_with_its_own_code_passes(tmp_path: Path) -> None:
    task = _task(tmp_path, '"""Checks the solution/ of the agent."""\nimport json\nMODEL = "model"\n')
    assert solution_uses(task) == []
    (task / "grader.py").write_text("def grade(ctx:\n")
    assert "does not parse" in solution_uses(task)[0]


def test_load_xml_plain_gzipped_and_hostile(tmp_path: Path) -> None:
    import gzip

    doc = b'<d:diagram xmlns:d="urn:x"><d:layer/></d:diagram>'
    plain, packed = tmp_path / "a.dia", tmp_path / "b.dia"
    plain.write_bytes(doc)
    packed.write_bytes(gzip.compress(doc))
    for path in (plain, packed):
        root, outcome = load_xml(path, root="{urn:x}diagram", kind="Dia XML")
        assert outcome.passed and root is not None and len(root) == 1
    wrong_root, outcome = load_xml(plain, root="{urn:x}other", kind="Dia XML")
    assert wrong_root is None and not outcome.passed and "root element" in outcome.message
    bomb = tmp_path / "bomb.xml"
    bomb.write_bytes(gzip.compress(b"<a>" + b"x" * 5000 + b"</a>"))
    assert load_xml(bomb, max_unpacked=1000).value is None
    entities = tmp_path / "laughs.xml"
    entities.write_bytes(b'<!DOCTYPE a [<!ENTITY x "xx">]><a>&x;</a>')
    assert load_xml(entities).value is None
    for name, data in {"junk": b"\x1f\x8b\x00garbage", "empty": b"", "text": b"not xml"}.items():
        (tmp_path / name).write_bytes(data)
        value, outcome = load_xml(tmp_path / name)
        assert value is None and not outcome.passed
    (tmp_path / "dir").mkdir()
    assert load_xml(tmp_path / "dir").value is None
    assert load_xml(tmp_path / "big.xml", limit=10).value is None
    (tmp_path / "big.xml").write_bytes(b"<a>" + b"y" * 100 + b"</a>")
    assert load_xml(tmp_path / "big.xml", limit=10).value is None


def _workbook(path: Path, factor: int) -> Path:
    from openpyxl import Workbook

    wb = Workbook()
    wb.active["A1"], wb.active["A2"] = 2, f"=A1*{factor}"
    wb.save(path)
    return path


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_workbooks_recalculated_together_as_each_alone(tmp_path: Path) -> None:
    """One LibreOffice run for several workbooks gives what recalculate_xlsx gives each: the
    first laid out as alone; one LibreOffice cannot read fails as alone, the others unharmed."""
    from lastexam.grading import Recalculated, recalculate_xlsx

    src = tmp_path / "src"
    src.mkdir()
    files = {"main": _workbook(src / "a.xlsx", 3), "broken": src / "b.xlsx",
             "scaled": _workbook(src / "c.xlsx", 5), "absent": src / "none.xlsx"}
    files["broken"].write_bytes(b"PK\x03\x04 not a workbook")
    batch = Recalculated(files, tmp_path / "scratch")
    main, scaled = batch.get("main"), batch.get("scaled")
    assert main.value == tmp_path / "scratch" / "out-main" / "model.xlsx"
    assert [load_xlsx(x.value, data_only=True).value.active["A2"].value for x in (main, scaled)] == [6, 10]
    alone = {tag: recalculate_xlsx(path, tmp_path / "alone", tag) for tag, path in files.items()}
    for tag in files:
        got = batch.get(tag)
        assert (got.value is None, got.outcome.passed) == (alone[tag].value is None, alone[tag].outcome.passed), tag
    assert batch.get("absent").outcome.message == "none.xlsx is missing"
    with pytest.raises(ValueError, match="tags"):
        Recalculated({"../x": files["main"]}, tmp_path / "scratch")


# Stands in for a LibreOffice run over several workbooks that hangs: it writes the first
# `written` outputs, then sleeps. argv: outdir, written, copies...
_HANGING_BATCH = """
import shutil, sys, time
outdir, written, copies = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
for copy in copies[:written]:
    shutil.copy(copy, outdir)
time.sleep(60)
"""


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
@pytest.mark.parametrize("written", [0, 1])
def test_a_hung_batch_blames_only_the_workbook_it_hung_on(tmp_path: Path, monkeypatch, written: int) -> None:
    """Nothing written: the first workbook hung LibreOffice and fails as alone, with no second
    wait. One written: that one (maybe cut short) and the next are both suspects and each is
    recalculated alone; the one written is not blamed."""
    import sys

    from lastexam.grading import Recalculated, office

    real = office._command

    def command(profile: Path, outdir: Path, copies: list[Path]) -> list[str]:
        if len(copies) == 1:
            return real(profile, outdir, copies)
        return [sys.executable, "-c", _HANGING_BATCH, str(outdir), str(written), *map(str, copies)]

    monkeypatch.setattr(office, "_command", command)
    src = tmp_path / "src"
    src.mkdir()
    files = {"main": _workbook(src / "a.xlsx", 3), "scaled": _workbook(src / "c.xlsx", 5)}
    batch = Recalculated(files, tmp_path / "scratch", timeout_s=2)
    batch.timeout_s = 240  # what is recalculated alone gets the usual time: LibreOffice under load
    main, scaled = batch.get("main"), batch.get("scaled")
    assert scaled.value is not None and load_xlsx(scaled.value, data_only=True).value.active["A2"].value == 10
    if written == 0:
        assert main.value is None and main.outcome.message.startswith("LibreOffice did not finish")
    else:
        assert main.value is not None and load_xlsx(main.value, data_only=True).value.active["A2"].value == 6
