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
    """The trials of a run and its metrics: FPR and MS with 95% CIs by agent, tier and cluster,
    pass@k, cost, statuses, failure categories and use of the declared software."""
    from lastexam.analysis.load import rows_of
    from lastexam.analysis.overview import overview
    from lastexam.analysis.summary import summarize
    from lastexam.cli.output import out, print_json
    from lastexam.cli.tables import render_overview, trials_table

    rows = rows_of(run_dirs)
    metrics = overview(rows)
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
                "summary": summarize(rows),
                "metrics": metrics,
            }
        )
        return
    if len(rows) <= MAX_TRIAL_LINES:
        out.print(trials_table(rows))
    else:
        out.print(f"{len(rows)} trials (per-trial lines omitted: use --json or `lastexam report`)")
    render_overview(out, metrics)
