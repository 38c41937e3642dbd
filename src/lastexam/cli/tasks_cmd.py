"""lastexam tasks list | new."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="List the tasks of a suite, or start a new one.", no_args_is_help=True)


@app.command("list")
def list_tasks(
    task_paths: Annotated[list[Path] | None, typer.Argument(help="Task folders (default: tasks/).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the catalogue (docs/tasks.md).")] = False,
) -> None:
    """The metadata of each task."""
    from rich.table import Table

    from lastexam.cli.common import task_paths as resolve_paths
    from lastexam.cli.output import out, print_json
    from lastexam.task.catalogue import markdown as render_markdown
    from lastexam.task.catalogue import task_row
    from lastexam.task.load import discover_tasks

    tasks = discover_tasks(resolve_paths(task_paths))
    if json_out:
        print_json([task_row(t) for t in tasks])
        return
    if markdown:
        import sys

        sys.stdout.write(render_markdown(tasks))
        return
    table = Table(title=f"{len(tasks)} tasks", title_justify="left")
    for col in ("id", "cluster", "subdomain", "tier", "software", "gui"):
        table.add_column(col)
    for t in tasks:
        s = t.spec
        table.add_row(s.id, s.cluster, s.subdomain, s.tier, ", ".join(s.software), "yes" if s.gui else "no")
    out.print(table)


@app.command("coverage")
def coverage_cmd(
    task_paths: Annotated[list[Path] | None, typer.Argument(help="Task folders (default: tasks/).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """How many tasks each subdomain of the taxonomy has; exit 1 if any has none."""
    from rich.table import Table

    from lastexam.cli.common import task_paths as resolve_paths
    from lastexam.cli.output import out, print_json
    from lastexam.task.catalogue import coverage
    from lastexam.task.load import discover_tasks

    rows = coverage(discover_tasks(resolve_paths(task_paths)))
    empty = [r for r in rows if not r["tasks"]]
    if json_out:
        print_json(rows)
    else:
        table = Table(title=f"{len(rows) - len(empty)} of {len(rows)} subdomains covered",
                      title_justify="left")
        for col in ("cluster", "subdomain", "tasks"):
            table.add_column(col)
        for r in rows:
            table.add_row(r["cluster"], r["subdomain"], ", ".join(r["tasks"]) or "[red]none[/red]")
        out.print(table)
    if empty:
        raise typer.Exit(1)


@app.command("new")
def new_task(
    name: Annotated[str, typer.Argument(help="CLUSTER/NAME, e.g. business-finance/loan-schedule")],
    root: Annotated[Path, typer.Option(help="The suite folder to create it in.")] = Path("tasks"),
) -> None:
    """Scaffold a task folder with every file of the format, ready to complete."""
    from lastexam.cli.output import out
    from lastexam.task.scaffold import scaffold

    path = scaffold(name, root)
    out.print(f"created {path}: fill in the TODOs; write generate.py, then run "
              f"`python3 {path}/generate.py` to make inputs/ and reference/, put each fixture's "
              f"deliverable in its output/, and run `lastexam validate {path}`")
