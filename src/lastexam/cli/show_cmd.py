"""lastexam show."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def show(
    run_dir: Annotated[Path, typer.Argument(help="A run directory.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """The trials of a run and its summary."""
    from rich.table import Table

    from lastexam.analysis.summary import summarize
    from lastexam.cli.output import out, pct, print_json, results_table
    from lastexam.cli.run_cmd import _trial_json
    from lastexam.store.db import Store

    store = Store(run_dir)
    try:
        trials = list(store.trials())
        run = store.run()
    finally:
        store.close()
    summary = summarize(trials)
    if json_out:
        print_json(
            {
                "run_dir": str(run_dir),
                "run_id": run[0] if run else None,
                "trials": [_trial_json(t) for t in trials],
                "summary": summary,
            }
        )
        return
    table = Table(title=f"trials of {run[0] if run else run_dir}", title_justify="left")
    for col in ("task", "agent", "model", "#", "status", "score", "checks passed", "time"):
        table.add_column(col)
    for t in trials:
        checks = t.grade.checks if t.grade else []
        table.add_row(
            t.key.task_id, t.key.agent, t.key.model or "-", str(t.key.attempt), t.status,
            pct(t.score), f"{sum(c.passed for c in checks)}/{len(checks)}",
            f"{t.timings.get('agent', 0):.1f}s",
        )
    out.print(table)
    out.print(results_table(summary, "summary"))
