"""lastexam env install | check | list."""

from __future__ import annotations

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


@app.command("check")
def check(
    names: Annotated[list[str] | None, typer.Argument(help="Environment names (default: all).")] = None,
) -> None:
    """Tell what is missing; exit 1 if anything is."""
    from lastexam.cli.output import out

    envs = _select(names, all_=not names)
    missing_any = False
    for env in envs:
        missing = env.missing()
        missing_any |= bool(missing)
        if missing:
            out.print(f"[red]{env.name}[/red]: " + "; ".join(missing))
            out.print(f"  install with: lastexam env install {env.name}")
        else:
            out.print(f"[green]{env.name}[/green]: ready")
    raise typer.Exit(1 if missing_any else 0)


@app.command("list")
def list_envs() -> None:
    """The environments of the project and what they hold."""
    from rich.table import Table

    from lastexam.cli.output import out
    from lastexam.envs import manage

    table = Table()
    for col in ("name", "description", "apt", "pip"):
        table.add_column(col)
    for env in manage.load_all():
        table.add_row(env.name, env.spec.description, " ".join(env.spec.apt), " ".join(env.spec.pip))
    out.print(table)
