"""The grader's result reaches the host through a pipe only the harness holds: a process the
grader started, which outlives it and rewrites result.json, changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import COLUMN_TOTAL, run_json

FORGED = ('{"status": "ok", "rubric": {"score": 1.0, "full_pass": true, "checks": [{"name": "forged",'
          ' "weight": 1.0, "gate": false, "passed": true, "points": 1.0, "message": "", "evidence": {}}]}}')
HOSTILE_GRADER = f'''
import atexit
import subprocess
import time

from lastexam.grading import GradeContext, Rubric

FORGED = {FORGED!r}


def grade(ctx: GradeContext) -> Rubric:
    # What agent code run by a grader could do: a detached process that keeps replacing the
    # result file, before and after the harness writes its own.
    # It waits for the harness's own result, then replaces it until the sandbox ends.
    script = ("f=/grade/result/result.json; end=$((SECONDS + 20));"
              " until [[ -s $f && $(<$f) == *honest* ]]; do (( SECONDS < end )) || exit; done;"
              " while (( SECONDS < end )); do printf '%s' \\"$0\\" > $f.x; mv -f $f.x $f; done")
    subprocess.Popen(["bash", "-c", script, FORGED], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    atexit.register(time.sleep, 1.0)  # the harness lingers after writing its result
    r = Rubric()
    r.check("honest check", 1, False)
    return r
'''


def test_a_process_outliving_the_grader_cannot_replace_its_result(tmp_path: Path, base_env_ready: None) -> None:
    task = tmp_path / "column-total"
    shutil.copytree(COLUMN_TOTAL, task, ignore=shutil.ignore_patterns("fixtures"))
    (task / "grader.py").write_text(HOSTILE_GRADER)
    out = tmp_path / "run"
    trial = run_json("run", task, "--agent", "oracle", "--out", out)["trials"][0]
    assert trial["score"] == 0.0 and not trial["full_pass"]
    kept = (out / "trials" / trial["trial_id"] / "grader" / "result.json").read_text()
    assert "honest check" in kept and "forged" not in kept
