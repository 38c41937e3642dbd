"""`lastexam report --html`: one self-contained HTML file (inline CSS and SVG, no external
assets), readable offline."""

from __future__ import annotations

import html
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lastexam import __version__
from lastexam.analysis.failures import CATEGORIES, attribute
from lastexam.analysis.metrics import GUI_LABELS, GUI_STATES
from lastexam.layout import RunPaths
from lastexam.report import figures
from lastexam.store.db import Store
from lastexam.store.models import CheckResult
from lastexam.store.rows import TrialRow
from lastexam.taxonomy import load_taxonomy

EMBED_LIMIT = 3000  # rubrics embedded in the page up to this many trials; beyond, linked

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#e3f5e1}.fail{background:#fbe4e4}.mid{background:#fff5d6}
details{margin:.3em 0}summary{cursor:pointer}code{font-size:12px}
.small{color:#666;font-size:12px}svg{max-width:100%;height:auto}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(est: dict[str, float | None]) -> str:
    if est["value"] is None:
        return "-"
    if est["low"] is None:
        return _pct(est["value"])
    return f"{_pct(est['value'])} <span class=small>[{_pct(est['low'])}, {_pct(est['high'])}]</span>"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _trial_anchor(run: str, trial_id: str) -> str:
    return f"t-{run}-{trial_id}".replace(" ", "_")


def leaderboard_section(o: dict[str, Any]) -> str:
    tiers = ["near-term", "full-spectrum", "last-exam"]
    rows = []
    for e in o["leaderboard"]:
        c = e["costs"]
        cost = "-" if c["cost_usd_total"] is None else f"${c['cost_usd_total']:.2f}"
        if c["trials_with_unknown_cost"]:
            cost += f" <span class=small>({c['trials_with_unknown_cost']} unknown)</span>"
        tokens = sum(c["tokens"].values())
        rows.append([
            _e(e["cell"]), str(e["tasks"]), str(e["trials"]), _ci(e["fpr"]), _ci(e["ms"]),
            *[_ci(e["by_tier"][t]["fpr"]) if t in e["by_tier"] else "-" for t in tiers],
            cost, f"{tokens:,}", f"{c['wall_s_per_trial']} s",
        ])
    headers = ["agent / model", "tasks", "trials", "FPR [95% CI]", "MS [95% CI]",
               *[f"FPR {t}" for t in tiers], "cost", "tokens", "median time"]
    return "<h2>Leaderboard</h2>" + _table(headers, rows) + (
        "<p class=small>95% confidence intervals: percentile bootstrap over tasks (attempts of a "
        "task resampled together), 1,000 resamples. Ungraded trials count as 0.</p>"
    )


def contamination_section(o: dict[str, Any]) -> str:
    if not o["contamination"]:
        return ""
    rows = [[_e(e["cell"]), str(e["public"]["tasks"]), str(e["private"]["tasks"]),
             _ci(e["public"]["fpr"]), _ci(e["private"]["fpr"]), _ci(e["fpr_gap"]),
             _ci(e["public"]["ms"]), _ci(e["private"]["ms"]), _ci(e["ms_gap"])]
            for e in o["contamination"]]
    headers = ["agent / model", "public tasks", "private tasks", "FPR public", "FPR private",
               "FPR gap", "MS public", "MS private", "MS gap"]
    return "<h2>Public and private tasks</h2>" + _table(headers, rows) + (
        "<p class=small>Private: tasks of a sealed pool not yet released on the run's day. "
        "Gap = public - private, with a 95% percentile bootstrap CI resampling each side's "
        "tasks apart. A gap well above 0 suggests the public tasks leaked into what the "
        "agent or model saw (docs/private-pool.md).</p>"
    )


def breakdown_section(view: dict[str, Any]) -> str:
    """FPR and MS by tier and by cluster, per agent x model (never pooled over agents)."""
    tax = load_taxonomy()
    board = view["leaderboard"]
    matrix = {e["cell"]: {k: v["fpr"]["value"] for k, v in e["by_cluster"].items()}
              for e in board if e["by_cluster"]}
    heat = figures.cluster_heatmap(matrix, [(c.id, c.name) for c in tax.clusters])
    tier_rows = [
        [_e(e["cell"]), _e(k), str(v["trials"]), _ci(v["fpr"]), _ci(v["ms"])]
        for e in board for k, v in e["by_tier"].items()
    ]
    cluster_rows = [
        [_e(e["cell"]), _e(tax.cluster(k).name if tax.cluster(k) else k), str(v["trials"]),
         _ci(v["fpr"]), _ci(v["ms"])]
        for e in board for k, v in e["by_cluster"].items()
    ]
    return (
        "<h2>By tier and cluster</h2><p class=small>Per agent x model: a tier or cluster "
        "figure pooled over agents would mix calibration agents with real ones.</p>"
        + _table(["agent / model", "tier", "trials", "FPR", "MS"], tier_rows)
        + _table(["agent / model", "cluster", "trials", "FPR", "MS"], cluster_rows)
        + ("<h3>FPR by cluster and agent x model</h3>" + heat if heat else "")
    )


def cost_section(o: dict[str, Any]) -> str:
    points = [
        {"cell": e["cell"], "cost": e["costs"]["cost_usd_per_trial"], "ms": e["ms"]["value"]}
        for e in o["leaderboard"]
    ]
    svg = figures.cost_vs_score(points)
    body = svg or "<p>No trial has a known cost (calibration agents make no model calls, or prices are unknown).</p>"
    return "<h2>Cost versus score</h2>" + body


def failure_section(o: dict[str, Any]) -> str:
    f = o["failures"]
    rows = [[_e(cell), *[str(counts.get(c, 0)) for c in CATEGORIES]] for cell, counts in f["by_cell"].items()]
    return (
        "<h2>Failures</h2><p>One primary category per failed trial, from evidence (statuses, "
        "missing outputs, failed gates, score); the rules are in docs/results.md.</p>"
        + figures.failure_bars(f["by_cell"])
        + _table(["agent / model", *CATEGORIES], rows)
    )


def software_section(o: dict[str, Any]) -> str:
    rows = [
        [_e(cell), str(u["trials"]), str(u["known"]), _pct(u["used_share"]), _pct(u["fpr_used"]),
         _pct(u["fpr_not_used"]), _pct(u["script_share"])]
        for cell, u in o["software_usage"].items()
    ]
    spread = o["harness_vs_model"]
    spread_rows = [
        [_e(kind.replace("_", " ")), _e(fixed), str(v["tasks"]),
         _e(", ".join(f"{k}: {_pct(x)}" for k, x in v["fpr"].items())), _pct(v["spread"])]
        for kind, groups in spread.items() for fixed, v in groups.items()
    ]
    out = "<h2>Use of the professional software</h2>" + _table(
        ["agent / model", "trials", "usage known", "used declared software", "FPR when used",
         "FPR when not used", "ad hoc script execs"], rows)
    out += gui_section(o)
    if spread_rows:
        out += "<h2>Harness versus model</h2>" + _table(
            ["spread", "fixed", "shared tasks", "FPR", "max - min"], spread_rows)
    return out


def gui_section(o: dict[str, Any]) -> str:
    """GUI trials only: used, opened only or bypassed the declared GUI application."""
    if not o["gui_usage"]:
        return ""
    rows = [
        [_e(cell), _e(GUI_LABELS[state]), str(g[state]["trials"]), _pct(g[state]["trials"] / g["trials"]),
         _pct(g[state]["fpr"]), _pct(g[state]["ms"])]
        for cell, g in o["gui_usage"].items() for state in GUI_STATES
        if g[state]["trials"] or state != "unknown"
    ]
    return (
        "<h2>Use of the declared GUI application</h2><p class=small>GUI trials only. Used: a window "
        "of the application was mapped and received input; opened only: mapped, no input; "
        "bypassed: never mapped. From the desktop's window log, written inside the sandbox: "
        "reported, never scored (docs/results.md).</p>"
        + _table(["agent / model", "GUI use", "trials", "share", "FPR", "MS"], rows)
    )


def task_section(rows: Sequence[TrialRow], trial_link) -> str:
    cells = sorted({r.cell for r in rows})
    by_task: dict[str, dict[str, list[TrialRow]]] = {}
    meta: dict[str, TrialRow] = {}
    for r in rows:
        by_task.setdefault(r.task_id, {}).setdefault(r.cell, []).append(r)
        meta.setdefault(r.task_id, r)
    table_rows = []
    for task in sorted(by_task, key=lambda t: (meta[t].cluster, t)):
        line = [_e(task), _e(meta[task].tier), _e(meta[task].cluster)]
        for cell in cells:
            trials = sorted(by_task[task].get(cell, []), key=lambda r: r.attempt)
            marks = []
            for r in trials:
                cls = "pass" if r.full_pass else ("mid" if (r.score or 0) >= 0.5 else "fail")
                text = _pct(r.score) if r.score is not None else r.status
                marks.append(f'<a class={cls} href="{trial_link(r)}">{_e(text)}</a>')
            line.append(" ".join(marks) or "-")
        table_rows.append(line)
    return "<h2>Tasks</h2>" + _table(["task", "tier", "cluster", *cells], table_rows)


def _checks_table(checks: list[CheckResult]) -> str:
    rows = []
    for c in checks:
        cls = "pass" if c.passed else "fail"
        kind = "gate" if c.gate else f"{c.weight:g}"
        rows.append([
            f"<span class={cls}>{'pass' if c.passed else 'FAIL'}</span>", _e(c.name), kind,
            _e(c.message), f"<code>{_e(c.evidence.get('expected', ''))}</code>",
            f"<code>{_e(c.evidence.get('seen', ''))}</code>",
        ])
    return _table(["", "check", "weight", "message", "expected", "seen"], rows)


def rubric_section(run_dirs: Sequence[Path], rows: Sequence[TrialRow], revealer=None) -> str:
    """Each trial's rubric; a sealed task's by card only (numbered checks, no messages) unless
    a revealer (`report --reveal` with the pool's key) opens it."""
    failures = {(r.run, r.trial_id): attribute(r) for r in rows}
    parts = ["<h2>Trials</h2>"]
    for run_dir in run_dirs:
        store = Store(run_dir)
        try:
            for t in store.trials():
                anchor = _trial_anchor(run_dir.name, t.trial_id)
                failed = failures.get((run_dir.name, t.trial_id))
                why = f" &middot; failure: {_e(failed[0])} ({_e(failed[1])})" if failed else ""
                checks = t.grade.checks if t.grade else None
                if t.sealed and revealer is not None and t.grade is not None:
                    checks = revealer.checks(RunPaths(run_dir).trial(t.trial_id).root) or checks
                body = _checks_table(checks) if checks is not None else ""
                if t.error:
                    body += f"<pre>{_e(t.error[-2000:])}</pre>"
                parts.append(
                    f'<details id="{anchor}"><summary>{_e(t.trial_id)} &middot; {_e(t.status)} '
                    f"&middot; score {_pct(t.score)}{why}</summary>{body}</details>"
                )
        finally:
            store.close()
    return "".join(parts)


def _headline(o: dict[str, Any]) -> str:
    """FPR and MS in the opening line only when one agent x model was run: a figure pooled over
    agents (oracle and nop give 50 %) means nothing; the leaderboard gives each one."""
    if len(o["leaderboard"]) != 1:
        return f"{len(o['leaderboard'])} agent x model cells: figures per cell in the leaderboard. "
    overall = o["overall"]
    return f"FPR {_ci(overall['fpr'])}, MS {_ci(overall['ms'])}. "


def render(run_dirs: Sequence[Path], rows: Sequence[TrialRow], o: dict[str, Any], dest: Path,
           revealer=None) -> str:
    embed = len(rows) <= EMBED_LIMIT
    names = {d.name: d for d in run_dirs}

    def trial_link(r: TrialRow) -> str:
        if embed:
            return f"#{_trial_anchor(r.run, r.trial_id)}"
        target = RunPaths(names[r.run]).trial(r.trial_id).record
        return os.path.relpath(target, dest.parent)

    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    overall = o["overall"]
    parts = [
        "<!doctype html><html><head><meta charset=utf-8><title>lastexam report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>lastexam report</h1>",
        f"<p>{overall['trials']} trials on {overall['tasks']} tasks from "
        f"{len(run_dirs)} run(s): {', '.join(_e(d) for d in run_dirs)}. "
        f"{_headline(o)}"
        f"<span class=small>Generated {generated} by lastexam {__version__}.</span></p>",
        leaderboard_section(o),
        contamination_section(o),
        breakdown_section(o),
        cost_section(o),
        failure_section(o),
        software_section(o),
        task_section(rows, trial_link),
    ]
    if embed:
        parts.append(rubric_section(run_dirs, rows, revealer))
    else:
        parts.append(f"<p>{len(rows)} trials: rubrics are linked (trial.json), not embedded.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
