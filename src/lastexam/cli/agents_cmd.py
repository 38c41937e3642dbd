"""lastexam agents list."""

from __future__ import annotations

import typer

app = typer.Typer(help="The agents lastexam can run.", no_args_is_help=True)


@app.command("list")
def list_agents() -> None:
    """Agents, their versions and whether they are ready."""
    from rich.table import Table

    from lastexam.agents import all_agents
    from lastexam.cli.output import out

    table = Table()
    for col in ("agent", "description", "version", "ready"):
        table.add_column(col)
    for agent in all_agents():
        missing = agent.missing()
        table.add_row(agent.name, agent.description, agent.version(), "yes" if not missing else "; ".join(missing))
    out.print(table)
