"""lastexam validate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lastexam.validation.selection import GATE_NEEDS  # light: the gate names for --help


def validate(
    task_paths: Annotated[
        list[Path] | None, typer.Argument(help="Task folders or folders of tasks (default: tasks/).")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Tasks validated at once.")] = 2,
    keep: Annotated[
        Path | None, typer.Option(help="Keep the oracle and nop trials in this run directory.")
    ] = None,
    changed: Annotated[bool, typer.Option(
        "--changed", help="Run the sandboxed gates only on tasks changed since the manifest.")] = False,
    sample: Annotated[int, typer.Option(
        min=0, help="With --changed: also validate fully N unchanged tasks, rotating by UTC day.")] = 0,
    gates: Annotated[str | None, typer.Option(
        help=f"Run only these gates (comma-separated) and those they need: {', '.join(GATE_NEEDS)}.")] = None,
    record: Annotated[bool, typer.Option(
        "--record", help="Write the tasks that pass every gate to the manifest.")] = False,
    manifest: Annotated[Path | None, typer.Option(
        help="The validation manifest (default: tasks/validation-manifest.json).")] = None,
    probe_model: Annotated[str | None, typer.Option(
        help="PROVIDER:MODEL to answer model probes not yet in a task's probes.json (then written there).")] = None,
    identity: Annotated[Path | None, typer.Option(
        help="age key file opening the sealed pools among the paths (default: $LASTEXAM_IDENTITY).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """Check every gate of every task; exit 0 only if every gate run passes. A sealed pool is
    unsealed into a private folder for the validation and removed after it."""
    from lastexam.cli.pool_cmd import opened_identity
    from lastexam.errors import LastexamError
    from lastexam.pool.sealed import is_pool, unsealed_pools
    from lastexam.run.leftovers import private_area

    paths = resolve_paths_of(task_paths)
    if not any(is_pool(p) for p in paths):
        _validate(paths, concurrency, keep, changed, sample, gates, record, manifest,
                  probe_model, json_out)
        return
    if keep or record:
        raise LastexamError("--keep and --record would keep a sealed task's files or "
                            "results in clear: validate a sealed pool without them")
    identity = opened_identity(identity)
    # The unsealed tasks and the validation's trials (outputs, rubrics) in one private folder.
    with private_area("unsealed") as private, \
            unsealed_pools(paths, identity, private) as unsealed:
        _validate(unsealed, concurrency, private / "run", changed, sample, gates, record,
                  manifest, probe_model, json_out)


def _check_unique_ids(folders: list[Path]) -> None:
    """Two tasks of one id whose trials run (a public task and a sealed one, say) would share
    their trials' ids and folders: refused before anything runs, naming both. A task
    folder's name is its id (task/load.py)."""
    from lastexam.errors import LastexamError

    seen: dict[str, Path] = {}
    for folder in folders:
        first = seen.setdefault(folder.name, folder)
        if first.resolve() != folder.resolve():
            raise LastexamError(f"task id {folder.name!r} is also the id of {first}", path=folder)


def resolve_paths_of(task_paths: list[Path] | None) -> list[Path]:
    from lastexam.cli.common import task_paths as resolve_paths

    return resolve_paths(task_paths)


def _validate(task_paths: list[Path], concurrency: int, keep: Path | None, changed: bool,
              sample: int, gates: str | None, record: bool, manifest: Path | None,
              probe_model: str | None, json_out: bool) -> None:
    from rich.table import Table

    from lastexam.cli.output import err, out, print_json
    from lastexam.errors import LastexamError
    from lastexam.task.load import expand
    from lastexam.validation import manifest as mf
    from lastexam.validation.selection import ALL_GATES, parse_gates
    from lastexam.validation.suite import (
        expected_seconds,
        plan_validation,
        record_reports,
        validate_tasks,
    )

    selection = parse_gates(gates) if gates is not None else ALL_GATES
    if record and not selection.complete:
        raise LastexamError("--record needs every gate: drop --gates", field="--record")
    manifest_path = manifest or mf.default_manifest_path()
    recorded = mf.load_manifest(manifest_path)
    folders = [f for p in task_paths for f in (expand(p) if p.is_dir() else [p])]
    day, commit = mf.today(), mf.current_commit()
    plan = plan_validation(folders, recorded, changed=changed, sample=sample, gates=selection, day=day)
    _check_unique_ids([f for f in folders if plan.selections[f].sandboxed])
    if sample:
        err.print(f"sample of unchanged tasks for {day}: {', '.join(plan.sampled) or 'none'}")
    with err.status(f"validating {len(folders)} tasks") as status:

        def on_report(report, done: int, total: int) -> None:
            mark = "pass" if report.passed else "FAIL"
            if Path(report.path) in plan.unchanged and not report.selection.sandboxed:
                report.unchanged_since = plan.unchanged[Path(report.path)]
                mark += f" (static gates; unchanged since {report.unchanged_since})"
            err.print(f"  {report.task}: {mark}")
            status.update(f"validated {done}/{total}")
            if record:  # after each task, so that an interrupted run keeps what it finished
                nonlocal recorded
                recorded = record_reports(recorded, plan, [report], day, commit)
                mf.save_manifest(recorded, manifest_path)

        reports = validate_tasks(folders, concurrency=concurrency, keep=keep, on_report=on_report,
                                 selections=plan.selections, probe_model=probe_model or "",
                                 expected_s=expected_seconds(plan, recorded))
    if record:
        err.print(f"recorded in {manifest_path}")
    ok = all(r.passed for r in reports)
    if json_out:
        print_json(
            {
                "passed": ok,
                "sampled": plan.sampled,
                "tasks": [
                    {"task": r.task, "path": r.path, "passed": r.passed,
                     "unchanged_since": r.unchanged_since or None,
                     "gates": [{"name": g.name, "passed": g.passed, "detail": g.detail,
                                "seconds": g.seconds} for g in r.gates]}
                    for r in reports
                ],
            }
        )
    else:
        table = Table(title="task gates", title_justify="left")
        table.add_column("task")
        table.add_column("result")
        table.add_column("failed gates")
        for r in reports:
            result = "[green]pass[/green]" if r.passed else "[red]FAIL[/red]"
            if r.unchanged_since:
                result += f" (unchanged since {r.unchanged_since})"
            failed = [f"{g.name}: {g.detail}" for g in r.gates if not g.passed]
            table.add_row(r.task, result, "\n".join(failed))
        out.print(table)
        out.print(f"{sum(r.passed for r in reports)}/{len(reports)} tasks pass every gate run")
    raise typer.Exit(0 if ok else 1)
