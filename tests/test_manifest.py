"""The validation manifest behind `lastexam validate --record / --changed / --sample / --gates`,
on copies of the tiny test tasks (tests/data/tasks) beside a copy of environments/base.*."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
from pathlib import Path

import pytest

from conftest import ROOT, TEST_TASKS, run_cli
from lastexam.task.load import load_task
from lastexam.validation import manifest as mf
from lastexam.validation.gates import TaskReport, Validator
from lastexam.validation.manifest import Manifest, ManifestEntry, rotating_sample
from lastexam.validation.selection import ALL_GATES, STATIC_GATES, GateSelection
from lastexam.validation.suite import expected_seconds, next_task, plan_validation, validate_tasks

DAY = dt.date(2026, 12, 3)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: tasks/other/{column-total,deliverable-parse} and environments/base.*."""
    shutil.copytree(TEST_TASKS, tmp_path / "tasks")
    (tmp_path / "environments").mkdir()
    for name in ("base.toml", "base.lock.txt"):
        shutil.copy(ROOT / "environments" / name, tmp_path / "environments" / name)
    return tmp_path


def _validate(project: Path, *args: str, check: bool = True) -> dict:
    proc = run_cli("validate", project / "tasks", "--manifest", project / "m.json", "--json", *args,
                   cwd=project, check=check)
    return json.loads(proc.stdout)


def _gates(result: dict, task: str) -> set[str]:
    return {g["name"] for t in result["tasks"] if t["task"] == task for g in t["gates"]}


def _keys(project: Path) -> dict[str, str]:
    folders = sorted(p for p in (project / "tasks" / "other").iterdir())
    plan = plan_validation(folders, Manifest(), day=DAY)
    return {f.name: plan.keys[f] for f in folders}


@pytest.mark.usefixtures("base_env_ready")
def test_record_then_changed_runs_only_static_gates_on_unchanged_tasks(project: Path) -> None:
    _validate(project, "--record")
    recorded = json.loads((project / "m.json").read_text())["tasks"]
    assert sorted(recorded) == ["column-total", "deliverable-parse"]
    assert "oracle scores 1.0" in recorded["column-total"]["gates"]
    assert recorded["column-total"]["kinds"] == sorted(ALL_GATES.names)

    again = _validate(project, "--changed")
    assert all(t["unchanged_since"] == recorded[t["task"]]["date"] for t in again["tasks"])
    assert "no reference leak" in _gates(again, "column-total")
    assert "oracle scores 1.0" not in _gates(again, "column-total") | _gates(again, "deliverable-parse")

    with (project / "tasks/other/column-total/instruction.md").open("a") as f:
        f.write("\nShow your working.\n")
    edited = _validate(project, "--changed")
    assert "oracle scores 1.0" in _gates(edited, "column-total")
    assert "oracle scores 1.0" not in _gates(edited, "deliverable-parse")


def test_key_covers_task_files_environment_lock_and_grading_library(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _keys(project)
    cache = project / "tasks/other/column-total/__pycache__"
    cache.mkdir()
    (cache / "grader.cpython-311.pyc").write_bytes(b"\0")
    assert _keys(project) == before  # caches are not content

    (project / "tasks/other/column-total/inputs/data.csv").write_text("a,b\n1,2\n")
    after_task = _keys(project)
    assert after_task["column-total"] != before["column-total"]
    assert after_task["deliverable-parse"] == before["deliverable-parse"]

    with (project / "environments/base.lock.txt").open("a") as f:
        f.write("# relocked\n")
    after_lock = _keys(project)
    assert all(after_lock[t] != after_task[t] for t in after_lock)

    package = tmp_path / "package"
    shutil.copytree(mf.package_dir() / "grading", package / "grading")
    monkeypatch.setattr(mf, "package_dir", lambda: package)
    assert _keys(project) == after_lock
    with (package / "grading" / "values.py").open("a") as f:
        f.write("\n# changed\n")
    assert all(k != after_lock[t] for t, k in _keys(project).items())


def test_sample_is_deterministic_and_rotates_by_day(project: Path) -> None:
    ids = [f"task-{i:02d}" for i in range(7)]
    first = rotating_sample(ids, 2, DAY)
    assert first == rotating_sample(list(reversed(ids)), 2, DAY) and len(first) == 2
    week = {t for d in range(7) for t in rotating_sample(ids, 2, DAY + dt.timedelta(days=d))}
    assert rotating_sample(ids, 2, DAY + dt.timedelta(days=1)) != first and week == set(ids)

    folders = sorted((project / "tasks" / "other").iterdir())
    keys = _keys(project)
    entry = dict(kinds=sorted(ALL_GATES.names), gates=["g"], seconds={"g": 1.0}, date="2026-12-01",
                 commit="abc")
    manifest = Manifest(tasks={t: ManifestEntry(key=k, **entry) for t, k in keys.items()})
    plans = [plan_validation(folders, manifest, changed=True, sample=1, day=DAY + dt.timedelta(days=d))
             for d in range(2)]
    assert plans[0].sampled != plans[1].sampled
    assert plan_validation(folders, manifest, changed=True, sample=1, day=DAY).sampled == plans[0].sampled
    for plan in plans:
        assert {f.name: s for f, s in plan.selections.items()} == {
            t: ALL_GATES if t in plan.sampled else STATIC_GATES for t in keys}


def test_entry_recorded_without_a_current_gate_kind_is_stale(project: Path) -> None:
    folders = sorted((project / "tasks" / "other").iterdir())
    keys = _keys(project)

    def plan(kinds: list[str]) -> dict[str, object]:
        entry = dict(kinds=kinds, gates=["g"], seconds={"g": 1.0}, date="2026-12-01", commit="abc")
        manifest = Manifest(tasks={t: ManifestEntry(key=k, **entry) for t, k in keys.items()})
        return {f.name: s for f, s in plan_validation(folders, manifest, changed=True, day=DAY).selections.items()}

    assert plan(sorted(ALL_GATES.names)) == dict.fromkeys(keys, STATIC_GATES)
    assert plan(sorted(ALL_GATES.names - {"blas"})) == dict.fromkeys(keys, ALL_GATES)
    assert plan([]) == dict.fromkeys(keys, ALL_GATES)  # an entry from before kinds were recorded


@pytest.mark.usefixtures("base_env_ready")
def test_gates_runs_the_named_gates_and_what_they_need(project: Path) -> None:
    nop = _gates(_validate(project, "--gates", "nop"), "column-total")
    assert nop == {"schema and taxonomy", "environment installed", "nop scores 0"}
    negative = _gates(_validate(project, "--gates", "negative"), "column-total")
    assert {"oracle scores 1.0", "negative fixture partial"} <= negative
    assert not negative & {"nop scores 0", "no reference leak", "grading is deterministic"}


@pytest.mark.parametrize("args", [("--gates", "oracle,bogus"), ("--sample", "2"), ("--gates", "nop", "--record")])
def test_bad_options_are_clear_errors(project: Path, args: tuple[str, ...]) -> None:
    proc = run_cli("validate", project / "tasks", "--manifest", project / "m.json", *args,
                   cwd=project, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert args[0] in proc.stderr
    if "bogus" in args[1]:
        assert "'bogus'" in proc.stderr and "known gates: static, oracle" in proc.stderr


@pytest.mark.parametrize("content", ["{not json", '{"tasks": {"x": {"key": "short"}}}'])
def test_corrupt_manifest_is_a_clear_error_naming_the_file(project: Path, content: str) -> None:
    (project / "m.json").write_text(content)
    proc = run_cli("validate", project / "tasks", "--manifest", project / "m.json", "--changed",
                   cwd=project, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert str(project / "m.json") in proc.stderr.replace("\n", "")


@pytest.mark.usefixtures("base_env_ready")
def test_record_drops_a_task_that_fails_and_keeps_unchanged_ones(project: Path) -> None:
    _validate(project, "--record")
    before = json.loads((project / "m.json").read_text())["tasks"]
    (project / "tasks/other/column-total/solution/solve.sh").write_text("#!/bin/bash\nexit 0\n")
    result = _validate(project, "--record", "--changed", check=False)
    assert not result["passed"]
    after = json.loads((project / "m.json").read_text())["tasks"]
    assert after == {"deliverable-parse": before["deliverable-parse"]}


def test_expected_seconds_come_from_the_entries_current_or_stale(project: Path) -> None:
    keys = _keys(project)
    folders = sorted((project / "tasks" / "other").iterdir())
    manifest = Manifest(tasks={
        "column-total": ManifestEntry(key=keys["column-total"], gates=["a", "b"],
                                      seconds={"a": 2.0, "b": 3.5}, date="2026-12-03", commit="x"),
        "deliverable-parse": ManifestEntry(key="0" * 64, gates=["a"], seconds={"a": 9.0},
                                           date="2026-12-03", commit="x"),
    })
    plan = plan_validation(folders, manifest, day=DAY)
    # A stale entry (another key: here as after any change of the grading library) still gives
    # the task's rough cost, so the longest tasks start first.
    assert expected_seconds(plan, manifest) == {folders[0]: 5.5, folders[1]: 9.0}
    plan.selections[folders[0]] = STATIC_GATES
    assert expected_seconds(plan, manifest) == {folders[0]: 0.0, folders[1]: 9.0}
    unrecorded = Manifest(tasks={"column-total": manifest.tasks["column-total"]})
    assert expected_seconds(plan_validation(folders, unrecorded, day=DAY), unrecorded) == {folders[0]: 5.5}


def test_longest_task_starts_first_and_reports_keep_the_folder_order(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders = sorted((project / "tasks" / "other").iterdir())
    started: list[str] = []
    real = Validator.validate

    def spy(self: Validator, path: Path, select: GateSelection = ALL_GATES) -> TaskReport:
        started.append(path.name)
        return real(self, path, STATIC_GATES)

    monkeypatch.setattr(Validator, "validate", spy)
    reports = validate_tasks(folders, concurrency=1, expected_s={folders[0]: 5.0, folders[1]: 50.0})
    assert started == ["deliverable-parse", "column-total"]
    assert [r.task for r in reports] == ["column-total", "deliverable-parse"]
    started.clear()
    validate_tasks(folders, concurrency=1, expected_s={folders[1]: 50.0})  # no figure: first
    assert started == ["column-total", "deliverable-parse"]


def test_a_desktop_task_starts_beside_another_only_when_nothing_else_is_left() -> None:
    # pending longest first: 0 and 1 are desktop tasks, 2 and 3 are not
    gui = {0, 1}
    assert next_task([0, 1, 2, 3], gui, running_gui=False) == 0
    assert next_task([1, 2, 3], gui, running_gui=True) == 2
    assert next_task([1, 3], gui, running_gui=True) == 3
    assert next_task([1], gui, running_gui=True) == 1  # no slot is left empty
    assert next_task([1, 3], gui, running_gui=False) == 1


def test_two_desktop_tasks_are_not_validated_side_by_side(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = project / "tasks" / "other" / "column-total"
    folders = []
    for name, gui in (("desk-a", True), ("desk-b", True), ("plain-c", False)):
        folder = project / "tasks" / "other" / name
        shutil.copytree(src, folder)
        toml = folder / "task.toml"
        text = toml.read_text().replace('id = "column-total"', f'id = "{name}"')
        toml.write_text(text.replace("gui = false", f"gui = {str(gui).lower()}"))
        folders.append(folder)
    assert all(load_task(f).spec.gui == (f.name != "plain-c") for f in folders)
    started: list[str] = []
    gate = threading.Event()
    real = Validator.validate

    def spy(self: Validator, path: Path, select: GateSelection = ALL_GATES) -> TaskReport:
        started.append(path.name)
        if path.name == "desk-a":
            gate.wait(30)  # holds its slot until the other slot's task has started
        else:
            gate.set()
        return real(self, path, STATIC_GATES)

    monkeypatch.setattr(Validator, "validate", spy)
    expected = {folders[0]: 30.0, folders[1]: 20.0, folders[2]: 10.0}
    validate_tasks(folders, concurrency=2, expected_s=expected)
    # the first two start in two threads, in either order; the second desktop task last
    assert set(started[:2]) == {"desk-a", "plain-c"} and started[2] == "desk-b", started
