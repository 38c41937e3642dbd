"""Each malformed input of bad_inputs.py gives one clear message naming the file (and field)
and the problem, exits 2 without a traceback, and leaves recorded results as they were."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL, ROOT, run_cli

from .bad_inputs import CASES, Case, render


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory, base_env_ready: None) -> Path:
    run = tmp_path_factory.mktemp("recorded") / "run"
    run_cli("run", COLUMN_TOTAL, "--agent", "nop", "--attempts", "2", "--out", run)
    return run


def _fingerprint(run: Path) -> dict[str, str]:
    return {
        str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(run.rglob("*")) if p.is_file()
    }


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_gives_one_clear_message(case: Case, tmp_path: Path, recorded_run: Path) -> None:
    task = tmp_path / "tasks" / "other" / "column-total"
    shutil.copytree(COLUMN_TOTAL, task)
    run = tmp_path / "run"
    shutil.copytree(recorded_run, run)
    argv = case.make(tmp_path, task, run)
    before = _fingerprint(run)
    proc = run_cli(*argv, check=False, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and proc.stdout.strip() == ""
    stderr = proc.stderr.strip()
    if "Usage:" in stderr:  # the command-line parser's own message
        message = stderr[stderr.index("Usage:"):]
    else:  # one message; before it, at most the progress bar's last frame
        assert stderr.count("error:") == 1, stderr
        message = stderr[stderr.index("error:"):]
    for text in case.says:
        expected = text.format(task=task, run=run, tmp=tmp_path)
        assert expected in message, f"{expected!r} not in {message!r}"
    assert _fingerprint(run) == before  # recorded results (even a corrupt store) untouched


def test_bad_input_table_is_in_the_docs() -> None:
    assert len(CASES) >= 20
    assert render() in (ROOT / "docs" / "integrity.md").read_text()
