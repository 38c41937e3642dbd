"""lastexam show."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

MAX_TRIAL_LINES = 200


def show(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """The trials of a run and its metrics: FPR and MS with 95% CIs per agent x model (overall,
    by tier and cluster), pass@k, cost, statuses, failure categories and use of the declared
    software."""
    from lastexam.analysis.view import metrics_view
    from lastexam.cli.output import out, print_json
    from lastexam.cli.tables import render_view, trials_table
    from lastexam.store.rows import rows_of

    rows = rows_of(run_dirs)
    view = metrics_view(rows)
    if json_out:
        print_json(
            {
                "run_dirs": [str(d) for d in run_dirs],
                "trials": [
                    {"trial_id": r.trial_id, "run": r.run, "task": r.task_id, "agent": r.agent,
                     "model": r.model, "attempt": r.attempt, "status": r.status, "score": r.score,
                     "full_pass": r.full_pass}
                    for r in rows
                ],
                "metrics": view,
            }
        )
        return
    if len(rows) <= MAX_TRIAL_LINES:
        out.print(trials_table(rows))
    else:
        out.print(f"{len(rows)} trials (per-trial lines omitted: use --json or `lastexam report`)")
    render_view(out, view)
