"""lastexam env install | lock | check | list."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Install and check the software environments tasks need.", no_args_is_help=True)


def _select(names: list[str] | None, all_: bool):
    from lastexam.envs import manage
    from lastexam.errors import LastexamError

    if all_:
        return manage.load_all()
    if not names:
        raise LastexamError("name an environment, or pass --all")
    return [manage.load(n) for n in names]


@app.command("install")
def install(
    names: Annotated[list[str] | None, typer.Argument(help="Environment names.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every environment of the project.")] = False,
    force: Annotated[bool, typer.Option(help="Reinstall the Python packages even if recorded.")] = False,
) -> None:
    """Install Debian packages (apt-get) and the Python packages (a dedicated venv)."""
    from lastexam.cli.output import err
    from lastexam.envs import manage

    for env in _select(names, all_):
        with err.status(f"installing {env.name}"):
            manage.install(env, log=lambda msg: err.print(f"  {msg}"), force=force)
        err.print(f"[green]{env.name}[/green] ready ({env.venv})")


@app.command("lock")
def lock(
    names: Annotated[list[str] | None, typer.Argument(help="Environment names.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every environment of the project.")] = False,
    index_url: Annotated[str, typer.Option(help="The package index to resolve from.")] = "https://pypi.org/simple",
    find_links: Annotated[Path | None, typer.Option(
        help="Resolve from this folder of wheels instead of an index (offline).")] = None,
) -> None:
    """Write environments/NAME.lock.txt: every Python package pinned with its hash, for the
    Python venvs are made from, and the Debian package versions installed now."""
    from lastexam.cli.output import err
    from lastexam.envs import locking

    for env in _select(names, all_):
        with err.status(f"locking {env.name}"):
            made = locking.make_lock(env, index_url=index_url, find_links=find_links)
            path = locking.write_lock(env, made)
        err.print(f"[green]{env.name}[/green]: {len(made.packages)} packages pinned in {path}")


@app.command("check")
def check(
    names: Annotated[list[str] | None, typer.Argument(help="Environment names (default: all).")] = None,
) -> None:
    """Tell what is missing or differs from the lock; exit 1 if anything is missing or a
    Python package differs (Debian versions that moved are only a warning)."""
    from lastexam.cli.output import out
    from lastexam.envs import locking

    envs = _select(names, all_=not names)
    failed = False
    for env in envs:
        state = locking.lock_state(env)
        problems = env.missing()
        if not problems and state.lock:
            problems = [f"Python package {d}" for d in locking.python_drift(env, state.lock)]
        warnings = [state.problem] if state.problem else []
        if state.lock:
            warnings += [f"Debian package {d}" for d in locking.apt_drift(state.lock)]
        failed |= bool(problems)
        colour = "red" if problems else "yellow" if warnings else "green"
        out.print(f"[{colour}]{env.name}[/{colour}]: " + ("; ".join(problems) or "ready"))
        for warning in warnings:
            out.print(f"  warning: {warning}")
        if problems:
            out.print(f"  install with: lastexam env install {env.name}")
    raise typer.Exit(1 if failed else 0)


@app.command("build-image")
def build_image(
    names: Annotated[list[str] | None, typer.Argument(help="Environment names.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every environment of the project.")] = False,
    force: Annotated[bool, typer.Option(help="Rebuild even if the image's tag exists.")] = False,
) -> None:
    """Build the container image of `--sandbox podman` (debootstrap + the environment's Debian
    packages, imported locally; no registry); skipped while its tag exists."""
    from lastexam.cli.output import err
    from lastexam.envs.image import build_image as build

    for env in _select(names, all_):
        with err.status(f"building the image of {env.name}"):
            tag = build(env, log=lambda msg: err.print(f"  {msg}"), force=force)
        err.print(f"[green]{env.name}[/green]: {tag}")


@app.command("list")
def list_envs() -> None:
    """The environments of the project and what they hold."""
    from rich.table import Table

    from lastexam.cli.output import out
    from lastexam.envs import locking, manage

    table = Table()
    for col in ("name", "description", "apt", "pip", "lock"):
        table.add_column(col)
    for env in manage.load_all():
        table.add_row(env.name, env.spec.description, " ".join(env.spec.apt), " ".join(env.spec.pip),
                      locking.lock_hash(env) or "none")
    out.print(table)
