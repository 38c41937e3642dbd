"""A stored trial's folder is laid out as layout.TrialPaths says."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import COLUMN_TOTAL, run_json
from lastexam.layout import RunPaths, TrialPaths


def test_a_stored_trial_has_the_layout_of_trial_paths(tmp_path: Path, base_env_ready: None) -> None:
    out = tmp_path / "run"
    result = run_json("run", COLUMN_TOTAL, "--agent", "oracle", "--out", out)
    trial_id = result["trials"][0]["trial_id"]
    run = RunPaths(out)
    assert run.db.is_file()
    assert sorted(p.name for p in run.trials.iterdir()) == [trial_id]
    trial = run.trial(trial_id)
    assert isinstance(trial, TrialPaths)
    assert sorted(p.name for p in trial.root.iterdir()) == sorted(
        p.name for p in (trial.record, trial.output, trial.agent, trial.grader, trial.trajectory)
    )
    assert json.loads(trial.record.read_text())["trial_id"] == trial_id
    assert json.loads((trial.output / "result.json").read_text())["count"] > 0
    for log in (trial.agent_stdout, trial.agent_stderr, trial.exec_log, trial.inputs_after):
        assert log.is_file(), log
    assert json.loads((trial.grader / "result.json").read_text())["status"] == "ok"
