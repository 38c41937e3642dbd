"""Shared rendering for the CLI: consoles, the results table and JSON on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

err = Console(stderr=True)
out = Console()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def results_table(summary: dict[str, Any], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("group")
    table.add_column("trials", justify="right")
    table.add_column("FPR", justify="right")
    table.add_column("MS", justify="right")
    table.add_row("[b]all[/b]", str(summary["trials"]), pct(summary["fpr"]), pct(summary["ms"]))
    for section in ("by_tier", "by_cluster"):
        table.add_section()
        for name, s in summary[section].items():
            table.add_row(name, str(s["trials"]), pct(s["fpr"]), pct(s["ms"]))
    return table
