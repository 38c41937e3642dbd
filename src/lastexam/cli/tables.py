"""Rich tables of the metrics view (analysis/view.py) for `run`, `show` and `compare`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from lastexam.analysis.metrics import GUI_LABELS, GUI_STATES
from lastexam.cli.output import pct
from lastexam.store.rows import TrialRow


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


def leaderboard_table(view: dict[str, Any], title: str = "leaderboard (agent x model)") -> Table:
    board = Table(title=title, title_justify="left")
    for col in ("agent / model", "tasks", "trials", "FPR [95% CI]", "MS [95% CI]", "pass@k", "cost", "time/trial"):
        board.add_column(col)
    for e in view["leaderboard"]:
        ks = {k: v for k, v in e["pass_at_k"].items() if v is not None}
        passk = " ".join(f"@{k}:{pct(v)}" for k, v in ks.items()) if len(ks) > 1 else "-"
        cost = e["costs"]["cost_usd_total"]
        unknown = e["costs"]["trials_with_unknown_cost"]
        cost_text = "-" if cost is None and not unknown else f"${cost or 0:.2f}" + (f" (+{unknown} unknown)" if unknown else "")
        board.add_row(e["cell"], str(e["tasks"]), str(e["trials"]), ci(e["fpr"]), ci(e["ms"]), passk,
                      cost_text, f"{e['costs']['wall_s_per_trial']}s")
    return board


def groups_table(view: dict[str, Any], key: str, what: str) -> Table:
    """FPR and MS per agent x model and group (key: by_tier or by_cluster)."""
    table = Table(title=f"by {what} (per agent x model)", title_justify="left")
    for col, just in (("agent / model", "left"), (what, "left"), ("trials", "right"),
                      ("FPR [95% CI]", "right"), ("MS [95% CI]", "right")):
        table.add_column(col, justify=just)
    for e in view["leaderboard"]:
        for name, h in e[key].items():
            table.add_row(e["cell"], name, str(h["trials"]), ci(h["fpr"]), ci(h["ms"]))
        table.add_section()
    return table


def statuses_line(view: dict[str, Any]) -> str:
    total = sum(view["statuses"].values())
    return "statuses: " + ", ".join(f"{k} {v} ({pct(v / total)})" for k, v in view["statuses"].items())


def contamination_table(view: dict[str, Any]) -> Table:
    """Public against private tasks per agent x model (the contamination signal)."""
    table = Table(title="public vs private tasks (gap = public - private)", title_justify="left")
    for col in ("agent / model", "public tasks", "private tasks", "FPR public", "FPR private",
                "FPR gap [95% CI]", "MS public", "MS private", "MS gap [95% CI]"):
        table.add_column(col)
    for e in view["contamination"]:
        pub, priv = e["public"], e["private"]
        table.add_row(e["cell"], str(pub["tasks"]), str(priv["tasks"]), pct(pub["fpr"]["value"]),
                      pct(priv["fpr"]["value"]), ci(e["fpr_gap"]), pct(pub["ms"]["value"]),
                      pct(priv["ms"]["value"]), ci(e["ms_gap"]))
    return table


def render_view(console: Console, view: dict[str, Any]) -> None:
    console.print(leaderboard_table(view))
    if view["contamination"]:
        console.print(contamination_table(view))
    console.print(groups_table(view, "by_tier", "tier"))
    console.print(groups_table(view, "by_cluster", "cluster"))
    console.print(statuses_line(view))
    fails = {k: v for k, v in view["failures"]["by_category"].items() if v}
    if fails:
        console.print("failures: " + ", ".join(f"{k} {v}" for k, v in fails.items()))
    usage = Table(title="use of the declared software", title_justify="left")
    for col in ("agent / model", "trials known", "used", "FPR used", "FPR not used", "script execs"):
        usage.add_column(col)
    for cell, u in view["software_usage"].items():
        usage.add_row(cell, str(u["known"]), pct(u["used_share"]), pct(u["fpr_used"]),
                      pct(u["fpr_not_used"]), pct(u["script_share"]))
    console.print(usage)
    if view["gui_usage"]:
        console.print(gui_table(view))


def gui_table(view: dict[str, Any]) -> Table:
    """Per agent x model and GUI use: GUI trials only (docs/results.md says how it is decided)."""
    table = Table(title="use of the declared GUI application (GUI trials)", title_justify="left")
    for col, just in (("agent / model", "left"), ("GUI use", "left"), ("trials", "right"),
                      ("share", "right"), ("FPR", "right"), ("MS", "right")):
        table.add_column(col, justify=just)
    for cell, g in view["gui_usage"].items():
        for state in GUI_STATES:
            s = g[state]
            if s["trials"] or state != "unknown":
                table.add_row(cell, GUI_LABELS[state], str(s["trials"]), pct(s["trials"] / g["trials"]),
                              pct(s["fpr"]), pct(s["ms"]))
        table.add_section()
    return table
