"""lastexam run."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer


def run(
    task_paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Task folders, folders of tasks, or .txt lists (default: tasks/)."),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(help="Agent to run: a name (`lastexam agents list`; default oracle) or module:Class."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="PROVIDER:MODEL (anthropic, openai, openrouter, local, google) or scripted:PATH."),
    ] = None,
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", help="KEY=VALUE passed to the agent.")
    ] = None,
    attempts: Annotated[int | None, typer.Option(min=1, max=100, help="Attempts per task (default 1).")] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, max=256, help="Trials at once (default 1).")] = None,
    timeout: Annotated[
        int | None,
        typer.Option(min=1, max=18000, help="Seconds per trial (default: each task's timeout_s)."),
    ] = None,
    max_cost_usd: Annotated[
        float | None, typer.Option(min=0.000001, help="Per-trial cost budget in USD (gateway-enforced).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option(min=1, help="Per-trial token budget, all kinds (gateway-enforced).")
    ] = None,
    max_retries: Annotated[
        int | None,
        typer.Option(min=0, max=10, help="Cap on retries of infrastructure failures per trial (default 2)."),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option("--config", help="Experiment YAML: agents x models over tasks; flags override it."),
    ] = None,
    desktop: Annotated[
        bool, typer.Option("--desktop", help="A desktop (X server, window manager) in every trial, GUI task or not.")
    ] = False,
    probe_model: Annotated[
        str | None,
        typer.Option(help="PROVIDER:MODEL answering the yes/no model probes of graders that ask them."),
    ] = None,
    identity: Annotated[
        Path | None,
        typer.Option(help="age key file opening the sealed pools among the task paths "
                          "(default: $LASTEXAM_IDENTITY)."),
    ] = None,
    sandbox: Annotated[
        str | None,
        typer.Option(envvar="LASTEXAM_SANDBOX",
                     help="Sandbox provider: bwrap (default) or podman (docs/sandbox.md)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(help="Where trials run: local (this machine, default) or ray (a Ray cluster; "
                          "docs/scale.md). May change on --resume."),
    ] = None,
    ray_address: Annotated[
        str | None, typer.Option(help="The Ray cluster's address (default: $RAY_ADDRESS).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory (default: runs/<run-id>).")] = None,
    resume: Annotated[bool, typer.Option(help="Finish the run in --out, skipping recorded trials.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Run an agent on tasks: each trial in a fresh sandbox, graded in another."""
    from lastexam.cli.common import parse_kv
    from lastexam.cli.common import task_paths as resolve_paths
    from lastexam.cli.output import err, print_json
    from lastexam.cli.output import out as console
    from lastexam.cli.pool_cmd import opened_identity
    from lastexam.run.runner import execute
    from lastexam.store.models import RunConfig

    args = parse_kv(agent_arg or [], "--agent-arg")
    if config_file is not None and not resume:
        config = _experiment(config_file, task_paths, agent, model, args, attempts, concurrency,
                             timeout, max_cost_usd, max_tokens)
    else:
        config = RunConfig(
            task_paths=[str(p) for p in (resolve_paths(task_paths) if not resume else task_paths or [])],
            agent=agent or "oracle",
            model=model or "",
            agent_args=args,
            attempts=attempts or 1,
            concurrency=concurrency or 1,
            timeout_s=timeout,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
        )
    if max_retries is not None:
        config = config.model_copy(update={"max_retries": max_retries})
    if desktop and not resume:
        config = config.model_copy(update={"desktop": True})
    if probe_model:
        config = config.model_copy(update={"probe_model": probe_model})
    if sandbox and not resume:
        config = config.model_copy(update={"sandbox": sandbox})
    if backend is not None and backend not in ("local", "ray"):
        raise typer.BadParameter(f"{backend!r} is not local or ray", param_hint="--backend")
    where = {k: v for k, v in (("backend", backend), ("ray_address", ray_address)) if v is not None}
    if where:
        config = config.model_copy(update=where)
    if len(config.task_paths) != 1:
        _prefetch("numpy")  # the results' confidence intervals need it: imported while trials run
    progress = _progress_bar(err, enabled=err.is_terminal or not json_out)
    with progress:
        bar = progress.add_task("trials", total=None)

        def on_progress(finished: int, total: int, record) -> None:
            desc = "trials"
            if record is not None:
                desc = f"{record.key.task_id} {record.status} {record.score if record.score is not None else '-'}"
            progress.update(bar, completed=finished, total=total, description=desc[:60])

        outcome = execute(config, out, resume=resume, on_progress=on_progress,
                          identity=opened_identity(identity))
    from lastexam.analysis.view import metrics_view
    from lastexam.store.rows import rows_of

    view = metrics_view(rows_of([outcome.run_dir]))  # what `lastexam show` prints
    if json_out:
        print_json(
            {
                "run_dir": str(outcome.run_dir),
                "run_id": outcome.run_id,
                "trials": [_trial_json(t) for t in outcome.trials],
                "metrics": view,
            }
        )
        return
    from lastexam.cli.tables import groups_table, leaderboard_table, statuses_line

    console.print(leaderboard_table(view, f"run {outcome.run_id}"))
    console.print(groups_table(view, "by_tier", "tier"))
    console.print(groups_table(view, "by_cluster", "cluster"))
    console.print(statuses_line(view))
    console.print(f"run directory: {outcome.run_dir}")


def _experiment(path, task_paths, agent, model, args, attempts, concurrency, timeout,
                max_cost_usd, max_tokens):
    """The experiment file's run, with every flag given on the command line put over it."""
    from lastexam.agents import all_agents, get_agent
    from lastexam.agents.registry import is_reference
    from lastexam.run.experiment import AgentEntry, ModelEntry, experiment_config, load_experiment

    exp = load_experiment(path)
    update: dict = {}
    if task_paths:
        update["tasks"] = [str(p.resolve()) for p in task_paths]
    if agent:
        update["agents"] = [AgentEntry(name=agent, args=args)]
    elif args:
        update["agents"] = [a.model_copy(update={"args": {**a.args, **args}}) for a in exp.agents]
    if model:
        update["models"] = [ModelEntry(id=model)]
    for key, value in (("attempts", attempts), ("concurrency", concurrency), ("timeout_s", timeout)):
        if value is not None:
            update[key] = value
    exp = exp.model_copy(update=update)
    needs_model = {a.name: a.needs_model for a in all_agents()}
    needs_model |= {e.name: get_agent(e.name).needs_model for e in exp.agents if is_reference(e.name)}
    config = experiment_config(path, exp, needs_model)
    flags = {k: v for k, v in (("max_cost_usd", max_cost_usd), ("max_tokens", max_tokens)) if v}
    if flags:
        config.cells = [c.model_copy(update=flags) for c in config.cells]
    return config


def _progress_bar(console, enabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )


def _trial_json(t) -> dict:
    return {
        "trial_id": t.trial_id,
        "task": t.key.task_id,
        "agent": t.key.agent,
        "model": t.key.model,
        "attempt": t.key.attempt,
        "status": t.status,
        "score": t.score,
        "full_pass": t.full_pass,
        "error": t.error,
        "ended_by": t.ended_by,
        "policy": t.policy.model_dump() if t.policy else None,
        "gateway": t.gateway.model_dump() if t.gateway else None,
        "checks": [c.model_dump() for c in (t.grade.checks if t.grade else [])],
    }


def _prefetch(module: str) -> None:
    """Import a module in a background thread (a failure shows where it is imported again)."""
    import importlib
    import threading

    def load() -> None:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)

    threading.Thread(target=load, name=f"import-{module}", daemon=True).start()
