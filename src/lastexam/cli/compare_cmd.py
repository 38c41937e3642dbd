"""lastexam compare."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def compare(
    run_a: Annotated[Path, typer.Argument(help="Run directory A.")],
    run_b: Annotated[Path, typer.Argument(help="Run directory B.")],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """A versus B on their shared tasks: FPR and MS differences with paired bootstrap 95% CIs
    and an exact McNemar test on full passes (over the trials the error policy counts)."""
    from rich.table import Table

    from lastexam.analysis.view import comparison
    from lastexam.cli.output import out, print_json
    from lastexam.cli.tables import ci
    from lastexam.store.rows import rows_of

    result = comparison(rows_of([run_a]), rows_of([run_b]))
    result["a"]["run"], result["b"]["run"] = str(run_a), str(run_b)
    if json_out:
        print_json(result)
        return
    cmp = result["a_minus_b"]
    if not cmp.get("shared_tasks"):
        out.print("the two runs share no task")
        raise typer.Exit(1)
    table = Table(title=f"A = {run_a}   B = {run_b}", title_justify="left")
    for col in ("", "A", "B", "A - B [95% CI]"):
        table.add_column(col)
    table.add_row("FPR", ci(result["a"]["fpr"]), ci(result["b"]["fpr"]), _signed(cmp["fpr_diff"]))
    table.add_row("MS", ci(result["a"]["ms"]), ci(result["b"]["ms"]), _signed(cmp["ms_diff"]))
    out.print(table)
    mc = cmp["mcnemar"]
    out.print(
        f"shared tasks: {cmp['shared_tasks']}; paired trials: {mc['pairs']}; full pass only in A: "
        f"{mc['a_only']}, only in B: {mc['b_only']}; exact McNemar p = {mc['p_value']:.4g}"
    )


def _signed(est: dict) -> str:
    def f(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:+.1f}"

    if est["low"] is None:
        return f(est["value"])
    return f"{f(est['value'])} [{f(est['low'])}, {f(est['high'])}] points"
