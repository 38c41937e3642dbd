"""lastexam regrade."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def regrade(
    run_dir: Annotated[Path, typer.Argument(help="The run directory whose outputs to regrade.")],
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
    probe_model: Annotated[
        str | None,
        typer.Option(help="PROVIDER:MODEL for model probes not answered before (default: the run's)."),
    ] = None,
    reprobe: Annotated[
        bool, typer.Option("--reprobe", help="Ask every model probe again instead of replaying its answer."),
    ] = False,
) -> None:
    """Regrade stored outputs with the current grader (no agent reruns). The old rubric is
    kept; the newest grade is the trial's score, with the grader version that produced it."""
    from rich.table import Table

    from lastexam.cli.output import err, out, pct, print_json
    from lastexam.run.regrade import regrade_run

    with err.status("regrading") as status:
        results = regrade_run(run_dir, task, on_trial=lambda r: status.update(f"regraded {r.trial_id}"),
                              probe_model=probe_model, reprobe=reprobe)
    if json_out:
        print_json([r.__dict__ for r in results])
        return
    table = Table(title=f"regraded {len(results)} trials of {run_dir}", title_justify="left")
    for col in ("trial", "old score", "new score", "old grader", "new grader", "status", "note"):
        table.add_column(col)
    for r in results:
        table.add_row(r.trial_id, pct(r.old_score), pct(r.new_score), r.old_version[:12],
                      r.new_version[:12], r.status, r.note[:80])
    out.print(table)
