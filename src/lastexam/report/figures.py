"""Figures for the HTML report, drawn with matplotlib and returned as inline SVG text."""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lastexam.analysis.failures import CATEGORIES

plt.rcParams.update({"svg.fonttype": "none", "font.size": 9})


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def cluster_heatmap(matrix: dict[str, dict[str, float]], clusters: list[tuple[str, str]]) -> str:
    """FPR per agent x model (rows) and cluster (columns); blank where a cell ran no task."""
    cells = list(matrix)
    cols = [(cid, name) for cid, name in clusters if any(cid in matrix[c] for c in cells)]
    if not cells or not cols:
        return ""
    data = [[matrix[c].get(cid, float("nan")) for cid, _ in cols] for c in cells]
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(cols), 0.9 + 0.4 * len(cells)))
    im = ax.imshow(data, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), [name for _, name in cols], rotation=40, ha="right")
    ax.set_yticks(range(len(cells)), cells)
    for i, row in enumerate(data):
        for j, v in enumerate(row):
            if v == v:  # not NaN
                ax.text(j, i, f"{100 * v:.0f}", ha="center", va="center",
                        color="white" if v < 0.6 else "black", fontsize=8)
    fig.colorbar(im, ax=ax, label="FPR")
    return _svg(fig)


def cost_vs_score(points: list[dict[str, Any]]) -> str:
    """Mean cost per trial (x) versus Mean Score (y), one point per agent x model."""
    known = [p for p in points if p["cost"] is not None]
    if not known:
        return ""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for p in known:
        ax.scatter(p["cost"], p["ms"], s=30)
        ax.annotate(p["cell"], (p["cost"], p["ms"]), fontsize=7, xytext=(4, 3), textcoords="offset points")
    ax.set_xlabel("mean cost per trial (USD)")
    ax.set_ylabel("Mean Score")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    return _svg(fig)


def failure_bars(by_cell: dict[str, dict[str, int]]) -> str:
    """Stacked counts of failure categories per agent x model."""
    cells = [c for c, counts in by_cell.items() if sum(counts.values())]
    if not cells:
        return ""
    fig, ax = plt.subplots(figsize=(6.5, 0.9 + 0.35 * len(cells)))
    left = [0] * len(cells)
    cmap = plt.get_cmap("tab10")
    for i, cat in enumerate(CATEGORIES):
        values = [by_cell[c].get(cat, 0) for c in cells]
        if any(values):
            ax.barh(cells, values, left=left, label=cat, color=cmap(i % 10))
            left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlabel("failed trials")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.invert_yaxis()
    return _svg(fig)
