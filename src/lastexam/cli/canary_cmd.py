"""lastexam canary scan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Find the canaries of the suite's tasks and of sealed pools in data.",
                  no_args_is_help=True)


@app.command("scan")
def scan(
    paths: Annotated[list[Path], typer.Argument(
        help="Files and folders (searched recursively): plain text, JSONL, .gz, .zst, .parquet.")],
    tasks: Annotated[list[Path] | None, typer.Option(
        "--tasks", help="Also the canaries of these task folders, folders of tasks or sealed pool "
                        "folders (pool.toml), besides those of tasks/.")] = None,
) -> None:
    """Print `file:offset: task-id` for each canary found (offsets in the decompressed bytes);
    exit 1 if any is found, 0 if none."""
    import sys
    import time

    from lastexam.errors import LastexamError
    from lastexam.paths import default_tasks_dir
    from lastexam.pool.canary import Scanner, collect_canaries

    sources = [default_tasks_dir(), *(tasks or [])]
    if not sources[0].is_dir():
        sources = sources[1:]
    if not sources:
        raise LastexamError(f"no canaries to look for: {default_tasks_dir()} is not a folder; "
                            "give --tasks", field="--tasks")
    canaries = collect_canaries(sources)
    scanner = Scanner(canaries)
    start = time.perf_counter()
    found: set[str] = set()
    hits = 0
    for hit in scanner.scan(paths):
        print(hit, flush=True)
        hits += 1
        found.add(hit.task_id)
    seconds = time.perf_counter() - start
    mb = scanner.bytes / 1e6
    summary = (f"{len(canaries)} canaries; {scanner.files} files, {mb:.1f} MB in {seconds:.1f} s "
               f"({mb / max(seconds, 1e-9):.0f} MB/s): {hits} hits of {len(found)} tasks")
    if scanner.unreadable:
        summary += f"; {scanner.unreadable} unreadable, skipped"
    print(summary, file=sys.stderr)
    raise typer.Exit(1 if hits else 0)
