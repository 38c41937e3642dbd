"""lastexam keygen, lastexam seal, lastexam pool release: the sealed private pool."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(help="A sealed pool of private tasks (docs/private-pool.md).", no_args_is_help=True)

IdentityOption = Annotated[
    Path | None,
    typer.Option(help="age key file (default: $LASTEXAM_IDENTITY)."),
]


def opened_identity(given: Path | None) -> Any:
    """The identity from --identity or $LASTEXAM_IDENTITY, or None when neither is set."""
    from lastexam.pool.keys import identity_path, load_identity

    path = identity_path(given)
    return load_identity(path) if path is not None else None


@contextmanager
def writing() -> Iterator[None]:
    """A file or folder the command cannot read or write is the user's to fix: named, no
    traceback."""
    from lastexam.errors import LastexamError

    try:
        yield
    except OSError as e:
        raise LastexamError(e.strerror or str(e), path=e.filename) from None


def keygen(
    out: Annotated[Path, typer.Option("--out", help="Key file to write (never overwritten).")],
) -> None:
    """Make an age identity (X25519): the secret key in OUT (mode 0600), its public recipient
    in OUT.pub and on stdout."""
    from lastexam.cli.output import err
    from lastexam.pool.keys import generate

    with writing():
        recipient = generate(out)
    print(recipient)
    err.print(f"secret key: {out} (keep it off machines that run agents unattended)\n"
              f"recipient:  {out}.pub")


def seal(
    task_dirs: Annotated[list[Path], typer.Argument(help="Task folders or folders of tasks.")],
    recipient: Annotated[
        list[str], typer.Option("--recipient", help="age recipient (age1...) or a .pub file; repeatable.")
    ],
    out: Annotated[Path, typer.Option("--out", help="The pool folder (made, or added to).")],
    release_date: Annotated[
        str | None,
        typer.Option(help="Day (YYYY-MM-DD) the tasks are due for release (default: one year from today)."),
    ] = None,
) -> None:
    """Seal tasks into a pool: per task, its spec, its instruction and inputs, and the rest
    (grader, reference, solution, fixtures) each encrypted apart; pool.toml lists their cards."""
    from lastexam.cli.output import err
    from lastexam.pool.model import utc_day
    from lastexam.pool.seal import seal as seal_tasks
    from lastexam.task.load import discover_tasks

    day = _day(release_date, "--release-date") if release_date else utc_day() + dt.timedelta(days=365)
    tasks = discover_tasks(task_dirs)
    with writing():
        out.mkdir(parents=True, exist_ok=True)
        manifest = seal_tasks(tasks, recipient, out, day, log=lambda m: err.print(m))
    err.print(f"{out / 'pool.toml'}: {len(manifest.task)} sealed tasks, due {day} for those just sealed")


@app.command("release")
def release(
    pool_dir: Annotated[Path, typer.Argument(help="The sealed pool.")],
    until: Annotated[str, typer.Option(help="Release every task due on or before this day (YYYY-MM-DD).")],
    to: Annotated[Path, typer.Option("--to", help="Where the task folders go (<to>/<cluster>/<id>).")],
    identity: IdentityOption = None,
) -> None:
    """Unseal the tasks due into ordinary task folders (each checked against its card's hash)."""
    from lastexam.cli.output import err
    from lastexam.pool.seal import release as release_tasks
    from lastexam.pool.sealed import load_pool

    tasks = load_pool(pool_dir, opened_identity(identity))
    with writing():
        written = release_tasks(tasks, _day(until, "--until"), to, log=lambda m: err.print(m))
    err.print(f"{len(written)} of {len(tasks)} tasks released")


@app.command("list")
def list_cards(
    pool_dir: Annotated[Path, typer.Argument(help="The sealed pool.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """The pool's cards (no key needed: they are public)."""
    from lastexam.cli.output import out, print_json
    from lastexam.pool.sealed import load_manifest

    manifest = load_manifest(pool_dir)
    if json_out:
        print_json({"recipients": manifest.recipients,
                    "tasks": [c.model_dump(mode="json") for c in manifest.task]})
        return
    for c in manifest.task:
        out.print(f"{c.id}  {c.cluster}/{c.subdomain}  {c.tier}  {c.environment}  due {c.release_date}")


def _day(text: str, flag: str) -> dt.date:
    from lastexam.errors import LastexamError

    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise LastexamError(f"{flag} {text!r}: expected a day as YYYY-MM-DD") from None
