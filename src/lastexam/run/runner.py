"""A run: plan the trials, check that everything they need is installed, run them with a
progress bar and bounded concurrency, and resume a run that was interrupted."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lastexam.agents import get_agent
from lastexam.computer import toolchain as computer_toolchain
from lastexam.desktop import launch as desktop_launch
from lastexam.envs import manage as envs
from lastexam.errors import LastexamError
from lastexam.gateway.models import Budget
from lastexam.gateway.providers import PROVIDERS, SCRIPTED, parse_model
from lastexam.layout import STAGING_PREFIX, RunPaths
from lastexam.run.policy import RunAborted
from lastexam.run.probing import probe_context
from lastexam.run.recorded_probes import load_recorded
from lastexam.run.session import new_run_id, open_run
from lastexam.run.trial import TrialPlan
from lastexam.sandbox.base import SandboxProvider
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


def uses_gateway(plans: list[TrialPlan]) -> bool:
    return any(p.model is not None and p.agent.wire_for(p.model) is not None for p in plans)


def check_ready(plans: list[TrialPlan], provider: SandboxProvider, probe_model: str = "") -> None:
    """Stop before any agent starts if something the trials need is missing."""
    problems = [f"sandbox: {p}" for p in provider.preflight()]
    probing_tasks = {p.task.id: p.task for p in plans if p.task.uses_probes}
    for task in probing_tasks.values():
        try:
            load_recorded(task)
        except LastexamError as e:
            problems.append(f"task {task.id}: {e}")
    probing = sorted({p.task.id for p in plans if p.task.uses_probes and not p.agent.calibration})
    if probing and not probe_model:
        problems.append(f"tasks {', '.join(probing)} grade with model probes: give --probe-model "
                        "PROVIDER:MODEL (docs/task-format.md, 'Model probes')")
    if any(p.desktop is not None for p in plans):
        problems += [f"desktop: {m}" for m in desktop_launch.missing()]
    # Agents that work through a model use the screen through the computer tools.
    if any(p.desktop is not None and p.model is not None for p in plans):
        problems += [f"desktop: {m}" for m in computer_toolchain.missing()]
    for task in {p.task.id: p.task for p in plans}.values():
        needed = ["instruction.md", "grader.py"]
        if any(p.agent.sees_solution for p in plans if p.task is task):
            needed.append("solution/solve.sh")
        if task.sealed:
            from lastexam.pool.model import PART_FILES

            needed = list(PART_FILES.values())
        absent = [n for n in needed if not (task.path / n).is_file()]
        if absent:
            problems.append(f"task {task.path}: missing {', '.join(absent)}")
    for env in {id(p.env): p.env for p in plans}.values():
        missing = env.missing()
        if missing:
            problems.append(
                f"environment {env.name!r}: {'; '.join(missing)}\n"
                f"  install it with: lastexam env install {env.name}"
            )
    for agent in {p.agent.name: p.agent for p in plans}.values():
        problems += [f"agent {agent.name!r}: {m}" for m in agent.missing()]
    specs = {p.model for p in plans if p.model is not None and p.agent.wire_for(p.model)}
    for spec in sorted(specs, key=lambda s: s.text):
        if not spec.scripted:
            problems += [f"model {spec.text!r}: {m}" for m in PROVIDERS[spec.provider].missing()]
    if problems:
        raise LastexamError("cannot start the run:\n- " + "\n- ".join(problems))


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
    gateway: Gateway | None = None
    try:
        # Everything that can be wrong with the request is found before the run directory exists.
        tasks = discover_tasks([Path(p) for p in config.task_paths], identity)
        plans = plan_trials(tasks, config)
        with open_run(
            run_id, run_dir, create=None if resume else config, store=store,
            sandbox=config.sandbox,
            ready=lambda provider: check_ready(plans, provider, config.probe_model),
        ) as session, probe_context(config.probe_model, plans, run_dir) as prober:
            store = session.store
            if uses_gateway(plans):
                from lastexam.gateway.server import Gateway

                gateway = Gateway(session.area.gateway_socket())
                gateway.start()
            done = _clean_unfinished(run_dir, store)
            todo = [p for p in plans if p.key.trial_id not in done]
            runner = session.trial_runner(gateway, config.max_retries, prober)
            total, finished = len(plans), len(plans) - len(todo)
            if on_progress:
                on_progress(finished, total, None)
            with ThreadPoolExecutor(max_workers=max(1, config.concurrency)) as pool:
                pending = {pool.submit(runner.run, p) for p in todo}
                while pending:
                    completed, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in completed:
                        try:
                            record = fut.result()
                        except RunAborted as e:
                            for other in pending:
                                other.cancel()
                            wait(pending)
                            raise LastexamError(
                                f"the run stopped: {e}. The {len(store.finished_ids())} trials "
                                "recorded so far are kept; fix the cause, then finish the run "
                                "with --resume",
                                path=run_dir,
                            ) from None
                        finished += 1
                        if on_progress:
                            on_progress(finished, total, record)
            if gateway is not None:
                gateway.stop()
                gateway = None
            trials = list(store.trials())
        return RunOutcome(run_dir=run_dir, run_id=run_id, trials=trials, ran=len(todo))
    finally:
        if gateway is not None:
            gateway.stop()
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
    # The stored plan is the run; only how fast it goes may change on resume.
    return out, store, run_id, stored.model_copy(update={"concurrency": config.concurrency})


def _clean_unfinished(run_dir: Path, store: Store) -> set[str]:
    """Trial folders of a killed run that never reached the store are removed (and rerun)."""
    done = store.finished_ids()
    trials = RunPaths(run_dir).trials
    if trials.is_dir():
        for p in trials.iterdir():
            if p.name.startswith(STAGING_PREFIX) or p.name not in done:
                remove_tree(p)
    return done
