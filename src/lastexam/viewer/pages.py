"""HTML pages of the viewer, rendered on the server from the run directories (no scripts)."""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote

from lastexam.analysis.failures import attribute
from lastexam.layout import TRIAL
from lastexam.store.models import TrialRecord
from lastexam.store.rows import TrialRow
from lastexam.viewer import desktop
from lastexam.viewer.paths import TrialFolder

LOG_TAIL_BYTES = 20_000
EXEC_LOG_ROWS = 500  # the first events of exec.jsonl shown, read from at most EXEC_LOG_BYTES
EXEC_LOG_BYTES = 4 << 20
TRAJECTORY_BYTES = 64 << 20  # a larger trajectory.json is linked, not parsed for the page
TRAJECTORY_STEPS = 2000  # steps shown on the page; the file holds them all
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.pass{background:#e3f5e1}.fail{background:#fbe4e4}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;white-space:pre-wrap;max-height:30em;overflow-y:auto}
.step{border:1px solid #ddd;border-radius:4px;padding:.4em .7em;margin:.5em 0}
.agent{border-left:4px solid #4a7}.user{border-left:4px solid #47a}.system{border-left:4px solid #999}
.small{color:#666;font-size:12px}nav a{margin-right:1em}img{max-width:100%}
.gui{display:grid;grid-template-columns:minmax(0,1fr) minmax(300px,45%);gap:1em;align-items:start}
.player{position:sticky;top:.5em}.player iframe{width:100%;aspect-ratio:16/11;border:1px solid #ddd}
.note{background:#fff4d6;padding:.3em .5em}.seek{float:right}
.thumb{max-height:90px;max-width:160px;border:1px solid #ccc;margin:2px}
"""


def e(x: Any) -> str:
    return html.escape(str(x))


def page(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{e(title)}</title>"
            f"<style>{CSS}</style></head><body><nav><a href='/'>runs</a></nav>{body}</body></html>")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def runs_page(runs: dict[str, list[TrialRow]]) -> str:
    """One row per run x agent x model: figures pooled over agents would mean nothing, and only
    trials whose score counts (the error policy's decision) enter FPR and MS."""
    rows = []
    for name, trials in runs.items():
        link = f"<a href='/run/{quote(name)}'>{e(name)}</a>"
        if not trials:
            rows.append([link, "-", "0", "0", pct(None), pct(None)])
        for cell in sorted({t.cell for t in trials}):
            mine = [t for t in trials if t.cell == cell]
            scored = [t for t in mine if t.counts]
            n = len(scored)
            fpr = sum(t.full_pass for t in scored) / n if n else None
            ms = sum(t.score or 0 for t in scored) / n if n else None
            rows.append([link, e(cell), str(len(mine)), str(n), pct(fpr), pct(ms)])
    headers = ["run", "agent x model", "trials", "counted", "FPR", "MS"]
    return page("lastexam runs", "<h1>Runs</h1>" + table(headers, rows))


def run_page(name: str, trials: list[TrialRow]) -> str:
    gui = any(t.gui_use is not None for t in trials)  # a column only when there are GUI trials
    rows = []
    for t in trials:
        cls = "pass" if t.full_pass else "fail"
        failure = attribute(t)
        rows.append([
            f"<a href='/run/{quote(name)}/trial/{quote(t.trial_id)}'>{e(t.task_id)}</a>",
            e(t.cell), str(t.attempt), e(t.status), f"<span class={cls}>{pct(t.score)}</span>",
            f"{t.checks_passed}/{t.checks_total}", e(failure[0] if failure else ""), f"{t.duration_s:.1f} s",
            *([e(t.gui_use or "-")] if gui else []),
        ])
    headers = ["task", "agent / model", "#", "status", "score", "checks", "failure", "agent time"]
    return page(f"run {name}", f"<h1>Run {e(name)}</h1>" + table(headers + (["GUI use"] if gui else []), rows))


def _rubric(record: TrialRecord) -> str:
    if record.grade is None:
        return "<p>Not graded.</p>"
    rows = []
    for c in record.grade.checks:
        cls = "pass" if c.passed else "fail"
        rows.append([
            f"<span class={cls}>{'pass' if c.passed else 'FAIL'}</span>", e(c.name),
            "gate" if c.gate else f"{c.weight:g}", e(c.message),
            f"<code>{e(json.dumps(c.evidence.get('expected')) if 'expected' in c.evidence else '')}</code>",
            f"<code>{e(json.dumps(c.evidence.get('seen')) if 'seen' in c.evidence else '')}</code>",
        ])
    grade = record.grade
    head = f"<p>grader version <code>{e(grade.grader_version[:16])}</code>, graded {e(grade.created_at)}"
    head += f" in {grade.duration_s:.2f} s</p>"
    if grade.error:
        head += f"<pre>{e(grade.error)}</pre>"
    return head + table(["", "check", "weight", "message", "expected", "seen"], rows)


def _trajectory(folder: TrialFolder, base: str, rec: desktop.Recording | None = None) -> str:
    rel = TRIAL.trajectory.as_posix()
    data = folder.read(rel, TRAJECTORY_BYTES + 1)
    if data is None:
        return "<p>No trajectory (the calibration agents make no model calls).</p>"
    if len(data) > TRAJECTORY_BYTES:
        return (f"<p>trajectory.json is over {TRAJECTORY_BYTES >> 20} MB, too large to show here: "
                f"<a href='{base}/file/{quote(rel)}'>download it</a>.</p>")
    try:
        traj = json.loads(data)
    except (ValueError, RecursionError):
        return "<p>trajectory.json is unreadable.</p>"
    if not isinstance(traj, dict):
        return "<p>trajectory.json is not a trajectory.</p>"
    parts = []
    fm = traj.get("final_metrics") or {}
    parts.append(f"<p class=small>{e(traj.get('agent', {}).get('name'))} {e(traj.get('agent', {}).get('version'))}"
                 f" &middot; model {e(traj.get('agent', {}).get('model_name'))} &middot; steps {e(fm.get('total_steps'))}"
                 f" &middot; prompt tokens {e(fm.get('total_prompt_tokens'))} &middot; completion tokens"
                 f" {e(fm.get('total_completion_tokens'))} &middot; cost {e(fm.get('total_cost_usd'))}</p>")
    steps = traj.get("steps") or []
    for step in steps[:TRAJECTORY_STEPS]:
        if not isinstance(step, dict):
            continue
        src = step.get("source", "agent")
        at = desktop.offset(rec, step)
        seek = desktop.player_link(base, at) if at is not None else ""
        body = (f"<div class=small>{seek}step {e(step.get('step_id'))} &middot; {e(src)}"
                f" {e(step.get('timestamp') or '')}</div>")
        if step.get("reasoning_content"):
            body += f"<details><summary>reasoning</summary><pre>{e(step['reasoning_content'])}</pre></details>"
        if step.get("message"):
            body += f"<pre>{e(str(step['message'])[:20000])}</pre>"
        for call in step.get("tool_calls") or []:
            body += (f"<div><b>tool call</b> {e(call.get('function_name'))}"
                     f"<pre>{e(json.dumps(call.get('arguments'), indent=1)[:20000])}</pre></div>")
        for res in (step.get("observation") or {}).get("results", []):
            body += _observation(res.get("content", ""), base)
        body += desktop.thumbs(base, desktop.screen_refs(step))
        for shot in (step.get("extra") or {}).get("screenshots", []):
            if not desktop.SCREEN_REF.fullmatch(str(shot)):
                body += f"<img alt=screenshot src='{base}/file/{quote(str(shot))}'>"
        parts.append(f"<div class='step {e(src)}'>{body}</div>")
    if len(steps) > TRAJECTORY_STEPS:
        parts.append(f"<p>… and {len(steps) - TRAJECTORY_STEPS:,} more steps, in "
                     f"<a href='{base}/file/{quote(rel)}'>trajectory.json</a>.</p>")
    return "".join(parts)


def _observation(content: Any, base: str) -> str:
    """A tool result: text, or (ATIF v1.6) a list of text and image parts. Screenshots are
    shown as the step's thumbnails; another image is a link to the trial's file."""
    if isinstance(content, str) and content.startswith("data:image/"):
        return f"<img alt=screenshot src='{e(content)}'>"
    if not isinstance(content, list):
        return f"<div><b>observation</b><pre>{e(str(content)[:20000])}</pre></div>"
    parts = [p for p in content if isinstance(p, dict)]
    text = "\n".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
    images = [str((p.get("source") or {}).get("path") or "") for p in parts if p.get("type") == "image"]
    links = " ".join(f"<a href='{base}/file/{quote(path)}'>{e(path)}</a>" for path in images
                     if path and not desktop.SCREEN_REF.fullmatch(path))
    return f"<div><b>observation</b><pre>{e(text[:20000])}</pre>{links}</div>"


def _files(folder: TrialFolder, base: str) -> str:
    found = folder.listing(TRIAL.output.as_posix())
    if found is None:
        return "<p>No output.</p>"
    files, count = found
    rows = [[f"<a href='{base}/file/output/{quote(rel)}'>{e(rel.decode(errors='replace'))}</a>", f"{size:,}"]
            for rel, size in files]
    if count > len(rows):
        rows.append([f"… and {count - len(rows):,} more files", ""])
    return table(["file", "bytes"], rows) if rows else "<p>No output files.</p>"


def _exec_log(folder: TrialFolder) -> str:
    data = folder.read(TRIAL.exec_log.as_posix(), EXEC_LOG_BYTES + 1)
    if data is None:
        return "<p>No exec log.</p>"
    cut = len(data) > EXEC_LOG_BYTES
    lines = data[:EXEC_LOG_BYTES].decode(errors="replace").splitlines()
    rows = []
    for i, line in enumerate(lines):
        if i >= EXEC_LOG_ROWS:
            break
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        rows.append([f"{ev.get('time', 0):.3f}", e(ev.get("path")),
                     f"<code>{e(' '.join(ev.get('argv') or [])[:300])}</code>", e(ev.get("exit"))])
    if cut or len(lines) > EXEC_LOG_ROWS:
        rows.append(["…", "", "", ""])
    return table(["time", "program", "arguments", "exit"], rows)


def _tail(folder: TrialFolder, rel: str) -> str:
    data = folder.read(rel, LOG_TAIL_BYTES, tail=True)
    if data is None:
        return ""
    name = rel.rsplit("/", 1)[-1]
    shown = f"last {len(data):,} bytes" if len(data) == LOG_TAIL_BYTES else f"{len(data):,} bytes"
    return f"<details><summary>{e(name)} ({shown})</summary><pre>{e(data.decode(errors='replace'))}</pre></details>"


def trial_base(run: str, trial_id: str) -> str:
    return f"/run/{quote(run)}/trial/{quote(trial_id)}"


def _with_recording(folder: TrialFolder, base: str, record: TrialRecord) -> str:
    rec = desktop.recording(folder, record.started_at, record.finished_at)
    steps = _trajectory(folder, base, rec)
    if rec is None:
        return steps
    return f"<div class=gui><div>{steps}</div>{desktop.side(base, rec)}</div>"


def trial_page(run: str, record: TrialRecord, folder: TrialFolder) -> str:
    base = trial_base(run, record.trial_id)
    cls = "pass" if record.full_pass else "fail"
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in record.timings.model_dump(exclude_none=True).items())
    gateway = record.gateway.model_dump() if record.gateway else None
    summary = table(["", ""], [
        ["task", e(record.key.task_id)], ["agent / model", e(f"{record.key.agent} / {record.key.model or '-'}")],
        ["attempt", str(record.key.attempt)], ["status", e(record.status)],
        ["score", f"<span class={cls}>{pct(record.score)}</span>"], ["ended by", e(record.ended_by)],
        ["timings", e(timings)], ["missing outputs", e(", ".join(record.missing_outputs) or "-")],
        ["declared software used", e(json.dumps(record.usage.declared_software))],
        *([["GUI use", desktop.gui_summary(record.gui, base)]] if record.gui else []),
        ["model usage", f"<code>{e(json.dumps(gateway)) if gateway else '-'}</code>"],
    ])
    error = f"<h2>Error</h2><pre>{e(record.error)}</pre>" if record.error else ""
    if record.sealed:  # its files are one archive only the pool's keys open
        return page(f"trial {record.trial_id}", "".join([
            f"<p><a href='/run/{quote(run)}'>&larr; run {e(run)}</a></p><h1>{e(record.trial_id)}</h1>",
            f"<p class=small>A task of a sealed pool ({e(record.visibility)} on the run's day): "
            "shown by its card only. Its files, trajectory and rubric are sealed to the pool's "
            "keys (docs/private-pool.md).</p>",
            summary, error, "<h2>Rubric</h2>", _rubric(record),
        ]))
    return page(f"trial {record.trial_id}", "".join([
        f"<p><a href='/run/{quote(run)}'>&larr; run {e(run)}</a></p><h1>{e(record.trial_id)}</h1>",
        summary, error,
        "<h2>Rubric</h2>", _rubric(record),
        "<h2>Trajectory</h2>", _with_recording(folder, base, record),
        "<h2>Output files</h2>", _files(folder, base),
        desktop.screens_section(folder, base),
        "<h2>Exec log</h2>", _exec_log(folder),
        "<h2>Logs</h2>",
        *(_tail(folder, log.as_posix()) for log in (TRIAL.agent_stdout, TRIAL.agent_stderr,
                                                    TRIAL.grader_stdout, TRIAL.grader_stderr)),
        f"<h2>Reproducibility</h2><pre>{e(json.dumps(record.repro.model_dump(mode='json'), indent=1))}</pre>",
    ]))

