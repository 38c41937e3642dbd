"""The `lastexam` command. Subcommands import what they need when they run, so that a
command starts quickly."""

from __future__ import annotations

import sys

import typer

from lastexam.cli import (
    agents_cmd,
    canary_cmd,
    compare_cmd,
    env_cmd,
    interop_cmd,
    pool_cmd,
    regrade_cmd,
    report_cmd,
    run_cmd,
    show_cmd,
    tasks_cmd,
    validate_cmd,
    view_cmd,
)
from lastexam.errors import LastexamError

app = typer.Typer(
    help="lastexam: run agents on professional tasks in a sandbox and grade what they leave.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command("run")(run_cmd.run)
app.command("validate")(validate_cmd.validate)
app.command("show")(show_cmd.show)
app.command("compare")(compare_cmd.compare)
app.command("report")(report_cmd.report)
app.command("view")(view_cmd.view)
app.command("regrade")(regrade_cmd.regrade)
app.command("keygen")(pool_cmd.keygen)
app.command("seal")(pool_cmd.seal)
app.add_typer(tasks_cmd.app, name="tasks")
app.add_typer(pool_cmd.app, name="pool")
app.add_typer(env_cmd.app, name="env")
app.add_typer(agents_cmd.app, name="agents")
app.add_typer(canary_cmd.app, name="canary")
app.add_typer(interop_cmd.export_app, name="export")
app.add_typer(interop_cmd.import_app, name="import")


def main() -> None:
    try:
        app()
    except LastexamError as e:
        print(f"error: {e.render()}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted: finished trials are recorded; rerun with --resume", file=sys.stderr)
        sys.exit(130)
