"""Validating many tasks at once: which gates each task gets (--changed, --sample, --gates),
the throwaway run they share, and the manifest --record writes."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from lastexam.envs.manage import environments_dir
from lastexam.errors import LastexamError
from lastexam.layout import RunPaths
from lastexam.run.probing import Prober
from lastexam.run.session import new_run_id, open_run
from lastexam.store.models import RunConfig
from lastexam.task.load import load_task
from lastexam.validation import conformance as cf
from lastexam.validation.gates import TaskReport, Validator
from lastexam.validation.manifest import (
    Manifest,
    ManifestEntry,
    rotating_sample,
    task_key,
)
from lastexam.validation.selection import ALL_GATES, STATIC_GATES, GateSelection


@dataclass
class ValidationPlan:
    selections: dict[Path, GateSelection] = field(default_factory=dict)
    keys: dict[Path, str] = field(default_factory=dict)  # folders whose task.toml loads
    unchanged: dict[Path, str] = field(default_factory=dict)  # folder -> date of its manifest entry
    sampled: list[str] = field(default_factory=list)  # unchanged task ids validated fully anyway


def plan_validation(
    folders: list[Path],
    manifest: Manifest,
    *,
    changed: bool = False,
    sample: int = 0,
    gates: GateSelection = ALL_GATES,
    day: dt.date,
) -> ValidationPlan:
    """Every gate (or `gates`) for each folder; with `changed`, only the static gates for tasks
    whose manifest entry is current (same key, every gate kind), except `sample` of them picked
    by the UTC day."""
    if sample and not changed:
        raise LastexamError("--sample picks among unchanged tasks: use it with --changed", field="--sample")
    plan = ValidationPlan()
    ids: dict[str, Path] = {}
    for folder in folders:
        plan.selections[folder] = gates
        try:
            task = load_task(folder)
        except LastexamError:
            continue  # the schema gate reports it
        env_toml = environments_dir(task.path) / f"{task.spec.environment}.toml"
        plan.keys[folder] = task_key(task.path, env_toml)
        entry = manifest.tasks.get(task.id)
        if changed and entry is not None and entry.current(plan.keys[folder]):
            plan.unchanged[folder] = entry.date
            ids[task.id] = folder
    plan.sampled = rotating_sample(list(ids), sample, day)
    for task_id, folder in ids.items():
        if task_id not in plan.sampled:
            plan.selections[folder] = STATIC_GATES
    return plan


def expected_seconds(plan: ValidationPlan, manifest: Manifest) -> dict[Path, float]:
    """Each folder's seconds in its manifest entry, for the gates it will run now (the static
    gates alone take no time to speak of). An entry recorded under another key (the task, its
    environment or the grading library changed since, which makes every key stale) still tells
    roughly how long the task takes; a folder without any entry has no figure."""
    by_key = {entry.key: entry for entry in manifest.tasks.values()}
    found = {folder: by_key.get(key) or manifest.tasks.get(folder.name) for folder, key in plan.keys.items()}
    return {folder: sum(entry.seconds.values()) if plan.selections[folder].sandboxed else 0.0
            for folder, entry in found.items() if entry is not None}


def record_reports(
    manifest: Manifest, plan: ValidationPlan, reports: list[TaskReport], day: dt.date, commit: str
) -> Manifest:
    """Entries for the tasks that passed every gate; tasks that failed one lose theirs; tasks
    checked only by the static gates keep theirs while these pass. `commit`: lastexam's commit
    when the validation started."""
    tasks = dict(manifest.tasks)
    for r in reports:
        folder = Path(r.path)
        if not r.passed:
            tasks.pop(r.task, None)
        elif r.selection.complete and folder in plan.keys:
            tasks[r.task] = ManifestEntry(
                key=plan.keys[folder], kinds=sorted(r.selection.names), gates=[g.name for g in r.gates],
                seconds={g.name: g.seconds for g in r.gates}, date=day.isoformat(), commit=commit,
            )
    return Manifest(tasks=tasks)


def next_task(pending: list[int], gui: set[int], *, running_gui: bool) -> int:
    """The next task to start of `pending` (longest first): while a desktop task runs, the
    first that is not one. A desktop task's oracle mostly waits on its applications, so two
    side by side left a core idle (54 of a full run's 83 idle core-seconds, 5 December 2026)."""
    if running_gui:
        return next((i for i in pending if i not in gui), pending[0])
    return pending[0]


def _on_desktop(folder: Path) -> bool:
    try:
        return load_task(folder).spec.gui
    except LastexamError:
        return False  # the schema gate reports it


def validate_tasks(
    folders: list[Path],
    *,
    concurrency: int = 2,
    keep: Path | None = None,
    on_report=None,
    selections: dict[Path, GateSelection] | None = None,
    probe_model: str = "",
    expected_s: dict[Path, float] | None = None,
) -> list[TaskReport]:
    """Validate task folders in a throwaway run (kept in `keep` when given), each with every
    gate or with the gates `selections` gives for it. Tasks start longest first by
    `expected_s` (those without a figure before all), so that no long task starts last and
    runs alone, and not two desktop tasks together where another can start (next_task); the
    reports keep the order of `folders`."""
    if keep is not None and RunPaths(keep).db.exists():
        raise LastexamError("already holds a run: give --keep a new folder", path=keep)
    run_dir = keep or Path(tempfile.mkdtemp(prefix="lastexam-validate-"))
    config = RunConfig(task_paths=[str(f) for f in folders], agent="validate")
    reports: list[TaskReport] = []
    try:
        with open_run(new_run_id("validate"), run_dir, create=config) as session, \
                ExitStack() as stack, ThreadPoolExecutor(concurrency) as pool:
            prober = stack.enter_context(Prober(probe_model, run_dir / "probes")) if probe_model else None
            runner = session.trial_runner(prober=prober)
            validator = Validator(runner, cf.suite_canaries(folders))
            runner.recorded_probes = validator.probes.of
            chosen = selections or {}
            expected = expected_s or {}
            pending = sorted(range(len(folders)), key=lambda i: -expected.get(folders[i], float("inf")))
            # desktop tasks that run trials (not those given only the static gates)
            gui = {i for i in pending
                   if chosen.get(folders[i], ALL_GATES).sandboxed and _on_desktop(folders[i])}
            running: dict[Future[TaskReport], int] = {}
            done_by_index: dict[int, TaskReport] = {}
            while pending or running:
                while pending and len(running) < concurrency:
                    i = next_task(pending, gui, running_gui=bool(gui & set(running.values())))
                    pending.remove(i)
                    running[pool.submit(validator.validate, folders[i], chosen.get(folders[i], ALL_GATES))] = i
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for job in finished:
                    done_by_index[running.pop(job)] = job.result()
                    if on_report:
                        on_report(job.result(), len(done_by_index), len(folders))
            reports = [done_by_index[i] for i in range(len(folders))]  # in the folders' order
    finally:
        if keep is None:
            shutil.rmtree(run_dir, ignore_errors=True)
    return reports
