"""Shared rendering for the CLI: consoles, percentages and JSON on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

err = Console(stderr=True)
out = Console()


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"
