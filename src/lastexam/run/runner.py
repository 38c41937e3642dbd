"""A run: plan the trials, check that everything they need is installed, run them on the
chosen backend (run/backends/) with a progress bar, and resume a run that was interrupted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lastexam.agents import get_agent
from lastexam.envs import manage as envs
from lastexam.errors import LastexamError
from lastexam.gateway.models import Budget
from lastexam.gateway.providers import SCRIPTED, parse_model
from lastexam.layout import STAGING_PREFIX, RunPaths
from lastexam.pool.model import utc_day
from lastexam.run.backends import make_backend
from lastexam.run.policy import RunAborted
from lastexam.run.probing import probe_context
from lastexam.run.readiness import check_ready
from lastexam.run.session import new_run_id, open_run
from lastexam.run.trial import TrialPlan
from lastexam.store.db import Store
from lastexam.store.models import RunConfig, TrialKey, TrialRecord
from lastexam.task.load import Task, discover_tasks
from lastexam.task.spec import MAX_TIMEOUT_S
from lastexam.untrusted import remove_tree

__all__ = ["RunOutcome", "check_ready", "execute", "new_run_id", "plan_trials"]


@dataclass
class RunOutcome:
    run_dir: Path
    run_id: str
    trials: list[TrialRecord]
    ran: int  # trials run by this invocation (the rest were already recorded)


def plan_trials(tasks: list[Task], config: RunConfig) -> list[TrialPlan]:
    plans = []
    environments: dict[str, envs.Environment] = {}
    for cell in config.matrix():
        agent = get_agent(cell.agent)
        model = parse_model(cell.model) if cell.model else None  # the one parse of the model
        agent.check_args(model, cell.agent_args)
        budget = Budget(max_cost_usd=cell.max_cost_usd, max_tokens=cell.max_tokens)
        wire = agent.wire_for(model) if model is not None else None
        if wire is not None:
            from lastexam.gateway.server import check_model  # only with a model: slow to import


            check_model(model, wire, budget)
        for task in tasks:
            name = task.spec.environment
            if name not in environments:
                environments[name] = envs.load(name, task.path)
            timeout = min(config.timeout_s or task.spec.timeout_s, MAX_TIMEOUT_S)
            for attempt in range(1, config.attempts + 1):
                key = TrialKey(task_id=task.id, agent=agent.name, model=cell.model, attempt=attempt)
                plans.append(
                    TrialPlan(task, key, agent, cell.agent_args, timeout, environments[name],
                              model, budget, force_desktop=config.desktop)
                )
    return plans


def execute(
    config: RunConfig,
    out: Path | None,
    *,
    resume: bool = False,
    on_progress: Callable[[int, int, TrialRecord | None], None] | None = None,
    identity: Any = None,
) -> RunOutcome:
    """Run (or resume) the trials of `config`; `identity` opens the sealed pools among its
    task paths."""
    store: Store | None = None
    if resume:
        run_dir, store, run_id, config = _reopen_run(config, out)
    else:
        run_id = new_run_id(config.agent)
        run_dir = out or Path("runs") / run_id
        config = config.model_copy(
            update={"task_paths": [str(Path(p).resolve()) for p in config.task_paths]}
        )
        config = _absolute_scripts(config)
    backend = make_backend(config)
    try:
        # Everything that can be wrong with the request is found before the run directory exists.
        # A sealed task is private or public as on the run's first day, resumed or not.
        day = utc_day(store.created_at()) if store is not None else utc_day()
        tasks = discover_tasks([Path(p) for p in config.task_paths], identity, day)
        plans = plan_trials(tasks, config)
        with open_run(
            run_id, run_dir, create=None if resume else config, store=store,
            sandbox=config.sandbox, ready=lambda provider: backend.check(plans, provider),
        ) as session, probe_context(config.probe_model, plans, run_dir, session.area.root) as prober:
            store = session.store
            done = _clean_unfinished(run_dir, store)
            todo = [p for p in plans if p.key.trial_id not in done]
            total, finished = len(plans), len(plans) - len(todo)
            if on_progress:
                on_progress(finished, total, None)
            try:
                for record in backend.run(todo, session, prober):
                    finished += 1
                    if on_progress:
                        on_progress(finished, total, record)
            except RunAborted as e:
                raise LastexamError(
                    f"the run stopped: {e}. The {len(store.finished_ids())} trials recorded so "
                    "far are kept; fix the cause, then finish the run with --resume",
                    path=run_dir,
                ) from None
            trials = list(store.trials())
        return RunOutcome(run_dir=run_dir, run_id=run_id, trials=trials, ran=len(todo))
    finally:
        if store is not None:
            store.close()


def _absolute_scripts(config: RunConfig) -> RunConfig:
    """A scripted model's path is stored absolute, so that --resume works from anywhere."""

    def fix(model: str) -> str:
        return parse_model(model).text if model.startswith(f"{SCRIPTED}:") else model

    cells = [c.model_copy(update={"model": fix(c.model)}) for c in config.cells]
    return config.model_copy(update={"model": fix(config.model), "cells": cells})


def _reopen_run(config: RunConfig, out: Path | None) -> tuple[Path, Store, str, RunConfig]:
    if out is None:
        raise LastexamError("--resume needs --out RUN_DIR (the run to resume)")
    store = Store(out)
    existing = store.run()
    if existing is None:
        store.close()
        raise LastexamError("the run directory holds no run to resume", path=out)
    run_id, stored = existing
    # The stored plan is the run; only how fast and where it goes may change on resume.
    where = {k: getattr(config, k) for k in ("backend", "ray_address") if k in config.model_fields_set}
    return out, store, run_id, stored.model_copy(update={"concurrency": config.concurrency, **where})


def _clean_unfinished(run_dir: Path, store: Store) -> set[str]:
    """Trial folders of a killed run that never reached the store are removed (and rerun)."""
    done = store.finished_ids()
    trials = RunPaths(run_dir).trials
    if trials.is_dir():
        for p in trials.iterdir():
            if p.name.startswith(STAGING_PREFIX) or p.name not in done:
                remove_tree(p)
    return done
