"""Rich tables of metrics for `show` and `compare`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from lastexam.analysis.rows import TrialRow
from lastexam.cli.output import pct


def ci(est: dict[str, float | None]) -> str:
    if est["value"] is None:
        return "-"
    if est["low"] is None:
        return pct(est["value"])
    return f"{pct(est['value'])} [{pct(est['low'])}, {pct(est['high'])}]"


def trials_table(rows: Sequence[TrialRow]) -> Table:
    table = Table(title="trials", title_justify="left")
    for col in ("task", "agent / model", "#", "status", "score", "checks", "agent time"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r.task_id, r.cell, str(r.attempt), r.status, pct(r.score),
            f"{r.checks_passed}/{r.checks_total}", f"{r.duration_s:.1f}s",
        )
    return table


def _headline_table(title: str, groups: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for col, just in (("group", "left"), ("trials", "right"), ("FPR [95% CI]", "right"), ("MS [95% CI]", "right")):
        table.add_column(col, justify=just)
    for name, h in groups.items():
        table.add_row(name, str(h["trials"]), ci(h["fpr"]), ci(h["ms"]))
    return table


def render_overview(console: Console, o: dict[str, Any]) -> None:
    board = Table(title="leaderboard (agent x model)", title_justify="left")
    for col in ("agent / model", "tasks", "trials", "FPR [95% CI]", "MS [95% CI]", "pass@k", "cost", "time/trial"):
        board.add_column(col)
    for e in o["leaderboard"]:
        ks = {k: v for k, v in e["pass_at_k"].items() if v is not None}
        passk = " ".join(f"@{k}:{pct(v)}" for k, v in ks.items()) if len(ks) > 1 else "-"
        cost = e["costs"]["cost_usd_total"]
        unknown = e["costs"]["trials_with_unknown_cost"]
        cost_text = "-" if cost is None and not unknown else f"${cost or 0:.2f}" + (f" (+{unknown} unknown)" if unknown else "")
        board.add_row(e["cell"], str(e["tasks"]), str(e["trials"]), ci(e["fpr"]), ci(e["ms"]), passk,
                      cost_text, f"{e['costs']['wall_s_per_trial']}s")
    console.print(board)
    console.print(_headline_table("by tier", o["by_tier"]))
    console.print(_headline_table("by cluster", o["by_cluster"]))
    statuses = ", ".join(f"{k} {pct(v)}" for k, v in o["statuses"].items())
    console.print(f"statuses: {statuses}")
    fails = {k: v for k, v in o["failures"]["by_category"].items() if v}
    if fails:
        console.print("failures: " + ", ".join(f"{k} {v}" for k, v in fails.items()))
    usage = Table(title="use of the declared software", title_justify="left")
    for col in ("agent / model", "trials known", "used", "FPR used", "FPR not used", "script execs"):
        usage.add_column(col)
    for cell, u in o["software_usage"].items():
        usage.add_row(cell, str(u["known"]), pct(u["used_share"]), pct(u["fpr_used"]),
                      pct(u["fpr_not_used"]), pct(u["script_share"]))
    console.print(usage)
