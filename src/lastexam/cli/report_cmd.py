"""lastexam report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="Run directories to report on together.")],
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the HTML report here.")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="Write the leaderboard as CSV here.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write every metric as JSON here.")] = None,
    reveal: Annotated[bool, typer.Option(
        "--reveal", help="Put the full rubric of sealed-task trials in the HTML (needs the pool's key).")] = False,
    identity: Annotated[Path | None, typer.Option(
        help="age key file for --reveal (default: $LASTEXAM_IDENTITY).")] = None,
) -> None:
    """A self-contained HTML report (leaderboard with CIs, cluster heatmap, cost vs score,
    failures, software use, per-task results with each trial's rubric) and exports."""
    from lastexam.analysis.view import metrics_view
    from lastexam.cli.output import err
    from lastexam.errors import LastexamError
    from lastexam.store.rows import rows_of

    if not (html_out or csv_out or json_out):
        raise LastexamError("say what to write: --html FILE, --csv FILE and/or --json FILE")
    rows = rows_of(run_dirs)
    view = metrics_view(rows)
    if html_out:
        from lastexam.report.html import render

        revealer = None
        if reveal:
            from lastexam.cli.pool_cmd import opened_identity
            from lastexam.pool.artifacts import Revealer

            revealer = Revealer(opened_identity(identity))
        html_out.write_text(render(run_dirs, rows, view, html_out.resolve(), revealer),
                            encoding="utf-8")
        err.print(f"HTML report: {html_out}")
    if csv_out:
        from lastexam.report.export import leaderboard_csv

        csv_out.write_text(leaderboard_csv(view))
        err.print(f"CSV leaderboard: {csv_out}")
    if json_out:
        from lastexam.report.export import view_json

        json_out.write_text(view_json(view))
        err.print(f"JSON metrics: {json_out}")
