"""lastexam run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def run(
    task_paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Task folders, folders of tasks, or .txt lists (default: tasks/)."),
    ] = None,
    agent: Annotated[str, typer.Option(help="Agent to run (see `lastexam agents list`).")] = "oracle",
    model: Annotated[str, typer.Option(help="Model for agents that need one.")] = "",
    agent_arg: Annotated[
        list[str] | None, typer.Option("--agent-arg", help="KEY=VALUE passed to the agent.")
    ] = None,
    attempts: Annotated[int, typer.Option(min=1, max=100, help="Attempts per task.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, max=256, help="Trials at once.")] = 1,
    timeout: Annotated[
        int | None,
        typer.Option(min=1, max=18000, help="Seconds per trial (default: each task's timeout_s)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Run directory (default: runs/<run-id>).")] = None,
    resume: Annotated[bool, typer.Option(help="Finish the run in --out, skipping recorded trials.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Run an agent on tasks: each trial in a fresh sandbox, graded in another."""
    from lastexam.analysis.summary import summarize
    from lastexam.cli.common import parse_kv
    from lastexam.cli.common import task_paths as resolve_paths
    from lastexam.cli.output import err, print_json, results_table
    from lastexam.cli.output import out as console
    from lastexam.run.runner import execute
    from lastexam.store.models import RunConfig

    config = RunConfig(
        task_paths=[str(p) for p in (resolve_paths(task_paths) if not resume else task_paths or [])],
        agent=agent,
        model=model,
        agent_args=parse_kv(agent_arg or [], "--agent-arg"),
        attempts=attempts,
        concurrency=concurrency,
        timeout_s=timeout,
    )
    progress = _progress_bar(err, enabled=err.is_terminal or not json_out)
    with progress:
        bar = progress.add_task("trials", total=None)

        def on_progress(finished: int, total: int, record) -> None:
            desc = "trials"
            if record is not None:
                desc = f"{record.key.task_id} {record.status} {record.score if record.score is not None else '-'}"
            progress.update(bar, completed=finished, total=total, description=desc[:60])

        outcome = execute(config, out, resume=resume, on_progress=on_progress)
    summary = summarize(outcome.trials)
    if json_out:
        print_json(
            {
                "run_dir": str(outcome.run_dir),
                "run_id": outcome.run_id,
                "trials": [_trial_json(t) for t in outcome.trials],
                "summary": summary,
            }
        )
        return
    console.print(results_table(summary, f"run {outcome.run_id}: {agent}"))
    console.print(f"statuses: {summary['statuses']}")
    console.print(f"run directory: {outcome.run_dir}")


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
        "checks": [c.model_dump() for c in (t.grade.checks if t.grade else [])],
    }
