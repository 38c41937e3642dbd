"""lastexam show."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

MAX_TRIAL_LINES = 200


def show(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
    reveal: Annotated[bool, typer.Option(
        "--reveal", help="Also print the full rubric of sealed-task trials (needs the pool's key).")] = False,
    identity: Annotated[Path | None, typer.Option(
        help="age key file for --reveal (default: $LASTEXAM_IDENTITY).")] = None,
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
    revealed = _revealed(run_dirs, identity) if reveal else {}
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
                **({"revealed": {k: [c.model_dump() for c in v] for k, v in revealed.items()}}
                   if reveal else {}),
            }
        )
        return
    if len(rows) <= MAX_TRIAL_LINES:
        out.print(trials_table(rows))
    else:
        out.print(f"{len(rows)} trials (per-trial lines omitted: use --json or `lastexam report`)")
    render_view(out, view)
    for trial, checks in revealed.items():
        out.print(f"[bold]{trial}[/bold] (sealed, revealed)")
        for c in checks:
            mark = "pass" if c.passed else "FAIL"
            out.print(f"  {mark} {'gate' if c.gate else c.weight}: {c.name}: {c.message}", markup=False)


def _revealed(run_dirs: list[Path], identity_file: Path | None) -> dict[str, list]:
    """run/trial -> the full rubric, for each graded sealed trial of the runs."""
    from lastexam.cli.pool_cmd import opened_identity
    from lastexam.layout import RunPaths
    from lastexam.pool.artifacts import Revealer
    from lastexam.store.db import Store

    revealer = Revealer(opened_identity(identity_file))
    found = {}
    for run_dir in run_dirs:
        store = Store(run_dir)
        try:
            for t in store.trials(with_checks=False):
                if t.sealed:
                    checks = revealer.checks(RunPaths(run_dir).trial(t.trial_id).root)
                    if checks is not None:
                        found[f"{run_dir.name}/{t.trial_id}"] = checks
        finally:
            store.close()
    return found
