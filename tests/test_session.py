"""open_run: the one way run, validate and regrade open a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from lastexam.errors import LastexamError
from lastexam.run.leftovers import claim_run, lock_path
from lastexam.run.session import new_run_id, open_run
from lastexam.run.workspace import RunWorkArea
from lastexam.store.models import RunConfig

CONFIG = RunConfig(task_paths=[], agent="test")


def not_ready(provider) -> None:
    raise LastexamError("not ready")


def test_nothing_is_written_when_the_run_is_not_ready(tmp_path: Path) -> None:
    run_id, run_dir = new_run_id("session-test"), tmp_path / "run"
    area = RunWorkArea.for_run(run_id)
    with pytest.raises(LastexamError, match="not ready"), \
            open_run(run_id, run_dir, create=CONFIG, ready=not_ready):
        pass
    assert not run_dir.exists()
    assert not area.root.exists() and not lock_path(area).exists()


def test_the_work_area_is_claimed_while_open_and_removed_after(tmp_path: Path) -> None:
    run_id = new_run_id("session-test")
    area = RunWorkArea.for_run(run_id)
    with open_run(run_id, tmp_path / "run", create=CONFIG) as session:
        assert session.area == area and area.root.is_dir()
        assert session.store.run() is not None and session.store.run()[0] == run_id
        with pytest.raises(LastexamError, match="being run by another"):
            claim_run(area)
        assert session.repro().host is not None
    assert not area.root.exists() and not lock_path(area).exists()
    # the stored run opens again (as regrade opens it), under another id
    other = new_run_id("session-test")
    with open_run(other, tmp_path / "run") as session:
        assert session.store.run()[0] == run_id


def test_a_folder_without_a_run_is_refused_before_anything_else(tmp_path: Path) -> None:
    run_id = new_run_id("session-test")
    area = RunWorkArea.for_run(run_id)
    with pytest.raises(LastexamError, match=r"no results\.db"), open_run(run_id, tmp_path):
        pass
    assert not area.root.exists() and not lock_path(area).exists()
