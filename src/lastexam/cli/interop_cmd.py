"""lastexam export harbor | import harbor (docs/interop.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

export_app = typer.Typer(help="Write tasks in another harness's format.", no_args_is_help=True)
import_app = typer.Typer(help="Turn another harness's tasks into lastexam tasks.",
                         no_args_is_help=True)


@export_app.command("harbor")
def export_harbor(
    task_paths: Annotated[list[Path], typer.Argument(help="Task folders or folders of tasks.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write <task-id>/ folders in.")],
) -> None:
    """Harbor task folders (task.toml, instruction.md, environment/, tests/, solution/)."""
    from lastexam.interop.harbor_export import export_task
    from lastexam.task.load import discover_tasks

    for task in discover_tasks(task_paths):
        print(export_task(task, out))
        if task.spec.gui:
            print(f"warning: {task.id} is a GUI task: its Harbor image has no desktop", file=sys.stderr)


@import_app.command("harbor")
def import_harbor(
    harbor_dirs: Annotated[list[Path], typer.Argument(help="Harbor task folders.")],
    out: Annotated[Path | None, typer.Option(
        "--out", help="Folder to write <id>/ in (default: the project's tasks/<cluster>/).")] = None,
    cluster: Annotated[str | None, typer.Option(
        help="Taxonomy cluster (default: an exported task's own, else other).")] = None,
    subdomain: Annotated[str | None, typer.Option(
        help="Subdomain (default: an exported task's own, else the cluster's first).")] = None,
    environment: Annotated[str | None, typer.Option(
        help="lastexam environment (default: an exported task's own, else base).")] = None,
    tier: Annotated[str | None, typer.Option(
        help="Tier (default: an exported task's own, else from the difficulty).")] = None,
) -> None:
    """A lastexam task folder per Harbor task, whose grader runs the Harbor verifier."""
    from lastexam.interop.harbor_import import ImportChoices, import_task

    choices = ImportChoices(cluster=cluster, subdomain=subdomain, environment=environment, tier=tier)
    for d in harbor_dirs:
        print(import_task(d, out, choices))
