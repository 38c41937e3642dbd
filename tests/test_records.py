"""Typed trial records, the one disk-full test, the model parsed once, the grading context."""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import COLUMN_TOTAL
from lastexam.gateway.providers import ModelSpec
from lastexam.grading.context import GradeContext
from lastexam.run import runner
from lastexam.run.policy import disk_full, infra_kind
from lastexam.store.models import RunCell, RunConfig, TrialRecord
from lastexam.task.load import load_task

# A trial record as the harness wrote it before its parts were typed (record_json, trial.json).
OLD_RECORD = {
    "trial_id": "t__oracle__none__1", "run_id": "r", "task_path": "/x",
    "key": {"task_id": "t", "agent": "oracle", "model": "", "attempt": 1},
    "cluster": "other", "subdomain": "other", "tier": "near-term", "status": "completed",
    "score": 1.0, "full_pass": True, "started_at": "s", "finished_at": "f",
    "timings": {"stage": 0.1, "agent": 2.5, "collect": 0.01, "grade": 0.2, "record": 0.02},
    "usage": {"traced": True, "execs": 3, "script_execs": 1, "programs": {"awk": 1},
              "python_imports": {}, "declared_software": {"awk": True}, "used_declared": True,
              "script_share": 0.3333},
    "policy": {"kind": "completed", "counts": True, "retries": 1,
               "earlier": [{"kind": "sandbox_failed", "error": "boom"}]},
    "repro": {"harness_version": "0.1.0", "git_commit": None, "sandbox": {"provider": "bwrap"},
              "host": {"cpus": 2, "memory_bytes": 1, "kernel": "k", "machine": "m", "python": "3"},
              "task_hash": "a", "grader_version": "b", "environment": "base",
              "environment_fingerprint": {"awk": "5"}, "agent": "oracle",
              "agent_version": "v", "model": "", "timeout_s": 60},
}


def test_stored_records_read_into_typed_parts() -> None:
    record = TrialRecord.model_validate(OLD_RECORD)
    assert record.timings.agent == 2.5 and record.timings.record == 0.02
    assert record.usage.used_declared is True and record.usage.script_share == 0.3333
    assert record.policy is not None and record.policy.counts and record.policy.retries == 1
    assert record.policy.earlier[0].kind == "sandbox_failed"
    assert record.repro.host is not None and record.repro.host.cpus == 2
    again = TrialRecord.model_validate_json(record.model_dump_json(exclude={"error"}))
    assert again == record


@pytest.mark.parametrize("part", ["timings", "usage", "policy", "repro"])
def test_a_misspelt_field_of_a_typed_part_is_refused(part: str) -> None:
    bad = {**OLD_RECORD, part: {**OLD_RECORD[part], "misspelt": 1}}
    with pytest.raises(ValidationError, match="misspelt"):
        TrialRecord.model_validate(bad)


def test_a_trial_that_never_ran_has_empty_typed_parts() -> None:
    bare = {k: v for k, v in OLD_RECORD.items() if k not in ("timings", "usage", "policy", "repro")}
    record = TrialRecord.model_validate(bare)
    assert record.timings.agent is None and record.usage.used_declared is None
    assert record.policy is None and record.repro.host is None


def test_disk_full_is_recognised_however_it_is_raised() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    copy = shutil.Error([("a", "b", "[Errno 28] No space left on device: 'b'")])
    db = sqlite3.OperationalError("database or disk is full")
    db.sqlite_errorcode = sqlite3.SQLITE_FULL
    for e in (full, OSError(errno.EDQUOT, "quota"), copy, db):
        assert disk_full(e), e
    for e in (OSError(errno.EACCES, "denied"), shutil.Error([("a", "b", "[Errno 13] denied")]),
              sqlite3.OperationalError("locked"), ValueError("x")):
        assert not disk_full(e), e
    # a copy that filled the disk while staging stops the run, like any other full disk
    assert infra_kind(copy, True, "stage") == "disk_full"


def test_the_model_is_parsed_once_per_cell_and_travels(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    calls: list[str] = []
    real = runner.parse_model

    def counting(text: str) -> ModelSpec:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(runner, "parse_model", counting)
    script = tmp_path / "s.yaml"
    script.write_text("turns: []\n")
    cell = RunCell(agent="lastexam-agent", model=f"scripted:{script}")
    config = RunConfig(task_paths=[], agent="x", attempts=3, cells=[cell])
    plans = runner.plan_trials([load_task(COLUMN_TOTAL)], config)
    assert calls == [f"scripted:{script}"]
    assert len(plans) == 3
    assert {p.model for p in plans} == {ModelSpec("scripted", str(script))}
    assert all(p.key.model == f"scripted:{script}" for p in plans)


def test_the_grading_context_is_written_and_read_as_one_model() -> None:
    ctx = GradeContext(Path("/o"), Path("/r"), Path("/i"), Path("/t"), Path("/s"), canary="c",
                       inputs_after={"a.csv": "h"}, inputs_pristine={"a.csv": "h"})
    back = GradeContext.from_json(ctx.to_json())
    assert [getattr(back, k) for k in GradeContext.__slots__] == [
        getattr(ctx, k) for k in GradeContext.__slots__
    ]
