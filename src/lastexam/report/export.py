"""Exports of the metrics view (analysis/view.py): CSV (one row per agent x model) and JSON
(the whole view)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any


def leaderboard_csv(view: dict[str, Any]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow([
        "agent", "model", "tasks", "trials", "fpr", "fpr_low", "fpr_high", "ms", "ms_low", "ms_high",
        "fpr_near_term", "fpr_full_spectrum", "fpr_last_exam", "cost_usd_total",
        "trials_with_unknown_cost", "input_tokens", "output_tokens", "wall_s_per_trial",
        "fpr_public", "fpr_private", "fpr_gap", "fpr_gap_low", "fpr_gap_high",
        "ms_public", "ms_private", "ms_gap", "ms_gap_low", "ms_gap_high",
    ])
    gaps = {e["cell"]: e for e in view.get("contamination", [])}
    for e in view["leaderboard"]:
        tiers = e["by_tier"]
        c = e["costs"]
        w.writerow([
            e["agent"], e["model"], e["tasks"], e["trials"],
            e["fpr"]["value"], e["fpr"]["low"], e["fpr"]["high"],
            e["ms"]["value"], e["ms"]["low"], e["ms"]["high"],
            *[tiers[t]["fpr"]["value"] if t in tiers else "" for t in ("near-term", "full-spectrum", "last-exam")],
            "" if c["cost_usd_total"] is None else c["cost_usd_total"], c["trials_with_unknown_cost"],
            c["tokens"]["input_tokens"], c["tokens"]["output_tokens"], c["wall_s_per_trial"],
            *_gap_columns(gaps.get(e["cell"])),
        ])
    return buf.getvalue()


def _gap_columns(gap: dict[str, Any] | None) -> list[Any]:
    """Public and private FPR and MS of a cell and their gaps; blank without private tasks."""
    if gap is None:
        return [""] * 10
    cols: list[Any] = []
    for name in ("fpr", "ms"):
        g = gap[f"{name}_gap"]
        cols += [gap["public"][name]["value"], gap["private"][name]["value"], g["value"], g["low"], g["high"]]
    return ["" if v is None else v for v in cols]


def view_json(view: dict[str, Any]) -> str:
    return json.dumps(view, indent=2, default=str) + "\n"
