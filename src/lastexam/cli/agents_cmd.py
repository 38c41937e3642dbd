"""lastexam agents list | install | check | oracle-script."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lastexam.errors import LastexamError

app = typer.Typer(help="The agents lastexam can run.", no_args_is_help=True)
COMPUTER = "not an agent: the computer-use MCP server every agent gets in desktop trials"


@app.command("list")
def list_agents(
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Agents, their versions, the model APIs they speak and whether they are ready."""
    from rich.table import Table

    from lastexam.agents import all_agents
    from lastexam.cli.output import out, print_json
    from lastexam.computer import toolchain

    if json_out:
        print_json({"agents": [
            {"name": a.name, "version": a.version(), "wires": list(a.wires()),
             "description": a.description, "missing": a.missing()}
            for a in all_agents()
        ]})
        return
    table = Table()
    for col in ("agent", "description", "version", "ready"):
        table.add_column(col)
    for agent in all_agents():
        missing = agent.missing()
        table.add_row(agent.name, agent.description, agent.version(), "yes" if not missing else "; ".join(missing))
    missing = toolchain.missing()
    table.add_row(toolchain.SERVER_NAME, COMPUTER, toolchain.version(),
                  "yes" if not missing else "; ".join(missing))
    out.print(table)


@app.command("install")
def install(
    names: Annotated[list[str], typer.Argument(
        help="Agents to install, `computer` (the computer-use MCP server), or `all`.")],
    force: Annotated[bool, typer.Option(help="Reinstall even when installed.")] = False,
) -> None:
    """Install agents' pinned toolchains (npm), what their bridge needs (socat) and the
    computer-use MCP server of desktop trials (a hash-pinned Python venv)."""
    from lastexam.agents import all_agents, get_agent
    from lastexam.agents.harness import GatewayAgent
    from lastexam.cli.output import err
    from lastexam.computer import toolchain

    if names == ["all"] or toolchain.SERVER_NAME in names:
        err.print(f"[b]{toolchain.SERVER_NAME}[/b]")
        toolchain.install(log=lambda m: err.print(f"  {m}"), force=force)
        if missing := toolchain.missing():
            raise LastexamError(f"{toolchain.SERVER_NAME} is still not ready: {'; '.join(missing)}")
        names = [n for n in names if n != toolchain.SERVER_NAME]
    agents = all_agents() if names == ["all"] else [get_agent(n) for n in names]
    for agent in agents:
        if not isinstance(agent, GatewayAgent):
            if names != ["all"]:
                err.print(f"{agent.name}: nothing to install")
            continue
        err.print(f"[b]{agent.name}[/b]")
        agent.install(log=lambda m: err.print(f"  {m}"), force=force)
        missing = agent.missing()
        if missing:
            raise LastexamError(f"{agent.name} is still not ready: {'; '.join(missing)}")


@app.command("oracle-script")
def oracle_script_cmd(
    task: Annotated[Path, typer.Argument(help="A task folder with solution/solve.sh.")],
) -> None:
    """Print a scripted-upstream file that carries out the task's oracle through any harness's
    shell tool (use with --model scripted:FILE)."""
    import yaml

    from lastexam.gateway.scripted import oracle_script

    script = oracle_script(task)
    typer.echo(yaml.safe_dump(script.model_dump(exclude_none=True, exclude_defaults=True),
                              width=1 << 20, sort_keys=False), nl=False)


@app.command("check")
def check(
    name: Annotated[str, typer.Argument(help="A registered agent, or module:Class.")],
    task: Annotated[Path | None, typer.Option(
        help="A task with solution/solve.sh (default: tests/data/tasks/other/column-total).")] = None,
    agent_arg: Annotated[list[str] | None, typer.Option(
        "--agent-arg", help="KEY=VALUE passed to the agent.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for the scripts and the two runs (default: a temporary folder, removed "
             "when every check passes).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")] = False,
) -> None:
    """Conformance of an adapter: through the scripted model it must carry out a real task's
    oracle and score 1.0, keep every tool call in its trajectory, stop at --max-tokens, and
    leave no key or gateway token in any artifact. Exit 1 when a check fails."""
    import shutil
    import tempfile

    from rich.table import Table

    from lastexam.agents.conformance import check_agent, default_task
    from lastexam.cli.common import parse_kv
    from lastexam.cli.output import err, print_json
    from lastexam.cli.output import out as console

    args = parse_kv(agent_arg or [], "--agent-arg")
    task_dir = (task or default_task()).resolve()
    folder = out or Path(tempfile.mkdtemp(prefix="lastexam-check-"))
    try:
        report = check_agent(name, task_dir, args, folder, log=lambda m: err.print(m))
    except BaseException:
        if out is None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if out is None and report.passed:
        shutil.rmtree(folder, ignore_errors=True)
    if json_out:
        print_json({**report.model_dump(), "passed": report.passed})
    else:
        table = Table(title=f"{report.agent} {report.version} ({report.wire}) on {task_dir.name}")
        for col in ("check", "result", "detail"):
            table.add_column(col)
        for row in report.checks:
            table.add_row(row.check, "pass" if row.ok else "[red]FAIL[/red]", row.detail)
        console.print(table)
        if not report.passed and report.run_dirs:
            console.print(f"runs kept in {folder}")
    raise typer.Exit(0 if report.passed else 1)
