"""task.toml errors name the file and the field; the taxonomy holds 14 clusters, 55 subdomains."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, run_cli
from lastexam.errors import LastexamError
from lastexam.task.load import discover_tasks, load_task
from lastexam.taxonomy import load_taxonomy


def test_taxonomy_has_every_cluster_and_subdomain() -> None:
    tax = load_taxonomy()
    assert len(tax.clusters) == 14
    assert len(tax.subdomains) == 55
    assert len({s.id for s in tax.subdomains}) == 55
    assert all(s.soc for s in tax.subdomains)
    assert tax.cluster("other").subdomains[0].id == "sports"


def _task_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, dest)
    return dest


BAD_EDITS = [
    ('tier = "near-term"', 'tier = "easy"', "field 'tier'"),
    ('cluster = "other"', 'cluster = "sport"', "field 'cluster'"),
    ('subdomain = "sports"', 'subdomain = "genomics"', "field 'subdomain'"),
    ("timeout_s = 60", "timeout_s = 18001", "field 'timeout_s'"),
    ('soc = ["27-2022.00"]', 'soc = ["coach"]', "field 'soc'"),
    ("gui = false", "gui = false\ncolour = 1", "field 'colour': unknown key"),
    ('outputs = ["result.json"]', 'outputs = ["../escape.json"]', "field 'outputs'"),
    ('id = "column-total"', 'id = "other-name"', "field 'id'"),
    ('title = "', 'titel = "', "field 'title': required key is missing"),
    ('canary = "', 'canary = "not-a-guid', "field 'canary'"),
    ("gui = false", "gui = false\n[limits]\nmemory_mb = 1", "field 'limits.memory_mb'"),
    ('tier = "near-term"', 'tier = near-term', "not valid TOML"),
]


@pytest.mark.parametrize(("old", "new", "expected"), BAD_EDITS)
def test_malformed_task_toml_names_file_and_field(tmp_path: Path, old: str, new: str, expected: str) -> None:
    task = _task_copy(tmp_path)
    toml = task / "task.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))
    with pytest.raises(LastexamError) as info:
        load_task(task)
    message = info.value.render()
    assert str(toml) in message
    assert expected in message


def test_cli_reports_malformed_task_without_traceback(tmp_path: Path) -> None:
    task = _task_copy(tmp_path)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('tier = "near-term"', 'tier = "easy"'))
    proc = run_cli("run", task, "--agent", "nop", "--out", tmp_path / "run", check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{toml}: field 'tier'" in proc.stderr
    assert not (tmp_path / "run").exists()


def test_discovery_of_folders_and_lists(tmp_path: Path) -> None:
    task = _task_copy(tmp_path)
    listing = tmp_path / "suite.txt"
    listing.write_text(f"# a comment\n{task.relative_to(tmp_path)}\n")
    assert [t.id for t in discover_tasks([listing])] == ["column-total"]
    assert [t.id for t in discover_tasks([tmp_path])] == ["column-total"]
    with pytest.raises(LastexamError, match="no such task folder"):
        discover_tasks([tmp_path / "missing"])


def test_tasks_new_scaffolds_every_file(tmp_path: Path) -> None:
    run_cli("tasks", "new", "business-finance/loan-check", "--root", tmp_path)
    task = tmp_path / "business-finance" / "loan-check"
    for rel in ("task.toml", "instruction.md", "grader.py", "solution/solve.sh", "generate.py",
                "fixtures/negative/partial/fixture.toml", "fixtures/negative/wrong-method/fixture.toml",
                "fixtures/negative/shortcut/fixture.toml", "fixtures/positive/reformatted/fixture.toml"):
        assert (task / rel).is_file(), rel
    assert all((fx / "output").is_dir() for fx in task.glob("fixtures/*/*"))
    assert 'kind = "shortcut"' in (task / "fixtures/negative/shortcut/fixture.toml").read_text()
    assert "tier_rationale = " in (task / "task.toml").read_text()
    canary = next(line for line in (task / "task.toml").read_text().splitlines() if line.startswith("canary"))
    guid = canary.split('"')[1]
    assert guid in (task / "instruction.md").read_text()
    # The scaffold is deliberately incomplete: its TODOs fail validation, by field.
    with pytest.raises(LastexamError, match=r"field 'soc'.*field 'environment'"):
        load_task(task)


def test_coverage_places_each_task_in_its_subdomain_and_flags_gaps() -> None:
    import json

    from lastexam.task.catalogue import coverage

    tasks = discover_tasks([Path("tasks")])
    rows = coverage(tasks)
    assert len(rows) == len(load_taxonomy().subdomains) == 55
    placed = {tid: r["subdomain"] for r in rows for tid in r["tasks"]}
    assert placed == {t.id: t.spec.subdomain for t in tasks}
    one = next(t for t in tasks if t.id == "theophylline-nca")
    proc = run_cli("tasks", "coverage", "--json", one.path, check=False)
    assert proc.returncode == 1  # 54 subdomains without a task
    shown = json.loads(proc.stdout)
    assert [r["subdomain"] for r in shown if r["tasks"]] == [one.spec.subdomain]
    page = run_cli("tasks", "list", "--markdown", one.path).stdout
    assert "Subdomains covered: 1 of 55; without a task:" in page
    # the cluster x tier matrix counts the one task in its cluster and tier only
    cluster = load_taxonomy().cluster(one.spec.cluster).name
    row = next(line for line in page.splitlines() if line.startswith(f"| {cluster} |"))
    assert row == f"| {cluster} | 1 | 0 | 0 | 1 | 1 of 5 |"  # theophylline-nca is near-term
    assert "| **all** | **1** | **0** | **0** | **1** | **1 of 55** |" in page
