"""lastexam validate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def validate(
    task_paths: Annotated[
        list[Path] | None, typer.Argument(help="Task folders or folders of tasks (default: tasks/).")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Tasks validated at once.")] = 2,
    keep: Annotated[
        Path | None, typer.Option(help="Keep the oracle and nop trials in this run directory.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """Check every gate of every task; exit 0 only if all pass."""
    from rich.table import Table

    from lastexam.cli.common import task_paths as resolve_paths
    from lastexam.cli.output import err, out, print_json
    from lastexam.task.load import expand
    from lastexam.validation.gates import validate_tasks

    folders = [f for p in resolve_paths(task_paths) for f in (expand(p) if p.is_dir() else [p])]
    with err.status(f"validating {len(folders)} tasks") as status:

        def on_report(report, done: int, total: int) -> None:
            mark = "pass" if report.passed else "FAIL"
            err.print(f"  {report.task}: {mark}")
            status.update(f"validated {done}/{total}")

        reports = validate_tasks(folders, concurrency=concurrency, keep=keep, on_report=on_report)
    ok = all(r.passed for r in reports)
    if json_out:
        print_json(
            {
                "passed": ok,
                "tasks": [
                    {"task": r.task, "path": r.path, "passed": r.passed,
                     "gates": [g.__dict__ for g in r.gates]}
                    for r in reports
                ],
            }
        )
    else:
        table = Table(title="task gates", title_justify="left")
        table.add_column("task")
        table.add_column("result")
        table.add_column("failed gates")
        for r in reports:
            failed = [f"{g.name}: {g.detail}" for g in r.gates if not g.passed]
            table.add_row(r.task, "[green]pass[/green]" if r.passed else "[red]FAIL[/red]", "\n".join(failed))
        out.print(table)
        out.print(f"{sum(r.passed for r in reports)}/{len(reports)} tasks pass every gate")
    raise typer.Exit(0 if ok else 1)
