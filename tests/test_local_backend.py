"""The local backend records trials in one thread while the next ones run
(lastexam.run.backends.local), at most `concurrency` decided trials waiting for it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from conftest import COLUMN_TOTAL
from lastexam.run.runner import execute
from lastexam.run.trial import TrialRunner
from lastexam.store.db import Store
from lastexam.store.models import RunConfig

pytestmark = pytest.mark.usefixtures("base_env_ready")


def test_the_next_trial_runs_while_one_is_recorded(tmp_path: Path, monkeypatch) -> None:
    events: list[tuple[str, int]] = []
    release = threading.Event()
    decide, record = TrialRunner.decide, TrialRunner.record

    def deciding(self, plan, earlier=None):
        decided = decide(self, plan, earlier)
        events.append(("decided", plan.key.attempt))
        return decided

    def recording(self, plan, decided):
        if plan.key.attempt == 1:
            assert release.wait(120), "trial 2 was never decided while trial 1 waited to be recorded"
        events.append(("recorded", plan.key.attempt))
        return record(self, plan, decided)

    def unblock() -> None:
        deadline = time.monotonic() + 120
        while ("decided", 2) not in events and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(1.0)  # room for a third trial to be decided, if nothing held it back
        release.set()

    monkeypatch.setattr(TrialRunner, "decide", deciding)
    monkeypatch.setattr(TrialRunner, "record", recording)
    threading.Thread(target=unblock, daemon=True).start()
    config = RunConfig(task_paths=[str(COLUMN_TOTAL)], agent="nop", attempts=3, concurrency=1)
    outcome = execute(config, tmp_path / "run")

    # One trial at a time: trial 2 ran while trial 1 waited for the recorder, and trial 3
    # waited for trial 1's record (one decided trial at most in the recorder's queue).
    assert events[:3] == [("decided", 1), ("decided", 2), ("recorded", 1)], events
    assert sorted(events) == [("decided", a) for a in (1, 2, 3)] + [("recorded", a) for a in (1, 2, 3)]
    assert sorted(t.key.attempt for t in outcome.trials) == [1, 2, 3]
    store = Store(tmp_path / "run")
    try:
        assert len(store.finished_ids()) == 3
    finally:
        store.close()
