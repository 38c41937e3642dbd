"""Regrade stored outputs with the current grader, without rerunning any agent. The old
grade is kept; the new one becomes the trial's score, status and policy decision in the
store, and the trial's trial.json is rewritten from the store (every reader agrees)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from lastexam.envs import manage as envs
from lastexam.errors import LastexamError
from lastexam.grading.probe import answers_from_checks
from lastexam.layout import RunPaths
from lastexam.run.grading import GradeRequest, grade
from lastexam.run.policy import POLICY, agent_kind
from lastexam.run.probing import Prober
from lastexam.run.session import new_run_id, open_run
from lastexam.run.workspace import RunWorkArea
from lastexam.store.db import Store
from lastexam.store.files import write_trial_file
from lastexam.store.models import TrialRecord
from lastexam.task.load import Task, load_task


@dataclass
class Regraded:
    trial_id: str
    old_score: float | None
    new_score: float | None
    old_version: str
    new_version: str
    status: str
    note: str = ""


def regrade_run(
    run_dir: Path, tasks: list[str] | None = None, on_trial: Callable[[Regraded], None] | None = None,
    *, probe_model: str | None = None, reprobe: bool = False,
) -> list[Regraded]:
    """Model probes' recorded answers are replayed; a probe not asked before, or every probe
    with `reprobe`, goes to `probe_model` (default: the run's own)."""
    with open_run(new_run_id("regrade"), run_dir) as session, ExitStack() as stack:
        stored = session.store.run()
        model = probe_model or (stored[1].probe_model if stored else "")
        if reprobe and not model:
            raise LastexamError("--reprobe needs a probe model (--probe-model PROVIDER:MODEL)",
                                path=run_dir)
        prober = stack.enter_context(Prober(model, run_dir / "probes")) if model else None
        results = []
        # One Task per folder: its hashes (grader version, pristine inputs) are computed once.
        tasks_by_path: dict[str, Task] = {}
        for record in list(session.store.trials()):
            if tasks and record.key.task_id not in tasks:
                continue
            result = _regrade_one(session.store, run_dir, session.area, session.provider, record,
                                  tasks_by_path, prober, reprobe)
            results.append(result)
            if on_trial:
                on_trial(result)
        return results


def _regrade_one(
    store: Store, run_dir: Path, area: RunWorkArea, provider, record: TrialRecord,
    tasks_by_path: dict[str, Task], prober: Prober | None = None, reprobe: bool = False,
) -> Regraded:
    old_version = record.grade.grader_version if record.grade else ""
    folder = RunPaths(run_dir).trial(record.trial_id)
    # What the run did not grade, by the error policy, a regrade does not grade either.
    ending = agent_kind(record.ended_by, record.agent_exit_code)
    if record.status == "infra_error" or not POLICY[ending].grade:
        why = "infrastructure failure" if record.status == "infra_error" else f"ended by {ending}"
        return Regraded(record.trial_id, record.score, record.score, old_version, old_version,
                        record.status, f"not graded ({why}): nothing to regrade")
    if record.sealed:  # its outputs and rubric are sealed (pool/artifacts.py)
        return Regraded(record.trial_id, record.score, record.score, old_version, old_version,
                        record.status, "a sealed task's trial: regrading it is not supported yet")
    if record.task_path not in tasks_by_path:
        tasks_by_path[record.task_path] = load_task(Path(record.task_path))
    task = tasks_by_path[record.task_path]
    env = envs.load(task.spec.environment, task.path)
    work = area.trial(record.trial_id).root
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    work.chmod(0o711)
    output = work / "output"
    if folder.output.is_dir():
        shutil.copytree(folder.output, output)
    else:
        output.mkdir()
    for p in [output, *output.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    note = ""
    if folder.inputs_after.is_file():
        after = json.loads(folder.inputs_after.read_text())
    else:  # recorded before the inputs' state was kept: taken as untampered
        after = dict(task.input_hashes)
        note = "inputs state not stored: taken as untampered"
    answers = {} if reprobe or record.grade is None else answers_from_checks(record.grade.checks)
    g = grade(provider, area, GradeRequest(task, env, output, after, work / "grade",
                                           f"{area.root.name}.{record.trial_id}",
                                           probe_answers=answers, prober=prober))
    kind = ending if g.ok else "grader_failed"
    policy = POLICY[kind]
    store.add_grade(record.trial_id, g, kind, policy.status, policy.counts)
    grades_dir = folder.grades  # the regrades' rubrics, beside the original grader/
    number = len(list(grades_dir.iterdir())) + 1 if grades_dir.is_dir() else 1
    dest = grades_dir / f"{number:02d}-{g.grader_version[:12]}"
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "grade.json").write_text(g.model_dump_json(indent=2))
    regraded = next(store.trials(trial_id=record.trial_id))
    write_trial_file(folder.root, regraded)
    shutil.rmtree(work, ignore_errors=True)
    return Regraded(record.trial_id, record.score, regraded.score, old_version,
                    g.grader_version, regraded.status, note or (g.error or ""))
